// SPDX-License-Identifier: GPL-2.0
/*
 * parse: reports of a sleepy session file: the SLEEPY paper's samples per
 * appid and EIP and per appid (by default), and reports grouped by any of
 * app, appid, mode, cpu, EIP, DSO, function and source line, with filters,
 * as text, CSV or JSON, an SQLite database, an SVG plot, or a function's
 * annotated disassembly; and the call chains' views: call trees, folded
 * stacks, perf script's text, flame graphs and pprof profiles (see
 * Documentation/parse.md).
 *
 * main only orchestrates: the command line (options.c), one pass over the
 * file (session.c), the filters (filters.c), symbols (symbolize.c), the
 * report engine (report.c) and the writers (text.c, csv.c, jsonout.c,
 * plot.c, sqlout.c, annotate.c), the call trees (calltree.c, children.c)
 * and their writers (treeout.c, scriptout.c, flame.c, pprof.c, which
 * reads the file a second time, as scriptout.c does); the logical stacks'
 * activity tree (lstack.c, lstacktree.c, lstacknames.c) and its writers
 * (lstackout.c, treeout.c, flame.c); the system call latency histograms
 * (latency.c, latreport.c) and their writers (latout.c, latplot.c), and
 * --peak's calls (peak.c), which reads the file a second time, first.
 *
 * The file is streamed: memory grows with the number of distinct report
 * keys, not with the number of samples; symbols are looked up after the
 * pass, once per distinct (appid, EIP). Exit status: 0 done; 1 an I/O error
 * or out of memory; 2 a usage error or an invalid session file (one line:
 * "parse: FILE: <problem> at byte offset N").
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "archive.h"
#include "calltree.h"
#include "debuginfo.h"
#include "filters.h"
#include "flame.h"
#include "latout.h"
#include "latplot.h"
#include "lstackout.h"
#include "lstacktree.h"
#include "peak.h"
#include "plot.h"
#include "pprof.h"
#include "sqlout.h"
#include "scriptout.h"
#include "treeout.h"
#include "writer.h"

#define PROG "parse"
#include "die.h"

#define MAX_REPORTS	2	/* without --by: appid and EIP, then appid */

/* What a run holds, from the command line to the last report. */
struct state {
	struct options o;
	unsigned int fields;		/* the (first) report's grouping */
	struct count_mask keys;		/* the key bits of report */
	struct sleepy_reader *r;
	struct session s;
	struct count_table counts;	/* every key field the pass kept */
	struct count_table report;	/* the reports' (or counts itself) */
	struct chain_table chains;	/* the call-chain views': */
	struct count_table stacks;	/* (ip, appid, chain) -> samples */
	struct stack_ids stack_ids;	/* the database's */
	struct lstacks lstacks;		/* the activity tree's and database's */
	struct lstack_names lnames;	/* the names of logical frames */
	struct latency lat;		/* the system call records */
	struct peak_windows windows;	/* --peak's calls */
	struct appid_table appids;
	struct maps maps;
	struct strtab names;
	struct ksyms ks;
	struct symbolizer sym;
	bool symbols;			/* ks and sym are loaded */
	uint64_t total;			/* samples that pass the filters */
	char filters[512];
	char *sidecar;			/* FILE.kallsyms */
	const char *buildid_dirs[2];	/* --buildid-dir, NULL-terminated */
};

static const struct writer *const writers[NR_FORMATS] = {
	[FORMAT_TEXT] = &text_writer,
	[FORMAT_CSV] = &csv_writer,
	[FORMAT_JSON] = &json_writer,
};

__attribute__((noreturn))
static void die_nomem(void)
{
	die(1, "out of memory");
}

/* A reader error: the file's format (2), or an I/O error (1). */
__attribute__((noreturn))
static void die_reader(struct sleepy_reader *r, const char *file)
{
	if (sleepy_reader_status(r) == SLEEPY_ERR_FORMAT)
		die(2, "%s: %s at byte offset %" PRIu64, file,
		    sleepy_reader_error(r), sleepy_reader_error_offset(r));
	die(1, "%s: %s", file, strerror(sleepy_reader_errno(r)));
}

