// SPDX-License-Identifier: GPL-2.0
/*
 * forkstorm: a test program. With SIGCHLD ignored (children are reaped as
 * they exit, and their pids free at once), forks children that each spin
 * for SPIN_MS of CPU time and exit, as fast as fork allows, for SECONDS.
 * With a small pid_max, fork waits on free pids, so a dying child's pid
 * goes to a new one within microseconds. Prints the forks and the forks
 * refused for want of a pid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] = "usage: forkstorm SECONDS SPIN_MS\n";

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void child(double spin_ms)
{
	double end = cpu_now() + spin_ms / 1e3;
	volatile unsigned long n = 0;

	while (cpu_now() < end)
		n++;
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long forks = 0, refused = 0;
	double seconds, spin_ms, end;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 3) {
		fputs(usage, stderr);
		return 2;
	}
	seconds = atof(argv[1]);
	spin_ms = atof(argv[2]);
	if (signal(SIGCHLD, SIG_IGN) == SIG_ERR)
		return perror("SIGCHLD"), 1;
	for (end = now() + seconds; now() < end;) {
		pid_t pid = fork();

		if (pid == 0)
			child(spin_ms);
		if (pid > 0)
			forks++;
		else if (errno == EAGAIN)
			refused++;
		else
			return perror("fork"), 1;
	}
	/*
	 * Exit only once every child has: an orphan would be reparented to
	 * the guest's init, which does not reap, and keep its pid.
	 */
	while (wait(NULL) > 0 || errno == EINTR)
		;
	printf("forks=%lu refused=%lu\n", forks, refused);
	return 0;
}
