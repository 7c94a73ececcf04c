// SPDX-License-Identifier: GPL-2.0
/* treeout: call trees as text and folded stacks; see treeout.h. */
#include "treeout.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

/* A frame's name as shown: ';' and control characters replaced. */
static void frame_name(char *buf, size_t size, const struct strtab *names,
		       const struct tree_frame *f, const char *kernel_suffix)
{
	size_t n;

	fmt_sanitize(buf, size, strtab_get(names, f->name), size - 8);
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
	n = strlen(buf);
	if (f->kind == FRAME_KERNEL)
		snprintf(buf + n, size - n, "%s", kernel_suffix);
}

/* ------------------------------------------------------------ walk */

static double pct(uint64_t v, uint64_t of)
{
	return of ? 100.0 * (double)v / (double)of : 0.0;
}

bool tree_node_kept(const struct calltree *t, uint32_t n, double min_percent)
{
	const struct tnode *node = &t->v[n];

	return pct(node->total, t->v[0].total) >= min_percent ||
	       (t->v[0].off_total &&
		pct(node->off_total, t->v[0].off_total) >= min_percent);
}

struct walk {
	struct tree_order c;
	double min;
	tree_visit_fn fn;
	void *arg;
};

static int walk_node(const struct walk *w, uint32_t n, uint32_t parent,
		     unsigned int depth)
{
	uint32_t *kids;
	ssize_t k;
	int rc;

	if (!tree_node_kept(w->c.t, n, w->min))
		return 0;
	rc = w->fn(w->arg, n, parent, depth);
	if (rc)
		return rc;
	k = calltree_children(&w->c, n, &kids);
	for (ssize_t i = 0; i < k && !rc; i++)
		rc = walk_node(w, kids[i], n, depth + 1);
	free(kids);
	return k < 0 ? -1 : rc;
}

int tree_walk(const struct calltree *t, const struct strtab *names,
	      double min_percent, tree_visit_fn fn, void *arg)
{
	const struct walk w = { { t, names, true }, min_percent, fn, arg };
	uint32_t *kids;
	ssize_t k = calltree_children(&w.c, 0, &kids);
	int rc = 0;

	for (ssize_t i = 0; i < k && !rc; i++)
		rc = walk_node(&w, kids[i], 0, 1);
	free(kids);
	return k < 0 ? -1 : rc;
}

/* ------------------------------------------------------------ text */

struct text_walk {
	FILE *out;
	const struct calltree *t;
	const struct strtab *names;
	bool offcpu;
};

static int text_node(void *arg, uint32_t n, uint32_t parent,
		     unsigned int depth)
{
	const struct text_walk *w = arg;
	const struct tnode *node = &w->t->v[n];
	const uint64_t all = w->t->v[0].total;
	char name[1024];

	(void)parent;
	frame_name(name, sizeof(name), w->names, &node->f, " [k]");
	fprintf(w->out, "%7.2f%%  %7.2f%%  %9" PRIu64, pct(node->total, all),
		pct(node->self, all), node->total);
	if (w->offcpu)
		fprintf(w->out, "  %9" PRIu64 "  %9.3fs  %9.3fs", node->self,
			(double)node->off_total / 1e9,
			(double)node->off_self / 1e9);
	fprintf(w->out, "  %*s%s\n", (int)(2 * (depth - 1)), "", name);
	return 0;
}

static void text_heading(FILE *out, const struct calltree *t,
			 const struct tree_text *how)
{
	fprintf(out, "%s: %" PRIu64 " samples", how->title, t->v[0].total);
	if (how->offcpu)
		fprintf(out, ", %.3fs off-CPU",
			(double)t->v[0].off_total / 1e9);
	if (how->inverted)
		fputs(", callees first", out);
	if (how->min_percent > 0)
		fprintf(out, "; nodes under %g%% left out", how->min_percent);
	fputc('\n', out);
	if (how->offcpu)
		fprintf(out, "%s  %s\n%8s  %8s  %9s  %9s  %10s  %10s  %s\n",
			"------------ on-CPU samples ------------",
			"---- off-CPU time ----", "total", "self", "total",
			"self", "total", "self", "frame");
	else
		fprintf(out, "%8s  %8s  %9s  %s\n", "total", "self",
			"samples", how->inverted ? "callee, then its callers" :
			"frame");
}

void tree_print_text(FILE *out, const struct calltree *t,
		     const struct strtab *names, const struct tree_text *how)
{
	struct text_walk w = { out, t, names, how->offcpu };

	text_heading(out, t, how);
	tree_walk(t, names, how->min_percent, text_node, &w);
}

/* ------------------------------------------------------------ folded */

struct fold_walk {
	FILE *out;
	struct tree_order c;
	bool offcpu;		/* weigh by off_self, in us */
	char *path;		/* the frames down to here, ';'-separated */
	size_t len, cap;
};

static int fold_node(struct fold_walk *w, uint32_t n)
{
	const struct tnode *node = &w->c.t->v[n];
	size_t len = w->len;
	uint64_t weight;
	uint32_t *kids;
	char name[1024];
	ssize_t k;
	int rc = 0;

	frame_name(name, sizeof(name), w->c.names, &node->f, "_[k]");
	if (len + strlen(name) + 2 > w->cap) {
		char *p = realloc(w->path, 2 * w->cap + sizeof(name));

		if (!p)
			return -1;
		w->path = p;
		w->cap = 2 * w->cap + sizeof(name);
	}
	w->len += (size_t)sprintf(w->path + len, "%s%s", len ? ";" : "",
				  name);
	weight = w->offcpu ? (node->off_self + 500) / 1000 : node->self;
	if (weight)
		fprintf(w->out, "%s %" PRIu64 "\n", w->path, weight);
	k = calltree_children(&w->c, n, &kids);
	for (ssize_t i = 0; i < k && !rc; i++)
		rc = fold_node(w, kids[i]);
	free(kids);
	w->len = len;
	w->path[len] = '\0';
	return k < 0 ? -1 : rc;
}

int tree_print_folded(FILE *out, const struct calltree *t,
		      const struct strtab *names, bool offcpu)
{
	struct fold_walk w = { .out = out, .c = { t, names, false },
			       .offcpu = offcpu };
	uint32_t *kids;
	ssize_t k;
	int rc = 0;

	k = calltree_children(&w.c, 0, &kids);
	for (ssize_t i = 0; i < k && !rc; i++)
		rc = fold_node(&w, kids[i]);
	free(kids);
	free(w.path);
	return k < 0 ? -1 : rc;
}
