// SPDX-License-Identifier: GPL-2.0
/* latreport: the histograms of --latency and --compare; see latreport.h. */
#define _GNU_SOURCE		/* qsort_r */
#include "latreport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "filters.h"
#include "syscalls.h"

uint32_t lat_group(const struct lat_report *rep, uint32_t appid)
{
	const struct appid_info *a = appids_find(rep->appids, appid);
	char buf[600];

	if (!a)
		snprintf(buf, sizeof(buf), "?appid=%" PRIu32, appid);
	else if (rep->by_appid)
		snprintf(buf, sizeof(buf), "%s#%" PRIu32, a->name,
			 a->instance);
	else
		snprintf(buf, sizeof(buf), "%s", a->name);
	return strtab_intern(rep->names, buf);
}

/* Whether a LATENCY record passes the filters: its appid's, and a
 * segment within --from and --to. */
static bool wanted(const struct lat_report *rep, const struct lat_record *h)
{
	const struct options *o = rep->o;
	const struct appid_info *a = appids_find(rep->appids, h->appid);
	const struct sleepy_lat_segment *g;

	if (!filters_appid_wanted(o, rep->appids, h->appid) ||
	    (o->pid >= 0 && (!a || a->pid != o->pid)))
		return false;
	if (!o->have_from && !o->have_to)
		return true;
	g = latency_segment(rep->lat, h->segment);
	return g && g->end_ns >= o->from_ns && g->start_ns < o->to_ns;
}

/* Merge order: segment, group id, number. */
static int cmp_key(const void *pa, const void *pb)
{
	const struct lat_row *a = pa, *b = pb;

	if (a->segment != b->segment)
		return a->segment < b->segment ? -1 : 1;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return (a->nr > b->nr) - (a->nr < b->nr);
}

static int cmp_names(const struct lat_row *a, const struct lat_row *b,
		     const struct strtab *names)
{
	char ba[SYSCALL_LABEL_MAX], bb[SYSCALL_LABEL_MAX];
	int c = strcmp(strtab_get(names, a->group), strtab_get(names, b->group));

	return c ? c : strcmp(syscall_label(a->nr, ba),
			      syscall_label(b->nr, bb));
}

/* Display order: segment, calls (most first), group, system call. */
static int cmp_show(const void *pa, const void *pb, void *arg)
{
	const struct lat_row *a = pa, *b = pb;

	if (a->segment != b->segment)
		return a->segment < b->segment ? -1 : 1;
	if (a->h.calls != b->h.calls)
		return a->h.calls > b->h.calls ? -1 : 1;
	return cmp_names(a, b, arg);
}

/* A row per wanted record, unmerged. */
static int collect(struct lat_report *rep)
{
	const struct latency *l = rep->lat;
	size_t cap = 0;

	for (size_t i = 0; i < l->nhists; i++) {
		const struct lat_record *h = &l->hists[i];
		struct lat_row *r;
		void *v;

		if (!wanted(rep, h))
			continue;
		v = array_room(rep->rows, &cap, rep->nrows, sizeof(*r), 16);
		if (!v)
			return -1;
		rep->rows = v;
		r = &rep->rows[rep->nrows++];
		memset(r, 0, sizeof(*r));
		r->group = lat_group(rep, h->appid);
		if (r->group == STRTAB_NOMEM)
			return -1;
		r->segment = rep->segments ? h->segment : 0;
		r->nr = h->nr;
		r->h = h->h;
	}
	return 0;
}

