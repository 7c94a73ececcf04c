// SPDX-License-Identifier: GPL-2.0
/*
 * sample_start: start a sleepy sampling session (system call 600).
 *
 * Quiet on success. Errors are one line, "sample_start: what: why":
 * exit 2 for usage errors, 1 when the kernel refuses, 69 when it has no
 * sleepy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsleepy.h"

#define PROG "sample_start"
#include "die.h"
#include "lockdown.h"
#include "session_stats.h"
#include "private_file.h"
#include "perf_maps.h"
#include "unwind_serve.h"
#define DEFAULT_PATH "/var/log/samples"

static const char usage_text[] =
	"usage: sample_start [-o PATH] [--buffers N] [--buffer-size B]\n"
	"                    [--max-appids K] [--max-size BYTES] [--user-only]\n"
	"                    [--no-write] [--callchain[=DEPTH]] [--lstack]\n"
	"                    [--latency] [--latency-interval S]\n"
	"                    [--latency-slots N] [--no-unwind]\n"
	"                    [--no-unwind-wait] [--max-unwind-mem BYTES]\n"
	"                    [-- CMD [ARG...]]\n"
	"\n"
	"Start a sleepy sampling session: from now on every timer tick on every\n"
	"CPU records a sample into per-CPU buffers, which the kernel writes to\n"
	"PATH. Stop the session with sample_stop. Prints nothing on success.\n"
	"\n"
	"With -- CMD, runs CMD in the session and stops the session when CMD\n"
	"exits, printing its statistics on standard error as sample_stop\n"
	"prints them; CMD gets Ctrl-C and Ctrl-\\, and the session still stops.\n"
	"It also copies /proc/kallsyms to PATH.kallsyms, for parse to name\n"
	"kernel addresses (a failure there is a warning, not an error), and\n"
	"notes PATH in " SESSION_NOTE ": when the session stops, the perf\n"
	"maps of its JITs (/tmp/perf-PID.map) are copied to PATH.perf-PID.map,\n"
	"and the names of its processes' logical stack frames\n"
	"(/tmp/sleepy-lstack-PID.names) to PATH.lstack-PID.names.\n"
	"\n"
	"Both files are created with mode 0600. An existing file is reused\n"
	"(truncated) only if it is a regular file owned by you, with one link\n"
	"and no group or other access; anything else is refused, since a\n"
	"session holds every process's names, paths and addresses.\n"
	"\n"
	"  -o, --output PATH  session file (default " DEFAULT_PATH ")\n"
	"  --buffers N        buffers per CPU (1..%u; default %u)\n"
	"  --buffer-size B    bytes per buffer (%u..%u, suffix K or M for KiB\n"
	"                     or MiB; default %u); N x B at most %u MiB\n"
	"  --max-appids K     size of the appid, name and pid pools\n"
	"                     (%u..%u; default %u)\n"
	"  --max-size BYTES   the most bytes the session file may take (suffix\n"
	"                     K, M or G for KiB, MiB or GiB; default 0, no\n"
	"                     limit; else at least %uK, and %uK more than the\n"
	"                     header and statistics records): samples past\n"
	"                     it are dropped and counted\n"
	"  --user-only        record user-mode ticks only\n"
	"  --no-write         take samples but write none (overhead baseline)\n"
	"  --callchain[=DEPTH]\n"
	"                     record each sample's call chain: the kernel's\n"
	"                     (by its frame pointers) and the user's,\n"
	"                     at most DEPTH frames with the sampled IP (1..%u;\n"
	"                     default %u). User frames are walked by unwind\n"
	"                     tables made from each mapped file's .eh_frame\n"
	"                     by a helper that runs until the session stops\n"
	"                     (see sleepy_unwind), and by frame pointers where\n"
	"                     a file has none. A program that maps a file the\n"
	"                     helper has not served yet waits for it (%u s at\n"
	"                     most), so that its stacks are whole from its\n"
	"                     first instruction\n"
	"  --no-unwind        with --callchain: frame pointers only, no helper\n"
	"  --no-unwind-wait   with --callchain: programs do not wait for their\n"
	"                     tables: their first samples may have none\n"
	"  --max-unwind-mem BYTES\n"
	"                     the most memory the unwind tables and maps may\n"
	"                     take in the kernel (suffix K, M or G; default\n"
	"                     64M): tables past it are refused and counted\n"
	"  --lstack           record the logical stack of each thread that\n"
	"                     registered one (libsleepy_lstack) with its\n"
	"                     samples, up to %u frames, and the time such a\n"
	"                     thread spends blocked with its stack (off-CPU\n"
	"                     records)\n"
	"  --latency          time every system call (x86-64) into a log2\n"
	"                     histogram per program and call, written at stop,\n"
	"                     and record the calls the tick sampled (parse\n"
	"                     --latency)\n"
	"  --latency-interval S\n"
	"                     also write the histograms every S seconds, as\n"
	"                     time-lapse segments (%g..%u, to the ms; implies\n"
	"                     --latency)\n"
	"  --latency-slots N  histograms each CPU's table holds (a power of 2,\n"
	"                     %u..%u; default %u; implies --latency): calls\n"
	"                     past them are lost and counted\n"
	"  -h, --help         this text\n"
	"\n"
	"A value of 0 asks for the kernel's default. All CPUs' buffers and the\n"
	"tables together may take at most 1/%u of the machine's memory, and are\n"
	"charged to your memory cgroup. Needs CAP_SYS_ADMIN or CAP_PERFMON,\n"
	"and a kernel not locked down for confidentiality.\n"
	"Exit status: 0 started, 1 the kernel refused, 2 usage, 69 a kernel\n"
	"without sleepy. With CMD: CMD's (128 + N if signal N killed it, 127 if\n"
	"it was not found, 126 if it could not be run), or 1 if the session\n"
	"could not be stopped, lost samples to write errors or does not account\n"
	"for every sample.\n";

static void usage(void)
{
	printf(usage_text, SAMPLE_MAX_BUFFERS, SAMPLE_DEFAULT_BUFFERS,
	       SAMPLE_MIN_BUFFER_SIZE, SAMPLE_MAX_BUFFER_SIZE,
	       SAMPLE_DEFAULT_BUFFER_SIZE, SAMPLE_MAX_POOL_BYTES >> 20,
	       SAMPLE_MIN_APPIDS, SAMPLE_MAX_APPIDS, SAMPLE_DEFAULT_MAX_APPIDS,
	       SAMPLE_MIN_MAX_SIZE >> 10, SAMPLE_MIN_MAX_SIZE >> 11,
	       SAMPLE_MAX_CALLCHAIN_DEPTH, SAMPLE_DEFAULT_CALLCHAIN_DEPTH,
	       SAMPLE_UNWIND_WAIT_MS / 1000, SLEEPY_LSTACK_SAMPLE_FRAMES,
	       SAMPLE_MIN_LATENCY_INTERVAL_MS / 1000.0,
	       SAMPLE_MAX_LATENCY_INTERVAL_MS / 1000,
	       SAMPLE_MIN_LATENCY_SLOTS, SAMPLE_MAX_LATENCY_SLOTS,
	       SAMPLE_DEFAULT_LATENCY_SLOTS, SAMPLE_MEMORY_FRACTION);
}

/*
 * Parse a decimal number of at most max: digits only (no sign, no blanks,
 * no base prefix), optionally followed by K, M or G (powers of 1024) when
 * suffixes is set. Returns 0, or -1 for anything else, including overflow.
 */
