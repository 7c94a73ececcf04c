// SPDX-License-Identifier: GPL-2.0
/* chains: a session's call chains; see chains.h. */
#include "chains.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"

struct chain_ref {
	uint64_t key;		/* cpu << 32 | the record's id; 0: free */
	uint32_t id;
};

static uint64_t mix(uint64_t h)
{
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 31;
}

static uint64_t chain_hash(const struct chain *c, const uint64_t *frames)
{
	uint64_t h = mix((uint64_t)c->nr_table << 24 |
			 (uint64_t)c->nr_kernel << 16 | c->nr_user << 8 |
			 c->flags);

	for (size_t i = 0; i < (size_t)c->nr_kernel + c->nr_user; i++)
		h = mix(h ^ frames[i]);
	return h;
}

static size_t nr_frames(const struct chain *c)
{
	return (size_t)c->nr_kernel + c->nr_user;
}

static int same(const struct chain_table *t, uint32_t id,
		const struct chain *c, const uint64_t *frames)
{
	const struct chain *o = &t->v[id];

	return o->nr_kernel == c->nr_kernel && o->nr_user == c->nr_user &&
	       o->flags == c->flags && o->nr_table == c->nr_table &&
	       !memcmp(t->frames + o->off, frames,
		       nr_frames(c) * sizeof(*frames));
}

/* Index every chain again in a table of nslots slots. */
static uint64_t id_hash(const void *table, uint32_t id)
{
	const struct chain_table *t = table;

	return chain_hash(&t->v[id], t->frames + t->v[id].off);
}

static int reindex(struct chain_table *t, size_t nslots)
{
	return hindex_build(&t->index, nslots, t, 1, (uint32_t)t->n,
			    id_hash);
}

static int grow_refs(struct chain_table *t)
{
	size_t nslots = 2 * (t->ref_mask + 1);
	struct chain_ref *refs = calloc(nslots, sizeof(*refs));

	if (!refs)
		return -1;
	for (size_t i = 0; i <= t->ref_mask; i++) {
		size_t j;

		if (!t->refs[i].key)
			continue;
		j = mix(t->refs[i].key) & (nslots - 1);
		while (refs[j].key)
			j = (j + 1) & (nslots - 1);
		refs[j] = t->refs[i];
	}
	free(t->refs);
	t->refs = refs;
	t->ref_mask = nslots - 1;
	return 0;
}

int chains_init(struct chain_table *t)
{
	memset(t, 0, sizeof(*t));
	t->v = calloc(64, sizeof(*t->v));
	t->refs = calloc(64, sizeof(*t->refs));
	if (!t->v || !t->refs || reindex(t, 64)) {
		chains_free(t);
		return -1;
	}
	t->cap = 64;
	t->n = 1;		/* id 0: no chain */
	t->ref_mask = 63;
	return 0;
}

void chains_free(struct chain_table *t)
{
	free(t->v);
	free(t->frames);
	hindex_free(&t->index);
	free(t->refs);
	memset(t, 0, sizeof(*t));
}

/* The id of the chain c with these frames, interned if new; 0: no memory. */
static uint32_t intern(struct chain_table *t, struct chain *c,
		       const uint64_t *frames)
{
	size_t j = chain_hash(c, frames) & t->index.mask, n = nr_frames(c);
	void *v;

	for (; t->index.slot[j]; j = hindex_next(&t->index, j))
		if (same(t, t->index.slot[j], c, frames))
			return t->index.slot[j];
	if (t->n >= UINT32_MAX || !hindex_room(&t->index, t->n + 1))
		return t->n < UINT32_MAX &&
		       !reindex(t, 2 * (t->index.mask + 1)) ?
		       intern(t, c, frames) : 0;
	while (t->nframes + n > t->cap_frames) {
		v = array_room(t->frames, &t->cap_frames, t->cap_frames,
			       sizeof(*t->frames), 1024);
		if (!v)
			return 0;
		t->frames = v;
	}
	v = array_room(t->v, &t->cap, t->n, sizeof(*t->v), 64);
	if (!v)
		return 0;
	t->v = v;
	c->off = (uint32_t)t->nframes;
	if (n)		/* frames may be NULL yet */
		memcpy(t->frames + t->nframes, frames, n * sizeof(*frames));
	t->nframes += n;
	t->v[t->n] = *c;
	t->index.slot[j] = (uint32_t)t->n;
	return (uint32_t)t->n++;
}

uint32_t chains_intern(struct chain_table *t, uint8_t nr_kernel,
		       uint8_t nr_user, uint8_t flags, const uint64_t *frames)
{
	struct chain c = {
		.nr_kernel = nr_kernel, .nr_user = nr_user, .flags = flags,
	};

	return intern(t, &c, frames);
}

int chains_add(struct chain_table *t, const struct sleepy_chain *rec)
{
	struct chain c = {
		.nr_kernel = rec->nr_kernel, .nr_user = rec->nr_user,
		.flags = rec->flags, .nr_table = rec->nr_table,
	};
	uint64_t frames[2 * UINT8_MAX], key = (uint64_t)rec->cpu << 32 | rec->id;
	size_t j;
	uint32_t id;

	for (size_t i = 0; i < nr_frames(&c); i++)
		frames[i] = sleepy_chain_frame(rec, i);
	id = intern(t, &c, frames);
	if (!id)
		return -1;
	t->records++;
	if (2 * (t->nrefs + 1) > t->ref_mask + 1 && grow_refs(t))
		return -1;
	/* A (cpu, id) written again (a later kernel's cache) is replaced. */
	for (j = mix(key) & t->ref_mask; t->refs[j].key && t->refs[j].key !=
	     key; j = (j + 1) & t->ref_mask)
		;
	t->nrefs += !t->refs[j].key;
	t->refs[j].key = key;
	t->refs[j].id = id;
	return 0;
}

uint32_t chains_lookup(const struct chain_table *t, uint16_t cpu,
		       uint32_t id)
{
	uint64_t key = (uint64_t)cpu << 32 | id;

	for (size_t j = mix(key) & t->ref_mask; t->refs[j].key;
	     j = (j + 1) & t->ref_mask)
		if (t->refs[j].key == key)
			return t->refs[j].id;
	return 0;
}

uint32_t chains_find(struct chain_table *t, uint16_t cpu, uint32_t id)
{
	uint32_t found = chains_lookup(t, cpu, id);

	t->lost += !found;
	return found;
}
