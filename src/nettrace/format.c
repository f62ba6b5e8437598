/* SPDX-License-Identifier: MIT */
/*
 * format.c - render an event as one text line or one JSON object.
 *
 * This is `nettrace cat`'s inner loop, so it writes straight into the
 * decoder's output buffer without printf: integers through a two-digit
 * table, UTF-16 strings converted and escaped in one pass, and the payload
 * walked here directly (the same rules as rtd_nettrace_walk(), which the
 * fuzz target and tests/traceevent check against each other).
 * Floats, the rare case, print the shortest text that reads back as the
 * same value of their type, as .NET's round-trip format does.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nettrace/clr_ids.h"
#include "nettrace/nt.h"

/* A writer over an rtd_buf: the free space is kept as two pointers so a
 * piece costs one compare; the buffer's length is brought up to date by
 * wsync() (and before it grows). */
struct w {
	rtd_buf *b;
	char *p, *end; /* next byte, last usable byte (one kept for a NUL) */
	int err;
};

static inline void winit(struct w *w, rtd_buf *b)
{
	w->b = b;
	w->err = 0;
	w->p = b->data ? (char *)b->data + b->len : NULL;
	w->end = b->data ? (char *)b->data + b->cap - 1 : NULL;
}

static inline void wsync(struct w *w)
{
	if (w->p)
		w->b->len = (size_t)(w->p - (char *)w->b->data);
}

static inline size_t wlen(struct w *w)
{
	wsync(w);
	return w->b->len;
}

static char *room_slow(struct w *w, size_t n)
{
	wsync(w);
	int e = rtd_buf_reserve(w->b, n);
	if (e) {
		if (!w->err)
			w->err = e;
		return NULL;
	}
	winit(w, w->b);
	return w->p;
}

/* Room for n more bytes at the end of the buffer, or NULL (w->err set). */
static inline char *room(struct w *w, size_t n)
{
	if (!w->p || (size_t)(w->end - w->p) < n)
		return room_slow(w, n);
	return w->p;
}

static inline void put(struct w *w, const char *s, size_t n)
{
	char *d = room(w, n);
	if (!d)
		return;
	memcpy(d, s, n);
	w->p += n;
}

#define PUTS(w, lit) put((w), (lit), sizeof(lit) - 1)

static inline void putc1(struct w *w, char c)
{
	char *d = room(w, 1);
	if (!d)
		return;
	*d = c;
	w->p++;
}

static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"68697071727374757677787980818283848586878889909192939495969798"
	"99";

/* Decimal digits of v into the end of tmp[24]; returns the first one. */
static inline char *u64_digits(uint64_t v, char *end)
{
	char *p = end;
	while (v >= 100000000) {
		/* eight digits at a time in 32 bits (timestamps have 14) */
		uint32_t lo = (uint32_t)(v % 100000000);
		v /= 100000000;
		uint32_t a = lo / 10000, b = lo % 10000;
		p -= 8;
		memcpy(p, digits2 + 2 * (a / 100), 2);
		memcpy(p + 2, digits2 + 2 * (a % 100), 2);
		memcpy(p + 4, digits2 + 2 * (b / 100), 2);
		memcpy(p + 6, digits2 + 2 * (b % 100), 2);
	}
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, digits2 + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digits2 + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

static inline void put_u64(struct w *w, uint64_t v)
{
	char tmp[24];
	char *p = u64_digits(v, tmp + sizeof(tmp));
	put(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* Writers into space already reserved with room(): no checks. */
#define RAW(d, lit) ((void)memcpy((d), (lit), sizeof(lit) - 1), \
		     (d) += sizeof(lit) - 1)

/* How many decimal digits v has (1-20): from its bit length (1233/4096
 * is just above log10(2)), then one compare. */
static inline size_t u64_len(uint64_t v)
{
	static const uint64_t p10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
		100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull};
	size_t t = ((64 - (size_t)__builtin_clzll(v | 1)) * 1233) >> 12;
	return t ? t + (v >= p10[t]) : 1;
}

/* The digits written in place, not into a scratch buffer and then copied
 * (a call of memcpy of a variable length for each number: 5% of JSON of
 * a real trace, whose IL-to-native maps are arrays of numbers). */
static inline char *raw_u64(char *d, uint64_t v)
{
	size_t n = u64_len(v);
	u64_digits(v, d + n);
	return d + n;
}

static const char hexpairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "0x" and the hex digits of v, no leading zeros; at most 18 bytes.
 * Written in place from the last digit back, their count known from the
 * highest set bit (a scratch copy cost a variable-length memcpy for each
 * of a rundown's five addresses). */
static inline char *raw_hex(char *d, uint64_t v)
{
	size_t n = (64 - (size_t)__builtin_clzll(v | 1) + 3) / 4;
	*d++ = '0';
	*d++ = 'x';
	char *p = d + n;
	while (v >= 256) {
		p -= 2;
		memcpy(p, hexpairs + 2 * (v & 255), 2);
		v >>= 8;
	}
	if (v >= 16) {
		p -= 2;
		memcpy(p, hexpairs + 2 * v, 2);
	} else {
		*--p = "0123456789abcdef"[v];
	}
	return d + n;
}

static void put_hex(struct w *w, uint64_t v)
{
	char *d = room(w, 18);
	if (d)
		w->p = raw_hex(d, v);
}

static void put_hexbytes(struct w *w, const uint8_t *p, size_t n)
{
	char *d = room(w, 2 * n);
	if (!d)
		return;
	for (size_t i = 0; i < n; i++) {
		d[2 * i] = "0123456789abcdef"[p[i] >> 4];
		d[2 * i + 1] = "0123456789abcdef"[p[i] & 15];
	}
	w->p += 2 * n;
}

/*
 * The shortest decimal text that reads back as the same value of its type
 * (float or double), as .NET's "R" format and JSON writers give it; NaN and
 * the infinities as .NET's JSON names them, in quotes for JSON.
 */
static void put_float(struct w *w, double v, bool is_f32, bool json)
{
	if (isnan(v)) {
		if (json)
			PUTS(w, "\"NaN\"");
		else
			PUTS(w, "NaN");
		return;
	}
	if (isinf(v)) {
		if (json)
			put(w, v < 0 ? "\"-Infinity\"" : "\"Infinity\"",
			    v < 0 ? 11 : 10);
		else
			put(w, v < 0 ? "-Infinity" : "Infinity", v < 0 ? 9 : 8);
		return;
	}
	char tmp[40];
	int n = 0;
	for (int prec = is_f32 ? 6 : 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		double back = strtod(tmp, NULL);
		if (is_f32 ? (float)back == (float)v : back == v)
			break;
	}
	if (n > 0)
		put(w, tmp, (size_t)n);
}

static const char json_esc[32][7] = {
	"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005",
	"\\u0006", "\\u0007", "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r",
	"\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013",
	"\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
	"\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
};

/* UTF-8 text s[0..n) escaped for a JSON string body (no quotes). */
static void put_esc8(struct w *w, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' &&
		       s[j] != '\\')
			j++;
		put(w, s + i, j - i);
		if (j == n)
			break;
		unsigned char c = (unsigned char)s[j];
		if (c == '"')
			PUTS(w, "\\\"");
		else if (c == '\\')
			PUTS(w, "\\\\");
		else
			put(w, json_esc[c], strlen(json_esc[c]));
		i = j + 1;
	}
}

