/* SPDX-License-Identifier: MIT */
/*
 * gcheap.c - a GC heap snapshot as an object graph (rtdiag/gcheap.h).
 *
 * The runtime's heap walk (triggered by enabling GCHeapCollect) sends, per
 * batch: GC/BulkNode {Index, Count, ClrInstanceID, Count x {Address, Size,
 * TypeID, EdgeCount}} and GC/BulkEdge {Index, Count, ClrInstanceID, Count x
 * {Value (the referenced address), ReferencingFieldID}}, the edges of the
 * nodes in node order; GC/BulkRootEdge {Index, Count, ClrInstanceID, Count x
 * {RootedNodeAddress, GCRootKind, GCRootFlag, GCRootID}}, GC/BulkRootStatic-
 * Var {Count, AppDomainID, ClrInstanceID, Count x {GCRootID, ObjectID,
 * TypeID, Flags, FieldName}}, GC/BulkRootConditionalWeakTableElementEdge
 * {Index, Count, ClrInstanceID, Count x {GCKeyNodeID, GCValueNodeID,
 * GCRootID}} and Type/BulkType {Count, ClrInstanceID, Count x {TypeID,
 * ModuleID, TypeNameID, Flags, CorElementType, Name, TypeParameterCount,
 * TypeParameters[]}}. Pointers have the trace's pointer size.
 *
 * A conditional weak table's value is kept alive by its key; it is taken
 * here as a root of its own (so a key's retained size does not include
 * its dependent values).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace/clr_ids.h"
#include "common/buf.h"
#include "common/map.h"
#include "common/rd.h"
#include "dotnet/gcheap_int.h"
#include "rtdiag/gcheap.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/nettrace_decoder.h"
#include "rtdiag/source.h"

RTD_API rtd_gcheap *rtd_gcheap_new(const struct rtd_gcheap_opts *o)
{
	rtd_gcheap *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	if (rtd_opts_copy(&h->o, sizeof(h->o), o, RTD_OPTS_END(rtd_gcheap_opts, max_refs))) {
		free(h);
		return NULL;
	}
	if (!h->o.max_objects || h->o.max_objects > (NONE - 1))
		h->o.max_objects = h->o.max_objects ? NONE - 1 : 64u << 20;
	if (!h->o.max_refs)
		h->o.max_refs = 256u << 20;
	h->gc = -1;
	rtd_map_init(&h->type_index, 1u << 22);
	rtd_buf_init(&h->tmp, RTD_CAP_STRING);
	return h;
}

RTD_API void rtd_gcheap_free(rtd_gcheap *h)
{
	if (!h)
		return;
	free(h->addr);
	free(h->size);
	free(h->tid);
	free(h->edge_off);
	free(h->raddr);
	free(h->refs);
	free(h->roots);
	for (size_t i = 0; i < h->nnames; i++)
		free(h->names[i]);
	free(h->names);
	rtd_map_free(&h->type_index);
	free(h->idom);
	free(h->retained);
	free(h->root_idx);
	rtd_buf_free(&h->tmp);
	free(h);
}

RTD_API int rtd_gcheap_request(struct rtd_ipc_providers *out)
{
	/* GC | Type | GCHeapDump | GCHeapCollect | GCHeapAndTypeNames */
	char err[64];
	return rtd_ipc_providers_parse(PROVIDER ":0x1980001:5", out, err,
				       sizeof(err));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 4096;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static uint64_t rd_ptr(rtd_rd *r, uint32_t ps)
{
	return ps == 4 ? rd_u32le(r) : rd_u64le(r);
}

static int add_node(rtd_gcheap *h, uint64_t a, uint64_t s, uint64_t t,
		    uint64_t edges)
{
	if (h->n >= h->o.max_objects)
		return -RTD_E_CAP;
	if (h->n == h->cap) {
		size_t c = h->cap, c2 = h->cap, c3 = h->cap, c4 = h->cap;
		if (grow((void **)&h->addr, &c, h->n + 1, sizeof(*h->addr)) ||
		    grow((void **)&h->size, &c2, h->n + 1, sizeof(*h->size)) ||
		    grow((void **)&h->tid, &c3, h->n + 1, sizeof(*h->tid)) ||
		    grow((void **)&h->edge_off, &c4, h->n + 1,
			 sizeof(*h->edge_off)))
			return -ENOMEM;
		h->cap = c;
	}
	h->addr[h->n] = a;
	h->size[h->n] = s;
	h->tid[h->n] = t;
	h->edge_off[h->n] = h->edge_total;
	h->edge_total += edges;
	h->n++;
	return 0;
}

