// SPDX-License-Identifier: GPL-2.0
/* latency: the system call records of a session; see latency.h. */
#include "latency.h"

#include <inttypes.h>
#include <string.h>

#include "array.h"
#include "session.h"

void latency_init(struct latency *l)
{
	memset(l, 0, sizeof(*l));
}

void latency_free(struct latency *l)
{
	free(l->hists);
	free(l->segs);
	free(l->calls);
	latency_init(l);
}

bool latency_type(uint16_t type)
{
	return type == SLEEPY_REC_SYSCALL || type == SLEEPY_REC_LATENCY ||
		type == SLEEPY_REC_LAT_SEGMENT;
}

static int add_hist(struct latency *l, const struct sleepy_record *rec)
{
	void *v = array_room(l->hists, &l->cap_hists, l->nhists,
			     sizeof(*l->hists), 64);
	struct sleepy_latency x;
	struct lat_record *h;

	if (!v)
		return -1;
	l->hists = v;
	h = &l->hists[l->nhists++];
	sleepy_get_latency(rec, &x);
	h->segment = x.segment;
	h->appid = x.appid;
	h->nr = x.nr;
	lat_hist_of(&h->h, &x);
	return 0;
}

static int add_segment(struct latency *l, const struct sleepy_record *rec)
{
	void *v = array_room(l->segs, &l->cap_segs, l->nsegs,
			     sizeof(*l->segs), 16);

	if (!v)
		return -1;
	l->segs = v;
	sleepy_get_lat_segment(rec, &l->segs[l->nsegs++]);
	return 0;
}

static int add_call(struct latency *l, const struct sleepy_record *rec)
{
	void *v = array_room(l->calls, &l->cap_calls, l->ncalls,
			     sizeof(*l->calls), 256);

	if (!v)
		return -1;
	l->calls = v;
	sleepy_get_syscall(rec, &l->calls[l->ncalls++]);
	return 0;
}

int latency_add(struct latency *l, const struct sleepy_record *rec)
{
	if (rec->type == SLEEPY_REC_LATENCY)
		return add_hist(l, rec);
	if (rec->type == SLEEPY_REC_LAT_SEGMENT)
		return add_segment(l, rec);
	return add_call(l, rec);
}

int latency_read(struct sleepy_reader *r, struct latency *l,
		 struct appid_table *appids)
{
	const uint32_t version = sleepy_reader_header(r)->version;
	struct sleepy_record rec;
	struct sleepy_appid a;
	int rc;

	while ((rc = sleepy_reader_next(r, &rec)) > 0) {
		if (!sleepy_type_known(version, rec.type))
			continue;
		if (rec.type == SLEEPY_REC_APPID) {
			sleepy_get_appid(&rec, &a);
			if (appids_add(appids, &a))
				return -1;
		} else if (latency_type(rec.type) && latency_add(l, &rec)) {
			return -1;
		}
	}
	return rc < 0 ? -2 : 0;
}

const struct sleepy_lat_segment *latency_segment(const struct latency *l,
						 uint32_t seg)
{
	if (seg < l->nsegs && l->segs[seg].segment == seg)
		return &l->segs[seg];	/* as the kernel numbers them */
	for (size_t i = 0; i < l->nsegs; i++)
		if (l->segs[i].segment == seg)
			return &l->segs[i];
	return NULL;
}

/* Warn of a LATENCY record's segment without its record, once. */
static void orphans(const char *file, const struct latency *l)
{
	for (size_t i = 0; i < l->nhists; i++) {
		if (!latency_segment(l, l->hists[i].segment)) {
			session_warn(file, "LATENCY records of segment %" PRIu32
				     " without its LAT_SEGMENT record",
				     l->hists[i].segment);
			return;
		}
	}
}

void latency_warnings(const char *file, const struct latency *l)
{
	uint64_t *sums = calloc(2 * l->nsegs + 1, sizeof(*sums));
	const struct sleepy_lat_segment *g;

	orphans(file, l);
	if (!sums)
		return;		/* warnings only: not worth failing for */
	for (size_t i = 0; i < l->nhists; i++) {
		g = latency_segment(l, l->hists[i].segment);
		if (g) {
			sums[2 * (size_t)(g - l->segs)]++;
			sums[2 * (size_t)(g - l->segs) + 1] += l->hists[i].h.calls;
		}
	}
	for (size_t i = 0; i < l->nsegs; i++) {
		g = &l->segs[i];
		if (sums[2 * i] != g->histograms || sums[2 * i + 1] != g->calls)
			session_warn(file, "segment %" PRIu32 ": its LAT_SEGMENT "
				     "record has %" PRIu32 " histograms of %"
				     PRIu64 " calls, the file %" PRIu64 " of %"
				     PRIu64, g->segment, g->histograms,
				     g->calls, sums[2 * i], sums[2 * i + 1]);
	}
	free(sums);
}
