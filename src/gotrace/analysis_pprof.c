/* SPDX-License-Identifier: MIT */
/*
 * analysis_pprof.c - the profiles of `go tool trace -pprof=TYPE`, and the
 * CPU samples.
 *
 * Go 1.19 (cmd/trace/pprof.go, computePprof*): a blocking event counts
 * from its time to its Link's, the event postProcessTrace links it to:
 * net: GoBlockNet to the GoUnblock; sync: GoBlockSend, Recv, Select,
 * Sync, Cond and GoBlockGC to the GoUnblock; syscall: GoSysCall to the
 * GoSysExit of a call that blocked; sched: GoUnblock and GoCreate to the
 * goroutine's GoStart. Events without a stack, or of zero length, do not
 * count. The links are followed here with one pending event per
 * goroutine instead of a list of every event.
 *
 * Go 1.22+ (cmd/trace/pprof.go, makeComputePprofFunc): over the state
 * transitions that have a stack (Event.Stack()), a goroutine is tracked
 * from a transition into the profile's state (Waiting for "network" /
 * reasons with "chan", "sync" or "select"; Syscall; Runnable) to the next
 * transition with a stack into another state, and that interval counts
 * as far as it overlaps the goroutine's [StartTime, EndTime] of the
 * Summarizer (pprofMatchingGoroutines with no name: every goroutine).
 * Transitions without a stack (GoStart, GoSyscallEnd, an unblock by the
 * netpoller) neither start nor end an interval, as in Go: Go 1.22+'s
 * scheduler latency runs to the goroutine's next transition with a
 * stack, not to its GoStart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/analysis_int.h"
#include "gotrace/gotrace_int.h"

struct rec {
	uint64_t count;
	int64_t ns;
	uint32_t order; /* index into the stacks list */
};

struct prof {
	bool on;
	struct rtd_vmap recs; /* stack id -> struct rec */
	uint32_t *stacks;   /* in first-counted order */
	size_t nstacks, capstacks;
	uint64_t count;
	int64_t ns;
	struct rtd_vmap track; /* Go 1.22+: goroutine -> struct pend (direct
			      * hand-over: only goroutines without a tracker
			      * entry any more) */
	size_t ntrack;       /* direct hand-over: goroutines tracked */
};

/* Go 1.19: a goroutine's event waiting for its Link (postProcessTrace's
 * g.ev) */
struct pend {
	uint8_t type;
	int64_t ts;
	uint32_t stack;
};

struct ga_prof {
	struct ga_ctx *c;
	struct ga_sum *sum;
	bool v2;
	struct prof p[RTD_GOAN_PROF_COUNT];
	struct rtd_vmap pend; /* Go 1.19: goroutine -> struct pend */
	int64_t cpu_period;
	uint8_t blocking;   /* the blocking profiles asked for (bits) */
	size_t nparked;     /* direct hand-over: entries in the track tables */
	const char *s_forever;
	struct reason_memo {
		const char *reason;
		bool track;
	} memo[2][16];
};

#define NOMEM(p) ga_fail((p)->c, -ENOMEM, "out of memory")

struct ga_prof *ga_prof_new(struct ga_ctx *c, struct ga_sum *sum)
{
	struct ga_prof *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->c = c;
	p->sum = sum;
	p->v2 = c->sem != RTD_GOAN_GO119;
	p->cpu_period = 10000000; /* runtime/pprof's default 100 Hz */
	p->s_forever = ga_intern(&c->strs, "forever", 7);
	if (!p->s_forever) {
		free(p);
		return NULL;
	}
	for (unsigned i = 0; i < RTD_GOAN_PROF_COUNT; i++) {
		p->p[i].on = (c->o.profiles >> i) & 1;
		if (p->p[i].on && i != RTD_GOAN_PROF_CPU)
			p->blocking |= (uint8_t)(1u << i);
		rtd_vmap_init(&p->p[i].recs, sizeof(struct rec), RTD_GOAN_MAX_STACKS);
		rtd_vmap_init(&p->p[i].track, sizeof(struct pend), RTD_GOAN_MAX_GOROUTINES);
	}
	rtd_vmap_init(&p->pend, sizeof(struct pend), RTD_GOAN_MAX_GOROUTINES);
	return p;
}

void ga_prof_free(struct ga_prof *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < RTD_GOAN_PROF_COUNT; i++) {
		rtd_vmap_free(&p->p[i].recs);
		rtd_vmap_free(&p->p[i].track);
		free(p->p[i].stacks);
	}
	rtd_vmap_free(&p->pend);
	free(p);
}

