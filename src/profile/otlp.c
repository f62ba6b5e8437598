/* SPDX-License-Identifier: MIT */
/*
 * otlp.c - write profiles as the OpenTelemetry profiles signal (alpha):
 * opentelemetry-proto v1.11.0, opentelemetry/proto/profiles/
 * v1development/profiles.proto, message ProfilesData, which has the same
 * fields (1 resource_profiles, 2 dictionary) as the OTLP collector's
 * ExportProfilesServiceRequest, so one encoding serves a file and an
 * OTLP/HTTP body.
 *
 * The dictionary is shared by every profile of the message: strings,
 * attributes, mappings, functions, locations and stacks are each written
 * once, the first time they are met, into a table of their own, and
 * referred to by index. Index 0 of each table is its zero value
 * (ProfilesDictionary: "The element at index 0 MUST be the zero value"),
 * link_table[0] the 16- and 8-byte zero ids the comment asks for.
 *
 * A profile of rtdiag's model may hold several sample types; an OTLP
 * Profile holds one, so each type becomes a Profile of its own, all of
 * them sharing the stacks. Frames inlined into their caller are lines of
 * one Location (the last line the caller), as in pprof. A frame's kind is
 * the location attribute "profile.frame.type" (semantic conventions:
 * native, kernel, dotnet, go); a sample's thread is "thread.id" and
 * "thread.name", its labels attributes of their own names.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/pbw.h"
#include "profile/profile_impl.h"
#include "rtdiag/source.h"

/* Field numbers from profiles.proto, profiles_service.proto,
 * common.proto and resource.proto at v1.11.0. */
enum {
	DATA_RESOURCE_PROFILES = 1,
	DATA_DICTIONARY = 2,
	DICT_MAPPING = 1,
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,
	RP_RESOURCE = 1,
	RP_SCOPE_PROFILES = 2,
	RESOURCE_ATTRIBUTES = 1,
	KV_KEY = 1,
	KV_VALUE = 2,
	ANY_STRING = 1,
	ANY_INT = 3,
	SP_SCOPE = 1,
	SP_PROFILES = 2,
	SCOPE_NAME = 1,
	SCOPE_VERSION = 2,
	PROF_SAMPLE_TYPE = 1,
	PROF_SAMPLES = 2,
	PROF_TIME_UNIX_NANO = 3,
	PROF_DURATION_NANO = 4,
	PROF_PERIOD_TYPE = 5,
	PROF_PERIOD = 6,
	VT_TYPE = 1,
	VT_UNIT = 2,
	SAMPLE_STACK = 1,
	SAMPLE_ATTRS = 2,
	SAMPLE_VALUES = 4,
	MAPPING_START = 1,
	MAPPING_LIMIT = 2,
	MAPPING_OFFSET = 3,
	MAPPING_FILENAME = 4,
	MAPPING_ATTRS = 5,
	STACK_LOCATIONS = 1,
	LOC_MAPPING = 1,
	LOC_ADDRESS = 2,
	LOC_LINES = 3,
	LOC_ATTRS = 4,
	LINE_FUNCTION = 1,
	LINE_LINE = 2,
	FUNC_NAME = 1,
	FUNC_SYSTEM_NAME = 2,
	FUNC_FILENAME = 3,
	KVU_KEY = 1,
	KVU_VALUE = 2,
	KVU_UNIT = 3,
	LINK_TRACE_ID = 1,
	LINK_SPAN_ID = 2,
};

enum { T_MAP, T_LOC, T_FUNC, T_STR, T_ATTR, T_STACK, T_COUNT };

static const unsigned table_field[T_COUNT] = {
	[T_MAP] = DICT_MAPPING,	    [T_LOC] = DICT_LOCATION,
	[T_FUNC] = DICT_FUNCTION,   [T_STR] = DICT_STRING,
	[T_ATTR] = DICT_ATTRIBUTE,  [T_STACK] = DICT_STACK,
};

/* Entries a table may hold: indices are int32 on the wire. */
#define OTLP_MAX_ENTRIES (1u << 30)

