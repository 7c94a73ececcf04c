// SPDX-License-Identifier: GPL-2.0
/*
 * calltree: programs of known call trees, for the call-chain tests (test
 * code only). Built with frame pointers; every function here is a real,
 * global, non-inlined call, so each shows in its callers' stacks.
 *
 *   calltree tree SECONDS
 *	main calls a -> b -> leaf three times as often as c -> leaf, with
 *	the same work in every leaf call, for SECONDS of CPU time: a has 75%
 *	of the time inclusive, c 25%, and leaf nearly all of the self time.
 *	The order is random (a with probability 3/4 each time): a fixed
 *	order repeats with a period that a fixed sampling period can lock to
 *	(perf -g once saw fa 80% and fc 20% of a, a, a, c)
 *   calltree recurse DEPTH SECONDS
 *	rec calls itself DEPTH times, then leaf, again and again
 *   calltree kernel SECONDS
 *	zero_reader reads /dev/zero and pipe_writer writes a pipe (and reads
 *	it back), alternately: most of the time is in the kernel
 *   calltree framed SECONDS
 *	the tree's shape with a work function that sets up its frame (it
 *	calls another), where a walk of the frame pointers alone, perf's,
 *	is right too: main calls fa -> fb -> work three times as often as
 *	fc -> work, in a random order
 *
 * Each prints one JSON line: {"mode": ..., "cpu_ns": N, "calls": N}.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEAF_WORK 100000

volatile uint64_t sink;

/* Keeps a call from becoming a jump (a sibling call), so that its caller
 * stays on the stack. */
#define NO_SIBCALL() __asm__ volatile("" ::: "memory")

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void leaf(void)
{
	for (unsigned int i = 0; i < LEAF_WORK; i++)
		sink += i;
}

__attribute__((noinline)) void b(void)
{
	leaf();
	NO_SIBCALL();
}

__attribute__((noinline)) void a(void)
{
	b();
	NO_SIBCALL();
}

__attribute__((noinline)) void c(void)
{
	leaf();
	NO_SIBCALL();
}

/* Called once per work(): it makes work() no leaf, so it has a frame. */
__attribute__((noinline)) void touch(void)
{
	NO_SIBCALL();
}

__attribute__((noinline)) void work(void)
{
	for (unsigned int i = 0; i < LEAF_WORK; i++)
		sink += i;
	touch();
	NO_SIBCALL();
}

__attribute__((noinline)) void fb(void)
{
	work();
	NO_SIBCALL();
}

__attribute__((noinline)) void fa(void)
{
	fb();
	NO_SIBCALL();
}

__attribute__((noinline)) void fc(void)
{
	work();
	NO_SIBCALL();
}

__attribute__((noinline)) void rec(int depth)
{
	if (depth > 0)
		rec(depth - 1);
	else
		leaf();
	NO_SIBCALL();
}

__attribute__((noinline)) void zero_reader(int fd, char *buf, size_t n)
{
	if (read(fd, buf, n) < 0) {
		perror("calltree: read /dev/zero");
		exit(1);
	}
	NO_SIBCALL();
}

__attribute__((noinline)) void pipe_writer(const int p[2], char *buf,
					   size_t n)
{
	if (write(p[1], buf, n) != (ssize_t)n || read(p[0], buf, n) < 0) {
		perror("calltree: pipe");
		exit(1);
	}
	NO_SIBCALL();
}

/* The clock is read once per ROUNDS rounds: each read is a system call
 * (CLOCK_PROCESS_CPUTIME_ID), whose time would be the kernel's, not the
 * tree's. */
#define ROUNDS 32

/* Three times in four, at random (xorshift64), and not in a cycle. */
static bool three_in_four(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (x >> 32) & 3;
}

/* ROUNDS x 4 calls of first or second, three in four of them first;
 * inlined, so that main calls them itself. */
static inline __attribute__((always_inline)) uint64_t
run_mix(void (*first)(void), void (*second)(void), uint64_t until)
{
	uint64_t calls = 0;

	while (cpu_ns() < until) {
		for (int i = 0; i < 4 * ROUNDS; i++) {
			if (three_in_four())
				first();
			else
				second();
		}
		calls += 4 * ROUNDS;
	}
	return calls;
}

static uint64_t run_recurse(int depth, uint64_t until)
{
	uint64_t calls = 0;

	for (; cpu_ns() < until; calls += ROUNDS)
		for (int i = 0; i < ROUNDS; i++)
			rec(depth);
	return calls;
}

static uint64_t run_kernel(uint64_t until)
{
	static char buf[1 << 16];
	uint64_t calls = 0;
	int fd = open("/dev/zero", O_RDONLY), p[2];

	if (fd < 0 || pipe(p)) {
		perror("calltree: /dev/zero or pipe");
		exit(1);
	}
	for (; cpu_ns() < until; calls += 2) {
		zero_reader(fd, buf, sizeof(buf));
		pipe_writer(p, buf, 4096);
	}
	return calls;
}

static void usage(FILE *f)
{
	fputs("usage: calltree tree SECONDS | recurse DEPTH SECONDS |\n"
	      "       kernel SECONDS | framed SECONDS\n"
	      "Programs of known call trees for sleepy's call-chain tests.\n",
	      f);
}

int main(int argc, char **argv)
{
	uint64_t start = cpu_ns(), calls = 0;
	double secs;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || (!strcmp(argv[1], "recurse") && argc < 4)) {
		usage(stderr);
		return 2;
	}
	secs = atof(argv[argc - 1]);
	if (!strcmp(argv[1], "tree"))
		calls = run_mix(a, c, start + (uint64_t)(secs * 1e9));
	else if (!strcmp(argv[1], "recurse"))
		calls = run_recurse(atoi(argv[2]),
				    start + (uint64_t)(secs * 1e9));
	else if (!strcmp(argv[1], "kernel"))
		calls = run_kernel(start + (uint64_t)(secs * 1e9));
	else if (!strcmp(argv[1], "framed"))
		calls = run_mix(fa, fc, start + (uint64_t)(secs * 1e9));
	else {
		usage(stderr);
		return 2;
	}
	printf("{\"mode\": \"%s\", \"cpu_ns\": %" PRIu64 ", \"calls\": %"
	       PRIu64 "}\n", argv[1], cpu_ns() - start, calls);
	return 0;
}
