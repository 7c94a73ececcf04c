// SPDX-License-Identifier: GPL-2.0
/*
 * jsonout: the JSON writer (--format json): one object with the session,
 * its statistics (the STATS record's, null without one, and the CPU_STATS
 * records'), the filters, the kernel symbols' source, the totals, the
 * grouping, what stayed unresolved and the rows; every row has every key
 * of every field (null when not grouped; mode then holds the filter).
 */
#include <stdio.h>

#include "fmt.h"
#include "json.h"
#include "stats.h"
#include "writer.h"

static void json_session(struct json *j, const struct session *s)
{
	const struct sleepy_file_header *h = s->hdr;

	json_object(j, "session", JSON_INLINE);
	json_u64(j, "version", (uint32_t)h->version);
	json_u64(j, "hz", (uint32_t)h->hz);
	json_u64(j, "nr_cpus", (uint32_t)h->nr_cpus);
	json_u64(j, "flags", (uint32_t)h->flags);
	json_str(j, "release", h->release);
	json_str(j, "machine", h->machine);
	json_u64(j, "start_realtime_ns", h->start_realtime_ns);
	json_u64(j, "span_ns", s->last_time_ns);
	json_u64(j, "samples", s->samples);
	for (unsigned int m = 0; m < NR_MODES; m++)
		json_u64(j, sleepy_mode_name(m), s->by_mode[m]);
	json_bool(j, "stats", s->have_stats);
	json_close(j);
}

/* The struct at base as an object of the table's fields; NULL: null. */
static void json_stat_object(struct json *j, const char *key,
			     const void *base, const struct stat_table *t)
{
	if (!base) {
		json_null(j, key);
		return;
	}
	json_object(j, key, JSON_INLINE);
	for (size_t i = 0; i < t->n; i++) {
		const struct stat_field *f = &t->v[i];

		if (f->is_signed)
			json_i64(j, f->name, stat_i64(base, f));
		else
			json_u64(j, f->name, stat_u64(base, f));
	}
	json_close(j);
}

static void json_stats(struct json *j, const struct session *s)
{
	json_stat_object(j, "statistics", s->have_stats ? &s->stats : NULL,
			 &session_stat_fields);
	json_array(j, "cpu_stats", JSON_BLOCK);
	for (size_t i = 0; i < s->ncpus; i++)
		json_stat_object(j, NULL, &s->cpus[i], &cpu_stat_fields);
	json_close(j);
}

/* A number, or null when the filter is not given. */
static void json_opt_i64(struct json *j, const char *key, long long v,
			 bool given)
{
	if (given)
		json_i64(j, key, v);
	else
		json_null(j, key);
}

static void json_opt_seconds(struct json *j, const char *key, uint64_t ns,
			     bool given)
{
	if (given)
		json_fixed(j, key, (double)ns / 1e9, 9);
	else
		json_null(j, key);
}

static void json_filters(struct json *j, const struct options *o)
{
	char appid[600];

	if (o->appid)
		snprintf(appid, sizeof(appid), "%s#%ld", o->appid,
			 o->appid_instance);
	json_object(j, "filters", JSON_INLINE);
	json_str(j, "mode", options_mode(o));
	json_str(j, "app", o->app);
	json_str(j, "appid", o->appid ? appid : NULL);
	json_opt_i64(j, "pid", o->pid, o->pid >= 0);
	json_opt_i64(j, "tid", o->tid, o->tid >= 0);
	json_opt_i64(j, "cpu", o->cpu, o->cpu >= 0);
	json_opt_seconds(j, "from", o->from_ns, o->have_from);
	json_opt_seconds(j, "to", o->to_ns, o->have_to);
	if (o->peak)
		json_str(j, "peak", o->peak);
	json_close(j);
}

/* {} without symbols; else the unresolved samples, by reason. */
static void json_unresolved(struct json *j, const struct report *rep)
{
	uint64_t unres = 0;

	for (size_t i = 1; i < NR_REASONS; i++)
		unres += rep->unresolved[i];
	json_object(j, "unresolved", JSON_INLINE);
	if (report_symbolized(rep)) {
		json_u64(j, "samples", unres);
		json_object(j, "by_reason", JSON_INLINE);
		for (size_t i = 1; i < NR_REASONS; i++)
			json_u64(j, reason_name((unsigned int)i),
				 rep->unresolved[i]);
		json_close(j);
	}
	json_close(j);
}

static void json_row(struct json *j, const struct report *rep,
		     const struct row *r, const struct out_column *cols,
		     size_t ncols)
{
	static const char *const kinds[] = {
		[KIND_SYMBOL] = "symbol", [KIND_BRACKET] = "bracket",
		[KIND_UNRESOLVED] = "unresolved",
	};
	const bool sym = report_symbolized(rep);
	struct value v;

	json_object(j, NULL, JSON_INLINE);
	for (size_t c = 0; c < ncols; c++) {
		fields_value(&cols[c], rep, r, &v);
		if (v.type == VALUE_NUM)
			json_u64(j, cols[c].key, v.n);
		else
			json_str(j, cols[c].key,
				 v.type == VALUE_STR ? v.s : NULL);
	}
	json_str(j, "kind", sym ? kinds[r->kind] : NULL);
	json_str(j, "reason", sym && r->kind == KIND_UNRESOLVED ?
		 reason_name(r->reason) : NULL);
	json_u64(j, "samples", r->samples);
	json_fixed(j, "percent", fmt_percent(r->samples, rep->total), 4);
	if (rep->stacks) {
		json_u64(j, "children", r->children);
		json_fixed(j, "children_percent",
			   fmt_percent(r->children, rep->total), 4);
	}
	json_close(j);
}

void json_run_head(struct json *j, const struct run *run)
{
	json_str(j, "file", run->o->file);
	json_session(j, run->s);
	json_stats(j, run->s);
	json_filters(j, run->o);
	json_str(j, "kernel_symbols", run->ks->source);
}

static void json_report(const struct run *run, const struct report *rep,
			size_t index)
{
	struct out_column cols[MAX_OUT_COLUMNS];
	const size_t ncols = fields_columns(cols, rep);
	const size_t n = report_shown(rep);
	struct json j;

	(void)index;
	json_begin(&j, run->out);
	json_run_head(&j, run);
	json_u64(&j, "total", rep->total);
	json_array(&j, "by", JSON_INLINE);
	for (size_t i = 0; i < rep->nby; i++)
		json_str(&j, NULL, rep->by[i]->name);
	json_close(&j);
	json_u64(&j, "rows_total", rep->nrows);
	if (rep->top)
		json_u64(&j, "top", rep->top);
	else
		json_null(&j, "top");
	json_unresolved(&j, rep);
	json_array(&j, "rows", JSON_BLOCK);
	for (size_t i = 0; i < n; i++)
		json_row(&j, rep, &rep->rows[i], cols, ncols);
	json_end(&j);
}

const struct writer json_writer = { NULL, json_report };
