// SPDX-License-Identifier: GPL-2.0
/*
 * text: the text writer (the default --format). A summary of the session,
 * then each report: a title with the total, a heading row and a row per
 * key in columns that fit 80 columns (flexible columns are cut, the widest
 * first), then, for symbols and lines, what stayed unresolved.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fmt.h"
#include "stats.h"
#include "writer.h"

#define HEAD_W		14	/* label column of the summary */
#define TEXT_COLUMNS	80
#define GAP		2	/* spaces between columns */
#define MIN_FLEX	8	/* flexible columns are not cut below this */
#define CELL_MAX	1024

/* ------------------------------------------------------------ summary */

/*
 * The file line: aligned with the other summary lines if it fits 80
 * columns, else after a shorter label; a path too long even for that is
 * cut from the left, keeping the file's name.
 */
static void file_line(FILE *out, const char *file)
{
	const int short_w = 6;	/* "file  " */
	size_t len = strlen(file);
	char buf[81];

	if (len <= (size_t)(80 - HEAD_W)) {
		fmt_sanitize(buf, sizeof(buf), file, len);
		fprintf(out, "%-*s%s\n", HEAD_W, "file", buf);
	} else if (len <= (size_t)(80 - short_w)) {
		fmt_sanitize(buf, sizeof(buf), file, len);
		fprintf(out, "%-*s%s\n", short_w, "file", buf);
	} else {
		const size_t keep = 80 - short_w - 3;

		fmt_sanitize(buf, sizeof(buf), file + len - keep, keep);
		fprintf(out, "%-*s...%s\n", short_w, "file", buf);
	}
}

/* The session's SAMPLE_F_* flags, named, into buf: "user-only,callchain",
 * "none"; bits this parse does not know in hex. */
static const char *flag_list(uint32_t flags, char *buf, size_t size)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ SAMPLE_F_USER_ONLY, "user-only" },
		{ SAMPLE_F_NO_WRITE, "no-write" },
		{ SAMPLE_F_CALLCHAIN, "callchain" },
		{ SAMPLE_F_LSTACK, "lstack" },
		{ SAMPLE_F_LATENCY, "latency" },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		flags &= ~names[i].bit;
		n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "",
				      names[i].name);
	}
	if (flags)
		snprintf(buf + n, size - n, "%s0x%" PRIx32, n ? "," : "",
			 flags);
	return buf[0] ? buf : "none";
}

/* The kernel, start time and record counts. */
static void header_lines(FILE *out, const struct session *s)
{
	const struct sleepy_file_header *h = s->hdr;
	char rel[66], mach[66], when[64] = "unknown", flags[64];
	time_t t = (time_t)(h->start_realtime_ns / 1000000000u);
	struct tm tm;

	fmt_sanitize(rel, sizeof(rel), h->release, sizeof(rel) - 1);
	fmt_sanitize(mach, sizeof(mach), h->machine, sizeof(mach) - 1);
	fprintf(out, "%-*s%s %s, HZ %" PRIu32 ", %" PRIu32 " CPUs, flags %s\n",
		HEAD_W, "kernel", rel, mach, (uint32_t)h->hz,
		(uint32_t)h->nr_cpus, flag_list(h->flags, flags, sizeof(flags)));
	if (h->start_realtime_ns && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "%-*s%s, samples span %.3f s\n", HEAD_W, "started", when,
		(double)s->last_time_ns / 1e9);
	fprintf(out, "%-*s%" PRIu64 " samples, %" PRIu64 " appids, %" PRIu64
		" mmaps, %zu cpu stats, %u stats, %" PRIu64 " unknown",
		HEAD_W, "records", s->samples, s->appid_records, s->mmaps,
		s->ncpus, s->have_stats ? 1 : 0, s->unknown);
	if (s->chain_records)
		fprintf(out, ", %" PRIu64 " chains", s->chain_records);
	if (s->offcpu_records)
		fprintf(out, ", %" PRIu64 " off-CPU", s->offcpu_records);
	fputc('\n', out);
	if (s->syscall_records || s->latency_records || s->segment_records)
		fprintf(out, "%-*s%" PRIu64 " SYSCALL, %" PRIu64 " LATENCY, %"
			PRIu64 " LAT_SEGMENT\n", HEAD_W, "syscall recs",
			s->syscall_records, s->latency_records,
			s->segment_records);
	fprintf(out, "%-*s%" PRIu64 " total", HEAD_W, "samples", s->samples);
	for (unsigned int m = 0; m < NR_MODES; m++)
		fprintf(out, "%s%s %" PRIu64, m ? ", " : ": ",
			sleepy_mode_name(m), s->by_mode[m]);
	if (s->by_mode[NR_MODES])
		fprintf(out, ", other %" PRIu64, s->by_mode[NR_MODES]);
	fputc('\n', out);
}

