/* SPDX-License-Identifier: MIT */
/*
 * text.c - the events of a Go execution trace as lines of text or JSON
 * (rtd_gotrace_text_*; 'rtdiag gotrace cat' and 'grep').
 *
 * 'cat --ordered' writes a line of ~100 bytes per event, tens of millions
 * of them: the event lines are built straight into one buffer, digits
 * written in place (no call per number), each event type's fixed text
 * ("TIME Name M=", " arg=") prepared once, and each stack's first frame
 * (":FUNC@FILE:LINE") formatted once and kept while the decoder's stack
 * tables do not change (d->stack_epoch). The rarer lines (JSON, --stacks,
 * String and Stack events) go through a formatted write into the same
 * buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/gotrace_int.h"
#include "gotrace/v2state.h"
#include "rtdiag/gotrace_events.h"
#include "rtdiag/gotrace_text.h"
#include "rtdiag/source.h"

#define TEXT_BUF (1u << 16)   /* handed to write() in pieces this large */
#define LINE_ROOM 2048u       /* an event line without strings fits in this */
#define FRAME_TEXT_MAX 300    /* a frame's name or path in a line, cut */
#define FRAME_CACHE 256u      /* stacks whose first frame is kept formatted */
/* ":" FUNC "@" FILE ":" LINE, each cut at FRAME_TEXT_MAX */
#define FRAME_TEXT (2 * FRAME_TEXT_MAX + 24)

/*
 * Old format (go-debug: Go's Event.String(); text: the same plus the
 * stack and quoted strings): "TS Name p=P g=G off=O args". New format,
 * ordered: "TS Name M=m P=p G=g off=O args strings", the event's context
 * in capitals as Go's -d=1 prints it (an argument may be a g, p or m of
 * its own: GoStart's g is the goroutine it starts); raw mode knows no
 * context but the batch's thread (on its EventBatch line): "TS Name off=O
 * args strings", Go's text form with time and offset. A thread, proc or
 * goroutine argument (m, p, g) is printed signed (-1: none). Strings are
 * named by their argument without "_string", which names the id.
 */
enum lctx { L_OLD, L_RAW2, L_ORD2, L_NCTX };
/* What follows the name: the first context field */
static const char *const line_after[L_NCTX] = {[L_OLD] = " p=", [L_ORD2] = " M=",
					       [L_RAW2] = " off="};

/*
 * What a line shows of an event: the public event's fields, or the same
 * read in place from the decoder's own copy of an ordered event (no
 * public event filled: rtd_gotrace_text_decoded()). Made where it is
 * used, inline, so its fields stay in registers.
 */
struct lev {
	int64_t ts, p, m;
	uint64_t g, off, stack, gen;
	const char *name;
	const uint64_t *args; /* nargs of them */
	const char *const *argnames;
	const char *const *sargnames;
	const char *const *sargs;
	const size_t *sarg_lens;
	unsigned type, nargs, nsargs;
};

static inline __attribute__((always_inline)) struct lev lev_of(const struct rtd_gotrace_event *ev)
{
	return (struct lev){.ts = ev->ts, .p = ev->p, .m = ev->m, .g = ev->g, .off = ev->off,
			    .stack = ev->stack, .gen = ev->gen, .name = ev->name,
			    .args = ev->args, .argnames = ev->argnames,
			    .sargnames = ev->sargnames, .sargs = ev->sargs,
			    .sarg_lens = ev->sarg_lens, .type = ev->type, .nargs = ev->nargs,
			    .nsargs = ev->nsargs};
}

/*
 * The fixed text of a line, per event type: " Name p=" (old), " Name M="
 * (ordered) or " Name off=" (raw), and " arg=" for each argument, copied
 * 32 bytes at a time from here (no strlen, no memcpy call per line). A
 * name or argument too long for it takes put_str.
 */
struct line_pre {
	const char *name;
	const char *const *argnames;
	uint8_t nlen, alen[RTD_GOTRACE_MAX_ARGS];
	uint8_t sgn;   /* bit i: argument i is a thread (signed) */
	uint8_t stk;   /* bit i: argument i is a stack id (is_stack_arg) */
	uint8_t stack; /* bit i: argument i is named "stack" */
	bool ok;
	char nm[32], an[RTD_GOTRACE_MAX_ARGS][32];
	/* " sarg=" of the string arguments, made when first written (slen
	 * 0: not yet) for the names at sargnames */
	const char *const *sargnames;
	uint8_t slen[2];
	char sn[2][32];
};

/* A stack's first frame as a line shows it, for the stack tables of one
 * epoch (epoch 0: empty; the decoder's count starts past it). */
struct frame_text {
	uint64_t id, epoch;
	uint32_t len;
	char s[FRAME_TEXT];
};

/*
 * An old-format type's line as v1_emit() and print_line() would make it
 * (L_OLD, no --stacks), its fixed text prepared when the type is first
 * met: " Name p=", " arg=" per argument, " sarg=". The kinds v1_emit()
 * leaves to v1_emit_slow() or changes (a CPU sample's argument, strings
 * but the one of a[2]) and names too long for the prepared text are
 * built whole (state 2).
 */
struct v1_line {
	uint8_t state; /* 0 not made yet, 1 written in place, 2 built whole */
	uint8_t nlen, nargs, slen;
	bool stack; /* the type has a stack, not among its named arguments */
	bool sarg;  /* a[2] names a string (GoStartLabel, UserTaskCreate, UserRegion) */
	uint8_t alen[RTD_GOTRACE_MAX_ARGS];
	char nm[32], sn[32];
	char an[RTD_GOTRACE_MAX_ARGS][32];
};

/* A string's quoted text kept (the strings of an ordered old-format
 * decoder are all read before its first event goes out). */
#define SARG_CACHE 64u
#define SARG_TEXT 56u
struct sarg_text {
	uint64_t id;
	uint32_t len; /* 0: empty slot */
	char s[SARG_TEXT];
};

