// SPDX-License-Identifier: GPL-2.0
/* ksyms: kernel symbols from kallsyms or vmlinux; see ksyms.h. */
#include "ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#define LINE_MAX_LEN 1024

static int cmp_ksym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* At one address, a real symbol before an end marker. */
	return (a->name == KSYM_END) - (b->name == KSYM_END);
}

static bool is_end_marker(const char *name)
{
	return !strcmp(name, "_etext") || !strcmp(name, "_einittext") ||
		!strcmp(name, "__irqentry_text_end") ||
		!strcmp(name, "__entry_text_end");
}

/* Forget the symbols read so far. */
static void drop_ksyms(struct ksyms *k)
{
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

/*
 * Open a kallsyms copy, a regular file only (not a FIFO or a device: open
 * without blocking, then check). Returns the stream, or NULL with *rc 0
 * (an optional file that is not there: k->why says so), -1 (nomem) or -2
 * (err set).
 */
static FILE *open_kallsyms(struct ksyms *k, const char *path, bool required,
			   char *err, size_t errsz, int *rc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	FILE *f;

	*rc = required ? -2 : 0;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		if (!required)
			snprintf(k->why, sizeof(k->why), "%s: not a regular "
				 "file", path);
		else
			snprintf(err, errsz, "%s: not a regular file", path);
		return NULL;
	}
	if (fd < 0) {
		if (required)
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
		else
			snprintf(k->why, sizeof(k->why), "no %s", path);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		*rc = -1;
	}
	return f;
}

/* A kallsyms file being read. */
struct kallsyms_in {
	struct ksyms *k;
	struct strtab *names;
	const char *path, *release;
	size_t cap, lineno, nonzero;
	uint32_t kernel_dso;
	char *err;
	size_t errsz;
};

/* A function symbol at addr, in mod ("[name]") or the kernel. */
static int add_ksym(struct kallsyms_in *in, uint64_t addr, const char *name,
		    const char *mod)
{
	struct ksyms *k = in->k;
	struct ksym *s = array_room(k->v, &in->cap, k->n, sizeof(*s), 4096);

	if (!s)
		return -1;
	k->v = s;
	s = &k->v[k->n];
	s->addr = addr;
	s->dso = in->kernel_dso;
	if (mod && *mod == '[') {
		s->dso = strtab_intern(in->names, mod);
		if (s->dso == STRTAB_NOMEM)
			return -1;
	}
	if (is_end_marker(name)) {
		s->name = KSYM_END;
	} else {
		s->name = strtab_intern(in->names, name);
		if (s->name == STRTAB_NOMEM)
			return -1;
	}
	k->n++;
	return 0;
}

/*
 * One line (its end of line removed): 0, 1 for a "# release" comment
 * naming another release (k->why set), -1 (nomem) or -2 (err set).
 */
static int kallsyms_line(struct kallsyms_in *in, char *line)
{
	char *end, type, *name, *mod, rel[80];
	uint64_t addr;

	if (line[0] == '\0')
		return 0;
	if (line[0] == '#') {
		if (in->release && in->release[0] &&
		    sscanf(line, "# release %79s", rel) == 1 &&
		    strcmp(rel, in->release) != 0) {
			snprintf(in->k->why, sizeof(in->k->why), "of kernel "
				 "%s, not %s: %s", rel, in->release, in->path);
			return 1;
		}
		return 0;
	}
	errno = 0;
	addr = strtoull(line, &end, 16);
	if (end == line || errno || *end != ' ' || !end[1] ||
	    end[2] != ' ' || !end[3]) {
		snprintf(in->err, in->errsz, "%s: line %zu: not \"ADDRESS "
			 "TYPE NAME [MODULE]\"", in->path, in->lineno);
		return -2;
	}
	type = end[1];
	name = end + 3;
	mod = strpbrk(name, " \t");
	if (mod) {
		*mod++ = '\0';
		while (*mod == ' ' || *mod == '\t')
			mod++;
	}
	if (addr)
		in->nonzero++;
	if (type != 'T' && type != 't' && type != 'W' && type != 'w')
		return 0;
	return add_ksym(in, addr, name, mod);
}

