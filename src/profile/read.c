/* SPDX-License-Identifier: MIT */
/*
 * read.c - profiles from files: folded stacks and pprof (gzip or plain).
 *
 * Folded text is read a line at a time; a bad line stops the reader with
 * its number, and every line before it is in the profile. FlameGraph's
 * annotations are understood: a frame ending "_[k]" is kernel code, "_[j]"
 * JIT code, "_[i]" inlined (the suffix is dropped).
 *
 * pprof is decoded with the one bounds-checked cursor (common/rd.h):
 * strings, mappings, functions and locations first (they may come in any
 * order on the wire), then each sample is added with its frames leaf first:
 * a location's lines become frames, all but the last marked inlined into
 * the last, sharing the location's address and mapping. Labels "pid",
 * "tid" and "thread" become the sample's thread, the rest stay labels.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/errmsg.h"
#include "common/buf.h"
#include "common/pbw.h"
#include "common/rd.h"
#include "profile/profile_impl.h"

static int rerr(struct rtd_profile_read_err *e, int err, uint64_t off,
		uint64_t line, const char *fmt, ...)
{
	if (e) {
		e->offset = off;
		e->line = line;
		va_list ap;
		va_start(ap, fmt);
		rtd_verrf(e->msg, sizeof(e->msg), err, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- folded ------------------------------------------------------------- */

static void folded_frame(struct rtd_frame *f, char *name)
{
	size_t n = strlen(name);
	memset(f, 0, sizeof(*f));
	if (n > 4 && name[n - 4] == '_' && name[n - 3] == '[' &&
	    name[n - 1] == ']') {
		char k = name[n - 2];
		if (k == 'k' || k == 'j' || k == 'i' || k == 'w') {
			name[n - 4] = 0;
			f->kind = k == 'k'   ? RTD_FRAME_KERNEL
				  : k == 'j' ? RTD_FRAME_INTERPRETED
					     : RTD_FRAME_UNKNOWN;
			f->inlined = k == 'i';
		}
	}
	f->name = name[0] ? name : "?";
}

/* One line, without its newline; modified in place. */
static int folded_line(rtd_profile *p, char *s, size_t len, uint64_t lineno,
		       uint64_t off, struct rtd_frame **fr, size_t *frcap,
		       struct rtd_profile_read_err *e)
{
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' ||
		       s[len - 1] == '\t'))
		s[--len] = 0;
	if (!len)
		return 0;
	char *sp = strrchr(s, ' ');
	char *num = sp ? sp + 1 : s;
	char *end;
	errno = 0;
	long long v = strtoll(num, &end, 10);
	if (end == num || *end || errno)
		return rerr(e, -RTD_E_FORMAT, off, lineno,
			    "line %llu: no sample count at the end",
			    (unsigned long long)lineno);
	if (sp)
		*sp = 0;
	else
		s[0] = 0;
	size_t n = 0;
	for (char *c = s; sp && *c; c++)
		n += *c == ';';
	n = sp ? n + 1 : 0;
	if (n > *frcap) {
		struct rtd_frame *nf = realloc(*fr, n * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		*fr = nf;
		*frcap = n;
	}
	char *c = s;
	for (size_t i = 0; i < n; i++) {
		char *semi = strchr(c, ';');
		if (semi)
			*semi = 0;
		folded_frame(&(*fr)[i], c);
		c = semi ? semi + 1 : c + strlen(c);
	}
	int64_t vals[RTD_PROFILE_MAX_TYPES] = {0};
	vals[p->default_type] = v;
	struct rtd_sample smp = {.sz = sizeof(smp), .frames = *fr, .nframes = n,
				 .values = vals, .nvalues = p->default_type + 1};
	int err = rtd_profile_add_sample(p, &smp);
	if (err)
		return rerr(e, err, off, lineno, "line %llu: %s",
			    (unsigned long long)lineno, rtd_strerror(err));
	return 0;
}

/* Folded text arrives in chunks; lines are cut at newlines. */
struct folded_in {
	rtd_buf line;
	struct rtd_frame *fr;
	size_t frcap;
	uint64_t lineno, off, line_start;
};

