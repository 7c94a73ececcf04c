// SPDX-License-Identifier: GPL-2.0
/* peak: --peak's calls and their windows; see peak.h. */
#include "peak.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fmt.h"
#include "syscalls.h"

/* APP:SYSCALL:N split at its last two colons (an app's name may hold
 * colons). */
struct peak_spec {
	char app[512];
	long nr;
	unsigned long n;
};

static int parse_spec(const char *spec, struct peak_spec *p, char *err,
		      size_t errsz)
{
	char buf[sizeof(p->app) + 160], *c1, *c2, *end;

	snprintf(buf, sizeof(buf), "%s", spec);
	c2 = strrchr(buf, ':');
	if (c2)
		*c2 = '\0';
	c1 = c2 ? strrchr(buf, ':') : NULL;
	if (!c1 || c1 == buf || strlen(spec) >= sizeof(p->app)) {
		snprintf(err, errsz, "--peak: '%s' is not APP:SYSCALL:N", spec);
		return -2;
	}
	*c1 = '\0';
	snprintf(p->app, sizeof(p->app), "%.*s", (int)sizeof(p->app) - 1, buf);
	errno = 0;
	p->n = strtoul(c2 + 1, &end, 10);
	if (c2[1] < '1' || c2[1] > '9' || *end || errno) {
		snprintf(err, errsz, "--peak: invalid peak number '%s'", c2 + 1);
		return -2;
	}
	p->nr = syscall_lookup(c1 + 1);
	if (p->nr < 0) {
		snprintf(err, errsz, "--peak: unknown system call '%s'", c1 + 1);
		return -2;
	}
	return 0;
}

static int cmp_window(const void *pa, const void *pb)
{
	const struct call_window *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* The SYSCALL records of row's group and call in peak k's buckets. */
static int add_windows(const struct lat_report *rep, const struct lat_row *row,
		       const struct lat_peak *k, struct peak_windows *w)
{
	size_t cap = 0;

	for (size_t i = 0; i < rep->lat->ncalls; i++) {
		const struct sleepy_syscall *c = &rep->lat->calls[i];
		const unsigned int b = lat_bucket_of(c->latency_ns);
		uint32_t group;
		void *v;

		if (c->nr != row->nr || b < k->first || b > k->last)
			continue;
		group = lat_group(rep, c->appid);
		if (group == STRTAB_NOMEM)
			return -1;
		if (group != row->group)
			continue;
		v = array_room(w->v, &cap, w->n, sizeof(*w->v), 64);
		if (!v)
			return -1;
		w->v = v;
		w->v[w->n++] = (struct call_window){
			c->tid, c->start_ns,
			c->start_ns + c->latency_ns < c->start_ns ? UINT64_MAX :
			c->start_ns + c->latency_ns, false,
		};
	}
	if (w->n)	/* else v is NULL: no array for qsort() */
		qsort(w->v, w->n, sizeof(*w->v), cmp_window);
	return 0;
}

/* The peak's row and number, or -2 with err. */
static int find_peak(const struct lat_report *rep, const struct peak_spec *p,
		     const struct lat_row **row, char *err, size_t errsz)
{
	char buf[SYSCALL_LABEL_MAX];
	const char *call = syscall_label((unsigned int)p->nr, buf);

	*row = lat_report_find(rep, p->app, (unsigned int)p->nr);
	if (!*row) {
		snprintf(err, errsz, "--peak: no latency histogram of %s and %s "
			 "(parse --latency lists them)", p->app, call);
		return -2;
	}
	if (p->n > (*row)->npeaks) {
		snprintf(err, errsz, "--peak: %s:%s has %zu peak%s, not %lu",
			 p->app, call, (*row)->npeaks,
			 (*row)->npeaks == 1 ? "" : "s", p->n);
		return -2;
	}
	return 0;
}

int peak_windows_build(const char *spec, const struct latency *lat,
		       const struct appid_table *appids,
		       struct strtab *names, const struct options *o,
		       struct peak_windows *w, char *err, size_t errsz)
{
	struct peak_spec p;
	struct lat_report rep = { lat, appids, names, o, false, false,
				  NULL, 0, 0 };
	const struct lat_row *row;
	const struct lat_peak *k;
	char lo[32], hi[32], buf[SYSCALL_LABEL_MAX];
	int rc = parse_spec(spec, &p, err, errsz);

	memset(w, 0, sizeof(*w));
	if (rc)
		return rc;
	rep.by_appid = strchr(p.app, '#') != NULL;
	if (lat_report_build(&rep))
		return -1;
	rc = find_peak(&rep, &p, &row, err, errsz);
	if (!rc) {
		k = &row->peaks[p.n - 1];
		w->peak_calls = k->calls;
		rc = add_windows(&rep, row, k, w);
		snprintf(w->desc, sizeof(w->desc), "peak %.200s:%s:%lu (%s to %s)",
			 p.app, syscall_label(row->nr, buf), p.n,
			 fmt_duration(lo, sizeof(lo),
				      (double)lat_bucket_lo(k->first)),
			 fmt_duration(hi, sizeof(hi),
				      (double)lat_bucket_hi(k->last)));
	}
	lat_report_free(&rep);
	return rc;
}

void peak_windows_free(struct peak_windows *w)
{
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

bool peak_windows_hit(struct peak_windows *w, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = w->n;

	/* The first window after (tid, t); the one before it may hold t. */
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		const struct call_window *m = &w->v[mid];

		if (m->tid < tid || (m->tid == tid && m->start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || w->v[lo - 1].tid != tid || w->v[lo - 1].end < t)
		return false;
	w->sampled += !w->v[lo - 1].hit;
	w->v[lo - 1].hit = true;
	return true;
}

void peak_windows_describe(struct peak_windows *w, uint64_t samples)
{
	const size_t len = strlen(w->desc);

	snprintf(w->desc + len, sizeof(w->desc) - len, ": %" PRIu64 " calls, "
		 "%zu sampled (SYSCALL records), %" PRIu64 " with %" PRIu64
		 " samples counted", w->peak_calls, w->n, w->sampled, samples);
}
