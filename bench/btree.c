// SPDX-License-Identifier: GPL-2.0
/*
 * btree: the SLEEPY paper's third benchmark. N operations on a B-tree of
 * 64-bit keys: 20% inserts of random keys, 80% lookups of random keys.
 * Traversal is by loops, insertion is recursive, nodes have no parent
 * pointers. The work is split into the functions the paper profiles.
 *
 * Random numbers come from a 64-bit LCG with a fixed seed, so a run is
 * deterministic: the test suite recomputes the checksum with a plain set.
 */
#include "bench_common.h"

#define MAX_KEYS 31 /* keys per node; a full node splits around the median */
#define KEY_SPACE (1u << 20)
#define SEED 0x5eed5eedULL

struct node {
	int nkeys;
	int leaf;
	uint64_t keys[MAX_KEYS];
	struct node *child[MAX_KEYS + 1];
};

/* A split's result, passed up the recursion instead of a parent pointer. */
struct split {
	int happened;
	uint64_t key;
	struct node *right;
};

static const char usage[] =
	"usage: btree [--quick] [N]\n"
	"N operations on a B-tree (default 3000000, the paper's; --quick:\n"
	"100000): 20% inserts, 80% lookups of seeded random keys. Prints\n"
	"the counts, a checksum and the elapsed time of the work.\n";

static uint64_t rng_state = SEED;

uint64_t next_random(void);
int find_index(const struct node *n, uint64_t key);
struct node *find_child(const struct node *n, uint64_t key);
int lookup(const struct node *root, uint64_t key);
uint64_t get_parent_key(const struct node *n);
struct split insert_rec(struct node *n, uint64_t key, int *added);
struct node *insert(struct node *root, uint64_t key, int *added);

uint64_t next_random(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return rng_state >> 33;
}

static struct node *new_node(int leaf)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n) {
		fprintf(stderr, "btree: out of memory\n");
		exit(1);
	}
	n->leaf = leaf;
	return n;
}

/* The first slot whose key is >= key (nkeys if none): a linear scan. */
int find_index(const struct node *n, uint64_t key)
{
	int i = 0;

	while (i < n->nkeys && n->keys[i] < key)
		i++;
	return i;
}

struct node *find_child(const struct node *n, uint64_t key)
{
	return n->child[find_index(n, key)];
}

int lookup(const struct node *root, uint64_t key)
{
	const struct node *n = root;

	while (n) {
		int i = find_index(n, key);

		if (i < n->nkeys && n->keys[i] == key)
			return 1;
		if (n->leaf)
			return 0;
		n = find_child(n, key);
	}
	bench_print_cpu();
	return 0;
}

/* The median key of a full node: the one that moves up on a split. */
uint64_t get_parent_key(const struct node *n)
{
	return n->keys[n->nkeys / 2];
}

/* Split full node n around its median; the right half goes to s.right. */
static struct split split_node(struct node *n)
{
	struct split s = { 1, get_parent_key(n), new_node(n->leaf) };
	int mid = n->nkeys / 2;
	int j;

	for (j = mid + 1; j < n->nkeys; j++)
		s.right->keys[j - mid - 1] = n->keys[j];
	if (!n->leaf)
		for (j = mid + 1; j <= n->nkeys; j++)
			s.right->child[j - mid - 1] = n->child[j];
	s.right->nkeys = n->nkeys - mid - 1;
	n->nkeys = mid;
	return s;
}

/* Insert key at slot i of n (with right child rc when n is internal). */
static void insert_at(struct node *n, int i, uint64_t key, struct node *rc)
{
	for (int j = n->nkeys; j > i; j--) {
		n->keys[j] = n->keys[j - 1];
		n->child[j + 1] = n->child[j];
	}
	n->keys[i] = key;
	n->child[i + 1] = rc;
	n->nkeys++;
}

/* Recursive insert below n; a split of n is reported to the caller. */
struct split insert_rec(struct node *n, uint64_t key, int *added)
{
	struct split none = { 0, 0, NULL };
	int i = find_index(n, key);

	if (i < n->nkeys && n->keys[i] == key)
		return none;
	if (n->leaf) {
		insert_at(n, i, key, NULL);
		*added = 1;
	} else {
		struct split s = insert_rec(find_child(n, key), key, added);

		if (!s.happened)
			return none;
		insert_at(n, find_index(n, s.key), s.key, s.right);
	}
	if (n->nkeys < MAX_KEYS)
		return none;
	return split_node(n);
}

struct node *insert(struct node *root, uint64_t key, int *added)
{
	struct split s = insert_rec(root, key, added);
	struct node *r;

	if (!s.happened)
		return root;
	r = new_node(0);
	r->keys[0] = s.key;
	r->child[0] = root;
	r->child[1] = s.right;
	r->nkeys = 1;
	return r;
}

int main(int argc, char **argv)
{
	uint64_t n = bench_size(argc, argv, usage, 3000000ULL, 100000ULL);
	uint64_t inserts = 0, lookups = 0, found = 0, distinct = 0;
	struct node *root = new_node(1);
	double t0, t1;

	t0 = bench_now();
	for (uint64_t op = 0; op < n; op++) {
		uint64_t r = next_random();
		uint64_t key = next_random() % KEY_SPACE;

		if (r % 10 < 2) {
			int added = 0;

			root = insert(root, key, &added);
			inserts++;
			distinct += (uint64_t)added;
		} else {
			lookups++;
			found += (uint64_t)lookup(root, key);
		}
	}
	t1 = bench_now();
	printf("btree n=%" PRIu64 " inserts=%" PRIu64 " distinct=%" PRIu64
	       " lookups=%" PRIu64 " found=%" PRIu64 " checksum=%" PRIu64
	       " elapsed=%.9f",
	       n, inserts, distinct, lookups, found,
	       (uint64_t)(found * 2654435761ULL + distinct), t1 - t0);
	bench_print_cpu();
	return 0;
}
