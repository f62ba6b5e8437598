/* SPDX-License-Identifier: MIT */
/*
 * metadata.c - event metadata records: NetPerf V3 / NetTrace V4-V5
 * (NetTraceFormat_v5.md "Metadata event encoding", with V5's OpCode and
 * V2Params tags) and V6 rows (NetTraceFormat.md "MetadataBlock").
 *
 * A record is parsed twice: the first pass checks it and counts fields and
 * string bytes, the second fills one allocation holding the record, its
 * field tree and its strings. Freeing a record is one free().
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "nettrace/nt.h"

struct bld {
	bool fill;
	bool bad_type;          /* an unknown type code: drop the layout */
	size_t nfields;         /* pass 1: count; pass 2: next free slot */
	size_t strbytes;
	struct rtd_nettrace_field *fields;
	char *strs;
	rtd_buf *tmp;
	rtd_nettrace *dec;
	uint64_t base;          /* stream offset of the record reader start */
	const rtd_rd *top;
};

static int bfail(struct bld *b, const rtd_rd *r, int err, const char *what)
{
	return nt_fail(b->dec, err, b->base + rd_off(r),
		       "metadata record: %s", what);
}

static const char *bstr(struct bld *b, const char *s, size_t n)
{
	if (!b->fill) {
		b->strbytes += n + 1;
		return "";
	}
	char *d = b->strs + b->strbytes;
	memcpy(d, s, n);
	d[n] = 0;
	b->strbytes += n + 1;
	return d;
}

static int bstr16(struct bld *b, rtd_rd *r, const char **out)
{
	int err = rtd_rd_utf16z(r, b->tmp);
	if (err)
		return bfail(b, r, err == -RTD_E_TRUNCATED ? -RTD_E_NT_METADATA
							   : err,
			     "string runs past the record end");
	*out = bstr(b, (const char *)rtd_buf_cstr(b->tmp), b->tmp->len);
	return 0;
}

static int bstr8(struct bld *b, rtd_rd *r, const char **out)
{
	uint32_t n = rd_varuint32(r);
	const uint8_t *s;
	if (!rd_ok(r) || !rd_bytes(r, n, &s))
		return bfail(b, r, -RTD_E_NT_METADATA,
			     "string runs past the record end");
	if (n > RTD_CAP_STRING)
		return bfail(b, r, -RTD_E_CAP, "string too long");
	*out = bstr(b, (const char *)s, n);
	return 0;
}

static struct rtd_nettrace_field *bfields(struct bld *b, size_t n)
{
	size_t at = b->nfields;
	b->nfields += n;
	if (!b->fill)
		return NULL;
	return b->fields + at;
}

/* A scratch field for pass 1, so parsers can write unconditionally. */
static struct rtd_nettrace_field *slot(struct bld *b,
				       struct rtd_nettrace_field *arr, size_t i,
				       struct rtd_nettrace_field *scratch)
{
	if (b->fill)
		return &arr[i];
	memset(scratch, 0, sizeof(*scratch));
	return scratch;
}

static bool type_known_v5(uint32_t t)
{
	return (t >= 1 && t <= 19 && t != 2);
}

/* ---- V1 field layout (V3-V5): type, [nested], name ---------------- */

/*
 * field_count_check - vet a field count just read from a field list
 * @depth: nesting depth of this list, or UINT_MAX where the format has no
 *         nesting limit of its own here
 * @min_bytes: the fewest bytes one field description can take, so a count
 *             larger than the rest of the record is refused before any
 *             allocation
 */
static int field_count_check(struct bld *b, rtd_rd *r, unsigned depth,
			     uint32_t n, size_t min_bytes)
{
	if (!rd_ok(r))
		return bfail(b, r, -RTD_E_NT_METADATA, "field count truncated");
	if (depth != UINT_MAX && depth > NT_CAP_DEPTH)
		return bfail(b, r, -RTD_E_CAP, "structs nested too deep");
	if (n > NT_CAP_FIELDS || n > rd_left(r) / min_bytes)
		return bfail(b, r, -RTD_E_NT_METADATA,
			     "field count larger than the record");
	return 0;
}

