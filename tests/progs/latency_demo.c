// SPDX-License-Identifier: GPL-2.0
/*
 * latency_demo: system call workloads with known counts, for sleepy's
 * latency histograms (sample_start --latency; parse --latency).
 *
 * Every call the tests count is made with syscall(2), so that the C
 * library adds or substitutes none; each mode prints, as one JSON line,
 * what it did by its own count and clock.
 *
 *   counts   nanosleep SLEEP_US, getppid() and 1 MiB read()s of /dev/zero
 *   pipe     pipe read()s that find data ready (a copy) or block (a wait):
 *            two peaks
 *   threads  several threads calling getppid() at once
 *   exit     a thread blocked in read() while another calls exit_group()
 *   exec     execve() of itself, counted under the program it starts
 *   restart  blocking read()s that a SA_RESTART signal interrupts
 *   eintr    blocking read()s that a signal without SA_RESTART ends
 *   stopped  nanosleep()s that SIGSTOP and SIGCONT interrupt: restarted
 *            as restart_syscall()
 *   badnr    calls of numbers the kernel has no call of, each different
 *   sigreturn  rt_sigreturn() that restores a restart code (-ERESTARTSYS)
 *            into rax, which no signal decision follows
 *   vsyscall time() through the legacy vsyscall page, which the kernel
 *            emulates in its page fault handler (vsyscall=xonly)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: latency_demo MODE [OPTIONS]\n"
	"System call workloads with known counts for sample_start --latency.\n"
	"Prints what it did as one JSON line.\n"
	"\n"
	"modes:\n"
	"  counts   --sleeps N --sleep-us U --getppid N --reads N\n"
	"           nanosleep U us N times, getppid() N times, read() 1 MiB\n"
	"           of /dev/zero N times (defaults 200, 1500, 100000, 300)\n"
	"  pipe     --fast N --slow N --fast-bytes B --slow-us U\n"
	"           read()s of a pipe: N that find B bytes ready (default\n"
	"           2000 of 65536), N that block until a child writes after\n"
	"           U us, give or take a tenth (default 3000 of 1500): two\n"
	"           peaks\n"
	"  threads  --threads N --calls N: getppid() from N threads at once\n"
	"  exit     a thread blocks in read(); the main thread exits\n"
	"  exec     execve() of itself once (then prints as 'exec-done')\n"
	"  restart  --reads N: read()s of a pipe, each blocking 30 ms, that a\n"
	"           SIGALRM handler with SA_RESTART interrupts every 7 ms\n"
	"  eintr    --reads N: the same without SA_RESTART: EINTR\n"
	"  stopped  --sleeps N --sleep-us U: nanosleep()s that the parent\n"
	"           stops and continues (restarted as restart_syscall)\n"
	"  badnr    --calls N: system calls 1000, 1001, ... (ENOSYS), N of\n"
	"           them, each number once (default 20000)\n"
	"  sigreturn  --calls N: N times, a kill() of itself with SIGUSR1,\n"
	"           whose handler makes its rt_sigreturn() restore -512\n"
	"           (-ERESTARTSYS) into rax, then one with SIGUSR2\n"
	"  vsyscall --calls N: time() through the vsyscall page, N times\n"
	"  -h, --help  this text\n";

struct opts {
	long sleeps, sleep_us, getppid, reads, fast, slow, fast_bytes,
	     slow_us, threads, calls;
	char *argv0;		/* exec: the program run again */
};

