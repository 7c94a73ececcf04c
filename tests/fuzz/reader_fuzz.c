// SPDX-License-Identifier: GPL-2.0
/*
 * reader_fuzz: a libFuzzer target for parse's session file reader
 * (parse/reader.c). Each input is written to a memfd and opened by path
 * (/proc/self/fd/N), the way parse opens a file; every record is walked and
 * every decoder called. Besides the sanitizers' checks, it traps when the
 * reader breaks a promise of reader.h: a record it returns must be at least
 * its type's fixed size, its strings NUL-terminated inside it, offsets must
 * add up, CPU_STATS records must name CPUs below the header's nr_cpus in
 * increasing order before any STATS record, and an error must come with a
 * message and an offset inside the input.
 *
 * The reader reads through a 1 MiB window, so inputs of a few KiB never
 * cross it. One input in eight (by its length) is also walked padded: its
 * first 180 bytes (the header), then unknown-type filler records up to just
 * short of 1 MiB, then the rest of the input, whose records then straddle
 * the window's end.
 *
 * Each input also goes through parse --latency's code (walk_latency()):
 * the system call records read (latency.c), a peak's calls (--peak,
 * peak.c), the pass that joins the samples to them (session.c), the
 * warnings, the histograms and their peaks (latreport.c, lathist.c), their
 * writers in every format (latout.c, into a stream that keeps nothing) and
 * --compare against the first pass's. It traps when those break a promise:
 * rows in order, the calls of the rows, peaks and windows as they say, the
 * samples counted within --peak's windows, both passes keeping the same
 * records, the input compared with itself alike. Built and run by
 * tests/test_fuzz.py (syscall_names.c generated from syscall_64.tbl by
 * parse/syscall_names.awk, as parse's Makefile does):
 *
 *   clang -fsanitize=fuzzer,address,undefined -I build/uapi -I parse \
 *       tests/fuzz/reader_fuzz.c parse/reader.c parse/latency.c \
 *       parse/lathist.c parse/latreport.c parse/latout.c parse/peak.c \
 *       parse/session.c parse/appids.c parse/strtab.c parse/filters.c \
 *       parse/syscalls.c parse/fmt.c parse/json.c parse/counts.c \
 *       parse/chains.c parse/stackids.c parse/lstack.c parse/maps.c \
 *       syscall_names.c -o reader_fuzz
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "latout.h"
#include "peak.h"
#include "reader.h"
#include "session.h"
#include "syscalls.h"

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "reader_fuzz: broken promise: %s " \
				"(line %d)\n", #cond, __LINE__);        \
			__builtin_trap();                               \
		}                                                       \
	} while (0)

static volatile uint64_t sink;

/* A string the reader vouched for: NUL-terminated after len bytes, inside
 * the record. */
static void check_string(const struct sleepy_record *rec, const char *s,
			 size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	CHECK(p >= rec->data && p + len < rec->data + rec->size);
	CHECK(strlen(s) == len);
}

/* What the walk has seen of the records that the reader orders. */
struct order {
	int stats_seen;
	int64_t last_cpu;	/* -1: no CPU_STATS record yet */
};

static void check_cpu_stats(const struct sleepy_file_header *h,
			    const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_cpu_stats c;

	CHECK(rec->size >= sleepy_cpu_stats_min(h->version));
	sleepy_get_cpu_stats(rec, &c);
	CHECK(!o->stats_seen);
	CHECK(c.cpu < h->nr_cpus);
	CHECK((int64_t)c.cpu > o->last_cpu);
	o->last_cpu = c.cpu;
	sink += c.buffers_hwm + c.samples_taken + c.dropped_no_buffer +
		c.dropped_no_appid + c.skipped_not_user + c.irq_ns_total +
		c.irq_ns_max + c.irq_calls + c.chains_defined +
		c.chains_truncated;
	for (int i = 0; i < SLEEPY_USER_STOPS; i++)
		sink += c.user_stops[i];
	sink += c.lstack_samples + c.lstack_retries + c.lstack_torn +
		c.lstack_faults + c.lstack_truncated + c.offcpu_records +
		c.offcpu_dropped;
}

