/* SPDX-License-Identifier: MIT */
/*
 * detect.c - the format of an input, from its first bytes and their
 * structure (see rtdiag/format.h). Every check answers "is it this
 * format?" from what is there; none falls back to another: a text that is
 * not folded stacks is not folded stacks.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "common/errmsg.h"
#include "common/rd.h"
#include "rtdiag/format.h"
#include "rtdiag/gotrace.h"

static const char *const names[RTD_INPUT_COUNT] = {
	[RTD_INPUT_UNKNOWN] = "unknown",
	[RTD_INPUT_NETTRACE] = "nettrace",
	[RTD_INPUT_NETPERF] = "netperf",
	[RTD_INPUT_GOTRACE] = "Go trace",
	[RTD_INPUT_PPROF] = "pprof",
	[RTD_INPUT_FOLDED] = "folded stacks",
	[RTD_INPUT_PERF_DATA] = "perf.data",
};

const char *rtd_input_format_name(enum rtd_input_format f)
{
	return (unsigned)f < RTD_INPUT_COUNT ? names[f] : "unknown";
}

const char *rtd_format_tried(void)
{
	return "nettrace, netperf, Go trace (1.5 to 1.26), pprof, folded stacks, "
	       "perf.data";
}

static void why(struct rtd_input_info *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(struct rtd_input_info *in, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(in->why, sizeof(in->why), 0, fmt, ap);
	va_end(ap);
}

static const char FS_MAGIC[] = "!FastSerialization.1";

/* NetTrace: "Nettrace" then either the V4/V5 FastSerialization header
 * (length 20 and its magic) or V6's (a zero, then major version 6);
 * NetPerf: the FastSerialization header alone. */
static enum rtd_input_format eventpipe(const uint8_t *b, size_t n, bool whole,
				       struct rtd_input_info *in)
{
	if (n >= 8 && !memcmp(b, "Nettrace", 8)) {
		if (n < 12 || (n < 32 && !memcmp(b + 8, "\x14\0\0\0", 4))) {
			if (whole) {
				why(in, "a nettrace cut inside its header "
					"(%zu bytes)", n);
				return RTD_INPUT_UNKNOWN;
			}
			return RTD_INPUT_NETTRACE;
		}
		if (!memcmp(b + 8, "\x14\0\0\0", 4) && !memcmp(b + 12, FS_MAGIC, 20))
			return RTD_INPUT_NETTRACE;
		if (!memcmp(b + 8, "\0\0\0\0", 4))
			return RTD_INPUT_NETTRACE; /* V6: the decoder checks the version */
		why(in, "'Nettrace', but no FastSerialization header after it");
		return RTD_INPUT_UNKNOWN;
	}
	if (n >= 24 && !memcmp(b, "\x14\0\0\0", 4) && !memcmp(b + 4, FS_MAGIC, 20))
		return RTD_INPUT_NETPERF;
	return RTD_INPUT_UNKNOWN;
}

/* pprof's Profile message: each field number's wire type (0 varint,
 * 2 length-delimited); -1 for numbers it does not have. comment (13) is
 * a repeated int64, packed (2) or not (0). */
static int pprof_wire(uint64_t field)
{
	static const signed char wire[] = {
		-1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0,
	};
	return field < sizeof(wire) ? wire[field] : -1;
}

/* Do these bytes read as the start of a pprof Profile (or the whole of
 * one, when WHOLE)? */
static bool pprof_fields(const uint8_t *b, size_t n, bool whole,
			 const char **bad)
{
	rtd_rd r;
	rd_init(&r, b, n);
	unsigned fields = 0;
	bool strings_seen = false;
	while (rd_left(&r)) {
		uint64_t tag = rd_varuint(&r);
		if (!rd_ok(&r))
			break;
		uint64_t field = tag >> 3;
		unsigned wt = (unsigned)(tag & 7);
		int want = pprof_wire(field);
		if (want < 0 || (wt != (unsigned)want && !(field == 13 && wt == 0))) {
			*bad = "fields that are not pprof's";
			return false;
		}
		if (wt == 0) {
			rd_varuint(&r);
		} else {
			uint64_t len = rd_varuint(&r);
			if (!rd_ok(&r))
				break;
			/* pprof's string table starts with "" */
			if (field == 6 && !strings_seen && len != 0) {
				*bad = "a string table that does not start empty";
				return false;
			}
			strings_seen |= field == 6;
			if (len > rd_left(&r)) {
				if (whole) {
					*bad = "a field longer than the input";
					return false;
				}
				return fields > 0 || len > 0;
			}
			rd_skip(&r, (size_t)len);
		}
		if (!rd_ok(&r))
			break;
		fields++;
	}
	if (!rd_ok(&r) && (whole || r.err != -RTD_E_TRUNCATED)) {
		*bad = "a field cut or malformed";
		return false;
	}
	if (!fields)
		*bad = "no pprof field";
	return fields > 0;
}

