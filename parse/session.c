// SPDX-License-Identifier: GPL-2.0
/* session: the pass over a session file; see session.h. */
#include "session.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "array.h"
#include "filters.h"
#include "peak.h"
#include "syscalls.h"

#define PROG "parse"

/* The state of a pass, which the record callbacks share. */
struct pass {
	const struct options *o;
	const struct session_out *out;
	struct session *s;
	struct counts_pipe pipe;
	uint64_t am, ipm, bm, cm;	/* the count key bits kept */
	bool all;		/* --mode all */
	unsigned int want;	/* else the mode counted */
	/* The paper's reports need appid and ip only: the fast path. */
	bool fast;
};

typedef int (*record_fn)(struct pass *p, const struct sleepy_record *rec);

/*
 * The call-chain views: the sample x by (ip, appid, its chain's id, into
 * *chain). For the database, *key becomes the stack's id. Returns 0 or -1.
 */
static int add_stack(struct pass *p, const struct sleepy_sample *x,
		     uint64_t *key, uint32_t *chain)
{
	uint32_t id = 0;
	int64_t sid;

	if (x->flags & SLEEPY_SAMPLE_F_CHAIN) {
		id = chains_find(p->out->chains, x->cpu, x->chain);
		p->s->chains_lost += !id;
	}
	*chain = id;
	if (counts_add(p->out->stacks, x->ip, x->appid, id, 0, 1))
		return -1;
	if (!p->out->stack_ids)
		return 0;
	sid = stackids_intern(p->out->stack_ids, x->ip, x->appid, id);
	*key = (uint64_t)sid;
	return sid < 0 ? -1 : 0;
}

/*
 * The activity tree and the database: the sample x's logical stack, its
 * key (0: none) into *lkey; for the tree, x counted by it, and by its
 * chain. Returns 0 or -1.
 */
static int add_lstack(struct pass *p, const struct sleepy_sample *x,
		      uint32_t chain, uint64_t *lkey)
{
	struct lstacks *l = p->out->lstacks;
	const int64_t key = x->lstack.frames ? lstacks_intern(l, &x->lstack) :
			    0;

	if (key < 0)
		return -1;
	*lkey = (uint64_t)key;
	return l->tree ? lstacks_count(l, x->ip, counts_a(x->appid, x->pid),
				       chain, (uint32_t)key) : 0;
}

/*
 * The hot path: a few loads and a hash update. Inlined in the reader loop
 * (see session_read()); without a filter that needs more than the sample's
 * appid and IP (the fast path), the sample is not even decoded.
 */
static inline __attribute__((always_inline)) int
on_sample(struct pass *p, const struct sleepy_record *rec)
{
	const struct options *o = p->o;
	struct session *s = p->s;
	const unsigned int mode = sleepy_sample_mode(rec);
	const uint64_t t = sleepy_sample_time(rec);
	struct sleepy_sample x;
	uint64_t key, lkey = 0;
	uint32_t chain = 0;

	s->samples++;
	s->by_mode[mode < NR_MODES ? mode : NR_MODES]++;
	if (t > s->last_time_ns)
		s->last_time_ns = t;
	if (!p->all && mode != p->want)
		return 0;
	s->selected++;
	if (p->fast)
		return counts_pipe_add(&p->pipe, sleepy_sample_ip(rec) & p->ipm,
				       sleepy_sample_appid(rec) & p->am, 0, 0);
	sleepy_get_sample(rec, &x);
	if (!session_sample_passes(o, p->out->windows, &x)) {
		s->selected--;
		return 0;
	}
	key = x.ip;
	if (p->out->stacks && add_stack(p, &x, &key, &chain))
		return -1;
	if (p->out->lstacks && add_lstack(p, &x, chain, &lkey))
		return -1;
	return counts_pipe_add(&p->pipe, key & p->ipm,
			       counts_a(x.appid, x.pid) & p->am,
			       counts_b(x.cpu, x.mode, kctx_key(&x),
					counts_slice(t, o->slice_ns)) & p->bm, (x.tid | lkey << 32) & p->cm);
}

