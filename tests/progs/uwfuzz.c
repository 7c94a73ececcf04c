// SPDX-License-Identifier: GPL-2.0
/*
 * uwfuzz: a test program. For SECONDS it feeds sleepy_unwind(2) random
 * and mutated unwind tables, bad sizes, pointers and descriptors, in a
 * session with unwind tables (run it under sample_start --callchain), and
 * runs copies of itself whose tables it gave: the tick walks their stacks
 * by random rules. Every call must succeed or fail with an error the ABI
 * documents; it prints one JSON object with its counts, and exits 1 if an
 * error was not a documented one.
 *
 *   uwfuzz [--seed N] SECONDS
 *   uwfuzz --spin SECONDS      (what the copies run)
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sleepy.h>

#define COPIES		32
#define MAX_ERRNO	134
#define TABLE_MAX	(256 * 1024)
#define BLOCK		(1u << SLEEPY_UNWIND_BLOCK_SHIFT)
/* The most a random table covers: its block index a quarter of TABLE_MAX. */
#define SPAN_MAX	((uint64_t)TABLE_MAX / 16 << SLEEPY_UNWIND_BLOCK_SHIFT)

static unsigned long calls, accepted, refused_by_code[16], errors[MAX_ERRNO];
static unsigned long undocumented, runs;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t n)
{
	return n ? ((uint64_t)random() << 31 ^ random()) % n : 0;
}

/* The first executable PT_LOAD of the ELF file at path: its file range. */
static int exec_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = -1;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*lo = ph.p_offset;
			*hi = ph.p_offset + ph.p_filesz;
			ok = 0;
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A rule the kernel takes, mostly; of any kind. */
static struct sleepy_unwind_rule random_rule(void)
{
	struct sleepy_unwind_rule r = { 0 };

	r.cfa = rnd(8) < 6 ? rnd(2) : 2 + rnd(3);
	if (r.cfa > SLEEPY_UNWIND_CFA_RBP)
		return r;
	r.cfa_off = 8 * (1 + rnd(rnd(2) ? 8 : 4096));
	r.ra_off = -8 * (int)(1 + rnd(r.cfa_off / 8 < 4 ? r.cfa_off / 8 : 4));
	if (rnd(2)) {
		r.rbp = SLEEPY_UNWIND_RBP_SAVED;
		r.rbp_off = -8 * (int)(1 + rnd(64));
	}
	return r;
}

/* A valid table of random rules over a random part of [lo, hi). */
static size_t random_table(void *buf, uint64_t lo, uint64_t hi, int vdso)
{
	struct sleepy_unwind_table *h = buf;
	uint64_t span, a;
	uint32_t nr_rules = 1 + rnd(64), nb, nr = 0, *index;
	struct sleepy_unwind_rule *rules = (void *)(h + 1);
	struct sleepy_unwind_row *rows;

	lo += rnd((hi - lo) / 2);
	span = 1 + rnd(hi - lo < SPAN_MAX ? hi - lo : SPAN_MAX);
	nb = (span + BLOCK - 1) >> SLEEPY_UNWIND_BLOCK_SHIFT;
	index = (uint32_t *)(rules + nr_rules);
	rows = (void *)(index + nb + 1);
	for (uint32_t i = 0; i < nr_rules; i++)
		rules[i] = random_rule();
	for (uint32_t b = 0; b < nb; b++) {
		index[b] = nr;
		for (a = b ? rnd(16) : 0; a < BLOCK &&
		     ((uint64_t)b << SLEEPY_UNWIND_BLOCK_SHIFT) + a < span &&
		     (char *)(rows + nr + 1) < (char *)buf + TABLE_MAX;
		     a += 1 + rnd(BLOCK / 4)) {
			rows[nr].addr = a;
			rows[nr++].rule = rnd(nr_rules);
		}
	}
	index[nb] = nr;
	*h = (struct sleepy_unwind_table){
		.magic = SLEEPY_UNWIND_MAGIC, .version = SLEEPY_UNWIND_VERSION,
		.flags = vdso ? SLEEPY_UNWIND_T_VDSO : 0, .nr_rules = nr_rules,
		.nr_rows = nr, .nr_blocks = nb, .lo = lo, .hi = lo + span };
	return (char *)(rows + nr) - (char *)buf;
}

/* Mutate the table of n bytes: a byte, a field, or its size. */
static size_t mutate(void *buf, size_t n)
{
	struct sleepy_unwind_table *h = buf;
	unsigned char *p = buf;

	switch (rnd(6)) {
	case 0:
		p[rnd(n)] ^= 1 << rnd(8);
		break;
	case 1:
		p[rnd(sizeof(*h))] = rnd(256);
		break;
	case 2:
		((uint32_t *)buf)[rnd(n / 4)] = random();
		break;
	case 3:
		h->hi = h->lo + rnd(1ULL << 32);
		break;
	case 4:
		return rnd(n + 64);
	default:
		h->nr_rows += rnd(3) - 1;
		break;
	}
	return n;
}

