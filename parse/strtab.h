/* SPDX-License-Identifier: GPL-2.0 */
/*
 * strtab: interned strings. Equal strings get equal ids, so reports
 * compare symbols, DSOs and source lines by id and only sort by text.
 * Id 0 is the empty string.
 */
#ifndef SLEEPY_PARSE_STRTAB_H
#define SLEEPY_PARSE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

#define STRTAB_NOMEM UINT32_MAX

struct strtab {
	char **v;		/* id -> string (owned) */
	size_t n, cap;
	struct hindex index;	/* slot values: id + 1 */
};

int strtab_init(struct strtab *t);
void strtab_free(struct strtab *t);
/* The id of len bytes at s (copied on first sight), or STRTAB_NOMEM. */
uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t len);
uint32_t strtab_intern(struct strtab *t, const char *s);

static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return t->v[id];
}

#endif /* SLEEPY_PARSE_STRTAB_H */
