/* SPDX-License-Identifier: GPL-2.0 */
/*
 * writer: the report writers of --format (text.c, csv.c, jsonout.c). A
 * writer begins the output once (text: the session's summary), then
 * writes each report in turn (without --by, text and CSV have two).
 */
#ifndef SLEEPY_PARSE_WRITER_H
#define SLEEPY_PARSE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ksyms.h"
#include "options.h"
#include "report.h"
#include "session.h"

/* What a writer may tell besides a report. */
struct run {
	FILE *out;
	const struct options *o;
	const struct session *s;
	const struct ksyms *ks;	/* zeroed when no symbols were looked up */
	bool symbols;		/* symbols were looked up */
	const char *filters;	/* filters_describe(); "" for none */
	uint64_t total;		/* samples that pass the filters */
};

struct writer {
	void (*begin)(const struct run *run);	/* NULL: nothing */
	/* index: the report's place among those written (0 first). */
	void (*report)(const struct run *run, const struct report *rep,
		       size_t index);
};

extern const struct writer text_writer, csv_writer, json_writer;

/* A CSV field, quoted per RFC 4180 when it holds , " CR or LF (csv.c). */
void csv_field(FILE *out, const char *s);

struct json;
/* What every JSON document of parse starts with: the file, the session,
 * its statistics, the filters, the kernel symbols' source (jsonout.c). */
void json_run_head(struct json *j, const struct run *run);

#endif /* SLEEPY_PARSE_WRITER_H */
