// SPDX-License-Identifier: GPL-2.0
/* pprof: --pprof, a profile.proto of the session; see pprof.h. */
#include "pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "array.h"
#include "protobuf.h"
#include "session.h"

/* profile.proto's field numbers, by message. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
};
enum {
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
};
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum {
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};

/* The most lines of a location: inlined functions, then the function. */
#define MAX_LINES	32

/* The sample types (type, unit), then the period type. */
static const char *const value_types[][2] = {
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
};

struct pmap {
	uint64_t start, limit, offset;
	uint32_t file, build_id;	/* string ids */
	uint32_t next;		/* the next mapping of this range; 0: none */
	bool functions, lines;	/* has_functions, has_{filenames,...} */
};

/* A line of a location: string ids, and the line. */
struct pline {
	uint32_t name, file, line, start_line;
};

struct pprof {
	const struct pprof_in *in;
	const struct strtab *names;	/* the first pass's */
	uint64_t period;		/* the tick's, in ns */
	/* (ip, appid | pid << 32, chain | tid << 32) -> samples */
	struct count_table samples;
	/* key -> id (as the count): (address, mapping id, appid + 1 if
	 * none), (name, file, 0), (start, limit, offset), (struct map *) */
	struct count_table locs, funcs, ranges, bymap;
	struct strtab strs;		/* the profile's string table */
	struct pmap *maps;		/* by mapping id - 1 */
	size_t nmaps, cap_maps;
	uint32_t kernel;		/* the kernel's mapping id; 0: none */
	uint64_t nlocs, nfuncs;
	uint32_t key_pid, key_tid, key_appid;
	bool nomem;
	struct pb out, locs_pb, funcs_pb;
};

/* ------------------------------------------------------------ tables */

static uint32_t str(struct pprof *p, const char *s)
{
	uint32_t id = strtab_intern(&p->strs, s);

	if (id != STRTAB_NOMEM)
		return id;
	p->nomem = true;
	return 0;
}

/* The id of the key in t; 0: none. */
static uint64_t id_find(const struct count_table *t, uint64_t ip, uint64_t a,
			uint64_t b)
{
	const struct count_entry *e = counts_find(t, ip, a, b, 0);

	return e ? e->count : 0;
}

static void id_add(struct pprof *p, struct count_table *t, uint64_t ip,
		   uint64_t a, uint64_t b, uint64_t id)
{
	if (counts_add(t, ip, a, b, 0, id))
		p->nomem = true;
}

/* A new mapping; its id, or 0 when out of memory. */
static uint32_t add_map(struct pprof *p, const struct pmap *m)
{
	void *v = array_room(p->maps, &p->cap_maps, p->nmaps, sizeof(*m), 16);

	if (!v) {
		p->nomem = true;
		return 0;
	}
	p->maps = v;
	p->maps[p->nmaps++] = *m;
	return (uint32_t)p->nmaps;
}

/* The build-id as a string id: lowercase hex, as readelf -n shows it. */
static uint32_t build_id(struct pprof *p, const uint8_t *v, size_t n)
{
	char hex[2 * sizeof(((struct dso *)0)->build_id) + 1];

	hex[0] = '\0';
	for (size_t i = 0; i < n && i < sizeof(hex) / 2; i++)
		snprintf(hex + 2 * i, 3, "%02x", v[i]);
	return str(p, hex);
}

/* The mapping of an MMAP record: one per distinct (range, offset, path,
 * build-id). The build-id is the recorded one, else the file's, which
 * the symbolizer has opened by now. */
static uint32_t user_mapping(struct pprof *p, const struct map *m)
{
	const bool file_bid = !m->build_id_len && m->dso &&
			      m->dso->status == REASON_NONE;
	struct pmap pm = {
		m->start, m->end, m->pgoff,
		str(p, strtab_get(p->names, m->path)),
		file_bid ? build_id(p, m->dso->build_id, m->dso->build_id_len)
			 : build_id(p, m->build_id, m->build_id_len),
		0, false, false,
	};
	uint32_t first = (uint32_t)id_find(&p->ranges, m->start, m->end,
					   m->pgoff), id;

	for (id = first; id; id = p->maps[id - 1].next)
		if (p->maps[id - 1].file == pm.file &&
		    p->maps[id - 1].build_id == pm.build_id)
			return id;
	if (first)
		pm.next = p->maps[first - 1].next;
	id = add_map(p, &pm);
	if (!id)
		return 0;
	if (first)
		p->maps[first - 1].next = id;
	else
		id_add(p, &p->ranges, m->start, m->end, m->pgoff, id);
	return id;
}

