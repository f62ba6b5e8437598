/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - EventPipe streams as a timeline: a track per thread, the
 * runtime's start/stop pairs as slices (GC on a "GC" track, suspension
 * and restart on a "GC suspension" track, JIT and lock contention on the
 * thread, any EventSource Start/Stop pair, request activities included,
 * on its thread), GC heap size and allocations as counters, CPU samples
 * with their stacks on their thread, and every other event as an instant
 * with its top-level fields as arguments.
 *
 * Events come in the stream's order, or a nettrace source's records in
 * theirs (rtd_tl_nettrace_record(): the same handlers, over the same
 * facts, struct ntev); a stop closes the thread's innermost open slice
 * only when that slice is its start's (an unmatched stop is counted and
 * dropped, so slices always nest). Memory: a record per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "nettrace/nt.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/profile.h"

#define NT_MAX_OPEN 256 /* open slices remembered per thread */
#define NT_MAX_ARGS 16  /* fields shown on an instant */
#define NT_KNOWN 256    /* records' event types remembered */
#define NT_MAX_NAMED_STACKS (1u << 18) /* records' stacks whose names are kept */

/* nt_methods_changes(): src/nettrace/methods.c (nt.h) */
uint64_t nt_methods_changes(const rtd_nettrace_methods *m);

struct ntl_thread {
	uint64_t track;
	uint32_t depth;
	uint64_t open[NT_MAX_OPEN]; /* hash of each open slice's pair name */
};

struct rtd_tl_nettrace {
	rtd_timeline *tl;
	int err;
	uint64_t freq;
	int64_t pid;
	uint64_t proc, gc, susp, heap, alloc;
	/* shared tracks get events from several threads, not in time order
	 * across them: a begin is remembered and the slice written whole at
	 * its end, so the viewer's sort by time keeps slices apart */
	int64_t gc_begin, susp_begin; /* -1: none open */
	char gc_name[64], susp_name[16];
	uint64_t allocated;
	uint64_t unmatched;
	rtd_map threads;
	char name[128];
	rtd_nettrace_methods *methods; /* names for sampled frames, or NULL */
	char *names;                   /* one sample's frame names */
	size_t names_cap;
	/* a record's interned stack -> its frames' names from @methods
	 * (const char *[]: interned in @name_strings), while the table
	 * has taken no event since (@named_at) */
	rtd_map named;
	rtd_intern *name_strings;
	uint64_t named_at;
	/* records' event types by their interned name: what each draws */
	struct nt_known {
		const char *name;
		bool start_stop;
		uint8_t kind;
		size_t off; /* the event's name in it, past "Provider/" */
	} known[NT_KNOWN];
};

static void put(rtd_tl_nettrace *a, int err)
{
	if (err && !a->err)
		a->err = err;
}

static uint64_t named(rtd_tl_nettrace *a, enum rtd_track_kind k,
		      const char *name, const char *unit)
{
	struct rtd_track t = {.sz = sizeof(t), .kind = k, .pid = a->pid,
			      .name = name, .parent = a->proc, .unit = unit};
	int64_t id = rtd_timeline_add_track(a->tl, &t);
	if (id < 0) {
		put(a, (int)id);
		return 0;
	}
	return (uint64_t)id;
}

rtd_tl_nettrace *rtd_tl_nettrace_new(rtd_timeline *tl, const char *name)
{
	rtd_tl_nettrace *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->tl = tl;
	a->freq = 1000000000;
	a->gc_begin = a->susp_begin = -1;
	rtd_map_init(&a->threads, 0);
	rtd_map_init(&a->named, NT_MAX_NAMED_STACKS);
	snprintf(a->name, sizeof(a->name), "%s", name ? name : ".NET process");
	return a;
}

void rtd_tl_nettrace_set_methods(rtd_tl_nettrace *a, rtd_nettrace_methods *m)
{
	if (a)
		a->methods = m;
}

/*
 * Name a sample's frames from the method table: the table's answer lasts
 * until its next lookup, so the names are gathered in one buffer first
 * (offsets), then pointed at. A frame no method covers keeps its address.
 */
