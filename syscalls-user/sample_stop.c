// SPDX-License-Identifier: GPL-2.0
/*
 * sample_stop: stop the sleepy sampling session (system call 601) and print
 * its statistics, as an aligned table or (--json) a JSON object.
 *
 * Exit status: 0 clean; 1 when there was nothing to stop, the call failed,
 * the session had write errors or its sample accounting does not add up
 * (the statistics are printed first in the last two cases); 2 usage; 69
 * a kernel without sleepy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsleepy.h"

#define PROG "sample_stop"
#include "die.h"
#include "session_stats.h"
#include "private_file.h"
#include "perf_maps.h"

static const char usage_text[] =
	"usage: sample_stop [--json]\n"
	"\n"
	"Stop the active sleepy sampling session, which flushes the remaining\n"
	"samples and a STATS record to the session file, and print the\n"
	"session's statistics. The perf maps of its processes' JITs\n"
	"(/tmp/perf-PID.map) and the names of their logical stack frames\n"
	"(/tmp/sleepy-lstack-PID.names) are copied next to the session file\n"
	"as FILE.perf-PID.map and FILE.lstack-PID.names, for parse.\n"
	"\n"
	"  --json      print the statistics as one JSON object\n"
	"  -h, --help  this text\n"
	"\n"
	"Every sample taken must be written, dropped or discarded; the output\n"
	"says whether that accounting is exact. The session file holds each\n"
	"CPU's own figures (parse shows them). Exit status: 0 stopped; 1 no\n"
	"session was active, the call failed, the session had write errors or\n"
	"the accounting does not add up; 2 usage; 69 a kernel without sleepy.\n";

/* The perf maps and lstack names of the session's processes, next to its
 * file. */
static void copy_maps(void)
{
	char *path = take_session_note();

	if (path)
		copy_session_side_files(path);
	free(path);
}

int main(int argc, char **argv)
{
	struct sample_stats stats;
	struct summary sum;
	bool json = false;
	char why[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-') {
			die(2, "%s: unknown option (see --help)", argv[i]);
		} else {
			die(2, "%s: unexpected argument (see --help)", argv[i]);
		}
	}

	sleepy_stats_init(&stats);
	if (sleepy_sample_stop(&stats) != 0) {
		switch (errno) {
		case EINVAL:
			die(1, "no sampling session is active");
		case ENOSYS:
			die(SLEEPY_EXIT_NO_SUPPORT, SLEEPY_NO_SUPPORT);
		case EPERM:
			die(1, "stopping the session: %s (needs CAP_SYS_ADMIN "
			    "or CAP_PERFMON)", strerror(EPERM));
		default:
			die(1, "stopping the session: %s", strerror(errno));
		}
	}

	copy_maps();
	sum = print_stats(stdout, &stats, json);
	if (session_problem(&stats, &sum, why, sizeof(why)))
		die(1, "%s", why);
	return 0;
}
