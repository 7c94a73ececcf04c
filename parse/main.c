// SPDX-License-Identifier: GPL-2.0
/*
 * parse: reports of a sleepy session file: the SLEEPY paper's samples per
 * appid and EIP and per appid (by default), and reports grouped by any of
 * app, appid, mode, cpu, EIP, DSO, function and source line, with filters,
 * as text, CSV or JSON, an SQLite database, an SVG plot, or a function's
 * annotated disassembly (see Documentation/parse.md).
 *
 * The file is streamed: memory grows with the number of distinct report
 * keys, not with the number of samples; symbols are looked up after the
 * pass, once per distinct (appid, EIP). Exit status: 0 done; 1 an I/O error
 * or out of memory; 2 a usage error or an invalid session file (one line:
 * "parse: FILE: <problem> at byte offset N").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "annotate.h"
#include "appids.h"
#include "counts.h"
#include "group.h"
#include "ksyms.h"
#include "maps.h"
#include "plot.h"
#include "reader.h"
#include "report.h"
#include "sqlout.h"
#include "strtab.h"
#include "symbolize.h"

#define PROG "parse"
#include "die.h"
#define MODE_ALL (-1)
#define BY_DEFAULT (-1)		/* both of the paper's reports */
#define NR_MODES 4		/* enum sleepy_mode */
#define HEAD_W 14		/* label column of the text header */

static const char usage_text[] =
	"usage: parse [--by FIELDS] [filters] [--format text|csv|json] [--top N]\n"
	"             [--symfs DIR] [--kallsyms FILE | --vmlinux FILE]\n"
	"             [--sqlite OUT.db] [--plot OUT.svg] [--annotate SYMBOL]\n"
	"             FILE\n"
	"\n"
	"Report the samples of a sleepy session file (\"-\" reads standard\n"
	"input). Without --by, the SLEEPY paper's two reports: samples per\n"
	"appid and EIP, and per appid.\n"
	"\n"
	"  --by FIELDS     group by a comma-separated list of:\n"
	"                  appid-eip  per appid (NAME#INSTANCE) and EIP\n"
	"                  appid      per appid\n"
	"                  app        per application (all its instances)\n"
	"                  eip        per instruction pointer\n"
	"                  symbol     per function (with its dso)\n"
	"                  dso        per executable or library\n"
	"                  line       per source line (with dso and symbol)\n"
	"                  cpu, mode  per CPU, per mode\n"
	"                  e.g. --by appid,symbol or --by app,dso,symbol\n"
	"  --mode MODE     the samples counted: where the tick found the CPU,\n"
	"                  user (default), kernel (in the kernel for a process),\n"
	"                  irq, idle, or all\n"
	"  --app NAME      only appids of this binary name\n"
	"  --appid NAME#I  only this appid\n"
	"  --pid N         only samples of this process (thread group id)\n"
	"  --cpu N         only samples taken on this CPU\n"
	"  --from S, --to S  only samples from S seconds after the session\n"
	"                  start (inclusive) to S seconds (exclusive)\n"
	"  --top N         print the N rows with the most samples\n"
	"  --format FMT    text (default: aligned columns with a summary of\n"
	"                  the session), csv or json\n"
	"  --symfs DIR     look the session's binaries up under DIR\n"
	"  --kallsyms F    kernel symbols from a /proc/kallsyms copy (default:\n"
	"                  FILE.kallsyms next to the session file)\n"
	"  --vmlinux F     kernel symbols from an uncompressed kernel image\n"
	"  --sqlite OUT.db also write the session to an SQLite database\n"
	"  --slice-ms N    its time slices (default 100 ms)\n"
	"  --plot OUT.svg  also draw the report as an SVG histogram\n"
	"  --annotate SYM  disassemble function SYM with samples per\n"
	"                  instruction, instead of a report\n"
	"  -h, --help      this text\n"
	"\n"
	"Rows are sorted by samples, most first; percentages are of the\n"
	"samples that pass the filters. Appids without an APPID record show\n"
	"as ?appid=N. See Documentation/parse.md. Exit status: 0 done, 1 I/O\n"
	"error, 2 usage error or an invalid file.\n";

__attribute__((noreturn))
static void die_nomem(void)
{
	die(1, "out of memory");
}

