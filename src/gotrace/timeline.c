/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - Go execution traces as a timeline, like `go tool trace`'s
 * goroutine, proc and thread views, from the Go source's records in Go's
 * own words (rtd_gotrace_source_opts.go_events: each ordered event one
 * INSTANT named by Go, its arguments as fields; old format, Go 1.5-1.21,
 * and new, Go 1.22+).
 *
 * One small handler per event name in a table (both formats name their
 * events as Go does; the few names whose meaning changed, GoStop, have a
 * handler per format). Goroutine states are slices on the goroutine's
 * track, each ending where the next begins; the state tracker here is the
 * smallest that draws them (note for #17: a shared tracker in
 * src/gotrace/ would serve both).
 *
 * Nesting per track is kept by construction: a goroutine's track holds its
 * state slice and, inside it, at most a mark assist (ended before the
 * state changes); user regions, which outlive states, go on a second
 * track of the goroutine, made when it first opens one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/gotrace_events.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/profile.h"
#include "rtdiag/source.h"

/*
 * What a handler reads of an event, by name: the arguments (U64 fields),
 * the string arguments (STR fields; the old format names one "reason",
 * the new format "reason_string"), a stack argument's top function
 * ("NAME.fn") and the event's context (ev.g, ev.p, ev.m). Their places in
 * the record's fields are looked up once per event name and shape
 * (struct evkind), so a handler reads an argument by index.
 */
enum key {
	/* U64 arguments */
	K_G, K_NEW_G, K_NEW_STACK, K_STACK, K_GSTATUS, K_GC_SEQ, K_SEQ,
	K_HEAPGOAL_VALUE, K_HEAPALLOC_VALUE, K_MEM, K_P, K_THREAD, K_TASK,
	K_TASKID, K_PARENT_TASK, K_PID, K_MODE, K_ID,
	K_U64_END,
	/* string arguments */
	S_LABEL = K_U64_END, S_REASON, S_KIND, S_NAME, S_KEY, S_VALUE, S_CATEGORY,
	S_MESSAGE,
	S_END,
	/* a stack argument's top function */
	F_NEW_STACK = S_END, F_STACK,
	/* the context */
	C_G, C_P, C_M,
	NKEYS
};

static const char *const key_names[NKEYS] = {
	[K_G] = "g", [K_NEW_G] = "new_g", [K_NEW_STACK] = "new_stack",
	[K_STACK] = "stack", [K_GSTATUS] = "gstatus", [K_GC_SEQ] = "gc_seq",
	[K_SEQ] = "seq", [K_HEAPGOAL_VALUE] = "heapgoal_value",
	[K_HEAPALLOC_VALUE] = "heapalloc_value", [K_MEM] = "mem", [K_P] = "p",
	[K_THREAD] = "thread", [K_TASK] = "task", [K_TASKID] = "taskid",
	[K_PARENT_TASK] = "parent_task", [K_PID] = "pid", [K_MODE] = "mode",
	[K_ID] = "id",
	[S_LABEL] = "label", [S_REASON] = "reason", [S_KIND] = "kind",
	[S_NAME] = "name", [S_KEY] = "key", [S_VALUE] = "value",
	[S_CATEGORY] = "category", [S_MESSAGE] = "message",
	[F_NEW_STACK] = "new_stack.fn", [F_STACK] = "stack.fn",
	[C_G] = "ev.g", [C_P] = "ev.p", [C_M] = "ev.m",
};

struct evkind;

/* A Go event as the source's record gives it (go_events) */
struct gev {
	const char *name;
	int64_t ts;
	uint64_t g;       /* its context: field ev.g */
	int64_t p, m;     /* ev.p, ev.m */
	const struct rtd_stack *stack;
	const struct rtd_field *f; /* the record's fields */
	const struct evkind *k;    /* where each key is in them */
};

/* An event name with the shape of its records' fields, resolved */
struct evkind {
	const char *name;      /* the record's (interned by the source) */
	const struct rtd_field *fields; /* the records' fields, by address */
	size_t nfields;
	const char *category;  /* the records' ("go"), by address */
	uint32_t shape;        /* the records' @shape (shaped[]), 0 none */
	/* its handler; NULL: not drawn (or not of category "go") */
	void (*fn)(rtd_tl_gotrace *a, const struct gev *ev);
	int8_t ix[NKEYS];      /* field of each key, -1 none */
	const char *why;       /* the state's reason the name says (old format) */
	bool goal;             /* HeapGoal, not HeapAlloc */
	bool ctx3;             /* ev.g, ev.p, ev.m are the first three fields */
};

enum g_state {
	G_NONE = 0,
	G_RUNNABLE,
	G_RUNNING,
	G_BLOCKED,
	G_SYSCALL,
	G_DEAD,
};

struct gs {
	uint64_t id;
	uint64_t track, rtrack; /* states; regions (0 until needed) */
	uint64_t flow_in;       /* an unblocking's arrow, for the next run */
	int64_t p;              /* P it runs on, -1 */
	uint8_t state;
	bool open, assist;
	uint32_t regions;      /* open regions on rtrack */
	const char *start_fn;  /* for the name, until the track is made */
	char pname[24];        /* its slices' name on a P: "G12" */
};

struct ps {
	uint64_t track;
	uint64_t g;   /* running, 0 none */
	int64_t m;    /* holding it, -1 */
};

