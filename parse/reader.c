// SPDX-License-Identifier: GPL-2.0
/*
 * reader: streaming reader of sleepy session files; see reader.h.
 *
 * The buffer holds a window of the file: bytes [start, end) of buf are the
 * file's bytes from offset pos on. A record is returned in place when it is
 * wholly in the window; otherwise the window is moved to the front of the
 * buffer and refilled. Records are at most 65535 bytes (a __u16 size), so a
 * buffer larger than that always holds a whole record.
 *
 * Each known record type has its check in record_types[], with the format
 * version that brought it; the checks that span records (CPU_STATS) keep
 * what they need in the reader.
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE	(1u << 20)

_Static_assert(BUF_SIZE > UINT16_MAX && BUF_SIZE > SLEEPY_MAX_HEADER_SIZE,
	       "a record or the header must fit the buffer");
_Static_assert(sizeof(struct sleepy_file_header) == 180, "header layout");
_Static_assert(SLEEPY_SAMPLE_SIZE == 36 && SLEEPY_APPID_SIZE == 36 &&
	       SLEEPY_MMAP_SIZE == 68 && SLEEPY_CPU_STATS_SIZE == 204 &&
	       offsetof(struct sleepy_rec_cpu_stats, unwind_frames) ==
	       SLEEPY_CPU_STATS_V4_SIZE &&
	       SLEEPY_CHAIN_SIZE == 16 && SLEEPY_STATS_HEAD == 8 &&
	       SLEEPY_OFFCPU_SIZE == 38 && SLEEPY_LSTACK_HEAD == 2 &&
	       SLEEPY_LSTACK_FRAME == 16 &&
	       offsetof(struct sleepy_rec_cpu_stats, lstack_samples) ==
	       SLEEPY_CPU_STATS_V3_SIZE &&
	       offsetof(struct sleepy_rec_offcpu, lstack) ==
	       SLEEPY_OFFCPU_SIZE - SLEEPY_LSTACK_HEAD &&
	       SLEEPY_SYSCALL_SIZE == 40 && SLEEPY_LATENCY_SIZE == 52 &&
	       SLEEPY_LAT_SEGMENT_SIZE == 48, "record layout");

/* Version 1's struct sample_stats (see the uapi header's comment). */
struct sample_stats_v1 {
	__u32 size;
	__u32 nr_cpus;
	__u64 samples_taken;
	__u64 samples_written;
	__u64 dropped_no_buffer;
	__u64 dropped_no_appid;
	__u64 dropped_write_error;
	__u64 discarded_no_write;
	__u64 skipped_not_user;
	__u64 bytes_written;
	__u64 write_errors;
	__s32 first_write_error;
	__u32 appids;
	__u32 meta_dropped;
	__u32 pids_mapped;
	__u64 irq_ns_total;
	__u64 irq_ns_max;
	__u64 irq_calls;
	__u32 buffers_hwm[64];
};

_Static_assert(sizeof(struct sample_stats_v1) == SLEEPY_STATS_V1_SIZE,
	       "version 1 stats layout");

struct sleepy_reader {
	int fd;
	bool eof;		/* read() returned 0 */
	unsigned char *buf;
	size_t start, end;	/* the window: buf[start, end) */
	uint64_t pos;		/* file offset of buf[start] */
	struct sleepy_file_header hdr;
	bool stats_seen;	/* a STATS record was returned */
	bool cpu_seen;		/* a CPU_STATS record was: for last_cpu */
	uint32_t last_cpu;	/* the last CPU_STATS record's cpu */
	enum sleepy_reader_status status;
	int sys_errno;
	uint64_t err_offset;
	char err[160];
};

