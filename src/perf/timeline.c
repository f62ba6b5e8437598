/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - perf_event records as a timeline: a track per CPU and per
 * thread; sched:sched_switch as "running" slices on both (the CPU's slice
 * named by the thread it runs; a traced thread's own PERF_RECORD_SWITCH
 * records, when asked for, begin and end its slices too); samples with callchains as CPU samples on
 * their thread; every other tracepoint or probe as an instant on its
 * thread with its fields as arguments; COMM names threads, EXIT closes
 * their tracks, LOST is an instant on the CPU.
 *
 * Records of one CPU arrive in time order, but rings are read in turn:
 * the timeline's viewer sorts by time, and slices here only ever nest
 * within one track's own records (a CPU's switches come from that CPU).
 * Memory: a record per CPU and per live thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/perf_sample.h"
#include "rtdiag/perf_tracepoint.h"
#include "rtdiag/perf_timeline.h"
#include "rtdiag/profile.h"

#define PERF_MAX_CPUS 4096
#define PERF_MAX_ARGS 16

struct pf_thread {
	uint64_t track;
	bool running;
};

struct pf_cpu {
	uint64_t track;
	bool running;
};

struct pf_in {
	int64_t ts;
	uint32_t cpu;
};

struct rtd_tl_perf {
	rtd_timeline *tl;
	int err;
	uint64_t proc;
	rtd_map threads; /* tid -> struct pf_thread* */
	rtd_map switched_in; /* tid -> struct pf_in*: a switch-in before the
			      * thread's first sched_switch names it */
	rtd_strmap comms; /* tid (8 bytes) -> name, for tracks made later */
	struct pf_cpu cpus[PERF_MAX_CPUS];
	uint64_t cpu_group;
};

static void put(rtd_tl_perf *a, int err)
{
	if (err && !a->err)
		a->err = err;
}

rtd_tl_perf *rtd_tl_perf_new(rtd_timeline *tl, const char *name)
{
	rtd_tl_perf *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->tl = tl;
	rtd_map_init(&a->threads, 0);
	rtd_map_init(&a->switched_in, 0);
	rtd_strmap_init(&a->comms, 1u << 20);
	struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_PROCESS,
			      .pid = 0, .name = name ? name : "CPUs"};
	int64_t id = rtd_timeline_add_track(tl, &t);
	if (id < 0) {
		rtd_tl_perf_free(a);
		return NULL;
	}
	a->cpu_group = (uint64_t)id;
	return a;
}

void rtd_tl_perf_free(rtd_tl_perf *a)
{
	if (!a)
		return;
	rtd_map_free_vals(&a->threads);
	rtd_map_free_vals(&a->switched_in);
	size_t b = 0;
	for (rtd_strmap_entry *e = rtd_strmap_next(&a->comms, &b, NULL); e;
	     e = rtd_strmap_next(&a->comms, &b, e))
		free(e->val);
	rtd_strmap_free(&a->comms);
	free(a);
}

static struct pf_cpu *cpu(rtd_tl_perf *a, uint32_t c)
{
	if (c >= PERF_MAX_CPUS)
		return NULL;
	struct pf_cpu *k = &a->cpus[c];
	if (!k->track) {
		char name[32];
		snprintf(name, sizeof(name), "CPU %u", c);
		struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_NAMED,
				      .name = name, .parent = a->cpu_group};
		int64_t id = rtd_timeline_add_track(a->tl, &t);
		if (id < 0) {
			put(a, (int)id);
			return NULL;
		}
		k->track = (uint64_t)id;
	}
	return k;
}

static const char *comm_of(rtd_tl_perf *a, uint32_t tid)
{
	uint64_t key = tid;
	void *v;
	return rtd_strmap_get(&a->comms, &key, sizeof(key), &v) ? v : NULL;
}

static void begin_running(rtd_tl_perf *a, struct pf_thread *t, int64_t ts,
			  uint32_t cpu)
{
	struct rtd_tl_arg arg = {.key = "cpu", .type = RTD_TL_UINT, .u = cpu};
	struct rtd_tl_event e = {.sz = sizeof(e), .track = t->track, .ts = ts,
				 .name = "running", .category = "sched",
				 .args = &arg, .nargs = 1};
	put(a, rtd_timeline_begin(a->tl, &e));
	t->running = true;
}

