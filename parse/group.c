// SPDX-License-Identifier: GPL-2.0
/* group: reports by any combination of fields; see group.h. */
#include "group.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define TEXT_COLUMNS	80
#define GAP		2
#define MIN_FLEX	8
#define CELL_MAX	1024

/* The fields in column order, with their text headings and CSV names. */
static const struct {
	unsigned int f;
	const char *head;	/* text */
	const char *title;	/* in "Samples by ..." */
} columns[] = {
	{ G_APP, "app", "app" },
	{ G_APPID, "appid", "appid" },
	{ G_MODE, "mode", "mode" },
	{ G_CPU, "cpu", "CPU" },
	{ G_EIP, "eip", "EIP" },
	{ G_DSO, "dso", "DSO" },
	{ G_SYMBOL, "symbol", "symbol" },
	{ G_LINE, "line", "source line" },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

unsigned int group_normalize(unsigned int fields)
{
	if (fields & G_LINE)
		fields |= G_SYMBOL;
	if (fields & G_SYMBOL)
		fields |= G_DSO;
	return fields;
}

const char *mode_label(unsigned int mode)
{
	const char *s = sleepy_mode_name(mode);

	return s ? s : "other";
}

const char *dso_short(const char *dso)
{
	const char *slash;

	if (dso[0] != '/')
		return dso;
	slash = strrchr(dso, '/');
	return slash[1] ? slash + 1 : dso;
}

void group_title(unsigned int fields, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "Samples by");
	unsigned int shown = 0, count = 0;

	/* dso and symbol are implied by line, dso by symbol: name the most
	 * specific only.
	 */
	if (fields & G_LINE)
		fields &= ~(unsigned int)(G_SYMBOL | G_DSO);
	else if (fields & G_SYMBOL)
		fields &= ~(unsigned int)G_DSO;
	for (size_t i = 0; i < NCOLUMNS; i++)
		count += !!(fields & columns[i].f);
	for (size_t i = 0; i < NCOLUMNS && n < size; i++) {
		if (!(fields & columns[i].f))
			continue;
		shown++;
		n += (size_t)snprintf(buf + n, size - n, "%s%s",
				      shown == 1 ? " " : shown == count ?
				      " and " : ", ", columns[i].title);
	}
}

/* ------------------------------------------------------------ building */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static unsigned int g_fields;
static const struct strtab *g_names;

/* Identity: by ids and numbers, for merging. */
static int cmp_ident(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	int c;

	if (g_fields & G_APP) {
		if ((c = cmp_u64(a->app, b->app)))
			return c;
		if (a->app == UINT32_MAX && (c = cmp_u64(a->appid, b->appid)))
			return c;
	}
	if ((g_fields & G_APPID) && (c = cmp_u64(a->appid, b->appid)))
		return c;
	if ((g_fields & G_MODE) && (c = cmp_u64(a->mode, b->mode)))
		return c;
	if ((g_fields & G_CPU) && (c = cmp_u64(a->cpu, b->cpu)))
		return c;
	if ((g_fields & G_EIP) && (c = cmp_u64(a->eip, b->eip)))
		return c;
	if ((g_fields & G_DSO) && (c = cmp_u64(a->dso, b->dso)))
		return c;
	if ((g_fields & G_SYMBOL) && (c = cmp_u64(a->sym, b->sym)))
		return c;
	if ((g_fields & G_LINE) && (c = cmp_u64(a->line, b->line)))
		return c;
	return 0;
}

static int cmp_app(const struct grow *a, const struct grow *b)
{
	return appids_order(a->info, a->appid, b->info, b->appid,
			    g_fields & G_APP);
}

