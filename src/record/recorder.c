/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - one process recorded live (rtdiag/recorder.h): the perf
 * profilers as live sources (rtd_perf_source_live()), the EventPipe
 * session's stream read on a thread of its own (rtd_source_thread()),
 * sources a caller adds, all merged by the watermark rule
 * (rtd_source_merge()). Wiring only: every source is the one adapter of
 * its kind.
 *
 * The EventPipe side is a source of its own ("eventpipe") whose first
 * pull, on the reading thread, finds the runtime (for a child: polls for
 * its diagnostics socket until it listens) and starts the session, so
 * that nothing blocks the caller; rtd_recorder_stop() sends StopTracing.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/log.h"
#include "common/stats.h"
#include "rtdiag/common.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/ipc.h"
#include "rtdiag/ipc_source.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/perf.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/recorder.h"

#define REC_DEFAULT_FREQ 99u
#define REC_SOCKET_POLL_MS 50
#define REC_GO_PIECE_S 3.0
#define REC_GO_END_GRACE_S 10.0

/* ---- the EventPipe side ------------------------------------------------------ */

struct ep {
	pid_t pid;
	bool child;        /* wait for its runtime to listen */
	struct rtd_ipc_providers prov;
	pthread_mutex_t mu;
	bool stop;         /* rtd_recorder_stop() */
	bool stop_sent;
	rtd_ipc_client *c;
	rtd_ipc_session *s;
	rtd_source *raw, *clr;
	bool started;      /* a session ran */
	bool closed;       /* its stream ended after StopTracing */
	char warn[320];
};

/* Say why there is no EventPipe (the reading thread writes it, the
 * caller's thread reads it). */
static void ep_warn(struct ep *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&e->mu);
	rtd_verrf(e->warn, sizeof(e->warn), 0, fmt, ap);
	pthread_mutex_unlock(&e->mu);
	va_end(ap);
}

static bool ep_stopping(struct ep *e)
{
	pthread_mutex_lock(&e->mu);
	bool s = e->stop;
	pthread_mutex_unlock(&e->mu);
	return s;
}

/* Find the runtime and start the session (on the reading thread).
 * Returns 1 started, 0 not (e->warn says why, or stopped first). */
static int ep_begin(struct ep *e)
{
	char sock[256];
	while (rtd_ipc_socket_find(e->pid, sock, sizeof(sock), NULL, 0) != 0) {
		if (!e->child || ep_stopping(e) || kill(e->pid, 0) < 0)
			return 0;
		poll(NULL, 0, REC_SOCKET_POLL_MS);
	}
	int err = 0;
	rtd_ipc_client *c = rtd_ipc_client_new(e->pid, NULL, &err);
	if (!c) {
		ep_warn(e, "pid %d: its diagnostics socket: %s", (int)e->pid,
			rtd_ipc_errmsg_last());
		return 0;
	}
	RTD_OPTS(rtd_ipc_session_opts, so, .providers = e->prov.v, .n_providers = e->prov.n,
		 .no_rundown = true, .no_stackwalk = true);
	rtd_ipc_session *s = rtd_ipc_session_start(c, &so, &err);
	if (!s) {
		ep_warn(e, "pid %d: starting the EventPipe session: %s", (int)e->pid,
			rtd_ipc_client_errmsg(c));
		rtd_ipc_client_free(c);
		return 0;
	}
	rtd_source *raw = rtd_ipc_session_source(s, NULL, &err);
	rtd_source *clr = raw ? rtd_nettrace_source_clr(raw, &err) : NULL;
	pthread_mutex_lock(&e->mu);
	e->c = c;
	e->s = s;
	e->raw = raw;
	e->clr = clr;
	e->started = true;
	bool stop = e->stop;
	pthread_mutex_unlock(&e->mu);
	if (!clr) {
		ep_warn(e, "reading the EventPipe stream: %s", rtd_strerror(err));
		stop = true;
	}
	if (stop) {
		/* stopped while it started: it must not stay on */
		pthread_mutex_lock(&e->mu);
		if (!e->stop_sent) {
			e->stop_sent = true;
			rtd_ipc_session_stop(s);
		}
		pthread_mutex_unlock(&e->mu);
	}
	return clr != NULL;
}

