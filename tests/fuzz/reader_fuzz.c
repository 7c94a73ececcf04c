// SPDX-License-Identifier: GPL-2.0
/*
 * reader_fuzz: a libFuzzer target for parse's session file reader
 * (parse/reader.c). Each input is written to a memfd and opened by path
 * (/proc/self/fd/N), the way parse opens a file; every record is walked and
 * every decoder called. Besides the sanitizers' checks, it traps when the
 * reader breaks a promise of reader.h: a record it returns must be at least
 * its type's fixed size, its strings NUL-terminated inside it, offsets must
 * add up, CPU_STATS records must name CPUs below the header's nr_cpus in
 * increasing order before any STATS record, and an error must come with a
 * message and an offset inside the input.
 *
 * The reader reads through a 1 MiB window, so inputs of a few KiB never
 * cross it. One input in eight (by its length) is also walked padded: its
 * first 180 bytes (the header), then unknown-type filler records up to just
 * short of 1 MiB, then the rest of the input, whose records then straddle
 * the window's end. Built and run by tests/test_fuzz.py:
 *
 *   clang -fsanitize=fuzzer,address,undefined -I build/uapi -I parse \
 *       tests/fuzz/reader_fuzz.c parse/reader.c -o reader_fuzz
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader.h"

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "reader_fuzz: broken promise: %s " \
				"(line %d)\n", #cond, __LINE__);        \
			__builtin_trap();                               \
		}                                                       \
	} while (0)

static volatile uint64_t sink;

/* A string the reader vouched for: NUL-terminated after len bytes, inside
 * the record. */
static void check_string(const struct sleepy_record *rec, const char *s,
			 size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	CHECK(p >= rec->data && p + len < rec->data + rec->size);
	CHECK(strlen(s) == len);
}

/* What the walk has seen of the records that the reader orders. */
struct order {
	int stats_seen;
	int64_t last_cpu;	/* -1: no CPU_STATS record yet */
};

static void check_cpu_stats(const struct sleepy_file_header *h,
			    const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_cpu_stats c;

	CHECK(rec->size >= sleepy_cpu_stats_min(h->version));
	sleepy_get_cpu_stats(rec, &c);
	CHECK(!o->stats_seen);
	CHECK(c.cpu < h->nr_cpus);
	CHECK((int64_t)c.cpu > o->last_cpu);
	o->last_cpu = c.cpu;
	sink += c.buffers_hwm + c.samples_taken + c.dropped_no_buffer +
		c.dropped_no_appid + c.skipped_not_user + c.irq_ns_total +
		c.irq_ns_max + c.irq_calls + c.chains_defined +
		c.chains_truncated;
	for (int i = 0; i < SLEEPY_USER_STOPS; i++)
		sink += c.user_stops[i];
	sink += c.lstack_samples + c.lstack_retries + c.lstack_torn +
		c.lstack_faults + c.lstack_truncated + c.offcpu_records +
		c.offcpu_dropped;
}

/* A logical stack part the reader vouched for: its frames inside the
 * record that holds it, at most 16, none when left out. */
static void check_lstack(const struct sleepy_record *rec,
			 const struct sleepy_lstack_part *l)
{
	CHECK(l->frames >= rec->data + SLEEPY_LSTACK_HEAD);
	CHECK(l->frames + (size_t)l->nr * SLEEPY_LSTACK_FRAME <=
	      rec->data + rec->size);
	CHECK(l->nr <= SLEEPY_LSTACK_SAMPLE_FRAMES);
	CHECK(!l->nr || !(l->flags & (SLEEPY_LSTACK_F_TORN |
				      SLEEPY_LSTACK_F_FAULT)));
	for (size_t i = 0; i < l->nr; i++) {
		struct sleepy_lstack_frame f = sleepy_lstack_get(l, i);

		sink += f.id + f.arg;
	}
}

static void check_offcpu(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_offcpu c;

	(void)o;
	CHECK(rec->size >= SLEEPY_OFFCPU_SIZE);
	sleepy_get_offcpu(rec, &c);
	CHECK(c.cpu < h->nr_cpus);
	check_lstack(rec, &c.lstack);
	sink += c.state + c.appid + c.pid + c.tid + c.time_ns + c.off_ns;
}

static void check_chain(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_chain c;

	(void)o;
	CHECK(rec->size >= SLEEPY_CHAIN_SIZE);
	sleepy_get_chain(rec, &c);
	CHECK(c.cpu < h->nr_cpus && c.id != 0);
	CHECK(SLEEPY_CHAIN_SIZE + (c.nr_kernel + c.nr_user) * 8u <= rec->size);
	for (size_t i = 0; i < (size_t)c.nr_kernel + c.nr_user; i++)
		sink += sleepy_chain_frame(&c, i);
	sink += c.flags;
}

