// SPDX-License-Identifier: GPL-2.0
/*
 * spin: a test program. Spins THREADS threads (the main thread is one of
 * them) for SECONDS of wall time each, then prints the pid, the tids and
 * the process's user and system CPU time. --fifo runs them SCHED_FIFO, so
 * that ordinary tasks (kernel workers included) wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1.0;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	double end = now() + seconds;
	unsigned long n = 0;

	(void)arg;
	printf("tid=%ld\n", (long)syscall(SYS_gettid));
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			n += (unsigned long)i;
	sink = n;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, fifo = 0;
	pthread_t tids[64];
	struct rusage ru;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			printf("usage: spin [-t THREADS] [-s SECONDS] [--fifo]\n");
			return 0;
		} else if (!strcmp(argv[i], "--fifo")) {
			fifo = 1;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "spin: bad argument: %s\n", argv[i]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "spin: 1..64 threads\n");
		return 2;
	}
	if (fifo) {
		struct sched_param sp = { .sched_priority = 50 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("spin: sched_setscheduler");
			return 1;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());
	for (int i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, spin, NULL)) {
			fprintf(stderr, "spin: pthread_create failed\n");
			return 1;
		}
	spin(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("utime=%ld.%06ld stime=%ld.%06ld\n", (long)ru.ru_utime.tv_sec,
	       (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
	       (long)ru.ru_stime.tv_usec);
	return 0;
}
