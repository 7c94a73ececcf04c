// SPDX-License-Identifier: GPL-2.0
/*
 * sysfuzz: a test program. A bounded fuzzer for sleepy's system calls and
 * /dev/sleepy_pmu: for SECONDS it throws random configurations, sizes,
 * flags, pointers (NULL, kernel addresses, unmapped, read-only, the end of
 * a page) and call orders at sample_start and sample_stop, and random
 * ioctls with random arguments at the device. Every call must succeed or
 * fail with an error the ABI documents for it; the program prints one
 * JSON object with the calls made and the errors seen, and exits 1 if any
 * error was not a documented one.
 *
 * Counter thresholds stay at 1 ms or more: the overflow rate cap the
 * hardening review asks for is not built yet, and a storm at the 10 us
 * minimum on every CPU would only measure TCG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/sleepy.h>
#include <linux/sleepy_pmu.h>

#define DIR "/tmp/sysfuzz"
#define MAX_ERRNO 134

enum call { START, STOP, IOCTL, NR_CALLS };

static const char *const call_names[NR_CALLS] = { "sample_start",
						  "sample_stop", "ioctl" };

/*
 * The errors each call documents (uapi headers, design.md, pmu.md).
 * sample_start's E2BIG: a session over the memory limit, or a size past a
 * page or with non-zero bytes past the fields the kernel knows. The
 * device's REGISTER: EAGAIN past RLIMIT_SIGPENDING (its preallocated
 * signals), ENOMEM.
 */
static const int documented[NR_CALLS][16] = {
	[START] = { EINVAL, EFAULT, EBUSY, ENOENT, ENOTDIR, EISDIR, ELOOP,
		    EACCES, E2BIG, ENOMEM, ENAMETOOLONG, ENOSPC },
	[STOP] = { EINVAL, EFAULT },
	[IOCTL] = { EINVAL, EFAULT, EPERM, ENODEV, EBUSY, ENOSPC, EDQUOT,
		    ENOENT, ENOTTY, EAGAIN, ENOMEM },
};

static unsigned long seen[NR_CALLS][MAX_ERRNO + 1];
static unsigned long undocumented;
static char *page_ro;		/* a read-only page of random bytes */
static char *page_end;		/* the last bytes of a page before a hole */

static uint64_t x = 88172645463325252ULL;	/* the generator's state */

static uint64_t rnd(void)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static int one_in(unsigned int n)
{
	return rnd() % n == 0;
}

static void record(enum call c, long ret)
{
	int e = ret < 0 ? errno : 0;
	const int *d = documented[c];

	seen[c][e > MAX_ERRNO ? MAX_ERRNO : e]++;
	if (!e)
		return;
	for (; *d; d++)
		if (*d == e)
			return;
	if (undocumented++ < 10)
		fprintf(stderr, "sysfuzz: %s: undocumented error %d (%s)\n",
			call_names[c], e, strerror(e));
}

/* A pointer to hand the kernel for an object of size bytes. */
static void *bad_or(void *good, size_t size)
{
	switch (rnd() % 8) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffffffff81000000UL;	/* kernel text */
	case 2:
		return (void *)0x1000UL;		/* unmapped */
	case 3:
		return page_ro;				/* read-only */
	case 4:
		return page_end + 4096 - size / 2;	/* runs off the end */
	default:
		return good;
	}
}

/* A value that is usually sensible, sometimes anything. */
static uint32_t pick(uint32_t sensible_max)
{
	if (one_in(8))
		return (uint32_t)rnd();
	return one_in(4) ? 0 : (uint32_t)(rnd() % (sensible_max + 1));
}

static const char *pick_path(char *buf, size_t n)
{
	static const char *const fixed[] = {
		DIR, DIR "/fifo", DIR "/link", "/nonexistent/x", "",
		DIR "/s0/x", "/proc/self/status",
	};
	static char longpath[5000];

	switch (rnd() % 12) {
	case 0:
		memset(longpath, 'a', sizeof(longpath) - 1);
		return longpath;
	case 1:
	case 2:
		return fixed[rnd() % (sizeof(fixed) / sizeof(fixed[0]))];
	case 3:
		return bad_or(NULL, 16);
	default:
		snprintf(buf, n, DIR "/s%u", (unsigned int)(rnd() % 4));
		return buf;
	}
}

