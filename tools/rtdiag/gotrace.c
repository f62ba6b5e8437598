/* SPDX-License-Identifier: MIT */
/* gotrace.c - 'rtdiag gotrace': cat, grep, stats, text2bin, bin2text. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "gotrace_analyze.h"
#include "gotrace_cli.h"
#include "opt.h"
#include "rtdiag/format.h"


struct gt_in {
	const char *path;
	FILE *f;
	rtd_gotrace_dec *d;
	uint64_t bytes;
	bool eof;
	int read_err;
	uint8_t buf[1 << 16];
};

int64_t gt_read_at(void *buf, size_t len, uint64_t off, void *ctx)
{
	struct gt_in *in = ctx;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fileno(in->f), (char *)buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int64_t)done;
}

/*
 * RTDIAG_GO_MAP_START=S[,S...] (test aid): order equal-time events of
 * different threads as one run of Go 1.22/1.23 did, its random map walk
 * starting at slot S of the first generation, the next S for the next one
 * (rtd_gotrace_dec_set_go_map_starts). The comparison tests use it to
 * find the run of go tool trace they compare with.
 */
static int gt_go_map_env(rtd_gotrace_dec *d, const char *path)
{
	const char *e = getenv("RTDIAG_GO_MAP_START");
	if (!e || !*e)
		return 0;
	unsigned s[RTD_GOTRACE_MAX_MAP_STARTS];
	size_t n = 0;
	for (const char *p = e; *p;) {
		if (*p < '0' || *p > '7' || (p[1] && p[1] != ',') || n == RTD_GOTRACE_MAX_MAP_STARTS) {
			cli_fail("%s: RTDIAG_GO_MAP_START=%s: want up to %d slots 0-7, separated by commas",
				 path, e, RTD_GOTRACE_MAX_MAP_STARTS);
			return -1;
		}
		s[n++] = (unsigned)(*p - '0');
		p += p[1] ? 2 : 1;
	}
	return rtd_gotrace_dec_set_go_map_starts(d, s, n);
}

/* The 16-byte header, checked before anything is printed (what is not a
 * Go trace is named, not tabled as "go 0.0"), then fed so that the decoder
 * knows the version before any event is ordered. */
static int read_header(struct gt_in *in)
{
	uint8_t h[16];
	size_t n = fread(h, 1, sizeof(h), in->f);
	in->bytes += n; /* a short read: the next fread sees the end again */
	int ver = rtd_gotrace_header_version(h, n);
	if (ver <= 0) {
		struct rtd_input_info info;
		enum rtd_input_format f = rtd_format_detect(h, n, n < sizeof(h), &info);
		if (f != RTD_INPUT_UNKNOWN)
			cli_fail("%s: %s, not a Go execution trace (rtdiag convert "
				 "reads it)", in->path, rtd_input_format_name(f));
		else if (ver == -RTD_E_UNSUPPORTED || n < sizeof(h))
			cli_fail("%s: not a Go execution trace: %s", in->path, info.why);
		else
			cli_fail("%s: not a Go execution trace (it does not start "
				 "\"go 1.N trace\")", in->path);
		gt_close(in);
		return -1;
	}
	struct rtd_gotrace_event ev;
	if (rtd_gotrace_dec_feed(in->d, h, n) < 0 || rtd_gotrace_dec_next(in->d, &ev) < 0) {
		gt_fail(in, -RTD_E_FORMAT);
		gt_close(in);
		return -1;
	}
	return 0;
}

int gt_open(struct gt_in *in, const char *path, enum rtd_gotrace_mode mode,
	    unsigned flags)
{
	memset(in, 0, sizeof(*in) - sizeof(in->buf));
	in->path = path;
	in->f = cli_open_in(path);
	if (!in->f)
		return -1;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode, .flags = flags};
	in->d = rtd_gotrace_dec_new(&o);
	if (!in->d) {
		cli_close_in(in->f);
		cli_fail("%s: out of memory", path);
		return -1;
	}
	if (mode == RTD_GOTRACE_ORDERED && gt_go_map_env(in->d, path) < 0) {
		rtd_gotrace_dec_free(in->d);
		cli_close_in(in->f);
		return -1;
	}
	/* Ordered mode (and raw mode resolving names ahead) reads a regular
	 * file again rather than keeping it; a pipe is kept in memory. */
	struct stat st;
	if ((mode == RTD_GOTRACE_ORDERED || (flags & RTD_GOTRACE_RESOLVE)) &&
	    fstat(fileno(in->f), &st) == 0 && S_ISREG(st.st_mode))
		rtd_gotrace_dec_set_source(in->d, gt_read_at, in);
	return read_header(in);
}

/* Is the input a regular file (which can be read again)? */
bool gt_in_is_file(const struct gt_in *in)
{
	struct stat st;
	return fstat(fileno(in->f), &st) == 0 && S_ISREG(st.st_mode);
}

/* Feed just the 16-byte header, so that the decoder knows the version
 * before any event is ordered. */
