/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf_maps.h: the perf maps JITs write (/tmp/perf-PID.map: node
 * --perf-basic-prof, a JVM's perf agent, ...) copied next to the session
 * file as FILE.perf-PID.map when its session stops, so that parse can name
 * the code in the processes' anonymous executable memory after the
 * processes and /tmp are gone, or on another machine.
 *
 * The stop call does not say where the session was writing: sample_start
 * notes the session file's path in SESSION_NOTE, and the stop (sample_stop,
 * or sample_start's one-command form) reads it back and removes it. The
 * maps copied are those changed since the session started (the session
 * file's header has its start), and those of the processes still running:
 * the maps of the processes that ran in it.
 * Every failure is a warning: the session itself is complete.
 *
 * Include it after die.h and private_file.h.
 */
#ifndef SLEEPY_PERF_MAPS_H
#define SLEEPY_PERF_MAPS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sleepy.h>

#define SESSION_NOTE "/run/sleepy-session"

/* sample_start: note the running session's file (as an absolute path,
 * as the kernel opened it from our folder) for the stop. */
__attribute__((unused))
static void note_session(const char *path)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	int fd = -1, n = -1;

	if (path[0] == '/')
		n = snprintf(abs, sizeof(abs), "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(abs, sizeof(abs), "%.*s/%s", PATH_MAX / 2, cwd,
			     path);
	if (n > 0 && (size_t)n < sizeof(abs))
		fd = open_private(SESSION_NOTE);
	else
		errno = ENAMETOOLONG;
	if (fd < 0 || write_all(fd, abs, strlen(abs)) || close(fd))
		warn("cannot note the session file for sample_stop (perf maps "
		     "will not be copied): %s: %s", SESSION_NOTE,
		     strerror(errno));
}

/* The noted session file's path (malloc'd), the note removed; NULL if
 * there is none. */
__attribute__((unused))
static char *take_session_note(void)
{
	char buf[PATH_MAX + 1];
	struct stat st;
	ssize_t n = -1;
	int fd = open(SESSION_NOTE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		      O_NONBLOCK);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(SESSION_NOTE);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* When the session of the file at path started (CLOCK_REALTIME ns). */
static int session_start(const char *path, uint64_t *ns)
{
	struct sleepy_file_header h;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? pread(fd, &h, sizeof(h), 0) : -1;

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, SLEEPY_MAGIC, 8))
		return -1;
	*ns = h.start_realtime_ns;
	return 0;
}

/* "perf-PID.map": its PID, or 0 for another name. */
static unsigned long perf_map_pid(const char *name)
{
	unsigned long pid;
	char *end;

	if (strncmp(name, "perf-", 5) || name[5] < '1' || name[5] > '9')
		return 0;
	pid = strtoul(name + 5, &end, 10);
	return strcmp(end, ".map") ? 0 : pid;
}

/* /tmp/NAME (open at in, a regular file) to PATH.perf-PID.map. */
static int copy_perf_map(int in, const char *path, unsigned long pid)
{
	char out[PATH_MAX], buf[65536];
	ssize_t n;
	int fd;

	snprintf(out, sizeof(out), "%s.perf-%lu.map", path, pid);
	fd = open_private(out);
	if (fd < 0) {
		warn("cannot copy the perf map of pid %lu: %s: %s", pid, out,
		     strerror(errno));
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(fd, buf, (size_t)n))
			break;
	if (n != 0 || close(fd)) {
		warn("cannot copy the perf map of pid %lu: %s: %s", pid, out,
		     strerror(errno));
		unlink(out);
		return -1;
	}
	return 0;
}

static int changed_since(const struct stat *st, uint64_t ns)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
	       (uint64_t)st->st_mtim.tv_nsec >= ns;
}

/* Is process pid running (a JIT whose map was written before)? */
static int running(unsigned long pid)
{
	char proc[32];

	snprintf(proc, sizeof(proc), "/proc/%lu", pid);
	return !access(proc, F_OK);
}

/* Each /tmp/perf-PID.map changed since the session at path started, or of
 * a process still running, to PATH.perf-PID.map; the number copied. */
__attribute__((unused))
static int copy_perf_maps(const char *path)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	uint64_t since;
	struct stat st;
	int copied = 0;

	if (!d || session_start(path, &since)) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((e = readdir(d))) {
		unsigned long pid = perf_map_pid(e->d_name);
		int in;

		if (!pid)
			continue;
		in = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW |
			    O_CLOEXEC | O_NONBLOCK);
		if (in < 0)
			continue;
		if (!fstat(in, &st) && S_ISREG(st.st_mode) &&
		    (changed_since(&st, since) || running(pid)) &&
		    !copy_perf_map(in, path, pid))
			copied++;
		close(in);
	}
	closedir(d);
	return copied;
}

#endif
