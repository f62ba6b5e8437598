/* SPDX-License-Identifier: MIT */
/*
 * profile.c - the profile model: a call tree of interned frames under one
 * root per (thread, labels) context.
 *
 * Adding a stack walks the tree from its context's root, so equal stacks
 * share their nodes and memory grows with the number of distinct call
 * paths, not with the number of samples. Children are found through one
 * hash map keyed by (parent node, frame); each node also links its first
 * child and next sibling so writers can walk the tree without recursion.
 * Node ids grow from parent to child, so one pass in id order visits every
 * parent before its children.
 *
 * Strings (names, modules, files, label keys and values, thread names) are
 * interned in one table whose id 0 is "": it is the pprof string table's
 * prefix, so the pprof writer needs no second table.
 */
#include "profile/profile_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/opts.h"
#include "rtdiag/source.h"

static uint64_t child_key(uint32_t parent, uint32_t frame)
{
	return (uint64_t)parent << 32 | frame;
}

/* Grow an array of *cap elements of size sz to hold one more. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz, size_t first)
{
	void *na = rtd_grow(*arr, cap, n + 1, sz, first);
	if (!na)
		return -ENOMEM;
	*arr = na;
	return 0;
}

int64_t prof_intern(rtd_profile *p, const char *s, size_t len)
{
	void *v;
	if (rtd_strmap_get(&p->str_ids, s, len, &v))
		return (int64_t)(uintptr_t)v;
	int err = grow((void **)&p->strs, &p->strs_cap, p->nstrs,
		       sizeof(*p->strs), 64);
	if (err)
		return err;
	uint32_t id = (uint32_t)p->nstrs;
	err = rtd_strmap_put(&p->str_ids, s, len, (void *)(uintptr_t)id);
	if (err)
		return err;
	p->strs[id] = rtd_strmap_find(&p->str_ids, s, len)->key;
	p->nstrs++;
	return id;
}

static int64_t intern0(rtd_profile *p, const char *s)
{
	return prof_intern(p, s ? s : "", s ? strlen(s) : 0);
}

static uint32_t node_new(rtd_profile *p, uint32_t parent, uint32_t frame)
{
	if (p->nnodes >= RTD_PROFILE_MAX_NODES)
		return PROF_NONE;
	if (p->nnodes == p->nodes_cap) {
		size_t ncap = p->nodes_cap ? p->nodes_cap * 2 : 256;
		struct prof_node *nn = realloc(p->nodes, ncap * sizeof(*nn));
		if (!nn)
			return PROF_NONE;
		p->nodes = nn;
		int64_t *nv = realloc(p->vals, ncap * p->ntypes * sizeof(*nv));
		if (!nv)
			return PROF_NONE;
		p->vals = nv;
		p->nodes_cap = ncap;
	}
	uint32_t id = (uint32_t)p->nnodes++;
	struct prof_node *n = &p->nodes[id];
	n->frame = frame;
	n->parent = parent;
	n->first_child = PROF_NONE;
	n->next_sibling = PROF_NONE;
	memset(p->vals + (size_t)id * p->ntypes, 0,
	       p->ntypes * sizeof(*p->vals));
	if (parent != PROF_NONE) {
		n->next_sibling = p->nodes[parent].first_child;
		p->nodes[parent].first_child = id;
	}
	return id;
}

/* The child of @parent for @frame, made when missing; PROF_NONE and *err
 * set on failure. */
static uint32_t child_of(rtd_profile *p, uint32_t parent, uint32_t frame,
			 int *err)
{
	uint64_t key = child_key(parent, frame);
	void *v;
	if (rtd_map_get(&p->children, key, &v))
		return (uint32_t)(uintptr_t)v;
	if (p->nnodes >= RTD_PROFILE_MAX_NODES) {
		*err = -RTD_E_CAP;
		return PROF_NONE;
	}
	uint32_t child = node_new(p, parent, frame);
	if (child == PROF_NONE) {
		*err = -ENOMEM;
		return PROF_NONE;
	}
	int e = rtd_map_put(&p->children, key, (void *)(uintptr_t)child, NULL);
	if (e) {
		p->nnodes--; /* unlink the node just made */
		p->nodes[parent].first_child = p->nodes[child].next_sibling;
		*err = e;
		return PROF_NONE;
	}
	return child;
}

/* ---- contexts ------------------------------------------------------------ */

