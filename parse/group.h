/* SPDX-License-Identifier: GPL-2.0 */
/*
 * group: reports grouped by any combination of app or appid, mode, cpu,
 * EIP, DSO, symbol and source line, as text, CSV or JSON. The base
 * reports (app, appid, eip, appid-eip) keep their own code in report.c for
 * text and CSV.
 *
 * Rows are built from the (filtered) count entries: each entry's fields
 * are symbolized if the grouping asks for it, rows with equal keys are
 * merged (by interned ids), then sorted by samples, most first, ties by
 * key text.
 */
#ifndef SLEEPY_PARSE_GROUP_H
#define SLEEPY_PARSE_GROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "appids.h"
#include "counts.h"
#include "dso.h"
#include "strtab.h"
#include "symbolize.h"

enum group_field {
	G_APP = 1 << 0,
	G_APPID = 1 << 1,
	G_MODE = 1 << 2,
	G_CPU = 1 << 3,
	G_EIP = 1 << 4,
	G_DSO = 1 << 5,
	G_SYMBOL = 1 << 6,
	G_LINE = 1 << 7,
};
#define G_SYMBOLIZE (G_DSO | G_SYMBOL | G_LINE)

enum group_format {
	GROUP_TEXT,
	GROUP_CSV,
	GROUP_JSON,
};

struct grow {
	uint64_t samples;
	uint64_t eip;
	const struct appid_info *info;	/* NULL: no APPID record */
	uint32_t appid;
	uint32_t app;		/* G_APP: name id; UINT32_MAX if no record */
	uint32_t nappids;	/* G_APP: appids merged */
	uint16_t cpu;
	uint8_t mode;
	uint8_t kind, reason;	/* enum sym_kind, enum sym_reason */
	uint32_t dso, sym, line;
	uint64_t offset;	/* unresolved: the file offset or ip */
};

struct group_ctx {
	unsigned int fields;	/* enum group_field, normalized */
	FILE *out;
	const struct appid_table *appids;
	struct strtab *names;
	struct symbolizer *sym;	/* when fields has G_SYMBOLIZE */
	const char *mode;	/* the --mode filter: "user", ..., "all" */
	const char *mode_title;	/* "user mode", ..., "all modes" */
	size_t top;		/* 0: all rows */
	/* Set by group_build(): */
	uint64_t total;		/* samples in the rows */
	uint64_t unresolved[NR_REASONS];	/* samples, by reason */
	uint64_t unresolved_lines;	/* G_LINE: samples without a line */
	uint64_t kernel, kernel_resolved;	/* samples at kernel IPs */
	size_t nrows;		/* before --top */
};

/* Normalize: line implies symbol, symbol implies dso. */
unsigned int group_normalize(unsigned int fields);

/*
 * The rows of n entries (their keys must hold the fields the grouping
 * needs). Returns the sorted rows (ctx->nrows of them) or NULL when out
 * of memory.
 */
struct grow *group_build(struct group_ctx *ctx,
			 const struct count_entry *entries, size_t n);

void group_print_text(const struct group_ctx *ctx, const struct grow *rows);
void group_print_csv(const struct group_ctx *ctx, const struct grow *rows);
/* The "rows" array's members, for main's JSON object. */
void group_print_json_rows(const struct group_ctx *ctx,
			   const struct grow *rows);

/* Helpers shared with sqlite, plot and main. */
void json_string(FILE *out, const char *s);
const char *mode_label(unsigned int mode);
/* The short label of a DSO for text: a path's last component. */
const char *dso_short(const char *dso);
/* A row's text cell for field f (one of G_*), uncut, into buf. */
void group_cell(const struct group_ctx *ctx, const struct grow *r,
		unsigned int f, char *buf, size_t size);
/* The title, e.g. "Samples by appid and symbol". */
void group_title(unsigned int fields, char *buf, size_t size);

#endif /* SLEEPY_PARSE_GROUP_H */
