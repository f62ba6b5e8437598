/* SPDX-License-Identifier: MIT */
/*
 * src_eventpipe.c - profiles and counters of a .NET process from one long
 * EventPipe session: the providers src/dotnet asks for the profile kinds
 * (rtd_ipc_profile_request: SampleProfiler's thread samples for CPU,
 * GC/AllocationTick for allocations, Contention/Start+Stop for locks,
 * Exception/Start for exceptions, WaitHandleWait/Start+Stop for waits
 * (/block; .NET 9+: an older runtime is asked its version at attach and
 * gets no wait keyword, the reason kept for /block's answer), and the
 * runtime's own MethodLoadVerbose,
 * R2RGetEntryPoint and ModuleLoad events, filtered, to name methods), plus
 * the counter providers (rtd_counters_request: EventCounters and
 * System.Diagnostics.Metrics), read into the target's /metrics series.
 *
 * Methods compiled before the agent attached, and ready-to-run code the
 * session saw no load event for, are named by a rundown: a second, short
 * session with rundown on, stopped at once, whose MethodDCEndVerbose
 * events list every method the runtime has. One runs at attach (before the
 * first cut, so no window holds unnamed frames from it) and again when a
 * cut finds frames no method covers, at most once a minute (backing off to
 * once in ten minutes while they stay unnamed: stubs no rundown names).
 *
 * Both sessions are read by the agent's loop through poll(), their
 * requests' replies too (rtd_ipc_session_begin(): a starting runtime
 * answers after seconds on a loaded machine, and is waited for while it
 * lives, and ProcessInfo2's at start: rtd_ipc_process_info_begin());
 * nothing here waits for a runtime. The main session is a live
 * record source (rtd_ipc_session_source_live(), in stream order, frames
 * by address) pulled into the profile builder and the counters reader at
 * once; the rundown stays a decoder whose method events go into that
 * source's method table, the one the builder names frames with.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "common/log.h"
#include "rtdiag/counters.h"
#include "rtdiag/ipc_client.h"
#include "rtdiag/ipc_process.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/ipc_session.h"
#include "rtdiag/ipc_source.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/nettrace_decoder.h"
#include "rtdiag/nettrace_profiler.h"

#define EP_READ_CHUNK (64u << 10)
/* bytes per readable() call: with the spool a session's buffer may hold
 * megabytes, and a round of 4 MiB held the loop (pulls, other targets)
 * for seconds on a loaded machine; before the spool a round found what
 * the socket held (~212 KB) and what came meanwhile */
#define EP_READ_BUDGET (512u << 10)
#define EP_BUFFER_MB 32
#define RUNDOWN_MIN_NS 60000000000ull    /* 1 min between rundowns */
#define RUNDOWN_MAX_NS 600000000000ull   /* backing off to 10 min */
#define RUNDOWN_WAIT_NS 30000000000ull   /* a rundown may take this long */
#define ATTACH_SAY_NS 5000000000ull      /* a reply this late is logged */

struct ep_session {
	rtd_ipc_session *s;
	rtd_nettrace *dec;
	bool asked;   /* begun: its reply still to come */
	bool ended;
};

struct ep {
	rtd_ipc_client *c;
	rtd_ipc_call *info;       /* ProcessInfo2 asked, its reply to come */
	bool attaching;           /* the main session's reply still to come */
	bool attach_said;         /* its wait was logged */
	uint64_t attach_ns;       /* monotonic: when it was asked */
	struct ep_session main;   /* its records: src, not dec */
	rtd_source *src;          /* the main session's live source */
	struct ep_session rd;     /* a rundown in flight, or none */
	uint64_t rd_deadline;
	rtd_nettrace_profiler *prof;
	int prof_err;
	rtd_counters *counters;
	unsigned unsupported;     /* RTD_NETTRACE_PROFILE_* the runtime lacks */
	bool named;               /* the first rundown is done */
	uint64_t next_rundown;    /* monotonic ns; 0: none wanted */
	uint64_t rundown_gap;
	uint64_t rundowns;
	uint64_t stall_until;     /* RTDIAG_AGENT_TEST_STALL: undecoded until */
	bool closed;              /* ep_close(): no session opens again */
	uint8_t buf[EP_READ_CHUNK];
};

static int open_rundown(struct source *src);
static int on_rd_event(void *ctx, const struct rtd_nettrace_event *ev);

