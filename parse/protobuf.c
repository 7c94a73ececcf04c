// SPDX-License-Identifier: GPL-2.0
/* protobuf: the wire format's encoder; see protobuf.h. */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_free(struct pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes; false (and nomem) when there is none. */
static bool room(struct pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *v;

	if (b->nomem)
		return false;
	if (n <= b->cap - b->len)
		return true;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->nomem = true;
			return false;
		}
		cap *= 2;
	}
	v = realloc(b->buf, cap);
	if (!v) {
		b->nomem = true;
		return false;
	}
	b->buf = v;
	b->cap = cap;
	return true;
}

/* The bytes of v as a varint: 7 bits a byte, low bits first. */
static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

static void put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p = (uint8_t)v;
}

void pb_varint(struct pb *b, uint64_t v)
{
	size_t n = varint_size(v);

	if (!room(b, n))
		return;
	put_varint(b->buf + b->len, v);
	b->len += n;
}

static void tag(struct pb *b, uint32_t field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	tag(b, field, WIRE_LEN);
	pb_varint(b, n);
	if (n && room(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void pb_append(struct pb *b, const struct pb *from)
{
	if (from->nomem) {
		b->nomem = true;
		return;
	}
	if (from->len && room(b, from->len)) {
		memcpy(b->buf + b->len, from->buf, from->len);
		b->len += from->len;
	}
}

size_t pb_open(struct pb *b, uint32_t field)
{
	tag(b, field, WIRE_LEN);
	if (!room(b, 1))
		return 0;
	b->buf[b->len] = 0;
	return b->len++;	/* the length's byte */
}

void pb_close(struct pb *b, size_t mark)
{
	size_t body, n;

	if (b->nomem)
		return;
	body = b->len - mark - 1;
	n = varint_size(body);
	if (n > 1) {
		if (!room(b, n - 1))
			return;
		memmove(b->buf + mark + n, b->buf + mark + 1, body);
		b->len += n - 1;
	}
	put_varint(b->buf + mark, body);
}
