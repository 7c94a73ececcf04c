/* SPDX-License-Identifier: GPL-2.0 */
/* array: growing arrays (doubling their capacity when full). */
#ifndef SLEEPY_PARSE_ARRAY_H
#define SLEEPY_PARSE_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Room for element n of array v of *cap elements of size bytes: when it
 * is full, its capacity doubles (first elements at first). Returns the
 * array, perhaps moved, or NULL when out of memory (v is then unchanged).
 */
static inline void *array_room(void *v, size_t *cap, size_t n, size_t size,
			       size_t first)
{
	size_t nc = *cap ? 2 * *cap : first;

	if (n < *cap)
		return v;
	if (nc > SIZE_MAX / size)
		return NULL;
	v = realloc(v, nc * size);
	if (v)
		*cap = nc;
	return v;
}

#endif /* SLEEPY_PARSE_ARRAY_H */
