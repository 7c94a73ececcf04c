// SPDX-License-Identifier: GPL-2.0
/*
 * sleepy_unwind: unwind tables for sleepy sessions, by hand.
 *
 *   sleepy_unwind table FILE...  each file's table: its size against the
 *                                CFI section's, rows, rules, coverage
 *   sleepy_unwind warm FILE...   make the tables into the cache folder
 *   sleepy_unwind serve          feed the running session (as sample_start
 *                                --callchain does by itself)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "sleepy_unwind"
#include "die.h"
#include "libsleepy.h"
#include "unwind_serve.h"
#include "unwind_table.h"

static const char usage_text[] =
	"usage: sleepy_unwind table FILE...\n"
	"       sleepy_unwind warm FILE...\n"
	"       sleepy_unwind serve\n"
	"\n"
	"Unwind tables let a sleepy session (sample_start --callchain) walk\n"
	"the user stacks of programs built without frame pointers. Each is\n"
	"made from a file's .eh_frame (or .debug_frame) with libdw.\n"
	"\n"
	"  table  print each file's table: bytes, against its CFI section's,\n"
	"         rows, distinct rules, and the text it covers, marked (a\n"
	"         DWARF expression: frame pointers there) and not covered\n"
	"  warm   make the tables into the cache folder, where the session's\n"
	"         helper finds them by build-id\n"
	"  serve  feed the running session's tables until it stops, as the\n"
	"         helper that sample_start starts does; prints its counts\n"
	"\n"
	"The cache folder is $SLEEPY_UNWIND_CACHE (empty: no cache), else\n"
	"$XDG_CACHE_HOME/sleepy/unwind, else ~/.cache/sleepy/unwind.\n"
	"\n"
	"  -h, --help  this text\n";

/* table: one line of figures per file; 1 if any failed. */
static int cmd_table(char **files, int n)
{
	int bad = 0;

	printf("%-40s %10s %10s %6s %8s %6s %10s %8s %8s\n", "file",
	       "table", "cfi", "ratio", "rows", "rules", "text", "marked",
	       "none");
	for (int i = 0; i < n; i++) {
		struct uw_table t;
		char err[256];
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || uw_table_of_fd(fd, &t, err, sizeof(err))) {
			warn("%s: %s", files[i], fd < 0 ? strerror(errno) : err);
			bad = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		printf("%-40s %10zu %10" PRIu64 " %6.2f %8u %6u %10" PRIu64
		       " %8" PRIu64 " %8" PRIu64 "\n", files[i], t.size,
		       t.cfi_bytes, t.cfi_bytes ? (double)t.size / t.cfi_bytes : 0,
		       t.nr_rows, t.nr_rules, t.text_bytes, t.marked_bytes,
		       t.none_bytes);
		uw_table_free(&t);
		close(fd);
	}
	return bad;
}

/* warm: each file's table into the cache; 1 if any failed. */
static int cmd_warm(char **files, int n)
{
	char buf[4096], err[256];
	const char *dir = uw_cache_dir(buf, sizeof(buf));
	int bad = 0;

	if (!dir)
		die(2, "no cache folder (SLEEPY_UNWIND_CACHE is empty, and "
		    "no HOME)");
	for (int i = 0; i < n; i++) {
		struct uw_table t;
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || uw_table_cached(fd, dir, &t, err, sizeof(err)) < 0) {
			warn("%s: %s", files[i], fd < 0 ? strerror(errno) : err);
			bad = 1;
		} else {
			uw_table_free(&t);
		}
		if (fd >= 0)
			close(fd);
	}
	return bad;
}

/* serve: until the session stops. */
static int cmd_serve(void)
{
	struct uw_serve_counts c = { 0 };
	char buf[4096];

	if (uw_serve(uw_cache_dir(buf, sizeof(buf)), stderr, &c)) {
		if (errno == ENOSYS)
			die(SLEEPY_EXIT_NO_SUPPORT, SLEEPY_NO_SUPPORT);
		die(1, "%s", errno == ESRCH ?
		    "no session with unwind tables is running" :
		    strerror(errno));
	}
	printf("tables loaded %lu (from the cache %lu), unreadable %lu, "
	       "without CFI %lu, refused %lu\n", c.loaded, c.cached,
	       c.unreadable, c.no_cfi, c.refused);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	int o;

	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (o != 'h')
			die(2, "unknown option (see --help)");
		fputs(usage_text, stdout);
		return 0;
	}
	if (optind >= argc)
		die(2, "no command (see --help)");
	cmd = argv[optind++];
	if (!strcmp(cmd, "serve") && optind == argc)
		return cmd_serve();
	if (optind == argc && (!strcmp(cmd, "table") || !strcmp(cmd, "warm")))
		die(2, "%s: no file", cmd);
	if (!strcmp(cmd, "table"))
		return cmd_table(argv + optind, argc - optind);
	if (!strcmp(cmd, "warm"))
		return cmd_warm(argv + optind, argc - optind);
	die(2, "%s: unknown command (see --help)", cmd);
}