/* Ends a track's open slice ("running" on a thread, a task on a CPU). */
static void end_running(rtd_tl_perf *a, uint64_t track, bool *running,
			int64_t ts)
{
	if (*running) {
		put(a, rtd_timeline_end(a->tl, track, ts));
		*running = false;
	}
}

static struct pf_thread *thread(rtd_tl_perf *a, uint32_t pid, uint32_t tid,
				const char *comm)
{
	void *v;
	if (rtd_map_get(&a->threads, tid, &v))
		return v;
	struct pf_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		put(a, -ENOMEM);
		return NULL;
	}
	if (!comm)
		comm = comm_of(a, tid);
	char name[64];
	if (comm)
		snprintf(name, sizeof(name), "%.40s", comm);
	else
		snprintf(name, sizeof(name), "thread %u", tid);
	struct rtd_track tr = {.sz = sizeof(tr), .kind = RTD_TRACK_THREAD,
			       .pid = pid, .tid = tid, .name = name};
	int64_t id = rtd_timeline_add_track(a->tl, &tr);
	int err = id < 0 ? (int)id : rtd_map_put(&a->threads, tid, t, NULL);
	if (err) {
		free(t);
		put(a, err);
		return NULL;
	}
	t->track = (uint64_t)id;
	if (rtd_map_get(&a->switched_in, tid, &v)) {
		/* it was switched in before it had a name: running since */
		struct pf_in *in = v;
		begin_running(a, t, in->ts, in->cpu);
		free(rtd_map_del(&a->switched_in, tid));
	}
	return t;
}

static void set_comm(rtd_tl_perf *a, uint32_t tid, const char *comm)
{
	uint64_t key = tid;
	char *c = strdup(comm);
	if (!c) {
		put(a, -ENOMEM);
		return;
	}
	void *old;
	if (rtd_strmap_get(&a->comms, &key, sizeof(key), &old))
		free(old);
	if (rtd_strmap_put(&a->comms, &key, sizeof(key), c))
		free(c); /* the cap: later threads show their tid */
}

static int64_t field_i(const struct rtd_perf_sample *s, const char *name,
		       int64_t dflt)
{
	struct rtd_perf_value v;
	if (rtd_perf_sample_field(s, name, &v))
		return dflt;
	return v.kind == RTD_PERF_FIELD_INT ? v.i : (int64_t)v.u;
}

static const char *field_s(const struct rtd_perf_sample *s, const char *name,
			   char *buf, size_t n)
{
	struct rtd_perf_value v;
	buf[0] = 0;
	if (!rtd_perf_sample_field(s, name, &v) && v.str) {
		size_t len = strnlen(v.str, v.len);
		snprintf(buf, n, "%.*s", (int)(len < n - 1 ? len : n - 1), v.str);
	}
	return buf;
}

static void sched_switch(rtd_tl_perf *a, const struct rtd_perf_sample *s)
{
	int64_t ts = (int64_t)s->time;
	uint32_t prev = (uint32_t)field_i(s, "prev_pid", -1);
	uint32_t next = (uint32_t)field_i(s, "next_pid", -1);
	char next_comm[32], prev_comm[32];
	field_s(s, "next_comm", next_comm, sizeof(next_comm));
	field_s(s, "prev_comm", prev_comm, sizeof(prev_comm));
	struct pf_cpu *c = cpu(a, s->cpu);
	if (c)
		end_running(a, c->track, &c->running, ts);
	if (prev) {
		struct pf_thread *t = thread(a, 0, prev, prev_comm[0] ? prev_comm : NULL);
		if (t)
			end_running(a, t->track, &t->running, ts);
	}
	if (next == 0 || next == (uint32_t)-1)
		return; /* the idle task: the CPU is idle */
	char name[64];
	snprintf(name, sizeof(name), "%s (%u)", next_comm[0] ? next_comm : "?",
		 next);
	if (c) {
		struct rtd_tl_event e = {.sz = sizeof(e), .track = c->track,
					 .ts = ts, .name = name,
					 .category = "sched"};
		put(a, rtd_timeline_begin(a->tl, &e));
		c->running = true;
	}
	struct pf_thread *t = thread(a, 0, next, next_comm[0] ? next_comm : NULL);
	if (t && !t->running)
		begin_running(a, t, ts, s->cpu);
}

