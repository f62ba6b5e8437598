/* SPDX-License-Identifier: MIT */
/*
 * gcdump.c - the heap-dump session (rtd_gcheap_collect()) and the .gcdump
 * file dotnet-gcdump and PerfView read (rtd_gcheap_write_gcdump()).
 *
 * A .gcdump is a FastSerialization stream (PerfView's
 * src/FastSerialization): the string "!FastSerialization.1", then the
 * entry object, a GCHeapDump. Every object is BeginObject, its type (an
 * object of its own: version, minimum reader version, full name), its
 * fields, EndObject. Integers are little-endian; a string is its length
 * in UTF-16 units (-1: null) then those units as UTF-8, a unit past
 * U+FFFF as its surrogates' three bytes each. After the entry object: an
 * unbalanced EndObject, the forward-reference table (count, then each
 * reference's offset), the trailer (the table's offset) and, last, the
 * trailer's offset: a reader starts there. Offsets are 4 bytes (the
 * reader's StreamLabelWidth.FourBytes).
 *
 * GCHeapDump's fields (its version 10, readers >= 8): the MemoryGraph,
 * Is64Bit, two sampling multipliers (1.0), JSHeapInfo (null),
 * DotNetHeapInfo, the collection log, the time (.NET ticks), machine and
 * process names, pid, commit and working set, the per-type count
 * multipliers (0 of them), then tagged: InteropInfo (a skip region around
 * null) and the creating tool. MemoryGraph (Graph's version 1, readers >=
 * 0): total size, the root node, the types (name, size, module), a 4-byte
 * offset per node into a blob of nodes, the blob, then each node's
 * address and a tagged Is64Bit. A node in the blob: compressed (type << 1
 * | explicit size), the size when it differs from its type's (a type's
 * size is that of its first node), the child count and each child as
 * (child - node), all compressed: big-endian 7-bit groups, the high bit
 * set on all but the last, the first group sign-extended. Type 0 is
 * "UNDEFINED" and offset 0 of the blob its node (what a node never
 * defined points at).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/file.h"
#include "dotnet/gcheap_int.h"
#include "rtdiag/source.h"

/* ---- the session -------------------------------------------------------- */

struct collect {
	rtd_gcheap *h;
	rtd_nettrace *dec;
	const struct rtd_gcheap_collect_opts *o;
	struct rtd_gcheap_collect_result *res;
	volatile int stop; /* the walk's GC ended, or the caller cancelled */
	int dec_rc;
};

static int collect_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct collect *k = ctx;
	int rc = rtd_gcheap_event(k->h, k->dec, ev);
	if (rc == 1) {
		k->res->walk_ended = true;
		k->stop = 1;
	} else if (rc < 0 && !k->res->heap_err) {
		k->res->heap_err = rc;
	}
	return 0;
}

static int collect_sink(const void *data, size_t len, void *ctx)
{
	struct collect *k = ctx;
	if (k->dec_rc == 0) {
		int rc = rtd_nettrace_feed(k->dec, data, len);
		if (rc)
			k->dec_rc = rc; /* < 0 malformed, 1 its end marker */
	}
	return 0;
}

static void collect_tick(uint64_t bytes, void *ctx)
{
	struct collect *k = ctx;
	if (k->o->cancel && *k->o->cancel)
		k->stop = 1;
	if (k->o->tick) {
		struct rtd_nettrace_stats ns = {0};
		rtd_nettrace_stats(k->dec, &ns);
		k->o->tick(bytes, ns.events, ns.dropped, k->o->ctx);
	}
}

/* ---- the type table's flush ----
 * The runtime names each type (Type/BulkType) once until its table of
 * logged types is flushed, which it does when a change of the runtime
 * provider's sessions leaves the Type keyword off (TypeSystemLog's
 * OnKeywordsChanged). Alone, the end of a heap dump's session does that;
 * while another session of that provider is on (a flight recorder's),
 * the check ran before the ended session left: a second heap dump got no
 * type name at all (all 5,380 objects of a test's heap "?", 0 of its
 * 1,000 HeapTreeNode). So a session of that provider without the Type
 * keyword is started and stopped first: its start runs the check with
 * the last heap dump's session gone. (dotnet-gcdump starts a
 * SampleProfiler session for this: that provider's change runs no
 * check, and its second dump beside another session has the same
 * nameless types.) */

static int flush_sink(const void *data, size_t len, void *ctx)
{
	(void)data, (void)len, (void)ctx;
	return 0;
}