static void die(const char *what)
{
	fprintf(stderr, "latency_demo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* nanosleep(2) itself, not the C library's clock_nanosleep(). */
static long sys_nanosleep(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	return syscall(SYS_nanosleep, &ts, NULL);
}

static void read_full(int fd, char *buf, size_t n)
{
	while (n) {
		long r = syscall(SYS_read, fd, buf, n);

		if (r <= 0)
			die("read");
		buf += r;
		n -= (size_t)r;
	}
}

static int mode_counts(const struct opts *o)
{
	static char buf[1 << 20];
	uint64_t t0, sleep_ns;
	int fd = open("/dev/zero", O_RDONLY);
	long i, short_reads = 0;

	if (fd < 0)
		die("/dev/zero");
	t0 = now_ns();
	for (i = 0; i < o->sleeps; i++)
		if (sys_nanosleep(o->sleep_us))
			die("nanosleep");
	sleep_ns = now_ns() - t0;
	for (i = 0; i < o->getppid; i++)
		syscall(SYS_getppid);
	for (i = 0; i < o->reads; i++)
		short_reads += syscall(SYS_read, fd, buf, sizeof(buf)) !=
			       (long)sizeof(buf);
	printf("{\"mode\": \"counts\", \"nanosleep\": %ld, \"getppid\": %ld, "
	       "\"read\": %ld, \"short_reads\": %ld, \"sleep_mean_ns\": %"
	       PRIu64 "}\n", o->sleeps, o->getppid, o->reads, short_reads,
	       o->sleeps ? sleep_ns / (uint64_t)o->sleeps : 0);
	return 0;
}

/*
 * pipe's child: for each byte on the socket go, sleep us (give or take a
 * tenth, at random), then write one byte to out. It receives with
 * recvfrom(), not read(): the read()s of the workload are all the
 * parent's. Sleeps of one fixed length would lock the reads to the
 * tick's phase wherever the guest's clock follows its instructions
 * (-icount): each wake starts the next reads at the same distance from
 * a tick, so the tick samples them all or none.
 */
static void slow_writer(int go, int out, long us)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;	/* xorshift64 */
	char c;

	while (syscall(SYS_recvfrom, go, &c, 1, 0, NULL, NULL) == 1) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sys_nanosleep(us - us / 10 + (long)(x % (uint64_t)(us / 5 + 1)));
		if (syscall(SYS_write, out, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static int mode_pipe(const struct opts *o)
{
	char *buf = malloc((size_t)o->fast_bytes);
	int data[2], go[2];
	long i, fast = 0, slow = 0;
	pid_t pid;

	if (!buf || pipe(data) || socketpair(AF_UNIX, SOCK_STREAM, 0, go))
		die("pipe");
	if (fcntl(data[1], F_SETPIPE_SZ, (int)o->fast_bytes) < o->fast_bytes)
		die("F_SETPIPE_SZ");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(go[1]);
		close(data[0]);
		slow_writer(go[0], data[1], o->slow_us);
	}
	close(go[0]);
	memset(buf, 'x', (size_t)o->fast_bytes);
	for (i = 0; i < o->fast + o->slow; i++) {
		/* Spread the slow reads evenly among the fast ones. */
		if (slow * (o->fast + o->slow) < i * o->slow) {
			if (syscall(SYS_sendto, go[1], "g", 1, 0, NULL, 0) != 1)
				die("sendto");
			read_full(data[0], buf, 1);
			slow++;
		} else {
			if (syscall(SYS_write, data[1], buf, o->fast_bytes) !=
			    o->fast_bytes)
				die("write");
			read_full(data[0], buf, (size_t)o->fast_bytes);
			fast++;
		}
	}
	close(go[1]);
	waitpid(pid, NULL, 0);
	printf("{\"mode\": \"pipe\", \"fast\": %ld, \"slow\": %ld, "
	       "\"fast_bytes\": %ld, \"slow_us\": %ld}\n", fast, slow,
	       o->fast_bytes, o->slow_us);
	return 0;
}

static long calls_per_thread;

static void *getppid_loop(void *arg)
{
	for (long i = 0; i < calls_per_thread; i++)
		syscall(SYS_getppid);
	return arg;
}

static int mode_threads(const struct opts *o)
{
	pthread_t *t = calloc((size_t)o->threads, sizeof(*t));
	long i;

	calls_per_thread = o->calls;
	for (i = 0; t && i < o->threads; i++)
		if (pthread_create(&t[i], NULL, getppid_loop, NULL))
			die("pthread_create");
	for (i = 0; t && i < o->threads; i++)
		pthread_join(t[i], NULL);
	printf("{\"mode\": \"threads\", \"threads\": %ld, \"getppid\": %ld}\n",
	       o->threads, o->threads * o->calls);
	return 0;
}

static int block_fd = -1;

static void *blocked_reader(void *arg)
{
	char c;

	syscall(SYS_read, block_fd, &c, 1);	/* never returns */
	return arg;
}

/* A thread blocks in read(); exit_group() then ends it inside the call. */
static int mode_exit(const struct opts *o)
{
	(void)o;
	int p[2];
	pthread_t t;

	if (pipe(p))
		die("pipe");
	block_fd = p[0];
	if (pthread_create(&t, NULL, blocked_reader, NULL))
		die("pthread_create");
	sys_nanosleep(50000);	/* the reader is blocked by now */
	printf("{\"mode\": \"exit\", \"exit_group\": 1, \"read\": 1}\n");
	fflush(stdout);
	syscall(SYS_exit_group, 0);
	return 1;
}

static int mode_exec(const struct opts *o)
{
	char *args[] = { o->argv0, "exec-done", NULL };

	syscall(SYS_execve, "/proc/self/exe", args, environ);
	die("execve");
	return 1;
}

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	handled++;
}

/* pipe's slow child for restart and eintr: a byte every 30 ms. */
static pid_t slow_feeder(int fd, long n)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			sys_nanosleep(30000);
			if (syscall(SYS_write, fd, "r", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	return pid;
}

/*
 * restart (SA_RESTART: the kernel restarts the read) and eintr (no
 * SA_RESTART: the read fails with EINTR and is made again): read()s of
 * a byte that comes every 30 ms, with SIGALRM every 7 ms.
 */
static int mode_signal(const struct opts *o, int flags, const char *name)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = flags };
	struct itimerval it = { { 0, 7000 }, { 0, 7000 } };
	long got = 0, calls = 0, eintr = 0;
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) || sigaction(SIGALRM, &sa, NULL))
		die("pipe");
	pid = slow_feeder(p[1], o->reads);
	setitimer(ITIMER_REAL, &it, NULL);
	while (got < o->reads) {
		long r = syscall(SYS_read, p[0], &c, 1);

		calls++;
		if (r == 1)
			got++;
		else if (r < 0 && errno == EINTR)
			eintr++;
		else
			die("read");
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	waitpid(pid, NULL, 0);
	printf("{\"mode\": \"%s\", \"read\": %ld, \"eintr\": %ld, "
	       "\"signals\": %ld}\n", name, calls, eintr, (long)handled);
	return 0;
}

