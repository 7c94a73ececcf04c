/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lstacknames: the names a program gives its logical frame ids
 * (sleepy_lstack_name()), from its names file: a line "ID NAME" per name,
 * ID in decimal, NAME the rest of the line. The file is the one
 * sample_stop copied next to the session (FILE.lstack-PID.names), or else
 * /tmp/sleepy-lstack-PID.names under --symfs (or /). Read once per
 * process, PID its thread group id; a later line for an id wins (the
 * program named it again); lines not so made (or with a NUL, or a name of
 * more than LSTACK_NAME_MAX bytes) are skipped, counted in a warning. The
 * names are the program's text: the writers make them printable.
 */
#ifndef SLEEPY_PARSE_LSTACKNAMES_H
#define SLEEPY_PARSE_LSTACKNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

#define LSTACK_NAME_MAX	1000

struct lstack_name {
	uint64_t id;
	uint32_t name;		/* strtab id */
	uint32_t line;		/* its line in the file (ties: the later) */
};

struct lstack_names_file {
	uint32_t pid;
	bool found;		/* a file was read */
	size_t bad;		/* lines skipped */
	struct lstack_name *v;	/* by id, one each */
	size_t n;
};

struct lstack_names {
	const char *session;	/* the session file's path, or NULL (stdin) */
	const char *symfs;
	const char *file;	/* the session file as named, for warnings */
	struct lstack_names_file *v;
	size_t n, cap;
};

/* pid's names, read on first use: NULL when out of memory. */
const struct lstack_names_file *lstack_names_get(struct lstack_names *ln,
						 uint32_t pid,
						 struct strtab *names);

/* The strtab id of id's name in pid's file: 0 when it has none,
 * STRTAB_NOMEM when out of memory. */
uint32_t lstack_name(struct lstack_names *ln, uint32_t pid, uint64_t id,
		     struct strtab *names);

void lstack_names_free(struct lstack_names *ln);

#endif