/* A logical stack part the reader vouched for: its frames inside the
 * record that holds it, at most 16, none when left out. */
static void check_lstack(const struct sleepy_record *rec,
			 const struct sleepy_lstack_part *l)
{
	CHECK(l->frames >= rec->data + SLEEPY_LSTACK_HEAD);
	CHECK(l->frames + (size_t)l->nr * SLEEPY_LSTACK_FRAME <=
	      rec->data + rec->size);
	CHECK(l->nr <= SLEEPY_LSTACK_SAMPLE_FRAMES);
	CHECK(!l->nr || !(l->flags & (SLEEPY_LSTACK_F_TORN |
				      SLEEPY_LSTACK_F_FAULT)));
	for (size_t i = 0; i < l->nr; i++) {
		struct sleepy_lstack_frame f = sleepy_lstack_get(l, i);

		sink += f.id + f.arg;
	}
}

static void check_offcpu(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_offcpu c;

	(void)o;
	CHECK(rec->size >= SLEEPY_OFFCPU_SIZE);
	sleepy_get_offcpu(rec, &c);
	CHECK(c.cpu < h->nr_cpus);
	check_lstack(rec, &c.lstack);
	sink += c.state + c.appid + c.pid + c.tid + c.time_ns + c.off_ns;
}

static void check_chain(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_chain c;

	(void)o;
	CHECK(rec->size >= SLEEPY_CHAIN_SIZE);
	sleepy_get_chain(rec, &c);
	CHECK(c.cpu < h->nr_cpus && c.id != 0);
	CHECK(SLEEPY_CHAIN_SIZE + (c.nr_kernel + c.nr_user) * 8u <= rec->size);
	for (size_t i = 0; i < (size_t)c.nr_kernel + c.nr_user; i++)
		sink += sleepy_chain_frame(&c, i);
	sink += c.flags;
}

static void check_stats(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sample_stats st;

	CHECK(rec->size >= SLEEPY_STATS_HEAD + sleepy_stats_min(h->version));
	sleepy_get_stats(rec, h->version, &st);
	sink += st.samples_taken + st.samples_written + st.buffers_hwm +
		st.dropped_max_size;
	o->stats_seen = 1;
}

static void check_sample(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_sample s;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_SAMPLE_SIZE);
	sleepy_get_sample(rec, &s);
	if (s.flags & SLEEPY_SAMPLE_F_KCTX)
		CHECK(rec->size >= SLEEPY_SAMPLE_SIZE + SLEEPY_KCTX_SIZE);
	sink += s.kctx;
	if (s.flags & SLEEPY_SAMPLE_F_USER_IP)
		CHECK(rec->size >= SLEEPY_SAMPLE_UIP_SIZE);
	if (s.flags & SLEEPY_SAMPLE_F_CHAIN)
		CHECK(rec->size >= SLEEPY_SAMPLE_SIZE + 4 +
		      (s.flags & SLEEPY_SAMPLE_F_USER_IP ? 8 : 0));
	sink += s.chain;
	CHECK(sleepy_sample_mode(rec) == s.mode);
	CHECK(sleepy_sample_appid(rec) == s.appid);
	CHECK(sleepy_sample_ip(rec) == s.ip);
	CHECK(sleepy_sample_time(rec) == s.time_ns);
	if (s.flags & SLEEPY_SAMPLE_F_LSTACK)
		check_lstack(rec, &s.lstack);
	else
		CHECK(!s.lstack.nr && !s.lstack.frames);
	sink += s.user_ip + s.pid + s.tid + s.cpu;
	if (sleepy_mode_name(s.mode))
		sink += strlen(sleepy_mode_name(s.mode));
}

static void check_appid(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_appid a;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_APPID_SIZE);
	sleepy_get_appid(rec, &a);
	check_string(rec, a.name, a.name_len);
	check_string(rec, a.path, a.path_len);
	sink += a.appid + a.instance + a.pid + a.parent_appid + a.origin +
		a.flags + a.time_ns;
}

