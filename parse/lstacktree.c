// SPDX-License-Identifier: GPL-2.0
/* lstacktree: the logical stacks' activity tree; see lstacktree.h. */
#include "lstacktree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters.h"

/* A stack's frames at most: the application, the logical frames and
 * "[truncated]", then a machine stack's past its application. */
#define LSTACK_TREE_FRAMES	(SLEEPY_LSTACK_SAMPLE_FRAMES + 1 + \
				 STACK_MAX_FRAMES)

enum lstack_class lstack_class(const struct lstacks *l, uint32_t key)
{
	unsigned int nr;
	uint8_t flags;

	if (!key)
		return LSTACK_NONE;
	lstacks_get(l, key, &nr, &flags);
	return flags & SLEEPY_LSTACK_F_TORN ? LSTACK_TORN :
	       flags & SLEEPY_LSTACK_F_FAULT ? LSTACK_FAULT : LSTACK_IN;
}

int lstack_frame_name(struct lstack_names *names, struct strtab *strs,
		      uint32_t pid, uint64_t id, uint64_t arg, bool args,
		      char *buf, size_t size)
{
	const uint32_t name = lstack_name(names, pid, id, strs);
	int n;

	if (name == STRTAB_NOMEM)
		return -1;
	if (name)
		n = snprintf(buf, size, "%s", strtab_get(strs, name));
	else
		n = snprintf(buf, size, "%" PRIu64, id);
	if (args && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "(%" PRIu64 ")", arg);
	return 0;
}

/* The logical frames of stack key of pid, and "[truncated]" above them
 * if it is, into out; how many, or -1 when out of memory. */
static int logical_frames(const struct lstack_tree_in *in, uint32_t pid,
			  uint32_t key, struct tree_frame *out)
{
	char buf[LSTACK_NAME_MAX + 32];
	struct strtab *strs = in->src->names;
	unsigned int nr;
	uint8_t flags;
	const uint64_t *fr = lstacks_get(in->l, key, &nr, &flags);
	int k = 0;

	for (unsigned int i = 0; i < nr; i++) {
		if (lstack_frame_name(in->names, strs, pid, fr[2 * i],
				      fr[2 * i + 1], in->o->lstack_args, buf,
				      sizeof(buf)))
			return -1;
		out[k] = (struct tree_frame){ .name = strtab_intern(strs, buf),
					      .kind = FRAME_LOGICAL };
		if (out[k++].name == STRTAB_NOMEM)
			return -1;
	}
	if (flags & SLEEPY_LSTACK_F_TRUNCATED) {
		out[k] = (struct tree_frame){
			.name = strtab_intern(strs, "[truncated]"),
			.kind = FRAME_LOGICAL };
		if (out[k++].name == STRTAB_NOMEM)
			return -1;
	}
	return k;
}

/*
 * The stack of count key (ip, a, chain) with the logical stack of key,
 * root first, into f (LSTACK_TREE_FRAMES); machine: with the machine
 * stack of (ip, chain). How many, or -1 when out of memory.
 */
static int entry_frames(const struct lstack_tree_in *in, uint64_t ip,
			uint64_t a, uint32_t chain, uint32_t key, bool machine,
			struct tree_frame *f)
{
	struct tree_frame m[STACK_MAX_FRAMES];
	const struct count_entry e = { .ip = ip, .a = (uint32_t)a,
				       .b = chain };
	int n, k;

	if (stack_app_frame(in->src, (uint32_t)a, &f[0]))
		return -1;
	n = logical_frames(in, (uint32_t)(a >> 32), key, f + 1);
	if (n < 0 || !machine)
		return n < 0 ? -1 : n + 1;
	k = stack_frames(in->src, &e, m);
	if (k < 1)
		return -1;
	memcpy(f + 1 + n, m + 1, (size_t)(k - 1) * sizeof(*m));
	return n + k;
}

/* The class of a stack of the appid and key, NR_LSTACK_CLASSES for an
 * appid the filters leave out; *trunc: whether it was truncated. */
static enum lstack_class classify(const struct lstack_tree_in *in,
				  uint32_t appid, uint32_t key, bool *trunc)
{
	unsigned int nr;
	uint8_t flags = 0;

	if (!filters_appid_wanted(in->o, in->src->appids, appid))
		return NR_LSTACK_CLASSES;
	if (key)
		lstacks_get(in->l, key, &nr, &flags);
	*trunc = flags & SLEEPY_LSTACK_F_TRUNCATED;
	return lstack_class(in->l, key);
}

static int add_samples(const struct lstack_tree_in *in, struct calltree *t,
		       const struct count_entry *e, struct lstack_tally *tally)
{
	struct tree_frame f[LSTACK_TREE_FRAMES];
	const uint32_t key = (uint32_t)e->c;
	bool trunc;
	enum lstack_class c = classify(in, CE_APPID(e), key, &trunc);
	int n;

	if (c == NR_LSTACK_CLASSES)
		return 0;
	tally->samples[c] += e->count;
	if (c != LSTACK_IN)
		return 0;
	tally->truncated += trunc ? e->count : 0;
	n = entry_frames(in, e->ip, e->a, (uint32_t)e->b, key,
			 in->o->lstack_with_callchain, f);
	return n < 0 ? -1 : calltree_add(t, f, (size_t)n, e->count);
}

static int add_off(const struct lstack_tree_in *in, struct calltree *t,
		   const struct lstack_off *o, struct lstack_tally *tally)
{
	struct tree_frame f[LSTACK_TREE_FRAMES];
	const uint32_t key = (uint32_t)(o->c >> 32);
	bool trunc;
	enum lstack_class c = classify(in, (uint32_t)o->a, key, &trunc);
	int n;

	if (c == NR_LSTACK_CLASSES)
		return 0;
	tally->records[c] += o->records;
	tally->ns[c] += o->ns;
	if (c != LSTACK_IN)
		return 0;
	tally->truncated_records += trunc ? o->records : 0;
	n = entry_frames(in, 0, o->a, 0, key, false, f);
	return n < 0 ? -1 : calltree_add_off(t, f, (size_t)n, 0, o->ns);
}

int lstack_tree_build(const struct lstack_tree_in *in, struct calltree *t,
		      struct lstack_tally *tally)
{
	struct count_entry *e;
	int rc = -1;

	memset(tally, 0, sizeof(*tally));
	if (calltree_init(t))
		return -1;
	e = counts_entries(&in->l->on);
	if (!e)
		return -1;
	for (size_t i = 0; i < in->l->on.used; i++)
		if (add_samples(in, t, &e[i], tally))
			goto out;
	for (size_t i = 1; i < in->l->noff; i++)
		if (add_off(in, t, &in->l->off[i], tally))
			goto out;
	rc = 0;
out:
	free(e);
	return rc;
}