static inline void put_str8(struct w *w, const char *s, size_t n)
{
	putc1(w, '"');
	put_esc8(w, s, n);
	putc1(w, '"');
}

/*
 * How many of the 8 UTF-16LE code units at p are plain ASCII that JSON
 * keeps as they are (U+0020-U+007E but '"' and '\\'), from the first;
 * those bytes are stored at d (8 of them, whatever the count). The names
 * of methods and types, most of a rundown's bytes, are all plain.
 */
static inline size_t plain8(const uint8_t *p, char *d)
{
#if defined(__SSE2__)
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	/* units above 0xff saturate to 0xff, above 0x7fff to 0: both
	 * fail the range test below */
	__m128i b = _mm_packus_epi16(v, v);
	__m128i bad = _mm_or_si128(
		_mm_cmpgt_epi8(_mm_set1_epi8(0x20), b), /* < 0x20 or >= 0x80 */
		_mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')),
			     _mm_cmpeq_epi8(b, _mm_set1_epi8('\\'))));
	_mm_storel_epi64((__m128i *)(void *)d, b);
	unsigned m = (unsigned)_mm_movemask_epi8(bad) & 0xffu;
	return m ? (size_t)__builtin_ctz(m) : 8;
#else
	size_t n = 0;
	for (; n < 8; n++) {
		uint32_t u = (uint32_t)p[2 * n] | (uint32_t)p[2 * n + 1] << 8;
		if (u < 0x20 || u >= 0x80 || u == '"' || u == '\\')
			break;
		d[n] = (char)u;
	}
	return n;
#endif
}

#if defined(__SSE2__)
/* As plain8, over 16 units (16 bytes stored at d). */
static inline size_t plain16(const uint8_t *p, char *d)
{
	__m128i lo = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i b = _mm_packus_epi16(lo, hi);
	__m128i bad = _mm_or_si128(
		_mm_cmpgt_epi8(_mm_set1_epi8(0x20), b),
		_mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')),
			     _mm_cmpeq_epi8(b, _mm_set1_epi8('\\'))));
	_mm_storeu_si128((__m128i *)(void *)d, b);
	unsigned m = (unsigned)_mm_movemask_epi8(bad);
	return m ? (size_t)__builtin_ctz(m) : 16;
}
#endif

/*
 * UTF-16LE code units p[0..2*nunits) as a quoted JSON string: converted
 * and escaped in one pass, 16 (then 8) plain ASCII units at a time.
 * Unpaired surrogates become U+FFFD.
 */
static void put_str16(struct w *w, const uint8_t *p, size_t nunits)
{
	char *d = room(w, nunits * 6 + 2);
	if (!d)
		return;
	*d++ = '"';
	for (size_t i = 0; i < nunits; i++) {
#if defined(__SSE2__)
		while (nunits - i >= 16) {
			/* room as below: 16 bytes stored, 6 reserved a unit */
			size_t n = plain16(p + 2 * i, d);
			d += n;
			i += n;
			if (n < 16)
				break;
			size_t rest = nunits - i;
			if (rest && rest < 16) {
				/* the tail: the last 16 units again, the
				 * first 16 - rest of them just stored 1:1 as
				 * the same bytes */
				size_t back = 16 - rest;
				if (plain16(p + 2 * (nunits - 16), d - back) ==
				    16) {
					d += rest;
					i = nunits;
				}
				break;
			}
		}
		if (i == nunits)
			break;
#endif
		if (nunits - i >= 8) {
			/* room: 8 bytes are stored, n <= 8 kept, and each
			 * unit had 6 bytes reserved */
			size_t n = plain8(p + 2 * i, d);
			d += n;
			i += n;
			if (n == 8) {
				i--;
				continue;
			}
		}
		uint32_t u = (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
		if (u < 0x80) {
			if (u >= 0x20 && u != '"' && u != '\\') {
				*d++ = (char)u;
			} else if (u == '"' || u == '\\') {
				*d++ = '\\';
				*d++ = (char)u;
			} else {
				size_t l = strlen(json_esc[u]);
				memcpy(d, json_esc[u], l);
				d += l;
			}
			continue;
		}
		if (u >= 0xd800 && u <= 0xdbff && i + 1 < nunits) {
			uint32_t lo = (uint32_t)p[2 * i + 2] |
				      (uint32_t)p[2 * i + 3] << 8;
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				uint32_t c = 0x10000 + ((u - 0xd800) << 10) +
					     (lo - 0xdc00);
				i++;
				*d++ = (char)(0xf0 | c >> 18);
				*d++ = (char)(0x80 | ((c >> 12) & 0x3f));
				*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
				*d++ = (char)(0x80 | (c & 0x3f));
				continue;
			}
		}
		if (u >= 0xd800 && u <= 0xdfff)
			u = 0xfffd;
		if (u < 0x800) {
			*d++ = (char)(0xc0 | u >> 6);
			*d++ = (char)(0x80 | (u & 0x3f));
		} else {
			*d++ = (char)(0xe0 | u >> 12);
			*d++ = (char)(0x80 | ((u >> 6) & 0x3f));
			*d++ = (char)(0x80 | (u & 0x3f));
		}
	}
	*d++ = '"';
	w->p = d;
}

static void put_guid(struct w *w, const uint8_t *g, bool quote)
{
	char *d = room(w, 38);
	if (!d)
		return;
	static const char hx[] = "0123456789abcdef";
	/* Data1..Data3 little-endian, then 8 bytes in order */
	static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6,
				      8, 9, 10, 11, 12, 13, 14, 15};
	if (quote)
		*d++ = '"';
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*d++ = '-';
		*d++ = hx[g[order[i]] >> 4];
		*d++ = hx[g[order[i]] & 15];
	}
	if (quote)
		*d++ = '"';
	w->p = d;
}

/* FILETIME (100 ns since 1601) as ISO 8601 UTC, quoted. */
static void put_filetime(struct w *w, uint64_t ft)
{
	const uint64_t epoch_diff = 116444736000000000ULL;
	struct tm tm;
	time_t secs;
	if (ft < epoch_diff || ft >= 0x7fffffffffffffffULL ||
	    (secs = (time_t)((ft - epoch_diff) / 10000000ULL),
	     !gmtime_r(&secs, &tm))) {
		put_u64(w, ft);
		return;
	}
	char tmp[48];
	int n = snprintf(tmp, sizeof(tmp),
			 "\"%04d-%02d-%02dT%02d:%02d:%02d.%07uZ\"",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned)((ft - epoch_diff) % 10000000ULL));
	if (n > 0)
		put(w, tmp, (size_t)n);
}

/* ---- the payload --------------------------------------------------- */

