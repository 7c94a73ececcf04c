/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maps: the session's executable mappings (MMAP records), per appid.
 *
 * Records are kept in file order while the file is read; maps_build() then
 * turns each appid's records into disjoint address ranges, a later record
 * winning where records overlap (a later mmap replaces what was mapped
 * there), so that maps_find() is a binary search. Memory grows with the
 * number of MMAP records.
 */
#ifndef SLEEPY_PARSE_MAPS_H
#define SLEEPY_PARSE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "strtab.h"

struct dso;

struct map {
	uint64_t start, end;	/* [start, end); end saturates at 2^64 - 1 */
	uint64_t pgoff;
	uint64_t time_ns;
	uint32_t appid, pid;
	uint32_t path;		/* strtab id of the recorded path */
	uint8_t build_id_len;
	uint8_t build_id[SLEEPY_BUILD_ID_MAX];
	bool anon;		/* anonymous memory (a JIT's): no file */
	int state;		/* symbolizer's: 0 unchecked, else a reason+1 */
	struct dso *dso;	/* symbolizer's */
};

struct map_seg {
	uint64_t lo, hi;	/* [lo, hi) */
	uint32_t map;		/* index into v */
};

struct map_group {
	uint32_t appid;
	size_t first, n;	/* its segments */
};

struct maps {
	struct map *v;		/* in file order */
	size_t n, cap;
	struct map_seg *segs;
	size_t nsegs;
	struct map_group *groups;	/* sorted by appid */
	size_t ngroups;
	size_t ignored;		/* zero-length records */
};

void maps_init(struct maps *m);
void maps_free(struct maps *m);
/* Record an MMAP record. Returns 0, or -1 when out of memory. */
int maps_add(struct maps *m, const struct sleepy_mmap *rec,
	     struct strtab *names);
/* Build the lookup structure. Returns 0, or -1 when out of memory. */
int maps_build(struct maps *m);
/* The mapping of appid that covers ip, or NULL. */
struct map *maps_find(const struct maps *m, uint32_t appid, uint64_t ip);

#endif /* SLEEPY_PARSE_MAPS_H */
