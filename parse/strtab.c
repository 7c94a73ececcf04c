// SPDX-License-Identifier: GPL-2.0
/* strtab: interned strings; see strtab.h. */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ h >> 29;
}

/* The hash of the string of slot value id (its index + 1). */
static uint64_t str_hash(const void *table, uint32_t id)
{
	const struct strtab *t = table;

	return hash_bytes(t->v[id - 1], strlen(t->v[id - 1]));
}

static int rehash(struct strtab *t, size_t nslots)
{
	return hindex_build(&t->index, nslots, t, 1, (uint32_t)t->n + 1,
			    str_hash);
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	if (rehash(t, 256))
		return -1;
	return strtab_intern(t, "") == 0 ? 0 : -1;
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	hindex_free(&t->index);
	memset(t, 0, sizeof(*t));
}

uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t len)
{
	size_t j = hash_bytes(s, len) & t->index.mask;
	char *copy, **grown;

	for (; t->index.slot[j]; j = hindex_next(&t->index, j)) {
		const char *v = t->v[t->index.slot[j] - 1];

		if (!strncmp(v, s, len) && v[len] == '\0')
			return t->index.slot[j] - 1;
	}
	if (t->n >= UINT32_MAX - 2)
		return STRTAB_NOMEM;
	grown = array_room(t->v, &t->cap, t->n, sizeof(*grown), 256);
	if (!grown)
		return STRTAB_NOMEM;
	t->v = grown;
	copy = malloc(len + 1);
	if (!copy)
		return STRTAB_NOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->v[t->n] = copy;
	t->index.slot[j] = (uint32_t)++t->n;
	if (!hindex_room(&t->index, t->n) &&
	    rehash(t, 2 * (t->index.mask + 1)))
		return STRTAB_NOMEM;
	return (uint32_t)(t->n - 1);
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}