struct options {
	int by;			/* enum report_by (a base report), or -1 */
	unsigned int fields;	/* enum group_field; 0: the default reports */
	const char *by_arg;
	int mode;		/* enum sleepy_mode, or MODE_ALL */
	enum group_format format;
	const char *file;
	const char *app;	/* --app */
	const char *appid;	/* --appid NAME#I: the name */
	long appid_instance;
	long long pid, cpu;	/* -1: any */
	bool have_from, have_to;
	uint64_t from_ns, to_ns;
	size_t top;
	const char *symfs, *kallsyms, *vmlinux;
	const char *sqlite, *plot, *annotate;
	uint64_t slice_ns;
};

/* The index of val in names[] (NULL-terminated); dies if none. */
static int choice(const char *opt, const char *val, const char *const *names,
		  const char *list)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(val, names[i]))
			return i;
	die(2, "%s: unknown value '%s' (one of: %s)", opt, val, list);
}

/* --opt VALUE or --opt=VALUE: the value, or NULL if argv[*i] is not opt. */
static const char *option_value(int argc, char **argv, int *i,
				const char *opt)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		die(2, "%s: missing value", opt);
	return argv[++*i];
}

static unsigned long long number(const char *opt, const char *v,
				 unsigned long long max)
{
	unsigned long long x;
	char *end;

	errno = 0;
	if (!*v || *v < '0' || *v > '9')
		die(2, "%s: invalid number '%s'", opt, v);
	x = strtoull(v, &end, 10);
	if (*end || errno || x > max)
		die(2, "%s: invalid number '%s'", opt, v);
	return x;
}

static uint64_t seconds(const char *opt, const char *v)
{
	double x;
	char *end;

	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || errno || !(x >= 0) || x > 1e9)
		die(2, "%s: invalid number of seconds '%s'", opt, v);
	return (uint64_t)(x * 1e9 + 0.5);
}

/* --by's list: the fields, and a base report if it is one. */
static void parse_by(struct options *o, const char *v)
{
	static const char *const names[] = {
		"appid-eip", "appid", "app", "eip", "symbol", "dso", "line",
		"cpu", "mode", NULL,
	};
	static const unsigned int bits[] = {
		G_APPID | G_EIP, G_APPID, G_APP, G_EIP, G_SYMBOL, G_DSO,
		G_LINE, G_CPU, G_MODE,
	};
	const char *list = "app, appid, eip, appid-eip, symbol, dso, line, "
		"cpu, mode, or a comma-separated list";
	char *copy = strdup(v), *save = NULL, *tok;

	if (!copy)
		die_nomem();
	o->fields = 0;
	o->by_arg = v;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		o->fields |= bits[choice("--by", tok, names, list)];
	free(copy);
	if (!o->fields)
		die(2, "--by: unknown value '%s' (one of: %s)", v, list);
	if ((o->fields & G_APP) && (o->fields & G_APPID))
		die(2, "--by: app and appid exclude each other");
	o->fields = group_normalize(o->fields);
	o->by = o->fields == (G_APPID | G_EIP) ? REPORT_APPID_EIP :
		o->fields == G_APPID ? REPORT_APPID :
		o->fields == G_APP ? REPORT_APP :
		o->fields == G_EIP ? REPORT_EIP : BY_DEFAULT;
}

