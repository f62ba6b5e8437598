/* SPDX-License-Identifier: MIT */
/*
 * analysis.c - the analyses over an ordered Go trace: one pass, each
 * event given to the analyses asked for (goroutine statistics and tasks,
 * blocking and CPU profiles, GC and MMU), through the state tracker for
 * the Go 1.22+ semantics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "gotrace/analysis_int.h"
#include "rtdiag/source.h"

struct rtd_goan {
	struct ga_ctx c;
	rtd_gostate *st;
	struct ga_sum *sum;
	struct ga_prof *prof;
	struct ga_gc *gc;
	int64_t *windows;
	bool direct; /* goroutine transitions straight to the profiles */
	bool finished;
	int err; /* sticky */
};

static _Thread_local char new_err[256];

int ga_fail(struct ga_ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(c->err, sizeof(c->err), rc, fmt, ap);
	va_end(ap);
	return rc;
}

int64_t ga_stack(struct ga_ctx *c, uint64_t id)
{
	int64_t r = ga_stacks_intern(&c->stacks, c->d, c->ev ? c->ev->gen : 0, id);
	if (r < 0)
		ga_fail(c, (int)r, "%s", c->stacks.err);
	return r;
}

rtd_gotrace_dec *ga_goan_dec(const rtd_goan *a)
{
	return a->c.d;
}

const char *rtd_goan_new_error(void)
{
	return new_err;
}

static rtd_goan *new_fail(rtd_goan *a, const char *msg)
{
	snprintf(new_err, sizeof(new_err), "%s", msg);
	rtd_goan_free(a);
	return NULL;
}

rtd_goan *rtd_goan_new(rtd_gotrace_dec *d, const struct rtd_goan_opts *opts)
{
	new_err[0] = 0;
	struct rtd_goan_opts oc;
	const struct rtd_goan_opts *o = &oc;
	if (!d || !opts || rtd_opts_copy(&oc, sizeof(oc), opts, RTD_OPTS_END(rtd_goan_opts, ctx)))
		return new_fail(NULL, "bad options");
	int ver = rtd_gotrace_dec_version(d);
	if (!ver)
		return new_fail(NULL, "the trace's header has not been read");
	if (o->n_mmu_windows > 1024)
		return new_fail(NULL, "more than 1024 MMU windows");
	rtd_goan *a = calloc(1, sizeof(*a));
	if (!a)
		return new_fail(NULL, "out of memory");
	struct ga_ctx *c = &a->c;
	c->d = d;
	c->ver = ver;
	memcpy(&c->o, o, sizeof(c->o));
	c->first_ts = INT64_MAX;
	c->last_ts = INT64_MIN;
	switch (o->semantics) {
	case RTD_GOAN_AUTO:
		c->sem = ver >= 1022 ? RTD_GOAN_GO123 : RTD_GOAN_GO119;
		break;
	case RTD_GOAN_GO119:
		if (ver >= 1022)
			return new_fail(a, "Go 1.19's analyses are for Go 1.5-1.21 traces; this is a Go 1.22+ trace");
		c->sem = RTD_GOAN_GO119;
		break;
	case RTD_GOAN_GO122:
		/* Go 1.22 reads the old format with Go 1.19's code */
		c->sem = ver >= 1022 ? RTD_GOAN_GO122 : RTD_GOAN_GO119;
		break;
	case RTD_GOAN_GO123:
		c->sem = RTD_GOAN_GO123;
		break;
	default:
		return new_fail(a, "unknown semantics");
	}
	if (o->mmu_windows && o->n_mmu_windows) {
		a->windows = malloc(o->n_mmu_windows * sizeof(*a->windows));
		if (!a->windows)
			return new_fail(a, "out of memory");
		memcpy(a->windows, o->mmu_windows, o->n_mmu_windows * sizeof(*a->windows));
		c->o.mmu_windows = a->windows;
	}
	ga_strs_init(&c->strs);
	ga_stacks_init(&c->stacks, &c->strs);
	if (!ga_intern(&c->strs, "", 0))
		return new_fail(a, "out of memory");
	/* the profiles alone of a Go 1.22+ trace: the tracker hands them each
	 * goroutine transition directly and they keep the Summarizer's
	 * StartTime themselves */
	a->direct = ver >= 1022 && c->sem != RTD_GOAN_GO119 && (o->what & RTD_GOAN_PPROF) &&
		    !(o->what & (RTD_GOAN_GOROUTINES | RTD_GOAN_TASKS | RTD_GOAN_GC));
	bool want_sum = (o->what & (RTD_GOAN_GOROUTINES | RTD_GOAN_TASKS)) ||
			((o->what & RTD_GOAN_PPROF) && c->sem != RTD_GOAN_GO119 && !a->direct);
	if (c->sem != RTD_GOAN_GO119 && !(a->st = ga_state_new(d, &c->strs, &c->stacks)))
		return new_fail(a, "out of memory");
	if (a->direct)
		ga_state_direct(a->st);
	if (want_sum && !(a->sum = ga_sum_new(c)))
		return new_fail(a, "out of memory");
	if ((o->what & RTD_GOAN_PPROF) && !(a->prof = ga_prof_new(c, a->sum)))
		return new_fail(a, "out of memory");
	if ((o->what & RTD_GOAN_GC) && !(a->gc = ga_gc_new(c)))
		return new_fail(a, "out of memory");
	return a;
}