static int folded_feed(rtd_profile *p, struct folded_in *in,
		       const char *data, size_t n,
		       struct rtd_profile_read_err *e)
{
	int err = 0;
	while (n && !err) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;
		err = rtd_buf_append(&in->line, data, k);
		if (err)
			return rerr(e, err, in->line_start, in->lineno + 1,
				    "line %llu: longer than %u bytes",
				    (unsigned long long)in->lineno + 1,
				    RTD_PROFILE_MAX_LINE);
		in->off += k + (nl ? 1 : 0);
		data += k + (nl ? 1 : 0);
		n -= k + (nl ? 1 : 0);
		if (!nl)
			break;
		in->lineno++;
		err = folded_line(p, (char *)in->line.data, in->line.len,
				  in->lineno, in->line_start, &in->fr,
				  &in->frcap, e);
		rtd_buf_reset(&in->line);
		in->line_start = in->off;
	}
	return err;
}

/* The last line, when the text does not end with a newline. */
static int folded_end(rtd_profile *p, struct folded_in *in,
		      struct rtd_profile_read_err *e)
{
	int err = 0;
	if (in->line.len) {
		in->lineno++;
		err = folded_line(p, (char *)in->line.data, in->line.len,
				  in->lineno, in->line_start, &in->fr,
				  &in->frcap, e);
	}
	rtd_buf_free(&in->line);
	free(in->fr);
	return err;
}

static int folded_read(rtd_profile *p, FILE *f, const char *first,
		       size_t nfirst, struct rtd_profile_read_err *e)
{
	struct folded_in in = {0};
	rtd_buf_init(&in.line, RTD_PROFILE_MAX_LINE);
	int err = folded_feed(p, &in, first, nfirst, e);
	char chunk[1 << 16];
	size_t n;
	while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		err = folded_feed(p, &in, chunk, n, e);
	if (!err && ferror(f))
		err = rerr(e, -EIO, in.off, in.lineno, "read error");
	int e2 = folded_end(p, &in, err ? NULL : e);
	return err ? err : e2;
}

int rtd_profile_read_folded(rtd_profile *p, FILE *f,
			    struct rtd_profile_read_err *e)
{
	return folded_read(p, f, NULL, 0, e);
}

/* ---- pprof -------------------------------------------------------------- */

struct pb_mapping {
	uint64_t id, start, limit, offset, file, build_id;
	int rid; /* id in the profile */
};

struct pb_line {
	uint64_t function, line;
};

struct pb_loc {
	uint64_t id, mapping, addr;
	size_t line_off, nlines;
};

struct pb_func {
	uint64_t id, name, file;
};

struct pb {
	const uint8_t *base;
	size_t len;
	struct rtd_profile_read_err *e;
	const uint8_t **strs;
	size_t *slen;
	size_t nstrs;
	struct pb_mapping *maps;
	size_t nmaps;
	struct pb_loc *locs;
	size_t nlocs;
	struct pb_line *lines;
	size_t nlines;
	struct pb_func *funcs;
	size_t nfuncs;
	rtd_map loc_ix, func_ix, map_ix; /* id -> index + 1 */
	uint64_t types[RTD_PROFILE_MAX_TYPES][2];
	size_t ntypes;
	uint64_t period_type[2], default_type;
	int64_t period, time_nanos, duration_nanos;
	bool has_period_type;
};

/* Protobuf field numbers (profile.proto). */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4,
	P_FUNCTION = 5, P_STRING_TABLE = 6, P_TIME_NANOS = 9,
	P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_DEFAULT_SAMPLE_TYPE = 14,
};

/* Read one field key; returns false at the end or on error. */
static bool pb_field(rtd_rd *r, unsigned *field, unsigned *wt)
{
	if (!rd_left(r) || !rd_ok(r))
		return false;
	uint64_t k = rd_varuint(r);
	*field = (unsigned)(k >> 3);
	*wt = (unsigned)(k & 7);
	return rd_ok(r);
}

/* Skip a field's value, or take a length-delimited one as a sub-reader. */
static void pb_skip(rtd_rd *r, unsigned wt)
{
	switch (wt) {
	case PB_VARINT: rd_varuint(r); break;
	case PB_I64: rd_skip(r, 8); break;
	case PB_LEN: rd_skip(r, rd_varuint(r)); break;
	case PB_I32: rd_skip(r, 4); break;
	default: rd_fail(r, -RTD_E_FORMAT);
	}
}

static bool pb_len(rtd_rd *r, rtd_rd *sub)
{
	uint64_t n = rd_varuint(r);
	const uint8_t *b;
	if (!rd_ok(r) || n > rd_left(r) || !rd_bytes(r, (size_t)n, &b)) {
		rd_fail(r, -RTD_E_TRUNCATED);
		return false;
	}
	sub->p = b;
	sub->end = b + n;
	sub->start = r->start;
	sub->err = 0;
	return true;
}