static void check_mmap(const struct sleepy_file_header *h,
		       const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_mmap m;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_MMAP_SIZE);
	sleepy_get_mmap(rec, &m);
	CHECK(m.build_id_len <= SLEEPY_BUILD_ID_MAX);
	for (unsigned int i = 0; i < m.build_id_len; i++)
		sink += m.build_id[i];
	check_string(rec, m.path, m.path_len);
	sink += m.appid + m.pid + m.start + m.len + m.pgoff + m.time_ns;
}

/* Version 5: a SYSCALL record's CPU is one of the header's. */
static void check_syscall(const struct sleepy_file_header *h,
			  const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_syscall c;

	(void)o;
	CHECK(rec->size >= SLEEPY_SYSCALL_SIZE);
	sleepy_get_syscall(rec, &c);
	CHECK(c.cpu < h->nr_cpus);
	sink += c.nr + c.appid + c.pid + c.tid + c.flags + c.start_ns +
		c.latency_ns;
}

/* A LATENCY record's buckets fit the 48 and the record, and add up. */
static void check_latency(const struct sleepy_file_header *h,
			  const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_latency l;
	uint64_t sum = 0;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_LATENCY_SIZE);
	sleepy_get_latency(rec, &l);
	CHECK(l.first + l.nr_buckets <= SLEEPY_LAT_BUCKETS);
	CHECK(rec->size == SLEEPY_LATENCY_SIZE + 8u * l.nr_buckets);
	for (size_t i = 0; i < l.nr_buckets; i++)
		sum += sleepy_latency_count(&l, i);
	CHECK(sum == l.calls);
	sink += l.segment + l.appid + l.nr + l.sum_ns + l.max_ns + l.restarts;
}

static void check_lat_segment(const struct sleepy_file_header *h,
			      const struct sleepy_record *rec,
			      struct order *o)
{
	struct sleepy_lat_segment g;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_LAT_SEGMENT_SIZE);
	sleepy_get_lat_segment(rec, &g);
	sink += g.segment + g.start_ns + g.end_ns + g.calls + g.lost +
		g.histograms;
}

typedef void (*check_fn)(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o);

/* Every type the reader knows has its checks here. */
static const check_fn checks[] = {
	[SLEEPY_REC_SAMPLE] = check_sample,
	[SLEEPY_REC_APPID] = check_appid,
	[SLEEPY_REC_MMAP] = check_mmap,
	[SLEEPY_REC_STATS] = check_stats,
	[SLEEPY_REC_CPU_STATS] = check_cpu_stats,
	[SLEEPY_REC_CHAIN] = check_chain,
	[SLEEPY_REC_OFFCPU] = check_offcpu,
	[SLEEPY_REC_SYSCALL] = check_syscall,
	[SLEEPY_REC_LATENCY] = check_latency,
	[SLEEPY_REC_LAT_SEGMENT] = check_lat_segment,
};

static void check_record(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	if (!sleepy_type_known(h->version, rec->type)) {
		/* Unknown: the caller skips it, but may look. */
		for (size_t i = 0; i < rec->size; i++)
			sink += rec->data[i];
		return;
	}
	CHECK(rec->type < sizeof(checks) / sizeof(checks[0]) &&
	      checks[rec->type]);
	checks[rec->type](h, rec, o);
}