static int fields_v1(struct bld *b, rtd_rd *r, unsigned depth,
		     struct rtd_nettrace_field **out, uint16_t *nout)
{
	uint32_t n = rd_u32le(r);
	int cerr = field_count_check(b, r, depth, n, 6);
	if (cerr)
		return cerr;
	struct rtd_nettrace_field *arr = bfields(b, n), scratch;
	*out = arr;
	*nout = (uint16_t)n;
	for (uint32_t i = 0; i < n; i++) {
		struct rtd_nettrace_field *f = slot(b, arr, i, &scratch);
		uint32_t t = rd_u32le(r);
		if (!rd_ok(r))
			return bfail(b, r, -RTD_E_NT_METADATA,
				     "field type truncated");
		if (!type_known_v5(t) || t == RTD_NT_T_ARRAY) {
			/* TraceEvent drops the layout of such events */
			b->bad_type = true;
			return 0;
		}
		f->type = (uint16_t)t;
		f->count_field = -1;
		if (t == RTD_NT_T_OBJECT) {
			struct rtd_nettrace_field *sub;
			uint16_t ns;
			int err = fields_v1(b, r, depth + 1, &sub, &ns);
			if (err || b->bad_type)
				return err;
			f->fields = sub;
			f->nfields = ns;
		}
		int err = bstr16(b, r, &f->name);
		if (err)
			return err;
	}
	return 0;
}

/* ---- V2 field layout (V5 V2Params tag): size, name, type, [elem] ---- */

static int fields_v2(struct bld *b, rtd_rd *r, unsigned depth,
		     struct rtd_nettrace_field **out, uint16_t *nout);

static int type_v2(struct bld *b, rtd_rd *r, unsigned depth,
		   struct rtd_nettrace_field *f)
{
	uint32_t t = rd_u32le(r);
	if (!rd_ok(r))
		return bfail(b, r, -RTD_E_NT_METADATA, "field type truncated");
	if (!type_known_v5(t)) {
		b->bad_type = true;
		return 0;
	}
	if (depth > NT_CAP_DEPTH)
		return bfail(b, r, -RTD_E_CAP, "types nested too deep");
	f->type = (uint16_t)t;
	f->count_field = -1;
	if (t == RTD_NT_T_OBJECT) {
		struct rtd_nettrace_field *sub;
		uint16_t ns;
		int err = fields_v2(b, r, depth + 1, &sub, &ns);
		if (err)
			return err;
		f->fields = sub;
		f->nfields = ns;
	} else if (t == RTD_NT_T_ARRAY) {
		struct rtd_nettrace_field *e = bfields(b, 1), scratch;
		struct rtd_nettrace_field *ef = e ? e : &scratch;
		memset(ef, 0, sizeof(*ef));
		ef->name = "";
		int err = type_v2(b, r, depth + 1, ef);
		if (err)
			return err;
		f->fields = e;
		f->nfields = 1;
	}
	return 0;
}

static int fields_v2(struct bld *b, rtd_rd *r, unsigned depth,
		     struct rtd_nettrace_field **out, uint16_t *nout)
{
	uint32_t n = rd_u32le(r);
	int cerr = field_count_check(b, r, depth, n, 10);
	if (cerr)
		return cerr;
	struct rtd_nettrace_field *arr = bfields(b, n), scratch;
	*out = arr;
	*nout = (uint16_t)n;
	for (uint32_t i = 0; i < n && !b->bad_type; i++) {
		struct rtd_nettrace_field *f = slot(b, arr, i, &scratch);
		uint32_t size = rd_u32le(r);
		rtd_rd fr;
		if (!rd_ok(r) || size < 4 || !rd_sub(r, size - 4, &fr))
			return bfail(b, r, -RTD_E_NT_METADATA,
				     "field description runs past the record");
		int err = bstr16(b, &fr, &f->name);
		if (!err)
			err = type_v2(b, &fr, depth, f);
		if (err)
			return err;
	}
	return 0;
}

