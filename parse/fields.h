/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fields: the registry of the fields a report can be grouped by (--by).
 * Each field is one entry of fields[]: its --by name, text heading and
 * title word, how it is taken from a count entry, compared for merging
 * and for display order, shown in a text cell (aligned, perhaps cut to
 * fit), and written as CSV columns and JSON keys. --by parsing, the
 * report engine, titles and every writer (text, CSV, JSON, SVG) read it.
 *
 * A row holds each field's key (struct row's key[], a number or an
 * interned string's id), taken from the count entry's key bits that the
 * field needs (get_key), or by its own extract function; rows whose keys
 * are equal are one row of the report.
 *
 * Adding a field: an enum field_id before NR_FIELDS (the enum's order is
 * the column order), its entry in fields[] (fields.c), and its key
 * extraction: the count key bits in the entry's need (with the pass
 * putting them into the count key: session.c, counts.h), or an extract
 * function.
 */
#ifndef SLEEPY_PARSE_FIELDS_H
#define SLEEPY_PARSE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "counts.h"
#include "symbolize.h"

enum field_id {
	F_APP,
	F_APPID,
	F_MODE,
	F_CONTEXT,
	F_SYSCALL,
	F_TID,
	F_CPU,
	F_EIP,
	F_DSO,
	F_SYMBOL,
	F_LINE,
	NR_FIELDS,
};

#define FB(id)		(1u << (id))
#define NR_MODES	4	/* enum sleepy_mode */

/* A row of a report: one distinct key of its grouping, and its samples. */
struct row {
	uint64_t samples;
	uint64_t children;		/* --children: inclusive samples */
	size_t stamp;			/* --children: the last stack + 1 */
	uint64_t key[NR_FIELDS];	/* by field: a number or a strtab id */
	const struct appid_info *info;	/* F_APP, F_APPID: NULL: no record */
	uint32_t appid;			/* F_APP, F_APPID */
	uint32_t nappids;		/* F_APP: appids merged */
	uint8_t kind, reason;		/* enum sym_kind, enum sym_reason */
};

struct report;

/* Text alignment of a column. */
enum field_align {
	ALIGN_LEFT,	/* heading and cells; the last column is not padded */
	ALIGN_NUMBER,	/* cells right, heading left; last not padded */
	ALIGN_RIGHT,	/* heading and cells, always padded */
};

/* Field flags. */
#define FIELD_FLEX	0x1	/* text: cut to fit 80 columns if need be */
#define FIELD_CSV	0x2	/* CSV: its columns even when not grouped */
#define FIELD_SYMBOLS	0x4	/* needs the symbolizer */
#define FIELD_LINES	0x8	/* needs source lines */
#define FIELD_MERGES	0x10	/* distinct count keys may share a value */
#define FIELD_OWN_KEYS	0x20	/* CSV, JSON: its keys only when grouped */

/* A CSV or JSON value. */
enum value_type {
	VALUE_NULL,		/* CSV: empty; JSON: null */
	VALUE_STR,
	VALUE_NUM,
};

struct value {
	enum value_type type;
	const char *s;
	uint64_t n;
	char buf[32];		/* for s, when formatted */
};

#define FIELD_MAX_KEYS	3

struct field {
	const char *name;	/* in --by and in JSON's "by" */
	const char *head;	/* text column heading */
	const char *title;	/* in "Samples by ..." */
	unsigned int implies;	/* fields grouped along with it */
	unsigned int excludes;	/* fields it cannot be grouped with */
	unsigned int label_skip;	/* SVG labels omit it along these */
	unsigned int flags;	/* FIELD_* */
	enum field_align align;
	/* Text: the widest flexible column, width * shrink[0] / shrink[1],
	 * is cut first. */
	unsigned char shrink[2];
	struct count_mask need;	/* the count key bits it reads */
	const char *keys[FIELD_MAX_KEYS + 1];	/* CSV columns, JSON keys */
	const char *format;	/* a number's cell: printf format of key */
	/* A string's cell: the string shortened (NULL: as it is). */
	const char *(*shorten)(const char *s);
	/* Set its key (and more) of r from e; 0, or -1 when out of
	 * memory. NULL: set by the symbolization (FIELD_SYMBOLS). */
	int (*extract)(const struct field *f, struct report *rep,
		       struct row *r, const struct count_entry *e);
	/* Display order (ties of samples); rows of equal keys merge. */
	int (*order)(const struct field *f, const struct row *a,
		     const struct row *b, const struct report *rep);
	/* The text cell, uncut. */
	void (*cell)(const struct field *f, const struct report *rep,
		     const struct row *r, char *buf, size_t size);
	/* The cell cut to width; NULL: cut at its end. */
	void (*fit)(const struct row *r, const char *cell, char *dst,
		    size_t size, size_t width);
	/* Its value for keys[key]; unset: its value when not grouped (NULL:
	 * null). */
	void (*value)(const struct field *f, const struct report *rep,
		      const struct row *r, unsigned int key, struct value *v);
	void (*unset)(const struct report *rep, struct value *v);
};

/* A row's key of field f (an entry of fields[]). */
#define ROW_KEY(r, f)	((r)->key[(f) - fields])

extern const struct field fields[NR_FIELDS];
/* Text columns that are not fields (see struct layout). */
extern const struct field column_pid, column_appids;

/* The fields named by an item of --by (a field or an alias); 0: none. */
unsigned int fields_lookup(const char *name);
/* With the fields they imply. */
unsigned int fields_normalize(unsigned int set);
/* The first pair of set that exclude each other: 0, or 1 with *a, *b. */
int fields_conflict(unsigned int set, const struct field **a,
		    const struct field **b);
/* The fields of set that have all of flags, as a set. */
unsigned int fields_with(unsigned int set, unsigned int flags);
/* The count key bits set needs. */
struct count_mask fields_need(unsigned int set);
/* E.g. "Samples by appid and symbol" (implied fields are not named). */
void fields_title(unsigned int set, char *buf, size_t size);

/* The columns of CSV rows and the keys of JSON rows, in order: every
 * key of every field, once (app and appid share "app"). */
struct out_column {
	const char *key;
	unsigned int from;	/* the fields that give it */
	/* Its value in a report: keys[key] of src, a field grouped by, or
	 * else unset's (NULL: null). */
	const struct field *src;
	unsigned int src_key;
	void (*unset)(const struct report *rep, struct value *v);
};

#define MAX_OUT_COLUMNS	(NR_FIELDS * FIELD_MAX_KEYS)

/* The columns, with their values' sources in report rep. */
size_t fields_columns(struct out_column *cols, const struct report *rep);
/* A row's value in column c. */
void fields_value(const struct out_column *c, const struct report *rep,
		  const struct row *r, struct value *v);

/* "user", "kernel", "irq", "idle", or "other". */
const char *mode_label(unsigned int mode);
/* The DSO of text cells: a path's last component. */
const char *dso_short(const char *dso);

#endif /* SLEEPY_PARSE_FIELDS_H */
