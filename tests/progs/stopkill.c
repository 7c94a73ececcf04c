// SPDX-License-Identifier: GPL-2.0
/*
 * stopkill: a test program. It calls sample_stop() and, from a second
 * thread, kills its own process with SIGKILL as the call begins, so that
 * the session's last writes come with a fatal signal pending for the
 * caller. A session must be running. It ends by the kill (status 137 in
 * the shell); a sample_stop() that returns first is reported, with exit
 * status 1. A kill that came before the call leaves the session running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../syscalls-user/libsleepy.h"

static atomic_int calling, ready;

/* Run the calling thread on CPU cpu only, where there is one. */
static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Kill the process as soon as the caller is about to call sample_stop().
 * It runs on the other CPU from the caller, and the signal takes some
 * microseconds to arrive, so it lands inside the call almost always; if
 * it lands before, the session is still running afterwards, and the
 * caller of stopkill can tell.
 */
static void *killer(void *arg)
{
	(void)arg;
	pin_self(1);
	atomic_store(&ready, 1);
	while (!atomic_load(&calling))
		;
	kill(getpid(), SIGKILL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int ret;

	if (argc > 1) {
		printf("usage: stopkill\n"
		       "Stops the running sleepy session and kills itself with "
		       "SIGKILL while\nsample_stop() waits in the kernel (a "
		       "test of the session's last writes).\n");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
	}
	pin_self(0);
	ret = pthread_create(&t, NULL, killer, NULL);
	if (ret) {
		fprintf(stderr, "stopkill: pthread_create: %s\n", strerror(ret));
		return 1;
	}
	while (!atomic_load(&ready))
		;
	atomic_store(&calling, 1);
	ret = sleepy_sample_stop(NULL);
	fprintf(stderr, "stopkill: sample_stop() returned %d (%s) before the kill\n",
		ret, ret ? strerror(errno) : "no error");
	return 1;
}
