/* SPDX-License-Identifier: MIT */
/*
 * v2text.c - Go's text form of a trace (golang/exp trace/internal/raw,
 * doc.go and textreader.go) to the binary format.
 *
 *	Trace Go1.22
 *	EventBatch gen=1 m=0 time=0 size=5
 *	String id=1
 *		data="whatever"
 *	Stack id=3 nframes=1
 *		pc=4816080 func=30 file=31 line=45
 *
 * Arguments must come in the spec's order with the spec's names; '#'
 * starts a comment; blank lines are skipped. And back: a raw decoder's
 * events in that form (rtd_gotrace_bin2text_event()), what go tool trace
 * -d=2 prints.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/errmsg.h"
#include "common/textrd.h"
#include "gotrace/v2.h"
#include "rtdiag/gotrace_decoder.h"
#include "rtdiag/gotrace_encoder.h"

#define TEXT_MAX_LINE (4u << 20)

struct tr {
	const char *p, *end;
	unsigned line;
	char *err;
	size_t errlen;
	rtd_gotrace_write_fn write;
	void *ctx;
	uint8_t out[1 << 16];
	size_t nout;
	int wrc;
};

static int terr(struct tr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int terr(struct tr *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf_at(t->err, t->errlen, -RTD_E_GO_TEXT, "line", t->line, fmt, ap);
	va_end(ap);
	return -RTD_E_GO_TEXT;
}

static int flush(struct tr *t)
{
	if (t->nout && !t->wrc)
		t->wrc = t->write(t->out, t->nout, t->ctx);
	t->nout = 0;
	return t->wrc;
}

static int put(struct tr *t, const void *p, size_t n)
{
	if (t->nout + n > sizeof(t->out) && flush(t) < 0)
		return t->wrc;
	if (n > sizeof(t->out))
		return t->wrc = t->write(p, n, t->ctx);
	memcpy(t->out + t->nout, p, n);
	t->nout += n;
	return 0;
}

static int put_uvarint(struct tr *t, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return put(t, b, n);
}

/* Next non-empty, non-comment line: [*s, *e). Returns false at the end. */
static bool tr_next_line(struct tr *t, const char **s, const char **e)
{
	while (t->p < t->end) {
		const char *b = t->p;
		const char *nl = memchr(b, '\n', (size_t)(t->end - b));
		const char *le = nl ? nl : t->end;
		t->p = nl ? nl + 1 : t->end;
		t->line++;
		const char *q = b;
		while (q < le && isspace((unsigned char)*q))
			q++;
		if (q == le || *q == '#')
			continue;
		const char *z = le;
		while (z > q && isspace((unsigned char)z[-1]))
			z--;
		*s = q;
		*e = z;
		return true;
	}
	return false;
}

static const char *tok(const char **s, const char *e, size_t *len)
{
	const char *p = *s;
	while (p < e && isspace((unsigned char)*p))
		p++;
	const char *b = p;
	while (p < e && !isspace((unsigned char)*p) && *p != '#')
		p++;
	*len = (size_t)(p - b);
	*s = p;
	return b;
}

/* name=value with name as given; value an unsigned decimal. */
static int read_arg(struct tr *t, const char **s, const char *e, const char *want,
		    uint64_t *v)
{
	size_t n;
	const char *b = tok(s, e, &n);
	if (n == 0)
		return terr(t, "missing argument %s", want);
	const char *eq = memchr(b, '=', n);
	if (!eq)
		return terr(t, "malformed argument %.*s", (int)n, b);
	if ((size_t)(eq - b) != strlen(want) || memcmp(b, want, strlen(want)) != 0)
		return terr(t, "expected argument \"%s\", but got \"%.*s\"", want,
			    (int)(eq - b), b);
	uint64_t x = 0;
	const char *p = eq + 1;
	if (p == b + n)
		return terr(t, "empty value for %s", want);
	for (; p < b + n; p++) {
		if (*p < '0' || *p > '9')
			return terr(t, "failed to parse argument value for %s", want);
		unsigned dgt = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - dgt) / 10)
			return terr(t, "value of %s out of range", want);
		x = x * 10 + dgt;
	}
	*v = x;
	return 0;
}

