/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options: parse's command line (see Documentation/parse.md). Every error
 * is a usage error: one line on standard error, exit status 2.
 */
#ifndef SLEEPY_PARSE_OPTIONS_H
#define SLEEPY_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODE_ALL (-1)

enum format {
	FORMAT_TEXT,
	FORMAT_CSV,
	FORMAT_JSON,
	FORMAT_FOLDED,		/* the call chains' folded stacks */
	FORMAT_PERF_SCRIPT,	/* ... as perf script prints them */
	NR_FORMATS,
};

struct options {
	unsigned int fields;	/* FB(F_*), normalized; 0: no --by */
	int mode;		/* enum sleepy_mode, or MODE_ALL */
	enum format format;
	const char *file;	/* "-": standard input */
	const char *app;	/* --app */
	const char *appid;	/* --appid NAME#I: the name */
	long appid_instance;
	long long pid, tid, cpu;	/* -1: any */
	bool have_from, have_to;
	uint64_t from_ns, to_ns;	/* to_ns: UINT64_MAX without --to */
	size_t top;		/* 0: all rows */
	const char *symfs, *kallsyms, *vmlinux;
	const char *sqlite, *plot, *annotate;
	const char *pprof;	/* --pprof OUT: a profile.proto too */
	uint64_t slice_ns;
	bool tree, inverted;	/* --tree, --inverted */
	bool lstack;		/* --tree lstack: the logical stacks' tree */
	bool lstack_args;	/* --lstack-args: frames split by their arg */
	bool lstack_with_callchain;	/* machine stacks above them */
	bool offcpu;		/* --offcpu: folded, flame graph by off-CPU */
	bool children;		/* --children */
	double min_percent;	/* --tree: nodes under it left out */
	bool have_min_percent;	/* given (--flamegraph: else 0) */
	const char *flamegraph;	/* --flamegraph OUT.svg */
	const char *archive;	/* --archive DIR */
	const char *buildid_dir;	/* --buildid-dir DIR */
	bool latency;		/* --latency: the system call histograms */
	bool segments;		/* --segments: per time-lapse segment */
	const char *compare;	/* --compare OLD: against OLD's histograms */
	const char *peak;	/* --peak APP:SYSCALL:N: its calls' samples */
};

/* Whether the output is the latency histograms (or their comparison),
 * not a report of samples (--latency without --peak). */
static inline bool options_histograms(const struct options *o)
{
	return o->latency && !o->peak;
}

/* Whether the output is a call-chain view (--tree, --format folded), or
 * the logical stacks' (--tree lstack). */
static inline bool options_stacks(const struct options *o)
{
	return o->tree || o->format == FORMAT_FOLDED ||
	       o->format == FORMAT_PERF_SCRIPT;
}

/* Whether the pass keeps the stacks: the call-chain views, --children,
 * the database, --pprof, --flamegraph. */
static inline bool options_need_stacks(const struct options *o)
{
	return options_stacks(o) || o->children || o->sqlite || o->pprof ||
	       o->flamegraph;
}

/* The options of argv; exits on --help and on errors. */
struct options options_parse(int argc, char **argv);

/* The --mode filter: "user", ..., "all"; and "user mode", ..., "all
 * modes" (buf: at least 16 bytes). */
const char *options_mode(const struct options *o);
const char *options_mode_title(const struct options *o, char *buf,
			       size_t size);

#endif /* SLEEPY_PARSE_OPTIONS_H */
