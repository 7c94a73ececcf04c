// SPDX-License-Identifier: GPL-2.0
/* sqlout: the session as an SQLite database; see sqlout.h. */
#include "sqlout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "array.h"
#include "fields.h"
#include "filters.h"
#include "stats.h"
#include "syscalls.h"

static const char schema[] =
	"PRAGMA journal_mode = OFF;\n"
	"PRAGMA synchronous = OFF;\n"
	"PRAGMA locking_mode = EXCLUSIVE;\n"
	"PRAGMA cache_size = -65536;\n"
	"CREATE TABLE session (\n"
	"  file TEXT, version INTEGER, hz INTEGER, nr_cpus INTEGER,\n"
	"  flags INTEGER, release TEXT, machine TEXT,\n"
	"  start_realtime_ns INTEGER, start_mono_ns INTEGER,\n"
	"  span_ns INTEGER, sample_records INTEGER, samples INTEGER,\n"
	"  mode_filter TEXT, filters TEXT, slice_ns INTEGER,\n"
	"  kernel_symbols TEXT, stopped_cleanly INTEGER,\n"
	"  samples_taken INTEGER, samples_written INTEGER,\n"
	"  dropped INTEGER);\n"
	"CREATE TABLE appids (\n"
	"  appid INTEGER PRIMARY KEY, name TEXT, instance INTEGER,\n"
	"  pid INTEGER, parent_appid INTEGER, origin TEXT,\n"
	"  kthread INTEGER, idle INTEGER, time_ns INTEGER, path TEXT);\n"
	"CREATE TABLE mappings (\n"
	"  id INTEGER PRIMARY KEY, appid INTEGER, pid INTEGER,\n"
	"  start INTEGER, len INTEGER, pgoff INTEGER, time_ns INTEGER,\n"
	"  build_id TEXT, path TEXT);\n"
	"CREATE TABLE samples (\n"
	"  appid INTEGER, pid INTEGER, tid INTEGER, cpu INTEGER, mode TEXT,\n"
	"  eip INTEGER, slice INTEGER, samples INTEGER, stack INTEGER,\n"
	"  lstack INTEGER, context TEXT, syscall TEXT);\n"
	"CREATE TABLE symbols (\n"
	"  appid INTEGER, eip INTEGER, dso TEXT, symbol TEXT, kind TEXT,\n"
	"  reason TEXT, offset INTEGER, line TEXT,\n"
	"  PRIMARY KEY (appid, eip)) WITHOUT ROWID;\n"
	"CREATE TABLE stacks (\n"
	"  stack INTEGER, depth INTEGER, address INTEGER, kind TEXT,\n"
	"  dso TEXT, symbol TEXT,\n"
	"  PRIMARY KEY (stack, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE lstacks (\n"
	"  lstack INTEGER PRIMARY KEY, nr INTEGER, flags INTEGER);\n"
	"CREATE TABLE lstack_frames (\n"
	"  lstack INTEGER, depth INTEGER, id INTEGER, arg INTEGER,\n"
	"  PRIMARY KEY (lstack, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE offcpu (\n"
	"  appid INTEGER, pid INTEGER, tid INTEGER, cpu INTEGER,\n"
	"  state TEXT, slice INTEGER, lstack INTEGER, records INTEGER,\n"
	"  off_ns INTEGER);\n"
	"CREATE TABLE lstack_names (\n"
	"  pid INTEGER, id INTEGER, name TEXT,\n"
	"  PRIMARY KEY (pid, id)) WITHOUT ROWID;\n"
	"CREATE TABLE latency (\n"
	"  app TEXT, appid INTEGER, syscall TEXT, nr INTEGER, segment INTEGER,\n"
	"  bucket_lo_ns INTEGER, bucket_hi_ns INTEGER, count INTEGER);\n"
	"CREATE TABLE lat_segments (\n"
	"  segment INTEGER, start_ns INTEGER, end_ns INTEGER, calls INTEGER,\n"
	"  lost INTEGER, histograms INTEGER);\n"
	"CREATE TABLE syscalls (\n"
	"  appid INTEGER, pid INTEGER, tid INTEGER, nr INTEGER, syscall TEXT,\n"
	"  start_ns INTEGER, latency_ns INTEGER, flags INTEGER);\n"
	"BEGIN;\n";

