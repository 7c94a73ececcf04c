// SPDX-License-Identifier: GPL-2.0
/*
 * pmu_cost: the guest side of the overflow-signal cost benchmark.
 *
 *   pmu_cost none|sleepy|perf PERIOD_NS [ITERATIONS]
 *
 * Times a busy loop (CLOCK_MONOTONIC around the loop only) while overflow
 * signals arrive every PERIOD_NS of CPU time, and prints one JSON object
 * with the loop's time and the signals received:
 *   none    no signals: the baseline;
 *   sleepy  sleepy_pmu's software counter 0 at PERIOD_NS, the process
 *           registered for a real-time signal (needs root);
 *   perf    perf_event_open() with a cpu-clock sampling event at the same
 *           period, user-mode only, wakeup_events = 1, and O_ASYNC,
 *           F_SETSIG and F_SETOWN on its descriptor;
 *   sleepy-nosignal, perf-nosignal
 *           the same counters, but the process neither registers nor asks
 *           for signals: what the overflows cost without the signal.
 * Both handlers are the same: count the signal and keep si_addr (which
 * perf's signal does not carry: it has only the descriptor).
 *
 *   pmu_cost syscall|selfsignal COUNT
 *
 * The floor any signal pays here, with no interrupt and no counter:
 *   syscall     COUNT getppid() system calls;
 *   selfsignal  COUNT tgkill() calls to the calling thread, each delivered
 *               to the same handler before the call returns;
 *   queued      the signal blocked, batches of tgkill() calls that only
 *               queue it, then one sigprocmask() that unblocks it: the
 *               batch is delivered on that call's way out, one signal
 *               after another. Timed apart, the two give what queueing
 *               one signal costs and what delivering one costs (dequeue,
 *               frame, handler, sigreturn), with no system call of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/sleepy_pmu.h>

#define PROG "pmu_cost"
#include "die.h"

static volatile uint64_t signals;
static volatile uintptr_t last_addr;

static void handler(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)uctx;
	signals++;
	last_addr = (uintptr_t)si->si_addr;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static void busy(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

static void catch(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		die(1, "sigaction: %s", strerror(errno));
}

static int sleepy_begin(uint64_t period, int sig, bool signal)
{
	struct sleepy_pmu_config cfg = {
		.source = SLEEPY_PMU_SOURCE_SOFTWARE,
		.event = SLEEPY_PMU_SW_CPU_CLOCK, .threshold = period,
	};
	int fd = open(SLEEPY_PMU_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die(1, "%s: %s", SLEEPY_PMU_DEVICE, strerror(errno));
	if (ioctl(fd, SLEEPY_PMU_CONFIGURE, &cfg))
		die(1, "configuring the software counter: %s", strerror(errno));
	if (signal && ioctl(fd, SLEEPY_PMU_REGISTER, &sig))
		die(1, "registering: %s", strerror(errno));
	return fd;
}

static void sleepy_end(int fd, bool signal)
{
	struct sleepy_pmu_config cfg = { .flags = SLEEPY_PMU_CONFIG_STOP };

	if ((signal && ioctl(fd, SLEEPY_PMU_UNREGISTER)) ||
	    ioctl(fd, SLEEPY_PMU_CONFIGURE, &cfg))
		die(1, "stopping: %s", strerror(errno));
	close(fd);
}

static int perf_begin(uint64_t period, int sig, bool signal)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die(1, "perf_event_open: %s", strerror(errno));
	if (signal && (fcntl(fd, F_SETFL, O_ASYNC) || fcntl(fd, F_SETSIG, sig) ||
		       fcntl(fd, F_SETOWN, getpid())))
		die(1, "fcntl on the perf event: %s", strerror(errno));
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		die(1, "enabling the perf event: %s", strerror(errno));
	return fd;
}

static void perf_end(int fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		die(1, "disabling the perf event: %s", strerror(errno));
	close(fd);
}

#define QUEUED_BATCH 500

/* Queue COUNT signals in batches while blocked, deliver each batch at once. */
static void queued_run(uint64_t count, int sig, pid_t pid, pid_t tid)
{
	uint64_t queue_ns = 0, deliver_ns = 0, done = 0, t0, t1, t2;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	while (done < count) {
		uint64_t n = count - done < QUEUED_BATCH ? count - done :
			     QUEUED_BATCH;

		if (sigprocmask(SIG_BLOCK, &set, NULL))
			die(1, "sigprocmask: %s", strerror(errno));
		t0 = now_ns();
		for (uint64_t i = 0; i < n; i++)
			if (syscall(SYS_tgkill, pid, tid, sig))
				die(1, "tgkill: %s (RLIMIT_SIGPENDING?)",
				    strerror(errno));
		t1 = now_ns();
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		t2 = now_ns();
		queue_ns += t1 - t0;
		deliver_ns += t2 - t1;
		done += n;
	}
	if (signals != count)
		die(1, "queued: %" PRIu64 " signals for %" PRIu64 " sent",
		    (uint64_t)signals, count);
	printf("{\"mode\": \"queued\", \"count\": %" PRIu64
	       ", \"queue_ns\": %" PRIu64 ", \"deliver_ns\": %" PRIu64
	       ", \"batch\": %d, \"signals\": %" PRIu64 "}\n", count,
	       queue_ns, deliver_ns, QUEUED_BATCH, (uint64_t)signals);
}