/* The kernel's mapping, which spans the kernel addresses seen. */
static uint32_t kernel_mapping(struct pprof *p, uint64_t addr)
{
	const struct dso *vmlinux = p->in->src->sym->ksyms ?
				    p->in->src->sym->ksyms->vmlinux : NULL;
	struct pmap *m;

	if (!p->kernel) {
		p->kernel = add_map(p, &(struct pmap){
			.start = addr, .limit = addr,
			.file = str(p, "[kernel.kallsyms]"),
			.build_id = vmlinux ? build_id(p, vmlinux->build_id,
						       vmlinux->build_id_len)
					    : 0,
		});
		if (!p->kernel)
			return 0;
	}
	m = &p->maps[p->kernel - 1];
	if (addr < m->start)
		m->start = addr;
	if (addr >= m->limit)
		m->limit = addr < UINT64_MAX ? addr + 1 : addr;
	return p->kernel;
}

/* The mapping id of an address of the appid (0: none); symbolized first,
 * so that the mapping's file is open. */
static uint32_t mapping_of(struct pprof *p, uint32_t appid, uint64_t addr)
{
	struct symbolizer *sym = p->in->src->sym;
	const struct map *m;
	struct symres s;
	uint32_t id;

	if (!addr)
		return 0;
	if (addr >= KERNEL_IP_MIN)
		return kernel_mapping(p, addr);
	m = maps_find(sym->maps, appid, addr);
	if (!m)
		return 0;
	id = (uint32_t)id_find(&p->bymap, (uintptr_t)m, 0, 0);
	if (id)
		return id;
	if (symbolize(sym, appid, addr, &s)) {
		p->nomem = true;
		return 0;
	}
	id = user_mapping(p, m);
	if (id)
		id_add(p, &p->bymap, (uintptr_t)m, 0, 0, id);
	return id;
}

/* ------------------------------------------------------------ messages */

static uint64_t function_id(struct pprof *p, const struct pline *l)
{
	uint64_t id = id_find(&p->funcs, l->name, l->file, 0);
	struct pb *b = &p->funcs_pb;
	size_t mk;

	if (id)
		return id;
	id = ++p->nfuncs;
	id_add(p, &p->funcs, l->name, l->file, 0, id);
	mk = pb_open(b, PROFILE_FUNCTION);
	pb_uint(b, FUNCTION_ID, id);
	pb_uint(b, FUNCTION_NAME, l->name);
	pb_uint(b, FUNCTION_SYSTEM_NAME, l->name);
	pb_uint(b, FUNCTION_FILENAME, l->file);
	pb_uint(b, FUNCTION_START_LINE, l->start_line);
	pb_close(b, mk);
	return id;
}

/* The lines of a symbolized address into out (MAX_LINES): DWARF's
 * inlined functions, then the function, named as the reports name it.
 * How many; *dwarf: whether DWARF gave them. */
static size_t lines_of(struct pprof *p, const struct symres *s,
		       struct pline *out, bool *dwarf)
{
	struct strtab *names = p->in->src->names;
	struct dso_frame fr[MAX_LINES];
	int n = 0;

	if (s->kind == KIND_SYMBOL && s->obj)
		n = dso_frames(s->obj, s->vaddr, p->in->src->sym->symfs,
			       names, fr, MAX_LINES);
	if (n < 0)
		p->nomem = true;
	*dwarf = n > 0;
	if (n <= 0) {
		out[0] = (struct pline){
			.name = str(p, strtab_get(names, s->sym)) };
		return 1;
	}
	for (int i = 0; i < n; i++)
		out[i] = (struct pline){
			.name = str(p, i == n - 1 ?
				    strtab_get(names, s->sym) : fr[i].func ?
				    strtab_get(names, fr[i].func) : "??"),
			.file = str(p, strtab_get(names, fr[i].file)),
			.line = fr[i].line, .start_line = fr[i].start_line,
		};
	return (size_t)n;
}

