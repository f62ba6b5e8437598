/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - write a profile as pprof's gzip-compressed protobuf
 * (github.com/google/pprof proto/profile.proto).
 *
 * Every call-tree node with a value is one Sample. Its frames, leaf first,
 * are grouped into Locations: a frame marked inlined joins the location of
 * the frame toward the root it was inlined into, as an earlier Line entry
 * (profile.proto: "the last entry represents the caller into which the
 * preceding entries were inlined"). Locations are keyed by (mapping,
 * address, lines) and Functions by (name, file), each written once when
 * first met. Mappings keep their ranges, offsets, files and build ids; a
 * frame with a module but no mapping gets a mapping of that file name and
 * no range, so the module is not lost. The string table is the profile's
 * own (string 0 is ""), followed by the few strings only pprof needs.
 *
 * The message is gzip-compressed as it is built: memory holds the location
 * and function keys, never the whole output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/file.h"
#include "common/pbw.h"
#include "profile/profile_impl.h"

/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

#define FLUSH_AT (256u << 10)
#define MAX_EXTRA 8

struct pp {
	const rtd_profile *p;
	rtd_pbw w;
	z_stream z;
	FILE *f;
	int err;
	rtd_strmap locs, funcs;
	uint32_t nlocs, nfuncs;
	uint32_t *modmap; /* module string id -> pseudo mapping id, lazily */
	uint32_t nmaps;   /* real + pseudo mappings written */
	const char *extra[MAX_EXTRA];
	uint32_t nextra;
	rtd_pbw key, packed; /* scratch */
};

static void pp_flush(struct pp *c, int mode)
{
	if (c->w.err && !c->err)
		c->err = c->w.err;
	if (c->err)
		return;
	c->z.next_in = c->w.b.data;
	c->z.avail_in = (uInt)c->w.b.len;
	uint8_t chunk[1 << 16];
	int zr;
	do {
		c->z.next_out = chunk;
		c->z.avail_out = sizeof(chunk);
		zr = deflate(&c->z, mode);
		size_t have = sizeof(chunk) - c->z.avail_out;
		if (have && fwrite(chunk, 1, have, c->f) != have) {
			c->err = rtd_write_errno();
			return;
		}
	} while (c->z.avail_out == 0 || (mode == Z_FINISH && zr == Z_OK));
	if (mode == Z_FINISH && zr != Z_STREAM_END)
		c->err = -EIO;
	rtd_buf_reset(&c->w.b);
}

static void pp_maybe_flush(struct pp *c)
{
	if (c->w.b.len >= FLUSH_AT)
		pp_flush(c, Z_NO_FLUSH);
}

/* A string id for text the profile may not hold ("pid", "tid", ...). */
static uint32_t pp_str(struct pp *c, const char *s)
{
	void *v;
	if (rtd_strmap_get(&c->p->str_ids, s, strlen(s), &v))
		return (uint32_t)(uintptr_t)v;
	for (uint32_t i = 0; i < c->nextra; i++)
		if (!strcmp(c->extra[i], s))
			return (uint32_t)c->p->nstrs + i;
	if (c->nextra == MAX_EXTRA) {
		c->err = -RTD_E_STATE; /* a bug here, not bad input */
		return 0;
	}
	c->extra[c->nextra] = s;
	return (uint32_t)c->p->nstrs + c->nextra++;
}

static void value_type(rtd_pbw *w, unsigned field, uint32_t type,
		       uint32_t unit)
{
	size_t m = pbw_begin(w, field);
	pbw_uint(w, VALUETYPE_TYPE, type);
	pbw_uint(w, VALUETYPE_UNIT, unit);
	pbw_end(w, m);
}

/* The pseudo mapping of a module that has no real one. */
static uint32_t module_mapping(struct pp *c, uint32_t module)
{
	if (c->modmap[module])
		return c->modmap[module];
	uint32_t id = ++c->nmaps;
	c->modmap[module] = id;
	size_t m = pbw_begin(&c->w, PROFILE_MAPPING);
	pbw_uint(&c->w, MAPPING_ID, id);
	pbw_uint(&c->w, MAPPING_FILENAME, module);
	pbw_uint(&c->w, MAPPING_HAS_FUNCTIONS, 1);
	pbw_end(&c->w, m);
	return id;
}

