// SPDX-License-Identifier: GPL-2.0
/*
 * reader: streaming reader of sleepy session files; see reader.h.
 *
 * The buffer holds a window of the file: bytes [start, end) of buf are the
 * file's bytes from offset pos on. A record is returned in place when it is
 * wholly in the window; otherwise the window is moved to the front of the
 * buffer and refilled. Records are at most 65535 bytes (a __u16 size), so a
 * buffer larger than that always holds a whole record.
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
	       SLEEPY_MMAP_SIZE == 68, "record layout");

struct sleepy_reader {
	int fd;
	bool eof;		/* read() returned 0 */
	unsigned char *buf;
	size_t start, end;	/* the window: buf[start, end) */
	uint64_t pos;		/* file offset of buf[start] */
	struct sleepy_file_header hdr;
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

	if (r->hdr.version != SLEEPY_FORMAT_VERSION)
		return format_error(r, offsetof(struct sleepy_file_header,
						version),
				    "unsupported format version %" PRIu32
				    " (this parse reads version %d)",
				    (uint32_t)r->hdr.version,
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

/* Check a record of a known type (wholly in the buffer at p). */
static int check_record(struct sleepy_reader *r, const unsigned char *p,
			uint16_t type, size_t size, uint64_t offset)
{
	switch (type) {
	case SLEEPY_REC_SAMPLE: {
		const uint8_t flags =
			p[offsetof(struct sleepy_rec_sample, flags)];

		if (size < SLEEPY_SAMPLE_SIZE)
			return too_short(r, "sample", size, SLEEPY_SAMPLE_SIZE,
					 offset);
		if ((flags & SLEEPY_SAMPLE_F_USER_IP) &&
		    size < SLEEPY_SAMPLE_UIP_SIZE)
			return too_short(r, "sample (with user_ip)", size,
					 SLEEPY_SAMPLE_UIP_SIZE, offset);
		return 0;
	}
	case SLEEPY_REC_APPID: {
		struct sleepy_rec_appid a;

		if (size < SLEEPY_APPID_SIZE)
			return too_short(r, "appid", size, SLEEPY_APPID_SIZE,
					 offset);
		memcpy(&a, p, sizeof(a));
		if (check_string(r, p, size, sizeof(a), a.name_len, "name",
				 offset))
			return -1;
		return check_string(r, p, size, sizeof(a) + a.name_len + 1u,
				    a.path_len, "path", offset);
	}
	case SLEEPY_REC_MMAP: {
		struct sleepy_rec_mmap m;

		if (size < SLEEPY_MMAP_SIZE)
			return too_short(r, "mmap", size, SLEEPY_MMAP_SIZE,
					 offset);
		memcpy(&m, p, sizeof(m));
		if (m.build_id_len > SLEEPY_BUILD_ID_MAX)
			return format_error(r, offset, "mmap record: "
					    "build_id_len %u over %d",
					    m.build_id_len,
					    SLEEPY_BUILD_ID_MAX);
		return check_string(r, p, size, sizeof(m), m.path_len, "path",
				    offset);
	}
	case SLEEPY_REC_STATS: {
		struct sleepy_rec_stats s;

		if (size < SLEEPY_STATS_SIZE)
			return too_short(r, "stats", size, SLEEPY_STATS_SIZE,
					 offset);
		memcpy(&s, p, offsetof(struct sleepy_rec_stats, stats));
		if (s.stats_size < sizeof(struct sample_stats) ||
		    s.stats_size > size - offsetof(struct sleepy_rec_stats,
						   stats))
			return format_error(r, offset, "stats record: "
					    "stats_size %u out of range "
					    "(%zu..%zu)", s.stats_size,
					    sizeof(struct sample_stats),
					    size - offsetof(struct
							    sleepy_rec_stats,
							    stats));
		return 0;
	}
	default:
		return 0;	/* unknown: the caller skips it */
	}
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
	    (p[offsetof(struct sleepy_rec_sample, flags)] &
	     SLEEPY_SAMPLE_F_USER_IP)) {
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
	m->build_id = rec->data + offsetof(struct sleepy_rec_mmap, build_id);
	m->path = (const char *)rec->data + sizeof(raw);
	m->path_len = raw.path_len;
}

void sleepy_get_stats(const struct sleepy_record *rec, struct sample_stats *s)
{
	memcpy(s, rec->data + offsetof(struct sleepy_rec_stats, stats),
	       sizeof(*s));
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