/* A new location's message; the lines of "[unknown]" at address 0. */
static void location(struct pprof *p, uint64_t id, uint32_t appid,
		     uint64_t addr, uint32_t map)
{
	struct pline lines[MAX_LINES] = { { .name = str(p, "[unknown]") } };
	struct pb *b = &p->locs_pb;
	struct symres s;
	size_t n = 1, mk, lk;
	bool dwarf = false;

	if (addr && symbolize(p->in->src->sym, appid, addr, &s)) {
		p->nomem = true;
		return;
	}
	if (addr)
		n = lines_of(p, &s, lines, &dwarf);
	if (map) {
		p->maps[map - 1].functions |= addr && s.kind == KIND_SYMBOL;
		p->maps[map - 1].lines |= dwarf;
	}
	mk = pb_open(b, PROFILE_LOCATION);
	pb_uint(b, LOCATION_ID, id);
	pb_uint(b, LOCATION_MAPPING_ID, map);
	pb_uint(b, LOCATION_ADDRESS, addr);
	for (size_t i = 0; i < n; i++) {
		uint64_t fid = function_id(p, &lines[i]);

		lk = pb_open(b, LOCATION_LINE);
		pb_uint(b, LINE_FUNCTION_ID, fid);
		pb_uint(b, LINE_LINE, lines[i].line);
		pb_close(b, lk);
	}
	pb_close(b, mk);
}

/* The location id of an address of the appid, made on first sight. */
static uint64_t location_id(struct pprof *p, uint32_t appid, uint64_t addr)
{
	const uint32_t map = mapping_of(p, appid, addr);
	const uint64_t other = addr && !map ? appid + 1ull : 0;
	uint64_t id = id_find(&p->locs, addr, map, other);

	if (id)
		return id;
	id = ++p->nlocs;
	id_add(p, &p->locs, addr, map, other, id);
	location(p, id, appid, addr, map);
	return id;
}

static void label(struct pb *b, uint32_t key, uint32_t s, uint64_t num)
{
	size_t mk = pb_open(b, SAMPLE_LABEL);

	pb_uint(b, LABEL_KEY, key);
	pb_uint(b, LABEL_STR, s);
	pb_uint(b, LABEL_NUM, num);
	pb_close(b, mk);
}

/* The appid as parse prints it: "name#instance", or "?appid=N". */
static uint32_t appid_name(struct pprof *p, uint32_t appid)
{
	const struct appid_info *a = appids_find(p->in->src->appids, appid);
	char buf[300];

	if (a)
		snprintf(buf, sizeof(buf), "%s#%" PRIu32, a->name, a->instance);
	else
		snprintf(buf, sizeof(buf), "?appid=%" PRIu32, appid);
	return str(p, buf);
}

/* A sample (an aggregate of the table): its stack, values and labels. */
static int sample(struct pprof *p, const struct count_entry *e)
{
	const struct count_entry key = {
		.ip = e->ip, .a = CE_APPID(e), .b = (uint32_t)e->b,
	};
	uint64_t addrs[STACK_MAX_FRAMES];
	int n = stack_addrs(p->in->src, &key, addrs);
	struct pb *b = &p->out;
	size_t mk, k;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		addrs[i] = location_id(p, CE_APPID(e), addrs[i]);
	mk = pb_open(b, PROFILE_SAMPLE);
	k = pb_open(b, SAMPLE_LOCATION_ID);
	for (int i = 0; i < n; i++)
		pb_varint(b, addrs[i]);
	pb_close(b, k);
	k = pb_open(b, SAMPLE_VALUE);
	pb_varint(b, e->count);
	pb_varint(b, e->count * p->period);
	pb_close(b, k);
	label(b, p->key_pid, 0, CE_PID(e));
	label(b, p->key_tid, 0, e->b >> 32);
	label(b, p->key_appid, appid_name(p, CE_APPID(e)), 0);
	pb_close(b, mk);
	return p->nomem || b->nomem ? -1 : 0;
}

