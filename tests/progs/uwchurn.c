// SPDX-License-Identifier: GPL-2.0
/*
 * uwchurn: a test program. For SECONDS, while the tick walks stacks by
 * unwind tables: fork children that exec uwtruth-dyn (a program with a
 * shared library), dlopen libuwtruth.so, run its tree and dlclose it, and
 * map, run and unmap executable memory. Prints the rounds it made.
 *
 *   uwchurn SECONDS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* dlopen the library next to this program, run its tree, close it. */
static int with_library(const char *dir)
{
	char path[4200];
	double (*run)(double);
	void *h;

	snprintf(path, sizeof(path), "%s/libuwtruth.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	run = (double (*)(double))dlsym(h, "uw_run");
	if (run)
		run(0.01);
	return dlclose(h) || !run ? -1 : 0;
}

/* Map a page of code (a ret), call it, unmap it. */
static int with_code(void)
{
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	p[0] = 0xc3;
	((void (*)(void))p)();
	return munmap(p, 4096);
}

/* A child that execs uwtruth-dyn for a moment. */
static int with_child(const char *dir)
{
	char path[4200];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/uwtruth-dyn", dir);
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(path, path, "tree", "0.02", (char *)NULL);
		_exit(127);
	}
	return pid < 0 || waitpid(pid, &status, 0) != pid || status ? -1 : 0;
}

int main(int argc, char **argv)
{
	char dir[4096], *slash;
	double end;
	long rounds = 0;
	ssize_t n;

	if (argc != 2 || atof(argv[1]) <= 0) {
		fprintf(stderr, "usage: uwchurn SECONDS\n");
		return 2;
	}
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return 2;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	*slash = '\0';
	end = now() + atof(argv[1]);
	while (now() < end) {
		if (with_library(dir) || with_code() || with_child(dir)) {
			fprintf(stderr, "uwchurn: round %ld failed\n", rounds);
			return 1;
		}
		rounds++;
	}
	printf("%ld\n", rounds);
	return 0;
}