static int bulk_node(rtd_gcheap *h, const struct rtd_nettrace_event *ev,
		     uint32_t ps)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	(void)rd_u32le(&r); /* Index */
	uint32_t count = rd_u32le(&r);
	(void)rd_u16le(&r);
	for (uint32_t i = 0; i < count && rd_ok(&r); i++) {
		uint64_t a = rd_ptr(&r, ps), s = rd_u64le(&r), t = rd_u64le(&r),
			 e = rd_u64le(&r);
		if (!rd_ok(&r))
			break;
		int rc = add_node(h, a, s, t, e);
		if (rc)
			return rc;
	}
	h->nodes_seen = true;
	return 0;
}

static int bulk_edge(rtd_gcheap *h, const struct rtd_nettrace_event *ev,
		     uint32_t ps)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	(void)rd_u32le(&r);
	uint32_t count = rd_u32le(&r);
	(void)rd_u16le(&r);
	for (uint32_t i = 0; i < count && rd_ok(&r); i++) {
		uint64_t v = rd_ptr(&r, ps);
		(void)rd_u32le(&r); /* ReferencingFieldID */
		if (!rd_ok(&r))
			break;
		if (h->nr >= h->o.max_refs)
			return -RTD_E_CAP;
		if (grow((void **)&h->raddr, &h->rcap, h->nr + 1, sizeof(*h->raddr)))
			return -ENOMEM;
		h->raddr[h->nr++] = v;
	}
	return 0;
}

static int add_root(rtd_gcheap *h, uint64_t a)
{
	if (!a)
		return 0;
	if (grow((void **)&h->roots, &h->rootcap, h->nroots + 1,
		 sizeof(*h->roots)))
		return -ENOMEM;
	h->roots[h->nroots++] = a;
	return 0;
}

static int bulk_roots(rtd_gcheap *h, const struct rtd_nettrace_event *ev,
		      uint32_t ps, int which)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	uint32_t count;
	if (which == CLR_GC_BULK_ROOT_STATIC_VAR) { /* Count, AppDomainID, inst */
		count = rd_u32le(&r);
		(void)rd_u64le(&r);
		(void)rd_u16le(&r);
	} else {
		(void)rd_u32le(&r);
		count = rd_u32le(&r);
		(void)rd_u16le(&r);
	}
	for (uint32_t i = 0; i < count && rd_ok(&r); i++) {
		uint64_t a = 0;
		if (which == CLR_GC_BULK_ROOT_EDGE) {
			a = rd_ptr(&r, ps);
			(void)rd_u8(&r);
			(void)rd_u32le(&r);
			(void)rd_ptr(&r, ps);
		} else if (which == CLR_GC_BULK_ROOT_CONDITIONAL_WEAK_TABLE_ELEMENT_EDGE) { /* the value */
			(void)rd_ptr(&r, ps);
			a = rd_ptr(&r, ps);
			(void)rd_ptr(&r, ps);
		} else { /* static variable */
			(void)rd_u64le(&r);
			a = rd_u64le(&r);
			(void)rd_u64le(&r);
			(void)rd_u32le(&r);
			if (rtd_rd_utf16z(&r, &h->tmp) != 0)
				break;
		}
		if (!rd_ok(&r))
			break;
		int rc = add_root(h, a);
		if (rc)
			return rc;
	}
	return 0;
}

static int bulk_type(rtd_gcheap *h, const struct rtd_nettrace_event *ev)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	uint32_t count = rd_u32le(&r);
	(void)rd_u16le(&r);
	for (uint32_t i = 0; i < count && rd_ok(&r); i++) {
		uint64_t id = rd_u64le(&r);
		(void)rd_u64le(&r); /* ModuleID */
		(void)rd_u32le(&r); /* TypeNameID */
		(void)rd_u32le(&r); /* Flags */
		(void)rd_u8(&r);    /* CorElementType */
		if (rtd_rd_utf16z(&r, &h->tmp) != 0)
			break;
		uint32_t np = rd_u32le(&r);
		if (!rd_ok(&r) || !rd_skip(&r, (size_t)np * 8))
			break;
		void *v;
		if (rtd_map_get(&h->type_index, id, &v))
			continue;
		if (grow((void **)&h->names, &h->namecap, h->nnames + 1,
			 sizeof(*h->names)))
			return -ENOMEM;
		const char *nm = rtd_buf_cstr(&h->tmp);
		char *c = strdup(*nm ? nm : "?");
		if (!c)
			return -ENOMEM;
		int rc = rtd_map_put(&h->type_index, id,
				     (void *)(uintptr_t)(h->nnames + 1), NULL);
		if (rc) {
			free(c);
			return rc;
		}
		h->names[h->nnames++] = c;
	}
	return 0;
}

