/* SPDX-License-Identifier: MIT */
/*
 * nt_encode.h - a small test encoder (labelled fake: no real writer emits
 * V6 on this machine) that writes the same logical trace as NetTrace V4
 * (FastSerialization objects, V5 metadata tags, compressed headers) and as
 * NetTrace V6 (NetTraceFormat.md blocks), so the two decodings can be
 * compared event by event.
 */
#ifndef NT_ENCODE_H
#define NT_ENCODE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"

struct enc {
	rtd_buf b;
	bool v6;
	/* compressed header state */
	uint32_t meta, seq, proc, stack, plen;
	uint64_t cap, tid, ts;
	size_t size_at;
	uint32_t kind;
	uint32_t psz; /* pointer size: 8, or 4 for a 32-bit trace */
};

static inline void e_u8(rtd_buf *b, uint8_t v) { rtd_buf_append(b, &v, 1); }
static inline void e_u16(rtd_buf *b, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	rtd_buf_append(b, x, 2);
}
static inline void e_u32(rtd_buf *b, uint32_t v)
{
	e_u16(b, (uint16_t)v);
	e_u16(b, (uint16_t)(v >> 16));
}
static inline void e_u64(rtd_buf *b, uint64_t v)
{
	e_u32(b, (uint32_t)v);
	e_u32(b, (uint32_t)(v >> 32));
}
static inline void e_var(rtd_buf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		e_u8(b, (uint8_t)(c | (v ? 0x80 : 0)));
	} while (v);
}
static inline void e_utf16z(rtd_buf *b, const char *ascii)
{
	for (; *ascii; ascii++)
		e_u16(b, (uint8_t)*ascii);
	e_u16(b, 0);
}
static inline void e_str8(rtd_buf *b, const char *s)
{
	e_var(b, strlen(s));
	rtd_buf_append(b, s, strlen(s));
}
static inline void e_patch32(rtd_buf *b, size_t at, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			(uint8_t)(v >> 24)};
	memcpy(b->data + at, x, 4);
}

/* A MethodLoadVerbose payload: method @ns.@name over [start, start + 0x100)
 * in module 7 */
static inline void e_method_load(rtd_buf *b, uint64_t start, const char *ns, const char *name)
{
	e_u64(b, start); /* MethodID */
	e_u64(b, 7);     /* ModuleID */
	e_u64(b, start);
	e_u32(b, 0x100);
	e_u32(b, 0);
	e_u32(b, 0);
	e_utf16z(b, ns);
	e_utf16z(b, name);
	e_utf16z(b, "void  ()");
}

/* ---- framing ---------------------------------------------------------- */

static inline void enc_header(struct enc *e)
{
	rtd_buf_append(&e->b, "Nettrace", 8);
	if (e->v6) {
		e_u32(&e->b, 0);
		e_u32(&e->b, 6);
		e_u32(&e->b, 0);
	} else {
		e_u32(&e->b, 20);
		rtd_buf_append(&e->b, "!FastSerialization.1", 20);
	}
}

static inline void enc_time(rtd_buf *b, uint32_t psz)
{
	static const uint16_t t[8] = {2024, 1, 2, 2, 3, 4, 5, 6};
	for (int i = 0; i < 8; i++)
		e_u16(b, t[i]);
	e_u64(b, 1000000);    /* sync ticks */
	e_u64(b, 1000000000); /* ticks per second */
	e_u32(b, psz);        /* pointer size */
}

static inline void fs_type(rtd_buf *b, const char *name, uint32_t ver)
{
	e_u8(b, 5);
	e_u8(b, 5);
	e_u8(b, 1);
	e_u32(b, ver);
	e_u32(b, ver);
	e_u32(b, (uint32_t)strlen(name));
	rtd_buf_append(b, name, strlen(name));
	e_u8(b, 6);
}

static inline void enc_trace(struct enc *e)
{
	if (e->v6) {
		e_u32(&e->b, 0); /* size patched below */
		size_t at = e->b.len;
		enc_time(&e->b, e->psz ? e->psz : 8);
		e_u32(&e->b, 1);
		e_str8(&e->b, "ProcessId");
		e_str8(&e->b, "1234");
		e_patch32(&e->b, at - 4, (uint32_t)(e->b.len - at) | 1u << 24);
		return;
	}
	fs_type(&e->b, "Trace", 4);
	enc_time(&e->b, e->psz ? e->psz : 8);
	e_u32(&e->b, 1234); /* pid */
	e_u32(&e->b, 4);    /* processors */
	e_u32(&e->b, 1000); /* sampling rate */
	e_u8(&e->b, 6);
}