static int label_cmp(const void *a, const void *b)
{
	const struct prof_label *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->pad != y->pad)
		return x->pad < y->pad ? -1 : 1;
	if (x->str != y->str)
		return x->str < y->str ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/* Find or make the context for a thread and a label set (canonically
 * sorted in place); returns its index or a negative error. The label's
 * pad field is 1 for a string label. */
static int64_t ctx_get(rtd_profile *p, int64_t pid, int64_t tid,
		       uint32_t thread, struct prof_label *lab, size_t nlab)
{
	if (nlab > 1)
		qsort(lab, nlab, sizeof(*lab), label_cmp);
	uint8_t key[24 + RTD_PROFILE_MAX_LABELS * sizeof(struct prof_label)];
	memcpy(key, &pid, 8);
	memcpy(key + 8, &tid, 8);
	memcpy(key + 16, &thread, 4);
	memset(key + 20, 0, 4);
	if (nlab)
		memcpy(key + 24, lab, nlab * sizeof(*lab));
	size_t klen = 24 + nlab * sizeof(*lab);
	void *v;
	if (rtd_strmap_get(&p->ctx_ids, key, klen, &v))
		return (int64_t)(uintptr_t)v;
	if (p->nctxs >= RTD_PROFILE_MAX_CONTEXTS)
		return -RTD_E_CAP;
	int err = grow((void **)&p->ctxs, &p->ctxs_cap, p->nctxs,
		       sizeof(*p->ctxs), 16);
	while (!err && p->nlabels + nlab > p->labels_cap)
		err = grow((void **)&p->labels, &p->labels_cap,
			   p->labels_cap, sizeof(*p->labels), 64);
	if (err)
		return err;
	uint32_t root = node_new(p, PROF_NONE, PROF_NONE);
	if (root == PROF_NONE)
		return p->nnodes >= RTD_PROFILE_MAX_NODES ? -RTD_E_CAP
							  : -ENOMEM;
	uint32_t id = (uint32_t)p->nctxs;
	err = rtd_strmap_put(&p->ctx_ids, key, klen, (void *)(uintptr_t)id);
	if (err) {
		p->nnodes--;
		return err;
	}
	struct prof_ctx *c = &p->ctxs[p->nctxs++];
	c->root = root;
	c->thread = thread;
	c->pid = pid;
	c->tid = tid;
	c->label_off = (uint32_t)p->nlabels;
	c->nlabels = (uint32_t)nlab;
	if (nlab)
		memcpy(p->labels + p->nlabels, lab, nlab * sizeof(*lab));
	p->nlabels += nlab;
	return id;
}

/* ---- creation ------------------------------------------------------------ */

/* What reset keeps: "" as string 0, the types' strings, context 0. */
static int init_tables(rtd_profile *p)
{
	rtd_strmap_init(&p->str_ids, RTD_PROFILE_MAX_STRINGS);
	rtd_strmap_init(&p->frame_ids, RTD_PROFILE_MAX_FRAMES);
	rtd_strmap_init(&p->map_ids, RTD_PROFILE_MAX_MAPPINGS);
	rtd_strmap_init(&p->ctx_ids, RTD_PROFILE_MAX_CONTEXTS);
	rtd_map_init(&p->children, RTD_PROFILE_MAX_NODES);
	int64_t id = intern0(p, "");
	for (size_t i = 0; i < p->ntypes && id >= 0; i++) {
		id = intern0(p, p->types[i].type);
		if (id >= 0)
			p->type_str[i][0] = (uint32_t)id;
		if (id >= 0)
			id = intern0(p, p->types[i].unit);
		if (id >= 0)
			p->type_str[i][1] = (uint32_t)id;
	}
	p->period_str[0] = p->type_str[p->default_type][0];
	p->period_str[1] = p->type_str[p->default_type][1];
	if (id >= 0 && p->period_type.type) {
		id = intern0(p, p->period_type.type);
		if (id >= 0)
			p->period_str[0] = (uint32_t)id;
		if (id >= 0)
			id = intern0(p, p->period_type.unit);
		if (id >= 0)
			p->period_str[1] = (uint32_t)id;
	}
	if (id < 0)
		return (int)id;
	p->nfixed_strings = (uint32_t)p->nstrs;
	int64_t c = ctx_get(p, 0, 0, 0, NULL, 0); /* context 0, root node 0 */
	return c < 0 ? (int)c : 0;
}

