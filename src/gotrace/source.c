/* SPDX-License-Identifier: MIT */
/*
 * source.c - a Go execution trace as a record source (rtdiag/source.h,
 * rtdiag/gotrace_source.h): the ordered decoder feeds the goroutine state
 * tracker (rtd_gostate), whose high-level events become records through
 * one small handler per event kind. What a high-level event implies (a
 * state's end and the next state's begin) is queued and handed out before
 * the next ordered event is read. Everything here uses the public API of
 * the decoder and the tracker only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/input.h"
#include "common/map.h"
#include "common/recq.h"
#include "rtdiag/goanalysis.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_source.h"
#include "gotrace/gotrace_int.h"

#define GTS_MAX_THREADS (1u << 20)  /* distinct Ms */
#define GTS_MAX_OPEN (1u << 24)     /* slices open at once (goroutines, ranges) */
#define GTS_LANE_RANGE (1ull << 60) /* + n: the n-th distinct (range, scope) */
#define GTS_CLOCK_READS_NS 1000u    /* a clock snapshot's three reads, at most */
/* Go 1.22+ outside Windows: the trace clock is nanotime() / 64, at this
 * constant frequency (runtime/tracetime.go traceClockNow,
 * traceClockUnitsPerSecond); on Linux nanotime() is CLOCK_MONOTONIC */
#define GTS_NANOTIME_FREQ 15625000
#define GTS_NANOTIME_DIV_NS 64u

/* The slice a goroutine has open on a thread (states) */
struct gopen {
	uint64_t tid, lane;
};

struct gts {
	struct rtd_gotrace_source_opts o;
	rtd_input in;
	rtd_gotrace_dec *dec;
	rtd_gostate *st;
	rtd_intern *intern;
	struct rtd_clock clock;
	bool plain;                /* clock_changed() */
	enum { ANCHOR_NONE, ANCHOR_CALLER, ANCHOR_NANOTIME, ANCHOR_SNAPSHOT } anchor;
	bool not_nanotime;         /* a generation ran at another frequency */
	bool checked_freq_set;     /* check_nanotime() saw checked_freq */
	int64_t checked_freq;
	int version;
	rtd_recq q;
	rtd_map threads;           /* M -> 1: its THREAD record went out */
	rtd_map gopen;             /* g -> struct gopen *: its state slice */
	rtd_map ranges;            /* hash(name, scope, id) -> lane + 1 (open) or lane (closed) */
	uint64_t nlanes;
	rtd_map regions;           /* g -> open regions (count) */
	int64_t last_ts;
	bool eof, finished, drained;
	bool samples_only;         /* opts.kinds wants nothing the tracker makes */
	struct rtd_rec_frame *frames; /* a stack being interned */
	size_t frames_cap;
	struct gts_events *evs;    /* opts.go_events: Go's own events */
	int err;
	struct rtd_field f[6];
};

/* Whether the clock is one of the usual ones, where a time is its own
 * converted time: nanoseconds from 0, monotonic or unanchored (kept in
 * s->plain whenever the clock changes) */
static void clock_changed(struct gts *s)
{
	const struct rtd_clock *c = &s->clock;
	s->plain = c->freq == 1000000000u && c->ref_ts == 0 &&
		   (!(c->flags & RTD_CLOCK_HAS_MONO) || c->ref_mono == 0);
}

static inline int64_t mono_of(struct gts *s, int64_t ts)
{
	return s->plain ? ts : rtd_clock_to_mono(&s->clock, ts);
}

static struct rtd_record *push(struct gts *s, unsigned kind, int64_t ts, uint64_t tid,
			       uint64_t lane)
{
	if (s->o.kinds && !(s->o.kinds & 1u << kind))
		return NULL; /* not asked for: not made (s->err stays 0) */
	struct rtd_record *r = rtd_recq_push(&s->q, kind, ts, mono_of(s, ts), &s->err);
	if (r) {
		r->pid = s->o.pid;
		r->tid = tid;
		r->lane = lane;
	}
	return r;
}

static const char *intern(struct gts *s, const char *str)
{
	const char *out = NULL;
	if (!str)
		str = "";
	int rc = rtd_intern_string(s->intern, str, strlen(str), &out);
	if (rc < 0 && !s->err)
		s->err = rc;
	return out;
}

/* Room for a stack of @n frames in s->frames (NULL: out of memory). */
static struct rtd_rec_frame *frames_for(struct gts *s, size_t n)
{
	size_t need = n ? n : 1; /* an empty stack is a stack too */
	if (need <= s->frames_cap)
		return s->frames;
	struct rtd_rec_frame *f = rtd_grow(s->frames, &s->frames_cap, need, sizeof(*f), 64);
	if (!f)
		s->err = -ENOMEM;
	else
		s->frames = f;
	return f;
}

/* A Go frame as a record's: "" names are no names. */
static struct rtd_rec_frame go_frame(uint64_t pc, const char *fn, const char *file, uint64_t line)
{
	return (struct rtd_rec_frame){.ip = pc, .name = fn && *fn ? fn : NULL,
				      .file = file && *file ? file : NULL, .line = line};
}

/* @n frames of the tracker (@tf) or of the decoder (@df), interned. */
static const struct rtd_stack *go_stack(struct gts *s, const struct rtd_goframe *tf,
					const struct rtd_gotrace_frame *df, size_t n)
{
	if (n > RTD_INTERN_MAX_DEPTH)
		n = RTD_INTERN_MAX_DEPTH;
	struct rtd_rec_frame *f = frames_for(s, n);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		f[i] = tf ? go_frame(tf[i].pc, tf[i].fn, tf[i].file, tf[i].line)
			  : go_frame(df[i].pc, df[i].fn, df[i].file, df[i].line);
	const struct rtd_stack *out = NULL;
	int rc = rtd_intern_stack(s->intern, f, n, &out);
	if (rc < 0 && !s->err)
		s->err = rc;
	return out;
}

/* The tracker's stack @id (interned across generations). */
static const struct rtd_stack *stack_of(struct gts *s, uint32_t id)
{
	if (!id)
		return NULL;
	const struct rtd_goframe *gf = NULL;
	size_t n = rtd_gostate_stack(s->st, id, &gf);
	return go_stack(s, gf, NULL, n);
}

static void field_u(struct rtd_field *f, const char *name, uint64_t v)
{
	*f = (struct rtd_field){.name = name, .type = RTD_FIELD_U64, .u = v};
}

static void field_s(struct gts *s, struct rtd_field *f, const char *name, const char *v)
{
	int rc = 0;
	*f = (struct rtd_field){.name = name, .type = RTD_FIELD_STR,
				.s = rtd_arena_strndup(&s->q.arena, v ? v : "", v ? strlen(v) : 0, &rc)};
	if (!f->s && !s->err)
		s->err = rc;
}

static void set_fields(struct gts *s, struct rtd_record *r, size_t n)
{
	int rc = 0;
	r->fields = rtd_recq_fields(&s->q, s->f, n, &rc);
	r->nfields = r->fields ? n : 0;
	if (!r->fields && !s->err)
		s->err = rc;
}

/* Where a goroutine's events go: Go 1.22+ the OS thread (M), else the
 * goroutine's lane of the process track. */
static bool new_format(const struct gts *s)
{
	return s->version >= 1022;
}

static int thread_seen(struct gts *s, int64_t m, int64_t ts)
{
	if (m < 0 || rtd_map_get(&s->threads, (uint64_t)m, NULL))
		return 0;
	int rc = rtd_map_put(&s->threads, (uint64_t)m, (void *)1, NULL);
	if (rc < 0)
		return s->err = rc;
	return push(s, RTD_REC_THREAD, ts, (uint64_t)m, 0) ? 0 : s->err;
}

