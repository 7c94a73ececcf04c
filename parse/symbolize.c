// SPDX-License-Identifier: GPL-2.0
/* symbolize: IPs to symbols; see symbolize.h. */
#include "symbolize.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"

struct memo_slot {
	uint64_t ip;
	uint32_t appid;
	uint32_t used;
	struct symres r;
};

const char *reason_name(unsigned int reason)
{
	static const char *const names[NR_REASONS] = {
		[REASON_NONE] = "resolved",
		[REASON_NO_MAPPING] = "no mapping",
		[REASON_FILE_MISSING] = "file missing",
		[REASON_NOT_ELF] = "not ELF",
		[REASON_BUILD_ID] = "build-id mismatch",
		[REASON_NO_SYMBOL] = "no symbol",
		[REASON_NO_KSYMS] = "no kernel symbols",
	};

	return reason < NR_REASONS ? names[reason] : "?";
}

int symbolizer_init(struct symbolizer *s, struct strtab *names,
		    struct maps *maps, struct ksyms *ksyms, const char *symfs,
		    bool lines)
{
	memset(s, 0, sizeof(*s));
	s->names = names;
	s->maps = maps;
	s->ksyms = ksyms;
	s->symfs = symfs;
	s->jit.symfs = symfs;
	s->lines = lines;
	s->memo_mask = 1023;
	s->memo = calloc(s->memo_mask + 1, sizeof(*s->memo));
	s->unknown_dso = strtab_intern(names, "[unknown]");
	s->kernel_dso = strtab_intern(names, "[kernel.kallsyms]");
	s->qq = strtab_intern(names, "??");
	if (!s->memo || s->unknown_dso == STRTAB_NOMEM ||
	    s->kernel_dso == STRTAB_NOMEM || s->qq == STRTAB_NOMEM)
		return -1;
	return 0;
}

void symbolizer_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->ndsos; i++) {
		if (s->dsos[i]) {
			dso_close(s->dsos[i]);
			free(s->dsos[i]);
		}
	}
	perfmaps_free(&s->jit);
	free(s->dsos);
	free(s->memo);
	memset(s, 0, sizeof(*s));
}

static size_t memo_hash(uint32_t appid, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)appid * 0x9e3779b97f4a7c15ull) *
		0xbf58476d1ce4e5b9ull;

	return (size_t)(h ^ h >> 32);
}

static int memo_grow(struct symbolizer *s)
{
	size_t nmask = 2 * s->memo_mask + 1;
	struct memo_slot *v = calloc(nmask + 1, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i <= s->memo_mask; i++) {
		size_t j;

		if (!s->memo[i].used)
			continue;
		j = memo_hash(s->memo[i].appid, s->memo[i].ip) & nmask;
		while (v[j].used)
			j = (j + 1) & nmask;
		v[j] = s->memo[i];
	}
	free(s->memo);
	s->memo = v;
	s->memo_mask = nmask;
	return 0;
}

/* The dso of a path id, opened on first use (under symfs, if not NULL);
 * NULL when out of memory. */
static struct dso *get_dso(struct symbolizer *s, uint32_t path,
			   const char *symfs)
{
	if (path >= s->ndsos) {
		size_t n = s->names->n;
		struct dso **v = realloc(s->dsos, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + s->ndsos, 0, (n - s->ndsos) * sizeof(*v));
		s->dsos = v;
		s->ndsos = n;
	}
	if (!s->dsos[path]) {
		struct dso *d = calloc(1, sizeof(*d));

		if (!d)
			return NULL;
		if (dso_open(d, strtab_get(s->names, path), symfs,
			     s->names)) {
			dso_close(d);
			free(d);
			return NULL;
		}
		s->dsos[path] = d;
	}
	return s->dsos[path];
}

/* Whether d can stand for mapping m: REASON_NONE, or why not. */
static enum sym_reason map_reason(const struct dso *d, const struct map *m)
{
	if (d->status != REASON_NONE)
		return d->status;
	if (m->build_id_len && (d->build_id_len < m->build_id_len ||
				memcmp(d->build_id, m->build_id,
				       m->build_id_len)))
		return REASON_BUILD_ID;
	return REASON_NONE;
}

/* m's copy in --buildid-dir (DIR/.build-id/xx/rest): a dso that stands
 * for m, or one that does not; NULL when out of memory. */
static struct dso *archived_dso(struct symbolizer *s, const struct map *m)
{
	char rel[200], path[PATH_MAX];
	uint32_t id;

	debuginfo_build_id_path(rel, sizeof(rel), m->build_id,
				m->build_id_len, "");
	snprintf(path, sizeof(path), "%s%s", s->buildid_dir, rel);
	id = strtab_intern(s->names, path);
	return id == STRTAB_NOMEM ? NULL : get_dso(s, id, NULL);
}

/* m's dso, into m->dso and m->state: the file at its recorded path
 * (under --symfs), or, where that is missing or another build, its copy
 * in --buildid-dir. -1 when out of memory. */
static int map_dso(struct symbolizer *s, struct map *m)
{
	struct dso *d = get_dso(s, m->path, s->symfs);

	if (!d)
		return -1;
	m->dso = d;
	m->state = 1 + (int)map_reason(d, m);
	if (m->state == 1 || !s->buildid_dir || m->build_id_len < 2)
		return 0;
	d = archived_dso(s, m);
	if (!d)
		return -1;
	if (map_reason(d, m) == REASON_NONE) {
		m->dso = d;
		m->state = 1;
	}
	return 0;
}