/*
 * A size argument for a struct of size bytes: usually its own, sometimes
 * VER0's, 0, anything up to a page and a bit, or anything at all.
 */
static size_t pick_size(size_t size, size_t ver0)
{
	switch (rnd() % 16) {
	case 0:
		return 0;
	case 1:
		return ver0;
	case 2:
	case 3:
		return rnd() % (2 * 4096 + 2);
	case 4:
		return (size_t)rnd();
	default:
		return size;
	}
}

static void fuzz_start(void)
{
	/* A config, and a page's worth of bytes past it for large sizes. */
	static union {
		struct sample_config cfg;
		unsigned char bytes[2 * 4096 + 2];
	} u;
	struct sample_config *cfg = &u.cfg;
	char path[64];
	const char *p = pick_path(path, sizeof(path));

	memset(&u, 0, sizeof(u));
	cfg->flags = one_in(4) ? (uint32_t)rnd() : (uint32_t)rnd() % 4;
	cfg->nr_buffers = pick(64);
	cfg->buffer_size = one_in(2) ? 0 : pick(1 << 20);
	cfg->max_appids = pick(8192);
	cfg->max_size = one_in(2) ? 0 : one_in(4) ? rnd() :
		rnd() % (4 * SAMPLE_MIN_MAX_SIZE);
	if (one_in(16))
		u.bytes[sizeof(*cfg) + rnd() % 4096] = (uint8_t)rnd();
	record(START, syscall(__NR_sample_start, p, bad_or(cfg, sizeof(*cfg)),
			      pick_size(sizeof(*cfg),
					SAMPLE_CONFIG_SIZE_VER0)));
}

static void fuzz_stop(void)
{
	static unsigned char st[2 * 4096 + 2];

	record(STOP, syscall(__NR_sample_stop,
			     one_in(3) ? NULL :
			     bad_or(st, sizeof(struct sample_stats)),
			     pick_size(sizeof(struct sample_stats),
				       SAMPLE_STATS_SIZE_VER0)));
}

/*
 * A signal to register: a valid one this program handles, or an invalid
 * one. Not just any number: glibc keeps 32 and 33 for itself (sigaction()
 * refuses them), and an overflow signal there would end the fuzzing.
 */
static int pick_signal(void)
{
	const int valid[] = { SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 5,
			      SIGRTMAX };
	const int invalid[] = { 0, -1, SIGKILL, SIGSTOP, 65 };

	if (one_in(3))
		return one_in(2) ? invalid[rnd() % 5] : 65 + (int)(rnd() % 1000);
	return valid[rnd() % 5];
}

static void fuzz_ioctl(int fd)
{
	static const unsigned long cmds[] = {
		SLEEPY_PMU_REGISTER, SLEEPY_PMU_UNREGISTER,
		SLEEPY_PMU_CONFIGURE, SLEEPY_PMU_READ_COUNTER,
		SLEEPY_PMU_UNREGISTER_ALL, _IO(SLEEPY_PMU_IOC_MAGIC, 99),
	};
	union {
		int sig;
		struct sleepy_pmu_config cfg;
		struct sleepy_pmu_counter_value v;
	} a;
	unsigned long cmd = cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))];

	memset(&a, 0, sizeof(a));
	if (cmd == SLEEPY_PMU_REGISTER) {
		a.sig = pick_signal();
	} else if (cmd == SLEEPY_PMU_CONFIGURE) {
		a.cfg.counter = pick(SLEEPY_PMU_MAX_COUNTERS);
		a.cfg.source = pick(1);
		a.cfg.event = one_in(4) ? rnd() : 0;
		/* 1 ms to 1 s of CPU time: see the comment at the top. */
		a.cfg.threshold = 1000000 + rnd() % 1000000000;
		a.cfg.flags = one_in(3) ? SLEEPY_PMU_CONFIG_STOP : pick(1);
		a.cfg.reserved = one_in(16);
	} else {
		a.v.cpu = (int32_t)pick(4) - 1;
		a.v.counter = pick(SLEEPY_PMU_MAX_COUNTERS);
	}
	record(IOCTL, ioctl(fd, cmd, bad_or(&a, sizeof(a))));
}

