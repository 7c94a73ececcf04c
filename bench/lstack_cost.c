// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_cost: what logical stacks cost a program (issue 16).
 *
 *   lstack_cost [--pairs N] [--round-trips N] [--cpu N] [--unregistered]
 *               [--spin-depth D --seconds S]
 *
 * 1. A push and a pop: a loop of N SLEEPY_LSTACK_PUSH/SLEEPY_LSTACK_POP
 *    pairs, and the same loop without them, each timed with
 *    CLOCK_MONOTONIC around the loop alone; the difference over N is the
 *    cost of a pair (under QEMU's -icount shift=0, one instruction is one
 *    nanosecond: the instructions of a pair).
 * 2. A context switch: two registered threads, each with a frame pushed,
 *    play ping-pong over two pipes, R round trips (two blocking reads and
 *    switches a trip when they share a CPU); run it with and without a
 *    session recording logical stacks (sample_start --lstack) to see what
 *    the scheduler's off-CPU hook costs a switch.
 * 3. The tick: with --seconds S, the registered main thread spins in user
 *    mode for S seconds with D frames pushed, for the tick's cost of
 *    copying a stack of depth D (the session's irq_ns_total / irq_calls,
 *    with and without --lstack).
 *
 * Output: one "KEY VALUE" line each (see usage_text).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "libsleepy_lstack.h"

#define PROG "lstack_cost"
#include "die.h"

static const char usage_text[] =
	"usage: lstack_cost [--pairs N] [--round-trips N] [--cpu N]\n"
	"                   [--unregistered] [--spin-depth D --seconds S]\n"
	"\n"
	"Times N logical stack push/pop pairs against the same loop without\n"
	"them, and R round trips of a pipe ping-pong between two registered\n"
	"threads (each with a frame pushed); with --seconds, spins first with\n"
	"D frames pushed.\n"
	"\n"
	"  --pairs N         push/pop pairs (0..10000000000; default %" PRIu64
	")\n"
	"  --round-trips N   ping-pong round trips (0..100000000; default %"
	PRIu64 ")\n"
	"  --cpu N           pin both ping-pong threads to CPU N, so that every\n"
	"                    message is a context switch (default: not pinned)\n"
	"  --unregistered    do not register the logical stacks\n"
	"  --spin-depth D    frames pushed while spinning (0..1000; default 0)\n"
	"  --seconds S       spin S seconds in user mode, registered, before\n"
	"                    the ping-pong (0..3600, decimals allowed;\n"
	"                    default 0: no spin)\n"
	"  -h, --help        this text\n"
	"\n"
	"Output, one \"KEY VALUE\" a line: registered (threads that registered\n"
	"their stack), pairs, pairs_ns, empty_ns, ns_per_pair, round_trips,\n"
	"round_trip_ns, ns_per_round_trip; with --seconds also spin_depth,\n"
	"spin_seconds and spins. Times are CLOCK_MONOTONIC around\n"
	"each loop; under QEMU -icount shift=0, ns_per_pair is instructions.\n";

struct options {
	uint64_t pairs, round_trips, spin_depth;
	double seconds;
	int cpu, unregistered;
	cpu_set_t cpus;		/* cpu alone */
};

static struct options opt = { .pairs = 10000000, .round_trips = 20000,
			      .cpu = -1 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The measured loop: n push/pop pairs. */
__attribute__((noinline)) static void pairs_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		SLEEPY_LSTACK_PUSH(1, i);
		SLEEPY_LSTACK_POP();
	}
}

/* The same loop without them: the counter kept in a register and the
 * loop kept by a compiler barrier, as the pairs' barriers keep theirs. */
__attribute__((noinline)) static void empty_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ __volatile__("" : : "r" (i) : "memory");
}

static int registered, warned;

static void register_stack(void)
{
	if (opt.unregistered)
		return;
	if (sleepy_lstack_register()) {
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			warn("sleepy_lstack_register: %s", strerror(errno));
	} else {
		__atomic_add_fetch(&registered, 1, __ATOMIC_RELAXED);
	}
}

/* The calling thread on the --cpu CPU, if one was given. */
static void pin(void)
{
	if (opt.cpu >= 0 &&
	    sched_setaffinity(0, sizeof(opt.cpus), &opt.cpus))
		die(1, "pinning to CPU %d: %s", opt.cpu, strerror(errno));
}

static int ping[2], pong[2];	/* pipes: [0] read, [1] write */

static void transfer(int from, int to)
{
	char c;

	if (read(from, &c, 1) != 1)
		die(1, "ping-pong read: %s", strerror(errno));
	if (write(to, &c, 1) != 1)
		die(1, "ping-pong write: %s", strerror(errno));
}

