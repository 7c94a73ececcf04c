/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session_stats.h: a session's statistics as sample_stop prints them, as
 * an aligned table or a JSON object, on the stream print_stats() is
 * given. Shared by sample_stop and sample_start's
 * one-command form. Include it after die.h.
 */
#ifndef SLEEPY_SESSION_STATS_H
#define SLEEPY_SESSION_STATS_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "libsleepy.h"

/* Where the statistics go: print_stats()'s stream, for the printers. */
static FILE *stats_out;

#define sout(...) fprintf(stats_out, __VA_ARGS__)

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

#define LABEL_W 27

static int num_w;	/* width of the number column */

static void row_pct(const char *label, uint64_t v, uint64_t of)
{
	sout("  %-*s %*" PRIu64, LABEL_W, label, num_w, v);
	if (of)
		sout("  %6.2f%%", (double)v * 100.0 / (double)of);
	fputc('\n', stats_out);
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

/* A session with unwind tables: frames by how, fallbacks, the tables. */
static void print_unwind_rows(const struct sample_stats *s)
{
	if (!s->unwind_files && !s->unwind_tables && !s->unwind_frames)
		return;
	row("user frames by table", s->unwind_frames);
	row("user frames by frame pointer", s->unwind_fp_frames);
	row_pct("walks past code with no table",
		s->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_NO_TABLE],
		s->samples_taken);
	row_pct("walks past a marked row",
		s->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_MARKED],
		s->samples_taken);
	row("files that wanted a table", s->unwind_files);
	row("unwind tables loaded", s->unwind_tables);
	row("unwind tables refused", s->unwind_refused);
	row("ranges left out (memory)", s->unwind_ranges_dropped);
	row("unwind memory, most bytes", s->unwind_mem_hwm);
	row("waits for tables", s->unwind_waits);
	row("waits for tables, ms", s->unwind_wait_ns / 1000000);
	row("waits timed out", s->unwind_wait_timeouts);
}

/* A session with logical stacks: what the tick copied, and the waits. */
static void print_lstack_rows(const struct sample_stats *s)
{
	if (!s->lstack_samples && !s->offcpu_records)
		return;
	row_pct("samples with a logical stack", s->lstack_samples,
		s->samples_taken);
	row("logical stack reads retried", s->lstack_retries);
	row("logical stacks torn", s->lstack_torn);
	row("logical stacks unreadable", s->lstack_faults);
	row("logical stacks cut at 16", s->lstack_truncated);
	row("off-CPU records", s->offcpu_records);
	row("off-CPU records lost", s->offcpu_dropped);
	row("off-CPU records over the budget", s->offcpu_over_budget);
}

/* A session with latency histograms: the calls and their records. */
static void print_latency_rows(const struct sample_stats *s)
{
	const uint64_t calls = s->syscalls_counted + s->syscalls_lost;

	if (!s->latency_segments)
		return;
	row_pct("system calls in histograms", s->syscalls_counted, calls);
	row_pct("system calls lost", s->syscalls_lost, calls);
	row("restarted attempts", s->syscall_restarts);
	row("syscall records (sampled)", s->syscall_records);
	row("syscall records lost", s->syscall_records_dropped);
	row("latency segments", s->latency_segments);
	row("latency records lost", s->latency_records_dropped);
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

	sout("sleepy session statistics (%" PRIu32 " CPUs)\n", s->nr_cpus);
	row("samples taken", taken);
	row_pct("samples written", s->samples_written, taken);
	row_pct("dropped: no free buffer", s->dropped_no_buffer, taken);
	row_pct("dropped: appid pool full", s->dropped_no_appid, taken);
	row_pct("dropped: write error", s->dropped_write_error, taken);
	row_pct("dropped: file max size", s->dropped_max_size, taken);
	row_pct("discarded: --no-write", s->discarded_no_write, taken);
	row("skipped: not user mode", s->skipped_not_user);
	sout("  %-*s %*" PRIu64, LABEL_W, "bytes written", num_w,
	     (uint64_t)s->bytes_written);
	if (s->samples_written)
		sout("  %.1f per written sample",
		     (double)s->bytes_written / (double)s->samples_written);
	fputc('\n', stats_out);
	sout("  %-*s %*" PRIu64, LABEL_W, "write errors", num_w,
	     (uint64_t)s->write_errors);
	if (write_error_text(s))
		sout("  first: %s (%" PRId32 ")", write_error_text(s),
		     s->first_write_error);
	fputc('\n', stats_out);
	row("appids", s->appids);
	row("meta records dropped", s->meta_dropped);
	if (s->mmap_repeats || s->mmap_over_budget) {
		row("exec ranges repeated, no record", s->mmap_repeats);
		row("exec ranges over the budget", s->mmap_over_budget);
	}
	row("pid entries in use at stop", s->pids_mapped);
	if (s->irq_calls) {
		sout("  %-*s %*" PRIu64 " ns  over %" PRIu64 " calls\n",
		     LABEL_W, "irq time: mean", num_w,
		     (uint64_t)(s->irq_ns_total / s->irq_calls),
		     (uint64_t)s->irq_calls);
		sout("  %-*s %*" PRIu64 " ns\n", LABEL_W,
		     "irq time: max", num_w,
		     (uint64_t)s->irq_ns_max);
	} else {
		sout("  %-*s %*s\n", LABEL_W, "irq time", num_w,
		     "no calls");
	}
	sout("  %-*s %*" PRIu32 "  on the busiest CPU\n", LABEL_W,
	     "buffers in use: high mark", num_w, s->buffers_hwm);
	print_chain_rows(s);
	print_unwind_rows(s);
	print_lstack_rows(s);
	print_latency_rows(s);

	if (sum->exact)
		sout("accounting: exact (taken = written + dropped + "
		     "discarded)\n");
	else if (sum->overflow)
		sout("accounting: MISMATCH!!! written + dropped + discarded "
		     "overflows 64 bits, taken %" PRIu64 "\n", taken);
	else
		sout("accounting: MISMATCH!!! taken %" PRIu64 " != written + "
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
		fputs("null", stats_out);
		return;
	}
	fputc('"', stats_out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sout("\\%c", c);
		else if (c < 0x20)
			sout("\\u%04x", c);
		else
			fputc(c, stats_out);
	}
	fputc('"', stats_out);
}

