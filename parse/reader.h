/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reader: a streaming reader of sleepy session files.
 *
 * The file is read through a fixed-size buffer, one record at a time, so
 * memory does not depend on the file's size. sleepy_reader_next() checks
 * every record of a known type against the format (fixed part present,
 * strings NUL-terminated inside the record, ...) before returning it, so the
 * sleepy_get_*() decoders below need no checks of their own. Records of
 * unknown types are returned too, for the caller to skip; a type is known
 * from the format version that brought it on (sleepy_type_known()).
 *
 * Versions 1 to 5 are read. Version 2 brought the CPU_STATS records and
 * the STATS record without its per-CPU array; sleepy_get_stats() gives
 * either version's STATS record as the struct sample_stats of today.
 * Version 3 brought call chains: CHAIN records, a chain id on samples and
 * the chain statistics at the end of CPU_STATS records. Version 4
 * brought logical stacks: a logical stack part on samples
 * (SLEEPY_SAMPLE_F_LSTACK), OFFCPU records, and their statistics at the
 * end of CPU_STATS records. Version 5 brought system calls: a kernel
 * context on samples (SLEEPY_SAMPLE_F_KCTX, the first optional field),
 * SYSCALL, LATENCY and LAT_SEGMENT records, and their statistics at the
 * end of struct sample_stats. Some checks span records: CPU_STATS records
 * name each CPU below the header's nr_cpus once, in CPU order, before any
 * STATS record.
 *
 * Errors carry a message and, for format errors, the byte offset where the
 * problem is: the start of the offending record, or for the file header the
 * offset of the offending field (0 for the magic and for a truncated header,
 * 8 for the version, 12 for header_size).
 */
#ifndef SLEEPY_PARSE_READER_H
#define SLEEPY_PARSE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/sleepy.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reader decodes the little-endian sleepy format in place"
#endif

/* Fixed parts of the known record types, header included. */
#define SLEEPY_SAMPLE_SIZE	sizeof(struct sleepy_rec_sample)	/* 36 */
#define SLEEPY_SAMPLE_UIP_SIZE	(SLEEPY_SAMPLE_SIZE + sizeof(__u64))	/* 44 */
#define SLEEPY_APPID_SIZE	sizeof(struct sleepy_rec_appid)	/* 36 */
#define SLEEPY_MMAP_SIZE	sizeof(struct sleepy_rec_mmap)	/* 68 */
#define SLEEPY_CPU_STATS_V2_SIZE	68	/* version 2's CPU_STATS */
#define SLEEPY_CPU_STATS_V3_SIZE	116	/* version 3's */
#define SLEEPY_CPU_STATS_V4_SIZE	172	/* versions 4 and 5 */
/* 204 bytes: version 6's */
#define SLEEPY_CPU_STATS_SIZE	sizeof(struct sleepy_rec_cpu_stats)
#define SLEEPY_CHAIN_SIZE	sizeof(struct sleepy_rec_chain)	/* 16 */
/* A logical stack part's head (nr, flags) and one of its frames. */
#define SLEEPY_LSTACK_HEAD	sizeof(struct sleepy_rec_lstack)	/* 2 */
#define SLEEPY_LSTACK_FRAME	sizeof(struct sleepy_lstack_frame)	/* 16 */
#define SLEEPY_OFFCPU_SIZE	sizeof(struct sleepy_rec_offcpu)	/* 38 */
#define SLEEPY_KCTX_SIZE	sizeof(__u16)	/* a sample's kernel context */
#define SLEEPY_SYSCALL_SIZE	sizeof(struct sleepy_rec_syscall)	/* 40 */
#define SLEEPY_LATENCY_SIZE	sizeof(struct sleepy_rec_latency)	/* 52 */
#define SLEEPY_LAT_SEGMENT_SIZE	sizeof(struct sleepy_rec_lat_segment) /* 48 */
/* A STATS record's head: header, reserved, stats_size (8 bytes). */
#define SLEEPY_STATS_HEAD	offsetof(struct sleepy_rec_stats, stats)
/* Version 1's struct sample_stats, with its size and buffers_hwm[64]. */
#define SLEEPY_STATS_V1_SIZE	376

/* The oldest format version read (the newest: SLEEPY_FORMAT_VERSION). */
#define SLEEPY_MIN_FORMAT_VERSION	1

