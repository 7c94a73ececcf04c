// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_table: an ELF file's CFI as a sleepy unwind table.
 *
 * Every address of the file's executable sections is asked of libdw's
 * CFI (dwarf_cfi_addrframe()), which gives the rule and the range it
 * holds for; the rule becomes one of the table's few distinct rules, and
 * the range a row. A rule the tick cannot apply (a DWARF expression, a
 * register other than rsp or rbp, a signal frame) is marked; bytes no
 * CFI covers get the rule "none". Consecutive rows of one rule merge.
 */
#include <errno.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sleepy.h>

#include "unwind_table.h"

#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16
#define RULE_SLOTS	(1u << 17)	/* > 2 * SLEEPY_UNWIND_MAX_RULES */

struct row {
	uint64_t off;		/* file offset */
	uint32_t rule;
};

/* The table as it grows. */
struct builder {
	struct sleepy_unwind_rule *rules;
	uint32_t nr_rules;
	uint32_t *slots;	/* rule index + 1, by hash; 0: empty */
	struct row *rows;
	size_t nr_rows, cap_rows;
	uint64_t marked, none;	/* bytes */
	char *err;
	size_t errlen;
};

static int fail(struct builder *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t rule_hash(const struct sleepy_unwind_rule *r)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p = (const void *)r;

	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ h >> 32);
}

/* The index of rule r among the table's rules, added if new; -1: full. */
static int64_t rule_index(struct builder *b, const struct sleepy_unwind_rule *r)
{
	uint32_t i = rule_hash(r) & (RULE_SLOTS - 1);

	for (; b->slots[i]; i = (i + 1) & (RULE_SLOTS - 1))
		if (!memcmp(&b->rules[b->slots[i] - 1], r, sizeof(*r)))
			return b->slots[i] - 1;
	if (b->nr_rules == SLEEPY_UNWIND_MAX_RULES)
		return -1;
	b->rules[b->nr_rules] = *r;
	b->slots[i] = ++b->nr_rules;
	return b->nr_rules - 1;
}

/* A row for rule r from file offset off on, unless the last has r. */
static int add_row(struct builder *b, uint64_t off,
		   const struct sleepy_unwind_rule *r)
{
	int64_t k = rule_index(b, r);

	if (k < 0)
		return fail(b, "more than %u distinct unwind rules",
			    SLEEPY_UNWIND_MAX_RULES);
	if (b->nr_rows && b->rows[b->nr_rows - 1].rule == k)
		return 0;
	if (b->nr_rows && b->rows[b->nr_rows - 1].off == off) {
		b->rows[b->nr_rows - 1].rule = k;
		return 0;
	}
	if (b->nr_rows == b->cap_rows) {
		size_t cap = b->cap_rows ? 2 * b->cap_rows : 4096;
		struct row *p = realloc(b->rows, cap * sizeof(*p));

		if (!p)
			return fail(b, "out of memory");
		b->rows = p;
		b->cap_rows = cap;
	}
	b->rows[b->nr_rows++] = (struct row){ off, (uint32_t)k };
	return 0;
}