static void walk(const char *path, size_t size)
{
	struct sleepy_reader *r = sleepy_reader_open(path);
	struct sleepy_record rec;
	const struct sleepy_file_header *h;
	struct order order = { 0, -1 };
	uint64_t expect;
	int rc;

	if (!r)
		return;		/* out of memory */
	h = sleepy_reader_header(r);
	if (sleepy_reader_status(r) == SLEEPY_OK) {
		CHECK(h->version >= SLEEPY_MIN_FORMAT_VERSION &&
		      h->version <= SLEEPY_FORMAT_VERSION);
		CHECK(h->header_size >= sizeof(*h) &&
		      h->header_size <= size);
		CHECK(strlen(h->release) < sizeof(h->release));
		CHECK(strlen(h->machine) < sizeof(h->machine));
		CHECK(sleepy_reader_offset(r) == h->header_size);
	}
	expect = sleepy_reader_offset(r);
	while ((rc = sleepy_reader_next(r, &rec)) == 1) {
		CHECK(rec.offset == expect);
		CHECK(rec.size >= sizeof(struct sleepy_rec_hdr));
		CHECK(rec.offset + rec.size <= size);
		expect += rec.size;
		CHECK(sleepy_reader_offset(r) == expect);
		check_record(h, &rec, &order);
	}
	if (rc < 0) {
		CHECK(sleepy_reader_status(r) != SLEEPY_OK);
		CHECK(sleepy_reader_error(r)[0] != '\0');
		if (sleepy_reader_status(r) == SLEEPY_ERR_FORMAT)
			CHECK(sleepy_reader_error_offset(r) <= size);
		/* Errors stick. */
		CHECK(sleepy_reader_next(r, &rec) == -1);
	} else {
		CHECK(sleepy_reader_status(r) == SLEEPY_OK);
		CHECK(expect == size);
		CHECK(sleepy_reader_next(r, &rec) == 0);
	}
	sleepy_reader_close(r);
}

/* ------------------------------------------------------ parse --latency */

/*
 * The writers' session heading (text.c, jsonout.c) and CSV quoting (csv.c)
 * come with parse's sample reports and its symbolizer, which open files
 * (ELF objects, kallsyms): stand-ins here, no heading, fields unquoted.
 */
static void no_begin(const struct run *run)
{
	(void)run;
}

const struct writer text_writer = { no_begin, NULL };

void json_run_head(struct json *j, const struct run *run)
{
	(void)j;
	(void)run;
}

void csv_field(FILE *out, const char *s)
{
	fputs(s, out);
}

static ssize_t discard_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)size;
}

/* A stream that keeps nothing of what it is given. */
static FILE *discard(void)
{
	static FILE *f;

	if (!f) {
		f = fopencookie(NULL, "w", (cookie_io_functions_t){
					.write = discard_write });
		if (!f) {
			perror("reader_fuzz: fopencookie");
			abort();
		}
	}
	return f;
}

/* What parse --latency (--compare, --peak) keeps of the input. */
struct lat_state {
	struct options o;
	/* The first pass (read_latency(): --compare's OLD, --peak's). */
	struct latency first;
	struct appid_table first_appids;
	struct strtab peak_names;
	struct peak_windows w;
	bool peak;			/* w holds a peak's windows */
	/* The pass (count_session()). */
	struct sleepy_reader *r;
	struct session s;
	struct count_table counts;
	struct latency lat;
	struct appid_table appids;
	struct maps maps;
	struct strtab names;
};

/* options_parse()'s defaults, --latency, all modes (as with --peak); the
 * grouping, --segments and --top by the input's size. 0, or -1 when out
 * of memory. */
static int lat_init(struct lat_state *st, const char *path, size_t size)
{
	memset(st, 0, sizeof(*st));
	st->o = (struct options){
		.mode = MODE_ALL, .format = FORMAT_TEXT, .file = path,
		.pid = -1, .tid = -1, .cpu = -1, .to_ns = UINT64_MAX,
		.slice_ns = 100000000ull, .min_percent = 0.5, .latency = true,
		.fields = size & 1 ? FB(F_APPID) : FB(F_APP),
		.segments = size & 2, .top = size % 5,
	};
	latency_init(&st->first);
	latency_init(&st->lat);
	appids_init(&st->first_appids);
	appids_init(&st->appids);
	maps_init(&st->maps);
	return strtab_init(&st->peak_names) || strtab_init(&st->names) ||
	       counts_init(&st->counts) ? -1 : 0;
}