/* The largest header_size accepted (extra header bytes are skipped). */
#define SLEEPY_MAX_HEADER_SIZE	4096

enum sleepy_reader_status {
	SLEEPY_OK = 0,
	SLEEPY_ERR_FORMAT,	/* the file is not a valid session file */
	SLEEPY_ERR_IO,		/* open or read failed; see sys_errno */
	SLEEPY_ERR_NOMEM,
};

struct sleepy_reader;

/* One record; data points into the reader's buffer until the next call. */
struct sleepy_record {
	uint16_t type;			/* enum sleepy_rec_type, or unknown */
	uint16_t size;			/* whole record, header included */
	uint64_t offset;		/* of the record in the file */
	const unsigned char *data;	/* size bytes, from the header on */
};

/*
 * Open path ("-" for standard input) and read and check the file header.
 * Returns NULL only when out of memory; otherwise check
 * sleepy_reader_status(): on an error the reader can only report it and
 * be closed.
 */
struct sleepy_reader *sleepy_reader_open(const char *path);
void sleepy_reader_close(struct sleepy_reader *r);

/* The file header, with release and machine NUL-terminated. */
const struct sleepy_file_header *sleepy_reader_header(
	const struct sleepy_reader *r);

/*
 * The next record into *rec: returns 1, 0 at the end of the file, -1 on an
 * error (then see the functions below; later calls return -1 again).
 */
int sleepy_reader_next(struct sleepy_reader *r, struct sleepy_record *rec);

enum sleepy_reader_status sleepy_reader_status(const struct sleepy_reader *r);
/* What went wrong, without the file name or the offset. */
const char *sleepy_reader_error(const struct sleepy_reader *r);
/* SLEEPY_ERR_FORMAT: where. */
uint64_t sleepy_reader_error_offset(const struct sleepy_reader *r);
/* SLEEPY_ERR_IO: the errno of the failed call. */
int sleepy_reader_errno(const struct sleepy_reader *r);
/* Bytes consumed so far: header and the records returned. */
uint64_t sleepy_reader_offset(const struct sleepy_reader *r);

/* Is type a record type of this format version (which the reader checks)? */
bool sleepy_type_known(uint32_t version, uint16_t type);
/* A STATS record's smallest stats_size in a format version it reads. */
size_t sleepy_stats_min(uint32_t version);
/* A CPU_STATS record's smallest size in a format version (2 on). */
size_t sleepy_cpu_stats_min(uint32_t version);

/* ------------------------------------------------------------ decoders */

/*
 * A logical stack part (of a sample or an OFFCPU record): nr frames of
 * {id, arg}, the bottom (outermost) first, unaligned in the record (see
 * sleepy_lstack_get()). The reader checked that they fit the record,
 * that nr is at most SLEEPY_LSTACK_SAMPLE_FRAMES, and that a torn or
 * unreadable stack has none.
 */
struct sleepy_lstack_part {
	uint8_t nr;
	uint8_t flags;		/* SLEEPY_LSTACK_F_* */
	const unsigned char *frames;
};

static inline struct sleepy_lstack_frame sleepy_lstack_get(
	const struct sleepy_lstack_part *l, size_t i)
{
	struct sleepy_lstack_frame f;

	memcpy(&f, l->frames + i * sizeof(f), sizeof(f));
	return f;
}

/* The part at p (its head, then its frames). */
static inline void sleepy_lstack_at(const unsigned char *p,
				    struct sleepy_lstack_part *l)
{
	l->nr = p[offsetof(struct sleepy_rec_lstack, nr)];
	l->flags = p[offsetof(struct sleepy_rec_lstack, flags)];
	l->frames = p + sizeof(struct sleepy_rec_lstack);
}

struct sleepy_sample {
	uint8_t mode;		/* enum sleepy_mode */
	uint8_t flags;		/* SLEEPY_SAMPLE_F_* */
	uint16_t cpu;
	uint32_t appid;
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;
	uint64_t ip;
	uint16_t kctx;		/* 0 unless flags has SLEEPY_SAMPLE_F_KCTX */
	uint64_t user_ip;	/* 0 unless flags has SLEEPY_SAMPLE_F_USER_IP */
	uint32_t chain;		/* 0 unless flags has SLEEPY_SAMPLE_F_CHAIN */
	/* With SLEEPY_SAMPLE_F_LSTACK; else nr and flags 0, frames NULL. */
	struct sleepy_lstack_part lstack;
};

