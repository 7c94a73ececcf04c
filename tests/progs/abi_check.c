// SPDX-License-Identifier: GPL-2.0
/*
 * abi_check: a test program. Calls sample_start() and sample_stop() the
 * raw way with bad arguments and prints one "case: errno-name" line per
 * call, for the test suite to compare with what the ABI promises.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../syscalls-user/libsleepy.h"

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
	default: return strerror(e);
	}
}

#define CHECK(name, call) do {						\
		long r_ = (call);					\
		printf("%s: %s\n", name, ename(r_ == 0, errno));	\
	} while (0)

static struct sample_config cfg(unsigned int flags, unsigned int n,
				 unsigned int size, unsigned int appids)
{
	struct sample_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	c.nr_buffers = n;
	c.buffer_size = size;
	c.max_appids = appids;
	return c;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	char path[4096];
	struct sample_config c;
	struct sample_stats st;
	void *unmapped;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: abi_check [DIR]\n");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/abi.samples", dir);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	munmap(unmapped, 4096);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	CHECK("stop-without-start", sleepy_sample_stop(&st));
	CHECK("start-path-efault", sleepy_sample_start(unmapped, NULL));
	CHECK("start-cfg-efault", sleepy_sample_start(path, unmapped));
	c = cfg(0x80, 0, 0, 0);
	CHECK("start-unknown-flag", sleepy_sample_start(path, &c));
	c = cfg(0, SAMPLE_MAX_BUFFERS + 1, 0, 0);
	CHECK("start-too-many-buffers", sleepy_sample_start(path, &c));
	c = cfg(0, 0, 16, 0);
	CHECK("start-tiny-buffer", sleepy_sample_start(path, &c));
	c = cfg(0, 0, SAMPLE_MAX_BUFFER_SIZE + 1, 0);
	CHECK("start-huge-buffer", sleepy_sample_start(path, &c));
	c = cfg(0, 4096, 1 << 20, 0);
	CHECK("start-huge-pool", sleepy_sample_start(path, &c));
	c = cfg(0, 0, 0, SAMPLE_MAX_APPIDS + 1);
	CHECK("start-huge-appids", sleepy_sample_start(path, &c));
	c = cfg(0, 0, 0, 0);
	c.size = 8;
	CHECK("start-bad-size", sleepy_sample_start(path, &c));
	c = cfg(0, 0, 0, 0);
	c.reserved[1] = 1;
	CHECK("start-reserved", sleepy_sample_start(path, &c));
	CHECK("start-enoent", sleepy_sample_start("/nonexistent/dir/x", NULL));
	CHECK("start-eisdir", sleepy_sample_start(dir, NULL));

	CHECK("start-ok", sleepy_sample_start(path, NULL));
	CHECK("start-ebusy", sleepy_sample_start(path, NULL));
	CHECK("stop-efault", sleepy_sample_stop(unmapped));
	st.size = 4;
	CHECK("stop-bad-size", sleepy_sample_stop(&st));
	st.size = sizeof(st);
	CHECK("stop-ok", sleepy_sample_stop(&st));
	CHECK("stop-again", sleepy_sample_stop(&st));
	CHECK("stop-null-without-start", sleepy_sample_stop(NULL));
	CHECK("start-null-cfg", sleepy_sample_start(path, NULL));
	CHECK("stop-null-stats", sleepy_sample_stop(NULL));
	return 0;
}