struct ox {
	rtd_pbw out;            /* the resource_profiles */
	rtd_pbw tab[T_COUNT];   /* dictionary tables, entries with their keys */
	uint32_t n[T_COUNT];
	rtd_strmap ids[T_COUNT]; /* an entry's identity -> its index */
	rtd_pbw key, packed;    /* scratch */
	int err;
	/* the profile being written: its ids -> the dictionary's */
	const rtd_profile *p;
	uint32_t *sid;          /* string id -> index + 1, 0 not yet */
	uint32_t *mid;          /* mapping id -> index + 1 */
	uint32_t *modmap;       /* module string id -> pseudo mapping + 1 */
	uint32_t kind_attr[RTD_FRAME_KIND_COUNT]; /* + 1 */
};

static int ox_err(struct ox *o)
{
	if (!o->err)
		o->err = o->out.err ? o->out.err
				    : o->key.err ? o->key.err : o->packed.err;
	for (int i = 0; i < T_COUNT && !o->err; i++)
		o->err = o->tab[i].err;
	return o->err;
}

/* The index of the entry whose identity is key[0..klen) in table t;
 * *fresh tells the caller to write it (at the end of o->tab[t]). */
static uint32_t intern(struct ox *o, int t, const void *key, size_t klen,
		       bool *fresh)
{
	*fresh = false;
	void *v;
	if (rtd_strmap_get(&o->ids[t], key, klen, &v))
		return (uint32_t)(uintptr_t)v;
	if (o->n[t] >= OTLP_MAX_ENTRIES) {
		o->err = -RTD_E_CAP;
		return 0;
	}
	uint32_t id = o->n[t];
	int err = rtd_strmap_put(&o->ids[t], key, klen, (void *)(uintptr_t)id);
	if (err) {
		o->err = err;
		return 0;
	}
	o->n[t]++;
	*fresh = true;
	return id;
}

static uint32_t str_idx(struct ox *o, const char *s)
{
	bool fresh;
	size_t len = strlen(s);
	uint32_t id = intern(o, T_STR, s, len, &fresh);
	if (fresh)
		pbw_bytes(&o->tab[T_STR], DICT_STRING, s, len);
	return id;
}

/* A string of the profile being written. */
static uint32_t lstr(struct ox *o, uint32_t local)
{
	if (local >= o->p->nstrs)
		return 0;
	if (!o->sid[local])
		o->sid[local] = str_idx(o, o->p->strs[local]) + 1;
	return o->sid[local] - 1;
}

/* An attribute of the dictionary: a string value when str, else num. */
static uint32_t attr_idx(struct ox *o, uint32_t key, const char *str,
			 int64_t num, uint32_t unit)
{
	uint32_t sv = str ? str_idx(o, str) : 0;
	struct {
		uint32_t key, is_str, sv, unit;
		int64_t num;
	} k = {key, str != NULL, sv, unit, str ? 0 : num};
	bool fresh;
	uint32_t id = intern(o, T_ATTR, &k, sizeof(k), &fresh);
	if (!fresh)
		return id;
	rtd_pbw *w = &o->tab[T_ATTR];
	size_t m = pbw_begin(w, DICT_ATTRIBUTE);
	pbw_uint(w, KVU_KEY, key);
	size_t mv = pbw_begin(w, KVU_VALUE);
	if (str)
		pbw_str(w, ANY_STRING, str);
	else
		pbw_int(w, ANY_INT, num);
	pbw_end(w, mv);
	if (unit)
		pbw_uint(w, KVU_UNIT, unit);
	pbw_end(w, m);
	return id;
}

static void packed_uints(rtd_pbw *w, unsigned field, const uint32_t *v,
			 size_t n, rtd_pbw *scratch)
{
	if (!n)
		return;
	rtd_buf_reset(&scratch->b);
	for (size_t i = 0; i < n; i++)
		pbw_varint(scratch, v[i]);
	pbw_bytes(w, field, scratch->b.data, scratch->b.len);
}