static int ep_next(void *impl, struct rtd_record *rec)
{
	struct ep *e = impl;
	if (!e->clr && (e->started || !ep_begin(e)))
		return 0;
	const struct rtd_record *r;
	int rc = rtd_source_next(e->clr, &r);
	if (rc == 1) {
		uint32_t src = rec->source;
		*rec = *r;
		rec->source = src;
		return 1;
	}
	if (rc == 0) {
		e->closed = true;
		return 0;
	}
	return rtd_source_error(rec, rc, r->offset, r->message);
}

static int ep_clock(void *impl, struct rtd_clock *out)
{
	struct ep *e = impl;
	return e->clr ? rtd_source_clock(e->clr, out) : 0;
}

static void ep_stop(void *ctx)
{
	struct ep *e = ctx;
	pthread_mutex_lock(&e->mu);
	e->stop = true;
	if (e->s && !e->stop_sent) {
		e->stop_sent = true;
		rtd_ipc_session_stop(e->s);
	} else if (e->s) {
		/* asked again (the recording is being freed): a runtime that
		 * did not close its stream must not hold the reading thread */
		shutdown(rtd_ipc_session_fd(e->s), SHUT_RDWR);
	}
	pthread_mutex_unlock(&e->mu);
}

static void ep_free(void *impl)
{
	struct ep *e = impl;
	ep_stop(e); /* however it ends, the session is stopped */
	rtd_source_free(e->clr);
	rtd_source_free(e->raw);
	rtd_ipc_session_free(e->s);
	rtd_ipc_client_free(e->c);
	rtd_ipc_providers_clear(&e->prov);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

static const struct rtd_source_ops ep_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "eventpipe",
	.next = ep_next,
	.clock = ep_clock,
	.free = ep_free,
};

int rtd_recorder_providers(const char *spec, struct rtd_ipc_providers *out, char *err,
			   size_t errlen)
{
	return rtd_recorder_providers_clr(spec, NULL, out, err, errlen);
}

int rtd_recorder_providers_clr(const char *spec, const char *clrevents,
			       struct rtd_ipc_providers *out, char *err, size_t errlen)
{
	uint64_t kw = 0;
	char bad[128] = "";
	int r = rtd_ipc_clrevents_parse(clrevents ? clrevents
						  : "gc+jit+loader+contention+exception+threading",
					&kw, bad, sizeof(bad));
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "no keyword '%s' (dotnet-trace's names: gc, jit, "
					      "loader, contention, exception, threading, ...)", bad);
		return -RTD_E_INVAL;
	}
	/* TplEventSource's TasksFlowActivityIds (0x80) makes the runtime give
	 * each EventSource Start an ActivityID that its Stop carries on any
	 * thread, as PerfView asks: async Start/Stop pairs are matched by it
	 * (rtd_nettrace_source_clr()) */
	char def[224];
	snprintf(def, sizeof(def),
		 "Microsoft-Windows-DotNETRuntime:0x%llx:4,System.Threading.Tasks.TplEventSource:0x80:4",
		 (unsigned long long)kw);
	if (!r)
		r = rtd_ipc_providers_parse(def, out, err, errlen);
	if (!r && spec)
		r = rtd_ipc_providers_parse(spec, out, err, errlen);
	return r;
}

/* ---- the recorder -------------------------------------------------------------- */

struct added {
	rtd_source *src;
	struct rtd_recorder_source_opts o;
	int64_t (*lag_fn)(void *ctx); /* the Go trace's: its lag as it learns it */
	void *lag_ctx;
};

struct rtd_recorder {
	struct rtd_recorder_opts o;
	struct rtd_perf_profiler *cpu, *off;
	struct rtd_perf_syscall_recorder *sysc;
	struct ep *ep;            /* owned by its source once started */
	rtd_gotrace_recorder *go; /* @go_trace_url's capture */
	bool dotnet;
	struct added add[RTD_RECORDER_MAX_SOURCES];
	size_t nadd;
	rtd_source *srcs[RTD_RECORDER_MAX_STREAMS];
	const char *names[RTD_RECORDER_MAX_STREAMS];
	int kind[RTD_RECORDER_MAX_STREAMS]; /* what each merged source is */
	size_t n;
	uint64_t runtime;
	rtd_source *merge, *out;
	volatile int stop;
	bool started, ended;
	uint64_t cpu_samples, waits;
	int64_t next_heap_trim;   /* CLOCK_MONOTONIC ns */
	/* kept when the sources are freed at the stream's end */
	uint64_t late;
	bool ep_started, ep_closed;
	char end_msg[256];
	char err[512];
	char warn[1024];
};