/*
 * Go 1.22's table names CPUSample's arguments "time p g m stack" while
 * its parser, and the wire, have them as time, m, p, g, stack (Go 1.23
 * fixed the names): Go 1.22's `go tool trace -d=2` prints the wire's
 * values in order under its names. Both texts are read, by position.
 */
static const char *const cpu_sample_122[] = {"time", "p", "g", "m", "stack"};

/* Is the name of the line's second argument @name? */
static bool second_arg_is(const char *s, const char *e, const char *name)
{
	size_t n;
	tok(&s, e, &n);
	const char *b = tok(&s, e, &n);
	size_t k = strlen(name);
	return n > k && memcmp(b, name, k) == 0 && b[k] == '=';
}

static int rest_empty(struct tr *t, const char *s, const char *e)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	if (s < e && *s != '#')
		return terr(t, "unexpected text at the end of an event: %.*s", (int)(e - s), s);
	return 0;
}

/* Go's strconv.Unquote of a "double-quoted" literal into out. */
static int unquote(struct tr *t, const char *s, const char *e, uint8_t *out,
		   size_t *olen)
{
	size_t n = 0;
	if (e - s < 2 || *s != '"' || e[-1] != '"')
		return terr(t, "data is not a quoted string");
	for (const char *p = s + 1; p < e - 1;) {
		char c = *p++;
		if (c == '"')
			return terr(t, "unescaped quote in data");
		if (c != '\\') {
			out[n++] = (uint8_t)c;
			continue;
		}
		if (p >= e - 1)
			return terr(t, "data ends inside an escape");
		c = *p++;
		int digits = 0;
		switch (c) {
		case 'a': out[n++] = '\a'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'v': out[n++] = '\v'; break;
		case '\\': out[n++] = '\\'; break;
		case '"': out[n++] = '"'; break;
		case '\'': out[n++] = '\''; break;
		case 'x': digits = 2; break;
		case 'u': digits = 4; break;
		case 'U': digits = 8; break;
		default:
			if (c >= '0' && c <= '7') {
				if (e - 1 - p < 2 || p[0] < '0' || p[0] > '7' || p[1] < '0' || p[1] > '7')
					return terr(t, "bad octal escape in data");
				unsigned v = (unsigned)(c - '0') * 64 + (unsigned)(p[0] - '0') * 8 +
					     (unsigned)(p[1] - '0');
				if (v > 255)
					return terr(t, "octal escape out of range in data");
				out[n++] = (uint8_t)v;
				p += 2;
				break;
			}
			return terr(t, "unknown escape \\%c in data", c);
		}
		if (digits) {
			if (e - 1 - p < digits)
				return terr(t, "short \\%c escape in data", c);
			uint32_t v = 0;
			for (int i = 0; i < digits; i++) {
				int h = hexval(p[i]);
				if (h < 0)
					return terr(t, "bad hex digit in data");
				v = v << 4 | (uint32_t)h;
			}
			p += digits;
			if (c == 'x')
				out[n++] = (uint8_t)v;
			else if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))
				return terr(t, "invalid code point in data");
			else
				n += rtd_utf8_put(out + n, v);
		}
	}
	*olen = n;
	return 0;
}

int rtd_gotrace_text2bin(const char *text, size_t len, rtd_gotrace_write_fn write,
			 void *ctx, char *err, size_t errlen)
{
	return rtd_gotrace_text2bin_as(text, len, 0, write, ctx, err, errlen);
}

/* The "Trace Go1.NN" line: the version (1022, ...), or <0 (error set). */
static int read_header_line(struct tr *t, const char *s, const char *e)
{
	size_t n;
	int ver = 0;
	const char *w = tok(&s, e, &n);
	if (n != 5 || memcmp(w, "Trace", 5) != 0)
		return terr(t, "failed to parse header");
	w = tok(&s, e, &n);
	if (n < 5 || memcmp(w, "Go1.", 4) != 0)
		return terr(t, "failed to parse header Go version");
	for (size_t i = 4; i < n; i++) {
		if (w[i] < '0' || w[i] > '9' || ver > 100000)
			return terr(t, "failed to parse header Go version");
		ver = ver * 10 + (w[i] - '0');
	}
	ver += 1000;
	if (!v2_version(ver)) {
		terr(t, "unknown or unsupported Go version 1.%d", ver - 1000);
		return -RTD_E_GO_VERSION;
	}
	int rc = rest_empty(t, s, e);
	return rc < 0 ? rc : ver;
}

