// SPDX-License-Identifier: GPL-2.0
/* lstack: a session's logical stacks; see lstack.h. */
#include "lstack.h"

#include <string.h>

#include "array.h"

static uint64_t off_key_hash(uint64_t a, uint64_t b, uint64_t c)
{
	return counts_hash(0, a, b, c);
}

static uint64_t off_hash(const void *table, uint32_t id)
{
	const struct lstacks *l = table;
	const struct lstack_off *o = &l->off[id];

	return off_key_hash(o->a, o->b, o->c);
}

static int off_reindex(struct lstacks *l, size_t nslots)
{
	return hindex_build(&l->off_index, nslots, l, 1, (uint32_t)l->noff,
			    off_hash);
}

int lstacks_init(struct lstacks *l, bool tree, bool with_chain)
{
	memset(l, 0, sizeof(*l));
	l->tree = tree;
	l->with_chain = with_chain;
	l->noff = 1;		/* off[0]: no entry (a free index slot) */
	if (chains_init(&l->stacks) || counts_init(&l->on) ||
	    off_reindex(l, 64)) {
		lstacks_free(l);
		return -1;
	}
	return 0;
}

void lstacks_free(struct lstacks *l)
{
	chains_free(&l->stacks);
	counts_free(&l->on);
	free(l->off);
	hindex_free(&l->off_index);
	memset(l, 0, sizeof(*l));
}

int64_t lstacks_intern(struct lstacks *l, const struct sleepy_lstack_part *p)
{
	uint64_t frames[2 * SLEEPY_LSTACK_SAMPLE_FRAMES];
	uint32_t id;

	for (unsigned int i = 0; i < p->nr; i++) {
		const struct sleepy_lstack_frame f = sleepy_lstack_get(p, i);

		frames[2 * i] = f.id;
		frames[2 * i + 1] = f.arg;
	}
	id = chains_intern(&l->stacks, 0, (uint8_t)(2 * p->nr), p->flags,
			   frames);
	return id ? (int64_t)id : -1;
}

int lstacks_count(struct lstacks *l, uint64_t ip, uint64_t a, uint32_t chain,
		  uint32_t key)
{
	if (!l->with_chain)
		ip = chain = 0;
	return counts_add(&l->on, ip, a, chain, key, 1);
}

int lstacks_add_off(struct lstacks *l, uint64_t a, uint64_t b, uint64_t c,
		    uint64_t ns)
{
	size_t j = off_key_hash(a, b, c) & l->off_index.mask;
	struct lstack_off *o;
	void *v;

	for (; l->off_index.slot[j]; j = hindex_next(&l->off_index, j)) {
		o = &l->off[l->off_index.slot[j]];
		if (o->a == a && o->b == b && o->c == c) {
			o->records++;
			o->ns += ns;
			return 0;
		}
	}
	if (l->noff >= UINT32_MAX)
		return -1;
	if (!hindex_room(&l->off_index, l->noff + 1))
		return off_reindex(l, 2 * (l->off_index.mask + 1)) ? -1 :
		       lstacks_add_off(l, a, b, c, ns);
	v = array_room(l->off, &l->cap_off, l->noff, sizeof(*l->off), 64);
	if (!v)
		return -1;
	l->off = v;
	l->off[l->noff] = (struct lstack_off){ a, b, c, 1, ns };
	l->off_index.slot[j] = (uint32_t)l->noff++;
	return 0;
}
