/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsleepy.h: header-only wrappers for the sleepy system calls.
 *
 * Like the libc wrappers, each returns 0 on success and -1 with errno set on
 * failure. The structures and syscall numbers come from the kernel's uapi
 * header <linux/sleepy.h> (build with -I<uapi dir>). syscall(2) needs
 * _DEFAULT_SOURCE or _GNU_SOURCE defined before the first #include.
 */
#ifndef SLEEPY_LIBSLEEPY_H
#define SLEEPY_LIBSLEEPY_H

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sleepy.h>

/* A configuration with every field at the kernel's default. */
static inline void sleepy_config_init(struct sample_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

/* Zero stats and set its size, ready for sleepy_sample_stop(). */
static inline void sleepy_stats_init(struct sample_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
}

/*
 * Start a session writing to path (created or truncated by the kernel).
 * cfg->size must be sizeof(struct sample_config): see sleepy_config_init().
 */
static inline int sleepy_sample_start(const char *path,
				      const struct sample_config *cfg)
{
	return (int)syscall(__NR_sample_start, path, cfg);
}

/*
 * Stop the active session and fill *stats (stats->size set by the caller:
 * see sleepy_stats_init()). EINVAL: no session is active.
 */
static inline int sleepy_sample_stop(struct sample_stats *stats)
{
	return (int)syscall(__NR_sample_stop, stats);
}

#endif /* SLEEPY_LIBSLEEPY_H */
