/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scriptout: --format perf-script, the text `perf script` prints for
 * sampled call chains, which speedscope, the Firefox Profiler, FlameScope
 * and stackcollapse-perf.pl read. A sample at a time, in the file's order:
 *
 *	comm pid/tid [cpu] secs.usecs: period cpu-clock:
 *		ADDR SYMBOL+0xOFF (DSO)		one per frame, leaf first
 *	(a blank line)
 *
 * comm is the appid's name, the time CLOCK_MONOTONIC, the period the
 * tick's in nanoseconds, and the event always "cpu-clock" (speedscope
 * keeps only the first event it sees). Frames are calltree.h's: return
 * addresses one byte back, in their call; kernel frames' DSO is
 * [kernel.kallsyms]; callers that cannot be vouched for are one
 * "0 [unknown] ([unknown])" frame.
 */
#ifndef SLEEPY_PARSE_SCRIPTOUT_H
#define SLEEPY_PARSE_SCRIPTOUT_H

#include <stdio.h>

#include "calltree.h"
#include "options.h"
#include "reader.h"

/*
 * A second pass over the session file (its records, after the first pass
 * collected the appids, mappings and chains into src): every sample that
 * passes the filters. 0, -1 when out of memory, -2 on a reader error
 * (then see r).
 */
int script_write(FILE *out, struct sleepy_reader *r, const struct options *o,
		 const struct stack_source *src);

#endif /* SLEEPY_PARSE_SCRIPTOUT_H */