struct rtd_tl_gotrace {
	rtd_timeline *tl;
	int version;
	uint64_t proc, gc, stw, heap, goal, procs_grp;
	bool gc_open, stw_open;
	rtd_map gs, ps, ms, tasks; /* id -> struct gs* / ps* / track / track */
	rtd_strmap index;          /* event name -> handlers[] index + 1 */
	struct evkind kinds[256];  /* by the fields' address, probed */
	struct evkind shaped[256]; /* by the record's shape (its low bits) */
	struct ps *small_ps[256];  /* Ps 0-255 looked up first here */
	struct {
		const struct rtd_stack *stack; /* interned by the source: one address */
		const char *fn;
	} tops[256];
	uint64_t next_flow;
	int err;
	char name[128];
	struct {
		uint64_t g;
		struct gs *s;
	} recent[256]; /* goroutines looked up first here */
	/* "blocked: chan receive": a state's name with its reason, made once
	 * per reason string, so the writers see one name at one address
	 * (their interning looks names up by address first) */
	struct {
		const char *reason;
		uint8_t state;
		char name[160];
	} named[64];
};

#define REAL_P(p) ((p) >= 0 && (p) < 1000000)

typedef void (*handler_fn)(rtd_tl_gotrace *a,
			   const struct gev *ev);
struct handler {
	const char *name;
	handler_fn v1, v2; /* old format, new format */
};


static void put(rtd_tl_gotrace *a, int err)
{
	if (err && !a->err)
		a->err = err;
}

static uint64_t new_track(rtd_tl_gotrace *a, enum rtd_track_kind k,
			  const char *name, uint64_t parent, const char *unit)
{
	struct rtd_track t = {.sz = sizeof(t), .kind = k, .pid = 1,
			      .name = name, .parent = parent, .unit = unit};
	int64_t id = rtd_timeline_add_track(a->tl, &t);
	if (id < 0) {
		put(a, (int)id);
		return 0;
	}
	return (uint64_t)id;
}

static struct rtd_tl_event tev(uint64_t track, int64_t ts, const char *name)
{
	return (struct rtd_tl_event){.sz = sizeof(struct rtd_tl_event),
				     .track = track, .ts = ts, .name = name};
}

void rtd_tl_gotrace_free(rtd_tl_gotrace *a)
{
	if (!a)
		return;
	rtd_map_free_vals(&a->gs);
	rtd_map_free_vals(&a->ps);
	rtd_map_free(&a->ms);
	rtd_map_free(&a->tasks);
	rtd_strmap_free(&a->index);
	free(a);
}

/* ---- goroutines ---------------------------------------------------------- */

/* A stack's top function, kept here by the stack's address: the stacks
 * themselves are all over the source's memory */
static const char *stack_top(rtd_tl_gotrace *a, const struct rtd_stack *stack)
{
	if (!stack)
		return NULL;
	uintptr_t p = (uintptr_t)stack;
	size_t h = (size_t)(p >> 4 ^ p >> 14) & 255;
	if (a->tops[h].stack != stack) {
		a->tops[h].stack = stack;
		a->tops[h].fn = stack->n ? stack->frames[0].name : NULL;
	}
	return a->tops[h].fn;
}

static struct gs *g_get(rtd_tl_gotrace *a, uint64_t g)
{
	size_t h = g & 255;
	if (a->recent[h].s && a->recent[h].g == g)
		return a->recent[h].s;
	void *v;
	if (rtd_map_get(&a->gs, g, &v)) {
		a->recent[h].g = g;
		a->recent[h].s = v;
		return v;
	}
	struct gs *s = calloc(1, sizeof(*s));
	if (!s) {
		put(a, -ENOMEM);
		return NULL;
	}
	s->id = g;
	s->p = -1;
	int err = rtd_map_put(&a->gs, g, s, NULL);
	if (err) {
		free(s);
		put(a, err);
		return NULL;
	}
	return s;
}

/* The goroutine's track, made when it is first drawn: "G12 main.worker". */
static uint64_t g_track(rtd_tl_gotrace *a, struct gs *s)
{
	if (s->track)
		return s->track;
	char name[300];
	const char *fn = s->start_fn;
	if (s->id == 0)
		snprintf(name, sizeof(name), "G0 (runtime)");
	else if (fn)
		snprintf(name, sizeof(name), "G%" PRIu64 " %.250s", s->id, fn);
	else
		snprintf(name, sizeof(name), "G%" PRIu64, s->id);
	s->track = new_track(a, RTD_TRACK_NAMED, name, a->proc, NULL);
	return s->track;
}

static struct ps *p_get(rtd_tl_gotrace *a, int64_t p)
{
	if (!REAL_P(p))
		return NULL;
	/* Ps are a few, numbered from 0, and live as long as the adapter */
	bool small = p < (int64_t)(sizeof(a->small_ps) / sizeof(a->small_ps[0]));
	if (small && a->small_ps[p])
		return a->small_ps[p];
	void *v;
	if (rtd_map_get(&a->ps, (uint64_t)p, &v)) {
		if (small)
			a->small_ps[p] = v;
		return v;
	}
	struct ps *s = calloc(1, sizeof(*s));
	if (!s) {
		put(a, -ENOMEM);
		return NULL;
	}
	char name[32];
	snprintf(name, sizeof(name), "P%" PRId64, p);
	s->track = new_track(a, RTD_TRACK_NAMED, name, a->proc, NULL);
	s->m = -1;
	int err = rtd_map_put(&a->ps, (uint64_t)p, s, NULL);
	if (err) {
		free(s);
		put(a, err);
		return NULL;
	}
	return s;
}

static const char *const state_names[] = {
	[G_NONE] = "?",         [G_RUNNABLE] = "runnable",
	[G_RUNNING] = "running", [G_BLOCKED] = "blocked",
	[G_SYSCALL] = "syscall", [G_DEAD] = "dead",
};

