/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latplot: --latency --plot OUT.svg, the histograms drawn as OSprof draws
 * them: a panel per (app, system call) (the first PLOT_MAX_ROWS of the
 * report's order), log2 latency buckets on x (one axis for all, labelled
 * 1ns, 1us, 1ms, ...: 2^10 ns is "1us"), log-scale counts on y, the bars
 * of each peak in its colour with the peak marked and numbered above them.
 */
#ifndef SLEEPY_PARSE_LATPLOT_H
#define SLEEPY_PARSE_LATPLOT_H

#include <stddef.h>

#include "latreport.h"

/* Write path. Returns 0, or -1 with err set. */
int latplot_write(const char *path, const struct lat_report *rep,
		  const char *file, const char *filters, char *err,
		  size_t errsz);

#endif /* SLEEPY_PARSE_LATPLOT_H */