static int flush_types(rtd_ipc_client *c)
{
	struct rtd_ipc_providers prov = {0};
	char err[64];
	/* Loader (0x8), Informational: rare events, no Type */
	int rc = rtd_ipc_providers_parse("Microsoft-Windows-DotNETRuntime:0x8:4", &prov, err,
					 sizeof(err));
	if (rc)
		return rc;
	struct rtd_ipc_session_opts so = {.sz = sizeof(so), .providers = prov.v,
					  .n_providers = prov.n, .buffer_mb = 1,
					  .no_rundown = true, .no_stackwalk = true};
	rtd_ipc_session *s = rtd_ipc_session_start(c, &so, &rc);
	if (!s && !rc)
		rc = -ENOMEM;
	if (s) {
		/* the start did it: stopped at once, read to its end */
		volatile int stop = 1;
		struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = flush_sink,
					       .stop = &stop, .rundown_wait_ms = 10000};
		rc = rtd_ipc_session_pump(s, &po, NULL);
	}
	rtd_ipc_session_free(s);
	rtd_ipc_providers_clear(&prov);
	return rc;
}

RTD_API int rtd_gcheap_collect(rtd_gcheap *h, rtd_ipc_client *c,
			       const struct rtd_gcheap_collect_opts *o,
			       struct rtd_gcheap_collect_result *res)
{
	struct rtd_gcheap_collect_opts oc;
	struct rtd_gcheap_collect_result rs;
	if (!res)
		res = &rs;
	memset(res, 0, sizeof(*res));
	if (!h || !c ||
	    rtd_opts_copy(&oc, sizeof(oc), o, RTD_OPTS_END(rtd_gcheap_collect_opts, max_objects)))
		return -RTD_E_INVAL;
	struct rtd_ipc_providers prov = {0};
	int rc = rtd_gcheap_request(&prov);
	if (rc)
		return rc;
	struct collect k = {.h = h, .o = &oc, .res = res};
	struct rtd_nettrace_opts no = {.sz = sizeof(no), .ctx = &k, .on_event = collect_event};
	k.dec = rtd_nettrace_new(&no);
	if (!k.dec) {
		rtd_ipc_providers_clear(&prov);
		return -ENOMEM;
	}
	struct rtd_ipc_session_opts so = {
		.sz = sizeof(so),
		.providers = prov.v,
		.n_providers = prov.n,
		.buffer_mb = oc.buffer_mb ? oc.buffer_mb : 1024,
		.no_rundown = true,
		.no_stackwalk = true,
	};
	rc = flush_types(c);
	rtd_ipc_session *s = rc ? NULL : rtd_ipc_session_start(c, &so, &rc);
	if (!s && !rc)
		rc = -ENOMEM;
	if (s) {
		res->session = true;
		if (oc.started)
			oc.started(rtd_ipc_session_id(s), rtd_ipc_session_version(s), oc.ctx);
		/* the walk's GC ending stops it (k.stop); the caller's cancel
		 * is looked at every tick */
		struct rtd_ipc_pump_opts po = {
			.sz = sizeof(po),
			.sink = collect_sink,
			.ctx = &k,
			.stop = &k.stop,
			.duration_ms = oc.timeout_ms ? oc.timeout_ms : 60000,
			.rundown_wait_ms = 30000,
			.tick = collect_tick,
		};
		rc = rtd_ipc_session_pump(s, &po, &res->pump);
		struct rtd_nettrace_stats ns = {0};
		rtd_nettrace_stats(k.dec, &ns);
		res->dropped = ns.dropped;
		res->events = ns.events;
		res->bytes = res->pump.bytes;
	}
	rtd_ipc_session_free(s);
	rtd_nettrace_free(k.dec);
	rtd_ipc_providers_clear(&prov);
	return rc;
}

/* ---- the .gcdump writer -------------------------------------------------- */

enum fs_tag {
	FS_NULL = 1,
	FS_BEGIN_OBJECT = 4,
	FS_END_OBJECT = 6,
	FS_BYTE = 8,
	FS_SKIP_REGION = 12,
	FS_STRING = 13,
};

struct fs {
	FILE *f;
	uint64_t off; /* the stream's offset: a label */
};

static void fs_bytes(struct fs *w, const void *p, size_t n)
{
	fwrite(p, 1, n, w->f);
	w->off += n;
}

static void fs_u8(struct fs *w, uint8_t v)
{
	fs_bytes(w, &v, 1);
}

static void fs_i32(struct fs *w, int32_t v)
{
	uint32_t u = (uint32_t)v;
	uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
	fs_bytes(w, b, 4);
}

static void fs_i64(struct fs *w, int64_t v)
{
	fs_i32(w, (int32_t)(uint32_t)(uint64_t)v);
	fs_i32(w, (int32_t)(uint32_t)((uint64_t)v >> 32));
}

