// SPDX-License-Identifier: GPL-2.0
/*
 * stopkill: a test program. It calls sample_stop() and, from a second
 * thread, kills its own process with SIGKILL once the call sleeps in the
 * kernel (its /proc/self/task/TID/syscall shows the call), so that the
 * session's last writes come with a fatal signal pending for the caller.
 * A session must be running. It ends by the kill (status 137 in the
 * shell), after one line on stderr that says where the call slept. A
 * sample_stop() that returns before it was seen sleeping is reported,
 * with exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../syscalls-user/libsleepy.h"

static atomic_int calling, ready;
static pid_t caller;

/* Run the calling thread on CPU cpu only, where there is one. */
static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Read a small /proc file of the caller's into buf; its length or -1. */
static ssize_t read_task_file(const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)caller,
		 name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * Wait until the caller sleeps in sample_stop(): its syscall file shows
 * a call's number only while the task sleeps in it ("running" else).
 * Then say where it sleeps, and kill the process.
 */
static void *killer(void *arg)
{
	char sys[256], wchan[128] = "";

	(void)arg;
	pin_self(1);
	atomic_store(&ready, 1);
	while (!atomic_load(&calling))
		;
	for (;;) {
		if (read_task_file("syscall", sys, sizeof(sys)) > 0 &&
		    strtol(sys, NULL, 10) == __NR_sample_stop)
			break;
		sched_yield();
	}
	read_task_file("wchan", wchan, sizeof(wchan));
	fprintf(stderr, "stopkill: killed while sample_stop() slept in %s\n",
		wchan[0] ? wchan : "?");
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
		       "SIGKILL once\nsample_stop() sleeps in the kernel (a "
		       "test of the session's last writes).\n");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
	}
	pin_self(0);
	caller = (pid_t)syscall(SYS_gettid);
	ret = pthread_create(&t, NULL, killer, NULL);
	if (ret) {
		fprintf(stderr, "stopkill: pthread_create: %s\n", strerror(ret));
		return 1;
	}
	while (!atomic_load(&ready))
		;
	atomic_store(&calling, 1);
	ret = sleepy_sample_stop(NULL);
	fprintf(stderr, "stopkill: sample_stop() returned %d (%s) before it "
		"was seen sleeping\n", ret, ret ? strerror(errno) : "no error");
	return 1;
}