struct dso *symbolize_dso(struct symbolizer *s, uint32_t appid, uint64_t ip,
			  int *err)
{
	struct map *m = maps_find(s->maps, appid, ip);

	*err = 0;
	if (!m || ip >= KERNEL_IP_MIN)
		return NULL;
	if (m->state == 0 && map_dso(s, m)) {
		*err = -1;
		return NULL;
	}
	return m->state == 1 ? m->dso : NULL;
}

static int unresolved(struct symbolizer *s, struct symres *r,
		      enum sym_reason why, const char *base, uint64_t off)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base, off);
	r->kind = KIND_UNRESOLVED;
	r->reason = (uint8_t)why;
	r->sym = strtab_intern(s->names, buf);
	r->obj = NULL;
	return r->sym == STRTAB_NOMEM ? -1 : 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int resolve_kernel(struct symbolizer *s, uint64_t ip,
			  struct symres *r)
{
	const struct ksyms *k = s->ksyms;

	r->dso = s->kernel_dso;
	r->offset = ip;
	r->vaddr = ip;
	if (!k || !k->source)
		return unresolved(s, r, REASON_NO_KSYMS, "[kernel.kallsyms]",
				  ip);
	if (ksyms_lookup(k, ip, &r->sym, &r->dso, &r->sym_start)) {
		r->dso = s->kernel_dso;
		return unresolved(s, r, REASON_NO_SYMBOL, "[kernel.kallsyms]",
				  ip);
	}
	r->kind = KIND_SYMBOL;
	r->reason = REASON_NONE;
	if (k->vmlinux) {
		r->obj = k->vmlinux;
		if (s->lines) {
			r->line = dso_line(k->vmlinux, ip, NULL, s->names);
			if (r->line == STRTAB_NOMEM)
				return -1;
		}
	}
	return 0;
}

/* An IP in anonymous executable memory: named by the process's perf map
 * (perfmap.h), dso "perf-PID.map". */
static int resolve_jit(struct symbolizer *s, const struct map *m,
		       uint64_t ip, struct symres *r)
{
	struct perfmap *map = perfmap_get(&s->jit, m->pid, s->names);
	const struct perfmap_sym *f;

	if (!map)
		return -1;
	r->dso = map->dso;
	r->offset = ip;
	r->vaddr = ip;
	f = map->found ? perfmap_lookup(map, ip) : NULL;
	if (!f)
		return unresolved(s, r, map->found ? REASON_NO_SYMBOL :
				  REASON_FILE_MISSING,
				  strtab_get(s->names, map->dso), ip);
	r->kind = KIND_SYMBOL;
	r->reason = REASON_NONE;
	r->sym = f->name;
	r->sym_start = f->start;
	return 0;
}

static int resolve_user(struct symbolizer *s, uint32_t appid, uint64_t ip,
			struct symres *r)
{
	struct map *m = maps_find(s->maps, appid, ip);
	const char *path, *base;
	struct dso *d;
	uint64_t off, vaddr;
	size_t i;
	enum dso_hit hit;

	if (!m) {
		r->dso = s->unknown_dso;
		r->offset = ip;
		return unresolved(s, r, REASON_NO_MAPPING, "[unknown]", ip);
	}
	if (m->anon)
		return resolve_jit(s, m, ip, r);
	path = strtab_get(s->names, m->path);
	base = base_name(path);
	r->dso = m->path ? m->path : s->unknown_dso;
	off = ip - m->start + m->pgoff;
	r->offset = off;
	if (m->state == 0 && map_dso(s, m))
		return -1;
	if (m->state != 1)
		return unresolved(s, r, (enum sym_reason)(m->state - 1), base,
				  off);
	d = m->dso;
	if (off < m->pgoff || dso_vaddr(d, off, &vaddr))
		return unresolved(s, r, REASON_NO_SYMBOL, base, off);
	r->vaddr = vaddr;
	hit = dso_lookup(d, vaddr, &i);
	if (hit == DSO_MISS)
		return unresolved(s, r, REASON_NO_SYMBOL, base, off);
	r->obj = d;
	r->reason = REASON_NONE;
	if (hit == DSO_SYMBOL) {
		r->kind = KIND_SYMBOL;
		r->sym = d->syms[i].name;
		r->sym_start = d->syms[i].addr;
	} else {
		char buf[1024];

		snprintf(buf, sizeof(buf), "%s->%s",
			 strtab_get(s->names, d->syms[i].name),
			 i + 1 < d->nsyms ? strtab_get(s->names,
						       d->syms[i + 1].name)
					  : BRACKET_END);
		r->kind = KIND_BRACKET;
		r->sym = strtab_intern(s->names, buf);
		if (r->sym == STRTAB_NOMEM)
			return -1;
	}
	if (s->lines) {
		r->line = dso_line(d, vaddr, s->symfs, s->names);
		if (r->line == STRTAB_NOMEM)
			return -1;
	}
	return 0;
}

int symbolize(struct symbolizer *s, uint32_t appid, uint64_t ip,
	      struct symres *r)
{
	const bool kernel = ip >= KERNEL_IP_MIN;
	const uint32_t key_appid = kernel ? UINT32_MAX : appid;
	size_t j = memo_hash(key_appid, ip) & s->memo_mask;
	int rc;

	for (; s->memo[j].used; j = (j + 1) & s->memo_mask) {
		if (s->memo[j].ip == ip && s->memo[j].appid == key_appid) {
			*r = s->memo[j].r;
			return 0;
		}
	}
	memset(r, 0, sizeof(*r));
	rc = kernel ? resolve_kernel(s, ip, r) : resolve_user(s, appid, ip, r);
	if (rc)
		return -1;
	s->memo[j].ip = ip;
	s->memo[j].appid = key_appid;
	s->memo[j].used = 1;
	s->memo[j].r = *r;
	if (2 * ++s->memo_used > s->memo_mask + 1 && memo_grow(s))
		return -1;
	return 0;
}
