/* SPDX-License-Identifier: MIT */
/*
 * buf.h - growable byte buffers with a hard cap.
 *
 * Every buffer whose size comes from input is given a cap named for its use
 * (RTD_CAP_* below, or a module's own). Growing past the cap fails with
 * -RTD_E_CAP and leaves the buffer as it was; nothing is truncated silently.
 */
#ifndef RTD_COMMON_BUF_H
#define RTD_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

/* Caps shared by several modules. */
#define RTD_CAP_STRING (1u << 20)       /* one decoded string */
#define RTD_CAP_LINE (1u << 20)         /* one line of text output */
#define RTD_CAP_BLOCK (64u << 20)       /* one block/record of a stream */

typedef struct rtd_buf {
	uint8_t *data; /* NUL-terminated after any append when len < cap */
	size_t len;
	size_t cap;    /* allocated bytes */
	size_t max;    /* hard cap on len */
} rtd_buf;

/*
 * rtd_grow - room for at least @need (> 0) elements of @size bytes in @arr
 * (NULL or from malloc), whose capacity is *@cap: the capacity doubles, from
 * @first when it is 0, until @need fits. Returns the array (perhaps moved;
 * *@cap updated), or NULL with @arr and *@cap as they were when memory
 * runs out or the byte count would overflow. The caller keeps its own
 * named cap on @need.
 */
void *rtd_grow(void *arr, size_t *cap, size_t need, size_t size,
	       size_t first);

/*
 * rtd_alloc_touched - @n bytes of zeros, every page of them written now, or
 * NULL: a bounded buffer that is filled at random depths (a queue) is
 * then in RSS whole from the start, not page by page as its use first
 * reaches them, minutes apart. (malloc then memset of zeros is turned
 * into calloc by the compiler, which writes nothing to fresh pages.)
 */
void *rtd_alloc_touched(size_t n);

/* A buffer needs no allocation until first use; max 0 means SIZE_MAX/2. */
void rtd_buf_init(rtd_buf *b, size_t max);
void rtd_buf_free(rtd_buf *b);
/* Keep the allocation, drop the contents. */
static inline void rtd_buf_reset(rtd_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}
/* Make room for n more bytes (plus a NUL). Returns 0, -RTD_E_CAP, -ENOMEM. */
int rtd_buf_reserve(rtd_buf *b, size_t n);
int rtd_buf_append(rtd_buf *b, const void *p, size_t n);
int rtd_buf_putc(rtd_buf *b, char c);
int rtd_buf_puts(rtd_buf *b, const char *s);
int rtd_buf_printf(rtd_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rtd_buf_vprintf(rtd_buf *b, const char *fmt, va_list ap);
/* The contents as a C string ("" for an empty, unallocated buffer). */
const char *rtd_buf_cstr(const rtd_buf *b);

/*
 * rtd_utf16le_to_utf8 - append UTF-16LE text as UTF-8
 * @src: the UTF-16LE bytes (need not be aligned)
 * @nbytes: their count; an odd trailing byte is an error
 * @out: appended to
 *
 * Unpaired surrogates become U+FFFD, so every input yields valid UTF-8.
 * Stops at a NUL code unit when @stop_at_nul is set.
 * Returns: 0, -RTD_E_UTF16 for an odd byte count, -RTD_E_CAP or -ENOMEM.
 */
int rtd_utf16le_to_utf8(const uint8_t *src, size_t nbytes, int stop_at_nul,
			rtd_buf *out);
/* The bytes @n UTF-16LE code units at @src take as UTF-8, converted as
 * rtd_utf16le_to_utf8() does (no NUL counted, none stops it). */
size_t rtd_utf16le_utf8_len(const uint8_t *src, size_t n);
/* Writes them, exactly rtd_utf16le_utf8_len() bytes (no NUL), to @dst:
 * memory the caller sized, a string lent where it is made. */
void rtd_utf16le_utf8_put(char *dst, const uint8_t *src, size_t n);

/* The code units of the NUL-terminated UTF-16LE string at @r (the NUL
 * not counted, not consumed): 0, or the reader's error (-RTD_E_TRUNCATED
 * when no NUL comes before the end, and @r failed). */
struct rtd_rd;
int rtd_rd_utf16z_units(struct rtd_rd *r, size_t *n);
/* That string read into @out (reset first) as UTF-8, and @r past its
 * NUL: 0, or the reader's or rtd_utf16le_to_utf8()'s error. */
int rtd_rd_utf16z(struct rtd_rd *r, rtd_buf *out);

/* @cp as UTF-8 at @o (room for 4 bytes): the bytes written (1-4). A
 * surrogate (a UTF-16 unit on its own, as FastSerialization writes
 * them) takes its 3 bytes as any code point below U+10000. */
static inline size_t rtd_utf8_put(uint8_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (uint8_t)(0xc0 | cp >> 6);
		o[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (uint8_t)(0xe0 | cp >> 12);
		o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (uint8_t)(0xf0 | cp >> 18);
	o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* One code point of the NUL-terminated UTF-8 text at *@s, *@s moved past
 * it. U+FFFD for a byte that starts no sequence (moved past it), a
 * sequence cut short (moved to the byte that cut it: a NUL ends it too),
 * a surrogate, or a value past U+10FFFF. */
uint32_t rtd_utf8_next(const unsigned char **s);

/* Append a JSON string literal (with quotes) for UTF-8 text s[0..n). */
int rtd_buf_json_str(rtd_buf *b, const char *s, size_t n);

/* @n bytes as 2 * @n lowercase hex digits and a NUL into @out (which
 * holds 2 * @n + 1): a build id as perf's cache and debug directories
 * name it. */
static inline void rtd_hex_lower(char *out, const uint8_t *p, size_t n)
{
	static const char digit[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digit[p[i] >> 4];
		out[2 * i + 1] = digit[p[i] & 15];
	}
	out[2 * n] = 0;
}

#endif /* RTD_COMMON_BUF_H */