/* A repeated uint64 field, packed (wt 2) or not (wt 0): calls back each. */
static int pb_repeated(rtd_rd *r, unsigned wt, uint64_t *out, size_t max,
		       size_t *n)
{
	if (wt == PB_VARINT) {
		uint64_t v = rd_varuint(r);
		if (*n >= max)
			return -RTD_E_CAP;
		out[(*n)++] = v;
		return rd_ok(r) ? 0 : r->err;
	}
	if (wt != PB_LEN)
		return -RTD_E_FORMAT;
	rtd_rd sub;
	if (!pb_len(r, &sub))
		return r->err;
	while (rd_left(&sub) && rd_ok(&sub)) {
		uint64_t v = rd_varuint(&sub);
		if (*n >= max)
			return -RTD_E_CAP;
		out[(*n)++] = v;
	}
	return sub.err;
}

#define GROW(arr, n, cap)                                                      \
	((n) < (cap) ? 0                                                       \
		     : grow_arr((void **)&(arr), &(cap), sizeof(*(arr))))

static int grow_arr(void **arr, size_t *cap, size_t sz)
{
	void *na = rtd_grow(*arr, cap, *cap + 1, sz, 64);
	if (!na)
		return -ENOMEM;
	*arr = na;
	return 0;
}

static int pb_value_type(rtd_rd *r, uint64_t out[2])
{
	rtd_rd sub;
	if (!pb_len(r, &sub))
		return r->err;
	unsigned f, wt;
	while (pb_field(&sub, &f, &wt)) {
		if ((f == 1 || f == 2) && wt == PB_VARINT)
			out[f - 1] = rd_varuint(&sub);
		else
			pb_skip(&sub, wt);
	}
	return sub.err;
}

/* Growth state of the tables the first pass fills. */
struct pb_caps {
	size_t strs, maps, locs, lines, funcs;
};