static void where(const struct gts *s, const struct rtd_goev *e, uint64_t g, uint64_t *tid,
		  uint64_t *lane)
{
	if (new_format(s) && e->m >= 0) {
		*tid = (uint64_t)e->m;
		*lane = 0;
	} else {
		*tid = 0;
		*lane = RTD_GOTRACE_LANE_G + (g == RTD_GO_NOG ? 0 : g);
	}
}

/* ---- goroutine states ---------------------------------------------------- */

static bool on_thread(unsigned st)
{
	return st == RTD_GO_G_RUNNING || st == RTD_GO_G_SYSCALL;
}

static void close_g(struct gts *s, uint64_t g, int64_t ts)
{
	struct gopen *o = rtd_map_del(&s->gopen, g);
	if (!o)
		return;
	push(s, RTD_REC_SLICE_END, ts, o->tid, o->lane);
	free(o);
}

static void open_g(struct gts *s, const struct rtd_goev *e, uint64_t g)
{
	uint64_t tid, lane;
	where(s, e, g, &tid, &lane);
	struct gopen *o = malloc(sizeof(*o));
	if (!o) {
		s->err = -ENOMEM;
		return;
	}
	o->tid = tid;
	o->lane = lane;
	int rc = rtd_map_put(&s->gopen, g, o, NULL);
	if (rc < 0) {
		free(o);
		s->err = rc;
		return;
	}
	struct rtd_record *r = push(s, RTD_REC_SLICE_BEGIN, e->ts, tid, lane);
	if (!r)
		return;
	r->name = intern(s, rtd_go_gstate_name(e->to));
	r->category = "goroutine";
	field_u(&s->f[0], "g", g);
	set_fields(s, r, 1);
}

/* an instant about goroutine @g where @e happened */
static struct rtd_record *g_instant(struct gts *s, const struct rtd_goev *e, const char *name,
				    uint64_t g)
{
	uint64_t tid, lane;
	where(s, e, e->g != RTD_GO_NOG ? e->g : g, &tid, &lane);
	struct rtd_record *r = push(s, RTD_REC_INSTANT, e->ts, tid, lane);
	if (r) {
		r->name = name;
		r->category = "goroutine";
	}
	return r;
}

static void on_state(struct gts *s, const struct rtd_goev *e)
{
	if (e->resource != RTD_GOEV_RES_GOROUTINE)
		return; /* procs are the runtime's, not the OS's */
	uint64_t g = e->id;
	if (on_thread(e->from) || rtd_map_get(&s->gopen, g, NULL))
		close_g(s, g, e->ts);
	if (on_thread(e->to))
		open_g(s, e, g);
	if (e->to == RTD_GO_G_WAITING) {
		struct rtd_record *r = g_instant(s, e, "GoBlock", g);
		if (!r)
			return;
		r->stack = stack_of(s, e->tstack);
		field_u(&s->f[0], "g", g);
		field_s(s, &s->f[1], "reason", e->reason);
		set_fields(s, r, 2);
	} else if (e->to == RTD_GO_G_RUNNABLE && e->from == RTD_GO_G_WAITING) {
		struct rtd_record *r = g_instant(s, e, "GoUnblock", g);
		if (!r)
			return;
		field_u(&s->f[0], "g", g);
		set_fields(s, r, 1);
	}
}

/* ---- ranges: GC, STW, sweeping, mark assists ------------------------------ */

static uint64_t range_key(const struct rtd_goev *e)
{
	const char *n = e->name ? e->name : "";
	return rtd_hash_bytes(n, strlen(n)) ^ rtd_hash_u64(((uint64_t)e->scope << 56) ^
							   (uint64_t)e->scope_id);
}

static void on_range(struct gts *s, const struct rtd_goev *e)
{
	uint64_t key = range_key(e);
	void *v = NULL;
	bool known = rtd_map_get(&s->ranges, key, &v);
	uint64_t lane = (uint64_t)(uintptr_t)v >> 1;
	bool open = (uintptr_t)v & 1;
	if (e->kind == RTD_GOEV_RANGE_END) {
		if (!open)
			return; /* began before the trace */
		push(s, RTD_REC_SLICE_END, e->ts, 0, GTS_LANE_RANGE + lane);
		rtd_map_put(&s->ranges, key, (void *)(uintptr_t)(lane << 1), NULL);
		return;
	}
	if (open)
		return; /* already going: a generation's "active" again */
	if (!known)
		lane = ++s->nlanes;
	int rc = rtd_map_put(&s->ranges, key, (void *)(uintptr_t)(lane << 1 | 1), NULL);
	if (rc < 0) {
		s->err = rc;
		return;
	}
	struct rtd_record *r = push(s, RTD_REC_SLICE_BEGIN, e->ts, 0, GTS_LANE_RANGE + lane);
	if (!r)
		return;
	r->name = intern(s, e->name);
	r->category = "gc";
	r->stack = stack_of(s, e->stack);
	field_u(&s->f[0], "scope_id", (uint64_t)e->scope_id);
	set_fields(s, r, 1);
}

/* ---- regions, tasks, logs, labels, samples, metrics ------------------------ */

static void on_region(struct gts *s, const struct rtd_goev *e)
{
	uint64_t g = e->g == RTD_GO_NOG ? 0 : e->g;
	void *v = NULL;
	rtd_map_get(&s->regions, g, &v);
	uintptr_t open = (uintptr_t)v;
	if (e->kind == RTD_GOEV_REGION_END) {
		if (!open)
			return; /* began before the trace */
		push(s, RTD_REC_SLICE_END, e->ts, 0, RTD_GOTRACE_LANE_REGION + g);
		if (open == 1)
			rtd_map_del(&s->regions, g);
		else
			rtd_map_put(&s->regions, g, (void *)(open - 1), NULL);
		return;
	}
	int rc = rtd_map_put(&s->regions, g, (void *)(open + 1), NULL);
	if (rc < 0) {
		s->err = rc;
		return;
	}
	struct rtd_record *r = push(s, RTD_REC_SLICE_BEGIN, e->ts, 0, RTD_GOTRACE_LANE_REGION + g);
	if (!r)
		return;
	r->name = intern(s, e->name);
	r->category = "region";
	r->stack = stack_of(s, e->stack);
	field_u(&s->f[0], "task", e->task);
	field_u(&s->f[1], "g", g);
	set_fields(s, r, 2);
}

static void on_task(struct gts *s, const struct rtd_goev *e)
{
	struct rtd_record *r = g_instant(s, e, e->kind == RTD_GOEV_TASK_BEGIN ? "UserTaskBegin"
									  : "UserTaskEnd", e->g);
	if (!r)
		return;
	r->category = "task";
	r->stack = stack_of(s, e->stack);
	field_u(&s->f[0], "task", e->task);
	field_u(&s->f[1], "parent", e->parent);
	field_s(s, &s->f[2], "name", e->name);
	set_fields(s, r, 3);
}

static void on_log(struct gts *s, const struct rtd_goev *e)
{
	struct rtd_record *r = g_instant(s, e, "UserLog", e->g);
	if (!r)
		return;
	r->category = "log";
	r->stack = stack_of(s, e->stack);
	field_u(&s->f[0], "task", e->task);
	field_s(s, &s->f[1], "category", e->name);
	field_s(s, &s->f[2], "message", e->message);
	set_fields(s, r, 3);
}

static void on_label(struct gts *s, const struct rtd_goev *e)
{
	struct rtd_record *r = g_instant(s, e, "GoLabel", e->g);
	if (!r)
		return;
	field_u(&s->f[0], "g", e->g);
	field_s(s, &s->f[1], "label", e->name);
	set_fields(s, r, 2);
}