/* Display order: samples, most first, then the key's text. */
static int cmp_order(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	int c = cmp_u64(b->samples, a->samples);

	if (c)
		return c;
	if ((g_fields & (G_APP | G_APPID)) && (c = cmp_app(a, b)))
		return c;
	if ((g_fields & G_MODE) && (c = cmp_u64(a->mode, b->mode)))
		return c;
	if ((g_fields & G_CPU) && (c = cmp_u64(a->cpu, b->cpu)))
		return c;
	if ((g_fields & G_EIP) && (c = cmp_u64(a->eip, b->eip)))
		return c;
	if ((g_fields & G_DSO) && (c = strcmp(strtab_get(g_names, a->dso),
					       strtab_get(g_names, b->dso))))
		return c;
	if ((g_fields & G_SYMBOL) &&
	    (c = strcmp(strtab_get(g_names, a->sym),
			strtab_get(g_names, b->sym))))
		return c;
	if ((g_fields & G_LINE) &&
	    (c = strcmp(strtab_get(g_names, a->line),
			strtab_get(g_names, b->line))))
		return c;
	return 0;
}

struct grow *group_build(struct group_ctx *ctx,
			 const struct count_entry *entries, size_t n)
{
	const unsigned int f = ctx->fields;
	struct grow *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t out = 0;

	if (!rows)
		return NULL;
	ctx->total = 0;
	memset(ctx->unresolved, 0, sizeof(ctx->unresolved));
	ctx->unresolved_lines = 0;
	ctx->kernel = ctx->kernel_resolved = 0;
	for (size_t i = 0; i < n; i++) {
		const struct count_entry *e = &entries[i];
		struct grow *r = &rows[i];

		r->samples = e->count;
		ctx->total += e->count;
		r->nappids = 1;
		if (f & (G_APP | G_APPID)) {
			r->appid = CE_APPID(e);
			r->info = appids_find(ctx->appids, r->appid);
			r->app = UINT32_MAX;
			if ((f & G_APP) && r->info) {
				r->app = strtab_intern(ctx->names,
						       r->info->name);
				if (r->app == STRTAB_NOMEM)
					goto nomem;
			}
		}
		r->mode = CE_MODE(e);
		r->cpu = CE_CPU(e);
		r->eip = e->ip;
		if (f & G_SYMBOLIZE) {
			struct symres s;

			if (symbolize(ctx->sym, CE_APPID(e), e->ip, &s))
				goto nomem;
			r->dso = s.dso;
			r->sym = s.sym;
			r->line = s.line ? s.line : ctx->sym->qq;
			r->kind = s.kind;
			r->reason = s.reason;
			r->offset = s.offset;
			if (s.kind == KIND_UNRESOLVED)
				ctx->unresolved[s.reason] += e->count;
			if (e->ip >= KERNEL_IP_MIN) {
				ctx->kernel += e->count;
				if (s.kind != KIND_UNRESOLVED)
					ctx->kernel_resolved += e->count;
			}
			if ((f & G_LINE) && !s.line)
				ctx->unresolved_lines += e->count;
		}
	}
	g_fields = f;
	g_names = ctx->names;
	qsort(rows, n, sizeof(*rows), cmp_ident);
	for (size_t i = 0; i < n; i++) {
		if (out && !cmp_ident(&rows[out - 1], &rows[i])) {
			rows[out - 1].samples += rows[i].samples;
			if (rows[i].appid != rows[out - 1].appid)
				rows[out - 1].nappids++;
			continue;
		}
		rows[out++] = rows[i];
	}
	qsort(rows, out, sizeof(*rows), cmp_order);
	ctx->nrows = out;
	return rows;
nomem:
	free(rows);
	return NULL;
}

/* ------------------------------------------------------------ cells */

static const char *line_short(const char *line)
{
	const char *colon = strrchr(line, ':'), *slash = NULL;

	for (const char *p = line; colon && p < colon; p++)
		if (*p == '/')
			slash = p;
	return slash ? slash + 1 : line;
}

