// SPDX-License-Identifier: GPL-2.0
/* perfmap: JIT code names from perf maps; see perfmap.h. */
#include "perfmap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "sidecar.h"

static const struct sidecar_name perfmap_name = { "perf-", "perf-", ".map" };

/* One line "START SIZE NAME" into the perfmap_sym at entry: 1, 0 for a
 * line not so made, -1 when out of memory. */
static int parse_line(void *entry, char *line, size_t len, uint32_t lineno,
		      void *names)
{
	struct perfmap_sym *s = entry;
	char *end, *name;
	uint64_t start, size;

	(void)len;
	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	size = strtoull(end + 1, &name, 16);
	if (name == end + 1 || *name != ' ' || !size ||
	    start + size < start)
		return 0;
	name++;
	name[strcspn(name, "\r\n")] = '\0';
	if (!*name)
		return 0;
	s->start = start;
	s->end = start + size;
	s->line = lineno;
	s->name = strtab_intern(names, name);
	return s->name == STRTAB_NOMEM ? -1 : 1;
}

static int cmp_start(const void *pa, const void *pb)
{
	const struct perfmap_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int same_start(const void *pa, const void *pb)
{
	return ((const struct perfmap_sym *)pa)->start ==
	       ((const struct perfmap_sym *)pb)->start;
}

/* Read f into map (the same START again: the later line, the JIT reused
 * the memory); 0, or -1 when out of memory. */
static int read_map(struct perfmap *map, FILE *f, struct strtab *names)
{
	struct sidecar_entries e = {
		.size = sizeof(struct perfmap_sym), .parse = parse_line,
		.cmp = cmp_start, .same = same_start, .arg = names,
	};
	int rc = sidecar_read(f, &e);

	map->syms = e.v;
	map->n = e.n;
	return rc;
}

struct perfmap *perfmap_get(struct perfmaps *pm, uint32_t pid,
			    struct strtab *names)
{
	struct perfmap *map, *v;
	char dso[32], path[PATH_MAX];
	FILE *f;
	int rc;

	for (size_t i = 0; i < pm->n; i++)
		if (pm->v[i].pid == pid)
			return &pm->v[i];
	v = array_room(pm->v, &pm->cap, pm->n, sizeof(*v), 4);
	if (!v)
		return NULL;
	pm->v = v;
	map = &pm->v[pm->n];
	memset(map, 0, sizeof(*map));
	map->pid = pid;
	snprintf(dso, sizeof(dso), "perf-%" PRIu32 ".map", pid);
	map->dso = strtab_intern(names, dso);
	if (map->dso == STRTAB_NOMEM)
		return NULL;
	f = sidecar_open(pm->session, pm->symfs, &perfmap_name, pid, path,
			 sizeof(path));
	if (f) {
		rc = read_map(map, f, names);
		fclose(f);
		if (rc) {
			free(map->syms);
			return NULL;
		}
		map->found = 1;
	}
	pm->n++;
	return map;
}

const struct perfmap_sym *perfmap_lookup(const struct perfmap *map,
					 uint64_t ip)
{
	size_t lo = 0, hi = map->n;

	while (lo < hi) {	/* the last start at or below ip */
		size_t mid = lo + (hi - lo) / 2;

		if (map->syms[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < map->syms[lo - 1].end ? &map->syms[lo - 1] : NULL;
}

void perfmaps_free(struct perfmaps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].syms);
	free(pm->v);
	memset(pm, 0, sizeof(*pm));
}
