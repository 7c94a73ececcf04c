// SPDX-License-Identifier: GPL-2.0
/*
 * sample_start: start a sleepy sampling session (system call 451).
 *
 * Quiet on success. Errors are one line, "sample_start: what: why":
 * exit 2 for usage errors, 1 when the kernel refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsleepy.h"

#define PROG "sample_start"
#include "die.h"
#define DEFAULT_PATH "/var/log/samples"

static const char usage_text[] =
	"usage: sample_start [-o PATH] [--buffers N] [--buffer-size B]\n"
	"                    [--max-appids K] [--user-only] [--no-write]\n"
	"\n"
	"Start a sleepy sampling session: from now on every timer tick on every\n"
	"CPU records a sample into per-CPU buffers, which the kernel writes to\n"
	"PATH. Stop the session with sample_stop. Prints nothing on success.\n"
	"It also copies /proc/kallsyms to PATH.kallsyms, for parse to name\n"
	"kernel addresses (a failure there is a warning, not an error).\n"
	"\n"
	"  -o, --output PATH  session file (default " DEFAULT_PATH ")\n"
	"  --buffers N        buffers per CPU (1..%u; default %u)\n"
	"  --buffer-size B    bytes per buffer (%u..%u, suffix K or M for KiB\n"
	"                     or MiB; default %u); N x B at most %u MiB\n"
	"  --max-appids K     size of the appid, name and pid pools\n"
	"                     (1..%u; default %u)\n"
	"  --user-only        record user-mode ticks only\n"
	"  --no-write         take samples but write none (overhead baseline)\n"
	"  -h, --help         this text\n"
	"\n"
	"A value of 0 asks for the kernel's default. Needs CAP_SYS_ADMIN or\n"
	"CAP_PERFMON. Exit status: 0 started, 1 the kernel refused, 2 usage.\n";

static void usage(void)
{
	printf(usage_text, SAMPLE_MAX_BUFFERS, SAMPLE_DEFAULT_BUFFERS,
	       SAMPLE_MIN_BUFFER_SIZE, SAMPLE_MAX_BUFFER_SIZE,
	       SAMPLE_DEFAULT_BUFFER_SIZE, SAMPLE_MAX_POOL_BYTES >> 20,
	       SAMPLE_MAX_APPIDS, SAMPLE_DEFAULT_MAX_APPIDS);
}

/*
 * Parse a decimal number into a __u32: digits only (no sign, no blanks, no
 * base prefix), optionally followed by K or M (x1024, x1048576) when
 * suffixes is set. Returns 0, or -1 for anything else, including overflow.
 */
static int parse_u32(const char *s, int suffixes, __u32 *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	if (suffixes && (*p == 'K' || *p == 'k')) {
		v <<= 10;
		p++;
	} else if (suffixes && (*p == 'M' || *p == 'm')) {
		v <<= 20;
		p++;
	}
	if (*p != '\0' || v > UINT32_MAX)
		return -1;
	*out = (__u32)v;
	return 0;
}

/* A numeric option's value: 0 (kernel default) or min..max. */
static __u32 number_arg(const char *opt, const char *val, int suffixes,
			__u32 min, __u32 max)
{
	__u32 v;

	if (parse_u32(val, suffixes, &v))
		die(2, "%s: invalid number '%s'", opt, val);
	if (v != 0 && (v < min || v > max))
		die(2, "%s: %" PRIu32 " is out of range (%" PRIu32 "..%" PRIu32
		    ", or 0 for the default)", opt, v, min, max);
	return v;
}

/*
 * If argv[*i] is the option name (as "--name VALUE" or "--name=VALUE", or for
 * a one-letter short option also "-xVALUE"), return its value, consuming the
 * next argument when needed; otherwise NULL.
 */
static const char *option_value(int argc, char **argv, int *i,
				const char *name)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=' && name[1] == '-')
		return a + n + 1;
	if (a[n] != '\0') {
		if (name[1] != '-' && name[2] == '\0')
			return a + n;	/* -oPATH */
		return NULL;
	}
	if (*i + 1 >= argc)
		die(2, "%s: missing value", name);
	return argv[++*i];
}

