// SPDX-License-Identifier: GPL-2.0
/* dso: ELF objects through libelf and libdw; see dso.h. */
#include "dso.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <libiberty/demangle.h>

#include "array.h"
#include "debuginfo.h"

/* A symbol being collected, before duplicates are merged. */
struct raw_sym {
	uint64_t addr, size;
	uint32_t name;
	uint8_t bind;		/* STB_* */
};

static char *join(const char *root, const char *path)
{
	size_t n = strlen(root) + strlen(path) + 2;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", root, path[0] == '/' ? "" : "/",
			 path);
	return s;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw_sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* At one address: sized first, then global, weak, local. */
	if ((a->size != 0) != (b->size != 0))
		return a->size ? -1 : 1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

/* name in names, demangled if it is a C++ (Itanium ABI) name, as perf
 * shows it: "ns::Klass::method(int)". */
static uint32_t intern_symbol(struct strtab *names, const char *name)
{
	char *plain;
	uint32_t id;

	if (name[0] != '_' || name[1] != 'Z')
		return strtab_intern(names, name);
	plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	id = strtab_intern(names, plain ? plain : name);
	free(plain);
	return id;
}

/* Load the function symbols of scn (a SYMTAB or DYNSYM). 0 or -1 (nomem). */
static int load_symbols(struct dso *d, Elf *elf, Elf_Scn *scn,
			bool globals_only, struct strtab *names)
{
	struct raw_sym *raw = NULL, *grown;
	size_t nraw = 0, cap = 0, count, out = 0;
	Elf_Data *data;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	count = data->d_size / sh.sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		if (globals_only && GELF_ST_BIND(sym.st_info) == STB_LOCAL)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		grown = array_room(raw, &cap, nraw, sizeof(*grown), 1024);
		if (!grown)
			goto nomem;
		raw = grown;
		raw[nraw].addr = sym.st_value;
		raw[nraw].size = sym.st_size;
		raw[nraw].bind = GELF_ST_BIND(sym.st_info);
		raw[nraw].name = intern_symbol(names, name);
		if (raw[nraw].name == STRTAB_NOMEM)
			goto nomem;
		nraw++;
	}
	qsort(raw, nraw, sizeof(*raw), cmp_raw);
	d->syms = malloc((nraw ? nraw : 1) * sizeof(*d->syms));
	if (!d->syms)
		goto nomem;
	for (size_t i = 0; i < nraw; i++) {
		if (out && d->syms[out - 1].addr == raw[i].addr)
			continue;	/* an alias: the best one came first */
		d->syms[out].addr = raw[i].addr;
		d->syms[out].end = raw[i].size && raw[i].addr + raw[i].size >
			raw[i].addr ? raw[i].addr + raw[i].size : raw[i].addr;
		d->syms[out].name = raw[i].name;
		out++;
	}
	/* .symtab: an unsized symbol (assembly) reaches the next one. */
	for (size_t i = 0; !globals_only && i + 1 < out; i++)
		if (d->syms[i].end == d->syms[i].addr)
			d->syms[i].end = d->syms[i + 1].addr;
	d->nsyms = out;
	free(raw);
	return 0;
nomem:
	free(raw);
	return -1;
}

/* Does path have a ".." component (which could climb out of --symfs)? */
static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
	return false;
}

/* The separate debug file of d, opened on first use: its Elf or NULL. */
static Elf *debug_elf(struct dso *d, const char *symfs)
{
	if (!d->dbg_state) {
		d->dbg_fd = debuginfo_open(d->elf, d->path, d->build_id,
					   d->build_id_len, symfs);
		if (d->dbg_fd >= 0)
			d->dbg_elf = elf_begin(d->dbg_fd, ELF_C_READ_MMAP,
					       NULL);
		d->dbg_state = d->dbg_elf ? 1 : -1;
	}
	return d->dbg_elf;
}

/* A stripped d: the functions of its debug file's .symtab, if it has
 * one, instead of .dynsym's. 0, or -1 out of memory. */
