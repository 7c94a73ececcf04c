/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hot.h: the shared main() of the symbolization test programs (hotdyn,
 * hotpie, hotstripped, hotstatic). Each calls one hot function N times
 * (argument, default 1) and prints the result, so that nearly all of its
 * user time is in that function: the ground truth of test_symbols.py.
 */
#ifndef SLEEPY_TEST_HOT_H
#define SLEEPY_TEST_HOT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The burn loop of every hot function: a multiply-add chain the compiler
 * cannot fold, about 5 instructions per iteration.
 */
#define HOT_BURN(n, x)                                                  \
	do {                                                            \
		for (unsigned long hot_i_ = 0; hot_i_ < (n); hot_i_++)  \
			(x) = (x) * 6364136223846793005UL + hot_i_;     \
	} while (0)

__attribute__((unused))
static int hot_main(int argc, char **argv, const char *prog,
		    const char *where, unsigned long (*fn)(unsigned long))
{
	unsigned long n = 1, x = 0;
	char *end;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s [MILLIONS]\n"
		       "A test program: spends MILLIONS (default 1) million "
		       "iterations of a\nmultiply-add loop in %s, "
		       "then prints the result.\n", prog, where);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "%s: too many arguments (see --help)\n", prog);
		return 2;
	}
	if (argc == 2) {
		n = strtoul(argv[1], &end, 10);
		if (argv[1][0] < '0' || argv[1][0] > '9' || *end || n == 0) {
			fprintf(stderr, "%s: %s: not a positive number\n",
				prog, argv[1]);
			return 2;
		}
	}
	for (unsigned long i = 0; i < n; i++)
		x += fn(1000000);
	printf("%s: %s x %lu million: %lu\n", prog, where, n, x);
	return 0;
}

#endif /* SLEEPY_TEST_HOT_H */