static uint32_t function_id(struct pp *c, uint32_t name, uint32_t file)
{
	uint32_t k[2] = {name, file};
	void *v;
	if (rtd_strmap_get(&c->funcs, k, sizeof(k), &v))
		return (uint32_t)(uintptr_t)v;
	uint32_t id = ++c->nfuncs;
	int err = rtd_strmap_put(&c->funcs, k, sizeof(k), (void *)(uintptr_t)id);
	if (err) {
		c->err = err;
		return 0;
	}
	size_t m = pbw_begin(&c->w, PROFILE_FUNCTION);
	pbw_uint(&c->w, FUNCTION_ID, id);
	pbw_uint(&c->w, FUNCTION_NAME, name);
	pbw_uint(&c->w, FUNCTION_SYSTEM_NAME, name);
	if (file)
		pbw_uint(&c->w, FUNCTION_FILENAME, file);
	pbw_end(&c->w, m);
	return id;
}

/* The location of frames run[0..n) (leaf first; run[n-1] the frame the
 * others were inlined into). */
static uint32_t location_id(void *ctx, const uint32_t *run, size_t n)
{
	struct pp *c = ctx;
	const rtd_profile *p = c->p;
	const struct prof_frame_key *host = &p->frames[run[n - 1]].k;
	uint64_t addr = host->addr;
	for (size_t i = 0; i < n && !addr; i++)
		addr = p->frames[run[i]].k.addr;
	uint32_t mapping = host->mapping;
	if (!mapping && host->module)
		mapping = module_mapping(c, host->module);
	rtd_buf_reset(&c->key.b);
	pbw_raw(&c->key, &addr, sizeof(addr));
	pbw_raw(&c->key, &mapping, sizeof(mapping));
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = &p->frames[run[i]];
		uint32_t ln[2] = {function_id(c, f->disp, f->k.file), f->k.line};
		pbw_raw(&c->key, ln, sizeof(ln));
	}
	if (c->key.err || c->err) {
		c->err = c->err ? c->err : c->key.err;
		return 0;
	}
	void *v;
	if (rtd_strmap_get(&c->locs, c->key.b.data, c->key.b.len, &v))
		return (uint32_t)(uintptr_t)v;
	uint32_t id = ++c->nlocs;
	int err = rtd_strmap_put(&c->locs, c->key.b.data, c->key.b.len,
				 (void *)(uintptr_t)id);
	if (err) {
		c->err = err;
		return 0;
	}
	size_t m = pbw_begin(&c->w, PROFILE_LOCATION);
	pbw_uint(&c->w, LOCATION_ID, id);
	if (mapping)
		pbw_uint(&c->w, LOCATION_MAPPING_ID, mapping);
	if (addr)
		pbw_uint(&c->w, LOCATION_ADDRESS, addr);
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = &p->frames[run[i]];
		uint32_t fn = function_id(c, f->disp, f->k.file); /* known */
		size_t lm = pbw_begin(&c->w, LOCATION_LINE);
		pbw_uint(&c->w, LINE_FUNCTION_ID, fn);
		if (f->k.line)
			pbw_uint(&c->w, LINE_LINE, f->k.line);
		pbw_end(&c->w, lm);
	}
	pbw_end(&c->w, m);
	return id;
}

static void label_str(struct pp *c, uint32_t key, uint32_t str)
{
	size_t m = pbw_begin(&c->w, SAMPLE_LABEL);
	pbw_uint(&c->w, LABEL_KEY, key);
	pbw_uint(&c->w, LABEL_STR, str);
	pbw_end(&c->w, m);
}

static void label_num(struct pp *c, uint32_t key, int64_t num, uint32_t unit)
{
	size_t m = pbw_begin(&c->w, SAMPLE_LABEL);
	pbw_uint(&c->w, LABEL_KEY, key);
	pbw_int(&c->w, LABEL_NUM, num);
	if (unit)
		pbw_uint(&c->w, LABEL_NUM_UNIT, unit);
	pbw_end(&c->w, m);
}

/* The frames of node's path from the root, leaf first, into *path (and
 * room for as many locations in *locs). */
static int leaf_path(const rtd_profile *p, uint32_t node, uint32_t **path,
		     uint32_t **locs, size_t *cap, size_t *depth)
{
	size_t d = 0;
	for (uint32_t x = node; p->nodes[x].parent != PROF_NONE;
	     x = p->nodes[x].parent) {
		if (d == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			uint32_t *np = realloc(*path, ncap * sizeof(*np));
			if (!np)
				return -ENOMEM;
			*path = np;
			uint32_t *nl = realloc(*locs, ncap * sizeof(*nl));
			if (!nl)
				return -ENOMEM;
			*locs = nl;
			*cap = ncap;
		}
		(*path)[d++] = p->nodes[x].frame;
	}
	*depth = d;
	return 0;
}