/*
 * A traced thread's own switch out or back in (PERF_RECORD_SWITCH, when
 * the recording asked for context switches): its "running" slices. A
 * per-thread or per-cgroup sched_switch only fires as the thread leaves
 * the CPU (it is the current task then), so its switch-ins are only seen
 * here; the sched_switch records still make the CPU tracks and end the
 * slices they see first.
 */
static void thread_switch(rtd_tl_perf *a, const struct rtd_perf_sample *s)
{
	if (!s->tid)
		return;
	void *v;
	int64_t ts = (int64_t)s->time;
	bool out = s->misc & PERF_RECORD_MISC_SWITCH_OUT;
	if (!rtd_map_get(&a->threads, s->tid, &v)) {
		/* named by its first sched_switch (its comm then): remember
		 * when it came in, for the track made there */
		if (out) {
			free(rtd_map_del(&a->switched_in, s->tid));
			return;
		}
		if (rtd_map_get(&a->switched_in, s->tid, &v))
			return;
		struct pf_in *in = malloc(sizeof(*in));
		if (!in) {
			put(a, -ENOMEM);
			return;
		}
		*in = (struct pf_in){ts, s->cpu};
		int err = rtd_map_put(&a->switched_in, s->tid, in, NULL);
		if (err) {
			free(in);
			put(a, err);
		}
		return;
	}
	struct pf_thread *t = v;
	if (out)
		end_running(a, t->track, &t->running, ts);
	else if (!t->running)
		begin_running(a, t, ts, s->cpu);
}

static void sample(rtd_tl_perf *a, const struct rtd_perf_sample *s)
{
	const char *ev = s->event ? rtd_perf_event_name(s->event) : NULL;
	if (ev && (!strcmp(ev, "sched:sched_switch") || !strcmp(ev, "sched_switch"))) {
		sched_switch(a, s);
		return;
	}
	struct pf_thread *t = thread(a, s->pid, s->tid, NULL);
	if (!t)
		return;
	int64_t ts = (int64_t)s->time;
	if (s->callchain_nr && (!s->raw_size || !s->event ||
				!rtd_perf_event_nfields(s->event))) {
		/* a sampled stack: leaf first, context markers skipped */
		struct rtd_frame fr[128];
		size_t n = 0;
		for (uint64_t i = 0; i < s->callchain_nr && n < 128; i++) {
			uint64_t ip = rtd_perf_u64_at(s->callchain, i);
			if (ip >= (uint64_t)-4095)
				continue; /* PERF_CONTEXT_* */
			memset(&fr[n], 0, sizeof(fr[n]));
			fr[n++].addr = ip;
		}
		put(a, rtd_timeline_sample(a->tl, t->track, ts, fr, n));
		return;
	}
	/* a tracepoint or probe: its fields as arguments */
	struct rtd_tl_arg args[PERF_MAX_ARGS];
	char text[PERF_MAX_ARGS][64];
	unsigned nf = s->event ? rtd_perf_event_nfields(s->event) : 0, n = 0;
	for (unsigned i = 0; i < nf && n < PERF_MAX_ARGS; i++) {
		const struct rtd_perf_field *f = rtd_perf_event_field(s->event, i);
		struct rtd_perf_value v;
		if (!f || !strncmp(f->name, "common_", 7) ||
		    rtd_perf_sample_field_at(s, i, &v))
			continue;
		struct rtd_tl_arg *x = &args[n];
		memset(x, 0, sizeof(*x));
		x->key = f->name;
		if (v.kind == RTD_PERF_FIELD_STRING) {
			size_t len = strnlen(v.str, v.len);
			snprintf(text[n], sizeof(text[0]), "%.*s",
				 (int)(len < 63 ? len : 63), v.str);
			x->type = RTD_TL_STR;
			x->s = text[n];
		} else if (v.kind == RTD_PERF_FIELD_INT) {
			x->type = RTD_TL_INT;
			x->i = v.i;
		} else if (v.kind == RTD_PERF_FIELD_UINT) {
			x->type = RTD_TL_UINT;
			x->u = v.u;
		} else {
			continue;
		}
		n++;
	}
	struct rtd_tl_event e = {.sz = sizeof(e), .track = t->track, .ts = ts,
				 .name = ev ? ev : "sample", .category = "perf",
				 .args = args, .nargs = n};
	put(a, rtd_timeline_instant(a->tl, &e));
}

