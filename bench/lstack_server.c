// SPDX-License-Identifier: GPL-2.0
/*
 * lstack_server: the logical-stack demonstration (issue 16). A small
 * multi-threaded query server whose worker threads mark their logical
 * frames with libsleepy_lstack:
 *
 *   request -> parse
 *           -> plan
 *           -> execute -> scan (arg: the table)
 *                      -> sort
 *                      -> io_wait   (a blocking read on a pipe that a
 *                                    helper thread feeds after a delay)
 *                      -> lock_wait (a mutex a holder thread keeps)
 *
 * parse, plan, scan and sort are real CPU work (a tokenizer, a join-order
 * search, a filtered table scan, qsort), sized by the thread CPU clock:
 * each kind of work is timed at startup and then run as a fixed number of
 * units, with no clock read inside.
 *
 * Ground truth: each worker reads its thread CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) at every push and pop, just before it, and
 * charges the time since the last read to the frame that was on top, so
 * that every nanosecond of the thread's CPU time between its first and
 * last read goes to exactly one frame (or to no frame, between requests).
 * A clock read runs in the kernel partly before the point it samples the
 * clock and partly after; the part after is charged to the next frame
 * here while the tick sees it in the frame before. A frame gains the tail
 * of the read at its push and loses the tail of the read at its pop, the
 * same cost, so the two cancel on average; the table's header states the
 * cost of one read and how many there were. io_wait and lock_wait also
 * time the blocking call itself with CLOCK_MONOTONIC (wait_ns).
 *
 * See usage_text for the options and the output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "libsleepy_lstack.h"

#define PROG "lstack_server"
#include "die.h"

static const char usage_text[] =
	"usage: lstack_server [--threads N] [--requests N] [--tables N]\n"
	"                     [--parse-us US] [--plan-us US] [--scan-us US]\n"
	"                     [--sort-us US] [--io-us US] [--lock-us US]\n"
	"\n"
	"A small query server with logical stack frames (libsleepy_lstack):\n"
	"each of N worker threads registers its logical stack, names its\n"
	"frames and serves its requests:\n"
	"  request -> parse, plan, execute -> scan, sort, io_wait, lock_wait\n"
	"and prints the time it really spent in each frame, measured with its\n"
	"own clocks. Without the kernel's support it runs the same, unrecorded.\n"
	"\n"
	"  --threads N     worker threads (1..64; default %u)\n"
	"  --requests N    requests each worker serves (1..1000000; default %u)\n"
	"  --tables N      tables: request i scans table i %% N, and table t\n"
	"                  takes t + 1 times table 0's scan (1..8; default %u)\n"
	"  --parse-us US   CPU time of parsing a request (default %u)\n"
	"  --plan-us US    CPU time of planning it (default %u)\n"
	"  --scan-us US    CPU time of a scan of table 0 (default %u)\n"
	"  --sort-us US    CPU time of sorting its rows, qsort (default %u)\n"
	"  --io-us US      the delay of its read: a helper thread writes the\n"
	"                  pipe the worker blocks on US after it asked\n"
	"                  (default %u)\n"
	"  --lock-us US    how long a holder thread keeps the mutex the workers\n"
	"                  take, each time (it then leaves it free for US / 2;\n"
	"                  default %u)\n"
	"  -h, --help      this text\n"
	"\n"
	"Times are microseconds, 0..10000000; 0 leaves the step (and its frame)\n"
	"out. Frame ids: request 1, parse 2, plan 3, execute 4, scan 5, sort 6,\n"
	"io_wait 7, lock_wait 8; scan's arg is its table, the others' 0.\n"
	"\n"
	"Output: lines \"# KEY VALUE\" (the pid, the options, the threads that\n"
	"registered, clock_read_ns: the CPU cost of one thread CPU clock read,\n"
	"clock_reads, outside_cpu_ns: CPU time at depth 0, elapsed_ns), then\n"
	"the table \"frame id arg self_cpu_ns cpu_pct wait_ns calls\": the CPU\n"
	"time with the frame on top (self), its share of all frames' self CPU\n"
	"time, and for io_wait and lock_wait the wall time blocked.\n";

enum frame {
	F_NONE, F_REQUEST, F_PARSE, F_PLAN, F_EXECUTE, F_SCAN, F_SORT,
	F_IO_WAIT, F_LOCK_WAIT, F_COUNT
};

static const char *const frame_names[F_COUNT] = {
	[F_NONE] = "-", [F_REQUEST] = "request", [F_PARSE] = "parse",
	[F_PLAN] = "plan", [F_EXECUTE] = "execute", [F_SCAN] = "scan",
	[F_SORT] = "sort", [F_IO_WAIT] = "io_wait", [F_LOCK_WAIT] = "lock_wait",
};

#define MAX_TABLES	8
#define MAX_DEPTH	4

struct options {
	unsigned int threads, requests, tables;
	unsigned int parse_us, plan_us, scan_us, sort_us, io_us, lock_us;
};

static struct options opt = {
	.threads = 4, .requests = 300, .tables = 2, .parse_us = 300,
	.plan_us = 200, .scan_us = 600, .sort_us = 800, .io_us = 2000,
	.lock_us = 1500,
};

static const struct option_def {
	const char *name;
	unsigned int *value;
	unsigned int min, max;
} option_defs[] = {
	{ "--threads", &opt.threads, 1, 64 },
	{ "--requests", &opt.requests, 1, 1000000 },
	{ "--tables", &opt.tables, 1, MAX_TABLES },
	{ "--parse-us", &opt.parse_us, 0, 10000000 },
	{ "--plan-us", &opt.plan_us, 0, 10000000 },
	{ "--scan-us", &opt.scan_us, 0, 10000000 },
	{ "--sort-us", &opt.sort_us, 0, 10000000 },
	{ "--io-us", &opt.io_us, 0, 10000000 },
	{ "--lock-us", &opt.lock_us, 0, 10000000 },
};

#define N_OPTIONS (sizeof(option_defs) / sizeof(option_defs[0]))

/* ---------------------------------------------------------------- work */

