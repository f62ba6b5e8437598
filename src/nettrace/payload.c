/* SPDX-License-Identifier: MIT */
/*
 * payload.c - walk an event's payload along its field layout, look up one
 * field, render an event as a text line or a JSON object.
 *
 * Payload fields are packed little-endian values with no alignment
 * (NetTraceFormat_v5.md "Metadata event encoding"); strings are
 * NUL-terminated UTF-16. Nothing is allocated per event: strings are
 * converted into the decoder's scratch buffer, or, lent until the
 * caller's next call (opts.lend_strings), into its arena of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/map.h"
#include "nettrace/nt.h"
#include "rtdiag/source.h"

const char *rtd_nettrace_type_name(unsigned type)
{
	switch (type) {
	case RTD_NT_T_OBJECT: return "struct";
	case RTD_NT_T_BOOL32: return "bool32";
	case RTD_NT_T_CHAR16: return "char16";
	case RTD_NT_T_I8: return "int8";
	case RTD_NT_T_U8: return "uint8";
	case RTD_NT_T_I16: return "int16";
	case RTD_NT_T_U16: return "uint16";
	case RTD_NT_T_I32: return "int32";
	case RTD_NT_T_U32: return "uint32";
	case RTD_NT_T_I64: return "int64";
	case RTD_NT_T_U64: return "uint64";
	case RTD_NT_T_F32: return "float";
	case RTD_NT_T_F64: return "double";
	case RTD_NT_T_DECIMAL: return "decimal";
	case RTD_NT_T_DATETIME: return "datetime";
	case RTD_NT_T_GUID: return "guid";
	case RTD_NT_T_STRING: return "string";
	case RTD_NT_T_ARRAY: return "array";
	case RTD_NT_T_VARINT: return "varint";
	case RTD_NT_T_VARUINT: return "varuint";
	case RTD_NT_T_FIXED_ARRAY: return "fixed_array";
	case RTD_NT_T_CHAR8: return "char8";
	case RTD_NT_T_RELLOC: return "relloc";
	case RTD_NT_T_DATALOC: return "dataloc";
	case RTD_NT_T_BOOL8: return "bool8";
	case RTD_NT_T_POINTER: return "pointer";
	case RTD_NT_T_HEX32: return "hex32";
	case RTD_NT_T_HEX64: return "hex64";
	case RTD_NT_T_COUNTED: return "counted_array";
	case RTD_NT_T_BINARY: return "binary";
	case RTD_NT_T_UTF8Z: return "utf8z";
	default: return "unknown";
	}
}

struct walk {
	rtd_nettrace *dec;
	rtd_nettrace_value_fn fn;
	void *ctx;
	const uint8_t *payload;
	size_t payload_len;
	bool lenient;  /* built-in schema: older versions end early */
	size_t budget; /* array elements left to walk */
	size_t located_end; /* V6 RelLoc/DataLoc data reaches this offset */
};

/* Fixed encoded size of a type, or 0 when variable (RelLoc elements). */
size_t nt_fixed_size(const struct rtd_nettrace_field *f, size_t psz,
		     unsigned depth)
{
	if (depth > NT_CAP_DEPTH)
		return 0;
	switch (f->type) {
	case RTD_NT_T_I8: case RTD_NT_T_U8: case RTD_NT_T_CHAR8:
	case RTD_NT_T_BOOL8:
		return 1;
	case RTD_NT_T_I16: case RTD_NT_T_U16: case RTD_NT_T_CHAR16:
		return 2;
	case RTD_NT_T_I32: case RTD_NT_T_U32: case RTD_NT_T_F32:
	case RTD_NT_T_BOOL32: case RTD_NT_T_HEX32: case RTD_NT_T_RELLOC:
	case RTD_NT_T_DATALOC:
		return 4;
	case RTD_NT_T_I64: case RTD_NT_T_U64: case RTD_NT_T_F64:
	case RTD_NT_T_HEX64: case RTD_NT_T_DATETIME:
		return 8;
	case RTD_NT_T_GUID: case RTD_NT_T_DECIMAL:
		return 16;
	case RTD_NT_T_POINTER:
		return psz;
	case RTD_NT_T_FIXED_ARRAY:
		return f->nfields ? f->fixed_count *
					    nt_fixed_size(&f->fields[0], psz,
						       depth + 1)
				  : 0;
	case RTD_NT_T_OBJECT: {
		size_t s = 0;
		for (size_t i = 0; i < f->nfields; i++) {
			size_t e = nt_fixed_size(&f->fields[i], psz, depth + 1);
			if (!e)
				return 0;
			s += e;
		}
		return s;
	}
	default:
		return 0;
	}
}

