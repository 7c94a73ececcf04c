/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flame: a call tree as a self-contained interactive SVG flame graph (our
 * own writer and script). The root ("all") is at the bottom, each frame
 * above its caller, as wide as its total samples; children from left to
 * right by name. Frames are coloured by kind, a hue family each
 * (application, user, kernel, logical), the shade hashed from the name.
 * Each frame has a <title> (name, kind, DSO, samples, percentage of all);
 * the script adds a status line on hover, click to zoom (the frame fills
 * the width, its callers full width and faded, the rest hidden; "Reset
 * zoom", Escape or a click on "all" go back) and a search box (a regular
 * expression, or a substring if it is none: matches highlighted, their
 * share of all samples shown).
 *
 * Frames under min_percent of all samples or narrower than 0.1 px are
 * left out with their callees; the others keep their exact counts.
 *
 * The logical stacks' activity tree is drawn the same way, with a legend
 * of the kinds' colours above it (logical frames green), its frames' off-
 * CPU time in their titles; or by its off-CPU time instead of samples.
 */
#ifndef SLEEPY_PARSE_FLAME_H
#define SLEEPY_PARSE_FLAME_H

#include <stdbool.h>
#include <stddef.h>

#include "calltree.h"
#include "strtab.h"

struct flame_in {
	const char *title;	/* e.g. "Flame graph, user mode" */
	const char *file;	/* the session file, for the subtitle */
	const char *filters;	/* filters_describe(); "" for none */
	double min_percent;	/* frames under this share of all: left out */
	bool offcpu;		/* widths by off-CPU time, not samples */
	bool legend;		/* the kinds' colours, named */
};

/*
 * Write the tree to path (through path.tmp, renamed when complete).
 * Returns 0, or -1 with err set (the file is then left alone).
 */
int flame_write(const char *path, const struct calltree *t,
		const struct strtab *names, const struct flame_in *in,
		char *err, size_t errsz);

#endif /* SLEEPY_PARSE_FLAME_H */