static void on_sample(struct gts *s, const struct rtd_goev *e)
{
	uint64_t tid, lane;
	where(s, e, e->g, &tid, &lane);
	struct rtd_record *r = push(s, RTD_REC_SAMPLE, e->ts, tid, lane);
	if (!r)
		return;
	r->name = "CPUSample";
	r->value = 1;
	r->unit = "count";
	r->stack = stack_of(s, e->stack);
	if (!r->stack)
		rtd_intern_stack(s->intern, NULL, 0, &r->stack); /* a sample has a stack */
	field_u(&s->f[0], "g", e->g);
	s->f[1] = (struct rtd_field){.name = "m", .type = RTD_FIELD_I64, .i = e->m};
	set_fields(s, r, 2);
}

/* ---- samples without the tracker (opts.kinds) ------------------------------ */

static uint64_t ev_arg(const struct rtd_gotrace_event *ev, const char *name, uint64_t dflt)
{
	for (unsigned i = 0; i < ev->nargs && ev->argnames; i++)
		if (ev->argnames[i] && !strcmp(ev->argnames[i], name))
			return ev->args[i];
	return dflt;
}

/* The decoder's stack @id (of the generation being ordered), interned. */
static const struct rtd_stack *dec_stack_of(struct gts *s, uint64_t id)
{
	const struct rtd_gotrace_frame *gf = NULL;
	size_t n = id ? rtd_gotrace_dec_stack(s->dec, id, &gf) : 0;
	return go_stack(s, NULL, gf, n);
}

/* ---- Go's own events (opts.go_events) ---------------------------------------- */

/*
 * Each ordered event is handed out as it is, with no queue between the
 * decoder and the caller: the record is filled in the caller's record
 * and its fields are the event type's shape (names and types made once
 * per type, struct gts_shape), into which each event writes only its
 * values. The record and its fields are the caller's until the next
 * pull, as every record is.
 */
#define GTS_SHAPE_FIELDS (3 + 2 * RTD_GOTRACE_MAX_ARGS + 2 + 1) /* ev.g/p/m, args, .fn, sargs, */
								 /* and a spare one past them */
#define GTS_ARGS_ALWAYS 2u /* arguments go_fill() writes whatever their number */
#define GTS_SHAPE_TYPES 512u /* event types with a shape of their own */
#define GTS_STACKS 2048u     /* stacks of a generation looked up first here */
#define GTS_BATCH 8u         /* records of one batch (gts_next_batch) */
_Static_assert(RTD_GOTRACE_MAX_ARGS == 8, "go_event() copies up to 8 arguments");

/* A record of a shape with its fields */
struct gts_rec {
	struct rtd_record rec;
	struct rtd_field f[GTS_SHAPE_FIELDS];
};

struct gts_shape {
	struct gts_shape *next; /* another shape of the same type */
	const char *name; /* the decoder's */
	const char *const *argnames, *const *sargnames;
	unsigned nargs, nsargs;
	uint8_t nf, nargf, nfnf, nsargf;
	bool more; /* more than go_fill() writes always: go_fill_more() */
	bool fragile; /* a string argument lasts until the decoder's next event */
	struct rtd_record rec; /* its records: all but the time, the stack
				* and the fields' values written once */
	struct {
		uint8_t arg;  /* the event's argument */
		uint16_t off; /* its field's byte offset in the record's fields */
	} argf[RTD_GOTRACE_MAX_ARGS], /* where each named argument goes */
	  fnf[RTD_GOTRACE_MAX_ARGS],  /* a stack argument's "NAME.fn" */
	  sargf[2];                   /* each named string argument */
	struct rtd_field f[GTS_SHAPE_FIELDS];
	/* a batch's second and later records of the shape: in copies of
	 * rec and f (made when first needed), so that every record of a
	 * batch stays as it was filled until the next pull */
	struct gts_rec *copies;
	uint32_t batch;  /* the batch its records were last given in */
	uint32_t used;   /* records of the shape in that batch */
};

/* A type's shapes are kept for the source's life (a record's fields stay
 * where they are for its shape, which rtd_tl_gotrace counts on). There
 * are few: the decoders' names and argument names are their static
 * tables, and a type's argument counts are at most RTD_GOTRACE_MAX_ARGS
 * and 2. */
struct gts_events {
	/* by event type: its shapes (the last first), and that last's key
	 * kept beside it, so an event's shape is one compare in the table */
	struct gts_type {
		const char *name;
		const char *const *argnames, *const *sargnames;
		unsigned nargs, nsargs;
		struct gts_shape *sh;
	} types[GTS_SHAPE_TYPES];
	uint32_t nshapes;      /* made (the records' @shape) */
	bool want;             /* opts.kinds asks for INSTANTs */
	struct gts_type other; /* types past the table */
	struct gts_stack {
		uint64_t id, gen;
		const struct rtd_stack *st;
		const char *top; /* its top frame's function (kept here: the
				  * stack itself is far away in memory) */
	} stacks[GTS_STACKS];
	struct gts_stack unnamed;    /* a stack ev_stack() did not keep */
	struct rtd_gotrace_event ev; /* an event read on this thread */
	const struct rtd_gotrace_event *cur; /* the event now (held back
					      * behind the PROCESS record) */
	bool held, version_said;
	bool steady;                 /* past the first events: gts_next_own() alone */
	struct gt_pull *pull;        /* opts.threads: the decoding thread */
	uint64_t gen;                /* the last event's generation (seen()) */
	bool pull_tried;
	uint32_t batch;              /* gts_next_batch()'s calls */
	int after;                   /* what ended a batch early: said next */
	bool after_set;
	struct rtd_record **inflight; /* the batch being filled, */
	size_t ninflight;             /* its records so far */
};

static void shapes_free(struct gts_events *e)
{
	if (!e)
		return;
	gt_pull_stop(e->pull);
	for (size_t i = 0; i <= GTS_SHAPE_TYPES; i++) {
		struct gts_shape *sh = i < GTS_SHAPE_TYPES ? e->types[i].sh : e->other.sh;
		while (sh) {
			struct gts_shape *next = sh->next;
			free(sh->copies);
			free(sh);
			sh = next;
		}
	}
	free(e);
}

/* The decoder's stack @id of generation @gen, interned (each distinct
 * stack once for the source), with its top function: looked up first in
 * a table of the generation's, so an event's stack costs a compare. A
 * stack with an unnamed frame is not kept there (an old-format string
 * may come after its stack): it is valid until the next look-up. */
static const struct gts_stack *__attribute__((noinline))
ev_stack_miss(struct gts *s, uint64_t gen, uint64_t id, struct gts_stack *c)
{
	const struct rtd_stack *st = dec_stack_of(s, id);
	bool named = st != NULL;
	for (size_t i = 0; st && i < st->n; i++)
		named = named && st->frames[i].name;
	struct gts_stack one = {id, gen, st, st && st->n ? st->frames[0].name : NULL};
	if (!named) {
		s->evs->unnamed = one; /* until the next look-up */
		return &s->evs->unnamed;
	}
	*c = one;
	return c;
}

static inline __attribute__((always_inline)) const struct gts_stack *
ev_stack(struct gts *s, uint64_t gen, uint64_t id)
{
	static const struct gts_stack none;
	if (!id)
		return &none;
	size_t h = (size_t)(id ^ id >> 11) & (GTS_STACKS - 1);
	struct gts_stack *c = &s->evs->stacks[h];
	/* (a slot is kept only with a stack: an empty one's id, 0, is
	 * never looked up here) */
	if (c->id == id && c->gen == gen)
		return c;
	return ev_stack_miss(s, gen, id, c);
}

/* Whether a decoder's argument name names a stack ("stack", "new_stack") */
static bool stack_arg_name(const char *n)
{
	size_t len = strlen(n);
	return len >= 5 && !strcmp(n + len - 5, "stack");
}