static void name_frames(rtd_tl_nettrace *a, struct rtd_frame *fr, size_t n)
{
	size_t off[128], len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = rtd_nettrace_methods_name(a->methods, fr[i].addr);
		off[i] = SIZE_MAX;
		if (!s)
			continue;
		size_t l = strlen(s) + 1;
		if (len + l > a->names_cap) {
			size_t nc = a->names_cap ? a->names_cap : 4096;
			while (nc < len + l)
				nc *= 2;
			char *nb = realloc(a->names, nc);
			if (!nb) {
				put(a, -ENOMEM);
				return;
			}
			a->names = nb;
			a->names_cap = nc;
		}
		memcpy(a->names + len, s, l);
		off[i] = len;
		len += l;
	}
	for (size_t i = 0; i < n; i++)
		if (off[i] != SIZE_MAX)
			fr[i].name = a->names + off[i];
}

void rtd_tl_nettrace_free(rtd_tl_nettrace *a)
{
	if (!a)
		return;
	rtd_map_free_vals(&a->threads);
	rtd_map_free_vals(&a->named);
	rtd_intern_free(a->name_strings);
	free(a->names);
	free(a);
}

/* The process and its shared tracks, once the header (pid, clock) is
 * known or the first event comes without one. */
static void start(rtd_tl_nettrace *a)
{
	if (a->proc || a->err)
		return;
	struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_PROCESS,
			      .pid = a->pid, .name = a->name};
	int64_t id = rtd_timeline_add_track(a->tl, &t);
	if (id < 0) {
		put(a, (int)id);
		return;
	}
	a->proc = (uint64_t)id;
	a->gc = named(a, RTD_TRACK_NAMED, "GC", NULL);
	a->susp = named(a, RTD_TRACK_NAMED, "GC suspension", NULL);
	a->heap = named(a, RTD_TRACK_COUNTER, "GC heap size", "bytes");
	a->alloc = named(a, RTD_TRACK_COUNTER, "Allocated", "bytes");
}

int rtd_tl_nettrace_info(rtd_tl_nettrace *a,
			 const struct rtd_nettrace_info *info)
{
	if (info->tick_freq)
		a->freq = info->tick_freq;
	if (info->pid)
		a->pid = info->pid;
	start(a);
	return a->err;
}

static int64_t to_ns(const rtd_tl_nettrace *a, uint64_t ticks)
{
	if (a->freq == 1000000000)
		return (int64_t)ticks;
	return (int64_t)(ticks / a->freq * 1000000000ull +
			 ticks % a->freq * 1000000000ull / a->freq);
}

static struct ntl_thread *thread(rtd_tl_nettrace *a, uint64_t tid)
{
	void *v;
	if (rtd_map_get(&a->threads, tid, &v))
		return v;
	struct ntl_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		put(a, -ENOMEM);
		return NULL;
	}
	char name[48];
	snprintf(name, sizeof(name), "thread %" PRIu64, tid);
	struct rtd_track tr = {.sz = sizeof(tr), .kind = RTD_TRACK_THREAD,
			       .pid = a->pid, .tid = (int64_t)tid, .name = name,
			       .parent = a->proc};
	int64_t id = rtd_timeline_add_track(a->tl, &tr);
	int err = id < 0 ? (int)id : rtd_map_put(&a->threads, tid, t, NULL);
	if (err) {
		free(t);
		put(a, err);
		return NULL;
	}
	t->track = (uint64_t)id;
	return t;
}

static uint64_t hash_str(const char *s, size_t n)
{
	return rtd_hash_bytes(s, n);
}

/*
 * One event as the handlers read it, from a decoder's event or from a
 * nettrace source's record (rtdiag/nettrace_source.h): the same facts
 * either way, so both paths draw through the same code.
 */