/* Begin a block; returns where its body starts (for enc_end). */
static inline size_t enc_begin(struct enc *e, const char *v4name, int kind)
{
	if (e->v6) {
		e->size_at = e->b.len;
		e->kind = (uint32_t)kind;
		e_u32(&e->b, 0);
		return e->b.len;
	}
	fs_type(&e->b, v4name ? v4name : "", 2);
	e->size_at = e->b.len;
	e_u32(&e->b, 0);
	while (e->b.len % 4)
		e_u8(&e->b, 0); /* padding to a 4-byte stream offset */
	return e->b.len;
}

static inline void enc_end(struct enc *e, size_t body)
{
	uint32_t size = (uint32_t)(e->b.len - body);
	if (e->v6) {
		e_patch32(&e->b, e->size_at, size | e->kind << 24);
		return;
	}
	e_patch32(&e->b, e->size_at, size);
	e_u8(&e->b, 6);
}

static inline void enc_finish(struct enc *e)
{
	if (e->v6)
		e_u32(&e->b, 0);
	else
		e_u8(&e->b, 1);
}

/* Event/metadata block header: size 20, flags, min/max timestamps. */
static inline void enc_block_header(struct enc *e, bool compressed)
{
	e_u16(&e->b, 20);
	e_u16(&e->b, compressed ? 1 : 0);
	e_u64(&e->b, 0);
	e_u64(&e->b, 0);
	e->meta = e->seq = e->proc = e->stack = e->plen = 0;
	e->cap = e->tid = e->ts = 0;
}

/* One compressed event (NetTraceFormat.md "Header compression"). */
static inline void enc_event(struct enc *e, uint32_t meta, uint32_t seq,
			     uint64_t tid, uint32_t stack, uint64_t ts,
			     const void *payload, uint32_t plen)
{
	uint8_t f = 64; /* sorted */
	rtd_buf *b = &e->b;
	if (meta != e->meta)
		f |= 1;
	if (seq != e->seq + 1 || tid != e->cap || e->proc != 0)
		f |= 2;
	if (tid != e->tid)
		f |= 4;
	if (stack != e->stack)
		f |= 8;
	if (plen != e->plen)
		f |= 128;
	e_u8(b, f);
	if (f & 1)
		e_var(b, meta);
	if (f & 2) {
		e_var(b, (uint32_t)(seq - e->seq - 1));
		e_var(b, tid);
		e_var(b, 0);
	}
	if (f & 4)
		e_var(b, tid);
	if (f & 8)
		e_var(b, stack);
	e_var(b, ts - e->ts);
	if (f & 128)
		e_var(b, plen);
	rtd_buf_append(b, payload, plen);
	e->meta = meta;
	e->seq = seq;
	e->cap = e->tid = tid;
	e->proc = 0;
	e->stack = stack;
	e->ts = ts;
	e->plen = plen;
}

static inline void enc_stacks(struct enc *e, uint32_t first, uint32_t n,
			      const uint64_t *const *frames,
			      const uint32_t *nframes)
{
	size_t body = enc_begin(e, "StackBlock", 5);
	e_u32(&e->b, first);
	e_u32(&e->b, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t psz = e->psz ? e->psz : 8;
		e_u32(&e->b, nframes[i] * psz);
		for (uint32_t k = 0; k < nframes[i]; k++) {
			if (psz == 8)
				e_u64(&e->b, frames[i][k]);
			else
				e_u32(&e->b, (uint32_t)frames[i][k]);
		}
	}
	enc_end(e, body);
}

static inline void enc_seqpoint(struct enc *e, uint64_t ts, uint64_t tid,
				uint32_t seq)
{
	size_t body = enc_begin(e, "SPBlock", 4);
	e_u64(&e->b, ts);
	if (e->v6) {
		e_u32(&e->b, 0); /* flags */
		e_u32(&e->b, 1);
		e_var(&e->b, tid);
		e_var(&e->b, seq);
	} else {
		e_u32(&e->b, 1);
		e_u64(&e->b, tid);
		e_u32(&e->b, seq);
	}
	enc_end(e, body);
}

#endif
