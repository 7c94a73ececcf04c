/* SPDX-License-Identifier: GPL-2.0 */
/*
 * peak: --peak APP:SYSCALL:N, the samples behind a peak of a latency
 * histogram. The peak's calls that the tick sampled are the SYSCALL
 * records of APP's appids (APP is a name, all its instances, or an appid
 * name#instance) and SYSCALL (a name or a number) whose latency falls in
 * the peak's buckets; each is a window of its thread's time, from its
 * start to its end, inclusive. The pass over the file then counts only
 * the samples of a window's thread within it (session.c).
 */
#ifndef SLEEPY_PARSE_PEAK_H
#define SLEEPY_PARSE_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "latreport.h"

/* A sampled call of the peak. */
struct call_window {
	uint32_t tid;
	uint64_t start, end;
	bool hit;		/* a sample fell in it */
};

struct peak_windows {
	struct call_window *v;	/* by tid, then start */
	size_t n;
	uint64_t peak_calls;	/* the calls of the peak (its histogram) */
	uint64_t sampled;	/* the windows a sample fell in */
	char desc[400];		/* "peak APP:SYSCALL:N (LO to HI): ..." */
};

/*
 * The windows of peak spec (APP:SYSCALL:N) of the session's records in
 * lat, its appids those of appids (names: the report's strings). 0; -1
 * when out of memory; -2 with a one-line err when spec names no peak.
 */
int peak_windows_build(const char *spec, const struct latency *lat,
		       const struct appid_table *appids,
		       struct strtab *names, const struct options *o,
		       struct peak_windows *w, char *err, size_t errsz);
void peak_windows_free(struct peak_windows *w);

/* Whether thread tid's time t falls in one of the windows (marked hit). */
bool peak_windows_hit(struct peak_windows *w, uint32_t tid, uint64_t t);

/* After the pass: desc, with the windows hit and the samples counted. */
void peak_windows_describe(struct peak_windows *w, uint64_t samples);

#endif /* SLEEPY_PARSE_PEAK_H */
