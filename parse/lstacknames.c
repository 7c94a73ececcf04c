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

/* A line "ID NAME" of len bytes into the lstack_name at entry: 1, 0 for
 * a line not so made, -1 when out of memory. */
static int parse_line(void *entry, char *line, size_t len, uint32_t lineno,
		      void *names)
{
	struct lstack_name *n = entry;
	char *end, *name;

	if (memchr(line, '\0', len) || line[0] < '0' || line[0] > '9')
		return 0;
	errno = 0;
	n->id = strtoull(line, &end, 10);
	if (errno || *end != ' ')
		return 0;
	name = end + 1;
	name[strcspn(name, "\r\n")] = '\0';
	if (!*name || strlen(name) > LSTACK_NAME_MAX)
		return 0;
	n->line = lineno;
	n->name = strtab_intern(names, name);
	return n->name == STRTAB_NOMEM ? -1 : 1;
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct lstack_name *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* By id alone (the entries' ids are distinct once read). */
static int cmp_id(const void *pa, const void *pb)
{
	const struct lstack_name *a = pa, *b = pb;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int same_id(const void *pa, const void *pb)
{
	return ((const struct lstack_name *)pa)->id ==
	       ((const struct lstack_name *)pb)->id;
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
		struct sidecar_entries e = {
			.size = sizeof(struct lstack_name), .parse = parse_line,
			.cmp = cmp_name, .same = same_id, .arg = names,
		};

		rc = sidecar_read(f, &e);
		fclose(f);
		file->v = e.v;
		file->n = e.n;
		file->bad = e.bad;
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
	const struct lstack_name key = { .id = id }, *found;

	if (!file)
		return STRTAB_NOMEM;
	found = file->n ? bsearch(&key, file->v, file->n, sizeof(key),
				  cmp_id) : NULL;
	return found ? found->name : 0;
}

void lstack_names_free(struct lstack_names *ln)
{
	for (size_t i = 0; i < ln->n; i++)
		free(ln->v[i].v);
	free(ln->v);
	ln->v = NULL;
	ln->n = ln->cap = 0;
}
