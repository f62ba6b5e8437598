/* SPDX-License-Identifier: MIT */
/*
 * rd.h - the one bounds-checked cursor for decoding untrusted bytes.
 *
 * Rules (STYLE.md "Decoding untrusted bytes"):
 * - lengths are compared as n > (size_t)(end - p); p + n is never formed
 *   before the check;
 * - a failed read sets a sticky error: later reads return 0 and do not move,
 *   so a run of reads is checked once with rd_ok() or r.err;
 * - integers are read through memcpy, never pointer casts;
 * - varints stop at their maximum width (5 bytes for 32 bits, 10 for 64).
 *
 * Everything here is static inline: these sit on the decoders' hot paths.
 */
#ifndef RTD_COMMON_RD_H
#define RTD_COMMON_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rtdiag/common.h"

typedef struct rtd_rd {
	const uint8_t *p;     /* next byte to read */
	const uint8_t *end;   /* one past the last readable byte */
	const uint8_t *start; /* where this reader began, for offsets */
	int err;              /* 0, or the first error (negative RTD_E*) */
} rtd_rd;

static inline void rd_init(rtd_rd *r, const void *buf, size_t len)
{
	r->p = (const uint8_t *)buf;
	r->end = r->p + len;
	r->start = r->p;
	r->err = 0;
}

static inline size_t rd_left(const rtd_rd *r)
{
	return (size_t)(r->end - r->p);
}

/* Offset of the cursor from where the reader began. */
static inline size_t rd_off(const rtd_rd *r)
{
	return (size_t)(r->p - r->start);
}

static inline bool rd_ok(const rtd_rd *r)
{
	return r->err == 0;
}

/* Set the sticky error (the first one wins) and return 0 for chaining. */
static inline int rd_fail(rtd_rd *r, int err)
{
	if (!r->err)
		r->err = err;
	return 0;
}

/* True and no error when n bytes are available; else sets RTD_E_TRUNCATED. */
static inline bool rd_need(rtd_rd *r, size_t n)
{
	if (r->err)
		return false;
	if (n > rd_left(r)) {
		r->err = -RTD_E_TRUNCATED;
		return false;
	}
	return true;
}

static inline uint8_t rd_u8(rtd_rd *r)
{
	if (!rd_need(r, 1))
		return 0;
	return *r->p++;
}

static inline uint16_t rd_u16le(rtd_rd *r)
{
	uint8_t b[2];
	if (!rd_need(r, 2))
		return 0;
	memcpy(b, r->p, 2);
	r->p += 2;
	return (uint16_t)(b[0] | (uint16_t)b[1] << 8);
}

