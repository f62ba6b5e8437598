/* SPDX-License-Identifier: MIT */
/*
 * pbw.h - a small protobuf writer: varints, length-delimited fields and
 * nested messages appended to an rtd_buf, with a sticky error so a run of
 * writes is checked once (as rtd_rd does for reads).
 *
 * A nested message is opened with pbw_begin(), which reserves a 4-byte
 * length, and closed with pbw_end(), which fills it in: a short message
 * (under 128 bytes) is moved back so its length takes one byte; a longer
 * one keeps the padded 4-byte varint (0x80 0x80 0x80 0x0N form), which
 * every protobuf parser accepts, as Perfetto's protozero writes it.
 * Messages of 256 MiB or more are an error (-RTD_E_CAP).
 *
 * Field numbers come from each format's .proto, named at the call site.
 */
#ifndef RTD_COMMON_PBW_H
#define RTD_COMMON_PBW_H

#include <stdint.h>
#include <string.h>

#include "common/buf.h"

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

typedef struct rtd_pbw {
	rtd_buf b;
	int err;
} rtd_pbw;

static inline void pbw_raw(rtd_pbw *w, const void *p, size_t n)
{
	/* the common case, room already there, without a call */
	if (w->b.cap - w->b.len > n && !w->err) {
		memcpy(w->b.data + w->b.len, p, n);
		w->b.len += n;
		w->b.data[w->b.len] = 0;
		return;
	}
	if (!w->err)
		w->err = rtd_buf_append(&w->b, p, n);
}

/* Encode v at p, where 10 bytes are free; returns the end. For runs of
 * fields stored after one rtd_buf_reserve() for all of them. */
static inline uint8_t *pbw_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The bytes v takes as a varint. */
static inline size_t pbw_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void pbw_varint(rtd_pbw *w, uint64_t v)
{
	if (w->b.cap - w->b.len > 10 && !w->err) {
		uint8_t *p = pbw_put_varint(w->b.data + w->b.len, v);
		w->b.len = (size_t)(p - w->b.data);
		*p = 0;
		return;
	}
	uint8_t tmp[10];
	size_t n = (size_t)(pbw_put_varint(tmp, v) - tmp);
	pbw_raw(w, tmp, n);
}

static inline void pbw_key(rtd_pbw *w, unsigned field, unsigned wt)
{
	pbw_varint(w, (uint64_t)field << 3 | wt);
}

/* Room for @n more bytes at once, to store a run of fields with
 * pbw_put_*() and close with pbw_done(): the hot paths' one check instead
 * of one per field. NULL after an error (sticky, as for every write). */
static inline uint8_t *pbw_room(rtd_pbw *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->b.cap - w->b.len <= n && (w->err = rtd_buf_reserve(&w->b, n)))
		return NULL;
	return w->b.data + w->b.len;
}

/* A varint field at p (12 bytes of room for a field under 2048, checked
 * by pbw_room()); returns the end. */
static inline uint8_t *pbw_put_uint(uint8_t *p, unsigned field, uint64_t v)
{
	p = pbw_put_varint(p, (uint64_t)field << 3 | PB_VARINT);
	return pbw_put_varint(p, v);
}

/* A length-delimited field at p (room for its key, length and @n bytes
 * checked by the caller); returns the end. */
static inline uint8_t *pbw_put_bytes(uint8_t *p, unsigned field, const void *data, size_t n)
{
	p = pbw_put_varint(p, (uint64_t)field << 3 | PB_LEN);
	p = pbw_put_varint(p, n);
	if (n)
		memcpy(p, data, n);
	return p + n;
}

/* End a run of pbw_put_*() stores at p. */
static inline void pbw_done(rtd_pbw *w, uint8_t *p)
{
	w->b.len = (size_t)(p - w->b.data);
	*p = 0;
}

/* uint32/uint64/int32/int64/bool/enum: int64 negatives take 10 bytes, as
 * the protobuf encoding says. */
static inline void pbw_uint(rtd_pbw *w, unsigned field, uint64_t v)
{
	pbw_key(w, field, PB_VARINT);
	pbw_varint(w, v);
}

static inline void pbw_int(rtd_pbw *w, unsigned field, int64_t v)
{
	pbw_uint(w, field, (uint64_t)v);
}

/* sint32/sint64: zigzag. */
static inline void pbw_sint(rtd_pbw *w, unsigned field, int64_t v)
{
	pbw_uint(w, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void pbw_double(rtd_pbw *w, unsigned field, double d)
{
	uint8_t b[8];
	uint64_t u;
	memcpy(&u, &d, 8);
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	pbw_key(w, field, PB_I64);
	pbw_raw(w, b, 8);
}

static inline void pbw_bytes(rtd_pbw *w, unsigned field, const void *p,
			     size_t n)
{
	pbw_key(w, field, PB_LEN);
	pbw_varint(w, n);
	pbw_raw(w, p, n);
}

static inline void pbw_str(rtd_pbw *w, unsigned field, const char *s)
{
	pbw_bytes(w, field, s, strlen(s));
}

/* Open a nested message; returns the mark pbw_end() takes. */
static inline size_t pbw_begin(rtd_pbw *w, unsigned field)
{
	pbw_key(w, field, PB_LEN);
	size_t mark = w->b.len;
	static const uint8_t pad[4] = {0x80, 0x80, 0x80, 0};
	pbw_raw(w, pad, 4);
	return mark;
}

static inline void pbw_end(rtd_pbw *w, size_t mark)
{
	if (w->err)
		return;
	size_t len = w->b.len - mark - 4;
	uint8_t *p = w->b.data + mark;
	if (len < 128) {
		p[0] = (uint8_t)len;
		memmove(p + 1, p + 4, len);
		w->b.len -= 3;
		w->b.data[w->b.len] = 0;
		return;
	}
	if (len >= (1u << 28)) {
		w->err = -RTD_E_CAP;
		return;
	}
	p[0] = (uint8_t)(len | 0x80);
	p[1] = (uint8_t)(len >> 7 | 0x80);
	p[2] = (uint8_t)(len >> 14 | 0x80);
	p[3] = (uint8_t)(len >> 21);
}

#endif /* RTD_COMMON_PBW_H */