RTD_API int rtd_gcheap_event(rtd_gcheap *h, rtd_nettrace *dec,
			     const struct rtd_nettrace_event *ev)
{
	if (h->finished)
		return -RTD_E_STATE;
	const struct rtd_nettrace_metadata *m = ev->meta;
	if (!m || !m->provider || strcmp(m->provider, PROVIDER) != 0)
		return 0;
	const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
	uint32_t ps = info && info->pointer_size == 4 ? 4 : 8;
	rtd_rd r;
	switch (m->event_id) {
	case CLR_GC_START: /* Count, Depth, Reason, Type */
		rd_init(&r, ev->payload, ev->payload_len);
		{
			uint32_t count = rd_u32le(&r), depth = rd_u32le(&r);
			if (rd_ok(&r) && depth == 2 && h->gc < 0)
				h->gc = count;
		}
		return 0;
	case CLR_GC_STOP: /* Count, Depth */
		rd_init(&r, ev->payload, ev->payload_len);
		{
			uint32_t count = rd_u32le(&r);
			if (rd_ok(&r) && h->gc >= 0 && count == (uint32_t)h->gc &&
			    h->nodes_seen && !h->done) {
				h->done = true;
				return 1;
			}
		}
		return 0;
	case CLR_TYPE_BULK_TYPE: return bulk_type(h, ev);
	case CLR_GC_BULK_NODE: return bulk_node(h, ev, ps);
	case CLR_GC_BULK_EDGE: return bulk_edge(h, ev, ps);
	case CLR_GC_BULK_ROOT_EDGE:
	case CLR_GC_BULK_ROOT_CONDITIONAL_WEAK_TABLE_ELEMENT_EDGE:
	case CLR_GC_BULK_ROOT_STATIC_VAR: return bulk_roots(h, ev, ps, (int)m->event_id);
	default: return 0;
	}
}

/* ---- the graph ---------------------------------------------------------------- */

/* Move v[root] down the heap v[0..n) ordered by address. */
static void sift(uint32_t *v, size_t root, size_t n, const uint64_t *addr)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && addr[v[child]] < addr[v[child + 1]])
			child++;
		if (addr[v[root]] >= addr[v[child]])
			return;
		uint32_t t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

/* Object indexes by address (a heap sort: qsort_r is not in C11). */
static void sort_by_addr(uint32_t *v, size_t n, const uint64_t *addr)
{
	for (size_t start = n / 2; start-- > 0;)
		sift(v, start, n, addr);
	for (size_t end = n; end-- > 1;) {
		uint32_t t = v[0];
		v[0] = v[end];
		v[end] = t;
		sift(v, 0, end, addr);
	}
}

/* The object at address a, or NONE. */
static uint32_t find(const rtd_gcheap *h, const uint32_t *by, uint64_t a)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t x = h->addr[by[mid]];
		if (x == a)
			return by[mid];
		if (x < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NONE;
}

uint64_t gcheap_nrefs(const rtd_gcheap *h, size_t i)
{
	uint64_t end = i + 1 < h->n ? h->edge_off[i + 1] : h->edge_total;
	if (end > h->nr)
		end = h->nr; /* edges cut short */
	return h->edge_off[i] < end ? end - h->edge_off[i] : 0;
}

/* The working arrays of rtd_gcheap_finish(). */
struct work {
	size_t n;          /* objects; n is also the virtual root */
	uint32_t *roots;   /* root objects */
	size_t nroots;
	uint32_t *post;    /* postorder number, NONE unreachable */
	uint32_t *order;   /* objects by postorder; the last is the root */
	uint32_t np;
	uint32_t *pred_off, *preds; /* predecessors (CSR) */
};

