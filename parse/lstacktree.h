/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lstacktree: the activity tree of the logical stacks (--tree lstack),
 * merged bottom-up by the IP.com disclosure's algorithm: a sample's stack,
 * from its bottom frame, walks the frames it shares with the tree, adds
 * the rest of itself as a new branch where they part, and is counted on
 * its top frame (self; the frames under it count it in their total).
 * Stacks that share no bottom frame become disjoint trees. calltree_add()
 * is that walk.
 *
 * Each stack starts at the application (its appid, or its name with --by
 * app), then its logical frames, bottom first: the name the program gave
 * the id (lstacknames.h), or else its number, "name(arg)" with
 * --lstack-args (frames then differ by their arg too), and "[truncated]"
 * above those of a stack deeper than the record holds. A sample of a
 * registered thread at depth 0 is the application's own (self). With
 * --lstack-with-callchain the sample's machine stack follows, as the
 * call tree has it (user frames outermost first, then kernel frames),
 * above the logical frames.
 *
 * The OFFCPU records add their off-CPU time to the same nodes (their
 * stacks have no machine frames). Samples of threads without a logical
 * stack, and stacks left out (torn, unreadable), are counted, not merged.
 */
#ifndef SLEEPY_PARSE_LSTACKTREE_H
#define SLEEPY_PARSE_LSTACKTREE_H

#include <stdint.h>

#include "calltree.h"
#include "lstack.h"
#include "lstacknames.h"
#include "options.h"

enum lstack_class {
	LSTACK_IN,		/* in the tree */
	LSTACK_NONE,		/* no logical stack */
	LSTACK_TORN,		/* left out: it changed during both reads */
	LSTACK_FAULT,		/* left out: unreadable */
	NR_LSTACK_CLASSES,
};

/* What passed the filters, by class. */
struct lstack_tally {
	uint64_t samples[NR_LSTACK_CLASSES];
	uint64_t records[NR_LSTACK_CLASSES];	/* OFFCPU records */
	uint64_t ns[NR_LSTACK_CLASSES];		/* their off-CPU time */
	uint64_t truncated, truncated_records;	/* in, under [truncated] */
};

struct lstack_tree_in {
	const struct lstacks *l;
	const struct options *o;	/* --app, --appid, --lstack-args,
					 * --lstack-with-callchain */
	const struct stack_source *src;
	struct lstack_names *names;
};

/* The class of stack key. */
enum lstack_class lstack_class(const struct lstacks *l, uint32_t key);

/* The tree into t (calltree_init()ed here), and what went where into
 * *tally. 0, or -1 when out of memory (free t all the same). */
int lstack_tree_build(const struct lstack_tree_in *in, struct calltree *t,
		      struct lstack_tally *tally);

/* The name of logical frame {id, arg} of pid as the tree shows it, into
 * buf: "name", its number without one, "name(arg)" with args. 0, or -1
 * when out of memory. */
int lstack_frame_name(struct lstack_names *names, struct strtab *strs,
		      uint32_t pid, uint64_t id, uint64_t arg, bool args,
		      char *buf, size_t size);

#endif