static void fmt_guid(const uint8_t *g, rtd_buf *out)
{
	rtd_rd r;
	rd_init(&r, g, 16);
	uint32_t a = rd_u32le(&r);
	uint16_t b = rd_u16le(&r), c = rd_u16le(&r);
	rtd_buf_reset(out);
	rtd_buf_printf(out, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		       a, b, c, g[8], g[9], g[10], g[11], g[12], g[13], g[14],
		       g[15]);
}

/* FILETIME (100 ns since 1601) as ISO 8601 UTC. */
static void fmt_filetime(uint64_t ft, rtd_buf *out)
{
	rtd_buf_reset(out);
	const uint64_t epoch_diff = 116444736000000000ULL;
	if (ft < epoch_diff || ft >= 0x7fffffffffffffffULL) {
		rtd_buf_printf(out, "%" PRIu64, ft);
		return;
	}
	uint64_t t = ft - epoch_diff;
	time_t secs = (time_t)(t / 10000000ULL);
	unsigned frac = (unsigned)(t % 10000000ULL);
	struct tm tm;
	if (!gmtime_r(&secs, &tm)) {
		rtd_buf_printf(out, "%" PRIu64, ft);
		return;
	}
	rtd_buf_printf(out, "%04d-%02d-%02dT%02d:%02d:%02d.%07uZ",
		       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		       tm.tm_min, tm.tm_sec, frac);
}

/*
 * An array field's element count and the reader its elements are in: the
 * payload's own reader (*er = r), or for V6 RelLoc/DataLoc a slice of the payload
 * (whose end raises *located_end). Shared by the walk and the formatter.
 */
int nt_array(const struct rtd_nettrace_field *f, rtd_rd *r,
	     const uint8_t *payload, size_t payload_len, size_t psz,
	     unsigned depth, const uint64_t *sib, size_t nsib, size_t *count,
	     rtd_rd **er, rtd_rd *sub, size_t *located_end)
{
	*er = r;
	if (!f->nfields)
		return -RTD_E_NT_PAYLOAD;
	if (f->type == RTD_NT_T_RELLOC || f->type == RTD_NT_T_DATALOC) {
		uint32_t loc = rd_u32le(r);
		if (!rd_ok(r))
			return r->err;
		size_t size = loc >> 16, off = loc & 0xffff;
		size_t base = f->type == RTD_NT_T_RELLOC
				      ? (size_t)(r->p - payload)
				      : 0;
		if (base + off > payload_len || size > payload_len - base - off)
			return -RTD_E_NT_PAYLOAD;
		size_t esz = nt_fixed_size(&f->fields[0], psz, depth + 1);
		if (!esz)
			return -RTD_E_NT_PAYLOAD;
		rd_init(sub, payload + base + off, size);
		*er = sub;
		if (base + off + size > *located_end)
			*located_end = base + off + size;
		*count = size / esz;
		return 0;
	}
	if (f->type == RTD_NT_T_ARRAY)
		*count = rd_u16le(r);
	else if (f->type == RTD_NT_T_FIXED_ARRAY)
		*count = f->fixed_count;
	else
		*count = (f->count_field >= 0 && (size_t)f->count_field < nsib)
				 ? (size_t)sib[f->count_field]
				 : 0;
	if (!rd_ok(r))
		return r->err;
	if (*count > NT_CAP_ARRAY_ELEMS)
		return -RTD_E_CAP;
	return 0;
}

static int emit(struct walk *w, struct rtd_nettrace_value *v)
{
	return w->fn(w->ctx, v);
}

static int walk_list(struct walk *w, const struct rtd_nettrace_field *fs,
		     size_t n, rtd_rd *r, unsigned depth, bool top);
static int walk_one(struct walk *w, const struct rtd_nettrace_field *f,
		    bool is_elem, rtd_rd *r, unsigned depth, uint64_t *count_out,
		    const uint64_t *siblings, size_t nsib);