struct rtd_gotrace_text {
	struct rtd_gotrace_text_opts o;
	int err;
	size_t n;
	struct line_pre pre[L_NCTX][256];
	struct frame_text *frames; /* FRAME_CACHE, made at the first use */
	/* the digits of the last time's multiple of 1e8 (consecutive times
	 * share them: a line writes its last 8 digits only) */
	uint64_t ts_base;
	unsigned ts_hilen;
	char ts_hi[16];
	struct rtd_gotrace_event ev; /* rtd_gotrace_text_decoded()'s */
	/* per old-format type, for rtd_gotrace_text_decoded()'s decoder
	 * (whose argument offset is its version's) */
	struct v1_line v1_lines[RTD_GO_EV_COUNT];
	/* quoted strings of that decoder while its string table is unchanged
	 * (as many strings, as many bytes) */
	struct sarg_text *sargs;
	const rtd_gotrace_dec *sarg_dec;
	size_t sarg_strbytes, sarg_nstr;
	char b[TEXT_BUF + LINE_ROOM];
};

/* ---- the buffer ---- */

static int tb_flush(rtd_gotrace_text *t)
{
	if (t->n && !t->err) {
		int rc = t->o.write(t->b, t->n, t->o.ctx);
		if (rc < 0)
			t->err = rc;
	}
	t->n = 0;
	return t->err;
}

/* Room for @need more bytes (at most TEXT_BUF + LINE_ROOM). */
static char *tb_room(rtd_gotrace_text *t, size_t need)
{
	if (t->n + need > sizeof(t->b))
		tb_flush(t);
	return t->b + t->n;
}

static void tb_put(rtd_gotrace_text *t, const void *s, size_t len)
{
	const char *p = s;
	while (len) {
		if (t->n == sizeof(t->b))
			tb_flush(t);
		size_t k = sizeof(t->b) - t->n;
		k = k < len ? k : len;
		memcpy(t->b + t->n, p, k);
		t->n += k;
		p += k;
		len -= k;
	}
}

static void tb_str(rtd_gotrace_text *t, const char *s)
{
	tb_put(t, s, strlen(s));
}

static void tb_printf(rtd_gotrace_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void tb_printf(rtd_gotrace_text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = sizeof(t->b) - t->n;
	int k = vsnprintf(t->b + t->n, room, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k < room) {
		t->n += (size_t)k;
		return;
	}
	/* too long for what is left: it again, in a buffer of its own */
	char *tmp = malloc((size_t)k + 1);
	if (!tmp) {
		t->err = t->err ? t->err : -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(tmp, (size_t)k + 1, fmt, ap);
	va_end(ap);
	tb_put(t, tmp, (size_t)k);
	free(tmp);
}

/* ---- numbers and strings ---- */

/*
 * Decimal, written in place with no call: 4 digits per table look-up.
 * dig4: "0000".."9999"; lead4: the same without the leading zeros, at 8
 * bytes an entry with the digit count in its last byte (a leading group
 * is one load and one 4-byte store; the line has room past its end).
 */
static char dig4[10000 * 4];
static uint64_t lead4[10000];

static void dig4_make(void)
{
	for (unsigned v = 0; v < 10000; v++) {
		char *e = dig4 + 4 * v;
		e[0] = (char)('0' + v / 1000);
		e[1] = (char)('0' + v / 100 % 10);
		e[2] = (char)('0' + v / 10 % 10);
		e[3] = (char)('0' + v % 10);
		unsigned len = 1u + (v >= 10) + (v >= 100) + (v >= 1000);
		char l[8] = {0};
		memcpy(l, e + 4 - len, len);
		l[7] = (char)len;
		memcpy(&lead4[v], l, 8);
	}
}

static void dig4_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, dig4_make);
}

static inline char *put_lead4(char *p, uint32_t v) /* v < 1e4, no padding */
{
	uint64_t e = lead4[v];
	memcpy(p, &e, 4);
	return p + (e >> 56);
}

static inline char *put_lead8(char *p, uint32_t v) /* v < 1e8, no padding */
{
	if (v < 10000)
		return put_lead4(p, v);
	uint32_t hi = v / 10000;
	p = put_lead4(p, hi);
	memcpy(p, dig4 + 4 * (v - hi * 10000), 4);
	return p + 4;
}

static inline void put8(char *p, uint32_t v) /* v < 1e8: eight digits */
{
	uint32_t hi = v / 10000;
	memcpy(p, dig4 + 4 * hi, 4);
	memcpy(p + 4, dig4 + 4 * (v - hi * 10000), 4);
}

static char *put_u64_big(char *p, uint64_t v) /* v >= 1e8 */
{
	if (v >= 10000000000000000ull) {
		uint64_t hi = v / 10000000000000000ull;
		p = put_lead8(p, (uint32_t)hi);
		v -= hi * 10000000000000000ull;
		uint64_t mid = v / 100000000;
		put8(p, (uint32_t)mid);
		put8(p + 8, (uint32_t)(v - mid * 100000000));
		return p + 16;
	}
	uint64_t hi = v / 100000000;
	p = put_lead8(p, (uint32_t)hi);
	put8(p, (uint32_t)(v - hi * 100000000));
	return p + 8;
}

static inline char *put_u64(char *p, uint64_t v)
{
	if (v < 100000000)
		return put_lead8(p, (uint32_t)v);
	return put_u64_big(p, v);
}

static inline char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* A time: its digits above the last 8 kept from the last line's. */
static inline char *put_ts(rtd_gotrace_text *t, char *p, int64_t ts)
{
	if (ts < 100000000)
		return put_i64(p, ts);
	uint64_t u = (uint64_t)ts;
	if (u - t->ts_base >= 100000000) { /* another 1e8 (or an earlier one) */
		uint64_t hi = u / 100000000;
		t->ts_base = hi * 100000000;
		t->ts_hilen = (unsigned)(put_u64(t->ts_hi, hi) - t->ts_hi);
	}
	memcpy(p, t->ts_hi, sizeof(t->ts_hi));
	p += t->ts_hilen;
	put8(p, (uint32_t)(u - t->ts_base));
	return p + 8;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/* At most max bytes of s, "..." ending a cut one. */
static char *put_str_max(char *p, const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);
	if (n <= max)
		return (char *)memcpy(p, s, n) + n;
	memcpy(p, s, max - 3);
	return (char *)memcpy(p + max - 3, "...", 3) + 3;
}