/* References and roots from addresses to object indexes. */
static int resolve(rtd_gcheap *h, struct work *w)
{
	uint32_t *by = malloc(w->n * sizeof(*by));
	uint32_t *refs = malloc((h->nr ? h->nr : 1) * sizeof(*refs));
	w->roots = malloc((h->nroots ? h->nroots : 1) * sizeof(*w->roots));
	if (!by || !refs || !w->roots) {
		free(by);
		free(refs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->n; i++)
		by[i] = (uint32_t)i;
	sort_by_addr(by, w->n, h->addr);
	for (size_t i = 0; i < h->nr; i++) {
		refs[i] = find(h, by, h->raddr[i]);
		if (refs[i] == NONE)
			h->dangling++;
	}
	for (size_t i = 0; i < h->nroots; i++) {
		uint32_t x = find(h, by, h->roots[i]);
		if (x != NONE)
			w->roots[w->nroots++] = x;
	}
	free(by);
	free(h->raddr);
	h->raddr = NULL;
	h->refs = refs;
	return 0;
}

/* The next object a depth-first walk goes to from node (cursor *next),
 * or NONE. */
static uint32_t next_child(const rtd_gcheap *h, const struct work *w,
			   uint32_t node, uint64_t *next)
{
	if (node == w->n) {
		while (*next < w->nroots) {
			uint32_t c = w->roots[(*next)++];
			if (w->post[c] == NONE)
				return c;
		}
		return NONE;
	}
	uint64_t k = gcheap_nrefs(h, node), off = h->edge_off[node];
	while (*next < k) {
		uint32_t c = h->refs[off + (*next)++];
		if (c != NONE && w->post[c] == NONE)
			return c;
	}
	return NONE;
}

/* Postorder numbers from the virtual root (iterative: heaps are deep). */
static int postorder(const rtd_gcheap *h, struct work *w)
{
	struct frame {
		uint32_t node;
		uint64_t next;
	} *stack = malloc((w->n + 1) * sizeof(*stack));
	w->post = malloc((w->n + 1) * sizeof(*w->post));
	w->order = malloc((w->n + 1) * sizeof(*w->order));
	if (!stack || !w->post || !w->order) {
		free(stack);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= w->n; i++)
		w->post[i] = NONE;
	size_t sp = 0;
	stack[sp++] = (struct frame){(uint32_t)w->n, 0};
	w->post[w->n] = NONE - 1; /* on the way */
	while (sp) {
		struct frame *f = &stack[sp - 1];
		uint32_t c = next_child(h, w, f->node, &f->next);
		if (c != NONE) {
			w->post[c] = NONE - 1;
			stack[sp++] = (struct frame){c, 0};
		} else {
			w->order[w->np] = f->node;
			w->post[f->node] = w->np++;
			sp--;
		}
	}
	free(stack);
	return 0;
}

/* Predecessors of the reachable objects (the virtual root's roots too). */
static int predecessors(const rtd_gcheap *h, struct work *w)
{
	size_t n = w->n;
	w->pred_off = calloc(n + 2, sizeof(*w->pred_off));
	if (!w->pred_off)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		uint32_t *fill = NULL;
		if (pass) {
			for (size_t v = 0; v <= n; v++)
				w->pred_off[v + 1] += w->pred_off[v];
			w->preds = malloc(((size_t)w->pred_off[n + 1] + 1) *
					  sizeof(*w->preds));
			fill = calloc(n + 1, sizeof(*fill));
			if (!w->preds || !fill) {
				free(fill);
				return -ENOMEM;
			}
		}
#define PRED(c, from)                                                          \
	do {                                                                   \
		if (pass)                                                      \
			w->preds[w->pred_off[c] + fill[c]++] = (uint32_t)(from); \
		else                                                           \
			w->pred_off[(c) + 1]++;                                \
	} while (0)
		for (size_t i = 0; i < w->nroots; i++)
			PRED(w->roots[i], n);
		for (size_t v = 0; v < n; v++) {
			if (w->post[v] == NONE)
				continue;
			uint64_t k = gcheap_nrefs(h, v), off = h->edge_off[v];
			for (uint64_t e = 0; e < k; e++)
				if (h->refs[off + e] != NONE)
					PRED(h->refs[off + e], v);
		}
#undef PRED
		free(fill);
	}
	return 0;
}

/* Cooper, Harvey and Kennedy: iterate in reverse postorder to a fixpoint. */
static void dominators(rtd_gcheap *h, const struct work *w)
{
	uint32_t *idom = h->idom;
	idom[w->n] = (uint32_t)w->n;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = w->np - 1; i-- > 0;) {
			uint32_t b = w->order[i], nd = NONE;
			for (uint32_t k = w->pred_off[b]; k < w->pred_off[b + 1]; k++) {
				uint32_t x = w->preds[k], y = nd;
				if (idom[x] == NONE)
					continue;
				if (nd == NONE) {
					nd = x;
					continue;
				}
				while (x != y) {
					while (w->post[x] < w->post[y])
						x = idom[x];
					while (w->post[y] < w->post[x])
						y = idom[y];
				}
				nd = x;
			}
			if (nd != NONE && idom[b] != nd) {
				idom[b] = nd;
				changed = true;
			}
		}
	}
}