enum kind { K_PARSE, K_PLAN, K_SCAN, K_SORT, K_COUNT };

#define SCAN_ROWS	16384
#define SCAN_UNIT	1024	/* rows a scan unit visits */
#define SORT_SOURCE	4096
/* Ints a sort unit sorts: under 1 KiB, which glibc's qsort sorts on the
 * stack, with no malloc (whose locks could block). */
#define SORT_UNIT	240

struct row {
	uint32_t key, value;
};

static struct row table_rows[SCAN_ROWS];
static int sort_source[SORT_SOURCE];

static const char query[] =
	"SELECT o.id, c.name, SUM(l.price * l.quantity) AS total "
	"FROM orders o JOIN customers c ON o.customer = c.id "
	"JOIN lines l ON l.order_id = o.id WHERE o.date >= '2026-01-01' "
	"AND c.region IN ('north', 'east') GROUP BY o.id, c.name "
	"ORDER BY total DESC LIMIT 100;";

struct slot {
	enum frame frame;
	unsigned int arg;
};

struct worker {
	unsigned int index;
	pthread_t thread, feeder;
	int to_feeder[2], from_feeder[2];	/* pipes: [0] in, [1] out */
	struct slot stack[MAX_DEPTH];
	unsigned int depth;
	uint64_t last;		/* the thread CPU clock, last read */
	uint64_t self[F_COUNT][MAX_TABLES], wait[F_COUNT][MAX_TABLES];
	uint64_t calls[F_COUNT][MAX_TABLES];
	uint64_t reads;		/* thread CPU clock reads */
	uint64_t sink;		/* the work's results: it must be done */
	unsigned int scan_pos, sort_pos;
	int reg_err, name_err;
	uint32_t rng;		/* jitter()'s state, the worker's own */
	int sorted[SORT_UNIT];
};