static void free_tables(rtd_profile *p)
{
	rtd_strmap_free(&p->str_ids);
	rtd_strmap_free(&p->frame_ids);
	rtd_strmap_free(&p->map_ids);
	rtd_strmap_free(&p->ctx_ids);
	rtd_map_free(&p->children);
	p->nstrs = p->nframes = p->nmaps = p->nlabels = p->nctxs = 0;
	p->nnodes = 0;
}

rtd_profile *rtd_profile_new2(const struct rtd_profile_opts *opts)
{
	struct rtd_profile_opts oc;
	const struct rtd_profile_opts *o = &oc;
	if (!opts || rtd_opts_copy(&oc, sizeof(oc), opts, RTD_OPTS_END(rtd_profile_opts, period)) ||
	    !o->types || o->ntypes == 0 || o->ntypes > RTD_PROFILE_MAX_TYPES)
		return NULL;
	size_t def = o->default_type;
	if (def >= o->ntypes)
		return NULL;
	for (size_t i = 0; i < o->ntypes; i++)
		if (!o->types[i].type || !o->types[i].unit)
			return NULL;
	rtd_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ntypes = o->ntypes;
	p->default_type = def;
	bool ok = true;
	for (size_t i = 0; i < o->ntypes; i++) {
		p->types[i].type = strdup(o->types[i].type);
		p->types[i].unit = strdup(o->types[i].unit);
		ok = ok && p->types[i].type && p->types[i].unit;
	}
	/* o is the copy at this version's size: an older caller's period
	 * reads as 0 */
	p->period = o->period;
	if (o->period_type.type && o->period_type.unit) {
		p->period_type.type = strdup(o->period_type.type);
		p->period_type.unit = strdup(o->period_type.unit);
		ok = ok && p->period_type.type && p->period_type.unit;
	}
	if (!ok || init_tables(p)) {
		rtd_profile_free(p);
		return NULL;
	}
	return p;
}

rtd_profile *rtd_profile_new(const char *sample_type, const char *unit)
{
	struct rtd_profile_type t = {sample_type ? sample_type : "samples",
				     unit ? unit : "count"};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = &t, .ntypes = 1};
	return rtd_profile_new2(&o);
}

void rtd_profile_free(rtd_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ntypes; i++) {
		free((char *)p->types[i].type);
		free((char *)p->types[i].unit);
	}
	free((char *)p->period_type.type);
	free((char *)p->period_type.unit);
	free(p->source);
	free(p->process);
	free(p->comment);
	free_tables(p);
	free(p->strs);
	free(p->frames);
	free(p->maps);
	free(p->labels);
	free(p->ctxs);
	free(p->nodes);
	free(p->vals);
	free(p);
}

size_t rtd_profile_ntypes(const rtd_profile *p)
{
	return p->ntypes;
}

const struct rtd_profile_type *rtd_profile_get_type(const rtd_profile *p,
						    size_t i)
{
	return i < p->ntypes ? &p->types[i] : NULL;
}

int rtd_profile_find_type(const rtd_profile *p, const char *type)
{
	if (!type)
		return (int)p->default_type;
	for (size_t i = 0; i < p->ntypes; i++)
		if (!strcmp(p->types[i].type, type))
			return (int)i;
	return -RTD_E_NOTFOUND;
}

int prof_type_index(const rtd_profile *p, const char *name)
{
	return rtd_profile_find_type(p, name);
}

size_t rtd_profile_default_type(const rtd_profile *p)
{
	return p->default_type;
}

/* ---- metadata ------------------------------------------------------------ */

