/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plot: a report as an SVG histogram (our own small writer). Reports by
 * EIP alone or with app/appid, mode and cpu give the paper's EIP
 * histogram (Figures 6-8): a bar per EIP in address order. Other reports
 * give horizontal bars, one per row, most samples first.
 */
#ifndef SLEEPY_PARSE_PLOT_H
#define SLEEPY_PARSE_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

#define PLOT_FONT "font-family=\"monospace\" font-size=\"12\""

#define PLOT_MAX_BARS	200	/* EIP histogram */
#define PLOT_MAX_ROWS	40	/* horizontal bars */

/* Text with XML's special characters escaped, other bytes as '?'. */
void plot_xml_text(FILE *f, const char *s);
/* An SVG's start: its size, a white background, a title and a subtitle. */
void plot_header(FILE *f, int w, int h, const char *title, const char *sub);
/* Write path with draw(f, arg, sub), sub naming file and its filters.
 * Returns 0, or -1 with err set. */
int plot_file(const char *path, void (*draw)(FILE *f, const void *arg,
					      const char *sub),
	      const void *arg, const char *file, const char *filters,
	      char *err, size_t errsz);

/* Write path. Returns 0, or -1 with err set. */
int plot_write(const char *path, const struct report *rep,
	       const char *file, const char *filters, char *err,
	       size_t errsz);

#endif /* SLEEPY_PARSE_PLOT_H */
