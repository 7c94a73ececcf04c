/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counts: sample counts keyed by (appid, ip), an open-addressing hash table
 * with linear probing. Memory grows with the number of distinct keys only.
 * Reports that need fewer key fields set the others to 0 (see
 * counts_project()).
 */
#ifndef SLEEPY_PARSE_COUNTS_H
#define SLEEPY_PARSE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct count_entry {
	uint64_t ip;
	uint64_t count;		/* 0: the slot is free */
	uint32_t appid;
};

struct count_table {
	struct count_entry *slots;
	size_t mask;		/* number of slots - 1 (a power of two) */
	size_t used;
};

int counts_init(struct count_table *t);
void counts_free(struct count_table *t);
/* Double the table; used by counts_add(). Returns 0 or -1 (no memory). */
int counts_grow(struct count_table *t);

/* The 64-bit hash of a key; its low bits pick the slot. */
static inline uint64_t counts_hash(uint32_t appid, uint64_t ip)
{
	/* A multiplicative mix: ip's low bits vary most, appid's all. */
	uint64_t h = (ip ^ (uint64_t)appid * 0x9e3779b97f4a7c15ull) *
		0xbf58476d1ce4e5b9ull;

	return h ^ h >> 32;
}

/* Start loading the key's slot into the cache (see counts_add_hashed()). */
static inline void counts_prefetch(const struct count_table *t, uint64_t hash)
{
	__builtin_prefetch(&t->slots[hash & t->mask], 1);
}

/*
 * Add n samples to (appid, ip), whose counts_hash() is hash. Callers with
 * many keys to add hash and prefetch a few keys ahead of adding them, to
 * overlap the cache misses of a large table. Returns 0, or -1 when out of
 * memory.
 */
static inline int counts_add_hashed(struct count_table *t, uint32_t appid,
				    uint64_t ip, uint64_t hash, uint64_t n)
{
	size_t i = hash & t->mask;

	for (;;) {
		struct count_entry *e = &t->slots[i];

		if (e->count == 0)
			break;
		if (e->ip == ip && e->appid == appid) {
			e->count += n;
			return 0;
		}
		i = (i + 1) & t->mask;
	}
	/* A new key. Keep the load at most 1/2 so probes stay short. */
	if ((t->used + 1) * 2 > t->mask + 1) {
		if (counts_grow(t))
			return -1;
		i = hash & t->mask;
		while (t->slots[i].count != 0)
			i = (i + 1) & t->mask;
	}
	t->slots[i].ip = ip;
	t->slots[i].appid = appid;
	t->slots[i].count = n;
	t->used++;
	return 0;
}

/* Add n samples to (appid, ip). Returns 0, or -1 when out of memory. */
static inline int counts_add(struct count_table *t, uint32_t appid,
			     uint64_t ip, uint64_t n)
{
	return counts_add_hashed(t, appid, ip, counts_hash(appid, ip), n);
}

/*
 * Adding one sample at a time to a table larger than the CPU caches costs a
 * cache miss per sample. A pipe hashes each key and prefetches its slot
 * COUNTS_PIPE keys before it adds it, so that the misses overlap.
 */
#define COUNTS_PIPE 16	/* a power of two */

struct counts_pipe {
	struct count_table *t;
	unsigned int head;	/* next position to fill */
	unsigned int n;		/* keys waiting */
	struct {
		uint64_t ip;
		uint64_t hash;
		uint32_t appid;
	} q[COUNTS_PIPE];
};

static inline void counts_pipe_init(struct counts_pipe *p,
				    struct count_table *t)
{
	p->t = t;
	p->head = 0;
	p->n = 0;
}

/* Add one sample of (appid, ip), perhaps later. Returns 0 or -1. */
static inline int counts_pipe_add(struct counts_pipe *p, uint32_t appid,
				  uint64_t ip)
{
	const uint64_t hash = counts_hash(appid, ip);
	unsigned int h = p->head;

	counts_prefetch(p->t, hash);
	if (p->n == COUNTS_PIPE) {
		/* Full: the oldest key is at head. */
		if (counts_add_hashed(p->t, p->q[h].appid, p->q[h].ip,
				      p->q[h].hash, 1))
			return -1;
	} else {
		p->n++;
	}
	p->q[h].ip = ip;
	p->q[h].hash = hash;
	p->q[h].appid = appid;
	p->head = (h + 1) & (COUNTS_PIPE - 1);
	return 0;
}

/* Add the keys still waiting. Returns 0 or -1. */
static inline int counts_pipe_flush(struct counts_pipe *p)
{
	for (; p->n > 0; p->n--) {
		unsigned int i = (p->head - p->n) & (COUNTS_PIPE - 1);

		if (counts_add_hashed(p->t, p->q[i].appid, p->q[i].ip,
				      p->q[i].hash, 1))
			return -1;
	}
	return 0;
}

/*
 * Add src's counts into dst with the key masked: appid & appid_mask,
 * ip & ip_mask (0 drops the field, ~0 keeps it). Returns 0 or -1.
 */
int counts_project(const struct count_table *src, struct count_table *dst,
		   uint32_t appid_mask, uint64_t ip_mask);

/* The used entries, in no particular order, as a new array (or NULL). */
struct count_entry *counts_entries(const struct count_table *t);

#endif /* SLEEPY_PARSE_COUNTS_H */
