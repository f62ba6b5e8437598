/* SPDX-License-Identifier: MIT */
/*
 * analysis_state.c - the goroutine state tracker: ordered events of
 * either trace generation in, Go's high-level events out.
 *
 * New format (Go 1.22+): what Go 1.23's internal/trace event.go derives
 * from each ordered event (Kind, StateTransition, Range, Task, Region,
 * Log, Label, Metric, Stack), with the old states order.go "smuggles"
 * into the event, which this file keeps itself (a mirror of the
 * ordering's goroutine and proc states).
 *
 * Old format (Go 1.5-1.21): what Go 1.23's oldtrace.go makes of each
 * event (convertEvent), then the same derivation.
 *
 * One handler per event type, in tables indexed by Go's type numbers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "gotrace/analysis_int.h"
#include "gotrace/v2.h"

/* Go 1.22+ event types (tracev2/events.go). */
enum {
	EV2_CPU_SAMPLE = 7,
	EV2_PROCS_CHANGE = 9,
	EV2_PROC_START = 10,
	EV2_PROC_STOP = 11,
	EV2_PROC_STEAL = 12,
	EV2_PROC_STATUS = 13,
	EV2_GO_CREATE = 14,
	EV2_GO_CREATE_SYSCALL = 15,
	EV2_GO_START = 16,
	EV2_GO_DESTROY = 17,
	EV2_GO_DESTROY_SYSCALL = 18,
	EV2_GO_STOP = 19,
	EV2_GO_BLOCK = 20,
	EV2_GO_UNBLOCK = 21,
	EV2_GO_SYSCALL_BEGIN = 22,
	EV2_GO_SYSCALL_END = 23,
	EV2_GO_SYSCALL_END_BLOCKED = 24,
	EV2_GO_STATUS = 25,
	EV2_STW_BEGIN = 26,
	EV2_STW_END = 27,
	EV2_GC_ACTIVE = 28,
	EV2_GC_BEGIN = 29,
	EV2_GC_END = 30,
	EV2_GC_SWEEP_ACTIVE = 31,
	EV2_GC_SWEEP_BEGIN = 32,
	EV2_GC_SWEEP_END = 33,
	EV2_GC_MARK_ASSIST_ACTIVE = 34,
	EV2_GC_MARK_ASSIST_BEGIN = 35,
	EV2_GC_MARK_ASSIST_END = 36,
	EV2_HEAP_ALLOC = 37,
	EV2_HEAP_GOAL = 38,
	EV2_GO_LABEL = 39,
	EV2_USER_TASK_BEGIN = 40,
	EV2_USER_TASK_END = 41,
	EV2_USER_REGION_BEGIN = 42,
	EV2_USER_REGION_END = 43,
	EV2_USER_LOG = 44,
	EV2_GO_SWITCH = 45,
	EV2_GO_SWITCH_DESTROY = 46,
	EV2_GO_CREATE_BLOCKED = 47,
	EV2_GO_STATUS_STACK = 48,
	EV2_MAX = 52,
};

/* Go 1.22+ wire statuses (tracev2: GoStatus, ProcStatus). */
enum { W_G_BAD, W_G_RUNNABLE, W_G_RUNNING, W_G_SYSCALL, W_G_WAITING };
enum { W_P_BAD, W_P_RUNNING, W_P_IDLE, W_P_SYSCALL, W_P_ABANDONED };

static const uint8_t wire_g2state[] = {
	[W_G_BAD] = RTD_GO_G_UNDETERMINED,
	[W_G_RUNNABLE] = RTD_GO_G_RUNNABLE,
	[W_G_RUNNING] = RTD_GO_G_RUNNING,
	[W_G_SYSCALL] = RTD_GO_G_SYSCALL,
	[W_G_WAITING] = RTD_GO_G_WAITING,
};
static const uint8_t wire_p2state[] = {
	[W_P_BAD] = RTD_GO_P_UNDETERMINED,
	[W_P_RUNNING] = RTD_GO_P_RUNNING,
	[W_P_IDLE] = RTD_GO_P_IDLE,
	[W_P_SYSCALL] = RTD_GO_P_RUNNING,
	[W_P_ABANDONED] = RTD_GO_P_IDLE,
};

/* A live goroutine. */
struct gst {
	uint8_t state; /* enum rtd_go_gstate */
	int64_t since, created;
	const char *reason;
	uint32_t stack;
	const char *start_fn;
	uint64_t start_pc;
	const char *stw; /* open stop-the-world's reason */
	/* old format: a GoSysCall waiting for the goroutine's next event */
	bool sys_pending;
	int64_t sys_ts, sys_p, sys_m;
	uint32_t sys_stack;
	struct ga_gprof prof; /* the profiles' (direct hand-over) */
};

struct pst {
	uint8_t wire; /* Go's ProcStatus as the ordering keeps it */
	int64_t m;    /* old format: the thread of the last ProcStart */
	bool seen;    /* old format: a ProcStart or ProcStop was seen */
};

struct rtd_gostate {
	rtd_gotrace_dec *d;
	struct ga_strs *strs, own_strs;
	struct ga_stacks *stacks, own_stacks;
	int ver;
	bool have_gen;
	uint64_t initial_gen;
	struct rtd_vmap gs; /* goroutine -> struct gst */
	struct rtd_vmap ps; /* proc -> struct pst */
	/* output queue */
	struct rtd_goev *q;
	size_t nq, capq, iq;
	struct rtd_goev cur;
	const struct rtd_gotrace_event *ev;
	/* old format (oldtrace.go's converter) */
	bool pre_init;
	struct rtd_vmap pre; /* goroutines created before the first Gomaxprocs */
	int64_t last_ts;
	const char *stw_reason; /* the last STWStart's */
	struct rtd_vmap tasks;    /* task -> struct otask (name, parent) */
	/* the decoder's strings (stable within a generation) -> interned */
	struct rtd_vmap strcache;
	uint64_t strcache_gen;
	/* tab_str(): where the string arguments' ids are in ev->args (-1:
	 * not a table string), and the generation's string ids -> interned */
	int8_t sarg_at[V2_MAX_TYPE + 1][2];
	const char **ids;
	size_t nids;
	uint64_t ids_gen;
	size_t npending;        /* goroutines with a GoSysCall waiting */
	/* direct hand-over of goroutine transitions (ga_state_direct) */
	bool direct, tr_on;
	struct ga_gtr tr;
	struct ga_gprof *tr_x;
	struct ga_gprof tr_none; /* for a goroutine without an entry */
	struct rtd_goev unread;  /* what emit() gives for events not queued */
	/* names used often */
	const char *s_empty;
	char err[200];
};

