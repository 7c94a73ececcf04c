// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_storm: a logical stack that changes as fast as it can while the
 * tick copies it, for the torn-read tests. Every stack a session records
 * for the registered thread must be one of the states this program prints.
 *
 *   lstack_storm [--mode A|B] [--seconds S] [--depth D] [--unregistered]
 *
 * Mode A: the registered thread itself pushes frames 1..D and pops them
 * again, in a loop, as fast as it can. Frame j (1..D) has id j and arg
 * 10 * j + g, where g, the generation, flips between 0 and 1 with every
 * cycle, so that a copy mixing two cycles is not a valid state.
 *
 * Mode B: the registered thread spins; a writer thread pinned to another
 * CPU rewrites its area as fast as it can, by the protocol a dispatcher
 * uses: the state's depth to 0 (count + 1), all D frames written, the
 * depth to D (count + 1). Rewrite k writes frame j (1..D) with id j and
 * arg 100 * j + k % 2.
 *
 * Output, one item a line: "mode A|B", "tid TID" (the registered thread),
 * "depth D", then every valid state as "valid" followed by its frames,
 * bottom first, as ID:ARG ("valid" alone: the empty stack), all before the
 * storm starts; after it, "cycles N" (mode A: push-pop cycles; mode B:
 * rewrites), "seconds S" and "ns_per_cycle X". A recorded stack deeper than
 * 16 frames holds the bottom 16 of a valid state.
 *
 * Exit status: 0 done; 1 a failure (registration, threads, CPUs); 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libsleepy_lstack.h"

#define PROG "lstack_storm"
#include "die.h"

static const char usage_text[] =
	"usage: lstack_storm [--mode A|B] [--seconds S] [--depth D]\n"
	"                    [--unregistered]\n"
	"\n"
	"Changes a registered logical stack as fast as it can for S seconds,\n"
	"and prints every state it can be in, so that a test can check each\n"
	"stack a sleepy session recorded against them.\n"
	"\n"
	"  --mode A        the registered thread pushes frames 1..D and pops\n"
	"                  them, arg 10 x id + a generation bit (default)\n"
	"  --mode B        the registered thread spins while a writer thread on\n"
	"                  another CPU rewrites its whole stack (depth to 0,\n"
	"                  frames, depth to D), arg 100 x id + rewrite %% 2\n"
	"  --seconds S     how long (1..3600; default 5)\n"
	"  --depth D       frames (1..%u; default 3 in mode A, 8 in mode B)\n"
	"  --unregistered  do not register the stack (runs where the kernel has\n"
	"                  no sleepy_lstack)\n"
	"  -h, --help      this text\n"
	"\n"
	"Prints \"mode\", \"tid\", \"depth\" and the \"valid ID:ARG...\" states\n"
	"before the storm, \"cycles\", \"seconds\" and \"ns_per_cycle\" after.\n";

struct options {
	char mode;
	unsigned int seconds, depth;
	int unregistered;
};

static volatile sig_atomic_t stop;
static atomic_int spinner_ready;
static struct sleepy_lstack_area *volatile spinner_area;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned int number(const char *opt, const char *v, unsigned int max)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v ? v : "", &end, 10);
	if (!v || errno || end == v || *end || n < 1 || n > max)
		die(2, "%s: expected a number from 1 to %u", opt, max);
	return (unsigned int)n;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf(usage_text, SLEEPY_LSTACK_FRAMES);
			exit(0);
		} else if (!strcmp(a, "--mode") && v &&
			   (!strcmp(v, "A") || !strcmp(v, "B"))) {
			o->mode = v[0];
			i++;
		} else if (!strcmp(a, "--mode")) {
			die(2, "--mode: expected A or B");
		} else if (!strcmp(a, "--seconds")) {
			o->seconds = number(a, v, 3600);
			i++;
		} else if (!strcmp(a, "--depth")) {
			o->depth = number(a, v, SLEEPY_LSTACK_FRAMES);
			i++;
		} else if (!strcmp(a, "--unregistered")) {
			o->unregistered = 1;
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}
	if (!o->depth)
		o->depth = o->mode == 'A' ? 3 : 8;
}

/* Frame j's arg in generation or rewrite g. */
static uint64_t frame_arg(char mode, unsigned int j, unsigned int g)
{
	return (mode == 'A' ? 10 : 100) * (uint64_t)j + g % 2;
}

