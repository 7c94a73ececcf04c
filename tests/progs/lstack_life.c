// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_life: the lifetime of a logical stack registration
 * (sleepy_lstack(2)): its errors, a new thread and a fork child starting
 * unregistered, a storm of threads that register and exit, and exec
 * dropping the registration.
 *
 *   lstack_life [--storm N] [--no-exec]
 *
 * Prints one line a check: "ok NAME: ..." or "FAIL NAME: ...", with the
 * result expected and got (0 or an errno name). The last check execs this
 * program again from a second registered thread, while the main thread,
 * registered too, waits for it; the new image checks that it starts
 * unregistered and prints "done: N failed". Exit status: 0 if every check
 * passed, 1 otherwise (an unexpected errno), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsleepy_lstack.h"

#define PROG "lstack_life"
#include "die.h"

static const char usage_text[] =
	"usage: lstack_life [--storm N] [--no-exec]\n"
	"\n"
	"Checks the registration of logical stacks (sleepy_lstack, system\n"
	"call 602): its errors (EFAULT, EINVAL, EBUSY), a new thread and a\n"
	"fork child starting unregistered, N threads that register and exit\n"
	"(default 2000; half of them unregister first), and an exec from a\n"
	"registered thread dropping the registration. One line a check,\n"
	"\"ok NAME: ...\" or \"FAIL NAME: ...\"; the last is \"done: N failed\".\n"
	"\n"
	"  --storm N   threads in the storm (0..1000000)\n"
	"  --no-exec   leave out the exec check\n"
	"  -h, --help  this text\n"
	"\n"
	"Exit status: 0 every check passed; 1 one failed; 2 usage.\n";

/* Two areas of the largest size, and room to go past it. */
static struct {
	struct sleepy_lstack_area a;
	char rest[SLEEPY_LSTACK_MAX_SIZE + 64];
} areas[2] __attribute__((aligned(64)));

static int failures;

enum area_kind {
	AREA_A, AREA_B, AREA_MISALIGNED, AREA_UNMAPPED, AREA_KERNEL, AREA_NULL,
};

/* An address of a page that is not mapped. */
static void *unmapped(void)
{
	static void *p;

	if (!p) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, 4096))
			die(1, "mmap: %s", strerror(errno));
	}
	return p;
}

static void *area_of(enum area_kind k)
{
	switch (k) {
	case AREA_A:
		return &areas[0];
	case AREA_B:
		return &areas[1];
	case AREA_MISALIGNED:
		return (char *)&areas[0] + 8;
	case AREA_UNMAPPED:
		return unmapped();
	case AREA_KERNEL:
		return (void *)0xffffffff81000000UL;
	case AREA_NULL:
		break;
	}
	return NULL;
}

static const char *err_name(int err)
{
	return err ? strerrorname_np(err) : "0";
}

/* One check's line; got and want are 0 or errno values. */
static void check(const char *name, int got, int want)
{
	if (got == ENOSYS)
		die(1, "the kernel has no sleepy_lstack (%s)", name);
	printf("%s %s: expected %s, got %s\n", got == want ? "ok" : "FAIL",
	       name, err_name(want), err_name(got));
	failures += got != want;
}

/* The system call's result: 0 or its errno. */
static int call(void *area, uint32_t size, uint32_t flags)
{
	return sleepy_lstack_call(area, size, flags) ? errno : 0;
}

struct step {
	const char *name;
	enum area_kind area;
	uint32_t size, flags;
	int want;
};

#define MAX_SIZE SLEEPY_LSTACK_MAX_SIZE
#define UNREG SLEEPY_LSTACK_UNREGISTER

/* In order: some register and unregister, which the later ones rely on. */
static const struct step steps[] = {
	{ "unregister-none", AREA_A, 0, UNREG, EINVAL },
	{ "efault-unmapped", AREA_UNMAPPED, 528, 0, EFAULT },
	{ "efault-kernel-address", AREA_KERNEL, 528, 0, EFAULT },
	{ "efault-null", AREA_NULL, 528, 0, EFAULT },
	{ "einval-misaligned", AREA_MISALIGNED, 528, 0, EINVAL },
	{ "einval-too-small", AREA_A, SLEEPY_LSTACK_MIN_SIZE - 16, 0, EINVAL },
	{ "einval-size-zero", AREA_A, 0, 0, EINVAL },
	{ "einval-oversized", AREA_A, MAX_SIZE + 16, 0, EINVAL },
	{ "einval-size-not-whole-frames", AREA_A, 40, 0, EINVAL },
	{ "einval-unknown-flag", AREA_A, 528, 0x2, EINVAL },
	{ "einval-high-flag", AREA_A, 528, 0x80000000u, EINVAL },
	{ "register-smallest", AREA_A, SLEEPY_LSTACK_MIN_SIZE, 0, 0 },
	{ "ebusy-same-area", AREA_A, SLEEPY_LSTACK_MIN_SIZE, 0, EBUSY },
	{ "ebusy-other-area", AREA_B, 528, 0, EBUSY },
	{ "unregister-wrong-area", AREA_B, 0, UNREG, EINVAL },
	{ "unregister-unknown-flag", AREA_A, 0, UNREG | 0x2, EINVAL },
	{ "unregister-size-not-zero", AREA_A, 528, UNREG, EINVAL },
	{ "unregister", AREA_A, 0, UNREG, 0 },
	{ "unregister-twice", AREA_A, 0, UNREG, EINVAL },
	{ "register-largest", AREA_B, MAX_SIZE, 0, 0 },
	{ "unregister-largest-size-not-zero", AREA_B, MAX_SIZE, UNREG, EINVAL },
	{ "unregister-largest", AREA_B, 0, UNREG, 0 },
};