int rtd_tl_perf_record(rtd_tl_perf *a, const struct rtd_perf_sample *s)
{
	if (a->err)
		return a->err;
	switch (s->type) {
	case PERF_RECORD_SAMPLE:
		sample(a, s);
		break;
	case PERF_RECORD_COMM:
		set_comm(a, s->rec.comm.tid, s->rec.comm.comm);
		break;
	case PERF_RECORD_SWITCH:
		thread_switch(a, s);
		break;
	case PERF_RECORD_EXIT: {
		void *v = rtd_map_del(&a->threads, s->rec.task.tid);
		if (v) {
			put(a, rtd_timeline_close_track(
				       a->tl, ((struct pf_thread *)v)->track,
				       (int64_t)s->rec.task.time));
			free(v);
		}
		break;
	}
	case PERF_RECORD_LOST: {
		struct pf_cpu *c = cpu(a, s->cpu);
		if (!c)
			break;
		struct rtd_tl_arg arg = {.key = "lost", .type = RTD_TL_UINT,
					 .u = s->rec.lost.lost};
		struct rtd_tl_event e = {.sz = sizeof(e), .track = c->track,
					 .ts = (int64_t)s->time,
					 .name = "records lost", .category = "perf",
					 .args = &arg, .nargs = 1};
		put(a, rtd_timeline_instant(a->tl, &e));
		break;
	}
	default:
		break;
	}
	return a->err;
}

/* ---- a perf profiler's kept samples ------------------------------------------ */

struct pp_ctx {
	rtd_timeline *tl;
	rtd_map procs;   /* pid -> track id */
	rtd_map threads; /* pid << 32 | tid -> track id */
	uint64_t span;   /* the recording's track */
	struct rtd_perf_profiler_stats st;
	bool begun;
	int64_t last;
};

/* The recording's slice, begun at the run's start or at the first sample
 * when that is earlier (a command's exec enables sampling before the run
 * loop starts), so every sample lies within it. */
static int pp_begin(struct pp_ctx *c, int64_t first)
{
	int64_t ts = c->st.run_start && (int64_t)c->st.run_start < first
			     ? (int64_t)c->st.run_start : first;
	struct rtd_tl_arg args[2] = {
		{.key = "samples", .type = RTD_TL_UINT, .u = c->st.samples},
		{.key = "lost", .type = RTD_TL_UINT, .u = c->st.lost},
	};
	struct rtd_tl_event e = {.sz = sizeof(e), .track = c->span, .ts = ts,
				 .name = "recording", .category = "perf",
				 .args = args, .nargs = 2};
	c->begun = true;
	c->last = ts;
	return rtd_timeline_begin(c->tl, &e);
}