int prof_node_locations(const rtd_profile *p, uint32_t node, prof_loc_fn loc,
			void *ctx, const int *err, uint32_t **path,
			uint32_t **locs, size_t *cap, size_t *nloc)
{
	size_t depth = 0, n = 0;
	int rc = leaf_path(p, node, path, locs, cap, &depth);
	for (size_t j = 0; j < depth && !rc && !*err;) {
		size_t k = j;
		while (k + 1 < depth && p->frames[(*path)[k]].k.inlined)
			k++;
		(*locs)[n++] = loc(ctx, *path + j, k - j + 1);
		j = k + 1;
	}
	*nloc = n;
	return rc;
}

static void write_samples(struct pp *c)
{
	const rtd_profile *p = c->p;
	uint32_t *ctx_of = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*ctx_of));
	uint32_t *path = NULL, *locs = NULL;
	size_t pcap = 0;
	if (!ctx_of) {
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < p->nctxs; i++)
		ctx_of[p->ctxs[i].root] = (uint32_t)i;
	for (size_t i = 0; i < p->nnodes && !c->err; i++) {
		const struct prof_node *n = &p->nodes[i];
		if (n->parent != PROF_NONE)
			ctx_of[i] = ctx_of[n->parent];
		const int64_t *v = prof_vals(p, (uint32_t)i);
		bool any = false;
		for (size_t t = 0; t < p->ntypes; t++)
			any = any || v[t];
		if (!any)
			continue;
		size_t nloc = 0;
		int rc = prof_node_locations(p, (uint32_t)i, location_id, c,
					     &c->err, &path, &locs, &pcap, &nloc);
		if (rc)
			c->err = rc;
		if (c->err)
			break;
		size_t m = pbw_begin(&c->w, PROFILE_SAMPLE);
		rtd_buf_reset(&c->packed.b);
		for (size_t j = 0; j < nloc; j++)
			pbw_varint(&c->packed, locs[j]);
		if (nloc)
			pbw_bytes(&c->w, SAMPLE_LOCATION_ID, c->packed.b.data,
				  c->packed.b.len);
		rtd_buf_reset(&c->packed.b);
		for (size_t t = 0; t < p->ntypes; t++)
			pbw_varint(&c->packed, (uint64_t)v[t]);
		pbw_bytes(&c->w, SAMPLE_VALUE, c->packed.b.data,
			  c->packed.b.len);
		if (c->packed.err)
			c->err = c->packed.err;
		const struct prof_ctx *cx = &p->ctxs[ctx_of[i]];
		if (cx->pid)
			label_num(c, pp_str(c, "pid"), cx->pid, 0);
		if (cx->tid)
			label_num(c, pp_str(c, "tid"), cx->tid, 0);
		if (cx->thread)
			label_str(c, pp_str(c, "thread"), cx->thread);
		for (uint32_t l = 0; l < cx->nlabels; l++) {
			const struct prof_label *lb = &p->labels[cx->label_off + l];
			if (lb->pad)
				label_str(c, lb->key, lb->str);
			else
				label_num(c, lb->key, lb->num, lb->unit);
		}
		pbw_end(&c->w, m);
		pp_maybe_flush(c);
	}
	free(ctx_of);
	free(path);
	free(locs);
}

/* Whether a mapping's file looks like a program rather than a library or
 * a pseudo file: not lib*.so[.N], not "[vdso]"/"[kernel.kallsyms]", not
 * a perf map or a .NET assembly. */
static bool program_like(const char *path)
{
	if (!path || !*path || path[0] == '[')
		return false;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *so = strstr(base, ".so");
	if (so && (so[3] == 0 || so[3] == '.'))
		return false;
	size_t n = strlen(base);
	return !(n > 4 && (!strcmp(base + n - 4, ".map") ||
			   !strcmp(base + n - 4, ".dll")));
}

static void write_mappings(struct pp *c)
{
	const rtd_profile *p = c->p;
	uint8_t *flags = calloc(p->nmaps + 1, 1);
	if (!flags) {
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < p->nframes; i++) {
		const struct prof_frame_key *k = &p->frames[i].k;
		if (!k->mapping)
			continue;
		flags[k->mapping] |= (k->file ? 1 : 0) | (k->line ? 2 : 0) |
				     (k->inlined ? 4 : 0);
	}
	/* pprof takes the first mapping listed for the main binary ("File:"
	 * in go tool pprof): the first program-like one goes first, the
	 * rest in id order (ids are unchanged) */
	size_t first = 0;
	while (first < p->nmaps && !program_like(p->strs[p->maps[first].file]))
		first++;
	if (first == p->nmaps)
		first = 0;
	for (size_t j = 0; j < p->nmaps; j++) {
		size_t i = j == 0 ? first : j <= first ? j - 1 : j;
		const struct prof_mapping *mp = &p->maps[i];
		size_t m = pbw_begin(&c->w, PROFILE_MAPPING);
		pbw_uint(&c->w, MAPPING_ID, i + 1);
		pbw_uint(&c->w, MAPPING_MEMORY_START, mp->start);
		pbw_uint(&c->w, MAPPING_MEMORY_LIMIT, mp->limit);
		pbw_uint(&c->w, MAPPING_FILE_OFFSET, mp->offset);
		pbw_uint(&c->w, MAPPING_FILENAME, mp->file);
		pbw_uint(&c->w, MAPPING_BUILD_ID, mp->build_id);
		/* every location gets lines (unsymbolized ones a module+offset
		 * name), so pprof must not try to symbolize over them */
		pbw_uint(&c->w, MAPPING_HAS_FUNCTIONS, 1);
		pbw_uint(&c->w, MAPPING_HAS_FILENAMES, flags[i + 1] & 1);
		pbw_uint(&c->w, MAPPING_HAS_LINE_NUMBERS, !!(flags[i + 1] & 2));
		pbw_uint(&c->w, MAPPING_HAS_INLINE_FRAMES, !!(flags[i + 1] & 4));
		pbw_end(&c->w, m);
	}
	c->nmaps = (uint32_t)p->nmaps;
	free(flags);
}