struct ntev {
	const char *provider; /* "" when none */
	const char *name;     /* the event's own name, no provider */
	bool start_stop;      /* its opcode is Start or Stop */
	uint64_t tid;
	uint64_t ticks;
	/* where its fields and stack are: a decoder's event, or a record */
	rtd_nettrace *dec;
	const struct rtd_nettrace_event *ev;
	const struct rtd_record *rec;
};

/* A record's field by name: the first, as the decoder's reader finds it */
static const struct rtd_field *rec_field(const struct rtd_record *r, const char *name)
{
	for (size_t i = 0; i < r->nfields; i++)
		if (!strcmp(r->fields[i].name, name))
			return &r->fields[i];
	return NULL;
}

/* A field as an integer (0 when absent), or as text into buf. */
static uint64_t field_u(const struct ntev *e, const char *name)
{
	if (e->rec) {
		const struct rtd_field *f = rec_field(e->rec, name);
		return f ? f->u : 0;
	}
	struct rtd_nettrace_value v;
	return rtd_nettrace_get(e->dec, e->ev, name, &v) == 0 ? v.u : 0;
}

static const char *field_s(const struct ntev *e, const char *name, char *buf, size_t n)
{
	buf[0] = 0;
	if (e->rec) {
		const struct rtd_field *f = rec_field(e->rec, name);
		if (f && f->s)
			snprintf(buf, n, "%s", f->s);
		return buf;
	}
	struct rtd_nettrace_value v;
	if (rtd_nettrace_get(e->dec, e->ev, name, &v) == 0 && v.str)
		snprintf(buf, n, "%s", v.str);
	return buf;
}

/* ---- instants with their fields ---------------------------------------- */

struct args_ctx {
	struct rtd_tl_arg args[NT_MAX_ARGS];
	char text[NT_MAX_ARGS][96];
	size_t n;
};

/* One top-level scalar as an argument: its text, else a float, else an
 * integer. */
static void arg_add(struct args_ctx *c, const char *key, const char *str, bool real,
		    double d, int64_t i)
{
	struct rtd_tl_arg *a = &c->args[c->n];
	memset(a, 0, sizeof(*a));
	a->key = key;
	if (str) {
		snprintf(c->text[c->n], sizeof(c->text[0]), "%s", str);
		a->type = RTD_TL_STR;
		a->s = c->text[c->n];
	} else if (real) {
		a->type = RTD_TL_DOUBLE;
		a->d = d;
	} else {
		a->type = RTD_TL_INT;
		a->i = i;
	}
	c->n++;
}

static int arg_visit(void *vctx, const struct rtd_nettrace_value *v)
{
	struct args_ctx *c = vctx;
	if (v->depth || v->kind != RTD_NT_V_SCALAR || !v->name ||
	    c->n == NT_MAX_ARGS)
		return 0;
	arg_add(c, v->name, v->str, v->type == RTD_NT_T_F32 || v->type == RTD_NT_T_F64, v->f,
		v->i);
	return 0;
}

static void instant(rtd_tl_nettrace *a, const struct ntev *ev, uint64_t track, int64_t ts)
{
	struct args_ctx c;
	c.n = 0;
	if (ev->rec) { /* the source's top fields, up to damage */
		for (size_t i = 0; i < ev->rec->nfields && c.n < NT_MAX_ARGS; i++) {
			const struct rtd_field *f = &ev->rec->fields[i];
			arg_add(&c, f->name, f->type == RTD_FIELD_STR ? f->s : NULL,
				f->type == RTD_FIELD_F64, f->f, f->i);
		}
	} else {
		rtd_nettrace_walk(ev->dec, ev->ev, arg_visit, &c); /* fields up to damage */
	}
	struct rtd_tl_event e = {.sz = sizeof(e), .track = track, .ts = ts,
				 .name = ev->name, .category = ev->provider,
				 .args = c.args, .nargs = c.n};
	put(a, rtd_timeline_instant(a->tl, &e));
}

/* ---- slices ---------------------------------------------------------------- */

