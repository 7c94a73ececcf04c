// SPDX-License-Identifier: GPL-2.0
/* calltree: stacks merged into a call tree; see calltree.h. */
#define _GNU_SOURCE		/* qsort_r */
#include "calltree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

static uint64_t node_hash(uint32_t parent, const struct tree_frame *f)
{
	uint64_t h = ((uint64_t)parent << 32 | f->name) * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)f->dso << 8 | f->kind) * 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 29;
}

static bool same_frame(const struct tree_frame *a, const struct tree_frame *b)
{
	return a->name == b->name && a->dso == b->dso && a->kind == b->kind;
}

static uint64_t tnode_hash(const void *table, uint32_t id)
{
	const struct calltree *t = table;

	return node_hash(t->v[id].parent, &t->v[id].f);
}

static int reindex(struct calltree *t, size_t nslots)
{
	return hindex_build(&t->index, nslots, t, 1, (uint32_t)t->n,
			    tnode_hash);
}

int calltree_init(struct calltree *t)
{
	memset(t, 0, sizeof(*t));
	t->v = calloc(256, sizeof(*t->v));
	if (!t->v || reindex(t, 512)) {
		calltree_free(t);
		return -1;
	}
	t->cap = 256;
	t->n = 1;		/* the root */
	return 0;
}

