// SPDX-License-Identifier: GPL-2.0
/* filters: --app and --appid on the counts, and the filters' text; see
 * filters.h. */
#include "filters.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

bool filters_appid_wanted(const struct options *o,
			  const struct appid_table *appids, uint32_t appid)
{
	const struct appid_info *a = appids_find(appids, appid);

	if (o->app && (!a || strcmp(a->name, o->app)))
		return false;
	if (o->appid && (!a || strcmp(a->name, o->appid) ||
			 a->instance != (uint32_t)o->appid_instance))
		return false;
	return true;
}

int filters_apply(const struct options *o, const struct appid_table *appids,
		  struct count_table *counts, uint64_t *total)
{
	struct count_table kept;

	*total = 0;
	if (!o->app && !o->appid) {
		for (size_t i = 0; i <= counts->mask; i++)
			*total += counts->slots[i].count;
		return 0;
	}
	if (counts_init(&kept))
		return -1;
	for (size_t i = 0; i <= counts->mask; i++) {
		const struct count_entry *e = &counts->slots[i];

		if (!e->count || !filters_appid_wanted(o, appids, CE_APPID(e)))
			continue;
		if (counts_add(&kept, e->ip, e->a, e->b, e->c, e->count)) {
			counts_free(&kept);
			return -1;
		}
		*total += e->count;
	}
	counts_free(counts);
	*counts = kept;
	return 0;
}

void filters_describe(const struct options *o, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...) do { if (n < size) n += (size_t)snprintf(buf + n, \
	size - n, __VA_ARGS__); } while (0)
	if (o->app)
		ADD("%sapp %s", n ? ", " : "", o->app);
	if (o->appid)
		ADD("%sappid %s#%ld", n ? ", " : "", o->appid,
		    o->appid_instance);
	if (o->pid >= 0)
		ADD("%spid %lld", n ? ", " : "", o->pid);
	if (o->tid >= 0)
		ADD("%stid %lld", n ? ", " : "", o->tid);
	if (o->cpu >= 0)
		ADD("%scpu %lld", n ? ", " : "", o->cpu);
	if (o->have_from || o->have_to) {
		ADD("%stime %.3f s to ", n ? ", " : "",
		    (double)o->from_ns / 1e9);
		if (o->have_to)
			ADD("%.3f s", (double)o->to_ns / 1e9);
		else
			ADD("the end");
	}
#undef ADD
}
