// SPDX-License-Identifier: GPL-2.0
/*
 * sleepy_pmu: configure, stop and read the counters of /dev/sleepy_pmu and
 * list the processes registered for overflow signals.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libsleepy.h"
#include "libsleepy_pmu.h"

#define PROG "sleepy_pmu"
#include "die.h"
#include "lockdown.h"

#define STATS_PATH "/sys/class/misc/sleepy_pmu/stats"

static const char usage_text[] =
	"usage: sleepy_pmu config --source software|hardware [--counter N]\n"
	"                         [--event E] --threshold T\n"
	"       sleepy_pmu stop [--counter N]\n"
	"       sleepy_pmu read [--cpu N] [--counter N]\n"
	"       sleepy_pmu list\n"
	"       sleepy_pmu stats\n"
	"       sleepy_pmu unregister-all\n"
	"\n"
	"Counter-overflow signals through " SLEEPY_PMU_DEVICE " (modprobe\n"
	"sleepy_pmu). Each overflow of a running counter interrupts its CPU on\n"
	"a fixed APIC vector and signals the interrupted thread if its process\n"
	"registered (see libsleepy_pmu.h and pmu_example).\n"
	"\n"
	"  config          start (or restart) a counter on every CPU; needs\n"
	"                  CAP_PERFMON or CAP_SYS_ADMIN\n"
	"    --source S    software: the CPU time of running tasks, counted by\n"
	"                  a per-CPU hrtimer (works without a PMU); hardware:\n"
	"                  the CPU's performance counters\n"
	"    --counter N   0..%d (default 0)\n"
	"    --event E     software: 0 (CPU time, the default); hardware: the\n"
	"                  event-select bits, e.g. 0x3c (unhalted cycles)\n"
	"    --threshold T events per overflow; for the software source,\n"
	"                  nanoseconds of CPU time (at least %llu)\n"
	"  stop            stop one counter (default: all)\n"
	"  read            the counters' values since their last overflow, on\n"
	"                  one CPU or (default) every online CPU\n"
	"  list            the registered processes: PID, signal, name\n"
	"  stats           what the overflow handler did, per CPU\n"
	"  unregister-all  drop every registration (root)\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done, 1 the kernel refused, 2 usage, 69 a kernel\n"
	"without sleepy.\n";

static void usage(void)
{
	printf(usage_text, SLEEPY_PMU_MAX_COUNTERS - 1,
	       (unsigned long long)SLEEPY_PMU_SW_MIN_THRESHOLD);
}

/* A number: decimal, or hex with 0x; dies on anything else. */
static uint64_t number(const char *opt, const char *s, uint64_t max)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		die(2, "%s: invalid number '%s'", opt, s);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		die(2, "%s: invalid number '%s'", opt, s);
	if (v > max)
		die(2, "%s: %s is out of range (0..%" PRIu64 ")", opt, s, max);
	return v;
}

/*
 * path, the module's, is missing: the module is not loaded, or the kernel
 * has no sleepy at all.
 */
__attribute__((noreturn))
static void die_missing(const char *path, const char *why)
{
	if (!sleepy_supported())
		die(SLEEPY_EXIT_NO_SUPPORT, SLEEPY_NO_SUPPORT);
	die(1, "%s: %s (modprobe sleepy_pmu)", path, why);
}

static int open_device(void)
{
	int fd = sleepy_pmu_open();
	char why[256];

	if (fd < 0)
		die(sleepy_pmu_open_error(errno, why, sizeof(why)), "%s", why);
	return fd;
}

/* The value of option argv[*i] (--opt V or --opt=V), or NULL. */
static const char *optval(int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc)
		die(2, "%s: missing value", opt);
	return argv[++*i];
}

/* Why a counter read failed, beyond strerror(), for an error line. */
static const char *read_why(int err)
{
	if (err != EPERM)
		return "";
	if (sleepy_locked_down())
		return " (" SLEEPY_LOCKDOWN_WHY ")";
	return " (counts are CPU-wide: needs CAP_PERFMON, or "
	       "kernel.perf_event_paranoid at 0 or below)";
}