/* Count the result of one call; documented: 0 or one of errs. */
static void count(long ret, const int *errs, void *table)
{
	calls++;
	if (!ret) {
		accepted++;
		return;
	}
	if (errno > 0 && errno < MAX_ERRNO)
		errors[errno]++;
	if (errno == EINVAL && table)
		refused_by_code[((struct sleepy_unwind_table *)table)->error & 15]++;
	for (; *errs; errs++)
		if (errno == *errs)
			return;
	undocumented++;
}

static const int load_errs[] = { EINVAL, EEXIST, ENOSPC, EACCES, EBADF,
				 EFAULT, ENOMEM, 0 };

/* One LOAD of a random or mutated table for fd (-1: the vDSO). */
static void fuzz_load(void *buf, int fd, uint64_t lo, uint64_t hi)
{
	size_t n = random_table(buf, lo, hi, fd < 0);
	void *arg = buf;

	if (rnd(3))
		n = mutate(buf, n);
	if (!rnd(50))
		arg = rnd(2) ? NULL : (void *)0xffff800000000000UL;
	count(syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_LOAD, fd, arg, n),
	      load_errs, arg == buf ? buf : NULL);
}

/* Calls that must fail: bad ops, descriptors and WAIT buffers. */
static void fuzz_bad(void *buf, int dirfd, int wfd)
{
	static const int errs[] = { EINVAL, EBADF, EFAULT, EACCES, 0 };
	int fds[] = { dirfd, wfd, 999, -2 };

	switch (rnd(4)) {
	case 0:
		count(syscall(__NR_sleepy_unwind, 3 + rnd(100), -1, buf, 64),
		      errs, NULL);
		break;
	case 1:
		count(syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_WAIT, -1, buf,
			      rnd(SLEEPY_UNWIND_WANT_MIN)), errs, NULL);
		break;
	case 2:
		count(syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_WAIT, -1,
			      (void *)8, SLEEPY_UNWIND_WANT_MIN), errs, NULL);
		break;
	default:
		random_table(buf, 0, 4096, 0);
		count(syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_LOAD,
			      fds[rnd(4)], buf, 4096), errs, NULL);
	}
}

/* Run copy path (its table fuzzed, maybe) for a short spin. */
static void run_copy(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(path, path, "--spin", "0.05", (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, NULL, 0) == pid)
		runs++;
}

/* Recursion with a frame, so that the walks have stacks to climb. */
__attribute__((noinline)) static double spin(int depth, double end)
{
	double x = 1;

	if (depth)
		return spin(depth - 1, end) + 1;
	while (now() < end)
		x = x * 1.0000001 + 1e-9;
	return x;
}

static void report(void)
{
	printf("{\"calls\": %lu, \"accepted\": %lu, \"runs\": %lu, "
	       "\"undocumented\": %lu, \"refused\": [", calls, accepted, runs,
	       undocumented);
	for (int i = 0; i < 16; i++)
		printf("%s%lu", i ? ", " : "", refused_by_code[i]);
	printf("], \"errors\": {");
	for (int e = 1, first = 1; e < MAX_ERRNO; e++)
		if (errors[e]) {
			printf("%s\"%d\": %lu", first ? "" : ", ", e, errors[e]);
			first = 0;
		}
	printf("}}\n");
}

int main(int argc, char **argv)
{
	static char paths[COPIES][32];
	unsigned int seed = 1;
	uint64_t lo, hi, vdso_size = 8192;
	double end;
	void *buf;
	int dirfd, wfd;

	if (argc == 3 && !strcmp(argv[1], "--spin"))
		return spin(8, now() + atof(argv[2])) < 0;
	if (argc == 4 && !strcmp(argv[1], "--seed")) {
		seed = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || atof(argv[1]) <= 0) {
		fprintf(stderr, "usage: uwfuzz [--seed N] SECONDS\n");
		return 2;
	}
	srandom(seed);
	buf = malloc(TABLE_MAX + 64);
	if (!buf || exec_range("/proc/self/exe", &lo, &hi))
		return 2;
	for (int i = 0; i < COPIES; i++) {
		char cmd[128];

		snprintf(paths[i], sizeof(paths[i]), "/tmp/uwfuzz.%d", i);
		snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe /tmp/uwfuzz.%d",
			 (int)getpid(), i);
		if (system(cmd))
			return 2;
	}
	dirfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	wfd = open("/tmp/uwfuzz.w", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	end = now() + atof(argv[1]);
	while (now() < end) {
		int k = rnd(COPIES), fd = open(paths[k], O_RDONLY | O_CLOEXEC);

		if (rnd(10) < 7)
			fuzz_load(buf, rnd(20) ? fd : -1, rnd(20) ? lo : 0,
				  rnd(20) ? hi : vdso_size);
		else
			fuzz_bad(buf, dirfd, wfd);
		if (fd >= 0)
			close(fd);
		if (!rnd(20))
			run_copy(paths[k]);
	}
	report();
	return undocumented ? 1 : 0;
}