/* The second player: answers every ping. */
static void *ponger(void *p)
{
	(void)p;
	pin();
	register_stack();
	SLEEPY_LSTACK_PUSH(3, 0);
	for (uint64_t i = 0; i < opt.round_trips; i++)
		transfer(ping[0], pong[1]);
	SLEEPY_LSTACK_POP();
	return NULL;
}

/* The first player: the round trips' time, ns. */
static uint64_t ping_pong(void)
{
	uint64_t t0, t1;
	pthread_t t;
	char c = 'p';
	int err;

	if (pipe(ping) || pipe(pong))
		die(1, "pipe: %s", strerror(errno));
	err = pthread_create(&t, NULL, ponger, NULL);
	if (err)
		die(1, "pthread_create: %s", strerror(err));
	pin();
	SLEEPY_LSTACK_PUSH(2, 0);
	t0 = now_ns();
	for (uint64_t i = 0; i < opt.round_trips; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			die(1, "ping-pong: %s", strerror(errno));
	}
	t1 = now_ns();
	SLEEPY_LSTACK_POP();
	pthread_join(t, NULL);
	return t1 - t0;
}

static uint64_t number(const char *opt_name, const char *v, uint64_t min,
		       uint64_t max)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v ? v : "", &end, 10);
	if (!v || errno || end == v || *end || v[0] == '-' || n < min ||
	    n > max)
		die(2, "%s: expected a number from %" PRIu64 " to %" PRIu64,
		    opt_name, min, max);
	return n;
}

static double seconds(const char *opt_name, const char *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v ? v : "", &end);
	if (!v || errno || end == v || *end || !(x >= 0 && x <= 3600))
		die(2, "%s: expected seconds from 0 to 3600", opt_name);
	return x;
}

static volatile sig_atomic_t spun;

static void on_alarm(int sig)
{
	(void)sig;
	spun = 1;
}

/* The spin: opt.spin_depth frames pushed, for opt.seconds; its loops. */
static uint64_t spin(void)
{
	time_t whole = (time_t)opt.seconds;
	suseconds_t us = (suseconds_t)((opt.seconds - (double)whole) * 1e6);
	struct itimerval t = { { 0, 0 }, { whole, us } };
	uint64_t spins = 0;

	signal(SIGALRM, on_alarm);
	for (uint64_t d = 1; d <= opt.spin_depth; d++)
		SLEEPY_LSTACK_PUSH(d, 100 + d);
	if (setitimer(ITIMER_REAL, &t, NULL))
		die(1, "setitimer: %s", strerror(errno));
	while (!spun)
		spins++;
	for (uint64_t d = 1; d <= opt.spin_depth; d++)
		SLEEPY_LSTACK_POP();
	return spins;
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf(usage_text, opt.pairs, opt.round_trips);
			exit(0);
		} else if (!strcmp(a, "--pairs")) {
			opt.pairs = number(a, v, 0, 10000000000ull);
			i++;
		} else if (!strcmp(a, "--round-trips")) {
			opt.round_trips = number(a, v, 0, 100000000);
			i++;
		} else if (!strcmp(a, "--cpu")) {
			opt.cpu = (int)number(a, v, 0, CPU_SETSIZE - 1);
			CPU_ZERO(&opt.cpus);
			CPU_SET(opt.cpu, &opt.cpus);
			i++;
		} else if (!strcmp(a, "--spin-depth")) {
			opt.spin_depth = number(a, v, 0, 1000);
			i++;
		} else if (!strcmp(a, "--seconds")) {
			opt.seconds = seconds(a, v);
			i++;
		} else if (!strcmp(a, "--unregistered")) {
			opt.unregistered = 1;
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t t0, t1, t2, rt, spins = 0;

	parse_args(argc, argv);
	register_stack();
	SLEEPY_LSTACK_PUSH(1, 0);
	t0 = now_ns();
	pairs_loop(opt.pairs);
	t1 = now_ns();
	empty_loop(opt.pairs);
	t2 = now_ns();
	SLEEPY_LSTACK_POP();
	if (opt.seconds > 0)
		spins = spin();
	rt = opt.round_trips ? ping_pong() : 0;
	printf("registered %d\npairs %" PRIu64 "\npairs_ns %" PRIu64
	       "\nempty_ns %" PRIu64 "\nns_per_pair %.3f\n", registered,
	       opt.pairs, t1 - t0, t2 - t1, opt.pairs ?
	       ((double)(t1 - t0) - (double)(t2 - t1)) / (double)opt.pairs : 0);
	printf("round_trips %" PRIu64 "\nround_trip_ns %" PRIu64
	       "\nns_per_round_trip %.1f\n", opt.round_trips, rt,
	       opt.round_trips ? (double)rt / (double)opt.round_trips : 0.0);
	if (opt.seconds > 0)
		printf("spin_depth %" PRIu64 "\nspin_seconds %.3f\nspins %"
		       PRIu64 "\n", opt.spin_depth, opt.seconds, spins);
	return 0;
}
