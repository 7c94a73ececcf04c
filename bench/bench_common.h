/* SPDX-License-Identifier: GPL-2.0 */
/* Shared argument handling and timing for the sleepy benchmarks. */
#ifndef SLEEPY_BENCH_COMMON_H
#define SLEEPY_BENCH_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Print " utime=U stime=S" (this process's CPU time, seconds) and a newline. */
static inline void bench_print_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf(" utime=%ld.%06ld stime=%ld.%06ld\n", (long)ru.ru_utime.tv_sec,
	       (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
	       (long)ru.ru_stime.tv_usec);
}

/*
 * Parse "NAME [--quick] [N]": returns the size to run, the paper's size by
 * default. Exits with a one-line error and status 2 on bad arguments.
 */
static inline uint64_t bench_size(int argc, char **argv, const char *usage,
				  uint64_t paper, uint64_t quick)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 :
						    argv[0];
	uint64_t n = paper;
	int have_n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s", usage);
			exit(0);
		} else if (!strcmp(a, "--quick")) {
			if (!have_n)
				n = quick;
		} else if (a[0] >= '0' && a[0] <= '9' && !have_n) {
			char *end;

			errno = 0;
			n = strtoull(a, &end, 10);
			if (errno || *end || n == 0) {
				fprintf(stderr, "%s: bad size: %s\n", prog, a);
				exit(2);
			}
			have_n = 1;
		} else {
			fprintf(stderr, "%s: unknown argument: %s (try --help)\n",
				prog, a);
			exit(2);
		}
	}
	return n;
}

#endif
