// SPDX-License-Identifier: GPL-2.0
/* latout: the writers of --latency and --compare; see latout.h. */
#include "latout.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "syscalls.h"

#define NAME_W		20	/* --compare's name columns, at most */

static const char star_row[] = "****************************************";

/* What the writers of the histograms share. */
struct lat_out {
	const struct run *run;
	const struct lat_report *rep;
	const struct latency *lat;
	size_t shown;		/* rows shown (--top) */
};

static const char *group_key(const struct lat_report *rep)
{
	return rep->by_appid ? "appid" : "app";
}

static const char *group_of(const struct lat_report *rep,
			    const struct lat_row *r)
{
	return strtab_get(rep->names, r->group);
}

/* bcc's bar: width * v / max stars, a part of one counting as one. */
static int stars(uint64_t v, uint64_t max, int width)
{
	const unsigned __int128 n = ((unsigned __int128)v * (unsigned)width +
				     max - 1) / max;

	return n > (unsigned)width ? width : (int)n;
}

/* ------------------------------------------------------------ text */

/* The heading line of a histogram: its key and figures. */
static void text_head(FILE *out, const struct lat_report *rep,
		      const struct lat_row *r)
{
	char group[256], label[SYSCALL_LABEL_MAX], v[4][32];
	const struct lat_hist *h = &r->h;

	fmt_sanitize(group, sizeof(group), group_of(rep, r), sizeof(group));
	fprintf(out, "%s: %s  syscall: %s  calls %" PRIu64 "  mean %s  p50 %s"
		"  p99 %s  max %s  restarts %" PRIu64 "\n", group_key(rep),
		group, syscall_label(r->nr, label), h->calls,
		fmt_duration(v[0], sizeof(v[0]), lat_mean(h)),
		fmt_duration(v[1], sizeof(v[1]), lat_percentile(h, 50)),
		fmt_duration(v[2], sizeof(v[2]), lat_percentile(h, 99)),
		fmt_duration(v[3], sizeof(v[3]), (double)h->max_ns),
		h->restarts);
}

/* A histogram as bcc's print_log2_hist() lays it out (its wide form when
 * the last bucket reaches 2^32 ns), from the first non-empty bucket to
 * the last, each row with its peak. */
static void text_hist(FILE *out, const struct lat_report *rep,
		      const struct lat_row *r)
{
	unsigned int first, last;
	uint64_t top = 0;
	int w, width;

	text_head(out, rep, r);
	if (lat_range(&r->h, &first, &last)) {
		fputs("     (no calls)\n", out);
		return;
	}
	w = last < 32 ? 10 : 20;
	width = last < 32 ? 40 : 20;
	fprintf(out, last < 32 ? "     %-19s : count     distribution\n" :
		"               %-29s : count     distribution\n", "nsecs");
	for (unsigned int b = first; b <= last; b++)
		if (r->h.counts[b] > top)
			top = r->h.counts[b];
	for (unsigned int b = first; b <= last; b++) {
		const uint64_t c = r->h.counts[b];
		const unsigned int k = lat_peak_of(r->peaks, r->npeaks, b);

		fprintf(out, "%*" PRIu64 " -> %-*" PRIu64 " : %-8" PRIu64
			" |%-*.*s|", w, lat_bucket_lo(b), w,
			lat_bucket_hi(b) - 1, c, width, stars(c, top, width),
			star_row);
		if (k)
			fprintf(out, "  peak %u", k);
		fputc('\n', out);
	}
}

static void text_hists(const struct lat_out *lo)
{
	const struct lat_report *rep = lo->rep;
	FILE *out = lo->run->out;

	text_writer.begin(lo->run);
	fprintf(out, "System call latency by %s: %zu histograms of %" PRIu64
		" calls, %zu segments\n", group_key(rep), rep->nrows,
		rep->calls, lo->lat->nsegs);
	if (!rep->nrows)
		fputs("  (none: sample_start --latency records them)\n", out);
	for (size_t i = 0; i < lo->shown; i++) {
		const struct lat_row *r = &rep->rows[i];
		const struct sleepy_lat_segment *g;

		if (rep->segments && (!i || r->segment != r[-1].segment)) {
			g = latency_segment(lo->lat, r->segment);
			fprintf(out, "\nsegment %" PRIu32 ": %.3f s to %.3f s\n",
				r->segment, g ? (double)g->start_ns / 1e9 : 0,
				g ? (double)g->end_ns / 1e9 : 0);
		}
		fputc('\n', out);
		text_hist(out, rep, r);
	}
	if (lo->shown < rep->nrows)
		fprintf(out, "\n(top %zu of %zu histograms)\n", lo->shown,
			rep->nrows);
}

/* ------------------------------------------------------------ CSV */

