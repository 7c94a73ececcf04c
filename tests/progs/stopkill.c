// SPDX-License-Identifier: GPL-2.0
/*
 * stopkill: a test program. It calls sample_stop() and, from a second
 * thread, kills its own process with SIGKILL as soon as the call waits in
 * the kernel (the calling thread in state D or S), so that the session's
 * last writes come with a fatal signal pending for the caller. A session
 * must be running. It ends by the kill (status 137 in the shell); a
 * sample_stop() that returns first is reported, with exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../syscalls-user/libsleepy.h"

static pid_t caller_tid;
static atomic_int calling;

/* The state letter of thread tid of this process ('?' if unknown). */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Kill the process once the caller waits inside sample_stop(); 5 s at most. */
static void *killer(void *arg)
{
	const struct timespec step = { 0, 100000 };
	int i;

	(void)arg;
	for (i = 0; i < 50000; i++) {
		char st = atomic_load(&calling) ? thread_state(caller_tid) : 'R';

		if (st == 'D' || st == 'S')
			kill(getpid(), SIGKILL);
		nanosleep(&step, NULL);
	}
	fprintf(stderr, "stopkill: sample_stop() never waited in 5 s\n");
	_exit(3);
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
	caller_tid = (pid_t)syscall(SYS_gettid);
	ret = pthread_create(&t, NULL, killer, NULL);
	if (ret) {
		fprintf(stderr, "stopkill: pthread_create: %s\n", strerror(ret));
		return 1;
	}
	atomic_store(&calling, 1);
	ret = sleepy_sample_stop(NULL);
	fprintf(stderr, "stopkill: sample_stop() returned %d (%s) before the kill\n",
		ret, ret ? strerror(errno) : "no error");
	return 1;
}
