// SPDX-License-Identifier: GPL-2.0
/* annotate: disassembly with samples per instruction; see annotate.h. */
#include "annotate.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "array.h"
#include "fmt.h"

#define MAX_FUNCS	16
#define MAX_CODE	(16u << 20)	/* the largest function disassembled */

/* A sampled address inside the function. */
struct hit {
	uint64_t vaddr;
	uint64_t count;
};

/* One function to annotate: an object and a symbol in it. */
struct func {
	struct dso *obj;
	uint32_t dso;		/* strtab id of its DSO label */
	size_t sym;		/* index into obj->syms */
	uint64_t samples;
	struct hit *hits;
	size_t nhits, cap;
};

static int cmp_hit(const void *pa, const void *pb)
{
	const struct hit *a = pa, *b = pb;

	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

/* Most samples first, then by DSO and address, for a stable order. */
static int cmp_func(const void *pa, const void *pb)
{
	const struct func *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->dso != b->dso)
		return strcmp(a->obj->path, b->obj->path);
	return a->obj->syms[a->sym].addr < b->obj->syms[b->sym].addr ? -1 :
		a->obj->syms[a->sym].addr > b->obj->syms[b->sym].addr;
}

static int add_hit(struct func *f, uint64_t vaddr, uint64_t count)
{
	struct hit *v = array_room(f->hits, &f->cap, f->nhits, sizeof(*v), 64);

	if (!v)
		return -1;
	f->hits = v;
	f->hits[f->nhits].vaddr = vaddr;
	f->hits[f->nhits].count = count;
	f->nhits++;
	f->samples += count;
	return 0;
}

/* The function's code range: its symbol's size, else up to the next
 * symbol, else up to its last sampled address. */
static void func_range(const struct func *f, uint64_t *start, uint64_t *end)
{
	const struct dso_sym *ds = &f->obj->syms[f->sym];

	*start = ds->addr;
	*end = ds->end;
	if (*end <= *start && f->sym + 1 < f->obj->nsyms)
		*end = f->obj->syms[f->sym + 1].addr;
	if (*end <= *start)
		*end = f->hits[f->nhits - 1].vaddr + 16;
}

/* One line per instruction, with its samples, and the source line above
 * each run of instructions. Returns the samples shown. */
static uint64_t print_insns(FILE *out, struct symbolizer *s,
			    const struct func *f, const cs_insn *insn,
			    size_t ninsn)
{
	uint64_t shown = 0;
	uint32_t last_line = 0;
	size_t h = 0;

	for (size_t i = 0; i < ninsn; i++) {
		const uint64_t a = insn[i].address;
		const uint64_t next = a + insn[i].size;
		uint64_t c = 0;
		uint32_t line = 0;
		char text[256];

		while (h < f->nhits && f->hits[h].vaddr < next) {
			if (f->hits[h].vaddr >= a)
				c += f->hits[h].count;
			h++;
		}
		shown += c;
		if (s->lines)
			line = dso_line(f->obj, a, s->symfs, s->names);
		if (line && line != STRTAB_NOMEM && line != last_line) {
			fmt_sanitize(text, sizeof(text),
				     strtab_get(s->names, line), 76);
			fprintf(out, "  %s\n", text);
			last_line = line;
		}
		snprintf(text, sizeof(text), "%s %s", insn[i].mnemonic,
			 insn[i].op_str);
		if (c)
			fprintf(out, "%8" PRIu64 "  %6.2f%%  %-18" PRIx64
				" %s\n", c, fmt_percent(c, f->samples), a,
				text);
		else
			fprintf(out, "%8s  %7s  %-18" PRIx64 " %s\n", "", "",
				a, text);
	}
	return shown;
}

