// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_fake.so: sleepy's system calls faked in user space, for the host
 * tests of the logical-stack programs (LD_PRELOAD=lstack_fake.so PROG):
 * it replaces libc's syscall(), so it reaches dynamically linked programs
 * only.
 *
 *   sleepy_lstack (602)  the rules of the spec (Documentation/usage.md,
 *                        "The ABI"): one registration a thread, EINVAL,
 *                        EFAULT (an unmapped page or a kernel address)
 *                        and EBUSY; a fork child and a new thread start
 *                        unregistered, and so does an exec'd image.
 *   sample_start (600)   writes the session file's header, whose start
 *                        time picks the names files the stop copies, and,
 *                        if FAKE_LOG names a file, "flags N" there.
 *   sample_stop (601)    zero statistics.
 * Any other call fails with ENOSYS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/sleepy.h>

long syscall(long nr, ...);

static __thread void *registered;

static void forget(void)
{
	registered = NULL;
}

__attribute__((constructor)) static void init(void)
{
	pthread_atfork(NULL, NULL, forget);
}

static int mapped(const void *p)
{
	unsigned char v;

	return !mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 1, &v);
}

static int lstack(void *area, unsigned int size, unsigned int flags)
{
	if (flags & ~SLEEPY_LSTACK_UNREGISTER)
		return EINVAL;
	if (flags) {
		if (size || !registered || area != registered)
			return EINVAL;
		registered = NULL;
		return 0;
	}
	if ((uintptr_t)area % SLEEPY_LSTACK_ALIGN ||
	    size < SLEEPY_LSTACK_MIN_SIZE || size > SLEEPY_LSTACK_MAX_SIZE ||
	    (size - 16) % 16)
		return EINVAL;
	if (!area || (uintptr_t)area >= (1ULL << 47) || !mapped(area))
		return EFAULT;
	if (registered)
		return EBUSY;
	registered = area;
	return 0;
}

static int start(const char *path, const struct sample_config *c)
{
	const char *logname = getenv("FAKE_LOG");
	struct sleepy_file_header h;
	struct timespec ts;
	FILE *log;
	int fd;

	if (logname && (log = fopen(logname, "w"))) {
		fprintf(log, "flags %u\n", c ? c->flags : 0);
		fclose(log);
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SLEEPY_MAGIC, sizeof(h.magic));
	h.version = SLEEPY_FORMAT_VERSION;
	h.header_size = sizeof(h);
	clock_gettime(CLOCK_REALTIME, &ts);
	h.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000u +
			      (uint64_t)ts.tv_nsec;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno;
	if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		close(fd);
		return EIO;
	}
	close(fd);
	return 0;
}

long syscall(long nr, ...)
{
	int err = ENOSYS;
	va_list ap;

	va_start(ap, nr);
	if (nr == __NR_sleepy_lstack) {
		void *area = va_arg(ap, void *);
		unsigned int size = va_arg(ap, unsigned int);

		err = lstack(area, size, va_arg(ap, unsigned int));
	} else if (nr == __NR_sample_start) {
		const char *path = va_arg(ap, const char *);

		err = start(path, va_arg(ap, const struct sample_config *));
	} else if (nr == __NR_sample_stop) {
		struct sample_stats *s = va_arg(ap, struct sample_stats *);
		size_t n = va_arg(ap, size_t);

		if (s)
			memset(s, 0, n);
		err = 0;
	}
	va_end(ap);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
