/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbolize: an (appid, ip) to (dso, symbol, source line). User IPs go
 * through the appid's mappings to a file offset, then the file's address
 * space and symbols; kernel IPs (at or above KERNEL_IP_MIN) to the kernel
 * symbols. Results are memoized per (appid, ip), kernel ones per ip, and
 * every ELF file is read once.
 */
#ifndef SLEEPY_PARSE_SYMBOLIZE_H
#define SLEEPY_PARSE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dso.h"
#include "ksyms.h"
#include "maps.h"
#include "perfmap.h"
#include "strtab.h"

#define KERNEL_IP_MIN 0xffff800000000000ull

enum sym_kind {
	KIND_SYMBOL,		/* inside a function */
	KIND_BRACKET,		/* stripped: between two global functions */
	KIND_UNRESOLVED,	/* see reason */
};

struct symres {
	uint32_t dso;		/* strtab ids: the mapped file's path, or */
	uint32_t sym;		/* "[kernel.kallsyms]", "[module]", */
	uint32_t line;		/* "[unknown]"; line 0: unknown ("??") */
	uint8_t kind;		/* enum sym_kind */
	uint8_t reason;		/* enum sym_reason (KIND_UNRESOLVED) */
	uint64_t offset;	/* the file offset, or the ip (kernel) */
	uint64_t vaddr;		/* the address in the object (annotate) */
	uint64_t sym_start;	/* KIND_SYMBOL: the symbol's, in vaddr's space */
	struct dso *obj;	/* NULL for kallsyms and unresolved */
};

struct memo_slot;

struct symbolizer {
	struct strtab *names;
	struct maps *maps;
	struct ksyms *ksyms;
	const char *symfs;
	const char *buildid_dir;	/* --buildid-dir, or NULL */
	struct perfmaps jit;		/* anonymous code: perf maps */
	bool lines;			/* look up source lines */
	struct dso **dsos;		/* by strtab id of the path (sparse) */
	size_t ndsos;
	struct memo_slot *memo;
	size_t memo_mask, memo_used;
	uint32_t unknown_dso, kernel_dso;
	uint32_t qq;			/* "??" */
};

int symbolizer_init(struct symbolizer *s, struct strtab *names,
		    struct maps *maps, struct ksyms *ksyms, const char *symfs,
		    bool lines);
void symbolizer_free(struct symbolizer *s);
/* Resolve (appid, ip) into *r. Returns 0, or -1 when out of memory. */
int symbolize(struct symbolizer *s, uint32_t appid, uint64_t ip,
	      struct symres *r);

/* The usable dso of a user ip of appid (its mapping's file, or its copy in
 * --buildid-dir), or NULL; *err -1 when out of memory. */
struct dso *symbolize_dso(struct symbolizer *s, uint32_t appid, uint64_t ip,
			  int *err);

const char *reason_name(unsigned int reason);

#endif /* SLEEPY_PARSE_SYMBOLIZE_H */
