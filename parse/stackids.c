// SPDX-License-Identifier: GPL-2.0
/* stackids: the distinct stacks of a session; see stackids.h. */
#include "stackids.h"

#include <stdlib.h>

int stackids_init(struct stack_ids *s)
{
	*s = (struct stack_ids){ 0 };
	return counts_init(&s->map);
}

void stackids_free(struct stack_ids *s)
{
	counts_free(&s->map);
	free(s->v);
	*s = (struct stack_ids){ 0 };
}

int64_t stackids_intern(struct stack_ids *s, uint64_t ip, uint32_t appid,
			uint32_t chain)
{
	const struct count_entry *e = counts_find(&s->map, ip, appid, chain, 0);
	struct count_entry *v;

	if (e)
		return (int64_t)(e->count - 1);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;

		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	if (counts_add(&s->map, ip, appid, chain, 0, s->n + 1))
		return -1;
	s->v[s->n] = (struct count_entry){ ip, appid, chain, 0, 0 };
	return (int64_t)s->n++;
}