static void config_error(int err, uint32_t source)
{
	switch (err) {
	case EPERM:
		if (sleepy_locked_down())
			die(1, "config: %s (" SLEEPY_LOCKDOWN_WHY ")",
			    strerror(err));
		die(1, "config: %s (needs CAP_PERFMON or CAP_SYS_ADMIN)",
		    strerror(err));
	case ENODEV:
		die(1, "config: no usable %s event source on this machine (%s; "
		    "see dmesg)", source == SLEEPY_PMU_SOURCE_HARDWARE ?
		    "hardware" : "software", strerror(err));
	case EBUSY:
		die(1, "config: %s (the counters are in use: by perf, or by "
		    "counters of the other source; stop them first)",
		    strerror(err));
	case EINVAL:
		die(1, "config: %s (check the counter, event and threshold "
		    "against --help)", strerror(err));
	default:
		die(1, "config: %s", strerror(err));
	}
}

static int cmd_config(int argc, char **argv)
{
	uint32_t counter = 0, source = UINT32_MAX;
	uint64_t event = 0, threshold = 0;
	bool have_threshold = false;
	const char *v;
	int fd;

	for (int i = 1; i < argc; i++) {
		if ((v = optval(argc, argv, &i, "--source"))) {
			if (!strcmp(v, "software"))
				source = SLEEPY_PMU_SOURCE_SOFTWARE;
			else if (!strcmp(v, "hardware"))
				source = SLEEPY_PMU_SOURCE_HARDWARE;
			else
				die(2, "--source: unknown source '%s' "
				    "(software or hardware)", v);
		} else if ((v = optval(argc, argv, &i, "--counter"))) {
			counter = number("--counter", v,
					 SLEEPY_PMU_MAX_COUNTERS - 1);
		} else if ((v = optval(argc, argv, &i, "--event"))) {
			event = number("--event", v, UINT64_MAX);
		} else if ((v = optval(argc, argv, &i, "--threshold"))) {
			threshold = number("--threshold", v, UINT64_MAX);
			have_threshold = true;
		} else {
			die(2, "config: %s: unknown option (see --help)",
			    argv[i]);
		}
	}
	if (source == UINT32_MAX)
		die(2, "config: --source is required");
	if (!have_threshold)
		die(2, "config: --threshold is required");
	if (!threshold)
		die(2, "--threshold: must be at least 1");
	fd = open_device();
	if (sleepy_pmu_configure(fd, counter, source, event, threshold))
		config_error(errno, source);
	printf("counter %" PRIu32 ": %s source, event %#" PRIx64
	       ", threshold %" PRIu64 "\n", counter,
	       source == SLEEPY_PMU_SOURCE_HARDWARE ? "hardware" : "software",
	       event, threshold);
	close(fd);
	return 0;
}

static int cmd_stop(int argc, char **argv)
{
	int64_t only = -1;
	const char *v;
	int fd;

	for (int i = 1; i < argc; i++) {
		if ((v = optval(argc, argv, &i, "--counter")))
			only = number("--counter", v,
				      SLEEPY_PMU_MAX_COUNTERS - 1);
		else
			die(2, "stop: %s: unknown option (see --help)", argv[i]);
	}
	fd = open_device();
	for (uint32_t c = 0; c < SLEEPY_PMU_MAX_COUNTERS; c++) {
		if (only >= 0 && c != only)
			continue;
		if (sleepy_pmu_stop(fd, c))
			die(1, "stop: counter %" PRIu32 ": %s%s", c,
			    strerror(errno), errno == EPERM ?
			    " (needs CAP_PERFMON or CAP_SYS_ADMIN)" : "");
	}
	close(fd);
	return 0;
}

