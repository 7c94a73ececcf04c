/* SPDX-License-Identifier: GPL-2.0 */
/*
 * private_file.h: files the tools write beside a session file, private to
 * the caller as the session file is. Shared by sample_start and
 * sample_stop. Include it after die.h.
 */
#ifndef SLEEPY_PRIVATE_FILE_H
#define SLEEPY_PRIVATE_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Open path for writing, as the kernel opens the session file: created
 * afresh with mode 0600 (never through a symlink), or an existing regular
 * file that is private to us (our own, one link, no group or other
 * access), truncated. The existing file is looked up with O_PATH and
 * checked before it is opened, so a FIFO or device is never opened.
 */
static int open_private(const char *path)
{
	char proc[64];
	struct stat st;
	int p, fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd >= 0 || errno != EEXIST)
		return fd;
	p = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (p < 0)
		return -1;
	if (fstat(p, &st)) {
		fd = -1;
	} else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		   st.st_nlink != 1 || (st.st_mode & 077)) {
		errno = S_ISLNK(st.st_mode) ? ELOOP :
			S_ISREG(st.st_mode) ? EACCES : EINVAL;
		fd = -1;
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
		fd = open(proc, O_WRONLY | O_TRUNC | O_CLOEXEC);
	}
	close(p);
	return fd;
}

/* All n bytes of buf to fd; 0, or -1 with errno. */
static int write_all(int fd, const char *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

#endif