static int set_str(char **dst, const char *s)
{
	if (!s)
		return 0;
	char *c = strdup(s);
	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

int rtd_profile_set_meta(rtd_profile *p, const struct rtd_profile_meta *m)
{
	/* the first version's fields (to duration_nanos) are every caller's */
	struct rtd_profile_meta copy;
	m = rtd_opts_at_size(m, &copy, sizeof(copy), RTD_OPTS_END(rtd_profile_meta, duration_nanos),
			     RTD_OPTS_END(rtd_profile_meta, comment));
	if (!m)
		return -RTD_E_INVAL;
	int err = set_str(&p->source, m->source);
	if (!err)
		err = set_str(&p->process, m->process);
	if (!err)
		err = set_str(&p->comment, m->comment);
	if (err)
		return err;
	if (m->pid)
		p->pid = m->pid;
	if (m->time_nanos)
		p->time_nanos = m->time_nanos;
	if (m->duration_nanos)
		p->duration_nanos = m->duration_nanos;
	return 0;
}

void rtd_profile_get_meta(const rtd_profile *p, struct rtd_profile_meta *m)
{
	size_t sz = m->sz;
	struct rtd_profile_meta full = {
		.sz = sz,
		.source = p->source,
		.process = p->process,
		.pid = p->pid,
		.time_nanos = p->time_nanos,
		.duration_nanos = p->duration_nanos,
		.comment = p->comment,
	};
	memcpy(m, &full, sz && sz < sizeof(full) ? sz : sizeof(full));
	m->sz = sz ? sz : sizeof(full);
}

/* ---- frames and mappings ------------------------------------------------- */

const char *rtd_frame_kind_name(unsigned kind)
{
	static const char *const names[RTD_FRAME_KIND_COUNT] = {
		[RTD_FRAME_UNKNOWN] = "unknown",
		[RTD_FRAME_NATIVE] = "native",
		[RTD_FRAME_KERNEL] = "kernel",
		[RTD_FRAME_MANAGED] = "managed",
		[RTD_FRAME_GO] = "go",
		[RTD_FRAME_GO_RUNTIME] = "go-runtime",
		[RTD_FRAME_INTERPRETED] = "interpreted",
		[RTD_FRAME_OTHER] = "other",
		[RTD_FRAME_RUNTIME] = "runtime",
	};
	return kind < RTD_FRAME_KIND_COUNT ? names[kind] : "unknown";
}

int rtd_profile_add_mapping(rtd_profile *p, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *file,
			    const char *build_id)
{
	int64_t f = intern0(p, file);
	int64_t b = f < 0 ? f : intern0(p, build_id);
	if (b < 0)
		return (int)b;
	struct prof_mapping key;
	key = (struct prof_mapping){start, limit, offset, (uint32_t)f,
				    (uint32_t)b};
	void *v;
	if (rtd_strmap_get(&p->map_ids, &key, sizeof(key), &v))
		return (int)(uintptr_t)v;
	if (p->nmaps >= RTD_PROFILE_MAX_MAPPINGS)
		return -RTD_E_CAP;
	int err = grow((void **)&p->maps, &p->maps_cap, p->nmaps,
		       sizeof(*p->maps), 16);
	if (!err)
		err = rtd_strmap_put(&p->map_ids, &key, sizeof(key),
				     (void *)(uintptr_t)(p->nmaps + 1));
	if (err)
		return err;
	p->maps[p->nmaps++] = key;
	return (int)p->nmaps;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* The name a function-level view shows for a frame. */
static int64_t display_name(rtd_profile *p, const struct prof_frame_key *k)
{
	if (k->name)
		return k->name;
	char buf[512];
	const char *mod = k->module ? p->strs[k->module] : NULL;
	uint64_t off = k->addr;
	if (k->mapping) {
		const struct prof_mapping *m = &p->maps[k->mapping - 1];
		if (!mod && m->file)
			mod = base_name(p->strs[m->file]);
		if (k->addr >= m->start && k->addr < m->limit)
			off = k->addr - m->start + m->offset;
	}
	if (k->addr && mod)
		snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, mod, off);
	else if (k->addr)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, k->addr);
	else
		snprintf(buf, sizeof(buf), "%.400s", mod ? mod : "[unknown]");
	return prof_intern(p, buf, strlen(buf));
}

/* Intern a frame; returns its index or a negative error. */
static int64_t frame_get(rtd_profile *p, const struct rtd_frame *f)
{
	struct prof_frame_key k;
	memset(&k, 0, sizeof(k));
	if (f->mapping > p->nmaps)
		return -RTD_E_INVAL;
	int64_t id = intern0(p, f->name);
	if (id < 0)
		return id;
	k.name = (uint32_t)id;
	if (f->module && f->module[0]) {
		if ((id = intern0(p, f->module)) < 0)
			return id;
		k.module = (uint32_t)id;
	}
	if (f->file && f->file[0]) {
		if ((id = intern0(p, f->file)) < 0)
			return id;
		k.file = (uint32_t)id;
	}
	k.line = f->line;
	k.addr = f->addr;
	k.mapping = f->mapping;
	k.kind = f->kind < RTD_FRAME_KIND_COUNT ? f->kind : RTD_FRAME_UNKNOWN;
	k.inlined = f->inlined;
	void *v;
	if (rtd_strmap_get(&p->frame_ids, &k, sizeof(k), &v))
		return (int64_t)(uintptr_t)v;
	if (p->nframes >= RTD_PROFILE_MAX_FRAMES)
		return -RTD_E_CAP;
	int64_t disp = display_name(p, &k);
	if (disp < 0)
		return disp;
	int err = grow((void **)&p->frames, &p->frames_cap, p->nframes,
		       sizeof(*p->frames), 64);
	if (err)
		return err;
	uint32_t fid = (uint32_t)p->nframes;
	err = rtd_strmap_put(&p->frame_ids, &k, sizeof(k),
			     (void *)(uintptr_t)fid);
	if (err)
		return err;
	p->frames[fid] = (struct prof_frame){k, (uint32_t)disp};
	p->nframes++;
	return fid;
}