/* "blocked: chan receive" (a reason cut at 140 bytes). */
static const char *state_name(rtd_tl_gotrace *a, enum g_state st, const char *reason)
{
	size_t h = ((uintptr_t)reason >> 3 ^ (uintptr_t)reason >> 9 ^ st) & 63;
	char *buf = a->named[h].name;
	size_t k = strlen(state_names[st]);
	/* the content is compared too (a string of a past generation may
	 * have had this address): the name is made of its first 140 bytes */
	if (a->named[h].reason == reason && a->named[h].state == st &&
	    !strncmp(buf + k + 2, reason, 140))
		return buf;
	size_t r = strnlen(reason, 140);
	memcpy(buf, state_names[st], k);
	memcpy(buf + k, ": ", 2);
	memcpy(buf + k + 2, reason, r);
	buf[k + 2 + r] = 0;
	a->named[h].reason = reason;
	a->named[h].state = (uint8_t)st;
	return buf;
}

/* Move goroutine g to a state at ts: end what it had open, begin the new
 * state's slice (named "blocked: REASON" when there is one), and keep the
 * P's track in step. */
static void g_set(rtd_tl_gotrace *a, uint64_t g, int64_t ts, enum g_state st,
		  const char *reason, int64_t p, const struct gev *where)
{
	struct gs *s = g_get(a, g);
	if (!s)
		return;
	uint64_t tr = g_track(a, s);
	if (!tr)
		return;
	if (s->assist) {
		put(a, rtd_timeline_end(a->tl, tr, ts));
		s->assist = false;
	}
	if (s->open) {
		put(a, rtd_timeline_end(a->tl, tr, ts));
		s->open = false;
	}
	if (s->state == G_RUNNING && st != G_RUNNING) {
		struct ps *ps = p_get(a, s->p);
		if (ps && ps->g == g) {
			put(a, rtd_timeline_end(a->tl, ps->track, ts));
			ps->g = 0;
		}
		s->p = -1;
	}
	s->state = (uint8_t)st;
	if (st == G_DEAD || st == G_NONE)
		return;
	const char *name = state_names[st];
	if (reason && reason[0])
		name = state_name(a, st, reason);
	struct rtd_tl_event e = tev(tr, ts, name);
	e.category = "state";
	struct rtd_tl_arg arg = {.key = "where", .type = RTD_TL_STR};
	const char *fn = where ? stack_top(a, where->stack) : NULL;
	if (fn) {
		arg.s = fn;
		e.args = &arg;
		e.nargs = 1;
	}
	if (st == G_RUNNING) {
		e.flow_in = s->flow_in;
		s->flow_in = 0;
	}
	put(a, rtd_timeline_begin(a->tl, &e));
	s->open = true;
	if (st == G_RUNNING) {
		struct ps *ps = p_get(a, p);
		if (ps) {
			if (ps->g) { /* the P's last goroutine left unseen */
				put(a, rtd_timeline_end(a->tl, ps->track, ts));
				ps->g = 0;
			}
			if (!s->pname[0])
				snprintf(s->pname, sizeof(s->pname), "G%" PRIu64, g);
			struct rtd_tl_event pe = tev(ps->track, ts, s->pname);
			pe.category = "running";
			put(a, rtd_timeline_begin(a->tl, &pe));
			ps->g = g;
			s->p = p;
		}
	}
}

/* ---- arguments ------------------------------------------------------------ */

static uint64_t arg(const struct gev *ev, enum key k, uint64_t dflt)
{
	int i = ev->k->ix[k];
	return i < 0 ? dflt : ev->f[i].u;
}

/* A stack argument's top function: *@fn (NULL when the stack is 0 or
 * unnamed), true when the event has the argument @k. */
static bool stack_arg(const struct gev *ev, enum key k, enum key fk, const char **fn)
{
	int i = ev->k->ix[k], j = ev->k->ix[fk];
	*fn = i >= 0 && j >= 0 && ev->f[i].u ? ev->f[j].s : NULL;
	return i >= 0;
}

/* A string argument ("" when the event has none) */
static const char *sarg(const struct gev *ev, enum key k)
{
	int i = ev->k->ix[k];
	const char *v = i < 0 ? NULL : ev->f[i].s;
	return v ? v : "";
}

/* ---- handlers, one per event name --------------------------------------- */


static void on_go_create(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t g = arg(ev, K_NEW_G, arg(ev, K_G, 0));
	struct gs *s = g_get(a, g);
	if (!s)
		return;
	if (!stack_arg(ev, K_NEW_STACK, F_NEW_STACK, &s->start_fn))
		stack_arg(ev, K_STACK, F_STACK, &s->start_fn);
	g_set(a, g, ev->ts, G_RUNNABLE, NULL, -1, 0);
}

static void on_go_create_blocked(rtd_tl_gotrace *a,
				 const struct gev *ev)
{
	uint64_t g = arg(ev, K_NEW_G, 0);
	struct gs *s = g_get(a, g);
	if (!s)
		return;
	stack_arg(ev, K_NEW_STACK, F_NEW_STACK, &s->start_fn);
	g_set(a, g, ev->ts, G_BLOCKED, "created blocked", -1, 0);
}

static void on_go_create_syscall(rtd_tl_gotrace *a,
				 const struct gev *ev)
{
	g_set(a, arg(ev, K_NEW_G, 0), ev->ts, G_SYSCALL, NULL, -1, 0);
}

static void on_go_start(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, arg(ev, K_G, ev->g), ev->ts, G_RUNNING, sarg(ev, S_LABEL),
	      ev->p, 0);
}