struct otask {
	const char *name;
	uint64_t parent;
};

static int fail(rtd_gostate *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(rtd_gostate *s, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(s->err, sizeof(s->err), rc, fmt, ap);
	va_end(ap);
	return rc;
}

static const char *intern(rtd_gostate *s, const char *str, size_t len)
{
	return ga_intern(s->strs, str ? str : "", str ? len : 0);
}

static const char *interns(rtd_gostate *s, const char *str)
{
	return intern(s, str, str ? strlen(str) : 0);
}

static struct gst *gget(rtd_gostate *s, uint64_t g)
{
	return rtd_vmap_get(&s->gs, g, false, NULL, NULL);
}

static struct gst *gnew(rtd_gostate *s, uint64_t g, int *err)
{
	bool created;
	struct gst *x = rtd_vmap_get(&s->gs, g, true, &created, err);
	if (x && created) {
		x->reason = s->s_empty;
		x->start_fn = s->s_empty;
	}
	return x;
}

static struct pst *pget(rtd_gostate *s, int64_t p, bool create, int *err)
{
	bool created;
	struct pst *x = rtd_vmap_get(&s->ps, (uint64_t)p, create, &created, err);
	if (x && created)
		x->m = -1;
	return x;
}

/* A new output event with the context of the input event. */
static struct rtd_goev *emit(rtd_gostate *s, unsigned kind)
{
	/* direct hand-over: the profiles read only CPU samples of the rest */
	if (s->direct && kind != RTD_GOEV_SAMPLE)
		return &s->unread;
	if (s->nq == s->capq) {
		size_t nc = s->capq ? s->capq * 2 : 16;
		struct rtd_goev *q = realloc(s->q, nc * sizeof(*q));
		if (!q)
			return NULL;
		s->q = q;
		s->capq = nc;
	}
	struct rtd_goev *o = &s->q[s->nq++];
	const struct rtd_gotrace_event *ev = s->ev;
	/* a copy of a blank event, then the fields: a compound literal here
	 * is a rep stos, slow for this size (a tenth of the analyses' time) */
	static const struct rtd_goev blank;
	*o = blank;
	o->kind = kind;
	o->ts = ev->ts;
	o->p = ev->p;
	o->m = ev->m;
	o->g = ev->g ? ev->g : RTD_GO_NOG;
	if (s->ver < 1022) { /* the old format's thread: the P's last ProcStart */
		struct pst *x = ev->p >= 0 ? pget(s, ev->p, false, NULL) : NULL;
		o->m = x ? x->m : -1;
	}
	o->reason = s->s_empty;
	o->name = s->s_empty;
	o->message = s->s_empty;
	o->src = ev;
	return o;
}

static int64_t stack_of(rtd_gostate *s, uint64_t id)
{
	return ga_stacks_intern(s->stacks, s->d, s->ev->gen, id);
}

#define NOMEM(s) fail(s, -ENOMEM, "out of memory")

/* Set the main stack of o from the decoder's stack id. */
static int set_stack(rtd_gostate *s, struct rtd_goev *o, uint64_t id)
{
	int64_t st = stack_of(s, id);
	if (st < 0)
		return fail(s, (int)st, "%s", s->stacks->err);
	o->stack = (uint32_t)st;
	return 0;
}

/*
 * g_transition() handed over directly: the same stacks interned in the
 * same order, the same errors, the same live table (an ended goroutine's
 * entry goes in ga_state_tr_done(), after the profiles read it); what
 * only rtd_gostate_goroutine() reads of an entry is not kept.
 */
static int g_transition_direct(rtd_gostate *s, uint64_t id, unsigned from, unsigned to,
			       const char *reason, uint64_t tstack_id, bool tstack_is_main,
			       uint64_t main_stack_id)
{
	struct ga_gtr *t = &s->tr;
	t->stack = 0;
	if (main_stack_id) {
		int64_t st = stack_of(s, main_stack_id);
		if (st < 0)
			return fail(s, (int)st, "%s", s->stacks->err);
		t->stack = (uint32_t)st;
	}
	if (!tstack_is_main && tstack_id) {
		int64_t st = stack_of(s, tstack_id);
		if (st < 0)
			return fail(s, (int)st, "%s", s->stacks->err);
	}
	t->id = id;
	t->ts = s->ev->ts;
	t->from = (uint8_t)from;
	t->to = (uint8_t)to;
	t->reason = reason ? reason : s->s_empty;
	t->gone = to == RTD_GO_G_NOTEXIST;
	struct gst *g = gget(s, id);
	if (!g && !t->gone) {
		int err = -ENOMEM;
		g = gnew(s, id, &err);
		if (!g)
			return fail(s, err, err == -RTD_E_CAP ? "more than %u live goroutines"
				    : "out of memory", RTD_GOAN_MAX_GOROUTINES);
		t->fresh = true;
	} else {
		t->fresh = !g;
	}
	if (g) {
		s->tr_x = &g->prof;
	} else {
		memset(&s->tr_none, 0, sizeof(s->tr_none));
		s->tr_x = &s->tr_none;
	}
	s->tr_on = true;
	return 0;
}

/*
 * A goroutine transition: update the live table as Go's Summarizer and
 * ordering see it (the start function comes from the root frame of the
 * first transition stack, as summary.go names goroutines).
 */
static int g_transition(rtd_gostate *s, uint64_t id, unsigned from, unsigned to,
			const char *reason, uint64_t tstack_id, bool tstack_is_main,
			uint64_t main_stack_id)
{
	if (s->direct)
		return g_transition_direct(s, id, from, to, reason, tstack_id, tstack_is_main,
					   main_stack_id);
	struct rtd_goev *o = emit(s, RTD_GOEV_STATE);
	if (!o)
		return NOMEM(s);
	int rc;
	if (main_stack_id && (rc = set_stack(s, o, main_stack_id)) < 0)
		return rc;
	o->resource = RTD_GOEV_RES_GOROUTINE;
	o->id = id;
	o->from = (uint8_t)from;
	o->to = (uint8_t)to;
	o->reason = reason ? reason : s->s_empty;
	if (tstack_is_main) {
		o->tstack = o->stack;
	} else if (tstack_id) {
		int64_t st = stack_of(s, tstack_id);
		if (st < 0)
			return fail(s, (int)st, "%s", s->stacks->err);
		o->tstack = (uint32_t)st;
	}
	int err = -ENOMEM;
	struct gst *g = gget(s, id);
	if (to == RTD_GO_G_NOTEXIST) {
		if (g)
			rtd_vmap_del(&s->gs, id);
		return 0;
	}
	if (!g) {
		g = gnew(s, id, &err);
		if (!g)
			return fail(s, err, err == -RTD_E_CAP ? "more than %u live goroutines"
				    : "out of memory", RTD_GOAN_MAX_GOROUTINES);
		g->created = o->ts;
	}
	g->state = (uint8_t)to;
	g->since = o->ts;
	g->reason = o->reason;
	if (o->tstack) {
		g->stack = o->tstack;
		if (!*g->start_fn) {
			uint32_t n = ga_stack_len(s->stacks, o->tstack);
			const struct ga_frame *f = ga_stack_frame(s->stacks, o->tstack, n - 1);
			g->start_fn = f->fn;
			g->start_pc = f->pc;
		}
	}
	return 0;
}

static int p_transition(rtd_gostate *s, int64_t id, unsigned from, unsigned to)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_STATE);
	if (!o)
		return NOMEM(s);
	o->resource = RTD_GOEV_RES_PROC;
	o->id = (uint64_t)id;
	o->from = (uint8_t)from;
	o->to = (uint8_t)to;
	return 0;
}