void group_cell(const struct group_ctx *ctx, const struct grow *r,
		unsigned int f, char *buf, size_t size)
{
	switch (f) {
	case G_APP:
	case G_APPID:
		if (!r->info)
			snprintf(buf, size, "?appid=%" PRIu32, r->appid);
		else if (f == G_APP)
			snprintf(buf, size, "%s", r->info->name);
		else
			snprintf(buf, size, "%s#%" PRIu32, r->info->name,
				 r->info->instance);
		break;
	case G_MODE:
		snprintf(buf, size, "%s", mode_label(r->mode));
		break;
	case G_CPU:
		snprintf(buf, size, "%u", r->cpu);
		break;
	case G_EIP:
		snprintf(buf, size, "0x%" PRIx64, r->eip);
		break;
	case G_DSO:
		snprintf(buf, size, "%s", dso_short(strtab_get(ctx->names,
							       r->dso)));
		break;
	case G_SYMBOL:
		snprintf(buf, size, "%s", strtab_get(ctx->names, r->sym));
		break;
	case G_LINE:
		snprintf(buf, size, "%s", line_short(strtab_get(ctx->names,
								r->line)));
		break;
	default:
		buf[0] = '\0';
	}
}

/*
 * A cell cut to width: appids keep their #instance, brackets keep both
 * ends, others are cut at the end with "...".
 */
static void fit_cell(char *dst, size_t size, const char *s, size_t width,
		     unsigned int f, const struct grow *r)
{
	const char *arrow = strstr(s, "->");
	size_t len = strlen(s);

	if (len <= width) {
		report_sanitize(dst, size, s, width);
		return;
	}
	if (f == G_APPID && r->info) {
		const char *hash = strrchr(s, '#');
		size_t tail = strlen(hash);
		char head[CELL_MAX];

		if (width > tail + 4) {
			snprintf(head, sizeof(head), "%.*s", (int)(hash - s), s);
			report_sanitize(dst, size - tail, head, width - tail);
			strcat(dst, hash);
			return;
		}
	}
	if (f == G_SYMBOL && r->kind == KIND_BRACKET && arrow &&
	    width >= 2 * 6 + 2) {
		size_t half = (width - 2) / 2;
		char left[CELL_MAX], right[CELL_MAX];

		snprintf(left, sizeof(left), "%.*s", (int)(arrow - s), s);
		report_sanitize(left, sizeof(left), left, half);
		report_sanitize(right, sizeof(right), arrow + 2,
				width - 2 - strlen(left));
		if (strlen(left) + strlen(right) + 3 <= size) {
			strcpy(dst, left);
			strcat(dst, "->");
			strcat(dst, right);
			return;
		}
	}
	report_sanitize(dst, size, s, width);
}

/* ------------------------------------------------------------ text */

static int digits(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "%" PRIu64, v);
}

static bool is_flexible(unsigned int f)
{
	return f & (G_APP | G_APPID | G_DSO | G_SYMBOL | G_LINE);
}