static void open_session(struct state *st)
{
	st->r = sleepy_reader_open(st->o.file);
	if (!st->r)
		die_nomem();
	if (sleepy_reader_status(st->r) != SLEEPY_OK)
		die_reader(st->r, st->o.file);
	st->s.hdr = sleepy_reader_header(st->r);
}

/* The session file again, for a second pass (perf-script, pprof). */
static struct sleepy_reader *reopen(const struct state *st)
{
	struct sleepy_reader *r = sleepy_reader_open(st->o.file);

	if (!r)
		die_nomem();
	if (sleepy_reader_status(r) != SLEEPY_OK)
		die_reader(r, st->o.file);
	return r;
}

/* The system call records and appids of a session file. */
static void read_latency(const char *file, struct latency *lat,
			 struct appid_table *appids)
{
	struct sleepy_reader *r = sleepy_reader_open(file);

	if (!r)
		die_nomem();
	if (sleepy_reader_status(r) != SLEEPY_OK)
		die_reader(r, file);
	latency_init(lat);
	appids_init(appids);
	switch (latency_read(r, lat, appids)) {
	case -1:
		die_nomem();
	case -2:
		die_reader(r, file);
	}
	sleepy_reader_close(r);
}

/* --peak: a first pass for the histograms, the peak's calls. */
static void setup_peak(struct state *st)
{
	struct latency lat;
	struct appid_table appids;
	struct strtab names;
	char err[1024];

	read_latency(st->o.file, &lat, &appids);
	if (strtab_init(&names))
		die_nomem();
	switch (peak_windows_build(st->o.peak, &lat, &appids, &names, &st->o,
				   &st->windows, err, sizeof(err))) {
	case -1:
		die_nomem();
	case -2:
		die(2, "%s", err);
	}
	strtab_free(&names);
	appids_free(&appids);
	latency_free(&lat);
}

/* The filters' text ends with the peak, its calls and samples. */
static void describe_peak(struct state *st)
{
	const size_t n = strlen(st->filters);

	peak_windows_describe(&st->windows, st->total);
	snprintf(st->filters + n, sizeof(st->filters) - n, "%s%s",
		 n ? ", " : "", st->windows.desc);
}

/*
 * Count the samples by the key fields the reports and filters need, no
 * more (the database keeps every field), and apply the filters.
 */
static void count_session(struct state *st)
{
	const struct options *o = &st->o;
	struct count_mask *rm = &st->keys, m;
	const bool stacks = options_need_stacks(o);
	const bool lstacks = o->lstack || o->sqlite;
	const struct session_out out = {
		&st->counts, &st->appids, &st->maps, &st->names,
		stacks ? &st->chains : NULL, stacks ? &st->stacks : NULL,
		o->sqlite ? &st->stack_ids : NULL,
		lstacks ? &st->lstacks : NULL,
		o->latency || o->sqlite ? &st->lat : NULL,
		o->peak ? &st->windows : NULL,
	};
	uint64_t total;

	*rm = fields_need(st->fields);	/* what the reports need */
	if (o->app || o->appid || o->annotate)
		rm->a |= MASK_APPID;
	if (o->annotate)
		rm->ip = UINT64_MAX;
	m = *rm;
	if (o->sqlite)
		m = (struct count_mask){ UINT64_MAX, UINT64_MAX, UINT64_MAX,
					 UINT64_MAX };
	if (counts_init(&st->counts) || strtab_init(&st->names))
		die_nomem();
	if (stacks && (chains_init(&st->chains) || counts_init(&st->stacks)))
		die_nomem();
	if (o->sqlite && stackids_init(&st->stack_ids))
		die_nomem();
	if (lstacks && lstacks_init(&st->lstacks, o->lstack,
				    o->lstack_with_callchain))
		die_nomem();
	st->lnames = (struct lstack_names){
		.session = strcmp(o->file, "-") ? o->file : NULL,
		.symfs = o->symfs, .file = o->file,
	};
	appids_init(&st->appids);
	maps_init(&st->maps);
	latency_init(&st->lat);
	switch (session_read(st->r, o, &m, &out, &st->s)) {
	case -1:
		die_nomem();
	case -2:
		die_reader(st->r, o->file);
	}
	if (maps_build(&st->maps))
		die_nomem();
	session_warnings(o->file, &st->s, &st->appids);
	if (filters_apply(o, &st->appids, &st->counts, &st->total))
		die_nomem();
	if (stacks && filters_apply(o, &st->appids, &st->stacks, &total))
		die_nomem();
	filters_describe(o, st->filters, sizeof(st->filters));
	if (o->peak)
		describe_peak(st);
	st->report = st->counts;	/* the same table: freed once */
	if (o->sqlite && (counts_init(&st->report) ||
			  counts_project_ips(&st->counts, &st->report, rm,
					     st->stack_ids.v)))
		die_nomem();
}