static int debug_symbols(struct dso *d, const char *symfs,
			 struct strtab *names)
{
	Elf *dbg = debug_elf(d, symfs);
	Elf_Scn *scn = dbg ? find_section(dbg, SHT_SYMTAB) : NULL;
	struct dso_sym *dyn = d->syms;
	size_t ndyn = d->nsyms;
	int rc;

	if (!scn)
		return 0;
	d->syms = NULL;
	rc = load_symbols(d, dbg, scn, false, names);
	if (rc || !d->nsyms) {	/* an empty .symtab: keep .dynsym's */
		free(d->syms);
		d->syms = dyn;
		d->nsyms = ndyn;
		return rc;
	}
	free(dyn);
	d->dynsym_only = false;
	return 0;
}

int dso_open(struct dso *d, const char *path, const char *symfs,
	     struct strtab *names)
{
	const void *bid;
	ssize_t bid_len;
	size_t nph;
	Elf_Scn *scn;
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->dbg_fd = -1;
	d->path = strdup(path);
	d->real = symfs ? join(symfs, path) : strdup(path);
	if (!d->path || !d->real)
		return -1;
	d->status = REASON_FILE_MISSING;
	/* Under --symfs a session's path never leaves DIR. */
	if (!path[0] || (symfs && has_dotdot(path)))
		return 0;
	/* O_NONBLOCK: a FIFO named by a hostile file must not hang us. */
	d->fd = open(d->real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (d->fd < 0)
		return 0;
	d->status = REASON_NOT_ELF;
	if (fstat(d->fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	elf_version(EV_CURRENT);
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF)
		return 0;
	if (elf_getphdrnum(d->elf, &nph))
		return 0;
	d->segs = calloc(nph ? nph : 1, sizeof(*d->segs));
	if (!d->segs)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(d->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_filesz) {
			d->segs[d->nsegs].off = ph.p_offset;
			d->segs[d->nsegs].filesz = ph.p_filesz;
			d->segs[d->nsegs].vaddr = ph.p_vaddr;
			d->nsegs++;
		}
	}
	bid_len = dwelf_elf_gnu_build_id(d->elf, &bid);
	if (bid_len > 0 && (size_t)bid_len <= sizeof(d->build_id)) {
		memcpy(d->build_id, bid, (size_t)bid_len);
		d->build_id_len = (size_t)bid_len;
	}
	scn = find_section(d->elf, SHT_SYMTAB);
	if (!scn) {
		scn = find_section(d->elf, SHT_DYNSYM);
		d->dynsym_only = scn != NULL;
	}
	d->status = REASON_NONE;
	if (scn && load_symbols(d, d->elf, scn, d->dynsym_only, names))
		return -1;
	return d->dynsym_only ? debug_symbols(d, symfs, names) : 0;
}

/* A CFA of register + offset (libdw gives DW_OP_bregx or DW_OP_bregN);
 * DWARF's x86-64 registers: 6 is rbp, 7 rsp. */
static int cfa_rule(const Dwarf_Op *op)
{
	uint64_t reg = op->number;
	int64_t off = (int64_t)op->number2;

	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		reg = op->atom - DW_OP_breg0;
		off = (int64_t)op->number;
	} else if (op->atom != DW_OP_bregx) {
		return RULE_UNKNOWN;
	}
	if (reg == 6 && off == 16)
		return RULE_RBP;
	if (reg == 7)
		return off == 8 ? RULE_RSP8 : RULE_RSP;
	return RULE_UNKNOWN;
}

int dso_frame_rule(struct dso *d, uint64_t vaddr)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int rule = RULE_UNKNOWN;

	if (d->status != REASON_NONE)
		return RULE_UNKNOWN;
	if (!d->cfi_state) {
		d->cfi = dwarf_getcfi_elf(d->elf);
		d->cfi_state = d->cfi ? 1 : -1;
	}
	if (d->cfi_state < 0 || dwarf_cfi_addrframe(d->cfi, vaddr, &frame))
		return RULE_UNKNOWN;
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1)
		rule = cfa_rule(&ops[0]);
	free(frame);
	return rule;
}

