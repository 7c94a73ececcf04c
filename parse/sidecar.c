// SPDX-License-Identifier: GPL-2.0
/* sidecar: the files processes leave for the profiler; see sidecar.h. */
#include "sidecar.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

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