static void ep_session_close(struct ep_session *es)
{
	rtd_ipc_session_free(es->s);
	rtd_nettrace_free(es->dec);
	memset(es, 0, sizeof(*es));
}

/* Keep why the client's last command failed; returns the error. */
static int ipc_failed(struct source *src, int err)
{
	struct ep *e = src->priv;
	snprintf(src->err, sizeof(src->err), "%s",
		 rtd_ipc_client_errmsg(e->c)[0] ? rtd_ipc_client_errmsg(e->c)
						: rtd_strerror(err));
	return err ? err : -RTD_E_IPC_RUNTIME;
}

/* The spool's thread watches an answered session's socket from now on and
 * reads it whenever this loop falls behind: the runtime never waits for
 * this loop's decoding */
static void spool_session(struct source *src, struct ep_session *es)
{
	int rc = src->a->spool ? rtd_ipc_spool_add(src->a->spool, es->s) : 0;
	if (rc)
		rtd_warn("pid %d: session read by the loop: %s", (int)src->t->pid,
			 rtd_strerror(rc));
}

static int ep_session_open(struct source *src, struct ep_session *es,
			   const struct rtd_ipc_session_opts *o,
			   rtd_nettrace_event_fn fn)
{
	struct ep *e = src->priv;
	int err = 0;
	es->s = rtd_ipc_session_begin(e->c, o, &err);
	if (!es->s)
		return ipc_failed(src, err);
	es->asked = true; /* the reply: rd_answer() */
	struct rtd_nettrace_opts no = {
		.sz = sizeof(no),
		.ctx = src,
		.on_event = fn,
	};
	es->dec = rtd_nettrace_new(&no);
	if (!es->dec) {
		rtd_ipc_session_free(es->s);
		es->s = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The kinds this source keeps: CPU goes to perf with dotnet-cpu perf. */
static unsigned ep_kinds(const struct source *src)
{
	const rtd_agent_config *c = src->a->c;
	const struct ep *e = src->priv;
	unsigned k = c->dotnet_kinds & ~e->unsupported;
	if (c->dotnet_cpu == DOTNET_CPU_PERF)
		k &= ~(unsigned)RTD_NETTRACE_PROFILE_CPU;
	return k;
}

static int new_profiler(struct source *src)
{
	struct ep *e = src->priv;
	rtd_nettrace_profiler_free(e->prof);
	struct rtd_nettrace_profiler_opts po = {
		.sz = sizeof(po),
		.kinds = ep_kinds(src),
		/* CPU: the samples of threads running managed code, each the
		 * time since the thread's previous sample; with
		 * dotnet-cpu-external every thread's time (type "wall") */
		.running_only = !src->a->c->dotnet_cpu_external,
		.managed_only = false,
	};
	e->prof = rtd_nettrace_profiler_new(&po);
	e->named = false;
	e->prof_err = 0;
	return e->prof ? 0 : -ENOMEM;
}

static int on_counter(void *ctx, const struct rtd_counter_record *r)
{
	struct source *src = ctx;
	series_record(src->a, src->t, r);
	return 0;
}

/* The source's filter: what the builder reads or the counters read, and
 * every field of the counters' types (their handlers read them by name) */
static bool ep_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	struct ep *e = ctx;
	return rtd_nettrace_profiler_want(e->prof, m) ||
	       (e->counters && rtd_counters_want(e->counters, m));
}

static size_t ep_fields(void *ctx, const struct rtd_nettrace_metadata *m)
{
	struct ep *e = ctx;
	if (e->counters && rtd_counters_want(e->counters, m))
		return SIZE_MAX;
	return rtd_nettrace_profiler_fields(e->prof, m);
}

static bool ep_field_want(void *ctx, const struct rtd_nettrace_metadata *m, size_t i)
{
	struct ep *e = ctx;
	return (e->counters && rtd_counters_want(e->counters, m)) ||
	       rtd_nettrace_profiler_field_want(e->prof, m, i);
}

/* The main session's records, to the builder and the counters. Before the
 * session's own: the source borrows the session. */
static int open_source(struct source *src)
{
	struct ep *e = src->priv;
	unsigned kinds = 0;
	if (ep_kinds(src) & RTD_NETTRACE_PROFILE_CPU)
		kinds |= 1u << RTD_REC_SAMPLE;
	if ((ep_kinds(src) & ~(unsigned)RTD_NETTRACE_PROFILE_CPU) || e->counters)
		kinds |= 1u << RTD_REC_INSTANT;
	RTD_OPTS(rtd_nettrace_source_opts, so, .kinds = kinds,
		 .address_frames = true, .stream_order = true,
		 .want = ep_want, .want_ctx = e,
		 .fields = ep_fields, .fields_ctx = e,
		 .field_want = ep_field_want);
	RTD_OPTS(rtd_ipc_live_opts, lo, .round_bytes = EP_READ_BUDGET);
	int err = 0;
	e->src = rtd_ipc_session_source_live(e->main.s, &lo, &so, &err);
	if (!e->src) {
		snprintf(src->err, sizeof(src->err), "the session's records: %s",
			 rtd_strerror(err));
		return err ? err : -ENOMEM;
	}
	return 0;
}

static int open_main(struct source *src)
{
	struct ep *e = src->priv;
	const rtd_agent_config *c = src->a->c;
	struct rtd_ipc_providers prov = {0};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o)};
	int rc = 0;
	unsigned kinds = ep_kinds(src);
	if (kinds)
		rc = rtd_ipc_profile_request(kinds, &prov, &o);
	/* .NET 10 with the request's event filter stops sending AllocationTick
	 * after its first few hundred in a session (the stream goes quiet;
	 * without the filter they keep coming): a continuous session of
	 * allocations goes unfiltered */
	if (!rc && (kinds & RTD_NETTRACE_PROFILE_ALLOC))
		for (size_t i = 0; i < prov.n; i++) {
			prov.v[i].n_filter_ids = 0;
			prov.v[i].filter_enable = false;
		}
	if (!rc && c->dotnet_counters) {
		char err[256] = "";
		rtd_counters_free(e->counters);
		e->counters = rtd_counters_new(c->dotnet_counters, on_counter,
					       src, err, sizeof(err));
		char sid[48];
		snprintf(sid, sizeof(sid), "rtdiag-agent-%d-%d", (int)getpid(),
			 (int)src->t->pid);
		rc = e->counters ? rtd_counters_request(
					   e->counters,
					   (double)c->counters_interval_ns / 1e9,
					   sid, &prov)
				 : -ENOMEM;
	}
	o.providers = prov.v;
	o.n_providers = prov.n;
	o.buffer_mb = EP_BUFFER_MB;
	o.no_rundown = true; /* names come from rundowns of our own */
	o.rundown_keyword = 0;
	if (!rc)
		rc = new_profiler(src);
	if (!rc) {
		/* a starting runtime answers once its providers' callbacks
		 * have run: seconds on a loaded machine. The reply is read
		 * when it comes (attach_answer()), the loop going on */
		int err = 0;
		e->main.s = rtd_ipc_session_begin(e->c, &o, &err);
		if (!e->main.s)
			rc = ipc_failed(src, err);
	}
	rtd_ipc_providers_clear(&prov);
	if (!rc) {
		e->attaching = true;
		e->attach_said = false;
		e->attach_ns = mono_ns();
	}
	src->starting = !rc;
	return rc;
}