static void fs_f32(struct fs *w, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	fs_i32(w, (int32_t)u);
}

static void fs_str(struct fs *w, const char *s)
{
	if (!s) {
		fs_i32(w, -1);
		return;
	}
	int32_t units = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;)
		units += rtd_utf8_next(&p) > 0xFFFF ? 2 : 1;
	fs_i32(w, units);
	uint8_t b[4];
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		uint32_t c = rtd_utf8_next(&p);
		if (c > 0xFFFF) {
			c -= 0x10000;
			fs_bytes(w, b, rtd_utf8_put(b, 0xD800 | c >> 10));
			fs_bytes(w, b, rtd_utf8_put(b, 0xDC00 | (c & 0x3FF)));
		} else {
			fs_bytes(w, b, rtd_utf8_put(b, c));
		}
	}
}

/* BeginObject and the object's type (an object of its own, whose type is
 * null: SerializationType's). */
static void fs_begin(struct fs *w, const char *type, int version, int min_reader)
{
	fs_u8(w, FS_BEGIN_OBJECT);
	fs_u8(w, FS_BEGIN_OBJECT);
	fs_u8(w, FS_NULL);
	fs_i32(w, version);
	fs_i32(w, min_reader);
	fs_str(w, type);
	fs_u8(w, FS_END_OBJECT);
}

