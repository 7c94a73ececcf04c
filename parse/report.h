/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report: turn sample counts into sorted reports, as aligned text (at most
 * 80 columns) or CSV.
 *
 * Rows are sorted by samples, most first; ties by key: appids by name
 * (bytewise), instance, then number, appids without an APPID record
 * ("?appid=N") after the others by number; then by EIP.
 */
#ifndef SLEEPY_PARSE_REPORT_H
#define SLEEPY_PARSE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "appids.h"
#include "counts.h"

enum report_by {
	REPORT_APPID_EIP,	/* appid and EIP */
	REPORT_APPID,		/* appid: name#instance */
	REPORT_APP,		/* binary name, all instances together */
	REPORT_EIP,		/* EIP alone */
};

enum report_format {
	REPORT_TEXT,
	REPORT_CSV,
};

struct report_ctx {
	FILE *out;
	enum report_format format;
	const struct appid_table *appids;
	const char *mode;	/* "user", ..., "all": the CSV mode column */
	const char *mode_title;	/* "user mode", ..., "all modes" */
	size_t top;		/* print at most this many rows; 0: all */
};

/*
 * Which key fields a report needs in its counts: appid, ip or both.
 * A table keyed by more fields serves too (they are summed away).
 */
void report_key_masks(enum report_by by, struct count_mask *m);

/* The CSV header row. */
void report_csv_header(const struct report_ctx *ctx);

/*
 * Print one report of counts (total: the samples in it, all keys).
 * Returns 0, or -1 when out of memory.
 */
int report_print(const struct report_ctx *ctx, enum report_by by,
		 const struct count_table *counts, uint64_t total);

/* part as a percentage of total (0 for an empty total). */
double report_percent(uint64_t part, uint64_t total);

/* A CSV field, quoted (RFC 4180) when it holds , " CR or LF. */
void report_csv_field(FILE *out, const char *s);

/* s with control and non-ASCII bytes as '?', cut to fit width columns. */
void report_sanitize(char *dst, size_t dst_size, const char *s,
		     size_t width);

#endif /* SLEEPY_PARSE_REPORT_H */
