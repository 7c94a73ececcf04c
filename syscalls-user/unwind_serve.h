/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwind helper of a SAMPLE_F_UNWIND session: it takes the files the
 * session wants tables for (sleepy_unwind(2) WAIT), opens each with its
 * own rights, makes the table (unwind_table.c) or takes it from the cache
 * and gives it to the kernel (LOAD), until the session ends.
 */
#ifndef SLEEPY_UNWIND_SERVE_H
#define SLEEPY_UNWIND_SERVE_H

#include <stdio.h>

struct uw_serve_counts {
	unsigned long loaded, cached, unreadable, no_cfi, refused;
};

/*
 * The folder of cached tables: $SLEEPY_UNWIND_CACHE (empty: none), else
 * $XDG_CACHE_HOME/sleepy/unwind, else $HOME/.cache/sleepy/unwind; NULL
 * for none. In buf (n bytes).
 */
const char *uw_cache_dir(char *buf, size_t n);

/*
 * The table of the file open at fd (path for messages), from the cache
 * folder dir (NULL: none) if it has it by the file's build-id, else made
 * and stored there. 0, 1 if it came from the cache, -1 with err.
 */
struct uw_table;
int uw_table_cached(int fd, const char *dir, struct uw_table *t, char *err,
		    size_t n);

/*
 * Serve the session until it ends: 0, or -1 with errno (the session is
 * not SAMPLE_F_UNWIND: ESRCH). Refused tables are reported on log.
 */
int uw_serve(const char *cache_dir, FILE *log, struct uw_serve_counts *c);

/* What LOAD's error code (SLEEPY_UNWIND_E_*) means. */
const char *uw_error_text(unsigned int code);

#endif