struct fctx {
	struct w *w;
	rtd_nettrace *dec;
	const uint8_t *payload;
	size_t payload_len;
	size_t psz;
	bool json;
	bool lenient;   /* built-in schema: an older version ends early */
	size_t budget;  /* array elements left */
	struct w *names; /* JSON: "Field":"Name" of mapped values */
	int nnames;
	size_t located_end; /* V6 RelLoc/DataLoc data reaches this offset */
	const struct nt_meta *cm; /* its cached keys, or NULL */
	long key_ix;              /* top-level field being written, or -1 */
};

/* JSON "name": of a built-in schema's field (c->lenient: its names are
 * static strings, so the address names the text for the process's life),
 * remembered when it needs no escape. */
static void put_key_memo(struct fctx *c, const char *name)
{
	struct nt_key_memo *e =
		&c->dec->key_memo[((uintptr_t)name >> 3) & 63];
	if (e->name != name) {
		size_t n = strlen(name);
		bool plain = n + 3 <= sizeof(e->txt);
		for (size_t i = 0; plain && i < n; i++)
			plain = (unsigned char)name[i] >= 0x20 &&
				name[i] != '"' && name[i] != '\\';
		if (!plain) {
			put_str8(c->w, name, n);
			putc1(c->w, ':');
			return;
		}
		e->name = name;
		e->len = (int)n + 3;
		e->txt[0] = '"';
		memcpy(e->txt + 1, name, n);
		e->txt[n + 1] = '"';
		e->txt[n + 2] = ':';
	}
	put(c->w, e->txt, (size_t)e->len);
}

/* A field's key: JSON "name": or text name= (a separator before it). */
static inline void put_key(struct fctx *c, const char *name, bool first,
			   unsigned depth)
{
	struct w *w = c->w;
	if (c->cm && depth == 0 && c->key_ix >= 0 && name) {
		/* the type's own keys, rendered once */
		size_t nf = c->cm->pub.nfields, k = (size_t)c->key_ix;
		const uint32_t *o = c->cm->fmt_keys + (c->json ? 0 : nf + 1);
		if (c->json && !first)
			putc1(w, ',');
		put(w, c->cm->fmt_cache + o[k], o[k + 1] - o[k]);
		return;
	}
	if (c->json) {
		if (!first)
			putc1(w, ',');
		if (name && c->lenient)
			put_key_memo(c, name);
		else if (name) {
			put_str8(w, name, strlen(name));
			putc1(w, ':');
		}
		return;
	}
	if (!first)
		put(w, depth == 0 ? " " : ", ", depth == 0 ? 1 : 2);
	if (name) {
		if (name[0])
			put(w, name, strlen(name));
		else
			putc1(w, '_');
		putc1(w, '=');
	}
}

/* The key, then room for `extra` bytes of value: one reservation for
 * both when the type's keys are cached. Returns where the value goes. */
static inline char *key_room(struct fctx *c, const char *name, bool first,
			     unsigned depth, size_t extra)
{
	if (c->cm && depth == 0 && c->key_ix >= 0 && name) {
		size_t nf = c->cm->pub.nfields, k = (size_t)c->key_ix;
		const uint32_t *o = c->cm->fmt_keys + (c->json ? 0 : nf + 1);
		size_t kl = o[k + 1] - o[k];
		char *d = room(c->w, kl + 1 + extra);
		if (!d)
			return NULL;
		if (c->json && !first)
			*d++ = ',';
		memcpy(d, c->cm->fmt_cache + o[k], kl);
		return d + kl;
	}
	put_key(c, name, first, depth);
	return room(c->w, extra);
}

/* "Name": of a top-level field under "names", from the type's cache when
 * it has one. */
static void name_key(struct fctx *c, const struct rtd_nettrace_field *f)
{
	if (c->cm && c->key_ix >= 0) {
		size_t k = (size_t)c->key_ix;
		const uint32_t *o = c->cm->fmt_keys;
		put(c->names, c->cm->fmt_cache + o[k], o[k + 1] - o[k]);
	} else {
		put_str8(c->names, f->name, strlen(f->name));
		putc1(c->names, ':');
	}
}

/* JSON: a mapped value's name under "names", beside its number (top-level
 * fields only: a name inside an array or object would have no key). */
static void add_name(struct fctx *c, const struct rtd_nettrace_field *f,
		     const char *name, unsigned depth, bool is_elem)
{
	if (!name || depth != 0 || is_elem || !c->names)
		return;
	if (c->nnames++)
		putc1(c->names, ',');
	name_key(c, f);
	put_str8(c->names, name, strlen(name));
}

/*
 * add_name() of f's value v, its text remembered per (map, value) when it
 * needs no escape: a rundown's MethodFlags take a handful of values, each
 * named anew (and escaped) per event before.
 */
static void add_mapped(struct fctx *c, const struct rtd_nettrace_field *f,
		       uint64_t v, unsigned depth, bool is_elem)
{
	if (depth != 0 || is_elem || !c->names)
		return;
	uintptr_t hk = ((uintptr_t)f->map >> 4) ^ (uintptr_t)(v * 0x9e3779b97f4a7c15ull >> 32);
	struct nt_name_memo *e = &c->dec->name_memo[hk & 63];
	if (e->map != f->map || e->value != v) {
		char nb[256];
		const char *name = rtd_nettrace_map_name(f->map, v, nb,
							 sizeof(nb));
		size_t n = name ? strlen(name) : 0;
		bool plain = n + 2 <= sizeof(e->txt);
		for (size_t i = 0; plain && i < n; i++)
			plain = (unsigned char)name[i] >= 0x20 &&
				name[i] != '"' && name[i] != '\\';
		if (name && !plain) {
			add_name(c, f, name, depth, is_elem);
			return;
		}
		e->map = f->map;
		e->value = v;
		e->len = name ? (int)n + 2 : -1;
		if (name) {
			e->txt[0] = '"';
			memcpy(e->txt + 1, name, n);
			e->txt[n + 1] = '"';
		}
	}
	if (e->len < 0)
		return;
	if (c->nnames++)
		putc1(c->names, ',');
	name_key(c, f);
	put(c->names, e->txt, (size_t)e->len);
}


static void put_mapped(struct fctx *c, const struct rtd_nettrace_field *f,
		       uint64_t v, unsigned depth, bool is_elem)
{
	if (c->json) {
		put_u64(c->w, v);
		add_mapped(c, f, v, depth, is_elem);
		return;
	}
	char nb[256];
	const char *name = rtd_nettrace_map_name(f->map, v, nb, sizeof(nb));
	if (!name) {
		put_u64(c->w, v);
		return;
	}
	put(c->w, name, strlen(name));
}

static int fmt_list(struct fctx *c, const struct rtd_nettrace_field *fs,
		    size_t n, rtd_rd *r, unsigned depth, bool top);

static int fmt_one(struct fctx *c, const struct rtd_nettrace_field *f,
		   bool is_elem, rtd_rd *r, unsigned depth, bool first,
		   uint64_t *val, const uint64_t *sib, size_t nsib);

static inline bool is_signed(unsigned type);

