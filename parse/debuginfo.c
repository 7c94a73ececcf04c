// SPDX-License-Identifier: GPL-2.0
/* debuginfo: separate debug files by build-id, debuglink, debuginfod;
 * see debuginfo.h. */
#include "debuginfo.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <zlib.h>

#ifndef SLEEPY_NO_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

static const char *const *buildid_dirs;

void debuginfo_set_dirs(const char *const *dirs)
{
	buildid_dirs = dirs;
}

/* A regular file at root + path, opened read-only: an fd or -1. */
static int open_under(const char *root, const char *path)
{
	char full[PATH_MAX];
	struct stat st;
	int fd;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root ? root : "",
			     path) >= sizeof(full))
		return -1;
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Does the ELF file open at fd carry build-id bid? */
static bool has_build_id(int fd, const uint8_t *bid, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	bool same = n > 0 && (size_t)n == len && !memcmp(got, bid, len);

	if (elf)
		elf_end(elf);
	return same;
}

void debuginfo_build_id_path(char *buf, size_t size, const uint8_t *bid,
			     size_t len, const char *suffix)
{
	size_t n = (size_t)snprintf(buf, size, "/.build-id/%02x/", bid[0]);

	for (size_t i = 1; i < len && n + 3 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%02x", bid[i]);
	snprintf(buf + n, size - n, "%s", suffix);
}

static int by_build_id(const uint8_t *bid, size_t len, const char *symfs)
{
	char rel[160], sys[200];
	int fd;

	if (len < 2)
		return -1;
	debuginfo_build_id_path(rel, sizeof(rel), bid, len, ".debug");
	snprintf(sys, sizeof(sys), "/usr/lib/debug%s", rel);
	fd = open_under(symfs, sys);
	for (size_t i = 0; fd < 0 && buildid_dirs && buildid_dirs[i]; i++)
		fd = open_under(buildid_dirs[i], rel);
	if (fd >= 0 && !has_build_id(fd, bid, len)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The CRC-32 of the file open at fd (gdb's debuglink CRC is zlib's). */
static bool crc_matches(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	return n == 0 && (uint32_t)crc == want &&
	       lseek(fd, 0, SEEK_SET) == 0;
}

/* NAME of .gnu_debuglink, in path's folder, its .debug/, and under
 * /usr/lib/debug/ + that folder, each under symfs. */
static int by_debuglink(Elf *elf, const char *path, const char *symfs)
{
	static const char *const where[] = { "%.*s/%s", "%.*s/.debug/%s",
					     "/usr/lib/debug%.*s/%s" };
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	const char *slash = strrchr(path, '/');
	const int dir = slash ? (int)(slash - path) : 0;
	char rel[PATH_MAX];

	if (!name || !*name || strchr(name, '/') || !slash)
		return -1;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		int fd;

		if ((size_t)snprintf(rel, sizeof(rel), where[i], dir, path,
				     name) >= sizeof(rel))
			continue;
		fd = open_under(symfs, rel);
		if (fd < 0)
			continue;
		if (crc_matches(fd, crc))
			return fd;
		close(fd);
	}
	return -1;
}

#ifndef SLEEPY_NO_DEBUGINFOD
static debuginfod_client *client;

static int by_debuginfod(const uint8_t *bid, size_t len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	int fd;

	if (!len || !urls || !*urls)
		return -1;
	if (!client)
		client = debuginfod_begin();
	if (!client)
		return -1;
	fd = debuginfod_find_debuginfo(client, bid, (int)len, NULL);
	return fd >= 0 ? fd : -1;
}

void debuginfo_end(void)
{
	if (client)
		debuginfod_end(client);
	client = NULL;
}
#else
/* The static build (the guest's parse) has no libdebuginfod. */
static int by_debuginfod(const uint8_t *bid, size_t len)
{
	(void)bid;
	(void)len;
	return -1;
}

void debuginfo_end(void)
{
}
#endif

int debuginfo_open(Elf *elf, const char *path, const uint8_t *bid,
		   size_t bid_len, const char *symfs)
{
	int fd = by_build_id(bid, bid_len, symfs);

	if (fd < 0)
		fd = by_debuglink(elf, path, symfs);
	if (fd < 0)
		fd = by_debuginfod(bid, bid_len);
	return fd;
}