enum { K_CPU = 1, K_OFF, K_EP, K_SYS, K_ADDED };

static _Thread_local char new_err[512];

static int rec_err(rtd_recorder *r, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (r)
		rtd_verrf(r->err, sizeof(r->err), rc, fmt, ap);
	else
		rtd_verrf(new_err, sizeof(new_err), rc, fmt, ap);
	va_end(ap);
	return rc;
}

static void add_warn(rtd_recorder *r, const char *fmt, ...)
{
	size_t l = strlen(r->warn);
	va_list ap;
	va_start(ap, fmt);
	if (l + 1 < sizeof(r->warn)) {
		vsnprintf(r->warn + l, sizeof(r->warn) - l - 1, fmt, ap);
		strcat(r->warn, "\n");
	}
	va_end(ap);
}

const char *rtd_recorder_errmsg(const rtd_recorder *r)
{
	return r ? r->err : new_err;
}

const char *rtd_recorder_warnings(const rtd_recorder *r)
{
	if (r->ep) {
		char w[sizeof(r->ep->warn)];
		pthread_mutex_lock(&r->ep->mu);
		memcpy(w, r->ep->warn, sizeof(w));
		pthread_mutex_unlock(&r->ep->mu);
		if (w[0] && !strstr(r->warn, w))
			add_warn((rtd_recorder *)r, "no EventPipe: %s", w);
	}
	return r->warn;
}

static int perf_open(rtd_recorder *r, bool offcpu, struct rtd_perf_profiler **out)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so),
					   .freq = r->o.freq ? r->o.freq : REC_DEFAULT_FREQ,
					   .callgraph = r->o.callgraph,
					   .stack_bytes = r->o.stack_bytes};
	unsigned flags = RTD_PERF_PROF_KEEP_SAMPLES;
	/* no profile is built from what was streamed: each window is
	 * forgotten once given (memory flat over a long recording) */
	if (offcpu || (r->o.flags & RTD_RECORDER_NO_PROFILE))
		flags |= RTD_PERF_PROF_WINDOWS;
	if (r->o.flags & RTD_RECORDER_ALL_SYMBOLS)
		flags |= RTD_PERF_PROF_ALL_SYMBOLS;
	if (r->o.flags & RTD_RECORDER_CHILD)
		flags |= RTD_PERF_PROF_ENABLE_ON_EXEC | RTD_PERF_PROF_NO_DOTNET;
	if (offcpu) {
		/* the CPU profiler switches the .NET perf map on: once */
		flags |= RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET;
		so.freq = 0;
	}
	struct rtd_perf_profiler_opts po = {
		.sz = sizeof(po), .pids = &r->o.pid, .npids = 1, .flags = flags, .sampler = &so,
		.offcpu_states = (r->o.flags & RTD_RECORDER_PREEMPTED) ? RTD_PERF_OFFCPU_ALL : 0};
	return rtd_perf_profiler_new(&po, out);
}