/* The loop of int_elems() for one element type (inlined per type). */
static inline __attribute__((always_inline)) int
int_elems_of(struct fctx *c, unsigned type, size_t count, rtd_rd *r)
{
	for (size_t i = 0; i < count; i++) {
		if (c->budget == 0)
			return -RTD_E_CAP;
		c->budget--;
		uint64_t u = 0;
		int64_t v = 0;
		nt_read_number(r, type, c->psz, &u, &v);
		if (!rd_ok(r))
			return r->err;
		char *d = room(c->w, 26);
		if (!d)
			continue;
		if (i) {
			*d++ = ',';
			if (!c->json)
				*d++ = ' ';
		}
		bool neg = v < 0 && is_signed(type);
		if (neg)
			*d++ = '-';
		c->w->p = raw_u64(d, neg ? (uint64_t)0 - (uint64_t)v : u);
	}
	return 0;
}

/*
 * Elements of an array of plain integers (no names mapped), such as an
 * IL-to-native map's offsets: a third of the instructions of cat --json
 * on a real trace went through fmt_one for each. The same budget, reads,
 * separators and digits as fmt_one gives each element; 1 when e is not
 * such an element, or too deep (fmt_one's answer then: the cap).
 */
static int int_elems(struct fctx *c, const struct rtd_nettrace_field *e,
		     size_t count, rtd_rd *r, unsigned depth)
{
	if (e->map || depth > NT_CAP_DEPTH)
		return 1;
	switch (e->type) {
	case RTD_NT_T_U8: return int_elems_of(c, RTD_NT_T_U8, count, r);
	case RTD_NT_T_U16: return int_elems_of(c, RTD_NT_T_U16, count, r);
	case RTD_NT_T_U32: return int_elems_of(c, RTD_NT_T_U32, count, r);
	case RTD_NT_T_U64: return int_elems_of(c, RTD_NT_T_U64, count, r);
	case RTD_NT_T_I8: return int_elems_of(c, RTD_NT_T_I8, count, r);
	case RTD_NT_T_I16: return int_elems_of(c, RTD_NT_T_I16, count, r);
	case RTD_NT_T_I32: return int_elems_of(c, RTD_NT_T_I32, count, r);
	case RTD_NT_T_I64: return int_elems_of(c, RTD_NT_T_I64, count, r);
	default: return 1;
	}
}

static int fmt_elems(struct fctx *c, const struct rtd_nettrace_field *f,
		     size_t count, rtd_rd *r, unsigned depth, bool first)
{
	const struct rtd_nettrace_field *e = &f->fields[0];
	put_key(c, f->name, first, depth);
	/* an array of UTF-16 chars is text, as TraceEvent shows it */
	if (e->type == RTD_NT_T_CHAR16 && count <= rd_left(r) / 2) {
		const uint8_t *p;
		rd_bytes(r, count * 2, &p);
		put_str16(c->w, p, count);
		return 0;
	}
	putc1(c->w, c->json ? '[' : '[');
	int irc = int_elems(c, e, count, r, depth + 1);
	if (irc != 1) {
		if (irc)
			return irc == -RTD_E_TRUNCATED ? -RTD_E_NT_PAYLOAD : irc;
		putc1(c->w, ']');
		return 0;
	}
	for (size_t i = 0; i < count; i++) {
		if (c->budget == 0)
			return -RTD_E_CAP;
		c->budget--;
		int rc = fmt_one(c, e, true, r, depth + 1, i == 0, NULL, NULL, 0);
		if (rc)
			return rc == -RTD_E_TRUNCATED ? -RTD_E_NT_PAYLOAD : rc;
	}
	putc1(c->w, ']');
	return 0;
}

/* Where one value goes: its key (NULL for an array element), whether it
 * is the first of its list (no separator), how deep it is. */
struct slot {
	const char *name;
	unsigned depth;
	bool first;
	bool is_elem;
};

static inline void slot_key(struct fctx *c, const struct slot *s)
{
	put_key(c, s->name, s->first, s->depth);
}

static int fmt_object(struct fctx *c, const struct rtd_nettrace_field *f,
		      const struct slot *s, rtd_rd *r)
{
	slot_key(c, s);
	putc1(c->w, '{');
	int rc = fmt_list(c, f->fields, f->nfields, r, s->depth + 1, false);
	putc1(c->w, '}');
	return rc;
}

static int fmt_array(struct fctx *c, const struct rtd_nettrace_field *f,
		     const struct slot *s, rtd_rd *r, const uint64_t *sib,
		     size_t nsib)
{
	size_t count;
	rtd_rd sub, *er;
	int rc = nt_array(f, r, c->payload, c->payload_len, c->psz, s->depth,
			  sib, nsib, &count, &er, &sub, &c->located_end);
	if (rc)
		return rc;
	return fmt_elems(c, f, count, er, s->depth, s->first);
}

static inline bool is_signed(unsigned type)
{
	return type == RTD_NT_T_I8 || type == RTD_NT_T_I16 ||
	       type == RTD_NT_T_I32 || type == RTD_NT_T_I64 ||
	       type == RTD_NT_T_VARINT;
}

/* An integer: its mapped name (text) or decimal digits. */
static void fmt_int(struct fctx *c, const struct rtd_nettrace_field *f,
		    const struct slot *s, uint64_t u, int64_t i)
{
	if (f->map) {
		slot_key(c, s);
		put_mapped(c, f, u, s->depth, s->is_elem);
		return;
	}
	char *d = key_room(c, s->name, s->first, s->depth, 24);
	if (!d)
		return;
	bool neg = i < 0 && is_signed(f->type);
	if (neg)
		*d++ = '-';
	c->w->p = raw_u64(d, neg ? (uint64_t)0 - (uint64_t)i : u);
}

static void fmt_bool(struct fctx *c, const struct slot *s, uint64_t u)
{
	char *d = key_room(c, s->name, s->first, s->depth, 5);
	if (!d)
		return;
	if (u)
		RAW(d, "true");
	else
		RAW(d, "false");
	c->w->p = d;
}

/* Hex and pointers: 0x digits (a JSON string); a mapped name replaces
 * them in text and goes under "names" in JSON. */
static void fmt_hex(struct fctx *c, const struct rtd_nettrace_field *f,
		    const struct slot *s, uint64_t u)
{
	if (f->map && !c->json) {
		slot_key(c, s);
		put_mapped(c, f, u, s->depth, s->is_elem);
		return;
	}
	char *d = key_room(c, s->name, s->first, s->depth, 20);
	if (!d)
		return;
	if (c->json)
		*d++ = '"';
	d = raw_hex(d, u);
	if (c->json)
		*d++ = '"';
	c->w->p = d;
	if (f->map)
		add_mapped(c, f, u, s->depth, s->is_elem);
}

static int fmt_real(struct fctx *c, const struct slot *s, rtd_rd *r,
		    bool is_f32)
{
	double x = is_f32 ? rd_f32le(r) : rd_f64le(r);
	if (!rd_ok(r))
		return r->err;
	slot_key(c, s);
	put_float(c->w, x, is_f32, c->json);
	return 0;
}

static int fmt_char16(struct fctx *c, const struct slot *s, rtd_rd *r,
		      uint64_t *val)
{
	const uint8_t *p;
	if (!rd_bytes(r, 2, &p))
		return r->err;
	if (val)
		*val = (uint64_t)(p[0] | p[1] << 8);
	slot_key(c, s);
	put_str16(c->w, p, 1);
	return 0;
}

