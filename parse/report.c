// SPDX-License-Identifier: GPL-2.0
/* report: the report engine; see report.h. */
#define _GNU_SOURCE		/* qsort_r */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

const struct layout report_plain = { 0 };

/* The paper's base reports. */
static const struct layout base_layouts[] = {
	{
		.fields = FB(F_APPID) | FB(F_EIP),
		.csv_always = FB(F_EIP), .pad_flex = true,
	},
	{
		.fields = FB(F_APPID),
		.extra = &column_pid, .extra_after = FB(F_APPID),
		.csv_always = FB(F_EIP), .pad_flex = true,
	},
	{
		.fields = FB(F_APP), .title = "application (all instances)",
		.extra = &column_appids, .extra_after = FB(F_APP),
		.csv_always = FB(F_EIP), .pad_flex = true,
	},
	{
		.fields = FB(F_EIP),
		.csv_always = FB(F_EIP), .pad_flex = true,
	},
};

const struct layout *report_layout(unsigned int fields)
{
	for (size_t i = 0; i < sizeof(base_layouts) / sizeof(base_layouts[0]);
	     i++)
		if (base_layouts[i].fields == fields)
			return &base_layouts[i];
	return &report_plain;
}

bool report_symbolized(const struct report *rep)
{
	return fields_with(rep->fields, FIELD_SYMBOLS) != 0;
}

size_t report_shown(const struct report *rep)
{
	return rep->top && rep->nrows > rep->top ? rep->top : rep->nrows;
}

/* ------------------------------------------------------------ ordering */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Display order: samples (with --children, inclusive samples first),
 * most first, then the fields' order. */
static int cmp_order(const void *pa, const void *pb, void *arg)
{
	const struct report *rep = arg;
	const struct row *a = pa, *b = pb;
	int c = rep->stacks ? cmp_u64(b->children, a->children) : 0;

	if (!c)
		c = cmp_u64(b->samples, a->samples);
	for (size_t i = 0; !c && i < rep->nby; i++)
		c = rep->by[i]->order(rep->by[i], a, b, rep);
	return c;
}

/* ------------------------------------------------------------ building */

/* The symbol of an entry's (appid, ip) into r, counted by outcome if
 * account. */
static int symbolize_row(struct report *rep, struct row *r,
			 const struct count_entry *e, bool account)
{
	struct symres s;

	if (symbolize(rep->sym, CE_APPID(e), e->ip, &s))
		return -1;
	r->key[F_DSO] = s.dso;
	r->key[F_SYMBOL] = s.sym;
	r->key[F_LINE] = s.line;
	r->kind = s.kind;
	r->reason = s.reason;
	if (!account)
		return 0;
	if (s.kind == KIND_UNRESOLVED)
		rep->unresolved[s.reason] += e->count;
	if (e->ip >= KERNEL_IP_MIN) {
		rep->kernel += e->count;
		if (s.kind != KIND_UNRESOLVED)
			rep->kernel_resolved += e->count;
	}
	return 0;
}

int report_row_keys(struct report *rep, struct row *r,
		    const struct count_entry *e, bool account)
{
	bool symbolized = false;

	for (size_t i = 0; i < rep->nby; i++) {
		const struct field *f = rep->by[i];

		if ((f->flags & FIELD_SYMBOLS) && !symbolized) {
			if (symbolize_row(rep, r, e, account))
				return -1;
			symbolized = true;
		}
		if (f->extract && f->extract(f, rep, r, e))
			return -1;
	}
	return 0;
}

/* An entry's row: its fields in order, symbolized before the first field
 * that needs it; its samples counted. */
static int make_row(struct report *rep, struct row *r,
		    const struct count_entry *e)
{
	r->samples = e->count;
	r->nappids = 1;
	rep->total += e->count;
	return report_row_keys(rep, r, e, true);
}

uint64_t report_row_hash(const struct report *rep, const struct row *r)
{
	uint64_t h = 0;

	for (size_t i = 0; i < rep->nby; i++) {
		h = (h ^ ROW_KEY(r, rep->by[i])) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

bool report_same_keys(const struct report *rep, const struct row *a,
		      const struct row *b)
{
	for (size_t i = 0; i < rep->nby; i++)
		if (ROW_KEY(a, rep->by[i]) != ROW_KEY(b, rep->by[i]))
			return false;
	return true;
}

/*
 * Merge the rows of equal keys into the first of them, through a hash
 * table of the rows kept. Returns how many are left, or -1 when out of
 * memory.
 */
static ssize_t merge(const struct report *rep, struct row *rows, size_t n)
{
	size_t nslots = 16, kept = 0;
	size_t *slots;		/* a kept row's index + 1; 0: free */

	while (nslots < 2 * n)
		nslots *= 2;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t j = report_row_hash(rep, &rows[i]) & (nslots - 1);
		struct row *r;

		while (slots[j] && !report_same_keys(rep, &rows[slots[j] - 1],
					      &rows[i]))
			j = (j + 1) & (nslots - 1);
		if (!slots[j]) {
			rows[kept] = rows[i];
			slots[j] = ++kept;
			continue;
		}
		r = &rows[slots[j] - 1];
		r->samples += rows[i].samples;
		if (rows[i].appid != r->appid)
			r->nappids++;
	}
	free(slots);
	return (ssize_t)kept;
}

/* Whether key bits m keep more than n. */
static bool wider(const struct count_mask *m, const struct count_mask *n)
{
	return (m->ip & ~n->ip) || (m->a & ~n->a) || (m->b & ~n->b) ||
	       (m->c & ~n->c);
}

static int build_rows(struct report *rep, const struct count_entry *entries,
		      size_t n)
{
	rep->rows = calloc(n ? n : 1, sizeof(*rep->rows));
	if (!rep->rows)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (make_row(rep, &rep->rows[i], &entries[i]))
			return -1;
	return 0;
}

int report_build(struct report *rep, const struct count_entry *entries,
		 size_t n)
{
	const struct count_mask need = fields_need(rep->fields);
	ssize_t kept;

	rep->total = 0;
	memset(rep->unresolved, 0, sizeof(rep->unresolved));
	rep->unresolved_lines = 0;
	rep->kernel = rep->kernel_resolved = 0;
	rep->nby = 0;
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (rep->fields & FB(i))
			rep->by[rep->nby++] = &fields[i];
	if (build_rows(rep, entries, n)) {
		report_free(rep);
		return -1;
	}
	/* Entries keyed by just what the fields need give distinct rows,
	 * unless a field merges them (app, symbols). */
	if (wider(&rep->keys, &need) || fields_with(rep->fields, FIELD_MERGES))
		kept = merge(rep, rep->rows, n);
	else
		kept = (ssize_t)n;
	if (kept < 0) {
		report_free(rep);
		return -1;
	}
	rep->nrows = (size_t)kept;
	if (rep->stacks && report_children(rep)) {
		report_free(rep);
		return -1;
	}
	qsort_r(rep->rows, rep->nrows, sizeof(*rep->rows), cmp_order, rep);
	return 0;
}

void report_free(struct report *rep)
{
	free(rep->rows);
	rep->rows = NULL;
	rep->nrows = 0;
}