int prof_write_pprof(const rtd_profile *p, FILE *f)
{
	struct pp c = {.p = p, .f = f};
	/* windowBits 15 + 16: a gzip wrapper, which pprof expects */
	if (deflateInit2(&c.z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	rtd_buf_init(&c.w.b, 0);
	rtd_buf_init(&c.key.b, 0);
	rtd_buf_init(&c.packed.b, 0);
	rtd_strmap_init(&c.locs, 0);
	rtd_strmap_init(&c.funcs, 0);
	c.modmap = calloc(p->nstrs ? p->nstrs : 1, sizeof(*c.modmap));
	if (!c.modmap)
		c.err = -ENOMEM;

	for (size_t t = 0; t < p->ntypes && !c.err; t++)
		value_type(&c.w, PROFILE_SAMPLE_TYPE, p->type_str[t][0],
			   p->type_str[t][1]);
	if (!c.err)
		write_mappings(&c);
	if (!c.err)
		write_samples(&c);
	if (!c.err) {
		if (p->time_nanos)
			pbw_int(&c.w, PROFILE_TIME_NANOS, p->time_nanos);
		if (p->duration_nanos)
			pbw_int(&c.w, PROFILE_DURATION_NANOS, p->duration_nanos);
		value_type(&c.w, PROFILE_PERIOD_TYPE, p->period_str[0],
			   p->period_str[1]);
		if (p->period)
			pbw_int(&c.w, PROFILE_PERIOD, p->period);
		if (p->ntypes > 1)
			pbw_uint(&c.w, PROFILE_DEFAULT_SAMPLE_TYPE,
				 p->type_str[p->default_type][0]);
	}
	/* comments: the metadata people read in `go tool pprof -top` */
	char meta[3][600];
	size_t nmeta = 0;
	if (p->source)
		snprintf(meta[nmeta++], sizeof(meta[0]), "source: %.500s",
			 p->source);
	if (p->process && p->pid)
		snprintf(meta[nmeta++], sizeof(meta[0]), "process: %.500s (pid %lld)",
			 p->process, (long long)p->pid);
	else if (p->process)
		snprintf(meta[nmeta++], sizeof(meta[0]), "process: %.500s",
			 p->process);
	else if (p->pid)
		snprintf(meta[nmeta++], sizeof(meta[0]), "process: pid %lld",
			 (long long)p->pid);
	if (p->comment)
		snprintf(meta[nmeta++], sizeof(meta[0]), "%.590s", p->comment);
	uint32_t mid[3];
	for (size_t i = 0; i < nmeta && !c.err; i++)
		mid[i] = pp_str(&c, meta[i]);
	for (size_t i = 0; i < nmeta && !c.err; i++)
		pbw_uint(&c.w, PROFILE_COMMENT, mid[i]);
	for (size_t i = 0; i < p->nstrs && !c.err; i++) {
		pbw_str(&c.w, PROFILE_STRING_TABLE, p->strs[i]);
		pp_maybe_flush(&c);
	}
	for (size_t i = 0; i < c.nextra && !c.err; i++)
		pbw_str(&c.w, PROFILE_STRING_TABLE, c.extra[i]);
	pp_flush(&c, Z_FINISH);
	deflateEnd(&c.z);
	rtd_buf_free(&c.w.b);
	rtd_buf_free(&c.key.b);
	rtd_buf_free(&c.packed.b);
	rtd_strmap_free(&c.locs);
	rtd_strmap_free(&c.funcs);
	free(c.modmap);
	return c.err;
}

int rtd_profile_write_pprof(const rtd_profile *p, FILE *f)
{
	return prof_write_pprof(p, f);
}