/* A byte: itself when ASCII, else "\x.." (as TraceEvent shows it). */
static int fmt_char8(struct fctx *c, const struct slot *s, rtd_rd *r)
{
	const uint8_t *p;
	if (!rd_bytes(r, 1, &p))
		return r->err;
	slot_key(c, s);
	if (p[0] < 0x80) {
		put_str8(c->w, (const char *)p, 1);
	} else {
		char t[8] = "\"\\\\x00\"";
		t[4] = "0123456789abcdef"[p[0] >> 4];
		t[5] = "0123456789abcdef"[p[0] & 15];
		put(c->w, t, 7);
	}
	return 0;
}

/* n raw bytes in hex: 0x... in text, a string in JSON. */
static void put_blob(struct fctx *c, const struct slot *s, const uint8_t *p,
		     size_t n)
{
	slot_key(c, s);
	put(c->w, c->json ? "\"" : "0x", c->json ? 1 : 2);
	put_hexbytes(c->w, p, n);
	if (c->json)
		putc1(c->w, '"');
}

/* BINARY: as many bytes as the sibling count field says. */
static int fmt_binary(struct fctx *c, const struct rtd_nettrace_field *f,
		      const struct slot *s, rtd_rd *r, const uint64_t *sib,
		      size_t nsib)
{
	uint64_t n = (f->count_field >= 0 && (size_t)f->count_field < nsib)
			     ? sib[f->count_field]
			     : 0;
	if (n > rd_left(r))
		return rd_fail(r, -RTD_E_TRUNCATED);
	const uint8_t *p;
	rd_bytes(r, (size_t)n, &p);
	put_blob(c, s, p, (size_t)n);
	return 0;
}

static int fmt_fixed16(struct fctx *c, const struct rtd_nettrace_field *f,
		       const struct slot *s, rtd_rd *r)
{
	const uint8_t *p;
	if (!rd_bytes(r, 16, &p))
		return r->err;
	if (f->type == RTD_NT_T_GUID) {
		slot_key(c, s);
		put_guid(c->w, p, true);
	} else {
		put_blob(c, s, p, 16); /* DECIMAL */
	}
	return 0;
}

/* Where the first NUL code unit of the UTF-16LE text z[0..left) begins
 * (a byte offset), or an offset k with k + 1 >= left when there is none.
 * 8 units at a time: the scan was 8% of cat --json on a rundown. */
static inline size_t utf16z_len(const uint8_t *z, size_t left)
{
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i zero = _mm_setzero_si128();
	for (; left - k >= 16; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(z + k));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(v, zero));
		if (m)
			return k + (size_t)__builtin_ctz(m);
	}
#endif
	while (k + 1 < left && (z[k] | z[k + 1]))
		k += 2;
	return k;
}

/* A NUL-terminated UTF-16 string; the key only once it is whole. */
static int fmt_utf16z(struct fctx *c, const struct slot *s, rtd_rd *r)
{
	const uint8_t *z = r->p;
	size_t left = rd_left(r);
	size_t k = utf16z_len(z, left);
	if (k + 1 >= left)
		return rd_fail(r, -RTD_E_TRUNCATED);
	rd_skip(r, k + 2);
	slot_key(c, s);
	put_str16(c->w, z, k / 2);
	return 0;
}

static int fmt_utf8z(struct fctx *c, const struct slot *s, rtd_rd *r)
{
	const uint8_t *z = memchr(r->p, 0, rd_left(r));
	if (!z)
		return rd_fail(r, -RTD_E_TRUNCATED);
	size_t n = (size_t)(z - r->p);
	const char *str = (const char *)r->p;
	rd_skip(r, n + 1);
	slot_key(c, s);
	put_str8(c->w, str, n);
	return 0;
}

/*
 * One field (or array element, is_elem: no key) at r: its key and value.
 * *val gets an integer's value for the sibling count fields that follow.
 * A value is read whole before anything is written, so a truncated one
 * writes nothing.
 */
static int fmt_one(struct fctx *c, const struct rtd_nettrace_field *f,
		   bool is_elem, rtd_rd *r, unsigned depth, bool first,
		   uint64_t *val, const uint64_t *sib, size_t nsib)
{
	if (depth > NT_CAP_DEPTH)
		return -RTD_E_CAP;
	const struct slot s = {is_elem ? NULL : f->name, depth, first, is_elem};
	switch (f->type) {
	case RTD_NT_T_OBJECT:
		return fmt_object(c, f, &s, r);
	case RTD_NT_T_ARRAY: case RTD_NT_T_FIXED_ARRAY: case RTD_NT_T_COUNTED:
	case RTD_NT_T_RELLOC: case RTD_NT_T_DATALOC:
		return fmt_array(c, f, &s, r, sib, nsib);
	case RTD_NT_T_F32: case RTD_NT_T_F64:
		return fmt_real(c, &s, r, f->type == RTD_NT_T_F32);
	case RTD_NT_T_CHAR16:
		return fmt_char16(c, &s, r, val);
	case RTD_NT_T_CHAR8:
		return fmt_char8(c, &s, r);
	case RTD_NT_T_DECIMAL: case RTD_NT_T_GUID:
		return fmt_fixed16(c, f, &s, r);
	case RTD_NT_T_STRING:
		return fmt_utf16z(c, &s, r);
	case RTD_NT_T_UTF8Z:
		return fmt_utf8z(c, &s, r);
	case RTD_NT_T_BINARY:
		return fmt_binary(c, f, &s, r, sib, nsib);
	default:
		break;
	}
	uint64_t u = 0;
	int64_t i = 0;
	if (!nt_read_number(r, f->type, c->psz, &u, &i))
		return -RTD_E_NT_PAYLOAD;
	if (!rd_ok(r))
		return r->err;
	if (val)
		*val = u;
	switch (f->type) {
	case RTD_NT_T_BOOL8: case RTD_NT_T_BOOL32:
		fmt_bool(c, &s, u);
		break;
	case RTD_NT_T_HEX32: case RTD_NT_T_HEX64: case RTD_NT_T_POINTER:
		fmt_hex(c, f, &s, u);
		break;
	case RTD_NT_T_DATETIME:
		slot_key(c, &s);
		put_filetime(c->w, u);
		break;
	default:
		fmt_int(c, f, &s, u, i);
		break;
	}
	return 0;
}

static int fmt_list(struct fctx *c, const struct rtd_nettrace_field *fs,
		    size_t n, rtd_rd *r, unsigned depth, bool top)
{
	uint64_t sib[64];
	size_t nsib = n < 64 ? n : 64;
	memset(sib, 0, nsib * sizeof(*sib));
	for (size_t i = 0; i < n; i++) {
		if (top && c->lenient && rd_left(r) == 0)
			return 0; /* an older version of the event */
		uint64_t v = 0;
		c->key_ix = top ? (long)i : -1;
		int rc = fmt_one(c, &fs[i], false, r, depth,
				 i == 0 && (depth > 0 || c->json), &v, sib,
				 nsib);
		if (rc)
			return rc == -RTD_E_TRUNCATED ? -RTD_E_NT_PAYLOAD : rc;
		if (i < 64)
			sib[i] = v;
	}
	return 0;
}