/* A slice of a shared track, written whole when it ends. */
static void shared_end(rtd_tl_nettrace *a, uint64_t track, int64_t *begin_ts,
		       const char *name, int64_t ts)
{
	if (*begin_ts < 0 || ts < *begin_ts) {
		a->unmatched++;
		*begin_ts = -1;
		return;
	}
	struct rtd_tl_event e = {.sz = sizeof(e), .track = track,
				 .ts = *begin_ts, .dur = ts - *begin_ts,
				 .name = name, .category = "gc"};
	put(a, rtd_timeline_slice(a->tl, &e));
	*begin_ts = -1;
}

static void begin(rtd_tl_nettrace *a, uint64_t track, uint32_t *depth,
		  uint64_t *open, uint64_t key, int64_t ts, const char *name,
		  const char *cat)
{
	if (*depth >= NT_MAX_OPEN)
		return;
	struct rtd_tl_event e = {.sz = sizeof(e), .track = track, .ts = ts,
				 .name = name, .category = cat};
	put(a, rtd_timeline_begin(a->tl, &e));
	if (open)
		open[*depth] = key;
	(*depth)++;
}

static void end(rtd_tl_nettrace *a, uint64_t track, uint32_t *depth,
		const uint64_t *open, uint64_t key, int64_t ts)
{
	if (!*depth || (open && open[*depth - 1] != key)) {
		a->unmatched++;
		return;
	}
	put(a, rtd_timeline_end(a->tl, track, ts));
	(*depth)--;
}

/*
 * The names of a record's stack's first @n frames from the method table
 * (a frame no method covers keeps the source's name), looked up once per
 * interned stack: a record's stack is one pointer for equal stacks, and
 * a table that takes no event gives an address the same name. NULL
 * when not kept (then each sample is named as it comes).
 */
static const char **stack_names(rtd_tl_nettrace *a, const struct rtd_stack *st, size_t n)
{
	uint64_t changes = nt_methods_changes(a->methods);
	if (changes != a->named_at) {
		rtd_map_free_vals(&a->named);
		rtd_map_init(&a->named, NT_MAX_NAMED_STACKS);
		a->named_at = changes;
	}
	void *v;
	if (rtd_map_get(&a->named, (uint64_t)(uintptr_t)st, &v))
		return v;
	if (!a->name_strings && !(a->name_strings = rtd_intern_new()))
		return NULL;
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *s = rtd_nettrace_methods_name(a->methods, st->frames[i].ip);
		names[i] = st->frames[i].name;
		/* the table's answer lasts until its next lookup: interned */
		if (s && rtd_intern_string(a->name_strings, s, strlen(s), &names[i]) < 0) {
			free(names);
			return NULL;
		}
	}
	if (rtd_map_put(&a->named, (uint64_t)(uintptr_t)st, (void *)names, NULL) < 0) {
		free(names); /* the cap: named per sample from now on */
		return NULL;
	}
	return names;
}

/* A sampled stack, its frames named when a method table is set. */
static void sample(rtd_tl_nettrace *a, const struct ntev *ev, uint64_t track, int64_t ts)
{
	struct rtd_frame fr[128];
	const struct rtd_stack *st = ev->rec ? ev->rec->stack : NULL;
	size_t nf = ev->rec ? (st ? st->n : 0) : ev->ev->nframes;
	size_t n = nf < 128 ? nf : 128;
	const char **names = st && a->methods ? stack_names(a, st, n) : NULL;
	memset(fr, 0, n * sizeof(*fr));
	for (size_t i = 0; i < n; i++) {
		fr[i].addr = st ? st->frames[i].ip : ev->ev->stack[i];
		fr[i].name = names ? names[i]
			   : st    ? st->frames[i].name /* as the source named it */
				   : NULL;
	}
	if (a->methods && !names)
		name_frames(a, fr, n);
	put(a, rtd_timeline_sample(a->tl, track, ts, fr, n));
}

#define NT_RUNTIME "Microsoft-Windows-DotNETRuntime"
#define NT_SAMPLER "Microsoft-DotNETCore-SampleProfiler"