int rtd_gotrace_text2bin_as(const char *text, size_t len, int version,
			    rtd_gotrace_write_fn write, void *ctx, char *err, size_t errlen)
{
	struct tr *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->p = text;
	t->end = text + len;
	t->err = err;
	t->errlen = errlen;
	t->write = write;
	t->ctx = ctx;
	if (err && errlen)
		err[0] = 0;
	int rc = 0, ver = 0;
	uint8_t *data = NULL;
	const char *s, *e;
	size_t n;
	if (version && !v2_version(version)) {
		rc = -RTD_E_GO_VERSION;
		terr(t, "unknown or unsupported Go version 1.%d", version - 1000);
		goto out;
	}
	const char *rewind = t->p;
	if (!tr_next_line(t, &s, &e)) {
		rc = version ? 0 : terr(t, "no header line (want \"Trace Go1.NN\")");
		ver = version;
	} else if (version && (e - s < 5 || memcmp(s, "Trace", 5) != 0)) {
		/* no header (Go's -d=2 prints none): the version given */
		ver = version;
		t->p = rewind;
		t->line = 0;
	} else if ((ver = read_header_line(t, s, e)) < 0) {
		rc = ver;
	}
	if (rc < 0 || ver == 0)
		goto out;
	if (version && ver != version) {
		rc = terr(t, "the text says Go 1.%d, not 1.%d", ver - 1000, version - 1000);
		goto out;
	}
	char hdr[32];
	memset(hdr, 0, sizeof(hdr));
	snprintf(hdr, sizeof(hdr), "go 1.%d trace", ver - 1000);
	put(t, hdr, 16);
	data = malloc(V2_MAX_DATA + 8);
	if (!data) {
		rc = -ENOMEM;
		goto out;
	}
	while (rc == 0 && tr_next_line(t, &s, &e)) {
		const char *w = tok(&s, e, &n);
		int typ = v2_type_by_name(w, n, ver);
		if (typ < 0) {
			rc = terr(t, "unidentified event: %.*s", (int)n, w);
			break;
		}
		const struct v2_spec *sp = &v2_specs[typ];
		const char *const *names = sp->args;
		if (typ == RTD_GO2_EV_CPU_SAMPLE && ver == 1022 && second_arg_is(s, e, "p"))
			names = cpu_sample_122; /* Go 1.22's own -d=2 text */
		uint64_t a[8];
		for (unsigned i = 0; i < sp->nargs && rc == 0; i++)
			rc = read_arg(t, &s, e, names[i], &a[i]);
		if (rc == 0)
			rc = rest_empty(t, s, e);
		if (rc)
			break;
		uint8_t tb = (uint8_t)typ;
		put(t, &tb, 1);
		for (unsigned i = 0; i < sp->nargs; i++)
			put_uvarint(t, a[i]);
		if (sp->flags & V2_STACK) {
			if (a[1] > RTD_GOTRACE_MAX_FRAMES) {
				rc = terr(t, "stack with %llu frames (limit %u)",
					  (unsigned long long)a[1], RTD_GOTRACE_MAX_FRAMES);
				break;
			}
			static const char *const ff[] = {"pc", "func", "file", "line"};
			for (uint64_t f = 0; f < a[1] && rc == 0; f++) {
				if (!tr_next_line(t, &s, &e)) {
					rc = terr(t, "unexpected end while reading stack");
					break;
				}
				for (int k = 0; k < 4 && rc == 0; k++) {
					uint64_t v;
					rc = read_arg(t, &s, e, ff[k], &v);
					if (rc == 0)
						put_uvarint(t, v);
				}
				if (rc == 0)
					rc = rest_empty(t, s, e);
			}
		}
		if (rc == 0 && (sp->flags & V2_DATA)) {
			if (!tr_next_line(t, &s, &e)) {
				rc = terr(t, "unexpected end while reading data for %s", sp->name);
				break;
			}
			const char *eq = memchr(s, '=', (size_t)(e - s));
			const char *k = s;
			size_t kl;
			tok(&k, eq ? eq : e, &kl);
			if (!eq || kl != 4 || memcmp(s, "data", 4) != 0) {
				rc = terr(t, "malformed data line");
				break;
			}
			const char *q = eq + 1;
			while (q < e && isspace((unsigned char)*q))
				q++;
			if ((size_t)(e - q) > 4 * (size_t)V2_MAX_DATA + 2) {
				rc = terr(t, "data longer than %u bytes", V2_MAX_DATA);
				break;
			}
			size_t dl = 0;
			uint8_t *buf = (size_t)(e - q) <= V2_MAX_DATA + 8 ? data : malloc((size_t)(e - q));
			if (!buf) {
				rc = -ENOMEM;
				break;
			}
			rc = unquote(t, q, e, buf, &dl);
			if (rc == 0 && dl > V2_MAX_DATA)
				rc = terr(t, "data longer than %u bytes", V2_MAX_DATA);
			if (rc == 0) {
				put_uvarint(t, dl);
				put(t, buf, dl);
			}
			if (buf != data)
				free(buf);
		}
		if (rc == 0 && t->wrc)
			rc = t->wrc;
	}
	if (rc == 0)
		rc = flush(t);
out:
	free(data);
	free(t);
	return rc;
}