/* A string argument, interned. Most of the decoder's strings stay at
 * their address while its table lives (a generation of the new format,
 * the whole old-format trace), so a cache by address saves hashing them
 * again for every event; but some are not table strings (an old log's
 * inline message, copied to one buffer; a task name an end event
 * carries, freed after it), and a freed address can come back with other
 * bytes: a hit counts only when the bytes are the same. */
static const char *str_arg(rtd_gostate *s, unsigned i)
{
	const struct rtd_gotrace_event *ev = s->ev;
	if (i >= ev->nsargs)
		return s->s_empty;
	const char *str = ev->sargs[i];
	size_t len = ev->sarg_lens[i];
	if (ev->gen != s->strcache_gen) {
		rtd_vmap_clear(&s->strcache);
		s->strcache_gen = ev->gen;
	}
	uint64_t key = (uint64_t)(uintptr_t)str ^ ((uint64_t)len << 48);
	bool created;
	const char **c = rtd_vmap_get(&s->strcache, key, true, &created, NULL);
	if (c && !created && strnlen(*c, len + 1) == len && memcmp(*c, str, len) == 0)
		return *c;
	const char *r = intern(s, str, len);
	if (c)
		*c = r ? r : s->s_empty;
	return r;
}

/* String argument i of a Go 1.22+ event read from the generation's table
 * (every one but UserTaskEnd's task name, which the ordering gives):
 * str_arg(s, i), remembered by the string id it was read from (the same
 * bytes for the same id until the generation ends). Blocks, stops and
 * regions are a fifth of the events; this saves hashing and comparing
 * their names each time. */
#define STR_IDS (1u << 16)
static const char *tab_str(rtd_gostate *s, unsigned i)
{
	const struct rtd_gotrace_event *ev = s->ev;
	if (s->ver < 1022 || i >= ev->nsargs || ev->type > V2_MAX_TYPE)
		return str_arg(s, i);
	int w = s->sarg_at[ev->type][i];
	if (w < 0 || (unsigned)w >= ev->nargs || ev->args[w] >= STR_IDS)
		return str_arg(s, i);
	uint64_t id = ev->args[w];
	if (ev->gen != s->ids_gen) {
		if (s->ids)
			memset(s->ids, 0, s->nids * sizeof(*s->ids));
		s->ids_gen = ev->gen;
	}
	if (id < s->nids && s->ids[id])
		return s->ids[id];
	const char *r = str_arg(s, i);
	if (!r)
		return r;
	if (id >= s->nids) {
		size_t n = s->nids ? s->nids : 64;
		while (n <= id)
			n *= 2;
		const char **a = realloc(s->ids, n * sizeof(*a));
		if (!a)
			return r; /* only not remembered */
		memset(a + s->nids, 0, (n - s->nids) * sizeof(*a));
		s->ids = a;
		s->nids = n;
	}
	s->ids[id] = r;
	return r;
}

static int range_ev(rtd_gostate *s, unsigned kind, const char *name, unsigned scope,
		    int64_t scope_id, uint64_t stack)
{
	struct rtd_goev *o = emit(s, kind);
	if (!o)
		return NOMEM(s);
	o->name = name;
	o->scope = scope;
	o->scope_id = scope_id;
	return stack ? set_stack(s, o, stack) : 0;
}

static int metric(rtd_gostate *s, const char *name, uint64_t value, uint64_t stack)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_METRIC);
	if (!o)
		return NOMEM(s);
	o->name = name;
	o->value = value;
	return stack ? set_stack(s, o, stack) : 0;
}

/* ---- new format ---------------------------------------------------------- */

typedef int (*v2_handler)(rtd_gostate *s, const struct rtd_gotrace_event *ev);

static int v2_procs_change(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return metric(s, "/sched/gomaxprocs:threads", ev->args[0], ev->stack);
}

static int v2_heap_alloc(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return metric(s, "/memory/classes/heap/objects:bytes", ev->args[0], 0);
}

static int v2_heap_goal(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return metric(s, "/gc/heap/goal:bytes", ev->args[0], 0);
}

static int set_p(rtd_gostate *s, int64_t p, uint8_t wire)
{
	int err = -ENOMEM;
	struct pst *x = pget(s, p, true, &err);
	if (!x)
		return fail(s, err, "out of memory");
	x->wire = wire;
	return 0;
}

static int v2_proc_start(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int rc = p_transition(s, (int64_t)ev->args[0], RTD_GO_P_IDLE, RTD_GO_P_RUNNING);
	return rc < 0 ? rc : set_p(s, (int64_t)ev->args[0], W_P_RUNNING);
}

static int v2_proc_stop(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int rc = p_transition(s, ev->p, RTD_GO_P_RUNNING, RTD_GO_P_IDLE);
	return rc < 0 ? rc : set_p(s, ev->p, W_P_IDLE);
}

static int v2_proc_steal(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int64_t p = (int64_t)ev->args[0];
	struct pst *x = pget(s, p, false, NULL);
	/* a steal of a P whose syscall was abandoned is Idle -> Idle */
	unsigned from = x && x->wire == W_P_ABANDONED ? RTD_GO_P_IDLE : RTD_GO_P_RUNNING;
	int rc = p_transition(s, p, from, RTD_GO_P_IDLE);
	return rc < 0 ? rc : set_p(s, p, W_P_IDLE);
}