/* A string table entry: points into the message, copies nothing. */
static int pb_string(struct pb *c, rtd_rd *r, unsigned wt, size_t *cap)
{
	if (wt != PB_LEN)
		return -RTD_E_FORMAT;
	uint64_t n = rd_varuint(r);
	const uint8_t *b;
	if (!rd_ok(r) || n > rd_left(r) || !rd_bytes(r, (size_t)n, &b))
		return -RTD_E_TRUNCATED;
	if (c->nstrs >= RTD_PROFILE_MAX_STRINGS)
		return -RTD_E_CAP;
	size_t oc = *cap;
	int err = GROW(c->strs, c->nstrs, *cap);
	if (err)
		return err;
	if (*cap != oc) {
		size_t *ns = realloc(c->slen, *cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->slen = ns;
	}
	c->strs[c->nstrs] = b;
	c->slen[c->nstrs++] = (size_t)n;
	return 0;
}

/* A length-delimited table entry's sub-message, or the error to report. */
static int pb_entry(rtd_rd *r, unsigned wt, rtd_rd *sub)
{
	if (wt != PB_LEN || !pb_len(r, sub))
		return r->err ? r->err : -RTD_E_FORMAT;
	return 0;
}

static int pb_mapping(struct pb *c, rtd_rd *r, unsigned wt, size_t *cap)
{
	rtd_rd sub;
	int err = pb_entry(r, wt, &sub);
	if (err)
		return err;
	if (c->nmaps >= RTD_PROFILE_MAX_MAPPINGS)
		return -RTD_E_CAP;
	if ((err = GROW(c->maps, c->nmaps, *cap)))
		return err;
	struct pb_mapping *m = &c->maps[c->nmaps++];
	memset(m, 0, sizeof(*m));
	uint64_t *fld[] = {NULL, &m->id, &m->start, &m->limit,
			   &m->offset, &m->file, &m->build_id};
	unsigned g, gw;
	while (pb_field(&sub, &g, &gw)) {
		if (g >= 1 && g <= 6 && gw == PB_VARINT)
			*fld[g] = rd_varuint(&sub);
		else
			pb_skip(&sub, gw);
	}
	return sub.err;
}

static int pb_function(struct pb *c, rtd_rd *r, unsigned wt, size_t *cap)
{
	rtd_rd sub;
	int err = pb_entry(r, wt, &sub);
	if (err)
		return err;
	if ((err = GROW(c->funcs, c->nfuncs, *cap)))
		return err;
	struct pb_func *fn = &c->funcs[c->nfuncs++];
	memset(fn, 0, sizeof(*fn));
	unsigned g, gw;
	while (pb_field(&sub, &g, &gw)) {
		if (gw == PB_VARINT && g == 1)
			fn->id = rd_varuint(&sub);
		else if (gw == PB_VARINT && g == 2)
			fn->name = rd_varuint(&sub);
		else if (gw == PB_VARINT && g == 3 && !fn->name)
			fn->name = rd_varuint(&sub);
		else if (gw == PB_VARINT && g == 4)
			fn->file = rd_varuint(&sub);
		else
			pb_skip(&sub, gw);
	}
	return sub.err;
}

/* One Line of a location; a short one leaves its error in sub, sticky. */
static int pb_loc_line(struct pb *c, rtd_rd *sub, struct pb_loc *l,
		       size_t *cap)
{
	rtd_rd ln;
	if (!pb_len(sub, &ln))
		return 0;
	int err = GROW(c->lines, c->nlines, *cap);
	if (err)
		return err;
	struct pb_line *x = &c->lines[c->nlines++];
	memset(x, 0, sizeof(*x));
	unsigned h, hw;
	while (pb_field(&ln, &h, &hw)) {
		if (hw == PB_VARINT && h == 1)
			x->function = rd_varuint(&ln);
		else if (hw == PB_VARINT && h == 2)
			x->line = rd_varuint(&ln);
		else
			pb_skip(&ln, hw);
	}
	l->nlines++;
	return ln.err;
}

static int pb_location(struct pb *c, rtd_rd *r, unsigned wt,
		       struct pb_caps *cap)
{
	rtd_rd sub;
	int err = pb_entry(r, wt, &sub);
	if (err)
		return err;
	if ((err = GROW(c->locs, c->nlocs, cap->locs)))
		return err;
	struct pb_loc *l = &c->locs[c->nlocs++];
	memset(l, 0, sizeof(*l));
	l->line_off = c->nlines;
	unsigned g, gw;
	while (!err && pb_field(&sub, &g, &gw)) {
		if (gw == PB_VARINT && g == 1)
			l->id = rd_varuint(&sub);
		else if (gw == PB_VARINT && g == 2)
			l->mapping = rd_varuint(&sub);
		else if (gw == PB_VARINT && g == 3)
			l->addr = rd_varuint(&sub);
		else if (gw == PB_LEN && g == 4)
			err = pb_loc_line(c, &sub, l, &cap->lines);
		else
			pb_skip(&sub, gw);
	}
	return err ? err : sub.err;
}

/* The profile's scalar fields: times, period, default sample type. */
static int pb_scalar(struct pb *c, rtd_rd *r, unsigned f, unsigned wt)
{
	if (wt != PB_VARINT)
		return -RTD_E_FORMAT;
	uint64_t v = rd_varuint(r);
	if (f == P_TIME_NANOS)
		c->time_nanos = (int64_t)v;
	else if (f == P_DURATION_NANOS)
		c->duration_nanos = (int64_t)v;
	else if (f == P_PERIOD)
		c->period = (int64_t)v;
	else
		c->default_type = v;
	return 0;
}

/* First pass: everything but samples. */
static int pb_tables(struct pb *c)
{
	rtd_rd r;
	rd_init(&r, c->base, c->len);
	struct pb_caps cap = {0};
	unsigned f, wt;
	int err = 0;
	while (!err && pb_field(&r, &f, &wt)) {
		switch (f) {
		case P_STRING_TABLE:
			err = pb_string(c, &r, wt, &cap.strs);
			break;
		case P_SAMPLE_TYPE:
			if (wt != PB_LEN || c->ntypes >= RTD_PROFILE_MAX_TYPES) {
				err = wt != PB_LEN ? -RTD_E_FORMAT : -RTD_E_CAP;
				break;
			}
			err = pb_value_type(&r, c->types[c->ntypes++]);
			break;
		case P_PERIOD_TYPE:
			if (wt != PB_LEN) {
				err = -RTD_E_FORMAT;
				break;
			}
			c->has_period_type = true;
			err = pb_value_type(&r, c->period_type);
			break;
		case P_MAPPING:
			err = pb_mapping(c, &r, wt, &cap.maps);
			break;
		case P_FUNCTION:
			err = pb_function(c, &r, wt, &cap.funcs);
			break;
		case P_LOCATION:
			err = pb_location(c, &r, wt, &cap);
			break;
		case P_TIME_NANOS:
		case P_DURATION_NANOS:
		case P_PERIOD:
		case P_DEFAULT_SAMPLE_TYPE:
			err = pb_scalar(c, &r, f, wt);
			break;
		default:
			pb_skip(&r, wt);
		}
	}
	if (!err)
		err = r.err;
	if (err)
		return rerr(c->e, err, rd_off(&r), 0,
			    "pprof: bad message near byte %zu: %s", rd_off(&r),
			    rtd_strerror(err));
	return 0;
}

static char *pb_dup(const struct pb *c, uint64_t i)
{
	if (i >= c->nstrs)
		return strdup("");
	char *s = malloc(c->slen[i] + 1);
	if (s) {
		memcpy(s, c->strs[i], c->slen[i]);
		s[c->slen[i]] = 0;
	}
	return s;
}

static unsigned guess_kind(const char *name, bool kernel_mapping)
{
	if (kernel_mapping)
		return RTD_FRAME_KERNEL;
	if (!strncmp(name, "runtime.", 8) || !strncmp(name, "runtime/", 8))
		return RTD_FRAME_GO_RUNTIME;
	return RTD_FRAME_UNKNOWN;
}

#define PB_MAX_STACK 4096

/* Scratch space the samples share, sized for the deepest stack. */
struct pb_scratch {
	uint64_t *locids;
	uint64_t vals[RTD_PROFILE_MAX_TYPES];
	struct rtd_frame *fr;
	char **owned; /* frame names and files */
	size_t nown;
};

/* One sample's fields; labstr and thread are owned until it is added. */
struct pb_sample_parts {
	size_t nloc, nval, nlab, nlabstr, nfr;
	struct rtd_label labs[RTD_PROFILE_MAX_LABELS];
	char *labstr[RTD_PROFILE_MAX_LABELS * 3];
	int64_t pid, tid;
	char *thread;
};

/* A sample's label: pid, tid and thread go to the sample's own fields,
 * the others to its labels. */
static int pb_label(const struct pb *c, rtd_rd *sub,
		    struct pb_sample_parts *s)
{
	rtd_rd lb;
	if (!pb_len(sub, &lb))
		return 0; /* the error stays in sub */
	uint64_t key = 0, str = 0, num = 0, unit = 0;
	bool has_str = false;
	unsigned h, hw;
	while (pb_field(&lb, &h, &hw)) {
		uint64_t v = hw == PB_VARINT ? rd_varuint(&lb) : 0;
		if (hw != PB_VARINT)
			pb_skip(&lb, hw);
		else if (h == 1)
			key = v;
		else if (h == 2)
			str = v, has_str = true;
		else if (h == 3)
			num = v;
		else if (h == 4)
			unit = v;
	}
	if (lb.err)
		return lb.err;
	char *k = pb_dup(c, key);
	if (!k)
		return -ENOMEM;
	if (!strcmp(k, "pid") && !has_str) {
		s->pid = (int64_t)num;
		free(k);
	} else if (!strcmp(k, "tid") && !has_str) {
		s->tid = (int64_t)num;
		free(k);
	} else if (!strcmp(k, "thread") && has_str && !s->thread) {
		s->thread = pb_dup(c, str);
		free(k);
		if (!s->thread)
			return -ENOMEM;
	} else if (s->nlab < RTD_PROFILE_MAX_LABELS) {
		s->labstr[s->nlabstr++] = k;
		struct rtd_label *L = &s->labs[s->nlab++];
		memset(L, 0, sizeof(*L));
		L->key = k;
		if (has_str) {
			L->str = s->labstr[s->nlabstr++] = pb_dup(c, str);
		} else {
			L->num = (int64_t)num;
			L->unit = s->labstr[s->nlabstr++] =
				unit ? pb_dup(c, unit) : NULL;
		}
	} else {
		free(k);
		return -RTD_E_CAP;
	}
	return 0;
}

/* The fields of one Sample message: location ids, values, labels. */
static int pb_sample_fields(const struct pb *c, rtd_rd *sub,
			    struct pb_scratch *w, struct pb_sample_parts *s)
{
	int err = 0;
	unsigned g, gw;
	while (!err && pb_field(sub, &g, &gw)) {
		if (g == 1)
			err = pb_repeated(sub, gw, w->locids, PB_MAX_STACK,
					  &s->nloc);
		else if (g == 2)
			err = pb_repeated(sub, gw, w->vals, c->ntypes,
					  &s->nval);
		else if (g == 3 && gw == PB_LEN)
			err = pb_label(c, sub, s);
		else
			pb_skip(sub, gw);
	}
	return err ? err : sub->err;
}

/* Name, file and kind of a frame from its line's function. */
static int pb_frame_func(const struct pb *c, uint64_t function, bool kernel,
			 struct rtd_frame *x, struct pb_scratch *w)
{
	void *v;
	if (!rtd_map_get(&c->func_ix, function, &v))
		return 0;
	const struct pb_func *fn = &c->funcs[(uintptr_t)v - 1];
	char *nm = pb_dup(c, fn->name);
	char *fl = fn->file ? pb_dup(c, fn->file) : NULL;
	if (!nm || (fn->file && !fl)) {
		free(nm);
		free(fl);
		return -ENOMEM;
	}
	w->owned[w->nown++] = nm;
	if (fl)
		w->owned[w->nown++] = fl;
	x->name = nm;
	x->file = fl;
	x->kind = (uint8_t)guess_kind(nm, kernel);
	return 0;
}

/* The frames of one location: its lines as given, the last one hosting
 * the inlined ones before it; one frame with the address alone if it has
 * no lines. */
static int pb_loc_frames(const struct pb *c, const struct pb_loc *l,
			 struct pb_scratch *w, struct pb_sample_parts *s)
{
	int mid = 0;
	bool kernel = false;
	void *v;
	if (l->mapping && rtd_map_get(&c->map_ix, l->mapping, &v)) {
		const struct pb_mapping *m = &c->maps[(uintptr_t)v - 1];
		mid = m->rid;
		kernel = m->file < c->nstrs && c->slen[m->file] >= 7 &&
			 !memcmp(c->strs[m->file], "[kernel", 7);
	}
	size_t nl = l->nlines ? l->nlines : 1;
	for (size_t j = 0; j < nl; j++) {
		if (s->nfr >= PB_MAX_STACK)
			return -RTD_E_CAP;
		struct rtd_frame *x = &w->fr[s->nfr++];
		memset(x, 0, sizeof(*x));
		x->addr = l->addr;
		x->mapping = (uint32_t)mid;
		x->inlined = j + 1 < nl;
		if (!l->nlines)
			continue;
		const struct pb_line *ln = &c->lines[l->line_off + j];
		x->line = (uint32_t)ln->line;
		int err = pb_frame_func(c, ln->function, kernel, x, w);
		if (err)
			return err;
		if (w->nown + 2 > PB_MAX_STACK)
			return -RTD_E_CAP;
	}
	return 0;
}

/* One sample: decoded, its stack resolved leaf first, added to p. */
static int pb_sample(struct pb *c, rtd_rd *sub, struct pb_scratch *w,
		     rtd_profile *p)
{
	struct pb_sample_parts s = {0};
	w->nown = 0;
	int err = pb_sample_fields(c, sub, w, &s);
	for (size_t i = 0; i < s.nloc && !err; i++) {
		void *v;
		if (!rtd_map_get(&c->loc_ix, w->locids[i], &v))
			err = -RTD_E_FORMAT;
		else
			err = pb_loc_frames(c, &c->locs[(uintptr_t)v - 1], w,
					    &s);
	}
	if (!err) {
		struct rtd_sample rs = {.sz = sizeof(rs), .frames = w->fr,
					.nframes = s.nfr, .leaf_first = true,
					.values = (const int64_t *)w->vals,
					.nvalues = s.nval, .pid = s.pid,
					.tid = s.tid, .thread = s.thread,
					.labels = s.labs, .nlabels = s.nlab};
		err = rtd_profile_add_sample(p, &rs);
	}
	for (size_t i = 0; i < w->nown; i++)
		free(w->owned[i]);
	for (size_t i = 0; i < s.nlabstr; i++)
		free(s.labstr[i]);
	free(s.thread);
	return err;
}

/* Second pass: the samples. */
static int pb_samples(struct pb *c, rtd_profile *p)
{
	rtd_rd r;
	rd_init(&r, c->base, c->len);
	unsigned f, wt;
	int err = 0;
	struct pb_scratch w = {
		.locids = malloc(PB_MAX_STACK * sizeof(*w.locids)),
		.fr = malloc(PB_MAX_STACK * sizeof(*w.fr)),
		.owned = calloc(PB_MAX_STACK, sizeof(*w.owned)),
	};
	if (!w.locids || !w.fr || !w.owned)
		err = -ENOMEM;
	while (!err && pb_field(&r, &f, &wt)) {
		if (f != P_SAMPLE) {
			pb_skip(&r, wt);
			continue;
		}
		size_t sample_off = rd_off(&r);
		rtd_rd sub;
		if (wt != PB_LEN || !pb_len(&r, &sub)) {
			err = rerr(c->e, r.err ? r.err : -RTD_E_FORMAT,
				   sample_off, 0, "pprof: sample at byte %zu: %s",
				   sample_off,
				   rtd_strerror(r.err ? r.err : -RTD_E_FORMAT));
			break;
		}
		err = pb_sample(c, &sub, &w, p);
		if (err) {
			rerr(c->e, err, sample_off, 0,
			     "pprof: sample at byte %zu: %s", sample_off,
			     rtd_strerror(err));
			break;
		}
	}
	if (!err && r.err)
		err = rerr(c->e, r.err, rd_off(&r), 0,
			   "pprof: bad message near byte %zu: %s", rd_off(&r),
			   rtd_strerror(r.err));
	free(w.locids);
	free(w.fr);
	free(w.owned);
	return err;
}

static int pb_index(rtd_map *m, uint64_t id, size_t i)
{
	return rtd_map_put(m, id, (void *)(uintptr_t)(i + 1), NULL);
}

static int pb_decode(const uint8_t *buf, size_t len, rtd_profile **out,
		     struct rtd_profile_read_err *e)
{
	struct pb c = {.base = buf, .len = len, .e = e};
	rtd_map_init(&c.loc_ix, 0);
	rtd_map_init(&c.func_ix, 0);
	rtd_map_init(&c.map_ix, 0);
	rtd_profile *p = NULL;
	int err = pb_tables(&c);
	for (size_t i = 0; i < c.nlocs && !err; i++)
		err = pb_index(&c.loc_ix, c.locs[i].id, i);
	for (size_t i = 0; i < c.nfuncs && !err; i++)
		err = pb_index(&c.func_ix, c.funcs[i].id, i);
	for (size_t i = 0; i < c.nmaps && !err; i++)
		err = pb_index(&c.map_ix, c.maps[i].id, i);
	if (!err) {
		struct rtd_profile_type types[RTD_PROFILE_MAX_TYPES];
		char *tstr[RTD_PROFILE_MAX_TYPES * 2 + 2] = {0};
		size_t nt = c.ntypes ? c.ntypes : 1; /* none: count samples */
		size_t def = 0;
		for (size_t i = 0; i < c.ntypes; i++) {
			tstr[2 * i] = pb_dup(&c, c.types[i][0]);
			tstr[2 * i + 1] = pb_dup(&c, c.types[i][1]);
			types[i] = (struct rtd_profile_type){tstr[2 * i],
							     tstr[2 * i + 1]};
			if (c.default_type && c.types[i][0] == c.default_type)
				def = i;
		}
		if (!c.ntypes)
			types[0] = (struct rtd_profile_type){"samples", "count"};
		tstr[2 * nt] = c.has_period_type ? pb_dup(&c, c.period_type[0]) : NULL;
		tstr[2 * nt + 1] = c.has_period_type ? pb_dup(&c, c.period_type[1]) : NULL;
		bool ok = true;
		for (size_t i = 0; i < 2 * c.ntypes; i++)
			ok = ok && tstr[i];
		struct rtd_profile_opts o = {
			.sz = sizeof(o), .types = types, .ntypes = nt,
			.default_type = def,
			.period_type = {tstr[2 * nt], tstr[2 * nt + 1]},
			.period = c.period};
		p = ok ? rtd_profile_new2(&o) : NULL;
		for (size_t i = 0; i < 2 * nt + 2; i++)
			free(tstr[i]);
		if (!p)
			err = ok ? -RTD_E_FORMAT : -ENOMEM;
		if (err)
			rerr(e, err, 0, 0, "pprof: bad sample types");
	}
	for (size_t i = 0; i < c.nmaps && !err; i++) {
		struct pb_mapping *m = &c.maps[i];
		char *file = m->file ? pb_dup(&c, m->file) : NULL;
		char *bid = m->build_id ? pb_dup(&c, m->build_id) : NULL;
		int id = rtd_profile_add_mapping(p, m->start, m->limit,
						 m->offset, file, bid);
		free(file);
		free(bid);
		if (id < 0)
			err = rerr(e, id, 0, 0, "pprof: mapping %llu: %s",
				   (unsigned long long)m->id, rtd_strerror(id));
		m->rid = id;
	}
	if (!err) {
		struct rtd_profile_meta meta = {.sz = sizeof(meta),
						.source = "pprof",
						.time_nanos = c.time_nanos,
						.duration_nanos = c.duration_nanos};
		err = rtd_profile_set_meta(p, &meta);
	}
	if (!err)
		err = pb_samples(&c, p);
	free(c.strs);
	free(c.slen);
	free(c.maps);
	free(c.locs);
	free(c.lines);
	free(c.funcs);
	rtd_map_free(&c.loc_ix);
	rtd_map_free(&c.func_ix);
	rtd_map_free(&c.map_ix);
	*out = p; /* with what was read before an error */
	return err;
}

int rtd_profile_read_pprof(rtd_profile **out, const void *buf, size_t len,
			   struct rtd_profile_read_err *e)
{
	*out = NULL;
	const uint8_t *b = buf;
	if (len < 2 || b[0] != 0x1f || b[1] != 0x8b)
		return pb_decode(b, len, out, e);
	/* gzip: inflate under a cap */
	rtd_buf raw;
	rtd_buf_init(&raw, RTD_PROFILE_MAX_PPROF);
	z_stream z = {0};
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)(uintptr_t)b;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	int zr = Z_OK, err = 0;
	while (zr == Z_OK) {
		if ((err = rtd_buf_reserve(&raw, 1 << 16)))
			break;
		z.next_out = raw.data + raw.len;
		z.avail_out = (uInt)(raw.cap - raw.len - 1);
		size_t room = z.avail_out;
		zr = inflate(&z, Z_NO_FLUSH);
		raw.len += room - z.avail_out;
		if (zr == Z_BUF_ERROR && z.avail_in == 0)
			break;
	}
	size_t at = z.total_in;
	inflateEnd(&z);
	if (err == -RTD_E_CAP)
		err = rerr(e, err, at, 0,
			   "pprof: more than %u MiB uncompressed",
			   RTD_PROFILE_MAX_PPROF >> 20);
	else if (!err && zr != Z_STREAM_END)
		err = rerr(e, -RTD_E_TRUNCATED, at, 0,
			   "pprof: gzip stream %s at byte %zu",
			   zr == Z_DATA_ERROR ? "corrupt" : "cut short", at);
	if (!err)
		err = pb_decode(raw.data, raw.len, out, e);
	rtd_buf_free(&raw);
	return err;
}