/* ---- binary to text ------------------------------------------------------ */

/* Go's strconv.Quote: printable UTF-8 kept, the rest escaped (\a \b \f
 * \n \r \t \v, \xXX for a byte that is not UTF-8 or a control, \uXXXX
 * or \UXXXXXXXX for a code point Go does not print as it is). */
static void go_quote(FILE *o, const unsigned char *p, size_t n)
{
	static const char esc[] = {['\a'] = 'a', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
				   ['\r'] = 'r', ['\t'] = 't', ['\v'] = 'v'};
	fputc('"', o);
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		if (c < 0x80) {
			i++;
			if (c == '"' || c == '\\')
				fprintf(o, "\\%c", (int)c);
			else if (c < sizeof(esc) && esc[c])
				fprintf(o, "\\%c", esc[c]);
			else if (c < 0x20 || c == 0x7f)
				fprintf(o, "\\x%02x", c);
			else
				fputc((int)c, o);
			continue;
		}
		size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
		bool ok = len && i + len <= n;
		uint32_t r = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		for (size_t k = 1; ok && k < len; k++) {
			ok = (p[i + k] & 0xc0) == 0x80;
			r = r << 6 | (p[i + k] & 0x3f);
		}
		if (ok && ((len == 3 && r < 0x800) || (len == 4 && (r < 0x10000 || r > 0x10ffff)) ||
			   (r >= 0xd800 && r < 0xe000)))
			ok = false;
		if (!ok) {
			fprintf(o, "\\x%02x", c);
			i++;
			continue;
		}
		if (r < 0xa0 || r == 0xad || r == 0xfeff)
			fprintf(o, r < 0x10000 ? "\\u%04x" : "\\U%08x", r);
		else
			fwrite(p + i, 1, len, o);
		i += len;
	}
	fputc('"', o);
}

int rtd_gotrace_bin2text_header(FILE *f, int version)
{
	if (!f || version < 1022)
		return -RTD_E_INVAL;
	return fprintf(f, "Trace Go1.%d\n", version % 1000) < 0 ? -EIO : 0;
}

int rtd_gotrace_bin2text_event(FILE *f, const struct rtd_gotrace_event *ev)
{
	if (!f || !ev || !ev->name)
		return -RTD_E_INVAL;
	fputs(ev->name, f);
	bool stack = ev->type == RTD_GO2_EV_STACK;
	unsigned nspec = stack ? 2 : ev->nraw;
	for (unsigned i = 0; i < nspec && i < ev->nraw; i++)
		fprintf(f, " %s=%" PRIu64, ev->argnames[i], ev->raw[i]);
	if (stack) {
		static const char *const ff[] = {"pc", "func", "file", "line"};
		for (unsigned i = 2; i < ev->nraw; i++)
			fprintf(f, "%s%s=%" PRIu64, (i - 2) % 4 ? " " : "\n\t", ff[(i - 2) % 4],
				ev->raw[i]);
	}
	if (ev->type == RTD_GO2_EV_STRING || ev->type == RTD_GO2_EV_EXPERIMENTAL_BATCH) {
		fputs("\n\tdata=", f);
		go_quote(f, (const unsigned char *)ev->str, ev->str_len);
	}
	return fputc('\n', f) == EOF ? -EIO : 0;
}