/* The main session runs: its records, and a rundown on the side. */
static int main_started(struct source *src)
{
	struct ep *e = src->priv;
	unsigned kinds = ep_kinds(src);
	spool_session(src, &e->main);
	if (src->a->stall_left) {
		src->a->stall_left--;
		e->stall_until = mono_ns() + src->a->stall_ns;
	}
	int rc = open_source(src);
	if (rc) {
		ep_session_close(&e->main);
		return rc;
	}
	/* a rundown on the side names what was compiled before we came; the
	 * profiler keeps the clock of the stream that carries the samples */
	if (kinds && open_rundown(src))
		e->named = true; /* go on unnamed; retried on demand */
	if (!kinds)
		e->named = true;
	return 0;
}

/* The main session's reply, when its connection is readable. Returns 0 (or
 * still to come), -1 when the request failed: the agent tries again. */
static int attach_answer(struct source *src)
{
	struct ep *e = src->priv;
	int rc = rtd_ipc_session_answer(e->main.s);
	if (rc == 1)
		return 0;
	e->attaching = false;
	if (rc) { /* still starting: the agent says it as a start's failure */
		ipc_failed(src, rc);
		ep_session_close(&e->main);
		return -1;
	}
	if (e->attach_said || src->failures)
		rtd_info("target %s pid %d: the runtime answered after %.1f s "
			 "(%u failed before)", src->t->service, (int)src->t->pid,
			 (double)(mono_ns() - e->attach_ns) / 1e9, src->failures);
	if (main_started(src)) {
		src->starting = false;
		return -1;
	}
	src->failures = 0;
	src->starting = false;
	return 0;
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
		.rundown_keyword = RTD_IPC_RUNDOWN_NAMES,
		.no_stackwalk = true,
	};
	int rc = ep_session_open(src, &e->rd, &o, on_rd_event);
	if (rc)
		return rc;
	/* the reply, the stop and the rundown's end within this */
	e->rd_deadline = mono_ns() + RUNDOWN_WAIT_NS;
	e->rundowns++;
	return 0;
}

