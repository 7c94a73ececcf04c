// SPDX-License-Identifier: GPL-2.0
/* maps: per-appid executable mappings; see maps.h. */
#include "maps.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

void maps_init(struct maps *m)
{
	memset(m, 0, sizeof(*m));
}

void maps_free(struct maps *m)
{
	free(m->v);
	free(m->segs);
	free(m->groups);
	memset(m, 0, sizeof(*m));
}

int maps_add(struct maps *m, const struct sleepy_mmap *rec,
	     struct strtab *names)
{
	struct map *e;

	if (rec->len == 0) {
		m->ignored++;
		return 0;
	}
	if (m->n >= UINT32_MAX / 2)
		return -1;
	e = array_room(m->v, &m->cap, m->n, sizeof(*e), 64);
	if (!e)
		return -1;
	m->v = e;
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->start = rec->start;
	e->end = rec->start + rec->len < rec->start ? UINT64_MAX :
		rec->start + rec->len;
	e->pgoff = rec->pgoff;
	e->time_ns = rec->time_ns;
	e->appid = rec->appid;
	e->pid = rec->pid;
	e->path = strtab_intern_n(names, rec->path, rec->path_len);
	if (e->path == STRTAB_NOMEM)
		return -1;
	e->build_id_len = rec->build_id_len;
	memcpy(e->build_id, rec->build_id, rec->build_id_len);
	e->anon = rec->flags & SLEEPY_MMAP_F_ANON;
	m->n++;
	return 0;
}

/* Sweep events: a mapping starts or ends at x. */
struct event {
	uint64_t x;
	uint32_t map;
	bool start;
};

static int cmp_event(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	return a->x < b->x ? -1 : a->x > b->x;
}

static const struct map *g_sort_v;

static int cmp_by_appid(const void *pa, const void *pb)
{
	const uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const uint32_t x = g_sort_v[a].appid, y = g_sort_v[b].appid;

	if (x != y)
		return x < y ? -1 : 1;
	return a < b ? -1 : a > b;	/* file order */
}

/* A max-heap of map indexes: the latest record is on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static int add_seg(struct maps *m, uint64_t lo, uint64_t hi, uint32_t map,
		   size_t group_first)
{
	struct map_seg *last = m->nsegs > group_first ?
		&m->segs[m->nsegs - 1] : NULL;

	if (last && last->hi == lo && last->map == map) {
		last->hi = hi;
		return 0;
	}
	m->segs[m->nsegs].lo = lo;
	m->segs[m->nsegs].hi = hi;
	m->segs[m->nsegs].map = map;
	m->nsegs++;
	return 0;
}

int maps_build(struct maps *m)
{
	uint32_t *order = malloc((m->n ? m->n : 1) * sizeof(*order));
	struct event *ev = malloc((2 * m->n + 1) * sizeof(*ev));
	uint32_t *heap = malloc((m->n ? m->n : 1) * sizeof(*heap));
	bool *gone = calloc(m->n ? m->n : 1, sizeof(*gone));
	int rc = -1;

	m->segs = malloc((2 * m->n + 1) * sizeof(*m->segs));
	m->groups = malloc((m->n ? m->n : 1) * sizeof(*m->groups));
	if (!order || !ev || !heap || !gone || !m->segs || !m->groups)
		goto out;
	for (size_t i = 0; i < m->n; i++)
		order[i] = (uint32_t)i;
	g_sort_v = m->v;
	qsort(order, m->n, sizeof(*order), cmp_by_appid);
	for (size_t g0 = 0, g1; g0 < m->n; g0 = g1) {
		const uint32_t appid = m->v[order[g0]].appid;
		size_t nev = 0, nheap = 0, first = m->nsegs;

		for (g1 = g0; g1 < m->n && m->v[order[g1]].appid == appid;
		     g1++) {
			const struct map *e = &m->v[order[g1]];

			ev[nev++] = (struct event){ e->start, order[g1], true };
			ev[nev++] = (struct event){ e->end, order[g1], false };
		}
		qsort(ev, nev, sizeof(*ev), cmp_event);
		for (size_t i = 0; i < nev;) {
			const uint64_t x = ev[i].x;

			for (; i < nev && ev[i].x == x; i++) {
				if (ev[i].start)
					heap_push(heap, &nheap, ev[i].map);
				else
					gone[ev[i].map] = true;
			}
			while (nheap && gone[heap[0]])
				heap_pop(heap, &nheap);
			if (nheap && i < nev)
				add_seg(m, x, ev[i].x, heap[0], first);
		}
		m->groups[m->ngroups].appid = appid;
		m->groups[m->ngroups].first = first;
		m->groups[m->ngroups].n = m->nsegs - first;
		m->ngroups++;
	}
	rc = 0;
out:
	free(order);
	free(ev);
	free(heap);
	free(gone);
	return rc;
}

struct map *maps_find(const struct maps *m, uint32_t appid, uint64_t ip)
{
	size_t lo = 0, hi = m->ngroups;
	const struct map_group *g;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->groups[mid].appid < appid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->ngroups || m->groups[lo].appid != appid)
		return NULL;
	g = &m->groups[lo];
	lo = 0;
	hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->segs[g->first + mid].lo <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ip >= m->segs[g->first + lo - 1].hi)
		return NULL;
	return &m->v[m->segs[g->first + lo - 1].map];
}
