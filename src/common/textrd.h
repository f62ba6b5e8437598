/* SPDX-License-Identifier: MIT */
/*
 * textrd.h - the field readers of the line-based text formats read over
 * untrusted bytes (/proc/PID/maps, /proc/kallsyms, perf maps): a buffer and
 * a length, no NUL needed; each field checked, none read past the end.
 */
#ifndef RTD_COMMON_TEXTRD_H
#define RTD_COMMON_TEXTRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct line_rd {
	const char *p, *end;
};

/* Next line (without its '\n'); false at the end. */
static inline bool next_line(struct line_rd *r, const char **ln, size_t *n)
{
	if (r->p >= r->end)
		return false;
	const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	const char *e = nl ? nl : r->end;
	*ln = r->p;
	*n = (size_t)(e - r->p);
	r->p = nl ? nl + 1 : r->end;
	return true;
}

/* Each non-empty line of @buf to @fn (its text without the '\n', and
 * its 1-based number, counted on from *@lineno); stops at @fn's first
 * non-zero return, which it returns (*@lineno then that line's). */
static inline int each_line(const char *buf, size_t len, size_t *lineno,
			    int (*fn)(const char *s, size_t n, size_t line, void *ctx),
			    void *ctx)
{
	struct line_rd r = {buf, buf + len};
	const char *s;
	size_t n;
	while (next_line(&r, &s, &n)) {
		++*lineno;
		int rc = n ? fn(s, n, *lineno, ctx) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number of at most 16 digits ("0x" allowed); advances *i. */
static inline bool hex_field(const char *s, size_t n, size_t *i, uint64_t *out)
{
	size_t k = *i;
	if (k + 1 < n && s[k] == '0' && (s[k + 1] == 'x' || s[k + 1] == 'X'))
		k += 2;
	uint64_t v = 0;
	size_t digits = 0;
	int h;
	while (k < n && (h = hexval(s[k])) >= 0) {
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)h;
		k++;
	}
	if (!digits)
		return false;
	*out = v;
	*i = k;
	return true;
}

static inline bool dec_field(const char *s, size_t n, size_t *i, uint64_t *out)
{
	size_t k = *i, digits = 0;
	uint64_t v = 0;
	while (k < n && s[k] >= '0' && s[k] <= '9') {
		unsigned d = (unsigned)(s[k] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		k++;
		digits++;
	}
	if (!digits)
		return false;
	*out = v;
	*i = k;
	return true;
}

static inline bool skip_char(const char *s, size_t n, size_t *i, char c)
{
	if (*i < n && s[*i] == c) {
		(*i)++;
		return true;
	}
	return false;
}

static inline void skip_spaces(const char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
}

#endif /* RTD_COMMON_TEXTRD_H */