/* Graph's compressed int (Node.WriteCompressedInt); into b, its length. */
static size_t cint(int32_t v, uint8_t *b)
{
	uint32_t u = (uint32_t)v;
	int n = 5;
	for (int k = 1; k <= 4; k++) {
		int sh = 32 - 7 * k; /* fits when sign-extending the low 7k bits gives v */
		if ((int32_t)(u << sh) >> sh == v) {
			n = k;
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		int shift = 7 * (n - 1 - i);
		uint8_t x = (uint8_t)((shift >= 32 ? 0 : u >> shift) & 0x7F);
		if (i == 0 && n == 5)
			x = (uint8_t)(u >> 28); /* the top group: 4 bits */
		b[i] = (uint8_t)(i + 1 < n ? x | 0x80 : x);
	}
	return (size_t)n;
}

/* The graph as the file numbers it: objects 0..n-1, then the two root
 * nodes; types 0 UNDEFINED, 1..nnames the names, then "?" and the roots'. */
struct gview {
	const rtd_gcheap *h;
	size_t n;               /* objects */
	int32_t t_unnamed, t_roots, t_other;
	int32_t *tsize;         /* a type's size: its first node's */
};

static int32_t size_of(uint64_t s)
{
	return s > INT_MAX ? INT_MAX : (int32_t)s;
}

static int32_t node_type(const struct gview *g, size_t i)
{
	if (i == g->n)
		return g->t_roots;
	if (i == g->n + 1)
		return g->t_other;
	size_t t = gcheap_type_of(g->h, i);
	return t ? (int32_t)t : g->t_unnamed;
}

static int32_t node_size(const struct gview *g, size_t i)
{
	return i < g->n ? size_of(g->h->size[i]) : 0;
}

/* Node i's children: each in turn through fn; returns their count. */
static uint64_t node_children(const struct gview *g, size_t i,
			      void (*fn)(void *, uint32_t), void *ctx)
{
	const rtd_gcheap *h = g->h;
	uint64_t k = 0;
	if (i == g->n) {
		if (fn)
			fn(ctx, (uint32_t)(g->n + 1));
		return 1;
	}
	if (i == g->n + 1) {
		for (uint64_t r = 0; r < h->nroot_objs; r++, k++)
			if (fn)
				fn(ctx, h->root_idx[r]);
		return k;
	}
	uint64_t nr = gcheap_nrefs(h, i), off = h->edge_off[i];
	for (uint64_t r = 0; r < nr; r++) {
		uint32_t c = h->refs[off + r];
		if (c == UINT32_MAX)
			continue; /* a dangling reference */
		if (fn)
			fn(ctx, c);
		k++;
	}
	return k;
}

struct emit {
	struct fs *w; /* NULL: count only */
	size_t node;
	uint64_t len;
};

static void emit_cint(struct emit *e, int32_t v)
{
	uint8_t b[5];
	size_t n = cint(v, b);
	if (e->w)
		fs_bytes(e->w, b, n);
	e->len += n;
}

static void emit_child(void *ctx, uint32_t c)
{
	struct emit *e = ctx;
	emit_cint(e, (int32_t)((int64_t)c - (int64_t)e->node));
}

/* Node i's bytes in the blob (counted, or written to e->w). */
static void emit_node(const struct gview *g, size_t i, struct emit *e)
{
	int32_t t = node_type(g, i), s = node_size(g, i);
	e->node = i;
	if (g->tsize[t] == s) {
		emit_cint(e, t * 2);
	} else {
		emit_cint(e, t * 2 + 1);
		emit_cint(e, s);
	}
	emit_cint(e, (int32_t)node_children(g, i, NULL, NULL));
	node_children(g, i, emit_child, e);
}

static void write_graph(struct fs *w, const struct gview *g, int64_t total,
			uint64_t blob)
{
	const rtd_gcheap *h = g->h;
	size_t nodes = g->n + 2;
	fs_begin(w, "Graphs.MemoryGraph", 1, 0);
	fs_i64(w, total);
	fs_i32(w, (int32_t)g->n); /* the root: "[.NET Roots]" */
	fs_i32(w, g->t_other + 1);
	fs_str(w, "UNDEFINED");
	fs_i32(w, 0);
	fs_str(w, NULL);
	for (int32_t t = 1; t <= g->t_other; t++) {
		const char *name = t == g->t_unnamed ? "?"
				   : t == g->t_roots ? "[.NET Roots]"
				   : t == g->t_other ? "[other roots]"
						     : h->names[t - 1];
		fs_str(w, name);
		fs_i32(w, g->tsize[t]);
		fs_str(w, NULL);
	}
	/* each node's offset in the blob, after UNDEFINED's two bytes */
	fs_i32(w, (int32_t)nodes);
	struct emit e = {.len = 2};
	for (size_t i = 0; i < nodes; i++) {
		fs_i32(w, (int32_t)e.len);
		emit_node(g, i, &e);
	}
	fs_i32(w, (int32_t)blob);
	fs_u8(w, 0);
	fs_u8(w, 0);
	e = (struct emit){.w = w};
	for (size_t i = 0; i < nodes; i++)
		emit_node(g, i, &e);
	fs_i32(w, (int32_t)nodes);
	for (size_t i = 0; i < nodes; i++)
		fs_i64(w, (int64_t)(i < g->n ? h->addr[i] : 0));
	fs_u8(w, FS_BYTE); /* tagged Is64Bit */
	fs_u8(w, 1);
	fs_u8(w, FS_END_OBJECT);
}

RTD_API int rtd_gcheap_write_gcdump(const rtd_gcheap *h, FILE *f,
				    const struct rtd_gcheap_gcdump_info *info)
{
	struct rtd_gcheap_gcdump_info in;
	if (!h || !f || rtd_opts_copy(&in, sizeof(in), info, RTD_OPTS_END(rtd_gcheap_gcdump_info, tool)))
		return -RTD_E_INVAL;
	if (!h->finished)
		return -RTD_E_STATE;
	if (h->n + 2 > INT_MAX || h->nnames + 4 > INT_MAX)
		return -RTD_E_CAP;
	struct gview g = {.h = h, .n = h->n};
	g.t_unnamed = (int32_t)h->nnames + 1;
	g.t_roots = g.t_unnamed + 1;
	g.t_other = g.t_roots + 1;
	g.tsize = malloc(((size_t)g.t_other + 1) * sizeof(*g.tsize));
	if (!g.tsize)
		return -ENOMEM;
	for (int32_t t = 0; t <= g.t_other; t++)
		g.tsize[t] = t == 0 || t == g.t_roots || t == g.t_other ? 0 : -1;
	int64_t total = 0;
	for (size_t i = 0; i < h->n; i++) {
		int32_t t = node_type(&g, i), s = node_size(&g, i);
		if (g.tsize[t] < 0)
			g.tsize[t] = s;
		total += s;
	}
	struct emit e = {.len = 2};
	for (size_t i = 0; i < h->n + 2 && e.len <= INT_MAX; i++)
		emit_node(&g, i, &e);
	/* every offset is 4 bytes: the whole file must stay under 2 GiB (the
	 * blob, 12 bytes a node, the names at most 3 bytes a byte, 4 KiB of
	 * the rest, the names given) */
	uint64_t whole = e.len + (uint64_t)(h->n + 2) * 12 + 4096;
	for (size_t t = 0; t < h->nnames; t++)
		whole += 12 + 3 * (uint64_t)strlen(h->names[t]);
	whole += 3 * (uint64_t)(in.process_name ? strlen(in.process_name) : 0) +
		 3 * (uint64_t)(in.tool ? strlen(in.tool) : 0);
	if (whole > INT_MAX) {
		free(g.tsize);
		return -RTD_E_CAP;
	}

	struct fs w = {.f = f};
	fs_str(&w, "!FastSerialization.1");
	fs_begin(&w, "GCHeapDump", 10, 8);
	write_graph(&w, &g, total, e.len);
	free(g.tsize);
	fs_u8(&w, 1);      /* Is64Bit again, as old readers want it */
	fs_f32(&w, 1.0f);  /* AverageCountMultiplier: not sampled */
	fs_f32(&w, 1.0f);  /* AverageSizeMultiplier */
	fs_u8(&w, FS_NULL); /* JSHeapInfo */
	fs_begin(&w, "DotNetHeapInfo", 0, 0);
	fs_i64(&w, 0);      /* SizeOfAllSegments: not known */
	fs_i32(&w, 0);      /* no segments */
	fs_u8(&w, FS_END_OBJECT);
	fs_str(&w, NULL); /* CollectionLog */
	uint64_t ns = in.time_ns;
	if (!ns) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	/* .NET ticks: 100 ns since 0001-01-01 (the Unix epoch is tick
	 * 621355968000000000) */
	fs_i64(&w, (int64_t)(621355968000000000ull + ns / 100));
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1))
		host[0] = 0;
	fs_str(&w, host);
	fs_str(&w, in.process_name);
	fs_i32(&w, in.pid);
	fs_i64(&w, 0); /* TotalProcessCommit */
	fs_i64(&w, 0); /* TotalProcessWorkingSet */
	fs_i32(&w, 0); /* CountMultipliersByType: none */
	/* tagged InteropInfo: a skip region (forward reference 0, defined
	 * just after) around a null object */
	fs_u8(&w, FS_SKIP_REGION);
	fs_i32(&w, 0);
	fs_u8(&w, FS_NULL);
	uint64_t skip_end = w.off;
	fs_u8(&w, FS_STRING);
	fs_str(&w, in.tool ? in.tool : "rtdiag");
	fs_u8(&w, FS_END_OBJECT); /* GCHeapDump's */
	fs_u8(&w, FS_END_OBJECT); /* the end of the objects */
	uint64_t refs = w.off;
	fs_i32(&w, 1);
	fs_i32(&w, (int32_t)skip_end);
	uint64_t trailer = w.off;
	fs_i32(&w, (int32_t)refs);
	fs_i32(&w, (int32_t)trailer);
	return ferror(f) ? -EIO : 0;
}

