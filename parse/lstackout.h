/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lstackout: the logical stacks' activity tree (--tree lstack) as text,
 * after the session's summary: what went into the tree and what was left
 * out, the names files found, then the tree (treeout.c); and as one JSON
 * document: the session as every JSON report has it, those figures, and
 * the tree's nodes in preorder with their parents.
 */
#ifndef SLEEPY_PARSE_LSTACKOUT_H
#define SLEEPY_PARSE_LSTACKOUT_H

#include "calltree.h"
#include "lstacknames.h"
#include "lstacktree.h"
#include "writer.h"

struct lstack_out {
	const struct run *run;
	const struct calltree *t;
	const struct strtab *names;
	const struct lstack_tally *tally;
	const struct lstack_names *lnames;
	const char *title;	/* "Activity tree (logical stacks), ..." */
	double min_percent;	/* nodes under it left out */
};

void lstack_print_text(const struct lstack_out *o);
/* 0, or -1 when out of memory (the document is then cut short). */
int lstack_print_json(const struct lstack_out *o);

#endif