static int walk_elems(struct walk *w, const struct rtd_nettrace_field *f,
		      const struct rtd_nettrace_field *elem, size_t count,
		      rtd_rd *r, unsigned depth)
{
	struct rtd_nettrace_value v;
	memset(&v, 0, sizeof(v));
	v.kind = RTD_NT_V_BEGIN_ARRAY;
	v.field = f;
	v.name = f->name;
	v.depth = depth;
	v.type = f->type;
	v.count = count;
	v.raw = r->p;
	int rc = emit(w, &v);
	if (rc)
		return rc;
	for (size_t i = 0; i < count; i++) {
		if (w->budget == 0)
			return -RTD_E_CAP;
		w->budget--;
		rc = walk_one(w, elem, true, r, depth + 1, NULL, NULL, 0);
		if (rc)
			return rc == -RTD_E_TRUNCATED ? -RTD_E_NT_PAYLOAD : rc;
	}
	v.kind = RTD_NT_V_END_ARRAY;
	return emit(w, &v);
}

/* The value's text in the decoder's scratch buffer. */
static inline void set_str(struct rtd_nettrace_value *v, rtd_buf *sb)
{
	v->str = rtd_buf_cstr(sb);
	v->str_len = sb->len;
}

/* A lent string's room, or NULL with the decoder's lent_err set */
static char *lent_alloc(rtd_nettrace *dec, size_t n)
{
	int err = 0;
	char *p = rtd_arena_alloc(&dec->lent, n, &err);
	if (!p && !dec->lent_err)
		dec->lent_err = err;
	return p;
}

/* A STRING converted where it is lent (opts.lend_strings): measured,
 * then written once, neither into the scratch buffer nor copied out */
static int lend_utf16z(rtd_nettrace *dec, rtd_rd *r, struct rtd_nettrace_value *v)
{
	size_t n;
	int err = rtd_rd_utf16z_units(r, &n);
	if (err)
		return err == -RTD_E_TRUNCATED ? 0 : err;
	size_t len = rtd_utf16le_utf8_len(r->p, n);
	if (len > RTD_CAP_STRING)
		return -RTD_E_CAP; /* as the scratch buffer's cap */
	char *p = lent_alloc(dec, len + 1);
	if (!p)
		return dec->lent_err;
	rtd_utf16le_utf8_put(p, r->p, n);
	p[len] = 0;
	rd_skip(r, 2 * n + 2);
	v->str = p;
	v->str_len = len;
	return 0;
}

/* Text-like scalars: the value, and its text in sb (lent: STRING's made
 * in place, the others' copied there by the caller). */
static int read_text(rtd_nettrace *dec, const struct rtd_nettrace_field *f, rtd_rd *r,
		     rtd_buf *sb, struct rtd_nettrace_value *v)
{
	switch (f->type) {
	case RTD_NT_T_CHAR16: {
		uint8_t b[2];
		if (rd_copy(r, b, 2)) {
			v->u = (uint64_t)(b[0] | b[1] << 8);
			v->i = (int64_t)v->u;
			rtd_buf_reset(sb);
			rtd_utf16le_to_utf8(b, 2, 0, sb);
			set_str(v, sb);
		}
		return 0;
	}
	case RTD_NT_T_CHAR8:
		v->u = rd_u8(r);
		v->i = (int64_t)v->u;
		rtd_buf_reset(sb);
		if (v->u < 0x80)
			rtd_buf_putc(sb, (char)v->u);
		else
			rtd_buf_printf(sb, "\\x%02x", (unsigned)v->u);
		set_str(v, sb);
		return 0;
	case RTD_NT_T_GUID: {
		const uint8_t *p;
		if (rd_bytes(r, 16, &p)) {
			fmt_guid(p, sb);
			set_str(v, sb);
		}
		return 0;
	}
	case RTD_NT_T_STRING: {
		if (dec->o.lend_strings)
			return lend_utf16z(dec, r, v);
		int err = rtd_rd_utf16z(r, sb);
		if (err && err != -RTD_E_TRUNCATED)
			return err;
		if (!err)
			set_str(v, sb);
		return 0;
	}
	default: { /* RTD_NT_T_UTF8Z */
		const uint8_t *z = memchr(r->p, 0, rd_left(r));
		if (!z) {
			rd_fail(r, -RTD_E_TRUNCATED);
			return 0;
		}
		size_t n = (size_t)(z - r->p);
		rtd_buf_reset(sb);
		if (rtd_buf_append(sb, r->p, n))
			return -RTD_E_CAP;
		rd_skip(r, n + 1);
		set_str(v, sb);
		return 0;
	}
	}
}