/* Binary, not text: pprof's first bytes carry small varints (lengths,
 * field values) that folded text never has. */
static bool looks_binary(const uint8_t *b, size_t n)
{
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return true;
	for (size_t i = 0; i < n && i < 4096; i++)
		if (b[i] < 0x09 || (b[i] > 0x0d && b[i] < 0x20))
			return true;
	return false;
}

int rtd_profile_read(rtd_profile **out, FILE *f,
		     struct rtd_profile_read_err *e)
{
	*out = NULL;
	uint8_t first[4096];
	size_t nfirst = fread(first, 1, sizeof(first), f);
	if (!nfirst)
		return rerr(e, ferror(f) ? -EIO : -RTD_E_TRUNCATED, 0, 0,
			    ferror(f) ? "read error" : "empty input");
	if (looks_binary(first, nfirst)) {
		rtd_buf all;
		rtd_buf_init(&all, RTD_PROFILE_MAX_PPROF);
		uint8_t chunk[1 << 16];
		size_t n;
		int err = rtd_buf_append(&all, first, nfirst);
		while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			err = rtd_buf_append(&all, chunk, n);
		if (!err && ferror(f))
			err = -EIO;
		if (err)
			err = rerr(e, err, all.len, 0, "pprof: %s",
				   err == -RTD_E_CAP ? "input too large"
						     : rtd_strerror(err));
		else
			err = rtd_profile_read_pprof(out, all.data, all.len, e);
		rtd_buf_free(&all);
		return err;
	}
	rtd_profile *p = rtd_profile_new("samples", "count");
	if (!p)
		return -ENOMEM;
	struct rtd_profile_meta meta = {.sz = sizeof(meta), .source = "folded"};
	rtd_profile_set_meta(p, &meta);
	*out = p;
	return folded_read(p, f, (const char *)first, nfirst, e);
}