/* V6 RelLoc/DataLoc fields point at data after the fixed fields: that
 * data is described, not left over. */
static void skip_located(const struct fctx *c, rtd_rd *r)
{
	size_t at = (size_t)(r->p - c->payload);
	if (c->located_end > at && c->located_end <= c->payload_len)
		rd_skip(r, c->located_end - at);
}

/* JSON: the header members from "provider" to "seq" (value to follow),
 * the same whether cached or written each time. */
static void put_json_meta(struct w *w, const struct rtd_nettrace_metadata *m)
{
	PUTS(w, ",\"provider\":");
	put_str8(w, m->provider, strlen(m->provider));
	PUTS(w, ",\"event\":");
	put_str8(w, m->name, strlen(m->name));
	PUTS(w, ",\"id\":");
	put_u64(w, m->event_id);
	PUTS(w, ",\"version\":");
	put_u64(w, m->version);
	PUTS(w, ",\"opcode\":");
	put_u64(w, m->opcode);
	PUTS(w, ",\"seq\":");
}

/* Text: " Provider/Name". */
static void put_text_name(struct w *w, const struct rtd_nettrace_metadata *m)
{
	putc1(w, ' ');
	put(w, m->provider, strlen(m->provider));
	putc1(w, '/');
	put(w, m->name, strlen(m->name));
}

/*
 * A metadata record's text, rendered on its first event: the JSON header
 * members from "provider" to "seq", the text " Provider/Name", and each
 * top-level field's key in both forms. Offsets into one buffer.
 */