/* A text made in the scratch buffer (a GUID, a date...), copied to be lent */
static int lend_copy(rtd_nettrace *dec, struct rtd_nettrace_value *v)
{
	char *p = lent_alloc(dec, v->str_len + 1);
	if (!p)
		return dec->lent_err;
	memcpy(p, v->str, v->str_len + 1);
	v->str = p;
	return 0;
}

/* Reads one scalar into v (raw bytes only for DECIMAL and BINARY: the
 * caller has v->raw). Returns 0 or an error; a short read leaves r's
 * sticky error. */
static int read_scalar(struct walk *w, const struct rtd_nettrace_field *f,
		       rtd_rd *r, size_t psz, struct rtd_nettrace_value *v,
		       const uint64_t *siblings, size_t nsib)
{
	rtd_buf *sb = &w->dec->sbuf;
	if (nt_read_number(r, f->type, psz, &v->u, &v->i)) {
		if (f->type == RTD_NT_T_DATETIME && rd_ok(r)) {
			fmt_filetime(v->u, sb);
			set_str(v, sb);
			if (w->dec->o.lend_strings)
				return lend_copy(w->dec, v);
		}
		return 0;
	}
	const uint8_t *p;
	switch (f->type) {
	case RTD_NT_T_F32: v->f = rd_f32le(r); return 0;
	case RTD_NT_T_F64: v->f = rd_f64le(r); return 0;
	case RTD_NT_T_CHAR16: case RTD_NT_T_CHAR8: case RTD_NT_T_GUID:
	case RTD_NT_T_STRING: case RTD_NT_T_UTF8Z: {
		int err = read_text(w->dec, f, r, sb, v);
		if (!err && v->str == rtd_buf_cstr(sb) && w->dec->o.lend_strings)
			return lend_copy(w->dec, v);
		return err;
	}
	case RTD_NT_T_DECIMAL:
		rd_bytes(r, 16, &p);
		return 0;
	case RTD_NT_T_BINARY: {
		uint64_t n = (f->count_field >= 0 && (size_t)f->count_field < nsib)
				     ? siblings[f->count_field]
				     : 0;
		if (n > rd_left(r))
			rd_fail(r, -RTD_E_TRUNCATED);
		else
			rd_bytes(r, (size_t)n, &p);
		return 0;
	}
	default:
		return -RTD_E_NT_PAYLOAD;
	}
}

static int walk_object(struct walk *w, const struct rtd_nettrace_field *f,
		       rtd_rd *r, struct rtd_nettrace_value *v)
{
	v->kind = RTD_NT_V_BEGIN_OBJECT;
	int rc = emit(w, v);
	if (rc)
		return rc;
	rc = walk_list(w, f->fields, f->nfields, r, v->depth + 1, false);
	if (rc)
		return rc;
	v->kind = RTD_NT_V_END_OBJECT;
	return emit(w, v);
}

/*
 * One field (or array element, is_elem: no name) at r, handed to the
 * callback: a scalar, or the begin, contents and end of an object or
 * array. *count_out gets an integer's value for the sibling count
 * fields that follow.
 */
static int walk_one(struct walk *w, const struct rtd_nettrace_field *f,
		    bool is_elem, rtd_rd *r, unsigned depth, uint64_t *count_out,
		    const uint64_t *siblings, size_t nsib)
{
	struct rtd_nettrace_value v;
	memset(&v, 0, sizeof(v));
	v.kind = RTD_NT_V_SCALAR;
	v.field = f;
	v.name = is_elem ? NULL : f->name;
	v.depth = depth;
	v.type = f->type;
	v.raw = r->p;
	size_t psz = w->dec->info.pointer_size ? w->dec->info.pointer_size : 8;
	if (depth > NT_CAP_DEPTH)
		return -RTD_E_CAP;
	switch (f->type) {
	case RTD_NT_T_OBJECT:
		return walk_object(w, f, r, &v);
	case RTD_NT_T_ARRAY: case RTD_NT_T_FIXED_ARRAY: case RTD_NT_T_COUNTED:
	case RTD_NT_T_RELLOC: case RTD_NT_T_DATALOC: {
		size_t count;
		rtd_rd sub, *er;
		int rc = nt_array(f, r, w->payload, w->payload_len, psz, depth,
				  siblings, nsib, &count, &er, &sub,
				  &w->located_end);
		if (rc)
			return rc;
		return walk_elems(w, f, &f->fields[0], count, er, depth);
	}
	default:
		break;
	}
	int rc = read_scalar(w, f, r, psz, &v, siblings, nsib);
	if (rc)
		return rc;
	if (!rd_ok(r))
		return r->err;
	if (f->type == RTD_NT_T_POINTER)
		v.type = psz == 8 ? RTD_NT_T_U64 : RTD_NT_T_U32;
	v.raw_len = (size_t)(r->p - v.raw);
	if (count_out)
		*count_out = v.u;
	return emit(w, &v);
}