static void lat_free(struct lat_state *st)
{
	latency_free(&st->first);
	appids_free(&st->first_appids);
	strtab_free(&st->peak_names);
	peak_windows_free(&st->w);
	session_free(&st->s);
	sleepy_reader_close(st->r);
	counts_free(&st->counts);
	latency_free(&st->lat);
	appids_free(&st->appids);
	maps_free(&st->maps);
	strtab_free(&st->names);
}

/* read_latency(): 0, or -1 where parse stops (a reader error). */
static int lat_first_pass(struct lat_state *st)
{
	struct sleepy_reader *r = sleepy_reader_open(st->o.file);
	int rc = -1;

	if (r && sleepy_reader_status(r) == SLEEPY_OK)
		rc = latency_read(r, &st->first, &st->first_appids);
	sleepy_reader_close(r);
	return rc ? -1 : 0;
}

/* A peak's buckets: in order, apart, not empty, their calls its own. */
static void check_peaks(const struct lat_row *r)
{
	CHECK(r->npeaks <= LAT_MAX_PEAKS);
	for (size_t k = 0; k < r->npeaks; k++) {
		const struct lat_peak *p = &r->peaks[k];
		uint64_t sum = 0;

		CHECK(p->first <= p->last && p->last < LAT_BUCKETS);
		CHECK(!k || p->first > p[-1].last + 1);
		for (unsigned int b = p->first; b <= p->last; b++) {
			CHECK(r->h.counts[b] != 0);
			sum += r->h.counts[b];
		}
		CHECK(sum == p->calls);
		CHECK(lat_peak_of(r->peaks, r->npeaks, p->last) == k + 1);
	}
}

/* Rows by segment, then calls (most first); rep->calls their sum, that of
 * every LATENCY record (no filters). */
static void check_report(const struct lat_report *rep)
{
	uint64_t rows = 0, records = 0;

	for (size_t i = 0; i < rep->nrows; i++) {
		const struct lat_row *r = &rep->rows[i];

		CHECK(!i || r[-1].segment < r->segment ||
		      (r[-1].segment == r->segment &&
		       r[-1].h.calls >= r->h.calls));
		CHECK(rep->segments || r->segment == 0);
		check_peaks(r);
		rows += r->h.calls;
	}
	for (size_t i = 0; i < rep->lat->nhists; i++)
		records += rep->lat->hists[i].h.calls;
	CHECK(rows == rep->calls && records == rep->calls);
}

/* --peak's windows: at most the SYSCALL records, by tid, then start. */
static void check_windows(const struct peak_windows *w,
			  const struct latency *lat)
{
	CHECK(w->n <= lat->ncalls);
	for (size_t i = 0; i < w->n; i++) {
		const struct call_window *c = &w->v[i];

		CHECK(c->end >= c->start && !c->hit);
		CHECK(!i || c[-1].tid < c->tid ||
		      (c[-1].tid == c->tid && c[-1].start <= c->start));
	}
	CHECK(strlen(w->desc) < sizeof(w->desc));
}

/* A row with peaks, from the (size % rows)th on; NULL if none has. */
static const struct lat_row *pick_row(const struct lat_report *rep,
				      size_t size)
{
	for (size_t i = 0; i < rep->nrows; i++) {
		const struct lat_row *r = &rep->rows[(size + i) % rep->nrows];

		if (r->npeaks)
			return r;
	}
	return NULL;
}

/* Whether --peak's report finds row by the spec's app and call: an app
 * name without '#' (not an appid) whose call's label names its number. */
static bool same_row(const char *group, const char *label,
		     const struct lat_row *row)
{
	return !strchr(group, '#') && syscall_lookup(label) == row->nr;
}