__attribute__((format(printf, 3, 4)))
static int format_error(struct sleepy_reader *r, uint64_t offset,
			const char *fmt, ...)
{
	va_list ap;

	r->status = SLEEPY_ERR_FORMAT;
	r->err_offset = offset;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int io_error(struct sleepy_reader *r, int err, const char *what)
{
	r->status = SLEEPY_ERR_IO;
	r->sys_errno = err;
	snprintf(r->err, sizeof(r->err), "%s: %s", what, strerror(err));
	return -1;
}

/*
 * Make at least need bytes available in the window unless the file ends
 * first. Returns 0 (check end - start for how many there are), or -1 on a
 * read error.
 */
static int fill(struct sleepy_reader *r, size_t need)
{
	if (r->end - r->start >= need)
		return 0;
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	while (r->end < need && !r->eof) {
		ssize_t n = read(r->fd, r->buf + r->end, BUF_SIZE - r->end);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_error(r, errno, "read");
		}
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
	}
	return 0;
}

static size_t avail(const struct sleepy_reader *r)
{
	return r->end - r->start;
}

static void consume(struct sleepy_reader *r, size_t n)
{
	r->start += n;
	r->pos += n;
}

static int read_header(struct sleepy_reader *r)
{
	const size_t want = sizeof(r->hdr);
	size_t n, cmp;

	if (fill(r, want))
		return -1;
	n = avail(r);
	/* Judge the magic on what there is, so short junk is "bad magic". */
	cmp = n < sizeof(r->hdr.magic) ? n : sizeof(r->hdr.magic);
	if (memcmp(r->buf + r->start, SLEEPY_MAGIC, cmp) != 0)
		return format_error(r, 0, "bad magic (not a sleepy session "
				    "file)");
	if (n < want)
		return format_error(r, 0, "truncated file header (%zu of %zu "
				    "bytes)", n, want);
	memcpy(&r->hdr, r->buf + r->start, want);
	r->hdr.release[sizeof(r->hdr.release) - 1] = '\0';
	r->hdr.machine[sizeof(r->hdr.machine) - 1] = '\0';

	if (r->hdr.version < SLEEPY_MIN_FORMAT_VERSION ||
	    r->hdr.version > SLEEPY_FORMAT_VERSION)
		return format_error(r, offsetof(struct sleepy_file_header,
						version),
				    "unsupported format version %" PRIu32
				    " (this parse reads versions %d to %d)",
				    (uint32_t)r->hdr.version,
				    SLEEPY_MIN_FORMAT_VERSION,
				    SLEEPY_FORMAT_VERSION);
	if (r->hdr.header_size < want || r->hdr.header_size >
	    SLEEPY_MAX_HEADER_SIZE)
		return format_error(r, offsetof(struct sleepy_file_header,
						header_size),
				    "header_size %" PRIu32 " out of range "
				    "(%zu..%d)", (uint32_t)r->hdr.header_size,
				    want, SLEEPY_MAX_HEADER_SIZE);
	/* A later header may be longer: skip what we do not know. */
	if (fill(r, r->hdr.header_size))
		return -1;
	if (avail(r) < r->hdr.header_size)
		return format_error(r, 0, "truncated file header (%zu of %"
				    PRIu32 " bytes)", avail(r),
				    (uint32_t)r->hdr.header_size);
	consume(r, r->hdr.header_size);
	return 0;
}

struct sleepy_reader *sleepy_reader_open(const char *path)
{
	struct sleepy_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->buf = malloc(BUF_SIZE);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	if (!strcmp(path, "-")) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			io_error(r, errno, "open");
			return r;
		}
		/* Advisory only: the whole file is read once, in order. */
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	read_header(r);
	return r;
}

void sleepy_reader_close(struct sleepy_reader *r)
{
	if (!r)
		return;
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	free(r->buf);
	free(r);
}

const struct sleepy_file_header *sleepy_reader_header(
	const struct sleepy_reader *r)
{
	return &r->hdr;
}

/*
 * A string of len bytes at p, inside a record of size bytes at rec: it and
 * its NUL must fit, and it must hold no other NUL.
 */
static int check_string(struct sleepy_reader *r, const unsigned char *rec,
			size_t size, size_t at, size_t len, const char *what,
			uint64_t offset)
{
	const uint16_t type = rec[0] | rec[1] << 8;

	if (at + len + 1 > size)
		return format_error(r, offset, "record type %u: %s of %zu "
				    "bytes and its NUL run past the record's "
				    "%zu bytes", type, what, len, size);
	if (rec[at + len] != '\0')
		return format_error(r, offset, "record type %u: %s is not "
				    "NUL-terminated", type, what);
	if (memchr(rec + at, '\0', len))
		return format_error(r, offset, "record type %u: %s contains "
				    "a NUL byte", type, what);
	return 0;
}

