// SPDX-License-Identifier: GPL-2.0
/*
 * uwtruth: a known call tree for the unwind-table tests, built with
 * -O2 -fomit-frame-pointer (so that a walk of the frame pointers gets it
 * wrong), as a static binary and as a program whose tree is in a shared
 * library (uwtruth-dyn, libuwtruth.so; UWTRUTH_LIB defined there).
 *
 *   uwtruth tree SECONDS   each round, uw_recurse(4) calls uw_path_a,
 *                          which calls uw_leaf, three times at its
 *                          deepest; then uw_path_b calls uw_leaf once:
 *                          uw_leaf's time is 3:1 through the two paths
 *   uwtruth vdso SECONDS   clock_gettime() in a loop: in the vDSO
 *   uwtruth twin SECONDS   phases of 0.3 s through uw_twin_a, then of
 *                          0.1 s through uw_twin_b, the same code: under
 *                          either, uw_shared's frames below (uw_chain x5,
 *                          uw_leaf) are the same registers and words, and
 *                          only the return address into the twin differs
 *                          (for the CPU's memo of its last walk, which
 *                          must see it: chain_walk.h's struct uw_memo)
 *
 * The true stacks, outermost first:
 *   main uw_run uw_recurse x5 uw_path_a uw_leaf
 *   main uw_run uw_path_b uw_leaf
 *   main uw_vdso clock_gettime ...
 *   main uw_twin uw_twin_a|uw_twin_b uw_shared uw_chain x5 uw_leaf
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOIPA __attribute__((noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#ifdef UWTRUTH_MAIN
/* uwtruth-dyn: the tree is libuwtruth.so's. */
double uw_run(double seconds);
long uw_vdso(double seconds);
double uw_twin(double seconds);
#else

/*
 * The work: 10,000 to 30,000 dependent multiplies, 20,000 on average,
 * the count drawn afresh each call (xorshift), the same way through
 * either path. A fixed count made a round a fixed number of instructions,
 * and under -icount the ticks, a fixed number apart too, then fell on a
 * few phases of the round only: the split came out 5:2 (2026-11-28)
 * rather than 3:1, whatever the walk.
 */
static unsigned int uw_seed = 2463534242u;

NOIPA double uw_leaf(double x)
{
	int n;

	uw_seed ^= uw_seed << 13;
	uw_seed ^= uw_seed >> 17;
	uw_seed ^= uw_seed << 5;
	n = 10000 + (int)(uw_seed % 20001);
	for (int i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	BARRIER();
	return x;
}

NOIPA double uw_path_a(double x)
{
	double r = uw_leaf(x);

	BARRIER();
	return r + 1.0;
}

NOIPA double uw_path_b(double x)
{
	double r = uw_leaf(x);

	BARRIER();
	return r * 0.5;
}

/* Five frames of itself, then three calls of path a. */
NOIPA double uw_recurse(int depth, double x)
{
	double r;

	if (!depth) {
		r = uw_path_a(x);
		r += uw_path_a(r);
		r += uw_path_a(r);
		BARRIER();
		return r;
	}
	r = uw_recurse(depth - 1, x);
	BARRIER();
	return r + 1.0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOIPA double uw_run(double seconds)
{
	double end = now() + seconds, x = 1.0;

	while (now() < end) {
		x = uw_recurse(4, x) * 1e-9;
		x = uw_path_b(x) * 1e-9;
	}
	BARRIER();
	return x;
}

/* Five frames of itself, then the leaf. */
NOIPA double uw_chain(int depth, double x)
{
	double r;

	if (!depth)
		r = uw_leaf(x);
	else
		r = uw_chain(depth - 1, x);
	BARRIER();
	return r + 1.0;
}

NOIPA double uw_shared(double x)
{
	double r = uw_chain(4, x);

	BARRIER();
	return r * 0.5;
}

NOIPA double uw_twin_a(double x)
{
	double r = uw_shared(x);

	BARRIER();
	return r - 1.0;
}

NOIPA double uw_twin_b(double x)
{
	double r = uw_shared(x);

	BARRIER();
	return r - 1.0;
}

NOIPA double uw_twin(double seconds)
{
	double t = now(), end = t + seconds, x = 1.0;

	while (t < end) {
		for (t += 0.3; now() < t;)
			x = uw_twin_a(x) * 1e-9;
		for (t += 0.1; now() < t;)
			x = uw_twin_b(x) * 1e-9;
	}
	BARRIER();
	return x;
}

NOIPA long uw_vdso(double seconds)
{
	double end = now() + seconds;
	long n = 0;

	while (now() < end)
		n++;
	BARRIER();
	return n;
}
#endif

#ifndef UWTRUTH_LIB
int main(int argc, char **argv)
{
	double s = argc == 3 ? atof(argv[2]) : -1;

	if (argc != 3 || s <= 0 || (strcmp(argv[1], "tree") &&
				    strcmp(argv[1], "vdso") &&
				    strcmp(argv[1], "twin"))) {
		fprintf(stderr, "usage: uwtruth tree|vdso|twin SECONDS\n");
		return 2;
	}
	if (!strcmp(argv[1], "tree"))
		printf("%g\n", uw_run(s));
	else if (!strcmp(argv[1], "twin"))
		printf("%g\n", uw_twin(s));
	else
		printf("%ld\n", uw_vdso(s));
	return 0;
}
#endif
