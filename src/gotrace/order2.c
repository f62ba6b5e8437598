/* SPDX-License-Identifier: MIT */
/*
 * order2.c - ordered mode for the new format (Go 1.22+).
 *
 * One generation at a time (memory bounded by a generation's batches):
 * its batches are collected, the string, stack and CPU-sample batches and
 * the frequency (or Go 1.25 sync batch) are parsed (v2_gen_begin), then
 * the per-M event streams are merged lazily, one step per event handed
 * out (v2_gen_step), the way Go's internal/trace reader.go does: a heap
 * of per-M cursors, the earliest event that the scheduler state machine
 * (order.go) lets advance goes next; an event that breaks an invariant
 * is an error with Go's message. An error met after a complete
 * generation comes after that generation's events, as in Go's reader.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/v2state.h"

enum { PR_BAD, PR_RUNNING, PR_IDLE, PR_SYSCALL, PR_SYSCALL_ABANDONED };
enum { GC_UNDETERMINED, GC_NOT_RUNNING, GC_RUNNING };
#define NOG UINT64_MAX
#define NOP (-1)
#define NOM UINT64_MAX
enum req { MAY, MUST, MUSTNOT };

static const char *const gstatus_name[] = {"Bad", "Runnable", "Running", "Syscall", "Waiting"};
static const char *const pstatus_name[] = {"Bad", "Running", "Idle", "Syscall", "Bad"};

struct range {
	uint8_t typ;
	uint64_t desc;
};
struct ranges {
	struct range *r;
	size_t n, cap;
};
/* an open region: its name outlives the generation's strings, kept in
 * place when short (no allocation for the common region), else copied */
struct region {
	uint64_t task;
	char *name; /* NULL: in small */
	char small[24];
};

static const char *region_name(const struct region *r)
{
	return r->name ? r->name : r->small;
}
struct gst {
	uint8_t status;
	uint64_t sgen, seq;
	struct region *reg;
	size_t nreg, capreg;
	struct ranges rs;
};
struct pst {
	uint8_t status;
	uint64_t sgen, seq;
	struct ranges rs;
};
struct mst {
	uint64_t g;
	int64_t p;
};
struct task {
	char *name;
	uint64_t parent;
};

/*
 * Goroutine and P states by id: Go numbers both from small integers up,
 * so ids below a limit index an array (grown as they appear), larger ones
 * go to a hash table. A state stays at its address until a state is
 * created (as in the hash table alone); n counts both, up to max.
 */
struct dtab {
	uint8_t *vals; /* by id, for ids below ncap */
	uint8_t *used;
	size_t ncap, lim, vsz, n, max;
	struct rtd_vmap big; /* ids from lim up */
};

struct v2_order {
	struct dtab gs, ps;
	struct rtd_vmap ms, tasks;
	uint64_t gc_seq;
	int gc_state;
	uint64_t initial_gen;
	uint64_t *morder; /* Ms in order of first appearance (for ties) */
	/* names of tasks ended by the last step, for its UserTaskEnd events:
	 * freed when the next step starts (its events are out by then) */
	char **ended;
	size_t nended, capended;
};

struct ctx {
	uint64_t g, m;
	int64_t p;
};

/* ---- small helpers ---- */

static void dtab_init(struct dtab *t, size_t vsz, size_t lim, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->vsz = vsz;
	t->lim = lim;
	t->max = max;
	rtd_vmap_init(&t->big, vsz, 0);
}

static void dtab_free(struct dtab *t)
{
	free(t->vals);
	free(t->used);
	t->vals = t->used = NULL;
	t->ncap = t->n = 0;
	rtd_vmap_free(&t->big);
}

/* dtab_get() past the array's hit: find, or create (zeroed); NULL when
 * there are max states already or no memory. */
static void *__attribute__((noinline)) dtab_get_slow(struct dtab *t, uint64_t key, bool create,
						     bool *created)
{
	if (created)
		*created = false;
	if (key >= t->lim) {
		void *v = rtd_vmap_get(&t->big, key, false, NULL, NULL);
		if (v || !create || t->n >= t->max)
			return v;
		if (!(v = rtd_vmap_get(&t->big, key, true, created, NULL)))
			return NULL;
		t->n++;
		return v;
	}
	if (!create || t->n >= t->max)
		return NULL;
	size_t nc = t->ncap ? t->ncap : 64;
	while (nc <= key)
		nc *= 2;
	uint8_t *v = realloc(t->vals, nc * t->vsz);
	if (!v)
		return NULL;
	t->vals = v;
	uint8_t *u = realloc(t->used, nc);
	if (!u)
		return NULL;
	t->used = u;
	memset(t->used + t->ncap, 0, nc - t->ncap);
	t->ncap = nc;
	t->used[key] = 1;
	t->n++;
	memset(t->vals + key * t->vsz, 0, t->vsz);
	if (created)
		*created = true;
	return t->vals + key * t->vsz;
}

static inline void *dtab_get(struct dtab *t, uint64_t key, bool create, bool *created)
{
	if (key < t->ncap) {
		if (t->used[key]) {
			if (created)
				*created = false;
			return t->vals + key * t->vsz;
		}
		if (!create || t->n >= t->max)
			return NULL;
		t->used[key] = 1;
		t->n++;
		memset(t->vals + key * t->vsz, 0, t->vsz);
		if (created)
			*created = true;
		return t->vals + key * t->vsz;
	}
	return dtab_get_slow(t, key, create, created);
}

static void dtab_del(struct dtab *t, uint64_t key)
{
	if (key < t->ncap) {
		if (t->used[key]) {
			t->used[key] = 0;
			t->n--;
		}
	} else if (rtd_vmap_get(&t->big, key, false, NULL, NULL)) {
		rtd_vmap_del(&t->big, key);
		t->n--;
	}
}

static void free_g(struct gst *g)
{
	for (size_t i = 0; i < g->nreg; i++)
		free(g->reg[i].name);
	free(g->reg);
	free(g->rs.r);
}

static void free_ended(struct v2_order *o)
{
	for (size_t i = 0; i < o->nended; i++)
		free(o->ended[i]);
	o->nended = 0;
}

void v2_order_free(struct v2_order *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->gs.ncap; i++)
		if (o->gs.used[i])
			free_g((struct gst *)(o->gs.vals + i * o->gs.vsz));
	for (size_t i = 0; i < o->gs.big.cap; i++)
		if (o->gs.big.used[i] == 1)
			free_g((struct gst *)(o->gs.big.vals + i * o->gs.big.vsz));
	for (size_t i = 0; i < o->ps.ncap; i++)
		if (o->ps.used[i])
			free(((struct pst *)(o->ps.vals + i * o->ps.vsz))->rs.r);
	for (size_t i = 0; i < o->ps.big.cap; i++)
		if (o->ps.big.used[i] == 1)
			free(((struct pst *)(o->ps.big.vals + i * o->ps.big.vsz))->rs.r);
	for (size_t i = 0; i < o->tasks.cap; i++)
		if (o->tasks.used[i] == 1)
			free(((struct task *)(o->tasks.vals + i * o->tasks.vsz))->name);
	free_ended(o);
	free(o->ended);
	dtab_free(&o->gs);
	dtab_free(&o->ps);
	rtd_vmap_free(&o->ms);
	rtd_vmap_free(&o->tasks);
	free(o);
}

static struct v2_order *order_new(void)
{
	struct v2_order *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	dtab_init(&o->gs, sizeof(struct gst), 1u << 16, 1u << 24);
	dtab_init(&o->ps, sizeof(struct pst), 1u << 10, RTD_GOTRACE_MAX_PROCS);
	rtd_vmap_init(&o->ms, sizeof(struct mst), 1u << 20);
	rtd_vmap_init(&o->tasks, sizeof(struct task), 1u << 22);
	return o;
}

static const char *evname(unsigned t)
{
	return t <= V2_MAX_TYPE && v2_specs[t].name ? v2_specs[t].name : "?";
}

/* ---- the generation being ordered ---- */

struct cursor {
	uint64_t m;
	size_t bi;      /* index into the M's batch list, SIZE_MAX before the first */
	size_t *blist;  /* batches of this M */
	size_t nbl;
	size_t data, len; /* the current batch's data in d->in (len 0: none) */
	int64_t btime;  /* its time (ticks) */
	size_t pos;     /* in the current batch's data */
	int64_t last;   /* Go's batchCursor.lastTs (ns; 0: take the batch's) */
	bool have;
	/* the M's state in o->ms while the table has capacity ms_cap (Ms are
	 * never deleted: the table moves only when it grows) */
	struct mst *ms;
	size_t ms_cap;
	struct v2_out ev;
};

struct genctx {
	rtd_gotrace_dec *d;
	struct v2_state *st;
	struct v2_order *o;
	double freq; /* ns per tick */
	uint64_t gen;
	struct cursor *cur;
	size_t ncur;
	struct v2_out *samples;
	size_t nsamples, isample;
	/* the event types a batch may have: timed, not experimental */
	const struct v2_spec *timed[V2_MAX_TYPE + 1];
	bool ids[V2_MAX_TYPE + 1]; /* the type names a stack or a string */
	/* the input ended inside this generation before its tables: ids
	 * it names may be missing (st->cut) */
	bool cut;
	char err[512];
};