void group_print_text(const struct group_ctx *ctx, const struct grow *rows)
{
	const size_t n = ctx->top && ctx->nrows > ctx->top ? ctx->top :
		ctx->nrows;
	int w[NCOLUMNS] = { 0 }, w_samples = 7, w_pct = 7, used;
	unsigned int shown[NCOLUMNS];
	size_t ncols = 0, last;
	char title[160], cell[CELL_MAX], cut[CELL_MAX];
	uint64_t unres = 0;

	group_title(ctx->fields, title, sizeof(title));
	fprintf(ctx->out, "%s, %s: %" PRIu64 " samples\n", title,
		ctx->mode_title, ctx->total);
	for (size_t i = 0; i < NCOLUMNS; i++)
		if (ctx->fields & columns[i].f)
			shown[ncols++] = (unsigned int)i;
	if (n == 0) {
		fprintf(ctx->out, "  (none)\n");
	} else {
		for (size_t c = 0; c < ncols; c++)
			w[c] = (int)strlen(columns[shown[c]].head);
		for (size_t i = 0; i < n; i++) {
			if (digits(rows[i].samples) > w_samples)
				w_samples = digits(rows[i].samples);
			for (size_t c = 0; c < ncols; c++) {
				int len;

				group_cell(ctx, &rows[i], columns[shown[c]].f,
					   cell, sizeof(cell));
				len = (int)strlen(cell);
				if (len > w[c])
					w[c] = len;
			}
		}
		/* Shrink the widest flexible column until the row fits;
		 * symbols give way last.
		 */
		for (;;) {
			int best = -1, best_w = 0;

			used = w_samples + GAP + w_pct;
			for (size_t c = 0; c < ncols; c++)
				used += GAP + w[c];
			if (used <= TEXT_COLUMNS)
				break;
			for (size_t c = 0; c < ncols; c++) {
				unsigned int f = columns[shown[c]].f;
				int weight = f == G_SYMBOL ? w[c] * 2 / 3 :
					w[c];

				if (is_flexible(f) && w[c] > MIN_FLEX &&
				    weight > best_w) {
					best = (int)c;
					best_w = weight;
				}
			}
			if (best < 0)
				break;
			w[best]--;
		}
		last = ncols - 1;
		fprintf(ctx->out, "%*s%*s%*s", w_samples, "samples", GAP, "",
			w_pct, "percent");
		for (size_t c = 0; c < ncols; c++)
			fprintf(ctx->out, "%*s%-*s", GAP, "",
				c == last ? 0 : w[c], columns[shown[c]].head);
		fputc('\n', ctx->out);
		for (size_t i = 0; i < n; i++) {
			const struct grow *r = &rows[i];

			fprintf(ctx->out, "%*" PRIu64 "%*s%*.2f%%", w_samples,
				r->samples, GAP, "", w_pct - 1,
				report_percent(r->samples, ctx->total));
			for (size_t c = 0; c < ncols; c++) {
				unsigned int f = columns[shown[c]].f;

				group_cell(ctx, r, f, cell, sizeof(cell));
				fit_cell(cut, sizeof(cut), cell, (size_t)w[c],
					 f, r);
				if (f == G_CPU || f == G_EIP)
					fprintf(ctx->out, "%*s%*s", GAP, "",
						c == last ? 0 : w[c], cut);
				else
					fprintf(ctx->out, "%*s%-*s", GAP, "",
						c == last ? 0 : w[c], cut);
			}
			fputc('\n', ctx->out);
		}
	}
	if (n < ctx->nrows)
		fprintf(ctx->out, "  (top %zu of %zu rows)\n", n, ctx->nrows);
	for (size_t i = 1; i < NR_REASONS; i++)
		unres += ctx->unresolved[i];
	if (ctx->fields & G_SYMBOLIZE) {
		/* "unresolved: N samples (P%): reason N, ...", wrapped. */
		int col = fprintf(ctx->out, "unresolved: %" PRIu64
				  " samples (%.2f%%)", unres,
				  report_percent(unres, ctx->total));

		for (size_t i = 1, k = 0; i < NR_REASONS; i++) {
			char item[64];
			int len;

			if (!ctx->unresolved[i])
				continue;
			len = snprintf(item, sizeof(item), "%s %" PRIu64,
				       reason_name((unsigned int)i),
				       ctx->unresolved[i]);
			fputs(k++ ? "," : ":", ctx->out);
			col++;
			if (col + 1 + len > TEXT_COLUMNS) {
				fputs("\n ", ctx->out);
				col = 1;
			}
			col += fprintf(ctx->out, " %s", item);
		}
		fputc('\n', ctx->out);
	}
	if (ctx->fields & G_LINE)
		fprintf(ctx->out, "no source line (\?\?): %" PRIu64
			" samples (%.2f%%)\n", ctx->unresolved_lines,
			report_percent(ctx->unresolved_lines, ctx->total));
}

/* ------------------------------------------------------------ CSV */