/* A mapping: start, limit, offset, file, build id (an attribute). */
static uint32_t mapping_idx(struct ox *o, uint64_t start, uint64_t limit,
			    uint64_t offset, uint32_t file, uint32_t build_id)
{
	uint32_t battr = 0;
	if (build_id)
		battr = attr_idx(o, str_idx(o, "process.executable.build_id.gnu"),
				 o->p->strs[build_id], 0, 0) + 1;
	uint64_t k[5] = {start, limit, offset, file, battr};
	bool fresh;
	uint32_t id = intern(o, T_MAP, k, sizeof(k), &fresh);
	if (!fresh)
		return id;
	rtd_pbw *w = &o->tab[T_MAP];
	size_t m = pbw_begin(w, DICT_MAPPING);
	if (start)
		pbw_uint(w, MAPPING_START, start);
	if (limit)
		pbw_uint(w, MAPPING_LIMIT, limit);
	if (offset)
		pbw_uint(w, MAPPING_OFFSET, offset);
	if (file)
		pbw_uint(w, MAPPING_FILENAME, file);
	if (battr) {
		uint32_t a = battr - 1;
		packed_uints(w, MAPPING_ATTRS, &a, 1, &o->packed);
	}
	pbw_end(w, m);
	return id;
}

/* The mapping of a frame: its own, or one named by its module alone. */
static uint32_t frame_mapping(struct ox *o, const struct prof_frame_key *k)
{
	const rtd_profile *p = o->p;
	if (k->mapping && k->mapping <= p->nmaps) {
		if (!o->mid[k->mapping]) {
			const struct prof_mapping *mp = &p->maps[k->mapping - 1];
			o->mid[k->mapping] =
				mapping_idx(o, mp->start, mp->limit, mp->offset,
					    lstr(o, mp->file), mp->build_id) +
				1;
		}
		return o->mid[k->mapping] - 1;
	}
	if (!k->module || k->module >= p->nstrs)
		return 0;
	if (!o->modmap[k->module])
		o->modmap[k->module] =
			mapping_idx(o, 0, 0, 0, lstr(o, k->module), 0) + 1;
	return o->modmap[k->module] - 1;
}

static uint32_t function_idx(struct ox *o, const struct prof_frame *f)
{
	uint32_t k[3] = {lstr(o, f->disp), f->k.name ? lstr(o, f->k.name) : 0,
			 f->k.file ? lstr(o, f->k.file) : 0};
	bool fresh;
	uint32_t id = intern(o, T_FUNC, k, sizeof(k), &fresh);
	if (!fresh)
		return id;
	rtd_pbw *w = &o->tab[T_FUNC];
	size_t m = pbw_begin(w, DICT_FUNCTION);
	if (k[0])
		pbw_uint(w, FUNC_NAME, k[0]);
	if (k[1])
		pbw_uint(w, FUNC_SYSTEM_NAME, k[1]);
	if (k[2])
		pbw_uint(w, FUNC_FILENAME, k[2]);
	pbw_end(w, m);
	return id;
}

/* The semantic conventions' profile.frame.type of a frame kind. */
static const char *frame_type(unsigned kind)
{
	switch (kind) {
	case RTD_FRAME_NATIVE:
	case RTD_FRAME_RUNTIME:
		return "native";
	case RTD_FRAME_KERNEL:
		return "kernel";
	case RTD_FRAME_MANAGED:
		return "dotnet";
	case RTD_FRAME_GO:
	case RTD_FRAME_GO_RUNTIME:
		return "go";
	default:
		return NULL;
	}
}

static uint32_t kind_attr(struct ox *o, unsigned kind)
{
	if (kind >= RTD_FRAME_KIND_COUNT || !frame_type(kind))
		return 0;
	if (!o->kind_attr[kind])
		o->kind_attr[kind] =
			attr_idx(o, str_idx(o, "profile.frame.type"),
				 frame_type(kind), 0, 0) + 1;
	return o->kind_attr[kind];
}

/* The location of frames run[0..n) (leaf first; run[n-1] the frame the
 * others were inlined into). */