/* The agent's profile kind of each RTD_NETTRACE_PROFILE_* bit, by bit. */
static const enum prof_kind kind_map[RTD_NETTRACE_PROFILE_KINDS] = {
	PK_CPU, PK_ALLOC, PK_MUTEX, PK_EXCEPTIONS, PK_BLOCK};

/* Waits need .NET 9: ask the runtime its version (ProcessInfo2) and keep
 * the reason when it is older; a runtime that does not say is asked for
 * them anyway. The request is sent here and its reply read by the loop
 * (check_answer()): a stopped or busy runtime holds no other target; the
 * session is asked once the reply came. */
static void check_runtime(struct source *src)
{
	struct ep *e = src->priv;
	if (!(src->a->c->dotnet_kinds & RTD_NETTRACE_PROFILE_WAIT))
		return;
	int err = 0;
	e->info = rtd_ipc_process_info_begin(e->c, 0, &err);
	if (!e->info)
		rtd_debug("pid %d: %s", (int)src->t->pid, rtd_ipc_client_errmsg(e->c));
}

/* The kinds the source yields, as the agent's profile kinds. */
static void set_kinds(struct source *src)
{
	unsigned k = ep_kinds(src);
	src->kinds = 0;
	for (int i = 0; i < RTD_NETTRACE_PROFILE_KINDS; i++)
		if (k & (1u << i))
			src->kinds |= 1u << kind_map[i];
}

/* ProcessInfo2's reply (or its failure): the kinds known, the session is
 * asked. Returns 0, or -1 when that failed (a start's failure: tried
 * again). */
static int check_answer(struct source *src)
{
	struct ep *e = src->priv;
	int rc = rtd_ipc_call_answer(e->info);
	if (rc == 1)
		return 0;
	struct rtd_ipc_process_info pi;
	char why[160];
	if (!rc && !rtd_ipc_call_process_info(e->info, &pi)) {
		if (!rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, pi.clr_version,
					       why, sizeof(why))) {
			e->unsupported |= RTD_NETTRACE_PROFILE_WAIT;
			snprintf(src->t->nokind[PK_BLOCK],
				 sizeof(src->t->nokind[PK_BLOCK]), "%s", why);
		}
		rtd_ipc_process_info_clear(&pi);
	} else {
		rtd_debug("pid %d: %s", (int)src->t->pid, rtd_ipc_client_errmsg(e->c));
	}
	rtd_ipc_call_free(e->info);
	e->info = NULL;
	set_kinds(src);
	target_kinds_update(src->a, src->t);
	if (!open_main(src))
		return 0;
	src->starting = true; /* the agent says it as a start's failure */
	return -1;
}

static void ep_wait(void *ctx)
{
	agent_drain(ctx);
}

static int ep_start(struct source *src)
{
	struct ep *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	src->priv = e;
	/* the handshakes read the other targets' streams while they wait */
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .timeout_ms = 5000,
					 .on_wait = ep_wait, .wait_ctx = src->a};
	int err = 0;
	e->c = rtd_ipc_client_new(src->t->pid, &co, &err);
	if (!e->c) {
		snprintf(src->err, sizeof(src->err), "%s",
			 rtd_ipc_errmsg_last());
		return err ? err : -RTD_E_IPC_NOSOCKET;
	}
	e->rundown_gap = RUNDOWN_MIN_NS;
	set_kinds(src); /* waits too until the runtime says it is older */
	check_runtime(src);
	if (e->info) {
		src->starting = true; /* the session once the reply came */
		e->attach_ns = mono_ns();
		return 0;
	}
	return open_main(src);
}