int rtd_recorder_new(const struct rtd_recorder_opts *o, rtd_recorder **out)
{
	*out = NULL;
	rtd_recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return rec_err(NULL, -ENOMEM, "out of memory");
	int rc = rtd_opts_copy(&r->o, sizeof(r->o), o, RTD_OPTS_END(rtd_recorder_opts, go_trace_seconds));
	if (rc || r->o.pid <= 0) {
		free(r);
		return rec_err(NULL, -RTD_E_INVAL, "bad options (a pid is needed)");
	}
	if ((r->o.go_trace_url && !r->o.go_trace_url[0]) || r->o.go_trace_piece < 0 ||
	    r->o.go_trace_seconds < 0) {
		free(r);
		return rec_err(NULL, -RTD_E_INVAL, "bad options (the Go trace's)");
	}
	if (!(r->o.flags & RTD_RECORDER_NO_CPU) && (rc = perf_open(r, false, &r->cpu)) < 0) {
		rec_err(NULL, rc, "CPU samples: %s", rtd_perf_profiler_errmsg(NULL));
		free(r);
		return rc;
	}
	if (r->cpu && r->o.perf_data &&
	    (rc = rtd_perf_profiler_write_data(r->cpu, r->o.perf_data)) < 0) {
		rec_err(NULL, rc, "perf.data: %s", rtd_strerror(rc));
		rtd_perf_profiler_free(r->cpu);
		free(r);
		return rc;
	}
	if (!(r->o.flags & RTD_RECORDER_NO_OFF_CPU) && perf_open(r, true, &r->off) < 0) {
		/* the rest is still worth recording: say what is missing */
		add_warn(r, "no off-CPU waits: %s (they need sched_switch samples: root, "
			"CAP_PERFMON or kernel.perf_event_paranoid <= 1)",
		     rtd_perf_profiler_errmsg(NULL));
		r->off = NULL;
	}
	if (r->o.flags & RTD_RECORDER_SYSCALLS) {
		pid_t pids[1] = {r->o.pid};
		/* a program's start-up makes thousands of calls in a burst, while
		 * the live source drains a window: 2 MB rings, as off-CPU's */
		RTD_OPTS(rtd_perf_syscall_recorder_opts, so, .pids = pids, .npids = 1,
			 .flags = (r->o.flags & RTD_RECORDER_CHILD) ? RTD_PERF_SCREC_ENABLE_ON_EXEC : 0,
			 .ring_pages = 512);
		if ((rc = rtd_perf_syscall_recorder_new(&so, &r->sysc)) < 0) {
			char msg[256];
			snprintf(msg, sizeof(msg), "%s", rtd_perf_syscall_recorder_errmsg(NULL));
			rtd_recorder_free(r);
			return rec_err(NULL, rc, "system calls: %s (they need tracefs and the right "
				       "to read tracepoints: root, CAP_PERFMON or "
				       "kernel.perf_event_paranoid <= 1)", msg);
		}
	}
	if (r->cpu && rtd_perf_monitor_user_only(rtd_perf_profiler_monitor(r->cpu))) {
		add_warn(r, "user space only: kernel.perf_event_paranoid allows this user no "
			"kernel samples (root or CAP_PERFMON give them)");
	}
	char sock[256];
	bool child = r->o.flags & RTD_RECORDER_CHILD;
	r->dotnet = !(r->o.flags & RTD_RECORDER_NO_DOTNET) &&
		    (child || rtd_ipc_socket_find(r->o.pid, sock, sizeof(sock), NULL, 0) == 0);
	if (r->dotnet) {
		struct ep *e = calloc(1, sizeof(*e));
		char msg[256] = "";
		rc = e ? rtd_recorder_providers_clr(r->o.providers, r->o.clrevents, &e->prov, msg,
						    sizeof(msg))
		       : -ENOMEM;
		if (rc) {
			if (e)
				rtd_ipc_providers_clear(&e->prov);
			free(e);
			rtd_recorder_free(r);
			return rec_err(NULL, rc, "--providers: %s", msg[0] ? msg : rtd_strerror(rc));
		}
		pthread_mutex_init(&e->mu, NULL);
		e->pid = r->o.pid;
		e->child = child;
		r->ep = e;
	}
	*out = r;
	return 0;
}

int rtd_recorder_add_source(rtd_recorder *r, rtd_source *src,
			    const struct rtd_recorder_source_opts *opts)
{
	int rc = !r || !src ? -RTD_E_INVAL : r->started ? -RTD_E_STATE
				  : r->nadd == RTD_RECORDER_MAX_SOURCES ? -RTD_E_CAP : 0;
	struct added a = {0};
	if (!rc)
		rc = rtd_opts_copy(&a.o, sizeof(a.o), opts,
				   RTD_OPTS_END(rtd_recorder_source_opts, lag_ns));
	if (rc) {
		rtd_source_free(src);
		return rc;
	}
	a.src = src;
	r->add[r->nadd++] = a;
	return 0;
}

static int put(rtd_recorder *r, rtd_source *s, const char *name, int kind, bool runtime)
{
	r->srcs[r->n] = s;
	r->names[r->n] = name;
	r->kind[r->n] = kind;
	if (runtime)
		r->runtime |= 1ull << r->n;
	r->n++;
	return 0;
}

/* The stream ended (every source did, or one failed): stop the others
 * and join every thread now, so that nothing runs beside the caller's
 * stats and profile (the profilers are not thread-safe), keeping what
 * the sources knew. */