static uint32_t location_idx(void *ctx, const uint32_t *run, size_t n)
{
	struct ox *o = ctx;
	const rtd_profile *p = o->p;
	const struct prof_frame_key *host = &p->frames[run[n - 1]].k;
	uint64_t addr = host->addr;
	for (size_t i = 0; i < n && !addr; i++)
		addr = p->frames[run[i]].k.addr;
	uint32_t mapping = frame_mapping(o, host);
	uint32_t kattr = kind_attr(o, host->kind); /* + 1 */
	rtd_buf_reset(&o->key.b);
	pbw_raw(&o->key, &addr, sizeof(addr));
	pbw_raw(&o->key, &mapping, sizeof(mapping));
	pbw_raw(&o->key, &kattr, sizeof(kattr));
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = &p->frames[run[i]];
		uint32_t ln[2] = {function_idx(o, f), f->k.line};
		pbw_raw(&o->key, ln, sizeof(ln));
	}
	if (ox_err(o))
		return 0;
	bool fresh;
	uint32_t id = intern(o, T_LOC, o->key.b.data, o->key.b.len, &fresh);
	if (!fresh)
		return id;
	rtd_pbw *w = &o->tab[T_LOC];
	size_t m = pbw_begin(w, DICT_LOCATION);
	if (mapping)
		pbw_uint(w, LOC_MAPPING, mapping);
	if (addr)
		pbw_uint(w, LOC_ADDRESS, addr);
	for (size_t i = 0; i < n; i++) {
		/* known: a lookup */
		uint32_t fn = function_idx(o, &p->frames[run[i]]);
		size_t lm = pbw_begin(w, LOC_LINES);
		if (fn)
			pbw_uint(w, LINE_FUNCTION, fn);
		if (p->frames[run[i]].k.line)
			pbw_uint(w, LINE_LINE, p->frames[run[i]].k.line);
		pbw_end(w, lm);
	}
	if (kattr) {
		uint32_t a = kattr - 1;
		packed_uints(w, LOC_ATTRS, &a, 1, &o->packed);
	}
	pbw_end(w, m);
	return id;
}

static uint32_t stack_idx(struct ox *o, const uint32_t *locs, size_t n)
{
	if (!n)
		return 0; /* Stack{} */
	bool fresh;
	uint32_t id = intern(o, T_STACK, locs, n * sizeof(*locs), &fresh);
	if (!fresh)
		return id;
	rtd_pbw *w = &o->tab[T_STACK];
	size_t m = pbw_begin(w, DICT_STACK);
	packed_uints(w, STACK_LOCATIONS, locs, n, &o->packed);
	pbw_end(w, m);
	return id;
}

static void value_type(struct ox *o, unsigned field, uint32_t type,
		       uint32_t unit)
{
	size_t m = pbw_begin(&o->out, field);
	if (type)
		pbw_uint(&o->out, VT_TYPE, type);
	if (unit)
		pbw_uint(&o->out, VT_UNIT, unit);
	pbw_end(&o->out, m);
}

static void fixed64(rtd_pbw *w, unsigned field, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pbw_key(w, field, PB_I64);
	pbw_raw(w, b, 8);
}

/* A context's sample attributes, appended to *attrs (n of them). */
static size_t ctx_attrs(struct ox *o, const struct prof_ctx *cx,
			uint32_t *attrs, size_t max)
{
	const rtd_profile *p = o->p;
	size_t n = 0;
	if (cx->pid && cx->pid != p->pid && n < max)
		attrs[n++] = attr_idx(o, str_idx(o, "process.pid"), NULL,
				      cx->pid, 0);
	if (cx->tid && n < max)
		attrs[n++] = attr_idx(o, str_idx(o, "thread.id"), NULL, cx->tid,
				      0);
	if (cx->thread && n < max)
		attrs[n++] = attr_idx(o, str_idx(o, "thread.name"),
				      p->strs[cx->thread], 0, 0);
	for (uint32_t l = 0; l < cx->nlabels && n < max; l++) {
		const struct prof_label *lb = &p->labels[cx->label_off + l];
		uint32_t key = lstr(o, lb->key);
		if (lb->pad)
			attrs[n++] = attr_idx(o, key, p->strs[lb->str], 0, 0);
		else
			attrs[n++] = attr_idx(o, key, NULL, lb->num,
					      lb->unit ? lstr(o, lb->unit) : 0);
	}
	return n;
}

#define MAX_SAMPLE_ATTRS (3 + RTD_PROFILE_MAX_LABELS)

