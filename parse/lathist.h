/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lathist: a system call latency histogram (format version 5) and its
 * figures: log2 buckets (bucket b holds latencies in [2^b, 2^(b+1)) ns,
 * bucket 0 [0, 2), the last every latency from 2^47 ns on), the mean,
 * percentiles interpolated inside a bucket, peaks, and the Earth Mover's
 * Distance between two histograms (Documentation/parse.md has the exact
 * rules).
 */
#ifndef SLEEPY_PARSE_LATHIST_H
#define SLEEPY_PARSE_LATHIST_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define LAT_BUCKETS	SLEEPY_LAT_BUCKETS
/* Peaks are separated by at least a bucket: at most every other one. */
#define LAT_MAX_PEAKS	((LAT_BUCKETS + 1) / 2)

struct lat_hist {
	uint64_t counts[LAT_BUCKETS];
	uint64_t calls, sum_ns, max_ns, restarts;
};

/* A peak: buckets first to last, and their calls. */
struct lat_peak {
	unsigned int first, last;
	uint64_t calls;
};

/* A LATENCY record's histogram. */
void lat_hist_of(struct lat_hist *h, const struct sleepy_latency *l);
/* Add h to *to (sums; max_ns the larger). */
void lat_hist_add(struct lat_hist *to, const struct lat_hist *h);

/* Bucket b's lowest latency (0 for bucket 0), and the end of its range
 * (2^(b+1), exclusive). */
uint64_t lat_bucket_lo(unsigned int b);
uint64_t lat_bucket_hi(unsigned int b);
/* The bucket of a latency. */
unsigned int lat_bucket_of(uint64_t ns);
/* The first and last non-empty buckets: 0, or -1 when all are empty. */
int lat_range(const struct lat_hist *h, unsigned int *first,
	      unsigned int *last);

/* sum_ns / calls (0 without calls). */
double lat_mean(const struct lat_hist *h);
/* The latency at p percent of the calls (0 without calls). */
double lat_percentile(const struct lat_hist *h, double p);

/* The peaks, numbered 1.. from low to high latency: into p
 * (LAT_MAX_PEAKS), how many. */
size_t lat_peaks(const struct lat_hist *h, struct lat_peak *p);
/* The number of the peak holding bucket b, 0 if none holds it. */
unsigned int lat_peak_of(const struct lat_peak *p, size_t n, unsigned int b);

/* The Earth Mover's Distance of the two normalized distributions, in
 * buckets; -1 when one has no calls. */
double lat_emd(const struct lat_hist *a, const struct lat_hist *b);

#endif /* SLEEPY_PARSE_LATHIST_H */
