// SPDX-License-Identifier: GPL-2.0
/*
 * libsleepy_lstack: a thread's logical stack area, its registration with
 * the kernel (system call 602) and the names of frame ids. See
 * libsleepy_lstack.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libsleepy_lstack.h"

__thread struct sleepy_lstack_area sleepy_lstack_tls
	__attribute__((tls_model("initial-exec")));

int sleepy_lstack_register(void)
{
	return sleepy_lstack_call(&sleepy_lstack_tls, sizeof(sleepy_lstack_tls),
				  0) ? -1 : 0;
}

/* The kernel takes size 0 with SLEEPY_LSTACK_UNREGISTER. */
int sleepy_lstack_unregister(void)
{
	return sleepy_lstack_call(&sleepy_lstack_tls, 0,
				  SLEEPY_LSTACK_UNREGISTER) ? -1 : 0;
}

/* A name is 1 to SLEEPY_LSTACK_NAME_MAX bytes, none a control character. */
static int valid_name(const char *name)
{
	size_t n = 0;

	for (; name[n]; n++)
		if ((unsigned char)name[n] < 0x20 || name[n] == 0x7f ||
		    n == SLEEPY_LSTACK_NAME_MAX)
			return 0;
	return n > 0;
}

/*
 * The names file, opened to append: created 0644, never through a symbolic
 * link, and only a regular file of ours (O_NONBLOCK: a FIFO someone put
 * there does not block the open).
 */
static int open_names(void)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), SLEEPY_LSTACK_NAMES_FMT, (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
		  O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		close(fd);
		errno = EACCES;
		return -1;
	}
	return fd;
}

int sleepy_lstack_name(uint64_t id, const char *name)
{
	char line[32 + SLEEPY_LSTACK_NAME_MAX];
	ssize_t w;
	int fd, n, err = 0;

	if (!name || !valid_name(name)) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(line, sizeof(line), "%" PRIu64 " %s\n", id, name);
	fd = open_names();
	if (fd < 0)
		return -1;
	/* One write: O_APPEND keeps concurrent lines whole. */
	do
		w = write(fd, line, (size_t)n);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		err = errno;
	else if (w != n)
		err = EIO;
	close(fd);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
