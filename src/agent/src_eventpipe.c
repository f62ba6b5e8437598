/* SPDX-License-Identifier: MIT */
/*
 * src_eventpipe.c - CPU profiles of a .NET process from one long EventPipe
 * session: Microsoft-DotNETCore-SampleProfiler's ThreadSample events, with
 * methods named from the runtime's own MethodLoadVerbose/ModuleLoad events
 * (JIT and Loader keywords, verbose).
 *
 * Methods compiled before the agent attached, and ready-to-run code the
 * session saw no load event for, are named by a rundown: a second, short
 * session with rundown on, stopped at once, whose MethodDCEndVerbose
 * events list every method the runtime has. One runs at attach (before the
 * first cut, so no window holds unnamed frames from it) and again when a
 * cut finds frames no method covers, at most once a minute (backing off to
 * once in ten minutes while they stay unnamed: stubs no rundown names).
 *
 * Both sessions are read by the agent's loop through poll(); nothing here
 * blocks except the short IPC handshakes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "common/log.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"

#define EP_READ_CHUNK (64u << 10)
#define EP_READ_BUDGET (4u << 20)  /* bytes per readable() call */
#define EP_BUFFER_MB 32
#define KW_LOADER 0x8ull
#define KW_JIT 0x10ull
#define KW_NGEN 0x20ull
#define RUNDOWN_MIN_NS 60000000000ull    /* 1 min between rundowns */
#define RUNDOWN_MAX_NS 600000000000ull   /* backing off to 10 min */
#define RUNDOWN_WAIT_NS 30000000000ull   /* a rundown may take this long */

struct ep_session {
	rtd_ipc_session *s;
	rtd_nettrace *dec;
	bool ended;
};

struct ep {
	rtd_ipc_client *c;
	struct ep_session main;
	struct ep_session rd;     /* a rundown in flight, or none */
	uint64_t rd_deadline;
	rtd_nettrace_profiler *prof;
	int prof_err;
	bool main_fed;            /* the profiler has the main session's clock */
	bool named;               /* the first rundown is done */
	uint64_t next_rundown;    /* monotonic ns; 0: none wanted */
	uint64_t rundown_gap;
	uint64_t rundowns;
	uint8_t buf[EP_READ_CHUNK];
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev);
static int on_seqpoint(void *ctx, uint64_t ts);
static int on_rd_event(void *ctx, const struct rtd_nettrace_event *ev);

static void ep_session_close(struct ep_session *es)
{
	rtd_ipc_session_free(es->s);
	rtd_nettrace_free(es->dec);
	memset(es, 0, sizeof(*es));
}