static int too_short(struct sleepy_reader *r, const char *what, size_t size,
		     size_t need, uint64_t offset)
{
	return format_error(r, offset, "%s record of %zu bytes is shorter "
			    "than its %zu-byte fixed part", what, size, need);
}

/*
 * A logical stack part at byte at of a record of size bytes (a sample's,
 * what, or an OFFCPU record's): its head and its frames inside the
 * record, at most SLEEPY_LSTACK_SAMPLE_FRAMES of them, none when the
 * stack was left out (torn, unreadable).
 */
static int check_lstack(struct sleepy_reader *r, const unsigned char *p,
			size_t size, size_t at, const char *what,
			uint64_t offset)
{
	struct sleepy_lstack_part l;

	if (size < at + SLEEPY_LSTACK_HEAD)
		return too_short(r, what, size, at + SLEEPY_LSTACK_HEAD,
				 offset);
	sleepy_lstack_at(p + at, &l);
	if (l.nr > SLEEPY_LSTACK_SAMPLE_FRAMES)
		return format_error(r, offset, "%s record: a logical stack of "
				    "%u frames (at most %d)", what, l.nr,
				    SLEEPY_LSTACK_SAMPLE_FRAMES);
	if (size < at + SLEEPY_LSTACK_HEAD + l.nr * SLEEPY_LSTACK_FRAME)
		return format_error(r, offset, "%s record of %zu bytes is "
				    "shorter than its logical stack of %u "
				    "frames", what, size, l.nr);
	if (l.nr && (l.flags & (SLEEPY_LSTACK_F_TORN | SLEEPY_LSTACK_F_FAULT)))
		return format_error(r, offset, "%s record: a logical stack "
				    "left out (%s) has %u frames", what,
				    l.flags & SLEEPY_LSTACK_F_TORN ? "torn" :
				    "unreadable", l.nr);
	return 0;
}

/* A what record's cpu: below the header's nr_cpus. */
static int check_cpu(struct sleepy_reader *r, unsigned int cpu,
		     const char *what, uint64_t offset)
{
	if (cpu < r->hdr.nr_cpus)
		return 0;
	return format_error(r, offset, "%s record: cpu %u out of range (the "
			    "header has %" PRIu32 " CPUs)", what, cpu,
			    (uint32_t)r->hdr.nr_cpus);
}

/* A sample's optional fixed-size fields, in their order in the record. */
static const struct {
	uint8_t flag;
	uint8_t size;
	const char *what;	/* a record too short for it */
} sample_fields[] = {
	{ SLEEPY_SAMPLE_F_KCTX, SLEEPY_KCTX_SIZE,
	  "sample (with a kernel context)" },
	{ SLEEPY_SAMPLE_F_USER_IP, sizeof(__u64), "sample (with user_ip)" },
	{ SLEEPY_SAMPLE_F_CHAIN, sizeof(__u32), "sample (with a chain id)" },
};

static int check_sample(struct sleepy_reader *r, const unsigned char *p,
			size_t size, uint64_t offset)
{
	const uint8_t flags = p[offsetof(struct sleepy_rec_sample, flags)];
	const char *what = NULL;
	size_t need = SLEEPY_SAMPLE_SIZE;

	if (size < SLEEPY_SAMPLE_SIZE)
		return too_short(r, "sample", size, SLEEPY_SAMPLE_SIZE, offset);
	for (size_t i = 0; i < sizeof(sample_fields) / sizeof(sample_fields[0]);
	     i++) {
		if (flags & sample_fields[i].flag) {
			need += sample_fields[i].size;
			what = sample_fields[i].what;
		}
	}
	if (size < need)
		return too_short(r, what, size, need, offset);
	if (flags & SLEEPY_SAMPLE_F_LSTACK)
		return check_lstack(r, p, size, need,
				    "sample (with a logical stack)", offset);
	return 0;
}

