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

enum { GO_BAD, GO_RUNNABLE, GO_RUNNING, GO_SYSCALL, GO_WAITING };
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
struct region {
	uint64_t task;
	char *name;
};
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

struct v2_order {
	struct v1_tab gs, ps, ms, tasks;
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
	for (size_t i = 0; i < o->gs.cap; i++)
		if (o->gs.used[i] == 1)
			free_g((struct gst *)(o->gs.vals + i * o->gs.vsz));
	for (size_t i = 0; i < o->ps.cap; i++)
		if (o->ps.used[i] == 1)
			free(((struct pst *)(o->ps.vals + i * o->ps.vsz))->rs.r);
	for (size_t i = 0; i < o->tasks.cap; i++)
		if (o->tasks.used[i] == 1)
			free(((struct task *)(o->tasks.vals + i * o->tasks.vsz))->name);
	free_ended(o);
	free(o->ended);
	v1_tab_free(&o->gs);
	v1_tab_free(&o->ps);
	v1_tab_free(&o->ms);
	v1_tab_free(&o->tasks);
	free(o);
}

static struct v2_order *order_new(void)
{
	struct v2_order *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	v1_tab_init(&o->gs, sizeof(struct gst), 1u << 24);
	v1_tab_init(&o->ps, sizeof(struct pst), RTD_GOTRACE_MAX_PROCS);
	v1_tab_init(&o->ms, sizeof(struct mst), 1u << 20);
	v1_tab_init(&o->tasks, sizeof(struct task), 1u << 22);
	return o;
}

static const char *evname(unsigned t)
{
	return t <= V2_MAX_TYPE && v2_specs[t].name ? v2_specs[t].name : "?";
}

/* ---- the generation being ordered ---- */

struct cursor {
	uint64_t m;
	size_t bi;      /* index into the M's batch list */
	size_t *blist;  /* batches of this M */
	size_t nbl;
	size_t pos;     /* in the current batch's data */
	int64_t last;   /* Go's batchCursor.lastTs (ns; 0: take the batch's) */
	bool have;
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
	return v1_fail(c->d, -RTD_E_GO_ORDER, off, "%s (event at offset %llu, generation %llu)",
		       msg, (unsigned long long)off, (unsigned long long)c->gen);
}

static int push(struct genctx *c, const struct v2_out *ev)
{
	struct v2_state *st = c->st;
	if (st->nq == st->capq) {
		size_t nc = st->capq ? st->capq * 2 : 1024;
		struct v2_out *q = realloc(st->q, nc * sizeof(*q));
		if (!q)
			return v1_fail(c->d, -ENOMEM, ev->off, "out of memory");
		st->q = q;
		st->capq = nc;
	}
	st->q[st->nq++] = *ev;
	return 0;
}

/* Go's frequency.mul: ticks (unsigned on the wire) to ns in float64. */
static int64_t ns(const struct genctx *c, uint64_t ticks)
{
	return f2i((double)ticks * c->freq);
}

/* Read the next timed event of an M (Go's batchCursor.nextEvent). */
static int cursor_next(struct genctx *c, struct cursor *k)
{
	rtd_gotrace_dec *d = c->d;
	for (;;) {
		if (k->bi >= k->nbl) {
			k->have = false;
			return 0;
		}
		const struct v2_batch *b = &c->st->b[k->blist[k->bi]];
		if (k->pos >= b->len) {
			k->bi++;
			k->pos = 0;
			k->last = 0;
			continue;
		}
		/* Go converts the batch time and each delta to ns separately. */
		if (k->last == 0)
			k->last = ns(c, (uint64_t)b->time);
		rtd_rd r;
		uint64_t off = (uint64_t)(b->data + k->pos) + d->base;
		rd_init(&r, d->in.data + b->data + k->pos, b->len - k->pos);
		uint8_t t = rd_u8(&r);
		const struct v2_spec *sp = v2_spec_for(t, d->ver);
		if (!sp || !(sp->flags & V2_TIMED) || (sp->flags & V2_EXP))
			return fail(c, off, "unexpected event type %u in the batch of thread %lld",
				    t, (long long)(int64_t)k->m);
		memset(&k->ev, 0, sizeof(k->ev));
		for (unsigned i = 0; i < sp->nargs; i++)
			k->ev.args[i] = rd_varuint(&r);
		if (!rd_ok(&r))
			return fail(c, off, "%s runs past the end of its batch", sp->name);
		k->pos += rd_off(&r);
		k->last = wrap_add(ns(c, k->ev.args[0]), k->last);
		k->ev.off = off;
		k->ev.type = t;
		k->ev.nargs = (uint8_t)sp->nargs;
		k->ev.time = k->last;
		k->ev.m = k->m;
		k->have = true;
		return 1;
	}
}

