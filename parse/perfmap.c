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

/* One line "START SIZE NAME" into *s; false for a line not so made. */
static bool parse_line(char *line, struct perfmap_sym *s,
		       struct strtab *names, bool *nomem)
{
	char *end, *name;
	uint64_t start, size;

	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return false;
	size = strtoull(end + 1, &name, 16);
	if (name == end + 1 || *name != ' ' || !size ||
	    start + size < start)
		return false;
	name++;
	name[strcspn(name, "\r\n")] = '\0';
	if (!*name)
		return false;
	s->start = start;
	s->end = start + size;
	s->name = strtab_intern(names, name);
	*nomem = s->name == STRTAB_NOMEM;
	return !*nomem;
}

static int cmp_start(const void *pa, const void *pb)
{
	const struct perfmap_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Read f into map; 0, or -1 when out of memory. */
static int read_map(struct perfmap *map, FILE *f, struct strtab *names)
{
	char *line = NULL;
	size_t len = 0, cap = 0, out = 0;
	struct perfmap_sym s, *v;
	bool nomem = false;

	while (getline(&line, &len, f) > 0) {
		if (!parse_line(line, &s, names, &nomem)) {
			if (nomem)
				break;
			continue;
		}
		v = array_room(map->syms, &cap, map->n, sizeof(*v), 256);
		if (!v) {
			nomem = true;
			break;
		}
		map->syms = v;
		s.line = (uint32_t)map->n;
		map->syms[map->n++] = s;
	}
	free(line);
	if (nomem)
		return -1;
	qsort(map->syms, map->n, sizeof(*map->syms), cmp_start);
	for (size_t i = 0; i < map->n; i++) {
		if (out && map->syms[out - 1].start == map->syms[i].start)
			out--;	/* the same START again: the later line */
		map->syms[out++] = map->syms[i];
	}
	map->n = out;
	return 0;
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
