// SPDX-License-Identifier: GPL-2.0
/* report: sorted reports of sample counts, text or CSV; see report.h. */
#include "report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_COLUMNS	80
#define GAP		2	/* spaces between text columns */
#define MIN_KEY_WIDTH	8
#define LABEL_MAX	256	/* a key column cell, before it is cut */

struct row {
	uint64_t samples;
	uint64_t ip;
	uint32_t appid;
	uint32_t nappids;		/* REPORT_APP: appids in the row */
	const struct appid_info *info;	/* NULL: no APPID record, or no appid */
};

void report_key_masks(enum report_by by, struct count_mask *m)
{
	m->a = by == REPORT_EIP ? 0 : MASK_APPID;
	m->ip = by == REPORT_APPID_EIP || by == REPORT_EIP ? UINT64_MAX : 0;
	m->b = 0;
}

/* ------------------------------------------------------------ ordering */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_appid_key(const struct row *a, const struct row *b)
{
	return appids_order(a->info, a->appid, b->info, b->appid, false);
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = cmp_u64(b->samples, a->samples);	/* most first */

	if (c)
		return c;
	c = cmp_appid_key(a, b);	/* equal appids in REPORT_EIP */
	return c ? c : cmp_u64(a->ip, b->ip);
}

static int cmp_rows_by_key(const void *pa, const void *pb)
{
	return cmp_appid_key(pa, pb);
}

/* ------------------------------------------------------------ rows */

/* The rows of a report, sorted; NULL when out of memory. */
static struct row *build_rows(const struct report_ctx *ctx,
			      enum report_by by,
			      const struct count_table *counts, size_t *np)
{
	struct count_table projected;
	struct count_entry *entries;
	struct count_mask mask;
	struct row *rows;
	size_t n;

	report_key_masks(by, &mask);
	if (counts_init(&projected))
		return NULL;
	if (counts_project(counts, &projected, &mask)) {
		counts_free(&projected);
		return NULL;
	}
	entries = counts_entries(&projected);
	n = projected.used;
	counts_free(&projected);
	if (!entries)
		return NULL;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		free(entries);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		rows[i].samples = entries[i].count;
		rows[i].ip = entries[i].ip;
		rows[i].appid = CE_APPID(&entries[i]);
		rows[i].nappids = 1;
		if (by != REPORT_EIP)
			rows[i].info = appids_find(ctx->appids,
						   rows[i].appid);
	}
	free(entries);

	if (by == REPORT_APP && n > 0) {
		/* Merge the appids of each name (known names only). */
		size_t out = 0;

		qsort(rows, n, sizeof(*rows), cmp_rows_by_key);
		for (size_t i = 1; i < n; i++) {
			struct row *last = &rows[out];

			if (last->info && rows[i].info &&
			    !strcmp(last->info->name, rows[i].info->name)) {
				last->samples += rows[i].samples;
				last->nappids++;
			} else {
				rows[++out] = rows[i];
			}
		}
		n = out + 1;
	}
	qsort(rows, n, sizeof(*rows), cmp_rows);
	*np = n;
	return rows;
}

double report_percent(uint64_t part, uint64_t total)
{
	if (total == 0)
		return 0.0;
	/* part * 100 is exact below 2^53: one correctly rounded division. */
	if (part <= UINT64_MAX / 100)
		return (double)(part * 100) / (double)total;
	return (double)part * 100.0 / (double)total;
}

/* ------------------------------------------------------------ text */

