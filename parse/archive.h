/* SPDX-License-Identifier: GPL-2.0 */
/*
 * archive: parse --archive DIR. Every ELF file the session's samples
 * touch (the files of the mappings their user IPs fall in), and each one's
 * separate debug file, copied into DIR by GNU build-id as
 * DIR/.build-id/xx/rest and DIR/.build-id/xx/rest.debug, the layout of
 * perf's build-id cache and of /usr/lib/debug. `parse --buildid-dir DIR`
 * then finds a file there when its recorded path is missing or holds
 * another build, so a session stays readable after its programs are
 * rebuilt or deleted, or on another machine.
 */
#ifndef SLEEPY_PARSE_ARCHIVE_H
#define SLEEPY_PARSE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "counts.h"
#include "symbolize.h"

struct archive_stats {
	size_t objects;		/* files with a build-id the samples touch */
	size_t debug_files;	/* their debug files */
	size_t copied;		/* files written now (objects and debug) */
	uint64_t bytes;		/* their bytes */
	size_t no_build_id;	/* touched files without one: not archived */
};

/*
 * Copy the files of the n entries e (appid and ip; kernel IPs are left
 * out) into dir, which is made if missing. A file already there is kept
 * (its name is its build-id). Returns 0, or -1 with a line in err (a
 * partial copy is removed).
 */
int archive_files(struct symbolizer *s, const struct count_entry *e,
		  size_t n, const char *dir, struct archive_stats *st,
		  char *err, size_t errlen);

#endif