static int add(struct ga_prof *p, unsigned which, uint32_t stack, uint64_t count, int64_t ns)
{
	struct prof *pr = &p->p[which];
	bool created;
	int err = -ENOMEM;
	struct rec *r = rtd_vmap_get(&pr->recs, stack, true, &created, &err);
	if (!r)
		return ga_fail(p->c, err, "out of memory");
	if (created) {
		if (pr->nstacks == pr->capstacks) {
			size_t nc = pr->capstacks ? pr->capstacks * 2 : 64;
			uint32_t *s = realloc(pr->stacks, nc * sizeof(*s));
			if (!s) {
				rtd_vmap_del(&pr->recs, stack);
				return NOMEM(p);
			}
			pr->stacks = s;
			pr->capstacks = nc;
		}
		r->order = (uint32_t)pr->nstacks;
		pr->stacks[pr->nstacks++] = stack;
	}
	r->count += count;
	r->ns += ns;
	pr->count += count;
	pr->ns += ns;
	return 0;
}

/* ---- Go 1.19 --------------------------------------------------------------- */

static bool is_sync_block(unsigned t)
{
	return v1_class(t) & V1K_SYNC;
}

/* The pending event of g is linked to an event at ts: count it in the
 * profile it belongs to. */
static int link1(struct ga_prof *p, const struct pend *e, unsigned which, int64_t ts)
{
	if (!p->p[which].on || e->stack == 0 || ts - e->ts <= 0)
		return 0;
	return add(p, which, e->stack, 1, ts - e->ts);
}

static int set_pend(struct ga_prof *p, uint64_t g, unsigned type, int64_t ts, uint64_t stack)
{
	int64_t st = ga_stack(p->c, stack);
	if (st < 0)
		return (int)st;
	int err = -ENOMEM;
	struct pend *e = rtd_vmap_get(&p->pend, g, true, NULL, &err);
	if (!e)
		return ga_fail(p->c, err, "more than %u goroutines", RTD_GOAN_MAX_GOROUTINES);
	*e = (struct pend){(uint8_t)type, ts, (uint32_t)st};
	return 0;
}

int ga_prof_v1(struct ga_prof *p, const struct rtd_gotrace_event *ev)
{
	struct pend *e;
	int rc;
	switch (ev->type) {
	case RTD_GO_EV_GO_CREATE:
		return set_pend(p, ev->args[0], ev->type, ev->ts, ev->stack);
	case RTD_GO_EV_GO_WAITING:
	case RTD_GO_EV_GO_IN_SYSCALL:
		return set_pend(p, ev->g, ev->type, ev->ts, 0);
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LABEL:
		e = rtd_vmap_get(&p->pend, ev->g, false, NULL, NULL);
		if (!e)
			return 0;
		if (e->type == RTD_GO_EV_GO_UNBLOCK || e->type == RTD_GO_EV_GO_CREATE)
			rc = link1(p, e, RTD_GOAN_PROF_SCHED, ev->ts);
		else
			rc = 0;
		rtd_vmap_del(&p->pend, ev->g);
		return rc;
	case RTD_GO_EV_GO_UNBLOCK:
		e = rtd_vmap_get(&p->pend, ev->args[0], false, NULL, NULL);
		if (e && e->type == RTD_GO_EV_GO_BLOCK_NET)
			rc = link1(p, e, RTD_GOAN_PROF_NET, ev->ts);
		else if (e && is_sync_block(e->type))
			rc = link1(p, e, RTD_GOAN_PROF_SYNC, ev->ts);
		else
			rc = 0;
		return rc < 0 ? rc : set_pend(p, ev->args[0], ev->type, ev->ts, ev->stack);
	case RTD_GO_EV_GO_SYS_EXIT:
		e = rtd_vmap_get(&p->pend, ev->g, false, NULL, NULL);
		rc = e && e->type == RTD_GO_EV_GO_SYSCALL ? link1(p, e, RTD_GOAN_PROF_SYSCALL, ev->ts) : 0;
		return rc < 0 ? rc : set_pend(p, ev->g, ev->type, ev->ts, 0);
	case RTD_GO_EV_GO_SYSCALL:
		return set_pend(p, ev->g, ev->type, ev->ts, ev->stack);
	case RTD_GO_EV_GO_END:
	case RTD_GO_EV_GO_STOP:
		rtd_vmap_del(&p->pend, ev->g); /* nothing links to it any more */
		return 0;
	case RTD_GO_EV_CPU_SAMPLE:
		if (!p->p[RTD_GOAN_PROF_CPU].on)
			return 0;
		{
			int64_t st = ga_stack(p->c, ev->stack);
			if (st < 0)
				return (int)st;
			return add(p, RTD_GOAN_PROF_CPU, (uint32_t)st, 1, p->cpu_period);
		}
	}
	/* the others that take the goroutine off its P (scheduled, preempted,
	 * blocked, asleep) wait for what resumes it; GoSysBlock's goroutine
	 * already waits for its GoSyscall's GoSysExit */
	if ((v1_class(ev->type) & V1K_ENDS) && ev->type != RTD_GO_EV_GO_SYS_BLOCK)
		return set_pend(p, ev->g, ev->type, ev->ts, ev->stack);
	return 0;
}

