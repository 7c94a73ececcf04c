// SPDX-License-Identifier: GPL-2.0
/*
 * csv: the CSV writer (--format csv). One header row, then a row per key:
 * the fields' columns (fields.h: app, instance, pid and mode always, the
 * others when grouped, or when the layout always shows them), then
 * samples and percent. Fields are quoted per RFC 4180 when they hold ,
 * " CR or LF.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "writer.h"

void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_value(FILE *out, const struct value *v)
{
	char buf[21];

	if (v->type == VALUE_STR)
		csv_field(out, v->s);
	else if (v->type == VALUE_NUM)
		fputs(fmt_u64(buf, v->n), out);
}

/* The columns of a report's CSV, in order. */
static size_t csv_columns(const struct report *rep,
			  struct out_column *cols)
{
	const unsigned int shown = rep->fields | rep->layout->csv_always |
		fields_with(~0u, FIELD_CSV);
	size_t n = fields_columns(cols, rep), k = 0;

	for (size_t c = 0; c < n; c++)
		if (cols[c].from & shown)
			cols[k++] = cols[c];
	return k;
}

static void csv_report(const struct run *run, const struct report *rep,
		       size_t index)
{
	struct out_column cols[MAX_OUT_COLUMNS];
	const size_t n = csv_columns(rep, cols), nrows = report_shown(rep);
	FILE *out = run->out;
	struct value v;

	if (index == 0) {	/* one header for all the reports */
		for (size_t c = 0; c < n; c++)
			fprintf(out, "%s%s", c ? "," : "", cols[c].key);
		fputs(rep->stacks ? ",samples,percent,children,"
		      "children_percent\n" : ",samples,percent\n", out);
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = &rep->rows[i];

		for (size_t c = 0; c < n; c++) {
			if (c)
				fputc(',', out);
			fields_value(&cols[c], rep, r, &v);
			csv_value(out, &v);
		}
		fprintf(out, ",%" PRIu64 ",%.2f", r->samples,
			fmt_percent(r->samples, rep->total));
		if (rep->stacks)
			fprintf(out, ",%" PRIu64 ",%.2f", r->children,
				fmt_percent(r->children, rep->total));
		fputc('\n', out);
	}
}

const struct writer csv_writer = { NULL, csv_report };
