// SPDX-License-Identifier: GPL-2.0
/* lstacknames: logical frame names from names files; see lstacknames.h. */
#include "lstacknames.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "session.h"
#include "sidecar.h"

static const struct sidecar_name names_file = {
	"lstack-", "sleepy-lstack-", ".names",
};

/* A line "ID NAME" of len bytes into *n; false for a line not so made. */
static bool parse_line(char *line, size_t len, struct lstack_name *n,
		       struct strtab *names, bool *nomem)
{
	char *end, *name;

	if (memchr(line, '\0', len) || line[0] < '0' || line[0] > '9')
		return false;
	errno = 0;
	n->id = strtoull(line, &end, 10);
	if (errno || *end != ' ')
		return false;
	name = end + 1;
	name[strcspn(name, "\r\n")] = '\0';
	if (!*name || strlen(name) > LSTACK_NAME_MAX)
		return false;
	n->name = strtab_intern(names, name);
	*nomem = n->name == STRTAB_NOMEM;
	return !*nomem;
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct lstack_name *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Read f into file; 0, or -1 when out of memory. */
static int read_names(struct lstack_names_file *file, FILE *f,
		      struct strtab *names)
{
	char *line = NULL;
	size_t len = 0, cap = 0, out = 0;
	struct lstack_name n, *v;
	bool nomem = false;
	ssize_t got;

	while ((got = getline(&line, &len, f)) > 0) {
		if (!parse_line(line, (size_t)got, &n, names, &nomem)) {
			if (nomem)
				break;
			file->bad++;
			continue;
		}
		v = array_room(file->v, &cap, file->n, sizeof(*v), 64);
		if (!v) {
			nomem = true;
			break;
		}
		file->v = v;
		n.line = (uint32_t)file->n;
		file->v[file->n++] = n;
	}
	free(line);
	if (nomem)
		return -1;
	qsort(file->v, file->n, sizeof(*file->v), cmp_name);
	for (size_t i = 0; i < file->n; i++) {
		if (out && file->v[out - 1].id == file->v[i].id)
			out--;	/* the same id again: the later line */
		file->v[out++] = file->v[i];
	}
	file->n = out;
	return 0;
}

const struct lstack_names_file *lstack_names_get(struct lstack_names *ln,
						 uint32_t pid,
						 struct strtab *names)
{
	struct lstack_names_file *file, *v;
	char path[PATH_MAX];
	FILE *f;
	int rc;

	for (size_t i = 0; i < ln->n; i++)
		if (ln->v[i].pid == pid)
			return &ln->v[i];
	v = array_room(ln->v, &ln->cap, ln->n, sizeof(*v), 4);
	if (!v)
		return NULL;
	ln->v = v;
	file = &ln->v[ln->n];
	*file = (struct lstack_names_file){ .pid = pid };
	f = sidecar_open(ln->session, ln->symfs, &names_file, pid, path,
			 sizeof(path));
	if (f) {
		rc = read_names(file, f, names);
		fclose(f);
		if (rc) {
			free(file->v);
			return NULL;
		}
		file->found = true;
		if (file->bad)
			session_warn(ln->file, "%s: %zu bad line%s skipped",
				     path, file->bad, file->bad == 1 ? "" : "s");
	}
	return &ln->v[ln->n++];
}

uint32_t lstack_name(struct lstack_names *ln, uint32_t pid, uint64_t id,
		     struct strtab *names)
{
	const struct lstack_names_file *file = lstack_names_get(ln, pid,
								names);
	size_t lo = 0, hi;

	if (!file)
		return STRTAB_NOMEM;
	hi = file->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (file->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < file->n && file->v[lo].id == id ? file->v[lo].name : 0;
}

void lstack_names_free(struct lstack_names *ln)
{
	for (size_t i = 0; i < ln->n; i++)
		free(ln->v[i].v);
	free(ln->v);
	ln->v = NULL;
	ln->n = ln->cap = 0;
}