/* ---- Go 1.22+ -------------------------------------------------------------- */

static bool track_reason_slow(unsigned which, const char *reason)
{
	switch (which) {
	case RTD_GOAN_PROF_NET:
		return strcmp(reason, "network") == 0;
	case RTD_GOAN_PROF_SYNC:
		return strstr(reason, "chan") || strstr(reason, "sync") || strstr(reason, "select");
	}
	return true;
}

/* Reasons are interned: remember the answer for the last few. */
static bool track_reason(struct ga_prof *p, unsigned which, const char *reason)
{
	if (which != RTD_GOAN_PROF_NET && which != RTD_GOAN_PROF_SYNC)
		return true;
	size_t k = ((uintptr_t)reason >> 4) & 15;
	struct reason_memo *m = &p->memo[which == RTD_GOAN_PROF_SYNC][k];
	if (m->reason != reason) {
		m->reason = reason;
		m->track = track_reason_slow(which, reason);
	}
	return m->track;
}

static const uint8_t prof_state[RTD_GOAN_PROF_COUNT] = {
	[RTD_GOAN_PROF_NET] = RTD_GO_G_WAITING,
	[RTD_GOAN_PROF_SYNC] = RTD_GO_G_WAITING,
	[RTD_GOAN_PROF_SYSCALL] = RTD_GO_G_SYSCALL,
	[RTD_GOAN_PROF_SCHED] = RTD_GO_G_RUNNABLE,
};