/*
 * A session with unwind tables: frames by table and by frame pointer, the
 * walks that reached code without a table (or with a marked row), and
 * what the tables took.
 */
static void unwind_lines(FILE *out, const struct sample_stats *st,
			 uint32_t flags)
{
	if (!(flags & SAMPLE_F_UNWIND))
		return;
	fprintf(out, "%-*s%" PRIu64 " frames by table, %" PRIu64 " by frame "
		"pointer; walks that used frame pointers: no table %" PRIu64
		", marked row %" PRIu64 "\n", HEAD_W, "unwind",
		(uint64_t)st->unwind_frames, (uint64_t)st->unwind_fp_frames,
		(uint64_t)st->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_NO_TABLE],
		(uint64_t)st->unwind_fallbacks[SLEEPY_UNWIND_FALLBACK_MARKED]);
	fprintf(out, "%-*s%" PRIu32 " loaded for %" PRIu32 " files, %" PRIu32
		" refused, %" PRIu32 " ranges left out, %" PRIu64 " KiB at "
		"most\n", HEAD_W, "unwind tables", (uint32_t)st->unwind_tables,
		(uint32_t)st->unwind_files, (uint32_t)st->unwind_refused,
		(uint32_t)st->unwind_ranges_dropped,
		(uint64_t)st->unwind_mem_hwm >> 10);
	if (st->unwind_waits)
		fprintf(out, "%-*s%" PRIu32 " waits for tables, %.3f s in all, "
			"%" PRIu32 " timed out\n", HEAD_W, "unwind waits",
			(uint32_t)st->unwind_waits, st->unwind_wait_ns / 1e9,
			(uint32_t)st->unwind_wait_timeouts);
}

/* A session with call chains: what was cut, and why; what was lost. */
static void chain_lines(FILE *out, const struct session *s)
{
	const struct sample_stats *st = &s->stats;
	const __u64 *u = st->user_stops;

	if (!(s->hdr->flags & SAMPLE_F_CALLCHAIN))
		return;
	fprintf(out, "%-*s%" PRIu64 " recorded, %" PRIu64 " samples cut at "
		"the depth\n", HEAD_W, "chains", (uint64_t)st->chains_defined,
		(uint64_t)st->chains_truncated);
	fprintf(out, "%-*sstopped early: depth %" PRIu64 ", not present %"
		PRIu64 ", unmapped %" PRIu64 ", not up %" PRIu64 "\n", HEAD_W,
		"user walks",
		(uint64_t)u[SLEEPY_USER_STOP_DEPTH],
		(uint64_t)u[SLEEPY_USER_STOP_NOT_PRESENT],
		(uint64_t)u[SLEEPY_USER_STOP_UNMAPPED],
		(uint64_t)u[SLEEPY_USER_STOP_NOT_UP]);
	if (s->chains_lost)
		fprintf(out, "%-*s%" PRIu64 " samples' CHAIN records are "
			"missing: those show their IP only\n", HEAD_W,
			"chains lost", s->chains_lost);
	unwind_lines(out, st, s->hdr->flags);
}

/* A session with logical stacks: the samples with one, the stacks left
 * out or cut, the off-CPU records made and lost. */
