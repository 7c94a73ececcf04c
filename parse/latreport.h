/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latreport: the histograms of --latency. The LATENCY records that pass
 * the filters (--app, --appid, --pid by their appid; --from, --to by their
 * segment's time) are summed by group (the app's name, or with --by appid
 * the appid, name#instance) and system call, over the segments (or per
 * segment with --segments) and CPUs; each sum gets its peaks. Rows are
 * sorted by segment, then calls (most first), group and system call name.
 *
 * --compare joins two reports on (group, system call) and ranks the pairs
 * by the Earth Mover's Distance of their distributions; those of one
 * report only come after the others.
 */
#ifndef SLEEPY_PARSE_LATREPORT_H
#define SLEEPY_PARSE_LATREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "lathist.h"
#include "latency.h"
#include "options.h"
#include "strtab.h"

struct lat_row {
	uint32_t group;		/* its name, in the report's names */
	uint32_t segment;	/* --segments: its segment; else 0 */
	uint16_t nr;		/* the system call */
	struct lat_hist h;
	struct lat_peak peaks[LAT_MAX_PEAKS];
	size_t npeaks;
};

struct lat_report {
	/* Set by the caller: */
	const struct latency *lat;
	const struct appid_table *appids;
	struct strtab *names;
	const struct options *o;	/* the filters */
	bool by_appid;			/* groups are appids, not apps */
	bool segments;			/* a row per segment */
	/* Set by lat_report_build(): */
	struct lat_row *rows;
	size_t nrows;
	uint64_t calls;			/* in the rows */
};

/* The group of appid: its strtab id, or STRTAB_NOMEM. */
uint32_t lat_group(const struct lat_report *rep, uint32_t appid);

/* The rows. 0, or -1 when out of memory. */
int lat_report_build(struct lat_report *rep);
void lat_report_free(struct lat_report *rep);

/* The row of a group's (by name) system call, or NULL (no --segments). */
const struct lat_row *lat_report_find(const struct lat_report *rep,
				      const char *group, unsigned int nr);

/* --compare: a (group, system call) of either report. */
/*
 * A pair with fewer calls than this in either session is ranked after the
 * others: too few to tell a distribution (one slow write is not a peak).
 */
#define LAT_MIN_CALLS	10

enum lat_status {
	LAT_BOTH,
	LAT_FEW,		/* in both, under LAT_MIN_CALLS in one */
	LAT_NEW,		/* in the new report only */
	LAT_GONE,		/* in the old one only */
};

struct lat_pair {
	const struct lat_row *old, *new;	/* NULL: not in that one */
	double emd;		/* -1 unless in both */
	enum lat_status status;
};

/* The pairs of two reports of one names table, ranked, into *pairs (to
 * free). 0, or -1 when out of memory. */
int lat_compare(const struct lat_report *old, const struct lat_report *new,
		struct lat_pair **pairs, size_t *n);

#endif /* SLEEPY_PARSE_LATREPORT_H */