static void on_go_end(rtd_tl_gotrace *a, const struct gev *ev)
{
	struct gs *s = g_get(a, ev->g);
	if (!s)
		return;
	g_set(a, ev->g, ev->ts, G_DEAD, NULL, -1, 0);
	/* regions still open end with their goroutine */
	while (s->regions) {
		put(a, rtd_timeline_end(a->tl, s->rtrack, ev->ts));
		s->regions--;
	}
	/* its tracks are done: memory follows live goroutines */
	if (s->track)
		put(a, rtd_timeline_close_track(a->tl, s->track, ev->ts));
	if (s->rtrack)
		put(a, rtd_timeline_close_track(a->tl, s->rtrack, ev->ts));
	if (a->recent[ev->g & 255].s == s)
		a->recent[ev->g & 255].s = NULL;
	free(rtd_map_del(&a->gs, ev->g));
}

static void on_go_runnable(rtd_tl_gotrace *a, const struct gev *ev)
{
	const char *why = ev->k->why ? ev->k->why : sarg(ev, S_REASON);
	g_set(a, ev->g, ev->ts, G_RUNNABLE, why, -1, ev);
}

/* Old format: GoStop is a goroutine stopped for good (select{}, ...). */
static void on_go_stop_v1(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_BLOCKED, "stopped", -1, ev);
}

/* Old format: the reason is in the event's name (evkind.why). */
static void on_go_block_v1(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_BLOCKED, ev->k->why ? ev->k->why : "", -1, ev);
}

static void on_go_block_v2(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_BLOCKED, sarg(ev, S_REASON), -1, ev);
}

static void on_go_unblock(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t target = arg(ev, K_G, 0);
	struct gs *t = g_get(a, target);
	if (!t)
		return;
	/* an arrow from the unblocking goroutine (when there is one) */
	struct gs *src = ev->g ? g_get(a, ev->g) : NULL;
	if (src && g_track(a, src)) {
		struct rtd_tl_event e = tev(src->track, ev->ts, "unblock");
		struct rtd_tl_arg ga = {.key = "g", .type = RTD_TL_UINT,
					.u = target};
		e.args = &ga;
		e.nargs = 1;
		e.category = "unblock";
		e.flow_out = ++a->next_flow;
		put(a, rtd_timeline_instant(a->tl, &e));
		t->flow_in = e.flow_out;
	}
	g_set(a, target, ev->ts, G_RUNNABLE, NULL, -1, 0);
}

static void on_syscall_v1(rtd_tl_gotrace *a, const struct gev *ev)
{
	/* the goroutine keeps running: an instant; GoSysBlock follows when
	 * the call blocks */
	struct gs *s = g_get(a, ev->g);
	if (!s || !g_track(a, s))
		return;
	struct rtd_tl_event e = tev(s->track, ev->ts, "syscall");
	e.category = "syscall";
	struct rtd_tl_arg arg0 = {.key = "where", .type = RTD_TL_STR};
	const char *fn = stack_top(a, ev->stack);
	if (fn) {
		arg0.s = fn;
		e.args = &arg0;
		e.nargs = 1;
	}
	put(a, rtd_timeline_instant(a->tl, &e));
}

static void on_sys_block(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_SYSCALL, NULL, -1, ev);
}

static void on_sys_exit_v1(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, arg(ev, K_G, ev->g), ev->ts, G_RUNNABLE, "syscall returned",
	      -1, 0);
}

static void on_syscall_begin(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_SYSCALL, NULL, -1, ev);
}

static void on_syscall_end(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_RUNNING, NULL, ev->p, 0);
}

static void on_syscall_end_blocked(rtd_tl_gotrace *a,
				   const struct gev *ev)
{
	g_set(a, ev->g, ev->ts, G_RUNNABLE, "syscall returned", -1, 0);
}

static void on_go_waiting(rtd_tl_gotrace *a, const struct gev *ev)
{
	g_set(a, arg(ev, K_G, ev->g), ev->ts, G_BLOCKED, "at trace start", -1,
	      0);
}

static void on_go_in_syscall(rtd_tl_gotrace *a,
			     const struct gev *ev)
{
	g_set(a, arg(ev, K_G, ev->g), ev->ts, G_SYSCALL, NULL, -1, 0);
}

/* New format: a goroutine's state when the trace (or a generation)
 * begins: Go's tracev2 GoStatus values. */
static void on_go_status(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t g = arg(ev, K_G, ev->g);
	struct gs *s = g_get(a, g);
	if (!s || s->state != G_NONE)
		return; /* known already: a new generation restates it */
	switch (arg(ev, K_GSTATUS, 0)) {
	case RTD_GO_STATUS_RUNNABLE: g_set(a, g, ev->ts, G_RUNNABLE, NULL, -1, 0); break;
	case RTD_GO_STATUS_RUNNING: g_set(a, g, ev->ts, G_RUNNING, NULL, ev->p, 0); break;
	case RTD_GO_STATUS_SYSCALL: g_set(a, g, ev->ts, G_SYSCALL, NULL, -1, 0); break;
	case RTD_GO_STATUS_WAITING: g_set(a, g, ev->ts, G_BLOCKED, "at trace start", -1, 0); break;
	default: break;
	}
}

static void on_assist_start(rtd_tl_gotrace *a, const struct gev *ev)
{
	struct gs *s = g_get(a, arg(ev, K_G, ev->g));
	if (!s || s->assist || !s->open)
		return;
	struct rtd_tl_event e = tev(s->track, ev->ts, "GC mark assist");
	e.category = "gc";
	put(a, rtd_timeline_begin(a->tl, &e));
	s->assist = true;
}

static void on_assist_done(rtd_tl_gotrace *a, const struct gev *ev)
{
	struct gs *s = g_get(a, ev->g);
	if (!s || !s->assist)
		return;
	put(a, rtd_timeline_end(a->tl, s->track, ev->ts));
	s->assist = false;
}