static void ignore(int sig)
{
	(void)sig;
}

/* Files, pages and handlers the fuzzing needs; 0, or -1 with errno. */
static int setup(void)
{
	struct sigaction sa;
	char *two;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ignore;
	for (int s = 1; s < 65; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
			sigaction(s, &sa, NULL);
	if ((mkdir(DIR, 0700) && errno != EEXIST) ||
	    (mkfifo(DIR "/fifo", 0600) && errno != EEXIST) ||
	    (symlink(DIR "/s0", DIR "/link") && errno != EEXIST))
		return -1;
	page_ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_ro == MAP_FAILED || two == MAP_FAILED ||
	    munmap(two + 4096, 4096))
		return -1;
	page_end = two;
	memset(page_end, 0x5a, 4096);
	return 0;
}

static void report(double seconds, unsigned long calls, int fd)
{
	printf("{\"seconds\": %.1f, \"calls\": %lu, \"device\": %s, "
	       "\"undocumented\": %lu, \"errors\": {", seconds, calls,
	       fd >= 0 ? "true" : "false", undocumented);
	for (int c = 0; c < NR_CALLS; c++) {
		const char *sep = "";

		printf("%s\"%s\": {", c ? ", " : "", call_names[c]);
		for (int e = 0; e <= MAX_ERRNO; e++) {
			if (!seen[c][e])
				continue;
			printf("%s\"%s\": %lu", sep, e ? strerrorname_np(e) : "OK",
			       seen[c][e]);
			sep = ", ";
		}
		printf("}");
	}
	printf("}}\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char usage[] =
		"usage: sysfuzz [--seed N] [--calls N] SECONDS\n"
		"Fuzz sample_start, sample_stop and /dev/sleepy_pmu (if present)\n"
		"for SECONDS, or until N calls (a seed's calls are the same ones\n"
		"in every run); print the calls and errors as JSON; exit 1 on an\n"
		"undocumented error.\n";
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "calls", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long calls = 0, seed = 1, max_calls = ~0UL;
	double seconds, end;
	int c, fd;

	while ((c = getopt_long(argc, argv, "s:n:h", opts, NULL)) != -1) {
		if (c == 'h')
			return fputs(usage, stdout), 0;
		if (c == 's')
			seed = strtoul(optarg, NULL, 0);
		else if (c == 'n')
			max_calls = strtoul(optarg, NULL, 0);
		else
			return fputs(usage, stderr), 2;
	}
	if (optind + 1 != argc || (seconds = atof(argv[optind])) <= 0)
		return fputs(usage, stderr), 2;
	if (setup())
		return perror("sysfuzz: setup"), 1;
	x ^= seed * 0x9e3779b97f4a7c15ULL;
	if (!x)
		x = 1;
	fd = open(SLEEPY_PMU_DEVICE, O_RDWR | O_CLOEXEC);
	for (end = now() + seconds; calls < max_calls && now() < end; calls++) {
		unsigned int r = rnd() % 10;

		if (r < 4)
			fuzz_start();
		else if (r < 7 || fd < 0)
			fuzz_stop();
		else
			fuzz_ioctl(fd);
	}
	syscall(__NR_sample_stop, NULL);
	for (uint32_t i = 0; fd >= 0 && i < SLEEPY_PMU_MAX_COUNTERS; i++) {
		struct sleepy_pmu_config stop = { .counter = i,
			.flags = SLEEPY_PMU_CONFIG_STOP };

		ioctl(fd, SLEEPY_PMU_CONFIGURE, &stop);
	}
	report(seconds, calls, fd);
	return undocumented ? 1 : 0;
}
