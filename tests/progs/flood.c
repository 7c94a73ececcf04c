// SPDX-License-Identifier: GPL-2.0
/*
 * flood: what any user's process can make a session write, as fast as it
 * can, for the budget tests (tests/test_floods.py).
 *
 *   flood mprotect [--pages N] [--seconds S]
 *   flood offcpu [--pairs N] [--seconds S]
 *
 * mprotect: N pages of anonymous memory (default 1), each made executable
 * and writable again in turn, round and round: each flip to executable is
 * a run-time executable range the kernel records.
 * offcpu: N pairs of threads (default 4), each thread with a registered
 * logical stack, waking each other through a futex in turn: every wait is
 * a block and a wake of a registered thread.
 *
 * Prints one line: "mprotect flips F pages N" or "offcpu waits W pairs N",
 * F and W counted by the program itself. Exit status: 0 done, 1 a failed
 * call, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROG "flood"
#include "die.h"
#include "libsleepy_lstack.h"

static const char usage_text[] =
	"usage: flood mprotect [--pages N] [--seconds S]\n"
	"       flood offcpu [--pairs N] [--seconds S]\n"
	"Make a session write as fast as an unprivileged process can:\n"
	"mprotect flips N anonymous pages (default 1) between writable and\n"
	"executable; offcpu runs N pairs of threads (default 4) with logical\n"
	"stacks that wake each other through a futex. For S seconds\n"
	"(default 2). Prints what it did as one line.\n";

static double seconds = 2.0;
static long count = -1;

/* A failed call: its name and errno's text, status 1. */
#define fail(what) die(1, "%s: %s", what, strerror(errno))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int mode_mprotect(void)
{
	const long page = sysconf(_SC_PAGESIZE), pages = count < 0 ? 1 : count;
	char *mem = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const double end = now() + seconds;
	long flips = 0;

	if (mem == MAP_FAILED)
		fail("mmap");
	while (now() < end) {
		char *p = mem + (flips % pages) * page;

		if (mprotect(p, (size_t)page, PROT_READ | PROT_EXEC) ||
		    mprotect(p, (size_t)page, PROT_READ | PROT_WRITE))
			fail("mprotect");
		flips++;
	}
	printf("mprotect flips %ld pages %ld\n", flips, pages);
	return 0;
}

/* A pair's futex word: whose turn it is (0 or 1), and its waits. */
struct pair {
	_Atomic unsigned int turn;
	_Atomic long waits;
	double end;
};

struct side {
	struct pair *pair;
	unsigned int me;
};

static void futex(_Atomic unsigned int *word, int op, unsigned int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Wait for my turn, then give it to the other side, until the end. */
static void *ping(void *arg)
{
	const struct side *s = arg;
	struct pair *p = s->pair;
	unsigned int t;

	if (sleepy_lstack_register())
		fail("sleepy_lstack");
	while (now() < p->end) {
		while ((t = atomic_load(&p->turn)) != s->me) {
			futex(&p->turn, FUTEX_WAIT_PRIVATE, t);
			atomic_fetch_add(&p->waits, 1);
		}
		atomic_store(&p->turn, !s->me);
		futex(&p->turn, FUTEX_WAKE_PRIVATE, 1);
	}
	/* Let the other side see the end. */
	atomic_store(&p->turn, !s->me);
	futex(&p->turn, FUTEX_WAKE_PRIVATE, 1);
	return NULL;
}

static int mode_offcpu(void)
{
	const long pairs = count < 0 ? 4 : count;
	struct pair *p = calloc((size_t)pairs, sizeof(*p));
	struct side *s = calloc((size_t)pairs * 2, sizeof(*s));
	pthread_t *t = calloc((size_t)pairs * 2, sizeof(*t));
	long waits = 0;

	if (!p || !s || !t)
		fail("calloc");
	for (long i = 0; i < pairs * 2; i++) {
		p[i / 2].end = now() + seconds;
		s[i] = (struct side){ &p[i / 2], (unsigned int)(i % 2) };
		errno = pthread_create(&t[i], NULL, ping, &s[i]);
		if (errno)
			fail("pthread_create");
	}
	for (long i = 0; i < pairs * 2; i++)
		pthread_join(t[i], NULL);
	for (long i = 0; i < pairs; i++)
		waits += atomic_load(&p[i].waits);
	printf("offcpu waits %ld pairs %ld\n", waits, pairs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pages", required_argument, NULL, 'n' },
		{ "pairs", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mode = argc > 1 ? argv[1] : "";
	char *end;
	int c;

	while ((c = getopt_long(argc - 1, argv + 1, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (c == '?')
			return 2;
		errno = 0;
		if (c == 'n')
			count = strtol(optarg, &end, 10);
		else
			seconds = strtod(optarg, &end);
		if (errno || *end || (c == 'n' ? count < 1 : seconds <= 0)) {
			fprintf(stderr, "flood: %s: not a positive number\n",
				optarg);
			return 2;
		}
	}
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(mode, "mprotect"))
		return mode_mprotect();
	if (!strcmp(mode, "offcpu"))
		return mode_offcpu();
	fprintf(stderr, "flood: %s: unknown mode (see --help)\n", mode);
	return 2;
}