static void on_gc_start(rtd_tl_gotrace *a, const struct gev *ev)
{
	if (a->gc_open)
		return;
	char name[48];
	snprintf(name, sizeof(name), "GC %" PRIu64,
		 arg(ev, K_GC_SEQ, arg(ev, K_SEQ, 0)));
	struct rtd_tl_event e = tev(a->gc, ev->ts, name);
	e.category = "gc";
	put(a, rtd_timeline_begin(a->tl, &e));
	a->gc_open = true;
}

static void on_gc_done(rtd_tl_gotrace *a, const struct gev *ev)
{
	if (!a->gc_open)
		return;
	put(a, rtd_timeline_end(a->tl, a->gc, ev->ts));
	a->gc_open = false;
}

static void on_stw_start(rtd_tl_gotrace *a, const struct gev *ev)
{
	if (a->stw_open)
		return;
	const char *kind = sarg(ev, S_KIND);
	char name[128];
	snprintf(name, sizeof(name), "STW%s%.100s", kind[0] ? ": " : "", kind);
	struct rtd_tl_event e = tev(a->stw, ev->ts, name);
	e.category = "gc";
	put(a, rtd_timeline_begin(a->tl, &e));
	a->stw_open = true;
}

static void on_stw_done(rtd_tl_gotrace *a, const struct gev *ev)
{
	if (!a->stw_open)
		return;
	put(a, rtd_timeline_end(a->tl, a->stw, ev->ts));
	a->stw_open = false;
}

static void on_heap(rtd_tl_gotrace *a, const struct gev *ev)
{
	bool goal = ev->k->goal;
	uint64_t v = arg(ev, goal ? K_HEAPGOAL_VALUE : K_HEAPALLOC_VALUE,
			 arg(ev, K_MEM, 0));
	put(a, rtd_timeline_counter(a->tl, goal ? a->goal : a->heap, ev->ts,
				    (double)v));
}

static void on_proc_start(rtd_tl_gotrace *a, const struct gev *ev)
{
	int64_t p = a->version >= 1022 ? (int64_t)arg(ev, K_P, 0) : ev->p;
	int64_t m = a->version >= 1022 ? ev->m : (int64_t)arg(ev, K_THREAD, 0);
	struct ps *ps = p_get(a, p);
	if (!ps || m < 0)
		return;
	void *v;
	uint64_t mt;
	if (rtd_map_get(&a->ms, (uint64_t)m, &v)) {
		mt = (uint64_t)(uintptr_t)v;
	} else {
		char name[32];
		snprintf(name, sizeof(name), "M%" PRId64, m);
		mt = new_track(a, RTD_TRACK_NAMED, name, a->proc, NULL);
		put(a, rtd_map_put(&a->ms, (uint64_t)m, (void *)(uintptr_t)mt, NULL));
	}
	if (ps->m >= 0) /* the P moved without a stop we saw */
		return;
	char name[32];
	snprintf(name, sizeof(name), "P%" PRId64, p);
	struct rtd_tl_event e = tev(mt, ev->ts, name);
	e.category = "proc";
	put(a, rtd_timeline_begin(a->tl, &e));
	ps->m = m;
}

static void on_proc_stop(rtd_tl_gotrace *a, const struct gev *ev)
{
	struct ps *ps = p_get(a, ev->p);
	void *v;
	if (!ps || ps->m < 0 || !rtd_map_get(&a->ms, (uint64_t)ps->m, &v))
		return;
	put(a, rtd_timeline_end(a->tl, (uint64_t)(uintptr_t)v, ev->ts));
	ps->m = -1;
}

static void on_task_begin(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t id = arg(ev, K_TASK, arg(ev, K_TASKID, 0));
	void *v;
	if (!id || rtd_map_get(&a->tasks, id, &v))
		return;
	char name[200];
	snprintf(name, sizeof(name), "task %" PRIu64 " %.150s", id,
		 sarg(ev, S_NAME));
	uint64_t t = new_track(a, RTD_TRACK_NAMED, name, a->proc, NULL);
	if (!t)
		return;
	struct rtd_tl_event e = tev(t, ev->ts, sarg(ev, S_NAME));
	e.category = "task";
	struct rtd_tl_arg args[] = {
		{.key = "task", .type = RTD_TL_UINT, .u = id},
		{.key = "parent", .type = RTD_TL_UINT,
		 .u = arg(ev, K_PARENT_TASK, arg(ev, K_PID, 0))},
		{.key = "goroutine", .type = RTD_TL_UINT, .u = ev->g},
	};
	e.args = args;
	e.nargs = 3;
	put(a, rtd_timeline_begin(a->tl, &e));
	put(a, rtd_map_put(&a->tasks, id, (void *)(uintptr_t)t, NULL));
}

static void on_task_end(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t id = arg(ev, K_TASK, arg(ev, K_TASKID, 0));
	void *v = rtd_map_del(&a->tasks, id);
	if (!v)
		return;
	/* the task's track is done: memory follows open tasks, not every
	 * task the trace ever had (a track closed ends its slice) */
	put(a, rtd_timeline_close_track(a->tl, (uint64_t)(uintptr_t)v, ev->ts));
}

static void region(rtd_tl_gotrace *a, const struct gev *ev,
		   bool begin)
{
	struct gs *s = g_get(a, ev->g);
	if (!s || !g_track(a, s))
		return;
	if (begin) {
		if (!s->rtrack) {
			char name[64];
			snprintf(name, sizeof(name), "G%" PRIu64 " regions", s->id);
			s->rtrack = new_track(a, RTD_TRACK_NAMED, name, a->proc,
					      NULL);
			if (!s->rtrack)
				return;
		}
		struct rtd_tl_event e = tev(s->rtrack, ev->ts, sarg(ev, S_NAME));
		e.category = "region";
		struct rtd_tl_arg t = {.key = "task", .type = RTD_TL_UINT,
				       .u = arg(ev, K_TASK, arg(ev, K_TASKID, 0))};
		e.args = &t;
		e.nargs = 1;
		put(a, rtd_timeline_begin(a->tl, &e));
		s->regions++;
	} else if (s->regions) {
		put(a, rtd_timeline_end(a->tl, s->rtrack, ev->ts));
		s->regions--;
	}
}