static int fail(struct genctx *c, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct genctx *c, uint64_t off, const char *fmt, ...)
{
	char msg[480];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gtd_fail(c->d, -RTD_E_GO_ORDER, off, "%s (event at offset %llu, generation %llu)",
			msg, (unsigned long long)off, (unsigned long long)c->gen);
}

/* The output queue is full: make room (out of line: rare). */
static int __attribute__((noinline)) grow_q(struct genctx *c, uint64_t off)
{
	struct v2_state *st = c->st;
	struct v2_out *q = rtd_grow(st->q, &st->capq, st->nq + 1, sizeof(*q), 1024);
	if (!q)
		return gtd_fail(c->d, -ENOMEM, off, "out of memory");
	st->q = q;
	return 0;
}

/* The next slot of the output queue (NULL: out of memory, in d->err). */
static inline struct v2_out *push_slot(struct genctx *c, uint64_t off)
{
	struct v2_state *st = c->st;
	if (st->nq == st->capq && grow_q(c, off) < 0)
		return NULL;
	return &st->q[st->nq++];
}

static inline int push(struct genctx *c, const struct v2_out *ev)
{
	struct v2_out *q = push_slot(c, ev->off);
	if (!q)
		return c->d->err;
	*q = *ev;
	return 0;
}

/* Go's frequency.mul: ticks (unsigned on the wire) to ns in float64. */
static int64_t ns(const struct genctx *c, uint64_t ticks)
{
	return f2i((double)ticks * c->freq);
}

/* One argument at p, which has at least 10 bytes (rd_varuint's LEB128:
 * *bad set for an encoding longer than 64 bits). */
static inline uint64_t varuint_at(const uint8_t **pp, bool *bad)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	if (v >= 0x80) {
		v &= 0x7f;
		for (unsigned shift = 7;; shift += 7) {
			uint64_t b = *p++;
			if (shift == 63 && (b & 0x7e)) {
				*bad = true;
				break;
			}
			v |= (b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
			if (shift == 63) {
				*bad = true;
				break;
			}
		}
	}
	*pp = p;
	return v;
}

/* Read the next timed event of an M (Go's batchCursor.nextEvent). */
static inline __attribute__((always_inline)) int cursor_next(struct genctx *c, struct cursor *k)
{
	rtd_gotrace_dec *d = c->d;
	for (;;) {
		if (k->pos >= k->len) {
			/* the next batch (empty ones are skipped) */
			if (++k->bi >= k->nbl) {
				k->bi = k->nbl;
				k->len = 0;
				k->have = false;
				return 0;
			}
			const struct v2_batch *b = &c->st->b[k->blist[k->bi]];
			k->data = b->data;
			k->len = b->len;
			k->btime = b->time;
			k->pos = 0;
			k->last = 0;
			continue;
		}
		/* Go converts the batch time and each delta to ns separately. */
		if (k->last == 0)
			k->last = ns(c, (uint64_t)k->btime);
		const uint8_t *p = d->in.data + k->data + k->pos;
		size_t left = k->len - k->pos;
		uint64_t off = (uint64_t)(k->data + k->pos) + d->base;
		uint8_t t = p[0];
		const struct v2_spec *sp = t <= V2_MAX_TYPE ? c->timed[t] : NULL;
		if (!sp)
			return fail(c, off, "unexpected event type %u in the batch of thread %lld",
				    t, (long long)(int64_t)k->m);
		/* a fixed-size clear: the rest after nargs is a short memset
		 * (rep stos) otherwise, slow for this size */
		memset(k->ev.args, 0, sizeof(k->ev.args));
		unsigned n = sp->nargs;
		size_t used;
		if (left > 10 * (size_t)n) {
			/* room for the longest arguments: no bounds to check */
			const uint8_t *q = p + 1;
			bool bad = false;
			for (unsigned i = 0; i < n; i++)
				k->ev.args[i] = varuint_at(&q, &bad);
			if (bad)
				return fail(c, off, "%s runs past the end of its batch", sp->name);
			used = (size_t)(q - p);
		} else {
			rtd_rd r;
			rd_init(&r, p, left);
			rd_u8(&r);
			for (unsigned i = 0; i < n; i++)
				k->ev.args[i] = rd_varuint(&r);
			if (!rd_ok(&r))
				return fail(c, off, "%s runs past the end of its batch", sp->name);
			used = rd_off(&r);
		}
		k->ev.g = 0;
		k->ev.p = 0;
		k->ev.task_parent = 0;
		k->ev.task_name = NULL;
		k->pos += used;
		k->last = wrap_add(ns(c, k->ev.args[0]), k->last);
		k->ev.off = off;
		k->ev.type = t;
		k->ev.nargs = (uint8_t)n;
		k->ev.time = k->last;
		k->ev.m = k->m;
		k->have = true;
		return 1;
	}
}

/* ---- the state machine (trace/order.go) ---- */

static int __attribute__((noinline)) check_ctx(struct genctx *c, const struct v2_out *ev,
						struct ctx x, enum req th, enum req pr,
						enum req go)
{
	if (th == MUST && x.m == NOM)
		return fail(c, ev->off, "expected a thread but didn't have one");
	if (th == MUSTNOT && x.m != NOM)
		return fail(c, ev->off, "expected no thread but had one");
	if (pr == MUST && x.p == NOP)
		return fail(c, ev->off, "expected a proc but didn't have one");
	if (pr == MUSTNOT && x.p != NOP)
		return fail(c, ev->off, "expected no proc but had one");
	if (go == MUST && x.g == NOG)
		return fail(c, ev->off, "expected a goroutine but didn't have one");
	if (go == MUSTNOT && x.g != NOG)
		return fail(c, ev->off, "expected no goroutine but had one");
	return 0;
}

#define USERGO MUST, MUST, MUST

static bool succeeds(uint64_t gen, uint64_t seq, uint64_t sgen, uint64_t sseq)
{
	return gen == sgen && seq == sseq + 1;
}

static struct gst *gget(struct genctx *c, uint64_t g)
{
	return dtab_get(&c->o->gs, g, false, NULL);
}

static struct pst *pget(struct genctx *c, int64_t p)
{
	return dtab_get(&c->o->ps, (uint64_t)p, false, NULL);
}

static int range_add(struct genctx *c, struct ranges *rs, uint8_t typ, uint64_t desc)
{
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 4;
		struct range *r = realloc(rs->r, nc * sizeof(*r));
		if (!r)
			return gtd_fail(c->d, -ENOMEM, 0, "out of memory");
		rs->r = r;
		rs->cap = nc;
	}
	rs->r[rs->n++] = (struct range){typ, desc};
	return 0;
}

static bool range_has(const struct ranges *rs, uint8_t typ, uint64_t desc)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].typ == typ && rs->r[i].desc == desc)
			return true;
	return false;
}

static uint8_t start_of(uint8_t typ)
{
	return v2_specs[typ].start_ev ? v2_specs[typ].start_ev : typ;
}

static int range_begin(struct genctx *c, const struct v2_out *ev, struct ranges *rs,
		       uint64_t desc)
{
	uint8_t t = start_of(ev->type);
	if (range_has(rs, t, desc))
		return fail(c, ev->off, "discovered event already in-flight for when starting event %s",
			    evname(t));
	return range_add(c, rs, t, desc);
}

static int range_active(struct genctx *c, const struct v2_out *ev, struct ranges *rs,
			bool initial)
{
	uint8_t t = start_of(ev->type);
	if (initial) {
		if (range_has(rs, t, 0))
			return fail(c, ev->off, "found named active range already in first gen: %s",
				    evname(t));
		return range_add(c, rs, t, 0);
	}
	if (!range_has(rs, t, 0))
		return fail(c, ev->off, "resource is missing active range: %s", evname(t));
	return 0;
}

static int range_end(struct genctx *c, const struct v2_out *ev, struct ranges *rs,
		     uint64_t *desc)
{
	uint8_t t = v2_specs[ev->type].start_ev;
	for (size_t i = 0; i < rs->n; i++) {
		if (rs->r[i].typ != t)
			continue;
		if (desc)
			*desc = rs->r[i].desc;
		rs->r[i] = rs->r[--rs->n];
		return 0;
	}
	return fail(c, ev->off, "tried to end event %s, but not in-flight", evname(t));
}

static const char *string_of(struct genctx *c, uint64_t id, bool *ok)
{
	const char *s = gtd_str_get(c->d, id, NULL);
	if (!s && id && c->st->at_end) /* cut before its strings (check_ids_of) */
		c->cut = c->st->cut = true;
	/* id 0 is the empty string; a cut generation may lack its strings */
	*ok = s != NULL || id == 0 || c->cut;
	return s ? s : "";
}

/*
 * One step of the state machine, as Go's orderingDispatch handlers see it:
 * the event, its arguments after the time delta (Go's ev.args), the
 * generation, and the thread's context before (cur) and after (nw).
 * A handler returns ADVANCE (the event goes out with the context it had),
 * OUT (it put the event, and those it implies, out itself), 0 when the
 * event cannot go yet, or an error.
 */