static int walk_list(struct walk *w, const struct rtd_nettrace_field *fs,
		     size_t n, rtd_rd *r, unsigned depth, bool top)
{
	uint64_t sib[64];
	size_t nsib = n < 64 ? n : 64;
	for (size_t i = 0; i < n; i++) {
		if (top && w->lenient && rd_left(r) == 0)
			return 0; /* an older version of the event */
		uint64_t val = 0;
		int rc = walk_one(w, &fs[i], false, r, depth, &val, sib, nsib);
		if (rc)
			return rc == -RTD_E_TRUNCATED ? -RTD_E_NT_PAYLOAD : rc;
		if (i < 64)
			sib[i] = val;
	}
	return 0;
}

int rtd_nettrace_walk(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
		      rtd_nettrace_value_fn fn, void *ctx)
{
	struct walk w = {dec, fn, ctx, ev->payload, ev->payload_len,
			 ev->meta->builtin, NT_CAP_ARRAY_ELEMS, 0};
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	int rc = walk_list(&w, ev->meta->fields, ev->meta->nfields, &r, 0,
			   true);
	size_t at = (size_t)(r.p - ev->payload);
	if (!rc && w.located_end > at && w.located_end <= ev->payload_len)
		rd_skip(&r, w.located_end - at);
	if (rc || rd_left(&r) == 0)
		return rc;
	/* bytes no field describes: handed over, never dropped unseen */
	struct rtd_nettrace_value v;
	memset(&v, 0, sizeof(v));
	v.kind = RTD_NT_V_TRAILING;
	v.raw = r.p;
	v.raw_len = rd_left(&r);
	v.type = RTD_NT_T_BINARY;
	return fn(ctx, &v);
}

struct getctx {
	const char *name;
	struct rtd_nettrace_value *out;
	rtd_buf *keep;
	int found;
};

static int get_cb(void *ctx, const struct rtd_nettrace_value *v)
{
	struct getctx *g = ctx;
	if (v->depth != 0 || !v->name || strcmp(v->name, g->name))
		return 0;
	*g->out = *v;
	if (v->str) {
		rtd_buf_reset(g->keep);
		if (rtd_buf_append(g->keep, v->str, v->str_len))
			return -ENOMEM;
		g->out->str = rtd_buf_cstr(g->keep);
	}
	g->found = 1;
	return 1;
}

int rtd_nettrace_get(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
		     const char *name, struct rtd_nettrace_value *out)
{
	bool have = false;
	for (size_t i = 0; i < ev->meta->nfields; i++)
		if (ev->meta->fields[i].name &&
		    !strcmp(ev->meta->fields[i].name, name))
			have = true;
	if (!have)
		return -RTD_E_NOTFOUND;
	struct getctx g = {name, out, &dec->gbuf, 0};
	int rc = rtd_nettrace_walk(dec, ev, get_cb, &g);
	if (g.found)
		return 0;
	if (rc < 0)
		return rc;
	return -RTD_E_NOTFOUND;
}


/* ---- flat payloads: read straight, without the walk ---------------------- */

unsigned nt_field_type(unsigned type, bool str)
{
	static const uint8_t by_type[] = {
		[RTD_NT_T_I8] = RTD_FIELD_I64,	  [RTD_NT_T_I16] = RTD_FIELD_I64,
		[RTD_NT_T_I32] = RTD_FIELD_I64,	  [RTD_NT_T_I64] = RTD_FIELD_I64,
		[RTD_NT_T_VARINT] = RTD_FIELD_I64, [RTD_NT_T_F32] = RTD_FIELD_F64,
		[RTD_NT_T_F64] = RTD_FIELD_F64,
	};
	if (str)
		return RTD_FIELD_STR;
	return type < sizeof(by_type) && by_type[type] ? by_type[type] : RTD_FIELD_U64;
}

