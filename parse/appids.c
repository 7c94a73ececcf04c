// SPDX-License-Identifier: GPL-2.0
/* appids: the appid -> name#instance table; see appids.h. */
#include "appids.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"

static uint64_t appid_hash(uint32_t appid)
{
	return ((uint64_t)appid * 0x9e3779b97f4a7c15ull) >> 32;
}

/* The hash of the entry of slot value id (its position in v + 1). */
static uint64_t entry_hash(const void *table, uint32_t id)
{
	const struct appid_table *t = table;

	return appid_hash(t->v[id - 1].appid);
}

void appids_init(struct appid_table *t)
{
	memset(t, 0, sizeof(*t));
}

void appids_free(struct appid_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].path);
	}
	free(t->v);
	hindex_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* Grow the index to twice the entries (at least 64 slots) and rehash. */
static int rehash(struct appid_table *t)
{
	size_t nslots = 64;

	while (nslots < 2 * (t->n + 1))
		nslots *= 2;
	return hindex_build(&t->index, nslots, t, 1, (uint32_t)t->n + 1,
			    entry_hash);
}

static struct appid_info *lookup(const struct appid_table *t, uint32_t appid)
{
	const struct hindex *x = &t->index;

	if (!x->slot)
		return NULL;
	for (size_t j = appid_hash(appid) & x->mask; x->slot[j];
	     j = hindex_next(x, j))
		if (t->v[x->slot[j] - 1].appid == appid)
			return &t->v[x->slot[j] - 1];
	return NULL;
}

const struct appid_info *appids_find(const struct appid_table *t,
				     uint32_t appid)
{
	return lookup(t, appid);
}

int appids_add(struct appid_table *t, const struct sleepy_appid *a)
{
	struct appid_info *e = lookup(t, a->appid);
	char *name = strndup(a->name, a->name_len);
	char *path = strndup(a->path, a->path_len);

	if (!name || !path)
		goto nomem;
	if (e) {
		t->duplicates++;
		free(e->name);
		free(e->path);
	} else {
		if (t->n >= UINT32_MAX - 1)
			goto nomem;
		e = array_room(t->v, &t->cap, t->n, sizeof(*e), 64);
		if (!e)
			goto nomem;
		t->v = e;
		/* Keep the index at most half full. */
		if (!t->index.slot || !hindex_room(&t->index, t->n + 1)) {
			if (rehash(t))
				goto nomem;
		}
		e = &t->v[t->n];
		for (size_t j = appid_hash(a->appid) & t->index.mask;;
		     j = hindex_next(&t->index, j)) {
			if (!t->index.slot[j]) {
				t->index.slot[j] = (uint32_t)(++t->n);
				break;
			}
		}
	}
	e->appid = a->appid;
	e->instance = a->instance;
	e->pid = a->pid;
	e->parent_appid = a->parent_appid;
	e->origin = a->origin;
	e->flags = a->flags;
	e->time_ns = a->time_ns;
	e->name = name;
	e->path = path;
	return 0;
nomem:
	free(name);
	free(path);
	return -1;
}

int appids_order(const struct appid_info *a, uint32_t appid_a,
		 const struct appid_info *b, uint32_t appid_b, bool names_only)
{
	if (a && b) {
		int c = strcmp(a->name, b->name);

		if (c || names_only)
			return c;
		if (a->instance != b->instance)
			return a->instance < b->instance ? -1 : 1;
	} else if (a || b) {
		return a ? -1 : 1;
	}
	return appid_a < appid_b ? -1 : appid_a > appid_b;
}