/* One rtd_profile: a Profile per sample type, sharing the stacks. */
static void write_profile(struct ox *o, const rtd_profile *p)
{
	o->p = p;
	size_t ns = p->nstrs ? p->nstrs : 1;
	o->sid = calloc(ns, sizeof(*o->sid));
	o->modmap = calloc(ns, sizeof(*o->modmap));
	o->mid = calloc(p->nmaps + 1, sizeof(*o->mid));
	memset(o->kind_attr, 0, sizeof(o->kind_attr));
	uint32_t *stack_of = malloc((p->nnodes ? p->nnodes : 1) *
				    sizeof(*stack_of));
	uint32_t *ctx_of = malloc((p->nnodes ? p->nnodes : 1) *
				  sizeof(*ctx_of));
	uint32_t *cattr = calloc((p->nctxs ? p->nctxs : 1) * MAX_SAMPLE_ATTRS,
				 sizeof(*cattr));
	uint8_t *ncattr = calloc(p->nctxs ? p->nctxs : 1, 1);
	uint32_t *path = NULL, *locs = NULL;
	size_t pcap = 0;
	if (!o->sid || !o->modmap || !o->mid || !stack_of || !ctx_of ||
	    !cattr || !ncattr)
		o->err = -ENOMEM;

	for (size_t i = 0; i < p->nctxs && !o->err; i++)
		ncattr[i] = (uint8_t)ctx_attrs(o, &p->ctxs[i],
					       cattr + i * MAX_SAMPLE_ATTRS,
					       MAX_SAMPLE_ATTRS);
	for (size_t i = 0; i < p->nctxs && !o->err; i++)
		ctx_of[p->ctxs[i].root] = (uint32_t)i;

	/* the stack of every node with a value */
	for (size_t i = 0; i < p->nnodes && !o->err; i++) {
		const struct prof_node *nd = &p->nodes[i];
		if (nd->parent != PROF_NONE)
			ctx_of[i] = ctx_of[nd->parent];
		const int64_t *v = prof_vals(p, (uint32_t)i);
		bool any = false;
		for (size_t t = 0; t < p->ntypes; t++)
			any = any || v[t];
		if (!any)
			continue;
		size_t nloc = 0;
		int rc = prof_node_locations(p, (uint32_t)i, location_idx, o,
					     &o->err, &path, &locs, &pcap, &nloc);
		if (rc)
			o->err = rc;
		if (!o->err)
			stack_of[i] = stack_idx(o, locs, nloc);
	}

	for (size_t t = 0; t < p->ntypes && !ox_err(o); t++) {
		rtd_pbw *w = &o->out;
		size_t m = pbw_begin(w, SP_PROFILES);
		value_type(o, PROF_SAMPLE_TYPE, lstr(o, p->type_str[t][0]),
			   lstr(o, p->type_str[t][1]));
		for (size_t i = 0; i < p->nnodes && !ox_err(o); i++) {
			int64_t v = prof_vals(p, (uint32_t)i)[t];
			if (!v)
				continue;
			size_t sm = pbw_begin(w, PROF_SAMPLES);
			if (stack_of[i])
				pbw_uint(w, SAMPLE_STACK, stack_of[i]);
			uint32_t c = ctx_of[i];
			packed_uints(w, SAMPLE_ATTRS,
				     cattr + (size_t)c * MAX_SAMPLE_ATTRS,
				     ncattr[c], &o->packed);
			rtd_buf_reset(&o->packed.b);
			pbw_varint(&o->packed, (uint64_t)v);
			pbw_bytes(w, SAMPLE_VALUES, o->packed.b.data,
				  o->packed.b.len);
			pbw_end(w, sm);
		}
		if (p->time_nanos > 0)
			fixed64(w, PROF_TIME_UNIX_NANO, (uint64_t)p->time_nanos);
		if (p->duration_nanos > 0)
			pbw_uint(w, PROF_DURATION_NANO,
				 (uint64_t)p->duration_nanos);
		if (p->period) {
			value_type(o, PROF_PERIOD_TYPE, lstr(o, p->period_str[0]),
				   lstr(o, p->period_str[1]));
			pbw_int(w, PROF_PERIOD, p->period);
		}
		pbw_end(w, m);
	}
	free(o->sid);
	free(o->modmap);
	free(o->mid);
	o->sid = o->modmap = o->mid = NULL;
	free(stack_of);
	free(ctx_of);
	free(cattr);
	free(ncattr);
	free(path);
	free(locs);
}