/* The "NAME.fn" field name of a stack argument, interned */
static const char *fn_key(struct gts *s, const char *n)
{
	char key[64];
	snprintf(key, sizeof(key), "%.58s.fn", n);
	return intern(s, key);
}

static bool shape_is(const struct gts_shape *sh, const struct rtd_gotrace_event *ev)
{
	return sh->name == ev->name && sh->argnames == ev->argnames &&
	       sh->sargnames == ev->sargnames && sh->nargs == ev->nargs &&
	       sh->nsargs == ev->nsargs;
}

/* @sh to the front of its type's shapes (@t), its key with it */
static struct gts_shape *type_front(struct gts_type *t, struct gts_shape *sh)
{
	sh->next = t->sh;
	*t = (struct gts_type){sh->name, sh->argnames, sh->sargnames, sh->nargs, sh->nsargs, sh};
	return sh;
}

/* The byte offset of field @n among a record's fields */
#define GTS_OFF(n) ((uint16_t)((n) * sizeof(struct rtd_field)))

/* The field at byte offset @off of the fields @f */
static inline struct rtd_field *field_at(struct rtd_field *f, uint16_t off)
{
	return (struct rtd_field *)(void *)((char *)f + off);
}

/* Whether the consumer wants @ev's field @name (opts.field_want) */
static bool field_wanted(struct gts *s, const struct rtd_gotrace_event *ev, const char *name)
{
	return !name || !s->o.field_want ||
	       s->o.field_want(s->o.field_want_ctx, ev->name ? ev->name : "", name);
}

/* The shape of @ev among its type's (@t), or a new one */
static struct gts_shape *__attribute__((noinline)) ev_shape_other(struct gts *s,
								  const struct rtd_gotrace_event *ev,
								  struct gts_type *t)
{
	for (struct gts_shape **pp = &t->sh; *pp; pp = &(*pp)->next) {
		if (shape_is(*pp, ev)) {
			struct gts_shape *sh = *pp;
			*pp = sh->next;
			return type_front(t, sh);
		}
	}
	struct gts_shape *sh = calloc(1, sizeof(*sh));
	if (!sh) {
		s->err = -ENOMEM;
		return NULL;
	}
	sh->name = ev->name;
	sh->argnames = ev->argnames;
	sh->sargnames = ev->sargnames;
	sh->nargs = ev->nargs;
	sh->nsargs = ev->nsargs;
	struct rtd_field *f = sh->f;
	unsigned n = 0;
	f[n++] = (struct rtd_field){.name = "ev.g", .type = RTD_FIELD_U64};
	f[n++] = (struct rtd_field){.name = "ev.p", .type = RTD_FIELD_I64};
	f[n++] = (struct rtd_field){.name = "ev.m", .type = RTD_FIELD_I64};
	for (unsigned i = 0; i < ev->nargs && i < RTD_GOTRACE_MAX_ARGS && ev->argnames; i++) {
		const char *an = ev->argnames[i];
		if (!an || !field_wanted(s, ev, an))
			continue;
		sh->argf[sh->nargf].arg = (uint8_t)i;
		sh->argf[sh->nargf++].off = GTS_OFF(n);
		f[n++] = (struct rtd_field){.name = an, .type = RTD_FIELD_U64};
		const char *fk = stack_arg_name(an) ? fn_key(s, an) : NULL;
		if (fk && field_wanted(s, ev, fk)) {
			sh->fnf[sh->nfnf].arg = (uint8_t)i;
			sh->fnf[sh->nfnf++].off = GTS_OFF(n);
			f[n++] = (struct rtd_field){.name = fk, .type = RTD_FIELD_STR};
		}
	}
	for (unsigned i = 0; i < ev->nsargs && i < 2 && ev->sargnames; i++) {
		if (!ev->sargnames[i] || !field_wanted(s, ev, ev->sargnames[i]))
			continue;
		sh->sargf[sh->nsargf].arg = (uint8_t)i;
		sh->sargf[sh->nsargf++].off = GTS_OFF(n);
		f[n++] = (struct rtd_field){.name = ev->sargnames[i], .type = RTD_FIELD_STR};
	}
	sh->nf = (uint8_t)n;
	/* go_fill() writes GTS_ARGS_ALWAYS arguments and one string
	 * argument with no test of their numbers: a shape with fewer has
	 * the rest written to a spare field (an indirect jump or a loop on
	 * the number mispredicts as event types alternate): the one just
	 * past its own (not the array's last, a cache line of its own
	 * written at every event) */
	for (unsigned i = sh->nargf; i < GTS_ARGS_ALWAYS; i++)
		sh->argf[i].off = GTS_OFF(n);
	if (!sh->nsargf)
		sh->sargf[0].off = GTS_OFF(n);
	sh->more = sh->nargf > GTS_ARGS_ALWAYS || sh->nfnf || sh->nsargf > 1;
	/* a task's name at its end and a log's message are copies of the
	 * decoder's (rtd_gotrace_dec_set_tables_hook()), the other strings
	 * its tables' */
	sh->fragile = sh->nsargf && (!strcmp(ev->name, "UserTaskEnd") || !strcmp(ev->name, "UserLog"));
	sh->rec = (struct rtd_record){.kind = RTD_REC_INSTANT, .pid = s->o.pid,
				      .shape = ++s->evs->nshapes, .name = intern(s, ev->name),
				      .category = "go", .fields = f, .nfields = n};
	type_front(t, sh);
	return s->err ? NULL : sh;
}

/* The shape of @ev: its type's last, another of its type, or a new one */
static inline struct gts_shape *ev_shape(struct gts *s, const struct rtd_gotrace_event *ev)
{
	struct gts_type *t = ev->type < GTS_SHAPE_TYPES ? &s->evs->types[ev->type] : &s->evs->other;
	if (t->name == ev->name && t->argnames == ev->argnames && t->sargnames == ev->sargnames &&
	    t->nargs == ev->nargs && t->nsargs == ev->nsargs && t->sh)
		return t->sh;
	return ev_shape_other(s, ev, t);
}

/* go_fill() of a shape with more than it writes always: the arguments
 * past GTS_ARGS_ALWAYS, a stack argument's top function (@top: the
 * event's own stack's), a second string argument. Out of line: the hot
 * shapes have none, and one test of sh->more costs less than a test of
 * each number. */
static void __attribute__((noinline)) go_fill_more(struct gts *s, const struct gts_shape *sh,
						   struct rtd_field *f,
						   const struct rtd_gotrace_event *ev, const char *top)
{
	for (unsigned i = GTS_ARGS_ALWAYS; i < sh->nargf; i++)
		field_at(f, sh->argf[i].off)->u = ev->args[sh->argf[i].arg];
	for (unsigned i = 0; i < sh->nfnf; i++) {
		/* a stack argument: its top function, as its id is the
		 * generation's (the event's own stack, often) */
		uint64_t id = ev->args[sh->fnf[i].arg];
		field_at(f, sh->fnf[i].off)->s = id == ev->stack ? top : ev_stack(s, ev->gen, id)->top;
	}
	if (sh->nsargf > 1)
		field_at(f, sh->sargf[1].off)->s = ev->sargs[sh->sargf[1].arg];
}

/* @ev in the record @rec of its shape @sh, whose fields are @f: the
 * time, the stack and the values of the context, arguments and string
 * arguments written. */