static void warn(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Is there a non-zero address in this chunk of /proc/kallsyms? */
static int has_address(const char *buf, size_t n, int *at_line_start)
{
	for (size_t i = 0; i < n; i++) {
		if (*at_line_start && buf[i] != '0' && buf[i] != '\n' &&
		    buf[i] != ' ')
			return 1;
		if (buf[i] == '\n')
			*at_line_start = 1;
		else if (buf[i] == ' ')
			*at_line_start = 0;	/* past the address */
	}
	return 0;
}

/*
 * Copy /proc/kallsyms to PATH.kallsyms (mode 0600, no symlinks), so that
 * parse can name the kernel's addresses on another machine. The session is
 * running already: any failure is one warning line, not an error.
 */
static void save_kallsyms(const char *path)
{
	static const char suffix[] = ".kallsyms";
	size_t len = strlen(path);
	char *out = malloc(len + sizeof(suffix));
	char buf[65536];
	int in = -1, fd = -1, nonzero = 0, line_start = 1;
	const char *what = NULL;
	int err = 0;
	ssize_t n;

	if (!out) {
		warn("cannot save the kernel's symbols: %s", strerror(ENOMEM));
		return;
	}
	memcpy(out, path, len);
	memcpy(out + len, suffix, sizeof(suffix));
	in = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		what = "/proc/kallsyms";
		err = errno;
		goto done;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		what = out;
		err = errno;
		goto done;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			what = "/proc/kallsyms";
			err = errno;
			goto done;
		}
		if (!nonzero)
			nonzero = has_address(buf, (size_t)n, &line_start);
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				what = out;
				err = errno;
				goto done;
			}
			off += w;
		}
	}
	if (close(fd) < 0) {
		fd = -1;
		what = out;
		err = errno;
		goto done;
	}
	fd = -1;
	if (!nonzero)
		warn("%s: the kernel hid its symbol addresses (all zero; "
		     "kernel.kptr_restrict, or no CAP_SYSLOG)", out);
done:
	if (what)
		warn("cannot save the kernel's symbols: %s: %s", what,
		     strerror(err));
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	free(out);
}

int main(int argc, char **argv)
{
	struct sample_config cfg;
	const char *path = DEFAULT_PATH;
	const char *v;
	__u32 buffers, size;
	int opts_done = 0;

	sleepy_config_init(&cfg);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts_done || a[0] != '-' || a[1] == '\0') {
			die(2, "%s: unexpected argument (see --help)", a);
		} else if (!strcmp(a, "--")) {
			opts_done = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage();
			return 0;
		} else if ((v = option_value(argc, argv, &i, "-o")) ||
			   (v = option_value(argc, argv, &i, "--output"))) {
			if (*v == '\0')
				die(2, "%s: empty path", a);
			path = v;
		} else if ((v = option_value(argc, argv, &i, "--buffers"))) {
			cfg.nr_buffers = number_arg("--buffers", v, 0, 1,
						    SAMPLE_MAX_BUFFERS);
		} else if ((v = option_value(argc, argv, &i,
					     "--buffer-size"))) {
			cfg.buffer_size = number_arg("--buffer-size", v, 1,
						     SAMPLE_MIN_BUFFER_SIZE,
						     SAMPLE_MAX_BUFFER_SIZE);
		} else if ((v = option_value(argc, argv, &i,
					     "--max-appids"))) {
			cfg.max_appids = number_arg("--max-appids", v, 0, 1,
						    SAMPLE_MAX_APPIDS);
		} else if (!strcmp(a, "--user-only")) {
			cfg.flags |= SAMPLE_F_USER_ONLY;
		} else if (!strcmp(a, "--no-write")) {
			cfg.flags |= SAMPLE_F_NO_WRITE;
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}

	/* The per-CPU pool limit, with defaults for the fields left at 0. */
	buffers = cfg.nr_buffers ? cfg.nr_buffers : SAMPLE_DEFAULT_BUFFERS;
	size = cfg.buffer_size ? cfg.buffer_size : SAMPLE_DEFAULT_BUFFER_SIZE;
	if ((uint64_t)buffers * size > SAMPLE_MAX_POOL_BYTES)
		die(2, "--buffers x --buffer-size: %" PRIu32 " x %" PRIu32
		    " bytes is over the per-CPU limit of %u MiB", buffers,
		    size, SAMPLE_MAX_POOL_BYTES >> 20);

	if (sleepy_sample_start(path, &cfg) == 0) {
		save_kallsyms(path);
		return 0;
	}

	switch (errno) {
	case EBUSY:
		die(1, "a sampling session is already active");
	case ENOSYS:
		die(1, "kernel has no sleepy support");
	case EPERM:
		die(1, "%s: %s (needs CAP_SYS_ADMIN or CAP_PERFMON)", path,
		    strerror(EPERM));
	case EINVAL:
		die(1, "%s: %s (the kernel rejected the path or the "
		    "configuration: %" PRIu32 " buffers of %" PRIu32
		    " bytes, %" PRIu32 " max appids, flags 0x%" PRIx32 ")",
		    path, strerror(EINVAL), buffers, size,
		    cfg.max_appids ? cfg.max_appids : SAMPLE_DEFAULT_MAX_APPIDS,
		    cfg.flags);
	case ENOMEM:
		die(1, "%s: %s (%" PRIu32 " buffers of %" PRIu32
		    " bytes per CPU)", path, strerror(ENOMEM), buffers, size);
	default:
		die(1, "%s: %s", path, strerror(errno));
	}
}