static int v2_proc_status(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int64_t p = (int64_t)ev->args[0];
	uint64_t w = ev->args[1];
	if (w > W_P_ABANDONED)
		return 0; /* the ordering rejects it first */
	struct pst *x = pget(s, p, false, NULL);
	unsigned from = x ? wire_p2state[w]
			  : ev->gen == s->initial_gen ? RTD_GO_P_UNDETERMINED : RTD_GO_P_NOTEXIST;
	int rc = p_transition(s, p, from, wire_p2state[w]);
	return rc < 0 ? rc : set_p(s, p, (uint8_t)w);
}

static int v2_go_create(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	unsigned to = ev->type == EV2_GO_CREATE_BLOCKED ? RTD_GO_G_WAITING : RTD_GO_G_RUNNABLE;
	return g_transition(s, ev->args[0], RTD_GO_G_NOTEXIST, to, NULL, ev->args[1], false,
			    ev->stack);
}

static int v2_go_create_syscall(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->args[0], RTD_GO_G_NOTEXIST, RTD_GO_G_SYSCALL, NULL, 0,
			    false, 0);
}

static int v2_go_start(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->args[0], RTD_GO_G_RUNNABLE, RTD_GO_G_RUNNING, NULL, 0, false, 0);
}

static int v2_go_destroy(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->g, RTD_GO_G_RUNNING, RTD_GO_G_NOTEXIST, NULL, 0, true,
			    ev->stack);
}

static int v2_go_destroy_syscall(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int rc = g_transition(s, ev->g, RTD_GO_G_SYSCALL, RTD_GO_G_NOTEXIST, NULL, 0, false, 0);
	/* the ordering abandons the P (after the self-steal it emitted) */
	if (rc == 0 && ev->p >= 0)
		rc = set_p(s, ev->p, W_P_ABANDONED);
	return rc;
}

static int v2_go_stop(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	unsigned to = ev->type == EV2_GO_STOP ? RTD_GO_G_RUNNABLE : RTD_GO_G_WAITING;
	return g_transition(s, ev->g, RTD_GO_G_RUNNING, to, tab_str(s, 0), 0, true, ev->stack);
}

static int v2_go_unblock(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->args[0], RTD_GO_G_WAITING, RTD_GO_G_RUNNABLE, NULL, 0, false,
			    ev->stack);
}

static int v2_syscall_begin(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int rc = g_transition(s, ev->g, RTD_GO_G_RUNNING, RTD_GO_G_SYSCALL, NULL, 0, true,
			      ev->stack);
	return rc < 0 || ev->p < 0 ? rc : set_p(s, ev->p, W_P_SYSCALL);
}

static int v2_syscall_end(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int rc = g_transition(s, ev->g, RTD_GO_G_SYSCALL, RTD_GO_G_RUNNING, NULL, 0, true,
			      ev->stack);
	return rc < 0 || ev->p < 0 ? rc : set_p(s, ev->p, W_P_RUNNING);
}

static int v2_syscall_end_blocked(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->g, RTD_GO_G_SYSCALL, RTD_GO_G_RUNNABLE, NULL, 0, true,
			    ev->stack);
}

static int v2_go_status(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	uint64_t w = ev->args[2];
	if (w > W_G_WAITING)
		return 0;
	struct gst *g = gget(s, ev->args[0]);
	unsigned from = g ? wire_g2state[w] : RTD_GO_G_UNDETERMINED;
	/* GoStatusStack: the event has a stack, the transition none (Go) */
	return g_transition(s, ev->args[0], from, wire_g2state[w], NULL, 0, false, ev->stack);
}

static const char *stw_name(rtd_gostate *s, const char *reason)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "stop-the-world (%s)", reason);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	return intern(s, buf, (size_t)n);
}

static int v2_stw_begin(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	const char *reason = tab_str(s, 0);
	uint64_t g = ev->g ? ev->g : RTD_GO_NOG;
	struct gst *x = gget(s, g);
	if (x)
		x->stw = reason;
	s->stw_reason = reason;
	return range_ev(s, RTD_GOEV_RANGE_BEGIN, stw_name(s, reason), RTD_GOEV_RES_GOROUTINE,
			(int64_t)g, ev->stack);
}

static int v2_stw_end(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	uint64_t g = ev->g ? ev->g : RTD_GO_NOG;
	struct gst *x = gget(s, g);
	const char *reason = x && x->stw ? x->stw : s->stw_reason ? s->stw_reason : s->s_empty;
	if (x)
		x->stw = NULL;
	return range_ev(s, RTD_GOEV_RANGE_END, stw_name(s, reason), RTD_GOEV_RES_GOROUTINE,
			(int64_t)g, 0);
}

static unsigned range_kind(unsigned type, unsigned active, unsigned begin)
{
	return type == active ? RTD_GOEV_RANGE_ACTIVE
	       : type == begin ? RTD_GOEV_RANGE_BEGIN : RTD_GOEV_RANGE_END;
}

static int v2_gc(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return range_ev(s, range_kind(ev->type, EV2_GC_ACTIVE, EV2_GC_BEGIN),
			"GC concurrent mark phase", RTD_GOEV_RES_NONE, 0, ev->stack);
}

static int v2_sweep(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	/* Go's Range() gives the event's P as the scope, GCSweepActive too */
	return range_ev(s, range_kind(ev->type, EV2_GC_SWEEP_ACTIVE, EV2_GC_SWEEP_BEGIN),
			"GC incremental sweep", RTD_GOEV_RES_PROC, ev->p, ev->stack);
}

static int v2_assist(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	uint64_t g = ev->type == EV2_GC_MARK_ASSIST_ACTIVE ? ev->args[0]
		     : ev->g ? ev->g : RTD_GO_NOG;
	return range_ev(s, range_kind(ev->type, EV2_GC_MARK_ASSIST_ACTIVE, EV2_GC_MARK_ASSIST_BEGIN),
			"GC mark assist", RTD_GOEV_RES_GOROUTINE, (int64_t)g, ev->stack);
}

static int v2_label(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	(void)ev; /* the label is the event's string argument */
	struct rtd_goev *o = emit(s, RTD_GOEV_LABEL);
	if (!o)
		return NOMEM(s);
	o->name = tab_str(s, 0);
	return 0;
}