static inline __attribute__((always_inline)) struct rtd_record *
go_fill(struct gts *s, const struct gts_shape *sh, struct rtd_record *rec, struct rtd_field *f,
	const struct rtd_gotrace_event *ev)
{
	/* (kept: a look-up below may reuse the slot of an unnamed stack) */
	const struct gts_stack *sk = ev_stack(s, ev->gen, ev->stack);
	const struct rtd_stack *st = sk->st;
	f[0].u = ev->g;
	f[1].i = ev->p;
	f[2].i = ev->m;
	/* the arguments a shape does not have go to its spare field */
	_Static_assert(GTS_ARGS_ALWAYS == 2, "go_fill() writes 2 arguments always");
	field_at(f, sh->argf[0].off)->u = ev->args[sh->argf[0].arg];
	field_at(f, sh->argf[1].off)->u = ev->args[sh->argf[1].arg];
	field_at(f, sh->sargf[0].off)->s = ev->sargs[sh->sargf[0].arg];
	if (sh->more)
		go_fill_more(s, sh, f, ev, sk->top);
	rec->ts = ev->ts;
	rec->mono = mono_of(s, ev->ts);
	rec->stack = st;
	return rec;
}

/* @ev as its INSTANT record: its shape's (NULL: out of memory, s->err). */
static inline __attribute__((always_inline)) struct rtd_record *go_event(struct gts *s,
									  const struct rtd_gotrace_event *ev)
{
	struct gts_shape *sh = ev_shape(s, ev);
	return sh ? go_fill(s, sh, &sh->rec, sh->f, ev) : NULL;
}

/* The copies of @sh's record for a batch, made from it (NULL: out of
 * memory, s->err) */
static struct gts_rec *__attribute__((noinline)) shape_copies(struct gts *s, struct gts_shape *sh)
{
	struct gts_rec *c = malloc((GTS_BATCH - 1) * sizeof(*c));
	if (!c) {
		s->err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < GTS_BATCH - 1; i++) {
		memcpy(c[i].f, sh->f, sizeof(sh->f));
		c[i].rec = sh->rec;
		c[i].rec.fields = c[i].f;
	}
	return sh->copies = c;
}

/* @ev as the next record of its shape in batch @batch: the shape's own
 * record first, then its copies (NULL: out of memory, s->err) */
static inline __attribute__((always_inline)) struct rtd_record *
go_event_in(struct gts *s, const struct rtd_gotrace_event *ev, uint32_t batch,
	    const struct gts_shape **shp)
{
	struct gts_shape *sh = ev_shape(s, ev);
	if (!sh)
		return NULL;
	*shp = sh;
	if (sh->batch != batch) {
		sh->batch = batch;
		sh->used = 1;
		return go_fill(s, sh, &sh->rec, sh->f, ev);
	}
	if (!sh->copies && !shape_copies(s, sh))
		return NULL;
	struct gts_rec *c = &sh->copies[sh->used++ - 1];
	return go_fill(s, sh, &c->rec, c->f, ev);
}

/* The first record: PROCESS with the trace's Go version */
static void go_version_record(struct gts *s, int64_t ts, struct rtd_record *rec)
{
	s->f[0] = (struct rtd_field){.name = "go_version", .type = RTD_FIELD_I64, .i = s->version};
	rec->kind = RTD_REC_PROCESS;
	rec->ts = ts;
	rec->mono = mono_of(s, ts);
	rec->pid = s->o.pid;
	rec->fields = s->f;
	rec->nfields = 1;
}

/* A CPUSample event as the tracker's SAMPLE record would be (on_sample),
 * straight from the ordered event: the tracker is not fed at all when
 * only samples are asked for, so a profile costs what decoding costs. */
static void direct_sample(struct gts *s, const struct rtd_gotrace_event *ev)
{
	if (!ev->name || ev->name[0] != 'C' || strcmp(ev->name, "CPUSample"))
		return;
	/* Go 1.23's conversion gives old-format samples no M (rtd_gostate) */
	int64_t m = new_format(s) ? (int64_t)ev_arg(ev, "m", (uint64_t)ev->m) : -1;
	uint64_t g = ev->g ? ev->g : RTD_GO_NOG;
	struct rtd_goev e = {.ts = ev->ts, .m = m, .g = g};
	if (new_format(s) && m >= 0 && thread_seen(s, m, ev->ts) < 0)
		return;
	uint64_t tid, lane;
	where(s, &e, g, &tid, &lane);
	struct rtd_record *r = push(s, RTD_REC_SAMPLE, ev->ts, tid, lane);
	if (!r)
		return;
	r->name = "CPUSample";
	r->value = 1;
	r->unit = "count";
	r->stack = dec_stack_of(s, ev->stack ? ev->stack : ev_arg(ev, "stack", 0));
	if (!r->stack)
		rtd_intern_stack(s->intern, NULL, 0, &r->stack);
	field_u(&s->f[0], "g", g);
	s->f[1] = (struct rtd_field){.name = "m", .type = RTD_FIELD_I64, .i = m};
	set_fields(s, r, 2);
}

static void on_metric(struct gts *s, const struct rtd_goev *e)
{
	struct rtd_record *r = push(s, RTD_REC_COUNTER, e->ts, 0, 0);
	if (!r)
		return;
	r->name = intern(s, e->name);
	r->value = (double)e->value;
	const char *colon = e->name ? strrchr(e->name, ':') : NULL;
	r->unit = colon ? intern(s, colon + 1) : NULL;
}

typedef void (*goev_fn)(struct gts *s, const struct rtd_goev *e);

/* one handler per high-level event kind (enum rtd_goev_kind) */
static const goev_fn handlers[] = {
	[RTD_GOEV_METRIC] = on_metric,
	[RTD_GOEV_LABEL] = on_label,
	[RTD_GOEV_SAMPLE] = on_sample,
	[RTD_GOEV_RANGE_BEGIN] = on_range,
	[RTD_GOEV_RANGE_ACTIVE] = on_range,
	[RTD_GOEV_RANGE_END] = on_range,
	[RTD_GOEV_TASK_BEGIN] = on_task,
	[RTD_GOEV_TASK_END] = on_task,
	[RTD_GOEV_REGION_BEGIN] = on_region,
	[RTD_GOEV_REGION_END] = on_region,
	[RTD_GOEV_LOG] = on_log,
	[RTD_GOEV_STATE] = on_state,
};

/* ---- the clock ------------------------------------------------------------ */

/* A Go 1.25+ generation's clock snapshot (the ordered decoder's Sync
 * with its four arguments): re-anchor, and measure how far the previous
 * anchor had drifted by now. */
static void on_sync(struct gts *s, const struct rtd_gotrace_event *ev)
{
	if (ev->nargs != 4)
		return;
	int64_t t = (int64_t)ev->args[0], mono = (int64_t)ev->args[1];
	struct rtd_clock *c = &s->clock;
	uint64_t err = GTS_CLOCK_READS_NS;
	if (s->anchor == ANCHOR_NANOTIME || s->anchor == ANCHOR_SNAPSHOT) {
		int64_t was = rtd_clock_to_mono(c, t);
		uint64_t drift = was > mono ? (uint64_t)(was - mono) : (uint64_t)(mono - was);
		err += drift;
		if (c->mono_error_ns > err)
			err = c->mono_error_ns;
	}
	c->flags = RTD_CLOCK_HAS_MONO;
	c->ref_ts = t;
	c->ref_mono = mono;
	c->mono_error_ns = err;
	/* wall time when the snapshot's seconds fit nanoseconds (a damaged
	 * trace's need not) */
	uint64_t sec = ev->args[2], nsec = ev->args[3];
	if (sec < (uint64_t)INT64_MAX / 1000000000 - 1 && nsec < 1000000000) {
		c->flags |= RTD_CLOCK_HAS_WALL;
		c->ref_wall = (int64_t)sec * 1000000000 + (int64_t)nsec;
		c->wall_error_ns = err;
	}
	s->anchor = ANCHOR_SNAPSHOT;
	clock_changed(s);
}

