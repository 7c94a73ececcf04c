// SPDX-License-Identifier: GPL-2.0
/*
 * sample_stop: stop the sleepy sampling session (system call 452) and print
 * its statistics, as an aligned table or (--json) a JSON object.
 *
 * Exit status: 0 clean; 1 when there was nothing to stop, the call failed,
 * the session had write errors or its sample accounting does not add up
 * (the statistics are printed first in the last two cases); 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsleepy.h"

#define PROG "sample_stop"
#include "die.h"

static const char usage_text[] =
	"usage: sample_stop [--json]\n"
	"\n"
	"Stop the active sleepy sampling session, which flushes the remaining\n"
	"samples and a STATS record to the session file, and print the\n"
	"session's statistics.\n"
	"\n"
	"  --json      print the statistics as one JSON object\n"
	"  -h, --help  this text\n"
	"\n"
	"Every sample taken must be written, dropped or discarded; the output\n"
	"says whether that accounting is exact. The session file holds each\n"
	"CPU's own figures (parse shows them). Exit status: 0 stopped; 1 no\n"
	"session was active, the call failed, the session had write errors or\n"
	"the accounting does not add up; 2 usage.\n";

/* What the statistics say, beyond the raw counters. */
struct summary {
	uint64_t accounted;	/* written + dropped + discarded */
	bool overflow;		/* that sum does not fit 64 bits */
	bool exact;		/* accounted == taken */
};

static struct summary summarize(const struct sample_stats *s)
{
	const uint64_t parts[] = {
		s->samples_written, s->dropped_no_buffer, s->dropped_no_appid,
		s->dropped_write_error, s->dropped_max_size,
		s->discarded_no_write,
	};
	struct summary sum = { 0 };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		sum.overflow |= __builtin_add_overflow(sum.accounted, parts[i],
						       &sum.accounted);
	sum.exact = !sum.overflow && sum.accounted == s->samples_taken;
	return sum;
}

static const char *write_error_text(const struct sample_stats *s)
{
	if (s->first_write_error == 0)
		return NULL;
	/* -errno in the ABI; tolerate a positive errno too. */
	return strerror(s->first_write_error < 0 ? -s->first_write_error :
			s->first_write_error);
}

/* ------------------------------------------------------------ the table */

#define LABEL_W 26

static int num_w;	/* width of the number column */

static void row_pct(const char *label, uint64_t v, uint64_t of)
{
	printf("  %-*s %*" PRIu64, LABEL_W, label, num_w, v);
	if (of)
		printf("  %6.2f%%", (double)v * 100.0 / (double)of);
	putchar('\n');
}

static void row(const char *label, uint64_t v)
{
	row_pct(label, v, 0);
}

/* The user frame walks' stops, by enum sleepy_user_stop. */
static const char *const user_stop_label[SLEEPY_USER_STOPS] = {
	[SLEEPY_USER_STOP_DEPTH] = "user walk stop: depth",
	[SLEEPY_USER_STOP_NOT_PRESENT] = "user walk stop: not present",
	[SLEEPY_USER_STOP_UNMAPPED] = "user walk stop: unmapped",
	[SLEEPY_USER_STOP_NOT_UP] = "user walk stop: not up",
};

static const char *const user_stop_key[SLEEPY_USER_STOPS] = {
	[SLEEPY_USER_STOP_DEPTH] = "user_stop_depth",
	[SLEEPY_USER_STOP_NOT_PRESENT] = "user_stop_not_present",
	[SLEEPY_USER_STOP_UNMAPPED] = "user_stop_unmapped",
	[SLEEPY_USER_STOP_NOT_UP] = "user_stop_not_up",
};

/* A session with call chains: its chain records and truncations. */
static void print_chain_rows(const struct sample_stats *s)
{
	if (!s->chains_defined)
		return;
	row("call chains recorded", s->chains_defined);
	row_pct("chains cut at the depth", s->chains_truncated,
		s->samples_taken);
	for (int i = 0; i < SLEEPY_USER_STOPS; i++)
		row_pct(user_stop_label[i], s->user_stops[i],
			s->samples_taken);
}