static void value_type(struct pprof *p, uint32_t field, size_t i)
{
	size_t mk = pb_open(&p->out, field);

	pb_uint(&p->out, VALUE_TYPE_TYPE, str(p, value_types[i][0]));
	pb_uint(&p->out, VALUE_TYPE_UNIT, str(p, value_types[i][1]));
	pb_close(&p->out, mk);
}

/* The profile's own fields: types, period, time, comment. */
static void head(struct pprof *p, const struct sleepy_file_header *h)
{
	const struct options *o = p->in->o;
	const uint64_t end = p->in->span_ns < o->to_ns ? p->in->span_ns :
			     o->to_ns;

	for (size_t i = 0; i < sizeof(value_types) / sizeof(value_types[0]);
	     i++)
		value_type(p, PROFILE_SAMPLE_TYPE, i);
	value_type(p, PROFILE_PERIOD_TYPE, 1);
	pb_uint(&p->out, PROFILE_PERIOD, p->period);
	pb_uint(&p->out, PROFILE_TIME_NANOS, h->start_realtime_ns + o->from_ns);
	pb_uint(&p->out, PROFILE_DURATION_NANOS, end > o->from_ns ?
		end - o->from_ns : 0);
	if (p->in->comment && *p->in->comment)
		pb_uint(&p->out, PROFILE_COMMENT, str(p, p->in->comment));
}

/* The mappings, once the kernel's span is known. */
static void mappings(struct pprof *p)
{
	struct pb *b = &p->out;

	for (size_t i = 0; i < p->nmaps; i++) {
		const struct pmap *m = &p->maps[i];
		size_t mk = pb_open(b, PROFILE_MAPPING);

		pb_uint(b, MAPPING_ID, i + 1);
		pb_uint(b, MAPPING_MEMORY_START, m->start);
		pb_uint(b, MAPPING_MEMORY_LIMIT, m->limit);
		pb_uint(b, MAPPING_FILE_OFFSET, m->offset);
		pb_uint(b, MAPPING_FILENAME, m->file);
		pb_uint(b, MAPPING_BUILD_ID, m->build_id);
		pb_uint(b, MAPPING_HAS_FUNCTIONS, m->functions);
		pb_uint(b, MAPPING_HAS_FILENAMES, m->lines);
		pb_uint(b, MAPPING_HAS_LINE_NUMBERS, m->lines);
		pb_uint(b, MAPPING_HAS_INLINE_FRAMES, m->lines);
		pb_close(b, mk);
	}
}

/* ------------------------------------------------------------ the pass */

/* The samples that pass the filters, by (pid, tid, appid, ip, chain). */
static int aggregate(struct pprof *p, struct sleepy_reader *r)
{
	const struct options *o = p->in->o;
	const struct stack_source *src = p->in->src;
	struct sleepy_sample x;
	uint32_t chain;
	int rc;

	while ((rc = session_next_wanted(r, o, src->appids, src->windows,
					  &x)) > 0) {
		chain = x.flags & SLEEPY_SAMPLE_F_CHAIN ?
			chains_lookup(src->chains, x.cpu, x.chain) : 0;
		if (counts_add(&p->samples, x.ip, counts_a(x.appid, x.pid),
			       chain | (uint64_t)x.tid << 32, 0, 1))
			return PPROF_NOMEM;
	}
	return rc < 0 ? PPROF_READER : 0;
}

/* The whole profile into p->out. 0 or PPROF_NOMEM. */
static int build(struct pprof *p, const struct sleepy_file_header *h)
{
	struct count_entry *e = counts_entries(&p->samples);

	if (!e)
		return PPROF_NOMEM;
	p->key_pid = str(p, "pid");
	p->key_tid = str(p, "tid");
	p->key_appid = str(p, "appid");
	head(p, h);
	for (size_t i = 0; i < p->samples.used; i++) {
		if (sample(p, &e[i])) {
			free(e);
			return PPROF_NOMEM;
		}
	}
	free(e);
	mappings(p);
	pb_append(&p->out, &p->locs_pb);
	pb_append(&p->out, &p->funcs_pb);
	for (size_t i = 0; i < p->strs.n; i++)
		pb_bytes(&p->out, PROFILE_STRING_TABLE, p->strs.v[i],
			 strlen(p->strs.v[i]));
	return p->nomem || p->out.nomem ? PPROF_NOMEM : 0;
}