static void lstack_lines(FILE *out, const struct session *s)
{
	const struct sample_stats *st = &s->stats;

	if (!(s->hdr->flags & SAMPLE_F_LSTACK))
		return;
	fprintf(out, "%-*s%" PRIu64 " samples with one; retried %" PRIu64
		", torn %" PRIu64 ", unreadable %" PRIu64 ", truncated %"
		PRIu64 "\n", HEAD_W, "lstacks", (uint64_t)st->lstack_samples,
		(uint64_t)st->lstack_retries, (uint64_t)st->lstack_torn,
		(uint64_t)st->lstack_faults, (uint64_t)st->lstack_truncated);
	fprintf(out, "%-*s%" PRIu64 " records made, %" PRIu64 " lost, %"
		PRIu64 " over the budget\n", HEAD_W, "off-CPU",
		(uint64_t)st->offcpu_records, (uint64_t)st->offcpu_dropped,
		(uint64_t)st->offcpu_over_budget);
}

/* A session with latency histograms: the calls counted, lost and
 * restarted; the SYSCALL records made and lost; the segments. */
static void latency_lines(FILE *out, const struct session *s)
{
	const struct sample_stats *st = &s->stats;

	if (!(s->hdr->flags & SAMPLE_F_LATENCY))
		return;
	fprintf(out, "%-*scounted %" PRIu64 ", lost %" PRIu64 ", restarts %"
		PRIu64 "\n", HEAD_W, "syscalls", (uint64_t)st->syscalls_counted,
		(uint64_t)st->syscalls_lost, (uint64_t)st->syscall_restarts);
	fprintf(out, "%-*s%" PRIu64 " SYSCALL records made, %" PRIu64 " lost; "
		"%" PRIu32 " segments, %" PRIu32 " records lost\n", HEAD_W,
		"latency", (uint64_t)st->syscall_records,
		(uint64_t)st->syscall_records_dropped,
		(uint32_t)st->latency_segments,
		(uint32_t)st->latency_records_dropped);
}

/* The STATS record: samples taken, written, dropped; buffers in use. */
static void stats_lines(FILE *out, const struct session *s)
{
	const struct sample_stats *st = &s->stats;

	if (!s->have_stats) {
		fprintf(out, "%-*sno STATS record: not stopped cleanly\n",
			HEAD_W, "session");
		return;
	}
	fprintf(out, "%-*staken %" PRIu64 ", written %" PRIu64 ", discarded %"
		PRIu64 ", skipped %" PRIu64 "\n", HEAD_W, "session",
		(uint64_t)st->samples_taken, (uint64_t)st->samples_written,
		(uint64_t)st->discarded_no_write,
		(uint64_t)st->skipped_not_user);
	fprintf(out, "%-*s%" PRIu64 ": no buffer %" PRIu64 ", no appid %"
		PRIu64 ", write error %" PRIu64 ", max size %" PRIu64 "\n",
		HEAD_W, "dropped", stats_dropped(st),
		(uint64_t)st->dropped_no_buffer,
		(uint64_t)st->dropped_no_appid,
		(uint64_t)st->dropped_write_error,
		(uint64_t)st->dropped_max_size);
	fprintf(out, "%-*s%" PRIu32 " in use at most, on the busiest CPU\n",
		HEAD_W, "buffers", (uint32_t)st->buffers_hwm);
	if (st->mmap_repeats || st->mmap_over_budget)
		fprintf(out, "%-*s%" PRIu32 " repeated, %" PRIu32 " over the "
			"budget: no MMAP record\n", HEAD_W, "exec ranges",
			(uint32_t)st->mmap_repeats,
			(uint32_t)st->mmap_over_budget);
	chain_lines(out, s);
	lstack_lines(out, s);
	latency_lines(out, s);
}

static void text_begin(const struct run *run)
{
	const struct ksyms *ks = run->ks;

	file_line(run->out, run->o->file);
	header_lines(run->out, run->s);
	stats_lines(run->out, run->s);
	if (run->filters[0])
		fprintf(run->out, "%-*s%s: %" PRIu64 " samples\n", HEAD_W,
			"filters", run->filters, run->total);
	if (run->symbols) {
		char buf[80];

		fmt_sanitize(buf, sizeof(buf), ks->source ? ks->source :
			     ks->why, 80 - HEAD_W - 6);
		fprintf(run->out, "%-*s%s%s\n", HEAD_W, "kernel syms",
			ks->source ? "" : "none: ", buf);
	}
	fputc('\n', run->out);
}