/* ---- the state machine (trace/order.go) ---- */

static int check_ctx(struct genctx *c, const struct v2_out *ev, struct ctx x,
		     enum req th, enum req pr, enum req go)
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
	return v1_tab_get(&c->o->gs, g, false, NULL);
}

static struct pst *pget(struct genctx *c, int64_t p)
{
	return v1_tab_get(&c->o->ps, (uint64_t)p, false, NULL);
}

static int range_add(struct genctx *c, struct ranges *rs, uint8_t typ, uint64_t desc)
{
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 4;
		struct range *r = realloc(rs->r, nc * sizeof(*r));
		if (!r)
			return v1_fail(c->d, -ENOMEM, 0, "out of memory");
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
	const char *s = v1_str_get(c->d, id, NULL);
	*ok = s != NULL || id == 0; /* id 0 is the empty string */
	return s ? s : "";
}

/*
 * Try to advance ev (from thread m). Returns 1 advanced, 0 cannot yet,
 * <0 error. Events (and any it implies) go to the output queue.
 */
static int advance(struct genctx *c, struct v2_out *ev)
{
	struct v2_order *o = c->o;
	uint64_t m = ev->m, gen = c->gen;
	bool initial = gen == o->initial_gen;
	struct ctx cur = {NOG, m, NOP};
	if (m != NOM) {
		bool created;
		struct mst *ms = v1_tab_get(&o->ms, m, true, &created);
		if (!ms)
			return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many threads");
		if (created) {
			ms->g = NOG;
			ms->p = NOP;
		}
		cur.g = ms->g;
		cur.p = ms->p;
	}
	struct ctx nw = cur;
	const uint64_t *a = ev->args + 1; /* Go's ev.args: after the dt */
	struct gst *gs;
	struct pst *ps;
	int rc;
	bool found;
	switch (ev->type) {
	case 13: { /* ProcStatus */
		int64_t pid = (int64_t)a[0];
		uint64_t status = a[1];
		if (status > PR_SYSCALL_ABANDONED)
			return fail(c, ev->off, "invalid status for proc %lld: %llu",
				    (long long)pid, (unsigned long long)status);
		bool was_running = false;
		ps = pget(c, pid);
		if (ps) {
			if (status == PR_SYSCALL_ABANDONED && ps->status == PR_SYSCALL) {
				was_running = true;
				ev->args[2] = PR_SYSCALL;
			} else if (status == PR_SYSCALL_ABANDONED &&
				   ps->status == PR_SYSCALL_ABANDONED) {
				ev->args[2] = PR_SYSCALL_ABANDONED;
			} else if (ps->status != status) {
				return fail(c, ev->off, "inconsistent status for proc %lld: old %s vs. new %s",
					    (long long)pid, pstatus_name[ps->status],
					    pstatus_name[status]);
			}
			ps->sgen = gen;
			ps->seq = 0;
		} else {
			ps = v1_tab_get(&o->ps, (uint64_t)pid, true, NULL);
			if (!ps)
				return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many procs");
			ps->status = (uint8_t)status;
			ps->sgen = gen;
			ps->seq = 0;
		}
		if (status == PR_RUNNING || status == PR_SYSCALL)
			nw.p = pid;
		if (status == PR_SYSCALL_ABANDONED && was_running) {
			found = false;
			for (size_t i = 0; i < o->ms.cap; i++) {
				if (o->ms.used[i] != 1)
					continue;
				struct mst *x = (struct mst *)(o->ms.vals + i * o->ms.vsz);
				if (x->p == pid) {
					cur.m = o->ms.keys[i];
					cur.p = pid;
					cur.g = x->g;
					found = true;
				}
			}
			if (!found)
				return fail(c, ev->off, "failed to find sched context for proc %lld that's about to be stolen",
					    (long long)pid);
		}
		break;
	}
	case 10: { /* ProcStart */
		int64_t pid = (int64_t)a[0];
		ps = pget(c, pid);
		if (!ps || ps->status != PR_IDLE || !succeeds(gen, a[1], ps->sgen, ps->seq) ||
		    cur.p != NOP)
			return 0;
		if ((rc = check_ctx(c, ev, cur, MUST, MUSTNOT, MAY)) < 0)
			return rc;
		ps->status = PR_RUNNING;
		ps->sgen = gen;
		ps->seq = a[1];
		nw.p = pid;
		break;
	}
	case 11: /* ProcStop */
		ps = pget(c, cur.p);
		if (!ps)
			return fail(c, ev->off, "event ProcStop for proc (%lld) that doesn't exist",
				    (long long)cur.p);
		if (ps->status != PR_RUNNING && ps->status != PR_SYSCALL)
			return fail(c, ev->off, "ProcStop event for proc that's not Running or Syscall");
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MAY)) < 0)
			return rc;
		ps->status = PR_IDLE;
		nw.p = NOP;
		break;
	case 12: { /* ProcSteal */
		int64_t pid = (int64_t)a[0];
		ps = pget(c, pid);
		if (!ps || (ps->status != PR_SYSCALL && ps->status != PR_SYSCALL_ABANDONED) ||
		    !succeeds(gen, a[1], ps->sgen, ps->seq))
			return 0;
		if ((rc = check_ctx(c, ev, cur, MUST, MAY, MAY)) < 0)
			return rc;
		uint8_t old = ps->status;
		ps->status = PR_IDLE;
		ps->sgen = gen;
		ps->seq = a[1];
		if (old == PR_SYSCALL_ABANDONED)
			break;
		uint64_t mid = a[2];
		if (mid == cur.m) {
			if (cur.p != pid)
				return fail(c, ev->off, "tried to self-steal proc %lld (thread %llu), but got proc %lld instead",
					    (long long)pid, (unsigned long long)mid, (long long)cur.p);
			nw.p = NOP;
			break;
		}
		struct mst *x = v1_tab_get(&o->ms, mid, false, NULL);
		if (!x)
			return fail(c, ev->off, "stole proc from non-existent thread %llu",
				    (unsigned long long)mid);
		if (x->p != pid)
			return fail(c, ev->off, "tried to steal proc %lld from thread %llu, but got proc %lld instead",
				    (long long)pid, (unsigned long long)mid, (long long)x->p);
		x->p = NOP;
		break;
	}
	case 25:
	case 48: { /* GoStatus, GoStatusStack */
		uint64_t gid = a[0], mid = a[1], status = a[2];
		if (status > GO_WAITING)
			return fail(c, ev->off, "invalid status for goroutine %llu: %llu",
				    (unsigned long long)gid, (unsigned long long)status);
		gs = gget(c, gid);
		if (gs) {
			if (gs->status != status)
				return fail(c, ev->off, "inconsistent status for goroutine %llu: old %s vs. new %s",
					    (unsigned long long)gid, gstatus_name[gs->status],
					    gstatus_name[status]);
			gs->sgen = gen;
			gs->seq = 0;
		} else if (initial) {
			gs = v1_tab_get(&o->gs, gid, true, NULL);
			if (!gs)
				return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many goroutines");
			gs->status = (uint8_t)status;
			gs->sgen = gen;
		} else {
			return fail(c, ev->off, "found goroutine status for new goroutine after the first generation: id=%llu status=%s",
				    (unsigned long long)gid, gstatus_name[status]);
		}
		if (status == GO_RUNNING) {
			nw.g = gid;
		} else if (status == GO_SYSCALL) {
			if (mid == NOM)
				return fail(c, ev->off, "found goroutine %llu in syscall without a thread",
					    (unsigned long long)gid);
			if (mid == cur.m) {
				if (!initial && cur.g != gid)
					return fail(c, ev->off, "inconsistent thread for syscalling goroutine %llu: thread has goroutine %llu",
						    (unsigned long long)gid, (unsigned long long)cur.g);
				nw.g = gid;
				break;
			}
			bool created;
			struct mst *x = v1_tab_get(&o->ms, mid, true, &created);
			if (!x)
				return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many threads");
			if (!created) {
				if (x->g != gid)
					return fail(c, ev->off, "inconsistent thread for syscalling goroutine %llu: thread has goroutine %llu",
						    (unsigned long long)gid, (unsigned long long)x->g);
				cur.g = x->g;
			} else {
				x->g = gid;
				x->p = NOP;
			}
			cur.m = mid;
		}
		break;
	}
	case 14:
	case 47: { /* GoCreate, GoCreateBlocked */
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MAY)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (gs && gs->status != GO_RUNNING)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		bool created;
		gs = v1_tab_get(&o->gs, a[0], true, &created);
		if (!gs)
			return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many goroutines");
		if (!created)
			return fail(c, ev->off, "tried to create goroutine (%llu) that already exists",
				    (unsigned long long)a[0]);
		gs->status = ev->type == 47 ? GO_WAITING : GO_RUNNABLE;
		gs->sgen = gen;
		break;
	}
	case 17:
	case 19:
	case 20: /* GoDestroy, GoStop, GoBlock */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_RUNNING)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		if (ev->type == 17) {
			free_g(gs);
			v1_tab_del(&o->gs, cur.g);
		} else {
			gs->status = ev->type == 19 ? GO_RUNNABLE : GO_WAITING;
		}
		nw.g = NOG;
		break;
	case 16: /* GoStart */
		gs = gget(c, a[0]);
		if (!gs || gs->status != GO_RUNNABLE || !succeeds(gen, a[1], gs->sgen, gs->seq))
			return 0;
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MUSTNOT)) < 0)
			return rc;
		gs->status = GO_RUNNING;
		gs->sgen = gen;
		gs->seq = a[1];
		nw.g = a[0];
		break;
	case 21: /* GoUnblock */
		gs = gget(c, a[0]);
		if (!gs || gs->status != GO_WAITING || !succeeds(gen, a[1], gs->sgen, gs->seq))
			return 0;
		gs->status = GO_RUNNABLE;
		gs->sgen = gen;
		gs->seq = a[1];
		break;
	case 45:
	case 46: { /* GoSwitch, GoSwitchDestroy */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_RUNNING)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		struct gst *next = gget(c, a[0]);
		if (!next || next->status != GO_WAITING || !succeeds(gen, a[1], next->sgen, next->seq))
			return 0;
		ev->p = cur.p;
		ev->g = cur.g;
		if ((rc = push(c, ev)) < 0)
			return rc;
		struct v2_out x = *ev;
		memset(x.args, 0, sizeof(x.args));
		if (ev->type == 45) {
			gs->status = GO_WAITING;
			x.type = 20; /* GoBlock, no reason, no stack */
			x.nargs = 3;
		} else {
			free_g(gs);
			v1_tab_del(&o->gs, cur.g);
			x.type = 17; /* GoDestroy */
			x.nargs = 1;
		}
		if ((rc = push(c, &x)) < 0)
			return rc;
		next = gget(c, a[0]);
		next->status = GO_RUNNING;
		next->sgen = gen;
		next->seq = a[1];
		x = *ev;
		x.type = 16; /* GoStart of the next goroutine */
		x.nargs = 3;
		x.g = NOG;
		if ((rc = push(c, &x)) < 0)
			return rc;
		nw.g = a[0];
		goto done_pushed;
	}
	case 22: { /* GoSyscallBegin */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_RUNNING)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		gs->status = GO_SYSCALL;
		ps = pget(c, cur.p);
		if (!ps)
			return fail(c, ev->off, "uninitialized proc %lld found during %s",
				    (long long)cur.p, evname(ev->type));
		ps->status = PR_SYSCALL;
		if (!succeeds(gen, a[0], ps->sgen, ps->seq))
			return fail(c, ev->off, "failed to advance %s: can't make sequence: %llu (gen=%llu) -> %llu (gen=%llu)",
				    evname(ev->type), (unsigned long long)ps->seq,
				    (unsigned long long)ps->sgen, (unsigned long long)a[0],
				    (unsigned long long)gen);
		ps->sgen = gen;
		ps->seq = a[0];
		break;
	}
	case 23: /* GoSyscallEnd */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_SYSCALL)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		gs->status = GO_RUNNING;
		ps = pget(c, cur.p);
		if (!ps)
			return fail(c, ev->off, "uninitialized proc %lld found during %s",
				    (long long)cur.p, evname(ev->type));
		if (ps->status != PR_SYSCALL)
			return fail(c, ev->off, "expected proc %lld in state Syscall, but got %s instead",
				    (long long)cur.p, pstatus_name[ps->status]);
		ps->status = PR_RUNNING;
		break;
	case 24: /* GoSyscallEndBlocked */
		if (cur.p != NOP) {
			ps = pget(c, cur.p);
			if (!ps)
				return fail(c, ev->off, "uninitialized proc %lld found during %s",
					    (long long)cur.p, evname(ev->type));
			if (ps->status == PR_SYSCALL)
				return 0;
		}
		if ((rc = check_ctx(c, ev, cur, MUST, MAY, MUST)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_SYSCALL)
			return fail(c, ev->off, "%s event for goroutine that's not Running", evname(ev->type));
		nw.g = NOG;
		gs->status = GO_RUNNABLE;
		break;
	case 15: /* GoCreateSyscall */
		if ((rc = check_ctx(c, ev, cur, MUST, MAY, MUSTNOT)) < 0)
			return rc;
		{
			bool created;
			gs = v1_tab_get(&o->gs, a[0], true, &created);
			if (!gs)
				return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many goroutines");
			if (!created)
				return fail(c, ev->off, "tried to create goroutine (%llu) in syscall that already exists",
					    (unsigned long long)a[0]);
			gs->status = GO_SYSCALL;
			gs->sgen = gen;
		}
		nw.g = a[0];
		break;
	case 18: /* GoDestroySyscall */
		if ((rc = check_ctx(c, ev, cur, MUST, MAY, MUST)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "event %s for goroutine (%llu) that doesn't exist",
				    evname(ev->type), (unsigned long long)cur.g);
		if (gs->status != GO_SYSCALL)
			return fail(c, ev->off, "%s event for goroutine that's not Syscall", evname(ev->type));
		free_g(gs);
		v1_tab_del(&o->gs, cur.g);
		nw.g = NOG;
		if (cur.p != NOP) {
			ps = pget(c, cur.p);
			if (!ps)
				return fail(c, ev->off, "found invalid proc %lld during %s",
					    (long long)cur.p, evname(ev->type));
			if (ps->status != PR_SYSCALL)
				return fail(c, ev->off, "proc %lld in unexpected state %s during %s",
					    (long long)cur.p, pstatus_name[ps->status], evname(ev->type));
			ps->status = PR_SYSCALL_ABANDONED;
			nw.p = NOP;
			/* the implied self-steal */
			struct v2_out x = *ev;
			memset(x.args, 0, sizeof(x.args));
			x.type = 12;
			x.nargs = 4;
			x.args[1] = (uint64_t)cur.p;
			x.p = cur.p;
			x.g = cur.g;
			if ((rc = push(c, &x)) < 0)
				return rc;
		}
		break;
	case 40: { /* UserTaskBegin */
		bool created, ok;
		struct task *t = v1_tab_get(&o->tasks, a[0], true, &created);
		if (!t)
			return v1_fail(c->d, -RTD_E_CAP, ev->off, "too many tasks");
		if (!created)
			return fail(c, ev->off, "task ID conflict: %llu", (unsigned long long)a[0]);
		const char *name = string_of(c, a[2], &ok);
		if (!ok) {
			v1_tab_del(&o->tasks, a[0]);
			return fail(c, ev->off, "invalid string ID %llu for %s event",
				    (unsigned long long)a[2], evname(ev->type));
		}
		t->name = strdup(name);
		t->parent = a[1];
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	}
	case 41: { /* UserTaskEnd */
		/* the end carries its task's parent and name, as Go's does */
		struct task *t = v1_tab_get(&o->tasks, a[0], false, NULL);
		ev->task_parent = 0;
		ev->task_name = "";
		if (t) {
			if (v1_push((void **)&o->ended, &o->nended, &o->capended,
				    sizeof(char *), &t->name) < 0)
				return v1_fail(c->d, -ENOMEM, ev->off, "out of memory");
			ev->task_parent = t->parent;
			ev->task_name = t->name;
			v1_tab_del(&o->tasks, a[0]);
		}
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	}
	case 42:
	case 43: { /* UserRegionBegin, UserRegionEnd */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		bool ok;
		const char *name = string_of(c, a[1], &ok);
		if (!ok)
			return fail(c, ev->off, "invalid string ID %llu for %s event",
				    (unsigned long long)a[1], evname(ev->type));
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "encountered Ev%s without known state for current goroutine %llu",
				    evname(ev->type), (unsigned long long)cur.g);
		if (ev->type == 42) {
			if (gs->nreg == gs->capreg) {
				size_t nc = gs->capreg ? gs->capreg * 2 : 4;
				struct region *r = realloc(gs->reg, nc * sizeof(*r));
				if (!r)
					return v1_fail(c->d, -ENOMEM, ev->off, "out of memory");
				gs->reg = r;
				gs->capreg = nc;
			}
			char *cp = strdup(name);
			if (!cp)
				return v1_fail(c->d, -ENOMEM, ev->off, "out of memory");
			gs->reg[gs->nreg++] = (struct region){a[0], cp};
		} else if (gs->nreg) {
			struct region *r = &gs->reg[gs->nreg - 1];
			if (r->task != a[0] || strcmp(r->name, name) != 0)
				return fail(c, ev->off, "misuse of region in goroutine %llu: region end {%llu %s} when the inner-most active region start event is {%llu %s}",
					    (unsigned long long)cur.g, (unsigned long long)a[0], name,
					    (unsigned long long)r->task, r->name);
			free(r->name);
			gs->nreg--;
		}
		break;
	}
	case 28: /* GCActive */
		if (initial) {
			if (o->gc_state != GC_UNDETERMINED)
				return fail(c, ev->off, "GCActive in the first generation isn't first GC event");
			o->gc_seq = a[0];
			o->gc_state = GC_RUNNING;
			break;
		}
		if (a[0] != o->gc_seq + 1)
			return 0;
		if (o->gc_state != GC_RUNNING)
			return fail(c, ev->off, "encountered GCActive while GC was not in progress");
		o->gc_seq = a[0];
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	case 29: /* GCBegin */
		if (o->gc_state == GC_UNDETERMINED) {
			o->gc_seq = a[0];
			o->gc_state = GC_RUNNING;
			break;
		}
		if (a[0] != o->gc_seq + 1)
			return 0;
		if (o->gc_state == GC_RUNNING)
			return fail(c, ev->off, "encountered GCBegin while GC was already in progress");
		o->gc_seq = a[0];
		o->gc_state = GC_RUNNING;
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	case 30: /* GCEnd */
		if (a[0] != o->gc_seq + 1)
			return 0;
		if (o->gc_state == GC_NOT_RUNNING)
			return fail(c, ev->off, "encountered GCEnd when GC was not in progress");
		if (o->gc_state == GC_UNDETERMINED)
			return fail(c, ev->off, "encountered GCEnd when GC was in an undetermined state");
		o->gc_seq = a[0];
		o->gc_state = GC_NOT_RUNNING;
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	case 9:
	case 39:
	case 44: /* ProcsChange, GoLabel, UserLog */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		break;
	case 37:
	case 38: /* HeapAlloc, HeapGoal */
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MAY)) < 0)
			return rc;
		break;
	case 32: /* GCSweepBegin */
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MAY)) < 0)
			return rc;
		ps = pget(c, cur.p);
		if (!ps)
			return fail(c, ev->off, "uninitialized proc %lld found during %s",
				    (long long)cur.p, evname(ev->type));
		if ((rc = range_begin(c, ev, &ps->rs, 0)) < 0)
			return rc;
		break;
	case 31: /* GCSweepActive */
		ps = pget(c, (int64_t)a[0]);
		if (!ps)
			return fail(c, ev->off, "encountered GCSweepActive for unknown proc %llu",
				    (unsigned long long)a[0]);
		if ((rc = range_active(c, ev, &ps->rs, initial)) < 0)
			return rc;
		break;
	case 33: /* GCSweepEnd */
		if ((rc = check_ctx(c, ev, cur, MUST, MUST, MAY)) < 0)
			return rc;
		ps = pget(c, cur.p);
		if (!ps)
			return fail(c, ev->off, "uninitialized proc %lld found during %s",
				    (long long)cur.p, evname(ev->type));
		if ((rc = range_end(c, ev, &ps->rs, NULL)) < 0)
			return rc;
		break;
	case 26:
	case 35: /* STWBegin, GCMarkAssistBegin */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "encountered event of type %u without known state for current goroutine %llu",
				    ev->type, (unsigned long long)cur.g);
		if ((rc = range_begin(c, ev, &gs->rs, ev->type == 26 ? a[0] : 0)) < 0)
			return rc;
		break;
	case 34: /* GCMarkAssistActive */
		gs = gget(c, a[0]);
		if (!gs)
			return fail(c, ev->off, "uninitialized goroutine %llu found during %s",
				    (unsigned long long)a[0], evname(ev->type));
		if ((rc = range_active(c, ev, &gs->rs, initial)) < 0)
			return rc;
		break;
	case 27:
	case 36: { /* STWEnd, GCMarkAssistEnd */
		if ((rc = check_ctx(c, ev, cur, USERGO)) < 0)
			return rc;
		gs = gget(c, cur.g);
		if (!gs)
			return fail(c, ev->off, "encountered event of type %u without known state for current goroutine %llu",
				    ev->type, (unsigned long long)cur.g);
		uint64_t desc = 0;
		if ((rc = range_end(c, ev, &gs->rs, &desc)) < 0)
			return rc;
		if (ev->type == 27)
			ev->args[1] = desc; /* the kind, as Go smuggles it */
		break;
	}
	default:
		return fail(c, ev->off, "bad event type found while ordering: %s", evname(ev->type));
	}
	ev->p = cur.p;
	ev->g = cur.g;
	ev->m = cur.m;
	if ((rc = push(c, ev)) < 0)
		return rc;