static int parse_number(const char *s, int suffixes, uint64_t max,
			uint64_t *out)
{
	static const struct {
		char upper, lower;
		unsigned int shift;
	} units[] = {
		{ 'K', 'k', 10 }, { 'M', 'm', 20 }, { 'G', 'g', 30 },
	};
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (size_t i = 0; suffixes && *p && i < sizeof(units) /
	     sizeof(units[0]); i++) {
		if (*p != units[i].upper && *p != units[i].lower)
			continue;
		if (v > max >> units[i].shift)
			return -1;
		v <<= units[i].shift;
		p++;
		break;
	}
	if (*p != '\0')
		return -1;
	*out = v;
	return 0;
}

/* A numeric option's value: 0 (kernel default) or min..max. */
static __u32 number_arg(const char *opt, const char *val, int suffixes,
			__u32 min, __u32 max)
{
	uint64_t v;

	if (parse_number(val, suffixes, UINT32_MAX, &v))
		die(2, "%s: invalid number '%s'", opt, val);
	if (v != 0 && (v < min || v > max))
		die(2, "%s: %" PRIu64 " is out of range (%" PRIu32 "..%" PRIu32
		    ", or 0 for the default)", opt, v, min, max);
	return (__u32)v;
}

/*
 * --callchain[=DEPTH]: a is the argument; sets the flag and the depth
 * (0: the kernel's default). 0 if a is not this option.
 */