int lat_report_build(struct lat_report *rep)
{
	size_t n = 0;

	rep->rows = NULL;
	rep->nrows = 0;
	rep->calls = 0;
	if (collect(rep)) {
		lat_report_free(rep);
		return -1;
	}
	if (!rep->nrows)
		return 0;	/* rows is NULL: no array for qsort() */
	qsort(rep->rows, rep->nrows, sizeof(*rep->rows), cmp_key);
	for (size_t i = 0; i < rep->nrows; i++) {
		if (n && !cmp_key(&rep->rows[n - 1], &rep->rows[i]))
			lat_hist_add(&rep->rows[n - 1].h, &rep->rows[i].h);
		else
			rep->rows[n++] = rep->rows[i];
	}
	rep->nrows = n;
	for (size_t i = 0; i < n; i++) {
		rep->rows[i].npeaks = lat_peaks(&rep->rows[i].h,
						rep->rows[i].peaks);
		rep->calls += rep->rows[i].h.calls;
	}
	qsort_r(rep->rows, n, sizeof(*rep->rows), cmp_show, rep->names);
	return 0;
}

void lat_report_free(struct lat_report *rep)
{
	free(rep->rows);
	rep->rows = NULL;
	rep->nrows = 0;
}

const struct lat_row *lat_report_find(const struct lat_report *rep,
				      const char *group, unsigned int nr)
{
	for (size_t i = 0; i < rep->nrows; i++)
		if (rep->rows[i].nr == nr &&
		    !strcmp(strtab_get(rep->names, rep->rows[i].group), group))
			return &rep->rows[i];
	return NULL;
}

/* ------------------------------------------------------------ compare */

/* The calls of a pair: the new report's, or the old's. */
static uint64_t pair_calls(const struct lat_pair *p)
{
	return p->new ? p->new->h.calls : p->old->h.calls;
}

static const struct lat_row *pair_row(const struct lat_pair *p)
{
	return p->new ? p->new : p->old;
}

/* A pair's class in the ranking: compared, too few calls, one-sided. */
static int pair_class(const struct lat_pair *p)
{
	return p->status == LAT_BOTH ? 0 : p->status == LAT_FEW ? 1 : 2;
}

/* Ranked: the pairs with enough calls, then those with too few, each by
 * distance, then the one-sided ones by calls; then names. */
static int cmp_pair(const void *pa, const void *pb, void *arg)
{
	const struct lat_pair *a = pa, *b = pb;
	const bool ra = a->emd >= 0;

	if (pair_class(a) != pair_class(b))
		return pair_class(a) < pair_class(b) ? -1 : 1;
	if (ra && a->emd != b->emd)
		return a->emd > b->emd ? -1 : 1;
	if (!ra && pair_calls(a) != pair_calls(b))
		return pair_calls(a) > pair_calls(b) ? -1 : 1;
	return cmp_names(pair_row(a), pair_row(b), arg);
}

/* Both sides' status: LAT_FEW when either has too few calls. */
static enum lat_status both_status(const struct lat_row *o,
				   const struct lat_row *n)
{
	return o->h.calls < LAT_MIN_CALLS || n->h.calls < LAT_MIN_CALLS ?
	       LAT_FEW : LAT_BOTH;
}

static const struct lat_row *find_key(const struct lat_report *rep,
				      const struct lat_row *k)
{
	for (size_t i = 0; i < rep->nrows; i++)
		if (rep->rows[i].group == k->group && rep->rows[i].nr == k->nr)
			return &rep->rows[i];
	return NULL;
}

int lat_compare(const struct lat_report *old, const struct lat_report *new,
		struct lat_pair **pairs, size_t *n)
{
	struct lat_pair *v = calloc(old->nrows + new->nrows + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < new->nrows; i++) {
		const struct lat_row *o = find_key(old, &new->rows[i]);

		v[k++] = (struct lat_pair){
			o, &new->rows[i],
			o ? lat_emd(&o->h, &new->rows[i].h) : -1,
			o ? both_status(o, &new->rows[i]) : LAT_NEW,
		};
	}
	for (size_t i = 0; i < old->nrows; i++)
		if (!find_key(new, &old->rows[i]))
			v[k++] = (struct lat_pair){ &old->rows[i], NULL, -1,
						    LAT_GONE };
	qsort_r(v, k, sizeof(*v), cmp_pair, new->names);
	*pairs = v;
	*n = k;
	return 0;
}