/* The types nt_read_flat() reads as the walk does: numbers that make no
 * text (a date does), floats, and lent UTF-16 strings */
static bool flat_type(unsigned type)
{
	switch (type) {
	case RTD_NT_T_I8: case RTD_NT_T_U8: case RTD_NT_T_I16: case RTD_NT_T_U16:
	case RTD_NT_T_I32: case RTD_NT_T_U32: case RTD_NT_T_I64: case RTD_NT_T_U64:
	case RTD_NT_T_VARINT: case RTD_NT_T_VARUINT: case RTD_NT_T_BOOL8: case RTD_NT_T_BOOL32:
	case RTD_NT_T_POINTER: case RTD_NT_T_HEX32: case RTD_NT_T_HEX64: case RTD_NT_T_F32:
	case RTD_NT_T_F64: case RTD_NT_T_STRING:
		return true;
	default:
		return false;
	}
}

bool nt_flat(const rtd_nettrace *dec, const struct rtd_nettrace_metadata *m, size_t n)
{
	if (!dec->o.lend_strings || n > m->nfields)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!m->fields[i].name || !flat_type(m->fields[i].type))
			return false;
	return true;
}

/* A fixed-size flat type's size, pointers aside (0: a pointer, a string
 * or a varint) */
static size_t flat_fixed(unsigned type)
{
	static const uint8_t fixed[] = {
		[RTD_NT_T_I8] = 1,   [RTD_NT_T_U8] = 1,	   [RTD_NT_T_BOOL8] = 1,
		[RTD_NT_T_I16] = 2,  [RTD_NT_T_U16] = 2,   [RTD_NT_T_I32] = 4,
		[RTD_NT_T_U32] = 4,  [RTD_NT_T_F32] = 4,   [RTD_NT_T_BOOL32] = 4,
		[RTD_NT_T_I64] = 8,  [RTD_NT_T_U64] = 8,   [RTD_NT_T_F64] = 8,
	};
	return type < sizeof(fixed) ? fixed[type]
	       : type == RTD_NT_T_HEX32 ? 4
	       : type == RTD_NT_T_HEX64 ? 8
					: 0;
}

size_t nt_flat_plan(const struct rtd_nettrace_metadata *m, size_t n, uint64_t skip,
		    struct nt_flat_step *steps)
{
	size_t ns = 0;
	uint32_t bytes = 0;
	uint16_t ptrs = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned type = m->fields[i].type;
		bool pass = i < 64 && (skip >> i & 1);
		size_t fixed = flat_fixed(type);
		if (pass && (fixed || type == RTD_NT_T_POINTER)) {
			bytes += (uint32_t)fixed; /* passed over with the next step */
			ptrs += type == RTD_NT_T_POINTER;
			continue;
		}
		struct nt_flat_step *st = &steps[ns++];
		*st = (struct nt_flat_step){.skip = bytes, .ptrs = ptrs, .type = (uint8_t)type,
					    .field = (uint16_t)i, .pass = pass,
					    .rtype = (uint8_t)nt_field_type(type, type == RTD_NT_T_STRING)};
		bytes = 0;
		ptrs = 0;
	}
	return ns; /* the fields passed over at the end need no reading */
}

void nt_str_cache_init(struct nt_str_cache *c)
{
	memset(c, 0, sizeof(*c));
	rtd_map_init(&c->index, NT_STR_CACHE_ENTRIES);
	rtd_arena_init(&c->mem, NT_STR_CACHE_ARENA);
}

void nt_str_cache_free(struct nt_str_cache *c)
{
	rtd_map_free(&c->index);
	rtd_arena_free(&c->mem);
	free(c->ents);
}

/* A lent string kept: its UTF-16 bytes and text copied; false when the
 * cache is full (the string stays lent) */
