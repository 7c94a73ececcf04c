/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dso: one ELF object (executable, shared library or vmlinux) read with
 * elfutils: its loadable segments (to turn a file offset into an address),
 * its function symbols (.symtab; for a stripped file, its separate debug
 * file's .symtab, or else .dynsym's global ones) as a sorted array for
 * binary search, its GNU build-id, and its DWARF (its own or the debug
 * file's; libdw: line table, inlined functions), opened on first use.
 */
#ifndef SLEEPY_PARSE_DSO_H
#define SLEEPY_PARSE_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "strtab.h"

/* Why an address has no symbol; the order of reason_names[] in symbolize.c */
enum sym_reason {
	REASON_NONE = 0,
	REASON_NO_MAPPING,	/* no MMAP record covers the user IP */
	REASON_FILE_MISSING,	/* the mapped file cannot be opened */
	REASON_NOT_ELF,		/* it is not a readable ELF file */
	REASON_BUILD_ID,	/* its build-id is not the recorded one */
	REASON_NO_SYMBOL,	/* no function symbol covers the address */
	REASON_NO_KSYMS,	/* kernel IP, but no kernel symbols */
	NR_REASONS,
};

struct dso_sym {
	uint64_t addr;		/* st_value */
	uint64_t end;		/* addr + size; addr when the size is unknown */
	uint32_t name;		/* strtab id */
};

struct dso_seg {
	uint64_t off, filesz, vaddr;	/* a PT_LOAD */
};

struct dso {
	char *path;		/* as the session recorded it */
	char *real;		/* the file opened (under --symfs) */
	enum sym_reason status;	/* REASON_NONE: usable */
	int fd;
	Elf *elf;
	uint8_t build_id[64];
	size_t build_id_len;
	struct dso_seg *segs;
	size_t nsegs;
	struct dso_sym *syms;	/* sorted by addr, one per address */
	size_t nsyms;
	bool dynsym_only;	/* stripped: .dynsym's globals only */
	int dw_state;		/* 0 not tried, 1 open, -1 no DWARF */
	Dwarf *dw;
	int dbg_state;		/* 0 not tried, 1 open, -1 none */
	int dbg_fd;		/* the separate debug file (debuginfo.h) */
	Elf *dbg_elf;
	bool archived;		/* --archive: copied (or found there) */
	int cfi_state;		/* 0 not tried, 1 open, -1 none */
	Dwarf_CFI *cfi;		/* the unwind information (.eh_frame) */
};

/*
 * How the canonical frame address is found at an address, from the
 * file's unwind information: the frame set up on rbp (CFA = rbp + 16),
 * nothing pushed yet (CFA = rsp + 8: the return address at rsp), or
 * another rsp-based rule; unknown without unwind information.
 */
enum frame_rule {
	RULE_UNKNOWN,
	RULE_RBP,
	RULE_RSP8,
	RULE_RSP,
};

enum dso_hit {
	DSO_MISS,		/* no symbol */
	DSO_SYMBOL,		/* inside syms[*i] */
	DSO_BRACKET,		/* stripped: between syms[*i] and syms[*i + 1],
				 * or after the last, syms[*i] */
};

/* The far end of a bracket after a stripped object's last function. */
#define BRACKET_END "(end)"

/*
 * Open path (prefixed with symfs unless NULL) and load what the lookups
 * need. Symbol names go to names. Returns 0, or -1 when out of memory; a
 * file that is missing or not ELF sets status and is not an error.
 */
int dso_open(struct dso *d, const char *path, const char *symfs,
	     struct strtab *names);
void dso_close(struct dso *d);

/* The address (st_value space) of a file offset: 0, or -1 if unloaded. */
int dso_vaddr(const struct dso *d, uint64_t file_off, uint64_t *vaddr);

enum dso_hit dso_lookup(const struct dso *d, uint64_t vaddr, size_t *i);

/* The separate debug file of d (debuginfo.h), opened on first use: an fd
 * the dso keeps, or -1 (also when d has DWARF of its own). */
int dso_debug_fd(struct dso *d, const char *symfs);

/*
 * The source line of vaddr as "file:line" in names, or 0 when unknown
 * (no DWARF, or no line for the address). Returns STRTAB_NOMEM when out of
 * memory.
 */
uint32_t dso_line(struct dso *d, uint64_t vaddr, const char *symfs,
		  struct strtab *names);

/* A source frame at an address (see dso_frames()); ids in names, 0:
 * unknown. */
struct dso_frame {
	uint32_t func;		/* the function's name */
	uint32_t file;		/* its source file (else the line's) */
	uint32_t line;		/* the line executing in it */
	uint32_t start_line;	/* the function's declaration */
};

/*
 * The source frames at vaddr, from DWARF (libdw's scopes): the functions
 * inlined there, innermost first, then the function they were inlined
 * into, the last; each with the line executing in it (in a caller, the
 * line of the inlined call). Without a function scope, one frame of the
 * line alone (func 0). Up to max into out; how many (0: no DWARF for
 * vaddr), or -1 when out of memory.
 */
int dso_frames(struct dso *d, uint64_t vaddr, const char *symfs,
	       struct strtab *names, struct dso_frame *out, size_t max);

/* The frame rule at vaddr (enum frame_rule). */
int dso_frame_rule(struct dso *d, uint64_t vaddr);

/* Copy len bytes at vaddr from the file; 0, or -1 if not in the file. */
int dso_read(const struct dso *d, uint64_t vaddr, void *buf, size_t len);

/*
 * Any symbol (of any type) named name, from .symtab or .dynsym: 0 and its
 * value and size, or -1.
 */
int dso_find_any(const struct dso *d, const char *name, uint64_t *addr,
		 uint64_t *size);

/* The functions named name: indexes into syms, up to max; returns how many. */
size_t dso_find_functions(const struct dso *d, const struct strtab *names,
			  const char *name, size_t *out, size_t max);

#endif /* SLEEPY_PARSE_DSO_H */