static int meta_cache(struct nt_meta *nm)
{
	const struct rtd_nettrace_metadata *m = &nm->pub;
	rtd_buf b;
	rtd_buf_init(&b, RTD_CAP_LINE);
	struct w w;
	winit(&w, &b);
	size_t nf = m->nfields;
	uint32_t *o = malloc((2 * (nf + 1) + 4) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	put_json_meta(&w, m);
	o[2 * (nf + 1)] = (uint32_t)wlen(&w); /* JSON header end */
	put_text_name(&w, m);
	o[2 * (nf + 1) + 1] = (uint32_t)wlen(&w); /* text header end */
	for (size_t i = 0; i < nf; i++) {
		o[i] = (uint32_t)wlen(&w);
		const char *n = m->fields[i].name ? m->fields[i].name : "";
		put_str8(&w, n, strlen(n));
		putc1(&w, ':');
	}
	o[nf] = (uint32_t)wlen(&w);
	for (size_t i = 0; i < nf; i++) {
		o[nf + 1 + i] = (uint32_t)wlen(&w);
		const char *n = m->fields[i].name ? m->fields[i].name : "";
		putc1(&w, ' ');
		if (n[0])
			put(&w, n, strlen(n));
		else
			putc1(&w, '_');
		putc1(&w, '=');
	}
	o[2 * nf + 1] = (uint32_t)wlen(&w);
	wsync(&w);
	if (w.err) {
		free(o);
		rtd_buf_free(&b);
		return w.err;
	}
	nm->fmt_cache = (char *)b.data; /* owned by the record now */
	nm->fmt_keys = o;
	return 0;
}

void nt_meta_free(struct nt_meta *m)
{
	if (!m)
		return;
	free(m->fmt_cache);
	free(m->fmt_keys);
	free(m);
}

/* Seconds since the trace's sync time, six decimals. */
static char *raw_time(char *d, const rtd_nettrace *dec, uint64_t ts);

static void put_time(struct w *w, const rtd_nettrace *dec, uint64_t ts)
{
	char *d = room(w, 32);
	if (d)
		w->p = raw_time(d, dec, ts);
}

static char *raw_time(char *d, const rtd_nettrace *dec, uint64_t ts)
{
	uint64_t freq = dec->info.tick_freq ? dec->info.tick_freq : 1;
	int64_t rel = (int64_t)(ts - dec->info.sync_ticks);
	uint64_t a = rel < 0 ? (uint64_t)0 - (uint64_t)rel : (uint64_t)rel;
	uint64_t secs, frac;
	if (freq == 1000000000ULL) {
		/* Linux: nanoseconds; constant divisors become multiplies */
		secs = a / 1000000000ULL;
		frac = (a % 1000000000ULL) / 1000;
	} else {
		secs = a / freq;
		uint64_t rem = a % freq;
		frac = freq <= UINT64_MAX / 1000000U
			       ? rem * 1000000U / freq
			       : (uint64_t)((double)rem * 1e6 / (double)freq);
	}
	if (rel < 0)
		*d++ = '-';
	d = raw_u64(d, secs);
	*d++ = '.';
	unsigned f = (unsigned)frac; /* < 1000000 */
	memcpy(d, digits2 + 2 * (f / 10000), 2);
	memcpy(d + 2, digits2 + 2 * (f / 100 % 100), 2);
	memcpy(d + 4, digits2 + 2 * (f % 100), 2);
	return d + 6;
}

static inline void u32_len_placeholder(struct w *w)
{
	put(w, "\0\0\0\0", 4);
}

static void put_frames(struct w *w, const struct rtd_nettrace_event *ev,
		       bool json, rtd_nettrace_frame_fn sym, void *sym_ctx)
{
	for (size_t i = 0; i < ev->nframes; i++) {
		if (i)
			putc1(w, ',');
		const char *nm = sym ? sym(sym_ctx, ev->stack[i]) : NULL;
		if (nm) {
			if (json)
				put_str8(w, nm, strlen(nm));
			else
				put(w, nm, strlen(nm));
			continue;
		}
		if (json)
			putc1(w, '"');
		put_hex(w, ev->stack[i]);
		if (json)
			putc1(w, '"');
	}
}

/*
 * The GC's dynamic events: GC/DynamicEvent (runtime id 39) carries a
 * name and a blob whose layout the GC defines per name. Known ones are
 * shown as their own event, "GC/" + name, with the blob's fields (the
 * layouts TraceEvent 4.0's GCDynamicTraceEventParser decodes); others
 * keep the raw Name/DataSize/Data.
 */
#define F(n, t) {n, RTD_NT_T_##t, 0, 0, -1, NULL, NULL}
static const struct rtd_nettrace_field dyn_committed_usage[] = {
	F("Version", U16),
	F("TotalCommittedInUse", U64),
	F("TotalCommittedInGlobalDecommit", U64),
	F("TotalCommittedInFree", U64),
	F("TotalCommittedInGlobalFree", U64),
	F("TotalBookkeepingCommitted", U64),
};
#undef F

static const struct {
	const char *name;
	const char *display;
	const struct rtd_nettrace_field *fields;
	size_t nfields;
} dyn_events[] = {
	{"CommittedUsage", "GC/CommittedUsage", dyn_committed_usage,
	 sizeof(dyn_committed_usage) / sizeof(dyn_committed_usage[0])},
};

/* If ev is a known GC dynamic event, its own view in *m2 / *ev2. */
static bool gc_dynamic(const struct rtd_nettrace_event *ev,
		       struct rtd_nettrace_metadata *m2,
		       struct rtd_nettrace_event *ev2)
{
	const struct rtd_nettrace_metadata *m = ev->meta;
	if (!m->builtin || m->event_id != CLR_GC_DYNAMIC_TRACE_EVENT ||
	    strcmp(m->provider, "Microsoft-Windows-DotNETRuntime"))
		return false;
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	/* Name: UTF-16, compared as ASCII */
	char name[64];
	size_t n = 0;
	for (;;) {
		uint16_t c = rd_u16le(&r);
		if (!rd_ok(&r) || n + 1 >= sizeof(name) || c >= 0x80)
			return false;
		if (!c)
			break;
		name[n++] = (char)c;
	}
	name[n] = 0;
	uint32_t size = rd_u32le(&r);
	const uint8_t *data;
	if (!rd_ok(&r) || !rd_bytes(&r, size, &data))
		return false;
	for (size_t i = 0; i < sizeof(dyn_events) / sizeof(dyn_events[0]);
	     i++) {
		if (strcmp(dyn_events[i].name, name))
			continue;
		*m2 = *m;
		m2->name = dyn_events[i].display;
		m2->fields = dyn_events[i].fields;
		m2->nfields = dyn_events[i].nfields;
		m2->builtin = false;
		*ev2 = *ev;
		ev2->meta = m2;
		ev2->payload = data;
		ev2->payload_len = size;
		return true;
	}
	return false;
}

/*
 * A stack's addresses, rendered once per stack id and sequence-point
 * interval (the stream interns stacks per interval; an event with an id
 * reuses its text). Inline (NetPerf) stacks have no id: rendered each time.
 */
static void put_stack_cached(rtd_nettrace *dec, struct w *w,
			     const struct rtd_nettrace_event *ev, bool json)
{
	if (!ev->nframes)
		return;
	if (dec->format < 4 || ev->stack_id < dec->stack_base) {
		put_frames(w, ev, json, NULL, NULL);
		return;
	}
	size_t ix = ev->stack_id - dec->stack_base;
	unsigned want = json ? 1 : 2;
	if (dec->stack_text_flags != want) {
		/* one form per run: switching resets */
		dec->stack_text.len = 0;
		if (dec->stack_text_at)
			memset(dec->stack_text_at, 0, dec->stack_text_cap *
						      sizeof(*dec->stack_text_at));
		dec->stack_text_flags = want;
	}
	if (ix >= dec->stack_text_cap) {
		size_t nc = dec->stack_text_cap ? dec->stack_text_cap : 1024;
		while (nc <= ix)
			nc *= 2;
		uint32_t *na = realloc(dec->stack_text_at, nc * sizeof(*na));
		if (!na) {
			put_frames(w, ev, json, NULL, NULL);
			return;
		}
		memset(na + dec->stack_text_cap, 0,
		       (nc - dec->stack_text_cap) * sizeof(*na));
		dec->stack_text_at = na;
		dec->stack_text_cap = nc;
	}
	rtd_buf *sb = &dec->stack_text;
	uint32_t at = dec->stack_text_at[ix];
	if (!at) {
		size_t start = sb->len;
		struct w sw;
		winit(&sw, sb);
		u32_len_placeholder(&sw);
		put_frames(&sw, ev, json, NULL, NULL);
		wsync(&sw);
		if (sw.err || sb->len - start - 4 > UINT32_MAX ||
		    start + 1 > UINT32_MAX) {
			sb->len = start;
			put_frames(w, ev, json, NULL, NULL);
			return;
		}
		uint32_t n = (uint32_t)(sb->len - start - 4);
		memcpy(sb->data + start, &n, 4);
		dec->stack_text_at[ix] = at = (uint32_t)start + 1;
	}
	uint32_t n;
	memcpy(&n, sb->data + at - 1, 4);
	put(w, (const char *)sb->data + at - 1 + 4, n);
}

/* JSON: everything before the fields, up to "fields":{ (the metadata's
 * members from its cache, copied in one reservation, when it has one). */
static int json_head(struct fctx *c, const struct rtd_nettrace_event *ev)
{
	struct w *w = c->w;
	const struct nt_meta *cm = c->cm;
	const struct rtd_nettrace_metadata *m = ev->meta;
	size_t hl = cm ? cm->fmt_keys[2 * (m->nfields + 1)] : 0;
	char *d = room(w, 200 + hl);
	if (!d)
		return w->err;
	RAW(d, "{\"time\":");
	d = raw_time(d, c->dec, ev->timestamp);
	RAW(d, ",\"ts\":");
	d = raw_u64(d, ev->timestamp);
	RAW(d, ",\"thread\":");
	d = raw_u64(d, ev->thread_id);
	if (ev->capture_thread_id != ev->thread_id) {
		RAW(d, ",\"capture_thread\":");
		d = raw_u64(d, ev->capture_thread_id);
	}
	if (ev->proc_number != 0xffffffffu) {
		RAW(d, ",\"cpu\":");
		d = raw_u64(d, ev->proc_number);
	}
	if (cm) {
		memcpy(d, cm->fmt_cache, hl);
		d += hl;
		d = raw_u64(d, ev->sequence);
		RAW(d, ",\"fields\":{");
		w->p = d;
		return 0;
	}
	w->p = d;
	put_json_meta(w, m);
	put_u64(w, ev->sequence);
	PUTS(w, ",\"fields\":{");
	return 0;
}

/* A member holding bytes as hex: ,"key":"..." */
static void json_hex_member(struct w *w, const char *key, const rtd_rd *r)
{
	put(w, key, strlen(key));
	put_hexbytes(w, r->p, rd_left(r));
	putc1(w, '"');
}

/* JSON: after the fields, rc their outcome: the value names, what no
 * field described, the error, activities and the stack. */
static void json_tail(struct fctx *c, const struct rtd_nettrace_event *ev,
		      rtd_rd *r, int rc, unsigned flags,
		      rtd_nettrace_frame_fn sym, void *sym_ctx)
{
	struct w *w = c->w;
	if (!rc && rd_left(r) && ev->meta->nfields == 0) {
		/* no layout known: the bytes, so nothing is hidden */
		json_hex_member(w, "\"payload\":\"", r);
		rd_skip(r, rd_left(r));
	}
	putc1(w, '}');
	if (c->nnames) {
		PUTS(w, ",\"names\":{");
		wsync(c->names);
		put(w, (const char *)c->dec->nbuf.data, c->dec->nbuf.len);
		putc1(w, '}');
	}
	/* bytes the schema does not describe: shown, never dropped (a newer
	 * event version, or a wrong schema) */
	if (!rc && rd_left(r))
		json_hex_member(w, ",\"unparsed\":\"", r);
	if (rc) {
		PUTS(w, ",\"error\":");
		const char *e = rtd_strerror(rc);
		put_str8(w, e, strlen(e));
	}
	static const uint8_t zero[16];
	if (memcmp(ev->activity_id, zero, 16)) {
		PUTS(w, ",\"activity\":");
		put_guid(w, ev->activity_id, true);
	}
	if (memcmp(ev->related_activity_id, zero, 16)) {
		PUTS(w, ",\"related_activity\":");
		put_guid(w, ev->related_activity_id, true);
	}
	if (flags & RTD_NT_FMT_STACK) {
		PUTS(w, ",\"stack\":[");
		put_stack_cached(c->dec, w, ev, true);
		putc1(w, ']');
		if (sym && ev->nframes) {
			/* names beside the addresses: "0x..." where no
			 * method covers one */
			PUTS(w, ",\"frames\":[");
			put_frames(w, ev, true, sym, sym_ctx);
			putc1(w, ']');
		}
	}
	putc1(w, '}');
}

static int fmt_json(struct fctx *c, const struct rtd_nettrace_event *ev,
		    unsigned flags, rtd_nettrace_frame_fn sym, void *sym_ctx)
{
	struct w nw;
	rtd_buf_reset(&c->dec->nbuf);
	winit(&nw, &c->dec->nbuf);
	c->names = &nw;
	int rc = json_head(c, ev);
	if (rc)
		return rc;
	const struct rtd_nettrace_metadata *m = ev->meta;
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	rc = fmt_list(c, m->fields, m->nfields, &r, 0, true);
	skip_located(c, &r);
	json_tail(c, ev, &r, rc, flags, sym, sym_ctx);
	return 0;
}

/* Text: time thread Provider/Name field=value ... [<error>] [stack=...] */
static void fmt_text(struct fctx *c, const struct rtd_nettrace_event *ev,
		     unsigned flags, rtd_nettrace_frame_fn sym, void *sym_ctx)
{
	struct w *w = c->w;
	const struct nt_meta *cm = c->cm;
	const struct rtd_nettrace_metadata *m = ev->meta;
	put_time(w, c->dec, ev->timestamp);
	putc1(w, ' ');
	put_u64(w, ev->thread_id);
	if (cm) {
		uint32_t a = cm->fmt_keys[2 * (m->nfields + 1)];
		put(w, cm->fmt_cache + a,
		    cm->fmt_keys[2 * (m->nfields + 1) + 1] - a);
	} else {
		put_text_name(w, m);
	}
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	int rc = fmt_list(c, m->fields, m->nfields, &r, 0, true);
	skip_located(c, &r);
	if (rc) {
		PUTS(w, " <");
		const char *e = rtd_strerror(rc);
		put(w, e, strlen(e));
		putc1(w, '>');
	} else if (rd_left(&r)) {
		if (m->nfields == 0)
			PUTS(w, " payload=0x");
		else
			PUTS(w, " unparsed=0x");
		put_hexbytes(w, r.p, rd_left(&r));
	}
	if ((flags & RTD_NT_FMT_STACK) && ev->nframes) {
		PUTS(w, " stack=");
		if (sym)
			put_frames(w, ev, false, sym, sym_ctx);
		else
			put_stack_cached(c->dec, w, ev, false);
	}
}

int nt_format(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
	      unsigned flags, rtd_buf *out, rtd_nettrace_frame_fn sym,
	      void *sym_ctx)
{
	struct rtd_nettrace_metadata dyn_meta;
	struct rtd_nettrace_event dyn_ev;
	struct nt_meta *cm = (struct nt_meta *)ev->meta; /* first member */
	if (ev->meta->event_id == CLR_GC_DYNAMIC_TRACE_EVENT && gc_dynamic(ev, &dyn_meta, &dyn_ev)) {
		ev = &dyn_ev;
		cm = NULL;
	}
	if (cm && !cm->fmt_cache && meta_cache(cm))
		cm = NULL;
	struct w w;
	winit(&w, out);
	bool json = flags & RTD_NT_FMT_JSON;
	struct fctx c = {&w, dec, ev->payload, ev->payload_len,
			 dec->info.pointer_size ? dec->info.pointer_size : 8,
			 json, ev->meta->builtin, NT_CAP_ARRAY_ELEMS, NULL, 0,
			 0, cm, -1};
	if (json) {
		int rc = fmt_json(&c, ev, flags, sym, sym_ctx);
		if (rc)
			return rc;
	} else {
		fmt_text(&c, ev, flags, sym, sym_ctx);
	}
	if (w.err)
		return w.err;
	/* keep it a C string (room() always leaves a byte for it) */
	char *z = room(&w, 0);
	if (!z)
		return w.err;
	*z = 0;
	wsync(&w);
	return 0;
}

const char *rtd_nettrace_format(rtd_nettrace *dec,
				const struct rtd_nettrace_event *ev,
				unsigned flags, size_t *len)
{
	rtd_buf_reset(&dec->fbuf);
	if (nt_format(dec, ev, flags, &dec->fbuf, NULL, NULL))
		return NULL;
	if (len)
		*len = dec->fbuf.len;
	return (const char *)dec->fbuf.data;
}

int rtd_nettrace_format_append(rtd_nettrace *dec,
			       const struct rtd_nettrace_event *ev,
			       unsigned flags, rtd_nettrace_frame_fn sym,
			       void *sym_ctx, char **buf, size_t *len,
			       size_t *cap)
{
	rtd_buf b = {(uint8_t *)*buf, *len, *cap, RTD_CAP_BLOCK};
	size_t before = b.len;
	int rc = nt_format(dec, ev, flags, &b, sym, sym_ctx);
	if (!rc) {
		struct w nl;
		winit(&nl, &b);
		char *z = room(&nl, 1);
		if (!z) {
			rc = -ENOMEM;
		} else {
			*z = '\n';
			b.len++;
		}
	}
	if (rc)
		b.len = before;
	*buf = (char *)b.data;
	*len = b.len;
	*cap = b.cap;
	return rc;
}

const char *rtd_nettrace_map_name(const struct rtd_nettrace_map *map,
				  uint64_t value, char *buf, size_t n)
{
	if (!map)
		return NULL;
	if (!map->bits) {
		for (size_t i = 0; i < map->n; i++)
			if (map->v[i].value == value)
				return map->v[i].name;
		return NULL;
	}
	if (value == 0) {
		for (size_t i = 0; i < map->n; i++)
			if (map->v[i].value == 0)
				return map->v[i].name;
		return NULL;
	}
	if (!buf || n < 24)
		return NULL;
	size_t len = 0;
	uint64_t left = value;
	buf[0] = 0;
	for (size_t i = 0; i < map->n; i++) {
		uint64_t bit = map->v[i].value;
		if (!bit || (value & bit) != bit)
			continue;
		size_t l = strlen(map->v[i].name);
		if (len + l + 2 + 20 > n)
			break;
		if (len)
			buf[len++] = '|';
		memcpy(buf + len, map->v[i].name, l);
		len += l;
		left &= ~bit;
	}
	if (left) {
		/* "|0x..." without snprintf: a rundown's MethodFlags
		 * carry an unnamed bit in most events */
		char t[24], *e = t;
		if (len)
			*e++ = '|';
		e = raw_hex(e, left);
		size_t k = (size_t)(e - t);
		if (len + k < n) {
			memcpy(buf + len, t, k);
			len += k;
		}
	}
	buf[len] = 0;
	return buf;
}