/* A gzip stream whose first bytes inflate to pprof fields. */
static bool pprof_gzip(const uint8_t *b, size_t n, bool whole,
		       struct rtd_input_info *in)
{
	uint8_t out[4096];
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		why(in, "gzip data (zlib could not start)");
		return false;
	}
	z.next_in = (Bytef *)(uintptr_t)b;
	z.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	z.next_out = out;
	z.avail_out = sizeof(out);
	int zr = inflate(&z, Z_SYNC_FLUSH);
	size_t got = sizeof(out) - z.avail_out;
	inflateEnd(&z);
	if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
		why(in, "gzip data that does not inflate (%s)",
		    z.msg ? z.msg : "corrupt");
		return false;
	}
	/* the inflated bytes are whole only when the stream ended in them */
	const char *bad = "no pprof field";
	if (pprof_fields(out, got, zr == Z_STREAM_END, &bad))
		return true;
	if (whole && zr != Z_STREAM_END && !got) {
		why(in, "gzip data cut before its first bytes");
		return false;
	}
	why(in, "gzip data, but not a pprof profile inside (%s)", bad);
	return false;
}

/* Is it text: no NUL or control bytes but tab, CR, LF, FF, VT? (UTF-8's
 * high bytes are text.) */
static bool is_text(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x09 || (b[i] > 0x0d && b[i] < 0x20) || b[i] == 0x7f)
			return false;
	return true;
}

/* One line of folded stacks, as the reader takes it: trailing blanks and
 * CR dropped, then a count after the last space. 1 a stack, 0 blank or a
 * bare count, -1 not folded. */
static int folded_line(const uint8_t *s, size_t len)
{
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' ||
		       s[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	size_t sp = len;
	while (sp && s[sp - 1] != ' ')
		sp--;
	size_t i = sp;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	if (i == len)
		return -1;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	return sp > 1 ? 1 : 0;
}

static bool folded(const uint8_t *b, size_t n, bool whole,
		   struct rtd_input_info *in)
{
	if (!is_text(b, n))
		return false;
	unsigned stacks = 0, lineno = 0;
	size_t start = 0;
	while (start < n) {
		const uint8_t *nl = memchr(b + start, '\n', n - start);
		if (!nl && !whole)
			break; /* the line goes on past what was read */
		size_t end = nl ? (size_t)(nl - b) : n;
		lineno++;
		int k = folded_line(b + start, end - start);
		if (k < 0) {
			why(in, "text, but line %u is not 'frame;frame;... count' "
				"(folded stacks)", lineno);
			return false;
		}
		stacks += (unsigned)k;
		start = end + 1;
	}
	if (!stacks) {
		why(in, lineno ? "text with no stack ('frame;frame;... count')"
			       : "text with no complete line in its first %zu bytes",
		    n);
		return false;
	}
	return true;
}

enum rtd_input_format rtd_format_detect(const void *buf, size_t len, bool whole,
					struct rtd_input_info *info)
{
	struct rtd_input_info scratch;
	struct rtd_input_info *in = info ? info : &scratch;
	memset(in, 0, sizeof(*in));
	const uint8_t *b = buf;
	size_t n = len;
	if (n > RTD_FORMAT_SNIFF_BYTES)
		n = RTD_FORMAT_SNIFF_BYTES, whole = false;
	if (!n) {
		why(in, "empty");
		return in->format = RTD_INPUT_UNKNOWN;
	}
	enum rtd_input_format f = eventpipe(b, n, whole, in);
	if (f || in->why[0])
		return in->format = f;
	if (n >= 5 && !memcmp(b, "go 1.", 5)) {
		int v = rtd_gotrace_header_version(b, n);
		if (v > 0) {
			in->go_version = v;
			return in->format = RTD_INPUT_GOTRACE;
		}
		if (v == -RTD_E_UNSUPPORTED)
			why(in, "a Go trace of a version rtdiag does not read "
				"(%.13s)", (const char *)b);
		else if (v == -RTD_E_TRUNCATED)
			why(in, "a Go trace cut inside its header (%zu bytes)", n);
		else
			why(in, "text starting 'go 1.', not a Go trace header");
		return in->format = RTD_INPUT_UNKNOWN;
	}
	if (n >= 8 && (!memcmp(b, "PERFILE2", 8) || !memcmp(b, "2ELIFREP", 8)))
		return in->format = RTD_INPUT_PERF_DATA;
	if (n >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8) {
		if (pprof_gzip(b, n, whole, in)) {
			in->gzip = true;
			return in->format = RTD_INPUT_PPROF;
		}
		return in->format = RTD_INPUT_UNKNOWN;
	}
	if (is_text(b, n)) {
		if (folded(b, n, whole, in))
			return in->format = RTD_INPUT_FOLDED;
		return in->format = RTD_INPUT_UNKNOWN;
	}
	const char *bad = "no pprof field";
	if (pprof_fields(b, n, whole, &bad))
		return in->format = RTD_INPUT_PPROF;
	why(in, "binary data with no known magic, and not pprof (%s)", bad);
	return in->format = RTD_INPUT_UNKNOWN;
}
