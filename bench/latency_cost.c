// SPDX-License-Identifier: GPL-2.0
/*
 * latency_cost: what timing every system call costs (issue 17).
 *
 *   latency_cost [--calls N] [--rounds R]
 *
 * A loop of N getppid() calls (syscall(2): no C library cache), timed with
 * CLOCK_MONOTONIC (the vDSO: no system call) around the loop alone, R
 * times; prints the fastest round's nanoseconds per call. Under QEMU's
 * -icount shift=0 one instruction is one nanosecond: run it with no
 * session, a session, a session with --latency and under strace -c, and
 * the differences are what each adds to a call.
 *
 * Output: "ns_per_call X" and "calls N", one per line.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: latency_cost [--calls N] [--rounds R]\n"
	"Time R rounds (default 5) of N getppid() calls (default 200000) and\n"
	"print the fastest round's ns per call (\"ns_per_call X\").\n";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long count_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v <= 0) {
		fprintf(stderr, "latency_cost: %s: not a positive count\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long calls = 200000, rounds = 5;
	double best = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'n')
			calls = count_arg(optarg);
		else if (c == 'r')
			rounds = count_arg(optarg);
		else if (c == 'h')
			return fputs(usage_text, stdout) < 0;
		else
			return 2;
	}
	for (long r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns();
		double ns;

		for (long i = 0; i < calls; i++)
			syscall(SYS_getppid);
		ns = (double)(now_ns() - t0) / (double)calls;
		if (r == 0 || ns < best)
			best = ns;
	}
	printf("ns_per_call %.2f\ncalls %ld\n", best, calls);
	return 0;
}