/* A what record of at least need bytes whose __u16 at cpu_at is a CPU
 * below the header's nr_cpus. */
static int check_cpu_record(struct sleepy_reader *r, const unsigned char *p,
			    size_t size, size_t need, size_t cpu_at,
			    const char *what, uint64_t offset)
{
	uint16_t cpu;

	if (size < need)
		return too_short(r, what, size, need, offset);
	memcpy(&cpu, p + cpu_at, sizeof(cpu));
	return check_cpu(r, cpu, what, offset);
}

/* A CPU below the header's nr_cpus, its logical stack inside the record. */
static int check_offcpu(struct sleepy_reader *r, const unsigned char *p,
			size_t size, uint64_t offset)
{
	if (check_cpu_record(r, p, size, SLEEPY_OFFCPU_SIZE,
			     offsetof(struct sleepy_rec_offcpu, cpu), "off-CPU",
			     offset))
		return -1;
	return check_lstack(r, p, size, offsetof(struct sleepy_rec_offcpu,
						 lstack), "off-CPU", offset);
}

static int check_syscall(struct sleepy_reader *r, const unsigned char *p,
			 size_t size, uint64_t offset)
{
	return check_cpu_record(r, p, size, SLEEPY_SYSCALL_SIZE,
				offsetof(struct sleepy_rec_syscall, cpu),
				"syscall", offset);
}

static int check_lat_segment(struct sleepy_reader *r, const unsigned char *p,
			     size_t size, uint64_t offset)
{
	(void)p;
	if (size < SLEEPY_LAT_SEGMENT_SIZE)
		return too_short(r, "latency segment", size,
				 SLEEPY_LAT_SEGMENT_SIZE, offset);
	return 0;
}

/* Buckets within SLEEPY_LAT_BUCKETS, filling the record, adding up to
 * calls. */
static int check_latency(struct sleepy_reader *r, const unsigned char *p,
			 size_t size, uint64_t offset)
{
	struct sleepy_rec_latency l;
	uint64_t sum = 0, v;
	size_t want;

	if (size < SLEEPY_LATENCY_SIZE)
		return too_short(r, "latency", size, SLEEPY_LATENCY_SIZE,
				 offset);
	memcpy(&l, p, sizeof(l));
	if (l.first + l.nr_buckets > SLEEPY_LAT_BUCKETS)
		return format_error(r, offset, "latency record: first bucket "
				    "%u and %u buckets go past the %d buckets",
				    l.first, l.nr_buckets, SLEEPY_LAT_BUCKETS);
	want = SLEEPY_LATENCY_SIZE + l.nr_buckets * sizeof(__u64);
	if (size != want)
		return format_error(r, offset, "latency record of %zu bytes: "
				    "its %u buckets make it %zu", size,
				    l.nr_buckets, want);
	for (size_t i = 0; i < l.nr_buckets; i++) {
		memcpy(&v, p + sizeof(l) + i * sizeof(v), sizeof(v));
		if (sum + v < sum)
			return format_error(r, offset, "latency record: its "
					    "counts overflow");
		sum += v;
	}
	if (sum != l.calls)
		return format_error(r, offset, "latency record: its counts add "
				    "up to %" PRIu64 ", not to its calls (%"
				    PRIu64 ")", sum, (uint64_t)l.calls);
	return 0;
}

/* A CPU below the header's nr_cpus, an id, frames inside the record. */
static int check_chain(struct sleepy_reader *r, const unsigned char *p,
		       size_t size, uint64_t offset)
{
	struct sleepy_rec_chain c;
	size_t need;

	if (size < SLEEPY_CHAIN_SIZE)
		return too_short(r, "chain", size, SLEEPY_CHAIN_SIZE, offset);
	memcpy(&c, p, sizeof(c));
	need = sizeof(c) + ((size_t)c.nr_kernel + c.nr_user) * sizeof(__u64);
	if (size < need)
		return format_error(r, offset, "chain record of %zu bytes is "
				    "shorter than its %u frames", size,
				    c.nr_kernel + c.nr_user);
	if (check_cpu(r, c.cpu, "chain", offset))
		return -1;
	if (!c.id)
		return format_error(r, offset, "chain record: id 0");
	return 0;
}