static void finish(rtd_recorder *r)
{
	r->ended = true;
	rtd_recorder_stop(r);
	rtd_recorder_warnings(r); /* the EventPipe side's reason, kept */
	for (size_t i = 0; i < r->n; i++) {
		struct rtd_source_stats ss;
		rtd_source_stats(r->srcs[i], &ss);
		r->late += ss.clamped;
	}
	if (r->ep) {
		r->ep_started = r->ep->started;
		r->ep_closed = r->ep->closed;
	}
	rtd_source_free(r->merge);
	r->merge = NULL;
	for (size_t i = 0; i < r->n; i++) {
		rtd_source_free(r->srcs[i]); /* joins its threads; the EventPipe
					      * one frees r->ep */
		r->srcs[i] = NULL;
	}
	r->ep = NULL;
}

/* The stream the caller pulls: the merge, counted on its way out. */
/* Every REC_HEAP_TRIM_NS, while the stream is idle: the free pages of the
 * process's heaps back to the kernel. Each window allocates and frees
 * (drained samples, names, queues) beside what lives on, and glibc keeps
 * what was freed inside its arenas' heaps: a recording's RSS crept towards
 * the heaps' high-water mark (the symbol tables' loading at the start) as
 * malloc touched more of their free pages, with the live bytes flat
 * (bench/flight/rss.sh with HEAPSTAT=1: +2 MB in 10 minutes, and steps of
 * 1-2.4 MB at random times). */
#define REC_HEAP_TRIM_NS (10 * 1000000000ll)
#define REC_GEN_STACKS 128u

static void heap_give_back(rtd_recorder *r)
{
#ifdef __GLIBC__
	int64_t now = (int64_t)rtd_now_ns();
	if (now < r->next_heap_trim)
		return;
	r->next_heap_trim = now + REC_HEAP_TRIM_NS;
	malloc_trim(0);
#else
	(void)r;
#endif
}

static int out_next(void *impl, struct rtd_record *rec)
{
	rtd_recorder *r = impl;
	const struct rtd_record *m;
	int rc = rtd_source_next(r->merge, &m);
	*rec = *m;
	if (rc == 1) {
		int k = m->source < r->n ? r->kind[m->source] : 0;
		if (k == K_CPU && m->kind == RTD_REC_SAMPLE)
			r->cpu_samples++;
		else if (k == K_OFF && m->kind == RTD_REC_SLICE)
			r->waits++;
	} else if (rc == RTD_SOURCE_IDLE) {
		heap_give_back(r);
	} else if (rc == 0 || rc < 0) {
		/* the error's text lives in the merge, which finish() frees */
		snprintf(r->end_msg, sizeof(r->end_msg), "%s", m->message ? m->message : "");
		rec->message = r->end_msg;
		finish(r);
	}
	return rc;
}

static int out_clock(void *impl, struct rtd_clock *c)
{
	rtd_recorder *r = impl;
	if (!r->merge) { /* ended: CLOCK_MONOTONIC, as the merge's */
		c->domain = RTD_CLOCK_MONOTONIC;
		c->flags = RTD_CLOCK_HAS_MONO;
		c->freq = 1000000000u;
		return 0;
	}
	return rtd_source_clock(r->merge, c);
}

static int out_fd(void *impl)
{
	rtd_recorder *r = impl;
	return r->merge ? rtd_source_fd(r->merge) : -1;
}

static const struct rtd_source_ops out_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "record",
	.next = out_next,
	.clock = out_clock,
	.fd = out_fd,
};

static void go_end(void *ctx)
{
	rtd_gotrace_recorder_end(ctx);
}

static int64_t go_lag(void *ctx)
{
	return rtd_gotrace_recorder_lag_ns(ctx);
}