/* ---- V6 field layout: u16 size, utf8 name, u8 type, [elem/count] ---- */

static int fields_v6(struct bld *b, rtd_rd *r, unsigned depth,
		     struct rtd_nettrace_field **out, uint16_t *nout);

static bool type_known_v6(uint32_t t)
{
	return (t >= 1 && t <= 26 && t != 2 && t != 15);
}

static int type_v6(struct bld *b, rtd_rd *r, unsigned depth,
		   struct rtd_nettrace_field *f)
{
	uint8_t t = rd_u8(r);
	if (!rd_ok(r))
		return bfail(b, r, -RTD_E_NT_METADATA, "field type truncated");
	if (!type_known_v6(t))
		return bfail(b, r, -RTD_E_NT_METADATA, "unknown type code");
	if (depth > NT_CAP_DEPTH)
		return bfail(b, r, -RTD_E_CAP, "types nested too deep");
	f->type = t;
	f->count_field = -1;
	if (t == RTD_NT_T_OBJECT) {
		struct rtd_nettrace_field *sub;
		uint16_t ns;
		int err = fields_v6(b, r, depth + 1, &sub, &ns);
		if (err)
			return err;
		f->fields = sub;
		f->nfields = ns;
	} else if (t == RTD_NT_T_ARRAY || t == RTD_NT_T_FIXED_ARRAY ||
		   t == RTD_NT_T_RELLOC || t == RTD_NT_T_DATALOC) {
		struct rtd_nettrace_field *e = bfields(b, 1), scratch;
		struct rtd_nettrace_field *ef = e ? e : &scratch;
		memset(ef, 0, sizeof(*ef));
		ef->name = "";
		int err = type_v6(b, r, depth + 1, ef);
		if (err)
			return err;
		f->fields = e;
		f->nfields = 1;
		if (t == RTD_NT_T_FIXED_ARRAY) {
			f->fixed_count = rd_u16le(r);
			if (!rd_ok(r))
				return bfail(b, r, -RTD_E_NT_METADATA,
					     "array length truncated");
		}
	}
	return 0;
}