/*
 * Whether an OFFCPU record passes the filters: --pid, --tid, --cpu (the
 * CPU it ran on again), and --from and --to, which keep the part of its
 * time off the CPU within them (into *ns; a record of no time: if it
 * blocked within them).
 */
static bool offcpu_wanted(const struct options *o,
			  const struct sleepy_offcpu *x, uint64_t *ns)
{
	const uint64_t end = x->time_ns + x->off_ns < x->time_ns ?
			     UINT64_MAX : x->time_ns + x->off_ns;
	const uint64_t from = x->time_ns > o->from_ns ? x->time_ns : o->from_ns;
	const uint64_t to = end < o->to_ns ? end : o->to_ns;

	if ((o->pid >= 0 && x->pid != o->pid) ||
	    (o->tid >= 0 && x->tid != o->tid) ||
	    (o->cpu >= 0 && x->cpu != o->cpu))
		return false;
	*ns = to > from ? to - from : 0;
	return x->off_ns ? *ns > 0 :
	       x->time_ns >= o->from_ns && x->time_ns < o->to_ns;
}

/* The activity tree and the database: the record by its count key. */
static int on_offcpu(struct pass *p, const struct sleepy_record *rec)
{
	struct lstacks *l = p->out->lstacks;
	struct sleepy_offcpu x;
	uint64_t ns;
	int64_t key;

	p->s->offcpu_records++;
	if (!l)
		return 0;
	sleepy_get_offcpu(rec, &x);
	if (!offcpu_wanted(p->o, &x, &ns))
		return 0;
	key = lstacks_intern(l, &x.lstack);
	if (key < 0)
		return -1;
	return lstacks_add_off(l, counts_a(x.appid, x.pid),
			       counts_b(x.cpu, x.state, 0, counts_slice(
					x.time_ns, p->o->slice_ns)),
			       x.tid | (uint64_t)key << 32, ns);
}

static int on_appid(struct pass *p, const struct sleepy_record *rec)
{
	struct sleepy_appid a;

	sleepy_get_appid(rec, &a);
	p->s->appid_records++;
	return appids_add(p->out->appids, &a);
}

static int on_mmap(struct pass *p, const struct sleepy_record *rec)
{
	struct sleepy_mmap mm;

	sleepy_get_mmap(rec, &mm);
	p->s->mmaps++;
	return maps_add(p->out->maps, &mm, p->out->names);
}

static int on_chain(struct pass *p, const struct sleepy_record *rec)
{
	struct sleepy_chain c;

	p->s->chain_records++;
	if (!p->out->chains)
		return 0;
	sleepy_get_chain(rec, &c);
	return chains_add(p->out->chains, &c);
}

