// SPDX-License-Identifier: GPL-2.0
/*
 * parse: reports of a sleepy session file, as in the SLEEPY paper: samples
 * per appid and EIP and per appid (by default), per application or per EIP.
 *
 * The file is streamed: memory grows with the number of distinct report
 * keys, not with the number of samples. Exit status: 0 done; 1 an I/O error
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
#include <time.h>

#include "appids.h"
#include "counts.h"
#include "reader.h"
#include "report.h"

#define PROG "parse"
#include "die.h"
#define MODE_ALL (-1)
#define BY_DEFAULT (-1)		/* both of the paper's reports */
#define NR_MODES 4		/* enum sleepy_mode */
#define HEAD_W 14		/* label column of the text header */

static const char usage_text[] =
	"usage: parse [--by app|appid|eip|appid-eip] [--mode user|kernel|irq|"
	"idle|all]\n"
	"             [--format text|csv] FILE\n"
	"\n"
	"Report the samples of a sleepy session file (\"-\" reads standard\n"
	"input). Without --by, the SLEEPY paper's two reports: samples per\n"
	"appid and EIP, and per appid.\n"
	"\n"
	"  --by appid-eip  per appid (NAME#INSTANCE) and instruction pointer\n"
	"  --by appid      per appid\n"
	"  --by app        per application: a binary name, all its instances\n"
	"  --by eip        per instruction pointer, whatever the appid\n"
	"  --mode MODE     the samples counted: where the tick found the CPU,\n"
	"                  user (default), kernel (in the kernel for a process),\n"
	"                  irq, idle, or all\n"
	"  --format text   aligned columns with a summary of the session\n"
	"                  (default)\n"
	"  --format csv    app,instance,pid,mode,eip,samples,percent rows\n"
	"  -h, --help      this text\n"
	"\n"
	"Rows are sorted by samples, most first; percentages are of the\n"
	"samples in the report. Appids without an APPID record show as\n"
	"?appid=N. Exit status: 0 done, 1 I/O error, 2 usage error or an\n"
	"invalid file.\n";

__attribute__((noreturn))
static void die_nomem(void)
{
	die(1, "out of memory");
}

struct options {
	int by;			/* enum report_by, or BY_DEFAULT */
	int mode;		/* enum sleepy_mode, or MODE_ALL */
	enum report_format format;
	const char *file;
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

static struct options parse_args(int argc, char **argv)
{
	static const char *const bys[] = {
		[REPORT_APPID_EIP] = "appid-eip", [REPORT_APPID] = "appid",
		[REPORT_APP] = "app", [REPORT_EIP] = "eip", NULL,
	};
	static const char *const modes[] = {
		"user", "kernel", "irq", "idle", "all", NULL,
	};
	static const char *const formats[] = {
		[REPORT_TEXT] = "text", [REPORT_CSV] = "csv", NULL,
	};
	struct options o = { BY_DEFAULT, SLEEPY_MODE_USER, REPORT_TEXT, NULL };
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
			o.by = choice("--by", v, bys,
				      "app, appid, eip, appid-eip");
		} else if ((v = option_value(argc, argv, &i, "--mode"))) {
			int m = choice("--mode", v, modes,
				       "user, kernel, irq, idle, all");

			o.mode = m == NR_MODES ? MODE_ALL : m;
		} else if ((v = option_value(argc, argv, &i, "--format"))) {
			o.format = (enum report_format)choice("--format", v,
							      formats,
							      "text, csv");
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}
	if (!o.file)
		die(2, "missing FILE (see --help)");
	return o;
}

/* What a pass over the file found, besides the counts. */
struct session {
	const struct sleepy_file_header *hdr;
	uint64_t samples;		/* sample records */
	uint64_t by_mode[NR_MODES + 1];	/* [NR_MODES]: unknown modes */
	uint64_t selected;		/* samples of the --mode */
	uint64_t last_time_ns;		/* latest sample time */
	uint64_t appid_records, mmaps, unknown, after_stats;
	bool have_stats;
	struct sample_stats stats;	/* the last STATS record */
};

/*
 * Read the whole file: count the selected samples into counts, keyed by
 * (appid & appid_mask, ip & ip_mask), and collect the appids.
 */
static void read_session(struct sleepy_reader *r, const struct options *o,
			 uint32_t appid_mask, uint64_t ip_mask,
			 struct count_table *counts,
			 struct appid_table *appids, struct session *s)
{
	const bool all = o->mode == MODE_ALL;
	const unsigned int want = all ? 0 : (unsigned int)o->mode;
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
			if (all || mode == want) {
				s->selected++;
				if (counts_pipe_add(&pipe,
						    sleepy_sample_appid(&rec) &
						    appid_mask,
						    sleepy_sample_ip(&rec) &
						    ip_mask))
					die_nomem();
			}
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
		case SLEEPY_REC_MMAP:
			s->mmaps++;	/* for the symbolizer, later */
			break;
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
	struct session s = { 0 };
	struct sleepy_reader *r;
	struct report_ctx ctx;
	uint32_t appid_mask = UINT32_MAX;
	uint64_t ip_mask = UINT64_MAX;
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

	/* Count by the key fields the reports need, no more. */
	if (o.by != BY_DEFAULT)
		report_key_masks((enum report_by)o.by, &appid_mask, &ip_mask);
	if (counts_init(&counts))
		die_nomem();
	appids_init(&appids);
	read_session(r, &o, appid_mask, ip_mask, &counts, &appids, &s);
	warnings(o.file, &s, &appids);

	ctx.out = stdout;
	ctx.format = o.format;
	ctx.appids = &appids;
	ctx.mode = o.mode == MODE_ALL ? "all" : mode_names[o.mode];
	ctx.mode_title = o.mode == MODE_ALL ? "all modes" :
		mode_titles[o.mode];
	if (o.format == REPORT_CSV) {
		report_csv_header(&ctx);
	} else {
		print_text_header(&o, &s);
		putchar('\n');
	}
	if (o.by == BY_DEFAULT) {
		if (report_print(&ctx, REPORT_APPID_EIP, &counts, s.selected))
			die_nomem();
		if (o.format == REPORT_TEXT)
			putchar('\n');
		if (report_print(&ctx, REPORT_APPID, &counts, s.selected))
			die_nomem();
	} else if (report_print(&ctx, (enum report_by)o.by, &counts,
				s.selected)) {
		die_nomem();
	}

	if (fflush(stdout) != 0 || ferror(stdout))
		die(1, "standard output: %s", strerror(errno));
	counts_free(&counts);
	appids_free(&appids);
	sleepy_reader_close(r);
	return 0;
}
