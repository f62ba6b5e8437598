/* SPDX-License-Identifier: MIT */
/*
 * source_waits.c - an off-CPU profiler's kept waits as a record source
 * (rtdiag/source.h, rtdiag/perf_source.h): each wait a slice of category
 * "off-cpu" on its thread, named by the state it waited in, as the perf
 * timeline (timeline/perf.c) and `perf record --off-cpu` write them.
 *
 * The profiler hands waits over in the order they ended; a slice must
 * begin in time order. So the walk runs once, in the constructor, into
 * an array of begin and end points (interned names: 40 bytes a point,
 * at most RTD_PERF_SOURCE_MAX_WAITS waits), sorted by time, an end
 * before a begin at the same time (a thread that leaves the CPU again
 * the moment it came back). A thread is off the CPU once at a time, so
 * its slices never overlap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "perf/source_impl.h"
#include "rtdiag/perf_source.h"

#define PW_MAX_TIDS (1u << 22) /* threads and processes named */

struct point {
	int64_t t;
	uint64_t seq;      /* the walk's order, for a stable sort */
	uint32_t pid, tid;
	bool end;
	const char *name;  /* begin: "sleep", "disk", "preempted", "other" */
	const char *state; /* begin: "S", "D", "R", "T"... (interned) */
	const char *in;    /* begin: the first frame outside the kernel (interned) */
	const char *thread, *process; /* begin: their names (interned) */
};

struct pw {
	struct rtd_perf_profiler *p;
	rtd_intern *intern;
	struct rtd_clock clock;
	rtd_map names; /* tid -> its interned name; pid | 1 << 63 -> process */
	struct point *v;
	size_t n, cap, at;
	int step; /* enum psrc_step */
	int walk_rc;
	char msg[160];
	struct rtd_field f[2];
};

static const char *intern(struct pw *s, const char *str, int *rc)
{
	const char *out = NULL;
	if (!str)
		return NULL;
	int r = rtd_intern_string(s->intern, str, strlen(str), &out);
	if (r < 0)
		*rc = r;
	return out;
}

static int on_wait(const struct rtd_perf_profiler_sample *smp, void *ctx)
{
	struct pw *s = ctx;
	if (!smp->duration)
		return 0; /* not a wait: a CPU profiler's sample */
	if (s->n + 2 > s->cap) {
		if (s->cap / 2 >= RTD_PERF_SOURCE_MAX_WAITS) {
			snprintf(s->msg, sizeof(s->msg),
				 "more than %u off-CPU waits (RTD_PERF_SOURCE_MAX_WAITS)",
				 RTD_PERF_SOURCE_MAX_WAITS);
			return -RTD_E_CAP;
		}
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct point *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	const char *in = smp->nframes ? smp->frames[0].name : NULL;
	for (size_t i = 0; i < smp->nframes; i++)
		if (smp->frames[i].kind != RTD_FRAME_KERNEL) {
			in = smp->frames[i].name;
			break;
		}
	int rc = 0;
	struct point b = {.t = (int64_t)smp->time, .seq = s->n, .pid = smp->pid,
			  .tid = smp->tid, .name = rtd_perf_wait_state_name(smp->state),
			  .state = intern(s, smp->state ? smp->state : "?", &rc),
			  .in = intern(s, in ? in : "?", &rc),
			  .thread = intern(s, smp->thread, &rc),
			  .process = intern(s, smp->process, &rc)};
	if (rc < 0)
		return rc;
	struct point e = {.t = b.t + (int64_t)smp->duration, .seq = s->n + 1, .pid = smp->pid,
			  .tid = smp->tid, .end = true};
	s->v[s->n++] = b;
	s->v[s->n++] = e;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Is @name new for @key? Keeps it (as in source.c). */
static int renamed(struct pw *s, uint64_t key, const char *name)
{
	if (!name)
		return 0;
	void *was = NULL;
	if (rtd_map_get(&s->names, key, &was) && was == name)
		return 0;
	int rc = rtd_map_put(&s->names, key, (void *)name, NULL);
	return rc < 0 ? rc : 1;
}

static int pw_next(void *impl, struct rtd_record *rec)
{
	struct pw *s = impl;
	while (s->at < s->n) {
		const struct point *pt = &s->v[s->at];
		rec->ts = rec->mono = pt->t; /* use_clockid: CLOCK_MONOTONIC */
		rec->pid = pt->pid;
		rec->tid = pt->tid;
		int rc;
		switch (pt->end ? PSRC_STEP_EVENT : s->step++) {
		case PSRC_STEP_PROCESS:
			if ((rc = renamed(s, pt->pid | 1ull << 63, pt->process)) < 0)
				return rc;
			if (!rc)
				continue;
			rec->kind = RTD_REC_PROCESS;
			rec->tid = 0;
			rec->name = pt->process;
			return 1;
		case PSRC_STEP_THREAD:
			if ((rc = renamed(s, pt->tid, pt->thread)) < 0)
				return rc;
			if (!rc)
				continue;
			rec->kind = RTD_REC_THREAD;
			rec->name = pt->thread;
			return 1;
		default:
			s->at++;
			s->step = PSRC_STEP_PROCESS;
			rec->kind = pt->end ? RTD_REC_SLICE_END : RTD_REC_SLICE_BEGIN;
			if (!pt->end) {
				rec->name = pt->name;
				rec->category = "off-cpu";
				s->f[0] = (struct rtd_field){.name = "state", .type = RTD_FIELD_STR,
							     .s = pt->state};
				s->f[1] = (struct rtd_field){.name = "in", .type = RTD_FIELD_STR,
							     .s = pt->in};
				rec->fields = s->f;
				rec->nfields = 2;
			}
			return 1;
		}
	}
	/* a walk that failed (the cap) gave what it had first */
	if (s->walk_rc < 0)
		return rtd_source_error(rec, s->walk_rc, 0,
					s->msg[0] ? s->msg : rtd_perf_profiler_errmsg(s->p));
	return 0;
}

static int pw_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct pw *)impl)->clock;
	return 0;
}

static void pw_free(void *impl)
{
	struct pw *s = impl;
	rtd_map_free(&s->names);
	rtd_intern_free(s->intern);
	free(s->v);
	free(s);
}

static const struct rtd_source_ops pw_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "perf-offcpu",
	.next = pw_next,
	.clock = pw_clock,
	.free = pw_free,
};

rtd_source *rtd_perf_source_waits(struct rtd_perf_profiler *p,
				  const struct rtd_perf_source_opts *opts, int *err)
{
	int rc = p ? RTD_OPTS_VALID(opts, rtd_perf_source_opts, stop) : -RTD_E_INVAL;
	struct pw *s = rc == 0 ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
		return NULL;
	}
	s->p = p;
	rtd_map_init(&s->names, PW_MAX_TIDS);
	rtd_perf_source_clock_init(&s->clock);
	s->intern = rtd_intern_new();
	rc = s->intern ? 0 : -ENOMEM;
	if (rc == 0) {
		/* a walk's error is the stream's, after the waits it kept
		 * (each whole: begin and end), sorted */
		s->walk_rc = rtd_perf_profiler_each_sample(p, on_wait, s);
		if (s->walk_rc == -ENOMEM)
			rc = -ENOMEM;
		else if (s->n) /* no wait: v is NULL, which qsort may not take */
			qsort(s->v, s->n, sizeof(*s->v), by_time);
	}
	rtd_source *src = rc == 0 ? rtd_source_new(&pw_ops, s) : NULL;
	if (!src) {
		pw_free(s);
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
	}
	return src;
}