done_pushed:
	if (m != NOM) {
		struct mst *ms = v1_tab_get(&o->ms, m, false, NULL);
		if (ms) {
			ms->p = nw.p;
			ms->g = nw.g;
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
					return v1_fail(d, -ENOMEM, off, "out of memory");
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

/* Check the stack and string ids an event names exist (validateTableIDs). */
static int check_ids(struct genctx *c, const struct v2_out *ev)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	for (int k = 0; k < 2; k++) {
		int i = sp->stack_arg[k];
		if (i >= 0 && ev->args[i] && !rtd_map_get(&c->d->stacks, ev->args[i], NULL))
			return fail(c, ev->off, "found invalid stack ID %llu for event %s",
				    (unsigned long long)ev->args[i], sp->name);
		i = sp->str_arg[k];
		if (i >= 0 && ev->args[i] && !rtd_map_get(&c->d->strings, ev->args[i], NULL))
			return fail(c, ev->off, "found invalid string ID %llu for event %s",
				    (unsigned long long)ev->args[i], sp->name);
	}
	return 0;
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

static size_t sift_up(struct frontier *f, size_t i)
{
	while (i > 0 && ftime(f, (i - 1) / 2) > ftime(f, i)) {
		fswap(f, (i - 1) / 2, i);
		i = (i - 1) / 2;
	}
	return i;
}

static void sift_down(struct frontier *f, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = 2 * i + 2;
		int64_t mt = i < f->n ? ftime(f, i) : INT64_MAX;
		if (l < f->n && ftime(f, l) < mt) {
			mt = ftime(f, l);
			m = l;
		}
		if (r < f->n && ftime(f, r) < mt)
			m = r;
		if (m == i)
			return;
		fswap(f, i, m);
		i = m;
	}
}

static void heap_insert(struct frontier *f, size_t k)
{
	f->h[f->n++] = k;
	sift_up(f, f->n - 1);
}

static void heap_update(struct frontier *f, size_t i)
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

/* tryAdvance: 1 advanced (cursor refreshed), 0 cannot go yet, <0 error. */
static int try_advance(struct genctx *c, struct frontier *f, size_t i)
{
	struct cursor *k = &f->cur[f->h[i]];
	struct v2_out ev = k->ev;
	size_t before = c->st->nq;
	int a = advance(c, &ev);
	if (a <= 0)
		return a;
	for (size_t q = before; q < c->st->nq; q++) {
		int rc = check_ids(c, &c->st->q[q]);
		if (rc < 0)
			return rc;
	}
	int nx = cursor_next(c, k);
	if (nx < 0)
		return nx;
	if (nx)
		heap_update(f, i);
	else
		heap_remove(f, i);
	return 1;
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
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	struct genctx *c = &g->c;
	c->d = d;
	c->st = st;
	c->gen = st->gen;
	if (!st->ord && !(st->ord = order_new())) {
		free(g);
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	}
	c->o = st->ord;
	if (c->o->initial_gen == 0)
		c->o->initial_gen = st->gen;
	st->nq = st->iq = 0;
	tables_reset(d);
	int rc = 0;
	size_t *mb = g->mb = calloc(st->nb ? st->nb : 1, sizeof(size_t)); /* M batches */
	size_t nmb = 0;
	if (!mb) {
		v2_gen_free(g);
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	}
	for (size_t i = 0; i < st->nb && rc == 0; i++) {
		bool special;
		if (st->b[i].gen == UINT64_MAX) /* experimental batch */
			continue;
		rc = parse_special(c, &st->b[i], &special);
		if (rc == 0 && !special)
			mb[nmb++] = i;
	}
	if (rc == 0 && c->freq == 0)
		rc = fail(c, st->nb ? st->b[0].off : 0, "no frequency event found");
	/* Stacks must name strings that exist. */
	if (rc == 0) {
		size_t it = 0;
		uint64_t id;
		void *v;
		while (rc == 0 && rtd_map_next(&d->stacks, &it, &id, &v)) {
			const struct v1_stack *s = v;
			for (size_t i = 0; i < s->n && rc == 0; i++) {
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
	/* One cursor per M, in the order the Ms first appear. */
	if (rc == 0) {
		c->cur = calloc(nmb ? nmb : 1, sizeof(*c->cur));
		g->lists = calloc(nmb ? nmb : 1, sizeof(size_t));
		if (!c->cur || !g->lists) {
			rc = v1_fail(d, -ENOMEM, 0, "out of memory");
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
		rc = v1_fail(d, -ENOMEM, 0, "out of memory");
	if (rc < 0) {
		v2_gen_free(g);
		return rc;
	}
	/* Go 1.22/1.23's map walk of up to 8 threads starts at a random slot
	 * of the 8 and wraps: a rotation of the order of appearance. */
	size_t rot = c->ncur <= 8 && st->map_start < c->ncur ? st->map_start : 0;
	for (size_t j = 0; j < c->ncur; j++) {
		size_t k = (j + rot) % c->ncur;
		if (c->cur[k].have)
			heap_insert(&g->f, k);
	}
	st->g = g;
	return 0;
}

/*
 * One step of the merge (ReadEvent): a CPU sample or the event that can
 * go next (with any it implies) to st->q. Returns 1, 0 when the
 * generation is done, or <0.
 */
int v2_gen_step(rtd_gotrace_dec *d)
{
	struct v2_gen *g = d->v2->g;
	struct genctx *c = &g->c;
	struct frontier *f = &g->f;
	free_ended(c->o); /* the last step's events are out */
	if (c->isample < c->nsamples &&
	    (f->n == 0 || c->samples[c->isample].time < c->cur[f->h[0]].ev.time)) {
		int rc = push(c, &c->samples[c->isample++]);
		return rc < 0 ? rc : 1;
	}
	if (f->n == 0)
		return 0;
	int a = try_advance(c, f, 0);
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