/* What the timeline draws of an event: one handler each (nt_draw[]) */
enum nt_kind {
	NT_INSTANT,    /* an instant with its top-level fields */
	NT_GC_START,   /* opens the GC track's slice */
	NT_GC_STOP,
	NT_SUSP_START, /* opens the suspension track's slice */
	NT_SUSP_STOP,
	NT_HEAP_STATS, /* the heap size counter */
	NT_ALLOC_TICK, /* the bytes allocated counter */
	NT_JIT_START,  /* opens a JIT slice on the thread */
	NT_JIT_LOADED, /* closes it (or an instant: a method loaded unjitted) */
	NT_SAMPLE,     /* a sampled stack */
	NT_PAIR_START, /* an EventSource Start/Stop pair: a slice on the thread */
	NT_PAIR_STOP,
	NT_KINDS
};

/* A name "X/Start" or "X/Stop": the length of "X", or 0. */
static size_t pair_base(const char *name, bool *start)
{
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, "/Start")) {
		*start = true;
		return n - 6;
	}
	if (n > 5 && !strcmp(name + n - 5, "/Stop")) {
		*start = false;
		return n - 5;
	}
	return 0;
}

static enum nt_kind classify(const char *provider, const char *name, bool start_stop)
{
	static const struct {
		const char *name;
		enum nt_kind kind;
	} runtime[] = {
		{"GC/Start", NT_GC_START},
		{"GC/Stop", NT_GC_STOP},
		{"GC/SuspendEEStart", NT_SUSP_START},
		{"GC/RestartEEStart", NT_SUSP_START},
		{"GC/SuspendEEStop", NT_SUSP_STOP},
		{"GC/RestartEEStop", NT_SUSP_STOP},
		{"GC/HeapStats", NT_HEAP_STATS},
		{"GC/AllocationTick", NT_ALLOC_TICK},
		{"Method/JittingStarted", NT_JIT_START},
		{"Method/LoadVerbose", NT_JIT_LOADED},
	};
	bool rt = !strcmp(provider, NT_RUNTIME);
	for (size_t i = 0; rt && i < sizeof(runtime) / sizeof(runtime[0]); i++)
		if (!strcmp(name, runtime[i].name))
			return runtime[i].kind;
	if (!strcmp(provider, NT_SAMPLER))
		return NT_SAMPLE;
	/* an EventSource Start/Stop pair (opcode 1/2), contention and
	 * thread-pool work included: a slice on the thread */
	bool start;
	if (pair_base(name, &start) && !strstr(provider, "Rundown") && (start_stop || rt))
		return start ? NT_PAIR_START : NT_PAIR_STOP;
	return NT_INSTANT;
}

typedef void nt_handler(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			int64_t ts);

static void draw_instant(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			 int64_t ts)
{
	instant(a, ev, th->track, ts);
}

static void draw_gc_start(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			  int64_t ts)
{
	(void)th;
	snprintf(a->gc_name, sizeof(a->gc_name), "GC #%" PRIu64 " gen %" PRIu64,
		 field_u(ev, "Count"), field_u(ev, "Depth"));
	a->gc_begin = ts;
}

static void draw_gc_stop(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			 int64_t ts)
{
	(void)ev, (void)th;
	shared_end(a, a->gc, &a->gc_begin, a->gc_name, ts);
}

static void draw_susp_start(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			    int64_t ts)
{
	(void)th;
	snprintf(a->susp_name, sizeof(a->susp_name), "%s",
		 ev->name[3] == 'S' ? "suspend EE" : "restart EE");
	a->susp_begin = ts;
}

static void draw_susp_stop(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			   int64_t ts)
{
	(void)ev, (void)th;
	shared_end(a, a->susp, &a->susp_begin, a->susp_name, ts);
}

static const char *const nt_gens[] = {"GenerationSize0", "GenerationSize1", "GenerationSize2",
				      "GenerationSize3", "GenerationSize4"};