static int v2_task_begin(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_TASK_BEGIN);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	o->parent = ev->args[1];
	o->name = tab_str(s, 0);
	return set_stack(s, o, ev->stack);
}

static int v2_task_end(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_TASK_END);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	o->parent = ev->nargs > 2 ? ev->args[2] : 0;
	o->name = tab_str(s, 0);
	return set_stack(s, o, ev->stack);
}

/* A region begins or ends (kind), in the task args[0], named by the
 * string argument: both formats */
static int region_ev(rtd_gostate *s, const struct rtd_gotrace_event *ev, unsigned kind)
{
	struct rtd_goev *o = emit(s, kind);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	o->name = tab_str(s, 0);
	return set_stack(s, o, ev->stack);
}

static int v2_region(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return region_ev(s, ev, ev->type == EV2_USER_REGION_BEGIN ? RTD_GOEV_REGION_BEGIN
							 : RTD_GOEV_REGION_END);
}

/* A log message (both formats: the task, then category and message) */
static int user_log(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_LOG);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	o->name = tab_str(s, 0);
	o->message = tab_str(s, 1);
	return set_stack(s, o, ev->stack);
}

/* A CPU sample (both formats; Go 1.23's conversion gives old ones no M) */
static int cpu_sample(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_SAMPLE);
	if (!o)
		return NOMEM(s);
	if (s->ver < 1022)
		o->m = -1;
	return set_stack(s, o, ev->stack);
}

static const v2_handler v2_handlers[EV2_MAX + 1] = {
	[EV2_CPU_SAMPLE] = cpu_sample,
	[EV2_PROCS_CHANGE] = v2_procs_change,
	[EV2_PROC_START] = v2_proc_start,
	[EV2_PROC_STOP] = v2_proc_stop,
	[EV2_PROC_STEAL] = v2_proc_steal,
	[EV2_PROC_STATUS] = v2_proc_status,
	[EV2_GO_CREATE] = v2_go_create,
	[EV2_GO_CREATE_BLOCKED] = v2_go_create,
	[EV2_GO_CREATE_SYSCALL] = v2_go_create_syscall,
	[EV2_GO_START] = v2_go_start,
	[EV2_GO_DESTROY] = v2_go_destroy,
	[EV2_GO_DESTROY_SYSCALL] = v2_go_destroy_syscall,
	[EV2_GO_STOP] = v2_go_stop,
	[EV2_GO_BLOCK] = v2_go_stop,
	[EV2_GO_UNBLOCK] = v2_go_unblock,
	[EV2_GO_SWITCH] = v2_go_unblock,
	[EV2_GO_SWITCH_DESTROY] = v2_go_unblock,
	[EV2_GO_SYSCALL_BEGIN] = v2_syscall_begin,
	[EV2_GO_SYSCALL_END] = v2_syscall_end,
	[EV2_GO_SYSCALL_END_BLOCKED] = v2_syscall_end_blocked,
	[EV2_GO_STATUS] = v2_go_status,
	[EV2_GO_STATUS_STACK] = v2_go_status,
	[EV2_STW_BEGIN] = v2_stw_begin,
	[EV2_STW_END] = v2_stw_end,
	[EV2_GC_ACTIVE] = v2_gc,
	[EV2_GC_BEGIN] = v2_gc,
	[EV2_GC_END] = v2_gc,
	[EV2_GC_SWEEP_ACTIVE] = v2_sweep,
	[EV2_GC_SWEEP_BEGIN] = v2_sweep,
	[EV2_GC_SWEEP_END] = v2_sweep,
	[EV2_GC_MARK_ASSIST_ACTIVE] = v2_assist,
	[EV2_GC_MARK_ASSIST_BEGIN] = v2_assist,
	[EV2_GC_MARK_ASSIST_END] = v2_assist,
	[EV2_HEAP_ALLOC] = v2_heap_alloc,
	[EV2_HEAP_GOAL] = v2_heap_goal,
	[EV2_GO_LABEL] = v2_label,
	[EV2_USER_TASK_BEGIN] = v2_task_begin,
	[EV2_USER_TASK_END] = v2_task_end,
	[EV2_USER_REGION_BEGIN] = v2_region,
	[EV2_USER_REGION_END] = v2_region,
	[EV2_USER_LOG] = user_log,
};

static int feed_v2(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (!s->have_gen && ev->gen) {
		s->have_gen = true;
		s->initial_gen = ev->gen;
	}
	if (ev->type == RTD_GO2_EV_READER_SYNC)
		return emit(s, RTD_GOEV_SYNC) ? 0 : NOMEM(s);
	if (ev->type > EV2_MAX || !v2_handlers[ev->type])
		return 0;
	return v2_handlers[ev->type](s, ev);
}

/* ---- old format, converted as Go 1.23's oldtrace.go does ----------------- */

typedef int (*v1_handler)(rtd_gostate *s, const struct rtd_gotrace_event *ev);

/* The reasons Go 1.23's converter gives old blocking events. */
static const char *const v1_block_reason[RTD_GO_EV_COUNT] = {
	[RTD_GO_EV_GO_STOP] = "forever",
	[RTD_GO_EV_GO_SCHED] = "runtime.Gosched",
	[RTD_GO_EV_GO_PREEMPT] = "preempted",
	[RTD_GO_EV_GO_SLEEP] = "sleep",
	[RTD_GO_EV_GO_BLOCK] = "",
	[RTD_GO_EV_GO_BLOCK_SEND] = "chan send",
	[RTD_GO_EV_GO_BLOCK_RECV] = "chan receive",
	[RTD_GO_EV_GO_BLOCK_SELECT] = "select",
	[RTD_GO_EV_GO_BLOCK_SYNC] = "sync",
	[RTD_GO_EV_GO_BLOCK_COND] = "sync.(*Cond).Wait",
	[RTD_GO_EV_GO_BLOCK_NET] = "network",
	[RTD_GO_EV_GO_BLOCK_GC] = "GC mark assist wait for work",
};

/* oldtrace.STWReason names (Go 1.21 kinds; before 1.21 0 and 1 only). */
static const char *const v1_stw_reasons[] = {
	"", "GC mark termination", "GC sweep termination", "write heap dump",
	"goroutine profile", "goroutine profile cleanup", "all goroutine stack trace",
	"read mem stats", "AllThreadsSyscall", "GOMAXPROCS", "start trace",
	"stop trace", "CountPagesInUse (test)", "ReadMetricsSlow (test)",
	"ReadMemStatsSlow (test)", "PageCachePagesLeaked (test)", "ResetDebugLog (test)",
};