/* The parent stops and continues its child while the child sleeps. */
static int mode_stopped(const struct opts *o)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (long i = 0; i < o->sleeps; i++)
			if (sys_nanosleep(o->sleep_us))
				_exit(2);
		_exit(0);
	}
	for (long i = 0; i < o->sleeps / 2; i++) {
		sys_nanosleep(o->sleep_us * 2);
		kill(pid, SIGSTOP);
		sys_nanosleep(1000);
		kill(pid, SIGCONT);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("the sleeping child failed");
	printf("{\"mode\": \"stopped\", \"child\": %d, \"nanosleep\": %ld, "
	       "\"stops\": %ld}\n", (int)pid, o->sleeps, o->sleeps / 2);
	return 0;
}

/* Numbers no kernel has a call of: 1000 up, one call each. */
static int mode_badnr(const struct opts *o)
{
	long enosys = 0;

	for (long i = 0; i < o->calls; i++)
		enosys += syscall(1000 + i) == -1 && errno == ENOSYS;
	printf("{\"mode\": \"badnr\", \"first\": 1000, \"calls\": %ld, "
	       "\"enosys\": %ld}\n", o->calls, enosys);
	return enosys != o->calls;
}

/* SIGUSR1: the interrupted code's rax, restored by rt_sigreturn(), -512. */
static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_RAX] = -512;
}

static void on_usr2(int sig)
{
	(void)sig;
}

/*
 * Each SIGUSR1 handler's return leaves rt_sigreturn() returning -512 with
 * no signal decision to follow; the next kill() delivers SIGUSR2, whose
 * decision must not take that attempt for its own. Counts: kill and
 * rt_sigreturn 2N each (and the 2 sigaction() calls).
 */