/* The anchor the caller gave, or none. */
static void init_clock(struct gts *s)
{
	struct rtd_clock *c = &s->clock;
	c->domain = RTD_CLOCK_GO;
	c->freq = 1000000000u;
	c->flags = 0;
	c->mono_error_ns = RTD_CLOCK_ERROR_UNKNOWN;
	c->wall_error_ns = RTD_CLOCK_ERROR_UNKNOWN;
	s->anchor = ANCHOR_NONE;
	if (s->o.anchor_mono) {
		c->flags = RTD_CLOCK_HAS_MONO;
		c->ref_ts = s->o.anchor_ts;
		c->ref_mono = s->o.anchor_mono;
		c->mono_error_ns = s->o.anchor_error_ns ? s->o.anchor_error_ns
							: RTD_CLOCK_ERROR_UNKNOWN;
		s->anchor = ANCHOR_CALLER;
	}
	clock_changed(s);
}

/* A Go 1.22+ trace at nanotime()'s frequency: its nanoseconds are
 * CLOCK_MONOTONIC's, rounded down to 64 ns (Linux; not_monotonic says the
 * trace comes from elsewhere). A generation at another frequency ends the
 * assumption; a clock snapshot (Go 1.25+) anchors in any case. */
static void check_nanotime(struct gts *s)
{
	int64_t f = rtd_gotrace_dec_frequency(s->dec);
	/* again at the same frequency it would change nothing (the version
	 * is the trace's, and neither branch below is undone) */
	if (s->checked_freq_set && f == s->checked_freq)
		return;
	s->checked_freq = f;
	s->checked_freq_set = true;
	if (s->version < 1022 || s->o.not_monotonic || s->not_nanotime || f <= 0)
		return;
	if (f != GTS_NANOTIME_FREQ) {
		s->not_nanotime = true;
		if (s->anchor == ANCHOR_NANOTIME)
			init_clock(s);
		return;
	}
	if (s->anchor == ANCHOR_NONE || s->anchor == ANCHOR_CALLER) {
		struct rtd_clock *c = &s->clock;
		c->flags |= RTD_CLOCK_HAS_MONO;
		c->ref_ts = c->ref_mono = 0;
		c->mono_error_ns = GTS_NANOTIME_DIV_NS;
		s->anchor = ANCHOR_NANOTIME;
		clock_changed(s);
	}
}

/* ---- pulling ---------------------------------------------------------------- */

static int gts_fail(struct gts *s, struct rtd_record *rec, int rc)
{
	uint64_t off = s->in.pos;
	const char *msg = rtd_gotrace_dec_error(s->dec, &off);
	if (!msg || !*msg)
		msg = rtd_gostate_error(s->st);
	if (!msg || !*msg)
		msg = rtd_strerror(rc);
	return rtd_source_error(rec, rc, off, msg);
}

/* Close every slice still open, at the trace's last time. */
static void close_all(struct gts *s)
{
	size_t it = 0;
	uint64_t key;
	void *v;
	while (rtd_map_next(&s->gopen, &it, &key, &v)) {
		struct gopen *o = v;
		push(s, RTD_REC_SLICE_END, s->last_ts, o->tid, o->lane);
	}
	rtd_map_free_vals(&s->gopen);
	rtd_map_init(&s->gopen, GTS_MAX_OPEN);
	it = 0;
	while (rtd_map_next(&s->ranges, &it, &key, &v))
		if ((uintptr_t)v & 1)
			push(s, RTD_REC_SLICE_END, s->last_ts, 0,
			     GTS_LANE_RANGE + ((uint64_t)(uintptr_t)v >> 1));
	it = 0;
	while (rtd_map_next(&s->regions, &it, &key, &v))
		for (uintptr_t k = (uintptr_t)v; k > 0; k--)
			push(s, RTD_REC_SLICE_END, s->last_ts, 0, RTD_GOTRACE_LANE_REGION + key);
}

/* Turn the tracker's queued high-level events into records. */
static int drain_state(struct gts *s)
{
	struct rtd_goev e;
	while (rtd_gostate_next(s->st, &e) == 1) {
		if (e.ts > s->last_ts)
			s->last_ts = e.ts;
		if (new_format(s) && e.m >= 0 && thread_seen(s, e.m, e.ts) < 0)
			return s->err;
		if (e.kind < sizeof(handlers) / sizeof(handlers[0]) && handlers[e.kind])
			handlers[e.kind](s, &e);
		if (s->err)
			return s->err;
	}
	return 0;
}

/* pump() when the decoder has no event: the input fed (or finished) until
 * it has one. Out of line: the usual event costs the decoder's call alone. */
static int __attribute__((noinline)) pump_feed(struct gts *s, struct rtd_gotrace_event *ev)
{
	int rc;
	do {
		if (s->finished)
			return 0;
		const uint8_t *p;
		int64_t n = s->eof ? 0 : rtd_input_next(&s->in, &p);
		if (n < 0)
			return (int)n;
		if (n == 0 && s->o.grow && s->o.grow(s->o.grow_ctx))
			continue; /* a live capture: more may have come */
		if (n == 0 && s->o.grow && s->in.pos == 0) {
			/* a live capture that brought nothing: an empty source
			 * (the capture says why), not a decoder's error */
			s->eof = s->finished = true;
			return 0;
		}
		if (n == 0) {
			s->eof = s->finished = true;
			if ((rc = rtd_gotrace_dec_finish(s->dec)) < 0)
				return rc;
			continue;
		}
		if ((rc = rtd_gotrace_dec_feed(s->dec, p, (size_t)n)) < 0)
			return rc;
	} while ((rc = rtd_gotrace_dec_next(s->dec, ev)) == 0);
	return rc;
}

/* The decoder's next event, fed from the input as it needs it: 1, 0 at
 * the end of the trace, or an error. */
static inline __attribute__((always_inline)) int pump_next(struct gts *s,
							   struct rtd_gotrace_event *ev)
{
	int rc = rtd_gotrace_dec_next(s->dec, ev);
	return rc != 0 ? rc : pump_feed(s, ev);
}

/* pump_next() as the decoding thread's next() (opts.threads) */
static int pump(void *ctx, struct rtd_gotrace_event *ev)
{
	return pump_next(ctx, ev);
}

/* What the source learns from each event, in the consumer's order: the
 * version, the clock. (With a decoding thread the decoder's frequency is
 * still the event's generation's: the thread waits for every event of a
 * generation to be pulled before it reads the next one's tables.) */
static inline void seen(struct gts *s, const struct rtd_gotrace_event *ev)
{
	if (!s->version)
		s->version = rtd_gotrace_dec_version(s->dec);
	/* a Go 1.22+ frequency is its generation's: asked again when the
	 * generation changes (with go_events; the tracker's path asks at
	 * every event) */
	if (!s->evs || s->version < 1022 || ev->gen != s->evs->gen) {
		if (s->evs)
			s->evs->gen = ev->gen;
		check_nanotime(s);
	}
	if (ev->type == RTD_GO2_EV_READER_SYNC && s->version >= 1022)
		on_sync(s, ev);
}

/* Read the next ordered event into the tracker (into *@ev alone with
 * opts.go_events). Returns 1, 0 at the end of the trace, or an error. */
static int step(struct gts *s, struct rtd_gotrace_event *evp)
{
	struct rtd_gotrace_event own, *ev = evp ? evp : &own;
	for (;;) {
		int rc = pump(s, ev);
		if (rc <= 0)
			return rc;
		seen(s, ev);
		if (s->evs)
			return 1;
		if (s->samples_only) {
			/* on to the next sample here, not through a pull per
			 * event */
			direct_sample(s, ev);
			if (s->err)
				return s->err;
			if (s->q.n > s->q.head)
				return 1;
			continue;
		}
		if ((rc = rtd_gostate_feed(s->st, ev)) < 0)
			return rc;
		return 1;
	}
}

/* The next ordered event with opts.go_events, in *@ev: from the decoding
 * thread once it runs (opts.threads: started at the second event, when the
 * first, read here, told the version and was handed out), else read here.
 * Returns as step(). */
