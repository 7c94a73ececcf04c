/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chains: the call chains of a session (format version 3). Each CHAIN
 * record is interned by its frames, so that equal chains of different
 * CPUs, or written again after a CPU's cache dropped them, get one id;
 * a sample finds its chain by (cpu, the record's id). Id 0 is no chain:
 * a sample without one, or one whose CHAIN record is not in the file
 * (lost with a buffer the kernel could not write; counted).
 */
#ifndef SLEEPY_PARSE_CHAINS_H
#define SLEEPY_PARSE_CHAINS_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "reader.h"

struct chain {
	uint32_t off;		/* its first frame in frames[] */
	uint8_t nr_kernel;	/* frames[off...]: kernel callers, */
	uint8_t nr_user;	/* then user addresses, innermost first */
	uint8_t flags;		/* SLEEPY_CHAIN_F_* */
	uint8_t nr_table;	/* user return addresses found by unwind
				 * tables, the first ones (version 6)
				 */
};

struct chain_ref;

struct chain_table {
	struct chain *v;	/* by id; v[0] is no chain */
	size_t n, cap;
	uint64_t *frames;
	size_t nframes, cap_frames;
	struct hindex index;	/* by content: id */
	struct chain_ref *refs;	/* (cpu, record id) -> id */
	size_t nrefs, ref_mask;
	uint64_t records;	/* CHAIN records read */
	uint64_t lost;		/* samples whose CHAIN record was missing */
};

int chains_init(struct chain_table *t);
void chains_free(struct chain_table *t);
/*
 * The id of these frames (nr_kernel + nr_user of them) and flags, interned
 * if new (a table of frame lists: the logical stacks' too, lstack.h);
 * 0 when out of memory.
 */
uint32_t chains_intern(struct chain_table *t, uint8_t nr_kernel,
		       uint8_t nr_user, uint8_t flags, const uint64_t *frames);
/* Intern a CHAIN record. Returns 0, or -1 when out of memory. */
int chains_add(struct chain_table *t, const struct sleepy_chain *c);
/* The id of CPU cpu's chain id, or 0 (then counted as lost). */
uint32_t chains_find(struct chain_table *t, uint16_t cpu, uint32_t id);
/* The same, counting nothing. */
uint32_t chains_lookup(const struct chain_table *t, uint16_t cpu,
		       uint32_t id);

static inline const struct chain *chain_get(const struct chain_table *t,
					    uint32_t id)
{
	return &t->v[id];
}

static inline const uint64_t *chain_frames(const struct chain_table *t,
					   uint32_t id)
{
	return t->frames + t->v[id].off;
}

#endif /* SLEEPY_PARSE_CHAINS_H */