/* Kernel symbols and the symbolizer, if anything needs them. */
static void load_symbols(struct state *st)
{
	const struct options *o = &st->o;
	char err[512];
	int rc;

	st->symbols = fields_with(st->fields, FIELD_SYMBOLS) || o->sqlite ||
		o->annotate || options_stacks(o) || o->pprof || o->flamegraph ||
		o->archive;
	if (!st->symbols)
		return;
	if (strcmp(o->file, "-")) {
		st->sidecar = malloc(strlen(o->file) + 10);
		if (!st->sidecar)
			die_nomem();
		sprintf(st->sidecar, "%s.kallsyms", o->file);
	}
	rc = ksyms_load(&st->ks, o->kallsyms, o->vmlinux, st->sidecar,
			st->s.hdr->release, o->symfs, &st->names, err,
			sizeof(err));
	if (rc == -1)
		die_nomem();
	if (rc == -2)
		die(2, "%s", err);
	if (symbolizer_init(&st->sym, &st->names, &st->maps, &st->ks,
			    o->symfs, fields_with(st->fields, FIELD_LINES) ||
			    o->sqlite || o->annotate))
		die_nomem();
	st->sym.buildid_dir = o->buildid_dir;
	st->sym.jit.session = strcmp(o->file, "-") ? o->file : NULL;
	st->buildid_dirs[0] = o->buildid_dir;
	debuginfo_set_dirs(st->buildid_dirs);
}

/* --archive DIR: the files the report's entries touch, and a summary. */
static void archive(struct state *st, const struct count_entry *e)
{
	struct archive_stats as;
	char err[PATH_MAX + 128];

	if (archive_files(&st->sym, e, st->report.used, st->o.archive, &as,
			  err, sizeof(err)))
		die(1, "%s", err);
	printf("archived %zu ELF files and %zu debug files in %s "
	       "(%zu files, %" PRIu64 " bytes written now)\n", as.objects,
	       as.debug_files, st->o.archive, as.copied, as.bytes);
	if (as.no_build_id)
		printf("not archived: %zu files without a build-id\n",
		       as.no_build_id);
}

static void annotate(struct state *st, const struct count_entry *e)
{
	char err[512];

	if (annotate_print(stdout, st->o.annotate, &st->sym, e,
			   st->report.used, st->total, st->filters, err,
			   sizeof(err)))
		die(2, "%s", err);
}

/* Build a report of the entries; warn if its kernel symbols resolve
 * nothing (another kernel's?). */
static void build(struct state *st, struct report *rep,
		  const struct count_entry *e)
{
	if (report_build(rep, e, st->report.used))
		die_nomem();
	if (st->ks.source && rep->kernel >= 10 && rep->kernel_resolved == 0)
		session_warn(st->o.file, "none of %" PRIu64 " kernel samples "
			     "falls in a function of %s: is it this session's "
			     "kernel?", rep->kernel, st->ks.source);
}

/* What the writers are told besides a report. */
static struct run run_of(const struct state *st)
{
	return (struct run){ stdout, &st->o, &st->s, &st->ks, st->symbols,
			     st->filters, st->total };
}

/* The reports (without --by in text or CSV: appid and EIP, then appid),
 * then the plot of the first. */
