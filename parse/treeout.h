/* SPDX-License-Identifier: GPL-2.0 */
/*
 * treeout: a call tree as text (indented, with total and self samples
 * and percentages per node; the logical stacks' activity tree with its
 * self samples and its total and self off-CPU time too) and as Brendan
 * Gregg's folded stacks ("app;outer;...;leaf COUNT", one line per
 * distinct stack, COUNT its self samples or, for off-CPU flame graphs,
 * its self off-CPU time in microseconds), which flamegraph.pl, inferno,
 * speedscope and Pyroscope read.
 */
#ifndef SLEEPY_PARSE_TREEOUT_H
#define SLEEPY_PARSE_TREEOUT_H

#include <stdio.h>

#include "calltree.h"
#include "strtab.h"

struct tree_text {
	const char *title;	/* e.g. "Call tree, user mode" */
	double min_percent;	/* nodes under this share of all: left out */
	bool inverted;		/* the tree is callee first */
	bool offcpu;		/* the activity tree: off-CPU columns; a
				 * node under min_percent of the samples
				 * stays if it has min_percent of the
				 * off-CPU time */
};

void tree_print_text(FILE *out, const struct calltree *t,
		     const struct strtab *names, const struct tree_text *how);
/* The tree's stacks, by name, weighed by their self samples (offcpu:
 * their self off-CPU time, in microseconds, rounded; stacks of none left
 * out). 0, or -1 when out of memory. */
int tree_print_folded(FILE *out, const struct calltree *t,
		      const struct strtab *names, bool offcpu);

/*
 * The nodes under the root in preorder (children most samples, then
 * most off-CPU time, first), each with its depth (1 under the root),
 * those under min_percent left out as text does; fn's non-zero return
 * ends the walk and is returned, -1 when out of memory.
 */
typedef int (*tree_visit_fn)(void *arg, uint32_t node, uint32_t parent,
			     unsigned int depth);
int tree_walk(const struct calltree *t, const struct strtab *names,
	      double min_percent, tree_visit_fn fn, void *arg);

/* Whether a node stays under min_percent: its share of the samples or of
 * the off-CPU time is at least that. */
bool tree_node_kept(const struct calltree *t, uint32_t n, double min_percent);

#endif /* SLEEPY_PARSE_TREEOUT_H */
