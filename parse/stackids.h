/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stackids: the distinct stacks of a session's samples, numbered from 0
 * in the order they were first sampled, so that the SQLite database can
 * give every row of samples its stack. A stack is a calltree.h stacks
 * entry: (the IP, the appid, the chain's id), and the entries kept here
 * have that layout (count 0), for stack_addrs().
 */
#ifndef SLEEPY_PARSE_STACKIDS_H
#define SLEEPY_PARSE_STACKIDS_H

#include <stddef.h>
#include <stdint.h>

#include "counts.h"

struct stack_ids {
	struct count_table map;	/* (ip, appid, chain) -> id + 1 */
	struct count_entry *v;	/* by id */
	size_t n, cap;
};

int stackids_init(struct stack_ids *s);
void stackids_free(struct stack_ids *s);

/* The id of (ip, appid, chain), added if new; -1 when out of memory. */
int64_t stackids_intern(struct stack_ids *s, uint64_t ip, uint32_t appid,
			uint32_t chain);

/* The stacks entry of id (< s->n). */
static inline const struct count_entry *stackids_get(const struct stack_ids *s,
						     uint64_t id)
{
	return &s->v[id];
}

#endif /* SLEEPY_PARSE_STACKIDS_H */