static int fields_v6(struct bld *b, rtd_rd *r, unsigned depth,
		     struct rtd_nettrace_field **out, uint16_t *nout)
{
	uint16_t n = rd_u16le(r);
	int cerr = field_count_check(b, r, UINT_MAX, n, 4);
	if (cerr)
		return cerr;
	struct rtd_nettrace_field *arr = bfields(b, n), scratch;
	*out = arr;
	*nout = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rtd_nettrace_field *f = slot(b, arr, i, &scratch);
		uint16_t size = rd_u16le(r);
		rtd_rd fr;
		if (!rd_ok(r) || !rd_sub(r, size, &fr))
			return bfail(b, r, -RTD_E_NT_METADATA,
				     "field description runs past the record");
		int err = bstr8(b, &fr, &f->name);
		if (!err)
			err = type_v6(b, &fr, depth, f);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the record ------------------------------------------------------ */

/* TraceEvent's names of the standard opcodes (its TraceEventOpcode);
 * others are shown as their number, as TraceEvent does. */
static const char *opcode_name(uint32_t op, char *buf, size_t n)
{
	static const char *const names[] = {
		"Info", "Start", "Stop", "DataCollectionStart",
		"DataCollectionStop", "Extension", "Reply", "Resume",
		"Suspend", "Transfer",
	};
	if (op < sizeof(names) / sizeof(names[0]))
		return names[op];
	snprintf(buf, n, "%u", op);
	return buf;
}

static bool ends_with_ci(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcasecmp(s + a - b, suf);
}

struct parsed {
	uint32_t id;
	const char *provider;
	uint32_t event_id;
	const char *event_name;
	uint64_t keywords;
	uint32_t version, level, opcode;
	struct rtd_nettrace_field *fields;
	uint16_t nfields;
	bool have_v2;
};

static int parse_v5(struct bld *b, rtd_rd *r, int format, struct parsed *o)
{
	memset(o, 0, sizeof(*o));
	o->id = rd_u32le(r);
	int err = bstr16(b, r, &o->provider);
	if (err)
		return err;
	o->event_id = rd_u32le(r);
	err = bstr16(b, r, &o->event_name);
	if (err)
		return err;
	o->keywords = rd_u64le(r);
	o->version = rd_u32le(r);
	o->level = rd_u32le(r);
	if (!rd_ok(r))
		return bfail(b, r, -RTD_E_NT_METADATA, "header truncated");
	if (rd_left(r) == 0)
		return 0;
	err = fields_v1(b, r, 0, &o->fields, &o->nfields);
	if (err)
		return err;
	if (b->bad_type) {
		o->fields = NULL;
		o->nfields = 0;
		return 0;
	}
	/* V5 tags (OpCode, V2Params). The runtime writes them from .NET 5 on
	 * while still calling the trace object version 4, so they are read
	 * whatever the version says, as TraceEvent does. */
	(void)format;
	while (rd_left(r) > 0) {
		uint32_t len = rd_u32le(r);
		uint8_t kind = rd_u8(r);
		rtd_rd tr;
		if (!rd_ok(r) || !rd_sub(r, len, &tr))
			return bfail(b, r, -RTD_E_NT_METADATA,
				     "metadata tag runs past the record");
		if (kind == 1) {
			o->opcode = rd_u8(&tr);
		} else if (kind == 2) {
			struct rtd_nettrace_field *f;
			uint16_t n;
			err = fields_v2(b, &tr, 0, &f, &n);
			if (err)
				return err;
			if (b->bad_type) {
				o->fields = NULL;
				o->nfields = 0;
				return 0;
			}
			o->fields = f;
			o->nfields = n;
			o->have_v2 = true;
		}
	}
	return 0;
}

/* The runtime's providers by their GUIDs (NetPerf V1 names none). */
static const struct {
	uint8_t guid[16];
	const char *name;
} known_guids[] = {
	{{0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e, 0x93, 0x1b, 0xd9,
	  0xcc, 0x2e, 0xee, 0x27, 0xe4}, "Microsoft-Windows-DotNETRuntime"},
	{{0x1c, 0x02, 0x69, 0xa6, 0x50, 0xc4, 0x09, 0x46, 0xa0, 0x35, 0x5a,
	  0xf5, 0x9a, 0xf4, 0xdf, 0x18}, "Microsoft-Windows-DotNETRuntimeRundown"},
	{{0x54, 0xd7, 0x3f, 0x76, 0x86, 0x70, 0xfe, 0x4d, 0x95, 0xeb, 0xc0,
	  0x1a, 0x46, 0xfa, 0xf4, 0xca}, "Microsoft-Windows-DotNETRuntimePrivate"},
	{{0x44, 0x0d, 0x53, 0x3c, 0x3a, 0x97, 0xae, 0x51, 0x1e, 0x6d, 0x78,
	  0x3e, 0x8f, 0x8e, 0x03, 0xa9}, "Microsoft-DotNETCore-SampleProfiler"},
};

/*
 * NetPerf V1/V2 (.NET Core 2.0) metadata event payload: the provider (V1:
 * its GUID; V2: its name, UTF-16), event id, version, then a length and,
 * when nonzero, EventSource's own metadata (id, name, keywords, version,
 * level, parameters as type + name). The runtime's events carry none.
 */
static int parse_v12(struct bld *b, rtd_rd *r, int format, struct parsed *o)
{
	memset(o, 0, sizeof(o[0]));
	int err;
	if (format == 1) {
		uint8_t g[16];
		if (!rd_copy(r, g, 16))
			return bfail(b, r, -RTD_E_NT_METADATA,
				     "provider GUID truncated");
		o->provider = NULL;
		for (size_t i = 0;
		     i < sizeof(known_guids) / sizeof(known_guids[0]); i++)
			if (!memcmp(g, known_guids[i].guid, 16))
				o->provider = bstr(b, known_guids[i].name,
						   strlen(known_guids[i].name));
		if (!o->provider) {
			char t[40];
			snprintf(t, sizeof(t),
				 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
				 "%02x%02x%02x%02x%02x%02x",
				 g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6],
				 g[8], g[9], g[10], g[11], g[12], g[13], g[14],
				 g[15]);
			o->provider = bstr(b, t, strlen(t));
		}
	} else {
		err = bstr16(b, r, &o->provider);
		if (err)
			return err;
	}
	o->event_id = rd_u32le(r);
	o->version = rd_u32le(r);
	uint32_t len = rd_u32le(r);
	rtd_rd mr;
	if (!rd_ok(r) || !rd_sub(r, len, &mr))
		return bfail(b, r, -RTD_E_NT_METADATA, "header truncated");
	o->event_name = bstr(b, "", 0);
	if (len == 0)
		return 0;
	o->event_id = rd_u32le(&mr);
	err = bstr16(b, &mr, &o->event_name);
	if (err)
		return err;
	o->keywords = rd_u64le(&mr);
	o->version = rd_u32le(&mr);
	o->level = rd_u32le(&mr);
	if (!rd_ok(&mr))
		return bfail(b, &mr, -RTD_E_NT_METADATA, "header truncated");
	if (rd_left(&mr) == 0)
		return 0;
	err = fields_v1(b, &mr, 0, &o->fields, &o->nfields);
	if (err)
		return err;
	if (b->bad_type) {
		o->fields = NULL;
		o->nfields = 0;
	}
	return 0;
}

