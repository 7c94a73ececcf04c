// SPDX-License-Identifier: GPL-2.0
/* sidecar: the files processes leave for the profiler; see sidecar.h. */
#include "sidecar.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"

FILE *sidecar_open(const char *session, const char *symfs,
		   const struct sidecar_name *name, uint32_t pid, char *path,
		   size_t size)
{
	struct stat st;
	FILE *f = NULL;
	int fd = -1;

	if (session) {
		snprintf(path, size, "%s.%s%" PRIu32 "%s", session,
			 name->prefix, pid, name->suffix);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0) {
		snprintf(path, size, "%s/tmp/%s%" PRIu32 "%s",
			 symfs ? symfs : "", name->tmp_prefix, pid,
			 name->suffix);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* Of each run of entries of one key, the last. */
static void keep_last(struct sidecar_entries *e)
{
	char *v = e->v;
	size_t out = 0;

	for (size_t i = 0; i < e->n; i++) {
		if (out && e->same(v + (out - 1) * e->size, v + i * e->size))
			out--;
		if (out != i)
			memcpy(v + out * e->size, v + i * e->size, e->size);
		out++;
	}
	e->n = out;
}

int sidecar_read(FILE *f, struct sidecar_entries *e)
{
	char *line = NULL;
	size_t len = 0, cap = 0;
	ssize_t got;
	int rc = 0;
	void *v;

	while (!rc && (got = getline(&line, &len, f)) > 0) {
		v = array_room(e->v, &cap, e->n, e->size, 64);
		if (!v) {
			rc = -1;
			break;
		}
		e->v = v;
		rc = e->parse((char *)e->v + e->n * e->size, line, (size_t)got,
			      (uint32_t)e->n, e->arg);
		if (rc > 0)
			e->n++;
		else if (rc == 0)
			e->bad++;
		rc = rc < 0 ? -1 : 0;
	}
	free(line);
	if (rc)
		return -1;
	qsort(e->v, e->n, e->size, e->cmp);
	keep_last(e);
	return 0;
}