/*
 * us, scaled by a random factor from 0.5 to 1.5 (xorshift32 on *x): each
 * unit of work and each wait varies, as a real request mix does, and so
 * no frame is phase-locked to the tick under QEMU's -icount, where both
 * run on one deterministic clock and fixed sizes would alias with it.
 */
static unsigned int jitter(uint32_t *x, unsigned int us)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return (unsigned int)((uint64_t)us * (*x % 1024 + 512) / 1024);
}

/* One pass of a tokenizer over the query: FNV-1a of each word. */
static void parse_unit(struct worker *w)
{
	uint32_t h = 2166136261u;
	unsigned int tokens = 0;

	for (const char *p = query; *p; p++) {
		unsigned char c = (unsigned char)*p;
		int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_';

		if (word) {
			h = (h ^ c) * 16777619u;
		} else if (h != 2166136261u) {
			w->sink += h;
			tokens++;
			h = 2166136261u;
		}
	}
	w->sink += tokens;
}

/* The cheapest join order of 8 tables, by dynamic programming over
 * subsets. */
static void plan_unit(struct worker *w)
{
	enum { N = 8 };
	uint32_t cost[1 << N], card[N];

	for (unsigned int j = 0; j < N; j++)
		card[j] = (uint32_t)(w->sink + j * 2654435761u) % 1000 + 1;
	cost[0] = 0;
	for (unsigned int m = 1; m < (1u << N); m++) {
		uint32_t size = (uint32_t)__builtin_popcount(m);
		uint32_t best = UINT32_MAX;

		for (unsigned int j = 0; j < N; j++) {
			uint32_t c;

			if (!(m & (1u << j)))
				continue;
			c = cost[m & ~(1u << j)] + card[j] * size;
			best = c < best ? c : best;
		}
		cost[m] = best;
	}
	w->sink += cost[(1 << N) - 1];
}

/* A filtered sum over SCAN_UNIT rows of the table. */
static void scan_unit(struct worker *w)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < SCAN_UNIT; i++) {
		const struct row *r =
			&table_rows[(w->scan_pos + i) % SCAN_ROWS];

		if (r->key % 7 == 3)
			sum += r->value;
	}
	w->scan_pos = (w->scan_pos + SCAN_UNIT) % SCAN_ROWS;
	w->sink += sum;
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* SORT_UNIT ints of the source, copied and sorted with qsort. */
static void sort_unit(struct worker *w)
{
	memcpy(w->sorted, &sort_source[w->sort_pos],
	       sizeof(w->sorted));
	qsort(w->sorted, SORT_UNIT, sizeof(int), compare_ints);
	w->sort_pos = (w->sort_pos + 61) % (SORT_SOURCE - SORT_UNIT);
	w->sink += (uint64_t)w->sorted[SORT_UNIT / 2];
}

static void (*const kernels[K_COUNT])(struct worker *) = {
	[K_PARSE] = parse_unit, [K_PLAN] = plan_unit, [K_SCAN] = scan_unit,
	[K_SORT] = sort_unit,
};

/* Units of each kind of work per microsecond of CPU time (calibrate()). */
static double units_per_us[K_COUNT];

static void work(struct worker *w, enum kind k, unsigned int us)
{
	uint64_t n = (uint64_t)(us * units_per_us[k] + 0.5);

	for (uint64_t i = 0; i < (n ? n : 1); i++)
		kernels[k](w);
}

static void fill_data(void)
{
	uint32_t x = 12345;

	for (unsigned int i = 0; i < SCAN_ROWS; i++) {
		x = x * 1103515245u + 12345u;
		table_rows[i] = (struct row){ x >> 8, x & 0xffff };
	}
	for (unsigned int i = 0; i < SORT_SOURCE; i++) {
		x = x * 1103515245u + 12345u;
		sort_source[i] = (int)(x >> 1);
	}
}