static bool cache_keep(struct nt_str_cache *c, uint64_t h, const uint8_t *raw, size_t nb,
		       const char *str, size_t len)
{
	if (!c->ents) {
		c->ents = malloc(NT_STR_CACHE_ENTRIES * sizeof(*c->ents));
		if (!c->ents)
			return false;
	}
	if (c->n >= NT_STR_CACHE_ENTRIES)
		return false;
	uint8_t *r = rtd_arena_alloc(&c->mem, nb, NULL);
	char *t = r ? rtd_arena_alloc(&c->mem, len + 1, NULL) : NULL;
	if (!t)
		return false;
	memcpy(r, raw, nb);
	memcpy(t, str, len + 1);
	if (rtd_map_put(&c->index, h, (void *)(uintptr_t)(c->n + 1), NULL) < 0)
		return false;
	c->ents[c->n++] = (struct nt_str_ent){.raw = r, .raw_len = nb, .str = t};
	return true;
}

/* A STRING field's text: from @c when its bytes were converted before,
 * else converted where it is lent (and kept in @c when there is room) */
static int flat_string(rtd_nettrace *dec, rtd_rd *r, struct nt_str_cache *c, const char **out)
{
	size_t units;
	if (rtd_rd_utf16z_units(r, &units))
		return 0; /* no terminator: the reader's error says it */
	size_t nb = 2 * units;
	const uint8_t *raw = r->p;
	uint64_t h = 0;
	void *v;
	if (c && nb <= NT_STR_CACHE_MAX_BYTES) {
		const struct nt_str_ent *e = NULL;
		size_t k = 0;
		for (; k < 4 && c->recent[k]; k++)
			if (c->recent[k]->raw_len == nb && !memcmp(c->recent[k]->raw, raw, nb)) {
				e = c->recent[k];
				break;
			}
		if (!e) {
			h = rtd_hash_bytes(raw, nb) ^ nb;
			if (rtd_map_get(&c->index, h, &v)) {
				e = &c->ents[(uintptr_t)v - 1];
				if (e->raw_len != nb || memcmp(e->raw, raw, nb))
					e = NULL, c = NULL; /* another string of that hash: not kept */
			}
			k = 3;
		}
		if (e) {
			memmove(&c->recent[1], &c->recent[0], k * sizeof(c->recent[0]));
			c->recent[0] = e;
			rd_skip(r, nb + 2);
			*out = e->str;
			return 0;
		}
	} else {
		c = NULL;
	}
	struct rtd_nettrace_value sv = {0};
	int rc = lend_utf16z(dec, r, &sv);
	if (rc)
		return rc;
	*out = sv.str;
	if (c && cache_keep(c, h, raw, nb, sv.str, sv.str_len))
		*out = c->ents[c->n - 1].str;
	return 0;
}

int nt_read_flat(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
		 const struct nt_flat_step *steps, size_t nsteps, struct rtd_field *out,
		 size_t *nout, const char *const *names, struct nt_str_cache *cache)
{
	size_t psz = dec->info.pointer_size ? dec->info.pointer_size : 8;
	rtd_rd r;
	rd_init(&r, ev->payload ? ev->payload : (const uint8_t *)"", ev->payload_len);
	size_t k = 0;
	for (size_t i = 0; i < nsteps; i++) {
		const struct nt_flat_step *st = &steps[i];
		if (st->skip || st->ptrs)
			rd_skip(&r, st->skip + st->ptrs * psz);
		struct rtd_field *f = &out[k];
		f->u = 0;
		f->i = 0;
		f->f = 0;
		f->s = NULL;
		size_t units;
		switch (st->type) {
		case RTD_NT_T_F32: f->f = rd_f32le(&r); break;
		case RTD_NT_T_F64: f->f = rd_f64le(&r); break;
		case RTD_NT_T_STRING:
			if (st->pass) {
				if (rtd_rd_utf16z_units(&r, &units) == 0)
					rd_skip(&r, 2 * units + 2);
			} else {
				int rc = flat_string(dec, &r, cache, &f->s);
				if (rc)
					return rc;
			}
			break;
		default: (void)nt_read_number(&r, st->type, psz, &f->u, &f->i); break;
		}
		/* a payload that ends early (an older version of the event, or
		 * cut): the fields before it, as the walk gives them */
		if (!rd_ok(&r))
			return -RTD_E_NT_PAYLOAD;
		if (st->pass)
			continue;
		f->name = names[st->field];
		f->type = st->rtype;
		*nout = ++k;
	}
	*nout = k;
	return 0;
}