static int parse_v6(struct bld *b, rtd_rd *r, struct parsed *o)
{
	memset(o, 0, sizeof(*o));
	o->id = rd_varuint32(r);
	int err = bstr8(b, r, &o->provider);
	if (err)
		return err;
	o->event_id = rd_varuint32(r);
	err = bstr8(b, r, &o->event_name);
	if (err)
		return err;
	err = fields_v6(b, r, 0, &o->fields, &o->nfields);
	if (err)
		return err;
	uint16_t osize = rd_u16le(r);
	rtd_rd opt;
	if (!rd_ok(r) || !rd_sub(r, osize, &opt))
		return bfail(b, r, -RTD_E_NT_METADATA,
			     "optional metadata runs past the record");
	while (rd_left(&opt) > 0) {
		uint8_t kind = rd_u8(&opt);
		const char *s;
		switch (kind) {
		case NT_META_OPCODE: o->opcode = rd_u8(&opt); break;
		case NT_META_KEYWORD: o->keywords = rd_u64le(&opt); break;
		case NT_META_MESSAGE_TEMPLATE: case NT_META_DESCRIPTION:
			err = bstr8(b, &opt, &s);
			if (err)
				return err;
			break;
		case NT_META_KEY_VALUE:
			err = bstr8(b, &opt, &s);
			if (!err)
				err = bstr8(b, &opt, &s);
			if (err)
				return err;
			break;
		case NT_META_PROVIDER_GUID: rd_skip(&opt, 16); break;
		case NT_META_LEVEL: o->level = rd_u8(&opt); break;
		case NT_META_VERSION: o->version = rd_u8(&opt); break;
		default:
			return bfail(b, &opt, -RTD_E_NT_METADATA,
				     "unknown optional metadata kind");
		}
		if (!rd_ok(&opt))
			return bfail(b, &opt, -RTD_E_NT_METADATA,
				     "optional metadata truncated");
	}
	return 0;
}