/* ---------------------------------------------------------------- clocks */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_now(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Each kind of work timed for 20 ms of CPU time, after a warm-up. */
static void calibrate(struct worker *w)
{
	for (unsigned int k = 0; k < K_COUNT; k++) {
		uint64_t n = 0, t0, t;

		kernels[k](w);
		t0 = cpu_now();
		do {
			for (unsigned int i = 0; i < 8; i++)
				kernels[k](w);
			n += 8;
			t = cpu_now();
		} while (t - t0 < 20000000);
		units_per_us[k] = (double)n * 1000.0 / (double)(t - t0);
	}
}

/* The CPU cost of one thread CPU clock read, ns. */
static double clock_read_cost(void)
{
	enum { READS = 2000 };
	uint64_t t0 = cpu_now(), t1;

	for (unsigned int i = 0; i < READS; i++)
		cpu_now();
	t1 = cpu_now();
	return (double)(t1 - t0) / (READS + 1);
}

/* ---------------------------------------------------------------- frames */

/* The CPU time since the last read, to the frame on top. */
static void account(struct worker *w)
{
	uint64_t now = cpu_now();
	const struct slot *top = w->depth ? &w->stack[w->depth - 1] : NULL;

	w->reads++;
	w->self[top ? top->frame : F_NONE][top ? top->arg : 0] += now - w->last;
	w->last = now;
}

static void enter(struct worker *w, enum frame f, unsigned int arg)
{
	account(w);
	w->stack[w->depth++] = (struct slot){ f, arg };
	w->calls[f][arg]++;
	SLEEPY_LSTACK_PUSH(f, arg);
}

static void leave(struct worker *w)
{
	account(w);
	w->depth--;
	SLEEPY_LSTACK_POP();
}

/* A CPU-work frame: f on top while us of work k runs. */
static void cpu_frame(struct worker *w, enum frame f, unsigned int arg,
		      enum kind k, unsigned int us)
{
	if (!us)
		return;
	enter(w, f, arg);
	work(w, k, jitter(&w->rng, us));
	leave(w);
}

/* ---------------------------------------------------------------- waits */

static pthread_mutex_t db_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stopping;

/*
 * Sleep us. The feeders and the holder sleep with 1 ns of timer slack,
 * not the default 50 us, within which the kernel runs a timer with the
 * tick's when it can: their waits would end on ticks, and the frames that
 * run just after them would never be sampled at their start.
 */
static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The I/O helper of a worker: a byte back, io_us after each request. */
static void *feeder_main(void *p)
{
	struct worker *w = p;
	uint32_t x = 0x9e3779b9u ^ w->index;
	char c;

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	while (read(w->to_feeder[0], &c, 1) == 1) {
		sleep_us(jitter(&x, opt.io_us));
		if (write(w->from_feeder[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/* The lock holder: keeps the mutex lock_us, leaves it lock_us / 2. */
static void *holder_main(void *p)
{
	uint32_t x = 0x85ebca6bu;

	(void)p;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	while (opt.lock_us && !atomic_load(&stopping)) {
		pthread_mutex_lock(&db_lock);
		sleep_us(jitter(&x, opt.lock_us));
		pthread_mutex_unlock(&db_lock);
		sleep_us(jitter(&x, opt.lock_us / 2));
	}
	return NULL;
}

/* io_wait: ask the feeder, block on its answer. */
static void io_wait(struct worker *w)
{
	uint64_t t0, t1;
	char c = 'q';

	if (!opt.io_us)
		return;
	enter(w, F_IO_WAIT, 0);
	if (write(w->to_feeder[1], &c, 1) != 1)
		die(1, "writing to the I/O helper: %s", strerror(errno));
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (read(w->from_feeder[0], &c, 1) != 1)
		die(1, "reading from the I/O helper: %s", strerror(errno));
	t1 = clock_ns(CLOCK_MONOTONIC);
	w->wait[F_IO_WAIT][0] += t1 - t0;
	leave(w);
}

/* lock_wait: take the mutex the holder keeps, and leave it at once. */
static void lock_wait(struct worker *w)
{
	uint64_t t0, t1;

	if (!opt.lock_us)
		return;
	enter(w, F_LOCK_WAIT, 0);
	t0 = clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&db_lock);
	t1 = clock_ns(CLOCK_MONOTONIC);
	w->sink++;
	pthread_mutex_unlock(&db_lock);
	w->wait[F_LOCK_WAIT][0] += t1 - t0;
	leave(w);
}

/* ---------------------------------------------------------------- server */

static void serve(struct worker *w, unsigned int r)
{
	unsigned int table = r % opt.tables;

	enter(w, F_REQUEST, 0);
	cpu_frame(w, F_PARSE, 0, K_PARSE, opt.parse_us);
	cpu_frame(w, F_PLAN, 0, K_PLAN, opt.plan_us);
	enter(w, F_EXECUTE, 0);
	cpu_frame(w, F_SCAN, table, K_SCAN, opt.scan_us * (table + 1));
	cpu_frame(w, F_SORT, 0, K_SORT, opt.sort_us);
	io_wait(w);
	lock_wait(w);
	leave(w);
	leave(w);
}

static void name_frames(struct worker *w)
{
	for (unsigned int f = F_REQUEST; f < F_COUNT; f++)
		if (sleepy_lstack_name(f, frame_names[f]) && !w->name_err)
			w->name_err = errno;
}

static void *worker_main(void *p)
{
	struct worker *w = p;

	if (sleepy_lstack_register())
		w->reg_err = errno;
	name_frames(w);
	w->last = cpu_now();
	for (unsigned int r = 0; r < opt.requests; r++)
		serve(w, r);
	account(w);
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err)
		die(1, "pthread_create: %s", strerror(err));
}

static void start_worker(struct worker *w, unsigned int i)
{
	w->index = i;
	w->rng = 2463534242u + 7919u * i;
	w->scan_pos = i * 997 % SCAN_ROWS;
	if (pipe2(w->to_feeder, O_CLOEXEC) || pipe2(w->from_feeder, O_CLOEXEC))
		die(1, "pipe: %s", strerror(errno));
	start(&w->feeder, feeder_main, w);
	start(&w->thread, worker_main, w);
}

/* The workers joined, then their helpers. */
static void finish(struct worker *ws, pthread_t holder)
{
	for (unsigned int i = 0; i < opt.threads; i++)
		pthread_join(ws[i].thread, NULL);
	atomic_store(&stopping, 1);
	for (unsigned int i = 0; i < opt.threads; i++) {
		close(ws[i].to_feeder[1]);
		pthread_join(ws[i].feeder, NULL);
		close(ws[i].to_feeder[0]);
		close(ws[i].from_feeder[0]);
		close(ws[i].from_feeder[1]);
	}
	pthread_join(holder, NULL);
}

/* ---------------------------------------------------------------- report */

/* The workers' accounts summed into all. */
static void sum_workers(const struct worker *ws, struct worker *all)
{
	for (unsigned int i = 0; i < opt.threads; i++) {
		const struct worker *w = &ws[i];

		for (unsigned int f = 0; f < F_COUNT; f++)
			for (unsigned int a = 0; a < MAX_TABLES; a++) {
				all->self[f][a] += w->self[f][a];
				all->wait[f][a] += w->wait[f][a];
				all->calls[f][a] += w->calls[f][a];
			}
		all->reads += w->reads;
		all->sink += w->sink;
		if (w->reg_err)
			all->reg_err = w->reg_err;
		if (w->name_err)
			all->name_err = w->name_err;
	}
}

static unsigned int registered(const struct worker *ws)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < opt.threads; i++)
		n += !ws[i].reg_err;
	return n;
}

static void print_header(const struct worker *all, unsigned int reg,
			 double read_ns, uint64_t elapsed)
{
	printf("# lstack_server\n# pid %ld\n# threads %u\n# requests %u\n"
	       "# tables %u\n", (long)getpid(), opt.threads, opt.requests,
	       opt.tables);
	printf("# parse_us %u\n# plan_us %u\n# scan_us %u\n# sort_us %u\n"
	       "# io_us %u\n# lock_us %u\n", opt.parse_us, opt.plan_us,
	       opt.scan_us, opt.sort_us, opt.io_us, opt.lock_us);
	printf("# registered %u\n# clock_read_ns %.0f\n# clock_reads %" PRIu64
	       "\n# outside_cpu_ns %" PRIu64 "\n# elapsed_ns %" PRIu64
	       "\n# checksum %" PRIu64 "\n", reg, read_ns, all->reads,
	       all->self[F_NONE][0], elapsed, all->sink);
}

static void print_table(const struct worker *all)
{
	uint64_t total = 0;

	for (unsigned int f = F_REQUEST; f < F_COUNT; f++)
		for (unsigned int a = 0; a < MAX_TABLES; a++)
			total += all->self[f][a];
	printf("frame id arg self_cpu_ns cpu_pct wait_ns calls\n");
	for (unsigned int f = F_REQUEST; f < F_COUNT; f++)
		for (unsigned int a = 0; a < MAX_TABLES; a++) {
			if (!all->calls[f][a])
				continue;
			printf("%s %u %u %" PRIu64 " %.2f %" PRIu64 " %" PRIu64
			       "\n", frame_names[f], f, a, all->self[f][a],
			       total ? 100.0 * (double)all->self[f][a] /
			       (double)total : 0.0, all->wait[f][a],
			       all->calls[f][a]);
		}
}

static void report(const struct worker *ws, double read_ns, uint64_t elapsed)
{
	static struct worker all;
	unsigned int reg = registered(ws);

	sum_workers(ws, &all);
	if (reg < opt.threads)
		warn("sleepy_lstack_register: %s (%u of %u threads registered: "
		     "their logical stacks are not recorded)",
		     strerror(all.reg_err), reg, opt.threads);
	if (all.name_err)
		warn("sleepy_lstack_name: %s (frames are not named)",
		     strerror(all.name_err));
	print_header(&all, reg, read_ns, elapsed);
	print_table(&all);
}

/* ---------------------------------------------------------------- main */

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const struct option_def *o = NULL;
		unsigned long v;
		char *end;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf(usage_text, opt.threads, opt.requests,
			       opt.tables, opt.parse_us, opt.plan_us,
			       opt.scan_us, opt.sort_us, opt.io_us,
			       opt.lock_us);
			exit(0);
		}
		for (size_t k = 0; k < N_OPTIONS && !o; k++)
			if (!strcmp(argv[i], option_defs[k].name))
				o = &option_defs[k];
		if (!o)
			die(2, "%s: unknown option (see --help)", argv[i]);
		if (++i == argc)
			die(2, "%s: missing value", o->name);
		errno = 0;
		v = strtoul(argv[i], &end, 10);
		if (errno || end == argv[i] || *end || argv[i][0] == '-' ||
		    v < o->min || v > o->max)
			die(2, "%s: '%s' is not a number from %u to %u",
			    o->name, argv[i], o->min, o->max);
		*o->value = (unsigned int)v;
	}
}

int main(int argc, char **argv)
{
	static struct worker calib;
	struct worker *ws;
	uint64_t t0, t1;
	pthread_t holder;
	double read_ns;

	parse_args(argc, argv);
	fill_data();
	calibrate(&calib);
	read_ns = clock_read_cost();
	ws = calloc(opt.threads, sizeof(*ws));
	if (!ws)
		die(1, "%s", strerror(ENOMEM));
	t0 = clock_ns(CLOCK_MONOTONIC);
	start(&holder, holder_main, NULL);
	for (unsigned int i = 0; i < opt.threads; i++)
		start_worker(&ws[i], i);
	finish(ws, holder);
	t1 = clock_ns(CLOCK_MONOTONIC);
	report(ws, read_ns, t1 - t0);
	free(ws);
	return 0;
}