static int mode_sigreturn(const struct opts *o)
{
	struct sigaction s1 = { .sa_sigaction = on_usr1,
				.sa_flags = SA_SIGINFO };
	struct sigaction s2 = { .sa_handler = on_usr2 };
	pid_t pid = getpid();
	long odd = 0;

	if (sigaction(SIGUSR1, &s1, NULL) || sigaction(SIGUSR2, &s2, NULL))
		die("sigaction");
	for (long i = 0; i < o->calls; i++) {
		odd += syscall(SYS_kill, pid, SIGUSR1) != -1 || errno != 512;
		odd += syscall(SYS_kill, pid, SIGUSR2) != 0;
	}
	printf("{\"mode\": \"sigreturn\", \"kill\": %ld, "
	       "\"rt_sigreturn\": %ld, \"odd\": %ld}\n", 2 * o->calls,
	       2 * o->calls, odd);
	return odd != 0;
}

static int mode_restart(const struct opts *o)
{
	return mode_signal(o, SA_RESTART, "restart");
}

static int mode_eintr(const struct opts *o)
{
	return mode_signal(o, 0, "eintr");
}

static int mode_exec_done(const struct opts *o)
{
	(void)o;
	return puts("{\"mode\": \"exec-done\", \"execve\": 1}") < 0;
}

/* The legacy vsyscall page's time(): a fault the kernel emulates. */
static int mode_vsyscall(const struct opts *o)
{
	time_t (*vtime)(time_t *) = (time_t (*)(time_t *))0xffffffffff600400UL;
	long odd = 0;

	for (long i = 0; i < o->calls; i++)
		odd += vtime(NULL) <= 0;
	printf("{\"mode\": \"vsyscall\", \"time\": %ld, \"odd\": %ld}\n",
	       o->calls, odd);
	return odd != 0;
}

static const struct option long_opts[] = {
	{ "sleeps", required_argument, NULL, 's' },
	{ "sleep-us", required_argument, NULL, 'u' },
	{ "getppid", required_argument, NULL, 'g' },
	{ "reads", required_argument, NULL, 'r' },
	{ "fast", required_argument, NULL, 'f' },
	{ "slow", required_argument, NULL, 'w' },
	{ "fast-bytes", required_argument, NULL, 'b' },
	{ "slow-us", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "calls", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Where each option's value goes, by its short name. */
static long *opt_field(struct opts *o, int c)
{
	switch (c) {
	case 's': return &o->sleeps;
	case 'u': return &o->sleep_us;
	case 'g': return &o->getppid;
	case 'r': return &o->reads;
	case 'f': return &o->fast;
	case 'w': return &o->slow;
	case 'b': return &o->fast_bytes;
	case 'l': return &o->slow_us;
	case 't': return &o->threads;
	case 'c': return &o->calls;
	}
	return NULL;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		long *field = opt_field(o, c);
		char *end;

		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (!field) {
			fprintf(stderr, "latency_demo: see --help\n");
			exit(2);
		}
		errno = 0;
		*field = strtol(optarg, &end, 10);
		if (errno || *end || *field < 0) {
			fprintf(stderr, "latency_demo: %s: not a count\n",
				optarg);
			exit(2);
		}
	}
}

/* The modes by name. */
static const struct {
	const char *name;
	int (*run)(const struct opts *o);
} modes[] = {
	{ "counts", mode_counts },	{ "pipe", mode_pipe },
	{ "threads", mode_threads },	{ "exit", mode_exit },
	{ "exec", mode_exec },		{ "exec-done", mode_exec_done },
	{ "restart", mode_restart },	{ "eintr", mode_eintr },
	{ "stopped", mode_stopped },	{ "badnr", mode_badnr },
	{ "sigreturn", mode_sigreturn },	{ "vsyscall", mode_vsyscall },
};

int main(int argc, char **argv)
{
	struct opts o = { 200, 1500, 100000, 300, 2000, 3000, 65536, 1500,
			  4, 20000, NULL };
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	parse_opts(argc - 1, argv + 1, &o);
	o.argv0 = argv[0];
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].run(&o);
	fprintf(stderr, "latency_demo: %s: unknown mode (see --help)\n", mode);
	return 2;
}