/* An OFFCPU record (version 4). */
struct sleepy_offcpu {
	uint16_t cpu;		/* where it ran again */
	uint8_t state;		/* enum sleepy_offcpu_state */
	uint32_t appid;
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;	/* when it blocked */
	uint64_t off_ns;	/* how long it was off the CPU */
	struct sleepy_lstack_part lstack;
};

/* A CHAIN record; frames are unaligned (see sleepy_chain_frame()). */
struct sleepy_chain {
	uint16_t cpu;
	uint8_t nr_kernel;
	uint8_t nr_user;
	uint32_t id;
	uint8_t flags;		/* SLEEPY_CHAIN_F_* */
	uint8_t nr_table;	/* version 6; 0 before */
	const unsigned char *frames;	/* nr_kernel + nr_user __u64s */
};

static inline uint64_t sleepy_chain_frame(const struct sleepy_chain *c,
					  size_t i)
{
	uint64_t v;

	memcpy(&v, c->frames + i * sizeof(v), sizeof(v));
	return v;
}

/* Strings point into the record: valid until the next record is read. */
struct sleepy_appid {
	uint32_t appid;
	uint32_t instance;
	uint32_t pid;
	uint32_t parent_appid;
	uint8_t origin;		/* enum sleepy_appid_origin */
	uint8_t flags;		/* SLEEPY_APPID_F_* */
	uint64_t time_ns;
	const char *name;	/* NUL-terminated, name_len bytes before it */
	size_t name_len;
	const char *path;	/* "" when unknown */
	size_t path_len;
};

struct sleepy_mmap {
	uint32_t appid;
	uint32_t pid;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	uint64_t time_ns;
	uint8_t build_id_len;
	uint8_t flags;			/* SLEEPY_MMAP_F_* */
	const uint8_t *build_id;	/* build_id_len bytes */
	const char *path;
	size_t path_len;
};

/* For the hot loop: the fields most callers need, without a copy. */
static inline uint8_t sleepy_sample_mode(const struct sleepy_record *rec)
{
	return rec->data[offsetof(struct sleepy_rec_sample, mode)];
}

static inline uint32_t sleepy_sample_appid(const struct sleepy_record *rec)
{
	uint32_t v;

	memcpy(&v, rec->data + offsetof(struct sleepy_rec_sample, appid),
	       sizeof(v));
	return v;
}

static inline uint64_t sleepy_sample_ip(const struct sleepy_record *rec)
{
	uint64_t v;

	memcpy(&v, rec->data + offsetof(struct sleepy_rec_sample, ip),
	       sizeof(v));
	return v;
}

static inline uint64_t sleepy_sample_time(const struct sleepy_record *rec)
{
	uint64_t v;

	memcpy(&v, rec->data + offsetof(struct sleepy_rec_sample, time_ns),
	       sizeof(v));
	return v;
}

/* The whole of a SLEEPY_REC_SAMPLE record. */
static inline void sleepy_get_sample(const struct sleepy_record *rec,
				     struct sleepy_sample *s)
{
	struct sleepy_rec_sample raw;
	const unsigned char *p;

	memcpy(&raw, rec->data, sizeof(raw));
	s->mode = raw.mode;
	s->flags = raw.flags;
	s->cpu = raw.cpu;
	s->appid = raw.appid;
	s->pid = raw.pid;
	s->tid = raw.tid;
	s->time_ns = raw.time_ns;
	s->ip = raw.ip;
	s->kctx = 0;
	s->user_ip = 0;
	s->chain = 0;
	s->lstack = (struct sleepy_lstack_part){ 0, 0, NULL };
	if (!raw.flags)
		return;
	p = rec->data + sizeof(raw);
	if (raw.flags & SLEEPY_SAMPLE_F_KCTX) {
		memcpy(&s->kctx, p, sizeof(s->kctx));
		p += sizeof(s->kctx);
	}
	if (raw.flags & SLEEPY_SAMPLE_F_USER_IP) {
		memcpy(&s->user_ip, p, sizeof(s->user_ip));
		p += sizeof(s->user_ip);
	}
	if (raw.flags & SLEEPY_SAMPLE_F_CHAIN) {
		memcpy(&s->chain, p, sizeof(s->chain));
		p += sizeof(s->chain);
	}
	if (raw.flags & SLEEPY_SAMPLE_F_LSTACK)
		sleepy_lstack_at(p, &s->lstack);
}

