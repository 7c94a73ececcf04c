/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counts: sample counts keyed by (ip, a, b, c), an open-addressing hash
 * table with linear probing. Memory grows with the number of distinct keys
 * only. a packs appid and pid, b packs cpu, mode, the kernel context's
 * key (syscalls.h) and time slice, c is the tid (see the counts_*
 * helpers). Reports that need fewer key fields set the others to
 * 0 (see counts_project()).
 */
#ifndef SLEEPY_PARSE_COUNTS_H
#define SLEEPY_PARSE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct count_entry {
	uint64_t ip;
	uint64_t a;		/* appid | pid << 32 */
	uint64_t b;		/* cpu | mode << 16 | kctx << 24 | slice << 40 */
	uint64_t c;		/* tid */
	uint64_t count;		/* 0: the slot is free */
};

static inline uint64_t counts_a(uint32_t appid, uint32_t pid)
{
	return appid | (uint64_t)pid << 32;
}

/* The most time slices a key tells apart: later ones count as the last. */
#define COUNTS_SLICE_MAX	0xffffffu

static inline uint64_t counts_b(uint16_t cpu, uint8_t mode, uint16_t kctx,
				uint32_t slice)
{
	return cpu | (uint64_t)mode << 16 | (uint64_t)kctx << 24 |
		(uint64_t)slice << 40;
}

/* The time slice of t ns for slices of slice_ns, at most the last. */
static inline uint32_t counts_slice(uint64_t t, uint64_t slice_ns)
{
	const uint64_t s = t / slice_ns;

	return s < COUNTS_SLICE_MAX ? (uint32_t)s : COUNTS_SLICE_MAX;
}

#define CE_APPID(e)	((uint32_t)(e)->a)
#define CE_PID(e)	((uint32_t)((e)->a >> 32))
#define CE_CPU(e)	((uint16_t)(e)->b)
#define CE_MODE(e)	((uint8_t)((e)->b >> 16))
#define CE_KCTX(e)	((uint16_t)((e)->b >> 24))
#define CE_SLICE(e)	((uint32_t)((e)->b >> 40))
#define CE_TID(e)	((uint32_t)(e)->c)
#define MASK_APPID	0xffffffffull
#define MASK_PID	0xffffffff00000000ull
#define MASK_CPU	0xffffull
#define MASK_MODE	0xff0000ull
#define MASK_KCTX	0xffff000000ull
#define MASK_SLICE	0xffffff0000000000ull
#define MASK_TID	0xffffffffull

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
static inline uint64_t counts_hash(uint64_t ip, uint64_t a, uint64_t b,
				   uint64_t c)
{
	/* A multiplicative mix: ip's low bits vary most, a's, b's, c's all. */
	uint64_t h = (ip ^ a * 0x9e3779b97f4a7c15ull ^
		      b * 0xd6e8feb86659fd93ull ^ c * 0x94d049bb133111ebull) *
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
static inline int counts_add_hashed(struct count_table *t, uint64_t ip,
				    uint64_t a, uint64_t b, uint64_t c,
				    uint64_t hash, uint64_t n)
{
	size_t i = hash & t->mask;

	for (;;) {
		struct count_entry *e = &t->slots[i];

		if (e->count == 0)
			break;
		if (e->ip == ip && e->a == a && e->b == b && e->c == c) {
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
	t->slots[i].a = a;
	t->slots[i].b = b;
	t->slots[i].c = c;
	t->slots[i].count = n;
	t->used++;
	return 0;
}

/* The entry of (ip, a, b, c), or NULL if it has none. */
static inline struct count_entry *counts_find(const struct count_table *t,
					      uint64_t ip, uint64_t a,
					      uint64_t b, uint64_t c)
{
	size_t i = counts_hash(ip, a, b, c) & t->mask;

	for (;; i = (i + 1) & t->mask) {
		struct count_entry *e = &t->slots[i];

		if (e->count == 0)
			return NULL;
		if (e->ip == ip && e->a == a && e->b == b && e->c == c)
			return e;
	}
}

/* Add n samples to (ip, a, b, c). Returns 0, or -1 when out of memory. */
static inline int counts_add(struct count_table *t, uint64_t ip, uint64_t a,
			     uint64_t b, uint64_t c, uint64_t n)
{
	return counts_add_hashed(t, ip, a, b, c, counts_hash(ip, a, b, c), n);
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
		uint64_t ip, a, b, c;
		uint64_t hash;
	} q[COUNTS_PIPE];
};

static inline void counts_pipe_init(struct counts_pipe *p,
				    struct count_table *t)
{
	p->t = t;
	p->head = 0;
	p->n = 0;
}

/* Add one sample of (ip, a, b, c), perhaps later. Returns 0 or -1. Always
 * inlined: it is the hot path of the pass over the file. */
static inline __attribute__((always_inline)) int
counts_pipe_add(struct counts_pipe *p, uint64_t ip, uint64_t a, uint64_t b,
		uint64_t c)
{
	const uint64_t hash = counts_hash(ip, a, b, c);
	unsigned int h = p->head;

	counts_prefetch(p->t, hash);
	if (p->n == COUNTS_PIPE) {
		/* Full: the oldest key is at head. */
		if (counts_add_hashed(p->t, p->q[h].ip, p->q[h].a,
				      p->q[h].b, p->q[h].c, p->q[h].hash, 1))
			return -1;
	} else {
		p->n++;
	}
	p->q[h].ip = ip;
	p->q[h].a = a;
	p->q[h].b = b;
	p->q[h].c = c;
	p->q[h].hash = hash;
	p->head = (h + 1) & (COUNTS_PIPE - 1);
	return 0;
}

/* Add the keys still waiting. Returns 0 or -1. */
static inline int counts_pipe_flush(struct counts_pipe *p)
{
	for (; p->n > 0; p->n--) {
		unsigned int i = (p->head - p->n) & (COUNTS_PIPE - 1);

		if (counts_add_hashed(p->t, p->q[i].ip, p->q[i].a,
				      p->q[i].b, p->q[i].c, p->q[i].hash, 1))
			return -1;
	}
	return 0;
}

/* Which key fields to keep: each field is and-ed with its mask. */
struct count_mask {
	uint64_t ip, a, b, c;
};

/*
 * Add src's counts into dst with the key masked (0 drops a field, ~0
 * keeps it). Returns 0 or -1.
 */
int counts_project(const struct count_table *src, struct count_table *dst,
		   const struct count_mask *m);
/* The same for a table whose keys hold an index into ips where the IP
 * goes (stackids.h): the IP is ips[index].ip. */
int counts_project_ips(const struct count_table *src, struct count_table *dst,
		       const struct count_mask *m,
		       const struct count_entry *ips);

/* The used entries, in no particular order, as a new array (or NULL). */
struct count_entry *counts_entries(const struct count_table *t);

#endif /* SLEEPY_PARSE_COUNTS_H */
