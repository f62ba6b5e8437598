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
 * Events come in the stream's order; a stop closes the thread's innermost
 * open slice only when that slice is its start's (an unmatched stop is
 * counted and dropped, so slices always nest). Memory: a record per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/profile.h"

#define NT_MAX_OPEN 256 /* open slices remembered per thread */
#define NT_MAX_ARGS 16  /* fields shown on an instant */

struct nt_thread {
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

static struct nt_thread *thread(rtd_tl_nettrace *a, uint64_t tid)
{
	void *v;
	if (rtd_map_get(&a->threads, tid, &v))
		return v;
	struct nt_thread *t = calloc(1, sizeof(*t));
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

/* A field as an integer (0 when absent), or as text into buf. */
static uint64_t field_u(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
			const char *name)
{
	struct rtd_nettrace_value v;
	return rtd_nettrace_get(dec, ev, name, &v) == 0 ? v.u : 0;
}

static const char *field_s(rtd_nettrace *dec,
			   const struct rtd_nettrace_event *ev,
			   const char *name, char *buf, size_t n)
{
	struct rtd_nettrace_value v;
	buf[0] = 0;
	if (rtd_nettrace_get(dec, ev, name, &v) == 0 && v.str)
		snprintf(buf, n, "%s", v.str);
	return buf;
}

/* ---- instants with their fields ---------------------------------------- */

struct args_ctx {
	struct rtd_tl_arg args[NT_MAX_ARGS];
	char text[NT_MAX_ARGS][96];
	size_t n;
};

static int arg_visit(void *vctx, const struct rtd_nettrace_value *v)
{
	struct args_ctx *c = vctx;
	if (v->depth || v->kind != RTD_NT_V_SCALAR || !v->name ||
	    c->n == NT_MAX_ARGS)
		return 0;
	struct rtd_tl_arg *a = &c->args[c->n];
	memset(a, 0, sizeof(*a));
	a->key = v->name;
	if (v->str) {
		snprintf(c->text[c->n], sizeof(c->text[0]), "%s", v->str);
		a->type = RTD_TL_STR;
		a->s = c->text[c->n];
	} else if (v->type == RTD_NT_T_F32 || v->type == RTD_NT_T_F64) {
		a->type = RTD_TL_DOUBLE;
		a->d = v->f;
	} else {
		a->type = RTD_TL_INT;
		a->i = v->i;
	}
	c->n++;
	return 0;
}

static void instant(rtd_tl_nettrace *a, rtd_nettrace *dec,
		    const struct rtd_nettrace_event *ev, uint64_t track,
		    int64_t ts)
{
	struct args_ctx c;
	c.n = 0;
	rtd_nettrace_walk(dec, ev, arg_visit, &c); /* fields up to damage */
	struct rtd_tl_event e = {.sz = sizeof(e), .track = track, .ts = ts,
				 .name = ev->meta->name,
				 .category = ev->meta->provider,
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

/* A name "X/Start" or "X/Stop": the length of "X", or 0. */
static size_t pair_base(const char *name, const char **suffix)
{
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, "/Start")) {
		*suffix = "Start";
		return n - 6;
	}
	if (n > 5 && !strcmp(name + n - 5, "/Stop")) {
		*suffix = "Stop";
		return n - 5;
	}
	return 0;
}

int rtd_tl_nettrace_event(rtd_tl_nettrace *a, rtd_nettrace *dec,
			  const struct rtd_nettrace_event *ev)
{
	if (a->err)
		return a->err;
	start(a);
	const struct rtd_nettrace_metadata *m = ev->meta;
	const char *name = m->name ? m->name : "?";
	int64_t ts = to_ns(a, ev->timestamp);
	struct nt_thread *th = thread(a, ev->thread_id);
	if (!th)
		return a->err;
	bool runtime = m->provider && !strcmp(m->provider,
					      "Microsoft-Windows-DotNETRuntime");
	char buf[256], b2[120], b3[120];

	if (runtime && !strcmp(name, "GC/Start")) {
		snprintf(a->gc_name, sizeof(a->gc_name),
			 "GC #%" PRIu64 " gen %" PRIu64,
			 field_u(dec, ev, "Count"), field_u(dec, ev, "Depth"));
		a->gc_begin = ts;
	} else if (runtime && !strcmp(name, "GC/Stop")) {
		shared_end(a, a->gc, &a->gc_begin, a->gc_name, ts);
	} else if (runtime && (!strcmp(name, "GC/SuspendEEStart") ||
			       !strcmp(name, "GC/RestartEEStart"))) {
		snprintf(a->susp_name, sizeof(a->susp_name), "%s",
			 name[3] == 'S' ? "suspend EE" : "restart EE");
		a->susp_begin = ts;
	} else if (runtime && (!strcmp(name, "GC/SuspendEEStop") ||
			       !strcmp(name, "GC/RestartEEStop"))) {
		shared_end(a, a->susp, &a->susp_begin, a->susp_name, ts);
	} else if (runtime && !strcmp(name, "GC/HeapStats")) {
		uint64_t sum = 0;
		static const char *const gens[] = {"GenerationSize0", "GenerationSize1",
						   "GenerationSize2", "GenerationSize3",
						   "GenerationSize4"};
		for (size_t i = 0; i < 5; i++)
			sum += field_u(dec, ev, gens[i]);
		put(a, rtd_timeline_counter(a->tl, a->heap, ts, (double)sum));
	} else if (runtime && !strcmp(name, "GC/AllocationTick")) {
		uint64_t amt = field_u(dec, ev, "AllocationAmount64");
		a->allocated += amt ? amt : field_u(dec, ev, "AllocationAmount");
		put(a, rtd_timeline_counter(a->tl, a->alloc, ts,
					    (double)a->allocated));
	} else if (runtime && !strcmp(name, "Method/JittingStarted")) {
		snprintf(buf, sizeof(buf), "JIT %.100s.%.100s",
			 field_s(dec, ev, "MethodNamespace", b2, sizeof(b2)),
			 field_s(dec, ev, "MethodName", b3, sizeof(b3)));
		begin(a, th->track, &th->depth, th->open, hash_str("JIT", 3), ts,
		      buf, "jit");
	} else if (runtime && !strcmp(name, "Method/LoadVerbose")) {
		/* ends a JIT; a method loaded without one (R2R) is an instant */
		if (th->depth && th->open[th->depth - 1] == hash_str("JIT", 3))
			end(a, th->track, &th->depth, th->open, hash_str("JIT", 3), ts);
		else
			instant(a, dec, ev, th->track, ts);
	} else if (m->provider && !strcmp(m->provider,
					  "Microsoft-DotNETCore-SampleProfiler")) {
		struct rtd_frame fr[128];
		size_t n = ev->nframes < 128 ? ev->nframes : 128;
		memset(fr, 0, n * sizeof(*fr));
		for (size_t i = 0; i < n; i++)
			fr[i].addr = ev->stack[i];
		if (a->methods)
			name_frames(a, fr, n);
		put(a, rtd_timeline_sample(a->tl, th->track, ts, fr, n));
	} else {
		const char *suffix = NULL;
		size_t base = pair_base(name, &suffix);
		/* an EventSource Start/Stop pair (opcode 1/2), contention and
		 * thread-pool work included: a slice on the thread */
		bool rundown = m->provider && strstr(m->provider, "Rundown");
		if (base && !rundown &&
		    (m->opcode == 1 || m->opcode == 2 || runtime)) {
			uint64_t key = rtd_hash_bytes(name, base) ^
				       rtd_hash_bytes(m->provider ? m->provider : "",
						      m->provider ? strlen(m->provider) : 0);
			if (suffix[2] == 'a') {
				snprintf(buf, sizeof(buf), "%.*s", (int)base, name);
				begin(a, th->track, &th->depth, th->open, key, ts,
				      buf, m->provider);
			} else {
				end(a, th->track, &th->depth, th->open, key, ts);
			}
		} else {
			instant(a, dec, ev, th->track, ts);
		}
	}
	return a->err;
}

uint64_t rtd_tl_nettrace_unmatched(const rtd_tl_nettrace *a)
{
	return a->unmatched;
}
