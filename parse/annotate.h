/* SPDX-License-Identifier: GPL-2.0 */
/*
 * annotate: a function's disassembly (capstone, x86-64) with the samples
 * of each instruction, from the ELF file the session's mappings name.
 */
#ifndef SLEEPY_PARSE_ANNOTATE_H
#define SLEEPY_PARSE_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "counts.h"
#include "symbolize.h"

/*
 * Print the annotation of every function named name that has samples
 * among entries (keyed by appid and ip; total samples pass the filters,
 * described by filters). Returns 0, or -1 with err set (no such function
 * with samples, no code, out of memory).
 */
int annotate_print(FILE *out, const char *name, struct symbolizer *sym,
		   const struct count_entry *entries, size_t n,
		   uint64_t total, const char *filters, char *err,
		   size_t errsz);

#endif /* SLEEPY_PARSE_ANNOTATE_H */