static inline uint32_t rd_u32le(rtd_rd *r)
{
	uint8_t b[4];
	if (!rd_need(r, 4))
		return 0;
	memcpy(b, r->p, 4);
	r->p += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t rd_u64le(rtd_rd *r)
{
	uint64_t lo = rd_u32le(r);
	uint64_t hi = rd_u32le(r);
	return lo | hi << 32;
}

static inline int16_t rd_i16le(rtd_rd *r)
{
	return (int16_t)rd_u16le(r);
}

static inline int32_t rd_i32le(rtd_rd *r)
{
	return (int32_t)rd_u32le(r);
}

static inline int64_t rd_i64le(rtd_rd *r)
{
	return (int64_t)rd_u64le(r);
}

static inline float rd_f32le(rtd_rd *r)
{
	uint32_t u = rd_u32le(r);
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline double rd_f64le(rtd_rd *r)
{
	uint64_t u = rd_u64le(r);
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Big-endian reads, for the few formats that use them. */
static inline uint16_t rd_u16be(rtd_rd *r)
{
	uint8_t b[2];
	if (!rd_need(r, 2))
		return 0;
	memcpy(b, r->p, 2);
	r->p += 2;
	return (uint16_t)((uint16_t)b[0] << 8 | b[1]);
}

static inline uint32_t rd_u32be(rtd_rd *r)
{
	uint8_t b[4];
	if (!rd_need(r, 4))
		return 0;
	memcpy(b, r->p, 4);
	r->p += 4;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/*
 * rd_varuint_max - unsigned LEB128 of at most max_bytes bytes.
 * A longer encoding sets RTD_E_VARINT; the last allowed byte may not carry
 * bits beyond 64 either (the 10th byte of a u64 may only be 0 or 1).
 */
static inline uint64_t rd_varuint_max(rtd_rd *r, unsigned max_bytes)
{
	uint64_t v = 0;
	unsigned shift = 0;
	if (!r->err && (size_t)(r->end - r->p) >= max_bytes) {
		/* the common case: the longest encoding fits, so no byte is
		 * checked against the end (events are read by the million) */
		const uint8_t *p = r->p;
		for (unsigned i = 0; i < max_bytes; i++) {
			uint8_t b = p[i];
			if (shift == 63 && (b & 0x7e)) {
				r->p = p + i + 1;
				rd_fail(r, -RTD_E_VARINT);
				return 0;
			}
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80)) {
				r->p = p + i + 1;
				return v;
			}
			shift += 7;
		}
		r->p = p + max_bytes;
		rd_fail(r, -RTD_E_VARINT);
		return 0;
	}
	for (unsigned i = 0; i < max_bytes; i++) {
		if (!rd_need(r, 1))
			return 0;
		uint8_t b = *r->p++;
		if (shift == 63 && (b & 0x7e)) {
			rd_fail(r, -RTD_E_VARINT);
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	rd_fail(r, -RTD_E_VARINT);
	return 0;
}

/* Unsigned LEB128 up to 64 bits (10 bytes). */
static inline uint64_t rd_varuint(rtd_rd *r)
{
	return rd_varuint_max(r, 10);
}

/* Unsigned LEB128 up to 32 bits (5 bytes); a value above UINT32_MAX is an
 * error (RTD_E_VARINT). */
static inline uint32_t rd_varuint32(rtd_rd *r)
{
	uint64_t v = rd_varuint_max(r, 5);
	if (v > UINT32_MAX) {
		rd_fail(r, -RTD_E_VARINT);
		return 0;
	}
	return (uint32_t)v;
}

/* Signed LEB128 up to 64 bits. */
static inline int64_t rd_varint(rtd_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (!rd_need(r, 1))
			return 0;
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	rd_fail(r, -RTD_E_VARINT);
	return 0;
}

/* Borrow n bytes: *out points into the input; NULL on error. */
static inline bool rd_bytes(rtd_rd *r, size_t n, const uint8_t **out)
{
	if (!rd_need(r, n)) {
		*out = NULL;
		return false;
	}
	*out = r->p;
	r->p += n;
	return true;
}

static inline bool rd_copy(rtd_rd *r, void *dst, size_t n)
{
	if (!rd_need(r, n))
		return false;
	memcpy(dst, r->p, n);
	r->p += n;
	return true;
}

static inline bool rd_skip(rtd_rd *r, size_t n)
{
	if (!rd_need(r, n))
		return false;
	r->p += n;
	return true;
}

/*
 * rd_sub - split off the next n bytes as a reader of their own.
 * The sub-reader's offsets count from the parent's start, so errors found
 * inside it report positions in the whole input.
 */
static inline bool rd_sub(rtd_rd *r, size_t n, rtd_rd *sub)
{
	const uint8_t *p;
	if (!rd_bytes(r, n, &p)) {
		sub->p = sub->end = sub->start = r->p;
		sub->err = r->err;
		return false;
	}
	sub->p = p;
	sub->end = p + n;
	sub->start = r->start;
	sub->err = 0;
	return true;
}

/* Skip to an alignment boundary measured from r->start (nettrace pads). */
static inline bool rd_align(rtd_rd *r, size_t align)
{
	size_t off = rd_off(r);
	size_t pad = (align - off % align) % align;
	return rd_skip(r, pad);
}

#endif /* RTD_COMMON_RD_H */