/* Every state the registered thread's stack can be in. */
static void print_states(const struct options *o)
{
	puts("valid");
	for (unsigned int g = 0; g < 2; g++) {
		unsigned int first = o->mode == 'A' ? 1 : o->depth;

		for (unsigned int d = first; d <= o->depth; d++) {
			fputs("valid", stdout);
			for (unsigned int j = 1; j <= d; j++)
				printf(" %u:%" PRIu64, j,
				       frame_arg(o->mode, j, g));
			putchar('\n');
		}
	}
}

static void register_stack(const struct options *o)
{
	if (!o->unregistered && sleepy_lstack_register())
		die(1, "sleepy_lstack_register: %s", strerror(errno));
}

/* Mode A: the cycles done until the alarm. */
static uint64_t storm_a(unsigned int depth)
{
	uint64_t cycles = 0;

	for (unsigned int g = 0; !stop; g ^= 1, cycles++) {
		for (unsigned int j = 1; j <= depth; j++)
			SLEEPY_LSTACK_PUSH(j, frame_arg('A', j, g));
		for (unsigned int j = 1; j <= depth; j++)
			SLEEPY_LSTACK_POP();
	}
	return cycles;
}

static void pin(pthread_t t, int cpu, const char *who)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(t, sizeof(set), &set);
	if (err)
		die(1, "pinning the %s to CPU %d: %s", who, cpu, strerror(err));
}

/* The first two CPUs this process may run on. */
static void two_cpus(int cpu[2])
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die(1, "sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	if (n < 2)
		die(1, "mode B needs two CPUs, and this process may use one");
}

struct spinner {
	const struct options *o;
	pthread_t thread;
	long tid;
	uint64_t spins;
};

/* Mode B's registered thread: it spins while the writer rewrites it. */
static void *spin(void *p)
{
	struct spinner *s = p;

	register_stack(s->o);
	s->tid = (long)gettid();
	spinner_area = &sleepy_lstack_tls;
	atomic_store(&spinner_ready, 1);
	while (!stop)
		s->spins++;
	return NULL;
}

/* Mode B: the spinning thread started on cpu, registered; its tid. */
static long start_spinner(struct spinner *s, int cpu)
{
	int err = pthread_create(&s->thread, NULL, spin, s);

	if (err)
		die(1, "pthread_create: %s", strerror(err));
	pin(s->thread, cpu, "spinning thread");
	while (!atomic_load(&spinner_ready))
		sched_yield();
	return s->tid;
}

/* One rewrite of a's whole stack: depth 0, the frames, depth d. */
static void rewrite(struct sleepy_lstack_area *a, unsigned int d,
		    uint64_t *count, unsigned int k)
{
	volatile struct sleepy_lstack_frame *f = a->frames;

	__atomic_store_n(&a->state, ++*count << 16, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int j = 1; j <= d; j++) {
		f[j - 1].id = j;
		f[j - 1].arg = frame_arg('B', j, k);
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&a->state, ++*count << 16 | d, __ATOMIC_RELAXED);
}

/* Mode B: the rewrites done until the alarm. */
static uint64_t storm_b(const struct options *o, struct spinner *s)
{
	struct sleepy_lstack_area *a = spinner_area;
	uint64_t count = a->state >> 16, rewrites = 0;

	for (unsigned int k = 0; !stop; k++, rewrites++)
		rewrite(a, o->depth, &count, k);
	pthread_join(s->thread, NULL);
	return rewrites;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = 'A', .seconds = 5 };
	struct spinner s = { .o = &o };
	struct timespec t0, t1;
	uint64_t cycles;
	long tid;
	double ns;
	int cpu[2];

	parse_args(argc, argv, &o);
	if (o.mode == 'B') {
		two_cpus(cpu);
		pin(pthread_self(), cpu[1], "writer");
		tid = start_spinner(&s, cpu[0]);
	} else {
		register_stack(&o);
		tid = (long)gettid();
	}
	printf("mode %c\ntid %ld\ndepth %u\n", o.mode, tid, o.depth);
	print_states(&o);
	signal(SIGALRM, on_alarm);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	alarm(o.seconds);
	cycles = o.mode == 'A' ? storm_a(o.depth) : storm_b(&o, &s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
	     (double)(t1.tv_nsec - t0.tv_nsec);
	printf("cycles %" PRIu64 "\nseconds %.3f\nns_per_cycle %.2f\n", cycles,
	       ns / 1e9, cycles ? ns / (double)cycles : 0.0);
	return 0;
}