static int print_func(FILE *out, struct symbolizer *s, struct func *f,
		      uint64_t total, char *err, size_t errsz)
{
	const char *name = strtab_get(s->names, f->obj->syms[f->sym].name);
	uint64_t start, end, shown;
	unsigned char *code;
	cs_insn *insn = NULL;
	size_t ninsn;
	csh cs;

	func_range(f, &start, &end);
	if (end - start > MAX_CODE) {
		snprintf(err, errsz, "%s: function of %" PRIu64 " bytes is "
			 "too large to annotate", name, end - start);
		return -1;
	}
	code = malloc(end - start);
	if (!code || dso_read(f->obj, start, code, end - start)) {
		free(code);
		snprintf(err, errsz, "%s: cannot read its code from %s", name,
			 f->obj->real);
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(code);
		snprintf(err, errsz, "capstone: cannot open x86-64");
		return -1;
	}
	ninsn = cs_disasm(cs, code, end - start, start, 0, &insn);
	fprintf(out, "Annotation of %s in %s\n", name,
		strtab_get(s->names, f->dso));
	fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes, %zu "
		"instructions) in %s\n", start, end, end - start, ninsn,
		f->obj->real);
	fprintf(out, "  %" PRIu64 " samples, %.2f%% of %" PRIu64 "\n\n",
		f->samples, fmt_percent(f->samples, total), total);
	fprintf(out, "%8s  %7s  %-18s %s\n", "samples", "percent", "address",
		"instruction");
	shown = print_insns(out, s, f, insn, ninsn);
	if (shown != f->samples)
		fprintf(out, "  (%" PRIu64 " samples at addresses that do not "
			"start an instruction above)\n", f->samples - shown);
	putc('\n', out);
	cs_free(insn, ninsn);
	cs_close(&cs);
	free(code);
	return 0;
}

int annotate_print(FILE *out, const char *name, struct symbolizer *s,
		   const struct count_entry *entries, size_t n,
		   uint64_t total, const char *filters, char *err,
		   size_t errsz)
{
	struct func funcs[MAX_FUNCS];
	size_t nfuncs = 0;
	bool kernel_only = false;
	int rc = 0;

	memset(funcs, 0, sizeof(funcs));
	for (size_t i = 0; i < n; i++) {
		const struct count_entry *e = &entries[i];
		struct symres r;
		size_t k, idx;

		if (symbolize(s, CE_APPID(e), e->ip, &r)) {
			snprintf(err, errsz, "out of memory");
			rc = -1;
			goto out;
		}
		if (r.kind != KIND_SYMBOL ||
		    strcmp(strtab_get(s->names, r.sym), name))
			continue;
		if (!r.obj) {
			kernel_only = true;
			continue;
		}
		if (dso_lookup(r.obj, r.vaddr, &idx) != DSO_SYMBOL)
			continue;
		for (k = 0; k < nfuncs; k++)
			if (funcs[k].obj == r.obj && funcs[k].sym == idx)
				break;
		if (k == nfuncs) {
			if (nfuncs == MAX_FUNCS)
				continue;
			funcs[k].obj = r.obj;
			funcs[k].sym = idx;
			funcs[k].dso = r.dso;
			nfuncs++;
		}
		if (add_hit(&funcs[k], r.vaddr, e->count)) {
			snprintf(err, errsz, "out of memory");
			rc = -1;
			goto out;
		}
	}
	if (nfuncs == 0) {
		if (kernel_only)
			snprintf(err, errsz, "%s: a kernel function; its code "
				 "needs --vmlinux", name);
		else
			snprintf(err, errsz, "%s: no samples in a function of "
				 "that name%s%s (see --by symbol)", name,
				 filters[0] ? " with " : "", filters);
		return -1;
	}
	qsort(funcs, nfuncs, sizeof(funcs[0]), cmp_func);
	if (filters[0])
		fprintf(out, "filters: %s\n", filters);
	for (size_t k = 0; k < nfuncs && !rc; k++) {
		qsort(funcs[k].hits, funcs[k].nhits, sizeof(struct hit),
		      cmp_hit);
		rc = print_func(out, s, &funcs[k], total, err, errsz);
	}
out:
	for (size_t k = 0; k < nfuncs; k++)
		free(funcs[k].hits);
	return rc;
}