static void print_table(const struct sample_stats *s,
			const struct summary *sum)
{
	const uint64_t taken = s->samples_taken;
	char buf[32];

	/* Wide enough for the largest counter, at least 10 digits. */
	const uint64_t counters[] = {
		taken, s->samples_written, s->dropped_no_buffer,
		s->dropped_no_appid, s->dropped_write_error,
		s->dropped_max_size, s->discarded_no_write,
		s->skipped_not_user, s->bytes_written,
		s->write_errors, s->irq_ns_max, s->irq_calls ?
		s->irq_ns_total / s->irq_calls : 0,
	};

	num_w = 10;
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		int w = snprintf(buf, sizeof(buf), "%" PRIu64, counters[i]);

		if (w > num_w)
			num_w = w;
	}

	printf("sleepy session statistics (%" PRIu32 " CPUs)\n", s->nr_cpus);
	row("samples taken", taken);
	row_pct("samples written", s->samples_written, taken);
	row_pct("dropped: no free buffer", s->dropped_no_buffer, taken);
	row_pct("dropped: appid pool full", s->dropped_no_appid, taken);
	row_pct("dropped: write error", s->dropped_write_error, taken);
	row_pct("dropped: file max size", s->dropped_max_size, taken);
	row_pct("discarded: --no-write", s->discarded_no_write, taken);
	row("skipped: not user mode", s->skipped_not_user);
	printf("  %-*s %*" PRIu64, LABEL_W, "bytes written", num_w,
	       (uint64_t)s->bytes_written);
	if (s->samples_written)
		printf("  %.1f per written sample",
		       (double)s->bytes_written / (double)s->samples_written);
	putchar('\n');
	printf("  %-*s %*" PRIu64, LABEL_W, "write errors", num_w,
	       (uint64_t)s->write_errors);
	if (write_error_text(s))
		printf("  first: %s (%" PRId32 ")", write_error_text(s),
		       s->first_write_error);
	putchar('\n');
	row("appids", s->appids);
	row("meta records dropped", s->meta_dropped);
	row("pid entries in use at stop", s->pids_mapped);
	if (s->irq_calls) {
		printf("  %-*s %*" PRIu64 " ns  over %" PRIu64 " calls\n",
		       LABEL_W, "irq time: mean", num_w,
		       (uint64_t)(s->irq_ns_total / s->irq_calls),
		       (uint64_t)s->irq_calls);
		printf("  %-*s %*" PRIu64 " ns\n", LABEL_W,
		       "irq time: max", num_w,
		       (uint64_t)s->irq_ns_max);
	} else {
		printf("  %-*s %*s\n", LABEL_W, "irq time", num_w,
		       "no calls");
	}
	printf("  %-*s %*" PRIu32 "  on the busiest CPU\n", LABEL_W,
	       "buffers in use: high mark", num_w, s->buffers_hwm);
	print_chain_rows(s);

	if (sum->exact)
		printf("accounting: exact (taken = written + dropped + "
		       "discarded)\n");
	else if (sum->overflow)
		printf("accounting: MISMATCH!!! written + dropped + discarded "
		       "overflows 64 bits, taken %" PRIu64 "\n", taken);
	else
		printf("accounting: MISMATCH!!! taken %" PRIu64 " != written + "
		       "dropped + discarded %" PRIu64 " (%s %" PRIu64 ")\n",
		       taken, sum->accounted,
		       taken > sum->accounted ? "missing" : "excess",
		       taken > sum->accounted ? taken - sum->accounted :
		       sum->accounted - taken);
}

/* ------------------------------------------------------------- JSON */

/* s as a JSON string, or null. */
static void json_string(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_json(const struct sample_stats *s,
		       const struct summary *sum)
{
#define U64(name) printf("  \"" #name "\": %" PRIu64 ",\n", (uint64_t)s->name)
	printf("{\n");
	U64(nr_cpus);
	U64(samples_taken);
	U64(samples_written);
	U64(dropped_no_buffer);
	U64(dropped_no_appid);
	U64(dropped_write_error);
	U64(dropped_max_size);
	U64(discarded_no_write);
	U64(skipped_not_user);
	U64(bytes_written);
	if (s->samples_written)
		printf("  \"bytes_per_written_sample\": %.3f,\n",
		       (double)s->bytes_written / (double)s->samples_written);
	else
		printf("  \"bytes_per_written_sample\": null,\n");
	U64(write_errors);
	printf("  \"first_write_error\": %" PRId32 ",\n", s->first_write_error);
	printf("  \"first_write_error_text\": ");
	json_string(write_error_text(s));
	printf(",\n");
	U64(appids);
	U64(meta_dropped);
	U64(pids_mapped);
	U64(irq_ns_total);
	U64(irq_ns_max);
	U64(irq_calls);
	if (s->irq_calls)
		printf("  \"irq_ns_mean\": %" PRIu64 ",\n",
		       (uint64_t)(s->irq_ns_total / s->irq_calls));
	else
		printf("  \"irq_ns_mean\": null,\n");
	U64(buffers_hwm);
	U64(chains_defined);
	U64(chains_truncated);
	for (int i = 0; i < SLEEPY_USER_STOPS; i++)
		printf("  \"%s\": %" PRIu64 ",\n", user_stop_key[i],
		       (uint64_t)s->user_stops[i]);
	if (sum->overflow)
		printf("  \"accounted\": null,\n");
	else
		printf("  \"accounted\": %" PRIu64 ",\n", sum->accounted);
	printf("  \"accounting_exact\": %s\n", sum->exact ? "true" : "false");
	printf("}\n");
#undef U64
}

int main(int argc, char **argv)
{
	struct sample_stats stats;
	struct summary sum;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-') {
			die(2, "%s: unknown option (see --help)", argv[i]);
		} else {
			die(2, "%s: unexpected argument (see --help)", argv[i]);
		}
	}

	sleepy_stats_init(&stats);
	if (sleepy_sample_stop(&stats) != 0) {
		switch (errno) {
		case EINVAL:
			die(1, "no sampling session is active");
		case ENOSYS:
			die(1, "kernel has no sleepy support");
		case EPERM:
			die(1, "stopping the session: %s (needs CAP_SYS_ADMIN "
			    "or CAP_PERFMON)", strerror(EPERM));
		default:
			die(1, "stopping the session: %s", strerror(errno));
		}
	}

	sum = summarize(&stats);
	if (json)
		print_json(&stats, &sum);
	else
		print_table(&stats, &sum);
	if (fflush(stdout) != 0 || ferror(stdout))
		die(1, "standard output: %s", strerror(errno));

	if (stats.write_errors)
		die(1, "session file: %" PRIu64 " write error%s, the first: %s;"
		    " the samples after it were lost",
		    (uint64_t)stats.write_errors,
		    stats.write_errors == 1 ? "" : "s",
		    write_error_text(&stats) ? write_error_text(&stats) :
		    "unknown error");
	if (!sum.exact)
		die(1, "accounting: samples taken and accounted for differ");
	return 0;
}
