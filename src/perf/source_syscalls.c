/* SPDX-License-Identifier: MIT */
/*
 * source_syscalls.c - every system call of some processes as a slice
 * (`rtdiag record --syscalls`, rtdiag/perf_source.h).
 *
 * A recorder owns a perf monitor with raw_syscalls:sys_enter/sys_exit
 * (inherited by children) and runs it on a thread of its own; the
 * syscall tracer (syscall.c) pairs enter and exit per thread, and each
 * completed call is kept as 40 bytes (its two times, ids, number,
 * result, interned comm) up to RTD_PERF_SOURCE_MAX_SYSCALLS.
 *
 * Calls complete in the order they exit, but a slice must begin in time
 * order: the source sorts begin and end points by time as the off-CPU
 * source does (source_waits.c), an end before a begin at the same time.
 * One thread is in one call at a time, so its slices never overlap. The
 * kernel's tracepoints sit inside the ptrace stops strace uses
 * (syscall_trace_enter() reports to ptrace before trace_sys_enter();
 * syscall_exit_work() calls trace_sys_exit() before the exit report), so
 * a slice here is never longer than strace -T's time for the same call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "perf/source_impl.h"
#include "rtdiag/perf_sample.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/perf_syscalls.h"

#define SR_MAX_TIDS (1u << 22) /* threads named */
#define SR_MAX_ERRNO 4095      /* -4095..-1 are errors (the kernel's MAX_ERRNO) */

struct call {
	int64_t enter, exit;
	uint32_t pid, tid;
	int32_t nr;
	int64_t ret;
	const char *comm; /* interned */
};

struct rtd_perf_syscall_recorder {
	struct rtd_perf_monitor *m;
	struct rtd_perf_syscalls *sc;
	rtd_intern *intern;
	struct call *v;
	size_t n, cap;
	uint64_t dropped, unpaired;
	pthread_t th;
	bool started, joined;
	volatile bool done;
	int rc;
	char msg[256];
};

static _Thread_local char new_errmsg[256];

const char *rtd_perf_syscall_recorder_errmsg(const rtd_perf_syscall_recorder *r)
{
	return r ? r->msg : new_errmsg;
}