static int go_step(struct gts *s, const struct rtd_gotrace_event **ev)
{
	struct gts_events *e = s->evs;
	if (s->o.threads > 1 && !e->pull_tried && s->version) {
		e->pull_tried = true;
		/* (it fails only when no thread can be had: then here) */
		(void)gt_pull_start(&e->pull, s->dec, pump, s,
				    RTD_GOTRACE_RUN_THREAD | RTD_GOTRACE_RUN_DEC_NEXT);
	}
	if (!e->pull) {
		*ev = &e->ev;
		int rc = pump(s, &e->ev);
		if (rc == 1)
			seen(s, &e->ev);
		return rc;
	}
	int rc = gt_pull_next(e->pull, ev);
	if (rc == 1)
		seen(s, *ev);
	return rc;
}

/* The next record with opts.go_events: the PROCESS record (in @scratch),
 * then each event in its shape's record (*@out), with no queue. */
static int go_next(struct gts *s, struct rtd_record *scratch, struct rtd_record **out)
{
	struct gts_events *e = s->evs;
	for (;;) {
		if (e->held) {
			e->held = false; /* the decoder has not moved: still valid */
		} else {
			int rc = s->drained ? 0 : go_step(s, &e->cur);
			if (rc == 0)
				s->drained = true;
			if (rc == 0 && s->err)
				rc = s->err;
			if (rc < 0) {
				memset(scratch, 0, sizeof(*scratch));
				return gts_fail(s, scratch, rc);
			}
			if (rc == 0)
				return 0;
		}
		if (!e->version_said) {
			e->version_said = e->held = true;
			memset(scratch, 0, sizeof(*scratch));
			go_version_record(s, e->cur->ts, scratch);
			if (!s->o.kinds || (s->o.kinds & 1u << RTD_REC_PROCESS))
				return 1;
			continue;
		}
		if (!e->want)
			continue;
		struct rtd_record *r = go_event(s, e->cur);
		if (!r || s->err) {
			memset(scratch, 0, sizeof(*scratch));
			return gts_fail(s, scratch, s->err);
		}
		*out = r;
		/* the PROCESS record is out, the thread started or not:
		 * gts_next_own() takes the next events itself */
		e->steady = s->o.threads <= 1 || e->pull_tried;
		return 1;
	}
}

/* gts_next_own() after an event it could not hand out (@rc 1: its record
 * failed), at the end, or at an error */
static int __attribute__((noinline)) go_other(struct gts *s, struct rtd_record *scratch, int rc)
{
	s->evs->steady = false;
	if (rc == 0)
		s->drained = true;
	if (rc >= 0)
		rc = s->err;
	if (rc == 0)
		return 0;
	memset(scratch, 0, sizeof(*scratch));
	return gts_fail(s, scratch, rc);
}

/* The next record with opts.go_events: after the first, each event read
 * (or taken from the decoding thread) straight into its shape's record */
static int gts_next_own(void *impl, struct rtd_record *scratch, struct rtd_record **out)
{
	struct gts *s = impl;
	struct gts_events *e = s->evs;
	if (!e->steady)
		return go_next(s, scratch, out);
	const struct rtd_gotrace_event *ev = &e->ev;
	int rc = e->pull ? gt_pull_next(e->pull, &ev) : pump_next(s, &e->ev);
	if (rc == 1) {
		/* past the first event: only a new generation's frequency or a
		 * clock snapshot changes what seen() knows */
		if (ev->gen != e->gen || ev->type == RTD_GO2_EV_READER_SYNC)
			seen(s, ev);
		struct rtd_record *r = go_event(s, ev);
		if (r && !s->err) {
			*out = r;
			return 1;
		}
	}
	return go_other(s, scratch, rc);
}

/* Up to @max next records with opts.go_events (the PROCESS record and the
 * first event one a call, as gts_next_own()): each event read (or taken
 * from the decoding thread) into its shape's next record, the shape's own
 * first, then its copies. String arguments are the decoder's: its
 * generation's tables, which strings_going() copies for the batch when
 * they go while it is filled on this thread; a decoding thread may drop
 * them once the generation's last event is pulled, and a task's name at
 * its end or a log's message lasts until the next event: a batch ends
 * after such a record. */
static int gts_next_batch(void *impl, struct rtd_record *scratch, struct rtd_record **out,
			  size_t max)
{
	struct gts *s = impl;
	struct gts_events *e = s->evs;
	if (e->after_set) {
		e->after_set = false;
		return go_other(s, scratch, e->after);
	}
	if (!e->steady) {
		struct rtd_record *r = scratch;
		int rc = go_next(s, scratch, &r);
		if (rc == 1)
			out[0] = r;
		return rc;
	}
	if (max > GTS_BATCH)
		max = GTS_BATCH;
	uint32_t batch = ++e->batch;
	size_t n = 0;
	int rc = 1;
	e->inflight = out;
	while (n < max) {
		const struct rtd_gotrace_event *ev = &e->ev;
		e->ninflight = n; /* for strings_going() */
		rc = e->pull ? gt_pull_next(e->pull, &ev) : pump_next(s, &e->ev);
		if (rc != 1)
			break;
		if (ev->gen != e->gen || ev->type == RTD_GO2_EV_READER_SYNC)
			seen(s, ev);
		const struct gts_shape *sh = NULL;
		struct rtd_record *r = go_event_in(s, ev, batch, &sh);
		if (!r || s->err)
			break;
		out[n++] = r;
		/* the decoding thread may drop a generation's strings as soon
		 * as its last event is pulled */
		if (sh->nsargf && (sh->fragile || e->pull))
			break;
	}
	e->ninflight = 0;
	if (rc == 1 && !s->err)
		return (int)n;
	if (!n)
		return go_other(s, scratch, rc);
	e->after = rc; /* the records before it first */
	e->after_set = true;
	return (int)n;
}

/* gts_each() past the first records: each event read on this thread
 * (@pull NULL) or taken from the decoding thread @pull, to @t's callback,
 * with rtd_source_take()'s checks and counts made here (every record is
 * an INSTANT): the floor and the count kept in registers, written back
 * at the end */
static inline __attribute__((always_inline)) int
each_steady(struct gts *s, struct rtd_record *scratch, struct rtd_source_take *t,
	    struct gt_pull *pull)
{
	struct gts_events *e = s->evs;
	rtd_record_fn fn = t->fn;
	void *ctx = t->ctx;
	int64_t floor = t->floor;
	uint64_t n = 0, clamped = 0;
	int rc;
	for (;;) {
		const struct rtd_gotrace_event *ev = &e->ev;
		rc = pull ? gt_pull_next(pull, &ev) : pump_next(s, &e->ev);
		if (rc != 1)
			break;
		if (ev->gen != e->gen || ev->type == RTD_GO2_EV_READER_SYNC)
			seen(s, ev);
		struct rtd_record *r = go_event(s, ev);
		if (!r || s->err)
			break;
		if (r->mono < floor) {
			r->mono = floor;
			clamped++;
		}
		floor = r->mono;
		n++;
		int v = fn(ctx, r);
		if (v) {
			t->ret = v;
			break;
		}
	}
	t->floor = floor;
	t->clamped += clamped;
	t->records[RTD_REC_INSTANT] += n;
	return t->ret ? 1 : go_other(s, scratch, rc);
}

/* The next records with opts.go_events, each handed to the walk @t as
 * soon as it is filled in its shape's one record (the PROCESS record and
 * the first event as gts_next_own() gives them): no batch, no copies, and
 * every string of a record still the decoder's while the callback reads
 * it. */
