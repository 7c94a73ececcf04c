// SPDX-License-Identifier: GPL-2.0
/*
 * abi_check: a test program. Calls sample_start() and sample_stop() the
 * raw way with bad arguments and sizes (and the calls by the numbers they
 * had before) and prints one "case: errno-name"
 * line per call, for the test suite to compare with what the ABI
 * promises. A case that checks more than the return value (what
 * sample_stop wrote) prints what it found wrong instead of OK. Sessions
 * that a case starts only to stop, or stops only to start the next, print
 * nothing unless that call fails ("case-start: ERRNO", "case-stop: ...").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../syscalls-user/libsleepy.h"

#define PAGE 4096

static const char *ename(int ok, int e)
{
	if (ok)
		return "OK";
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case EACCES: return "EACCES";
	case EROFS: return "EROFS";
	case ENOSYS: return "ENOSYS";
	case E2BIG: return "E2BIG";
	default: return strerror(e);
	}
}

#define CHECK(name, call) do {						\
		long r_ = (call);					\
		printf("%s: %s\n", name, ename(r_ == 0, errno));	\
	} while (0)

static const char *path;
static char dir[PAGE];
/* A struct and what follows it, for calls with any size up to a page. */
static unsigned char buf[PAGE + 1];

static long start_raw(const char *p, const void *cfg, size_t size)
{
	return syscall(__NR_sample_start, p, cfg, size);
}

static long stop_raw(void *stats, size_t size)
{
	return syscall(__NR_sample_stop, stats, size);
}

/* A configuration at the front of buf, the rest zero. */
static struct sample_config *cfg(unsigned int flags, unsigned int n,
				 unsigned int size, unsigned int appids)
{
	struct sample_config *c = (struct sample_config *)buf;

	memset(buf, 0, sizeof(buf));
	c->flags = flags;
	c->nr_buffers = n;
	c->buffer_size = size;
	c->max_appids = appids;
	return c;
}

/* A session for a case that stops it: say so only if it did not start. */
static void start_quiet(const char *name)
{
	if (sleepy_sample_start(path, NULL))
		printf("%s-start: %s\n", name, ename(0, errno));
}

/* Print the case; if it started a session, stop it (quietly). */
static void start_case(const char *name, const void *c, size_t size)
{
	long r = start_raw(path, c, size);

	printf("%s: %s\n", name, ename(r == 0, errno));
	if (r == 0 && sleepy_sample_stop(NULL))
		printf("%s-stop: %s\n", name, ename(0, errno));
}

/* The errors of sample_start's arguments and configuration. */
static void start_errors(void *unmapped)
{
	struct sample_config *c;

	CHECK("start-path-efault", sleepy_sample_start(unmapped, NULL));
	CHECK("start-cfg-efault", start_raw(path, unmapped,
					    sizeof(struct sample_config)));
	c = cfg(0x80, 0, 0, 0);
	CHECK("start-unknown-flag", start_raw(path, c, sizeof(*c)));
	c = cfg(0, SAMPLE_MAX_BUFFERS + 1, 0, 0);
	CHECK("start-too-many-buffers", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 16, 0);
	CHECK("start-tiny-buffer", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, SAMPLE_MAX_BUFFER_SIZE + 1, 0);
	CHECK("start-huge-buffer", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 4096, 1 << 20, 0);
	CHECK("start-huge-pool", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 0, SAMPLE_MAX_APPIDS + 1);
	CHECK("start-huge-appids", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 0, SAMPLE_MIN_APPIDS - 1);
	CHECK("start-few-appids", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 0, 0);
	c->max_size = SAMPLE_MIN_MAX_SIZE - 1;
	CHECK("start-small-max-size", start_raw(path, c, sizeof(*c)));
	CHECK("start-enoent", sleepy_sample_start("/nonexistent/dir/x", NULL));
	CHECK("start-eisdir", sleepy_sample_start(dir, NULL));
}

/*
 * The size argument: VER0 up to a page, whatever the kernel does not know
 * zero (clone3() style).
 */
static void start_sizes(void)
{
	struct sample_config *c = cfg(0, 0, 0, 0);

	CHECK("start-size-0", start_raw(path, c, 0));
	CHECK("start-null-cfg-size-24", start_raw(path, NULL, sizeof(*c)));
	CHECK("start-size-15", start_raw(path, c, SAMPLE_CONFIG_SIZE_VER0 - 1));
	CHECK("start-size-4097", start_raw(path, c, PAGE + 1));
	buf[sizeof(*c) + 7] = 1;
	CHECK("start-size-40-nonzero-tail", start_raw(path, c,
						      sizeof(*c) + 8));
	c = cfg(0x80, 0, 0, 0);
	CHECK("start-size-ver0-unknown-flag",
	      start_raw(path, c, SAMPLE_CONFIG_SIZE_VER0));
	c = cfg(0, 0, 0, 0);
	start_case("start-size-ver0", c, SAMPLE_CONFIG_SIZE_VER0);
	start_case("start-size-40-zero-tail", c, sizeof(*c) + 8);
	start_case("start-size-page", c, PAGE);
	c->max_size = SAMPLE_MIN_MAX_SIZE;
	start_case("start-min-max-size", c, sizeof(*c));
}