static const char *v1_stw_reason(rtd_gostate *s, uint64_t kind)
{
	size_t n = sizeof(v1_stw_reasons) / sizeof(v1_stw_reasons[0]);
	size_t r = 0;
	if (s->ver < 1021)
		r = kind <= 1 ? (size_t)kind + 1 : 0;
	else if (s->ver == 1021)
		r = kind < n ? (size_t)kind : 0;
	return interns(s, v1_stw_reasons[r]);
}

static int v1_gomaxprocs(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (!s->pre_init)
		return metric(s, "/sched/gomaxprocs:threads", ev->args[0], ev->stack);
	/* The first Gomaxprocs ends the trace's initialization: goroutines
	 * created before it without a state are runnable; the event itself
	 * is dropped (Go's converter skips it). */
	s->pre_init = false;
	size_t it = 0;
	uint64_t g;
	uint64_t *ids = NULL;
	size_t n = 0;
	if (s->pre.n) {
		ids = malloc(s->pre.n * sizeof(*ids));
		if (!ids)
			return NOMEM(s);
		while (rtd_vmap_next(&s->pre, &it, &g))
			ids[n++] = g;
	}
	/* Go walks a map here; ascending ids keep the output stable */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint64_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t mark = s->nq;
		rc = g_transition(s, ids[i], RTD_GO_G_UNDETERMINED, RTD_GO_G_RUNNABLE, NULL, 0,
				  false, 0);
		if (rc == 0) {
			s->q[mark].g = RTD_GO_NOG;
			s->q[mark].p = -1;
			s->q[mark].m = -1;
		}
	}
	free(ids);
	rtd_vmap_free(&s->pre);
	return rc;
}

static int v1_proc_start(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int err = -ENOMEM;
	struct pst *x = pget(s, ev->p, true, &err);
	if (!x)
		return fail(s, err, "out of memory");
	x->m = (int64_t)ev->args[0];
	unsigned from = x->seen ? RTD_GO_P_IDLE : RTD_GO_P_UNDETERMINED;
	x->seen = true;
	return p_transition(s, ev->p, from, RTD_GO_P_RUNNING);
}

static int v1_proc_stop(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	int err = -ENOMEM;
	struct pst *x = pget(s, ev->p, true, &err);
	if (!x)
		return fail(s, err, "out of memory");
	unsigned from = x->seen ? RTD_GO_P_RUNNING : RTD_GO_P_UNDETERMINED;
	x->seen = true;
	int rc = p_transition(s, ev->p, from, RTD_GO_P_IDLE);
	x->m = -1; /* Go forgets the P's thread after the stop */
	return rc;
}

static int v1_gc(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return range_ev(s, ev->type == RTD_GO_EV_GC_START ? RTD_GOEV_RANGE_BEGIN : RTD_GOEV_RANGE_END,
			"GC concurrent mark phase", RTD_GOEV_RES_NONE, 0, ev->stack);
}

static int v1_stw(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (ev->type == RTD_GO_EV_GC_STW_START)
		s->stw_reason = v1_stw_reason(s, ev->nargs ? ev->args[0] : 0);
	const char *reason = s->stw_reason ? s->stw_reason : s->s_empty;
	uint64_t g = ev->g ? ev->g : RTD_GO_NOG;
	return range_ev(s, ev->type == RTD_GO_EV_GC_STW_START ? RTD_GOEV_RANGE_BEGIN
			: RTD_GOEV_RANGE_END, stw_name(s, reason), RTD_GOEV_RES_GOROUTINE,
			(int64_t)g, 0);
}

static int v1_sweep(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return range_ev(s, ev->type == RTD_GO_EV_GC_SWEEP_START ? RTD_GOEV_RANGE_BEGIN
			: RTD_GOEV_RANGE_END, "GC incremental sweep", RTD_GOEV_RES_PROC, ev->p,
			ev->stack);
}

static int v1_assist(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	uint64_t g = ev->g ? ev->g : RTD_GO_NOG;
	return range_ev(s, ev->type == RTD_GO_EV_GC_MARK_ASSIST_START ? RTD_GOEV_RANGE_BEGIN
			: RTD_GOEV_RANGE_END, "GC mark assist", RTD_GOEV_RES_GOROUTINE, (int64_t)g,
			ev->stack);
}

static int v1_go_create(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (s->pre_init) {
		int err = -ENOMEM;
		if (!rtd_vmap_get(&s->pre, ev->args[0], true, NULL, &err))
			return fail(s, err, "out of memory");
		return 0;
	}
	return g_transition(s, ev->args[0], RTD_GO_G_NOTEXIST, RTD_GO_G_RUNNABLE, NULL,
			    ev->args[1], false, ev->stack);
}

static int v1_status(rtd_gostate *s, uint64_t g, unsigned to)
{
	rtd_vmap_del(&s->pre, g);
	return g_transition(s, g, RTD_GO_G_UNDETERMINED, to, NULL, 0, false, 0);
}

static int v1_go_start(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (s->pre_init)
		return v1_status(s, ev->args[0], RTD_GO_G_RUNNING);
	int rc = g_transition(s, ev->args[0], RTD_GO_G_RUNNABLE, RTD_GO_G_RUNNING, NULL, 0,
			      false, 0);
	if (rc == 0 && ev->type == RTD_GO_EV_GO_START_LABEL) {
		struct rtd_goev *o = emit(s, RTD_GOEV_LABEL);
		if (!o)
			return NOMEM(s);
		o->name = str_arg(s, 0);
	}
	return rc;
}

static int v1_go_end(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->g, RTD_GO_G_RUNNING, RTD_GO_G_NOTEXIST, NULL, 0, false, 0);
}

static int v1_go_block(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	bool stop = ev->type == RTD_GO_EV_GO_SCHED || ev->type == RTD_GO_EV_GO_PREEMPT;
	return g_transition(s, ev->g, RTD_GO_G_RUNNING, stop ? RTD_GO_G_RUNNABLE : RTD_GO_G_WAITING,
			    interns(s, v1_block_reason[ev->type]), 0, true, ev->stack);
}

static int v1_go_unblock(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->args[0], RTD_GO_G_WAITING, RTD_GO_G_RUNNABLE, NULL, 0, false,
			    ev->stack);
}