static void write_reports(struct state *st, const struct count_entry *e)
{
	const struct options *o = &st->o;
	const struct writer *w = writers[o->format];
	const struct run run = run_of(st);
	struct report reps[MAX_REPORTS];
	unsigned int sets[MAX_REPORTS] = { st->fields, FB(F_APPID) };
	size_t n = !o->fields && o->format != FORMAT_JSON ? 2 : 1;
	struct count_entry *se = NULL;
	char title[32], err[512];

	if (o->children && !(se = counts_entries(&st->stacks)))
		die_nomem();
	if (w->begin)
		w->begin(&run);
	for (size_t i = 0; i < n; i++) {
		reps[i] = (struct report){
			.fields = sets[i], .keys = st->keys,
			.appids = &st->appids,
			.names = &st->names,
			.sym = st->symbols ? &st->sym : NULL,
			.mode = options_mode(o),
			.mode_title = options_mode_title(o, title,
							 sizeof(title)),
			.top = o->top,
			.layout = o->format == FORMAT_JSON ? &report_plain :
				report_layout(sets[i]),
			.stacks = se, .nstacks = se ? st->stacks.used : 0,
			.chains = &st->chains,
		};
		build(st, &reps[i], e);
		w->report(&run, &reps[i], i);
		if (i > 0 || !o->plot)	/* one report's rows at a time */
			report_free(&reps[i]);
	}
	if (o->plot && plot_write(o->plot, &reps[0], o->file, st->filters,
				  err, sizeof(err)))
		die(1, "%s", err);
	report_free(&reps[0]);
	free(se);
}

/* Where the stacks' frames come from; by_app: the root's frames are
 * applications, not appids. */
static struct stack_source stack_source(struct state *st, bool by_app)
{
	const uint32_t unknown = strtab_intern(&st->names, "[unknown]");

	if (unknown == STRTAB_NOMEM)
		die_nomem();
	return (struct stack_source){ &st->sym, &st->appids, &st->chains,
				      &st->names, by_app, unknown,
				      st->o.peak ? &st->windows : NULL };
}

/* The call tree of the stacks (callee first if inverted). */
static void build_tree(struct state *st, struct calltree *t, bool inverted)
{
	const struct stack_source src = stack_source(st, st->o.fields ==
						     FB(F_APP));
	struct tree_frame f[STACK_MAX_FRAMES], r[STACK_MAX_FRAMES];
	struct count_entry *e = counts_entries(&st->stacks);
	int n;

	if (!e || calltree_init(t))
		die_nomem();
	for (size_t i = 0; i < st->stacks.used; i++) {
		n = stack_frames(&src, &e[i], f);
		if (n < 0)
			die_nomem();
		for (int k = 0; inverted && k < n; k++)
			r[k] = f[n - 1 - k];
		if (calltree_add(t, inverted ? r : f, (size_t)n, e[i].count))
			die_nomem();
	}
	free(e);
}

/* --format perf-script: a second pass over the file, a sample at a time. */
static void write_script(struct state *st)
{
	const struct stack_source src = stack_source(st, false);
	struct sleepy_reader *r = reopen(st);

	switch (script_write(stdout, r, &st->o, &src)) {
	case -1:
		die_nomem();
	case -2:
		die_reader(r, st->o.file);
	}
	sleepy_reader_close(r);
}

/* The logical stacks' activity tree. */
static void build_lstack(struct state *st, struct calltree *t,
			 struct lstack_tally *tally)
{
	const struct stack_source src = stack_source(st, st->o.fields ==
						     FB(F_APP));
	const struct lstack_tree_in in = {
		&st->lstacks, &st->o, &src, &st->lnames,
	};

	if (lstack_tree_build(&in, t, tally))
		die_nomem();
}