void rtd_goan_free(rtd_goan *a)
{
	if (!a)
		return;
	ga_prof_free(a->prof);
	ga_sum_free(a->sum);
	ga_gc_free(a->gc);
	rtd_gostate_free(a->st);
	if (a->c.stacks.strs)
		ga_stacks_free(&a->c.stacks);
	if (a->c.strs.m.buckets || a->c.strs.m.count)
		ga_strs_free(&a->c.strs);
	free(a->windows);
	free(a);
}

/* Batches, tables, frequency: not events of the program. */
static bool is_meta(const struct rtd_goan *a, const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (a->c.ver >= 1022)
		return t != RTD_GO2_EV_READER_SYNC &&
		       ((t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
			t >= RTD_GO2_EV_EXPERIMENTAL_BATCH);
	return t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY || t == RTD_GO_EV_STRING ||
	       t == RTD_GO_EV_STACK || t == RTD_GO_EV_TIMER_GOROUTINE;
}

static int step_v2(rtd_goan *a, const struct rtd_goev *e)
{
	int rc = 0;
	/* the profiles read a goroutine's start before the summary ends it */
	if (a->prof && (rc = ga_prof_v2(a->prof, e)) < 0)
		return rc;
	if (a->sum && (rc = ga_sum_v2(a->sum, e)) < 0)
		return rc;
	if (a->gc && (rc = ga_gc_v2(a->gc, e)) < 0)
		return rc;
	return 0;
}

static int drain(rtd_goan *a)
{
	const struct rtd_goev *e;
	int rc;
	while ((e = ga_state_take(a->st)))
		if ((rc = step_v2(a, e)) < 0)
			return rc;
	return 0;
}

int rtd_goan_feed(rtd_goan *a, const struct rtd_gotrace_event *ev)
{
	if (a->err)
		return a->err;
	if (a->finished)
		return -RTD_E_STATE;
	if (is_meta(a, ev))
		return 0;
	struct ga_ctx *c = &a->c;
	c->ev = ev;
	c->nev++;
	if (ev->ts < c->first_ts)
		c->first_ts = ev->ts;
	if (ev->ts > c->last_ts)
		c->last_ts = ev->ts;
	int rc = 0;
	if (c->sem == RTD_GOAN_GO119) {
		if (a->prof && (rc = ga_prof_v1(a->prof, ev)) < 0)
			goto out;
		if (a->sum && (rc = ga_sum_v1(a->sum, ev)) < 0)
			goto out;
		if (a->gc && (rc = ga_gc_v1(a->gc, ev)) < 0)
			goto out;
	} else {
		if (a->direct) {
			const struct ga_gtr *t;
			struct ga_gprof *x;
			if ((rc = ga_state_feed_direct(a->st, ev, &t, &x)) < 0) {
				ga_fail(c, rc, "%s", rtd_gostate_error(a->st));
				goto out;
			}
			bool queued = rc > 0;
			rc = 0;
			if (t) {
				rc = ga_prof_tr(a->prof, t, x);
				if (t->gone)
					ga_state_tr_done(a->st);
			}
			if (rc == 0 && queued)
				rc = drain(a);
			goto out;
		}
		if ((rc = rtd_gostate_feed(a->st, ev)) < 0) {
			ga_fail(c, rc, "%s", rtd_gostate_error(a->st));
			goto out;
		}
		rc = drain(a);
	}
out:
	c->ev = NULL;
	if (rc < 0)
		a->err = rc;
	return rc;
}

int rtd_goan_finish(rtd_goan *a)
{
	if (a->finished)
		return a->err;
	a->finished = true;
	struct ga_ctx *c = &a->c;
	int rc = 0;
	if (a->st) {
		if ((rc = rtd_gostate_finish(a->st)) < 0) {
			ga_fail(c, rc, "%s", rtd_gostate_error(a->st));
			goto out;
		}
		if ((rc = drain(a)) < 0)
			goto out;
	}
	if (a->sum && (rc = ga_sum_finish(a->sum)) < 0)
		goto out;
	if (a->prof && (rc = ga_prof_finish(a->prof)) < 0)
		goto out;
	if (a->gc && (rc = ga_gc_finish(a->gc)) < 0)
		goto out;
out:
	if (rc < 0 && !a->err)
		a->err = rc;
	return rc;
}

const char *rtd_goan_error(const rtd_goan *a)
{
	return a->c.err;
}

unsigned rtd_goan_semantics(const rtd_goan *a)
{
	return a->c.sem;
}

size_t rtd_goan_stack(const rtd_goan *a, uint32_t id, const struct rtd_goframe **frames)
{
	return ga_stacks_view((struct ga_stacks *)&a->c.stacks, id, frames);
}

int rtd_goan_profile_foreach(const rtd_goan *a, unsigned which, rtd_goan_record_fn fn, void *ctx)
{
	if (!a->prof)
		return -RTD_E_STATE;
	return ga_prof_foreach(a->prof, which, fn, ctx);
}

int rtd_goan_profile_total(const rtd_goan *a, unsigned which, uint64_t *count, int64_t *ns)
{
	if (!a->prof)
		return -RTD_E_STATE;
	return ga_prof_total(a->prof, which, count, ns);
}

struct build {
	rtd_profile *p;
	struct rtd_frame *names;
	size_t cap;
	char (*addr)[24]; /* names of frames the trace does not name */
};

static int build_rec(const struct rtd_goframe *f, size_t n, uint64_t count, int64_t ns, void *ctx)
{
	struct build *b = ctx;
	(void)count;
	if (n > b->cap) {
		struct rtd_frame *p = realloc(b->names, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		b->names = p;
		char(*a)[24] = realloc(b->addr, n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		b->addr = a;
		b->cap = n;
	}
	/* the model wants the root first; a frame without a name is its
	 * PC, or "<unknown>" without one, as go tool pprof prints it; a
	 * named one is Go's, its runtime's ("runtime.", "runtime/",
	 * "internal/runtime") a kind of its own, as the pictures colour them */
	for (size_t i = 0; i < n; i++) {
		const struct rtd_goframe *x = &f[n - 1 - i];
		struct rtd_frame *o = &b->names[i];
		memset(o, 0, sizeof(*o));
		if (*x->fn) {
			o->name = x->fn;
			o->kind = !strncmp(x->fn, "runtime.", 8) ||
						  !strncmp(x->fn, "runtime/", 8) ||
						  !strncmp(x->fn, "internal/runtime", 16)
					  ? RTD_FRAME_GO_RUNTIME
					  : RTD_FRAME_GO;
		} else if (!x->pc) {
			o->name = "<unknown>";
		} else {
			snprintf(b->addr[i], sizeof(b->addr[i]), "0x%" PRIx64, x->pc);
			o->name = b->addr[i];
		}
	}
	int64_t vals[RTD_PROFILE_MAX_TYPES] = {0};
	size_t t = rtd_profile_default_type(b->p);
	vals[t] = ns;
	struct rtd_sample smp = {.sz = sizeof(smp), .frames = b->names,
				 .nframes = n, .values = vals, .nvalues = t + 1};
	return rtd_profile_add_sample(b->p, &smp);
}

int rtd_goan_profile_build(const rtd_goan *a, unsigned which, rtd_profile **out)
{
	*out = NULL;
	if (!a->prof || which >= RTD_GOAN_PROF_COUNT)
		return -RTD_E_STATE;
	struct build b = {0};
	b.p = which == RTD_GOAN_PROF_CPU ? rtd_profile_new("cpu", "nanoseconds")
					 : rtd_profile_new("delay", "nanoseconds");
	if (!b.p)
		return -ENOMEM;
	int rc = ga_prof_foreach(a->prof, which, build_rec, &b);
	free(b.names);
	free(b.addr);
	if (rc < 0) {
		rtd_profile_free(b.p);
		return rc;
	}
	*out = b.p;
	return 0;
}

double rtd_goan_mmu(const rtd_goan *a, size_t i, int64_t *window)
{
	if (!a->gc)
		return -1;
	return ga_gc_mmu(a->gc, i, window);
}

int rtd_goan_groups_foreach(const rtd_goan *a,
			    int (*fn)(const struct rtd_goan_group *g, void *ctx), void *ctx)
{
	if (!a->sum || !(a->c.o.what & RTD_GOAN_GOROUTINES))
		return -RTD_E_STATE;
	return ga_sum_groups(a->sum, fn, ctx);
}

uint64_t rtd_goan_trace_bounds(const rtd_goan *a, int64_t *first, int64_t *last)
{
	if (first)
		*first = a->c.nev ? a->c.first_ts : 0;
	if (last)
		*last = a->c.nev ? a->c.last_ts : 0;
	return a->c.nev;
}