void dso_close(struct dso *d)
{
	if (d->cfi)
		dwarf_cfi_end(d->cfi);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->dbg_elf)
		elf_end(d->dbg_elf);
	if (d->dbg_fd >= 0)
		close(d->dbg_fd);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d->segs);
	free(d->syms);
	free(d->path);
	free(d->real);
	memset(d, 0, sizeof(*d));
}

int dso_vaddr(const struct dso *d, uint64_t file_off, uint64_t *vaddr)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct dso_seg *s = &d->segs[i];

		if (file_off >= s->off && file_off - s->off < s->filesz) {
			*vaddr = file_off - s->off + s->vaddr;
			return 0;
		}
	}
	return -1;
}

enum dso_hit dso_lookup(const struct dso *d, uint64_t vaddr, size_t *i)
{
	size_t lo = 0, hi = d->nsyms;

	/* The last symbol at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return DSO_MISS;
	if (vaddr < d->syms[lo - 1].end) {
		*i = lo - 1;
		return DSO_SYMBOL;
	}
	/* A symbol nested in a larger one before it (rare: aliases). */
	for (size_t k = lo - 1, n = 0; k-- > 0 && n < 8; n++) {
		if (vaddr < d->syms[k].end) {
			*i = k;
			return DSO_SYMBOL;
		}
	}
	/* Code of a stripped object between two functions, or after its
	 * last one (before the end of its text: the IP was mapped). */
	if (d->dynsym_only) {
		*i = lo - 1;
		return DSO_BRACKET;
	}
	return DSO_MISS;
}

/* The DWARF of d (its own, or a separate debug file's), opened on first
 * use: whether there is any. */
static bool dso_dwarf(struct dso *d, const char *symfs)
{
	if (d->status != REASON_NONE)
		return false;
	if (d->dw_state == 0) {
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
		if (!d->dw && debug_elf(d, symfs))
			d->dw = dwarf_begin_elf(d->dbg_elf, DWARF_C_READ,
						NULL);
		d->dw_state = d->dw ? 1 : -1;
	}
	return d->dw_state > 0;
}

/* A file with DWARF of its own needs no debug file: none is looked for. */
int dso_debug_fd(struct dso *d, const char *symfs)
{
	dso_dwarf(d, symfs);
	return d->dbg_state > 0 ? d->dbg_fd : -1;
}

uint32_t dso_line(struct dso *d, uint64_t vaddr, const char *symfs,
		  struct strtab *names)
{
	Dwarf_Die cu;
	Dwarf_Line *line;
	const char *file;
	int lineno;
	char buf[4096];

	if (!dso_dwarf(d, symfs) || !dwarf_addrdie(d->dw, vaddr, &cu))
		return 0;
	line = dwarf_getsrc_die(&cu, vaddr);
	if (!line)
		return 0;
	file = dwarf_linesrc(line, NULL, NULL);
	if (!file || dwarf_lineno(line, &lineno) != 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s:%d", file, lineno);
	return strtab_intern(names, buf);
}

/* A string attribute of die, or of the declaration it stands for. */
static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

/* The frame of the function of scope die, executing line of file. */
static int scope_frame(Dwarf_Die *die, const char *file, int line,
		       struct strtab *names, struct dso_frame *f)
{
	const char *name = die_string(die, DW_AT_name);
	const char *decl = dwarf_decl_file(die);
	int start = 0;