/* One piece of a JSON string literal: the encoding of the byte or UTF-8
 * sequence at p[i] (of n) into out (6 bytes at most); *used: bytes read.
 * Bytes that are not valid UTF-8 become \u00XX. Returns the length. */
static size_t quote_step(const unsigned char *p, size_t i, size_t n, char *out,
			 size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = p[i];
	*used = 1;
	if (c == '"' || c == '\\') {
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	if (c == '\n' || c == '\t') {
		out[0] = '\\';
		out[1] = c == '\n' ? 'n' : 't';
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		return 1;
	}
	if (c >= 0x80) { /* pass well-formed UTF-8 sequences through */
		size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3
			   : c >= 0xc2 && c < 0xe0 ? 2 : 0;
		bool ok = len && i + len <= n;
		for (size_t k = 1; ok && k < len; k++)
			ok = (p[i + k] & 0xc0) == 0x80;
		if (ok) {
			memcpy(out, p + i, len);
			*used = len;
			return len;
		}
	}
	memcpy(out, "\\u00", 4);
	out[4] = hex[c >> 4];
	out[5] = hex[c & 15];
	return 6;
}

/* A JSON string literal into a buffer with room for 6 * n + 2 bytes. */
static char *quote_buf(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	*out++ = '"';
	size_t i = 0;
	/* 8 bytes at a time while none needs escaping (plain ASCII names
	 * and messages) */
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	for (; i + 8 <= n; i += 8) {
		uint64_t w, q, b;
		memcpy(&w, p + i, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		uint64_t del = w ^ (ones * 0x7f);
		if ((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) |
		     ((del - ones) & ~del)) & high)
			break;
		memcpy(out, &w, 8);
		out += 8;
	}
	if (n >= 2 && i < n && n - i < 8) { /* the rest, padded with 'a' to a word */
		uint64_t w = ones * 'a', q, b, del;
		memcpy(&w, p + i, n - i);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		del = w ^ (ones * 0x7f);
		if (!((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) |
		       ((del - ones) & ~del)) & high)) {
			memcpy(out, &w, 8); /* within 6 * n + 2 as n >= 2 */
			out += n - i;
			i = n;
		}
	}
	for (size_t used; i < n; i += used) {
		/* printable ASCII but '"' and '\\' (most names): as it is */
		unsigned c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*out++ = (char)c;
			used = 1;
			continue;
		}
		out += quote_step(p, i, n, out, &used);
	}
	*out++ = '"';
	return out;
}

/* A JSON string literal of any length, through the buffer. */
static void tb_quoted(rtd_gotrace_text *t, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char piece[8];
	tb_put(t, "\"", 1);
	for (size_t i = 0, used; i < n; i += used)
		tb_put(t, piece, quote_step(p, i, n, piece, &used));
	tb_put(t, "\"", 1);
}

/* ---- event lines ---- */

/* A thread, proc or goroutine argument of the new format: Go's ThreadID,
 * ProcID and GoID are signed, -1 for none (a CPU sample taken with no P
 * has p=-1; it came out as 18446744073709551615). */
static bool is_id_arg(const char *name)
{
	return (name[0] == 'm' || name[0] == 'p' || name[0] == 'g') && name[1] == 0;
}

/* Is argument name a stack id ("stack", "new_stack")? */
static bool is_stack_arg(const char *name)
{
	size_t k = strlen(name);
	return k >= 5 && strcmp(name + k - 5, "stack") == 0;
}

/* An event type's line prefix and what its arguments are, made when the
 * type is first met (and again when its names change), so a line compares
 * no names. */
/* what line_pre_make() reads of an event (not the event itself: its
 * fields stay in registers where it is made inline) */
struct lev_names {
	const char *name;
	const char *const *argnames;
	unsigned nargs;
};
static struct line_pre *line_pre_make(struct line_pre *c, struct lev_names ev, enum lctx x);

static inline __attribute__((always_inline)) struct line_pre *
line_pre(rtd_gotrace_text *t, const struct lev *ev, enum lctx x)
{
	struct line_pre *c = &t->pre[x][ev->type & 255];
	if (c->name == ev->name && c->argnames == ev->argnames)
		return c->ok ? c : NULL;
	return line_pre_make(c, (struct lev_names){ev->name, ev->argnames, ev->nargs}, x);
}

/* " NAME" then @after at @dst (32 bytes, zero-filled past them): the
 * prepared text of a line's name or argument, its length; 0 when it does
 * not fit */
static uint8_t put_label(char dst[32], const char *name, const char *after)
{
	size_t n = strlen(name), k = strlen(after);
	if (n + 1 + k > 32)
		return 0;
	memset(dst, 0, 32);
	dst[0] = ' ';
	memcpy(dst + 1, name, n);
	memcpy(dst + 1 + n, after, k);
	return (uint8_t)(n + 1 + k);
}

/* line_pre() of a type not met yet (or with other names) */
static __attribute__((noinline)) struct line_pre *line_pre_make(struct line_pre *c,
								struct lev_names ev, enum lctx x)
{
	c->name = ev.name;
	c->argnames = ev.argnames;
	c->nlen = put_label(c->nm, ev.name, line_after[x]);
	c->ok = c->nlen != 0;
	memset(c->alen, 0, sizeof(c->alen));
	c->sgn = c->stk = c->stack = 0;
	for (unsigned i = 0; c->ok && i < ev.nargs && i < RTD_GOTRACE_MAX_ARGS; i++) {
		if (!(c->alen[i] = put_label(c->an[i], ev.argnames[i], "="))) {
			c->ok = false;
			break;
		}
		if (x != L_OLD && is_id_arg(ev.argnames[i]))
			c->sgn |= (uint8_t)(1u << i);
		if (is_stack_arg(ev.argnames[i]))
			c->stk |= (uint8_t)(1u << i);
		if (strcmp(ev.argnames[i], "stack") == 0)
			c->stack |= (uint8_t)(1u << i);
	}
	return c->ok ? c : NULL;
}

/* The context part of a line after the name, as line_pre's prefix has
 * begun it. */
