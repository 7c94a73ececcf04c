/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof: --pprof OUT, the samples as google/pprof's profile.proto,
 * gzipped, the format go tool pprof reads. A second pass over the session
 * file (as scriptout's) aggregates the samples that pass the filters by
 * (pid, tid, appid, IP, chain): each profile sample carries the labels
 *
 *	pid, tid	numeric (pprof drops a label whose number is 0)
 *	appid		a string, "name#instance" as parse prints it
 *
 * and two values, samples/count and cpu/nanoseconds (the samples times
 * the tick's period); the period type is cpu/nanoseconds, the period the
 * tick's, time_nanos the session's start (CLOCK_REALTIME, after --from)
 * and duration_nanos the time to its last sample (or --to).
 *
 * A sample's locations are calltree.h's stack addresses, leaf first
 * (return addresses one byte back, in their call instruction; 0, callers
 * that cannot be vouched for, is a location without an address of the
 * function "[unknown]"). A location's lines are the functions DWARF says
 * were inlined at its address, innermost first, each at its line, then
 * the function they were inlined into, named by its ELF symbol as the
 * reports name it; an address without a symbol is one line of the
 * reports' name for it (DSO+0xOFFSET, or a stripped file's A->B).
 * Functions have their source file and first line where DWARF has them.
 * Each distinct MMAP record that a location falls in is a mapping (its
 * path, range, file offset, and the build-id it recorded, else the
 * file's); kernel addresses are the mapping [kernel.kallsyms] (with
 * --vmlinux, its build-id). A user address outside every mapping has
 * none.
 *
 * The profile is built in memory, then compressed (zlib, gzip format)
 * into a temporary file next to OUT that is renamed over it, so that a
 * failed write leaves no partial file; an OUT that exists and is not a
 * regular file (/dev/stdout, a FIFO) is written directly.
 */
#ifndef SLEEPY_PARSE_PPROF_H
#define SLEEPY_PARSE_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "calltree.h"
#include "options.h"
#include "reader.h"

struct pprof_in {
	const char *out;		/* the file to write */
	const struct options *o;	/* the filters */
	const struct stack_source *src;	/* the first pass's */
	uint64_t span_ns;		/* the last sample's time */
	const char *comment;		/* e.g. the session file and filters */
};

enum {
	PPROF_NOMEM = -1,
	PPROF_READER = -2,	/* a reader error: see r */
	PPROF_WRITE = -3,	/* err: "OUT: <strerror>" */
};

/* Read the records of r (the session file again, after its header) and
 * write in->out. Returns 0 or a PPROF_* error. */
int pprof_write(struct sleepy_reader *r, const struct pprof_in *in,
		char *err, size_t errsz);

#endif /* SLEEPY_PARSE_PPROF_H */