static void draw_heap_stats(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			    int64_t ts)
{
	(void)th;
	uint64_t sum = 0;
	for (size_t i = 0; i < 5; i++)
		sum += field_u(ev, nt_gens[i]);
	put(a, rtd_timeline_counter(a->tl, a->heap, ts, (double)sum));
}

static void draw_alloc_tick(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			    int64_t ts)
{
	(void)th;
	uint64_t amt = field_u(ev, "AllocationAmount64");
	a->allocated += amt ? amt : field_u(ev, "AllocationAmount");
	put(a, rtd_timeline_counter(a->tl, a->alloc, ts, (double)a->allocated));
}

static void draw_jit_start(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			   int64_t ts)
{
	char buf[256], b2[120], b3[120];
	snprintf(buf, sizeof(buf), "JIT %.100s.%.100s",
		 field_s(ev, "MethodNamespace", b2, sizeof(b2)),
		 field_s(ev, "MethodName", b3, sizeof(b3)));
	begin(a, th->track, &th->depth, th->open, hash_str("JIT", 3), ts, buf, "jit");
}

static void draw_jit_loaded(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			    int64_t ts)
{
	/* ends a JIT; a method loaded without one (R2R) is an instant */
	if (th->depth && th->open[th->depth - 1] == hash_str("JIT", 3))
		end(a, th->track, &th->depth, th->open, hash_str("JIT", 3), ts);
	else
		instant(a, ev, th->track, ts);
}

static void draw_sample(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			int64_t ts)
{
	sample(a, ev, th->track, ts);
}

static uint64_t pair_key(const struct ntev *ev, size_t base)
{
	return rtd_hash_bytes(ev->name, base) ^ rtd_hash_bytes(ev->provider, strlen(ev->provider));
}

static void draw_pair_start(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			    int64_t ts)
{
	bool start;
	size_t base = pair_base(ev->name, &start);
	char buf[256];
	snprintf(buf, sizeof(buf), "%.*s", (int)base, ev->name);
	begin(a, th->track, &th->depth, th->open, pair_key(ev, base), ts, buf, ev->provider);
}

static void draw_pair_stop(rtd_tl_nettrace *a, const struct ntev *ev, struct ntl_thread *th,
			   int64_t ts)
{
	bool start;
	size_t base = pair_base(ev->name, &start);
	end(a, th->track, &th->depth, th->open, pair_key(ev, base), ts);
}

static nt_handler *const nt_draw[NT_KINDS] = {
	[NT_INSTANT] = draw_instant,
	[NT_GC_START] = draw_gc_start,
	[NT_GC_STOP] = draw_gc_stop,
	[NT_SUSP_START] = draw_susp_start,
	[NT_SUSP_STOP] = draw_susp_stop,
	[NT_HEAP_STATS] = draw_heap_stats,
	[NT_ALLOC_TICK] = draw_alloc_tick,
	[NT_JIT_START] = draw_jit_start,
	[NT_JIT_LOADED] = draw_jit_loaded,
	[NT_SAMPLE] = draw_sample,
	[NT_PAIR_START] = draw_pair_start,
	[NT_PAIR_STOP] = draw_pair_stop,
};

/* Every event, from either path, with what it is. */
static int draw(rtd_tl_nettrace *a, const struct ntev *ev, enum nt_kind kind)
{
	if (a->err)
		return a->err;
	start(a);
	int64_t ts = to_ns(a, ev->ticks);
	struct ntl_thread *th = thread(a, ev->tid);
	if (!th)
		return a->err;
	nt_draw[kind](a, ev, th, ts);
	return a->err;
}

