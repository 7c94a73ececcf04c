// SPDX-License-Identifier: GPL-2.0
/* lathist: a latency histogram's figures; see lathist.h. */
#include "lathist.h"

#include <string.h>

void lat_hist_of(struct lat_hist *h, const struct sleepy_latency *l)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < l->nr_buckets; i++)
		h->counts[l->first + i] = sleepy_latency_count(l, i);
	h->calls = l->calls;
	h->sum_ns = l->sum_ns;
	h->max_ns = l->max_ns;
	h->restarts = l->restarts;
}

void lat_hist_add(struct lat_hist *to, const struct lat_hist *h)
{
	for (size_t b = 0; b < LAT_BUCKETS; b++)
		to->counts[b] += h->counts[b];
	to->calls += h->calls;
	to->sum_ns += h->sum_ns;
	to->restarts += h->restarts;
	if (h->max_ns > to->max_ns)
		to->max_ns = h->max_ns;
}

uint64_t lat_bucket_lo(unsigned int b)
{
	return b ? 1ull << b : 0;
}

uint64_t lat_bucket_hi(unsigned int b)
{
	return 1ull << (b + 1);
}

unsigned int lat_bucket_of(uint64_t ns)
{
	const unsigned int b = ns < 2 ? 0 : 63u - (unsigned)__builtin_clzll(ns);

	return b < LAT_BUCKETS ? b : LAT_BUCKETS - 1;
}

int lat_range(const struct lat_hist *h, unsigned int *first,
	      unsigned int *last)
{
	int f = -1, l = -1;

	for (int b = 0; b < LAT_BUCKETS; b++) {
		if (!h->counts[b])
			continue;
		if (f < 0)
			f = b;
		l = b;
	}
	if (f < 0)
		return -1;
	*first = (unsigned int)f;
	*last = (unsigned int)l;
	return 0;
}

double lat_mean(const struct lat_hist *h)
{
	return h->calls ? (double)h->sum_ns / (double)h->calls : 0;
}

/*
 * The calls of a bucket are taken as spread evenly over its range: the
 * latency at rank r = p% of the calls is in the bucket where the calls
 * counted so far reach r, as far into its range as r is into its calls;
 * at most max_ns.
 */
double lat_percentile(const struct lat_hist *h, double p)
{
	const double r = p / 100.0 * (double)h->calls;
	double cum = 0, v = 0;

	for (unsigned int b = 0; b < LAT_BUCKETS; b++) {
		const double c = (double)h->counts[b];
		const double lo = (double)lat_bucket_lo(b);

		if (!h->counts[b])
			continue;
		if (cum + c >= r) {
			v = lo + ((double)lat_bucket_hi(b) - lo) * (r - cum) / c;
			break;
		}
		cum += c;
	}
	return v < (double)h->max_ns ? v : (double)h->max_ns;
}

/*
 * The peaks of the run of non-empty buckets s..e: a bucket v inside it
 * (not at its ends) is a valley when its count is below half the smaller
 * of the highest count before it and the highest after it, in the run;
 * the peaks are the longest stretches of the run without a valley.
 */
static size_t run_peaks(const uint64_t *c, unsigned int s, unsigned int e,
			struct lat_peak *p, size_t n)
{
	uint64_t after[LAT_BUCKETS], before = c[s], low;
	bool open = false;

	after[e] = 0;
	for (unsigned int v = e; v > s; v--)
		after[v - 1] = after[v] > c[v] ? after[v] : c[v];
	for (unsigned int v = s; v <= e; v++) {
		low = before < after[v] ? before : after[v];
		if (v > s && v < e && c[v] < low && c[v] < low - c[v]) {
			open = false;
		} else if (open) {
			p[n - 1].last = v;
			p[n - 1].calls += c[v];
		} else {
			p[n++] = (struct lat_peak){ v, v, c[v] };
			open = true;
		}
		if (c[v] > before)
			before = c[v];
	}
	return n;
}

size_t lat_peaks(const struct lat_hist *h, struct lat_peak *p)
{
	const uint64_t *c = h->counts;
	size_t n = 0;
	unsigned int e;

	for (unsigned int b = 0; b < LAT_BUCKETS; b = e + 1) {
		e = b;
		if (!c[b])
			continue;
		while (e + 1 < LAT_BUCKETS && c[e + 1])
			e++;
		n = run_peaks(c, b, e, p, n);
	}
	return n;
}

unsigned int lat_peak_of(const struct lat_peak *p, size_t n, unsigned int b)
{
	for (size_t i = 0; i < n; i++)
		if (b >= p[i].first && b <= p[i].last)
			return (unsigned int)i + 1;
	return 0;
}

/* The sum over the buckets of |CDF_a(b) - CDF_b(b)|. */
double lat_emd(const struct lat_hist *a, const struct lat_hist *b)
{
	uint64_t ca = 0, cb = 0;
	double d = 0, x;

	if (!a->calls || !b->calls)
		return -1;
	for (unsigned int k = 0; k < LAT_BUCKETS; k++) {
		ca += a->counts[k];
		cb += b->counts[k];
		x = (double)ca / (double)a->calls - (double)cb / (double)b->calls;
		d += x < 0 ? -x : x;
	}
	return d;
}