/* ---- samples ------------------------------------------------------------- */

/* Add values to the node at the end of a path of interned frames. */
static int add_path(rtd_profile *p, uint32_t root, const uint32_t *fids,
		    size_t n, const int64_t *vals, size_t nvals)
{
	uint32_t cur = root;
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		cur = child_of(p, cur, fids[i], &err);
		if (cur == PROF_NONE)
			return err;
	}
	int64_t *v = p->vals + (size_t)cur * p->ntypes;
	for (size_t t = 0; t < nvals; t++) {
		v[t] += vals[t];
		p->total[t] += vals[t];
	}
	p->nsamples++;
	return 0;
}

int rtd_profile_add_sample(rtd_profile *p, const struct rtd_sample *s)
{
	/* the first version's fields (to nvalues) are every caller's */
	struct rtd_sample copy;
	s = rtd_opts_at_size(s, &copy, sizeof(copy), RTD_OPTS_END(rtd_sample, nvalues),
			     RTD_OPTS_END(rtd_sample, nlabels));
	if (!s || (s->nframes && !s->frames) || s->nvalues > p->ntypes ||
	    (s->nvalues && !s->values))
		return -RTD_E_INVAL;
	size_t nlab = s->nlabels;
	if (nlab > RTD_PROFILE_MAX_LABELS)
		return -RTD_E_CAP;
	if (nlab && !s->labels)
		return -RTD_E_INVAL;
	int64_t id;
	struct prof_label lab[RTD_PROFILE_MAX_LABELS];
	for (size_t i = 0; i < nlab; i++) {
		const struct rtd_label *l = &s->labels[i];
		memset(&lab[i], 0, sizeof(lab[i]));
		if (!l->key)
			return -RTD_E_INVAL;
		if ((id = intern0(p, l->key)) < 0)
			return (int)id;
		lab[i].key = (uint32_t)id;
		if (l->str) {
			if ((id = intern0(p, l->str)) < 0)
				return (int)id;
			lab[i].str = (uint32_t)id;
			lab[i].pad = 1;
		} else {
			lab[i].num = l->num;
			if (l->unit && l->unit[0]) {
				if ((id = intern0(p, l->unit)) < 0)
					return (int)id;
				lab[i].unit = (uint32_t)id;
			}
		}
	}
	uint32_t thread = 0;
	int64_t pid = 0, tid = 0;
	pid = s->pid;
	tid = s->tid;
	if (s->thread && s->thread[0]) {
		if ((id = intern0(p, s->thread)) < 0)
			return (int)id;
		thread = (uint32_t)id;
	}
	int64_t ctx = ctx_get(p, pid, tid, thread, lab, nlab);
	if (ctx < 0)
		return (int)ctx;

	uint32_t small[128], *fids = small;
	if (s->nframes > 128) {
		fids = malloc(s->nframes * sizeof(*fids));
		if (!fids)
			return -ENOMEM;
	}
	int err = 0;
	for (size_t i = 0; i < s->nframes && !err; i++) {
		size_t j = s->leaf_first ? s->nframes - 1 - i : i;
		id = frame_get(p, &s->frames[j]);
		if (id < 0)
			err = (int)id;
		else
			fids[i] = (uint32_t)id;
	}
	if (!err)
		err = add_path(p, p->ctxs[ctx].root, fids, s->nframes,
			       s->values, s->nvalues);
	if (fids != small)
		free(fids);
	return err;
}