void calltree_free(struct calltree *t)
{
	free(t->v);
	hindex_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* The child of parent for frame f, made if new; 0 when out of memory. */
static uint32_t child(struct calltree *t, uint32_t parent,
		      const struct tree_frame *f)
{
	size_t j = node_hash(parent, f) & t->index.mask;
	struct tnode *p, *c;
	void *v;

	for (; t->index.slot[j]; j = hindex_next(&t->index, j)) {
		c = &t->v[t->index.slot[j]];
		if (c->parent == parent && same_frame(&c->f, f))
			return t->index.slot[j];
	}
	if (t->n >= UINT32_MAX || !hindex_room(&t->index, t->n + 1))
		return t->n < UINT32_MAX &&
		       !reindex(t, 2 * (t->index.mask + 1)) ?
		       child(t, parent, f) : 0;
	v = array_room(t->v, &t->cap, t->n, sizeof(*t->v), 256);
	if (!v)
		return 0;
	t->v = v;
	c = &t->v[t->n];
	p = &t->v[parent];
	*c = (struct tnode){ .parent = parent, .next = p->child, .f = *f };
	p->child = (uint32_t)t->n;
	t->index.slot[j] = (uint32_t)t->n;
	return (uint32_t)t->n++;
}

int calltree_add_off(struct calltree *t, const struct tree_frame *f,
		     size_t n, uint64_t count, uint64_t off_ns)
{
	uint32_t node = 0;

	t->v[0].total += count;
	t->v[0].off_total += off_ns;
	for (size_t i = 0; i < n; i++) {
		node = child(t, node, &f[i]);
		if (!node)
			return -1;
		t->v[node].total += count;
		t->v[node].off_total += off_ns;
	}
	t->v[node].self += count;
	t->v[node].off_self += off_ns;
	return 0;
}

int calltree_add(struct calltree *t, const struct tree_frame *f, size_t n,
		 uint64_t count)
{
	return calltree_add_off(t, f, n, count, 0);
}

static int cmp_nodes(const void *pa, const void *pb, void *arg)
{
	const struct tree_order *c = arg;
	const struct tnode *a = &c->t->v[*(const uint32_t *)pa];
	const struct tnode *b = &c->t->v[*(const uint32_t *)pb];
	int r;

	if (c->by_total && a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (c->by_total && a->off_total != b->off_total)
		return a->off_total < b->off_total ? 1 : -1;
	r = strcmp(strtab_get(c->names, a->f.name),
		   strtab_get(c->names, b->f.name));
	if (r)
		return r;
	if (a->f.kind != b->f.kind)
		return a->f.kind < b->f.kind ? -1 : 1;
	return a->f.dso < b->f.dso ? -1 : a->f.dso > b->f.dso;
}

ssize_t calltree_children(const struct tree_order *c, uint32_t n,
			  uint32_t **out)
{
	size_t k = 0;

	for (uint32_t i = c->t->v[n].child; i; i = c->t->v[i].next)
		k++;
	*out = malloc((k ? k : 1) * sizeof(**out));
	if (!*out)
		return -1;
	k = 0;
	for (uint32_t i = c->t->v[n].child; i; i = c->t->v[i].next)
		(*out)[k++] = i;
	qsort_r(*out, k, sizeof(**out), cmp_nodes, (void *)c);
	return (ssize_t)k;
}


/* ------------------------------------------------------------ stacks */

int stack_app_frame(const struct stack_source *src, uint32_t appid,
		    struct tree_frame *f)
{
	const struct appid_info *a = appids_find(src->appids, appid);
	char buf[300];

	if (!a)
		snprintf(buf, sizeof(buf), "?appid=%" PRIu32, appid);
	else if (src->by_app)
		snprintf(buf, sizeof(buf), "%s", a->name);
	else
		snprintf(buf, sizeof(buf), "%s#%" PRIu32, a->name,
			 a->instance);
	*f = (struct tree_frame){ .name = strtab_intern(src->names, buf),
				  .kind = FRAME_APP };
	return f->name == STRTAB_NOMEM ? -1 : 0;
}

/* The frame of the address of the appid. */
static int addr_frame(const struct stack_source *src, uint32_t appid,
		      uint64_t ip, struct tree_frame *f)
{
	struct symres s;

	if (!ip) {		/* callers the chain cannot vouch for */
		*f = (struct tree_frame){ .name = src->unknown,
					  .kind = FRAME_USER };
		return 0;
	}
	if (symbolize(src->sym, appid, ip, &s))
		return -1;
	f->name = s.sym;
	f->dso = s.dso;
	f->kind = ip >= KERNEL_IP_MIN ? FRAME_KERNEL : FRAME_USER;
	return 0;
}

/* The frame rule at addr of the appid (RULE_UNKNOWN where unresolved). */
static int rule_at(const struct stack_source *src, uint32_t appid,
		   uint64_t addr, int *rule)
{
	struct symres s;

	if (symbolize(src->sym, appid, addr, &s))
		return -1;
	*rule = s.obj ? dso_frame_rule(s.obj, s.vaddr) : RULE_UNKNOWN;
	return 0;
}

/*
 * The user frames u[0..n) (return addresses; with sp_ret the first is the
 * stack top's word) that frame pointers found, of a stack whose innermost
 * user address is ip, into out: each frame is the caller only if the
 * frame inside it was set up on rbp at that point (the unwind information
 * says), and the word at the stack pointer only if the function at ip had
 * pushed nothing. The first frame that cannot be vouched for ends them,
 * with a 0 (unknown callers) unless the stack is complete. How many went
 * into out, or -1.
 */
static int fp_addrs(const struct stack_source *src, uint32_t appid,
		    uint64_t ip, const uint64_t *u, size_t n, uint8_t flags,
		    uint64_t *out)
{
	const bool sp_ret = flags & SLEEPY_CHAIN_F_SP_RET;
	size_t k = 0, i = sp_ret ? 1 : 0;
	int rule, rule0;

	if (rule_at(src, appid, ip, &rule0))
		return -1;
	rule = rule0;
	if (sp_ret && rule0 == RULE_RSP8) {
		out[k++] = u[0] - 1;
		if (rule_at(src, appid, u[0] - 1, &rule))
			return -1;
	}
	for (; i < n && rule == RULE_RBP; i++) {
		out[k++] = u[i] - 1;
		if (rule_at(src, appid, u[i] - 1, &rule))
			return -1;
	}
	/* Complete only if every frame was vouched for, the outermost on
	 * rbp too, and the walk ended at a zero frame pointer (not cut). */
	if (i < n || rule != RULE_RBP ||
	    (flags & (SLEEPY_CHAIN_F_USER_CUT | SLEEPY_CHAIN_F_TRUNCATED)))
		out[k++] = 0;
	return (int)k;
}

/*
 * The user frames u[0..n) of a stack whose innermost user address is ip,
 * into out: the first nt, which the kernel found by unwind tables, each
 * the caller of the frame before it; the rest as fp_addrs() vouches for
 * them. A stack that tables walked to its end is complete unless the walk
 * was cut. How many went into out, or -1.
 */
static int user_addrs(const struct stack_source *src, uint32_t appid,
		      uint64_t ip, const uint64_t *u, size_t n, uint8_t flags,
		      size_t nt, uint64_t *out)
{
	size_t k;
	int m;

	if ((flags & SLEEPY_CHAIN_F_SP_RET) || !nt || nt > n)
		return fp_addrs(src, appid, ip, u, n, flags, out);
	for (k = 0; k < nt; k++)
		out[k] = u[k] - 1;
	if (nt == n) {
		if (flags & (SLEEPY_CHAIN_F_USER_CUT | SLEEPY_CHAIN_F_TRUNCATED))
			out[k++] = 0;
		return (int)k;
	}
	m = fp_addrs(src, appid, u[nt - 1] - 1, u + nt, n - nt, flags,
		     out + nt);
	return m < 0 ? -1 : (int)nt + m;
}

int stack_addrs(const struct stack_source *src, const struct count_entry *e,
		uint64_t *out)
{
	const uint32_t id = (uint32_t)e->b, appid = CE_APPID(e);
	const struct chain *c = chain_get(src->chains, id);
	const uint64_t *fr = chain_frames(src->chains, id), *u;
	const bool kernel_ip = e->ip >= KERNEL_IP_MIN;
	size_t n = 0, nu = c->nr_user;
	uint64_t ip = e->ip;
	int k;

	out[n++] = e->ip;
	if (!id)		/* no chain: the sampled function alone */
		return 1;
	for (size_t i = 0; i < c->nr_kernel; i++)
		out[n++] = fr[i] - 1;
	u = fr + c->nr_kernel;
	/* A kernel sample's first user frame is where it left user mode. */
	if (kernel_ip && nu) {
		ip = out[n++] = *u++;
		nu--;
	}
	k = kernel_ip && n == 1 + (size_t)c->nr_kernel ? 0 :
	    user_addrs(src, appid, ip, u, nu, c->flags, c->nr_table, out + n);
	return k < 0 ? -1 : (int)n + k;
}

int stack_frames(const struct stack_source *src, const struct count_entry *e,
		 struct tree_frame *out)
{
	uint64_t addrs[STACK_MAX_FRAMES];
	int n = stack_addrs(src, e, addrs), k = 0;

	if (n < 0 || stack_app_frame(src, CE_APPID(e), &out[k++]))
		return -1;
	while (n-- > 0)
		if (addr_frame(src, CE_APPID(e), addrs[n], &out[k++]))
			return -1;
	return k;
}