static struct options parse_args(int argc, char **argv)
{
	static const char *const modes[] = {
		"user", "kernel", "irq", "idle", "all", NULL,
	};
	static const char *const formats[] = {
		[GROUP_TEXT] = "text", [GROUP_CSV] = "csv",
		[GROUP_JSON] = "json", NULL,
	};
	struct options o = {
		.by = BY_DEFAULT, .mode = SLEEPY_MODE_USER,
		.format = GROUP_TEXT, .pid = -1, .cpu = -1,
		.slice_ns = 100000000ull,
	};
	bool opts_done = false;
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			if (o.file)
				die(2, "%s: unexpected argument (one FILE "
				    "only; see --help)", a);
			o.file = a;
		} else if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			exit(0);
		} else if ((v = option_value(argc, argv, &i, "--by"))) {
			parse_by(&o, v);
		} else if ((v = option_value(argc, argv, &i, "--mode"))) {
			int m = choice("--mode", v, modes,
				       "user, kernel, irq, idle, all");

			o.mode = m == NR_MODES ? MODE_ALL : m;
		} else if ((v = option_value(argc, argv, &i, "--format"))) {
			o.format = (enum group_format)choice(
				"--format", v, formats, "text, csv, json");
		} else if ((v = option_value(argc, argv, &i, "--app"))) {
			o.app = v;
		} else if ((v = option_value(argc, argv, &i, "--appid"))) {
			const char *hash = strrchr(v, '#');
			char *name;

			if (!hash || hash == v)
				die(2, "--appid: '%s' is not NAME#INSTANCE",
				    v);
			o.appid_instance = (long)number("--appid", hash + 1,
							UINT32_MAX);
			name = strndup(v, (size_t)(hash - v));
			if (!name)
				die_nomem();
			o.appid = name;
		} else if ((v = option_value(argc, argv, &i, "--pid"))) {
			o.pid = (long long)number("--pid", v, UINT32_MAX);
		} else if ((v = option_value(argc, argv, &i, "--cpu"))) {
			o.cpu = (long long)number("--cpu", v, UINT16_MAX);
		} else if ((v = option_value(argc, argv, &i, "--from"))) {
			o.from_ns = seconds("--from", v);
			o.have_from = true;
		} else if ((v = option_value(argc, argv, &i, "--to"))) {
			o.to_ns = seconds("--to", v);
			o.have_to = true;
		} else if ((v = option_value(argc, argv, &i, "--top"))) {
			o.top = (size_t)number("--top", v, SIZE_MAX / 2);
			if (!o.top)
				die(2, "--top: must be at least 1");
		} else if ((v = option_value(argc, argv, &i, "--symfs"))) {
			o.symfs = v;
		} else if ((v = option_value(argc, argv, &i, "--kallsyms"))) {
			o.kallsyms = v;
		} else if ((v = option_value(argc, argv, &i, "--vmlinux"))) {
			o.vmlinux = v;
		} else if ((v = option_value(argc, argv, &i, "--sqlite"))) {
			o.sqlite = v;
		} else if ((v = option_value(argc, argv, &i, "--plot"))) {
			o.plot = v;
		} else if ((v = option_value(argc, argv, &i, "--annotate"))) {
			o.annotate = v;
		} else if ((v = option_value(argc, argv, &i, "--slice-ms"))) {
			o.slice_ns = number("--slice-ms", v, 86400000ull) *
				1000000ull;
			if (!o.slice_ns)
				die(2, "--slice-ms: must be at least 1");
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}
	if (!o.file)
		die(2, "missing FILE (see --help)");
	if (o.symfs) {
		struct stat st;

		if (stat(o.symfs, &st))
			die(2, "--symfs: %s: %s", o.symfs, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			die(2, "--symfs: %s: not a directory", o.symfs);
	}
	if (o.kallsyms && o.vmlinux)
		die(2, "--kallsyms and --vmlinux exclude each other");
	if (o.have_from && o.have_to && o.to_ns <= o.from_ns)
		die(2, "--to must be after --from");
	if (!o.have_to)
		o.to_ns = UINT64_MAX;
	if (o.plot) {
		const char *dot = strrchr(o.plot, '.');

		if (dot && !strcasecmp(dot, ".png"))
			die(2, "--plot: PNG is not supported: write an .svg "
			    "(rsvg-convert or a browser converts it)");
		if (!dot || strcasecmp(dot, ".svg"))
			die(2, "--plot: '%s': the file name must end in .svg",
			    o.plot);
	}
	return o;
}

/* What a pass over the file found, besides the counts. */
struct session {
	const struct sleepy_file_header *hdr;
	uint64_t samples;		/* sample records */
	uint64_t by_mode[NR_MODES + 1];	/* [NR_MODES]: unknown modes */
	uint64_t selected;		/* samples that pass the filters */
	uint64_t last_time_ns;		/* latest sample time */
	uint64_t appid_records, mmaps, unknown, after_stats;
	bool have_stats;
	struct sample_stats stats;	/* the last STATS record */
};

/*
 * Read the whole file: count the samples that pass the in-pass filters
 * (mode, pid, cpu, time) into counts, keyed by the fields of m, and collect
 * the appids and mappings.
 */
static void read_session(struct sleepy_reader *r, const struct options *o,
			 const struct count_mask *m,
			 struct count_table *counts,
			 struct appid_table *appids, struct maps *maps,
			 struct strtab *names, struct session *s)
{
	const bool all = o->mode == MODE_ALL;
	const unsigned int want = all ? 0 : (unsigned int)o->mode;
	/* The paper's reports need appid and ip only: the fast path. */
	const bool fast = o->pid < 0 && o->cpu < 0 && !o->have_from &&
		!o->have_to && m->b == 0 && (m->a & MASK_PID) == 0;
	const uint64_t am = m->a, ipm = m->ip, bm = m->b;
	struct sleepy_record rec;
	struct counts_pipe pipe;
	int rc;