static void csv_hists(const struct lat_out *lo)
{
	const struct lat_report *rep = lo->rep;
	FILE *out = lo->run->out;
	char label[SYSCALL_LABEL_MAX];

	fputs(rep->segments ? "segment," : "", out);
	fputs("app,syscall,bucket_lo_ns,bucket_hi_ns,count\n", out);
	for (size_t i = 0; i < lo->shown; i++) {
		const struct lat_row *r = &rep->rows[i];

		for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
			if (!r->h.counts[b])
				continue;
			if (rep->segments)
				fprintf(out, "%" PRIu32 ",", r->segment);
			csv_field(out, group_of(rep, r));
			fputc(',', out);
			csv_field(out, syscall_label(r->nr, label));
			fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				lat_bucket_lo(b), lat_bucket_hi(b),
				r->h.counts[b]);
		}
	}
}

/* ------------------------------------------------------------ JSON */

static void json_buckets(struct json *j, const struct lat_row *r)
{
	json_array(j, "buckets", JSON_BLOCK);
	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		if (!r->h.counts[b])
			continue;
		json_object(j, NULL, JSON_INLINE);
		json_u64(j, "lo_ns", lat_bucket_lo(b));
		json_u64(j, "hi_ns", lat_bucket_hi(b));
		json_u64(j, "count", r->h.counts[b]);
		json_u64(j, "peak", lat_peak_of(r->peaks, r->npeaks, b));
		json_close(j);
	}
	json_close(j);
	json_array(j, "peaks", JSON_BLOCK);
	for (size_t k = 0; k < r->npeaks; k++) {
		json_object(j, NULL, JSON_INLINE);
		json_u64(j, "n", k + 1);
		json_u64(j, "lo_ns", lat_bucket_lo(r->peaks[k].first));
		json_u64(j, "hi_ns", lat_bucket_hi(r->peaks[k].last));
		json_u64(j, "calls", r->peaks[k].calls);
		json_close(j);
	}
	json_close(j);
}

static void json_hist(struct json *j, const struct lat_report *rep,
		      const struct lat_row *r)
{
	char label[SYSCALL_LABEL_MAX];

	json_object(j, NULL, JSON_BLOCK);
	json_str(j, "app", group_of(rep, r));
	json_str(j, "syscall", syscall_label(r->nr, label));
	json_u64(j, "nr", r->nr);
	if (rep->segments)
		json_u64(j, "segment", r->segment);
	else
		json_null(j, "segment");
	json_u64(j, "calls", r->h.calls);
	json_fixed(j, "mean_ns", lat_mean(&r->h), 3);
	json_fixed(j, "p50_ns", lat_percentile(&r->h, 50), 3);
	json_fixed(j, "p99_ns", lat_percentile(&r->h, 99), 3);
	json_u64(j, "max_ns", r->h.max_ns);
	json_u64(j, "sum_ns", r->h.sum_ns);
	json_u64(j, "restarts", r->h.restarts);
	json_buckets(j, r);
	json_close(j);
}

/* The session's system call figures (null without a STATS record), and
 * its segments. */
static void json_session_calls(struct json *j, const struct lat_out *lo)
{
	const struct session *s = lo->run->s;

	if (s->have_stats) {
		json_object(j, "syscalls", JSON_INLINE);
		json_u64(j, "counted", s->stats.syscalls_counted);
		json_u64(j, "lost", s->stats.syscalls_lost);
		json_u64(j, "restarts", s->stats.syscall_restarts);
		json_close(j);
	} else {
		json_null(j, "syscalls");
	}
	json_array(j, "segments", JSON_BLOCK);
	for (size_t i = 0; i < lo->lat->nsegs; i++) {
		const struct sleepy_lat_segment *g = &lo->lat->segs[i];

		json_object(j, NULL, JSON_INLINE);
		json_u64(j, "segment", g->segment);
		json_u64(j, "start_ns", g->start_ns);
		json_u64(j, "end_ns", g->end_ns);
		json_u64(j, "calls", g->calls);
		json_u64(j, "lost", g->lost);
		json_u64(j, "histograms", g->histograms);
		json_close(j);
	}
	json_close(j);
}

static void json_hists(const struct lat_out *lo)
{
	const struct lat_report *rep = lo->rep;
	struct json j;

	json_begin(&j, lo->run->out);
	json_run_head(&j, lo->run);
	json_str(&j, "by", group_key(rep));
	json_session_calls(&j, lo);
	json_u64(&j, "calls", rep->calls);
	json_u64(&j, "histograms_total", rep->nrows);
	if (lo->run->o->top)
		json_u64(&j, "top", lo->run->o->top);
	else
		json_null(&j, "top");
	json_array(&j, "histograms", JSON_BLOCK);
	for (size_t i = 0; i < lo->shown; i++)
		json_hist(&j, rep, &rep->rows[i]);
	json_end(&j);
}