static int callchain_arg(const char *a, struct sample_config *cfg)
{
	static const char name[] = "--callchain";

	if (strncmp(a, name, sizeof(name) - 1))
		return 0;
	a += sizeof(name) - 1;
	if (*a == '=')
		cfg->callchain_depth = number_arg(name, a + 1, 0, 1,
						  SAMPLE_MAX_CALLCHAIN_DEPTH);
	else if (*a)
		return 0;
	cfg->flags |= SAMPLE_F_CALLCHAIN;
	return 1;
}

/*
 * --latency-interval S: seconds, with up to three decimals, within the
 * kernel's bounds; in ms.
 */
static __u32 interval_arg(const char *val)
{
	static const char opt[] = "--latency-interval";
	const char *dot = strchr(val, '.');
	uint64_t whole, frac = 0, ms;
	size_t nfrac = dot ? strlen(dot + 1) : 0;
	char buf[32];

	if (!dot && parse_number(val, 0, UINT32_MAX, &whole))
		die(2, "%s: invalid number of seconds '%s'", opt, val);
	if (dot) {
		if ((size_t)(dot - val) >= sizeof(buf) || nfrac > 3 ||
		    (nfrac && parse_number(dot + 1, 0, 999, &frac)))
			die(2, "%s: invalid number of seconds '%s' (at most "
			    "three decimals)", opt, val);
		memcpy(buf, val, (size_t)(dot - val));
		buf[dot - val] = '\0';
		if (parse_number(buf, 0, UINT32_MAX, &whole))
			die(2, "%s: invalid number of seconds '%s'", opt, val);
		for (; nfrac < 3; nfrac++)
			frac *= 10;
	}
	ms = whole * 1000 + frac;
	if (ms < SAMPLE_MIN_LATENCY_INTERVAL_MS ||
	    ms > SAMPLE_MAX_LATENCY_INTERVAL_MS)
		die(2, "%s: %s s is out of range (%g..%u s)", opt, val,
		    SAMPLE_MIN_LATENCY_INTERVAL_MS / 1000.0,
		    SAMPLE_MAX_LATENCY_INTERVAL_MS / 1000);
	return (__u32)ms;
}

/* --latency-slots N: a power of 2 within the kernel's bounds. */
static __u32 slots_arg(const char *val)
{
	__u32 n = number_arg("--latency-slots", val, 1,
			     SAMPLE_MIN_LATENCY_SLOTS,
			     SAMPLE_MAX_LATENCY_SLOTS);

	if (n & (n - 1))
		die(2, "--latency-slots: %" PRIu32 " is not a power of 2", n);
	return n;
}

/*
 * A buffer must hold the most one tick writes, as the kernel requires: its
 * sample, with call chains the largest chain record before it, and with
 * logical stacks the largest logical stack part.
 */
static void check_record_room(const struct sample_config *cfg, __u32 size)
{
	__u32 depth = cfg->callchain_depth ? cfg->callchain_depth :
		      SAMPLE_DEFAULT_CALLCHAIN_DEPTH;
	size_t lstack = cfg->flags & SAMPLE_F_LSTACK ?
			sizeof(struct sleepy_rec_lstack) +
			SLEEPY_LSTACK_SAMPLE_FRAMES *
			sizeof(struct sleepy_lstack_frame) : 0;
	size_t need = sizeof(struct sleepy_rec_sample) + sizeof(__u16) +
		      sizeof(__u64) + lstack;
	const char *with = lstack ? " and logical stack" : "";

	if (cfg->flags & SAMPLE_F_CALLCHAIN) {
		need = sizeof(struct sleepy_rec_chain) +
		       (depth - 1) * sizeof(__u64) +
		       sizeof(struct sleepy_rec_sample) + sizeof(__u16) +
		       sizeof(__u32) + lstack;
		if (size < need)
			die(2, "--buffer-size: %" PRIu32 " bytes cannot hold a "
			    "call chain of %" PRIu32 " frames with its "
			    "sample%s (%zu bytes)", size, depth, with, need);
	}
	if (size < need)
		die(2, "--buffer-size: %" PRIu32 " bytes cannot hold a sample "
		    "with its logical stack of %u frames (%zu bytes)", size,
		    SLEEPY_LSTACK_SAMPLE_FRAMES, need);
}

