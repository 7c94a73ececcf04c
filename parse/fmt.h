/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fmt: the number and cell formatting every writer shares: percentages,
 * decimal widths, and cells made printable and cut to a column width.
 */
#ifndef SLEEPY_PARSE_FMT_H
#define SLEEPY_PARSE_FMT_H

#include <stddef.h>
#include <stdint.h>

/* part as a percentage of total (0 for an empty total). */
double fmt_percent(uint64_t part, uint64_t total);

/* The number of decimal digits of v. */
int fmt_digits(uint64_t v);

/* v in decimal, in buf (at least 21 bytes); returns where it starts. */
char *fmt_u64(char *buf, uint64_t v);

/*
 * A duration of ns nanoseconds in buf, to 3 significant digits in the
 * largest unit it reaches: "320ns", "1.5us", "1.52ms", "2.1s"; returns buf.
 */
const char *fmt_duration(char *buf, size_t size, double ns);

/*
 * s with control and non-ASCII bytes as '?', cut to fit width columns (a
 * cut string ends in "..." when width is above 3).
 */
void fmt_sanitize(char *dst, size_t dst_size, const char *s, size_t width);

#endif /* SLEEPY_PARSE_FMT_H */