struct step {
	struct genctx *c;
	struct v2_out *ev;
	const uint64_t *a;
	uint64_t gen;
	bool initial; /* the first generation */
	struct ctx cur, nw;
};
enum { ADVANCE = 1, OUT = 2 };

typedef int (*step_fn)(struct step *s);

/* The thread's context as the event needs it (check_ctx() says what is
 * wrong; the requirements are constants, so this is a few compares). */
static inline int need(struct step *s, enum req th, enum req pr, enum req go)
{
	const struct ctx x = s->cur;
	if ((th == MUST && x.m == NOM) || (th == MUSTNOT && x.m != NOM) ||
	    (pr == MUST && x.p == NOP) || (pr == MUSTNOT && x.p != NOP) ||
	    (go == MUST && x.g == NOG) || (go == MUSTNOT && x.g != NOG))
		return check_ctx(s->c, s->ev, x, th, pr, go);
	return 0;
}

static int fail_at(struct step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(struct step *s, const char *fmt, ...)
{
	char msg[480];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail(s->c, s->ev->off, "%s", msg);
}

static int cap_fail(struct step *s, const char *what)
{
	return gtd_fail(s->c->d, -RTD_E_CAP, s->ev->off, "too many %s", what);
}

static const char *name_of(const struct step *s)
{
	return evname(s->ev->type);
}

/*
 * The goroutine on the thread, which must exist and be in @status (Go's
 * message names @word for the state, which is not always @status's).
 */
static int __attribute__((noinline)) cur_g_fail(struct step *s, const struct gst *gs,
						 const char *word)
{
	if (!gs)
		return fail_at(s, "event %s for goroutine (%llu) that doesn't exist", name_of(s),
			       (unsigned long long)s->cur.g);
	return fail_at(s, "%s event for goroutine that's not %s", name_of(s), word);
}

static inline int cur_g_in(struct step *s, uint8_t status, const char *word, struct gst **gs)
{
	*gs = gget(s->c, s->cur.g);
	if (!*gs || (*gs)->status != status)
		return cur_g_fail(s, *gs, word);
	return 0;
}

/* The goroutine on the thread, in whatever state, for a range event. */
static int cur_g_known(struct step *s, struct gst **gs)
{
	*gs = gget(s->c, s->cur.g);
	if (!*gs)
		return fail_at(s, "encountered event of type %u without known state for current goroutine %llu",
			       s->ev->type, (unsigned long long)s->cur.g);
	return 0;
}

/* The P on the thread, which must exist. */
static int cur_p(struct step *s, struct pst **ps)
{
	*ps = pget(s->c, s->cur.p);
	if (!*ps)
		return fail_at(s, "uninitialized proc %lld found during %s", (long long)s->cur.p,
			       name_of(s));
	return 0;
}

/* A goroutine the event creates: it must not exist yet. */
static int new_g(struct step *s, uint64_t gid, uint8_t status, const char *in)
{
	bool created;
	struct gst *gs = dtab_get(&s->c->o->gs, gid, true, &created);
	if (!gs)
		return cap_fail(s, "goroutines");
	if (!created)
		return fail_at(s, "tried to create goroutine (%llu)%s that already exists",
			       (unsigned long long)gid, in);
	gs->status = status;
	gs->sgen = s->gen;
	return 0;
}

static void del_g(struct step *s, uint64_t gid, struct gst *gs)
{
	free_g(gs);
	dtab_del(&s->c->o->gs, gid);
}

/* Put out an event the step implies: ahead of the event itself, unless
 * the handler has put that out already (and answers OUT). */
static int imply(struct step *s, const struct v2_out *x)
{
	return push(s->c, x);
}

/* A copy of the event as the synthetic event @type, its arguments zero
 * (Go's reader makes them for GoSwitch and GoDestroySyscall). */
static struct v2_out synth(const struct step *s, uint8_t type)
{
	struct v2_out x = *s->ev;
	memset(x.args, 0, sizeof(x.args));
	x.type = type;
	x.nargs = (uint8_t)v2_specs[type].nargs;
	return x;
}

/* ---- procs ---- */

/* The thread whose P is @pid, the one a ProcStatus of an abandoned
 * syscall is about to have stolen. */
static int find_sched_ctx(struct step *s, int64_t pid)
{
	struct v2_order *o = s->c->o;
	bool found = false;
	for (size_t i = 0; i < o->ms.cap; i++) {
		if (o->ms.used[i] != 1)
			continue;
		struct mst *x = (struct mst *)(o->ms.vals + i * o->ms.vsz);
		if (x->p == pid) {
			s->cur = (struct ctx){x->g, o->ms.keys[i], pid};
			found = true;
		}
	}
	if (!found)
		return fail_at(s, "failed to find sched context for proc %lld that's about to be stolen",
			       (long long)pid);
	return ADVANCE;
}

static int proc_status(struct step *s)
{
	int64_t pid = (int64_t)s->a[0];
	uint64_t status = s->a[1];
	if (status > PR_SYSCALL_ABANDONED)
		return fail_at(s, "invalid status for proc %lld: %llu", (long long)pid,
			       (unsigned long long)status);
	bool was_running = false;
	struct pst *ps = pget(s->c, pid);
	if (ps) {
		if (status == PR_SYSCALL_ABANDONED && ps->status == PR_SYSCALL) {
			was_running = true;
			s->ev->args[2] = PR_SYSCALL;
		} else if (status == PR_SYSCALL_ABANDONED && ps->status == PR_SYSCALL_ABANDONED) {
			s->ev->args[2] = PR_SYSCALL_ABANDONED;
		} else if (ps->status != status) {
			return fail_at(s, "inconsistent status for proc %lld: old %s vs. new %s",
				       (long long)pid, pstatus_name[ps->status], pstatus_name[status]);
		}
	} else {
		ps = dtab_get(&s->c->o->ps, (uint64_t)pid, true, NULL);
		if (!ps)
			return cap_fail(s, "procs");
		ps->status = (uint8_t)status;
	}
	ps->sgen = s->gen;
	ps->seq = 0;
	if (status == PR_RUNNING || status == PR_SYSCALL)
		s->nw.p = pid;
	if (status == PR_SYSCALL_ABANDONED && was_running)
		return find_sched_ctx(s, pid);
	return ADVANCE;
}

static int proc_start(struct step *s)
{
	int64_t pid = (int64_t)s->a[0];
	struct pst *ps = pget(s->c, pid);
	if (!ps || ps->status != PR_IDLE || !succeeds(s->gen, s->a[1], ps->sgen, ps->seq) ||
	    s->cur.p != NOP)
		return 0;
	int rc = need(s, MUST, MUSTNOT, MAY);
	if (rc < 0)
		return rc;
	ps->status = PR_RUNNING;
	ps->sgen = s->gen;
	ps->seq = s->a[1];
	s->nw.p = pid;
	return ADVANCE;
}

static int proc_stop(struct step *s)
{
	struct pst *ps = pget(s->c, s->cur.p);
	if (!ps)
		return fail_at(s, "event ProcStop for proc (%lld) that doesn't exist",
			       (long long)s->cur.p);
	if (ps->status != PR_RUNNING && ps->status != PR_SYSCALL)
		return fail_at(s, "ProcStop event for proc that's not Running or Syscall");
	int rc = need(s, MUST, MUST, MAY);
	if (rc < 0)
		return rc;
	ps->status = PR_IDLE;
	s->nw.p = NOP;
	return ADVANCE;
}

static int proc_steal(struct step *s)
{
	int64_t pid = (int64_t)s->a[0];
	uint64_t mid = s->a[2];
	struct pst *ps = pget(s->c, pid);
	if (!ps || (ps->status != PR_SYSCALL && ps->status != PR_SYSCALL_ABANDONED) ||
	    !succeeds(s->gen, s->a[1], ps->sgen, ps->seq))
		return 0;
	int rc = need(s, MUST, MAY, MAY);
	if (rc < 0)
		return rc;
	uint8_t old = ps->status;
	ps->status = PR_IDLE;
	ps->sgen = s->gen;
	ps->seq = s->a[1];
	if (old == PR_SYSCALL_ABANDONED)
		return ADVANCE;
	if (mid == s->cur.m) {
		if (s->cur.p != pid)
			return fail_at(s, "tried to self-steal proc %lld (thread %llu), but got proc %lld instead",
				       (long long)pid, (unsigned long long)mid, (long long)s->cur.p);
		s->nw.p = NOP;
		return ADVANCE;
	}
	struct mst *x = rtd_vmap_get(&s->c->o->ms, mid, false, NULL, NULL);
	if (!x)
		return fail_at(s, "stole proc from non-existent thread %llu", (unsigned long long)mid);
	if (x->p != pid)
		return fail_at(s, "tried to steal proc %lld from thread %llu, but got proc %lld instead",
			       (long long)pid, (unsigned long long)mid, (long long)x->p);
	x->p = NOP;
	return ADVANCE;
}

/* ---- goroutines ---- */

/* A goroutine in a syscall on thread @mid: that thread has it. */
static int syscall_thread(struct step *s, uint64_t gid, uint64_t mid)
{
	if (mid == NOM)
		return fail_at(s, "found goroutine %llu in syscall without a thread",
			       (unsigned long long)gid);
	if (mid == s->cur.m) {
		if (!s->initial && s->cur.g != gid)
			return fail_at(s, "inconsistent thread for syscalling goroutine %llu: thread has goroutine %llu",
				       (unsigned long long)gid, (unsigned long long)s->cur.g);
		s->nw.g = gid;
		return ADVANCE;
	}
	bool created;
	struct mst *x = rtd_vmap_get(&s->c->o->ms, mid, true, &created, NULL);
	if (!x)
		return cap_fail(s, "threads");
	if (!created) {
		if (x->g != gid)
			return fail_at(s, "inconsistent thread for syscalling goroutine %llu: thread has goroutine %llu",
				       (unsigned long long)gid, (unsigned long long)x->g);
		s->cur.g = x->g;
	} else {
		x->g = gid;
		x->p = NOP;
	}
	s->cur.m = mid;
	return ADVANCE;
}

static int go_status(struct step *s)
{
	uint64_t gid = s->a[0], mid = s->a[1], status = s->a[2];
	if (status > RTD_GO_STATUS_WAITING)
		return fail_at(s, "invalid status for goroutine %llu: %llu", (unsigned long long)gid,
			       (unsigned long long)status);
	struct gst *gs = gget(s->c, gid);
	if (gs) {
		if (gs->status != status)
			return fail_at(s, "inconsistent status for goroutine %llu: old %s vs. new %s",
				       (unsigned long long)gid, gstatus_name[gs->status],
				       gstatus_name[status]);
		gs->sgen = s->gen;
		gs->seq = 0;
	} else if (s->initial) {
		gs = dtab_get(&s->c->o->gs, gid, true, NULL);
		if (!gs)
			return cap_fail(s, "goroutines");
		gs->status = (uint8_t)status;
		gs->sgen = s->gen;
	} else {
		return fail_at(s, "found goroutine status for new goroutine after the first generation: id=%llu status=%s",
			       (unsigned long long)gid, gstatus_name[status]);
	}
	if (status == RTD_GO_STATUS_RUNNING)
		s->nw.g = gid;
	else if (status == RTD_GO_STATUS_SYSCALL)
		return syscall_thread(s, gid, mid);
	return ADVANCE;
}

static int go_create(struct step *s)
{
	int rc = need(s, MUST, MUST, MAY);
	if (rc < 0)
		return rc;
	struct gst *gs = gget(s->c, s->cur.g);
	if (gs && gs->status != RTD_GO_STATUS_RUNNING)
		return fail_at(s, "%s event for goroutine that's not Running", name_of(s));
	bool blocked = s->ev->type == RTD_GO2_EV_GO_CREATE_BLOCKED;
	rc = new_g(s, s->a[0], blocked ? RTD_GO_STATUS_WAITING : RTD_GO_STATUS_RUNNABLE, "");
	return rc < 0 ? rc : ADVANCE;
}

/* GoDestroy, GoStop, GoBlock: the running goroutine stops running. */
static inline __attribute__((always_inline)) int go_stop_running(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	if (rc < 0 || (rc = cur_g_in(s, RTD_GO_STATUS_RUNNING, "Running", &gs)) < 0)
		return rc;
	if (s->ev->type == RTD_GO2_EV_GO_DESTROY)
		del_g(s, s->cur.g, gs);
	else
		gs->status = s->ev->type == RTD_GO2_EV_GO_STOP ? RTD_GO_STATUS_RUNNABLE : RTD_GO_STATUS_WAITING;
	s->nw.g = NOG;
	return ADVANCE;
}

static inline __attribute__((always_inline)) int go_start(struct step *s)
{
	struct gst *gs = gget(s->c, s->a[0]);
	if (!gs || gs->status != RTD_GO_STATUS_RUNNABLE || !succeeds(s->gen, s->a[1], gs->sgen, gs->seq))
		return 0;
	int rc = need(s, MUST, MUST, MUSTNOT);
	if (rc < 0)
		return rc;
	gs->status = RTD_GO_STATUS_RUNNING;
	gs->sgen = s->gen;
	gs->seq = s->a[1];
	s->nw.g = s->a[0];
	return ADVANCE;
}

static inline __attribute__((always_inline)) int go_unblock(struct step *s)
{
	struct gst *gs = gget(s->c, s->a[0]);
	if (!gs || gs->status != RTD_GO_STATUS_WAITING || !succeeds(s->gen, s->a[1], gs->sgen, gs->seq))
		return 0;
	gs->status = RTD_GO_STATUS_RUNNABLE;
	gs->sgen = s->gen;
	gs->seq = s->a[1];
	return ADVANCE;
}

/*
 * GoSwitch, GoSwitchDestroy: the running goroutine hands the thread to a
 * waiting one. Out go the event, the implied GoBlock (no reason, no stack)
 * or GoDestroy of the first, and the GoStart of the second.
 */
static int go_switch(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	if (rc < 0 || (rc = cur_g_in(s, RTD_GO_STATUS_RUNNING, "Running", &gs)) < 0)
		return rc;
	struct gst *next = gget(s->c, s->a[0]);
	if (!next || next->status != RTD_GO_STATUS_WAITING ||
	    !succeeds(s->gen, s->a[1], next->sgen, next->seq))
		return 0;
	s->ev->p = s->cur.p;
	s->ev->g = s->cur.g;
	if ((rc = push(s->c, s->ev)) < 0)
		return rc;
	struct v2_out x;
	if (s->ev->type == RTD_GO2_EV_GO_SWITCH) {
		gs->status = RTD_GO_STATUS_WAITING;
		x = synth(s, RTD_GO2_EV_GO_BLOCK);
	} else {
		del_g(s, s->cur.g, gs);
		x = synth(s, RTD_GO2_EV_GO_DESTROY);
	}
	if ((rc = imply(s, &x)) < 0)
		return rc;
	next = gget(s->c, s->a[0]); /* the table may have moved */
	next->status = RTD_GO_STATUS_RUNNING;
	next->sgen = s->gen;
	next->seq = s->a[1];
	x = *s->ev; /* its arguments are the GoStart's */
	x.type = RTD_GO2_EV_GO_START;
	x.nargs = (uint8_t)v2_specs[RTD_GO2_EV_GO_START].nargs;
	x.g = NOG;
	if ((rc = imply(s, &x)) < 0)
		return rc;
	s->nw.g = s->a[0];
	return OUT;
}

static int go_syscall_begin(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	struct pst *ps;
	if (rc < 0 || (rc = cur_g_in(s, RTD_GO_STATUS_RUNNING, "Running", &gs)) < 0)
		return rc;
	gs->status = RTD_GO_STATUS_SYSCALL;
	if ((rc = cur_p(s, &ps)) < 0)
		return rc;
	ps->status = PR_SYSCALL;
	if (!succeeds(s->gen, s->a[0], ps->sgen, ps->seq))
		return fail_at(s, "failed to advance %s: can't make sequence: %llu (gen=%llu) -> %llu (gen=%llu)",
			       name_of(s), (unsigned long long)ps->seq, (unsigned long long)ps->sgen,
			       (unsigned long long)s->a[0], (unsigned long long)s->gen);
	ps->sgen = s->gen;
	ps->seq = s->a[0];
	return ADVANCE;
}

static int go_syscall_end(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	struct pst *ps;
	if (rc < 0 || (rc = cur_g_in(s, RTD_GO_STATUS_SYSCALL, "Running", &gs)) < 0)
		return rc;
	gs->status = RTD_GO_STATUS_RUNNING;
	if ((rc = cur_p(s, &ps)) < 0)
		return rc;
	if (ps->status != PR_SYSCALL)
		return fail_at(s, "expected proc %lld in state Syscall, but got %s instead",
			       (long long)s->cur.p, pstatus_name[ps->status]);
	ps->status = PR_RUNNING;
	return ADVANCE;
}

static int go_syscall_end_blocked(struct step *s)
{
	int rc;
	struct gst *gs;
	struct pst *ps;
	if (s->cur.p != NOP) {
		if ((rc = cur_p(s, &ps)) < 0)
			return rc;
		if (ps->status == PR_SYSCALL)
			return 0; /* its P has not been stolen yet */
	}
	if ((rc = need(s, MUST, MAY, MUST)) < 0 ||
	    (rc = cur_g_in(s, RTD_GO_STATUS_SYSCALL, "Running", &gs)) < 0)
		return rc;
	s->nw.g = NOG;
	gs->status = RTD_GO_STATUS_RUNNABLE;
	return ADVANCE;
}

static int go_create_syscall(struct step *s)
{
	int rc = need(s, MUST, MAY, MUSTNOT);
	if (rc < 0 || (rc = new_g(s, s->a[0], RTD_GO_STATUS_SYSCALL, " in syscall")) < 0)
		return rc;
	s->nw.g = s->a[0];
	return ADVANCE;
}

static int go_destroy_syscall(struct step *s)
{
	int rc = need(s, MUST, MAY, MUST);
	struct gst *gs;
	if (rc < 0 || (rc = cur_g_in(s, RTD_GO_STATUS_SYSCALL, "Syscall", &gs)) < 0)
		return rc;
	del_g(s, s->cur.g, gs);
	s->nw.g = NOG;
	if (s->cur.p == NOP)
		return ADVANCE;
	struct pst *ps = pget(s->c, s->cur.p);
	if (!ps)
		return fail_at(s, "found invalid proc %lld during %s", (long long)s->cur.p,
			       name_of(s));
	if (ps->status != PR_SYSCALL)
		return fail_at(s, "proc %lld in unexpected state %s during %s", (long long)s->cur.p,
			       pstatus_name[ps->status], name_of(s));
	ps->status = PR_SYSCALL_ABANDONED;
	s->nw.p = NOP;
	/* the implied self-steal */
	struct v2_out x = synth(s, RTD_GO2_EV_PROC_STEAL);
	x.args[1] = (uint64_t)s->cur.p;
	x.p = s->cur.p;
	x.g = s->cur.g;
	return (rc = imply(s, &x)) < 0 ? rc : ADVANCE;
}

/* ---- user annotations ---- */

static int user_task_begin(struct step *s)
{
	bool created, ok;
	struct task *t = rtd_vmap_get(&s->c->o->tasks, s->a[0], true, &created, NULL);
	if (!t)
		return cap_fail(s, "tasks");
	if (!created)
		return fail_at(s, "task ID conflict: %llu", (unsigned long long)s->a[0]);
	const char *name = string_of(s->c, s->a[2], &ok);
	if (!ok) {
		rtd_vmap_del(&s->c->o->tasks, s->a[0]);
		return fail_at(s, "invalid string ID %llu for %s event",
			       (unsigned long long)s->a[2], name_of(s));
	}
	t->name = strdup(name);
	t->parent = s->a[1];
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

/* The end carries its task's parent and name, as Go's does. */
static int user_task_end(struct step *s)
{
	struct v2_order *o = s->c->o;
	struct task *t = rtd_vmap_get(&o->tasks, s->a[0], false, NULL, NULL);
	s->ev->task_parent = 0;
	s->ev->task_name = "";
	if (t) {
		if (gtd_push((void **)&o->ended, &o->nended, &o->capended, sizeof(char *),
			     &t->name) < 0)
			return gtd_fail(s->c->d, -ENOMEM, s->ev->off, "out of memory");
		s->ev->task_parent = t->parent;
		s->ev->task_name = t->name;
		rtd_vmap_del(&o->tasks, s->a[0]);
	}
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

static int region_push(struct step *s, struct gst *gs, const char *name)
{
	if (gs->nreg == gs->capreg) {
		size_t nc = gs->capreg ? gs->capreg * 2 : 4;
		struct region *r = realloc(gs->reg, nc * sizeof(*r));
		if (!r)
			return gtd_fail(s->c->d, -ENOMEM, s->ev->off, "out of memory");
		gs->reg = r;
		gs->capreg = nc;
	}
	struct region *r = &gs->reg[gs->nreg];
	size_t n = strlen(name);
	r->task = s->a[0];
	r->name = NULL;
	if (n < sizeof(r->small))
		memcpy(r->small, name, n + 1);
	else if (!(r->name = strdup(name)))
		return gtd_fail(s->c->d, -ENOMEM, s->ev->off, "out of memory");
	gs->nreg++;
	return ADVANCE;
}

/* UserRegionBegin, UserRegionEnd: a goroutine's stack of regions. */
static int user_region(struct step *s)
{
	int rc = need(s, USERGO);
	if (rc < 0)
		return rc;
	bool ok;
	const char *name = string_of(s->c, s->a[1], &ok);
	if (!ok)
		return fail_at(s, "invalid string ID %llu for %s event",
			       (unsigned long long)s->a[1], name_of(s));
	struct gst *gs = gget(s->c, s->cur.g);
	if (!gs)
		return fail_at(s, "encountered Ev%s without known state for current goroutine %llu",
			       name_of(s), (unsigned long long)s->cur.g);
	if (s->ev->type == RTD_GO2_EV_USER_REGION_BEGIN)
		return region_push(s, gs, name);
	if (gs->nreg) {
		struct region *r = &gs->reg[gs->nreg - 1];
		const char *rname = region_name(r);
		/* (a cut generation's names may be unknown: "") */
		bool same = strcmp(rname, name) == 0 ||
			    (s->c->cut && (!*name || !*rname));
		if (r->task != s->a[0] || !same)
			return fail_at(s, "misuse of region in goroutine %llu: region end {%llu %s} when the inner-most active region start event is {%llu %s}",
				       (unsigned long long)s->cur.g, (unsigned long long)s->a[0], name,
				       (unsigned long long)r->task, rname);
		free(r->name);
		gs->nreg--;
	}
	return ADVANCE;
}

/* ---- the garbage collector ---- */

static int gc_active(struct step *s)
{
	struct v2_order *o = s->c->o;
	if (s->initial) {
		if (o->gc_state != GC_UNDETERMINED)
			return fail_at(s, "GCActive in the first generation isn't first GC event");
		o->gc_seq = s->a[0];
		o->gc_state = GC_RUNNING;
		return ADVANCE;
	}
	if (s->a[0] != o->gc_seq + 1)
		return 0;
	if (o->gc_state != GC_RUNNING)
		return fail_at(s, "encountered GCActive while GC was not in progress");
	o->gc_seq = s->a[0];
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

static int gc_begin(struct step *s)
{
	struct v2_order *o = s->c->o;
	if (o->gc_state == GC_UNDETERMINED) {
		o->gc_seq = s->a[0];
		o->gc_state = GC_RUNNING;
		return ADVANCE;
	}
	if (s->a[0] != o->gc_seq + 1)
		return 0;
	if (o->gc_state == GC_RUNNING)
		return fail_at(s, "encountered GCBegin while GC was already in progress");
	o->gc_seq = s->a[0];
	o->gc_state = GC_RUNNING;
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

static int gc_end(struct step *s)
{
	struct v2_order *o = s->c->o;
	if (s->a[0] != o->gc_seq + 1)
		return 0;
	if (o->gc_state == GC_NOT_RUNNING)
		return fail_at(s, "encountered GCEnd when GC was not in progress");
	if (o->gc_state == GC_UNDETERMINED)
		return fail_at(s, "encountered GCEnd when GC was in an undetermined state");
	o->gc_seq = s->a[0];
	o->gc_state = GC_NOT_RUNNING;
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

/* ProcsChange, GoLabel, UserLog: a running goroutine says something. */
static int user_go_event(struct step *s)
{
	int rc = need(s, USERGO);
	return rc < 0 ? rc : ADVANCE;
}

/* HeapAlloc, HeapGoal: on a P. */
static int proc_event(struct step *s)
{
	int rc = need(s, MUST, MUST, MAY);
	return rc < 0 ? rc : ADVANCE;
}

/* ---- ranges: sweeps on a P, mark assists and stop-the-worlds on a G ---- */

static int sweep_begin(struct step *s)
{
	int rc = need(s, MUST, MUST, MAY);
	struct pst *ps;
	if (rc < 0 || (rc = cur_p(s, &ps)) < 0 ||
	    (rc = range_begin(s->c, s->ev, &ps->rs, 0)) < 0)
		return rc;
	return ADVANCE;
}

static int sweep_active(struct step *s)
{
	struct pst *ps = pget(s->c, (int64_t)s->a[0]);
	if (!ps)
		return fail_at(s, "encountered GCSweepActive for unknown proc %llu",
			       (unsigned long long)s->a[0]);
	int rc = range_active(s->c, s->ev, &ps->rs, s->initial);
	return rc < 0 ? rc : ADVANCE;
}

static int sweep_end(struct step *s)
{
	int rc = need(s, MUST, MUST, MAY);
	struct pst *ps;
	if (rc < 0 || (rc = cur_p(s, &ps)) < 0 ||
	    (rc = range_end(s->c, s->ev, &ps->rs, NULL)) < 0)
		return rc;
	return ADVANCE;
}

/* STWBegin (its range named by its kind), GCMarkAssistBegin. */
static int g_range_begin(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	if (rc < 0 || (rc = cur_g_known(s, &gs)) < 0)
		return rc;
	uint64_t desc = s->ev->type == RTD_GO2_EV_STW_BEGIN ? s->a[0] : 0;
	rc = range_begin(s->c, s->ev, &gs->rs, desc);
	return rc < 0 ? rc : ADVANCE;
}

static int mark_assist_active(struct step *s)
{
	struct gst *gs = gget(s->c, s->a[0]);
	if (!gs)
		return fail_at(s, "uninitialized goroutine %llu found during %s",
			       (unsigned long long)s->a[0], name_of(s));
	int rc = range_active(s->c, s->ev, &gs->rs, s->initial);
	return rc < 0 ? rc : ADVANCE;
}

/* STWEnd (gets its begin's kind, as Go smuggles it), GCMarkAssistEnd. */
static int g_range_end(struct step *s)
{
	int rc = need(s, USERGO);
	struct gst *gs;
	uint64_t desc = 0;
	if (rc < 0 || (rc = cur_g_known(s, &gs)) < 0 ||
	    (rc = range_end(s->c, s->ev, &gs->rs, &desc)) < 0)
		return rc;
	if (s->ev->type == RTD_GO2_EV_STW_END)
		s->ev->args[1] = desc;
	return ADVANCE;
}

/* Go's orderingDispatch: the handler of each timed event type. */
static const step_fn dispatch[V2_MAX_TYPE + 1] = {
	[RTD_GO2_EV_PROCS_CHANGE] = user_go_event,
	[RTD_GO2_EV_PROC_START] = proc_start,
	[RTD_GO2_EV_PROC_STOP] = proc_stop,
	[RTD_GO2_EV_PROC_STEAL] = proc_steal,
	[RTD_GO2_EV_PROC_STATUS] = proc_status,
	[RTD_GO2_EV_GO_CREATE] = go_create,
	[RTD_GO2_EV_GO_CREATE_SYSCALL] = go_create_syscall,
	[RTD_GO2_EV_GO_START] = go_start,
	[RTD_GO2_EV_GO_DESTROY] = go_stop_running,
	[RTD_GO2_EV_GO_DESTROY_SYSCALL] = go_destroy_syscall,
	[RTD_GO2_EV_GO_STOP] = go_stop_running,
	[RTD_GO2_EV_GO_BLOCK] = go_stop_running,
	[RTD_GO2_EV_GO_UNBLOCK] = go_unblock,
	[RTD_GO2_EV_GO_SYSCALL_BEGIN] = go_syscall_begin,
	[RTD_GO2_EV_GO_SYSCALL_END] = go_syscall_end,
	[RTD_GO2_EV_GO_SYSCALL_END_BLOCKED] = go_syscall_end_blocked,
	[RTD_GO2_EV_GO_STATUS] = go_status,
	[RTD_GO2_EV_STW_BEGIN] = g_range_begin,
	[RTD_GO2_EV_STW_END] = g_range_end,
	[RTD_GO2_EV_GC_ACTIVE] = gc_active,
	[RTD_GO2_EV_GC_BEGIN] = gc_begin,
	[RTD_GO2_EV_GC_END] = gc_end,
	[RTD_GO2_EV_GC_SWEEP_ACTIVE] = sweep_active,
	[RTD_GO2_EV_GC_SWEEP_BEGIN] = sweep_begin,
	[RTD_GO2_EV_GC_SWEEP_END] = sweep_end,
	[RTD_GO2_EV_GC_MARK_ASSIST_ACTIVE] = mark_assist_active,
	[RTD_GO2_EV_GC_MARK_ASSIST_BEGIN] = g_range_begin,
	[RTD_GO2_EV_GC_MARK_ASSIST_END] = g_range_end,
	[RTD_GO2_EV_HEAP_ALLOC] = proc_event,
	[RTD_GO2_EV_HEAP_GOAL] = proc_event,
	[RTD_GO2_EV_GO_LABEL] = user_go_event,
	[RTD_GO2_EV_USER_TASK_BEGIN] = user_task_begin,
	[RTD_GO2_EV_USER_TASK_END] = user_task_end,
	[RTD_GO2_EV_USER_REGION_BEGIN] = user_region,
	[RTD_GO2_EV_USER_REGION_END] = user_region,
	[RTD_GO2_EV_USER_LOG] = user_go_event,
	[RTD_GO2_EV_GO_SWITCH] = go_switch,
	[RTD_GO2_EV_GO_SWITCH_DESTROY] = go_switch,
	[RTD_GO2_EV_GO_CREATE_BLOCKED] = go_create,
	[RTD_GO2_EV_GO_STATUS_STACK] = go_status,
};

static inline int check_ids(struct genctx *c, const struct v2_out *ev);

/*
 * Try to advance ev (from thread m). Returns 1 advanced, 0 cannot yet,
 * <0 error. Events (and any it implies) go to the output queue.
 */
static inline __attribute__((always_inline)) int advance(struct genctx *c, struct cursor *k)
{
	struct v2_order *o = c->o;
	struct v2_out *ev = &k->ev;
	uint64_t m = ev->m, g = NOG;
	int64_t p = NOP;
	struct mst *ms = k->ms;
	if (m != NOM) {
		if (!ms || k->ms_cap != o->ms.cap) {
			bool created;
			ms = rtd_vmap_get(&o->ms, m, true, &created, NULL);
			if (!ms)
				return gtd_fail(c->d, -RTD_E_CAP, ev->off, "too many threads");
			if (created) {
				ms->g = NOG;
				ms->p = NOP;
			}
			k->ms = ms;
			k->ms_cap = o->ms.cap;
		}
		g = ms->g;
		p = ms->p;
	}
	/* the contexts set field by field from registers: a copy of one
	 * just written (s.nw = s.cur) stalls on store forwarding */
	struct step s;
	s.c = c;
	s.ev = ev;
	s.a = ev->args + 1; /* Go's ev.args: after the dt */
	s.gen = c->gen;
	s.initial = c->gen == o->initial_gen;
	s.cur.g = s.nw.g = g;
	s.cur.m = s.nw.m = m;
	s.cur.p = s.nw.p = p;
	size_t before = c->st->nq;
	int rc;
	/* the most frequent handlers inline, the others through the table */
	switch (ev->type) {
	case RTD_GO2_EV_GO_START:
		rc = go_start(&s);
		break;
	case RTD_GO2_EV_GO_STOP:
	case RTD_GO2_EV_GO_BLOCK:
		rc = go_stop_running(&s);
		break;
	case RTD_GO2_EV_GO_UNBLOCK:
		rc = go_unblock(&s);
		break;
	default: {
		step_fn fn = ev->type <= V2_MAX_TYPE ? dispatch[ev->type] : NULL;
		if (!fn)
			return fail(c, ev->off, "bad event type found while ordering: %s",
				    evname(ev->type));
		rc = fn(&s);
	}
	}
	if (rc <= 0)
		return rc;
	/* the ids of what goes out, in order: the events the handler put
	 * out, then the event itself (checked here, not in its copy: a
	 * load of the copy just stored stalls) */
	for (size_t i = before; i < c->st->nq; i++) {
		int crc = check_ids(c, &c->st->q[i]);
		if (crc < 0)
			return crc;
	}
	if (rc == ADVANCE) {
		int crc = check_ids(c, ev);
		if (crc < 0)
			return crc;
		/* the copy first, then its context (not the other way round:
		 * the copy would stall on the fields just stored) */
		struct v2_out *q = push_slot(c, ev->off);
		if (!q)
			return c->d->err;
		*q = *ev;
		q->p = s.cur.p;
		q->g = s.cur.g;
		q->m = s.cur.m;
	}
	if (m != NOM) {
		if (k->ms_cap != o->ms.cap) { /* the table grew */
			k->ms = ms = rtd_vmap_get(&o->ms, m, false, NULL, NULL);
			k->ms_cap = o->ms.cap;
		}
		if (ms) {
			ms->p = s.nw.p;
			ms->g = s.nw.g;
		}
	}
	return 1;
}

/* ---- reading a generation's special batches ---- */

static int parse_special(struct genctx *c, const struct v2_batch *b, bool *special)
{
	rtd_gotrace_dec *d = c->d;
	rtd_rd r;
	rd_init(&r, d->in.data + b->data, b->len);
	uint64_t base = d->base + b->data;
	*special = true;
	if (b->len == 0) {
		*special = false;
		return 0;
	}
	uint8_t kind = rd_u8(&r);
	struct v2_bad bad = {0};
	int rc = v2_parse_dict(d, d->in.data + b->data, b->len, base, &bad);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return bad.set ? fail(c, bad.off, "%s", bad.msg) : rc;
	switch (kind) {
	case RTD_GO2_EV_CPU_SAMPLES:
		while (rd_left(&r)) {
			uint64_t off = base + rd_off(&r);
			if (rd_u8(&r) != RTD_GO2_EV_CPU_SAMPLE)
				return fail(c, off, "expected CPU sample event");
			struct v2_out s;
			memset(&s, 0, sizeof(s));
			for (int i = 0; i < 5; i++)
				s.args[i] = rd_varuint(&r);
			if (!rd_ok(&r))
				return fail(c, off, "malformed CPU sample");
			s.off = off;
			s.type = RTD_GO2_EV_CPU_SAMPLE;
			s.nargs = 5;
			s.time = (int64_t)s.args[0]; /* ticks until freq is known */
			s.m = s.args[1];
			s.p = (int64_t)s.args[2];
			s.g = s.args[3] ? s.args[3] : NOG;
			if (c->nsamples % 256 == 0) {
				struct v2_out *n = realloc(c->samples, (c->nsamples + 256) * sizeof(*n));
				if (!n)
					return gtd_fail(d, -ENOMEM, off, "out of memory");
				c->samples = n;
			}
			c->samples[c->nsamples++] = s;
		}
		return 0;
	case RTD_GO2_EV_FREQUENCY:
	case RTD_GO2_EV_SYNC: {
		bool sync = kind == RTD_GO2_EV_SYNC;
		if (sync && d->ver < 1025)
			break;
		/* A lone Frequency, or (Go 1.25) a sync batch of Frequency
		 * and ClockSnapshot events. */
		if (!sync)
			r.p--; /* re-read the Frequency event */
		while (rd_left(&r)) {
			uint64_t off = base + rd_off(&r);
			uint8_t t = rd_u8(&r);
			if (t == RTD_GO2_EV_FREQUENCY) {
				uint64_t f = rd_varuint(&r);
				if (!rd_ok(&r))
					return fail(c, off, "malformed frequency event");
				if (c->freq != 0)
					return fail(c, off, "found multiple frequency events");
				if (f == 0)
					return fail(c, off, "frequency of 0 ticks per second");
				c->freq = 1.0 / ((double)f / 1e9);
				d->freq = (int64_t)f;
			} else if (t == RTD_GO2_EV_CLOCK_SNAPSHOT && sync) {
				uint64_t a[4];
				for (int i = 0; i < 4; i++)
					a[i] = rd_varuint(&r);
				if (!rd_ok(&r))
					return fail(c, off, "malformed clock snapshot");
				/* Go 1.25's Sync event carries it */
				struct v2_state *st = c->st;
				st->snap = true;
				st->snap_ticks = (uint64_t)b->time + a[0];
				memcpy(st->snap_args + 1, a + 1, 3 * sizeof(uint64_t));
			} else {
				return fail(c, off, "unexpected event %s in a %s batch",
					    evname(t), sync ? "sync" : "frequency");
			}
			if (!sync)
				break;
		}
		return 0;
	}
	}
	*special = false;
	return 0;
}

static int cmp_time(const void *x, const void *y)
{
	const struct v2_out *a = x, *b = y;
	return a->time < b->time ? -1 : a->time > b->time;
}

/* An array of a map's values by id, for ids below min(largest + 1,
 * 2 * count + 64) (memory stays in proportion to the table). */
static int dense_of(const rtd_map *m, const void ***arr, size_t *n, size_t *cap)
{
	uint64_t max = 0, id;
	size_t it = 0;
	void *v;
	while (rtd_map_next(m, &it, &id, &v))
		if (id > max)
			max = id;
	size_t want = m->count ? (size_t)(max < 2 * m->count + 63 ? max + 1 : 2 * m->count + 64) : 0;
	if (want > *cap) {
		const void **a = realloc((void *)*arr, want * sizeof(*a));
		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = want;
	}
	if (want)
		memset((void *)*arr, 0, want * sizeof(**arr));
	it = 0;
	while (rtd_map_next(m, &it, &id, &v))
		if (id < want)
			(*arr)[id] = v;
	*n = want;
	return 0;
}

int v2_dense_build(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	st->dense = false;
	if (dense_of(&d->strings, (const void ***)&st->dstr, &st->ndstr, &st->capdstr) < 0 ||
	    dense_of(&d->stacks, (const void ***)&st->dstk, &st->ndstk, &st->capdstk) < 0)
		return -ENOMEM;
	st->dense = true;
	return 0;
}

/* Check the stack and string ids an event names exist (validateTableIDs). */
static int __attribute__((noinline)) check_ids_of(struct genctx *c, const struct v2_out *ev)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	if (c->cut) /* its stacks and strings were never written */
		return 0;
	for (int k = 0; k < 2; k++) {
		int i = sp->stack_arg[k];
		bool stk = i >= 0 && ev->args[i] && !v2_has_stack(c->d, ev->args[i]);
		int j = sp->str_arg[k];
		bool str = !stk && j >= 0 && ev->args[j] && !v2_str(c->d, ev->args[j]);
		if ((stk || str) && c->st->at_end) {
			/* the last generation, whole but for its tables: the
			 * input ended on a batch boundary before them */
			c->cut = c->st->cut = true;
			return 0;
		}
		if (stk)
			return fail(c, ev->off, "found invalid stack ID %llu for event %s",
				    (unsigned long long)ev->args[i], sp->name);
		if (str)
			return fail(c, ev->off, "found invalid string ID %llu for event %s",
				    (unsigned long long)ev->args[j], sp->name);
	}
	return 0;
}

/* check_ids_of() for the events of the types that name ids; the common
 * case (a stack and a string id that are in the generation's arrays)
 * without the call. */
static inline int check_ids(struct genctx *c, const struct v2_out *ev)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	if (!c->ids[ev->type])
		return 0;
	const struct v2_state *st = c->st;
	int si = sp->stack_arg[0], ti = sp->str_arg[0];
	if (st->dense && sp->stack_arg[1] < 0 && sp->str_arg[1] < 0) {
		uint64_t sid = si >= 0 ? ev->args[si] : 0, tid = ti >= 0 ? ev->args[ti] : 0;
		if ((sid == 0 || (sid < st->ndstk && st->dstk[sid])) &&
		    (tid == 0 || (tid < st->ndstr && st->dstr[tid])))
			return 0;
	}
	return check_ids_of(c, ev);
}

/* ---- the frontier: Go's heap of batch cursors (batchcursor.go) ---- */

struct frontier {
	struct cursor *cur;
	size_t *h; /* cursor indices */
	size_t n;
};

static int64_t ftime(const struct frontier *f, size_t i)
{
	return f->cur[f->h[i]].ev.time;
}

static void fswap(struct frontier *f, size_t i, size_t j)
{
	size_t t = f->h[i];
	f->h[i] = f->h[j];
	f->h[j] = t;
}

static inline size_t sift_up(struct frontier *f, size_t i)
{
	while (i > 0 && ftime(f, (i - 1) / 2) > ftime(f, i)) {
		fswap(f, (i - 1) / 2, i);
		i = (i - 1) / 2;
	}
	return i;
}

static inline __attribute__((always_inline)) void sift_down(struct frontier *f, size_t i)
{
	const size_t n = f->n;
	size_t *h = f->h;
	if (i >= n)
		return;
	const int64_t t = f->cur[h[i]].ev.time; /* of the entry moving down */
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l >= n)
			return;
		int64_t mt = t, lt = f->cur[h[l]].ev.time;
		if (lt < mt) {
			mt = lt;
			m = l;
		}
		if (r < n && f->cur[h[r]].ev.time < mt)
			m = r;
		if (m == i)
			return;
		size_t x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static void heap_insert(struct frontier *f, size_t k)
{
	f->h[f->n++] = k;
	sift_up(f, f->n - 1);
}

static inline __attribute__((always_inline)) void heap_update(struct frontier *f, size_t i)
{
	if (sift_up(f, i) == i)
		sift_down(f, i);
}

static void heap_remove(struct frontier *f, size_t i)
{
	for (; i > 0; i = (i - 1) / 2) /* to the root, ignoring the times */
		fswap(f, (i - 1) / 2, i);
	fswap(f, 0, f->n - 1);
	f->n--;
	sift_down(f, 0);
}

/* tryAdvance: 1 advanced (cursor refreshed), 0 cannot go yet, <0 error;
 * inline in the merge's loop for the first cursor (the event that goes
 * nearly every time), a call (try_advance) for the others. */
static inline __attribute__((always_inline)) int try_advance_at(struct genctx *c,
								struct frontier *f, size_t i)
{
	struct cursor *k = &f->cur[f->h[i]];
	/* on the cursor's event itself: a handler changes it only when it
	 * goes (or fails), and the cursor moves on then */
	int a = advance(c, k);
	if (a <= 0)
		return a;
	int nx = cursor_next(c, k);
	if (nx < 0)
		return nx;
	if (nx)
		heap_update(f, i);
	else
		heap_remove(f, i);
	return 1;
}

static int try_advance(struct genctx *c, struct frontier *f, size_t i)
{
	return try_advance_at(c, f, i);
}

/* A generation being merged, one step per call (memory: its batches). */
struct v2_gen {
	struct genctx c;
	struct frontier f;
	size_t *lists, *mb;
};

void v2_gen_free(struct v2_gen *g)
{
	if (!g)
		return;
	free(g->f.h);
	free(g->lists);
	free(g->c.cur);
	free(g->c.samples);
	free(g->mb);
	free(g);
}

/* Read a generation's tables and set up its frontier (installGen). */
int v2_gen_begin(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	struct v2_gen *g = calloc(1, sizeof(*g));
	if (!g)
		return gtd_fail(d, -ENOMEM, 0, "out of memory");
	struct genctx *c = &g->c;
	c->d = d;
	c->st = st;
	c->gen = st->gen;
	if (!st->ord && !(st->ord = order_new())) {
		free(g);
		return gtd_fail(d, -ENOMEM, 0, "out of memory");
	}
	c->o = st->ord;
	for (unsigned t = 0; t <= V2_MAX_TYPE; t++) {
		const struct v2_spec *sp = v2_spec_for(t, d->ver);
		c->timed[t] = sp && (sp->flags & V2_TIMED) && !(sp->flags & V2_EXP) ? sp : NULL;
		const struct v2_spec *ts = &v2_specs[t];
		if (ts->stack_arg[0] >= 0 || ts->stack_arg[1] >= 0 || ts->str_arg[0] >= 0 ||
		    ts->str_arg[1] >= 0)
			c->ids[t] = true;
	}
	if (c->o->initial_gen == 0)
		c->o->initial_gen = st->gen;
	st->nq = st->iq = 0;
	tables_reset(d);
	st->dense = false;
	int rc = 0;
	size_t *mb = g->mb = calloc(st->nb ? st->nb : 1, sizeof(size_t)); /* M batches */
	size_t nmb = 0;
	if (!mb) {
		v2_gen_free(g);
		return gtd_fail(d, -ENOMEM, 0, "out of memory");
	}
	for (size_t i = 0; i < st->nb && rc == 0; i++) {
		bool special;
		if (st->b[i].gen == UINT64_MAX) /* experimental batch */
			continue;
		rc = parse_special(c, &st->b[i], &special);
		if (rc == 0 && !special)
			mb[nmb++] = i;
	}
	/*
	 * The input ends in this generation and it is not whole: the input
	 * ended inside a batch, or the generation has no frequency (the
	 * runtime writes it, the stacks and the strings when the generation
	 * ends, traceAdvance). Its complete batches are ordered as far as
	 * they go, stack and string ids unresolved, with the frequency of the
	 * generation before; the first generation has none to take.
	 */
	c->cut = st->cut = rc == 0 && st->at_end &&
		(c->freq == 0 || (st->deferred_set && st->deferred == -RTD_E_TRUNCATED));
	st->freq_assumed = false;
	if (c->cut && c->freq == 0 && d->freq > 0)
		c->freq = 1.0 / ((double)d->freq / 1e9);
	if (c->cut && c->freq == 0) {
		/* the first generation: no frequency anywhere. Go 1.22+ on
		 * every OS but Windows counts nanotime()/64 (runtime
		 * trace2time.go, traceClockUnitsPerSecond): 15625000/s */
		c->freq = 1.0 / ((double)V2_NANOTIME_FREQ / 1e9);
		st->freq_assumed = true;
	}
	if (rc == 0 && c->freq == 0)
		rc = fail(c, st->nb ? st->b[0].off : 0, "no frequency event found");
	/* Stacks must name strings that exist. */
	if (rc == 0 && !c->cut) {
		size_t it = 0;
		uint64_t id;
		void *v;
		while (rc == 0 && !c->cut && rtd_map_next(&d->stacks, &it, &id, &v)) {
			const struct gtd_stack *s = v;
			for (size_t i = 0; i < s->n && rc == 0; i++) {
				if (st->at_end && ((s->f[i].fn_id &&
						    !rtd_map_get(&d->strings, s->f[i].fn_id, NULL)) ||
						   (s->f[i].file_id &&
						    !rtd_map_get(&d->strings, s->f[i].file_id, NULL)))) {
					/* the input ended before the strings */
					c->cut = st->cut = true;
					break;
				}
				if (s->f[i].fn_id && !rtd_map_get(&d->strings, s->f[i].fn_id, NULL))
					rc = fail(c, 0, "found invalid func string ID %llu for stack %llu",
						  (unsigned long long)s->f[i].fn_id, (unsigned long long)id);
				else if (s->f[i].file_id && !rtd_map_get(&d->strings, s->f[i].file_id, NULL))
					rc = fail(c, 0, "found invalid file string ID %llu for stack %llu",
						  (unsigned long long)s->f[i].file_id, (unsigned long long)id);
			}
		}
	}
	if (rc == 0)
		st->gen_parsed = true;
	if (rc == 0 && v2_dense_build(d) < 0)
		rc = gtd_fail(d, -ENOMEM, 0, "out of memory");
	/* One cursor per M, in the order the Ms first appear. */
	if (rc == 0) {
		c->cur = calloc(nmb ? nmb : 1, sizeof(*c->cur));
		g->lists = calloc(nmb ? nmb : 1, sizeof(size_t));
		if (!c->cur || !g->lists) {
			rc = gtd_fail(d, -ENOMEM, 0, "out of memory");
		} else {
			/* group batch indices by M, keeping file order */
			size_t w = 0;
			for (size_t i = 0; i < nmb; i++) {
				uint64_t m = st->b[mb[i]].m;
				size_t k;
				for (k = 0; k < c->ncur && c->cur[k].m != m; k++)
					;
				if (k < c->ncur)
					continue;
				c->cur[c->ncur].m = m;
				c->cur[c->ncur].bi = SIZE_MAX;
				c->cur[c->ncur].blist = g->lists + w;
				for (size_t j = i; j < nmb; j++)
					if (st->b[mb[j]].m == m)
						g->lists[w++] = mb[j], c->cur[c->ncur].nbl++;
				c->ncur++;
			}
			for (size_t k = 0; k < c->ncur && rc >= 0; k++)
				rc = cursor_next(c, &c->cur[k]);
			if (rc > 0)
				rc = 0;
		}
	}
	for (size_t i = 0; i < c->nsamples; i++)
		c->samples[i].time = ns(c, (uint64_t)c->samples[i].time);
	if (rc == 0 && c->nsamples)
		qsort(c->samples, c->nsamples, sizeof(*c->samples), cmp_time); /* ties: Go's sort is unstable too */
	/*
	 * The merge (trace/reader.go ReadEvent): a binary min-heap of the Ms'
	 * cursors keyed by the next event's time, built in the order the Ms
	 * first appear (Go's batchMs; Go 1.22/1.23 walk a map here, which is
	 * this order for up to 8 Ms when the walk starts at slot 0). Ties
	 * fall where Go's heap puts them.
	 */
	g->f = (struct frontier){c->cur, calloc(c->ncur ? c->ncur : 1, sizeof(size_t)), 0};
	if (!g->f.h && rc == 0)
		rc = gtd_fail(d, -ENOMEM, 0, "out of memory");
	if (rc < 0) {
		v2_gen_free(g);
		return rc;
	}
	/* Go 1.22/1.23's map walk of up to 8 threads starts at a random slot
	 * of the 8 and wraps: a rotation of the order of appearance. */
	unsigned slot = st->map_start;
	if (d->ngo_map) { /* a start per generation, the last one for the rest */
		slot = d->go_map[d->go_map_gen < d->ngo_map ? d->go_map_gen : d->ngo_map - 1];
		d->go_map_gen++;
	}
	size_t rot = c->ncur <= 8 && slot < c->ncur ? slot : 0;
	for (size_t j = 0; j < c->ncur; j++) {
		size_t k = (j + rot) % c->ncur;
		if (c->cur[k].have)
			heap_insert(&g->f, k);
	}
	st->g = g;
	return 0;
}

/* One step of the merge (ReadEvent): a CPU sample or the event that can
 * go next (with any it implies) to st->q. 1, 0 when the generation is
 * done, or <0. */
static inline __attribute__((always_inline)) int gen_step(struct v2_gen *g)
{
	struct genctx *c = &g->c;
	struct frontier *f = &g->f;
	if (c->isample < c->nsamples &&
	    (f->n == 0 || c->samples[c->isample].time < c->cur[f->h[0]].ev.time)) {
		int rc = push(c, &c->samples[c->isample++]);
		return rc < 0 ? rc : 1;
	}
	if (f->n == 0)
		return 0;
	int a = try_advance_at(c, f, 0);
	if (a == 0) {
		/* Go sorts the heap (slices.SortFunc: an insertion sort for up
		 * to 12 cursors) and tries the rest in order. */
		for (size_t i = 1; i < f->n; i++)
			for (size_t j = i; j > 0 && c->cur[f->h[j]].ev.time < c->cur[f->h[j - 1]].ev.time; j--) {
				size_t t = f->h[j];
				f->h[j] = f->h[j - 1];
				f->h[j - 1] = t;
			}
		for (size_t i = 1; i < f->n && a == 0; i++)
			a = try_advance(c, f, i);
	}
	if (a == 0) {
		const struct v2_out *h = &c->cur[f->h[0]].ev;
		return fail(c, h->off, "broken trace: failed to advance: no event of the frontier can go next (first: %s on thread %lld)",
			    evname(h->type), (long long)(int64_t)h->m);
	}
	return a;
}

/*
 * Steps of the merge into the empty st->q, up to V2_STEP_EVENTS events
 * (the per-event cost of a call is paid once for them). 1: events
 * queued; 0: the generation is done; <0: an error, and st->q has the
 * events of the steps before the one that failed (none of its own).
 */
int v2_gen_step(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	struct v2_gen *g = st->g;
	free_ended(g->c.o); /* the last steps' events are out */
	for (;;) {
		size_t before = st->nq;
		int rc = gen_step(g);
		if (rc <= 0) {
			if (rc < 0)
				st->nq = before;
			return rc;
		}
		if (st->nq >= V2_STEP_EVENTS)
			return 1;
	}
}
