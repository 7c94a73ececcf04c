/* SPDX-License-Identifier: GPL-2.0 */
/*
 * protobuf: a small encoder of the protocol buffers wire format, enough
 * for pprof's profile.proto: varint fields (wire type 0) and
 * length-delimited ones (wire type 2: strings, bytes, nested messages,
 * packed repeated varints), into a growing buffer in memory.
 *
 * A nested message or packed field is opened (its tag and one byte for
 * its length) and closed once its body is written: the length is then
 * known, and a body longer than 127 bytes is moved up to make room for a
 * longer varint. Out of memory, the buffer stops growing and remembers it
 * (nomem), so that a message is checked once, at its end.
 */
#ifndef SLEEPY_PARSE_PROTOBUF_H
#define SLEEPY_PARSE_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool nomem;		/* a write failed: the buffer is incomplete */
};

void pb_init(struct pb *b);
void pb_free(struct pb *b);

/* A bare varint (inside a packed field). */
void pb_varint(struct pb *b, uint64_t v);
/* A varint field (int64, uint64, bool), left out when v is 0 (its
 * default). */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
/* A length-delimited field of n bytes at p (always written). */
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n);
/* Append another buffer's fields. */
void pb_append(struct pb *b, const struct pb *from);

/* Open a nested message or packed field; returns the mark pb_close()
 * needs. */
size_t pb_open(struct pb *b, uint32_t field);
void pb_close(struct pb *b, size_t mark);

#endif /* SLEEPY_PARSE_PROTOBUF_H */