static void write_resource(struct ox *o, const struct rtd_otlp_resource *r,
			   const char *scope, const char *version)
{
	rtd_pbw *w = &o->out;
	size_t m = pbw_begin(w, DATA_RESOURCE_PROFILES);
	size_t rm = pbw_begin(w, RP_RESOURCE);
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct rtd_otlp_attr *a = &r->attrs[i];
		if (!a->key)
			continue;
		size_t km = pbw_begin(w, RESOURCE_ATTRIBUTES);
		pbw_str(w, KV_KEY, a->key);
		size_t vm = pbw_begin(w, KV_VALUE);
		if (a->str)
			pbw_str(w, ANY_STRING, a->str);
		else
			pbw_int(w, ANY_INT, a->num);
		pbw_end(w, vm);
		pbw_end(w, km);
	}
	pbw_end(w, rm);
	size_t sm = pbw_begin(w, RP_SCOPE_PROFILES);
	size_t scm = pbw_begin(w, SP_SCOPE);
	pbw_str(w, SCOPE_NAME, scope);
	pbw_str(w, SCOPE_VERSION, version);
	pbw_end(w, scm);
	for (size_t i = 0; i < r->nprofiles && !ox_err(o); i++)
		if (r->profiles[i])
			write_profile(o, r->profiles[i]);
	pbw_end(w, sm);
	pbw_end(w, m);
}

int rtd_profile_write_otlp(const struct rtd_otlp_resource *res, size_t nres,
			   const struct rtd_otlp_opts *opts, FILE *f)
{
	struct rtd_otlp_opts oc;
	if ((!res && nres) || !f ||
	    rtd_opts_copy(&oc, sizeof(oc), opts, RTD_OPTS_END(rtd_otlp_opts, scope_version)))
		return -RTD_E_INVAL;
	opts = &oc;
	const char *scope = opts && opts->scope_name ? opts->scope_name
						     : "rtdiag";
	const char *version = opts && opts->scope_version
				      ? opts->scope_version
				      : RTD_VERSION_STRING;
	struct ox o = {0};
	rtd_buf_init(&o.out.b, 0);
	rtd_buf_init(&o.key.b, 0);
	rtd_buf_init(&o.packed.b, 0);
	for (int t = 0; t < T_COUNT; t++) {
		rtd_buf_init(&o.tab[t].b, 0);
		rtd_strmap_init(&o.ids[t], 0);
		if (t == T_STR)
			continue;
		/* index 0: the zero value */
		size_t m = pbw_begin(&o.tab[t], table_field[t]);
		pbw_end(&o.tab[t], m);
		o.n[t] = 1;
	}
	str_idx(&o, "");

	for (size_t i = 0; i < nres && !ox_err(&o); i++)
		write_resource(&o, &res[i], scope, version);

	if (!ox_err(&o)) {
		/* the dictionary, its tables in field order; link_table[0] the
		 * zero ids of the lengths trace.proto gives them */
		static const uint8_t zero[16];
		rtd_pbw link = {0};
		rtd_buf_init(&link.b, 0);
		size_t lm = pbw_begin(&link, DICT_LINK);
		pbw_bytes(&link, LINK_TRACE_ID, zero, 16);
		pbw_bytes(&link, LINK_SPAN_ID, zero, 8);
		pbw_end(&link, lm);
		size_t len = link.b.len;
		for (int t = 0; t < T_COUNT; t++)
			len += o.tab[t].b.len;
		pbw_key(&o.out, DATA_DICTIONARY, PB_LEN);
		pbw_varint(&o.out, len);
		static const int order[] = {T_MAP, T_LOC, T_FUNC, -1,
					    T_STR, T_ATTR, T_STACK};
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			const rtd_buf *b = order[i] < 0 ? &link.b
							: &o.tab[order[i]].b;
			pbw_raw(&o.out, b->data, b->len);
		}
		if (link.err && !o.err)
			o.err = link.err;
		rtd_buf_free(&link.b);
	}
	if (!ox_err(&o) && o.out.b.len &&
	    fwrite(o.out.b.data, 1, o.out.b.len, f) != o.out.b.len)
		o.err = rtd_write_errno();
	int err = ox_err(&o);
	rtd_buf_free(&o.out.b);
	rtd_buf_free(&o.key.b);
	rtd_buf_free(&o.packed.b);
	for (int t = 0; t < T_COUNT; t++) {
		rtd_buf_free(&o.tab[t].b);
		rtd_strmap_free(&o.ids[t]);
	}
	return err;
}