/* ------------------------------------------------------------ columns */

struct column {
	const struct field *f;
	int w;
};

/* The grouping's fields, and the layout's extra column after its own. */
static size_t columns(const struct report *rep, struct column *cols)
{
	const struct layout *l = rep->layout;
	size_t n = 0;

	for (size_t i = 0; i < rep->nby; i++) {
		cols[n++].f = rep->by[i];
		if (l->extra && l->extra_after == FB(rep->by[i] - fields))
			cols[n++].f = l->extra;
	}
	return n;
}

/* Cut the widest flexible column until a row fits 80 columns; whether
 * it does. */
static bool fit_columns(struct column *cols, size_t n, int fixed)
{
	for (;;) {
		int used = fixed, best = -1, best_w = 0;

		for (size_t c = 0; c < n; c++)
			used += GAP + cols[c].w;
		if (used <= TEXT_COLUMNS)
			return true;
		for (size_t c = 0; c < n; c++) {
			const struct field *f = cols[c].f;
			int weight;

			if (!(f->flags & FIELD_FLEX) || cols[c].w <= MIN_FLEX)
				continue;
			weight = cols[c].w * f->shrink[0] / f->shrink[1];
			if (weight > best_w) {
				best = (int)c;
				best_w = weight;
			}
		}
		if (best < 0)
			return false;
		cols[best].w--;
	}
}

/* The widths of the columns and of the samples column (the first). */
static int widths(const struct report *rep, struct column *cols, size_t n,
		  size_t nrows)
{
	int w_samples = (int)strlen("samples");
	char cell[CELL_MAX];

	for (size_t c = 0; c < n; c++)
		cols[c].w = (int)strlen(cols[c].f->head);
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = &rep->rows[i];

		if (fmt_digits(r->samples) > w_samples)
			w_samples = fmt_digits(r->samples);
		for (size_t c = 0; c < n; c++) {
			int len;

			cols[c].f->cell(cols[c].f, rep, r, cell, sizeof(cell));
			len = (int)strlen(cell);
			if (len > cols[c].w)
				cols[c].w = len;
		}
	}
	for (size_t c = 0; c < n && rep->layout->pad_flex; c++)
		if ((cols[c].f->flags & FIELD_FLEX) && cols[c].w < MIN_FLEX)
			cols[c].w = MIN_FLEX;
	return w_samples;
}

/* One cell: left-aligned, or right; the last column is not padded unless
 * right-aligned with its heading. */
static void put_cell(FILE *out, const struct column *col, bool last,
		     bool right, const char *s)
{
	int w = last && col->f->align != ALIGN_RIGHT ? 0 : col->w;

	if (right)
		fprintf(out, "%*s%*s", GAP, "", w, s);
	else
		fprintf(out, "%*s%-*s", GAP, "", w, s);
}

/* The estimated CPU time of n samples at hz ticks a second: "1.238s". */
static void cpu_time(char *buf, size_t size, uint64_t n, uint32_t hz)
{
	if (hz)
		snprintf(buf, size, "%.3fs", (double)n / hz);
	else
		snprintf(buf, size, "?");
}

/* The width of the time column: its heading, or its widest cell. */
static int time_width(const struct report *rep, size_t nrows, uint32_t hz)
{
	int w = (int)strlen("time");
	char cell[32];

	for (size_t i = 0; i < nrows; i++) {
		cpu_time(cell, sizeof(cell), rep->rows[i].samples, hz);
		if ((int)strlen(cell) > w)
			w = (int)strlen(cell);
	}
	return w;
}