static int check_appid(struct sleepy_reader *r, const unsigned char *p,
		       size_t size, uint64_t offset)
{
	struct sleepy_rec_appid a;

	if (size < SLEEPY_APPID_SIZE)
		return too_short(r, "appid", size, SLEEPY_APPID_SIZE, offset);
	memcpy(&a, p, sizeof(a));
	if (check_string(r, p, size, sizeof(a), a.name_len, "name", offset))
		return -1;
	return check_string(r, p, size, sizeof(a) + a.name_len + 1u,
			    a.path_len, "path", offset);
}

static int check_mmap(struct sleepy_reader *r, const unsigned char *p,
		      size_t size, uint64_t offset)
{
	struct sleepy_rec_mmap m;

	if (size < SLEEPY_MMAP_SIZE)
		return too_short(r, "mmap", size, SLEEPY_MMAP_SIZE, offset);
	memcpy(&m, p, sizeof(m));
	if (m.build_id_len > SLEEPY_BUILD_ID_MAX)
		return format_error(r, offset, "mmap record: build_id_len %u "
				    "over %d", m.build_id_len,
				    SLEEPY_BUILD_ID_MAX);
	return check_string(r, p, size, sizeof(m), m.path_len, "path",
			    offset);
}

/* stats_size: at least the version's smallest, inside the record. */
static int check_stats(struct sleepy_reader *r, const unsigned char *p,
		       size_t size, uint64_t offset)
{
	const size_t min = sleepy_stats_min(r->hdr.version);
	struct sleepy_rec_stats s;

	if (size < SLEEPY_STATS_HEAD + min)
		return too_short(r, "stats", size, SLEEPY_STATS_HEAD + min,
				 offset);
	memcpy(&s, p, SLEEPY_STATS_HEAD);
	if (s.stats_size < min || s.stats_size > size - SLEEPY_STATS_HEAD)
		return format_error(r, offset, "stats record: stats_size %u "
				    "out of range (%zu..%zu)", s.stats_size,
				    min, size - SLEEPY_STATS_HEAD);
	r->stats_seen = true;
	return 0;
}

/* A CPU below the header's nr_cpus, once, in CPU order, before STATS. */
static int check_cpu_stats(struct sleepy_reader *r, const unsigned char *p,
			   size_t size, uint64_t offset)
{
	const size_t min = sleepy_cpu_stats_min(r->hdr.version);
	struct sleepy_rec_cpu_stats c;

	if (size < min)
		return too_short(r, "cpu stats", size, min, offset);
	memcpy(&c, p, SLEEPY_CPU_STATS_V2_SIZE);
	if (r->stats_seen)
		return format_error(r, offset, "cpu stats record for cpu %"
				    PRIu32 " after the STATS record (it must "
				    "come before)", (uint32_t)c.cpu);
	if (c.cpu >= r->hdr.nr_cpus)
		return format_error(r, offset, "cpu stats record: cpu %" PRIu32
				    " out of range (the header has %" PRIu32
				    " CPUs)", (uint32_t)c.cpu,
				    (uint32_t)r->hdr.nr_cpus);
	if (r->cpu_seen && c.cpu == r->last_cpu)
		return format_error(r, offset, "cpu stats record: a second "
				    "one for cpu %" PRIu32, (uint32_t)c.cpu);
	if (r->cpu_seen && c.cpu < r->last_cpu)
		return format_error(r, offset, "cpu stats record: cpu %" PRIu32
				    " after cpu %" PRIu32 " (one per CPU, in "
				    "CPU order)", (uint32_t)c.cpu,
				    r->last_cpu);
	r->cpu_seen = true;
	r->last_cpu = c.cpu;
	return 0;
}

typedef int (*check_fn)(struct sleepy_reader *r, const unsigned char *p,
			size_t size, uint64_t offset);