static inline __attribute__((always_inline)) char *
put_context(char *p, const struct lev *ev, enum lctx x, const struct line_pre *c)
{
	if (!c) {
		*p++ = ' ';
		p = put_str(p, ev->name);
		p = put_str(p, line_after[x]);
	} else { /* the buffer has room for the whole 32 bytes */
		memcpy(p, c->nm, sizeof(c->nm));
		p += c->nlen;
	}
	switch (x) {
	case L_OLD:
		p = put_i64(p, ev->p);
		memcpy(p, " g=", 3);
		p = put_u64(p + 3, ev->g);
		memcpy(p, " off=", 5);
		return put_u64(p + 5, ev->off);
	case L_ORD2:
		p = put_i64(p, ev->m);
		memcpy(p, " P=", 3);
		p = put_i64(p + 3, ev->p);
		memcpy(p, " G=", 3);
		p = put_u64(p + 3, ev->g);
		memcpy(p, " off=", 5);
		return put_u64(p + 5, ev->off);
	default:
		return put_u64(p, ev->off);
	}
}

static char *__attribute__((noinline)) put_frame_made(rtd_gotrace_text *t, char *p, uint64_t id);

/* A stack's first frame after its id, ":FUNC@FILE:LINE" (the id alone
 * when the stack is not known yet: raw mode meets it later). Names and
 * paths are cut at FRAME_TEXT_MAX bytes: a line has 2 KB before its
 * strings. A stack whose names are final is formatted once per epoch of
 * the decoder's tables. */
static inline char *put_first_frame_as(rtd_gotrace_text *t, char *p, uint64_t id, bool fixed)
{
	const rtd_gotrace_dec *d = t->o.dec;
	if (!id || !d)
		return p;
	if (t->frames) { /* kept (inline: most stacks of a line are) */
		const struct frame_text *ft = &t->frames[(id ^ id >> 8) & (FRAME_CACHE - 1)];
		if (ft->id == id && ft->epoch == d->stack_epoch) {
			if (fixed && ft->len <= 64) { /* the line and the entry have room past it */
				memcpy(p, ft->s, 32);
				memcpy(p + 32, ft->s + 32, 32);
			} else {
				memcpy(p, ft->s, ft->len);
			}
			return p + ft->len;
		}
	}
	return put_frame_made(t, p, id);
}

/* put_first_frame_as() copying the kept text with memcpy (print_line()'s:
 * with the fixed copy inline, GCC kept decoded_v2()'s struct lev in
 * memory, +20 M instructions on a 4 MB Go 1.23 trace); print_v1() copies
 * up to 64 bytes in two fixed moves, not a call */
static inline char *put_first_frame(rtd_gotrace_text *t, char *p, uint64_t id)
{
	return put_first_frame_as(t, p, id, false);
}

/* put_first_frame() of a stack not kept: formatted, and kept when its
 * names are final. */
static char *put_frame_made(rtd_gotrace_text *t, char *p, uint64_t id)
{
	const struct rtd_gotrace_frame *fr;
	const rtd_gotrace_dec *d = t->o.dec;
	bool named;
	struct frame_text *ft = NULL;
	if (t->frames) {
		ft = &t->frames[(id ^ id >> 8) & (FRAME_CACHE - 1)];
	} else if ((t->frames = calloc(FRAME_CACHE, sizeof(*t->frames))) != NULL) {
		ft = &t->frames[(id ^ id >> 8) & (FRAME_CACHE - 1)];
	}
	if (!dec_stack_named(d, id, &fr, &named))
		return p;
	char *s = p;
	*p++ = ':';
	p = put_str_max(p, fr[0].fn, FRAME_TEXT_MAX);
	*p++ = '@';
	p = put_str_max(p, fr[0].file, FRAME_TEXT_MAX);
	*p++ = ':';
	p = put_u64(p, fr[0].line);
	/* the stack table's epoch 0 is never current: a decoder that has a
	 * stack has added it */
	if (ft && named && d->stack_epoch) {
		ft->id = id;
		ft->epoch = d->stack_epoch;
		ft->len = (uint32_t)(p - s);
		memcpy(ft->s, s, ft->len);
	}
	return p;
}

/* " NAME=" of string argument @i, from the type's prepared text when it
 * has it (@c, may be NULL). */
static inline char *put_sarg_name(struct line_pre *c, char *p, const struct lev *ev,
				  unsigned i)
{
	if (c && i < 2 && c->sargnames == ev->sargnames && c->slen[i]) {
		memcpy(p, c->sn[i], sizeof(c->sn[i]));
		return p + c->slen[i];
	}
	char *s = p;
	*p++ = ' ';
	p = put_str(p, ev->sargnames[i]);
	*p++ = '=';
	size_t k = (size_t)(p - s);
	if (c && i < 2 && k <= sizeof(c->sn[i])) {
		if (c->sargnames != ev->sargnames) {
			c->sargnames = ev->sargnames;
			c->slen[0] = c->slen[1] = 0;
		}
		memset(c->sn[i], 0, sizeof(c->sn[i]));
		memcpy(c->sn[i], s, k);
		c->slen[i] = (uint8_t)k;
	}
	return p;
}