/* Events TraceEvent names by its own parser's task and opcode instead of
 * the EventSource's method name: System.Threading.Tasks.TplEventSource
 * (TraceEvent 4.0.0's TplEtwProviderTraceEventParser templates: event
 * id, opcode, "Task/Opcode"). TraceEvent has no parser of its own for the
 * ArrayPool, Sockets, Http or Kestrel EventSources: it names them from
 * the metadata, as display_name() does. */
struct es_name {
	uint16_t id;
	uint8_t opcode;
	const char *name;
};

static const struct es_name tpl_names[] = {
	{1, 1, "Loop/Start"},
	{2, 2, "Loop/Stop"},
	{3, 1, "Invoke/Start"},
	{4, 2, "Invoke/Stop"},
	{5, 1, "ForkJoin/Start"},
	{6, 2, "ForkJoin/Stop"},
	{7, 9, "TaskScheduled/Send"},
	{8, 1, "TaskExecute/Start"},
	{9, 2, "TaskExecute/Stop"},
	{10, 9, "TaskWait/Send"},
	{11, 2, "TaskWait/Stop"},
	{12, 9, "AwaitTaskContinuationScheduled/Send"},
	{13, 0, "TaskWaitContinuationComplete"},
	{14, 1, "TraceOperation/Start"},
	{15, 2, "TraceOperation/Stop"},
	{16, 0, "TraceOperationRelation"},
	{17, 1, "TraceSynchronousWork/Start"},
	{18, 2, "TraceSynchronousWork/Stop"},
};

static const struct es_name *traceevent_es_name(const char *provider,
						 uint32_t id)
{
	if (!provider || strcmp(provider, "System.Threading.Tasks.TplEventSource"))
		return NULL;
	for (size_t i = 0; i < sizeof(tpl_names) / sizeof(tpl_names[0]); i++)
		if (tpl_names[i].id == id)
			return &tpl_names[i];
	return NULL;
}

/* Build the display name the way TraceEvent does for EventSource events:
 * an implied Start/Stop opcode from the name's suffix, the suffix then
 * stripped, and "/Opcode" appended. */
static void display_name(const struct parsed *o, uint32_t *opcode,
			 char *out, size_t n)
{
	if (!o->event_name[0]) {
		snprintf(out, n, "EventID(%u)", o->event_id);
		return;
	}
	uint32_t op = *opcode;
	size_t len = strlen(o->event_name);
	if (op == 0) {
		if (ends_with_ci(o->event_name, "Start"))
			op = 1;
		else if (ends_with_ci(o->event_name, "Stop"))
			op = 2;
	}
	if (op == 1 && ends_with_ci(o->event_name, "Start"))
		len -= 5;
	else if (op == 2 && ends_with_ci(o->event_name, "Stop"))
		len -= 4;
	*opcode = op;
	char ob[16];
	if (op == 0)
		snprintf(out, n, "%.*s", (int)len, o->event_name);
	else
		snprintf(out, n, "%.*s/%s", (int)len, o->event_name,
			 opcode_name(op, ob, sizeof(ob)));
}

static void bools_to_8bit(struct rtd_nettrace_field *f, size_t n,
			  unsigned depth)
{
	if (depth > NT_CAP_DEPTH)
		return;
	for (size_t i = 0; i < n; i++) {
		if (f[i].type == RTD_NT_T_BOOL32)
			f[i].type = RTD_NT_T_BOOL8;
		if (f[i].nfields)
			bools_to_8bit((struct rtd_nettrace_field *)f[i].fields,
				      f[i].nfields, depth + 1);
	}
}