static int gts_each(void *impl, struct rtd_record *scratch, struct rtd_source_take *t)
{
	struct gts *s = impl;
	struct gts_events *e = s->evs;
	if (e->after_set) { /* what ended the last batch */
		e->after_set = false;
		return go_other(s, scratch, e->after);
	}
	while (!e->steady) {
		struct rtd_record *r = scratch;
		int rc = go_next(s, scratch, &r);
		if (rc != 1)
			return rc;
		if (rtd_source_take(t, r))
			return 1;
	}
	/* one loop for each way of reading (the thread is there or not for
	 * the loop's life): no test of it per event */
	return e->pull ? each_steady(s, scratch, t, e->pull) : each_steady(s, scratch, t, NULL);
}

/* The decoder drops a generation's strings (read on this thread, inside
 * a batch): the string arguments of the batch's records so far become
 * the source's own copies. Once a generation. */
static void strings_going(void *ctx)
{
	struct gts *s = ctx;
	struct gts_events *e = s->evs;
	for (size_t i = 0; i < e->ninflight; i++) {
		struct rtd_record *r = e->inflight[i];
		struct rtd_field *f = (struct rtd_field *)r->fields;
		for (size_t j = 0; j < r->nfields; j++)
			if (f[j].type == RTD_FIELD_STR && f[j].s)
				f[j].s = intern(s, f[j].s);
	}
}

static int gts_next(void *impl, struct rtd_record *rec)
{
	struct gts *s = impl;
	if (s->evs) {
		struct rtd_record *r = rec;
		int rc = go_next(s, rec, &r);
		if (r != rec)
			*rec = *r;
		return rc;
	}
	while (!rtd_recq_pop(&s->q, rec)) {
		if (s->drained)
			return 0;
		int rc = step(s, NULL);
		if (rc == 0) {
			if (s->samples_only)
				; /* nothing was open */
			else if ((rc = rtd_gostate_finish(s->st)) == 0 && (rc = drain_state(s)) == 0)
				close_all(s);
			s->drained = true;
			if (rc == 0)
				rc = s->err;
			if (rc < 0)
				return gts_fail(s, rec, rc);
			continue;
		}
		if (rc < 0 || (!s->samples_only && (rc = drain_state(s)) < 0)) {
			/* records queued before the error went out already: the
			 * tracker's for this event are dropped with it */
			return gts_fail(s, rec, rc);
		}
	}
	return 1;
}

static int gts_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct gts *)impl)->clock;
	return 0;
}

static void gts_free(void *impl)
{
	struct gts *s = impl;
	shapes_free(s->evs); /* its decoding thread first */
	rtd_gostate_free(s->st);
	rtd_gotrace_dec_free(s->dec);
	rtd_intern_free(s->intern);
	free(s->frames);
	rtd_recq_free(&s->q);
	rtd_map_free(&s->threads);
	rtd_map_free_vals(&s->gopen);
	rtd_map_free(&s->ranges);
	rtd_map_free(&s->regions);
	rtd_input_close(&s->in);
	free(s);
}

static const struct rtd_source_ops gts_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "gotrace",
	.next = gts_next,
	.clock = gts_clock,
	.free = gts_free,
};

/* With opts.go_events: each event in its shape's record */
static const struct rtd_source_ops gts_events_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "gotrace",
	.next = gts_next,
	.clock = gts_clock,
	.free = gts_free,
	.next_own = gts_next_own,
	.next_batch = gts_next_batch,
	.each = gts_each,
};

static int64_t read_at(void *buf, size_t len, uint64_t off, void *ctx)
{
	struct gts *s = ctx;
	int64_t got = rtd_input_pread(&s->in, buf, len, off);
	/* a live capture: what is asked for past its end may come */
	while (got >= 0 && (size_t)got < len && s->o.grow && s->o.grow(s->o.grow_ctx)) {
		int64_t n = rtd_input_pread(&s->in, (uint8_t *)buf + got, len - (size_t)got,
					    off + (uint64_t)got);
		if (n < 0)
			return n;
		got += n;
	}
	return got;
}

static rtd_source *gts_new(struct gts *s, int *err)
{
	RTD_OPTS(rtd_gotrace_opts, o, .mode = RTD_GOTRACE_ORDERED);
	init_clock(s);
	const uint32_t direct = 1u << RTD_REC_SAMPLE | 1u << RTD_REC_THREAD |
				1u << RTD_REC_PROCESS | 1u << RTD_REC_ERROR;
	s->samples_only = s->o.kinds && !(s->o.kinds & ~direct);
	rtd_recq_init(&s->q, 0);
	rtd_map_init(&s->threads, GTS_MAX_THREADS);
	rtd_map_init(&s->gopen, GTS_MAX_OPEN);
	rtd_map_init(&s->ranges, GTS_MAX_OPEN);
	rtd_map_init(&s->regions, GTS_MAX_OPEN);
	s->dec = rtd_gotrace_dec_new(&o);
	s->intern = rtd_intern_new();
	s->evs = s->o.go_events ? calloc(1, sizeof(*s->evs)) : NULL;
	if (s->evs) {
		s->evs->want = !s->o.kinds || (s->o.kinds & 1u << RTD_REC_INSTANT);
		s->evs->gen = UINT64_MAX; /* none seen yet */
	}
	int rc = -ENOMEM;
	rtd_source *src = NULL;
	/* a stream cannot be read again: the decoder keeps what it needs */
	if (s->dec && s->intern && (s->evs || !s->o.go_events) &&
	    (s->in.read || (rc = rtd_gotrace_dec_set_source(s->dec, read_at, s)) == 0) &&
	    (s->st = rtd_gostate_new(s->dec)))
		src = rtd_source_new(s->evs ? &gts_events_ops : &gts_ops, s);
	if (src && s->evs) /* (a decoding thread, when it starts, sets its own) */
		rtd_gotrace_dec_set_tables_hook(s->dec, strings_going, s);
	if (!src) {
		gts_free(s);
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
	}
	return src;
}

/* A source over the file @path, or the @len bytes at @buf when @path is NULL */
static rtd_source *gts_make(const char *path, const void *buf, size_t len,
			    const struct rtd_gotrace_source_opts *opts, int *err)
{
	struct gts *s = calloc(1, sizeof(*s));
	int rc = s ? rtd_input_setup(&s->in, path, buf, len, &s->o, sizeof(s->o), opts,
				     RTD_OPTS_END(rtd_gotrace_source_opts, field_want_ctx))
		   : -ENOMEM;
	if (rc < 0) {
		free(s);
		if (err)
			*err = rc;
		return NULL;
	}
	return gts_new(s, err);
}

rtd_source *rtd_gotrace_source_open(const char *path, const struct rtd_gotrace_source_opts *opts,
				    int *err)
{
	return gts_make(path, NULL, 0, opts, err);
}

rtd_source *rtd_gotrace_source_mem(const void *buf, size_t len,
				   const struct rtd_gotrace_source_opts *opts, int *err)
{
	return gts_make(NULL, buf, len, opts, err);
}

rtd_source *rtd_gotrace_source_reader(int64_t (*read)(void *ctx, void *buf, size_t len),
				      void *ctx, const struct rtd_gotrace_source_opts *opts,
				      int *err)
{
	struct gts *s = read ? calloc(1, sizeof(*s)) : NULL;
	int rc = !read ? -RTD_E_INVAL : !s ? -ENOMEM
		 : rtd_opts_copy(&s->o, sizeof(s->o), opts,
				 RTD_OPTS_END(rtd_gotrace_source_opts, field_want_ctx));
	if (rc == 0 && (s->o.grow || (rc = rtd_input_reader(&s->in, read, ctx)) < 0))
		rc = rc ? rc : -RTD_E_INVAL; /* a stream does not grow */
	if (rc < 0) {
		free(s);
		if (err)
			*err = rc;
		return NULL;
	}
	return gts_new(s, err);
}