/* --tree lstack: the activity tree as text, JSON or folded stacks. */
static void write_lstack(struct state *st)
{
	const struct options *o = &st->o;
	const struct run run = run_of(st);
	char mode[32], title[96];
	struct lstack_tally tally;
	struct calltree t;
	const struct lstack_out out = {
		&run, &t, &st->names, &tally, &st->lnames, title,
		o->format == FORMAT_TEXT || o->have_min_percent ?
		o->min_percent : 0,
	};

	snprintf(title, sizeof(title), "Activity tree (logical stacks), %s",
		 options_mode_title(o, mode, sizeof(mode)));
	build_lstack(st, &t, &tally);
	if (o->format == FORMAT_FOLDED) {
		if (tree_print_folded(stdout, &t, &st->names, o->offcpu))
			die_nomem();
	} else if (o->format == FORMAT_JSON) {
		if (lstack_print_json(&out))
			die_nomem();
	} else {
		text_writer.begin(&run);
		lstack_print_text(&out);
	}
	calltree_free(&t);
}

/* The call-chain views: the text tree, or the folded stacks. */
static void write_stacks(struct state *st)
{
	const struct options *o = &st->o;
	const struct run run = run_of(st);
	char mode[32], title[64];
	struct calltree t;

	if (o->format == FORMAT_PERF_SCRIPT) {
		write_script(st);
		return;
	}
	if (o->lstack) {
		write_lstack(st);
		return;
	}
	build_tree(st, &t, o->tree && o->inverted);	/* not folded */
	if (o->format == FORMAT_FOLDED) {
		if (tree_print_folded(stdout, &t, &st->names, false))
			die_nomem();
	} else {
		snprintf(title, sizeof(title), "Call tree, %s",
			 options_mode_title(o, mode, sizeof(mode)));
		text_writer.begin(&run);
		tree_print_text(stdout, &t, &st->names, &(struct tree_text){
			title, o->min_percent, o->inverted, false });
	}
	calltree_free(&t);
}

/* --flamegraph OUT.svg: the call tree (inverted with --inverted), or the
 * activity tree with --tree lstack, drawn; --min-percent prunes it only
 * when given. */
static void write_flamegraph(struct state *st)
{
	const struct options *o = &st->o;
	char buf[32], title[160], err[1024];
	const char *mode = options_mode_title(o, buf, sizeof(buf));
	struct lstack_tally tally;
	struct calltree t;

	if (o->lstack) {
		snprintf(title, sizeof(title), "Activity flame graph (logical "
			 "stacks), %s%s", mode,
			 o->offcpu ? ", by off-CPU time" : "");
		build_lstack(st, &t, &tally);
	} else {
		snprintf(title, sizeof(title), "Flame graph, %s%s", mode,
			 o->inverted ? ", inverted: callees at the root" : "");
		build_tree(st, &t, o->inverted);
	}
	if (flame_write(o->flamegraph, &t, &st->names, &(struct flame_in){
				title, o->file, st->filters,
				o->have_min_percent ? o->min_percent : 0,
				o->offcpu, o->lstack },
			err, sizeof(err)))
		die(1, "%s", err);
	calltree_free(&t);
}

static void write_sqlite(struct state *st)
{
	const struct stack_source src = stack_source(st, false);
	const struct sqlite_in in = {
		.file = st->o.file, .hdr = st->s.hdr, .samples = st->s.samples,
		.selected = st->total, .span_ns = st->s.last_time_ns,
		.slice_ns = st->o.slice_ns, .filters = st->filters,
		.mode = options_mode(&st->o), .appids = &st->appids,
		.maps = &st->maps, .names = &st->names, .sym = &st->sym,
		.counts = &st->counts, .have_stats = st->s.have_stats,
		.stats = &st->s.stats, .cpus = st->s.cpus, .ncpus = st->s.ncpus,
		.stacks = &st->stack_ids, .src = &src,
		.lstacks = &st->lstacks, .lnames = &st->lnames, .o = &st->o,
		.lat = &st->lat,
	};
	char err[512];

	if (sqlite_write(st->o.sqlite, &in, err, sizeof(err)))
		die(1, "%s", err);
}