static int cmd_read(int argc, char **argv)
{
	int64_t only_cpu = INT64_MIN, only_counter = -1;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int fd, shown = 0;
	const char *v;

	for (int i = 1; i < argc; i++) {
		if ((v = optval(argc, argv, &i, "--cpu")))
			only_cpu = !strcmp(v, "-1") ? -1 :
				   (int64_t)number("--cpu", v, INT_MAX);
		else if ((v = optval(argc, argv, &i, "--counter")))
			only_counter = number("--counter", v,
					      SLEEPY_PMU_MAX_COUNTERS - 1);
		else
			die(2, "read: %s: unknown option (see --help)", argv[i]);
	}
	fd = open_device();
	printf("%-4s %-8s %s\n", "cpu", "counter", "value");
	for (uint32_t c = 0; c < SLEEPY_PMU_MAX_COUNTERS; c++) {
		if (only_counter >= 0 && c != only_counter)
			continue;
		for (long cpu = 0; cpu < ncpu; cpu++) {
			int want = only_cpu == INT64_MIN ? (int)cpu :
				   (int)only_cpu;
			uint64_t value;
			int got;

			if (only_cpu != INT64_MIN && cpu > 0)
				break;
			/* EINVAL: a stopped counter or an offline CPU. */
			if (sleepy_pmu_read_counter(fd, want, c, &value, &got)) {
				int err = errno;

				if (err == EINVAL)
					continue;
				die(1, "read: cpu %d, counter %" PRIu32 ": %s%s",
				    want, c, strerror(err), read_why(err));
			}
			printf("%-4d %-8" PRIu32 " %" PRIu64 "\n", got, c,
			       value);
			shown++;
		}
	}
	close(fd);
	if (!shown && only_cpu != INT64_MIN)
		die(1, "read: nothing to read (no such counter running, or "
		    "CPU %" PRId64 " is not online)", only_cpu);
	if (!shown)
		die(1, "read: no such counter is running");
	return 0;
}

static int cmd_list(void)
{
	char line[128], path[64], comm[64];
	int fd = open_device();
	FILE *f = fdopen(fd, "r");

	if (!f)
		die(1, "%s: %s", SLEEPY_PMU_DEVICE, strerror(errno));
	printf("%-8s %-6s %s\n", "pid", "signal", "name");
	while (fgets(line, sizeof(line), f)) {
		int pid, sig;
		FILE *c;

		if (sscanf(line, "%d %d", &pid, &sig) != 2)
			die(1, "%s: unexpected line '%s'", SLEEPY_PMU_DEVICE,
			    line);
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		strcpy(comm, "?");
		c = fopen(path, "r");
		if (c) {
			if (fgets(comm, sizeof(comm), c))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(c);
		}
		printf("%-8d %-6d %s\n", pid, sig, comm);
	}
	if (ferror(f))
		die(1, "%s: %s", SLEEPY_PMU_DEVICE, strerror(errno));
	fclose(f);
	return 0;
}

static int cmd_stats(void)
{
	FILE *f = fopen(STATS_PATH, "r");
	char buf[4096];
	size_t n;

	if (!f && errno == ENOENT)
		die_missing(STATS_PATH, strerror(ENOENT));
	if (!f)
		die(1, "%s: %s", STATS_PATH, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	bool help = false;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			help = true;
	if (help) {
		usage();
		return 0;
	}
	if (argc < 2)
		die(2, "missing command (see --help)");
	cmd = argv[1];
	if (!strcmp(cmd, "config"))
		return cmd_config(argc - 1, argv + 1);
	if (!strcmp(cmd, "stop"))
		return cmd_stop(argc - 1, argv + 1);
	if (!strcmp(cmd, "read"))
		return cmd_read(argc - 1, argv + 1);
	if (argc > 2)
		die(2, "%s: unexpected argument '%s' (see --help)", cmd,
		    argv[2]);
	if (!strcmp(cmd, "list"))
		return cmd_list();
	if (!strcmp(cmd, "stats"))
		return cmd_stats();
	if (!strcmp(cmd, "unregister-all")) {
		int fd = open_device();

		if (ioctl(fd, SLEEPY_PMU_UNREGISTER_ALL))
			die(1, "unregister-all: %s%s", strerror(errno),
			    errno == EPERM ? " (needs root)" : "");
		close(fd);
		return 0;
	}
	die(2, "%s: unknown command (see --help)", cmd);
}