int rtd_perf_syscall_recorder_new(const struct rtd_perf_syscall_recorder_opts *opts,
				  rtd_perf_syscall_recorder **out)
{
	struct rtd_perf_syscall_recorder_opts o;
	new_errmsg[0] = 0;
	if (!out)
		return -RTD_E_INVAL;
	*out = NULL;
	int rc = rtd_opts_copy(&o, sizeof(o), opts,
			       RTD_OPTS_END(rtd_perf_syscall_recorder_opts, ring_pages));
	if (rc || !opts || !o.pids || !o.npids) {
		snprintf(new_errmsg, sizeof(new_errmsg), "give the processes to trace");
		return -RTD_E_INVAL;
	}
	rtd_perf_syscall_recorder *r = calloc(1, sizeof(*r));
	if (!r || !(r->intern = rtd_intern_new())) {
		free(r);
		return -ENOMEM;
	}
	struct rtd_perf_opts mo = {.sz = sizeof(mo), .pids = o.pids, .npids = o.npids,
				   .ring_pages = o.ring_pages,
				   .flags = RTD_PERF_INHERIT | RTD_PERF_TRACK_COMM |
					    RTD_PERF_READER_THREAD};
	if (o.flags & RTD_PERF_SCREC_ENABLE_ON_EXEC)
		mo.flags |= RTD_PERF_ENABLE_ON_EXEC;
	rc = rtd_perf_monitor_new(&mo, &r->m);
	if (!rc)
		rc = rtd_perf_syscalls_new(r->m, NULL, 0, RTD_PERF_SYSCALLS_NO_STRINGS, &r->sc);
	if (rc) {
		snprintf(new_errmsg, sizeof(new_errmsg), "raw_syscalls tracepoints: %s",
			 r->m && rtd_perf_monitor_errmsg(r->m)[0] ? rtd_perf_monitor_errmsg(r->m)
								  : rtd_strerror(rc));
		rtd_perf_syscall_recorder_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int keep(rtd_perf_syscall_recorder *r, const struct rtd_perf_syscall *c)
{
	if (!c->has_enter) {
		r->unpaired++; /* entered before the recording began */
		return 0;
	}
	if (r->n == r->cap) {
		if (r->cap >= RTD_PERF_SOURCE_MAX_SYSCALLS) {
			r->dropped++;
			return 0;
		}
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct call *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	const char *comm = NULL;
	if (c->comm[0]) {
		int rc = rtd_intern_string(r->intern, c->comm, strnlen(c->comm, sizeof(c->comm)),
					   &comm);
		if (rc < 0)
			return rc;
	}
	r->v[r->n++] = (struct call){.enter = (int64_t)c->enter_ns, .exit = (int64_t)c->exit_ns,
				     .pid = c->pid, .tid = c->tid, .nr = (int32_t)c->nr,
				     .ret = c->ret, .comm = comm};
	return 0;
}

static int on_record(const struct rtd_perf_sample *s, void *ctx)
{
	rtd_perf_syscall_recorder *r = ctx;
	struct rtd_perf_syscall c;
	if (rtd_perf_syscalls_feed(r->sc, s, &c) == 1)
		return keep(r, &c);
	return 0;
}

static void *run_thread(void *arg)
{
	rtd_perf_syscall_recorder *r = arg;
	r->rc = rtd_perf_monitor_run(r->m, on_record, r);
	if (r->rc)
		snprintf(r->msg, sizeof(r->msg), "%s",
			 rtd_perf_monitor_errmsg(r->m)[0] ? rtd_perf_monitor_errmsg(r->m)
							  : rtd_strerror(r->rc));
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

int rtd_perf_syscall_recorder_start(rtd_perf_syscall_recorder *r)
{
	if (!r || r->started)
		return -RTD_E_STATE;
	int rc = pthread_create(&r->th, NULL, run_thread, r);
	if (rc)
		return -rc;
	r->started = true;
	return 0;
}

uint64_t rtd_perf_syscall_recorder_lost(const rtd_perf_syscall_recorder *r)
{
	if (!r)
		return 0;
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(r->m, &st);
	return st.lost + st.lost_samples;
}

bool rtd_perf_syscall_recorder_done(const rtd_perf_syscall_recorder *r)
{
	return r && __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

int rtd_perf_syscall_recorder_stop(rtd_perf_syscall_recorder *r)
{
	if (!r || !r->started || r->joined)
		return 0;
	rtd_perf_monitor_stop(r->m, false);
	pthread_join(r->th, NULL);
	r->joined = true;
	return r->rc;
}

void rtd_perf_syscall_recorder_free(rtd_perf_syscall_recorder *r)
{
	if (!r)
		return;
	rtd_perf_syscall_recorder_stop(r);
	rtd_perf_syscalls_free(r->sc);
	rtd_perf_monitor_free(r->m);
	rtd_intern_free(r->intern);
	free(r->v);
	free(r);
}

/* ---- live: the calls of each window (source_live.c) ------------------------ */

int rtd_perf_syscall_recorder_claim(rtd_perf_syscall_recorder *r)
{
	if (r->started)
		return -RTD_E_STATE;
	r->started = r->joined = true; /* start() and stop() leave it alone */
	return 0;
}

int rtd_perf_syscall_recorder_run(rtd_perf_syscall_recorder *r)
{
	int rc = rtd_perf_monitor_run(r->m, on_record, r);
	if (rc)
		snprintf(r->msg, sizeof(r->msg), "%s",
			 rtd_perf_monitor_errmsg(r->m)[0] ? rtd_perf_monitor_errmsg(r->m)
							  : rtd_strerror(rc));
	return rc;
}

struct rtd_perf_monitor *rtd_perf_syscall_recorder_monitor(rtd_perf_syscall_recorder *r)
{
	return r->m;
}

static int by_exit(const void *a, const void *b)
{
	const struct call *x = a, *y = b;
	if (x->exit != y->exit)
		return x->exit < y->exit ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* @rec as a call's slice: its name ("syscall_N" when the table has none),
 * category "syscall", fields "ret" and, for an error, "errno" (in @f). */
static int call_slice(rtd_perf_syscall_recorder *r, const struct call *c,
		      struct rtd_record *rec, struct rtd_field f[2])
{
	rec->name = rtd_perf_syscall_name(r->sc, c->nr);
	if (!rec->name) {
		char unknown[32];
		snprintf(unknown, sizeof(unknown), "syscall_%d", (int)c->nr);
		int rc = rtd_intern_string(r->intern, unknown, strlen(unknown), &rec->name);
		if (rc < 0)
			return rc;
	}
	rec->category = "syscall";
	f[0] = (struct rtd_field){.name = "ret", .type = RTD_FIELD_I64, .i = c->ret};
	rec->fields = f;
	rec->nfields = 1;
	if (c->ret < 0 && c->ret >= -SR_MAX_ERRNO) {
		const char *e = strerrorname_np((int)-c->ret);
		f[1] = (struct rtd_field){.name = "errno", .type = RTD_FIELD_STR, .s = e ? e : "?"};
		rec->nfields = 2;
	}
	return 0;
}

int rtd_perf_syscall_recorder_drain(rtd_perf_syscall_recorder *r, rtd_perf_syscall_drain_fn fn,
				    void *ctx)
{
	if (r->n) /* completed in this window: in the order they ended */
		qsort(r->v, r->n, sizeof(*r->v), by_exit);
	int rc = 0;
	for (size_t i = 0; i < r->n && !rc; i++) {
		const struct call *c = &r->v[i];
		struct rtd_record rec = {.kind = RTD_REC_SLICE, .pid = c->pid, .tid = c->tid};
		struct rtd_field f[2];
		rec.ts = rec.mono = c->exit; /* use_clockid: CLOCK_MONOTONIC */
		rec.dur = c->exit - c->enter;
		if (!(rc = call_slice(r, c, &rec, f)))
			rc = fn(ctx, &rec, c->comm);
	}
	r->n = 0; /* memory follows one window */
	if (!rc && r->dropped) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "more than %u system calls in one window: %llu not kept",
			 RTD_PERF_SOURCE_MAX_SYSCALLS, (unsigned long long)r->dropped);
		snprintf(r->msg, sizeof(r->msg), "%s", msg);
		return -RTD_E_CAP;
	}
	return rc;
}

/* ---- the source ------------------------------------------------------------ */

struct point {
	int64_t t;
	uint32_t call; /* index in the recorder's calls */
	bool end;
};

struct ss {
	rtd_perf_syscall_recorder *r;
	struct rtd_clock clock;
	rtd_map names; /* tid -> its interned comm */
	struct point *v;
	size_t n, at;
	bool named; /* the point at @at has had its THREAD record */
	struct rtd_field f[2];
};

static int by_time(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->call == y->call) /* a call that took no time: begin, then end */
		return x->end ? 1 : -1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->call < y->call ? -1 : x->call > y->call;
}

static int ss_next(void *impl, struct rtd_record *rec)
{
	struct ss *s = impl;
	rtd_perf_syscall_recorder *r = s->r;
	while (s->at < s->n) {
		const struct point *pt = &s->v[s->at];
		const struct call *c = &r->v[pt->call];
		rec->ts = rec->mono = pt->t; /* use_clockid: CLOCK_MONOTONIC */
		rec->pid = c->pid;
		rec->tid = c->tid;
		if (!pt->end && !s->named) {
			/* the thread, named first and whenever its name changes */
			s->named = true;
			void *was = NULL;
			if (!c->comm || (rtd_map_get(&s->names, c->tid, &was) && was == c->comm))
				continue;
			int rc = rtd_map_put(&s->names, c->tid, (void *)c->comm, NULL);
			if (rc < 0)
				return rc;
			rec->kind = RTD_REC_THREAD;
			rec->name = c->comm;
			return 1;
		}
		s->at++;
		s->named = false;
		if (pt->end) {
			rec->kind = RTD_REC_SLICE_END;
			return 1;
		}
		rec->kind = RTD_REC_SLICE_BEGIN;
		int rc = call_slice(r, c, rec, s->f);
		if (rc < 0)
			return rc;
		return 1;
	}
	if (r->dropped) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "more than %u system calls (RTD_PERF_SOURCE_MAX_SYSCALLS): %llu not kept",
			 RTD_PERF_SOURCE_MAX_SYSCALLS, (unsigned long long)r->dropped);
		return rtd_source_error(rec, -RTD_E_CAP, 0, msg);
	}
	return 0;
}

static int ss_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct ss *)impl)->clock;
	return 0;
}

