// SPDX-License-Identifier: GPL-2.0
/* json: a small streaming JSON writer; see json.h. */
#include "json.h"

#include <inttypes.h>

void json_escape(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);	/* bytes as Latin-1 */
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* What comes before a member: its separator, indentation and key. */
static void member(struct json *j, const char *key)
{
	if (j->depth) {
		struct json_level *l = &j->level[j->depth - 1];

		if (l->block)
			fprintf(j->out, "%s%*s", l->empty ? "\n" : ",\n",
				2 * (int)j->depth, "");
		else if (!l->empty)
			fputs(", ", j->out);
		l->empty = false;
	}
	if (key) {
		json_escape(j->out, key);
		fputs(": ", j->out);
	}
}

static void open_level(struct json *j, const char *key,
		       enum json_layout layout, char open, char close)
{
	struct json_level *l;

	member(j, key);
	fputc(open, j->out);
	l = &j->level[j->depth++];
	l->block = layout == JSON_BLOCK;
	l->empty = true;
	l->close = close;
}

void json_close(struct json *j)
{
	struct json_level *l = &j->level[--j->depth];

	if (l->block && !l->empty)
		fprintf(j->out, "\n%*s", 2 * (int)j->depth, "");
	fputc(l->close, j->out);
}

void json_begin(struct json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	open_level(j, NULL, JSON_BLOCK, '{', '}');
}

void json_end(struct json *j)
{
	while (j->depth)
		json_close(j);
	fputc('\n', j->out);
}

void json_object(struct json *j, const char *key, enum json_layout layout)
{
	open_level(j, key, layout, '{', '}');
}

void json_array(struct json *j, const char *key, enum json_layout layout)
{
	open_level(j, key, layout, '[', ']');
}

void json_str(struct json *j, const char *key, const char *s)
{
	member(j, key);
	if (s)
		json_escape(j->out, s);
	else
		fputs("null", j->out);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->out, "%lld", v);
}

void json_fixed(struct json *j, const char *key, double v, int decimals)
{
	member(j, key);
	fprintf(j->out, "%.*f", decimals, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j, const char *key)
{
	json_str(j, key, NULL);
}