int rtd_profile_add(rtd_profile *p, const char *const *frames, size_t nframes,
		    int64_t value)
{
	struct rtd_frame small[64], *fr = small;
	if (nframes > 64) {
		fr = calloc(nframes, sizeof(*fr));
		if (!fr)
			return -ENOMEM;
	} else {
		memset(small, 0, sizeof(small));
	}
	for (size_t i = 0; i < nframes; i++)
		fr[i].name = frames[i] ? frames[i] : "?";
	int64_t vals[RTD_PROFILE_MAX_TYPES] = {0};
	vals[p->default_type] = value;
	struct rtd_sample s = {.sz = sizeof(s), .frames = fr,
			       .nframes = nframes, .values = vals,
			       .nvalues = p->default_type + 1};
	int err = rtd_profile_add_sample(p, &s);
	if (fr != small)
		free(fr);
	return err;
}

int64_t rtd_profile_total(const rtd_profile *p)
{
	return p->total[p->default_type];
}

int64_t rtd_profile_total_of(const rtd_profile *p, size_t type)
{
	return type < p->ntypes ? p->total[type] : 0;
}

int64_t rtd_profile_samples(const rtd_profile *p)
{
	size_t first = SIZE_MAX;
	for (size_t t = 0; t < p->ntypes; t++) {
		if (strcmp(p->types[t].unit, "count") != 0)
			continue;
		if (!strcmp(p->types[t].type, "samples"))
			return p->total[t];
		if (first == SIZE_MAX)
			first = t;
	}
	return first == SIZE_MAX ? -1 : p->total[first];
}

const char *prof_samples_text(const rtd_profile *p, char *buf, size_t len)
{
	int64_t n = rtd_profile_samples(p);
	if (n >= 0) {
		snprintf(buf, len, "%" PRId64 " sample%s", n, n == 1 ? "" : "s");
	} else {
		struct rtd_profile_stats st;
		rtd_profile_get_stats(p, &st);
		snprintf(buf, len, "%zu stack%s", st.stacks,
			 st.stacks == 1 ? "" : "s");
	}
	return buf;
}

void rtd_profile_get_stats(const rtd_profile *p, struct rtd_profile_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = p->nsamples;
	st->nodes = p->nnodes;
	st->frames = p->nframes;
	st->strings = p->nstrs;
	st->mappings = p->nmaps;
	st->contexts = p->nctxs;
	for (size_t i = 0; i < p->nnodes; i++) {
		const int64_t *v = prof_vals(p, (uint32_t)i);
		for (size_t t = 0; t < p->ntypes; t++)
			if (v[t]) {
				st->stacks++;
				break;
			}
	}
	/* threads: distinct (pid, tid) among contexts that name one */
	rtd_map seen;
	rtd_map_init(&seen, 0);
	for (size_t i = 0; i < p->nctxs; i++) {
		const struct prof_ctx *c = &p->ctxs[i];
		if (!c->pid && !c->tid && !c->thread)
			continue;
		uint64_t key = rtd_hash_u64((uint64_t)c->pid) ^ (uint64_t)c->tid;
		if (!rtd_map_get(&seen, key, NULL) &&
		    rtd_map_put(&seen, key, NULL, NULL) == 0)
			st->threads++;
	}
	rtd_map_free(&seen);
}

/* ---- merge and reset ----------------------------------------------------- */

static const char *str_or_null(const rtd_profile *p, uint32_t id)
{
	return id ? p->strs[id] : NULL;
}

