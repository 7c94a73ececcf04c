/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lstack: the logical stacks of a session (format version 4). A program
 * pushes frames {id, arg} on its threads' logical stacks; the kernel
 * copies a registered thread's stack into each of its samples, and into
 * an OFFCPU record when it runs again after blocking.
 *
 * Each distinct logical stack, its frames bottom first and its
 * SLEEPY_LSTACK_F_* flags, gets an id from 1 in the order first seen (a
 * stack left out, torn or unreadable, is one of no frames with its flag);
 * key 0 is none: the thread had not registered a stack. The pass keeps:
 *
 * - on: for the activity tree (--tree lstack), samples counted by (ip,
 *   a: appid | pid << 32, b: the chain's id, c: the stack's key); ip and
 *   the chain only with --lstack-with-callchain, else 0;
 * - off: the OFFCPU records that pass the filters, by a count key (a:
 *   appid | pid << 32, b: cpu | state << 16 | slice << 40, c: tid |
 *   the stack's key << 32), with their number and their off-CPU time.
 */
#ifndef SLEEPY_PARSE_LSTACK_H
#define SLEEPY_PARSE_LSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chains.h"
#include "counts.h"
#include "hindex.h"
#include "reader.h"

/* A count key's c: the tid, and the stack's key above it. */
#define CE_LSTACK(e)	((uint32_t)((e)->c >> 32))
#define CE_STATE(e)	CE_MODE(e)	/* an OFFCPU key's b: its state */

/* The OFFCPU records of one count key. */
struct lstack_off {
	uint64_t a, b, c;
	uint64_t records;
	uint64_t ns;		/* off the CPU (within --from, --to) */
};

struct lstacks {
	struct chain_table stacks;	/* by id: frames id, arg, id, ... */
	bool tree;			/* on is kept */
	bool with_chain;		/* on keeps ip and chain */
	struct count_table on;
	struct lstack_off *off;		/* off[1..noff) */
	size_t noff, cap_off;
	struct hindex off_index;
};

/* tree: keep the samples for the activity tree (with_chain: by their
 * machine stacks too). 0, or -1 when out of memory. */
int lstacks_init(struct lstacks *l, bool tree, bool with_chain);
void lstacks_free(struct lstacks *l);

/* The key of a logical stack part (interned), or -1 when out of memory. */
int64_t lstacks_intern(struct lstacks *l, const struct sleepy_lstack_part *p);

/* One sample of (ip, a, chain) with the stack of key, for the tree.
 * 0, or -1 when out of memory. */
int lstacks_count(struct lstacks *l, uint64_t ip, uint64_t a, uint32_t chain,
		  uint32_t key);

/* An OFFCPU record of count key (a, b, c), off the CPU for ns. 0 or -1. */
int lstacks_add_off(struct lstacks *l, uint64_t a, uint64_t b, uint64_t c,
		    uint64_t ns);

/* The stack of key (>= 1): its frames as id, arg pairs, *nr of them. */
static inline const uint64_t *lstacks_get(const struct lstacks *l,
					  uint32_t key, unsigned int *nr,
					  uint8_t *flags)
{
	const struct chain *c = chain_get(&l->stacks, key);

	*nr = c->nr_user / 2u;
	*flags = c->flags;
	return chain_frames(&l->stacks, key);
}

/* The number of stacks: keys 1 to lstacks_n() - 1. */
static inline size_t lstacks_n(const struct lstacks *l)
{
	return l->stacks.n;
}

#endif /* SLEEPY_PARSE_LSTACK_H */