	dwarf_decl_line(die, &start);
	f->func = name ? strtab_intern(names, name) : 0;
	f->file = decl || file ? strtab_intern(names, decl ? decl : file) : 0;
	f->line = line > 0 ? (uint32_t)line : 0;
	f->start_line = start > 0 ? (uint32_t)start : 0;
	return f->func == STRTAB_NOMEM || f->file == STRTAB_NOMEM ? -1 : 0;
}

/* Where the inlined subroutine die was called: *file and *line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file,
		      int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	Dwarf_Files *files;
	size_t n;

	*line = dwarf_attr(die, DW_AT_call_line, &a) &&
		!dwarf_formudata(&a, &v) && v <= INT32_MAX ? (int)v : 0;
	*file = NULL;
	if (dwarf_attr(die, DW_AT_call_file, &a) && !dwarf_formudata(&a, &v) &&
	    !dwarf_getsrcfiles(cu, &files, &n) && v < n)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

static bool is_function(Dwarf_Die *die)
{
	const int tag = dwarf_tag(die);

	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
}

/*
 * The innermost function's DIE at vaddr (inlined or not) and the DIEs
 * that contain it, into *scopes (malloc'd): how many, 0 for none.
 * dwarf_getscopes() goes on from an inlined subroutine to its abstract
 * definition's scopes, dwarf_getscopes_die() to those it is inlined in.
 */
static int innermost_function(Dwarf_Die *cu, uint64_t vaddr,
			      Dwarf_Die **scopes)
{
	int n = dwarf_getscopes(cu, vaddr, scopes), i = 0;
	Dwarf_Die die;

	while (i < n && !is_function(&(*scopes)[i]))
		i++;
	if (i >= n) {
		free(*scopes);
		*scopes = NULL;
		return 0;
	}
	die = (*scopes)[i];
	free(*scopes);
	*scopes = NULL;
	n = dwarf_getscopes_die(&die, scopes);
	return n > 0 ? n : 0;
}

int dso_frames(struct dso *d, uint64_t vaddr, const char *symfs,
	       struct strtab *names, struct dso_frame *out, size_t max)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *line;
	const char *file;
	int lineno = 0, nscopes;
	size_t n = 0;

	if (!max || !dso_dwarf(d, symfs) || !dwarf_addrdie(d->dw, vaddr, &cu))
		return 0;
	line = dwarf_getsrc_die(&cu, vaddr);
	file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	if (file && dwarf_lineno(line, &lineno))
		lineno = 0;
	nscopes = innermost_function(&cu, vaddr, &scopes);
	for (int i = 0; i < nscopes && n < max; i++) {
		if (!is_function(&scopes[i]))
			continue;	/* a lexical block, the unit */
		if (scope_frame(&scopes[i], file, lineno, names, &out[n++])) {
			free(scopes);
			return -1;
		}
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
		call_site(&cu, &scopes[i], &file, &lineno);
	}
	free(scopes);
	if (n == 0 && file) {	/* no function: the line alone */
		out[0] = (struct dso_frame){
			.file = strtab_intern(names, file),
			.line = lineno > 0 ? (uint32_t)lineno : 0,
		};
		if (out[n++].file == STRTAB_NOMEM)
			return -1;
	}
	return (int)n;
}

int dso_read(const struct dso *d, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct dso_seg *s = &d->segs[i];
		ssize_t n;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz ||
		    len > s->filesz - (vaddr - s->vaddr))
			continue;
		n = pread(d->fd, buf, len, (off_t)(s->off + vaddr - s->vaddr));
		return n == (ssize_t)len ? 0 : -1;
	}
	return -1;
}

int dso_find_any(const struct dso *d, const char *name, uint64_t *addr,
		 uint64_t *size)
{
	static const Elf64_Word types[] = { SHT_SYMTAB, SHT_DYNSYM };

	if (d->status != REASON_NONE)
		return -1;
	for (size_t t = 0; t < 2; t++) {
		Elf_Scn *scn = find_section(d->elf, types[t]);
		Elf_Data *data;
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < data->d_size / sh.sh_entsize;
		     i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(d->elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*addr = sym.st_value;
				*size = sym.st_size;
				return 0;
			}
		}
	}
	return -1;
}

size_t dso_find_functions(const struct dso *d, const struct strtab *names,
			  const char *name, size_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nsyms && n < max; i++)
		if (!strcmp(strtab_get(names, d->syms[i].name), name))
			out[n++] = i;
	return n;
}