static int ep_session_open(struct source *src, struct ep_session *es,
			   const struct rtd_ipc_session_opts *o,
			   rtd_nettrace_event_fn fn, bool seqpoints)
{
	struct ep *e = src->priv;
	int err = 0;
	es->s = rtd_ipc_session_start(e->c, o, &err);
	if (!es->s) {
		snprintf(src->err, sizeof(src->err), "%s",
			 rtd_ipc_client_errmsg(e->c)[0]
				 ? rtd_ipc_client_errmsg(e->c)
				 : rtd_strerror(err));
		return err ? err : -RTD_E_IPC_RUNTIME;
	}
	struct rtd_nettrace_opts no = {
		.sz = sizeof(no),
		.ctx = src,
		.on_event = fn,
		.on_seqpoint = seqpoints ? on_seqpoint : NULL,
	};
	es->dec = rtd_nettrace_new(&no);
	if (!es->dec) {
		rtd_ipc_session_free(es->s);
		es->s = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int new_profiler(struct source *src)
{
	struct ep *e = src->priv;
	rtd_nettrace_profiler_free(e->prof);
	struct rtd_nettrace_profiler_opts po = {
		.sz = sizeof(po),
		.managed_only = !src->a->c->dotnet_cpu_external,
	};
	e->prof = rtd_nettrace_profiler_new(&po);
	e->main_fed = false;
	e->named = false;
	e->prof_err = 0;
	return e->prof ? 0 : -ENOMEM;
}

static int open_main(struct source *src)
{
	struct rtd_ipc_provider prov[] = {
		{.name = "Microsoft-DotNETCore-SampleProfiler",
		 .keywords = 0,
		 .level = 5},
		{.name = "Microsoft-Windows-DotNETRuntime",
		 .keywords = KW_LOADER | KW_JIT | KW_NGEN,
		 .level = 5},
	};
	struct rtd_ipc_session_opts o = {
		.sz = sizeof(o),
		.providers = prov,
		.n_providers = 2,
		.buffer_mb = EP_BUFFER_MB,
		.no_rundown = true,
	};
	struct ep *e = src->priv;
	int rc = new_profiler(src);
	if (!rc)
		rc = ep_session_open(src, &e->main, &o, on_event, true);
	return rc;
}

/* Start a rundown session and stop it at once: the runtime answers with
 * every method and module, then closes the stream. */
static int open_rundown(struct source *src)
{
	struct ep *e = src->priv;
	struct rtd_ipc_provider prov = {
		.name = "Microsoft-Windows-DotNETRuntime",
		.keywords = 0,
		.level = 0,
	};
	struct rtd_ipc_session_opts o = {
		.sz = sizeof(o),
		.providers = &prov,
		.n_providers = 1,
		.buffer_mb = EP_BUFFER_MB,
	};
	int rc = ep_session_open(src, &e->rd, &o, on_rd_event, false);
	if (rc)
		return rc;
	rc = rtd_ipc_session_stop(e->rd.s);
	if (rc) {
		ep_session_close(&e->rd);
		return rc;
	}
	e->rd_deadline = mono_ns() + RUNDOWN_WAIT_NS;
	e->rundowns++;
	return 0;
}

static int ep_start(struct source *src)
{
	struct ep *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	src->priv = e;
	src->kinds = 1u << PK_CPU;
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .timeout_ms = 5000};
	int err = 0;
	e->c = rtd_ipc_client_new(src->t->pid, &co, &err);
	if (!e->c) {
		snprintf(src->err, sizeof(src->err), "%s",
			 rtd_ipc_errmsg_last());
		return err ? err : -RTD_E_IPC_NOSOCKET;
	}
	e->rundown_gap = RUNDOWN_MIN_NS;
	return open_main(src);
}

static int ep_fds(struct source *src, int *fds, int max)
{
	struct ep *e = src->priv;
	int n = 0;
	if (e->main.s && !e->main.ended && n < max)
		fds[n++] = rtd_ipc_session_fd(e->main.s);
	if (e->rd.s && !e->rd.ended && n < max)
		fds[n++] = rtd_ipc_session_fd(e->rd.s);
	return n;
}

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct source *src = ctx;
	struct ep *e = src->priv;
	if (e->prof_err)
		return 0;
	int rc = rtd_nettrace_profiler_event(e->prof, e->main.dec, ev);
	if (rc)
		e->prof_err = rc;
	e->main_fed = true;
	return 0;
}

static int on_seqpoint(void *ctx, uint64_t ts)
{
	struct source *src = ctx;
	struct ep *e = src->priv;
	(void)ts;
	if (!e->prof_err) {
		int rc = rtd_nettrace_profiler_seqpoint(e->prof);
		if (rc)
			e->prof_err = rc;
	}
	return 0;
}

static int on_rd_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct source *src = ctx;
	struct ep *e = src->priv;
	/* method and module events only; the profiler ignores the rest */
	if (!e->prof_err) {
		int rc = rtd_nettrace_profiler_event(e->prof, e->rd.dec, ev);
		if (rc)
			e->prof_err = rc;
	}
	return 0;
}