/* The known record types: their checks, and the version that brought each. */
static const struct {
	check_fn check;
	uint32_t since;
} record_types[] = {
	[SLEEPY_REC_SAMPLE] = { check_sample, 1 },
	[SLEEPY_REC_APPID] = { check_appid, 1 },
	[SLEEPY_REC_MMAP] = { check_mmap, 1 },
	[SLEEPY_REC_STATS] = { check_stats, 1 },
	[SLEEPY_REC_CPU_STATS] = { check_cpu_stats, 2 },
	[SLEEPY_REC_CHAIN] = { check_chain, 3 },
	[SLEEPY_REC_OFFCPU] = { check_offcpu, 4 },
	[SLEEPY_REC_SYSCALL] = { check_syscall, 5 },
	[SLEEPY_REC_LATENCY] = { check_latency, 5 },
	[SLEEPY_REC_LAT_SEGMENT] = { check_lat_segment, 5 },
};

#define NR_RECORD_TYPES (sizeof(record_types) / sizeof(record_types[0]))

bool sleepy_type_known(uint32_t version, uint16_t type)
{
	return type < NR_RECORD_TYPES && record_types[type].check &&
		version >= record_types[type].since;
}

size_t sleepy_stats_min(uint32_t version)
{
	return version == 1 ? SLEEPY_STATS_V1_SIZE : SAMPLE_STATS_SIZE_VER0;
}

size_t sleepy_cpu_stats_min(uint32_t version)
{
	return version < 3 ? SLEEPY_CPU_STATS_V2_SIZE :
	       version == 3 ? SLEEPY_CPU_STATS_V3_SIZE :
	       version < 6 ? SLEEPY_CPU_STATS_V4_SIZE : SLEEPY_CPU_STATS_SIZE;
}

/* Check a record (wholly in the buffer at p); unknown types pass. */
static int check_record(struct sleepy_reader *r, const unsigned char *p,
			uint16_t type, size_t size, uint64_t offset)
{
	if (!sleepy_type_known(r->hdr.version, type))
		return 0;	/* unknown: the caller skips it */
	return record_types[type].check(r, p, size, offset);
}

int sleepy_reader_next(struct sleepy_reader *r, struct sleepy_record *rec)
{
	struct sleepy_rec_hdr h;
	const unsigned char *p;

	if (r->status != SLEEPY_OK)
		return -1;
	if (avail(r) < sizeof(h)) {
		if (fill(r, sizeof(h)))
			return -1;
		if (avail(r) == 0)
			return 0;
		if (avail(r) < sizeof(h))
			return format_error(r, r->pos, "truncated record "
					    "header (%zu of %zu bytes)",
					    avail(r), sizeof(h));
	}
	memcpy(&h, r->buf + r->start, sizeof(h));
	if (h.size < sizeof(h))
		return format_error(r, r->pos, "record type %u: size %u is "
				    "smaller than the %zu-byte record header",
				    h.type, h.size, sizeof(h));
	if (avail(r) < h.size) {
		if (fill(r, h.size))
			return -1;
		if (avail(r) < h.size)
			return format_error(r, r->pos, "record type %u of %u "
					    "bytes runs past the end of the "
					    "file (%zu bytes left)", h.type,
					    h.size, avail(r));
	}
	p = r->buf + r->start;
	if (h.type != SLEEPY_REC_SAMPLE || h.size < SLEEPY_SAMPLE_SIZE ||
	    p[offsetof(struct sleepy_rec_sample, flags)]) {
		/* Anything but the common plain sample: the full check. */
		if (check_record(r, p, h.type, h.size, r->pos))
			return -1;
	}
	rec->type = h.type;
	rec->size = h.size;
	rec->offset = r->pos;
	rec->data = p;
	consume(r, h.size);
	return 1;
}

enum sleepy_reader_status sleepy_reader_status(const struct sleepy_reader *r)
{
	return r->status;
}

const char *sleepy_reader_error(const struct sleepy_reader *r)
{
	return r->err;
}

uint64_t sleepy_reader_error_offset(const struct sleepy_reader *r)
{
	return r->err_offset;
}

int sleepy_reader_errno(const struct sleepy_reader *r)
{
	return r->sys_errno;
}

