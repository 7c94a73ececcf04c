/* SPDX-License-Identifier: GPL-2.0 */
/*
 * treeout: a call tree as text (indented, with total and self samples
 * and percentages per node) and as Brendan Gregg's folded stacks
 * ("app;outer;...;leaf COUNT", one line per distinct stack), which
 * flamegraph.pl, inferno, speedscope and Pyroscope read.
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
};

void tree_print_text(FILE *out, const struct calltree *t,
		     const struct strtab *names, const struct tree_text *how);
/* The tree's stacks, by name. 0, or -1 when out of memory. */
int tree_print_folded(FILE *out, const struct calltree *t,
		      const struct strtab *names);

#endif /* SLEEPY_PARSE_TREEOUT_H */