/* Every line of f: 0, 1 (another release), -1 or -2 (err set). */
static int kallsyms_lines(struct kallsyms_in *in, FILE *f)
{
	char line[LINE_MAX_LEN + 2];
	int rc = 0;

	while (!rc && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		in->lineno++;
		if (len > LINE_MAX_LEN) {
			snprintf(in->err, in->errsz, "%s: line %zu: longer "
				 "than %d bytes", in->path, in->lineno,
				 LINE_MAX_LEN);
			return -2;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		rc = kallsyms_line(in, line);
	}
	if (!rc && ferror(f)) {
		snprintf(in->err, in->errsz, "%s: %s", in->path,
			 strerror(errno));
		return -2;
	}
	return rc;
}

/* 0, -1 (nomem) or -2 (err set). */
static int load_kallsyms(struct ksyms *k, const char *path,
			 const char *release, struct strtab *names,
			 bool required, char *err, size_t errsz)
{
	struct kallsyms_in in = {
		.k = k, .names = names, .path = path, .release = release,
		.err = err, .errsz = errsz,
	};
	int rc;
	FILE *f = open_kallsyms(k, path, required, err, errsz, &rc);

	if (!f)
		return rc;
	in.kernel_dso = strtab_intern(names, "[kernel.kallsyms]");
	rc = in.kernel_dso == STRTAB_NOMEM ? -1 : kallsyms_lines(&in, f);
	fclose(f);
	if (rc == 1 || (rc == 0 && in.nonzero == 0)) {
		drop_ksyms(k);
		if (rc == 0)
			snprintf(k->why, sizeof(k->why), "addresses all zero "
				 "(kptr_restrict): %s", path);
		return 0;
	}
	if (rc)
		return rc;
	qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	k->source = path;
	return 0;
}

/* Whether the vmlinux's linux_banner names release ("" if unknown). */
static bool banner_matches(const struct dso *d, const char *release,
			   char *found, size_t foundsz)
{
	char buf[256], *p;
	uint64_t addr, size;

	found[0] = '\0';
	if (!release || !release[0] ||
	    dso_find_any(d, "linux_banner", &addr, &size))
		return true;	/* cannot tell */
	if (size == 0 || size >= sizeof(buf))
		size = sizeof(buf) - 1;
	if (dso_read(d, addr, buf, size))
		return true;
	buf[size] = '\0';
	if (strncmp(buf, "Linux version ", 14) != 0)
		return true;
	p = buf + 14;
	snprintf(found, foundsz, "%.*s", (int)strcspn(p, " "), p);
	return !strcmp(found, release);
}

int ksyms_load(struct ksyms *k, const char *kallsyms, const char *vmlinux,
	       const char *sidecar, const char *release, const char *symfs,
	       struct strtab *names, char *err, size_t errsz)
{
	memset(k, 0, sizeof(*k));
	if (kallsyms)
		return load_kallsyms(k, kallsyms, release, names, true, err,
				     errsz);
	if (vmlinux) {
		char found[80];

		k->vmlinux = calloc(1, sizeof(*k->vmlinux));
		if (!k->vmlinux || dso_open(k->vmlinux, vmlinux, NULL, names))
			return -1;
		(void)symfs;
		if (k->vmlinux->status != REASON_NONE) {
			snprintf(err, errsz, "%s: %s", vmlinux,
				 k->vmlinux->status == REASON_FILE_MISSING ?
				 "cannot open it" : "not an ELF file");
			return -2;
		}
		k->vmlinux_dso = strtab_intern(names, "[kernel.kallsyms]");
		if (k->vmlinux_dso == STRTAB_NOMEM)
			return -1;
		if (!banner_matches(k->vmlinux, release, found,
				    sizeof(found))) {
			snprintf(k->why, sizeof(k->why), "of kernel %s, not "
				 "%s: %s", found, release, vmlinux);
			return 0;
		}
		k->source = vmlinux;
		return 0;
	}
	if (sidecar)
		return load_kallsyms(k, sidecar, release, names, false, err,
				     errsz);
	snprintf(k->why, sizeof(k->why), "no --kallsyms or --vmlinux given");
	return 0;
}

void ksyms_free(struct ksyms *k)
{
	if (k->vmlinux) {
		dso_close(k->vmlinux);
		free(k->vmlinux);
	}
	free(k->v);
	memset(k, 0, sizeof(*k));
}

int ksyms_lookup(const struct ksyms *k, uint64_t ip, uint32_t *name,
		 uint32_t *dso, uint64_t *start)
{
	size_t lo = 0, hi = k->n;

	if (!k->source)
		return -1;
	if (k->vmlinux) {
		size_t i;

		if (dso_lookup(k->vmlinux, ip, &i) != DSO_SYMBOL)
			return -1;
		*name = k->vmlinux->syms[i].name;
		*dso = k->vmlinux_dso;
		*start = k->vmlinux->syms[i].addr;
		return 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	{
		const struct ksym *s = &k->v[lo - 1];

		if (s->name == KSYM_END || ip - s->addr >= KSYMS_MAX_SPAN)
			return -1;
		/* Several symbols at one address: the first (not a marker). */
		while (s > k->v && s[-1].addr == s->addr &&
		       s[-1].name != KSYM_END)
			s--;
		*name = s->name;
		*dso = s->dso;
		*start = s->addr;
	}
	return 0;
}
