/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session: the one pass over a session file. A reader loop hands each
 * record to the callback of its type (sample, appid, mmap, cpu stats,
 * stats, the system call records, or unknown): samples that pass the
 * in-pass filters (mode, pid, cpu, time, --peak's calls) are counted by
 * the key bits asked for, APPID, MMAP, CPU_STATS and (when asked) the
 * system call records are collected, and the file is summarized for the
 * report's header.
 */
#ifndef SLEEPY_PARSE_SESSION_H
#define SLEEPY_PARSE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "appids.h"
#include "chains.h"
#include "counts.h"
#include "stackids.h"
#include "fields.h"
#include "latency.h"
#include "lstack.h"
#include "maps.h"
#include "options.h"
#include "peak.h"
#include "reader.h"
#include "strtab.h"


/* What a pass over the file found, besides the counts. */
struct session {
	const struct sleepy_file_header *hdr;
	uint64_t samples;		/* sample records */
	uint64_t by_mode[NR_MODES + 1];	/* [NR_MODES]: unknown modes */
	uint64_t selected;		/* samples that pass the filters */
	uint64_t last_time_ns;		/* latest sample time */
	uint64_t appid_records, mmaps, unknown, after_stats, chain_records;
	uint64_t offcpu_records;	/* OFFCPU records (version 4) */
	/* SYSCALL, LATENCY and LAT_SEGMENT records (version 5) */
	uint64_t syscall_records, latency_records, segment_records;
	uint64_t chains_lost;		/* counted samples, CHAIN record missing */
	bool have_stats;
	struct sample_stats stats;	/* the last STATS record */
	struct sleepy_cpu_stats *cpus;	/* the CPU_STATS records, in order */
	size_t ncpus, cap_cpus;
	/* Their sums; buffers_hwm and irq_ns_max: the largest. */
	struct sleepy_cpu_stats cpu_total;
};

/* Where the pass puts what it collects. */
struct session_out {
	struct count_table *counts;	/* keyed by the bits of mask */
	struct appid_table *appids;
	struct maps *maps;
	struct strtab *names;		/* the mappings' paths */
	/*
	 * For the call-chain views (NULL otherwise): the CHAIN records, and
	 * the samples that pass the filters counted by (ip, appid, chain id
	 * as the key's b).
	 */
	struct chain_table *chains;
	struct count_table *stacks;
	/*
	 * For the database (NULL otherwise; then chains and stacks are
	 * set): the distinct stacks, and counts keyed by a stack id where
	 * the IP goes.
	 */
	struct stack_ids *stack_ids;
	/*
	 * For the activity tree and the database (NULL otherwise): the
	 * logical stacks, the samples by them (the tree), the OFFCPU records
	 * that pass the filters; the counts' c then holds the sample's
	 * logical stack's key above its tid.
	 */
	struct lstacks *lstacks;
	/* The system call records (NULL: not kept). */
	struct latency *lat;
	/* --peak: only the samples within these calls (NULL: all). */
	struct peak_windows *windows;
};

/* Whether a decoded sample passes the in-pass filters: --pid, --cpu, --from
 * and --to (the mode is checked before decoding). */
static inline bool session_sample_wanted(const struct options *o,
					 const struct sleepy_sample *x)
{
	return (o->pid < 0 || x->pid == o->pid) &&
	       (o->tid < 0 || x->tid == o->tid) &&
	       (o->cpu < 0 || x->cpu == o->cpu) &&
	       x->time_ns >= o->from_ns && x->time_ns < o->to_ns;
}

/*
 * The filter every view's samples pass, in the first pass (session_read())
 * and in a second (session_next_wanted()): o's in-pass filters and, with
 * --peak, windows (NULL without): the sample's thread in one of the
 * peak's sampled calls.
 */
static inline bool session_sample_passes(const struct options *o,
					 struct peak_windows *windows,
					 const struct sleepy_sample *x)
{
	return session_sample_wanted(o, x) &&
	       (!windows || peak_windows_hit(windows, x->tid, x->time_ns));
}

/*
 * A second pass over the file (perf-script, pprof): the next sample of r
 * that passes every filter of o (the mode, session_sample_passes() with
 * windows, --app and --appid by appids) into *x. 1, 0 at the end, or -1 on
 * a reader error (see sleepy_reader_*()).
 */
int session_next_wanted(struct sleepy_reader *r, const struct options *o,
			const struct appid_table *appids,
			struct peak_windows *windows, struct sleepy_sample *x);

/*
 * Read the rest of the file (after its header) into out and s. Returns 0,
 * -1 when out of memory, or -2 on a reader error (see sleepy_reader_*()).
 */
int session_read(struct sleepy_reader *r, const struct options *o,
		 const struct count_mask *mask, const struct session_out *out,
		 struct session *s);

/* Free what session_read() allocated in s. */
void session_free(struct session *s);

/* "parse: FILE: warning: ..." on standard error. */
void session_warn(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Warn about an incomplete or inconsistent session. */
void session_warnings(const char *file, const struct session *s,
		      const struct appid_table *appids);

#endif /* SLEEPY_PARSE_SESSION_H */
