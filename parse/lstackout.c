// SPDX-License-Identifier: GPL-2.0
/* lstackout: the activity tree as text and JSON; see lstackout.h. */
#include "lstackout.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fmt.h"
#include "json.h"
#include "treeout.h"

#define HEAD_W	14	/* the summary's label column (text.c's) */

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The names files: of how many of the processes looked up. */
static size_t names_found(const struct lstack_names *ln)
{
	size_t found = 0;

	for (size_t i = 0; i < ln->n; i++)
		found += ln->v[i].found;
	return found;
}

void lstack_print_text(const struct lstack_out *o)
{
	const struct lstack_tally *y = o->tally;
	FILE *out = o->run->out;

	if (!(o->run->s->hdr->flags & SAMPLE_F_LSTACK))
		fprintf(out, "%-*snone: the session recorded no logical stacks "
			"(sample_start --lstack)\n", HEAD_W, "lstacks");
	fprintf(out, "%-*s%" PRIu64 " samples, %" PRIu64 " off-CPU records "
		"(%.3fs)\n", HEAD_W, "lstack tree", y->samples[LSTACK_IN],
		y->records[LSTACK_IN], seconds(y->ns[LSTACK_IN]));
	fprintf(out, "%-*s%" PRIu64 " samples, %" PRIu64 " off-CPU records: "
		"under [truncated]\n", HEAD_W, "truncated", y->truncated,
		y->truncated_records);
	fprintf(out, "%-*s%" PRIu64 " samples: threads without a logical "
		"stack\n", HEAD_W, "no lstack", y->samples[LSTACK_NONE]);
	for (enum lstack_class c = LSTACK_TORN; c <= LSTACK_FAULT; c++)
		fprintf(out, "%-*s%" PRIu64 " samples, %" PRIu64 " off-CPU "
			"records (%.3fs): left out\n", HEAD_W,
			c == LSTACK_TORN ? "torn" : "unreadable", y->samples[c],
			y->records[c], seconds(y->ns[c]));
	fprintf(out, "%-*s%zu of %zu processes have a names file\n\n", HEAD_W,
		"frame names", names_found(o->lnames), o->lnames->n);
	tree_print_text(out, o->t, o->names, &(struct tree_text){
		o->title, o->min_percent, false, true });
}

/* ------------------------------------------------------------ JSON */

static const char *const kind_names[NR_FRAME_KINDS] = {
	[FRAME_APP] = "app", [FRAME_USER] = "user",
	[FRAME_KERNEL] = "kernel", [FRAME_LOGICAL] = "logical",
};

struct json_walk {
	struct json *j;
	const struct lstack_out *o;
	uint32_t *ids;		/* node -> its place in preorder */
	uint32_t next;
};

static void json_node(struct json_walk *w, uint32_t n, int64_t parent,
		      unsigned int depth)
{
	const struct calltree *t = w->o->t;
	const struct tnode *node = &t->v[n];
	struct json *j = w->j;

	w->ids[n] = w->next;
	json_object(j, NULL, JSON_INLINE);
	json_u64(j, "id", w->next++);
	if (parent < 0)
		json_null(j, "parent");
	else
		json_u64(j, "parent", w->ids[parent]);
	json_u64(j, "depth", depth);
	json_str(j, "name", n ? strtab_get(w->o->names, node->f.name) : "all");
	json_str(j, "kind", n ? kind_names[node->f.kind] : "root");
	json_str(j, "dso", node->f.dso ? strtab_get(w->o->names, node->f.dso) :
		 NULL);
	json_u64(j, "samples", node->total);
	json_u64(j, "self", node->self);
	json_fixed(j, "percent", fmt_percent(node->total, t->v[0].total), 4);
	json_fixed(j, "self_percent", fmt_percent(node->self, t->v[0].total),
		   4);
	json_u64(j, "offcpu_ns", node->off_total);
	json_u64(j, "offcpu_self_ns", node->off_self);
	json_fixed(j, "offcpu_percent", fmt_percent(node->off_total,
						    t->v[0].off_total), 4);
	json_close(j);
}

static int json_visit(void *arg, uint32_t n, uint32_t parent,
		      unsigned int depth)
{
	json_node(arg, n, parent, depth);
	return 0;
}

/* The tallies of one class: samples, records and time. */
static void json_class(struct json *j, const char *key,
		       const struct lstack_tally *y, enum lstack_class c)
{
	json_object(j, key, JSON_INLINE);
	json_u64(j, "samples", y->samples[c]);
	json_u64(j, "offcpu_records", y->records[c]);
	json_u64(j, "offcpu_ns", y->ns[c]);
	json_close(j);
}

static void json_tallies(struct json *j, const struct lstack_out *o)
{
	const struct lstack_tally *y = o->tally;
	const struct options *opt = o->run->o;

	json_str(j, "tree", "lstack");
	json_str(j, "by", opt->fields == FB(F_APP) ? "app" : "appid");
	json_bool(j, "lstack_args", opt->lstack_args);
	json_bool(j, "lstack_with_callchain", opt->lstack_with_callchain);
	json_fixed(j, "min_percent", o->min_percent, 4);
	json_class(j, "in_tree", y, LSTACK_IN);
	json_object(j, "truncated", JSON_INLINE);
	json_u64(j, "samples", y->truncated);
	json_u64(j, "offcpu_records", y->truncated_records);
	json_close(j);
	json_class(j, "no_lstack", y, LSTACK_NONE);
	json_class(j, "torn", y, LSTACK_TORN);
	json_class(j, "unreadable", y, LSTACK_FAULT);
	json_object(j, "names_files", JSON_INLINE);
	json_u64(j, "processes", o->lnames->n);
	json_u64(j, "found", names_found(o->lnames));
	json_close(j);
}

int lstack_print_json(const struct lstack_out *o)
{
	struct json j;
	struct json_walk w = { &j, o, calloc(o->t->n, sizeof(uint32_t)), 0 };
	int rc;

	if (!w.ids)
		return -1;
	json_begin(&j, o->run->out);
	json_run_head(&j, o->run);
	json_tallies(&j, o);
	json_array(&j, "nodes", JSON_BLOCK);
	json_node(&w, 0, -1, 0);
	rc = tree_walk(o->t, o->names, o->min_percent, json_visit, &w);
	json_end(&j);
	free(w.ids);
	return rc;
}