	counts_pipe_init(&pipe, counts);
	while ((rc = sleepy_reader_next(r, &rec)) > 0) {
		if (s->have_stats)
			s->after_stats++;
		switch (rec.type) {
		case SLEEPY_REC_SAMPLE: {
			/* The hot path: a few loads and a hash update. */
			const unsigned int mode = sleepy_sample_mode(&rec);
			const uint64_t t = sleepy_sample_time(&rec);

			s->samples++;
			s->by_mode[mode < NR_MODES ? mode : NR_MODES]++;
			if (t > s->last_time_ns)
				s->last_time_ns = t;
			if (!all && mode != want)
				break;
			if (fast) {
				if (counts_pipe_add(&pipe,
						    sleepy_sample_ip(&rec) & ipm,
						    sleepy_sample_appid(&rec) &
						    am, 0))
					die_nomem();
			} else {
				struct sleepy_sample x;
				uint64_t slice;

				sleepy_get_sample(&rec, &x);
				if ((o->pid >= 0 && x.pid != o->pid) ||
				    (o->cpu >= 0 && x.cpu != o->cpu) ||
				    t < o->from_ns || t >= o->to_ns)
					break;
				slice = t / o->slice_ns;
				if (slice > UINT32_MAX)
					slice = UINT32_MAX;
				if (counts_pipe_add(&pipe, x.ip & ipm,
						    counts_a(x.appid, x.pid) &
						    am,
						    counts_b(x.cpu, x.mode,
							     (uint32_t)slice) &
						    bm))
					die_nomem();
			}
			s->selected++;
			break;
		}
		case SLEEPY_REC_APPID: {
			struct sleepy_appid a;

			sleepy_get_appid(&rec, &a);
			s->appid_records++;
			if (appids_add(appids, &a))
				die_nomem();
			break;
		}
		case SLEEPY_REC_MMAP: {
			struct sleepy_mmap mm;

			sleepy_get_mmap(&rec, &mm);
			s->mmaps++;
			if (maps_add(maps, &mm, names))
				die_nomem();
			break;
		}
		case SLEEPY_REC_STATS:
			sleepy_get_stats(&rec, &s->stats);
			s->have_stats = true;
			break;
		default:
			s->unknown++;	/* a later format's record */
			break;
		}
	}
	if (counts_pipe_flush(&pipe))
		die_nomem();
	if (rc < 0) {
		if (sleepy_reader_status(r) == SLEEPY_ERR_FORMAT)
			die(2, "%s: %s at byte offset %" PRIu64, o->file,
			    sleepy_reader_error(r),
			    sleepy_reader_error_offset(r));
		die(1, "%s: %s", o->file, strerror(sleepy_reader_errno(r)));
	}
}

/* Whether an appid passes --app and --appid. */
static bool appid_wanted(const struct options *o,
			 const struct appid_table *appids, uint32_t appid)
{
	const struct appid_info *a = appids_find(appids, appid);

	if (o->app && (!a || strcmp(a->name, o->app)))
		return false;
	if (o->appid && (!a || strcmp(a->name, o->appid) ||
			 a->instance != (uint32_t)o->appid_instance))
		return false;
	return true;
}

/* Drop the keys of unwanted appids (the filters that need APPID records,
 * which may come after the samples). Returns the samples left.
 */
static uint64_t filter_appids(const struct options *o,
			      const struct appid_table *appids,
			      struct count_table *counts)
{
	struct count_table kept;
	uint64_t total = 0;

	if (!o->app && !o->appid) {
		for (size_t i = 0; i <= counts->mask; i++)
			total += counts->slots[i].count;
		return total;
	}
	if (counts_init(&kept))
		die_nomem();
	for (size_t i = 0; i <= counts->mask; i++) {
		const struct count_entry *e = &counts->slots[i];

		if (!e->count || !appid_wanted(o, appids, CE_APPID(e)))
			continue;
		if (counts_add(&kept, e->ip, e->a, e->b, e->count))
			die_nomem();
		total += e->count;
	}
	counts_free(counts);
	*counts = kept;
	return total;
}

/*
 * The file line: aligned with the other header lines if it fits 80
 * columns, else after a shorter label; a path too long even for that is cut
 * from the left, keeping the file's name.
 */