static inline __attribute__((always_inline)) void
print_line(rtd_gotrace_text *t, const struct lev *ev, bool godebug, enum lctx x)
{
	/* without --stacks, each stack named by its first frame */
	bool frames = !godebug && !t->o.stacks;
	char *line = tb_room(t, LINE_ROOM);
	char *p = line;
	struct line_pre *c = line_pre(t, ev, x);
	p = put_ts(t, p, ev->ts);
	p = put_context(p, ev, x, c);
	bool named = false;
	unsigned i = 0, nargs = ev->nargs < RTD_GOTRACE_MAX_ARGS ? ev->nargs
								 : RTD_GOTRACE_MAX_ARGS;
	if (c) { /* the prepared arguments (alen is 0 past them) */
		bool fr = frames && ev->gen;
		for (; i < nargs && c->alen[i]; i++) {
			memcpy(p, c->an[i], sizeof(c->an[i]));
			p += c->alen[i];
			unsigned bit = 1u << i;
			if (!((c->sgn | c->stk | c->stack) & bit)) { /* the common one */
				p = put_u64(p, ev->args[i]);
				continue;
			}
			p = c->sgn & bit ? put_i64(p, (int64_t)ev->args[i]) : put_u64(p, ev->args[i]);
			named |= !godebug && (c->stack & bit);
			if (fr && (c->stk & bit))
				p = put_first_frame(t, p, ev->args[i]);
		}
	}
	for (; i < nargs; i++) {
		bool sgn, stk, stack;
		if (c && c->alen[i]) {
			memcpy(p, c->an[i], sizeof(c->an[i]));
			p += c->alen[i];
			sgn = c->sgn >> i & 1;
			stk = c->stk >> i & 1;
			stack = c->stack >> i & 1;
		} else {
			*p++ = ' ';
			p = put_str(p, ev->argnames[i]);
			*p++ = '=';
			sgn = x != L_OLD && is_id_arg(ev->argnames[i]);
			stk = is_stack_arg(ev->argnames[i]);
			stack = strcmp(ev->argnames[i], "stack") == 0;
		}
		p = sgn ? put_i64(p, (int64_t)ev->args[i]) : put_u64(p, ev->args[i]);
		named |= !godebug && stack;
		if (frames && ev->gen && stk)
			p = put_first_frame(t, p, ev->args[i]);
	}
	if (!godebug && ev->stack && !named) {
		memcpy(p, " stack=", 7);
		p = put_u64(p + 7, ev->stack);
		if (frames)
			p = put_first_frame(t, p, ev->stack);
	}
	/* strings too, when they fit (a log message may be 1 MB) */
	size_t room = TEXT_BUF + LINE_ROOM - t->n - (size_t)(p - line) - 2;
	bool fits = true;
	for (unsigned i = 0; i < ev->nsargs && fits; i++) {
		size_t need = (c && i < 2 && c->sargnames == ev->sargnames && c->slen[i]
				       ? sizeof(c->sn[i]) : strlen(ev->sargnames[i]) + 2) +
			      (godebug ? ev->sarg_lens[i] : 6 * ev->sarg_lens[i] + 2);
		fits = need <= room;
		room -= fits ? need : 0;
	}
	if (fits) { /* the common case */
		for (unsigned i = 0; i < ev->nsargs; i++) {
			p = put_sarg_name(c, p, ev, i);
			if (godebug) {
				memcpy(p, ev->sargs[i], ev->sarg_lens[i]);
				p += ev->sarg_lens[i];
			} else {
				p = quote_buf(p, ev->sargs[i], ev->sarg_lens[i]);
			}
		}
		*p++ = '\n';
		t->n += (size_t)(p - line);
		return;
	}
	t->n += (size_t)(p - line);
	for (unsigned i = 0; i < ev->nsargs; i++) {
		tb_put(t, " ", 1);
		tb_str(t, ev->sargnames[i]);
		tb_put(t, "=", 1);
		if (godebug)
			tb_put(t, ev->sargs[i], ev->sarg_lens[i]);
		else
			tb_quoted(t, ev->sargs[i], ev->sarg_lens[i]);
	}
	tb_put(t, "\n", 1);
}

/* The stacks an event names, old format: its own; new format: each
 * stack argument (GoCreate's new goroutine's too). Returns the count. */
static unsigned stacks_of(const struct rtd_gotrace_event *ev, const char **names,
			  uint64_t *ids)
{
	unsigned n = 0;
	if (!ev->gen) {
		if (ev->stack) {
			names[n] = "stack";
			ids[n++] = ev->stack;
		}
		return n;
	}
	for (unsigned i = 0; i < ev->nargs && n < 2; i++) {
		if (ev->args[i] && is_stack_arg(ev->argnames[i])) {
			names[n] = ev->argnames[i];
			ids[n++] = ev->args[i];
		}
	}
	return n;
}

static void put_frame_json(rtd_gotrace_text *t, const struct rtd_gotrace_frame *f, bool first)
{
	tb_printf(t, "%s{\"pc\":%" PRIu64 ",\"fn\":", first ? "" : ",", f->pc);
	tb_quoted(t, f->fn, strlen(f->fn));
	tb_str(t, ",\"file\":");
	tb_quoted(t, f->file, strlen(f->file));
	tb_printf(t, ",\"line\":%" PRIu64 "}", f->line);
}

static size_t stack_of(const rtd_gotrace_text *t, uint64_t id,
		       const struct rtd_gotrace_frame **fr)
{
	*fr = NULL;
	return t->o.dec ? rtd_gotrace_dec_stack(t->o.dec, id, fr) : 0;
}

/* --stacks, text: under the line, each stack the event names. */
static void print_stacks(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev)
{
	const char *names[2];
	uint64_t ids[2];
	unsigned n = stacks_of(ev, names, ids);
	for (unsigned k = 0; k < n; k++) {
		const struct rtd_gotrace_frame *fr;
		size_t nf = stack_of(t, ids[k], &fr);
		tb_printf(t, "\t%s=%" PRIu64 ":%s\n", names[k], ids[k], nf ? "" : " (not in the trace)");
		for (size_t i = 0; i < nf; i++)
			tb_printf(t, "\t\t0x%" PRIx64 " %s %s:%" PRIu64 "\n", fr[i].pc, fr[i].fn,
				  fr[i].file, fr[i].line);
	}
}