/* Read what one session has, up to a budget. Returns 1 at its end. */
static int drain(struct source *src, struct ep_session *es)
{
	struct ep *e = src->priv;
	size_t total = 0;
	while (total < EP_READ_BUDGET) {
		ssize_t n = rtd_ipc_session_read(es->s, e->buf, sizeof(e->buf), 0);
		if (n == -RTD_E_IPC_TIMEOUT || n == -EINTR || n == -EAGAIN)
			return 0;
		if (n <= 0) {
			es->ended = true;
			if (n < 0)
				snprintf(src->err, sizeof(src->err),
					 "reading the session: %s",
					 rtd_strerror((int)n));
			return 1;
		}
		total += (size_t)n;
		int rc = rtd_nettrace_feed(es->dec, e->buf, (size_t)n);
		if (rc < 0) {
			snprintf(src->err, sizeof(src->err), "%s",
				 rtd_nettrace_error(es->dec, NULL));
			es->ended = true;
			return -1;
		}
		if (rc == 1) { /* the stream's end marker */
			es->ended = true;
			return 1;
		}
	}
	return 0;
}

static int ep_readable(struct source *src, int fd)
{
	struct ep *e = src->priv;
	if (e->rd.s && fd == rtd_ipc_session_fd(e->rd.s)) {
		if (drain(src, &e->rd)) {
			ep_session_close(&e->rd);
			e->named = true;
		}
		return 0;
	}
	if (!e->main.s)
		return 0;
	int rc = drain(src, &e->main);
	if (rc == 0 && !e->named && !e->rd.s && e->main_fed) {
		/* the profiler has the main session's clock: name what was
		 * compiled before we came */
		if (open_rundown(src))
			e->named = true; /* go on unnamed; retried on demand */
	}
	return rc > 0 ? 1 : rc;
}

static int ep_take(struct source *src, struct take *t)
{
	struct ep *e = src->priv;
	uint64_t now = mono_ns();
	if (e->rd.s && now > e->rd_deadline) {
		rtd_debug("pid %d: rundown did not end in time", (int)src->t->pid);
		ep_session_close(&e->rd);
		e->named = true;
	}
	if (!e->named || e->rd.s)
		return 0; /* samples wait in the profiler until names are in */
	if (e->prof_err) {
		snprintf(src->err, sizeof(src->err), "profile: %s",
			 rtd_strerror(e->prof_err));
		return e->prof_err;
	}
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	if (!p)
		return -ENOMEM;
	int rc = rtd_nettrace_profiler_take(e->prof, p);
	if (rc < 0) {
		rtd_profile_free(p);
		return rc;
	}
	if (rc > 0 && !e->next_rundown) {
		e->next_rundown = now + e->rundown_gap;
		if (e->rundown_gap < RUNDOWN_MAX_NS)
			e->rundown_gap *= 2;
	}
	if (e->next_rundown && now >= e->next_rundown && e->main_fed) {
		e->next_rundown = 0;
		if (open_rundown(src) == 0)
			e->named = false; /* the next cut waits for it */
	}
	t->p[PK_CPU] = p;
	t->period[PK_CPU] = 1000000; /* the sample profiler's 1 ms */
	return 0;
}

static int ep_pause(struct source *src, bool pause)
{
	struct ep *e = src->priv;
	if (pause) {
		/* closing the stream ends the session in the runtime: its
		 * sampling stops too */
		ep_session_close(&e->rd);
		ep_session_close(&e->main);
		return 0;
	}
	/* a new session, a new profiler: each thread's last sample is from
	 * before the pause and must not weigh the pause */
	return open_main(src);
}

static void ep_free(struct source *src)
{
	struct ep *e = src->priv;
	if (!e)
		return;
	ep_session_close(&e->rd);
	ep_session_close(&e->main);
	rtd_nettrace_profiler_free(e->prof);
	rtd_ipc_client_free(e->c);
	free(e);
	src->priv = NULL;
}

const struct source_ops source_eventpipe = {
	.name = "eventpipe",
	.start = ep_start,
	.fds = ep_fds,
	.readable = ep_readable,
	.take = ep_take,
	.pause = ep_pause,
	.free = ep_free,
};
