// SPDX-License-Identifier: GPL-2.0
/*
 * pmu_check: the guest side of tests/test_pmu.py (test code only).
 *
 *   pmu_check errors
 *	every error case of /dev/sleepy_pmu, one JSON object per line:
 *	{"case": ..., "want": "EINVAL", "got": "EINVAL"}
 *   pmu_check busy --seconds S [--until FILE [--after A]] [--cpu C]
 *		    [--signal N] [--no-register] [--close-fd]
 *		    [--sleep [--nap US]] [-- CMD [ARG...]]
 *	spin (or sleep) for S seconds of CPU (or wall) time, and after that
 *	until FILE exists if one is given, then A seconds more ("received_
 *	until": the signals received when it saw FILE), pinned to CPU C,
 *	sleeping in naps of US microseconds, or by default of random lengths
 *	(see nap()),
 *	registered for signal N; print one JSON object with the signals
 *	received, whether their siginfo was right and the spins done (units
 *	of user-mode work, to see how much of its CPU time the spinner got to
 *	use); then, with a CMD, exec it still registered
 *   pmu_check pending
 *	block SIGRTMIN, register for it and spin until an overflow signal is
 *	pending; unregister, restore the default action (terminate) and
 *	unblock it. Print {"pending": 1, "after": A} (A: still pending after
 *	the unregistration), then "alive" if the unblock did not kill it
 *   pmu_check monotonic --cpu C --threshold T --seconds S
 *	read counter 0 of CPU C (another CPU is the caller's) as fast as
 *	possible for S seconds; print the reads, the overflows seen and any
 *	decrease that no overflow explains (the first one's previous value,
 *	value and nanoseconds between the reads)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libsleepy_pmu.h"

#define PROG "pmu_check"
#include "die.h"

extern const char __executable_start[], etext[];

/*
 * The raw system call, not the vDSO: a vDSO that falls back to the system
 * call would put the user PC of an interrupted call outside our text.
 */
static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, clk, &ts))
		die(1, "clock_gettime: %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case ENODEV: return "ENODEV";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	case EDQUOT: return "EDQUOT";
	case ENOTTY: return "ENOTTY";
	case EBUSY: return "EBUSY";
	default: return strerror(e);
	}
}

static void report(const char *name, int want, int ret)
{
	int got = ret ? errno : 0;

	printf("{\"case\": \"%s\", \"want\": \"%s\", \"got\": \"%s\"}\n", name,
	       errname(want), errname(got));
	fflush(stdout);
}

static int open_dev(void)
{
	int fd = sleepy_pmu_open();

	if (fd < 0)
		die(1, "%s: %s", SLEEPY_PMU_DEVICE, strerror(errno));
	return fd;
}

static int configure(int fd, uint32_t counter, uint32_t source,
		     uint64_t event, uint64_t threshold, uint32_t flags,
		     uint32_t reserved)
{
	struct sleepy_pmu_config c = {
		.counter = counter, .source = source, .event = event,
		.threshold = threshold, .flags = flags, .reserved = reserved,
	};

	return ioctl(fd, SLEEPY_PMU_CONFIGURE, &c);
}

static int read_counter(int fd, int cpu, uint32_t counter)
{
	struct sleepy_pmu_counter_value v = { .cpu = cpu, .counter = counter };

	return ioctl(fd, SLEEPY_PMU_READ_COUNTER, &v);
}