/* ---- both in one call --------------------------------------------------- */

static void proc_name(pid_t pid, char *out, size_t len)
{
	if (rtd_proc_comm((int)pid, 0, out, len) < 0)
		out[0] = 0;
}

RTD_API int rtd_gcheap_gcdump(pid_t pid, FILE *f, const struct rtd_gcheap_collect_opts *o,
			      struct rtd_gcheap_collect_result *res)
{
	struct rtd_gcheap_collect_result rs;
	struct rtd_gcheap_collect_opts oc;
	if (!res)
		res = &rs;
	memset(res, 0, sizeof(*res));
	if (!f || rtd_opts_copy(&oc, sizeof(oc), o, RTD_OPTS_END(rtd_gcheap_collect_opts, max_objects)))
		return -RTD_E_INVAL;
	int rc = 0;
	rtd_ipc_client *c = rtd_ipc_client_new(pid, NULL, &rc);
	if (!c)
		return rc ? rc : -ENOMEM;
	struct rtd_gcheap_opts ho = {.sz = sizeof(ho), .max_objects = oc.max_objects};
	rtd_gcheap *h = rtd_gcheap_new(&ho);
	if (!h)
		rc = -ENOMEM;
	uint64_t t0 = 0;
	if (!rc) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		rc = rtd_gcheap_collect(h, c, &oc, res);
	}
	rtd_ipc_client_free(c);
	struct rtd_gcheap_stats hs = {0};
	if (h)
		rtd_gcheap_stats(h, &hs);
	if (!rc && res->heap_err)
		rc = res->heap_err; /* the cap, or out of memory */
	else if (!rc && !hs.objects)
		rc = -RTD_E_NOTFOUND; /* no walk arrived */
	if (!rc)
		rc = rtd_gcheap_finish(h);
	if (!rc) {
		char name[64];
		proc_name(pid, name, sizeof(name));
		struct rtd_gcheap_gcdump_info in = {.sz = sizeof(in), .pid = (int)pid,
						    .process_name = name[0] ? name : NULL,
						    .time_ns = t0};
		rc = rtd_gcheap_write_gcdump(h, f, &in);
	}
	rtd_gcheap_free(h);
	return rc;
}