/*
 * The kernel's nr_cpu_ids, the highest possible CPU + 1 (the kernel writes
 * a CPU_STATS record for each CPU below it), from
 * /sys/devices/system/cpu/possible ("0-3,8-11"); 0 if it cannot be read.
 */
static unsigned int cpu_ids(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned int lo, hi, n = 0;
	int c = ',';

	if (!f)
		return 0;
	while (c == ',' && fscanf(f, "%u", &lo) == 1) {
		hi = lo;
		c = fgetc(f);
		if (c == '-' && fscanf(f, "%u", &hi) == 1)
			c = fgetc(f);
		if (hi < lo || hi == UINT32_MAX) {
			n = 0;
			break;
		}
		n = hi + 1 > n ? hi + 1 : n;
	}
	fclose(f);
	return n;
}

/*
 * --max-size: 0 (no limit), or at least SAMPLE_MIN_MAX_SIZE and at least
 * the file header and the statistics records (a CPU_STATS record for each
 * CPU id, then STATS) plus SAMPLE_MIN_MAX_SIZE / 2, as the kernel
 * requires.
 */
static __u64 max_size_arg(const char *val)
{
	const unsigned int cpus = cpu_ids();
	const uint64_t need = sizeof(struct sleepy_file_header) +
		(uint64_t)cpus * sizeof(struct sleepy_rec_cpu_stats) +
		sizeof(struct sleepy_rec_stats) + SAMPLE_MIN_MAX_SIZE / 2;
	uint64_t v;

	if (parse_number(val, 1, UINT64_MAX, &v))
		die(2, "--max-size: invalid number '%s'", val);
	if (v != 0 && v < SAMPLE_MIN_MAX_SIZE)
		die(2, "--max-size: %" PRIu64 " is below the minimum of %u "
		    "bytes (%uK), or 0 for no limit", v, SAMPLE_MIN_MAX_SIZE,
		    SAMPLE_MIN_MAX_SIZE >> 10);
	if (v != 0 && cpus && v < need)
		die(2, "--max-size: %" PRIu64 " is below the minimum of %"
		    PRIu64 " bytes on %u CPUs (the file header and statistics "
		    "records, plus %u)", v, need, cpus,
		    SAMPLE_MIN_MAX_SIZE / 2);
	return v;
}