void report_sanitize(char *dst, size_t dst_size, const char *s,
		     size_t width)
{
	size_t len = strlen(s), keep = len, i;

	if (width >= dst_size)
		width = dst_size - 1;
	if (len > width)
		keep = width > 3 ? width - 3 : width;
	for (i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (len > width && width > 3) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

/* The #instance suffix of a row's key cell, "" for none. */
static void key_suffix(char *buf, size_t size, enum report_by by,
		       const struct row *r)
{
	buf[0] = '\0';
	if (r->info && by != REPORT_APP)
		snprintf(buf, size, "#%" PRIu32, r->info->instance);
}

/* The width of a row's key cell, uncut. */
static size_t key_width(enum report_by by, const struct row *r)
{
	char suffix[16], buf[32];

	if (!r->info)
		return (size_t)snprintf(buf, sizeof(buf), "?appid=%" PRIu32,
					r->appid);
	key_suffix(suffix, sizeof(suffix), by, r);
	return strlen(r->info->name) + strlen(suffix);
}

/*
 * A row's key cell, at most width columns: name#instance, name (REPORT_APP)
 * or ?appid=N. A long name is cut, keeping the #instance.
 */
static void key_cell(char *buf, size_t size, enum report_by by,
		     const struct row *r, size_t width)
{
	char suffix[16], label[32];
	size_t n;

	if (!r->info) {
		snprintf(label, sizeof(label), "?appid=%" PRIu32, r->appid);
		report_sanitize(buf, size, label, width);
		return;
	}
	key_suffix(suffix, sizeof(suffix), by, r);
	n = strlen(suffix);
	report_sanitize(buf, size - n, r->info->name,
			width > n ? width - n : 0);
	strcat(buf, suffix);
}

static int digits(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "%" PRIu64, v);
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

static void text_report(const struct report_ctx *ctx, enum report_by by,
			const struct row *rows, size_t n, uint64_t total)
{
	static const char *const titles[] = {
		[REPORT_APPID_EIP] = "Samples by appid and EIP",
		[REPORT_APPID] = "Samples by appid",
		[REPORT_APP] = "Samples by application (all instances)",
		[REPORT_EIP] = "Samples by EIP",
	};
	const bool has_key = by != REPORT_EIP;
	const bool has_eip = by == REPORT_APPID_EIP || by == REPORT_EIP;
	const char *key_head = by == REPORT_APP ? "app" : "appid";
	const char *extra_head = by == REPORT_APPID ? "pid" :
		by == REPORT_APP ? "appids" : NULL;
	int w_samples = (int)strlen("samples"), w_pct = (int)strlen("percent");
	int w_key = (int)strlen(key_head), w_extra = 0, w_eip = 3, fixed;
	char cell[LABEL_MAX];

	fprintf(ctx->out, "%s, %s: %" PRIu64 " samples\n", titles[by],
		ctx->mode_title, total);
	if (n == 0) {
		fprintf(ctx->out, "  (none)\n");
		return;
	}

	/* Column widths; the key column takes what is left of 80. */
	if (extra_head)
		w_extra = (int)strlen(extra_head);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		w_samples = max_int(w_samples, digits(r->samples));
		if (has_key && key_width(by, r) < LABEL_MAX)
			w_key = max_int(w_key, (int)key_width(by, r));
		else if (has_key)
			w_key = LABEL_MAX;
		if (by == REPORT_APPID && r->info)
			w_extra = max_int(w_extra, digits(r->info->pid));
		if (by == REPORT_APP)
			w_extra = max_int(w_extra, digits(r->nappids));
		if (has_eip)
			w_eip = max_int(w_eip, snprintf(cell, sizeof(cell),
							"0x%" PRIx64, r->ip));
	}
	fixed = w_samples + GAP + w_pct;
	if (extra_head)
		fixed += GAP + w_extra;
	if (has_eip)
		fixed += GAP + w_eip;
	if (has_key) {
		w_key = w_key < TEXT_COLUMNS - GAP - fixed ? w_key :
			TEXT_COLUMNS - GAP - fixed;
		w_key = max_int(w_key, MIN_KEY_WIDTH);
		if (w_key >= LABEL_MAX)
			w_key = LABEL_MAX - 1;
	}

	/* The heading row, then one row per key. */
	fprintf(ctx->out, "%*s%*s%*s", w_samples, "samples", GAP, "", w_pct,
		"percent");
	if (has_key)
		fprintf(ctx->out, "%*s%-*s", GAP, "", has_eip || extra_head ?
			w_key : 0, key_head);
	if (extra_head)
		fprintf(ctx->out, "%*s%*s", GAP, "", w_extra, extra_head);
	if (has_eip)
		fprintf(ctx->out, "%*s%s", GAP, "", "eip");
	fputc('\n', ctx->out);

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(ctx->out, "%*" PRIu64 "%*s%*.2f%%", w_samples,
			r->samples, GAP, "", w_pct - 1,
			report_percent(r->samples, total));
		if (has_key) {
			key_cell(cell, sizeof(cell), by, r, (size_t)w_key);
			fprintf(ctx->out, "%*s%-*s", GAP, "",
				has_eip || extra_head ? w_key : 0, cell);
		}
		if (by == REPORT_APPID) {
			if (r->info)
				fprintf(ctx->out, "%*s%*" PRIu32, GAP, "",
					w_extra, r->info->pid);
			else
				fprintf(ctx->out, "%*s%*s", GAP, "", w_extra,
					"-");
		}
		if (by == REPORT_APP)
			fprintf(ctx->out, "%*s%*" PRIu32, GAP, "", w_extra,
				r->nappids);
		if (has_eip)
			fprintf(ctx->out, "%*s0x%" PRIx64, GAP, "", r->ip);
		fputc('\n', ctx->out);
	}
}

/* ------------------------------------------------------------ CSV */

/* A CSV field, quoted (RFC 4180) when it holds , " CR or LF. */
static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void report_csv_field(FILE *out, const char *s)
{
	csv_field(out, s);
}

void report_csv_header(const struct report_ctx *ctx)
{
	fputs("app,instance,pid,mode,eip,samples,percent\n", ctx->out);
}

static void csv_report(const struct report_ctx *ctx, enum report_by by,
		       const struct row *rows, size_t n, uint64_t total)
{
	const bool per_appid = by == REPORT_APPID_EIP || by == REPORT_APPID;
	const bool has_eip = by == REPORT_APPID_EIP || by == REPORT_EIP;
	char label[32];

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		/* app */
		if (by == REPORT_EIP)
			label[0] = '\0';
		else if (!r->info)
			snprintf(label, sizeof(label), "?appid=%" PRIu32,
				 r->appid);
		csv_field(ctx->out, by != REPORT_EIP && r->info ?
			  r->info->name : label);
		/* instance, pid */
		if (per_appid && r->info)
			fprintf(ctx->out, ",%" PRIu32 ",%" PRIu32,
				r->info->instance, r->info->pid);
		else
			fputs(",,", ctx->out);
		fputc(',', ctx->out);
		csv_field(ctx->out, ctx->mode);
		fputc(',', ctx->out);
		if (has_eip)
			fprintf(ctx->out, "0x%" PRIx64, r->ip);
		fprintf(ctx->out, ",%" PRIu64 ",%.2f\n", r->samples,
			report_percent(r->samples, total));
	}
}

int report_print(const struct report_ctx *ctx, enum report_by by,
		 const struct count_table *counts, uint64_t total)
{
	size_t n = 0, all;
	struct row *rows = build_rows(ctx, by, counts, &n);

	if (!rows)
		return -1;
	all = n;

	if (ctx->top && n > ctx->top)
		n = ctx->top;
	if (ctx->format == REPORT_CSV) {
		csv_report(ctx, by, rows, n, total);
	} else {
		text_report(ctx, by, rows, n, total);
		if (n < all)
			fprintf(ctx->out, "  (top %zu of %zu rows)\n", n, all);
	}
	free(rows);
	return 0;
}
