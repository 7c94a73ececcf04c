// SPDX-License-Identifier: GPL-2.0
/* archive: the session's files copied by build-id; see archive.h. */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfo.h"

struct archiver {
	const char *dir;
	const char *symfs;
	struct archive_stats *st;
	char *err;
	size_t errlen;
};

static int fail(struct archiver *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, a->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* mkdir, where an existing folder is fine. */
static int make_dir(struct archiver *a, const char *path)
{
	struct stat st;

	if (!mkdir(path, 0755))
		return 0;
	if (errno == EEXIST && !stat(path, &st) && S_ISDIR(st.st_mode))
		return 0;
	if (errno == EEXIST)
		errno = ENOTDIR;
	return fail(a, "--archive: %s: %s", path, strerror(errno));
}

/* All of the file at fd into out; 0, or -1 with errno. */
static int copy_fd(int fd, int out, uint64_t *bytes)
{
	char buf[1 << 16];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0)
				return -1;
			done += w;
		}
		off += n;
	}
	*bytes += (uint64_t)off;
	return n < 0 ? -1 : 0;
}

/* The file at fd as path, written whole to a temporary name and renamed,
 * or left as it is if path exists. */
static int store(struct archiver *a, int fd, const char *path)
{
	char tmp[PATH_MAX + 16];
	uint64_t bytes = 0;
	int out, saved;

	if (!access(path, F_OK))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return fail(a, "--archive: %s: %s", tmp, strerror(errno));
	if (copy_fd(fd, out, &bytes) || fsync(out) || close(out)) {
		saved = errno;
		close(out);
		unlink(tmp);
		return fail(a, "--archive: %s: %s", path, strerror(saved));
	}
	if (rename(tmp, path)) {
		saved = errno;
		unlink(tmp);
		return fail(a, "--archive: %s: %s", path, strerror(saved));
	}
	a->st->copied++;
	a->st->bytes += bytes;
	return 0;
}

/* d and its debug file into the archive. */
static int archive_dso(struct archiver *a, struct dso *d)
{
	char rel[200], path[PATH_MAX], sub[PATH_MAX];
	int dbg;

	d->archived = true;
	if (d->build_id_len < 2) {
		a->st->no_build_id++;
		return 0;
	}
	debuginfo_build_id_path(rel, sizeof(rel), d->build_id,
				d->build_id_len, "");
	if ((size_t)snprintf(path, sizeof(path), "%s%s.debug", a->dir, rel) >=
	    sizeof(path))
		return fail(a, "--archive: %s: path too long", a->dir);
	snprintf(sub, sizeof(sub), "%s/.build-id", a->dir);
	if (make_dir(a, sub))
		return -1;
	snprintf(sub, sizeof(sub), "%s/.build-id/%02x", a->dir,
		 d->build_id[0]);
	if (make_dir(a, sub))
		return -1;
	a->st->objects++;
	snprintf(path, sizeof(path), "%s%s", a->dir, rel);
	if (store(a, d->fd, path))
		return -1;
	dbg = dso_debug_fd(d, a->symfs);
	if (dbg < 0)
		return 0;
	a->st->debug_files++;
	snprintf(path, sizeof(path), "%s%s.debug", a->dir, rel);
	return store(a, dbg, path);
}

int archive_files(struct symbolizer *s, const struct count_entry *e,
		  size_t n, const char *dir, struct archive_stats *st,
		  char *err, size_t errlen)
{
	struct archiver a = { dir, s->symfs, st, err, errlen };
	struct dso *d;
	int nomem;

	memset(st, 0, sizeof(*st));
	if (make_dir(&a, dir))
		return -1;
	for (size_t i = 0; i < n; i++) {
		d = symbolize_dso(s, CE_APPID(&e[i]), e[i].ip, &nomem);
		if (nomem)
			return fail(&a, "out of memory");
		if (d && !d->archived && archive_dso(&a, d))
			return -1;
	}
	return 0;
}
