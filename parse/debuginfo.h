/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debuginfo: the separate debug file of a stripped ELF object, found as
 * gdb and perf find it, in this order:
 *   1. by build-id: /usr/lib/debug/.build-id/xx/rest.debug under --symfs
 *      (or /), then under each --buildid-dir folder;
 *   2. by .gnu_debuglink: NAME next to the object, in its .debug/ folder,
 *      or under /usr/lib/debug/ and the object's folder (under --symfs),
 *      with the CRC-32 the link records;
 *   3. by build-id from debuginfod (elfutils' libdebuginfod), when
 *      DEBUGINFOD_URLS names servers; its cache is the client's own.
 * A build-id found file must carry that build-id.
 */
#ifndef SLEEPY_PARSE_DEBUGINFO_H
#define SLEEPY_PARSE_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/* The folders searched by build-id after symfs (--buildid-dir), a
 * NULL-terminated array the caller keeps; NULL: none. */
void debuginfo_set_dirs(const char *const *dirs);

/*
 * The debug file of the object elf, at path (as the session names it; it
 * was opened under symfs) with build-id bid (bid_len 0: none): an fd, or
 * -1. May wait on the network (debuginfod).
 */
int debuginfo_open(Elf *elf, const char *path, const uint8_t *bid,
		   size_t bid_len, const char *symfs);

/* "/.build-id/xx/rest" + suffix of build-id bid (len >= 2) into buf, the
 * layout of /usr/lib/debug and of an --archive folder. */
void debuginfo_build_id_path(char *buf, size_t size, const uint8_t *bid,
			     size_t len, const char *suffix);

/* The debuginfod client's end, at exit. */
void debuginfo_end(void);

#endif