static const char indexes[] =
	"COMMIT;\n"
	"CREATE INDEX samples_appid_eip ON samples (appid, eip);\n"
	"CREATE INDEX samples_slice ON samples (slice);\n"
	"CREATE INDEX symbols_symbol ON symbols (symbol, dso);\n"
	"CREATE INDEX samples_stack ON samples (stack);\n"
	"CREATE INDEX stacks_symbol ON stacks (symbol, stack);\n"
	"CREATE INDEX appids_name ON appids (name, instance);\n"
	"CREATE INDEX mappings_appid ON mappings (appid, start);\n"
	"CREATE INDEX samples_lstack ON samples (lstack);\n"
	"CREATE INDEX offcpu_lstack ON offcpu (lstack);\n"
	"CREATE INDEX syscalls_tid ON syscalls (tid, start_ns);\n"
	"CREATE VIEW samples_sym AS\n"
	"  SELECT s.appid, s.pid, s.tid, s.cpu, s.mode, s.eip, s.slice,\n"
	"         s.samples, s.stack, s.context, s.syscall,\n"
	"         COALESCE(a.name, '?appid=' || s.appid) AS app,\n"
	"         a.instance, y.dso, y.symbol, y.kind, y.reason, y.line\n"
	"  FROM samples s JOIN symbols y USING (appid, eip)\n"
	"  LEFT JOIN appids a USING (appid);\n";

struct db {
	sqlite3 *db;
	char *err;
	size_t errsz;
	const char *path;
};

static int fail(struct db *d, const char *what)
{
	snprintf(d->err, d->errsz, "%s: %s: %s", d->path, what,
		 d->db ? sqlite3_errmsg(d->db) : "cannot open");
	return -1;
}

static int nomem(struct db *d)
{
	snprintf(d->err, d->errsz, "out of memory");
	return -1;
}

static int prepare(struct db *d, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
		return fail(d, "prepare");
	return 0;
}

static int step(struct db *d, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(d, "insert");
}

static void text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

static void i64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static int write_session(struct db *d, const struct sqlite_in *in)
{
	const struct sleepy_file_header *h = in->hdr;
	sqlite3_stmt *st;
	int rc;

	if (prepare(d, "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
		    "?,?,?,?,?,?,?,?)", &st))
		return -1;
	text(st, 1, in->file);
	i64(st, 2, h->version);
	i64(st, 3, h->hz);
	i64(st, 4, h->nr_cpus);
	i64(st, 5, h->flags);
	text(st, 6, h->release);
	text(st, 7, h->machine);
	i64(st, 8, h->start_realtime_ns);
	i64(st, 9, h->start_mono_ns);
	i64(st, 10, in->span_ns);
	i64(st, 11, in->samples);
	i64(st, 12, in->selected);
	text(st, 13, in->mode);
	text(st, 14, in->filters);
	i64(st, 15, in->slice_ns);
	if (in->sym->ksyms && in->sym->ksyms->source)
		text(st, 16, in->sym->ksyms->source);
	i64(st, 17, in->have_stats);
	if (in->have_stats) {
		i64(st, 18, in->stats->samples_taken);
		i64(st, 19, in->stats->samples_written);
		i64(st, 20, stats_dropped(in->stats));
	}
	rc = step(d, st);
	sqlite3_finalize(st);
	return rc;
}

/*
 * "CREATE TABLE name (FIELD INTEGER, ...)" with the table's fields, or
 * "INSERT INTO name VALUES (?, ...)" with a parameter for each; NULL when
 * out of memory (free with sqlite3_free()).
 */