/* One CPU's statistics (SLEEPY_REC_CPU_STATS, version 2 on). */
struct sleepy_cpu_stats {
	uint32_t cpu;
	uint32_t buffers_hwm;
	uint64_t samples_taken;
	uint64_t dropped_no_buffer;
	uint64_t dropped_no_appid;
	uint64_t skipped_not_user;
	uint64_t irq_ns_total;
	uint64_t irq_ns_max;
	uint64_t irq_calls;
	/* version 3; 0 in earlier files */
	uint64_t chains_defined;
	uint64_t chains_truncated;
	uint64_t user_stops[SLEEPY_USER_STOPS];
	/* version 4; 0 in earlier files */
	uint64_t lstack_samples;
	uint64_t lstack_retries;
	uint64_t lstack_torn;
	uint64_t lstack_faults;
	uint64_t lstack_truncated;
	uint64_t offcpu_records;
	uint64_t offcpu_dropped;
	/* version 6; 0 in earlier files */
	uint64_t unwind_frames;
	uint64_t unwind_fp_frames;
	uint64_t unwind_fallbacks[2];
};

/* A SYSCALL record (version 5): a call during which its task was sampled. */
struct sleepy_syscall {
	uint16_t cpu;		/* where it ended */
	uint16_t nr;		/* its number */
	uint32_t appid;
	uint32_t pid;
	uint32_t tid;
	uint32_t flags;		/* SLEEPY_SYSCALL_F_* */
	uint64_t start_ns;	/* since sample_start */
	uint64_t latency_ns;
};

/* A LAT_SEGMENT record (version 5): the LATENCY records of a segment. */
struct sleepy_lat_segment {
	uint32_t segment;
	uint64_t start_ns, end_ns;	/* since sample_start */
	uint64_t calls;		/* in its histograms */
	uint64_t lost;		/* ended in it, in no histogram */
	uint32_t histograms;	/* its LATENCY records */
};

/*
 * A LATENCY record (version 5): one histogram of a segment, its counts
 * those of buckets first to first + nr_buckets - 1 (unaligned in the
 * record: see sleepy_latency_count()). The reader checked that they fit
 * SLEEPY_LAT_BUCKETS, fill the record exactly, and add up to calls.
 */
struct sleepy_latency {
	uint32_t segment;
	uint32_t appid;
	uint16_t nr;		/* the system call's number */
	uint8_t first;		/* the bucket of the first count */
	uint8_t nr_buckets;
	uint64_t calls, sum_ns, max_ns, restarts;
	const unsigned char *counts;	/* nr_buckets __u64s */
};

static inline uint64_t sleepy_latency_count(const struct sleepy_latency *l,
					    size_t i)
{
	uint64_t v;

	memcpy(&v, l->counts + i * sizeof(v), sizeof(v));
	return v;
}

void sleepy_get_appid(const struct sleepy_record *rec, struct sleepy_appid *a);
void sleepy_get_mmap(const struct sleepy_record *rec, struct sleepy_mmap *m);
void sleepy_get_cpu_stats(const struct sleepy_record *rec,
			  struct sleepy_cpu_stats *c);
void sleepy_get_chain(const struct sleepy_record *rec, struct sleepy_chain *c);
void sleepy_get_offcpu(const struct sleepy_record *rec,
		       struct sleepy_offcpu *o);
void sleepy_get_syscall(const struct sleepy_record *rec,
			struct sleepy_syscall *c);
void sleepy_get_lat_segment(const struct sleepy_record *rec,
			    struct sleepy_lat_segment *g);
void sleepy_get_latency(const struct sleepy_record *rec,
			struct sleepy_latency *l);
/*
 * The stats of a file of this format version, as today's struct: fields
 * an earlier kernel did not write are 0 (version 1: buffers_hwm is the
 * largest of its per-CPU array); a later kernel's, past ours, are ignored.
 */
void sleepy_get_stats(const struct sleepy_record *rec, uint32_t version,
		      struct sample_stats *s);

/* "user", "kernel", "irq", "idle", or NULL for an unknown mode. */
const char *sleepy_mode_name(unsigned int mode);

#endif /* SLEEPY_PARSE_READER_H */