static void run_steps(void)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *s = &steps[i];

		check(s->name, call(area_of(s->area), s->size, s->flags),
		      s->want);
	}
}

/* The library's register and unregister of this thread's TLS area. */
static int lib_register(void)
{
	return sleepy_lstack_register() ? errno : 0;
}

static int lib_unregister(void)
{
	return sleepy_lstack_unregister() ? errno : 0;
}

/* A new thread of a registered one starts unregistered. */
static void *new_thread(void *p)
{
	(void)p;
	check("new-thread-starts-unregistered", lib_unregister(), EINVAL);
	check("new-thread-registers", lib_register(), 0);
	return NULL;
}

/* A fork child of a registered thread starts unregistered. */
static void check_fork(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die(1, "fork: %s", strerror(errno));
	if (pid == 0) {
		check("fork-child-starts-unregistered", lib_unregister(),
		      EINVAL);
		check("fork-child-registers", lib_register(), 0);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0)
		die(1, "waitpid: %s", strerror(errno));
	failures += !WIFEXITED(status) || WEXITSTATUS(status);
}

/* A storm thread: registers, pushes, blocks a moment, and exits, after
 * unregistering if p is not NULL. */
static void *storm_thread(void *p)
{
	int err = lib_register();

	SLEEPY_LSTACK_PUSH(1, 1);
	SLEEPY_LSTACK_PUSH(2, 2);
	usleep(100);
	if (!err && p)
		err = lib_unregister();
	return (void *)(intptr_t)err;
}

/* n threads, 8 at a time, that register and exit. */
static void storm(unsigned int n)
{
	unsigned int bad = 0, ran = 0;
	int last = 0;

	while (ran < n) {
		pthread_t t[8];
		unsigned int k = n - ran < 8 ? n - ran : 8;

		for (unsigned int i = 0; i < k; i++) {
			int err = pthread_create(&t[i], NULL, storm_thread,
						 (void *)(intptr_t)((ran + i) %
								    2));
			if (err)
				die(1, "pthread_create: %s", strerror(err));
		}
		for (unsigned int i = 0; i < k; i++) {
			void *r;

			pthread_join(t[i], &r);
			if (r)
				last = (int)(intptr_t)r;
			bad += r != NULL;
		}
		ran += k;
	}
	printf("%s storm: %u threads registered and exited, %u unregistering "
	       "first; %u failed%s%s\n", bad ? "FAIL" : "ok", n, n / 2, bad,
	       bad ? ", the last with " : "", bad ? err_name(last) : "");
	failures += bad != 0;
}

struct exec_args {
	char *self;
	char count[16];
};

/* A registered second thread execs this program again. */
static void *exec_thread(void *p)
{
	struct exec_args *e = p;
	char *argv[] = { e->self, "--after-exec", e->count, NULL };

	check("exec-thread-registers", lib_register(), 0);
	SLEEPY_LSTACK_PUSH(7, 7);
	fflush(stdout);
	execv("/proc/self/exe", argv);
	die(1, "exec /proc/self/exe: %s", strerror(errno));
}

static void check_exec(char *self)
{
	struct exec_args e = { .self = self };
	pthread_t t;
	int err;

	snprintf(e.count, sizeof(e.count), "%d", failures);
	err = pthread_create(&t, NULL, exec_thread, &e);
	if (err)
		die(1, "pthread_create: %s", strerror(err));
	pthread_join(t, NULL);	/* never returns: the exec ends us */
	die(1, "the exec did not happen");
}

/* The new image after check_exec(): it starts unregistered. */
static int after_exec(const char *count)
{
	failures = atoi(count);
	check("exec-starts-unregistered", lib_unregister(), EINVAL);
	check("exec-registers", lib_register(), 0);
	printf("done: %d failed\n", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 2000;
	int exec = 1;
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--after-exec") && argv[i + 1]) {
			return after_exec(argv[i + 1]);
		} else if (!strcmp(argv[i], "--no-exec")) {
			exec = 0;
		} else if (!strcmp(argv[i], "--storm") && argv[i + 1]) {
			n = strtoul(argv[++i], &end, 10);
			if (*end || !*argv[i] || n > 1000000)
				die(2, "--storm: expected 0 to 1000000");
		} else {
			die(2, "%s: unknown option (see --help)", argv[i]);
		}
	}
	run_steps();
	check("library-register", lib_register(), 0);
	check("library-register-again", lib_register(), EBUSY);
	if ((errno = pthread_create(&t, NULL, new_thread, NULL)))
		die(1, "pthread_create: %s", strerror(errno));
	pthread_join(t, NULL);
	check_fork();
	storm((unsigned int)n);
	if (exec)
		check_exec(argv[0]);
	printf("done: %d failed\n", failures);
	return failures ? 1 : 0;
}
