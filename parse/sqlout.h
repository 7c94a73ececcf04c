/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sqlout: the session as an SQLite database (schema in
 * Documentation/parse.md): the header, the statistics (the STATS and
 * CPU_STATS records), appids, mappings, samples aggregated per (appid,
 * pid, cpu, mode, eip, time slice, stack, logical stack), the symbol of
 * every (appid, eip), and the frames of every stack; the logical stacks
 * (version 4): their frames, the OFFCPU records aggregated alike, and
 * the names files of the processes that have them; the system calls
 * (version 5): each sample's kernel context and call, the histograms'
 * buckets, the segments and the SYSCALL records.
 */
#ifndef SLEEPY_PARSE_SQLOUT_H
#define SLEEPY_PARSE_SQLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "calltree.h"
#include "latency.h"
#include "counts.h"
#include "lstack.h"
#include "lstacknames.h"
#include "maps.h"
#include "options.h"
#include "reader.h"
#include "stackids.h"
#include "strtab.h"
#include "symbolize.h"

struct sqlite_in {
	const char *file;
	const struct sleepy_file_header *hdr;
	uint64_t samples;	/* sample records */
	uint64_t selected;	/* samples that passed the filters */
	uint64_t span_ns;
	uint64_t slice_ns;
	const char *filters;	/* "" for none */
	const char *mode;	/* the --mode filter */
	const struct appid_table *appids;
	const struct maps *maps;
	struct strtab *names;
	struct symbolizer *sym;
	const struct count_table *counts;	/* every key field kept */
	bool have_stats;
	const struct sample_stats *stats;
	const struct sleepy_cpu_stats *cpus;	/* the CPU_STATS records */
	size_t ncpus;
	/* The counts' keys hold a stack id of stacks where the IP goes. */
	const struct stack_ids *stacks;
	const struct stack_source *src;	/* their frames */
	/* The counts' keys hold a logical stack's key above the tid. */
	const struct lstacks *lstacks;
	struct lstack_names *lnames;
	const struct options *o;	/* --app, --appid: the OFFCPU rows */
	const struct latency *lat;	/* the system call records */
};

/* Write (replacing) path. Returns 0, or -1 with err set. */
int sqlite_write(const char *path, const struct sqlite_in *in, char *err,
		 size_t errsz);

#endif /* SLEEPY_PARSE_SQLOUT_H */