/* --pprof OUT: a second pass over the file, into a profile.proto. */
static void write_pprof(struct state *st)
{
	const struct stack_source src = stack_source(st, false);
	char comment[1024], mode[32], err[1024];
	const struct pprof_in in = {
		st->o.pprof, &st->o, &src, st->s.last_time_ns, comment,
	};
	struct sleepy_reader *r = reopen(st);

	snprintf(comment, sizeof(comment), "sleepy session %s: %s%s%s",
		 st->o.file, options_mode_title(&st->o, mode, sizeof(mode)),
		 st->filters[0] ? ", " : "", st->filters);
	switch (pprof_write(r, &in, err, sizeof(err))) {
	case PPROF_NOMEM:
		die_nomem();
	case PPROF_READER:
		die_reader(r, st->o.file);
	case PPROF_WRITE:
		die(1, "%s", err);
	}
	sleepy_reader_close(r);
}

/* --compare OLD: its histograms against rep's, ranked. */
static void compare_latency(struct state *st, const struct lat_report *rep)
{
	const struct run run = run_of(st);
	struct appid_table appids;
	struct latency lat;
	struct lat_report old = *rep;
	struct lat_pair *pairs;
	size_t n;

	read_latency(st->o.compare, &lat, &appids);
	latency_warnings(st->o.compare, &lat);
	old.lat = &lat;
	old.appids = &appids;
	if (lat_report_build(&old) || lat_compare(&old, rep, &pairs, &n))
		die_nomem();
	lat_write_compare(&run, st->o.compare, pairs, n, &st->names);
	free(pairs);
	lat_report_free(&old);
	appids_free(&appids);
	latency_free(&lat);
}

/* --latency: the histograms, or their comparison with --compare's. */
static void write_latency(struct state *st)
{
	const struct options *o = &st->o;
	const struct run run = run_of(st);
	struct lat_report rep = {
		&st->lat, &st->appids, &st->names, o, o->fields == FB(F_APPID),
		o->segments, NULL, 0, 0,
	};
	char err[512];

	latency_warnings(o->file, &st->lat);
	if (lat_report_build(&rep))
		die_nomem();
	if (o->compare)
		compare_latency(st, &rep);
	else
		lat_write(&run, &rep, &st->lat);
	if (o->plot && latplot_write(o->plot, &rep, o->file, st->filters, err,
				     sizeof(err)))
		die(1, "%s", err);
	lat_report_free(&rep);
}

static void free_state(struct state *st)
{
	if (st->symbols)
		symbolizer_free(&st->sym);
	debuginfo_end();
	ksyms_free(&st->ks);
	free(st->sidecar);
	if (st->o.sqlite) {
		counts_free(&st->report);
		stackids_free(&st->stack_ids);
	}
	if (options_need_stacks(&st->o)) {
		counts_free(&st->stacks);
		chains_free(&st->chains);
	}
	if (st->o.lstack || st->o.sqlite)
		lstacks_free(&st->lstacks);
	lstack_names_free(&st->lnames);
	latency_free(&st->lat);
	peak_windows_free(&st->windows);
	counts_free(&st->counts);
	appids_free(&st->appids);
	maps_free(&st->maps);
	strtab_free(&st->names);
	session_free(&st->s);
	sleepy_reader_close(st->r);
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	static struct state st;
	struct count_entry *e;

	st.o = options_parse(argc, argv);
	/* Without --by: the paper's two reports, or appid and EIP rows. */
	st.fields = st.o.fields ? st.o.fields : FB(F_APPID) | FB(F_EIP);
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	open_session(&st);
	if (st.o.peak)
		setup_peak(&st);
	count_session(&st);
	load_symbols(&st);
	e = counts_entries(&st.report);
	if (!e)
		die_nomem();
	if (st.o.archive) {
		archive(&st, e);
	} else if (options_histograms(&st.o)) {
		write_latency(&st);
	} else if (st.o.annotate) {
		annotate(&st, e);
	} else if (options_stacks(&st.o)) {
		write_stacks(&st);
	} else {
		write_reports(&st, e);
		if (st.o.sqlite)
			write_sqlite(&st);
	}
	free(e);
	if (st.o.pprof)
		write_pprof(&st);
	if (st.o.flamegraph)
		write_flamegraph(&st);
	if (fflush(stdout) != 0 || ferror(stdout))
		die(1, "standard output: %s", strerror(errno));
	free_state(&st);
	return 0;
}