static int ep_fds(struct source *src, int *fds, int max)
{
	struct ep *e = src->priv;
	int n = 0;
	if (e->info && n < max)
		fds[n++] = rtd_ipc_call_fd(e->info);
	if (e->stall_until) {
		/* a test's stalled decoding: the spool reads on, and the
		 * loop reads the replies still to come (the rundown's) */
		if (mono_ns() < e->stall_until) {
			if (e->rd.s && e->rd.asked && n < max)
				fds[n++] = rtd_ipc_session_fd(e->rd.s);
			return n;
		}
		e->stall_until = 0;
		rtd_info("pid %d: RTDIAG_AGENT_TEST_STALL: decoding again",
			 (int)src->t->pid);
	}
	if (e->main.s && !e->main.ended && n < max)
		fds[n++] = rtd_ipc_session_fd(e->main.s);
	if (e->rd.s && !e->rd.ended && n < max)
		fds[n++] = rtd_ipc_session_fd(e->rd.s);
	return n;
}

/* After the builder failed: the counters go on */
static int drop_one(void *ctx, const struct rtd_record *rec)
{
	struct ep *e = ctx;
	struct rtd_clock clock;
	if (e->counters && rec->kind == RTD_REC_INSTANT &&
	    !rtd_source_clock(e->src, &clock))
		(void)rtd_counters_record(e->counters, &clock, rec);
	return 0;
}