/* Where a register is saved: CFA + *off (libdw's offset(N) rule). */
static bool saved_at(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (!n || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (n != 2 || ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/* The CFA as rsp or rbp plus an offset. */
static bool cfa_of(const Dwarf_Op *ops, size_t n, struct sleepy_unwind_rule *r)
{
	uint64_t reg;
	int64_t off;

	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if ((reg != REG_RSP && reg != REG_RBP) || off <= 0 ||
	    off > SLEEPY_UNWIND_MAX_CFA)
		return false;
	r->cfa = reg == REG_RSP ? SLEEPY_UNWIND_CFA_RSP : SLEEPY_UNWIND_CFA_RBP;
	r->cfa_off = (int32_t)off;
	return true;
}

/*
 * Whether off is a place below the CFA the kernel takes a save at: the
 * return address's above the stack pointer (ra), rbp's anywhere below
 * the CFA (an epilogue that popped it keeps its rule).
 */
static bool save_ok(int64_t off, int32_t cfa_off, bool ra)
{
	return off < 0 && !(off % 8) && (!ra || -off <= cfa_off) &&
	       -off <= SLEEPY_UNWIND_MAX_SAVE;
}

/* The rbp part of frame f's rule r; false: it needs an expression. */
static bool rbp_of(Dwarf_Frame *f, struct sleepy_unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;

	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &n))
		return false;
	if (!n)		/* same value, or undefined: left as it is */
		return true;
	if (!saved_at(ops, n, &off) || !save_ok(off, r->cfa_off, false))
		return false;
	r->rbp = SLEEPY_UNWIND_RBP_SAVED;
	r->rbp_off = (int16_t)off;
	return true;
}

/* Frame f's rule into r: the CFA, the return address and rbp. */
static void frame_rule(Dwarf_Frame *f, struct sleepy_unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	bool signal;
	int64_t ra;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (dwarf_frame_info(f, &start, &end, &signal) != REG_RA || signal ||
	    dwarf_frame_register(f, REG_RA, mem, &ops, &n))
		goto marked;
	if (!n && ops == mem) {		/* undefined: the outermost frame */
		r->cfa = SLEEPY_UNWIND_END;
		return;
	}
	if (!saved_at(ops, n, &ra) || dwarf_frame_cfa(f, &ops, &n) ||
	    !cfa_of(ops, n, r) || !save_ok(ra, r->cfa_off, true))
		goto marked;
	r->ra_off = (int16_t)ra;
	if (rbp_of(f, r))
		return;
marked:
	memset(r, 0, sizeof(*r));
	r->cfa = SLEEPY_UNWIND_MARKED;
}

/*
 * The rows of [a, end), addresses the file has at offset a + delta. An
 * address no CFI covers is asked again one byte on: such gaps are the
 * padding between functions, and code without CFI.
 */
static int scan(struct builder *b, Dwarf_CFI *cfi, GElf_Addr a, GElf_Addr end,
		int64_t delta)
{
	const struct sleepy_unwind_rule none = { .cfa = SLEEPY_UNWIND_NONE };
	struct sleepy_unwind_rule r;
	Dwarf_Addr s, e;
	Dwarf_Frame *f;
	bool signal;

	while (a < end) {
		if (dwarf_cfi_addrframe(cfi, a, &f)) {
			if (add_row(b, a + delta, &none))
				return -1;
			b->none++;
			a++;
			continue;
		}
		frame_rule(f, &r);
		dwarf_frame_info(f, &s, &e, &signal);
		free(f);
		e = e > a && e < end ? e : end;
		if (r.cfa == SLEEPY_UNWIND_MARKED)
			b->marked += e - a;
		if (add_row(b, a + delta, &r))
			return -1;
		a = e;
	}
	return 0;
}

#define MAX_SECTIONS	64

/* An executable section's addresses. */
struct span {
	GElf_Addr lo, hi;
};

/* The executable PT_LOAD segment with the lowest address: its header. */
static int exec_segment(Elf *elf, GElf_Phdr *seg)
{
	size_t n, i;
	GElf_Phdr ph;
	int found = 0;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		if (!found || ph.p_vaddr < seg->p_vaddr)
			*seg = ph;
		found = 1;
	}
	return found ? 0 : -1;
}

/*
 * The executable sections inside seg, in address order, into s (at most
 * MAX_SECTIONS); the whole segment if the file has no section headers.
 */
static size_t exec_sections(Elf *elf, const GElf_Phdr *seg, struct span *s)
{
	GElf_Addr end = seg->p_vaddr + seg->p_filesz;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t n = 0;

	while ((scn = elf_nextscn(elf, scn)) && n < MAX_SECTIONS) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size ||
		    sh.sh_addr < seg->p_vaddr || sh.sh_addr >= end)
			continue;
		s[n].lo = sh.sh_addr;
		s[n].hi = sh.sh_addr + sh.sh_size < end ?
			  sh.sh_addr + sh.sh_size : end;
		/* Sections come in address order; keep them so. */
		if (n && s[n].lo < s[n - 1].hi)
			continue;
		n++;
	}
	if (!n) {
		s[0] = (struct span){ seg->p_vaddr, end };
		n = 1;
	}
	return n;
}

/* The size of the section named name, or 0. */
static uint64_t section_size(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstr;
	GElf_Shdr sh;
	const char *s;

	if (elf_getshdrstrndx(elf, &shstr))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(elf, shstr, sh.sh_name);
		if (s && !strcmp(s, name))
			return sh.sh_size;
	}
	return 0;
}

/* The table's bytes from b's rows and rules, for file offsets [lo, hi). */
static int emit(struct builder *b, uint64_t lo, uint64_t hi, int vdso,
		struct uw_table *t)
{
	const uint64_t mask = (1u << SLEEPY_UNWIND_BLOCK_SHIFT) - 1;
	uint32_t nb = (uint32_t)((hi - lo + mask) >> SLEEPY_UNWIND_BLOCK_SHIFT);
	struct sleepy_unwind_table *h;
	struct sleepy_unwind_row *rows;
	uint32_t *index, blk = 0;

	t->size = sizeof(*h) + b->nr_rules * sizeof(*b->rules) +
		  (nb + 1) * sizeof(*index) + b->nr_rows * sizeof(*rows);
	h = t->data = calloc(1, t->size);
	if (!h)
		return fail(b, "out of memory");
	*h = (struct sleepy_unwind_table){
		.magic = SLEEPY_UNWIND_MAGIC, .version = SLEEPY_UNWIND_VERSION,
		.flags = vdso ? SLEEPY_UNWIND_T_VDSO : 0,
		.nr_rules = b->nr_rules, .nr_rows = (uint32_t)b->nr_rows,
		.nr_blocks = nb, .lo = lo, .hi = hi };
	memcpy(h + 1, b->rules, b->nr_rules * sizeof(*b->rules));
	index = (uint32_t *)((struct sleepy_unwind_rule *)(h + 1) + b->nr_rules);
	rows = (struct sleepy_unwind_row *)(index + nb + 1);
	for (size_t i = 0; i < b->nr_rows; i++) {
		uint64_t rel = b->rows[i].off - lo;

		while (blk <= rel >> SLEEPY_UNWIND_BLOCK_SHIFT)
			index[blk++] = (uint32_t)i;
		rows[i] = (struct sleepy_unwind_row){
			(uint16_t)(rel & mask), (uint16_t)b->rows[i].rule };
	}
	while (blk <= nb)
		index[blk++] = (uint32_t)b->nr_rows;
	t->nr_rows = (uint32_t)b->nr_rows;
	t->nr_rules = b->nr_rules;
	t->text_bytes = hi - lo;
	return 0;
}