void group_print_csv(const struct group_ctx *ctx, const struct grow *rows)
{
	const unsigned int f = ctx->fields;
	const size_t n = ctx->top && ctx->nrows > ctx->top ? ctx->top :
		ctx->nrows;
	char label[32];

	fputs("app,instance,pid,mode", ctx->out);
	if (f & G_CPU)
		fputs(",cpu", ctx->out);
	if (f & G_EIP)
		fputs(",eip", ctx->out);
	if (f & G_DSO)
		fputs(",dso", ctx->out);
	if (f & G_SYMBOL)
		fputs(",symbol", ctx->out);
	if (f & G_LINE)
		fputs(",line", ctx->out);
	fputs(",samples,percent\n", ctx->out);
	for (size_t i = 0; i < n; i++) {
		const struct grow *r = &rows[i];

		if ((f & (G_APP | G_APPID)) && r->info) {
			report_csv_field(ctx->out, r->info->name);
		} else if (f & (G_APP | G_APPID)) {
			snprintf(label, sizeof(label), "?appid=%" PRIu32,
				 r->appid);
			fputs(label, ctx->out);
		}
		if ((f & G_APPID) && r->info)
			fprintf(ctx->out, ",%" PRIu32 ",%" PRIu32,
				r->info->instance, r->info->pid);
		else
			fputs(",,", ctx->out);
		fputc(',', ctx->out);
		report_csv_field(ctx->out, f & G_MODE ? mode_label(r->mode) :
				 ctx->mode);
		if (f & G_CPU)
			fprintf(ctx->out, ",%u", r->cpu);
		if (f & G_EIP)
			fprintf(ctx->out, ",0x%" PRIx64, r->eip);
		if (f & G_DSO) {
			fputc(',', ctx->out);
			report_csv_field(ctx->out, strtab_get(ctx->names,
							      r->dso));
		}
		if (f & G_SYMBOL) {
			fputc(',', ctx->out);
			report_csv_field(ctx->out, strtab_get(ctx->names,
							      r->sym));
		}
		if (f & G_LINE) {
			fputc(',', ctx->out);
			report_csv_field(ctx->out, strtab_get(ctx->names,
							      r->line));
		}
		fprintf(ctx->out, ",%" PRIu64 ",%.2f\n", r->samples,
			report_percent(r->samples, ctx->total));
	}
}

/* ------------------------------------------------------------ JSON */

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);	/* bytes as Latin-1 */
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_opt_string(FILE *out, const char *key, const char *s,
			    bool present)
{
	fprintf(out, "\"%s\": ", key);
	if (present)
		json_string(out, s);
	else
		fputs("null", out);
}

void group_print_json_rows(const struct group_ctx *ctx,
			   const struct grow *rows)
{
	static const char *const kinds[] = {
		[KIND_SYMBOL] = "symbol", [KIND_BRACKET] = "bracket",
		[KIND_UNRESOLVED] = "unresolved",
	};
	const unsigned int f = ctx->fields;
	const size_t n = ctx->top && ctx->nrows > ctx->top ? ctx->top :
		ctx->nrows;
	const bool sym = f & G_SYMBOLIZE;
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		const struct grow *r = &rows[i];
		const bool app = f & (G_APP | G_APPID);

		fputs(i ? ",\n    {" : "\n    {", ctx->out);
		if (app && !r->info)
			snprintf(buf, sizeof(buf), "?appid=%" PRIu32,
				 r->appid);
		json_opt_string(ctx->out, "app", r->info ? r->info->name : buf,
				app);
		if ((f & G_APPID) && r->info)
			fprintf(ctx->out, ", \"instance\": %" PRIu32
				", \"pid\": %" PRIu32, r->info->instance,
				r->info->pid);
		else
			fputs(", \"instance\": null, \"pid\": null", ctx->out);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "mode", f & G_MODE ?
				mode_label(r->mode) : ctx->mode, true);
		if (f & G_CPU)
			fprintf(ctx->out, ", \"cpu\": %u", r->cpu);
		else
			fputs(", \"cpu\": null", ctx->out);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, r->eip);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "eip", buf, f & G_EIP);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "dso", strtab_get(ctx->names, r->dso),
				f & G_DSO);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "symbol",
				strtab_get(ctx->names, r->sym), f & G_SYMBOL);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "line",
				strtab_get(ctx->names, r->line), f & G_LINE);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "kind", kinds[r->kind], sym);
		fputs(", ", ctx->out);
		json_opt_string(ctx->out, "reason", reason_name(r->reason),
				sym && r->kind == KIND_UNRESOLVED);
		fprintf(ctx->out, ", \"samples\": %" PRIu64
			", \"percent\": %.4f}", r->samples,
			report_percent(r->samples, ctx->total));
	}
}
