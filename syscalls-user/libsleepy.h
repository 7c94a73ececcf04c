/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsleepy.h: header-only wrappers for the sleepy system calls.
 *
 * Like the libc wrappers, each returns 0 on success and -1 with errno set on
 * failure. The structures and syscall numbers come from the kernel's uapi
 * header <linux/sleepy.h> (build with -I<uapi dir>). syscall(2) needs
 * _DEFAULT_SOURCE or _GNU_SOURCE defined before the first #include.
 *
 * Both calls take the size of the struct the program was built with
 * (clone3() style): a kernel that knows more fields takes their defaults
 * (sample_start) or zeroes what it does not copy (sample_stop); one that
 * knows fewer accepts the larger struct as long as the fields it does not
 * know are zero.
 */
#ifndef SLEEPY_LIBSLEEPY_H
#define SLEEPY_LIBSLEEPY_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sleepy.h>

/*
 * What every sleepy tool says, and its exit status, on a kernel without
 * sleepy, whose sleepy system calls fail with ENOSYS: a status apart from
 * 1 (an error) and 2 (a wrong command line), sysexits.h's EX_UNAVAILABLE.
 */
#define SLEEPY_NO_SUPPORT	"this kernel has no sleepy support"
#define SLEEPY_EXIT_NO_SUPPORT	69

/*
 * Whether the running kernel has sleepy's system calls, asked with no
 * effect: sleepy_unwind(2) with an op that none takes fails with EPERM or
 * EINVAL where the call exists, ENOSYS where it does not. errno is kept.
 */
static inline int sleepy_supported(void)
{
	int err = errno;
	int yes = syscall(__NR_sleepy_unwind, ~0u, -1, NULL, (size_t)0) == 0 ||
		  errno != ENOSYS;

	errno = err;
	return yes;
}

/* A configuration with every field at the kernel's default. */
static inline void sleepy_config_init(struct sample_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

/* Zeroed stats, ready for sleepy_sample_stop(). */
static inline void sleepy_stats_init(struct sample_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
}

/*
 * Start a session writing to path (created or truncated by the kernel),
 * with cfg (see sleepy_config_init()), or every default if cfg is NULL.
 */
static inline int sleepy_sample_start(const char *path,
				      const struct sample_config *cfg)
{
	return (int)syscall(__NR_sample_start, path, cfg,
			    cfg ? sizeof(*cfg) : (size_t)0);
}

/*
 * Stop the active session and fill *stats, if not NULL. EINVAL: no session
 * is active.
 */
static inline int sleepy_sample_stop(struct sample_stats *stats)
{
	return (int)syscall(__NR_sample_stop, stats,
			    stats ? sizeof(*stats) : (size_t)0);
}

/*
 * sleepy_unwind(2)'s WAIT: the files the session wants tables for, as
 * struct sleepy_unwind_want records into buf; the bytes filled, 0 once
 * the session ended, or -1 with errno.
 */
static inline long sleepy_unwind_wait(void *buf, size_t size)
{
	return syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_WAIT, -1, buf, size);
}

/* sleepy_unwind(2)'s LOAD: table (size bytes) for fd's file (-1: vDSO). */
static inline int sleepy_unwind_load(int fd, void *table, size_t size)
{
	return (int)syscall(__NR_sleepy_unwind, SLEEPY_UNWIND_LOAD, fd, table,
			    size);
}

#endif /* SLEEPY_LIBSLEEPY_H */