static void (*const hist_writers[NR_FORMATS])(const struct lat_out *) = {
	[FORMAT_TEXT] = text_hists, [FORMAT_CSV] = csv_hists,
	[FORMAT_JSON] = json_hists,
};

void lat_write(const struct run *run, const struct lat_report *rep,
	       const struct latency *lat)
{
	const size_t top = run->o->top;
	const struct lat_out lo = {
		run, rep, lat, top && top < rep->nrows ? top : rep->nrows,
	};

	hist_writers[run->o->format](&lo);
}

/* ------------------------------------------------------------ compare */

static const char *const status_names[] = {
	[LAT_BOTH] = "both", [LAT_FEW] = "few", [LAT_NEW] = "new",
	[LAT_GONE] = "gone",
};

/* What the writers of --compare share. */
struct cmp_out {
	const struct run *run;
	const char *old_file;
	const struct lat_pair *v;
	size_t n;
	const struct strtab *names;
};

/* A pair's figures. */
struct cmp_figures {
	const char *group;
	char label[SYSCALL_LABEL_MAX];
	const char *call;
	uint64_t calls_old, calls_new;
	int64_t change;
	double percent;		/* of the old calls, if there are */
};

static void figures(const struct cmp_out *co, const struct lat_pair *p,
		    struct cmp_figures *f)
{
	const struct lat_row *r = p->new ? p->new : p->old;

	f->group = strtab_get(co->names, r->group);
	f->call = syscall_label(r->nr, f->label);
	f->calls_old = p->old ? p->old->h.calls : 0;
	f->calls_new = p->new ? p->new->h.calls : 0;
	f->change = (int64_t)(f->calls_new - f->calls_old);
	f->percent = f->calls_old ? 100.0 * (double)f->change /
		(double)f->calls_old : -1;
}

/* A mean, or "-" for a session without the pair. */
static void mean_cell(char *buf, size_t size, const struct lat_row *r)
{
	if (r)
		fmt_duration(buf, size, lat_mean(&r->h));
	else
		snprintf(buf, size, "-");
}

/* The text columns of --compare: the group and call left-aligned. */
enum { CMP_EMD, CMP_GROUP, CMP_CALL, CMP_OLD, CMP_NEW, CMP_CHANGE, CMP_PCT,
       CMP_MEAN_OLD, CMP_MEAN_NEW, NR_CMP };

static const char *const cmp_heads[NR_CMP] = {
	"emd", "app", "syscall", "old", "new", "change", "change%",
	"mean old", "mean new",
};

static void pair_cells(const struct cmp_out *co, const struct lat_pair *p,
		       char cells[NR_CMP][NAME_W + 8])
{
	const size_t sz = NAME_W + 8;
	struct cmp_figures f;

	figures(co, p, &f);
	if (p->emd >= 0)
		snprintf(cells[CMP_EMD], sz, "%.3f%s", p->emd,
			 p->status == LAT_FEW ? " few" : "");
	else
		snprintf(cells[CMP_EMD], sz, "%s", p->status <= LAT_FEW ? "-" :
			 status_names[p->status]);
	fmt_sanitize(cells[CMP_GROUP], sz, f.group, NAME_W);
	fmt_sanitize(cells[CMP_CALL], sz, f.call, NAME_W);
	snprintf(cells[CMP_OLD], sz, "%" PRIu64, f.calls_old);
	snprintf(cells[CMP_NEW], sz, "%" PRIu64, f.calls_new);
	snprintf(cells[CMP_CHANGE], sz, "%+" PRId64, f.change);
	if (f.calls_old)
		snprintf(cells[CMP_PCT], sz, "%+.2f%%", f.percent);
	else
		snprintf(cells[CMP_PCT], sz, "-");
	mean_cell(cells[CMP_MEAN_OLD], sz, p->old);
	mean_cell(cells[CMP_MEAN_NEW], sz, p->new);
}

/* A row of cells: the group and call left-aligned, the rest right. */
static void cmp_line(FILE *out, const int *w, const char *const *cells)
{
	for (int c = 0; c < NR_CMP; c++)
		fprintf(out, c == CMP_GROUP || c == CMP_CALL ? "%s%-*s" :
			"%s%*s", c ? "  " : "", w[c], cells[c]);
	fputc('\n', out);
}