/* The CFI of elf: .eh_frame's, else .debug_frame's (*dw to end). */
static Dwarf_CFI *cfi_of(Elf *elf, Dwarf **dw, struct uw_table *t)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);

	*dw = NULL;
	if (cfi) {
		t->cfi_section = ".eh_frame";
		t->cfi_bytes = section_size(elf, ".eh_frame");
		return cfi;
	}
	*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	cfi = *dw ? dwarf_getcfi(*dw) : NULL;
	t->cfi_section = ".debug_frame";
	t->cfi_bytes = section_size(elf, ".debug_frame");
	return cfi;
}

/* The rows of every executable section of seg, then the table. */
static int build(struct builder *b, Elf *elf, Dwarf_CFI *cfi,
		 const GElf_Phdr *seg, int vdso, struct uw_table *t)
{
	const struct sleepy_unwind_rule none = { .cfa = SLEEPY_UNWIND_NONE };
	int64_t delta = (int64_t)seg->p_offset - (int64_t)seg->p_vaddr;
	struct span s[MAX_SECTIONS];
	size_t n = exec_sections(elf, seg, s), i;
	uint64_t hi = s[n - 1].hi + delta;

	for (i = 0; i < n; i++)
		if (scan(b, cfi, s[i].lo, s[i].hi, delta) ||
		    add_row(b, s[i].hi + delta, &none))
			return -1;
	/* The last row, "none" from hi on, is past the table. */
	if (b->nr_rows > 1 && b->rows[b->nr_rows - 1].off == hi)
		b->nr_rows--;
	t->marked_bytes = b->marked;
	t->none_bytes = b->none;
	return emit(b, b->rows[0].off, hi, vdso, t);
}

/* The table of elf (vdso: the vDSO's image). */
static int table_of_elf(Elf *elf, int vdso, struct uw_table *t, char *err,
			size_t errlen)
{
	struct builder b = { .err = err, .errlen = errlen };
	Dwarf_CFI *cfi;
	GElf_Phdr seg = { 0 };
	Dwarf *dw;
	int ret;

	memset(t, 0, sizeof(*t));
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		return fail(&b, "not a 64-bit ELF file");
	if (exec_segment(elf, &seg))
		return fail(&b, "no executable segment");
	cfi = cfi_of(elf, &dw, t);
	if (!cfi) {
		if (dw)
			dwarf_end(dw);
		return fail(&b, "no .eh_frame or .debug_frame");
	}
	b.rules = calloc(SLEEPY_UNWIND_MAX_RULES, sizeof(*b.rules));
	b.slots = calloc(RULE_SLOTS, sizeof(*b.slots));
	ret = b.rules && b.slots ? build(&b, elf, cfi, &seg, vdso, t) :
				   fail(&b, "out of memory");
	free(b.rules);
	free(b.slots);
	free(b.rows);
	if (dw)
		dwarf_end(dw);
	else
		dwarf_cfi_end(cfi);
	return ret;
}

int uw_table_of_fd(int fd, struct uw_table *t, char *err, size_t n)
{
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		snprintf(err, n, "%s", elf_errmsg(-1));
		return -1;
	}
	ret = table_of_elf(elf, 0, t, err, n);
	elf_end(elf);
	return ret;
}

int uw_table_of_image(const void *mem, size_t size, struct uw_table *t,
		      char *err, size_t n)
{
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)mem, size);
	if (!elf) {
		snprintf(err, n, "%s", elf_errmsg(-1));
		return -1;
	}
	ret = table_of_elf(elf, 1, t, err, n);
	elf_end(elf);
	return ret;
}

/* The build-id note's bytes in data, as hex, if it is one. */
static int note_build_id(Elf_Data *data, char *hex, size_t n)
{
	size_t off = 0, name, desc;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name, &desc)) > 0) {
		const unsigned char *d = (const unsigned char *)data->d_buf + desc;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name, "GNU", 4) ||
		    !nh.n_descsz || 2 * nh.n_descsz + 1 > n)
			continue;
		for (size_t i = 0; i < nh.n_descsz; i++)
			sprintf(hex + 2 * i, "%02x", d[i]);
		return 0;
	}
	return -1;
}

int uw_build_id(int fd, char *hex, size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret = -1;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && ret && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			ret = note_build_id(elf_getdata(scn, NULL), hex, n);
	elf_end(elf);
	return ret;
}

void uw_table_free(struct uw_table *t)
{
	free(t->data);
	t->data = NULL;
}