static int v1_syscall(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	/* Whether it blocked shows in the goroutine's next event. */
	struct gst *g = gget(s, ev->g);
	if (!g)
		return 0;
	int64_t st = stack_of(s, ev->stack);
	if (st < 0)
		return fail(s, (int)st, "%s", s->stacks->err);
	if (!g->sys_pending)
		s->npending++;
	g->sys_pending = true;
	g->sys_ts = ev->ts;
	g->sys_p = ev->p;
	g->sys_m = ev->m;
	g->sys_stack = (uint32_t)st;
	return 0;
}

/* The deferred GoSysCall of goroutine id: blocked, or 1 ns long. */
static int v1_syscall_resolve(rtd_gostate *s, uint64_t id, struct gst *g, bool blocked)
{
	g->sys_pending = false;
	s->npending--;
	for (int k = 0; k < (blocked ? 1 : 2); k++) {
		struct rtd_goev *o = emit(s, RTD_GOEV_STATE);
		if (!o)
			return NOMEM(s);
		o->ts = g->sys_ts + k;
		o->g = id;
		o->p = g->sys_p;
		o->m = g->sys_m;
		o->src = NULL;
		o->resource = RTD_GOEV_RES_GOROUTINE;
		o->id = id;
		o->from = k ? RTD_GO_G_SYSCALL : RTD_GO_G_RUNNING;
		o->to = k ? RTD_GO_G_RUNNING : RTD_GO_G_SYSCALL;
		if (!k)
			o->stack = o->tstack = g->sys_stack;
		g->state = o->to;
		g->since = o->ts;
		g->reason = s->s_empty;
		if (g->sys_stack)
			g->stack = g->sys_stack;
	}
	return 0;
}

static int v1_sys_exit(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return g_transition(s, ev->g, RTD_GO_G_SYSCALL, RTD_GO_G_RUNNABLE, NULL, 0, true, 0);
}

static int v1_waiting(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return v1_status(s, ev->args[0], ev->type == RTD_GO_EV_GO_WAITING ? RTD_GO_G_WAITING
			 : RTD_GO_G_SYSCALL);
}

static int v1_heap(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	return ev->type == RTD_GO_EV_HEAP_ALLOC
	       ? metric(s, "/memory/classes/heap/objects:bytes", ev->args[0], 0)
	       : metric(s, "/gc/heap/goal:bytes", ev->args[0], 0);
}

static int v1_task_create(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_TASK_BEGIN);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	o->parent = ev->args[1];
	o->name = str_arg(s, 0);
	int err = -ENOMEM;
	struct otask *t = rtd_vmap_get(&s->tasks, ev->args[0], true, NULL, &err);
	if (!t)
		return fail(s, err, "out of memory");
	t->name = o->name;
	t->parent = ev->args[1];
	return set_stack(s, o, ev->stack);
}

static int v1_task_end(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	struct rtd_goev *o = emit(s, RTD_GOEV_TASK_END);
	if (!o)
		return NOMEM(s);
	o->task = ev->args[0];
	struct otask *t = rtd_vmap_get(&s->tasks, ev->args[0], false, NULL, NULL);
	if (t) {
		o->name = t->name;
		o->parent = t->parent;
		rtd_vmap_del(&s->tasks, ev->args[0]);
	}
	return set_stack(s, o, ev->stack);
}

static int v1_region(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (ev->args[1] > 1) /* mode: 0 begin, 1 end */
		return 0;
	return region_ev(s, ev, ev->args[1] == 0 ? RTD_GOEV_REGION_BEGIN : RTD_GOEV_REGION_END);
}

static const v1_handler v1_handlers[RTD_GO_EV_COUNT] = {
	[RTD_GO_EV_GOMAXPROCS] = v1_gomaxprocs,
	[RTD_GO_EV_PROC_START] = v1_proc_start,
	[RTD_GO_EV_PROC_STOP] = v1_proc_stop,
	[RTD_GO_EV_GC_START] = v1_gc,
	[RTD_GO_EV_GC_DONE] = v1_gc,
	[RTD_GO_EV_GC_STW_START] = v1_stw,
	[RTD_GO_EV_GC_STW_DONE] = v1_stw,
	[RTD_GO_EV_GC_SWEEP_START] = v1_sweep,
	[RTD_GO_EV_GC_SWEEP_DONE] = v1_sweep,
	[RTD_GO_EV_GO_CREATE] = v1_go_create,
	[RTD_GO_EV_GO_START] = v1_go_start,
	[RTD_GO_EV_GO_START_LABEL] = v1_go_start,
	[RTD_GO_EV_GO_END] = v1_go_end,
	[RTD_GO_EV_GO_STOP] = v1_go_block,
	[RTD_GO_EV_GO_SCHED] = v1_go_block,
	[RTD_GO_EV_GO_PREEMPT] = v1_go_block,
	[RTD_GO_EV_GO_SLEEP] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_SEND] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_RECV] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_SELECT] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_SYNC] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_COND] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_NET] = v1_go_block,
	[RTD_GO_EV_GO_BLOCK_GC] = v1_go_block,
	[RTD_GO_EV_GO_UNBLOCK] = v1_go_unblock,
	[RTD_GO_EV_GO_SYSCALL] = v1_syscall,
	[RTD_GO_EV_GO_SYS_EXIT] = v1_sys_exit,
	[RTD_GO_EV_GO_WAITING] = v1_waiting,
	[RTD_GO_EV_GO_IN_SYSCALL] = v1_waiting,
	[RTD_GO_EV_HEAP_ALLOC] = v1_heap,
	[RTD_GO_EV_HEAP_GOAL] = v1_heap,
	[RTD_GO_EV_GC_MARK_ASSIST_START] = v1_assist,
	[RTD_GO_EV_GC_MARK_ASSIST_DONE] = v1_assist,
	[RTD_GO_EV_USER_TASK_CREATE] = v1_task_create,
	[RTD_GO_EV_USER_TASK_END] = v1_task_end,
	[RTD_GO_EV_USER_REGION] = v1_region,
	[RTD_GO_EV_USER_LOG] = user_log,
	[RTD_GO_EV_CPU_SAMPLE] = cpu_sample,
};

static int feed_v1(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (ev->type >= RTD_GO_EV_COUNT)
		return 0;
	int rc;
	/* a syscall waiting for this goroutine's next event */
	if (s->npending && ev->g) {
		struct gst *g = gget(s, ev->g);
		if (g && g->sys_pending &&
		    (rc = v1_syscall_resolve(s, ev->g, g, ev->type == RTD_GO_EV_GO_SYS_BLOCK)) < 0)
			return rc;
	}
	v1_handler h = v1_handlers[ev->type];
	if (!h)
		return 0;
	size_t mark = s->nq;
	if ((rc = h(s, ev)) < 0)
		return rc;
	/* the converter's times rise strictly */
	for (size_t i = mark; i < s->nq; i++) {
		struct rtd_goev *o = &s->q[i];
		if (o->src && o->ts <= s->last_ts)
			o->ts = s->last_ts + 1;
		if (o->src)
			s->last_ts = o->ts;
	}
	return 0;
}