int ga_prof_v2(struct ga_prof *p, const struct rtd_goev *ev)
{
	if (ev->kind == RTD_GOEV_SAMPLE) {
		if (!p->p[RTD_GOAN_PROF_CPU].on)
			return 0;
		return add(p, RTD_GOAN_PROF_CPU, ev->stack, 1, p->cpu_period);
	}
	if (ev->kind != RTD_GOEV_STATE || ev->resource != RTD_GOEV_RES_GOROUTINE || !ev->stack)
		return 0;
	uint64_t id = ev->id;
	for (unsigned w = RTD_GOAN_PROF_NET; w < RTD_GOAN_PROF_COUNT; w++) {
		struct prof *pr = &p->p[w];
		if (!pr->on)
			continue;
		struct pend *t = rtd_vmap_get(&pr->track, id, false, NULL, NULL);
		if (!t) {
			if (ev->to == prof_state[w] && track_reason(p, w, ev->reason)) {
				int err = -ENOMEM;
				t = rtd_vmap_get(&pr->track, id, true, NULL, &err);
				if (!t)
					return ga_fail(p->c, err, "more than %u goroutines",
						       RTD_GOAN_MAX_GOROUTINES);
				*t = (struct pend){0, ev->ts, ev->stack};
			}
			continue;
		}
		if (ev->to == prof_state[w])
			continue;
		struct pend start = *t;
		rtd_vmap_del(&pr->track, id);
		/* the overlap with the goroutine's [StartTime, EndTime]: its end
		 * is later than this transition */
		bool known;
		int64_t s0 = ga_sum_start_time(p->sum, id, &known);
		if (!known)
			continue;
		int64_t a = start.ts > s0 ? start.ts : s0, b = ev->ts;
		if (b < s0 || b - a <= 0)
			continue;
		int rc = add(p, w, start.stack, 1, b - a);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * ga_prof_v2() of a goroutine transition handed over directly, then what
 * the Summarizer's starts2() does with it (the profile reads the start
 * before the Summarizer ends the goroutine). A tracked goroutine whose
 * tracker entry goes keeps its interval in the track table (as Go keeps
 * it in its map) and gets it back with a new entry.
 */
int ga_prof_tr(struct ga_prof *p, const struct ga_gtr *t, struct ga_gprof *x)
{
	if (t->fresh && p->nparked) {
		for (unsigned w = RTD_GOAN_PROF_NET; w < RTD_GOAN_PROF_COUNT; w++) {
			struct pend *e = rtd_vmap_get(&p->p[w].track, t->id, false, NULL, NULL);
			if (!e)
				continue;
			x->trk[w] = (struct ga_trk){e->ts, e->stack};
			x->on |= (uint8_t)(1u << w);
			rtd_vmap_del(&p->p[w].track, t->id);
			p->nparked--;
		}
	}
	if (t->stack) {
		for (unsigned w = RTD_GOAN_PROF_NET; w < RTD_GOAN_PROF_COUNT; w++) {
			uint8_t bit = (uint8_t)(1u << w);
			if (!(p->blocking & bit))
				continue;
			struct prof *pr = &p->p[w];
			if (!(x->on & bit)) {
				if (t->to == prof_state[w] && track_reason(p, w, t->reason)) {
					if (pr->ntrack >= RTD_GOAN_MAX_GOROUTINES)
						return ga_fail(p->c, -RTD_E_CAP, "more than %u goroutines",
							       RTD_GOAN_MAX_GOROUTINES);
					pr->ntrack++;
					x->on |= bit;
					x->trk[w] = (struct ga_trk){t->ts, t->stack};
				}
				continue;
			}
			if (t->to == prof_state[w])
				continue;
			x->on &= (uint8_t)~bit;
			pr->ntrack--;
			/* the overlap with the goroutine's [StartTime, EndTime]: its
			 * end is later than this transition */
			if (!x->known)
				continue;
			int64_t s0 = x->start;
			int64_t a = x->trk[w].ts > s0 ? x->trk[w].ts : s0, b = t->ts;
			if (b < s0 || b - a <= 0)
				continue;
			int rc = add(p, w, x->trk[w].stack, 1, b - a);
			if (rc < 0)
				return rc;
		}
	}
	if (t->from != t->to) {
		if (t->from == RTD_GO_G_UNDETERMINED || t->from == RTD_GO_G_NOTEXIST) {
			x->known = true;
			x->start = 0;
		}
		if (x->known) {
			if (t->to == RTD_GO_G_RUNNING && x->start == 0)
				x->start = t->ts;
			if (t->to == RTD_GO_G_NOTEXIST ||
			    (t->to == RTD_GO_G_WAITING && t->reason == p->s_forever))
				x->known = false;
		}
	}
	if (t->gone && x->on) {
		for (unsigned w = RTD_GOAN_PROF_NET; w < RTD_GOAN_PROF_COUNT; w++) {
			if (!(x->on & (1u << w)))
				continue;
			int err = -ENOMEM;
			struct pend *e = rtd_vmap_get(&p->p[w].track, t->id, true, NULL, &err);
			if (!e)
				return ga_fail(p->c, err, "more than %u goroutines",
					       RTD_GOAN_MAX_GOROUTINES);
			*e = (struct pend){0, x->trk[w].ts, x->trk[w].stack};
			p->nparked++;
		}
		x->on = 0;
	}
	return 0;
}

int ga_prof_finish(struct ga_prof *p)
{
	(void)p;
	return 0;
}

int ga_prof_foreach(const struct ga_prof *p, unsigned which, rtd_goan_record_fn fn, void *ctx)
{
	if (which >= RTD_GOAN_PROF_COUNT || !p->p[which].on)
		return -RTD_E_STATE;
	const struct prof *pr = &p->p[which];
	for (size_t i = 0; i < pr->nstacks; i++) {
		uint32_t id = pr->stacks[i];
		const struct rec *r = rtd_vmap_get((struct rtd_vmap *)&pr->recs, id, false, NULL, NULL);
		const struct rtd_goframe *f;
		size_t n = ga_stacks_view(&p->c->stacks, id, &f);
		int rc = fn(f, n, r->count, r->ns, ctx);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ga_prof_total(const struct ga_prof *p, unsigned which, uint64_t *count, int64_t *ns)
{
	if (which >= RTD_GOAN_PROF_COUNT || !p->p[which].on)
		return -RTD_E_STATE;
	if (count)
		*count = p->p[which].count;
	if (ns)
		*ns = p->p[which].ns;
	return 0;
}