RTD_API int rtd_gcheap_finish(rtd_gcheap *h)
{
	if (h->finished)
		return 0;
	if (!h->n)
		return -RTD_E_NOTFOUND;
	if (h->refs || h->idom)
		return -ENOMEM; /* an earlier call ran out of memory half-way */
	struct work w = {.n = h->n};
	int err = resolve(h, &w);
	if (!err)
		err = postorder(h, &w);
	if (!err)
		err = predecessors(h, &w);
	if (!err) {
		h->idom = malloc((w.n + 1) * sizeof(*h->idom));
		h->retained = calloc(w.n + 1, sizeof(*h->retained));
		err = h->idom && h->retained ? 0 : -ENOMEM;
	}
	if (!err) {
		for (size_t i = 0; i <= w.n; i++)
			h->idom[i] = NONE;
		dominators(h, &w);
		/* retained sizes: dominated objects come before their
		 * dominators in postorder */
		for (uint32_t i = 0; i + 1 < w.np; i++) {
			uint32_t v = w.order[i];
			h->retained[v] += h->size[v];
			h->reachable += h->size[v];
			if (h->idom[v] != NONE)
				h->retained[h->idom[v]] += h->retained[v];
		}
		h->nroot_objs = w.nroots;
		h->root_idx = w.roots; /* kept for the .gcdump writer */
		w.roots = NULL;
		h->finished = true;
	}
	free(w.roots);
	free(w.post);
	free(w.order);
	free(w.pred_off);
	free(w.preds);
	return err;
}

RTD_API void rtd_gcheap_stats(const rtd_gcheap *h, struct rtd_gcheap_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->objects = h->n;
	s->refs = h->nr;
	s->dangling = h->dangling;
	s->roots = h->nroot_objs;
	for (size_t i = 0; i < h->n; i++)
		s->bytes += h->size[i];
	s->reachable_bytes = h->reachable;
	s->memory = h->cap * 32 + (h->raddr ? h->rcap * 8 : h->nr * 4) +
		    (h->idom ? (h->n + 1) * 12 : 0) + h->rootcap * 8;
}

size_t gcheap_type_of(const rtd_gcheap *h, size_t i)
{
	void *v;
	return rtd_map_get(&h->type_index, h->tid[i], &v) ? (uintptr_t)v : 0;
}

static const char *type_name(const rtd_gcheap *h, size_t i)
{
	size_t t = gcheap_type_of(h, i);
	return t ? h->names[t - 1] : "?";
}

RTD_API int rtd_gcheap_object(const rtd_gcheap *h, uint64_t index,
			      struct rtd_gcheap_object *out)
{
	if (index >= h->n)
		return -RTD_E_NOTFOUND;
	out->index = index;
	out->address = h->addr[index];
	out->size = h->size[index];
	out->type = type_name(h, index);
	out->retained = h->retained ? h->retained[index] : 0;
	uint32_t d = h->idom ? h->idom[index] : NONE;
	out->idom = d == NONE || d == h->n ? -1 : (int64_t)d;
	out->nrefs = gcheap_nrefs(h, index);
	return 0;
}

RTD_API int64_t rtd_gcheap_ref(const rtd_gcheap *h, uint64_t index, uint64_t i)
{
	if (index >= h->n || !h->refs || i >= gcheap_nrefs(h, index))
		return -1;
	uint32_t c = h->refs[h->edge_off[index] + i];
	return c == NONE ? -1 : (int64_t)c;
}

static int cmp_type(const void *a, const void *b)
{
	const struct rtd_gcheap_type *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained < y->retained ? 1 : -1;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return strcmp(x->name, y->name);
}

RTD_API int rtd_gcheap_types(const rtd_gcheap *h, struct rtd_gcheap_type **out,
			     size_t *n)
{
	size_t nt = h->nnames + 1; /* the last: "?" */
	struct rtd_gcheap_type *t = calloc(nt, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < h->nnames; i++)
		t[i].name = h->names[i];
	t[nt - 1].name = "?";
	for (size_t i = 0; i < h->n; i++) {
		void *v;
		size_t k = rtd_map_get(&h->type_index, h->tid[i], &v)
				   ? (uintptr_t)v - 1
				   : nt - 1;
		t[k].count++;
		t[k].size += h->size[i];
		uint32_t d = h->idom ? h->idom[i] : NONE;
		if (h->retained && d != NONE &&
		    (d == h->n || h->tid[d] != h->tid[i]))
			t[k].retained += h->retained[i];
	}
	size_t w = 0;
	for (size_t i = 0; i < nt; i++)
		if (t[i].count)
			t[w++] = t[i];
	qsort(t, w, sizeof(*t), cmp_type);
	*out = t;
	*n = w;
	return 0;
}
