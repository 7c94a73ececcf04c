/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json: a small streaming JSON writer. Containers are either laid out in
 * block form (each member on a line of its own, indented two spaces a
 * level, the closing bracket on a line of its own) or inline (members
 * separated by ", " on one line); an empty container is "{}" or "[]"
 * either way. Strings are escaped byte by byte: '"' and '\' with a
 * backslash, bytes outside printable ASCII as \u00XX (Latin-1).
 *
 * A key is given for object members and NULL for array elements.
 */
#ifndef SLEEPY_PARSE_JSON_H
#define SLEEPY_PARSE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

enum json_layout {
	JSON_INLINE,
	JSON_BLOCK,
};

struct json_level {
	bool block;
	bool empty;		/* no member written yet */
	char close;		/* '}' or ']' */
};

struct json {
	FILE *out;
	unsigned int depth;	/* open containers, at most JSON_MAX_DEPTH */
	struct json_level level[JSON_MAX_DEPTH];
};

/* Start a document: its top-level object, in block form. */
void json_begin(struct json *j, FILE *out);
/* Close the top-level object and end the line. */
void json_end(struct json *j);

void json_object(struct json *j, const char *key, enum json_layout layout);
void json_array(struct json *j, const char *key, enum json_layout layout);
/* Close the innermost object or array. */
void json_close(struct json *j);

/* A string member; s NULL writes null. */
void json_str(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, long long v);
/* A number with a fixed number of decimals ("%.*f"). */
void json_fixed(struct json *j, const char *key, double v, int decimals);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);

/* s as a JSON string, quoted and escaped. */
void json_escape(FILE *out, const char *s);

#endif /* SLEEPY_PARSE_JSON_H */
