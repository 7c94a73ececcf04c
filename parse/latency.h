/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latency: what a session's system call records hold (format version 5):
 * its LATENCY records (a histogram per segment, appid and system call),
 * its LAT_SEGMENT records and its SYSCALL records (the calls the tick
 * sampled), kept as the pass over the file meets them, in file order.
 */
#ifndef SLEEPY_PARSE_LATENCY_H
#define SLEEPY_PARSE_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "appids.h"
#include "lathist.h"
#include "reader.h"

/* A LATENCY record. */
struct lat_record {
	uint32_t segment, appid;
	uint16_t nr;
	struct lat_hist h;
};

struct latency {
	struct lat_record *hists;
	size_t nhists, cap_hists;
	struct sleepy_lat_segment *segs;
	size_t nsegs, cap_segs;
	struct sleepy_syscall *calls;
	size_t ncalls, cap_calls;
};

void latency_init(struct latency *l);
void latency_free(struct latency *l);

/* Whether rec is a SYSCALL, LATENCY or LAT_SEGMENT record. */
bool latency_type(uint16_t type);
/* Keep rec, one of those. 0, or -1 when out of memory. */
int latency_add(struct latency *l, const struct sleepy_record *rec);

/*
 * A pass over the rest of a file (after its header) that keeps only its
 * system call records and its appids: 0, -1 when out of memory, -2 on a
 * reader error.
 */
int latency_read(struct sleepy_reader *r, struct latency *l,
		 struct appid_table *appids);

/* The LAT_SEGMENT record of segment seg, or NULL. */
const struct sleepy_lat_segment *latency_segment(const struct latency *l,
						 uint32_t seg);

/* Warn about segments whose records do not add up (session_warn()). */
void latency_warnings(const char *file, const struct latency *l);

#endif /* SLEEPY_PARSE_LATENCY_H */