int gt_prime_header(struct gt_in *in)
{
	/* gt_open() has read it */
	return rtd_gotrace_dec_version(in->d) > 0 ? 0 : -1;
}

size_t gt_in_size(void)
{
	return sizeof(struct gt_in);
}

rtd_gotrace_dec *gt_dec(struct gt_in *in)
{
	return in->d;
}

void gt_close(struct gt_in *in)
{
	rtd_gotrace_dec_free(in->d);
	cli_close_in(in->f);
}

/* Report a decoder error as "rtdiag: FILE: message". */
int gt_fail(struct gt_in *in, int rc)
{
	const char *msg = rtd_gotrace_dec_error(in->d, NULL);
	return cli_fail("%s: %s", in->path, *msg ? msg : rtd_strerror(rc));
}

/* More input for the decoder: 1 fed (or finished at the end of the input),
 * 0 at the end already, <0 on an error not yet reported (see
 * gt_next_quiet()). */
static int gt_feed(struct gt_in *in)
{
	if (in->eof)
		return 0;
	size_t n = fread(in->buf, 1, sizeof(in->buf), in->f);
	if (n == 0) {
		if (ferror(in->f)) {
			in->read_err = errno ? errno : EIO;
			return -in->read_err;
		}
		in->eof = true;
		int rc = rtd_gotrace_dec_finish(in->d);
		return rc < 0 ? rc : 1;
	}
	in->bytes += n;
	if (cli_progress_enabled() && (in->bytes & ((1u << 24) - 1)) < n) {
		char b[32];
		cli_progress("%s: %s read", in->path,
			     cli_bytes((double)in->bytes, b, sizeof(b)));
	}
	int rc = rtd_gotrace_dec_feed(in->d, in->buf, n);
	return rc < 0 ? rc : 1;
}

/* Next event: 1, 0 at the end, <0 on an error not yet reported (for
 * gt_report(); a failed read leaves its errno in read_err). */
int gt_next_quiet(struct gt_in *in, struct rtd_gotrace_event *ev)
{
	for (;;) {
		int rc = rtd_gotrace_dec_next(in->d, ev);
		if (rc != 0 || in->eof)
			return rc;
		if ((rc = gt_feed(in)) < 0)
			return rc;
	}
}

/* Report what gt_next_quiet() returned: rc. */
int gt_report(struct gt_in *in, int rc)
{
	if (in->read_err)
		cli_fail("%s: read: %s", in->path, strerror(in->read_err));
	else
		gt_fail(in, rc);
	return rc;
}

int gt_exit(struct gt_in *in, int rc, uint64_t delivered)
{
	if (rc >= 0)
		return CLI_OK;
	bool input = in->read_err || *rtd_gotrace_dec_error(in->d, NULL);
	return input && delivered && rc != -ENOMEM ? CLI_PARTIAL : CLI_FAIL;
}

/* Next event: 1, 0 at the end, <0 after reporting the error. */
int gt_next(struct gt_in *in, struct rtd_gotrace_event *ev)
{
	int rc = gt_next_quiet(in, ev);
	return rc < 0 ? gt_report(in, rc) : rc;
}