/* The floor modes: COUNT system calls, each with or without a signal. */
static int floor_run(const char *mode, const char *count_arg, int sig)
{
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	bool with_signal = !strcmp(mode, "selfsignal");
	uint64_t count, t0, t1;
	char *end;

	count = strtoull(count_arg, &end, 10);
	if (*end || !count)
		die(2, "%s: invalid count", count_arg);
	catch(sig);
	if (!strcmp(mode, "queued")) {
		queued_run(count, sig, pid, tid);
		return 0;
	}
	t0 = now_ns();
	for (uint64_t i = 0; i < count; i++) {
		if (with_signal)
			syscall(SYS_tgkill, pid, tid, sig);
		else
			syscall(SYS_getppid);
	}
	t1 = now_ns();
	if (with_signal && signals != count)
		die(1, "selfsignal: %" PRIu64 " signals for %" PRIu64 " calls",
		    (uint64_t)signals, count);
	printf("{\"mode\": \"%s\", \"count\": %" PRIu64
	       ", \"self_ns\": %" PRIu64 ", \"signals\": %" PRIu64 "}\n",
	       mode, count, t1 - t0, (uint64_t)signals);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t period, iterations = 200000000, t0, t1;
	int sig = SIGRTMIN + 2, fd = -1;
	const char *mode;
	bool signal;
	char *end;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: pmu_cost MODE PERIOD_NS [ITERATIONS]\n"
		     "       pmu_cost syscall|selfsignal|queued COUNT\n"
		     "MODE: none, sleepy, perf, sleepy-nosignal, perf-nosignal\n"
		     "Time a busy loop while overflow signals arrive every\n"
		     "PERIOD_NS of CPU time, from sleepy_pmu or from perf; print\n"
		     "the loop's time and the signals as one JSON object.\n"
		     "syscall and selfsignal time COUNT getppid() calls, or COUNT\n"
		     "tgkill() calls that each deliver a signal to the caller:\n"
		     "the floor of a signal with no interrupt. queued queues\n"
		     "the signal while blocked and delivers it in batches, and\n"
		     "times the two apart.");
		return 0;
	}
	if (argc >= 2 && (!strcmp(argv[1], "syscall") ||
			  !strcmp(argv[1], "selfsignal") ||
			  !strcmp(argv[1], "queued"))) {
		if (argc != 3)
			die(2, "usage: pmu_cost %s COUNT (see --help)", argv[1]);
		return floor_run(argv[1], argv[2], sig);
	}
	if (argc < 3 || argc > 4)
		die(2, "usage: pmu_cost MODE PERIOD_NS [ITERATIONS] (see --help)");
	mode = argv[1];
	period = strtoull(argv[2], &end, 10);
	if (*end || !period)
		die(2, "%s: invalid period", argv[2]);
	if (argc == 4) {
		iterations = strtoull(argv[3], &end, 10);
		if (*end || !iterations)
			die(2, "%s: invalid iteration count", argv[3]);
	}
	if (strcmp(mode, "none") && strcmp(mode, "sleepy") &&
	    strcmp(mode, "perf") && strcmp(mode, "sleepy-nosignal") &&
	    strcmp(mode, "perf-nosignal"))
		die(2, "%s: unknown mode (none, sleepy, perf, sleepy-nosignal or "
		    "perf-nosignal)", mode);
	catch(sig);
	signal = !strstr(mode, "-nosignal");
	if (!strncmp(mode, "sleepy", 6))
		fd = sleepy_begin(period, sig, signal);
	else if (!strncmp(mode, "perf", 4))
		fd = perf_begin(period, sig, signal);

	t0 = now_ns();
	busy(iterations);
	t1 = now_ns();

	if (!strncmp(mode, "sleepy", 6))
		sleepy_end(fd, signal);
	else if (!strncmp(mode, "perf", 4))
		perf_end(fd);
	printf("{\"mode\": \"%s\", \"period_ns\": %" PRIu64
	       ", \"iterations\": %" PRIu64 ", \"self_ns\": %" PRIu64
	       ", \"signals\": %" PRIu64 "}\n", mode, period, iterations,
	       t1 - t0, (uint64_t)signals);
	return 0;
}
