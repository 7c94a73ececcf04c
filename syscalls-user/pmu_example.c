// SPDX-License-Identifier: GPL-2.0
/*
 * pmu_example: the native-code use case of Libic's thesis. The program
 * registers for sleepy_pmu overflow signals, runs a workload of three
 * functions of different cost, and reports where the signals' PCs fell,
 * per function, using its own ELF symbol table (libelf).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libsleepy.h"
#include "libsleepy_pmu.h"

#define PROG "pmu_example"
#include "die.h"

static const char usage_text[] =
	"usage: pmu_example [--seconds S] [--signal N] [--threshold NS]\n"
	"\n"
	"Register for sleepy_pmu overflow signals, run a workload of three\n"
	"functions (work_heavy, work_medium and work_light, in the ratio\n"
	"3:2:1) for S seconds of CPU time (default 2), and report the PCs the\n"
	"signals carried, per function of this program.\n"
	"\n"
	"  --seconds S     CPU seconds of workload (default 2)\n"
	"  --signal N      the signal to register for (default SIGRTMIN+1)\n"
	"  --threshold NS  also start software counter 0 with this many\n"
	"                  nanoseconds per overflow, and stop it at the end\n"
	"                  (needs CAP_PERFMON); without it, start the\n"
	"                  counters first with sleepy_pmu config\n"
	"  -h, --help      this text\n";

volatile uint64_t sink;

/* n iterations of the same loop: the functions differ only in length. */
__attribute__((noinline)) static void work_light(int n)
{
	for (int i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) static void work_medium(int n)
{
	for (int i = 0; i < 2 * n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) static void work_heavy(int n)
{
	for (int i = 0; i < 3 * n; i++)
		sink += i ^ (sink >> 3);
}

/*
 * A length for the next round, 20,000 to 60,000 iterations (xorshift).
 * Rounds of one fixed length could beat in time with the overflow period
 * (under -icount, exactly), so that every signal fell at the same few
 * points of the round and the shares were off.
 */
static int round_length(void)
{
	static uint32_t x = 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return 20000 + (int)(x % 40000);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct func {
	char *name;
	uint64_t start, end;
	uint64_t hits;
};

static int by_start(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The FUNC symbols of our own executable, sorted by address. */
static struct func *load_functions(size_t *count)
{
	struct func *funcs = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		die(1, "libelf: %s", elf_errmsg(-1));
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(1, "/proc/self/exe: %s", strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		die(1, "/proc/self/exe: %s", elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				funcs = realloc(funcs, cap * sizeof(*funcs));
				if (!funcs)
					die(1, "out of memory");
			}
			funcs[n].name = strdup(name);
			if (!funcs[n].name)
				die(1, "out of memory");
			funcs[n].start = sym.st_value;
			funcs[n].end = sym.st_value + sym.st_size;
			funcs[n].hits = 0;
			n++;
		}
	}
	elf_end(elf);
	close(fd);
	if (!n)
		die(1, "/proc/self/exe: no symbol table (built stripped?)");
	qsort(funcs, n, sizeof(*funcs), by_start);
	*count = n;
	return funcs;
}

static struct func *find(struct func *f, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc < f[mid].start)
			hi = mid;
		else if (pc >= f[mid].end)
			lo = mid + 1;
		else
			return &f[mid];
	}
	return NULL;
}

static uint64_t number(const char *opt, const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || errno || *end)
		die(2, "%s: invalid number '%s'", opt, s);
	return v;
}

/* The device, or one line on why not (sleepy_pmu_open_error()). */
static int open_device(void)
{
	int fd = sleepy_pmu_open();
	char why[256];

	if (fd < 0)
		die(sleepy_pmu_open_error(errno, why, sizeof(why)), "%s", why);
	return fd;
}

int main(int argc, char **argv)
{
	struct sleepy_pmu_ring ring;
	struct sleepy_pmu_event ev;
	uint64_t threshold = 0, outside = 0, total = 0;
	double seconds = 2, start;
	int sig = SIGRTMIN + 1, fd;
	struct func *funcs;
	size_t nfuncs;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (i + 1 >= argc)
			die(2, "%s: %s (see --help)", a,
			    a[0] == '-' ? "missing value or unknown option" :
					  "unexpected argument");
		if (!strcmp(a, "--seconds"))
			seconds = (double)number(a, argv[++i]);
		else if (!strcmp(a, "--signal"))
			sig = (int)number(a, argv[++i]);
		else if (!strcmp(a, "--threshold"))
			threshold = number(a, argv[++i]);
		else
			die(2, "%s: unknown option (see --help)", a);
	}

	funcs = load_functions(&nfuncs);
	fd = open_device();
	if (sleepy_pmu_ring_init(&ring, 1 << 16))
		die(1, "ring: %s", strerror(errno));
	if (threshold && sleepy_pmu_configure(fd, 0, SLEEPY_PMU_SOURCE_SOFTWARE,
					      SLEEPY_PMU_SW_CPU_CLOCK,
					      threshold))
		die(1, "starting software counter 0: %s", strerror(errno));
	if (sleepy_pmu_register(fd, sig, &ring))
		die(1, "registering for signal %d: %s", sig, strerror(errno));

	start = cpu_seconds();
	while (cpu_seconds() - start < seconds) {
		int n = round_length();

		work_heavy(n);
		work_medium(n);
		work_light(n);
	}

	if (sleepy_pmu_unregister(fd))
		die(1, "unregistering: %s", strerror(errno));
	if (threshold && sleepy_pmu_stop(fd, 0))
		die(1, "stopping software counter 0: %s", strerror(errno));
	while (sleepy_pmu_ring_pop(&ring, &ev)) {
		struct func *f = find(funcs, nfuncs, ev.pc);

		total++;
		if (f)
			f->hits++;
		else
			outside++;
	}

	printf("%" PRIu64 " overflow signals in %.2f s of CPU time "
	       "(%" PRIu64 " dropped, ring full)\n", total, cpu_seconds() - start,
	       (uint64_t)atomic_load(&ring.dropped));
	printf("%-24s %10s %8s\n", "function", "signals", "percent");
	for (size_t i = 0; i < nfuncs; i++)
		if (funcs[i].hits)
			printf("%-24s %10" PRIu64 " %7.2f%%\n", funcs[i].name,
			       funcs[i].hits,
			       100.0 * funcs[i].hits / (total ? total : 1));
	if (outside)
		printf("%-24s %10" PRIu64 " %7.2f%%\n", "(outside functions)",
		       outside, 100.0 * outside / total);
	close(fd);
	return total ? 0 : 1;
}