static int pp_track(struct pp_ctx *c, const struct rtd_perf_profiler_sample *s,
		    uint64_t *out)
{
	uint64_t key = ((uint64_t)s->pid << 32) | s->tid;
	void *v;
	if (rtd_map_get(&c->threads, key, &v)) {
		*out = (uint64_t)(uintptr_t)v;
		return 0;
	}
	char name[64];
	if (!rtd_map_get(&c->procs, s->pid, &v)) {
		const char *pn = s->process ? s->process : s->thread;
		if (pn)
			snprintf(name, sizeof(name), "%.40s", pn);
		else
			snprintf(name, sizeof(name), "process %u", s->pid);
		struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_PROCESS,
				      .pid = s->pid, .name = name};
		int64_t id = rtd_timeline_add_track(c->tl, &t);
		if (id < 0)
			return (int)id;
		int r = rtd_map_put(&c->procs, s->pid, (void *)(uintptr_t)id, NULL);
		if (r)
			return r;
		v = (void *)(uintptr_t)id;
	}
	if (s->thread)
		snprintf(name, sizeof(name), "%.40s", s->thread);
	else
		snprintf(name, sizeof(name), "thread %u", s->tid);
	struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_THREAD,
			      .pid = s->pid, .tid = s->tid, .name = name,
			      .parent = (uint64_t)(uintptr_t)v};
	int64_t id = rtd_timeline_add_track(c->tl, &t);
	if (id < 0)
		return (int)id;
	int r = rtd_map_put(&c->threads, key, (void *)(uintptr_t)id, NULL);
	if (r)
		return r;
	*out = (uint64_t)id;
	return 0;
}

/* An off-CPU wait: a slice on its thread named by the state it waited
 * in, with the first frame outside the kernel as an argument ("in"). */
static int pp_wait(struct pp_ctx *c, const struct rtd_perf_profiler_sample *s,
		   uint64_t track)
{
	const char *name = rtd_perf_wait_state_name(s->state);
	const char *in = s->nframes ? s->frames[0].name : NULL;
	for (size_t i = 0; i < s->nframes; i++)
		if (s->frames[i].kind != RTD_FRAME_KERNEL) {
			in = s->frames[i].name;
			break;
		}
	struct rtd_tl_arg args[2] = {
		{.key = "state", .type = RTD_TL_STR, .s = s->state ? s->state : "?"},
		{.key = "in", .type = RTD_TL_STR, .s = in ? in : "?"},
	};
	struct rtd_tl_event e = {.sz = sizeof(e), .track = track,
				 .ts = (int64_t)s->time,
				 .dur = (int64_t)s->duration, .name = name,
				 .category = "off-cpu", .args = args, .nargs = 2};
	return rtd_timeline_slice(c->tl, &e);
}

static int pp_sample(const struct rtd_perf_profiler_sample *s, void *ctx)
{
	struct pp_ctx *c = ctx;
	int64_t ts = (int64_t)s->time;
	int r = c->begun ? 0 : pp_begin(c, ts);
	uint64_t track = 0;
	if (!r)
		r = pp_track(c, s, &track);
	if (!r && s->duration)
		r = pp_wait(c, s, track);
	if (r)
		return r;
	int64_t end = ts + (int64_t)s->duration;
	if (end > c->last)
		c->last = end;
	/* the stack: where the thread was, or where it waited */
	return rtd_timeline_sample(c->tl, track, ts, s->frames, s->nframes);
}

int rtd_tl_perf_profiler(rtd_timeline *tl, struct rtd_perf_profiler *p,
			 const char *name)
{
	if (!tl || !p)
		return -RTD_E_INVAL;
	struct pp_ctx c = {.tl = tl};
	c.st.sz = sizeof(c.st);
	rtd_perf_profiler_stats(p, &c.st);
	/* the recording's span: the viewer's time range, and what the
	 * samples are out of */
	struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_NAMED,
			      .name = name ? name : "perf record"};
	int64_t id = rtd_timeline_add_track(tl, &t);
	if (id < 0)
		return (int)id;
	c.span = (uint64_t)id;
	rtd_map_init(&c.procs, 0);
	rtd_map_init(&c.threads, 0);
	int r = rtd_perf_profiler_each_sample(p, pp_sample, &c);
	rtd_map_free(&c.procs);
	rtd_map_free(&c.threads);
	if (!r && !c.begun && c.st.run_start)
		r = pp_begin(&c, (int64_t)c.st.run_start);
	if (!r && c.begun)
		r = rtd_timeline_end(tl, c.span,
				     (int64_t)c.st.run_end > c.last
					     ? (int64_t)c.st.run_end : c.last);
	return r;
}