/* JSON of an event (not a String or Stack). */
static void print_json_event(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev)
{
	/* the new format's raw mode knows no P or G, and a thread only
	 * for the events in a thread's batch (CPU samples name theirs) */
	bool ctx = !ev->gen || t->o.ordered || ev->type == RTD_GO2_EV_CPU_SAMPLE;
	tb_printf(t, ",\"ts\":%" PRId64, ev->ts);
	if (ctx)
		tb_printf(t, ",\"p\":%" PRId64 ",\"g\":%" PRIu64, ev->p, ev->g);
	if (ev->gen)
		tb_printf(t, ",\"gen\":%" PRIu64 ",\"m\":%" PRId64, ev->gen, ev->m);
	if (ev->stack)
		tb_printf(t, ",\"stack\":%" PRIu64, ev->stack);
	tb_str(t, ",\"args\":{");
	for (unsigned i = 0; i < ev->nargs; i++) {
		if (ev->gen && is_id_arg(ev->argnames[i]))
			tb_printf(t, "%s\"%s\":%" PRId64, i ? "," : "", ev->argnames[i],
				  (int64_t)ev->args[i]);
		else
			tb_printf(t, "%s\"%s\":%" PRIu64, i ? "," : "", ev->argnames[i],
				  ev->args[i]);
	}
	tb_put(t, "}", 1);
	if (ev->nsargs) {
		tb_str(t, ",\"sargs\":{");
		for (unsigned i = 0; i < ev->nsargs; i++) {
			tb_printf(t, "%s\"%s\":", i ? "," : "", ev->sargnames[i]);
			tb_quoted(t, ev->sargs[i], ev->sarg_lens[i]);
		}
		tb_put(t, "}", 1);
	}
	const char *names[2];
	uint64_t ids[2];
	unsigned n = stacks_of(ev, names, ids);
	if (!t->o.stacks) {
		/* each stack's first frame, by the argument naming it */
		unsigned shown = 0;
		for (unsigned k = 0; k < n; k++) {
			const struct rtd_gotrace_frame *fr;
			if (!stack_of(t, ids[k], &fr))
				continue;
			tb_printf(t, "%s\"%s\":", shown++ ? "," : ",\"at\":{", names[k]);
			put_frame_json(t, &fr[0], true);
		}
		tb_str(t, shown ? "}}\n" : "}\n");
		return;
	}
	for (unsigned k = 0; k < n; k++) {
		const struct rtd_gotrace_frame *fr;
		size_t nf = stack_of(t, ids[k], &fr);
		tb_printf(t, "%s\"%s\":[", k ? "," : ",\"stacks\":{", names[k]);
		for (size_t i = 0; i < nf; i++)
			put_frame_json(t, &fr[i], i == 0);
		tb_put(t, "]", 1);
	}
	tb_str(t, n ? "}}\n" : "}\n");
}

static void print_dict_json(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev)
{
	tb_printf(t, "{\"off\":%" PRIu64 ",\"type\":\"%s\"", ev->off, ev->name);
	if (ev->type == (ev->gen ? RTD_GO2_EV_STRING : RTD_GO_EV_STRING)) {
		tb_printf(t, ",\"id\":%" PRIu64 ",\"str\":", ev->str_id);
		tb_quoted(t, ev->str, ev->str_len);
		tb_str(t, "}\n");
		return;
	}
	if (ev->type == (ev->gen ? RTD_GO2_EV_STACK : RTD_GO_EV_STACK)) {
		tb_printf(t, ",\"id\":%" PRIu64 ",\"frames\":[", ev->args[0]);
		for (size_t i = 0; i < ev->nframes; i++)
			put_frame_json(t, &ev->frames[i], i == 0);
		tb_str(t, "]}\n");
		return;
	}
	print_json_event(t, ev);
}

/* A String or Stack event as text. */
static void print_dict_text(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev)
{
	if (ev->type == (ev->gen ? RTD_GO2_EV_STRING : RTD_GO_EV_STRING)) {
		tb_printf(t, "String off=%" PRIu64 " id=%" PRIu64 " str=", ev->off, ev->str_id);
		tb_quoted(t, ev->str, ev->str_len);
		tb_put(t, "\n", 1);
		return;
	}
	tb_printf(t, "Stack off=%" PRIu64 " id=%" PRIu64 " frames=%zu\n", ev->off, ev->args[0],
		  ev->nframes);
	for (size_t i = 0; i < ev->nframes; i++) {
		const struct rtd_gotrace_frame *f = &ev->frames[i];
		tb_printf(t, "\t0x%" PRIx64 " %s %s:%" PRIu64 "\n", f->pc, f->fn, f->file, f->line);
	}
}

/* print_line() of the other formats and contexts (a call: the plain
 * ordered lines have theirs inline in rtd_gotrace_text_decoded()) */
static __attribute__((noinline)) void print_line_any(rtd_gotrace_text *t,
						     const struct rtd_gotrace_event *ev,
						     bool godebug, enum lctx x)
{
	struct lev v = lev_of(ev);
	print_line(t, &v, godebug, x);
}

int rtd_gotrace_text_event(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev)
{
	if (t->err)
		return t->err;
	int fmt = t->o.format;
	bool dict = ev->gen ? (ev->type == RTD_GO2_EV_STRING || ev->type == RTD_GO2_EV_STACK)
			    : (ev->type == RTD_GO_EV_STRING || ev->type == RTD_GO_EV_STACK);
	if (fmt == RTD_GOTRACE_TEXT_JSON)
		print_dict_json(t, ev);
	else if (dict)
		print_dict_text(t, ev);
	else {
		print_line_any(t, ev, fmt == RTD_GOTRACE_TEXT_GODEBUG,
			       !ev->gen ? L_OLD : t->o.ordered ? L_ORD2 : L_RAW2);
		if (t->o.stacks && (ev->stack || ev->gen))
			print_stacks(t, ev);
	}
	if (t->n >= TEXT_BUF)
		tb_flush(t);
	return t->err;
}

/*
 * The decoder's next event in ordered mode, without rtd_gotrace_dec_next()'s
 * dispatch (its tests are those of the state the decoder is in).
 */
static inline __attribute__((always_inline)) int ordered_next(rtd_gotrace_dec *d,
							      struct rtd_gotrace_event *ev)
{
	if (d->ord && !d->err)
		return v1_order_next(d, ev);
	if (d->v2 && d->header && !d->err)
		return v2_next_ordered(d, ev);
	return rtd_gotrace_dec_next(d, ev);
}

/* A plain line of an event handed out whole: 1 written, 0 not (go on). */
static inline __attribute__((always_inline)) void line_whole(rtd_gotrace_text *t,
							     const struct rtd_gotrace_event *ev,
							     enum lctx x)
{
	bool dict = ev->gen ? (ev->type == RTD_GO2_EV_STRING || ev->type == RTD_GO2_EV_STACK)
			    : (ev->type == RTD_GO_EV_STRING || ev->type == RTD_GO_EV_STACK);
	if ((ev->gen != 0) != (x == L_ORD2) || dict) { /* not this loop's common kind */
		rtd_gotrace_text_event(t, ev);
		return;
	}
	print_line_any(t, ev, false, x);
}