static void text_table(FILE *out, const struct cmp_out *co, const char *key)
{
	char cells[NR_CMP][NAME_W + 8];
	const char *v[NR_CMP];
	int w[NR_CMP];

	for (int c = 0; c < NR_CMP; c++)
		w[c] = (int)strlen(c == CMP_GROUP ? key : cmp_heads[c]);
	for (size_t i = 0; i < co->n; i++) {
		pair_cells(co, &co->v[i], cells);
		for (int c = 0; c < NR_CMP; c++)
			if ((int)strlen(cells[c]) > w[c])
				w[c] = (int)strlen(cells[c]);
	}
	memcpy(v, cmp_heads, sizeof(v));
	v[CMP_GROUP] = key;
	cmp_line(out, w, v);
	for (size_t i = 0; i < co->n; i++) {
		pair_cells(co, &co->v[i], cells);
		for (int c = 0; c < NR_CMP; c++)
			v[c] = cells[c];
		cmp_line(out, w, v);
	}
}

static void text_compare(const struct cmp_out *co)
{
	const char *key = co->run->o->fields == FB(F_APPID) ? "appid" : "app";
	FILE *out = co->run->out;
	char a[81], b[81];

	fmt_sanitize(a, sizeof(a), co->old_file, 70);
	fmt_sanitize(b, sizeof(b), co->run->o->file, 70);
	fprintf(out, "old  %s\nnew  %s\n", a, b);
	fprintf(out, "System call latency compared by %s: %zu histograms, "
		"ranked by the Earth\nMover's Distance of their normalized "
		"distributions (in log2 buckets); those\nwith fewer than %d "
		"calls in a session after them (few), those of one\nsession "
		"only last, new or gone. Calls old and new, their change, the\n"
		"mean latency old and new:\n\n", key, co->n, LAT_MIN_CALLS);
	text_table(out, co, key);
}

static void csv_compare(const struct cmp_out *co)
{
	FILE *out = co->run->out;
	struct cmp_figures f;

	fputs("app,syscall,status,emd,calls_old,calls_new,change,"
	      "change_percent,mean_old_ns,mean_new_ns\n", out);
	for (size_t i = 0; i < co->n; i++) {
		const struct lat_pair *p = &co->v[i];

		figures(co, p, &f);
		csv_field(out, f.group);
		fputc(',', out);
		csv_field(out, f.call);
		fprintf(out, ",%s,", status_names[p->status]);
		if (p->emd >= 0)
			fprintf(out, "%.6f", p->emd);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",",
			f.calls_old, f.calls_new, f.change);
		if (f.calls_old)
			fprintf(out, "%.4f", f.percent);
		fputc(',', out);
		if (p->old)
			fprintf(out, "%.3f", lat_mean(&p->old->h));
		fputc(',', out);
		if (p->new)
			fprintf(out, "%.3f", lat_mean(&p->new->h));
		fputc('\n', out);
	}
}

/* A number, or null when not given. */
static void json_opt(struct json *j, const char *key, double v, bool given)
{
	if (given)
		json_fixed(j, key, v, 6);
	else
		json_null(j, key);
}

static void json_compare(const struct cmp_out *co)
{
	struct cmp_figures f;
	struct json j;

	json_begin(&j, co->run->out);
	json_str(&j, "old", co->old_file);
	json_str(&j, "new", co->run->o->file);
	json_str(&j, "by", co->run->o->fields == FB(F_APPID) ? "appid" : "app");
	json_array(&j, "rows", JSON_BLOCK);
	for (size_t i = 0; i < co->n; i++) {
		const struct lat_pair *p = &co->v[i];

		figures(co, p, &f);
		json_object(&j, NULL, JSON_INLINE);
		json_str(&j, "app", f.group);
		json_str(&j, "syscall", f.call);
		json_u64(&j, "nr", (p->new ? p->new : p->old)->nr);
		json_str(&j, "status", status_names[p->status]);
		json_opt(&j, "emd", p->emd, p->emd >= 0);
		json_u64(&j, "calls_old", f.calls_old);
		json_u64(&j, "calls_new", f.calls_new);
		json_i64(&j, "change", f.change);
		json_opt(&j, "change_percent", f.percent, f.calls_old > 0);
		json_opt(&j, "mean_old_ns", p->old ? lat_mean(&p->old->h) : 0,
			 p->old);
		json_opt(&j, "mean_new_ns", p->new ? lat_mean(&p->new->h) : 0,
			 p->new);
		json_close(&j);
	}
	json_end(&j);
}

static void (*const cmp_writers[NR_FORMATS])(const struct cmp_out *) = {
	[FORMAT_TEXT] = text_compare, [FORMAT_CSV] = csv_compare,
	[FORMAT_JSON] = json_compare,
};

void lat_write_compare(const struct run *run, const char *old_file,
		       const struct lat_pair *pairs, size_t n,
		       const struct strtab *names)
{
	const struct cmp_out co = { run, old_file, pairs, n, names };

	cmp_writers[run->o->format](&co);
}