int rtd_profile_merge(rtd_profile *dst, const rtd_profile *src)
{
	if (dst == src)
		return -RTD_E_INVAL;
	size_t tmap[RTD_PROFILE_MAX_TYPES];
	for (size_t t = 0; t < src->ntypes; t++) {
		size_t d = 0;
		while (d < dst->ntypes &&
		       (strcmp(dst->types[d].type, src->types[t].type) ||
			strcmp(dst->types[d].unit, src->types[t].unit)))
			d++;
		if (d == dst->ntypes)
			return -RTD_E_INVAL;
		tmap[t] = d;
	}
	/* metadata: what dst lacks, and the union of the time spans */
	struct rtd_profile_meta m = {.sz = sizeof(m)};
	m.source = dst->source ? NULL : src->source;
	m.process = dst->process ? NULL : src->process;
	m.comment = dst->comment ? NULL : src->comment;
	m.pid = dst->pid ? 0 : src->pid;
	int err = rtd_profile_set_meta(dst, &m);
	if (err)
		return err;
	if (src->time_nanos || src->duration_nanos) {
		if (!dst->time_nanos && !dst->duration_nanos) {
			dst->time_nanos = src->time_nanos;
			dst->duration_nanos = src->duration_nanos;
		} else {
			int64_t s0 = dst->time_nanos < src->time_nanos
					     ? dst->time_nanos
					     : src->time_nanos;
			int64_t e0 = dst->time_nanos + dst->duration_nanos,
				e1 = src->time_nanos + src->duration_nanos;
			dst->time_nanos = s0;
			dst->duration_nanos = (e0 > e1 ? e0 : e1) - s0;
		}
	}

	uint32_t *mmap = NULL, *fmap = NULL, *nmap = NULL;
	mmap = calloc(src->nmaps + 1, sizeof(*mmap));
	fmap = malloc((src->nframes + 1) * sizeof(*fmap));
	nmap = malloc((src->nnodes + 1) * sizeof(*nmap));
	if (!mmap || !fmap || !nmap) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < src->nmaps && !err; i++) {
		const struct prof_mapping *sm = &src->maps[i];
		int id = rtd_profile_add_mapping(
			dst, sm->start, sm->limit, sm->offset,
			str_or_null(src, sm->file), str_or_null(src, sm->build_id));
		if (id < 0)
			err = id;
		else
			mmap[i + 1] = (uint32_t)id;
	}
	for (size_t i = 0; i < src->nframes && !err; i++) {
		const struct prof_frame_key *k = &src->frames[i].k;
		struct rtd_frame f = {
			.name = src->strs[k->name],
			.module = str_or_null(src, k->module),
			.file = str_or_null(src, k->file),
			.line = k->line,
			.addr = k->addr,
			.mapping = mmap[k->mapping],
			.kind = k->kind,
			.inlined = k->inlined,
		};
		int64_t id = frame_get(dst, &f);
		if (id < 0)
			err = (int)id;
		else
			fmap[i] = (uint32_t)id;
	}
	for (size_t i = 0; i < src->nnodes; i++)
		nmap[i] = PROF_NONE;
	for (size_t i = 0; i < src->nctxs && !err; i++) {
		const struct prof_ctx *c = &src->ctxs[i];
		struct prof_label lab[RTD_PROFILE_MAX_LABELS];
		for (size_t j = 0; j < c->nlabels && !err; j++) {
			const struct prof_label *sl = &src->labels[c->label_off + j];
			int64_t a = intern0(dst, src->strs[sl->key]);
			int64_t b = a < 0 ? a : intern0(dst, src->strs[sl->str]);
			int64_t u = b < 0 ? b : intern0(dst, src->strs[sl->unit]);
			if (u < 0) {
				err = (int)u;
				break;
			}
			lab[j] = (struct prof_label){(uint32_t)a, (uint32_t)b,
						     (uint32_t)u, sl->pad,
						     sl->num};
		}
		int64_t th = err ? 0 : intern0(dst, src->strs[c->thread]);
		if (th < 0)
			err = (int)th;
		if (err)
			break;
		int64_t dc = ctx_get(dst, c->pid, c->tid, (uint32_t)th, lab,
				     c->nlabels);
		if (dc < 0)
			err = (int)dc;
		else
			nmap[c->root] = dst->ctxs[dc].root;
	}
	for (size_t i = 0; i < src->nnodes && !err; i++) {
		const struct prof_node *n = &src->nodes[i];
		if (n->parent != PROF_NONE) {
			uint32_t parent = nmap[n->parent];
			if (parent == PROF_NONE)
				continue;
			nmap[i] = child_of(dst, parent, fmap[n->frame], &err);
			if (nmap[i] == PROF_NONE)
				break;
		}
		if (nmap[i] == PROF_NONE)
			continue;
		const int64_t *sv = prof_vals(src, (uint32_t)i);
		int64_t *dv = dst->vals + (size_t)nmap[i] * dst->ntypes;
		for (size_t t = 0; t < src->ntypes; t++) {
			dv[tmap[t]] += sv[t];
			dst->total[tmap[t]] += sv[t];
		}
	}
	if (!err)
		dst->nsamples += src->nsamples;
out:
	free(mmap);
	free(fmap);
	free(nmap);
	return err;
}

int rtd_profile_reset(rtd_profile *p)
{
	free_tables(p);
	memset(p->total, 0, sizeof(p->total));
	p->nsamples = 0;
	p->time_nanos = 0;
	p->duration_nanos = 0;
	/* "", the types and the period type are interned again in the same
	 * order, so their ids do not change */
	return init_tables(p);
}