static char *stat_sql(const char *name, const struct stat_table *t,
		      bool create)
{
	sqlite3_str *q = sqlite3_str_new(NULL);

	sqlite3_str_appendf(q, create ? "CREATE TABLE %s (" :
			    "INSERT INTO %s VALUES (", name);
	for (size_t i = 0; i < t->n; i++)
		sqlite3_str_appendf(q, create ? "%s%s INTEGER" : "%s?",
				    i ? ", " : "", t->v[i].name);
	sqlite3_str_appendall(q, ")");
	return sqlite3_str_finish(q);
}

/*
 * A table of statistics, a column per field of t, and a row for each of
 * the n structs at rows, stride bytes apart.
 */
static int write_stat_table(struct db *d, const char *name,
			    const struct stat_table *t, const void *rows,
			    size_t stride, size_t n)
{
	char *create = stat_sql(name, t, true), *insert = stat_sql(name, t,
								   false);
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (!create || !insert) {
		nomem(d);
		goto out;
	}
	if (sqlite3_exec(d->db, create, NULL, NULL, NULL) != SQLITE_OK) {
		fail(d, "create");
		goto out;
	}
	if (prepare(d, insert, &st))
		goto out;
	for (size_t r = 0; r < n; r++) {
		const void *row = (const char *)rows + r * stride;

		for (size_t i = 0; i < t->n; i++)
			sqlite3_bind_int64(st, (int)i + 1,
					   stat_i64(row, &t->v[i]));
		if (step(d, st))
			goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	sqlite3_free(create);
	sqlite3_free(insert);
	return rc;
}

/* The STATS record (one row, or none) and the CPU_STATS records. */
static int write_stats(struct db *d, const struct sqlite_in *in)
{
	if (write_stat_table(d, "stats", &session_stat_fields, in->stats,
			     sizeof(*in->stats), in->have_stats ? 1 : 0))
		return -1;
	return write_stat_table(d, "cpu_stats", &cpu_stat_fields, in->cpus,
				sizeof(*in->cpus), in->ncpus);
}

static int write_appids(struct db *d, const struct sqlite_in *in)
{
	static const char *const origins[] = {
		"running", "fork", "exec", "tick",
	};
	sqlite3_stmt *st;

	if (prepare(d, "INSERT INTO appids VALUES (?,?,?,?,?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < in->appids->n; i++) {
		const struct appid_info *a = &in->appids->v[i];

		i64(st, 1, a->appid);
		text(st, 2, a->name);
		i64(st, 3, a->instance);
		i64(st, 4, a->pid);
		if (a->parent_appid != UINT32_MAX)
			i64(st, 5, a->parent_appid);
		text(st, 6, a->origin < 4 ? origins[a->origin] : "other");
		i64(st, 7, !!(a->flags & SLEEPY_APPID_F_KTHREAD));
		i64(st, 8, !!(a->flags & SLEEPY_APPID_F_IDLE));
		i64(st, 9, a->time_ns);
		text(st, 10, a->path);
		if (step(d, st)) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

static int write_mappings(struct db *d, const struct sqlite_in *in)
{
	sqlite3_stmt *st;

	if (prepare(d, "INSERT INTO mappings VALUES (?,?,?,?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < in->maps->n; i++) {
		const struct map *m = &in->maps->v[i];
		char bid[2 * SLEEPY_BUILD_ID_MAX + 1];

		for (size_t k = 0; k < m->build_id_len; k++)
			snprintf(bid + 2 * k, 3, "%02x", m->build_id[k]);
		bid[2 * m->build_id_len] = '\0';
		i64(st, 1, i + 1);
		i64(st, 2, m->appid);
		i64(st, 3, m->pid);
		i64(st, 4, m->start);
		i64(st, 5, m->end - m->start);
		i64(st, 6, m->pgoff);
		i64(st, 7, m->time_ns);
		text(st, 8, bid);
		text(st, 9, strtab_get(in->names, m->path));
		if (step(d, st)) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	return 0;
}

/* A row of samples: its count key (ip: its stack's id), its stack's IP. */
struct db_row {
	uint64_t eip;
	struct count_entry e;
};

/* Rows by (appid, eip, then the rest): they then append in order. */
static int cmp_row(const void *pa, const void *pb)
{
	const struct db_row *a = pa, *b = pb;

	if (CE_APPID(&a->e) != CE_APPID(&b->e))
		return CE_APPID(&a->e) < CE_APPID(&b->e) ? -1 : 1;
	if ((int64_t)a->eip != (int64_t)b->eip)	/* SQLite's order */
		return (int64_t)a->eip < (int64_t)b->eip ? -1 : 1;
	if (a->e.a != b->e.a)
		return a->e.a < b->e.a ? -1 : 1;
	if (a->e.b != b->e.b)
		return a->e.b < b->e.b ? -1 : 1;
	return a->e.ip < b->e.ip ? -1 : a->e.ip > b->e.ip;
}

/* The rows, sorted, with used[id] set for each stack they hold. */
static struct db_row *sorted_rows(const struct sqlite_in *in, bool *used)
{
	const size_t n = in->counts->used;
	struct db_row *v = malloc((n ? n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i <= in->counts->mask; i++) {
		const struct count_entry *e = &in->counts->slots[i];

		if (!e->count)
			continue;
		v[k].e = *e;
		v[k++].eip = stackids_get(in->stacks, e->ip)->ip;
		used[e->ip] = true;
	}
	qsort(v, n, sizeof(*v), cmp_row);
	return v;
}

/* The symbols row of (appid, eip). */
static int write_symbol(struct db *d, const struct sqlite_in *in,
			sqlite3_stmt *sy, uint32_t appid, uint64_t eip)
{
	static const char *const kinds[] = { "symbol", "bracket",
		"unresolved" };
	struct symres r;

	if (symbolize(in->sym, appid, eip, &r))
		return nomem(d);
	i64(sy, 1, appid);
	i64(sy, 2, eip);
	text(sy, 3, strtab_get(in->names, r.dso));
	text(sy, 4, strtab_get(in->names, r.sym));
	text(sy, 5, kinds[r.kind]);
	text(sy, 6, r.kind == KIND_UNRESOLVED ? reason_name(r.reason) : NULL);
	i64(sy, 7, r.offset);
	text(sy, 8, r.line ? strtab_get(in->names, r.line) : "??");
	return step(d, sy);
}

/* A sample row's kernel context and system call (NULL outside one). */
static void bind_context(sqlite3_stmt *st, int i, const struct count_entry *e)
{
	const enum sample_context c = sample_context(CE_MODE(e), CE_KCTX(e));
	char buf[SYSCALL_LABEL_MAX];

	text(st, i, context_name(c));
	if (c == CTX_SYSCALL)
		text(st, i + 1, syscall_label(CE_KCTX(e) - 1u, buf));
}

/* The samples, and the symbol of each (appid, eip) once. */
static int write_samples(struct db *d, const struct sqlite_in *in, bool *used)
{
	struct db_row *v = sorted_rows(in, used);
	sqlite3_stmt *st = NULL, *sy = NULL;
	int rc = -1;

	if (!v)
		return nomem(d);
	if (prepare(d, "INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
		    &st) ||
	    prepare(d, "INSERT INTO symbols VALUES (?,?,?,?,?,?,?,?)", &sy))
		goto out;
	for (size_t i = 0; i < in->counts->used; i++) {
		const struct count_entry *e = &v[i].e;
		const uint32_t appid = CE_APPID(e);

		i64(st, 1, appid);
		i64(st, 2, CE_PID(e));
		i64(st, 3, CE_TID(e));
		i64(st, 4, CE_CPU(e));
		text(st, 5, mode_label(CE_MODE(e)));
		i64(st, 6, v[i].eip);
		i64(st, 7, CE_SLICE(e));
		i64(st, 8, e->count);
		i64(st, 9, e->ip);
		if (CE_LSTACK(e))
			i64(st, 10, CE_LSTACK(e));
		bind_context(st, 11, e);
		if (step(d, st))
			goto out;
		if ((i == 0 || CE_APPID(&v[i - 1].e) != appid ||
		     v[i - 1].eip != v[i].eip) &&
		    write_symbol(d, in, sy, appid, v[i].eip))
			goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(sy);
	sqlite3_finalize(st);
	free(v);
	return rc;
}

/* The frames of stack id, innermost first. */
static int write_frames(struct db *d, const struct sqlite_in *in,
			sqlite3_stmt *st, uint64_t id)
{
	static const char *const kinds[] = { "user", "kernel", "unknown" };
	const struct count_entry *e = stackids_get(in->stacks, id);
	uint64_t a[STACK_MAX_FRAMES];
	int n = stack_addrs(in->src, e, a);
	struct symres r = { 0 };

	if (n < 0)
		return nomem(d);
	for (int i = 0; i < n; i++) {
		if (a[i] && symbolize(in->sym, CE_APPID(e), a[i], &r))
			return nomem(d);
		i64(st, 1, id);
		i64(st, 2, (uint64_t)i);
		if (a[i])
			i64(st, 3, a[i]);
		else
			sqlite3_bind_null(st, 3);
		text(st, 4, kinds[!a[i] ? 2 : a[i] >= KERNEL_IP_MIN]);
		text(st, 5, a[i] ? strtab_get(in->names, r.dso) : NULL);
		text(st, 6, a[i] ? strtab_get(in->names, r.sym) : "[unknown]");
		if (step(d, st))
			return -1;
	}
	return 0;
}

/* The stacks the samples hold. */
static int write_stacks(struct db *d, const struct sqlite_in *in,
			const bool *used)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (prepare(d, "INSERT INTO stacks VALUES (?,?,?,?,?,?)", &st))
		return -1;
	for (size_t id = 0; id < in->stacks->n; id++)
		if (used[id] && write_frames(d, in, st, id))
			goto out;
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

/* The samples and their stacks. */
static int write_rows(struct db *d, const struct sqlite_in *in)
{
	bool *used = calloc(in->stacks->n + 1, sizeof(*used));
	int rc;

	if (!used)
		return nomem(d);
	rc = write_samples(d, in, used) || write_stacks(d, in, used) ? -1 : 0;
	free(used);
	return rc;
}

/* ------------------------------------------------------------ lstacks */

/* The pids whose names files the database holds. */
struct pid_set {
	uint32_t *v;
	size_t n, cap;
};

static int add_pid(struct pid_set *p, uint32_t pid)
{
	void *v;

	if (p->n && p->v[p->n - 1] == pid)
		return 0;
	v = array_room(p->v, &p->cap, p->n, sizeof(*p->v), 64);
	if (!v)
		return -1;
	p->v = v;
	p->v[p->n++] = pid;
	return 0;
}

static int cmp_pid(const void *pa, const void *pb)
{
	const uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

/* The OFFCPU rows of the appids the filters keep; their stacks and pids
 * marked. */
static int write_offcpu(struct db *d, const struct sqlite_in *in, bool *used,
			struct pid_set *pids)
{
	static const char *const states[] = { "unknown", "sleep", "disk",
		"other" };
	const struct lstacks *l = in->lstacks;
	sqlite3_stmt *st;
	int rc = 0;

	if (prepare(d, "INSERT INTO offcpu VALUES (?,?,?,?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 1; i < l->noff && !rc; i++) {
		const struct lstack_off *o = &l->off[i];
		const struct count_entry e = { .a = o->a, .b = o->b,
					       .c = o->c };

		if (!filters_appid_wanted(in->o, in->appids, CE_APPID(&e)))
			continue;
		used[CE_LSTACK(&e)] = true;
		i64(st, 1, CE_APPID(&e));
		i64(st, 2, CE_PID(&e));
		i64(st, 3, CE_TID(&e));
		i64(st, 4, CE_CPU(&e));
		text(st, 5, states[CE_STATE(&e) < 4 ? CE_STATE(&e) : 0]);
		i64(st, 6, CE_SLICE(&e));
		i64(st, 7, CE_LSTACK(&e));
		i64(st, 8, o->records);
		i64(st, 9, o->ns);
		rc = step(d, st) || add_pid(pids, CE_PID(&e)) ? -1 : 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The logical stacks the rows have, and their frames. */
static int write_lstacks(struct db *d, const struct sqlite_in *in,
			 const bool *used)
{
	sqlite3_stmt *ls = NULL, *fr = NULL;
	int rc = -1;

	if (prepare(d, "INSERT INTO lstacks VALUES (?,?,?)", &ls) ||
	    prepare(d, "INSERT INTO lstack_frames VALUES (?,?,?,?)", &fr))
		goto out;
	for (uint32_t key = 1; key < lstacks_n(in->lstacks); key++) {
		unsigned int nr;
		uint8_t flags;
		const uint64_t *f = lstacks_get(in->lstacks, key, &nr, &flags);

		if (!used[key])
			continue;
		i64(ls, 1, key);
		i64(ls, 2, nr);
		i64(ls, 3, flags);
		if (step(d, ls))
			goto out;
		for (unsigned int i = 0; i < nr; i++) {
			i64(fr, 1, key);
			i64(fr, 2, i);
			i64(fr, 3, f[2 * i]);
			i64(fr, 4, f[2 * i + 1]);
			if (step(d, fr))
				goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(fr);
	sqlite3_finalize(ls);
	return rc;
}

/* The names files of the pids (sorted, once each). */
static int write_names(struct db *d, const struct sqlite_in *in,
		       const struct pid_set *pids)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (prepare(d, "INSERT INTO lstack_names VALUES (?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < pids->n && !rc; i++) {
		const struct lstack_names_file *f;

		if (i && pids->v[i] == pids->v[i - 1])
			continue;
		f = lstack_names_get(in->lnames, pids->v[i], in->names);
		if (!f) {
			rc = nomem(d);
			break;
		}
		for (size_t k = 0; k < f->n && !rc; k++) {
			i64(st, 1, pids->v[i]);
			i64(st, 2, f->v[k].id);
			text(st, 3, strtab_get(in->names, f->v[k].name));
			rc = step(d, st);
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* The OFFCPU records, the logical stacks and the names the rows need. */
static int write_lstack_rows(struct db *d, const struct sqlite_in *in)
{
	bool *used = calloc(lstacks_n(in->lstacks) + 1, sizeof(*used));
	struct pid_set pids = { 0 };
	int rc = -1;

	if (!used)
		return nomem(d);
	for (size_t i = 0; i <= in->counts->mask; i++) {
		const struct count_entry *e = &in->counts->slots[i];

		if (!e->count || !CE_LSTACK(e))
			continue;
		used[CE_LSTACK(e)] = true;
		if (add_pid(&pids, CE_PID(e))) {
			nomem(d);
			goto out;
		}
	}
	if (write_offcpu(d, in, used, &pids))
		goto out;
	qsort(pids.v, pids.n, sizeof(*pids.v), cmp_pid);
	rc = write_lstacks(d, in, used) || write_names(d, in, &pids) ? -1 : 0;
out:
	free(pids.v);
	free(used);
	return rc;
}

/* ------------------------------------------------------------ latency */

/* The buckets of the LATENCY records of the appids the filters keep. */
static int write_latency(struct db *d, const struct sqlite_in *in)
{
	const struct latency *l = in->lat;
	char buf[SYSCALL_LABEL_MAX];
	sqlite3_stmt *st;
	int rc = 0;

	if (prepare(d, "INSERT INTO latency VALUES (?,?,?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < l->nhists && !rc; i++) {
		const struct lat_record *h = &l->hists[i];
		const struct appid_info *a = appids_find(in->appids, h->appid);

		if (!filters_appid_wanted(in->o, in->appids, h->appid))
			continue;
		for (unsigned int b = 0; b < LAT_BUCKETS && !rc; b++) {
			if (!h->h.counts[b])
				continue;
			if (a)
				text(st, 1, a->name);
			i64(st, 2, h->appid);
			text(st, 3, syscall_label(h->nr, buf));
			i64(st, 4, h->nr);
			i64(st, 5, h->segment);
			i64(st, 6, lat_bucket_lo(b));
			i64(st, 7, lat_bucket_hi(b));
			i64(st, 8, h->h.counts[b]);
			rc = step(d, st);
		}
	}
	sqlite3_finalize(st);
	return rc;
}

static int write_segments(struct db *d, const struct sqlite_in *in)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (prepare(d, "INSERT INTO lat_segments VALUES (?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < in->lat->nsegs && !rc; i++) {
		const struct sleepy_lat_segment *g = &in->lat->segs[i];

		i64(st, 1, g->segment);
		i64(st, 2, g->start_ns);
		i64(st, 3, g->end_ns);
		i64(st, 4, g->calls);
		i64(st, 5, g->lost);
		i64(st, 6, g->histograms);
		rc = step(d, st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The SYSCALL records of the appids the filters keep. */
static int write_syscalls(struct db *d, const struct sqlite_in *in)
{
	char buf[SYSCALL_LABEL_MAX];
	sqlite3_stmt *st;
	int rc = 0;

	if (prepare(d, "INSERT INTO syscalls VALUES (?,?,?,?,?,?,?,?)", &st))
		return -1;
	for (size_t i = 0; i < in->lat->ncalls && !rc; i++) {
		const struct sleepy_syscall *c = &in->lat->calls[i];

		if (!filters_appid_wanted(in->o, in->appids, c->appid))
			continue;
		i64(st, 1, c->appid);
		i64(st, 2, c->pid);
		i64(st, 3, c->tid);
		i64(st, 4, c->nr);
		text(st, 5, syscall_label(c->nr, buf));
		i64(st, 6, c->start_ns);
		i64(st, 7, c->latency_ns);
		i64(st, 8, c->flags);
		rc = step(d, st);
	}
	sqlite3_finalize(st);
	return rc;
}

int sqlite_write(const char *path, const struct sqlite_in *in, char *err,
		 size_t errsz)
{
	struct db d = { NULL, err, errsz, path };
	char *msg = NULL;
	int rc = -1;

	if (unlink(path) && errno != ENOENT) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (sqlite3_open_v2(path, &d.db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		fail(&d, "open");
		goto out;
	}
	if (sqlite3_exec(d.db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", path, msg ? msg : "schema");
		goto out;
	}
	if (write_session(&d, in) || write_stats(&d, in) ||
	    write_appids(&d, in) ||
	    write_mappings(&d, in) || write_rows(&d, in) ||
	    write_lstack_rows(&d, in) || write_latency(&d, in) ||
	    write_segments(&d, in) || write_syscalls(&d, in))
		goto out;
	if (sqlite3_exec(d.db, indexes, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", path, msg ? msg : "indexes");
		goto out;
	}
	rc = 0;
out:
	sqlite3_free(msg);
	if (d.db && sqlite3_close(d.db) != SQLITE_OK && rc == 0) {
		snprintf(err, errsz, "%s: close failed", path);
		rc = -1;
	}
	return rc;
}