size_t rtd_tl_nettrace_fields(void *ctx, const struct rtd_nettrace_metadata *m)
{
	(void)ctx;
	static const char *const gc[] = {"Count", "Depth"};
	static const char *const alloc[] = {"AllocationAmount64", "AllocationAmount"};
	static const char *const jit[] = {"MethodNamespace", "MethodName"};
	switch (classify(m->provider ? m->provider : "", m->name ? m->name : "?",
			 m->opcode == 1 || m->opcode == 2)) {
	case NT_GC_START:
		return nt_fields_upto(m, gc, 2);
	case NT_HEAP_STATS:
		return nt_fields_upto(m, nt_gens, 5);
	case NT_ALLOC_TICK:
		return nt_fields_upto(m, alloc, 2);
	case NT_JIT_START:
		return nt_fields_upto(m, jit, 2);
	case NT_GC_STOP:
	case NT_SUSP_START:
	case NT_SUSP_STOP:
	case NT_SAMPLE:
	case NT_PAIR_START:
	case NT_PAIR_STOP:
		return 0;
	default:
		return SIZE_MAX; /* an instant's arguments */
	}
}

int rtd_tl_nettrace_event(rtd_tl_nettrace *a, rtd_nettrace *dec,
			  const struct rtd_nettrace_event *ev)
{
	const struct rtd_nettrace_metadata *m = ev->meta;
	struct ntev e = {.provider = m->provider ? m->provider : "",
			 .name = m->name ? m->name : "?",
			 .start_stop = m->opcode == 1 || m->opcode == 2,
			 .tid = ev->thread_id, .ticks = ev->timestamp,
			 .dec = dec, .ev = ev};
	return draw(a, &e, classify(e.provider, e.name, e.start_stop));
}

void rtd_tl_nettrace_clock(rtd_tl_nettrace *a, const struct rtd_clock *clock)
{
	if (clock->freq)
		a->freq = clock->freq;
}

int rtd_tl_nettrace_record(rtd_tl_nettrace *a, const struct rtd_record *rec)
{
	if (a->err)
		return a->err;
	switch (rec->kind) {
	case RTD_REC_PROCESS:
		/* the header's pid: as rtd_tl_nettrace_info() */
		if (rec->pid)
			a->pid = rec->pid;
		start(a);
		return a->err;
	case RTD_REC_SAMPLE:
	case RTD_REC_INSTANT:
		break;
	default:
		return 0; /* a thread's track is made by its first event */
	}
	/* the source's name is "Provider/Event", its category the provider;
	 * both interned, so what an event type is, is found once per name */
	bool start_stop = rec->phase == RTD_FLOW_BEGIN || rec->phase == RTD_FLOW_END;
	uint64_t h = ((uint64_t)(uintptr_t)rec->name * 0x9e3779b97f4a7c15u) >> 20;
	struct nt_known *k = &a->known[(h ^ start_stop) % NT_KNOWN];
	const char *prov = rec->category ? rec->category : "";
	if (k->name != rec->name || k->start_stop != start_stop) {
		k->name = rec->name;
		k->start_stop = start_stop;
		k->off = strlen(prov) + 1;
		k->kind = (uint8_t)classify(prov, rec->name + k->off, start_stop);
	}
	struct ntev e = {.provider = prov, .name = rec->name + k->off, .start_stop = start_stop,
			 .tid = rec->tid, .ticks = (uint64_t)rec->ts, .rec = rec};
	return draw(a, &e, (enum nt_kind)k->kind);
}

int rtd_tl_nettrace_pull(rtd_tl_nettrace *a, rtd_source *src)
{
	struct rtd_clock clock = {0};
	bool clocked = false;
	const struct rtd_record *rec;
	int rc;
	while ((rc = rtd_source_next(src, &rec)) == 1) {
		if (!clocked) {
			/* the header came before the first record */
			clocked = true;
			if (rtd_source_clock(src, &clock) == 0)
				rtd_tl_nettrace_clock(a, &clock);
		}
		if ((rc = rtd_tl_nettrace_record(a, rec)) < 0)
			return rc;
	}
	/* a header without events still draws the process, as _info() */
	if (!clocked && rtd_source_clock(src, &clock) == 0 && clock.domain == RTD_CLOCK_QPC) {
		rtd_tl_nettrace_clock(a, &clock);
		start(a);
	}
	return rc < 0 ? rc : a->err;
}

uint64_t rtd_tl_nettrace_unmatched(const rtd_tl_nettrace *a)
{
	return a->unmatched;
}