static void on_region_v1(rtd_tl_gotrace *a, const struct gev *ev)
{
	region(a, ev, arg(ev, K_MODE, 0) == 0);
}

static void on_region_begin(rtd_tl_gotrace *a, const struct gev *ev)
{
	region(a, ev, true);
}

static void on_region_end(rtd_tl_gotrace *a, const struct gev *ev)
{
	region(a, ev, false);
}

static void on_log(rtd_tl_gotrace *a, const struct gev *ev)
{
	struct gs *s = g_get(a, ev->g);
	if (!s || !g_track(a, s))
		return;
	const char *key = a->version >= 1022 ? sarg(ev, S_KEY) : sarg(ev, S_CATEGORY);
	const char *msg = a->version >= 1022 ? sarg(ev, S_VALUE) : sarg(ev, S_MESSAGE);
	struct rtd_tl_event e = tev(s->track, ev->ts, key[0] ? key : "log");
	e.category = "log";
	struct rtd_tl_arg args[] = {
		{.key = "message", .type = RTD_TL_STR, .s = msg},
		{.key = "task", .type = RTD_TL_UINT,
		 .u = arg(ev, K_TASK, arg(ev, K_ID, 0))},
	};
	e.args = args;
	e.nargs = 2;
	put(a, rtd_timeline_instant(a->tl, &e));
}

static void on_cpu_sample(rtd_tl_gotrace *a, const struct gev *ev)
{
	uint64_t g = arg(ev, K_G, ev->g);
	uint64_t track = 0;
	if (g) {
		struct gs *s = g_get(a, g);
		track = s ? g_track(a, s) : 0;
	} else {
		struct ps *ps = p_get(a, (int64_t)arg(ev, K_P, (uint64_t)ev->p));
		track = ps ? ps->track : 0;
	}
	if (!track)
		return;
	const struct rtd_rec_frame *fr = ev->stack ? ev->stack->frames : NULL;
	size_t n = ev->stack ? ev->stack->n : 0;
	struct rtd_frame small[64], *f = small;
	if (n > 64 && !(f = malloc(n * sizeof(*f)))) {
		put(a, -ENOMEM);
		return;
	}
	memset(f, 0, (n > 64 ? n : 64) * sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		f[i].name = fr[i].name;
		f[i].addr = fr[i].ip;
	}
	put(a, rtd_timeline_sample(a->tl, track, ev->ts, f, n));
	if (f != small)
		free(f);
}

static const struct handler handlers[] = {
	{"GoCreate", on_go_create, on_go_create},
	{"GoCreateBlocked", NULL, on_go_create_blocked},
	{"GoCreateSyscall", NULL, on_go_create_syscall},
	{"GoStart", on_go_start, on_go_start},
	{"GoStartLabel", on_go_start, NULL},
	{"GoEnd", on_go_end, NULL},
	{"GoDestroy", NULL, on_go_end},
	{"GoDestroySyscall", NULL, on_go_end},
	{"GoStop", on_go_stop_v1, on_go_runnable},
	{"GoSched", on_go_runnable, NULL},
	{"GoPreempt", on_go_runnable, NULL},
	{"GoSleep", on_go_block_v1, NULL},
	{"GoBlock", on_go_block_v1, on_go_block_v2},
	{"GoBlockSend", on_go_block_v1, NULL},
	{"GoBlockRecv", on_go_block_v1, NULL},
	{"GoBlockSelect", on_go_block_v1, NULL},
	{"GoBlockSync", on_go_block_v1, NULL},
	{"GoBlockCond", on_go_block_v1, NULL},
	{"GoBlockNet", on_go_block_v1, NULL},
	{"GoBlockGC", on_go_block_v1, NULL},
	{"GoUnblock", on_go_unblock, on_go_unblock},
	{"GoSysCall", on_syscall_v1, NULL},
	{"GoSysBlock", on_sys_block, NULL},
	{"GoSysExit", on_sys_exit_v1, NULL},
	{"GoSyscallBegin", NULL, on_syscall_begin},
	{"GoSyscallEnd", NULL, on_syscall_end},
	{"GoSyscallEndBlocked", NULL, on_syscall_end_blocked},
	{"GoWaiting", on_go_waiting, NULL},
	{"GoInSyscall", on_go_in_syscall, NULL},
	{"GoStatus", NULL, on_go_status},
	{"GoStatusStack", NULL, on_go_status},
	{"GCMarkAssistStart", on_assist_start, NULL},
	{"GCMarkAssistDone", on_assist_done, NULL},
	{"GCMarkAssistBegin", NULL, on_assist_start},
	{"GCMarkAssistActive", NULL, on_assist_start},
	{"GCMarkAssistEnd", NULL, on_assist_done},
	{"GCStart", on_gc_start, NULL},
	{"GCDone", on_gc_done, NULL},
	{"GCBegin", NULL, on_gc_start},
	{"GCActive", NULL, on_gc_start},
	{"GCEnd", NULL, on_gc_done},
	{"GCSTWStart", on_stw_start, NULL},
	{"GCSTWDone", on_stw_done, NULL},
	{"STWBegin", NULL, on_stw_start},
	{"STWEnd", NULL, on_stw_done},
	{"HeapAlloc", on_heap, on_heap},
	{"HeapGoal", on_heap, on_heap},
	{"ProcStart", on_proc_start, on_proc_start},
	{"ProcStop", on_proc_stop, on_proc_stop},
	{"UserTaskCreate", on_task_begin, NULL},
	{"UserTaskBegin", NULL, on_task_begin},
	{"UserTaskEnd", on_task_end, on_task_end},
	{"UserRegion", on_region_v1, NULL},
	{"UserRegionBegin", NULL, on_region_begin},
	{"UserRegionEnd", NULL, on_region_end},
	{"UserLog", on_log, on_log},
	{"CPUSample", on_cpu_sample, on_cpu_sample},
};