static void print_json(const struct sample_stats *s,
		       const struct summary *sum)
{
#define U64(name) sout("  \"" #name "\": %" PRIu64 ",\n", (uint64_t)s->name)
	sout("{\n");
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
		sout("  \"bytes_per_written_sample\": %.3f,\n",
		     (double)s->bytes_written / (double)s->samples_written);
	else
		sout("  \"bytes_per_written_sample\": null,\n");
	U64(write_errors);
	sout("  \"first_write_error\": %" PRId32 ",\n", s->first_write_error);
	sout("  \"first_write_error_text\": ");
	json_string(write_error_text(s));
	sout(",\n");
	U64(appids);
	U64(meta_dropped);
	U64(pids_mapped);
	U64(irq_ns_total);
	U64(irq_ns_max);
	U64(irq_calls);
	if (s->irq_calls)
		sout("  \"irq_ns_mean\": %" PRIu64 ",\n",
		     (uint64_t)(s->irq_ns_total / s->irq_calls));
	else
		sout("  \"irq_ns_mean\": null,\n");
	U64(buffers_hwm);
	U64(chains_defined);
	U64(chains_truncated);
	for (int i = 0; i < SLEEPY_USER_STOPS; i++)
		sout("  \"%s\": %" PRIu64 ",\n", user_stop_key[i],
		     (uint64_t)s->user_stops[i]);
	U64(lstack_samples);
	U64(lstack_retries);
	U64(lstack_torn);
	U64(lstack_faults);
	U64(lstack_truncated);
	U64(offcpu_records);
	U64(offcpu_dropped);
	U64(syscalls_counted);
	U64(syscalls_lost);
	U64(syscall_restarts);
	U64(syscall_records);
	U64(syscall_records_dropped);
	U64(latency_segments);
	U64(latency_records_dropped);
	U64(unwind_frames);
	U64(unwind_fp_frames);
	sout("  \"unwind_fallback_no_table\": %" PRIu64 ",\n",
	     (uint64_t)s->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_NO_TABLE]);
	sout("  \"unwind_fallback_marked\": %" PRIu64 ",\n",
	     (uint64_t)s->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_MARKED]);
	U64(unwind_tables);
	U64(unwind_refused);
	U64(unwind_files);
	U64(unwind_ranges_dropped);
	U64(unwind_mem_hwm);
	U64(unwind_wait_ns);
	U64(unwind_waits);
	U64(unwind_wait_timeouts);
	U64(mmap_repeats);
	U64(mmap_over_budget);
	U64(offcpu_over_budget);
	if (sum->overflow)
		sout("  \"accounted\": null,\n");
	else
		sout("  \"accounted\": %" PRIu64 ",\n", sum->accounted);
	sout("  \"accounting_exact\": %s\n", sum->exact ? "true" : "false");
	sout("}\n");
#undef U64
}

/*
 * Print s as a table or JSON object on out (stdout or stderr); the
 * summary, for the caller's exit status. Exits with an error line (die())
 * if out cannot be written.
 */
__attribute__((unused))
static struct summary print_stats(FILE *out, const struct sample_stats *s,
				  bool json)
{
	struct summary sum = summarize(s);

	stats_out = out;
	if (json)
		print_json(s, &sum);
	else
		print_table(s, &sum);
	if (fflush(stats_out) != 0 || ferror(stats_out))
		die(1, "%s: %s", stats_out == stdout ? "standard output" :
		    "standard error", strerror(errno));
	return sum;
}

/*
 * The one line on what went wrong with a stopped session (write errors,
 * accounting that does not add up), in buf (n bytes); NULL if nothing.
 */
__attribute__((unused))
static const char *session_problem(const struct sample_stats *s,
				   const struct summary *sum, char *buf,
				   size_t n)
{
	if (s->write_errors) {
		snprintf(buf, n, "session file: %" PRIu64 " write error%s, "
			 "the first: %s; the samples after it were lost",
			 (uint64_t)s->write_errors,
			 s->write_errors == 1 ? "" : "s",
			 write_error_text(s) ? write_error_text(s) :
			 "unknown error");
		return buf;
	}
	if (!sum->exact) {
		snprintf(buf, n, "accounting: samples taken and accounted "
			 "for differ");
		return buf;
	}
	return NULL;
}

#endif /* SLEEPY_SESSION_STATS_H */
