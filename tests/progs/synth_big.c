// SPDX-License-Identifier: GPL-2.0
/*
 * synth_big: write a large, valid, deterministic synthetic session file,
 * for parse's speed benchmark (bench/parse_speed.sh).
 *
 *   synth_big -o OUT [--samples N] [--appids K] [--seed S]
 *             [--chains DEPTH] ELF...
 *
 * Every appid maps every ELF file given (its executable PT_LOAD segments,
 * as the kernel's MMAP records would show them, with the file's GNU
 * build-id), so that parse --by symbol has real symbol tables to search.
 * Samples pick an appid, and either a kernel address (1 in 10, with a
 * user_ip; from a pool of 4096) or one of a pool of 2048 addresses inside
 * each ELF's executable segments; the picks are skewed so that a few
 * addresses are hot, as in a real profile, and the distinct keys stay
 * those of a real session (appids x pools), not one per sample. OUT.kallsyms
 * names the kernel addresses, as sample_start's copy would.
 * With --chains, every sample has a call chain of DEPTH frames with its
 * IP (format version 3), of addresses of its ELF's pool (a kernel
 * sample's: a few kernel frames, then user ones). Each appid runs 64 of
 * a pool of 1024 chains per ELF and mode, skewed the same way, and the
 * chain picks the IP's function, at one of 8 addresses in it: some
 * 100,000 distinct stacks, as a real session of many programs might
 * have. A CPU writes a chain's CHAIN record before its first sample with
 * it, as the kernel's per-CPU cache does.
 * The same arguments always give the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/sleepy.h>

#define PROG "synth_big"
#include "die.h"

#define POOL		2048	/* distinct user addresses per ELF */
#define KPOOL		4096	/* distinct kernel addresses */
#define KSYMS		8192	/* kernel symbols in OUT.kallsyms */
#define MAX_ELFS	16
#define MAX_SEGS	8
#define DYN_BASE	0x7f0000000000ull
#define DYN_STRIDE	0x10000000ull
#define KERNEL_BASE	0xffffffff81000000ull
#define KERNEL_SPAN	0x800000ull
#define HZ		1000
#define NR_CPUS		2
#define CPOOL		1024	/* distinct chains per ELF and mode */
#define KFRAMES		6	/* a kernel sample's kernel frames, at most */

struct seg {
	uint64_t start, len, pgoff;
};

struct elf_file {
	const char *path;
	struct seg seg[MAX_SEGS];
	int nseg;
	uint8_t build_id[SLEEPY_BUILD_ID_MAX];
	uint8_t build_id_len;
	uint64_t pool[POOL];
};

static uint64_t rng_state;
static uint64_t kpool[KPOOL];

/* xorshift64*: deterministic for a seed. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static uint64_t parse_count(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || v == 0)
		die(2, "%s: '%s' is not a positive number", opt, s);
	return v;
}

static void read_build_id(Elf *e, struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off,
					   &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz <= SLEEPY_BUILD_ID_MAX) {
				memcpy(f->build_id,
				       (char *)d->d_buf + desc_off,
				       nh.n_descsz);
				f->build_id_len = (uint8_t)nh.n_descsz;
				return;
			}
		}
	}
}

/* The executable segments of path, mapped as the kernel would map them. */
static void load_elf(struct elf_file *f, const char *path, int index)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	GElf_Ehdr eh;
	size_t n;
	uint64_t base, page = 4096, total = 0;

	if (fd < 0)
		die(1, "%s: %s", path, strerror(errno));
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		die(1, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		die(1, "%s: not an executable or shared object", path);
	base = eh.e_type == ET_DYN ? DYN_BASE + DYN_STRIDE * (uint64_t)index
				   : 0;
	if (elf_getphdrnum(e, &n))
		die(1, "%s: %s", path, elf_errmsg(-1));
	f->path = path;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct seg *s;

		if (!gelf_getphdr(e, (int)i, &ph))
			die(1, "%s: %s", path, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_filesz == 0)
			continue;
		if (f->nseg == MAX_SEGS)
			die(1, "%s: more than %d executable segments", path,
			    MAX_SEGS);
		s = &f->seg[f->nseg++];
		s->start = base + (ph.p_vaddr & ~(page - 1));
		s->pgoff = ph.p_offset & ~(page - 1);
		s->len = ((base + ph.p_vaddr + ph.p_filesz + page - 1) &
			  ~(page - 1)) - s->start;
		total += ph.p_filesz;
	}
	if (f->nseg == 0)
		die(1, "%s: no executable segment", path);
	read_build_id(e, f);
	/* The address pool: uniform over the executable bytes. */
	for (int i = 0; i < POOL; i++) {
		uint64_t at = rnd() % total;

		f->pool[i] = f->seg[0].start;
		for (int k = 0; k < f->nseg; k++) {
			if (at < f->seg[k].len) {
				f->pool[i] = f->seg[k].start + at;
				break;
			}
			at -= f->seg[k].len;
		}
	}
	elf_end(e);
	close(fd);
}