static const size_t nhandlers = sizeof(handlers) / sizeof(handlers[0]);

/* A state's reason said by the event's name alone */
static const char *name_why(const char *name)
{
	static const struct {
		const char *ev, *why;
	} why[] = {
		{"GoPreempt", "preempted"},    {"GoSched", "yielded"},
		{"GoSleep", "sleep"},          {"GoBlock", "block"},
		{"GoBlockSend", "chan send"},  {"GoBlockRecv", "chan receive"},
		{"GoBlockSelect", "select"},   {"GoBlockSync", "sync"},
		{"GoBlockCond", "sync.Cond"},  {"GoBlockNet", "network"},
		{"GoBlockGC", "GC assist wait"},
	};
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		if (!strcmp(name, why[i].ev))
			return why[i].why;
	return NULL;
}

/* Where each key is in @rec's fields: the first field of its name (and
 * kind: an argument is U64, a string argument STR, named NAME or
 * NAME_string) */
static void resolve_keys(struct evkind *k, const struct rtd_record *rec)
{
	memset(k->ix, -1, sizeof(k->ix));
	for (size_t i = rec->nfields; i-- > 0;) {
		const struct rtd_field *f = &rec->fields[i];
		if (!f->name || i > INT8_MAX)
			continue;
		for (unsigned key = 0; key < NKEYS; key++) {
			const char *kn = key_names[key];
			size_t n = strlen(kn);
			bool hit;
			if (key < K_U64_END)
				hit = f->type == RTD_FIELD_U64 && !strcmp(f->name, kn);
			else if (key < S_END)
				hit = f->type == RTD_FIELD_STR && !strncmp(f->name, kn, n) &&
				      (!f->name[n] || !strcmp(f->name + n, "_string"));
			else if (key < C_G)
				hit = f->type == RTD_FIELD_STR && !strcmp(f->name, kn);
			else
				hit = !strcmp(f->name, kn);
			if (hit) /* the first such field wins: walked from the end */
				k->ix[key] = (int8_t)i;
		}
	}
	/* the Go source's layout: the context read with no look-up */
	k->ctx3 = k->ix[C_G] == 0 && k->ix[C_P] == 1 && k->ix[C_M] == 2;
}

/* Whether @k is the kind of @rec's shape */
static bool kind_is(const struct evkind *k, const struct rtd_record *rec)
{
	return k->fields == rec->fields && k->name == rec->name && k->nfields == rec->nfields &&
	       k->category == rec->category;
}

/* Whether @k is the kind of @rec's shape, said by its @shape: the same
 * name, category and fields in the same order, in any of the shape's
 * fields arrays */
static bool shape_is(const struct evkind *k, const struct rtd_record *rec)
{
	return k->shape == rec->shape && k->name == rec->name && k->nfields == rec->nfields &&
	       k->category == rec->category;
}

/* The event kind of @rec: its handler and where its keys are, looked up
 * by the address of its fields: the Go source gives every record of one
 * event type and shape the same fields (rtd_gotrace_source_opts.go_events),
 * so where a key is is found once per shape. Records whose fields are
 * elsewhere each time (another producer) are resolved each time. */
static const struct evkind *kind_of(rtd_tl_gotrace *a, const struct rtd_record *rec)
{
	const size_t nk = sizeof(a->kinds) / sizeof(a->kinds[0]);
	uintptr_t p = (uintptr_t)rec->fields;
	size_t h = (size_t)(p >> 6 ^ p >> 14), slot = h % nk;
	for (size_t probe = 0; probe < 8; probe++) {
		struct evkind *k = &a->kinds[(h + probe) % nk];
		if (kind_is(k, rec))
			return k;
		if (!k->name) {
			slot = (h + probe) % nk;
			break;
		}
	}
	struct evkind *k = &a->kinds[slot];
	memset(k, 0, sizeof(*k));
	k->name = rec->name;
	k->fields = rec->fields;
	k->nfields = rec->nfields;
	k->category = rec->category;
	const char *c = rec->category;
	void *v;
	if (c && !strcmp(c, "go") &&
	    rtd_strmap_get(&a->index, rec->name, strlen(rec->name), &v)) {
		const struct handler *hd = &handlers[(uintptr_t)v - 1];
		k->fn = a->version >= 1022 ? hd->v2 : hd->v1;
	}
	k->why = name_why(rec->name);
	k->goal = !strcmp(rec->name, "HeapGoal");
	resolve_keys(k, rec);
	return k;
}

/* draw_record() of a record that is not a named INSTANT, or after an
 * error */
static int __attribute__((noinline)) draw_other(rtd_tl_gotrace *a, const struct rtd_record *rec)
{
	if (a->err)
		return a->err;
	if (rec->kind == RTD_REC_ERROR)
		return rec->code < 0 ? rec->code : -RTD_E_INVAL;
	if (rec->kind == RTD_REC_PROCESS) {
		int v = a->version;
		for (size_t i = 0; i < rec->nfields; i++)
			if (!strcmp(rec->fields[i].name, "go_version"))
				v = (int)rec->fields[i].i;
		if (v != a->version) { /* the handlers are the version's */
			memset(a->kinds, 0, sizeof(a->kinds));
			memset(a->shaped, 0, sizeof(a->shaped));
		}
		a->version = v;
	}
	return 0;
}