static void ss_free(void *impl)
{
	struct ss *s = impl;
	rtd_map_free(&s->names);
	free(s->v);
	free(s);
}

static const struct rtd_source_ops ss_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "perf-syscalls",
	.next = ss_next,
	.clock = ss_clock,
	.free = ss_free,
};

rtd_source *rtd_perf_source_syscalls(rtd_perf_syscall_recorder *r,
				     const struct rtd_perf_source_opts *opts, int *err)
{
	int rc = r && (!r->started || r->joined) ? RTD_OPTS_VALID(opts, rtd_perf_source_opts, sz)
						 : -RTD_E_INVAL;
	struct ss *s = rc == 0 ? calloc(1, sizeof(*s)) : NULL;
	if (s && r->n && !(s->v = malloc(2 * r->n * sizeof(*s->v)))) {
		free(s);
		s = NULL;
	}
	if (!s) {
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
		return NULL;
	}
	s->r = r;
	rtd_map_init(&s->names, SR_MAX_TIDS);
	rtd_perf_source_clock_init(&s->clock);
	for (size_t i = 0; i < r->n; i++) {
		s->v[s->n++] = (struct point){.t = r->v[i].enter, .call = (uint32_t)i};
		s->v[s->n++] = (struct point){.t = r->v[i].exit, .call = (uint32_t)i, .end = true};
	}
	if (s->n) /* no call: v is NULL, which qsort may not take */
		qsort(s->v, s->n, sizeof(*s->v), by_time);
	rtd_source *src = rtd_source_new(&ss_ops, s);
	if (!src) {
		ss_free(s);
		if (err)
			*err = -ENOMEM;
	}
	return src;
}