/* The Go trace's rolling capture, as one more added source (the last). */
static int go_start(rtd_recorder *r)
{
	if (r->nadd == RTD_RECORDER_MAX_SOURCES)
		return rec_err(r, -RTD_E_CAP, "the Go trace: too many sources");
	double piece = r->o.go_trace_piece > 0 ? r->o.go_trace_piece : REC_GO_PIECE_S;
	RTD_OPTS(rtd_gotrace_recorder_opts, go, .host = r->o.go_trace_url,
		 .pid = (uint32_t)r->o.pid, .seconds = r->o.go_trace_seconds,
		 .end_grace = r->o.go_trace_seconds > 0 ? REC_GO_END_GRACE_S : 0, .piece = piece);
	int e = rtd_gotrace_recorder_start(&go, &r->go);
	rtd_source *gs = e ? NULL : rtd_gotrace_recorder_live(r->go, &e);
	if (!gs)
		return rec_err(r, e, "the Go trace %s: %s", r->o.go_trace_url, rtd_strerror(e));
	/* its records are a generation late (Go 1.22+), or a piece (older) */
	r->add[r->nadd++] = (struct added){
		.src = gs,
		.o = {.sz = sizeof(struct rtd_recorder_source_opts), .runtime = true,
		      .blocking = true, .stop = go_end, .stop_ctx = r->go},
		.lag_fn = go_lag,
		.lag_ctx = r->go,
	};
	return 0;
}

rtd_gotrace_recorder *rtd_recorder_gotrace(const rtd_recorder *r)
{
	return r ? r->go : NULL;
}

int rtd_recorder_start(rtd_recorder *r)
{
	if (!r || r->started)
		return -RTD_E_STATE;
	r->started = true;
	int err = 0;
	/* generations of 128 stacks: at the ~6 new stacks a second of a busy
	 * .NET program, two of 512 took 3 minutes to fill, which a 10-minute
	 * ring's RSS showed as growth */
	RTD_OPTS(rtd_perf_source_opts, po, .window_ms = r->o.window_ms,
		 .max_records = r->o.queue_records, .stop = &r->stop,
		 .flags = r->o.flags & RTD_RECORDER_COPIED ? RTD_PERF_SOURCE_COPIED : 0,
		 .gen_stacks = REC_GEN_STACKS);
	rtd_source *s;
	if (r->cpu) {
		if (!(s = rtd_perf_source_live(r->cpu, &po, &err)))
			return rec_err(r, err, "the CPU samples' source: %s", rtd_strerror(err));
		put(r, s, "perf", K_CPU, false);
	}
	if (r->off) {
		if (!(s = rtd_perf_source_live(r->off, &po, &err)))
			return rec_err(r, err, "the off-CPU source: %s", rtd_strerror(err));
		put(r, s, "perf-offcpu", K_OFF, false);
	}
	if (r->sysc) {
		if (!(s = rtd_perf_source_syscalls_live(r->sysc, &po, &err)))
			return rec_err(r, err, "the system calls' source: %s", rtd_strerror(err));
		put(r, s, "perf-syscalls", K_SYS, false);
	}
	RTD_OPTS(rtd_source_thread_opts, to, .max_records = r->o.queue_records,
		 .lag_ns = r->o.lag_ns);
	if (r->ep) {
		/* a running runtime's session is on before this returns, so
		 * that what the caller starts after it is recorded (a child's
		 * runtime is not up yet: its reading thread waits for it) */
		if (!r->ep->child)
			ep_begin(r->ep);
		rtd_source *in = rtd_source_new(&ep_ops, r->ep);
		if (!in)
			return rec_err(r, -ENOMEM, "out of memory");
		struct ep *e = r->ep;
		r->ep = NULL; /* the source owns it now */
		to.stop = ep_stop;
		to.stop_ctx = e;
		if (!(s = rtd_source_thread(in, &to, &err)))
			return rec_err(r, err, "the EventPipe source: %s", rtd_strerror(err));
		r->ep = e; /* borrowed from here on, for its state */
		put(r, s, "eventpipe", K_EP, true);
	}
	if (r->o.go_trace_url && (err = go_start(r)) < 0)
		return err;
	for (size_t i = 0; i < r->nadd; i++) {
		struct added *a = &r->add[i];
		s = a->src;
		a->src = NULL;
		const char *name = rtd_source_name(s); /* its own, not its thread's */
		if (a->o.blocking) {
			to.stop = a->o.stop;
			to.stop_ctx = a->o.stop_ctx;
			to.lag_ns = a->o.lag_ns ? a->o.lag_ns : r->o.lag_ns;
			to.lag_fn = a->lag_fn;
			to.lag_ctx = a->lag_ctx;
			if (!(s = rtd_source_thread(s, &to, &err)))
				return rec_err(r, err, "source %zu: %s", i, rtd_strerror(err));
		}
		put(r, s, name, K_ADDED, a->o.runtime);
	}
	r->merge = rtd_source_merge(r->srcs, r->n, NULL);
	r->out = r->merge ? rtd_source_new(&out_ops, r) : NULL;
	if (!r->out)
		return rec_err(r, -ENOMEM, "out of memory merging the sources");
	return 0;
}