static void check_stats(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sample_stats st;

	CHECK(rec->size >= SLEEPY_STATS_HEAD + sleepy_stats_min(h->version));
	sleepy_get_stats(rec, h->version, &st);
	sink += st.samples_taken + st.samples_written + st.buffers_hwm +
		st.dropped_max_size;
	o->stats_seen = 1;
}

static void check_sample(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_sample s;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_SAMPLE_SIZE);
	sleepy_get_sample(rec, &s);
	if (s.flags & SLEEPY_SAMPLE_F_KCTX)
		CHECK(rec->size >= SLEEPY_SAMPLE_SIZE + SLEEPY_KCTX_SIZE);
	sink += s.kctx;
	if (s.flags & SLEEPY_SAMPLE_F_USER_IP)
		CHECK(rec->size >= SLEEPY_SAMPLE_UIP_SIZE);
	if (s.flags & SLEEPY_SAMPLE_F_CHAIN)
		CHECK(rec->size >= SLEEPY_SAMPLE_SIZE + 4 +
		      (s.flags & SLEEPY_SAMPLE_F_USER_IP ? 8 : 0));
	sink += s.chain;
	CHECK(sleepy_sample_mode(rec) == s.mode);
	CHECK(sleepy_sample_appid(rec) == s.appid);
	CHECK(sleepy_sample_ip(rec) == s.ip);
	CHECK(sleepy_sample_time(rec) == s.time_ns);
	if (s.flags & SLEEPY_SAMPLE_F_LSTACK)
		check_lstack(rec, &s.lstack);
	else
		CHECK(!s.lstack.nr && !s.lstack.frames);
	sink += s.user_ip + s.pid + s.tid + s.cpu;
	if (sleepy_mode_name(s.mode))
		sink += strlen(sleepy_mode_name(s.mode));
}

static void check_appid(const struct sleepy_file_header *h,
			const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_appid a;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_APPID_SIZE);
	sleepy_get_appid(rec, &a);
	check_string(rec, a.name, a.name_len);
	check_string(rec, a.path, a.path_len);
	sink += a.appid + a.instance + a.pid + a.parent_appid + a.origin +
		a.flags + a.time_ns;
}

static void check_mmap(const struct sleepy_file_header *h,
		       const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_mmap m;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_MMAP_SIZE);
	sleepy_get_mmap(rec, &m);
	CHECK(m.build_id_len <= SLEEPY_BUILD_ID_MAX);
	for (unsigned int i = 0; i < m.build_id_len; i++)
		sink += m.build_id[i];
	check_string(rec, m.path, m.path_len);
	sink += m.appid + m.pid + m.start + m.len + m.pgoff + m.time_ns;
}

/* Version 5: a SYSCALL record's CPU is one of the header's. */
static void check_syscall(const struct sleepy_file_header *h,
			  const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_syscall c;

	(void)o;
	CHECK(rec->size >= SLEEPY_SYSCALL_SIZE);
	sleepy_get_syscall(rec, &c);
	CHECK(c.cpu < h->nr_cpus);
	sink += c.nr + c.appid + c.pid + c.tid + c.flags + c.start_ns +
		c.latency_ns;
}

/* A LATENCY record's buckets fit the 48 and the record, and add up. */
static void check_latency(const struct sleepy_file_header *h,
			  const struct sleepy_record *rec, struct order *o)
{
	struct sleepy_latency l;
	uint64_t sum = 0;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_LATENCY_SIZE);
	sleepy_get_latency(rec, &l);
	CHECK(l.first + l.nr_buckets <= SLEEPY_LAT_BUCKETS);
	CHECK(rec->size == SLEEPY_LATENCY_SIZE + 8u * l.nr_buckets);
	for (size_t i = 0; i < l.nr_buckets; i++)
		sum += sleepy_latency_count(&l, i);
	CHECK(sum == l.calls);
	sink += l.segment + l.appid + l.nr + l.sum_ns + l.max_ns + l.restarts;
}

static void check_lat_segment(const struct sleepy_file_header *h,
			      const struct sleepy_record *rec,
			      struct order *o)
{
	struct sleepy_lat_segment g;

	(void)h;
	(void)o;
	CHECK(rec->size >= SLEEPY_LAT_SEGMENT_SIZE);
	sleepy_get_lat_segment(rec, &g);
	sink += g.segment + g.start_ns + g.end_ns + g.calls + g.lost +
		g.histograms;
}

typedef void (*check_fn)(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o);