static int build(rtd_nettrace *dec, rtd_rd *r, int format, uint64_t base,
		 struct nt_meta **out)
{
	struct bld b;
	memset(&b, 0, sizeof(b));
	b.tmp = &dec->sbuf;
	b.dec = dec;
	b.base = base;
	struct parsed o;
	rtd_rd r1 = *r;
	int err = format == 6   ? parse_v6(&b, &r1, &o)
		  : format <= 2 ? parse_v12(&b, &r1, format, &o)
				: parse_v5(&b, &r1, format, &o);
	if (err)
		return err;
	size_t nf = b.nfields, sb = b.strbytes;
	const size_t name_room = 512;
	size_t head = (sizeof(struct nt_meta) + 15) & ~(size_t)15;
	size_t total = head + nf * sizeof(struct rtd_nettrace_field) + sb +
		       name_room;
	if (total > NT_CAP_META_BYTES - dec->meta_bytes)
		return nt_fail(dec, -RTD_E_CAP, base,
			       "metadata records exceed %u bytes in all",
			       NT_CAP_META_BYTES);
	struct nt_meta *m = calloc(1, total);
	if (!m)
		return -ENOMEM;
	m->alloc = total;
	memset(&b, 0, sizeof(b));
	b.fill = true;
	b.tmp = &dec->sbuf;
	b.dec = dec;
	b.base = base;
	b.fields = (struct rtd_nettrace_field *)((char *)m + head);
	b.strs = (char *)(b.fields + nf);
	rtd_rd r2 = *r;
	err = format == 6   ? parse_v6(&b, &r2, &o)
	      : format <= 2 ? parse_v12(&b, &r2, format, &o)
			    : parse_v5(&b, &r2, format, &o);
	if (err) {
		free(m);
		return err;
	}
	/* A self-describing (TraceLogging) event: EventSource.Write gives
	 * one unnamed struct holding the properties, and writes bools in one
	 * byte (TraceLogging's Boolean8) though the type code is Boolean,
	 * which EventSource's own events write in four. */
	if (o.nfields == 1 && o.fields[0].type == RTD_NT_T_OBJECT &&
	    !o.fields[0].name[0])
		bools_to_8bit(o.fields, 1, 0);
	char *name = b.strs + sb;
	struct rtd_nettrace_metadata *p = &m->pub;
	p->id = o.id;
	p->provider = o.provider;
	p->event_id = o.event_id;
	p->event_name = o.event_name;
	p->keywords = o.keywords;
	p->version = o.version;
	p->level = o.level;
	p->opcode = o.opcode;
	p->fields = o.fields;
	p->nfields = o.nfields;
	const struct nt_schema *s =
		nt_schema_find(o.provider, o.event_id, o.version);
	const struct es_name *es;
	if (s) {
		snprintf(name, name_room, "%s", s->name);
		if (o.nfields == 0) {
			p->fields = s->fields;
			p->nfields = s->nfields;
			p->builtin = true;
		}
		if (p->opcode == 0)
			p->opcode = s->opcode;
	} else if ((es = traceevent_es_name(o.provider, o.event_id))) {
		snprintf(name, name_room, "%s", es->name);
		if (p->opcode == 0)
			p->opcode = es->opcode;
	} else {
		display_name(&o, &p->opcode, name, name_room);
	}
	p->name = name;
	*out = m;
	return 0;
}

int nt_meta_parse_v5(rtd_nettrace *dec, rtd_rd *r, int format, uint64_t base,
		     struct nt_meta **out)
{
	return build(dec, r, format, base, out);
}

int nt_meta_parse_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base,
		     struct nt_meta **out)
{
	return build(dec, r, 6, base, out);
}

size_t nt_fields_upto(const struct rtd_nettrace_metadata *m, const char *const *names,
		      size_t n)
{
	size_t upto = 0;
	for (size_t i = 0; i < m->nfields; i++)
		for (size_t j = 0; j < n; j++)
			if (m->fields[i].name && !strcmp(m->fields[i].name, names[j]))
				upto = i + 1;
	return upto;
}
