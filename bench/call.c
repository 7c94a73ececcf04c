// SPDX-License-Identifier: GPL-2.0
/*
 * call: the SLEEPY paper's second benchmark. An outer loop of N iterations
 * adds loop(j), the sum of 0..j-1, for j = the outer index. The inner loop
 * runs about N^2/2 times; the checksum is N(N-1)(N-2)/6 modulo 2^64.
 */
#include "bench_common.h"

static const char usage[] =
	"usage: call [--quick] [N]\n"
	"For j in 0..N-1 adds loop(j) = 0+1+...+(j-1) (default N = 100000,\n"
	"the paper's: about 5e9 inner iterations; --quick: 3000) and prints\n"
	"the total and the elapsed time of the work.\n";

uint64_t loop(uint64_t j);

__attribute__((noinline)) uint64_t loop(uint64_t j)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < j; i++) {
		sum += i;
		__asm__ volatile("" : "+r"(sum));
	}
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t n = bench_size(argc, argv, usage, 100000ULL, 3000ULL);
	uint64_t total = 0;
	double t0, t1;

	t0 = bench_now();
	for (uint64_t j = 0; j < n; j++)
		total += loop(j);
	t1 = bench_now();
	printf("call n=%" PRIu64 " checksum=%" PRIu64 " elapsed=%.9f", n,
	       total, t1 - t0);
	bench_print_cpu();
	return 0;
}
