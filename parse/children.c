// SPDX-License-Identifier: GPL-2.0
/*
 * children: --children, the inclusive samples of each report row, as
 * perf report --children gives them. Every stack (an entry of the
 * session's stacks table: IP, appid, chain) adds its samples to the row
 * of each of its frames, once per row however often the frame recurs;
 * a row that only callers have (main, with no samples of its own) is
 * added with 0 self samples.
 */
#include <stdlib.h>

#include "calltree.h"
#include "report.h"

/* The rows by key: an index into rep->rows + 1 per slot, 0 free. */
struct rowset {
	size_t *slots;
	size_t mask;
	size_t cap;		/* of rep->rows */
};

static int rowset_fill(struct rowset *set, const struct report *rep)
{
	size_t n = 16;

	while (n < 4 * (rep->nrows + 1))
		n *= 2;
	free(set->slots);
	set->slots = calloc(n, sizeof(*set->slots));
	if (!set->slots)
		return -1;
	set->mask = n - 1;
	for (size_t i = 0; i < rep->nrows; i++) {
		size_t j = report_row_hash(rep, &rep->rows[i]) & set->mask;

		while (set->slots[j])
			j = (j + 1) & set->mask;
		set->slots[j] = i + 1;
	}
	return 0;
}

/* The row with r's keys, added (0 samples) if none has them; NULL when
 * out of memory. */
static struct row *find_or_add(struct report *rep, struct rowset *set,
			       const struct row *r)
{
	size_t j = report_row_hash(rep, r) & set->mask;
	struct row *v;

	for (; set->slots[j]; j = (j + 1) & set->mask)
		if (report_same_keys(rep, &rep->rows[set->slots[j] - 1], r))
			return &rep->rows[set->slots[j] - 1];
	if (rep->nrows == set->cap) {
		v = realloc(rep->rows, 2 * set->cap * sizeof(*v));
		if (!v)
			return NULL;
		rep->rows = v;
		set->cap *= 2;
	}
	v = &rep->rows[rep->nrows];
	*v = *r;
	v->samples = 0;
	set->slots[j] = ++rep->nrows;
	if (4 * rep->nrows > set->mask + 1 && rowset_fill(set, rep))
		return NULL;
	return v;
}

/* Stack number k (entry e): its samples to each row it holds, once. */
static int add_stack(struct report *rep, struct rowset *set, size_t k,
		     const struct count_entry *e)
{
	const struct stack_source src = {
		.sym = rep->sym, .appids = rep->appids, .chains = rep->chains,
		.names = rep->names,
	};
	uint64_t addrs[STACK_MAX_FRAMES];
	int n = stack_addrs(&src, e, addrs);
	struct count_entry fe = *e;
	struct row r, *row;

	for (int i = 0; i < n; i++) {
		if (!addrs[i])
			continue;	/* callers the chain cannot vouch for */
		fe.ip = addrs[i];
		fe.b = 0;
		r = (struct row){ .nappids = 1, .appid = CE_APPID(e) };
		if (report_row_keys(rep, &r, &fe, false))
			return -1;
		row = find_or_add(rep, set, &r);
		if (!row)
			return -1;
		if (row->stamp != k + 1) {
			row->stamp = k + 1;
			row->children += e->count;
		}
	}
	return n < 0 ? -1 : 0;
}

int report_children(struct report *rep)
{
	struct rowset set = { .cap = rep->nrows ? rep->nrows : 1 };
	int rc = rowset_fill(&set, rep);

	for (size_t k = 0; !rc && k < rep->nstacks; k++)
		rc = add_stack(rep, &set, k, &rep->stacks[k]);
	free(set.slots);
	return rc;
}
