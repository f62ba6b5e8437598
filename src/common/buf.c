/* SPDX-License-Identifier: MIT */
#include "buf.h"
#include "rd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rtd_buf_init(rtd_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : SIZE_MAX / 2;
}

void rtd_buf_free(rtd_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int rtd_buf_reserve(rtd_buf *b, size_t n)
{
	if (n > b->max - b->len)
		return -RTD_E_CAP;
	size_t need = b->len + n + 1; /* room for the NUL */
	if (need <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > b->max + 1)
		ncap = b->max + 1;
	uint8_t *nd = realloc(b->data, ncap);
	if (!nd)
		return -ENOMEM;
	b->data = nd;
	b->cap = ncap;
	return 0;
}

int rtd_buf_append(rtd_buf *b, const void *p, size_t n)
{
	int err = rtd_buf_reserve(b, n);
	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
	return 0;
}

int rtd_buf_putc(rtd_buf *b, char c)
{
	return rtd_buf_append(b, &c, 1);
}

int rtd_buf_puts(rtd_buf *b, const char *s)
{
	return rtd_buf_append(b, s, strlen(s));
}

int rtd_buf_vprintf(rtd_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	char small[256];
	int n = vsnprintf(small, sizeof(small), fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -RTD_E_INVAL;
	if ((size_t)n < sizeof(small))
		return rtd_buf_append(b, small, (size_t)n);
	int err = rtd_buf_reserve(b, (size_t)n);
	if (err)
		return err;
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int rtd_buf_printf(rtd_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int err = rtd_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

const char *rtd_buf_cstr(const rtd_buf *b)
{
	return b->data ? (const char *)b->data : "";
}

uint32_t rtd_utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t c = p[0];
	int n;
	if (c < 0x80) {
		*s = p + 1;
		return c;
	}
	if ((c & 0xE0) == 0xC0)
		n = 1, c &= 0x1F;
	else if ((c & 0xF0) == 0xE0)
		n = 2, c &= 0x0F;
	else if ((c & 0xF8) == 0xF0)
		n = 3, c &= 0x07;
	else {
		*s = p + 1;
		return 0xFFFD;
	}
	for (int i = 1; i <= n; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			*s = p + i;
			return 0xFFFD;
		}
		c = c << 6 | (p[i] & 0x3F);
	}
	*s = p + n + 1;
	return c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ? 0xFFFD : c;
}

static int put_utf8(rtd_buf *out, uint32_t cp)
{
	uint8_t s[4];
	return rtd_buf_append(out, s, rtd_utf8_put(s, cp));
}

/* The one code point at @src[2 * @i] (a pair's two units: *@i moves past
 * the first): unpaired surrogates as U+FFFD */
static inline uint32_t utf16_at(const uint8_t *src, size_t n, size_t *i)
{
	uint32_t u = (uint32_t)src[2 * *i] | (uint32_t)src[2 * *i + 1] << 8;
	if (u < 0xd800 || u > 0xdfff)
		return u;
	if (u <= 0xdbff && *i + 1 < n) {
		uint32_t lo = (uint32_t)src[2 * *i + 2] | (uint32_t)src[2 * *i + 3] << 8;
		if (lo >= 0xdc00 && lo <= 0xdfff) {
			++*i;
			return 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
	}
	return 0xfffd;
}

size_t rtd_utf16le_utf8_len(const uint8_t *src, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (src[2 * i + 1] == 0 && src[2 * i] < 0x80) {
			len++; /* ASCII, the common case in every trace */
			continue;
		}
		uint32_t cp = utf16_at(src, n, &i);
		len += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	}
	return len;
}

void rtd_utf16le_utf8_put(char *dst, const uint8_t *src, size_t n)
{
	uint8_t *o = (uint8_t *)dst;
	for (size_t i = 0; i < n; i++) {
		if (src[2 * i + 1] == 0 && src[2 * i] < 0x80) {
			*o++ = src[2 * i];
			continue;
		}
		o += rtd_utf8_put(o, utf16_at(src, n, &i));
	}
}

int rtd_utf16le_to_utf8(const uint8_t *src, size_t nbytes, int stop_at_nul,
			rtd_buf *out)
{
	if (nbytes % 2)
		return -RTD_E_UTF16;
	size_t n = nbytes / 2;
	for (size_t i = 0; stop_at_nul && i < n; i++)
		if (src[2 * i] == 0 && src[2 * i + 1] == 0)
			n = i;
	/* measured, then written in one go: not a call per character */
	size_t len = rtd_utf16le_utf8_len(src, n);
	if (rtd_buf_reserve(out, len) == 0) {
		rtd_utf16le_utf8_put((char *)out->data + out->len, src, n);
		out->len += len;
		out->data[out->len] = 0;
		return 0;
	}
	/* past the buffer's cap (or memory): what fits goes in, as ever */
	int err = 0;
	for (size_t i = 0; i < n && !err; i++)
		err = put_utf8(out, utf16_at(src, n, &i));
	return err;
}

int rtd_buf_json_str(rtd_buf *b, const char *s, size_t n)
{
	int err = rtd_buf_putc(b, '"');
	for (size_t i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': err = rtd_buf_puts(b, "\\\""); break;
		case '\\': err = rtd_buf_puts(b, "\\\\"); break;
		case '\n': err = rtd_buf_puts(b, "\\n"); break;
		case '\r': err = rtd_buf_puts(b, "\\r"); break;
		case '\t': err = rtd_buf_puts(b, "\\t"); break;
		default:
			if (c < 0x20)
				err = rtd_buf_printf(b, "\\u%04x", c);
			else
				err = rtd_buf_putc(b, (char)c);
		}
	}
	return err ? err : rtd_buf_putc(b, '"');
}

void *rtd_grow(void *arr, size_t *cap, size_t need, size_t size,
	       size_t first)
{
	if (need <= *cap)
		return arr;
	size_t nc = *cap ? *cap : first ? first : 1;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return NULL;
		nc *= 2;
	}
	if (size && nc > SIZE_MAX / size)
		return NULL;
	void *n = realloc(arr, nc * size);
	if (!n)
		return NULL;
	*cap = nc;
	return n;
}

void *rtd_alloc_touched(size_t n)
{
	volatile unsigned char *p = calloc(1, n ? n : 1);
	if (!p)
		return NULL;
	long page = sysconf(_SC_PAGESIZE);
	size_t step = page > 0 ? (size_t)page : 4096;
	for (size_t i = 0; i < n; i += step)
		p[i] = 0; /* a write faults the page in; a read of a fresh one does not */
	return (void *)p;
}

int rtd_rd_utf16z_units(rtd_rd *r, size_t *n)
{
	const uint8_t *s = r->p;
	size_t left = rd_left(r);
	size_t i = 0;
	for (;;) {
		if (r->err)
			return r->err;
		if (left - i < 2) {
			rd_fail(r, -RTD_E_TRUNCATED);
			return -RTD_E_TRUNCATED;
		}
		if (s[i] == 0 && s[i + 1] == 0)
			break;
		i += 2;
	}
	*n = i / 2;
	return 0;
}

int rtd_rd_utf16z(rtd_rd *r, rtd_buf *out)
{
	size_t n;
	int err = rtd_rd_utf16z_units(r, &n);
	if (err)
		return err;
	rtd_buf_reset(out);
	err = rtd_utf16le_to_utf8(r->p, 2 * n, 0, out);
	if (err)
		return err;
	rd_skip(r, 2 * n + 2);
	return 0;
}