/* --peak APP:SYSCALL:N of a peak of the report (chosen by size). */
static void lat_peak(struct lat_state *st, size_t size)
{
	struct lat_report rep = { &st->first, &st->first_appids,
				  &st->peak_names, &st->o, false, false,
				  NULL, 0, 0 };
	const struct lat_row *row;
	char spec[700], label[SYSCALL_LABEL_MAX], err[1024];
	const char *group, *call;
	size_t k;

	if (lat_report_build(&rep))
		return;
	row = pick_row(&rep, size);
	if (row) {
		k = size / 3 % row->npeaks;
		group = strtab_get(&st->peak_names, row->group);
		call = syscall_label(row->nr, label);
		snprintf(spec, sizeof(spec), "%s:%s:%zu", group, call, k + 1);
		st->peak = !peak_windows_build(spec, &st->first,
					       &st->first_appids,
					       &st->peak_names, &st->o, &st->w,
					       err, sizeof(err));
		if (st->peak)
			check_windows(&st->w, &st->first);
		if (st->peak && same_row(group, call, row))
			CHECK(st->w.peak_calls == row->peaks[k].calls);
	}
	lat_report_free(&rep);
}

static uint64_t counted(const struct count_table *t)
{
	uint64_t n = 0;

	for (size_t i = 0; i <= t->mask; i++)
		n += t->slots[i].count;
	return n;
}

/* The pass joins the samples to --peak's windows: each sample counted is
 * in one; it keeps the system call records the first pass did. */
static void check_pass(const struct lat_state *st)
{
	const struct session *s = &st->s;

	CHECK(s->selected <= s->samples && counted(&st->counts) == s->selected);
	CHECK(st->lat.nhists == st->first.nhists &&
	      st->lat.nsegs == st->first.nsegs &&
	      st->lat.ncalls == st->first.ncalls);
	CHECK(s->latency_records == st->lat.nhists &&
	      s->segment_records == st->lat.nsegs &&
	      s->syscall_records == st->lat.ncalls);
	if (st->peak) {
		CHECK(st->w.sampled <= st->w.n);
		CHECK(st->w.n || !s->selected);
	}
}

/* count_session() of parse --latency, with --peak's windows when a peak
 * was found. 0, or -1 when out of memory. */
static int lat_pass(struct lat_state *st)
{
	static const struct count_mask all = {
		UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
	};
	const struct session_out out = {
		&st->counts, &st->appids, &st->maps, &st->names, NULL, NULL,
		NULL, NULL, &st->lat, st->peak ? &st->w : NULL,
	};
	int rc;

	st->r = sleepy_reader_open(st->o.file);
	if (!st->r)
		return -1;
	/* The first pass read this input to its end. */
	CHECK(sleepy_reader_status(st->r) == SLEEPY_OK);
	st->s.hdr = sleepy_reader_header(st->r);
	rc = session_read(st->r, &st->o, &all, &out, &st->s);
	CHECK(rc != -2);
	if (rc)
		return -1;
	check_pass(st);
	if (st->peak)
		peak_windows_describe(&st->w, st->s.selected);
	return 0;
}

/* The session's and the segments' warnings, discarded (stderr). */
static void lat_warnings(const struct lat_state *st)
{
	FILE *err = stderr;

	stderr = discard();
	session_warnings(st->o.file, &st->s, &st->appids);
	latency_warnings(st->o.file, &st->lat);
	stderr = err;
}

/* The input against itself: no pair of one side only; the same
 * histograms (without --segments, one per pair) are 0 apart. */
static void check_pairs(const struct lat_report *rep,
			const struct lat_pair *v, size_t n)
{
	CHECK(n == rep->nrows);
	for (size_t i = 0; i < n; i++) {
		CHECK(v[i].old && v[i].new);
		CHECK(v[i].status == LAT_BOTH || v[i].status == LAT_FEW);
		CHECK(rep->segments || v[i].emd <= 0);
	}
}

/* A run that writes to the discarding stream, in format f. */
static struct run lat_run(const struct lat_state *st, struct options *o,
			  enum format f)
{
	*o = st->o;
	o->format = f;
	return (struct run){ discard(), o, &st->s, NULL, false, "", 0 };
}

