/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms: kernel symbols, from a /proc/kallsyms copy (text lines
 * "ffffffff81000000 T _stext" with an optional "\t[module]") or from a
 * vmlinux's ELF symbol table. kallsyms gives no sizes: a symbol reaches the
 * next one, at most KSYMS_MAX_SPAN bytes; _etext and the like end the
 * kernel's text.
 */
#ifndef SLEEPY_PARSE_KSYMS_H
#define SLEEPY_PARSE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "dso.h"
#include "strtab.h"

#define KSYMS_MAX_SPAN	(1u << 20)
#define KSYM_END	(UINT32_MAX - 1)	/* name of an end-of-text marker */

struct ksym {
	uint64_t addr;
	uint32_t name;		/* strtab id, or KSYM_END */
	uint32_t dso;		/* strtab id: "[kernel.kallsyms]", "[ext4]" */
};

struct ksyms {
	struct ksym *v;		/* kallsyms: sorted by addr */
	size_t n;
	struct dso *vmlinux;	/* or symbols from a vmlinux */
	uint32_t vmlinux_dso;	/* strtab id of "[kernel.kallsyms]" */
	const char *source;	/* the file used, or NULL: none */
	char why[256];		/* why there are none (when source is NULL) */
};

/*
 * Load kernel symbols: from kallsyms if not NULL, else from vmlinux if not
 * NULL, else from sidecar (FILE.kallsyms; a missing sidecar is no error).
 * release is the session's kernel release, checked against a vmlinux's
 * linux_banner or a kallsyms "# release R" comment line. Returns 0 (check
 * source), -1 when out of memory, or -2 with err set for a file that is
 * given but unusable (a bad line, a missing --kallsyms file).
 */
int ksyms_load(struct ksyms *k, const char *kallsyms, const char *vmlinux,
	       const char *sidecar, const char *release, const char *symfs,
	       struct strtab *names, char *err, size_t errsz);
void ksyms_free(struct ksyms *k);

/* The symbol of a kernel ip: 0 with its name, module and start, or -1
 * (none). */
int ksyms_lookup(const struct ksyms *k, uint64_t ip, uint32_t *name,
		 uint32_t *dso, uint64_t *start);

#endif /* SLEEPY_PARSE_KSYMS_H */