static __attribute__((noinline)) const struct v1_line *v1_line_make(rtd_gotrace_text *t,
								    unsigned type, unsigned a0)
{
	const struct v1_desc *desc = &v1_descs[type];
	struct v1_line *L = &t->v1_lines[type];
	bool ok = desc->nsargs <= 1 && type != RTD_GO_EV_GC_STW_START &&
		  type != RTD_GO_EV_CPU_SAMPLE && !v1_meta_type(type) &&
		  a0 + desc->nargs <= V1_EV_WIRE && desc->nargs <= RTD_GOTRACE_MAX_ARGS;
	ok = ok && (L->nlen = put_label(L->nm, desc->name, line_after[L_OLD])) != 0;
	bool named = false;
	for (unsigned i = 0; ok && i < desc->nargs; i++) {
		ok = (L->alen[i] = put_label(L->an[i], desc->args[i], "=")) != 0;
		named |= strcmp(desc->args[i], "stack") == 0;
	}
	L->nargs = (uint8_t)desc->nargs;
	L->stack = desc->stack && !named;
	L->sarg = desc->nsargs == 1;
	if (ok && L->sarg)
		ok = (L->slen = put_label(L->sn, desc->sargs[0], "=")) != 0;
	L->state = ok ? 1 : 2;
	return ok ? L : NULL;
}

/* The prepared line of @type (its arguments from @a0 on: one per
 * decoder), or NULL for an event built whole. */
static inline __attribute__((always_inline)) const struct v1_line *
v1_line_of(rtd_gotrace_text *t, unsigned type, unsigned a0)
{
	const struct v1_line *L = &t->v1_lines[type];
	if (__builtin_expect(L->state == 1, 1))
		return L;
	return L->state ? NULL : v1_line_make(t, type, a0);
}

/* Are the strings kept those of @d's table as it is? */
static inline bool sargs_valid(const rtd_gotrace_text *t, const rtd_gotrace_dec *d)
{
	return t->sargs && t->sarg_dec == d && t->sarg_strbytes == d->strbytes &&
	       t->sarg_nstr == d->strings.count;
}

/* The kept quoted text of string @id, or NULL. */
static inline const struct sarg_text *sarg_kept(rtd_gotrace_text *t, const rtd_gotrace_dec *d,
						uint64_t id)
{
	if (!sargs_valid(t, d))
		return NULL;
	const struct sarg_text *st = &t->sargs[(id ^ id >> 6) & (SARG_CACHE - 1)];
	return st->len && st->id == id ? st : NULL;
}

/* String @id (@s, @n bytes) quoted at @p, and kept for the next line that
 * names it when short. */
static __attribute__((noinline)) char *put_v1_sarg(rtd_gotrace_text *t,
						   const rtd_gotrace_dec *d, char *p,
						   uint64_t id, const char *s, size_t n)
{
	char *q = quote_buf(p, s, n);
	if (!sargs_valid(t, d)) {
		if (!t->sargs && !(t->sargs = malloc(SARG_CACHE * sizeof(*t->sargs))))
			return q;
		for (size_t k = 0; k < SARG_CACHE; k++)
			t->sargs[k].len = 0;
		t->sarg_dec = d;
		t->sarg_strbytes = d->strbytes;
		t->sarg_nstr = d->strings.count;
	}
	struct sarg_text *st = &t->sargs[(id ^ id >> 6) & (SARG_CACHE - 1)];
	if ((size_t)(q - p) <= SARG_TEXT) {
		st->id = id;
		st->len = (uint32_t)(q - p);
		memcpy(st->s, p, st->len);
	}
	return q;
}

/* An old-format line written from the ordering's copy @e of its event,
 * as print_line() writes it from v1_emit()'s event. */
static inline __attribute__((always_inline)) void print_v1(rtd_gotrace_text *t,
							   const rtd_gotrace_dec *d,
							   const struct v1_ev *e,
							   const struct v1_line *L)
{
	unsigned a0 = e->argoff;
	const uint64_t *args = e->w + a0;
	bool stk = v1_descs[e->type].stack && e->nw > a0;
	/* the stack's slot when it is among the arguments (a GoUnblockLocal's,
	 * with no sequence): printed as 0 there, as v1_emit() clears it (not
	 * by a copy: reading back its words would wait on the wide stores) */
	unsigned zs = stk ? e->nw - 1u - a0 : UINT_MAX;
	char *line = tb_room(t, LINE_ROOM);
	char *p = put_ts(t, line, e->ts);
	memcpy(p, L->nm, sizeof(L->nm));
	p = put_i64(p + L->nlen, e->p);
	memcpy(p, " g=", 3);
	p = put_u64(p + 3, e->g);
	memcpy(p, " off=", 5);
	p = put_u64(p + 5, e->off);
	for (unsigned i = 0; i < L->nargs; i++) {
		memcpy(p, L->an[i], sizeof(L->an[i]));
		p = put_u64(p + L->alen[i], i == zs ? 0 : args[i]);
	}
	uint64_t stack = stk ? e->w[e->nw - 1] : 0;
	if (L->stack && stack) {
		memcpy(p, " stack=", 7);
		p = put_u64(p + 7, stack);
		p = put_first_frame_as(t, p, stack, true);
	}
	if (L->sarg) {
		uint64_t id = a0 + 2 < V1_EV_WIRE && zs != 2 ? args[2] : 0;
		size_t room = TEXT_BUF + LINE_ROOM - t->n - (size_t)(p - line) - 2;
		const struct sarg_text *st = sarg_kept(t, d, id);
		if (st && sizeof(L->sn) + SARG_TEXT <= room) {
			memcpy(p, L->sn, sizeof(L->sn));
			p += L->slen;
			memcpy(p, st->s, SARG_TEXT);
			p += st->len;
		} else {
			size_t n;
			const char *s = gtd_str_get(d, id, &n);
			if (!s)
				s = "", n = 0;
			if (sizeof(L->sn) + 6 * n + 2 > room) { /* a long one, piece by piece */
				t->n += (size_t)(p - line);
				tb_put(t, L->sn, L->slen);
				tb_quoted(t, s, n);
				tb_put(t, "\n", 1);
				return;
			}
			memcpy(p, L->sn, sizeof(L->sn));
			p = put_v1_sarg(t, d, p + L->slen, id, s, n);
		}
	}
	*p++ = '\n';
	t->n += (size_t)(p - line);
}