/* compare_latency(): the first pass's histograms as OLD. */
static void lat_compare_first(struct lat_state *st,
			      const struct lat_report *rep)
{
	struct lat_report old = *rep;
	struct lat_pair *pairs;
	struct options o;
	struct run run;
	size_t n;

	old.lat = &st->first;
	old.appids = &st->first_appids;
	if (lat_report_build(&old))
		return;
	if (!lat_compare(&old, rep, &pairs, &n)) {
		check_pairs(rep, pairs, n);
		for (int f = FORMAT_TEXT; f <= FORMAT_JSON; f++) {
			run = lat_run(st, &o, (enum format)f);
			lat_write_compare(&run, "old", pairs, n, &st->names);
		}
		free(pairs);
	}
	lat_report_free(&old);
}

/* write_latency(): the histograms in each format, then --compare. */
static void lat_reports(struct lat_state *st)
{
	struct lat_report rep = {
		&st->lat, &st->appids, &st->names, &st->o,
		st->o.fields == FB(F_APPID), st->o.segments, NULL, 0, 0,
	};
	struct options o;
	struct run run;

	lat_warnings(st);
	if (lat_report_build(&rep))
		return;
	check_report(&rep);
	for (int f = FORMAT_TEXT; f <= FORMAT_JSON; f++) {
		run = lat_run(st, &o, (enum format)f);
		lat_write(&run, &rep, &st->lat);
	}
	lat_compare_first(st, &rep);
	lat_report_free(&rep);
}

/*
 * The input through parse --latency's code: latency_read() (the first
 * pass of --compare and --peak), a peak's windows (--peak), the pass
 * that keeps the system call records and joins the samples to the
 * windows, the warnings, the report and its writers, --compare against
 * the first pass's. Nothing is written (no --plot) and nothing but the
 * input is read.
 */
static void walk_latency(const char *path, size_t size)
{
	struct lat_state st;

	if (!lat_init(&st, path, size) && !lat_first_pass(&st)) {
		lat_peak(&st, size);
		if (!lat_pass(&st))
			lat_reports(&st);
	}
	lat_free(&st);
}

#define WINDOW		(1u << 20)	/* reader.c's BUF_SIZE */
#define HEADER_BYTES	180
#define FILLER_TYPE	0x7fff		/* a record type nobody knows */
#define FILLER_MAX	60000

static void put(int fd, const void *data, size_t size, off_t at)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pwrite(fd, (const char *)data + done, size - done,
				   at + (off_t)done);

		if (n <= 0) {
			perror("reader_fuzz: pwrite");
			abort();
		}
		done += (size_t)n;
	}
}

/* len bytes of unknown-type records (len >= 4). */
static void put_filler(int fd, size_t len, off_t at)
{
	static unsigned char rec[FILLER_MAX];

	while (len > 0) {
		size_t n = len > FILLER_MAX ? FILLER_MAX : len;
		uint16_t h[2];

		if (len - n > 0 && len - n < 4)
			n -= 4;		/* leave a whole record's worth */
		h[0] = FILLER_TYPE;
		h[1] = (uint16_t)n;
		memcpy(rec, h, sizeof(h));
		put(fd, rec, n, at);
		at += (off_t)n;
		len -= n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("sleepy-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("reader_fuzz: memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0) {
		perror("reader_fuzz: ftruncate");
		abort();
	}
	put(fd, data, size, 0);
	walk(path, size);
	walk_latency(path, size);

	if (size >= HEADER_BYTES && size % 8 == 0) {
		/* The rest starts 1..61 bytes before the window's end. */
		size_t filler = WINDOW - HEADER_BYTES - 1 - size % 61;

		if (ftruncate(fd, 0) < 0) {
			perror("reader_fuzz: ftruncate");
			abort();
		}
		put(fd, data, HEADER_BYTES, 0);
		put_filler(fd, filler, HEADER_BYTES);
		put(fd, data + HEADER_BYTES, size - HEADER_BYTES,
		    (off_t)(HEADER_BYTES + filler));
		walk(path, size + filler);
	}
	return 0;
}