/* The call-chain fields: the flag, the depth, the reserved word. */
static void callchain_cases(void)
{
	struct sample_config *c = cfg(SAMPLE_F_CALLCHAIN, 0, 0, 0);

	c->callchain_depth = SAMPLE_MAX_CALLCHAIN_DEPTH + 1;
	CHECK("start-callchain-depth-128", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 0, 0);
	c->callchain_depth = 8;
	CHECK("start-depth-without-callchain", start_raw(path, c, sizeof(*c)));
	c = cfg(0, 0, 0, 0);
	c->reserved = 1;
	CHECK("start-reserved-nonzero", start_raw(path, c, sizeof(*c)));
	/* A buffer must hold the largest chain record and its sample. */
	c = cfg(SAMPLE_F_CALLCHAIN, 0, SAMPLE_MIN_BUFFER_SIZE, 0);
	CHECK("start-callchain-tiny-buffer", start_raw(path, c, sizeof(*c)));
	c = cfg(SAMPLE_F_CALLCHAIN, 0, 0, 0);
	c->callchain_depth = SAMPLE_MAX_CALLCHAIN_DEPTH;
	start_case("start-callchain-127", c, sizeof(*c));
	c = cfg(SAMPLE_F_CALLCHAIN, 0, 0, 0);
	start_case("start-callchain-default", c, sizeof(*c));
}

/* Is buf[from, to) all byte b? */
static int all(size_t from, size_t to, unsigned char b)
{
	for (size_t i = from; i < to; i++)
		if (buf[i] != b)
			return 0;
	return 1;
}

/*
 * sample_stop fills min(size, its own) bytes and zeroes the rest of size:
 * with VER0, nothing past it; with 256, bytes 176..255 zero and nothing
 * past them. The accounting must be exact within what was filled.
 */
static void stop_sizes(void)
{
	const struct sample_stats *st = (const struct sample_stats *)buf;
	long r;

	start_quiet("stop-size-ver0");
	memset(buf, 0xaa, sizeof(buf));
	r = stop_raw(buf, SAMPLE_STATS_SIZE_VER0);
	printf("stop-size-ver0: %s\n", r ? ename(0, errno) :
	       !all(SAMPLE_STATS_SIZE_VER0, sizeof(buf), 0xaa) ?
	       "WROTE-PAST-SIZE" : st->samples_taken < st->samples_written ?
	       "BAD-STATS" : "OK");
	start_quiet("stop-size-256");
	memset(buf, 0xaa, sizeof(buf));
	r = stop_raw(buf, 256);
	printf("stop-size-256: %s\n", r ? ename(0, errno) :
	       !all(sizeof(struct sample_stats), 256, 0) ? "TAIL-NOT-ZEROED" :
	       !all(256, sizeof(buf), 0xaa) ? "WROTE-PAST-SIZE" :
	       st->samples_taken != st->samples_written +
	       st->dropped_no_buffer + st->dropped_no_appid +
	       st->dropped_write_error + st->discarded_no_write +
	       st->dropped_max_size ? "BAD-ACCOUNTING" : "OK");
}

/*
 * The numbers the calls had before (451 to 454), as a binary built against
 * them makes the calls: nothing answers them here (ENOSYS), and no session
 * starts (the stop after them finds none).
 */
static void old_numbers(void)
{
	CHECK("old-451-sample_start", syscall(451, path, NULL, (size_t)0));
	CHECK("old-452-sample_stop", syscall(452, NULL, (size_t)0));
	CHECK("old-453-sleepy_lstack", syscall(453, NULL, (size_t)0, 0));
	CHECK("old-454-sleepy_unwind", syscall(454, ~0u, -1, NULL, (size_t)0));
	CHECK("stop-after-old-numbers", stop_raw(NULL, 0));
}

int main(int argc, char **argv)
{
	char file[PAGE + 32];
	struct sample_stats st;
	void *unmapped;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: abi_check [DIR]\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[1] : "/tmp");
	snprintf(file, sizeof(file), "%s/abi.samples", dir);
	path = file;
	unmapped = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	munmap(unmapped, PAGE);

	sleepy_stats_init(&st);
	CHECK("stop-without-start", sleepy_sample_stop(&st));
	old_numbers();
	start_errors(unmapped);
	start_sizes();
	callchain_cases();

	CHECK("start-ok", sleepy_sample_start(path, NULL));
	CHECK("start-ebusy", sleepy_sample_start(path, NULL));
	CHECK("stop-size-0", stop_raw(&st, 0));
	CHECK("stop-null-stats-size-128", stop_raw(NULL, sizeof(st)));
	CHECK("stop-size-119", stop_raw(&st, SAMPLE_STATS_SIZE_VER0 - 1));
	CHECK("stop-size-4097", stop_raw(buf, PAGE + 1));
	CHECK("stop-ok", sleepy_sample_stop(&st));
	CHECK("stop-again", sleepy_sample_stop(&st));
	CHECK("stop-null-without-start", sleepy_sample_stop(NULL));
	CHECK("start-null-cfg", sleepy_sample_start(path, NULL));
	CHECK("stop-null-stats", sleepy_sample_stop(NULL));
	stop_sizes();

	/*
	 * A stats area the kernel cannot write is refused before the
	 * session stops: the next stop ends it.
	 */
	start_quiet("stop-efault");
	CHECK("stop-efault", stop_raw(unmapped, sizeof(st)));
	CHECK("stop-after-efault", sleepy_sample_stop(NULL));
	return 0;
}
