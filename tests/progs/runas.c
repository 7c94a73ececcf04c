// SPDX-License-Identifier: GPL-2.0
/*
 * runas: a test program. Runs CMD as UID:GID (no supplementary groups)
 * with only the capabilities named by --cap, raised as ambient ones so
 * that they survive exec: the unprivileged user with CAP_PERFMON that
 * sleepy's security model speaks of, which busybox cannot make.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	int cap;
} caps[] = {
	{ "perfmon", CAP_PERFMON },
	{ "sys_admin", CAP_SYS_ADMIN },
	{ "syslog", CAP_SYSLOG },
	{ "fsetid", CAP_FSETID },
};

static const char usage[] =
	"usage: runas [--cap NAME]... UID:GID CMD [ARG...]\n"
	"Run CMD as UID:GID with only the capabilities named (perfmon,\n"
	"sys_admin, syslog, fsetid), as ambient capabilities.\n";

static void die(const char *what)
{
	fprintf(stderr, "runas: %s: %s\n", what, strerror(errno));
	exit(126);
}

static int cap_of(const char *name)
{
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (!strcmp(caps[i].name, name))
			return caps[i].cap;
	fprintf(stderr, "runas: %s: unknown capability\n%s", name, usage);
	exit(2);
}

/* Keep exactly the capabilities in want[] (permitted, effective, ambient). */
static void set_caps(const int *want, int n)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	for (int i = 0; i < n; i++) {
		d[want[i] / 32].permitted |= 1U << (want[i] % 32);
		d[want[i] / 32].effective |= 1U << (want[i] % 32);
		d[want[i] / 32].inheritable |= 1U << (want[i] % 32);
	}
	if (syscall(SYS_capset, &h, d))
		die("capset");
	for (int i = 0; i < n; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, want[i], 0, 0))
			die("raising an ambient capability");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cap", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int want[sizeof(caps) / sizeof(caps[0])], n = 0, c;
	unsigned int uid, gid;

	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c != 'c' || n == (int)(sizeof(want) / sizeof(want[0]))) {
			fputs(usage, stderr);
			return 2;
		}
		want[n++] = cap_of(optarg);
	}
	if (argc - optind < 2 || sscanf(argv[optind], "%u:%u", &uid, &gid) != 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		die("PR_SET_KEEPCAPS");
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid))
		die("changing user");
	set_caps(want, n);
	execvp(argv[optind + 1], argv + optind + 1);
	die(argv[optind + 1]);
}