/* --max-unwind-mem BYTES: within the kernel's bounds. */
static __u64 unwind_mem_arg(const char *val)
{
	uint64_t v;

	if (parse_number(val, 1, UINT64_MAX, &v))
		die(2, "--max-unwind-mem: invalid number '%s'", val);
	if (v < SAMPLE_MIN_UNWIND_MEM || v > SAMPLE_MAX_UNWIND_MEM)
		die(2, "--max-unwind-mem: %" PRIu64 " is outside %lluK..%lluM",
		    v, SAMPLE_MIN_UNWIND_MEM >> 10, SAMPLE_MAX_UNWIND_MEM >> 20);
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

/* What kind of file st is, for an error message. */
static const char *file_kind(mode_t mode)
{
	static const struct {
		mode_t type;
		const char *name;
	} kinds[] = {
		{ S_IFIFO, "a FIFO" }, { S_IFCHR, "a character device" },
		{ S_IFBLK, "a block device" }, { S_IFSOCK, "a socket" },
		{ S_IFLNK, "a symbolic link" }, { S_IFDIR, "a directory" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((mode & S_IFMT) == kinds[i].type)
			return kinds[i].name;
	return "not a regular file";
}

/*
 * Which of the session file's rules the existing path breaks, written to
 * why (n bytes); NULL if it breaks none or does not exist.
 */
static const char *broken_rule(const char *path, char *why, size_t n)
{
	static const char private[] = "a session file must be private: ";
	struct stat st;

	if (lstat(path, &st))
		return NULL;
	if (!S_ISREG(st.st_mode))
		snprintf(why, n, "is %s; a session is written only to a "
			 "regular file, and a symbolic link is not followed",
			 file_kind(st.st_mode));
	else if (st.st_uid != geteuid())
		snprintf(why, n, "owned by uid %u, not by you (uid %u); %s"
			 "remove it or choose another path",
			 (unsigned int)st.st_uid, (unsigned int)geteuid(),
			 private);
	else if (st.st_nlink != 1)
		snprintf(why, n, "has %ju hard links; %sremove it or choose "
			 "another path", (uintmax_t)st.st_nlink, private);
	else if (st.st_mode & 077)
		snprintf(why, n, "mode %04o lets group or others in; %schmod "
			 "600 it, remove it, or choose another path",
			 (unsigned int)(st.st_mode & 07777), private);
	else
		return NULL;
	return why;
}

/*
 * /proc/kallsyms as read before the session starts: the kernel formats
 * each of its lines on every read (tens of milliseconds under TCG), and
 * the session would sample that as this program's own time. err: 0, or
 * errno of the failed read (open included).
 */
struct kallsyms_text {
	char *data;
	size_t len;
	int err;
};

static void read_kallsyms(struct kallsyms_text *k)
{
	size_t cap = 0;
	ssize_t n;
	char *grown;
	int in = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);

	*k = (struct kallsyms_text){ .err = in < 0 ? errno : 0 };
	while (in >= 0) {
		if (cap - k->len < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			grown = realloc(k->data, cap);
			if (!grown) {
				k->err = ENOMEM;
				break;
			}
			k->data = grown;
		}
		n = read(in, k->data + k->len, cap - k->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			k->err = n < 0 ? errno : 0;
			break;
		}
		k->len += (size_t)n;
	}
	if (in >= 0)
		close(in);
}

/*
 * Write the kernel's symbols k to PATH.kallsyms (open_private()), so that
 * parse can name the kernel's addresses on another machine. The session
 * is running already: any failure is one warning line, not an error, and
 * a copy that failed half way is removed (it would name addresses
 * wrongly).
 */
static void save_kallsyms(const char *path, const struct kallsyms_text *k)
{
	static const char suffix[] = ".kallsyms";
	size_t len = strlen(path);
	char *out = malloc(len + sizeof(suffix));
	int fd = -1, line_start = 1;
	char why[256];

	if (!out) {
		warn("cannot save the kernel's symbols: %s", strerror(ENOMEM));
		return;
	}
	memcpy(out, path, len);
	memcpy(out + len, suffix, sizeof(suffix));
	if (k->err) {
		warn("cannot save the kernel's symbols: /proc/kallsyms: %s",
		     strerror(k->err));
	} else if ((fd = open_private(out)) < 0) {
		if (broken_rule(out, why, sizeof(why)))
			warn("cannot save the kernel's symbols: %s: %s", out,
			     why);
		else
			warn("cannot save the kernel's symbols: %s: %s", out,
			     strerror(errno));
	} else if (write_all(fd, k->data, k->len) || close(fd)) {
		warn("cannot save the kernel's symbols: %s: %s", out,
		     strerror(errno));
		unlink(out);
	} else if (!has_address(k->data, k->len, &line_start)) {
		warn("%s: the kernel hid its symbol addresses (all zero; "
		     "kernel.kptr_restrict, or no CAP_SYSLOG)", out);
	}
	free(out);
}

/*
 * The kernel refused the session: one line on why, and exit 1 (69 if it
 * has no sleepy).
 */
static void refused(const char *path, const struct sample_config *cfg,
		    __u32 buffers, __u32 size)
{
	int err = errno;
	char why[256];
	__u32 appids = cfg->max_appids ? cfg->max_appids :
		       SAMPLE_DEFAULT_MAX_APPIDS;

	switch (err) {
	case EBUSY:
		die(1, "a sampling session is already active");
	case ENOSYS:
		die(SLEEPY_EXIT_NO_SUPPORT, SLEEPY_NO_SUPPORT);
	case EPERM:
		if (sleepy_locked_down())
			die(1, "%s: %s (" SLEEPY_LOCKDOWN_WHY ")", path,
			    strerror(EPERM));
		die(1, "%s: %s (needs CAP_SYS_ADMIN or CAP_PERFMON)", path,
		    strerror(EPERM));
	case EACCES:
	case ELOOP:
		if (broken_rule(path, why, sizeof(why)))
			die(1, "%s: %s", path, why);
		break;
	case EINVAL:
		if (broken_rule(path, why, sizeof(why)))
			die(1, "%s: %s", path, why);
		die(1, "%s: %s (the kernel rejected the path or the "
		    "configuration: %" PRIu32 " buffers of %" PRIu32
		    " bytes, %" PRIu32 " max appids, max size %" PRIu64
		    ", flags 0x%" PRIx32 ", call-chain depth %" PRIu32
		    ", latency interval %" PRIu32 " ms, latency slots %"
		    PRIu32 ")", path, strerror(EINVAL), buffers, size, appids,
		    (uint64_t)cfg->max_size, cfg->flags,
		    cfg->callchain_depth, cfg->latency_interval_ms,
		    cfg->latency_slots);
	case E2BIG:
		die(1, "%s: the session would take more than 1/%u of the "
		    "machine's memory (%" PRIu32 " buffers of %" PRIu32
		    " bytes on each CPU, tables for %" PRIu32 " appids)", path,
		    SAMPLE_MEMORY_FRACTION, buffers, size, appids);
	case ENOMEM:
		die(1, "%s: %s (%" PRIu32 " buffers of %" PRIu32 " bytes per "
		    "CPU; the memory is charged to your memory cgroup)", path,
		    strerror(ENOMEM), buffers, size);
	}
	die(1, "%s: %s", path, strerror(err));
}

/* CMD's end as an exit status: its own, or 128 + the signal that killed it. */
static int exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/* The running session, stopped because sample_start cannot go on. */
static void stop_and_die(const char *what, int err)
{
	sleepy_sample_stop(NULL);
	die(1, "%s: %s (the session is stopped)", what, strerror(err));
}

/*
 * --no-unwind, --no-unwind-wait (each takes its flag out of *unwind) and
 * --max-unwind-mem BYTES at argv[*i], its value consumed; 0 if it is none
 * of them.
 */
static int unwind_arg(int argc, char **argv, int *i, struct sample_config *cfg,
		      unsigned int *unwind)
{
	const char *v;

	if (!strcmp(argv[*i], "--no-unwind"))
		*unwind &= ~(SAMPLE_F_UNWIND | SAMPLE_F_UNWIND_WAIT);
	else if (!strcmp(argv[*i], "--no-unwind-wait"))
		*unwind &= ~SAMPLE_F_UNWIND_WAIT;
	else if ((v = option_value(argc, argv, i, "--max-unwind-mem")))
		cfg->max_unwind_mem = unwind_mem_arg(v);
	else
		return 0;
	return 1;
}

/* The unwind helper's pid, 0 if none runs. */
static pid_t helper;

/*
 * With SAMPLE_F_UNWIND: start the helper that feeds the session's unwind
 * tables until it stops, in a session of its own (Ctrl-C is the
 * command's). Without a command it outlives sample_start, and writes
 * nothing: the session's statistics count what it did not load.
 */
static void start_helper(const struct sample_config *cfg, int quiet)
{
	char buf[4096];
	int null;

	if (!(cfg->flags & SAMPLE_F_UNWIND))
		return;
	fflush(NULL);
	helper = fork();
	if (helper < 0)
		stop_and_die("starting the unwind helper", errno);
	if (helper)
		return;
	setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (quiet)
			dup2(null, STDERR_FILENO);
	}
	uw_serve(uw_cache_dir(buf, sizeof(buf)), stderr,
		 &(struct uw_serve_counts){ 0 });
	_exit(0);
}

/*
 * -- CMD: run cmd in the running session, wait for it, stop the session and
 * print its statistics on standard error. Returns the exit status (see
 * usage_text). Ctrl-C and Ctrl-\ are CMD's: ignored here while it runs.
 */
static int run_command(const char *path, char **cmd)
{
	struct sample_stats stats;
	struct summary sum;
	char why[256];
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		stop_and_die("fork", errno);
	if (pid == 0) {
		execvp(cmd[0], cmd);
		fprintf(stderr, PROG ": %s: %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			stop_and_die("waiting for the command", errno);
	sleepy_stats_init(&stats);
	if (sleepy_sample_stop(&stats))
		die(1, "stopping the session: %s", strerror(errno));
	/* The stop ended the helper's wait: it exits. */
	while (helper > 0 && waitpid(helper, NULL, 0) < 0 && errno == EINTR)
		;
	free(take_session_note());
	copy_session_side_files(path);
	sum = print_stats(stderr, &stats, false);
	if (session_problem(&stats, &sum, why, sizeof(why)))
		die(1, "%s", why);
	return exit_status(status);
}

/*
 * --latency, --latency-interval S, --latency-slots N (each sets the flag)
 * at argv[*i], its value consumed; 0 if it is none of them.
 */
static int latency_arg(int argc, char **argv, int *i,
		       struct sample_config *cfg)
{
	const char *v;

	if (!strcmp(argv[*i], "--latency"))
		;
	else if ((v = option_value(argc, argv, i, "--latency-interval")))
		cfg->latency_interval_ms = interval_arg(v);
	else if ((v = option_value(argc, argv, i, "--latency-slots")))
		cfg->latency_slots = slots_arg(v);
	else
		return 0;
	cfg->flags |= SAMPLE_F_LATENCY;
	return 1;
}

/*
 * The options taken together: the per-CPU pool's limit (its buffers and
 * their size into *buffers and *size, defaults for fields left at 0), the
 * room a record needs, and the unwind flags (unwind) that --callchain
 * takes. Exits with a usage error.
 */
static void check_config(struct sample_config *cfg, unsigned int unwind,
			 __u32 *buffers, __u32 *size)
{
	*buffers = cfg->nr_buffers ? cfg->nr_buffers : SAMPLE_DEFAULT_BUFFERS;
	*size = cfg->buffer_size ? cfg->buffer_size :
				   SAMPLE_DEFAULT_BUFFER_SIZE;
	if ((uint64_t)*buffers * *size > SAMPLE_MAX_POOL_BYTES)
		die(2, "--buffers x --buffer-size: %" PRIu32 " x %" PRIu32
		    " bytes is over the per-CPU limit of %u MiB", *buffers,
		    *size, SAMPLE_MAX_POOL_BYTES >> 20);
	check_record_room(cfg, *size);
	if (cfg->flags & SAMPLE_F_CALLCHAIN && unwind & SAMPLE_F_UNWIND)
		cfg->flags |= unwind;
	else if (cfg->max_unwind_mem)
		die(2, "--max-unwind-mem: needs --callchain, without "
		    "--no-unwind");
}

int main(int argc, char **argv)
{
	struct sample_config cfg;
	const char *path = DEFAULT_PATH;
	const char *v;
	__u32 buffers, size;
	char **cmd = NULL;
	unsigned int unwind = SAMPLE_F_UNWIND | SAMPLE_F_UNWIND_WAIT;
	struct kallsyms_text kallsyms;

	sleepy_config_init(&cfg);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || a[1] == '\0') {
			die(2, "%s: unexpected argument (a command goes after "
			    "--; see --help)", a);
		} else if (!strcmp(a, "--")) {
			cmd = argv[i + 1] ? argv + i + 1 : NULL;
			break;
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
			cfg.max_appids = number_arg("--max-appids", v, 0,
						    SAMPLE_MIN_APPIDS,
						    SAMPLE_MAX_APPIDS);
		} else if ((v = option_value(argc, argv, &i, "--max-size"))) {
			cfg.max_size = max_size_arg(v);
		} else if (!strcmp(a, "--user-only")) {
			cfg.flags |= SAMPLE_F_USER_ONLY;
		} else if (!strcmp(a, "--no-write")) {
			cfg.flags |= SAMPLE_F_NO_WRITE;
		} else if (!strcmp(a, "--lstack")) {
			cfg.flags |= SAMPLE_F_LSTACK;
		} else if (unwind_arg(argc, argv, &i, &cfg, &unwind) ||
			   latency_arg(argc, argv, &i, &cfg) ||
			   callchain_arg(a, &cfg)) {
			continue;
		} else {
			die(2, "%s: unknown option (see --help)", a);
		}
	}

	check_config(&cfg, unwind, &buffers, &size);
	read_kallsyms(&kallsyms);
	if (sleepy_sample_start(path, &cfg) == 0) {
		save_kallsyms(path, &kallsyms);
		free(kallsyms.data);
		note_session(path);
		start_helper(&cfg, !cmd);
		return cmd ? run_command(path, cmd) : 0;
	}

	refused(path, &cfg, buffers, size);
}
