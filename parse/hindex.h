/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hindex: an open-addressed index over a table's entries. Its slots (a
 * power of 2 of them) hold entry numbers, 0 for a free slot, and are
 * probed linearly from an entry's hash. The table keeps the entries and
 * compares them; the index only finds where to look.
 */
#ifndef SLEEPY_PARSE_HINDEX_H
#define SLEEPY_PARSE_HINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct hindex {
	uint32_t *slot;
	size_t mask;		/* slots - 1 */
};

/* The hash of entry number id of table, as the table computes it. */
typedef uint64_t hindex_hash_fn(const void *table, uint32_t id);

/* The next slot to probe after slot j. */
static inline size_t hindex_next(const struct hindex *x, size_t j)
{
	return (j + 1) & x->mask;
}

/* Whether n entries leave the index no more than half full. */
static inline bool hindex_room(const struct hindex *x, size_t n)
{
	return 2 * n <= x->mask + 1;
}

/*
 * Index entries first..end-1 of table afresh, in nslots slots (a power
 * of 2, more than end - first). 0, or -1 when out of memory (the index is
 * then unchanged).
 */
static inline int hindex_build(struct hindex *x, size_t nslots,
			       const void *table, uint32_t first,
			       uint32_t end, hindex_hash_fn *hash)
{
	uint32_t *slot = calloc(nslots, sizeof(*slot));

	if (!slot)
		return -1;
	free(x->slot);
	x->slot = slot;
	x->mask = nslots - 1;
	for (uint32_t id = first; id < end; id++) {
		size_t j = hash(table, id) & x->mask;

		while (x->slot[j])
			j = hindex_next(x, j);
		x->slot[j] = id;
	}
	return 0;
}

static inline void hindex_free(struct hindex *x)
{
	free(x->slot);
	x->slot = NULL;
	x->mask = 0;
}

#endif /* SLEEPY_PARSE_HINDEX_H */