/* ------------------------------------------------------------ the file */

static int write_all(int fd, const uint8_t *v, size_t n)
{
	while (n) {
		ssize_t k = write(fd, v, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		v += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The buffer, gzipped, to fd: 0 or an errno. */
static int write_gzip(int fd, const uint8_t *v, size_t n)
{
	static uint8_t out[1 << 16];
	z_stream z = { 0 };
	int rc = 0, zrc = Z_OK;
	uInt chunk;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return ENOMEM;
	while (!rc && zrc != Z_STREAM_END) {
		if (!z.avail_in) {
			chunk = n > (1u << 30) ? 1u << 30 : (uInt)n;
			z.next_in = (Bytef *)(uintptr_t)v;
			z.avail_in = chunk;
			v += chunk;
			n -= chunk;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		zrc = deflate(&z, n || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zrc == Z_STREAM_ERROR)
			rc = EIO;
		else
			rc = write_all(fd, out, sizeof(out) - z.avail_out);
	}
	deflateEnd(&z);
	return rc;
}

/*
 * The file: a temporary one next to path, renamed over it (*tmp, to be
 * freed), or path itself if it exists and is not a regular file. An fd,
 * or -1 with errno set.
 */
static int open_out(const char *path, char **tmp)
{
	struct stat st;
	mode_t mask;
	int fd;

	*tmp = NULL;
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	*tmp = malloc(strlen(path) + sizeof(".XXXXXX"));
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	sprintf(*tmp, "%s.XXXXXX", path);
	fd = mkstemp(*tmp);
	if (fd < 0)
		return -1;
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);	/* mkstemp's is 0600 */
	return fd;
}

static int write_file(const char *path, const struct pb *b, char *err,
		      size_t errsz)
{
	char *tmp;
	int fd = open_out(path, &tmp), rc = fd < 0 ? errno : 0;

	if (!rc)
		rc = write_gzip(fd, b->buf, b->len);
	if (fd >= 0 && close(fd) && !rc)
		rc = errno;
	if (!rc && tmp && rename(tmp, path))
		rc = errno;
	if (rc && tmp && fd >= 0)
		unlink(tmp);
	free(tmp);
	if (rc)
		snprintf(err, errsz, "%s: %s", path, strerror(rc));
	return rc ? PPROF_WRITE : 0;
}

static void pprof_free(struct pprof *p)
{
	counts_free(&p->samples);
	counts_free(&p->locs);
	counts_free(&p->funcs);
	counts_free(&p->ranges);
	counts_free(&p->bymap);
	strtab_free(&p->strs);
	free(p->maps);
	pb_free(&p->out);
	pb_free(&p->locs_pb);
	pb_free(&p->funcs_pb);
}

int pprof_write(struct sleepy_reader *r, const struct pprof_in *in,
		char *err, size_t errsz)
{
	const struct sleepy_file_header *h = sleepy_reader_header(r);
	struct pprof p = {
		.in = in, .names = in->src->names,
		.period = h->hz ? 1000000000u / h->hz : 0,
	};
	int rc = PPROF_NOMEM;

	pb_init(&p.out);
	pb_init(&p.locs_pb);
	pb_init(&p.funcs_pb);
	if (!counts_init(&p.samples) && !counts_init(&p.locs) &&
	    !counts_init(&p.funcs) && !counts_init(&p.ranges) &&
	    !counts_init(&p.bymap) && !strtab_init(&p.strs))
		rc = aggregate(&p, r);
	if (!rc)
		rc = build(&p, h);
	if (!rc)
		rc = write_file(in->out, &p.out, err, errsz);
	pprof_free(&p);
	return rc;
}