/* A JSON string literal; bytes that are not valid UTF-8 become \u00XX. */
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
	for (size_t i = 0, used; i < n; i += used) {
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

/* A JSON string literal; bytes that are not valid UTF-8 become \u00XX. */
void gt_put_quoted(FILE *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char piece[8];
	fputc('"', o);
	for (size_t i = 0, used; i < n; i += used)
		fwrite(piece, 1, quote_step(p, i, n, piece, &used), o);
	fputc('"', o);
}
#define put_quoted gt_put_quoted

/* Decimal without printf: the event lines are the hot path of 'cat'.
 * 32-bit arithmetic for each group of up to 8 digits, 2 per table look-up. */
static const char d2[201] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

static inline char *put2(char *p, uint32_t v) /* v < 100, two digits */
{
	memcpy(p, d2 + 2 * v, 2);
	return p + 2;
}

static inline char *put4(char *p, uint32_t v) /* v < 10000, four digits */
{
	return put2(put2(p, v / 100), v % 100);
}

static inline char *put8(char *p, uint32_t v) /* v < 1e8, eight digits */
{
	return put4(put4(p, v / 10000), v % 10000);
}

static char *put_u32small(char *p, uint32_t v) /* v < 1e8, no padding */
{
	if (v < 100) {
		if (v < 10) {
			*p = (char)('0' + v);
			return p + 1;
		}
		return put2(p, v);
	}
	if (v < 10000) {
		if (v < 1000) {
			*p = (char)('0' + v / 100);
			return put2(p + 1, v % 100);
		}
		return put4(p, v);
	}
	return put4(put_u32small(p, v / 10000), v % 10000);
}

static char *put_u64(char *p, uint64_t v)
{
	if (v < 100000000)
		return put_u32small(p, (uint32_t)v);
	if (v < 10000000000000000ull) {
		p = put_u32small(p, (uint32_t)(v / 100000000));
		return put8(p, (uint32_t)(v % 100000000));
	}
	p = put_u32small(p, (uint32_t)(v / 10000000000000000ull));
	v %= 10000000000000000ull;
	p = put8(p, (uint32_t)(v / 100000000));
	return put8(p, (uint32_t)(v % 100000000));
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
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

/* Event lines are built straight into one buffer, written out in 64 KiB
 * pieces (stdio's per-call cost was a fifth of 'cat'). */
static struct {
	FILE *f;
	size_t n;
	char b[1 << 16];
} lb;

void gt_flush(void)
{
	if (!lb.n)
		return;
	/* straight to the file: stdio would copy the 64 KiB again */
	size_t done = 0;
	if (fflush(lb.f) == 0) {
		while (done < lb.n) {
			ssize_t k = write(fileno(lb.f), lb.b + done, lb.n - done);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			done += (size_t)k;
		}
	}
	if (done < lb.n) /* let stdio see (and report) the failure */
		fwrite_unlocked(lb.b + done, 1, lb.n - done, lb.f);
	lb.n = 0;
}

/* Room for one line (an event line without strings is < 1 KiB). */
static char *lb_line(FILE *o)
{
	if (lb.f != o || lb.n > sizeof(lb.b) - 2048) {
		gt_flush();
		lb.f = o;
	}
	return lb.b + lb.n;
}

/*
 * Event lines. Old format (go-debug: Go's Event.String(); text: the same
 * plus the stack and quoted strings): "TS Name p=P g=G off=O args".
 * New format, ordered: "TS Name M=m P=p G=g off=O args strings", the
 * event's context in capitals as Go's -d=1 prints it (an argument may be
 * a g, p or m of its own: GoStart's g is the goroutine it starts); raw
 * mode knows no context but the batch's thread (on its EventBatch line):
 * "TS Name off=O args strings", Go's text form with time and offset. A
 * thread, proc or goroutine argument (m, p, g) is printed signed (-1: none). Strings are named by
 * their argument without "_string", which names the id.
 */
enum lctx { L_OLD, L_RAW2, L_ORD2, L_NCTX };
/* What follows the name: the first context field */
static const char *const line_after[L_NCTX] = {[L_OLD] = " p=", [L_ORD2] = " M=",
					       [L_RAW2] = " off="};

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
	uint8_t sgn; /* bit i: argument i is a thread (signed) */
	uint8_t stk; /* bit i: argument i is a stack id (is_stack_arg) */
	uint8_t stack; /* bit i: argument i is named "stack" */
	bool ok;
	char nm[32], an[RTD_GOTRACE_MAX_ARGS][32];
};

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
static struct line_pre *line_pre(const struct rtd_gotrace_event *ev, enum lctx x)
{
	static struct line_pre cache[L_NCTX][256];
	struct line_pre *c = &cache[x][ev->type & 255];
	if (c->name == ev->name && c->argnames == ev->argnames)
		return c->ok ? c : NULL;
	c->name = ev->name;
	c->argnames = ev->argnames;
	size_t n = strlen(ev->name), k = strlen(line_after[x]);
	c->ok = n + 1 + k <= sizeof(c->nm);
	if (c->ok) {
		memset(c->nm, 0, sizeof(c->nm));
		c->nm[0] = ' ';
		memcpy(c->nm + 1, ev->name, n);
		memcpy(c->nm + 1 + n, line_after[x], k);
		c->nlen = (uint8_t)(n + 1 + k);
	}
	memset(c->alen, 0, sizeof(c->alen));
	c->sgn = c->stk = c->stack = 0;
	for (unsigned i = 0; c->ok && i < ev->nargs && i < RTD_GOTRACE_MAX_ARGS; i++) {
		size_t k = strlen(ev->argnames[i]);
		if (k + 2 > sizeof(c->an[i])) {
			c->ok = false;
			break;
		}
		memset(c->an[i], 0, sizeof(c->an[i]));
		c->an[i][0] = ' ';
		memcpy(c->an[i] + 1, ev->argnames[i], k);
		c->an[i][k + 1] = '=';
		c->alen[i] = (uint8_t)(k + 2);
		if (x != L_OLD && is_id_arg(ev->argnames[i]))
			c->sgn |= (uint8_t)(1u << i);
		if (is_stack_arg(ev->argnames[i]))
			c->stk |= (uint8_t)(1u << i);
		if (strcmp(ev->argnames[i], "stack") == 0)
			c->stack |= (uint8_t)(1u << i);
	}
	return c->ok ? c : NULL;
}

/* The context part of a line after the name, as line_pre's prefix has
 * begun it. */
static char *put_context(char *p, const struct rtd_gotrace_event *ev, enum lctx x,
			 const struct line_pre *c)
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

/* A stack's first frame after its id, ":FUNC@FILE:LINE" (the id alone
 * when the stack is not known yet: raw mode meets it later). Names and
 * paths are cut at 300 bytes: a line has 2 KB before its strings. */
#define FRAME_TEXT_MAX 300
static char *put_first_frame(char *p, const struct gt_pr *pr, uint64_t id)
{
	const struct rtd_gotrace_frame *fr;
	if (!id || !pr->d || !rtd_gotrace_dec_stack(pr->d, id, &fr))
		return p;
	*p++ = ':';
	p = put_str_max(p, fr[0].fn, FRAME_TEXT_MAX);
	*p++ = '@';
	p = put_str_max(p, fr[0].file, FRAME_TEXT_MAX);
	*p++ = ':';
	return put_u64(p, fr[0].line);
}

static void print_line(FILE *o, const struct gt_pr *pr,
		       const struct rtd_gotrace_event *ev, bool godebug,
		       enum lctx x)
{
	/* without --stacks, each stack named by its first frame */
	bool frames = !godebug && !pr->stacks;
	char *line = lb_line(o);
	char *p = line;
	const struct line_pre *c = line_pre(ev, x);
	p = put_i64(p, ev->ts);
	p = put_context(p, ev, x, c);
	bool named = false;
	for (unsigned i = 0; i < ev->nargs && i < RTD_GOTRACE_MAX_ARGS; i++) {
		bool sgn, stk, stack;
		if (c && c->alen[i]) { /* alen is 0 past what was prepared */
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
			p = put_first_frame(p, pr, ev->args[i]);
	}
	if (!godebug && ev->stack && !named) {
		p = put_str(p, " stack=");
		p = put_u64(p, ev->stack);
		if (frames)
			p = put_first_frame(p, pr, ev->stack);
	}
	/* strings too, when they fit (a log message may be 1 MB) */
	size_t room = sizeof(lb.b) - lb.n - (size_t)(p - line) - 2;
	bool fits = true;
	for (unsigned i = 0; i < ev->nsargs && fits; i++) {
		size_t need = strlen(ev->sargnames[i]) + 2 +
			      (godebug ? ev->sarg_lens[i] : 6 * ev->sarg_lens[i] + 2);
		fits = need <= room;
		room -= fits ? need : 0;
	}
	if (fits) { /* the common case */
		for (unsigned i = 0; i < ev->nsargs; i++) {
			*p++ = ' ';
			p = put_str(p, ev->sargnames[i]);
			*p++ = '=';
			if (godebug) {
				memcpy(p, ev->sargs[i], ev->sarg_lens[i]);
				p += ev->sarg_lens[i];
			} else {
				p = quote_buf(p, ev->sargs[i], ev->sarg_lens[i]);
			}
		}
		*p++ = '\n';
		lb.n += (size_t)(p - line);
		return;
	}
	lb.n += (size_t)(p - line);
	gt_flush();
	for (unsigned i = 0; i < ev->nsargs; i++) {
		putc_unlocked(' ', o);
		fputs_unlocked(ev->sargnames[i], o);
		putc_unlocked('=', o);
		if (godebug)
			fwrite_unlocked(ev->sargs[i], 1, ev->sarg_lens[i], o);
		else
			put_quoted(o, ev->sargs[i], ev->sarg_lens[i]);
	}
	putc_unlocked('\n', o);
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

static void put_frame_json(FILE *o, const struct rtd_gotrace_frame *f, bool first)
{
	fprintf(o, "%s{\"pc\":%" PRIu64 ",\"fn\":", first ? "" : ",", f->pc);
	put_quoted(o, f->fn, strlen(f->fn));
	fputs(",\"file\":", o);
	put_quoted(o, f->file, strlen(f->file));
	fprintf(o, ",\"line\":%" PRIu64 "}", f->line);
}

/* --stacks, text: under the line, each stack the event names. */
static void print_stacks(FILE *o, const struct gt_pr *pr, const struct rtd_gotrace_event *ev)
{
	const char *names[2];
	uint64_t ids[2];
	unsigned n = stacks_of(ev, names, ids);
	for (unsigned k = 0; k < n; k++) {
		const struct rtd_gotrace_frame *fr;
		size_t nf = rtd_gotrace_dec_stack(pr->d, ids[k], &fr);
		fprintf(o, "\t%s=%" PRIu64 ":%s\n", names[k], ids[k], nf ? "" : " (not in the trace)");
		for (size_t i = 0; i < nf; i++)
			fprintf(o, "\t\t0x%" PRIx64 " %s %s:%" PRIu64 "\n", fr[i].pc, fr[i].fn,
				fr[i].file, fr[i].line);
	}
}

/* JSON of an event (not a String or Stack). */
static void print_json_event(FILE *o, const struct gt_pr *pr, const struct rtd_gotrace_event *ev)
{
	/* the new format's raw mode knows no P or G, and a thread only
	 * for the events in a thread's batch (CPU samples name theirs) */
	bool ctx = !ev->gen || pr->ordered || ev->type == RTD_GO2_EV_CPU_SAMPLE;
	fprintf(o, ",\"ts\":%" PRId64, ev->ts);
	if (ctx)
		fprintf(o, ",\"p\":%" PRId64 ",\"g\":%" PRIu64, ev->p, ev->g);
	if (ev->gen)
		fprintf(o, ",\"gen\":%" PRIu64 ",\"m\":%" PRId64, ev->gen, ev->m);
	if (ev->stack)
		fprintf(o, ",\"stack\":%" PRIu64, ev->stack);
	fputs(",\"args\":{", o);
	for (unsigned i = 0; i < ev->nargs; i++) {
		if (ev->gen && is_id_arg(ev->argnames[i]))
			fprintf(o, "%s\"%s\":%" PRId64, i ? "," : "", ev->argnames[i],
				(int64_t)ev->args[i]);
		else
			fprintf(o, "%s\"%s\":%" PRIu64, i ? "," : "", ev->argnames[i], ev->args[i]);
	}
	fputc('}', o);
	if (ev->nsargs) {
		fputs(",\"sargs\":{", o);
		for (unsigned i = 0; i < ev->nsargs; i++) {
			fprintf(o, "%s\"%s\":", i ? "," : "", ev->sargnames[i]);
			put_quoted(o, ev->sargs[i], ev->sarg_lens[i]);
		}
		fputc('}', o);
	}
	const char *names[2];
	uint64_t ids[2];
	unsigned n = stacks_of(ev, names, ids);
	if (!pr->stacks) {
		/* each stack's first frame, by the argument naming it */
		unsigned shown = 0;
		for (unsigned k = 0; k < n; k++) {
			const struct rtd_gotrace_frame *fr;
			if (!pr->d || !rtd_gotrace_dec_stack(pr->d, ids[k], &fr))
				continue;
			fprintf(o, "%s\"%s\":", shown++ ? "," : ",\"at\":{", names[k]);
			put_frame_json(o, &fr[0], true);
		}
		fputs(shown ? "}}\n" : "}\n", o);
		return;
	}
	for (unsigned k = 0; k < n; k++) {
		const struct rtd_gotrace_frame *fr;
		size_t nf = rtd_gotrace_dec_stack(pr->d, ids[k], &fr);
		fprintf(o, "%s\"%s\":[", k ? "," : ",\"stacks\":{", names[k]);
		for (size_t i = 0; i < nf; i++)
			put_frame_json(o, &fr[i], i == 0);
		fputc(']', o);
	}
	fputs(n ? "}}\n" : "}\n", o);
}

void gt_print(FILE *o, const struct gt_pr *pr, const struct rtd_gotrace_event *ev)
{
	enum gt_format fmt = pr->fmt;
	bool dict = ev->gen ? (ev->type == RTD_GO2_EV_STRING || ev->type == RTD_GO2_EV_STACK)
			    : (ev->type == RTD_GO_EV_STRING || ev->type == RTD_GO_EV_STACK);
	if (fmt != GT_JSON && !dict) {
		print_line(o, pr, ev, fmt == GT_GODEBUG,
			   !ev->gen ? L_OLD : pr->ordered ? L_ORD2 : L_RAW2);
		if (pr->stacks && (ev->stack || ev->gen)) {
			gt_flush();
			print_stacks(o, pr, ev);
		}
		return;
	}
	gt_flush();
	if (fmt == GT_JSON) {
		fprintf(o, "{\"off\":%" PRIu64 ",\"type\":\"%s\"", ev->off, ev->name);
		if (ev->type == (ev->gen ? RTD_GO2_EV_STRING : RTD_GO_EV_STRING)) {
			fprintf(o, ",\"id\":%" PRIu64 ",\"str\":", ev->str_id);
			put_quoted(o, ev->str, ev->str_len);
			fputs("}\n", o);
			return;
		}
		if (ev->type == (ev->gen ? RTD_GO2_EV_STACK : RTD_GO_EV_STACK)) {
			fprintf(o, ",\"id\":%" PRIu64 ",\"frames\":[", ev->args[0]);
			for (size_t i = 0; i < ev->nframes; i++)
				put_frame_json(o, &ev->frames[i], i == 0);
			fputs("]}\n", o);
			return;
		}
		print_json_event(o, pr, ev);
		return;
	}
	if (ev->type == (ev->gen ? RTD_GO2_EV_STRING : RTD_GO_EV_STRING)) {
		fprintf(o, "String off=%" PRIu64 " id=%" PRIu64 " str=", ev->off, ev->str_id);
		put_quoted(o, ev->str, ev->str_len);
		fputc('\n', o);
		return;
	}
	fprintf(o, "Stack off=%" PRIu64 " id=%" PRIu64 " frames=%zu\n", ev->off, ev->args[0],
		ev->nframes);
	for (size_t i = 0; i < ev->nframes; i++) {
		const struct rtd_gotrace_frame *f = &ev->frames[i];
		fprintf(o, "\t0x%" PRIx64 " %s %s:%" PRIu64 "\n", f->pc, f->fn, f->file, f->line);
	}
}

bool gt_is_meta(const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (ev->gen) /* new format: batches, tables, frequency, sync */
		return (t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
		       t >= RTD_GO2_EV_EXPERIMENTAL_BATCH;
	return t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY ||
	       t == RTD_GO_EV_STRING || t == RTD_GO_EV_STACK ||
	       t == RTD_GO_EV_TIMER_GOROUTINE;
}
#define is_meta(t) gt_is_meta(&ev)

/* The pipe's source: the input's events, errors reported by the caller. */
static int pipe_source(void *ctx, struct rtd_gotrace_event *ev)
{
	return gt_next_quiet(ctx, ev);
}

enum { CAT_ORDERED = 1, CAT_STACKS, CAT_COUNT, CAT_FORMAT, CAT_MAP_START, CAT_OUT };

static const struct cli_opt cat_opts[] = {
	{CAT_ORDERED, "ordered", 0, CLI_ARG_NONE, 0, NULL,
	 "Go's global order, after Go's validation (go tool trace -d, -d=1)", 0, 0},
	{CAT_STACKS, "stacks", 0, CLI_ARG_NONE, 0, NULL,
	 "under each event, all the frames (function, file:line) of each stack it names (without: its first frame after stack=ID:)", 0, 0},
	{CAT_COUNT, "max-events", 0, CLI_ARG_INT, 0, "N", "stop after N events", 0, 1e18},
	CLI_OLD(CAT_COUNT, "count", 'n', CLI_ARG_INT, 0, "N",
		"--max-events N (-n is --name, --count a flag)", 0, 1e18),
	{CAT_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0,
	 "text|json|go-debug|perfetto|chrome-json",
	 "text (default), JSON Lines, what Go 1.19's 'go tool trace -d' prints, or "
	 "a timeline of goroutines, Ps, Ms, GC, tasks and regions (Perfetto "
	 "protobuf, Chrome JSON; also from -o's extension)", 0, 0},
	{CAT_MAP_START, "go-map-start", 0, CLI_ARG_INT, 0, "S",
	 "with --ordered, Go 1.22+: order equal-time events of different threads as "
	 "Go 1.22/1.23 do when their random map walk starts at slot S (default 0: "
	 "golang/exp's and Go 1.24+'s order)", 0, 7},
	{CAT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "a timeline to FILE (.perfetto-trace/.pftrace, .json), replaced only "
	 "when written", 0, 0},
	{0},
};

static int cmd_cat(int argc, char **argv);

static const struct cli_cmd cat_def = {
	"gotrace cat", "FILE|-",
	"Print the events of a Go execution trace.\n"
	"Raw mode (default): file order, streaming, strings and stacks included (their\n"
	"names read ahead). --ordered: Go's order, as go tool trace -d (-d=1) sees it.",
	cat_opts, 1, 1, 0, cmd_cat,
	"Go 1.22+ lines: 'TIME Name M= P= G= off= args' ordered (the event's thread,\n"
	"P and goroutine, as go tool trace -d=1 names them), and 'TIME Name off= args'\n"
	"raw (Go's text form: the thread is on the batch line).\n"
	"Threads: ordered Go 1.5-1.21 traces are decoded on a second thread while\n"
	"this one prints. A timeline (--format perfetto|chrome-json, -o x.pftrace)\n"
	"of a Go 1.22+ trace is decoded on a second thread while this one draws,\n"
	"when a core is free (the 1-minute load average leaves one idle).\n"
	"RTDIAG_THREADS=1 in the environment keeps either to one thread;\n"
	"RTDIAG_THREADS=2 makes the timeline use two whatever the load.\n"};

struct cat_opts {
	const char *path, *out;
	bool timeline; /* --format perfetto|chrome-json, or -o's extension */
	bool ordered, stacks;
	long long count, map_start;
	enum gt_format fmt;
};

static int cat_parse(struct cat_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	struct cli_val v;
	int id;
	*o = (struct cat_opts){.count = -1, .map_start = -1, .fmt = GT_TEXT};
	cli_opt_init(&p, &cat_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case CAT_ORDERED:
			o->ordered = true;
			break;
		case CAT_STACKS:
			o->stacks = true;
			break;
		case CAT_COUNT:
			o->count = v.i;
			break;
		case CAT_FORMAT:
			o->fmt = (enum gt_format)v.i; /* the order of the choices */
			break;
		case CAT_MAP_START:
			o->map_start = v.i;
			break;
		case CAT_OUT:
			o->out = v.str;
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	o->path = p.pos[0];
	/* the choices after go-debug are timelines (cli_format.h) */
	o->timeline = (int)o->fmt > GT_GODEBUG ||
		      (o->fmt == GT_TEXT && o->out && !cli_out_is_stdout(o->out) &&
		       rtd_timeline_format_from_path(o->out));
	if (o->out && !o->timeline)
		return cli_cmd_usage(&cat_def, "-o is for a timeline: --format "
				     "perfetto|chrome-json, or FILE.perfetto-trace, "
				     ".pftrace or .json");
	if (o->timeline && (o->stacks || o->count >= 0 || o->map_start >= 0))
		return cli_cmd_usage(&cat_def, "--stacks, --count and "
				     "--go-map-start are for the event list, not "
				     "a timeline");
	if (o->map_start >= 0 && !o->ordered)
		return cli_cmd_usage(&cat_def, "--go-map-start needs --ordered");
	return -1;
}

/* Old-format ordered output: decoding on a second thread (set
 * RTDIAG_THREADS=1 for one). */
static rtd_gotrace_pipe *cat_pipe(const struct cat_opts *o, struct gt_in *in)
{
	if (!o->ordered || o->map_start >= 0 || o->stacks || !cli_threads_allowed() ||
	    gt_prime_header(in) < 0)
		return NULL;
	int ver = rtd_gotrace_dec_version(gt_dec(in));
	if (ver > 0 && ver < 1022) /* the old format's tables stay put */
		return rtd_gotrace_pipe_new(pipe_source, in);
	return NULL;
}

/* The events out: 1 after @count, 0 at the end, <0 on an error (told). */
static int cat_events(const struct cat_opts *o, struct gt_in *in, long long *n)
{
	/* A large stdout buffer: cat writes one short line per event. */
	static char obuf[1 << 20];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	rtd_gotrace_pipe *pipe = cat_pipe(o, in);
	struct gt_pr pr = {.fmt = o->fmt, .ordered = o->ordered, .stacks = o->stacks,
			   .d = gt_dec(in)};
	struct rtd_gotrace_event evbuf;
	const struct rtd_gotrace_event *ev = &evbuf;
	int rc = 0;
	while ((o->count < 0 || *n < o->count) &&
	       (rc = pipe ? rtd_gotrace_pipe_next(pipe, &ev) : gt_next(in, &evbuf)) > 0) {
		int ver = rtd_gotrace_dec_version(gt_dec(in));
		/* go-debug mirrors Go's event list: no dictionary events. */
		if (o->fmt == GT_GODEBUG && !pipe && ver >= 1022) {
			rc = -cli_fail("%s: --format go-debug is what Go 1.19's 'go tool trace -d' prints, for the old format (Go 1.5-1.21) only; use text or json",
				       o->path);
			break;
		}
		if (o->fmt == GT_GODEBUG && gt_is_meta(ev))
			continue;
		if (o->stacks && *n == 0 && !o->ordered && !gt_in_is_file(in) && ver < 1022) {
			rc = -cli_fail("%s: --stacks on a Go 1.5-1.21 trace needs a FILE or --ordered: the runtime writes the stacks at the end of the trace, so raw mode reads them in a first pass",
				       o->path);
			break;
		}
		gt_print(stdout, &pr, ev);
		++*n;
	}
	if (pipe && rc < 0) /* the thread has stopped: the decoder is ours */
		gt_report(in, rc);
	rtd_gotrace_pipe_free(pipe);
	gt_flush();
	cli_progress_done();
	return o->count >= 0 && *n >= o->count ? 1 : rc;
}

/* cat --format perfetto|chrome-json: the trace as a timeline, in Go's
 * order (what --ordered validates), as `rtdiag convert` writes it. */
static int cat_timeline(const struct cat_opts *o)
{
	static const char *const names[] = {"text", "json", "go-debug", "perfetto",
					    "chrome-json"};
	struct cli_format f;
	if (cli_format_pick(cat_def.name,
			    (int)o->fmt > GT_GODEBUG ? names[o->fmt] : NULL, o->out,
			    CLI_FMT_TIMELINE, "perfetto", &f))
		return CLI_USAGE;
	FILE *in = cli_open_in(o->path);
	if (!in)
		return CLI_FAIL;
	int rc = cli_timeline_gotrace(in, o->path, NULL, 0, &f, o->out);
	cli_close_in(in);
	return rc;
}

static int cmd_cat(int argc, char **argv)
{
	struct cat_opts o;
	int rc = cat_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o.timeline)
		return cat_timeline(&o);
	struct gt_in *in = malloc(gt_in_size());
	if (!in)
		return cli_fail("out of memory");
	if (gt_open(in, o.path, o.ordered ? RTD_GOTRACE_ORDERED : RTD_GOTRACE_RAW,
		    RTD_GOTRACE_RESOLVE) < 0) {
		free(in);
		return CLI_FAIL;
	}
	if (o.map_start >= 0 &&
	    (gt_prime_header(in) < 0 ||
	     rtd_gotrace_dec_set_go_map_start(gt_dec(in), (unsigned)o.map_start) < 0)) {
		gt_close(in);
		free(in);
		return cli_fail("%s: --go-map-start is for Go 1.22+ traces (Go 1.22/1.23's random map walk)",
				o.path);
	}
	long long n = 0;
	rc = cat_events(&o, in, &n);
	/* a trace cut short (the process was killed while tracing): its
	 * last event is cut, or the end with the frequency is missing */
	int ver = rtd_gotrace_dec_version(gt_dec(in));
	if (rc < 0 && o.ordered && n == 0 && ver >= 1005 && ver < 1022 &&
	    rc == -RTD_E_TRUNCATED)
		fprintf(stderr, "rtdiag: %s: ordering a Go 1.5-1.21 trace needs all of it (the runtime writes the clock frequency and the stacks at its end; 'go tool trace' refuses it too): without --ordered, cat prints the events before the damage\n",
			o.path);
	int code = gt_exit(in, rc, (uint64_t)n);
	gt_close(in);
	free(in);
	if (fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return code;
}

static int cmd_stats(int argc, char **argv);

static const struct cli_cmd stats_def = {
	"gotrace stats", "FILE|-",
	"Summarize a trace.\n"
	"Version, size, duration, generations (Go 1.22+), goroutines, procs, and the\n"
	"events and bytes of each type.",
	NULL, 1, 1, 0, cmd_stats,
	"Raw decoding, streaming: memory is a generation's string and stack tables and\n"
	"a bitmap of the goroutine ids (128 KB for a million goroutines).\n"};

int gt_file_only(const struct cli_cmd *def, int argc, char **argv, const char **path)
{
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		;
	if (id < 0)
		return cli_opt_exit(id);
	*path = p.pos[0];
	return -1;
}

static int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	int rc = gt_file_only(&stats_def, argc, argv, &path);
	if (rc >= 0)
		return rc;
	struct gt_in *in = malloc(sizeof(*in));
	if (!in)
		return cli_fail("out of memory");
	if (gt_open(in, path, RTD_GOTRACE_RAW, 0) < 0) {
		free(in);
		return CLI_FAIL;
	}
	rtd_gotrace_tally *t = rtd_gotrace_tally_new();
	if (!t) {
		gt_close(in);
		free(in);
		return cli_fail("out of memory");
	}
	/* counted by the library, without an event built for each */
	while ((rc = rtd_gotrace_dec_tally(in->d, t)) == 0 && (rc = gt_feed(in)) > 0)
		;
	if (rc < 0)
		gt_report(in, rc);
	struct rtd_gotrace_counts c;
	rtd_gotrace_tally_counts(t, in->bytes, &c);
	cli_progress_done();
	int ver = rtd_gotrace_dec_version(in->d);
	int64_t freq = rtd_gotrace_dec_frequency(in->d);
	printf("file:        %s\n", path);
	printf("version:     go %d.%d (%s format)\n", ver / 1000, ver % 1000, ver >= 1022 ? "new" : "old");
	if (ver >= 1022)
		printf("generations: %" PRIu64 "\n", c.generations);
	printf("size:        %" PRIu64 " bytes\n", in->bytes);
	printf("events:      %" PRIu64 "%s\n", c.events, rc < 0 ? " (stopped at the error)" : "");
	if (freq > 0 && c.tmax >= c.tmin)
		printf("duration:    %.6f s (%" PRId64 " ticks at %" PRId64 " ticks/s)\n",
		       (double)(c.tmax - c.tmin) / (double)freq, c.tmax - c.tmin, freq);
	else
		printf("duration:    unknown (no Frequency event)\n");
	printf("goroutines:  %s%" PRIu64 "\n", c.goroutines_over ? "at least " : "", c.goroutines);
	printf("procs:       %s%" PRIu64 "\n", c.procs_over ? "at least " : "", c.procs);
	printf("%-20s %10s %12s %8s\n", "type", "events", "bytes", "B/event");
	for (unsigned t = 1; t < 256; t++)
		if (c.count[t])
			printf("%-20s %10" PRIu64 " %12" PRIu64 " %8.1f\n",
			       rtd_gotrace_event_name(t, ver), c.count[t], c.bytes[t],
			       (double)c.bytes[t] / (double)c.count[t]);
	int code = gt_exit(in, rc, c.events);
	rtd_gotrace_tally_free(t);
	gt_close(in);
	free(in);
	return code;
}

/* The commands, in the order help lists them. */
static const struct cli_cmd *const cmds[] = {
	&cat_def, &gt_grep_def, &stats_def, &gt_text2bin_def, &gt_bin2text_def,
	/* the analyses and live capture (gotrace_analyze.c, gotrace_capture.c) */
	&gt_pprof_cmd, &gt_goroutines_cmd, &gt_gc_cmd, &gt_tasks_cmd, &gt_capture_cmd, NULL,
};

static const char summary[] =
	"Go execution traces (Go 1.5-1.26: the old format and the new, Go 1.22+),\n"
	"from a file or - for stdin.";

static int run(int argc, char **argv)
{
	return cli_group_run("gotrace", cmds, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_group_help(f, "gotrace", summary, cmds, sub);
}

static const struct cli_cmd *const *list_cmds(void)
{
	return cmds;
}

const struct cli_group cli_group_gotrace = {"gotrace", "Go execution traces: cat, grep, stats, text2bin, bin2text, pprof, goroutines, gc, tasks, capture", run, help, list_cmds};