static FILE *out;
static const char *out_path;
static uint64_t written;
static unsigned int depth;	/* --chains: frames with the IP; 0: none */
static uint8_t *chain_seen;	/* [cpu][elf][mode][CPOOL]: CHAIN written */

static void emit(const void *p, size_t n)
{
	if (fwrite(p, 1, n, out) != n)
		die(1, "%s: %s", out_path, strerror(errno));
	written += n;
}

static void emit_appid(uint32_t appid, uint32_t instance, const char *name,
		       const char *path)
{
	struct sleepy_rec_appid a;
	size_t nl = strlen(name), pl = strlen(path);

	memset(&a, 0, sizeof(a));
	a.hdr.type = SLEEPY_REC_APPID;
	a.hdr.size = (uint16_t)(sizeof(a) + nl + 1 + pl + 1);
	a.appid = appid;
	a.instance = instance;
	a.pid = 1000 + appid;
	a.parent_appid = UINT32_MAX;
	a.origin = 2;	/* exec */
	a.name_len = (uint16_t)nl;
	a.path_len = (uint16_t)pl;
	emit(&a, sizeof(a));
	emit(name, nl + 1);
	emit(path, pl + 1);
}

static void emit_mmap(uint32_t appid, const struct elf_file *f,
		      const struct seg *s)
{
	struct sleepy_rec_mmap m;
	size_t pl = strlen(f->path);

	memset(&m, 0, sizeof(m));
	m.hdr.type = SLEEPY_REC_MMAP;
	m.hdr.size = (uint16_t)(sizeof(m) + pl + 1);
	m.appid = appid;
	m.pid = 1000 + appid;
	m.start = s->start;
	m.len = s->len;
	m.pgoff = s->pgoff;
	m.build_id_len = f->build_id_len;
	memcpy(m.build_id, f->build_id, f->build_id_len);
	m.path_len = (uint16_t)pl;
	emit(&m, sizeof(m));
	emit(f->path, pl + 1);
}

/*
 * OUT.kallsyms, as sample_start saves it: KSYMS text symbols spread evenly
 * over the kernel addresses the samples use, so that parse resolves them.
 */
static void write_kallsyms(void)
{
	size_t n = strlen(out_path);
	char *path = malloc(n + sizeof(".kallsyms"));
	FILE *f;

	if (!path)
		die(1, "%s", strerror(ENOMEM));
	memcpy(path, out_path, n);
	memcpy(path + n, ".kallsyms", sizeof(".kallsyms"));
	f = fopen(path, "w");
	if (!f)
		die(1, "%s: %s", path, strerror(errno));
	fprintf(f, "%016llx T _stext\n", KERNEL_BASE);
	for (unsigned int i = 0; i < KSYMS; i++)
		fprintf(f, "%016llx %c synth_kfunc_%05u\n",
			KERNEL_BASE + (unsigned long long)i *
			(KERNEL_SPAN / KSYMS), i % 3 ? 'T' : 't', i);
	fprintf(f, "%016llx T _etext\n", KERNEL_BASE + KERNEL_SPAN);
	if (fclose(f))
		die(1, "%s: %s", path, strerror(errno));
	free(path);
}

