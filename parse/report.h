/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report: the report engine. A report is a grouping (a set of fields, see
 * fields.h) of the filtered count entries: each entry is symbolized if a
 * field needs it, its key fields are extracted into a row, rows with equal
 * keys are merged, then sorted by samples, most first, ties by key.
 *
 * A layout (struct layout) carries what a grouping's text and CSV show
 * besides its fields. The SLEEPY paper's base reports (appid and EIP,
 * appid, app, EIP) keep their own: a title, an extra text column (the
 * appid's pid, the app's number of appids), key columns at least 8 wide,
 * and an "eip" CSV column even when not grouped by EIP. Every other
 * grouping, and JSON, uses the plain layout.
 */
#ifndef SLEEPY_PARSE_REPORT_H
#define SLEEPY_PARSE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "chains.h"
#include "counts.h"
#include "fields.h"
#include "strtab.h"
#include "symbolize.h"

struct layout {
	unsigned int fields;	/* the grouping it serves (0: any) */
	const char *title;	/* text: after "Samples by "; NULL: fields' */
	const struct field *extra;	/* text: a column after ... */
	unsigned int extra_after;	/* ... this field */
	unsigned int csv_always;	/* CSV columns shown when not grouped */
	bool pad_flex;		/* text: flexible columns padded to 8 */
};

/* The layout of a grouping in text and CSV (JSON: report_plain). */
const struct layout *report_layout(unsigned int fields);
extern const struct layout report_plain;

struct report {
	/* Set by the caller: */
	unsigned int fields;	/* FB(F_*), normalized */
	struct count_mask keys;	/* the key bits of the entries */
	const struct layout *layout;
	const struct appid_table *appids;
	struct strtab *names;
	struct symbolizer *sym;	/* when a field needs symbols */
	const char *mode;	/* the --mode filter: "user", ..., "all" */
	const char *mode_title;	/* "user mode", ..., "all modes" */
	size_t top;		/* 0: all rows */
	/* --children: the stacks (their count entries) and chains. */
	const struct count_entry *stacks;
	size_t nstacks;
	const struct chain_table *chains;
	/* Set by report_build(): */
	struct row *rows;	/* sorted */
	size_t nrows;		/* before --top */
	uint64_t total;		/* samples in the rows */
	uint64_t unresolved[NR_REASONS];	/* samples, by reason */
	uint64_t unresolved_lines;	/* F_LINE: samples without a line */
	uint64_t kernel, kernel_resolved;	/* samples at kernel IPs */
	const struct field *by[NR_FIELDS];	/* the fields, in order */
	size_t nby;
};

/*
 * The rows of n entries (their keys, rep->keys, must hold what the fields
 * need). Returns 0, or -1 when out of memory.
 */
int report_build(struct report *rep, const struct count_entry *entries,
		 size_t n);
void report_free(struct report *rep);
/* The rows shown: at most --top. */
size_t report_shown(const struct report *rep);
/* Whether its fields need symbols. */
bool report_symbolized(const struct report *rep);

/* The key fields of entry e's row into r (its symbols counted by outcome
 * in rep if account). 0, or -1 when out of memory. */
int report_row_keys(struct report *rep, struct row *r,
		    const struct count_entry *e, bool account);
uint64_t report_row_hash(const struct report *rep, const struct row *r);
bool report_same_keys(const struct report *rep, const struct row *a,
		      const struct row *b);
/* children.c, --children: each row's inclusive samples (the stacks that
 * hold its key anywhere, once each); rows only callers have are added.
 * 0, or -1 when out of memory. */
int report_children(struct report *rep);

#endif /* SLEEPY_PARSE_REPORT_H */
