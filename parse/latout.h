/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latout: the writers of --latency (text as bcc prints its histograms,
 * CSV one row per bucket, JSON) and of --compare (a ranked table, CSV,
 * JSON), in the run's --format.
 */
#ifndef SLEEPY_PARSE_LATOUT_H
#define SLEEPY_PARSE_LATOUT_H

#include <stddef.h>

#include "latreport.h"
#include "writer.h"

/* The histograms of rep, the session's segments those of lat. */
void lat_write(const struct run *run, const struct lat_report *rep,
	       const struct latency *lat);

/* The n pairs of --compare (old_file against the run's). */
void lat_write_compare(const struct run *run, const char *old_file,
		       const struct lat_pair *pairs, size_t n,
		       const struct strtab *names);

#endif /* SLEEPY_PARSE_LATOUT_H */