/* Plain ordered lines of an old-format trace, each from the ordering's
 * copy of its event. */
static int decoded_v1(rtd_gotrace_text *t, rtd_gotrace_dec *d, uint64_t max, uint64_t *n)
{
	struct rtd_gotrace_event *ev = &t->ev;
	uint64_t k = 0;
	int rc = 1;
	while (k < max) {
		struct v1_ev *e;
		const struct v1_line *L;
		if (!d->ord || d->err) {
			if ((rc = rtd_gotrace_dec_next(d, ev)) <= 0)
				break;
			line_whole(t, ev, L_OLD);
		} else if ((rc = v1_order_take(d, &e)) <= 0) {
			break;
		} else if (e->nw <= V1_EV_WIRE && (L = v1_line_of(t, e->type, e->argoff))) {
			print_v1(t, d, e, L);
		} else if ((rc = v1_emit(d, e, ev)) < 0) {
			break;
		} else {
			line_whole(t, ev, L_OLD);
		}
		k++;
		if (t->n >= TEXT_BUF)
			tb_flush(t);
	}
	*n += k;
	return rc > 0 ? 1 : rc;
}

/* Plain ordered lines of a Go 1.22+ trace, each from the ordering's queue
 * entry (the decoder's compact mode) as v2_fill_out() reads it. */
static int decoded_v2(rtd_gotrace_text *t, rtd_gotrace_dec *d, uint64_t max, uint64_t *n)
{
	struct rtd_gotrace_event *ev = &t->ev;
	uint64_t k = 0;
	int rc = 1;
	v2_set_compact(d, true);
	while (k < max && (rc = ordered_next(d, ev)) > 0) {
		k++;
		const struct v2_out *o = v2_compact_take(d);
		if (!o) { /* a Sync, or the decoder after an error: whole */
			line_whole(t, ev, L_ORD2);
		} else if (o->type == RTD_GO2_EV_USER_TASK_END || o->type == RTD_GO2_EV_STRING ||
			   o->type == RTD_GO2_EV_STACK) {
			v2_fill_out(d, NULL, o, o->args, ev->ts, ev->gen, ev);
			line_whole(t, ev, L_ORD2);
		} else {
			const struct v2_spec *sp = &v2_specs[o->type];
			unsigned skip = (sp->flags & V2_TIMED) ? 1 : 0;
			unsigned na = o->nargs > skip ? o->nargs - skip : 0;
			int si = sp->stack_arg[0];
			struct lev v = {.ts = ev->ts, .p = o->p, .off = o->off, .gen = ev->gen,
					.m = o->m == V2_NO_THREAD ? -1 : (int64_t)o->m,
					.g = o->g == UINT64_MAX ? 0 : o->g,
					.stack = si >= 0 && (unsigned)si < o->nargs ? o->args[si] : 0,
					.name = sp->name, .args = o->args + skip,
					.argnames = sp->args ? sp->args + skip : NULL,
					.type = o->type,
					.nargs = na < RTD_GOTRACE_MAX_ARGS ? na : RTD_GOTRACE_MAX_ARGS};
			if (sp->str_arg[0] >= 0 || sp->str_arg[1] >= 0) {
				v2_out_sargs(d, o, ev);
				v.nsargs = ev->nsargs;
				v.sargs = ev->sargs;
				v.sarg_lens = ev->sarg_lens;
			}
			v.sargnames = sp->sargs;
			print_line(t, &v, false, L_ORD2);
		}
		if (t->n >= TEXT_BUF)
			tb_flush(t);
	}
	v2_set_compact(d, false);
	*n += k;
	return rc > 0 ? 1 : rc;
}

int rtd_gotrace_text_decoded(rtd_gotrace_text *t, rtd_gotrace_dec *d, uint64_t max,
			     uint64_t *n)
{
	if (!d || !n)
		return -RTD_E_INVAL;
	if (t->err)
		return t->err;
	int rc = 1;
	if (d == t->o.dec && d->mode == RTD_GOTRACE_ORDERED && t->o.ordered &&
	    t->o.format == RTD_GOTRACE_TEXT_PLAIN && !t->o.stacks) {
		rc = d->v2 ? decoded_v2(t, d, max, n) : decoded_v1(t, d, max, n);
	} else { /* event by event */
		uint64_t k = 0;
		while (k < max && (rc = rtd_gotrace_dec_next(d, &t->ev)) > 0) {
			if (t->o.format == RTD_GOTRACE_TEXT_GODEBUG &&
			    rtd_gotrace_event_is_meta(&t->ev))
				continue;
			k++;
			rtd_gotrace_text_event(t, &t->ev);
		}
		*n += k;
		rc = rc > 0 ? 1 : rc;
	}
	return t->err ? t->err : rc;
}

int rtd_gotrace_text_flush(rtd_gotrace_text *t)
{
	return tb_flush(t);
}

rtd_gotrace_text *rtd_gotrace_text_new(const struct rtd_gotrace_text_opts *opts)
{
	struct rtd_gotrace_text_opts o;
	if (rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_gotrace_text_opts, ctx)) ||
	    !o.write || o.format < RTD_GOTRACE_TEXT_PLAIN || o.format > RTD_GOTRACE_TEXT_GODEBUG)
		return NULL;
	rtd_gotrace_text *t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	memset(t, 0, offsetof(struct rtd_gotrace_text, b));
	t->o = o;
	dig4_init();
	return t;
}

void rtd_gotrace_text_free(rtd_gotrace_text *t)
{
	if (!t)
		return;
	free(t->frames);
	free(t->sargs);
	free(t);
}

bool rtd_gotrace_event_is_meta(const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (ev->gen) /* new format: batches, tables, frequency, sync */
		return (t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
		       t >= RTD_GO2_EV_EXPERIMENTAL_BATCH;
	return t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY ||
	       t == RTD_GO_EV_STRING || t == RTD_GO_EV_STACK ||
	       t == RTD_GO_EV_TIMER_GOROUTINE;
}