static int on_stats(struct pass *p, const struct sleepy_record *rec)
{
	sleepy_get_stats(rec, p->s->hdr->version, &p->s->stats);
	p->s->have_stats = true;
	return 0;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Keep the record, and add it to the totals. */
static int on_cpu_stats(struct pass *p, const struct sleepy_record *rec)
{
	struct session *s = p->s;
	struct sleepy_cpu_stats *c, *t = &s->cpu_total;
	void *v = array_room(s->cpus, &s->cap_cpus, s->ncpus, sizeof(*c), 8);

	if (!v)
		return -1;
	s->cpus = v;
	c = &s->cpus[s->ncpus++];
	sleepy_get_cpu_stats(rec, c);
	t->buffers_hwm = (uint32_t)max_u64(t->buffers_hwm, c->buffers_hwm);
	t->samples_taken += c->samples_taken;
	t->dropped_no_buffer += c->dropped_no_buffer;
	t->dropped_no_appid += c->dropped_no_appid;
	t->skipped_not_user += c->skipped_not_user;
	t->irq_ns_total += c->irq_ns_total;
	t->irq_ns_max = max_u64(t->irq_ns_max, c->irq_ns_max);
	t->irq_calls += c->irq_calls;
	t->chains_defined += c->chains_defined;
	t->chains_truncated += c->chains_truncated;
	for (size_t i = 0; i < SLEEPY_USER_STOPS; i++)
		t->user_stops[i] += c->user_stops[i];
	t->lstack_samples += c->lstack_samples;
	t->lstack_retries += c->lstack_retries;
	t->lstack_torn += c->lstack_torn;
	t->lstack_faults += c->lstack_faults;
	t->lstack_truncated += c->lstack_truncated;
	t->offcpu_records += c->offcpu_records;
	t->offcpu_dropped += c->offcpu_dropped;
	t->unwind_frames += c->unwind_frames;
	t->unwind_fp_frames += c->unwind_fp_frames;
	for (size_t i = 0; i < 2; i++)
		t->unwind_fallbacks[i] += c->unwind_fallbacks[i];
	return 0;
}

/* A SYSCALL, LATENCY or LAT_SEGMENT record (version 5). */
static int on_latency(struct pass *p, const struct sleepy_record *rec)
{
	struct session *s = p->s;

	s->syscall_records += rec->type == SLEEPY_REC_SYSCALL;
	s->latency_records += rec->type == SLEEPY_REC_LATENCY;
	s->segment_records += rec->type == SLEEPY_REC_LAT_SEGMENT;
	return p->out->lat ? latency_add(p->out->lat, rec) : 0;
}

/* A later format's record. */
static int on_unknown(struct pass *p, const struct sleepy_record *rec)
{
	(void)rec;
	p->s->unknown++;
	return 0;
}

/* The callbacks, by record type; other types are unknown. */
static const record_fn on_record[] = {
	[0] = on_unknown,
	[SLEEPY_REC_SAMPLE] = on_sample,
	[SLEEPY_REC_APPID] = on_appid,
	[SLEEPY_REC_MMAP] = on_mmap,
	[SLEEPY_REC_STATS] = on_stats,
	[SLEEPY_REC_CPU_STATS] = on_cpu_stats,
	[SLEEPY_REC_CHAIN] = on_chain,
	[SLEEPY_REC_OFFCPU] = on_offcpu,
	[SLEEPY_REC_SYSCALL] = on_latency,
	[SLEEPY_REC_LATENCY] = on_latency,
	[SLEEPY_REC_LAT_SEGMENT] = on_latency,
};

#define NR_RECORD_FNS (sizeof(on_record) / sizeof(on_record[0]))

/* A type of a later version than the file's is unknown too. */
static record_fn on_record_fn(uint32_t version, uint16_t type)
{
	return type < NR_RECORD_FNS && sleepy_type_known(version, type) ?
		on_record[type] : on_unknown;
}

int session_read(struct sleepy_reader *r, const struct options *o,
		 const struct count_mask *m, const struct session_out *out,
		 struct session *s)
{
	struct pass p = {
		.o = o, .out = out, .s = s,
		.am = m->a, .ipm = m->ip, .bm = m->b, .cm = m->c,
		.all = o->mode == MODE_ALL,
		.want = o->mode == MODE_ALL ? 0 : (unsigned int)o->mode,
		.fast = o->pid < 0 && o->tid < 0 && o->cpu < 0 &&
			!o->have_from && !o->have_to && m->b == 0 &&
			m->c == 0 && (m->a & MASK_PID) == 0 && !out->stacks &&
			!out->lstacks && !out->windows,
	};
	struct sleepy_record rec;
	int rc;

	counts_pipe_init(&p.pipe, out->counts);
	while ((rc = sleepy_reader_next(r, &rec)) > 0) {
		if (s->have_stats)
			s->after_stats++;
		/* Nearly every record is a sample: its callback is called
		 * directly, to be inlined here. */
		if (rec.type == SLEEPY_REC_SAMPLE ? on_sample(&p, &rec) :
		    on_record_fn(s->hdr->version, rec.type)(&p, &rec))
			return -1;
	}
	if (counts_pipe_flush(&p.pipe))
		return -1;
	return rc < 0 ? -2 : 0;
}

void session_free(struct session *s)
{
	free(s->cpus);
	s->cpus = NULL;
	s->ncpus = s->cap_cpus = 0;
}

void session_warn(const char *file, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s: warning: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Version 2 on, a STATS record follows a CPU_STATS record per possible
 * CPU, whose figures add up to its own.
 */
static void cpu_stats_warnings(const char *file, const struct session *s)
{
	const struct sleepy_cpu_stats *t = &s->cpu_total;
	const struct sample_stats *st = &s->stats;
	const struct {
		const char *name;
		uint64_t cpus, stats;
	} v[] = {
		{ "samples_taken", t->samples_taken, st->samples_taken },
		{ "dropped_no_buffer", t->dropped_no_buffer,
		  st->dropped_no_buffer },
		{ "dropped_no_appid", t->dropped_no_appid,
		  st->dropped_no_appid },
		{ "skipped_not_user", t->skipped_not_user,
		  st->skipped_not_user },
		{ "irq_ns_total", t->irq_ns_total, st->irq_ns_total },
		{ "irq_calls", t->irq_calls, st->irq_calls },
		{ "irq_ns_max", t->irq_ns_max, st->irq_ns_max },
		{ "buffers_hwm", t->buffers_hwm, st->buffers_hwm },
		{ "chains_defined", t->chains_defined, st->chains_defined },
		{ "chains_truncated", t->chains_truncated,
		  st->chains_truncated },
		{ "lstack_samples", t->lstack_samples, st->lstack_samples },
		{ "lstack_retries", t->lstack_retries, st->lstack_retries },
		{ "lstack_torn", t->lstack_torn, st->lstack_torn },
		{ "lstack_faults", t->lstack_faults, st->lstack_faults },
		{ "lstack_truncated", t->lstack_truncated,
		  st->lstack_truncated },
		{ "offcpu_records", t->offcpu_records, st->offcpu_records },
		{ "offcpu_dropped", t->offcpu_dropped, st->offcpu_dropped },
		{ "unwind_frames", t->unwind_frames, st->unwind_frames },
		{ "unwind_fp_frames", t->unwind_fp_frames,
		  st->unwind_fp_frames },
		{ "unwind_fallback_no_table", t->unwind_fallbacks[0],
		  st->unwind_fallbacks[0] },
		{ "unwind_fallback_marked", t->unwind_fallbacks[1],
		  st->unwind_fallbacks[1] },
	};

	if (!s->have_stats || s->hdr->version < 2)
		return;
	if (!s->ncpus) {
		session_warn(file, "no CPU_STATS records before the STATS "
			     "record");
		return;
	}
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i].cpus != v[i].stats) {
			session_warn(file, "the CPU_STATS records do not add "
				     "up to the STATS record: %s %" PRIu64
				     " against %" PRIu64, v[i].name,
				     v[i].cpus, v[i].stats);
			return;
		}
}