static void print_file_line(const char *file)
{
	const int short_w = 6;	/* "file  " */
	size_t len = strlen(file);
	char buf[81];

	if (len <= (size_t)(80 - HEAD_W)) {
		report_sanitize(buf, sizeof(buf), file, len);
		printf("%-*s%s\n", HEAD_W, "file", buf);
	} else if (len <= (size_t)(80 - short_w)) {
		report_sanitize(buf, sizeof(buf), file, len);
		printf("%-*s%s\n", short_w, "file", buf);
	} else {
		const size_t keep = 80 - short_w - 3;

		report_sanitize(buf, sizeof(buf), file + len - keep, keep);
		printf("%-*s...%s\n", short_w, "file", buf);
	}
}

static void print_text_header(const struct options *o,
			      const struct session *s)
{
	const struct sleepy_file_header *h = s->hdr;
	const struct sample_stats *st = &s->stats;
	static const char *const flag_names[] = {
		[0] = "none",
		[SAMPLE_F_USER_ONLY] = "user-only",
		[SAMPLE_F_NO_WRITE] = "no-write",
		[SAMPLE_F_USER_ONLY | SAMPLE_F_NO_WRITE] = "user-only,no-write",
	};
	char rel[66], mach[66], when[64] = "unknown";
	time_t t = (time_t)(h->start_realtime_ns / 1000000000u);
	struct tm tm;

	print_file_line(o->file);
	report_sanitize(rel, sizeof(rel), h->release, sizeof(rel) - 1);
	report_sanitize(mach, sizeof(mach), h->machine, sizeof(mach) - 1);
	printf("%-*s%s %s, HZ %" PRIu32 ", %" PRIu32 " CPUs, flags %s\n",
	       HEAD_W, "kernel", rel, mach, (uint32_t)h->hz,
	       (uint32_t)h->nr_cpus, flag_names[h->flags & SAMPLE_F_ALL]);
	if (h->start_realtime_ns && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("%-*s%s, samples span %.3f s\n", HEAD_W, "started", when,
	       (double)s->last_time_ns / 1e9);
	printf("%-*s%" PRIu64 " samples, %" PRIu64 " appids, %" PRIu64
	       " mmaps, %u stats, %" PRIu64 " unknown\n", HEAD_W, "records",
	       s->samples, s->appid_records, s->mmaps, s->have_stats ? 1 : 0,
	       s->unknown);
	printf("%-*s%" PRIu64 " total: user %" PRIu64 ", kernel %" PRIu64
	       ", irq %" PRIu64 ", idle %" PRIu64, HEAD_W, "samples",
	       s->samples, s->by_mode[SLEEPY_MODE_USER],
	       s->by_mode[SLEEPY_MODE_KERNEL], s->by_mode[SLEEPY_MODE_IRQ],
	       s->by_mode[SLEEPY_MODE_IDLE]);
	if (s->by_mode[NR_MODES])
		printf(", other %" PRIu64, s->by_mode[NR_MODES]);
	putchar('\n');
	if (!s->have_stats) {
		printf("%-*sno STATS record: not stopped cleanly\n", HEAD_W,
		       "session");
		return;
	}
	printf("%-*staken %" PRIu64 ", written %" PRIu64 ", discarded %"
	       PRIu64 ", skipped %" PRIu64 "\n", HEAD_W, "session",
	       (uint64_t)st->samples_taken, (uint64_t)st->samples_written,
	       (uint64_t)st->discarded_no_write,
	       (uint64_t)st->skipped_not_user);
	printf("%-*s%" PRIu64 ": no buffer %" PRIu64 ", no appid %" PRIu64
	       ", write error %" PRIu64 "\n", HEAD_W, "dropped",
	       (uint64_t)(st->dropped_no_buffer + st->dropped_no_appid +
			  st->dropped_write_error),
	       (uint64_t)st->dropped_no_buffer,
	       (uint64_t)st->dropped_no_appid,
	       (uint64_t)st->dropped_write_error);
}

static void warn(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(const char *file, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s: warning: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void warnings(const char *file, const struct session *s,
		     const struct appid_table *appids)
{
	if (!s->have_stats)
		warn(file, "no STATS record: the session was not stopped "
		     "cleanly (or the file is incomplete)");
	else if (s->stats.samples_written != s->samples)
		warn(file, "the STATS record says %" PRIu64 " samples were "
		     "written, the file holds %" PRIu64,
		     (uint64_t)s->stats.samples_written, s->samples);
	if (s->after_stats)
		warn(file, "records after the STATS record: %" PRIu64,
		     s->after_stats);
	if (appids->duplicates)
		warn(file, "%zu appids have more than one APPID record (the "
		     "last one is used)", appids->duplicates);
}

/* The filters in effect, as text ("" for none). */
static void describe_filters(const struct options *o, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...) do { if (n < size) n += (size_t)snprintf(buf + n, \
	size - n, __VA_ARGS__); } while (0)
	if (o->app)
		ADD("%sapp %s", n ? ", " : "", o->app);
	if (o->appid)
		ADD("%sappid %s#%ld", n ? ", " : "", o->appid,
		    o->appid_instance);
	if (o->pid >= 0)
		ADD("%spid %lld", n ? ", " : "", o->pid);
	if (o->cpu >= 0)
		ADD("%scpu %lld", n ? ", " : "", o->cpu);
	if (o->have_from || o->have_to) {
		ADD("%stime %.3f s to ", n ? ", " : "",
		    (double)o->from_ns / 1e9);
		if (o->have_to)
			ADD("%.3f s", (double)o->to_ns / 1e9);
		else
			ADD("the end");
	}
#undef ADD
}

static void json_session(FILE *out, const struct options *o,
			 const struct session *s, const struct ksyms *ks,
			 uint64_t total)
{
	const struct sleepy_file_header *h = s->hdr;

	fputs("{\n  \"file\": ", out);
	json_string(out, o->file);
	fprintf(out, ",\n  \"session\": {\"version\": %" PRIu32
		", \"hz\": %" PRIu32 ", \"nr_cpus\": %" PRIu32
		", \"flags\": %" PRIu32 ", \"release\": ",
		(uint32_t)h->version, (uint32_t)h->hz, (uint32_t)h->nr_cpus,
		(uint32_t)h->flags);
	json_string(out, h->release);
	fputs(", \"machine\": ", out);
	json_string(out, h->machine);
	fprintf(out, ", \"start_realtime_ns\": %" PRIu64
		", \"span_ns\": %" PRIu64 ", \"samples\": %" PRIu64
		", \"user\": %" PRIu64 ", \"kernel\": %" PRIu64
		", \"irq\": %" PRIu64 ", \"idle\": %" PRIu64
		", \"stats\": %s},\n", (uint64_t)h->start_realtime_ns,
		s->last_time_ns, s->samples, s->by_mode[SLEEPY_MODE_USER],
		s->by_mode[SLEEPY_MODE_KERNEL], s->by_mode[SLEEPY_MODE_IRQ],
		s->by_mode[SLEEPY_MODE_IDLE], s->have_stats ? "true" : "false");
	fputs("  \"filters\": {\"mode\": ", out);
	json_string(out, o->mode == MODE_ALL ? "all" :
		    sleepy_mode_name((unsigned int)o->mode));
	fputs(", \"app\": ", out);
	if (o->app)
		json_string(out, o->app);
	else
		fputs("null", out);
	fputs(", \"appid\": ", out);
	if (o->appid) {
		char buf[600];

		snprintf(buf, sizeof(buf), "%s#%ld", o->appid,
			 o->appid_instance);
		json_string(out, buf);
	} else {
		fputs("null", out);
	}
	if (o->pid >= 0)
		fprintf(out, ", \"pid\": %lld", o->pid);
	else
		fputs(", \"pid\": null", out);
	if (o->cpu >= 0)
		fprintf(out, ", \"cpu\": %lld", o->cpu);
	else
		fputs(", \"cpu\": null", out);
	if (o->have_from)
		fprintf(out, ", \"from\": %.9f", (double)o->from_ns / 1e9);
	else
		fputs(", \"from\": null", out);
	if (o->have_to)
		fprintf(out, ", \"to\": %.9f", (double)o->to_ns / 1e9);
	else
		fputs(", \"to\": null", out);
	fputs("},\n  \"kernel_symbols\": ", out);
	if (ks && ks->source)
		json_string(out, ks->source);
	else
		fputs("null", out);
	fprintf(out, ",\n  \"total\": %" PRIu64 ",\n", total);
}

static void json_report(const struct options *o, const struct session *s,
			const struct ksyms *ks, const struct group_ctx *ctx,
			const struct grow *rows)
{
	static const char *const names[] = {
		"app", "appid", "mode", "cpu", "eip", "dso", "symbol", "line",
	};
	uint64_t unres = 0;
	bool first = true;

	json_session(stdout, o, s, ks, ctx->total);
	fputs("  \"by\": [", stdout);
	for (unsigned int i = 0; i < 8; i++) {
		if (ctx->fields & (1u << i)) {
			printf("%s\"%s\"", first ? "" : ", ", names[i]);
			first = false;
		}
	}
	printf("],\n  \"rows_total\": %zu,\n  \"top\": ", ctx->nrows);
	if (o->top)
		printf("%zu", o->top);
	else
		fputs("null", stdout);
	for (size_t i = 1; i < NR_REASONS; i++)
		unres += ctx->unresolved[i];
	fputs(",\n  \"unresolved\": {", stdout);
	if (ctx->fields & G_SYMBOLIZE) {
		printf("\"samples\": %" PRIu64 ", \"by_reason\": {", unres);
		for (size_t i = 1; i < NR_REASONS; i++)
			printf("%s\"%s\": %" PRIu64, i > 1 ? ", " : "",
			       reason_name((unsigned int)i),
			       ctx->unresolved[i]);
		putchar('}');
	}
	fputs("},\n  \"rows\": [", stdout);
	group_print_json_rows(ctx, rows);
	fputs(ctx->nrows ? "\n  ]\n}\n" : "]\n}\n", stdout);
}

int main(int argc, char **argv)
{
	static const char *const mode_titles[] = {
		"user mode", "kernel mode", "irq mode", "idle mode",
	};
	static const char *const mode_names[] = {
		"user", "kernel", "irq", "idle",
	};
	struct options o = parse_args(argc, argv);
	struct count_table counts;
	struct appid_table appids;
	struct maps maps;
	struct strtab names;
	struct ksyms ks;
	struct symbolizer sym;
	struct session s = { 0 };
	struct sleepy_reader *r;
	struct report_ctx ctx;
	struct count_mask m = { 0, 0, 0 }, rm;
	struct count_table report;	/* counts by the report's fields */
	unsigned int fields = o.fields;
	bool need_sym, legacy;
	uint64_t total;
	char filters[512], err[512], *sidecar = NULL;
	static char outbuf[1 << 16];

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	r = sleepy_reader_open(o.file);
	if (!r)
		die_nomem();
	if (sleepy_reader_status(r) == SLEEPY_ERR_FORMAT)
		die(2, "%s: %s at byte offset %" PRIu64, o.file,
		    sleepy_reader_error(r), sleepy_reader_error_offset(r));
	if (sleepy_reader_status(r) != SLEEPY_OK)
		die(1, "%s: %s", o.file, strerror(sleepy_reader_errno(r)));
	s.hdr = sleepy_reader_header(r);

	/* Without --by: the paper's two reports, or appid and EIP rows. */
	if (!fields)
		fields = G_APPID | G_EIP;
	/* The base reports in text and CSV keep report.c's layout. */
	legacy = o.format != GROUP_JSON && (o.by != BY_DEFAULT || !o.by_arg);
	need_sym = (fields & G_SYMBOLIZE) || o.sqlite || o.annotate;

	/* Count by the key fields the reports and filters need, no more. */
	if (fields & (G_APP | G_APPID | G_SYMBOLIZE) || o.app || o.appid)
		m.a |= MASK_APPID;
	if (fields & (G_EIP | G_SYMBOLIZE))
		m.ip = UINT64_MAX;
	if (fields & G_MODE)
		m.b |= MASK_MODE;
	if (fields & G_CPU)
		m.b |= MASK_CPU;
	if (o.annotate) {
		m.a |= MASK_APPID;
		m.ip = UINT64_MAX;
	}
	rm = m;			/* what the report needs */
	if (o.sqlite) {
		m.ip = UINT64_MAX;
		m.a = UINT64_MAX;
		m.b = UINT64_MAX;
	}
	if (counts_init(&counts) || strtab_init(&names))
		die_nomem();
	appids_init(&appids);
	maps_init(&maps);
	read_session(r, &o, &m, &counts, &appids, &maps, &names, &s);
	if (maps_build(&maps))
		die_nomem();
	warnings(o.file, &s, &appids);
	total = filter_appids(&o, &appids, &counts);
	describe_filters(&o, filters, sizeof(filters));
	/* The database keeps every field; the report needs fewer keys. */
	if (o.sqlite) {
		if (counts_init(&report) ||
		    counts_project(&counts, &report, &rm))
			die_nomem();
	} else {
		report = counts;	/* the same table: freed once */
	}

	memset(&ks, 0, sizeof(ks));
	if (need_sym) {
		int rc;

		if (strcmp(o.file, "-")) {
			sidecar = malloc(strlen(o.file) + 10);
			if (!sidecar)
				die_nomem();
			sprintf(sidecar, "%s.kallsyms", o.file);
		}
		rc = ksyms_load(&ks, o.kallsyms, o.vmlinux, sidecar,
				s.hdr->release, o.symfs, &names, err,
				sizeof(err));
		if (rc == -1)
			die_nomem();
		if (rc == -2)
			die(2, "%s", err);
		if (symbolizer_init(&sym, &names, &maps, &ks, o.symfs,
				    (fields & G_LINE) || o.sqlite ||
				    o.annotate))
			die_nomem();
	}

	if (o.annotate) {
		struct count_entry *e = counts_entries(&report);

		if (!e)
			die_nomem();
		if (annotate_print(stdout, o.annotate, &sym, e, report.used,
				   total, filters, err, sizeof(err)))
			die(2, "%s", err);
		free(e);
		goto done;
	}

	ctx.out = stdout;
	ctx.format = o.format == GROUP_CSV ? REPORT_CSV : REPORT_TEXT;
	ctx.appids = &appids;
	ctx.mode = o.mode == MODE_ALL ? "all" : mode_names[o.mode];
	ctx.mode_title = o.mode == MODE_ALL ? "all modes" :
		mode_titles[o.mode];
	ctx.top = o.top;
	if (o.format == GROUP_TEXT) {
		print_text_header(&o, &s);
		if (filters[0])
			printf("%-*s%s: %" PRIu64 " samples\n", HEAD_W,
			       "filters", filters, total);
		if (need_sym) {
			char buf[80];

			report_sanitize(buf, sizeof(buf), ks.source ?
					ks.source : ks.why, 80 - HEAD_W - 6);
			printf("%-*s%s%s\n", HEAD_W, "kernel syms",
			       ks.source ? "" : "none: ", buf);
		}
		putchar('\n');
	}
	if (legacy) {
		if (o.format == GROUP_CSV)
			report_csv_header(&ctx);
		if (!o.by_arg) {
			if (report_print(&ctx, REPORT_APPID_EIP, &report,
					 total))
				die_nomem();
			if (o.format == GROUP_TEXT)
				putchar('\n');
			if (report_print(&ctx, REPORT_APPID, &report, total))
				die_nomem();
		} else if (report_print(&ctx, (enum report_by)o.by, &report,
					total)) {
			die_nomem();
		}
	}
	if (!legacy || o.plot) {
		struct count_entry *e = counts_entries(&report);
		struct group_ctx g = {
			.fields = fields, .out = stdout, .appids = &appids,
			.names = &names, .sym = need_sym ? &sym : NULL,
			.mode = ctx.mode, .mode_title = ctx.mode_title,
			.top = o.top,
		};
		struct grow *rows;

		if (!e)
			die_nomem();
		rows = group_build(&g, e, report.used);
		if (!rows)
			die_nomem();
		/* Kernel symbols of another kernel resolve nothing. */
		if (ks.source && g.kernel >= 10 && g.kernel_resolved == 0)
			warn(o.file, "none of %" PRIu64 " kernel samples falls in "
			     "a function of %s: is it this session's kernel?",
			     g.kernel, ks.source);
		if (!legacy && o.format == GROUP_TEXT)
			group_print_text(&g, rows);
		else if (!legacy && o.format == GROUP_CSV)
			group_print_csv(&g, rows);
		else if (!legacy)
			json_report(&o, &s, &ks, &g, rows);
		if (o.plot && plot_write(o.plot, &g, rows, o.file, filters,
					 err, sizeof(err)))
			die(1, "%s", err);
		free(rows);
		free(e);
	}
	if (o.sqlite) {
		struct sqlite_in in = {
			.file = o.file, .hdr = s.hdr, .samples = s.samples,
			.selected = total, .span_ns = s.last_time_ns,
			.slice_ns = o.slice_ns, .filters = filters,
			.mode = ctx.mode, .appids = &appids, .maps = &maps,
			.names = &names, .sym = &sym, .counts = &counts,
			.have_stats = s.have_stats, .stats = &s.stats,
		};

		if (sqlite_write(o.sqlite, &in, err, sizeof(err)))
			die(1, "%s", err);
	}
done:
	if (fflush(stdout) != 0 || ferror(stdout))
		die(1, "standard output: %s", strerror(errno));
	if (need_sym)
		symbolizer_free(&sym);
	ksyms_free(&ks);
	free(sidecar);
	if (o.sqlite)
		counts_free(&report);
	counts_free(&counts);
	appids_free(&appids);
	maps_free(&maps);
	strtab_free(&names);
	sleepy_reader_close(r);
	return 0;
}
