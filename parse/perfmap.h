/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfmap: the names a JIT gives its code, from the process's perf map,
 * perf's jit-interface format: a line "START SIZE NAME" per function,
 * START and SIZE in hex without 0x, NAME the rest of the line (V8's
 * "LazyCompile:*hot /path/x.js:3", say). The file is the one sample_stop
 * copied next to the session (FILE.perf-PID.map), or else
 * /tmp/perf-PID.map (under --symfs). Read once per process, sorted; a
 * later line for the same START wins (the JIT reused the memory).
 */
#ifndef SLEEPY_PARSE_PERFMAP_H
#define SLEEPY_PARSE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

struct perfmap_sym {
	uint64_t start, end;
	uint32_t name;		/* strtab id */
	uint32_t line;		/* its line in the file (ties: the later) */
};

struct perfmap {
	uint32_t pid;
	uint32_t dso;		/* strtab id of "perf-PID.map" */
	int found;		/* 1: read, 0: no file */
	struct perfmap_sym *syms;	/* by start */
	size_t n;
};

struct perfmaps {
	const char *session;	/* the session file's path, or NULL (stdin) */
	const char *symfs;
	struct perfmap *v;
	size_t n, cap;
};

/* pid's map, read on first use: NULL when out of memory. */
struct perfmap *perfmap_get(struct perfmaps *pm, uint32_t pid,
			    struct strtab *names);

/* The function of map at ip, or NULL. */
const struct perfmap_sym *perfmap_lookup(const struct perfmap *map,
					 uint64_t ip);

void perfmaps_free(struct perfmaps *pm);

#endif
