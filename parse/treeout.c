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

/* ------------------------------------------------------------ text */

struct text_walk {
	FILE *out;
	struct tree_order c;
	uint64_t all;
	double min;
};

static double pct(uint64_t v, uint64_t of)
{
	return of ? 100.0 * (double)v / (double)of : 0.0;
}

static void text_node(struct text_walk *w, uint32_t n, unsigned int depth)
{
	const struct tnode *node = &w->c.t->v[n];
	uint32_t *kids;
	ssize_t k;
	char name[1024];

	if (pct(node->total, w->all) < w->min)
		return;
	frame_name(name, sizeof(name), w->c.names, &node->f, " [k]");
	fprintf(w->out, "%7.2f%%  %7.2f%%  %9" PRIu64 "  %*s%s\n",
		pct(node->total, w->all), pct(node->self, w->all),
		node->total, (int)(2 * depth), "", name);
	k = calltree_children(&w->c, n, &kids);
	for (ssize_t i = 0; i < k; i++)
		text_node(w, kids[i], depth + 1);
	free(kids);
}

void tree_print_text(FILE *out, const struct calltree *t,
		     const struct strtab *names, const struct tree_text *how)
{
	struct text_walk w = {
		.out = out, .c = { t, names, true }, .all = t->v[0].total,
		.min = how->min_percent,
	};
	uint32_t *kids;
	ssize_t k;

	fprintf(out, "%s: %" PRIu64 " samples%s", how->title, w.all,
		how->inverted ? ", callees first" : "");
	if (how->min_percent > 0)
		fprintf(out, "; nodes under %g%% left out", how->min_percent);
	fprintf(out, "\n%8s  %8s  %9s  %s\n", "total", "self", "samples",
		how->inverted ? "callee, then its callers" : "frame");
	k = calltree_children(&w.c, 0, &kids);
	for (ssize_t i = 0; i < k; i++)
		text_node(&w, kids[i], 0);
	free(kids);
}

/* ------------------------------------------------------------ folded */

struct fold_walk {
	FILE *out;
	struct tree_order c;
	char *path;		/* the frames down to here, ';'-separated */
	size_t len, cap;
};

static int fold_node(struct fold_walk *w, uint32_t n)
{
	const struct tnode *node = &w->c.t->v[n];
	size_t len = w->len;
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
	if (node->self)
		fprintf(w->out, "%s %" PRIu64 "\n", w->path, node->self);
	k = calltree_children(&w->c, n, &kids);
	for (ssize_t i = 0; i < k && !rc; i++)
		rc = fold_node(w, kids[i]);
	free(kids);
	w->len = len;
	w->path[len] = '\0';
	return k < 0 ? -1 : rc;
}

int tree_print_folded(FILE *out, const struct calltree *t,
		      const struct strtab *names)
{
	struct fold_walk w = { .out = out, .c = { t, names, false } };
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
