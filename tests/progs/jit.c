// SPDX-License-Identifier: GPL-2.0
/*
 * jit: a test program that generates code at run time, as a JIT does, and
 * names it in its own perf map (/tmp/perf-PID.map, perf's jit-interface
 * format: "START SIZE NAME", hex without 0x).
 *
 *   jit [--wait FILE] ITERATIONS
 *
 * Two copies of one counting loop (ITERATIONS turns each):
 *   jit_mprotected  written to anonymous read-write memory, then made
 *                   executable with mprotect() (as V8 and most JITs do);
 *   jit_rwx         written to memory mapped read-write-execute at once.
 * Each runs ITERATIONS turns, first one then the other. Prints the pid,
 * and each function's address and size, one "NAME START SIZE" line each.
 * --wait FILE (a JIT that runs when a session starts): with the code and
 * the map made, waits for FILE to exist, runs the loops, prints "ran",
 * and waits for FILE to be removed before it exits.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char loop_code[] = {
	0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3,
};

typedef unsigned long (*loop_fn)(unsigned long);

static void *code_page(int prot)
{
	void *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("jit: mmap");
		exit(1);
	}
	return p;
}

static loop_fn mprotected(void)
{
	unsigned char *p = code_page(PROT_READ | PROT_WRITE);

	memcpy(p, loop_code, sizeof(loop_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit: mprotect");
		exit(1);
	}
	return (loop_fn)(uintptr_t)p;
}

static loop_fn rwx(void)
{
	unsigned char *p = code_page(PROT_READ | PROT_WRITE | PROT_EXEC);

	memcpy(p, loop_code, sizeof(loop_code));
	return (loop_fn)(uintptr_t)p;
}

static void write_map(loop_fn a, loop_fn b)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%lx %zx jit_mprotected\n", (unsigned long)(uintptr_t)a,
		sizeof(loop_code));
	fprintf(f, "%lx %zx jit_rwx\n", (unsigned long)(uintptr_t)b,
		sizeof(loop_code));
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Until FILE exists (want 1) or is gone (want 0). */
static void wait_for(const char *file, int want)
{
	const struct timespec tick = { 0, 10000000 };

	while ((access(file, F_OK) == 0) != want)
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	const char *wait = argc == 4 && !strcmp(argv[1], "--wait") ? argv[2]
								   : NULL;
	unsigned long n, r;
	loop_fn a, b;

	if (argc != (wait ? 4 : 2)) {
		fprintf(stderr, "usage: jit [--wait FILE] ITERATIONS\n");
		return 2;
	}
	n = strtoul(argv[wait ? 3 : 1], NULL, 0);
	a = mprotected();
	b = rwx();
	write_map(a, b);
	printf("pid %d\njit_mprotected %lx %zx\njit_rwx %lx %zx\n",
	       (int)getpid(), (unsigned long)(uintptr_t)a, sizeof(loop_code),
	       (unsigned long)(uintptr_t)b, sizeof(loop_code));
	fflush(stdout);
	if (wait)
		wait_for(wait, 1);
	r = a(n) + b(n);
	if (wait) {
		printf("ran\n");
		fflush(stdout);
		wait_for(wait, 0);
	}
	return r == 0 ? 0 : 1;
}