rtd_source *rtd_recorder_source(rtd_recorder *r)
{
	return r ? r->out : NULL;
}

const char *rtd_recorder_source_name(const rtd_recorder *r, uint32_t i)
{
	return r && i < r->n ? r->names[i] : NULL;
}

uint64_t rtd_recorder_runtime_sources(const rtd_recorder *r)
{
	return r ? r->runtime : 0;
}

void rtd_recorder_stop(rtd_recorder *r)
{
	if (!r)
		return;
	r->stop = 1; /* the perf sources end after their window */
	if (r->started && r->ep)
		ep_stop(r->ep);
	for (size_t i = 0; i < r->nadd; i++)
		if (r->add[i].o.stop)
			r->add[i].o.stop(r->add[i].o.stop_ctx);
}

bool rtd_recorder_target_ended(const rtd_recorder *r)
{
	struct rtd_pstat st;
	/* gone, unreadable, or a zombie: it has exited */
	return rtd_pstat_read(NULL, (int)r->o.pid, 0, &st) < 0 || st.state == 'Z' ||
	       st.state == 'X';
}

int rtd_recorder_profile(rtd_recorder *r, rtd_profile **out)
{
	*out = NULL;
	if (!r || !r->cpu || (r->started && !r->ended) ||
	    (r->o.flags & RTD_RECORDER_NO_PROFILE))
		return -RTD_E_STATE;
	return rtd_perf_profiler_profile(r->cpu, out);
}

void rtd_recorder_stats(const rtd_recorder *r, struct rtd_recorder_stats *out)
{
	if (!r)
		return;
	struct rtd_recorder_stats t = {.sz = sizeof(t)};
	if (r->started && !r->ended) {
		/* the profilers run on their threads: only what is ours */
		t.cpu_samples = r->cpu_samples;
		t.waits = r->waits;
		rtd_stats_copy(out, &t, sizeof(t));
		return;
	}
	t.cpu_samples = r->cpu_samples;
	t.waits = r->waits;
	for (int i = 0; i < 2; i++) {
		struct rtd_perf_profiler *p = i ? r->off : r->cpu;
		if (!p)
			continue;
		struct rtd_perf_profiler_stats ps = {.sz = sizeof(ps)};
		rtd_perf_profiler_stats(p, &ps);
		t.lost += ps.lost;
		t.user_only |= ps.user_only;
	}
	t.lost += rtd_perf_syscall_recorder_lost(r->sysc);
	t.late = r->late;
	t.eventpipe = r->ep_started;
	t.eventpipe_closed = r->ep_closed;
	rtd_stats_copy(out, &t, sizeof(t));
}

void rtd_recorder_free(rtd_recorder *r)
{
	if (!r)
		return;
	rtd_recorder_stop(r);
	rtd_source_free(r->out);
	rtd_source_free(r->merge);
	/* each source joins its threads (the EventPipe one stops its session) */
	for (size_t i = 0; i < r->n; i++)
		rtd_source_free(r->srcs[i]);
	if (!r->started && r->ep)
		ep_free(r->ep);
	for (size_t i = 0; i < r->nadd; i++)
		rtd_source_free(r->add[i].src);
	rtd_perf_syscall_recorder_free(r->sysc); /* its source, which ran it, is gone */
	rtd_gotrace_recorder_free(r->go);        /* its source too */
	rtd_perf_profiler_free(r->cpu); /* the .NET perf map it switched on: off */
	rtd_perf_profiler_free(r->off);
	if ((r->o.flags & RTD_RECORDER_CHILD) && !(r->o.flags & RTD_RECORDER_NO_DOTNET) &&
	    rtd_recorder_target_ended(r)) {
		/* the perf map the child was told to write (rtdiag record --
		 * COMMAND sets DOTNET_PerfMapEnabled): not left in /tmp */
		char map[64];
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)r->o.pid);
		unlink(map);
	}
	free(r);
}
