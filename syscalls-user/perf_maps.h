/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf_maps.h: the files a session's processes leave in /tmp for parse,
 * copied next to the session file when the session stops, so that parse
 * can read them after the processes and /tmp are gone, or on another
 * machine:
 *   - the perf maps JITs write (/tmp/perf-PID.map: node
 *     --perf-basic-prof, a JVM's perf agent, ...), copied as
 *     FILE.perf-PID.map: the names of the code in the processes'
 *     anonymous executable memory;
 *   - the names of logical stack frames (/tmp/sleepy-lstack-PID.names,
 *     written by libsleepy_lstack's sleepy_lstack_name()), copied as
 *     FILE.lstack-PID.names.
 *
 * The stop call does not say where the session was writing: sample_start
 * notes the session file's path in SESSION_NOTE, and the stop (sample_stop,
 * or sample_start's one-command form) reads it back and removes it. The
 * files copied are those changed since the session started (the session
 * file's header has its start), and those of the processes still running:
 * the files of the processes that ran in it. Only regular files are
 * copied (never through a symbolic link), to private files (mode 0600).
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
		     "and lstack names will not be copied): %s: %s",
		     SESSION_NOTE, strerror(errno));
}

/* The noted session file's path (malloc'd), the note removed; NULL if
 * there is none. */
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

/*
 * A kind of file a process leaves in /tmp: /tmp/PREFIX<PID>SUFFIX, copied
 * to PATH<COPY><PID>SUFFIX.
 */
struct side_file {
	const char *prefix;	/* its name in /tmp up to the pid */
	const char *copy;	/* the copy's name after PATH, up to the pid */
	const char *suffix;	/* both names after the pid */
	const char *one, *many;	/* what it is, for messages */
};

static const struct side_file side_files[] = {
	{ "perf-", ".perf-", ".map", "perf map", "perf maps" },
	{ "sleepy-lstack-", ".lstack-", ".names", "lstack names file",
	  "lstack names files" },
};

#define SIDE_FILES (sizeof(side_files) / sizeof(side_files[0]))

/* "PREFIX<PID>SUFFIX": its PID, or 0 for another name. */
static unsigned long side_file_pid(const char *name,
				   const struct side_file *k)
{
	size_t n = strlen(k->prefix);
	unsigned long pid;
	char *end;

	if (strncmp(name, k->prefix, n) || name[n] < '1' || name[n] > '9')
		return 0;
	pid = strtoul(name + n, &end, 10);
	return strcmp(end, k->suffix) ? 0 : pid;
}

/* /tmp/NAME (open at in, a regular file) to PATH<COPY><PID>SUFFIX. */
static int copy_side_file(int in, const char *path, unsigned long pid,
			  const struct side_file *k)
{
	char out[PATH_MAX], buf[65536];
	ssize_t n;
	int fd;

	snprintf(out, sizeof(out), "%s%s%lu%s", path, k->copy, pid,
		 k->suffix);
	fd = open_private(out);
	if (fd < 0) {
		warn("cannot copy the %s of pid %lu: %s: %s", k->one, pid, out,
		     strerror(errno));
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(fd, buf, (size_t)n))
			break;
	if (n != 0 || close(fd)) {
		warn("cannot copy the %s of pid %lu: %s: %s", k->one, pid, out,
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

/* Is process pid running (its file may predate the session)? */
static int running(unsigned long pid)
{
	char proc[32];

	snprintf(proc, sizeof(proc), "/proc/%lu", pid);
	return !access(proc, F_OK);
}

/* /tmp/NAME, if it is a file of kind k of the session, to its copy: 1 if
 * it was copied. */
static int copy_if_side_file(DIR *d, const char *name, const char *path,
			     uint64_t since, const struct side_file *k)
{
	unsigned long pid = side_file_pid(name, k);
	struct stat st;
	int in, copied = 0;

	if (!pid)
		return 0;
	in = openat(dirfd(d), name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    O_NONBLOCK);
	if (in < 0)
		return 0;
	if (!fstat(in, &st) && S_ISREG(st.st_mode) &&
	    (changed_since(&st, since) || running(pid)) &&
	    !copy_side_file(in, path, pid, k))
		copied = 1;
	close(in);
	return copied;
}

/* Each /tmp file of side_files[] changed since the session at path
 * started, or of a process still running, to its copy next to path;
 * counts[i], the number of side_files[i] copied. */
static void copy_side_files(const char *path, int counts[SIDE_FILES])
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	uint64_t since;

	memset(counts, 0, SIDE_FILES * sizeof(counts[0]));
	if (!d || session_start(path, &since)) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d)))
		for (size_t i = 0; i < SIDE_FILES; i++)
			counts[i] += copy_if_side_file(d, e->d_name, path,
						       since, &side_files[i]);
	closedir(d);
}

/* The stop: the files of the session at path copied next to it, and a
 * line on standard error for each kind copied ("PROG: copied 2 perf maps
 * next to PATH"). */
__attribute__((unused))
static void copy_session_side_files(const char *path)
{
	int counts[SIDE_FILES];

	copy_side_files(path, counts);
	for (size_t i = 0; i < SIDE_FILES; i++)
		if (counts[i])
			fprintf(stderr, PROG ": copied %d %s next to %s\n",
				counts[i], counts[i] == 1 ? side_files[i].one :
				side_files[i].many, path);
}

#endif
