// SPDX-License-Identifier: GPL-2.0
/* counts: the (appid, ip) -> samples hash table; see counts.h. */
#include "counts.h"

#include <stdlib.h>

#define INITIAL_SLOTS 1024

int counts_init(struct count_table *t)
{
	t->slots = calloc(INITIAL_SLOTS, sizeof(*t->slots));
	t->mask = INITIAL_SLOTS - 1;
	t->used = 0;
	return t->slots ? 0 : -1;
}

void counts_free(struct count_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->used = 0;
}

int counts_grow(struct count_table *t)
{
	struct count_table bigger;
	size_t nslots = (t->mask + 1) * 2;

	if (nslots > SIZE_MAX / sizeof(*t->slots) / 2)
		return -1;
	bigger.slots = calloc(nslots, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	bigger.mask = nslots - 1;
	bigger.used = t->used;
	for (size_t i = 0; i <= t->mask; i++) {
		const struct count_entry *e = &t->slots[i];
		size_t j;

		if (e->count == 0)
			continue;
		j = counts_hash(e->ip, e->a, e->b, e->c) & bigger.mask;
		while (bigger.slots[j].count != 0)
			j = (j + 1) & bigger.mask;
		bigger.slots[j] = *e;
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

int counts_project_ips(const struct count_table *src, struct count_table *dst,
		       const struct count_mask *m,
		       const struct count_entry *ips)
{
	for (size_t i = 0; i <= src->mask; i++) {
		const struct count_entry *e = &src->slots[i];

		if (!e->count)
			continue;
		if (counts_add(dst, (ips ? ips[e->ip].ip : e->ip) & m->ip,
			       e->a & m->a, e->b & m->b, e->c & m->c, e->count))
			return -1;
	}
	return 0;
}

int counts_project(const struct count_table *src, struct count_table *dst,
		   const struct count_mask *m)
{
	return counts_project_ips(src, dst, m, NULL);
}

struct count_entry *counts_entries(const struct count_table *t)
{
	struct count_entry *v = malloc((t->used ? t->used : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].count)
			v[n++] = t->slots[i];
	return v;
}
