// SPDX-License-Identifier: GPL-2.0
/*
 * cycles: a test program. Runs N sample_start/sample_stop cycles on PATH
 * with a small pool, checking each session's accounting, and prints
 * "cycles=N bad=B samples=S".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../syscalls-user/libsleepy.h"

int main(int argc, char **argv)
{
	struct sample_config cfg;
	struct sample_stats st;
	unsigned long long samples = 0;
	int n, i, bad = 0;

	if (argc != 3 || !strcmp(argv[1], "--help")) {
		printf("usage: cycles N PATH\n");
		return argc == 2 ? 0 : 2;
	}
	n = atoi(argv[1]);
	sleepy_config_init(&cfg);
	cfg.nr_buffers = 2;
	cfg.buffer_size = 4096;
	cfg.max_appids = 256;
	for (i = 0; i < n; i++) {
		if (sleepy_sample_start(argv[2], &cfg)) {
			fprintf(stderr, "cycles: start %d: %s\n", i, strerror(errno));
			break;
		}
		sleepy_stats_init(&st);
		if (sleepy_sample_stop(&st)) {
			fprintf(stderr, "cycles: stop %d: %s\n", i, strerror(errno));
			break;
		}
		samples += st.samples_taken;
		if (st.samples_taken != st.samples_written + st.dropped_no_buffer +
		    st.dropped_no_appid + st.dropped_write_error +
		    st.dropped_max_size + st.discarded_no_write ||
		    st.write_errors)
			bad++;
	}
	printf("cycles=%d bad=%d samples=%llu\n", i, bad, samples);
	return i == n && !bad ? 0 : 1;
}