static void table(FILE *out, const struct report *rep, size_t nrows,
		  uint32_t hz)
{
	struct column cols[NR_FIELDS + 1];
	const size_t n = columns(rep, cols);
	const int w_pct = (int)strlen("percent");
	const int w_kids = rep->stacks ? (int)strlen("children") + GAP : 0;
	int w_samples = widths(rep, cols, n, nrows);
	int w_time = time_width(rep, nrows, hz) + GAP;
	char cell[CELL_MAX], cut[CELL_MAX], t[32];

	/* The time column goes where the others, cut, would not fit. */
	if (!fit_columns(cols, n, w_kids + w_samples + w_time + GAP + w_pct)) {
		w_samples = widths(rep, cols, n, nrows);
		w_time = 0;
		fit_columns(cols, n, w_kids + w_samples + GAP + w_pct);
	}
	if (rep->stacks)
		fprintf(out, "%-*s", w_kids, "children");
	fprintf(out, "%*s", w_samples, "samples");
	if (w_time)
		fprintf(out, "%*s", w_time, "time");
	fprintf(out, "%*s%*s", GAP, "", w_pct, "percent");
	for (size_t c = 0; c < n; c++)
		put_cell(out, &cols[c], c + 1 == n,
			 cols[c].f->align == ALIGN_RIGHT, cols[c].f->head);
	fputc('\n', out);
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = &rep->rows[i];

		if (rep->stacks)
			fprintf(out, "%*.2f%%%*s", w_kids - GAP - 1,
				fmt_percent(r->children, rep->total), GAP, "");
		cpu_time(t, sizeof(t), r->samples, hz);
		fprintf(out, "%*" PRIu64, w_samples, r->samples);
		if (w_time)
			fprintf(out, "%*s", w_time, t);
		fprintf(out, "%*s%*.2f%%", GAP, "", w_pct - 1,
			fmt_percent(r->samples, rep->total));
		for (size_t c = 0; c < n; c++) {
			const struct field *f = cols[c].f;
			const size_t w = (size_t)cols[c].w;

			f->cell(f, rep, r, cell, sizeof(cell));
			if (strlen(cell) > w && f->fit)
				f->fit(r, cell, cut, sizeof(cut), w);
			else
				fmt_sanitize(cut, sizeof(cut), cell, w);
			put_cell(out, &cols[c], c + 1 == n,
				 f->align != ALIGN_LEFT, cut);
		}
		fputc('\n', out);
	}
}

/* ------------------------------------------------------------ reports */

/* "unresolved: N samples (P%): reason N, ...", wrapped at 80 columns. */
static void unresolved_line(FILE *out, const struct report *rep)
{
	uint64_t unres = 0;
	int col;

	for (size_t i = 1; i < NR_REASONS; i++)
		unres += rep->unresolved[i];
	col = fprintf(out, "unresolved: %" PRIu64 " samples (%.2f%%)", unres,
		      fmt_percent(unres, rep->total));
	for (size_t i = 1, k = 0; i < NR_REASONS; i++) {
		char item[64];
		int len;

		if (!rep->unresolved[i])
			continue;
		len = snprintf(item, sizeof(item), "%s %" PRIu64,
			       reason_name((unsigned int)i),
			       rep->unresolved[i]);
		fputs(k++ ? "," : ":", out);
		col++;
		/* " item", and room for the comma that may follow it. */
		if (col + 1 + len + 1 > TEXT_COLUMNS) {
			fputs("\n ", out);
			col = 1;
		}
		col += fprintf(out, " %s", item);
	}
	fputc('\n', out);
}

static void text_report(const struct run *run, const struct report *rep,
			size_t index)
{
	FILE *out = run->out;
	const size_t n = report_shown(rep);
	char title[160];

	if (index)
		fputc('\n', out);
	if (rep->layout->title)
		snprintf(title, sizeof(title), "Samples by %s",
			 rep->layout->title);
	else
		fields_title(rep->fields, title, sizeof(title));
	fprintf(out, "%s, %s: %" PRIu64 " samples\n", title, rep->mode_title,
		rep->total);
	if (n == 0)
		fputs("  (none)\n", out);
	else
		table(out, rep, n, run->s->hdr->hz);
	if (n < rep->nrows)
		fprintf(out, "  (top %zu of %zu rows)\n", n, rep->nrows);
	if (report_symbolized(rep))
		unresolved_line(out, rep);
	if (rep->fields & FB(F_LINE))
		fprintf(out, "no source line (\?\?): %" PRIu64
			" samples (%.2f%%)\n", rep->unresolved_lines,
			fmt_percent(rep->unresolved_lines, rep->total));
}

const struct writer text_writer = { text_begin, text_report };