/* Is pid listed by a read of the device (with signal sig, if sig > 0)? */
static bool listed(int pid, int sig)
{
	char line[64];
	bool found = false;
	int fd = open_dev();
	FILE *f = fdopen(fd, "r");

	while (f && fgets(line, sizeof(line), f)) {
		int p, s;

		if (sscanf(line, "%d %d", &p, &s) == 2 && p == pid &&
		    (sig <= 0 || s == sig))
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static void print_bool(const char *name, bool v)
{
	printf("{\"case\": \"%s\", \"want\": \"true\", \"got\": \"%s\"}\n",
	       name, v ? "true" : "false");
	fflush(stdout);
}

/*
 * Fork n children that each register on fd for sig and wait until
 * release_registrations(); die if one cannot register.
 */
static void hold_registrations(int fd, int n, int sig, pid_t *kids,
			       int hold[2])
{
	int ready[2];
	char c;

	if (pipe(ready) || pipe(hold))
		die(1, "pipe: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die(1, "fork: %s", strerror(errno));
		if (kids[i] == 0) {
			char r;

			close(hold[1]);
			r = ioctl(fd, SLEEPY_PMU_REGISTER, &sig) ? 'n' : 'y';
			if (write(ready[1], &r, 1) != 1)
				_exit(1);
			/* Until the parent closes hold. */
			if (read(hold[0], &r, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (read(ready[0], &c, 1) != 1 || c != 'y')
			die(1, "child %d could not register", i);
	}
	close(ready[0]);
	close(ready[1]);
}

/* Let hold_registrations()'s children exit, and reap them. */
static void release_registrations(int n, const pid_t *kids, int hold[2])
{
	close(hold[1]);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	close(hold[0]);
}

/* Fill every registration slot with children; the next one is refused. */
static void capacity_cases(int fd)
{
	pid_t kids[SLEEPY_PMU_MAX_REGISTERED];
	int hold[2], n = SLEEPY_PMU_MAX_REGISTERED, sig = SIGUSR2;

	hold_registrations(fd, n, sig, kids, hold);
	report("register beyond capacity", ENOSPC,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	release_registrations(n, kids, hold);
	/* Their thread groups died: every slot is free again. */
	print_bool("dead children are dropped", !listed(kids[0], 0) &&
		   !listed(kids[n - 1], 0));
	report("register after children died", 0,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	report("unregister", 0, ioctl(fd, SLEEPY_PMU_UNREGISTER));
}

/*
 * An unprivileged user: SLEEPY_PMU_MAX_PER_USER registrations at most, and
 * the device shows it its own only (the parent, root, is registered).
 */
static void per_user_child(void)
{
	pid_t kids[SLEEPY_PMU_MAX_PER_USER];
	int fd, hold[2], n = SLEEPY_PMU_MAX_PER_USER, sig = SIGUSR2;

	if (setgid(65534) || setuid(65534))
		die(1, "dropping privileges: %s", strerror(errno));
	fd = open_dev();
	print_bool("unprivileged reader does not see root's registration",
		   !listed(getppid(), 0));
	hold_registrations(fd, n, sig, kids, hold);
	print_bool("unprivileged reader sees its own user's registrations",
		   listed(kids[0], sig) && listed(kids[n - 1], sig));
	report("register beyond the per-user limit", EDQUOT,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	release_registrations(n, kids, hold);
	report("register after the user's children died", 0,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	report("unregister", 0, ioctl(fd, SLEEPY_PMU_UNREGISTER));
}

/* An unprivileged child: what it may and may not do. */
static void unprivileged_child(void)
{
	int fd, sig = SIGUSR1;

	if (setgid(65534) || setuid(65534))
		die(1, "dropping privileges: %s", strerror(errno));
	fd = open_dev();
	report("unprivileged configure", EPERM,
	       configure(fd, 1, SLEEPY_PMU_SOURCE_SOFTWARE, 0, 1000000, 0, 0));
	report("unprivileged stop", EPERM,
	       configure(fd, 0, 0, 0, 0, SLEEPY_PMU_CONFIG_STOP, 0));
	report("unprivileged unregister all", EPERM,
	       ioctl(fd, SLEEPY_PMU_UNREGISTER_ALL));
	report("unprivileged read, not registered", EPERM,
	       read_counter(fd, -1, 0));
	report("unprivileged register", 0, ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	/* Counts are CPU-wide: registering gives no right to read them. */
	report("unprivileged read, registered", EPERM, read_counter(fd, -1, 0));
	report("unprivileged unregister", 0, ioctl(fd, SLEEPY_PMU_UNREGISTER));
}

/* perf's rule for CPU-wide events: anyone may read at paranoid 0. */
static void unprivileged_paranoid0_child(void)
{
	int fd;

	if (setgid(65534) || setuid(65534))
		die(1, "dropping privileges: %s", strerror(errno));
	fd = open_dev();
	report("unprivileged read, perf_event_paranoid 0", 0,
	       read_counter(fd, -1, 0));
	report("unprivileged configure, perf_event_paranoid 0", EPERM,
	       configure(fd, 1, SLEEPY_PMU_SOURCE_SOFTWARE, 0, 1000000, 0, 0));
}

static void in_child(void (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die(1, "fork: %s", strerror(errno));
	if (pid == 0) {
		fn();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die(1, "unprivileged child failed");
}

static void write_paranoid(const char *value)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "w");

	if (!f || fputs(value, f) < 0 || fclose(f))
		die(1, "perf_event_paranoid: %s", strerror(errno));
}

static void unprivileged_cases(void)
{
	int fd, sig = SIGUSR1;
	char old[16] = "";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (!f || !fgets(old, sizeof(old), f))
		die(1, "perf_event_paranoid: %s", strerror(errno));
	fclose(f);
	in_child(unprivileged_child);
	fd = open_dev();
	if (ioctl(fd, SLEEPY_PMU_REGISTER, &sig))
		die(1, "register: %s", strerror(errno));
	in_child(per_user_child);
	ioctl(fd, SLEEPY_PMU_UNREGISTER);
	close(fd);
	write_paranoid("0");
	in_child(unprivileged_paranoid0_child);
	write_paranoid(old);
}

static int cmd_errors(void)
{
	int fd = open_dev(), sig;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	/* Counter 0 runs while we are registered for these. */
	signal(SIGUSR1, ignore_signal);
	signal(SIGUSR2, ignore_signal);

	report("counter out of range", EINVAL,
	       configure(fd, SLEEPY_PMU_MAX_COUNTERS, 0, 0, 1000000, 0, 0));
	report("unknown source", EINVAL, configure(fd, 0, 7, 0, 1000000, 0, 0));
	report("unknown flag", EINVAL,
	       configure(fd, 0, 0, 0, 1000000, 1u << 7, 0));
	report("reserved field set", EINVAL,
	       configure(fd, 0, 0, 0, 1000000, 0, 1));
	report("zero threshold", EINVAL, configure(fd, 0, 0, 0, 0, 0, 0));
	report("threshold below 10 us", EINVAL,
	       configure(fd, 0, 0, 0, 9999, 0, 0));
	report("unknown software event", EINVAL,
	       configure(fd, 0, 0, 5, 1000000, 0, 0));
	report("hardware source without a PMU", ENODEV,
	       configure(fd, 0, SLEEPY_PMU_SOURCE_HARDWARE, 0x3c, 100000, 0,
			 0));
	report("configure bad pointer", EFAULT,
	       ioctl(fd, SLEEPY_PMU_CONFIGURE, (void *)16));
	report("read a stopped counter", EINVAL, read_counter(fd, -1, 0));

	report("start software counter 0", 0,
	       configure(fd, 0, 0, 0, 5000000, 0, 0));
	report("read counter out of range", EINVAL,
	       read_counter(fd, 0, SLEEPY_PMU_MAX_COUNTERS));
	report("read cpu -2", EINVAL, read_counter(fd, -2, 0));
	report("read cpu beyond the last", EINVAL, read_counter(fd, 4096, 0));
	report("read a CPU that is not online", EINVAL,
	       read_counter(fd, (int)ncpu, 0));
	report("read bad pointer", EFAULT,
	       ioctl(fd, SLEEPY_PMU_READ_COUNTER, (void *)16));
	report("read counter 0 on cpu 0", 0, read_counter(fd, 0, 0));
	report("hardware while software runs", EBUSY,
	       configure(fd, 1, SLEEPY_PMU_SOURCE_HARDWARE, 0x3c, 100000, 0,
			 0));

	sig = 0;
	report("register signal 0", EINVAL, ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	sig = SIGKILL;
	report("register SIGKILL", EINVAL, ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	sig = 65;
	report("register signal 65", EINVAL,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	report("register bad pointer", EFAULT,
	       ioctl(fd, SLEEPY_PMU_REGISTER, (void *)16));
	report("unregister when not registered", ENOENT,
	       ioctl(fd, SLEEPY_PMU_UNREGISTER));
	report("unknown ioctl", ENOTTY, ioctl(fd, _IO(0xb5, 99)));
	sig = SIGUSR1;
	report("register", 0, ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	print_bool("listed with its signal", listed(getpid(), SIGUSR1));
	sig = SIGUSR2;
	report("register again", 0, ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	print_bool("re-registering changes the signal",
		   listed(getpid(), SIGUSR2) && !listed(getpid(), SIGUSR1));
	report("unregister", 0, ioctl(fd, SLEEPY_PMU_UNREGISTER));
	print_bool("unregistered is not listed", !listed(getpid(), 0));

	unprivileged_cases();
	capacity_cases(fd);

	sig = SIGUSR1;
	report("register before unregister all", 0,
	       ioctl(fd, SLEEPY_PMU_REGISTER, &sig));
	report("unregister all", 0, ioctl(fd, SLEEPY_PMU_UNREGISTER_ALL));
	print_bool("unregister all empties the list", !listed(getpid(), 0));
	report("stop counter 0", 0,
	       configure(fd, 0, 0, 0, 0, SLEEPY_PMU_CONFIG_STOP, 0));
	report("read after stop", EINVAL, read_counter(fd, -1, 0));
	close(fd);
	return 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die(1, "pinning to CPU %d: %s", cpu, strerror(errno));
}

static volatile uint64_t sink;

__attribute__((noinline)) static void spin_a_while(void)
{
	for (int i = 0; i < 20000; i++)
		sink += i;
}

struct event_stats {
	uint64_t events, outside, wrong_cpu, bad, min_value, max_value;
};

static void check_event(const struct sleepy_pmu_event *ev, int cpu,
			struct event_stats *st)
{
	st->events++;
	if (ev->pc < (uintptr_t)__executable_start ||
	    ev->pc >= (uintptr_t)etext)
		st->outside++;
	if (cpu >= 0 && ev->cpu != (uint32_t)cpu)
		st->wrong_cpu++;
	if (ev->counter >= SLEEPY_PMU_MAX_COUNTERS)
		st->bad++;
	if (ev->value < st->min_value)
		st->min_value = ev->value;
	if (ev->value > st->max_value)
		st->max_value = ev->value;
}

/*
 * One nap of the sleeper: us microseconds, or if us is 0 a random length
 * from 10 to 12 ms. Naps of one fixed length lock the sleeper's wake-ups
 * to the counter's crossings, which come at a fixed rate while spinners
 * share the CPU: a wake-up whose timer slack lets it expire with the
 * counter's timer starts the next nap just after a crossing, so every
 * following one falls at the same distance from a crossing. Depending on
 * that distance, set by the kernel's and this program's instruction
 * counts, the sleeper then runs across a crossing once in every cycle of
 * that drift or never. Random lengths spread its runs over the period.
 */
static void nap(unsigned int us)
{
	static unsigned int seed;

	if (!seed)
		seed = (unsigned int)(now_ns(CLOCK_MONOTONIC) ^ getpid());
	usleep(us ? us : 10000 + (unsigned int)rand_r(&seed) % 2000);
}

/* When busy ends: see --seconds, --until and --after. */
struct busy_end {
	double seconds, after;
	const char *until;
	bool seen;		/* until exists: the A seconds after run */
	uint64_t seen_at;	/* elapsed ns then */
	uint64_t received_until;
};

static bool busy_done(struct busy_end *e, uint64_t elapsed,
		      const struct sleepy_pmu_ring *ring)
{
	if (!e->seen) {
		if (elapsed < e->seconds * 1e9 ||
		    (e->until && access(e->until, F_OK)))
			return false;
		e->seen = true;
		e->seen_at = elapsed;
		e->received_until = atomic_load(&ring->received);
	}
	return elapsed - e->seen_at >= e->after * 1e9;
}

/* busy's options. */
struct busy_opts {
	struct busy_end end;
	unsigned int nap_us;
	int cpu, sig;
	bool do_register, close_fd, sleep_only;
	char **then;		/* the program to exec at the end, or NULL */
};

static void busy_options(int argc, char **argv, struct busy_opts *o)
{
	*o = (struct busy_opts){ .end.seconds = 1, .cpu = -1,
				 .sig = SIGRTMIN, .do_register = true };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			o->end.seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--until") && i + 1 < argc)
			o->end.until = argv[++i];
		else if (!strcmp(argv[i], "--after") && i + 1 < argc)
			o->end.after = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			o->cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--signal") && i + 1 < argc)
			o->sig = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-register"))
			o->do_register = false;
		else if (!strcmp(argv[i], "--close-fd"))
			o->close_fd = true;
		else if (!strcmp(argv[i], "--sleep"))
			o->sleep_only = true;
		else if (!strcmp(argv[i], "--nap") && i + 1 < argc)
			o->nap_us = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--") && i + 1 < argc) {
			o->then = argv + i + 1;
			break;
		} else
			die(2, "busy: %s: unknown option", argv[i]);
	}
}

/*
 * busy's device: the ring, and the registration (or, with --no-register,
 * the handler alone, to count any signal that comes all the same).
 * Returns the device's fd, closed already with --close-fd.
 */
static int busy_register(const struct busy_opts *o,
			 struct sleepy_pmu_ring *ring)
{
	int fd;

	/*
	 * Room for every signal of a 10 s storm at its 10,000 a second,
	 * drained or not: on the debug kernel a signal can cost as much as
	 * its 100 us period, and then the next is pending as each handler
	 * returns, so busy's loop may not run for seconds (one CI run took
	 * 57,106 signals while it drained 34,784 into a ring of 2^14).
	 */
	if (sleepy_pmu_ring_init(ring, 1 << 17))
		die(1, "ring: %s", strerror(errno));
	fd = open_dev();
	if (o->do_register && sleepy_pmu_register(fd, o->sig, ring))
		die(1, "register: %s", strerror(errno));
	if (!o->do_register && (sleepy_pmu_register(fd, o->sig, ring) ||
				sleepy_pmu_unregister(fd)))
		die(1, "installing the handler: %s", strerror(errno));
	if (o->close_fd)
		close(fd);
	return fd;
}

/* What busy measured, printed as one JSON object. */
struct busy_result {
	uint64_t cpu_ns, wall_ns, spins, setup_cpu_ns;
	uint64_t unreg_cpu_ns, unreg_wall_ns;
	struct event_stats st;
};

static void busy_report(const struct busy_opts *o, const struct busy_result *r,
			struct sleepy_pmu_ring *ring)
{
	printf("{\"pid\": %d, \"cpu\": %d, \"cpu_ns\": %" PRIu64
	       ", \"wall_ns\": %" PRIu64 ", \"received\": %" PRIu64
	       ", \"events\": %" PRIu64 ", \"dropped\": %" PRIu64
	       ", \"foreign\": %" PRIu64 ", \"outside_text\": %" PRIu64
	       ", \"wrong_cpu\": %" PRIu64 ", \"bad_counter\": %" PRIu64
	       ", \"min_value\": %" PRIu64 ", \"max_value\": %" PRIu64
	       ", \"spins\": %" PRIu64 ", \"received_until\": %" PRIu64
	       ", \"setup_cpu_ns\": %" PRIu64 ", \"unregister_cpu_ns\": %" PRIu64
	       ", \"unregister_wall_ns\": %" PRIu64 "}\n",
	       getpid(), o->cpu, r->cpu_ns, r->wall_ns,
	       (uint64_t)atomic_load(&ring->received), r->st.events,
	       (uint64_t)atomic_load(&ring->dropped),
	       (uint64_t)atomic_load(&ring->foreign), r->st.outside,
	       r->st.wrong_cpu, r->st.bad,
	       r->st.events ? r->st.min_value : 0, r->st.max_value, r->spins,
	       o->end.received_until, r->setup_cpu_ns, r->unreg_cpu_ns,
	       r->unreg_wall_ns);
}

static int cmd_busy(int argc, char **argv)
{
	struct busy_result r = { .st.min_value = UINT64_MAX };
	struct sleepy_pmu_ring ring;
	struct sleepy_pmu_event ev;
	struct busy_opts o;
	uint64_t start_cpu, start_wall, t;
	int fd;

	busy_options(argc, argv, &o);
	pin(o.cpu);
	fd = busy_register(&o, &ring);
	start_cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	start_wall = now_ns(CLOCK_MONOTONIC);
	r.setup_cpu_ns = start_cpu;	/* the CPU time before the loop */
	for (;;) {
		/* Drain as it runs, as a real consumer would. */
		while (sleepy_pmu_ring_pop(&ring, &ev))
			check_event(&ev, o.cpu, &r.st);
		t = o.sleep_only ? now_ns(CLOCK_MONOTONIC) - start_wall :
				   now_ns(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
		if (busy_done(&o.end, t, &ring))
			break;
		if (o.sleep_only) {
			nap(o.nap_us);
		} else {
			spin_a_while();
			r.spins++;
		}
	}
	r.cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
	r.wall_ns = now_ns(CLOCK_MONOTONIC) - start_wall;
	r.unreg_cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	r.unreg_wall_ns = now_ns(CLOCK_MONOTONIC);
	if (!o.close_fd && o.do_register && !o.then &&
	    sleepy_pmu_unregister(fd))
		die(1, "unregister: %s (registration lost?)", strerror(errno));
	r.unreg_cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - r.unreg_cpu_ns;
	r.unreg_wall_ns = now_ns(CLOCK_MONOTONIC) - r.unreg_wall_ns;
	while (sleepy_pmu_ring_pop(&ring, &ev))
		check_event(&ev, o.cpu, &r.st);
	busy_report(&o, &r, &ring);
	if (o.then) {
		/* Still registered: the new program must not inherit it. */
		fflush(stdout);
		execvp(o.then[0], o.then);
		die(1, "exec %s: %s", o.then[0], strerror(errno));
	}
	return 0;
}

static int cmd_monotonic(int argc, char **argv)
{
	double seconds = 1;
	int cpu = 1, fd, self_cpu;
	uint64_t threshold = 0, reads = 0, overflows = 0, violations = 0;
	uint64_t prev = 0, prev_t = 0, t0, max_value = 0, self_reads = 0;
	uint64_t self_wrong = 0, bad_prev = 0, bad_v = 0, bad_ns = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threshold") && i + 1 < argc)
			threshold = strtoull(argv[++i], NULL, 10);
		else
			die(2, "monotonic: %s: unknown option", argv[i]);
	}
	if (!threshold)
		die(2, "monotonic: --threshold is required");
	self_cpu = cpu == 0 ? 1 : 0;
	pin(self_cpu);
	fd = open_dev();
	t0 = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) - t0 < seconds * 1e9) {
		uint64_t v, before = now_ns(CLOCK_MONOTONIC), after;
		int got;

		if (sleepy_pmu_read_counter(fd, cpu, 0, &v, &got))
			die(1, "read cpu %d: %s", cpu, strerror(errno));
		after = now_ns(CLOCK_MONOTONIC);
		if (got != cpu)
			die(1, "read cpu %d answered for cpu %d", cpu, got);
		/*
		 * Only an overflow explains a decrease, and the counter can
		 * have grown by at most the time from the start of the
		 * previous read to the end of this one.
		 */
		/*
		 * The counter runs on the kernel's sched_clock, which under
		 * QEMU TCG can run up to about a fifth faster than
		 * CLOCK_MONOTONIC (its TSC is not calibrated): allow for that.
		 */
		if (reads && v < prev) {
			overflows++;
			if (prev + (after - prev_t) * 5 / 4 < threshold &&
			    !violations++) {
				bad_prev = prev;
				bad_v = v;
				bad_ns = after - prev_t;
			}
		}
		if (v > max_value)
			max_value = v;
		prev = v;
		prev_t = before;
		reads++;
		/* And the caller's own CPU, through cpu = -1. */
		if (sleepy_pmu_read_counter(fd, -1, 0, &v, &got))
			die(1, "read cpu -1: %s", strerror(errno));
		self_reads++;
		if (got != self_cpu)
			self_wrong++;
	}
	printf("{\"cpu\": %d, \"reads\": %" PRIu64 ", \"overflows\": %" PRIu64
	       ", \"violations\": %" PRIu64 ", \"max_value\": %" PRIu64
	       ", \"self_reads\": %" PRIu64 ", \"self_wrong_cpu\": %" PRIu64
	       ", \"first_violation\": [%" PRIu64 ", %" PRIu64 ", %" PRIu64
	       "]}\n", cpu, reads, overflows, violations, max_value,
	       self_reads, self_wrong, bad_prev, bad_v, bad_ns);
	close(fd);
	return 0;
}

/* See the top of the file. */
static int cmd_pending(void)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC);
	struct sleepy_pmu_ring ring;
	int sig = SIGRTMIN, fd, before, after;
	sigset_t set, pending;

	if (sleepy_pmu_ring_init(&ring, 64))
		die(1, "ring: %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die(1, "sigprocmask: %s", strerror(errno));
	fd = open_dev();
	if (sleepy_pmu_register(fd, sig, &ring))
		die(1, "register: %s", strerror(errno));
	do {
		spin_a_while();
		sigpending(&pending);
		before = sigismember(&pending, sig);
	} while (!before && now_ns(CLOCK_MONOTONIC) - start < 10e9);
	if (sleepy_pmu_unregister(fd))
		die(1, "unregister: %s", strerror(errno));
	sigpending(&pending);
	after = sigismember(&pending, sig);
	signal(sig, SIG_DFL);
	printf("{\"pending\": %d, \"after\": %d}\n", before, after);
	fflush(stdout);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	puts("alive");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		puts("usage: pmu_check errors | busy [...] | pending |\n"
		     "       monotonic [...]\n"
		     "(the guest side of tests/test_pmu.py; see the source)");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "errors"))
		return cmd_errors();
	if (!strcmp(argv[1], "busy"))
		return cmd_busy(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pending"))
		return cmd_pending();
	if (!strcmp(argv[1], "monotonic"))
		return cmd_monotonic(argc - 1, argv + 1);
	die(2, "%s: unknown command", argv[1]);
}