/* ---- public API ------------------------------------------------------------ */

struct rtd_gostate *ga_state_new(rtd_gotrace_dec *d, struct ga_strs *strs,
				 struct ga_stacks *stacks)
{
	rtd_gostate *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->d = d;
	if (strs) {
		s->strs = strs;
	} else {
		ga_strs_init(&s->own_strs);
		s->strs = &s->own_strs;
	}
	if (stacks) {
		s->stacks = stacks;
	} else {
		ga_stacks_init(&s->own_stacks, s->strs);
		s->stacks = &s->own_stacks;
	}
	rtd_vmap_init(&s->gs, sizeof(struct gst), RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&s->ps, sizeof(struct pst), RTD_GOTRACE_MAX_PROCS);
	rtd_vmap_init(&s->pre, 0, RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&s->tasks, sizeof(struct otask), RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&s->strcache, sizeof(const char *), 1u << 16);
	s->strcache_gen = UINT64_MAX;
	s->ids_gen = UINT64_MAX;
	/* the wire argument each string argument is read from (the decoder's
	 * fill_sargs_tab()); UserTaskEnd's name is the ordering's */
	for (unsigned t = 0; t <= V2_MAX_TYPE; t++) {
		const struct v2_spec *sp = &v2_specs[t];
		s->sarg_at[t][0] = s->sarg_at[t][1] = -1;
		for (unsigned k = 0, n = 0; k < 2 && t != EV2_USER_TASK_END; k++)
			if (sp->str_arg[k] >= 0)
				s->sarg_at[t][n++] =
					(int8_t)(sp->str_arg[k] - ((sp->flags & V2_TIMED) ? 1 : 0));
	}
	s->pre_init = true;
	s->last_ts = INT64_MIN;
	s->s_empty = ga_intern(s->strs, "", 0);
	if (!s->s_empty) {
		rtd_gostate_free(s);
		return NULL;
	}
	return s;
}

rtd_gostate *rtd_gostate_new(rtd_gotrace_dec *d)
{
	return d ? ga_state_new(d, NULL, NULL) : NULL;
}

void rtd_gostate_free(rtd_gostate *s)
{
	if (!s)
		return;
	rtd_vmap_free(&s->gs);
	rtd_vmap_free(&s->ps);
	rtd_vmap_free(&s->pre);
	rtd_vmap_free(&s->tasks);
	rtd_vmap_free(&s->strcache);
	free(s->ids);
	free(s->q);
	if (s->stacks == &s->own_stacks)
		ga_stacks_free(&s->own_stacks);
	if (s->strs == &s->own_strs)
		ga_strs_free(&s->own_strs);
	free(s);
}

int rtd_gostate_feed(rtd_gostate *s, const struct rtd_gotrace_event *ev)
{
	if (s->iq == s->nq)
		s->iq = s->nq = 0;
	if (!s->ver)
		s->ver = rtd_gotrace_dec_version(s->d);
	s->ev = ev;
	return s->ver >= 1022 ? feed_v2(s, ev) : feed_v1(s, ev);
}

int rtd_gostate_finish(rtd_gostate *s)
{
	if (s->iq == s->nq)
		s->iq = s->nq = 0;
	size_t it = 0;
	uint64_t id;
	struct gst *g;
	while (s->npending && (g = rtd_vmap_next(&s->gs, &it, &id)))
		if (g->sys_pending) {
			struct rtd_gotrace_event none = {0};
			none.p = -1;
			none.m = -1;
			s->ev = &none;
			int rc = v1_syscall_resolve(s, id, g, false);
			s->ev = NULL;
			if (rc < 0)
				return rc;
		}
	return 0;
}

void ga_state_direct(rtd_gostate *s)
{
	s->direct = true;
}

int ga_state_feed_direct(rtd_gostate *s, const struct rtd_gotrace_event *ev,
			 const struct ga_gtr **t, struct ga_gprof **x)
{
	if (s->iq == s->nq)
		s->iq = s->nq = 0;
	if (!s->ver)
		s->ver = rtd_gotrace_dec_version(s->d);
	s->ev = ev;
	s->tr_on = false;
	int rc = s->ver >= 1022 ? feed_v2(s, ev) : feed_v1(s, ev);
	if (rc < 0)
		return rc;
	*t = s->tr_on ? &s->tr : NULL;
	*x = s->tr_x;
	return s->iq < s->nq;
}

void ga_state_tr_done(rtd_gostate *s)
{
	if (s->tr_on && s->tr.gone && s->tr_x != &s->tr_none)
		rtd_vmap_del(&s->gs, s->tr.id);
	s->tr_on = false;
}

const struct rtd_goev *ga_state_take(rtd_gostate *s)
{
	return s->iq < s->nq ? &s->q[s->iq++] : NULL;
}

int rtd_gostate_next(rtd_gostate *s, struct rtd_goev *out)
{
	const struct rtd_goev *e = ga_state_take(s);
	if (!e)
		return 0;
	*out = *e;
	return 1;
}

size_t rtd_gostate_stack(const rtd_gostate *s, uint32_t id, const struct rtd_goframe **frames)
{
	return ga_stacks_view(s->stacks, id, frames);
}

int rtd_gostate_goroutine(const rtd_gostate *s, uint64_t g, struct rtd_goroutine_info *out)
{
	struct gst *x = rtd_vmap_get((struct rtd_vmap *)&s->gs, g, false, NULL, NULL);
	if (!x)
		return -RTD_E_NOTFOUND;
	out->id = g;
	out->state = x->state;
	out->since = x->since;
	out->reason = x->reason;
	out->stack = x->stack;
	out->start_fn = x->start_fn;
	out->start_pc = x->start_pc;
	out->created = x->created;
	return 0;
}

const char *rtd_gostate_error(const rtd_gostate *s)
{
	return s->err;
}

const char *rtd_go_gstate_name(unsigned state)
{
	static const char *const names[] = {"Undetermined", "NotExist", "Runnable",
					    "Running", "Waiting", "Syscall"};
	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "Bad";
}