/* A deterministic 64-bit mix of x (splitmix64's finalizer). */
static uint64_t mix(uint64_t x)
{
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

/*
 * Chain c of ELF e for a user (kernel 0) or kernel sample of CPU cpu:
 * its CHAIN record, written the first time the CPU uses it. Its frames
 * follow from (e, kernel, c) alone. Returns its id.
 */
static uint32_t emit_chain(uint16_t cpu, const struct elf_file *elfs, int e,
			   int nelf, int kernel, uint32_t c)
{
	const size_t slot = (((size_t)cpu * nelf + e) * 2 + kernel) * CPOOL + c;
	const uint32_t id = (uint32_t)(slot % ((size_t)nelf * 2 * CPOOL)) + 1;
	const unsigned int nk = kernel ? (depth - 1 < KFRAMES ?
					  depth - 1 : KFRAMES) : 0;
	uint64_t frames[SAMPLE_MAX_CALLCHAIN_DEPTH];
	struct sleepy_rec_chain r;

	if (chain_seen[slot])
		return id;
	chain_seen[slot] = 1;
	for (unsigned int k = 0; k + 1 < depth; k++) {
		uint64_t h = mix(id * 0x9e3779b97f4a7c15ull + k);

		frames[k] = k < nk ? kpool[h % KPOOL] + 5 :
			elfs[e].pool[h % POOL] + 5;
	}
	memset(&r, 0, sizeof(r));
	r.hdr.type = SLEEPY_REC_CHAIN;
	r.hdr.size = (uint16_t)(sizeof(r) + (depth - 1) * sizeof(uint64_t));
	r.cpu = cpu;
	r.nr_kernel = (uint8_t)nk;
	r.nr_user = (uint8_t)(depth - 1 - nk);
	r.id = id;
	emit(&r, sizeof(r));
	emit(frames, (depth - 1) * sizeof(uint64_t));
	return id;
}

/* Sample i; returns 1 if it is a kernel-mode one. */
static int emit_sample(uint64_t i, uint64_t appids,
		       const struct elf_file *elfs, int nelf)
{
	struct sleepy_rec_sample s;
	uint64_t r = rnd(), r2 = rnd();
	const int e = (int)((r >> 20) % (uint64_t)nelf);
	/* Skewed: the square of a uniform index favours low ones. */
	uint64_t u = (r2 >> 40) % POOL, user_ip = elfs[e].pool[u * u / POOL];
	const int kernel = (r >> 32) % 10 == 0;
	uint64_t k = (r2 >> 8) % KPOOL, c = (r2 >> 24) % CPOOL;
	uint32_t chain = 0;

	memset(&s, 0, sizeof(s));
	s.hdr.type = SLEEPY_REC_SAMPLE;
	s.hdr.size = (uint16_t)sizeof(s);
	s.cpu = (uint16_t)(i % NR_CPUS);
	s.appid = (uint32_t)(r % appids);
	s.pid = s.tid = 1000 + s.appid;
	s.time_ns = i * (1000000000ull / HZ / NR_CPUS);
	s.mode = (uint8_t)kernel;
	s.ip = kernel ? kpool[k * k / KPOOL] : user_ip;
	if (depth) {
		/* An appid runs 64 of the chains; the chain says which
		 * function the IP is in, at one of 8 places in it. */
		c = (s.appid * 37 + c * c / CPOOL / 16) % CPOOL;
		chain = emit_chain(s.cpu, elfs, e, nelf, kernel, (uint32_t)c);
		s.ip = (kernel ? kpool[mix(chain) % KPOOL] :
			elfs[e].pool[mix(chain) % POOL]) + 4 * (r2 % 8);
		s.flags = SLEEPY_SAMPLE_F_CHAIN;
		s.hdr.size += sizeof(chain);
	} else if (kernel) {
		s.flags = SLEEPY_SAMPLE_F_USER_IP;
		s.hdr.size += sizeof(user_ip);
	}
	emit(&s, sizeof(s));
	if (s.flags & SLEEPY_SAMPLE_F_USER_IP)
		emit(&user_ip, sizeof(user_ip));
	if (chain)
		emit(&chain, sizeof(chain));
	return kernel;
}

static const char usage_text[] =
	"usage: synth_big -o OUT [--samples N] [--appids K] [--seed S]\n"
	"                 [--chains DEPTH] ELF...\n"
	"\n"
	"Write a deterministic synthetic sleepy session file of N samples\n"
	"(default 50000000) over K appids (default 64), each of which maps\n"
	"the executable segments of every ELF file given, for benchmarking\n"
	"parse. 1 sample in 10 is a kernel-mode one; OUT.kallsyms names\n"
	"their addresses. --chains: a call chain of DEPTH frames (2 to 127,\n"
	"the IP included) with every sample.\n";

/*
 * The statistics, as sample_stop writes them: a CPU_STATS record per CPU
 * (samples go to the CPUs in turn), then STATS, whose bytes_written counts
 * everything before it.
 */
static void emit_stats(uint64_t samples, uint64_t appids)
{
	struct sleepy_rec_stats st;

	for (uint32_t c = 0; c < NR_CPUS; c++) {
		struct sleepy_rec_cpu_stats cs;

		memset(&cs, 0, sizeof(cs));
		cs.hdr.type = SLEEPY_REC_CPU_STATS;
		cs.hdr.size = (uint16_t)sizeof(cs);
		cs.cpu = c;
		cs.samples_taken = samples / NR_CPUS + (c < samples % NR_CPUS);
		emit(&cs, sizeof(cs));
	}
	memset(&st, 0, sizeof(st));
	st.hdr.type = SLEEPY_REC_STATS;
	st.hdr.size = (uint16_t)sizeof(st);
	st.stats_size = (uint16_t)sizeof(st.stats);
	st.stats.nr_cpus = NR_CPUS;
	st.stats.samples_taken = samples;
	st.stats.samples_written = samples;
	st.stats.appids = (uint32_t)appids;
	st.stats.bytes_written = written;
	emit(&st, sizeof(st));
}

/* The file header. */
static void emit_header(void)
{
	struct sleepy_file_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SLEEPY_MAGIC, sizeof(h.magic));
	h.version = SLEEPY_FORMAT_VERSION;
	h.header_size = sizeof(h);
	h.hz = HZ;
	h.nr_cpus = NR_CPUS;
	h.flags = depth ? SAMPLE_F_CALLCHAIN : 0;
	h.start_realtime_ns = 1700000000000000000ull;
	h.start_mono_ns = 1000000000ull;
	snprintf(h.release, sizeof(h.release), "6.1.0-synthetic");
	snprintf(h.machine, sizeof(h.machine), "x86_64");
	emit(&h, sizeof(h));
}

