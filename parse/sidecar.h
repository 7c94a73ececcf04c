/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sidecar: the files a process leaves for the profiler, read by pid: a
 * JIT's perf map (perfmap.c), a program's logical frame names
 * (lstacknames.c). sample_stop copies each next to the session file as
 * FILE.<prefix>PID<suffix>; without that copy, the process's own file,
 * /tmp/<tmp_prefix>PID<suffix>, is read under --symfs (or /).
 */
#ifndef SLEEPY_PARSE_SIDECAR_H
#define SLEEPY_PARSE_SIDECAR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sidecar_name {
	const char *prefix;	/* "perf-": FILE.perf-PID... */
	const char *tmp_prefix;	/* "perf-": /tmp/perf-PID... */
	const char *suffix;	/* ".map" */
};

/*
 * pid's file, opened for reading (a regular file only), or NULL if there
 * is none; session is the session file's path (NULL: standard input),
 * symfs --symfs (or NULL). path (size bytes) gets the name tried last.
 */
FILE *sidecar_open(const char *session, const char *symfs,
		   const struct sidecar_name *name, uint32_t pid, char *path,
		   size_t size);

/*
 * A sidecar's entries: each line that parse() makes into an entry (1;
 * 0: a bad line, counted in bad; -1: out of memory) is appended, told its
 * line number; then they are sorted by cmp (by key, then line) and, of
 * the entries of one key (same()), the last line's is kept: a process
 * that writes a key again means its new value.
 */
struct sidecar_entries {
	void *v;		/* n entries of size bytes */
	size_t n, size;
	size_t bad;		/* lines not so made */
	int (*parse)(void *entry, char *line, size_t len, uint32_t lineno,
		     void *arg);
	int (*cmp)(const void *a, const void *b);
	int (*same)(const void *a, const void *b);
	void *arg;
};

/* Read f into e (v, n and bad from 0). 0, or -1 when out of memory. */
int sidecar_read(FILE *f, struct sidecar_entries *e);

#endif