/* @rec, of kind @k, to @k's handler */
static inline __attribute__((always_inline)) int draw_kind(rtd_tl_gotrace *a,
							   const struct rtd_record *rec,
							   const struct evkind *k)
{
	if (!k->fn)
		return 0;
	const struct rtd_field *f = rec->fields;
	struct gev ev;
	ev.name = rec->name;
	ev.ts = rec->ts;
	ev.stack = rec->stack;
	ev.f = f;
	ev.k = k;
	if (k->ctx3) {
		ev.g = f[0].u;
		ev.p = f[1].i;
		ev.m = f[2].i;
	} else {
		ev.g = k->ix[C_G] >= 0 ? f[k->ix[C_G]].u : 0;
		ev.p = k->ix[C_P] >= 0 ? f[k->ix[C_P]].i : -1;
		ev.m = k->ix[C_M] >= 0 ? f[k->ix[C_M]].i : -1;
	}
	k->fn(a, &ev);
	return a->err;
}

/* draw_record() of a named INSTANT whose kind is not in the table by
 * shape: found by its fields' address, and kept in that table when the
 * record says its shape (the fields may be in another array of the
 * shape's: a batch's). Out of line, so that the usual record's frame is
 * small. */
static int __attribute__((noinline)) draw_unshaped(rtd_tl_gotrace *a,
						   const struct rtd_record *rec)
{
	if (!rec->name)
		return 0; /* not drawn */
	const size_t ns = sizeof(a->shaped) / sizeof(a->shaped[0]);
	struct evkind *sk = &a->shaped[rec->shape % ns];
	if (rec->shape && shape_is(sk, rec))
		return draw_kind(a, rec, sk); /* a batch's copy of the fields */
	const struct evkind *k = kind_of(a, rec);
	if (rec->shape) {
		*sk = *k;
		sk->shape = rec->shape;
	}
	return draw_kind(a, rec, k);
}

static inline __attribute__((always_inline)) int draw_record(rtd_tl_gotrace *a,
								   const struct rtd_record *rec)
{
	/* (a nameless INSTANT: draw_unshaped(), or an empty slot's kind,
	 * which has no handler) */
	if (rec->kind != RTD_REC_INSTANT || a->err)
		return draw_other(a, rec);
	/* a record of a shape seen, in the fields array its kind was found
	 * by: that kind, in the table by shape (a kind is one per name and
	 * fields array, as kind_of() finds it; an empty slot has no name) */
	const size_t ns = sizeof(a->shaped) / sizeof(a->shaped[0]);
	const struct evkind *k = &a->shaped[rec->shape % ns];
	if (k->fields != rec->fields || k->name != rec->name)
		return draw_unshaped(a, rec);
	return draw_kind(a, rec, k);
}

bool rtd_tl_gotrace_fields(void *ctx, const char *event, const char *field)
{
	(void)ctx;
	/* a key by its name, as resolve_keys() finds it (any type: more
	 * is harmless) */
	for (unsigned key = 0; key < C_G; key++) {
		const char *kn = key_names[key];
		size_t n = strlen(kn);
		bool hit = key >= K_U64_END && key < S_END
				   ? !strncmp(field, kn, n) &&
					     (!field[n] || !strcmp(field + n, "_string"))
				   : !strcmp(field, kn);
		if (!hit)
			continue;
		/* a stack argument and its top function: read by the
		 * GoCreate handlers alone */
		bool stack = key == K_STACK || key == K_NEW_STACK || key == F_STACK ||
			     key == F_NEW_STACK;
		if (!stack || !strncmp(event, "GoCreate", 8))
			return true;
	}
	return false;
}

int rtd_tl_gotrace_record(rtd_tl_gotrace *a, const struct rtd_record *rec)
{
	return draw_record(a, rec);
}

int rtd_tl_gotrace_take(void *a, const struct rtd_record *rec)
{
	return draw_record(a, rec);
}

rtd_tl_gotrace *rtd_tl_gotrace_new(rtd_timeline *tl, const char *name)
{
	rtd_tl_gotrace *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->tl = tl;
	rtd_map_init(&a->gs, 0);
	rtd_map_init(&a->ps, 0);
	rtd_map_init(&a->ms, 0);
	rtd_map_init(&a->tasks, 0);
	rtd_strmap_init(&a->index, 0);
	for (size_t i = 0; i < nhandlers; i++)
		if (rtd_strmap_put(&a->index, handlers[i].name,
				   strlen(handlers[i].name),
				   (void *)(uintptr_t)(i + 1))) {
			rtd_tl_gotrace_free(a);
			return NULL;
		}
	snprintf(a->name, sizeof(a->name), "%s", name ? name : "Go program");
	struct rtd_track t = {.sz = sizeof(t), .kind = RTD_TRACK_PROCESS,
			      .pid = 1, .name = a->name};
	int64_t id = rtd_timeline_add_track(tl, &t);
	if (id < 0) {
		rtd_tl_gotrace_free(a);
		return NULL;
	}
	a->proc = (uint64_t)id;
	a->gc = new_track(a, RTD_TRACK_NAMED, "GC", a->proc, NULL);
	a->stw = new_track(a, RTD_TRACK_NAMED, "STW", a->proc, NULL);
	a->heap = new_track(a, RTD_TRACK_COUNTER, "Heap", a->proc, "bytes");
	a->goal = new_track(a, RTD_TRACK_COUNTER, "Heap goal", a->proc, "bytes");
	if (a->err) {
		rtd_tl_gotrace_free(a);
		return NULL;
	}
	return a;
}