/* Each appid's APPID record, and an MMAP of every ELF's segments. */
static void emit_appids(uint64_t appids, const struct elf_file *elfs,
			int nelf)
{
	static const char *const names[] = {
		"alpha", "beta", "gamma", "delta", "eps"
	};

	for (uint32_t a = 0; a < appids; a++) {
		emit_appid(a, a / 5, names[a % 5], elfs[a % nelf].path);
		for (int i = 0; i < nelf; i++)
			for (int k = 0; k < elfs[i].nseg; k++)
				emit_mmap(a, &elfs[i], &elfs[i].seg[k]);
	}
}

int main(int argc, char **argv)
{
	static struct elf_file elfs[MAX_ELFS];
	uint64_t samples = 50000000, appids = 64, seed = 1, kernel = 0;
	int nelf = 0;
	static char buf[1 << 16];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strcmp(a, "--samples") && i + 1 < argc) {
			samples = parse_count(a, argv[++i]);
		} else if (!strcmp(a, "--appids") && i + 1 < argc) {
			appids = parse_count(a, argv[++i]);
		} else if (!strcmp(a, "--seed") && i + 1 < argc) {
			seed = parse_count(a, argv[++i]);
		} else if (!strcmp(a, "--chains") && i + 1 < argc) {
			uint64_t d = parse_count(a, argv[++i]);

			if (d < 2 || d > SAMPLE_MAX_CALLCHAIN_DEPTH)
				die(2, "--chains: 2 to %d frames",
				    SAMPLE_MAX_CALLCHAIN_DEPTH);
			depth = (unsigned int)d;
		} else if (a[0] == '-') {
			die(2, "%s: unknown option or missing value (see "
			    "--help)", a);
		} else {
			if (nelf == MAX_ELFS)
				die(2, "at most %d ELF files", MAX_ELFS);
			elfs[nelf++].path = a;
		}
	}
	if (!out_path)
		die(2, "-o OUT is required (see --help)");
	if (nelf == 0)
		die(2, "name at least one ELF file (see --help)");
	if (appids > 100000)
		die(2, "--appids: at most 100000");
	if (elf_version(EV_CURRENT) == EV_NONE)
		die(1, "libelf: %s", elf_errmsg(-1));
	rng_state = seed * 0x9e3779b97f4a7c15ull | 1;
	for (int i = 0; i < nelf; i++)
		load_elf(&elfs[i], elfs[i].path, i);
	for (int i = 0; i < KPOOL; i++)
		kpool[i] = KERNEL_BASE + rnd() % KERNEL_SPAN;

	out = fopen(out_path, "wb");
	if (!out)
		die(1, "%s: %s", out_path, strerror(errno));
	setvbuf(out, buf, _IOFBF, sizeof(buf));

	emit_header();
	emit_appids(appids, elfs, nelf);

	if (depth) {
		chain_seen = calloc((size_t)NR_CPUS * nelf * 2 * CPOOL, 1);
		if (!chain_seen)
			die(1, "out of memory");
	}
	for (uint64_t i = 0; i < samples; i++)
		kernel += emit_sample(i, appids, elfs, nelf);
	free(chain_seen);

	emit_stats(samples, appids);
	if (fclose(out))
		die(1, "%s: %s", out_path, strerror(errno));
	write_kallsyms();
	printf("%s: %" PRIu64 " samples (%" PRIu64 " kernel), %" PRIu64
	       " appids, %d ELF files, %" PRIu64 " bytes\n", out_path,
	       samples, kernel, appids, nelf, written);
	return 0;
}