/* Every type the reader knows has its checks here. */
static const check_fn checks[] = {
	[SLEEPY_REC_SAMPLE] = check_sample,
	[SLEEPY_REC_APPID] = check_appid,
	[SLEEPY_REC_MMAP] = check_mmap,
	[SLEEPY_REC_STATS] = check_stats,
	[SLEEPY_REC_CPU_STATS] = check_cpu_stats,
	[SLEEPY_REC_CHAIN] = check_chain,
	[SLEEPY_REC_OFFCPU] = check_offcpu,
	[SLEEPY_REC_SYSCALL] = check_syscall,
	[SLEEPY_REC_LATENCY] = check_latency,
	[SLEEPY_REC_LAT_SEGMENT] = check_lat_segment,
};

static void check_record(const struct sleepy_file_header *h,
			 const struct sleepy_record *rec, struct order *o)
{
	if (!sleepy_type_known(h->version, rec->type)) {
		/* Unknown: the caller skips it, but may look. */
		for (size_t i = 0; i < rec->size; i++)
			sink += rec->data[i];
		return;
	}
	CHECK(rec->type < sizeof(checks) / sizeof(checks[0]) &&
	      checks[rec->type]);
	checks[rec->type](h, rec, o);
}

static void walk(const char *path, size_t size)
{
	struct sleepy_reader *r = sleepy_reader_open(path);
	struct sleepy_record rec;
	const struct sleepy_file_header *h;
	struct order order = { 0, -1 };
	uint64_t expect;
	int rc;

	if (!r)
		return;		/* out of memory */
	h = sleepy_reader_header(r);
	if (sleepy_reader_status(r) == SLEEPY_OK) {
		CHECK(h->version >= SLEEPY_MIN_FORMAT_VERSION &&
		      h->version <= SLEEPY_FORMAT_VERSION);
		CHECK(h->header_size >= sizeof(*h) &&
		      h->header_size <= size);
		CHECK(strlen(h->release) < sizeof(h->release));
		CHECK(strlen(h->machine) < sizeof(h->machine));
		CHECK(sleepy_reader_offset(r) == h->header_size);
	}
	expect = sleepy_reader_offset(r);
	while ((rc = sleepy_reader_next(r, &rec)) == 1) {
		CHECK(rec.offset == expect);
		CHECK(rec.size >= sizeof(struct sleepy_rec_hdr));
		CHECK(rec.offset + rec.size <= size);
		expect += rec.size;
		CHECK(sleepy_reader_offset(r) == expect);
		check_record(h, &rec, &order);
	}
	if (rc < 0) {
		CHECK(sleepy_reader_status(r) != SLEEPY_OK);
		CHECK(sleepy_reader_error(r)[0] != '\0');
		if (sleepy_reader_status(r) == SLEEPY_ERR_FORMAT)
			CHECK(sleepy_reader_error_offset(r) <= size);
		/* Errors stick. */
		CHECK(sleepy_reader_next(r, &rec) == -1);
	} else {
		CHECK(sleepy_reader_status(r) == SLEEPY_OK);
		CHECK(expect == size);
		CHECK(sleepy_reader_next(r, &rec) == 0);
	}
	sleepy_reader_close(r);
}

#define WINDOW		(1u << 20)	/* reader.c's BUF_SIZE */
#define HEADER_BYTES	180
#define FILLER_TYPE	0x7fff		/* a record type nobody knows */
#define FILLER_MAX	60000

static void put(int fd, const void *data, size_t size, off_t at)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pwrite(fd, (const char *)data + done, size - done,
				   at + (off_t)done);

		if (n <= 0) {
			perror("reader_fuzz: pwrite");
			abort();
		}
		done += (size_t)n;
	}
}

/* len bytes of unknown-type records (len >= 4). */
static void put_filler(int fd, size_t len, off_t at)
{
	static unsigned char rec[FILLER_MAX];

	while (len > 0) {
		size_t n = len > FILLER_MAX ? FILLER_MAX : len;
		uint16_t h[2];

		if (len - n > 0 && len - n < 4)
			n -= 4;		/* leave a whole record's worth */
		h[0] = FILLER_TYPE;
		h[1] = (uint16_t)n;
		memcpy(rec, h, sizeof(h));
		put(fd, rec, n, at);
		at += (off_t)n;
		len -= n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("sleepy-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("reader_fuzz: memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0) {
		perror("reader_fuzz: ftruncate");
		abort();
	}
	put(fd, data, size, 0);
	walk(path, size);

	if (size >= HEADER_BYTES && size % 8 == 0) {
		/* The rest starts 1..61 bytes before the window's end. */
		size_t filler = WINDOW - HEADER_BYTES - 1 - size % 61;

		if (ftruncate(fd, 0) < 0) {
			perror("reader_fuzz: ftruncate");
			abort();
		}
		put(fd, data, HEADER_BYTES, 0);
		put_filler(fd, filler, HEADER_BYTES);
		put(fd, data + HEADER_BYTES, size - HEADER_BYTES,
		    (off_t)(HEADER_BYTES + filler));
		walk(path, size + filler);
	}
	return 0;
}