uint64_t sleepy_reader_offset(const struct sleepy_reader *r)
{
	return r->pos;
}

/* ------------------------------------------------------------ decoders */

void sleepy_get_appid(const struct sleepy_record *rec, struct sleepy_appid *a)
{
	struct sleepy_rec_appid raw;

	memcpy(&raw, rec->data, sizeof(raw));
	a->appid = raw.appid;
	a->instance = raw.instance;
	a->pid = raw.pid;
	a->parent_appid = raw.parent_appid;
	a->origin = raw.origin;
	a->flags = raw.flags;
	a->time_ns = raw.time_ns;
	a->name = (const char *)rec->data + sizeof(raw);
	a->name_len = raw.name_len;
	a->path = a->name + raw.name_len + 1;
	a->path_len = raw.path_len;
}

void sleepy_get_mmap(const struct sleepy_record *rec, struct sleepy_mmap *m)
{
	struct sleepy_rec_mmap raw;

	memcpy(&raw, rec->data, sizeof(raw));
	m->appid = raw.appid;
	m->pid = raw.pid;
	m->start = raw.start;
	m->len = raw.len;
	m->pgoff = raw.pgoff;
	m->time_ns = raw.time_ns;
	m->build_id_len = raw.build_id_len;
	m->flags = raw.flags;
	m->build_id = rec->data + offsetof(struct sleepy_rec_mmap, build_id);
	m->path = (const char *)rec->data + sizeof(raw);
	m->path_len = raw.path_len;
}

/* struct sleepy_cpu_stats is the record after its header, unpacked. */
#define CPU_STATS_AT(field) (offsetof(struct sleepy_rec_cpu_stats, field) - \
			     sizeof(struct sleepy_rec_hdr))
_Static_assert(sizeof(struct sleepy_cpu_stats) ==
	       SLEEPY_CPU_STATS_SIZE - sizeof(struct sleepy_rec_hdr) &&
	       offsetof(struct sleepy_cpu_stats, user_stops) ==
	       CPU_STATS_AT(user_stops) &&
	       offsetof(struct sleepy_cpu_stats, buffers_hwm) ==
	       CPU_STATS_AT(buffers_hwm) &&
	       offsetof(struct sleepy_cpu_stats, samples_taken) ==
	       CPU_STATS_AT(samples_taken) &&
	       offsetof(struct sleepy_cpu_stats, irq_calls) ==
	       CPU_STATS_AT(irq_calls) &&
	       offsetof(struct sleepy_cpu_stats, lstack_samples) ==
	       CPU_STATS_AT(lstack_samples) &&
	       offsetof(struct sleepy_cpu_stats, offcpu_dropped) ==
	       CPU_STATS_AT(offcpu_dropped) &&
	       offsetof(struct sleepy_cpu_stats, unwind_fallbacks) ==
	       CPU_STATS_AT(unwind_fallbacks), "cpu stats layout");

/* An earlier version's record's fields past its own are 0. */
void sleepy_get_cpu_stats(const struct sleepy_record *rec,
			  struct sleepy_cpu_stats *c)
{
	size_t n = rec->size - sizeof(struct sleepy_rec_hdr);

	memset(c, 0, sizeof(*c));
	memcpy(c, rec->data + sizeof(struct sleepy_rec_hdr),
	       n < sizeof(*c) ? n : sizeof(*c));
}

void sleepy_get_chain(const struct sleepy_record *rec, struct sleepy_chain *c)
{
	struct sleepy_rec_chain raw;

	memcpy(&raw, rec->data, sizeof(raw));
	c->cpu = raw.cpu;
	c->nr_kernel = raw.nr_kernel;
	c->nr_user = raw.nr_user;
	c->id = raw.id;
	c->flags = raw.flags;
	c->nr_table = raw.nr_table;	/* reserved, 0, before version 6 */
	c->frames = rec->data + sizeof(raw);
}

void sleepy_get_offcpu(const struct sleepy_record *rec,
		       struct sleepy_offcpu *o)
{
	struct sleepy_rec_offcpu raw;