void session_warnings(const char *file, const struct session *s,
		      const struct appid_table *appids)
{
	if (!s->have_stats)
		session_warn(file, "no STATS record: the session was not "
			     "stopped cleanly (or the file is incomplete)");
	else if (s->stats.samples_written != s->samples)
		session_warn(file, "the STATS record says %" PRIu64 " samples "
			     "were written, the file holds %" PRIu64,
			     (uint64_t)s->stats.samples_written, s->samples);
	if (s->after_stats)
		session_warn(file, "records after the STATS record: %" PRIu64,
			     s->after_stats);
	cpu_stats_warnings(file, s);
	if (appids->duplicates)
		session_warn(file, "%zu appids have more than one APPID record "
			     "(the last one is used)", appids->duplicates);
}

int session_next_wanted(struct sleepy_reader *r, const struct options *o,
			const struct appid_table *appids,
			struct peak_windows *windows, struct sleepy_sample *x)
{
	struct sleepy_record rec;
	int rc;

	while ((rc = sleepy_reader_next(r, &rec)) > 0) {
		if (rec.type != SLEEPY_REC_SAMPLE)
			continue;
		sleepy_get_sample(&rec, x);
		if ((o->mode == MODE_ALL || x->mode == o->mode) &&
		    session_sample_passes(o, windows, x) &&
		    filters_appid_wanted(o, appids, x->appid))
			return 1;
	}
	return rc < 0 ? -1 : 0;
}
