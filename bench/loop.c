// SPDX-License-Identifier: GPL-2.0
/*
 * loop: the SLEEPY paper's first benchmark. One for loop adding the index to
 * a running total. The checksum is N(N-1)/2 modulo 2^64.
 */
#include "bench_common.h"

static const char usage[] =
	"usage: loop [--quick] [N]\n"
	"Adds 0..N-1 in one for loop (default N = 1000000000, the paper's;\n"
	"--quick: 10000000) and prints the sum and the loop's own elapsed\n"
	"time (CLOCK_MONOTONIC around the loop only).\n";

int main(int argc, char **argv)
{
	uint64_t n = bench_size(argc, argv, usage, 1000000000ULL, 10000000ULL);
	uint64_t sum = 0;
	double t0, t1;

	t0 = bench_now();
	for (uint64_t i = 0; i < n; i++) {
		sum += i;
		/* Keep the loop a loop at -O2 too. */
		__asm__ volatile("" : "+r"(sum));
	}
	t1 = bench_now();
	printf("loop n=%" PRIu64 " checksum=%" PRIu64 " elapsed=%.9f", n, sum,
	       t1 - t0);
	bench_print_cpu();
	return 0;
}
