// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_serve: the helper that feeds a session's unwind tables.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elf.h>

#include "libsleepy.h"
#include "unwind_serve.h"
#include "unwind_table.h"

#define WANT_BUF	(64 * 1024)

static const char *const error_text[] = {
	[SLEEPY_UNWIND_E_NONE] = "no error",
	[SLEEPY_UNWIND_E_HEADER] = "bad header",
	[SLEEPY_UNWIND_E_SIZE] = "size does not match the counts",
	[SLEEPY_UNWIND_E_RANGE] = "bad address range",
	[SLEEPY_UNWIND_E_RULE] = "a rule's fields are out of range",
	[SLEEPY_UNWIND_E_INDEX] = "bad block index",
	[SLEEPY_UNWIND_E_ROWS] = "rows not sorted or outside the range",
	[SLEEPY_UNWIND_E_RULE_INDEX] = "a row's rule is past the rules",
	[SLEEPY_UNWIND_E_TEXT] = "range outside the file's executable segment",
	[SLEEPY_UNWIND_E_NOT_ELF] = "not a 64-bit ELF file",
};

const char *uw_error_text(unsigned int code)
{
	if (code < sizeof(error_text) / sizeof(error_text[0]))
		return error_text[code];
	return "unknown error code";
}

const char *uw_cache_dir(char *buf, size_t n)
{
	const char *env = getenv("SLEEPY_UNWIND_CACHE");

	if (env)
		return *env ? env : NULL;
	if ((env = getenv("XDG_CACHE_HOME")) && *env)
		snprintf(buf, n, "%s/sleepy/unwind", env);
	else if ((env = getenv("HOME")) && *env)
		snprintf(buf, n, "%s/.cache/sleepy/unwind", env);
	else
		return NULL;
	return buf;
}

/* The table cached at path, if it is one: 0, else -1. */
static int cache_read(const char *path, struct uw_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct sleepy_unwind_table h;
	struct stat st;
	ssize_t got;

	if (fd < 0)
		return -1;
	memset(t, 0, sizeof(*t));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(h) || st.st_size > (off_t)SAMPLE_MAX_UNWIND_MEM ||
	    !(t->data = malloc(st.st_size)))
		goto fail;
	got = pread(fd, t->data, st.st_size, 0);
	memcpy(&h, t->data, sizeof(h));
	if (got != st.st_size || h.magic != SLEEPY_UNWIND_MAGIC ||
	    h.version != SLEEPY_UNWIND_VERSION)
		goto fail;
	t->size = st.st_size;
	t->nr_rows = h.nr_rows;
	t->nr_rules = h.nr_rules;
	t->text_bytes = h.hi - h.lo;
	close(fd);
	return 0;
fail:
	uw_table_free(t);
	close(fd);
	return -1;
}

/* Make dir and its parents, private to the caller (best effort). */
static void make_dirs(const char *dir)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	mkdir(p, 0700);
}

/* Store t at path, whole or not at all (best effort). */
static void cache_write(const char *dir, const char *path,
			const struct uw_table *t)
{
	char tmp[4200];
	int fd;

	make_dirs(dir);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, t->data, t->size) != (ssize_t)t->size || close(fd) ||
	    rename(tmp, path))
		unlink(tmp);
}

int uw_table_cached(int fd, const char *dir, struct uw_table *t, char *err,
		    size_t n)
{
	char id[64], path[4160];

	if (!dir || uw_build_id(fd, id, sizeof(id)))
		return uw_table_of_fd(fd, t, err, n);
	snprintf(path, sizeof(path), "%s/%s.v%u", dir, id,
		 SLEEPY_UNWIND_VERSION);
	if (!cache_read(path, t))
		return 1;
	if (uw_table_of_fd(fd, t, err, n))
		return -1;
	cache_write(dir, path, t);
	return 0;
}

/* The vDSO's table, from this process's own image of it. */
static int vdso_table(struct uw_table *t, char *err, size_t n)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	size_t size;

	if (!eh) {
		snprintf(err, n, "no vDSO");
		return -1;
	}
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD &&
		    ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	return uw_table_of_image(eh, size, t, err, n);
}

/* LOAD t for fd; a refusal reported on log as one line. */
static void load(int fd, const char *path, struct uw_table *t, FILE *log,
		 struct uw_serve_counts *c)
{
	struct sleepy_unwind_table *h = t->data;

	if (!sleepy_unwind_load(fd, t->data, t->size)) {
		c->loaded++;
		return;
	}
	if (errno == EEXIST)
		return;
	c->refused++;
	if (errno == EINVAL && h->error)
		fprintf(log, "sleepy_unwind: %s: table refused: %s\n", path,
			uw_error_text(h->error));
	else
		fprintf(log, "sleepy_unwind: %s: table refused: %s\n", path,
			strerror(errno));
}

/* Serve one want: open its file with our rights, make its table, LOAD. */
static void serve_want(const struct sleepy_unwind_want *w, const char *dir,
		       FILE *log, struct uw_serve_counts *c)
{
	const char *path = (const char *)(w + 1);
	struct uw_table t;
	char err[256];
	int fd = -1, got;

	if (w->flags & SLEEPY_UNWIND_W_VDSO) {
		got = vdso_table(&t, err, sizeof(err));
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			c->unreadable++;
			return;
		}
		got = uw_table_cached(fd, dir, &t, err, sizeof(err));
	}
	if (got < 0) {
		c->no_cfi++;
	} else {
		c->cached += got == 1;
		load(fd, path, &t, log, c);
		uw_table_free(&t);
	}
	if (fd >= 0)
		close(fd);
}

int uw_serve(const char *cache_dir, FILE *log, struct uw_serve_counts *c)
{
	char *buf = malloc(WANT_BUF);
	long got;

	if (!buf)
		return -1;
	for (;;) {
		got = sleepy_unwind_wait(buf, WANT_BUF);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		for (long at = 0; at < got;) {
			const struct sleepy_unwind_want *w = (void *)(buf + at);

			if (w->size < sizeof(*w) || w->size > got - at)
				break;
			serve_want(w, cache_dir, log, c);
			at += w->size;
		}
	}
	free(buf);
	return got < 0 ? -1 : 0;
}