static int on_rd_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct source *src = ctx;
	struct ep *e = src->priv;
	/* method and module events only; the table ignores the rest. Into
	 * the table the session's own method events go to: one table, the
	 * latest definition of an address winning */
	if (!e->prof_err && e->src) {
		int rc = rtd_nettrace_methods_event(
			rtd_nettrace_source_methods(e->src), ev);
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

/* A counters reader's share of each record (its errors are its own) */
static int tee_counters(void *ctx, const struct rtd_clock *clock,
			const struct rtd_record *rec)
{
	struct ep *e = ctx;
	/* the counters read INSTANTs only: the samples, most of the
	 * stream, cost no call */
	if (e->counters && rec->kind == RTD_REC_INSTANT)
		(void)rtd_counters_record(e->counters, clock, rec);
	return 0;
}

/* Pull the main session's records of one round. Returns 1 at its end. */
static int pull_main(struct source *src)
{
	struct ep *e = src->priv;
	int rc = e->prof_err ? rtd_source_each(e->src, drop_one, e)
			     : rtd_nettrace_profiler_pull_tee(e->prof, e->src,
							      tee_counters, e);
	if (rc == RTD_SOURCE_IDLE)
		return 0;
	const struct rtd_record *er;
	int n;
	if (rc < 0 && (n = rtd_source_next(e->src, &er)) >= 0) {
		/* the builder's error: the session read on, the counters fed
		 * (the record this look took too) */
		e->prof_err = rc;
		if (n == 1)
			drop_one(e, er);
		return 0;
	}
	e->main.ended = true;
	/* the source ends here, and the agent polls its streams no more: a
	 * rundown session still open (its reply not read yet, so not on the
	 * spool) would be read by no one, and a runtime writing its rundown
	 * at exit to that full socket never exits (agent test_exit, load 20:
	 * 2 of 24 programs hung, each in sock_alloc_send_pskb) */
	if (e->rd.s) {
		ep_session_close(&e->rd);
		e->named = true;
	}
	uint64_t lost = rtd_ipc_session_dropped(e->main.s);
	if (rc < 0 && lost) {
		snprintf(src->err, sizeof(src->err),
			 "session %#llx damaged: %llu bytes dropped past its "
			 "%llu KiB read buffer (dotnet-read-buffer): the agent "
			 "fell that far behind; its records end at the damage",
			 (unsigned long long)rtd_ipc_session_id(e->main.s),
			 (unsigned long long)lost,
			 (unsigned long long)(src->a->c->dotnet_read_buffer >> 10));
		return -1;
	}
	if (rc < 0) {
		snprintf(src->err, sizeof(src->err), "%s", er->message[0] ? er->message : rtd_strerror(er->code));
		return -1;
	}
	return 1;
}

/* The rundown session's reply: then it is stopped at once (the runtime
 * answers the stop with the rundown). A refused rundown leaves the
 * frames unnamed; another is tried on demand. */
static void rd_answer(struct source *src)
{
	struct ep *e = src->priv;
	int rc = rtd_ipc_session_answer(e->rd.s);
	if (rc == 1)
		return;
	e->rd.asked = false;
	if (!rc) {
		spool_session(src, &e->rd);
		rc = rtd_ipc_session_stop(e->rd.s);
	}
	if (rc) {
		rtd_debug("pid %d: rundown: %s", (int)src->t->pid,
			  rtd_ipc_client_errmsg(e->c));
		ep_session_close(&e->rd);
		e->named = true;
	}
}

static int ep_readable(struct source *src, int fd)
{
	struct ep *e = src->priv;
	if (e->info)
		return check_answer(src);
	if (e->attaching)
		return attach_answer(src);
	if (e->rd.s && fd == rtd_ipc_session_fd(e->rd.s)) {
		if (e->rd.asked)
			rd_answer(src);
		else if (drain(src, &e->rd)) {
			ep_session_close(&e->rd);
			e->named = true;
		}
		return 0;
	}
	if (!e->src)
		return 0;
	return pull_main(src);
}

static int ep_take(struct source *src, struct take *t)
{
	struct ep *e = src->priv;
	uint64_t now = mono_ns();
	if (e->info) {
		if (!e->attach_said && now - e->attach_ns > ATTACH_SAY_NS) {
			rtd_info("target %s pid %d: no reply to ProcessInfo2 after "
				 "%.0f s; waiting", src->t->service, (int)src->t->pid,
				 (now - e->attach_ns) / 1e9);
			e->attach_said = true;
		}
		return 0;
	}
	if (e->attaching) {
		if (!e->attach_said && now - e->attach_ns > ATTACH_SAY_NS) {
			rtd_info("target %s pid %d: no reply to the session's "
				 "request after %.0f s; waiting", src->t->service,
				 (int)src->t->pid, (now - e->attach_ns) / 1e9);
			e->attach_said = true;
		}
		return 0;
	}
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
	rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
	int rc = rtd_nettrace_profiler_take(e->prof, out);
	if (rc < 0)
		return rc;
	if (rc > 0 && !e->next_rundown) {
		e->next_rundown = now + e->rundown_gap;
		if (e->rundown_gap < RUNDOWN_MAX_NS)
			e->rundown_gap *= 2;
	}
	if (e->next_rundown && now >= e->next_rundown && !e->closed) {
		e->next_rundown = 0;
		if (open_rundown(src) == 0)
			e->named = false; /* the next cut waits for it */
	}
	for (int i = 0; i < RTD_NETTRACE_PROFILE_KINDS; i++)
		t->p[kind_map[i]] = out[i];
	t->period[PK_CPU] = 1000000; /* the sample profiler's 1 ms */
	return 0;
}

static int ep_pause(struct source *src, bool pause)
{
	struct ep *e = src->priv;
	if (pause) {
		/* the version's question is not asked again: the kinds
		 * stay as they are (waits asked for) */
		rtd_ipc_call_free(e->info);
		e->info = NULL;
		/* closing the stream ends the session in the runtime: its
		 * sampling stops too */
		ep_session_close(&e->rd);
		rtd_source_free(e->src);
		e->src = NULL;
		ep_session_close(&e->main);
		e->attaching = false;
		src->starting = false;
		return 0;
	}
	/* a new session, a new profiler: each thread's last sample is from
	 * before the pause and must not weigh the pause */
	return open_main(src);
}

/* After a failed read: no stream to the target stays open (unread, one
 * could hold its exit); the builder and the source's method table stay
 * for the last take. */
static void ep_close(struct source *src)
{
	struct ep *e = src->priv;
	if (!e)
		return;
	e->closed = true;
	ep_session_close(&e->rd);
	e->named = true;
	rtd_ipc_session_close(e->main.s);
}

static void ep_free(struct source *src)
{
	struct ep *e = src->priv;
	if (!e)
		return;
	rtd_ipc_call_free(e->info);
	ep_session_close(&e->rd);
	rtd_source_free(e->src);
	ep_session_close(&e->main);
	rtd_nettrace_profiler_free(e->prof);
	rtd_counters_free(e->counters);
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
	.close = ep_close,
	.free = ep_free,
};