	memcpy(&raw, rec->data, sizeof(raw));
	o->cpu = raw.cpu;
	o->state = raw.state;
	o->appid = raw.appid;
	o->pid = raw.pid;
	o->tid = raw.tid;
	o->time_ns = raw.time_ns;
	o->off_ns = raw.off_ns;
	sleepy_lstack_at(rec->data + offsetof(struct sleepy_rec_offcpu, lstack),
			 &o->lstack);
}

void sleepy_get_syscall(const struct sleepy_record *rec,
			struct sleepy_syscall *c)
{
	struct sleepy_rec_syscall raw;

	memcpy(&raw, rec->data, sizeof(raw));
	*c = (struct sleepy_syscall){
		raw.cpu, raw.nr, raw.appid, raw.pid, raw.tid, raw.flags,
		raw.start_ns, raw.latency_ns,
	};
}

void sleepy_get_lat_segment(const struct sleepy_record *rec,
			    struct sleepy_lat_segment *g)
{
	struct sleepy_rec_lat_segment raw;

	memcpy(&raw, rec->data, sizeof(raw));
	*g = (struct sleepy_lat_segment){
		raw.segment, raw.start_ns, raw.end_ns, raw.calls, raw.lost,
		raw.histograms,
	};
}

void sleepy_get_latency(const struct sleepy_record *rec,
			struct sleepy_latency *l)
{
	struct sleepy_rec_latency raw;

	memcpy(&raw, rec->data, sizeof(raw));
	*l = (struct sleepy_latency){
		raw.segment, raw.appid, raw.nr, raw.first, raw.nr_buckets,
		raw.calls, raw.sum_ns, raw.max_ns, raw.restarts,
		rec->data + sizeof(raw),
	};
}

/* Version 1's stats, at p, as today's struct. */
static void get_stats_v1(const unsigned char *p, struct sample_stats *s)
{
	struct sample_stats_v1 v;
	uint32_t n;

	memcpy(&v, p, sizeof(v));
	n = v.nr_cpus < 64 ? v.nr_cpus : 64;
	s->nr_cpus = v.nr_cpus;
	s->appids = v.appids;
	s->samples_taken = v.samples_taken;
	s->samples_written = v.samples_written;
	s->dropped_no_buffer = v.dropped_no_buffer;
	s->dropped_no_appid = v.dropped_no_appid;
	s->dropped_write_error = v.dropped_write_error;
	s->discarded_no_write = v.discarded_no_write;
	s->skipped_not_user = v.skipped_not_user;
	s->bytes_written = v.bytes_written;
	s->write_errors = v.write_errors;
	s->first_write_error = v.first_write_error;
	s->meta_dropped = v.meta_dropped;
	s->pids_mapped = v.pids_mapped;
	s->irq_ns_total = v.irq_ns_total;
	s->irq_ns_max = v.irq_ns_max;
	s->irq_calls = v.irq_calls;
	for (uint32_t i = 0; i < n; i++)
		if (v.buffers_hwm[i] > s->buffers_hwm)
			s->buffers_hwm = v.buffers_hwm[i];
}

void sleepy_get_stats(const struct sleepy_record *rec, uint32_t version,
		      struct sample_stats *s)
{
	uint16_t n;

	memset(s, 0, sizeof(*s));
	if (version == 1) {
		get_stats_v1(rec->data + SLEEPY_STATS_HEAD, s);
		return;
	}
	memcpy(&n, rec->data + offsetof(struct sleepy_rec_stats, stats_size),
	       sizeof(n));
	memcpy(s, rec->data + SLEEPY_STATS_HEAD,
	       n < sizeof(*s) ? n : sizeof(*s));
}

const char *sleepy_mode_name(unsigned int mode)
{
	static const char *const names[] = {
		[SLEEPY_MODE_USER] = "user",
		[SLEEPY_MODE_KERNEL] = "kernel",
		[SLEEPY_MODE_IRQ] = "irq",
		[SLEEPY_MODE_IDLE] = "idle",
	};

	return mode < sizeof(names) / sizeof(names[0]) ? names[mode] : NULL;
}
