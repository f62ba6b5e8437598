/* SPDX-License-Identifier: MIT */
/*
 * agent.c - the agent's loop: poll the sources' streams, cut every source
 * once a tick, close windows on wall-clock boundaries, scan for targets,
 * answer pull requests, and keep the agent under its CPU and memory caps.
 *
 * Caps are enforced by feedback, not hoped for:
 * - CPU: the agent's own CPU time (all its threads) is measured every
 *   tick over the last few seconds; above max-cpu every source is paused
 *   (EventPipe sessions closed: the runtime stops sampling too) for 5 s,
 *   doubling up to 80 s while the excess lasts; the time is counted in
 *   rtdiag_agent_throttled_seconds_total.
 * - memory: the agent's resident size is read every tick; above
 *   max-memory the push queue gives up its oldest half (counted as
 *   dropped windows), cumulative profiles restart and open windows are
 *   dropped, and freed memory is handed back (malloc_trim).
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/stats.h"
#include "agent/agent_int.h"
#include "common/log.h"
#include "rtdiag/guard.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/source.h"

#define CPU_WINDOW_NS 5000000000ull     /* CPU use is judged over 5 s */
#define PAUSE_MIN_NS 5000000000ull
#define PAUSE_MAX_NS 80000000000ull
#define STOP_PUSH_WAIT_NS 5000000000ull /* SIGTERM: deliver for 5 s */
#define SCAN_SOON_NS 500000000ull

static _Thread_local char errlast[512];

RTD_API const char *rtd_agent_errmsg_last(void)
{
	return errlast;
}

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t unix_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t self_cpu_ns(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		       1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static uint64_t self_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	unsigned long long size, rss;
	int n = fscanf(f, "%llu %llu", &size, &rss);
	fclose(f);
	return n == 2 ? rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* A test's hook (docs/agent.md "Reading .NET sessions"):
 * RTDIAG_AGENT_TEST_STALL=MS[,N] leaves the streams of the first N (or
 * every) .NET sessions undecoded for MS ms after each opens; the spool
 * reads them meanwhile. */
static void stall_hook(struct agent *a)
{
	const char *v = getenv("RTDIAG_AGENT_TEST_STALL");
	if (!v || !*v)
		return;
	char *end;
	unsigned long long ms = strtoull(v, &end, 10);
	unsigned long long n = *end == ',' ? strtoull(end + 1, &end, 10) : ~0u;
	a->stall_ns = ms * 1000000ull;
	a->stall_left = n > ~0u ? ~0u : (unsigned)n;
	rtd_warn("agent: RTDIAG_AGENT_TEST_STALL=%s: .NET sessions left "
		 "undecoded for %llu ms after they open (a test's hook)", v, ms);
}

RTD_API int rtd_agent_new(const rtd_agent_config *c, rtd_agent **out)
{
	*out = NULL;
	errlast[0] = 0;
	struct agent *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->wake_fd = -1;
	a->procev_fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	rtd_map_init(&a->seen, 1u << 22);
	int rc = -ENOMEM;
	a->c = agent_config_dup(c);
	if (!a->c)
		goto fail;
	rc = rtd_agent_config_check(a->c);
	if (rc) {
		snprintf(errlast, sizeof(errlast), "%s",
			 rtd_agent_config_errmsg(a->c));
		goto fail;
	}
	if (a->c->dotnet_cpu == DOTNET_CPU_AUTO) {
		char why[256];
		a->c->dotnet_cpu = rtd_perf_sampling_check(0, why, sizeof(why))
					   ? DOTNET_CPU_EVENTPIPE
					   : DOTNET_CPU_PERF;
		if (a->c->dotnet_cpu == DOTNET_CPU_EVENTPIPE)
			rtd_info("agent: .NET CPU from EventPipe's sampler, not "
				 "perf: %s", why);
	}
	a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->wake_fd < 0) {
		rc = -errno;
		snprintf(errlast, sizeof(errlast), "eventfd: %s", strerror(errno));
		goto fail;
	}
	/* before the HTTP threads, which read its counters */
	RTD_OPTS(rtd_ipc_spool_opts, so, .cap = (size_t)a->c->dotnet_read_buffer);
	int serr = 0;
	a->spool = rtd_ipc_spool_new(&so, &serr);
	if (!a->spool)
		rtd_warn("agent: no reading thread for .NET sessions (%s): the "
			 "loop reads them, and a target's exit can wait for it",
			 rtd_strerror(serr));
	stall_hook(a);
	if (gethostname(a->host, sizeof(a->host) - 1))
		snprintf(a->host, sizeof(a->host), "unknown");
	a->boot_time = proc_boot_time(a->c->proc_dir);
	agent_procev_start(a);
	rc = http_start(a, errlast, sizeof(errlast));
	if (rc)
		goto fail;
	if (a->c->push || a->c->otlp) {
		rc = push_start(a, errlast, sizeof(errlast));
		if (rc)
			goto fail;
	}
	*out = (rtd_agent *)a;
	return 0;
fail:
	rtd_agent_free((rtd_agent *)a);
	return rc;
}

RTD_API const char *rtd_agent_url(const rtd_agent *ag)
{
	return ((const struct agent *)ag)->url;
}

/* Set a flag for the loop and wake it (async-signal-safe). */
static void poke(struct agent *a, atomic_int *flag)
{
	atomic_store(flag, 1);
	uint64_t one = 1;
	ssize_t n = write(a->wake_fd, &one, sizeof(one));
	(void)n;
}

RTD_API void rtd_agent_stop(rtd_agent *ag)
{
	struct agent *a = (struct agent *)ag;
	poke(a, &a->stop);
}

RTD_API void rtd_agent_reload(rtd_agent *ag)
{
	struct agent *a = (struct agent *)ag;
	poke(a, &a->reload);
}

RTD_API void rtd_agent_get_stats(rtd_agent *ag, struct rtd_agent_stats *st)
{
	struct agent *a = (struct agent *)ag;
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	struct rtd_agent_stats s = a->st;
	pthread_mutex_unlock(&a->lock);
	agent_spool_stats(a, &s);
	rtd_stats_copy(st, &s, sizeof(s));
}

void agent_spool_stats(struct agent *a, struct rtd_agent_stats *st)
{
	if (!a->spool)
		return;
	RTD_OPTS(rtd_ipc_spool_stats, ss, .bytes = 0);
	rtd_ipc_spool_get_stats(a->spool, &ss);
	st->dotnet_dropped_bytes = ss.dropped;
	st->dotnet_damaged_sessions = ss.damaged;
}

static struct target *target_by_id(struct agent *a, uint64_t id)
{
	for (struct target *t = a->targets; t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

/* ---- pull requests ---------------------------------------------------------- */

void pull_free(struct pull *q)
{
	if (!q)
		return;
	rtd_profile_free(q->p);
	pthread_cond_destroy(&q->cond);
	free(q);
}

struct pull *agent_pull(struct agent *a, uint64_t target_id,
			enum prof_kind kind, uint64_t seconds_ns)
{
	struct pull *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_cond_init(&q->cond, NULL);
	q->target_id = target_id;
	q->kind = kind;
	q->seconds_ns = seconds_ns;
	pthread_mutex_lock(&a->lock);
	if (a->npulls >= RTD_AGENT_MAX_PULLS || a->stopping) {
		pthread_mutex_unlock(&a->lock);
		q->status = 503;
		snprintf(q->msg, sizeof(q->msg),
			 a->stopping ? "the agent is stopping\n"
				     : "too many profile requests at once\n");
		return q;
	}
	a->npulls++;
	q->next = a->requests;
	a->requests = q;
	pthread_mutex_unlock(&a->lock);
	uint64_t one = 1;
	ssize_t n = write(a->wake_fd, &one, sizeof(one));
	(void)n;
	pthread_mutex_lock(&a->lock);
	while (!q->done)
		pthread_cond_wait(&q->cond, &a->lock);
	a->npulls--;
	a->st.pulls++;
	pthread_mutex_unlock(&a->lock);
	return q;
}

static void pull_answer(struct agent *a, struct pull *q, int status,
			const char *msg)
{
	pthread_mutex_lock(&a->lock);
	q->status = status;
	if (msg)
		snprintf(q->msg, sizeof(q->msg), "%s", msg);
	q->done = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&a->lock);
}

void agent_handle_requests(struct agent *a)
{
	pthread_mutex_lock(&a->lock);
	struct pull *list = a->requests;
	a->requests = NULL;
	pthread_mutex_unlock(&a->lock);
	while (list) {
		struct pull *q = list;
		list = q->next;
		q->next = NULL;
		struct target *t = target_by_id(a, q->target_id);
		char msg[512];
		if (!t) {
			pull_answer(a, q, 404, "the target exited\n");
			continue;
		}
		if (!(t->kinds & (1u << q->kind))) {
			const char *why = t->nokind[q->kind][0]
						  ? t->nokind[q->kind]
						  : t->errmsg;
			snprintf(msg, sizeof(msg),
				 "%s pid %d (%s): no %s profile%s%.190s\n",
				 t->service, (int)t->pid, t->runtime,
				 prof_kind_name(q->kind), why[0] ? ": " : "",
				 why);
			pull_answer(a, q, 404, msg);
			continue;
		}
		if (a->stopping) {
			pull_answer(a, q, 503, "the agent is stopping\n");
			continue;
		}
		/* what came before the request is not the request's */
		target_take(a, t);
		q->start_unix_ns = unix_ns();
		if (q->seconds_ns == 0) {
			/* a total since the agent attached */
			if (t->cum[q->kind])
				q->p = profile_clone(t->cum[q->kind]);
			pull_answer(a, q, 200, NULL);
			continue;
		}
		/* from after the take: the request's N seconds start here */
		q->deadline_ns = mono_ns() + q->seconds_ns;
		q->next = t->pulls;
		t->pulls = q;
		/* (a test waits for this line before the work it measures) */
		rtd_debug("target %s pid %d: a %s profile of %.0f s begun",
			  t->service, (int)t->pid, prof_kind_path(q->kind),
			  q->seconds_ns / 1e9);
	}
}

/* ---- caps ---------------------------------------------------------------------- */

static void pause_sources(struct agent *a, bool pause)
{
	for (struct target *t = a->targets; t; t = t->next)
		for (size_t i = 0; i < t->nsrc; i++) {
			struct source *s = t->src[i];
			if (s->ended || s->paused == pause || !s->ops->pause)
				continue;
			if (pause)
				target_take(a, t); /* keep what was sampled */
			int rc = s->ops->pause(s, pause);
			s->paused = pause;
			if (rc)
				source_failed(s, mono_ns());
		}
}

static void cpu_cap(struct agent *a, uint64_t now)
{
	uint64_t cpu = self_cpu_ns();
	if (!a->cpu_mono_last) {
		a->cpu_mono_last = now;
		a->cpu_ns_last = cpu;
		return;
	}
	if (a->paused_until) {
		if (now < a->paused_until)
			return;
		uint64_t paused = now - (a->paused_until - a->pause_ns);
		pthread_mutex_lock(&a->lock);
		a->st.throttled_ns += paused;
		pthread_mutex_unlock(&a->lock);
		a->paused_until = 0;
		pause_sources(a, false);
		rtd_info("CPU cap: sources resumed after %.0f s", paused / 1e9);
		a->cpu_mono_last = now;
		a->cpu_ns_last = cpu;
		return;
	}
	uint64_t dt = now - a->cpu_mono_last;
	if (dt < CPU_WINDOW_NS)
		return;
	a->cpu_pct = 100.0 * (double)(cpu - a->cpu_ns_last) / (double)dt;
	a->cpu_mono_last = now;
	a->cpu_ns_last = cpu;
	if (a->cpu_pct <= a->c->max_cpu) {
		if (a->pause_ns > PAUSE_MIN_NS)
			a->pause_ns /= 2; /* calm again: shorter next time */
		return;
	}
	a->pause_ns = a->pause_ns ? a->pause_ns * 2 : PAUSE_MIN_NS;
	if (a->pause_ns > PAUSE_MAX_NS)
		a->pause_ns = PAUSE_MAX_NS;
	a->paused_until = now + a->pause_ns;
	rtd_warn("CPU cap %g%%: the agent used %.1f%% over the last %.0f s; "
		 "sources paused for %.0f s", a->c->max_cpu, a->cpu_pct,
		 dt / 1e9, a->pause_ns / 1e9);
	pause_sources(a, true);
}

static void memory_cap(struct agent *a)
{
	a->rss_bytes = self_rss();
	if (!a->rss_bytes || a->rss_bytes <= a->c->max_memory) {
		a->logged_mem = false;
		return;
	}
	if (!a->logged_mem)
		rtd_warn("memory cap %llu MB: the agent holds %llu MB; queued "
			 "uploads, open windows and totals are shed",
			 (unsigned long long)(a->c->max_memory >> 20),
			 (unsigned long long)(a->rss_bytes >> 20));
	a->logged_mem = true;
	push_shed(a);
	for (struct target *t = a->targets; t; t = t->next)
		for (int k = 0; k < PK_COUNT; k++) {
			rtd_profile_free(t->cum[k]);
			t->cum[k] = NULL;
			rtd_profile_free(t->win[k]);
			t->win[k] = NULL;
		}
	malloc_trim(0);
	pthread_mutex_lock(&a->lock);
	a->st.shed++;
	pthread_mutex_unlock(&a->lock);
	a->rss_bytes = self_rss();
}

/* ---- the loop -------------------------------------------------------------------- */

/* When the next failed source is due to start again, or 0. */
static uint64_t next_retry(const struct agent *a)
{
	uint64_t d = 0;
	if (a->paused_until)
		return 0;
	for (const struct target *t = a->targets; t; t = t->next)
		for (size_t i = 0; i < t->nsrc; i++) {
			const struct source *s = t->src[i];
			if (s->ended && s->failures && (!d || s->retry_ns < d))
				d = s->retry_ns;
		}
	return d;
}

/* A source that failed runs again: said, its kinds back, the error gone. */
static void source_restarted(struct agent *a, struct source *s)
{
	struct target *t = s->t;
	if (s->failures)
		rtd_info("target %s pid %d: %s source started after %u failures",
			 t->service, (int)t->pid, s->ops->name, s->failures);
	s->failures = 0;
	pthread_mutex_lock(&a->lock);
	t->kinds |= s->kinds;
	t->errmsg[0] = 0;
	pthread_mutex_unlock(&a->lock);
}

/* Start again the sources that failed, with a growing delay. */
static void retry_sources(struct agent *a, uint64_t now)
{
	if (a->paused_until)
		return;
	for (struct target *t = a->targets; t; t = t->next)
		for (size_t i = 0; i < t->nsrc; i++) {
			struct source *s = t->src[i];
			if (!s->ended || !s->failures || now < s->retry_ns)
				continue;
			s->ops->free(s);
			s->err[0] = 0;
			s->ended = false;
			s->paused = false;
			int rc = s->ops->start(s);
			if (rc == 0) {
				/* a source still waiting for its answer keeps
				 * its count (it may fail again), and the target
				 * its error and kinds until the answer (a perf
				 * source's start on its thread, an EventPipe
				 * session's reply: dispatch()) */
				if (!s->starting)
					source_restarted(a, s);
				continue;
			}
			source_start_failed(a, s, rc);
		}
}

static void refresh_stats(struct agent *a)
{
	for (struct target *t = a->targets; t; t = t->next) {
		struct proc_stat st;
		if (proc_stat_read(a->c->proc_dir, t->pid, &st) ||
		    st.start_ticks != t->start_ticks)
			continue; /* the next scan drops it */
		pthread_mutex_lock(&a->lock);
		t->st = st;
		t->have_st = true;
		pthread_mutex_unlock(&a->lock);
	}
}

static void tick(struct agent *a, uint64_t now)
{
	for (struct target *t = a->targets; t; t = t->next) {
		target_take(a, t);
		target_finish_pulls(a, t, now, false);
		agent_drain(a);
	}
	refresh_stats(a);
	int64_t wall = unix_ns();
	int64_t w = (int64_t)a->c->window_ns;
	if (!a->next_window_unix_ns)
		a->next_window_unix_ns = (wall / w + 1) * w;
	if (wall >= a->next_window_unix_ns) {
		int64_t until = a->next_window_unix_ns;
		for (struct target *t = a->targets; t; t = t->next)
			target_close_window(a, t, until);
		a->next_window_unix_ns = (wall / w + 1) * w;
	}
	cpu_cap(a, now);
	memory_cap(a);
}

/* The earliest deadline of a waiting pprof request, or 0. */
static uint64_t next_pull_deadline(struct agent *a)
{
	uint64_t d = 0;
	for (struct target *t = a->targets; t; t = t->next)
		for (struct pull *q = t->pulls; q; q = q->next)
			if (!d || q->deadline_ns < d)
				d = q->deadline_ns;
	return d;
}

/* Answer the requests whose N seconds are up, with everything sampled
 * until now (a cut first). */
static void due_pulls(struct agent *a, uint64_t now)
{
	for (struct target *t = a->targets; t; t = t->next) {
		bool due = false;
		for (struct pull *q = t->pulls; q && !due; q = q->next)
			due = q->deadline_ns <= now;
		if (!due)
			continue;
		target_take(a, t);
		target_finish_pulls(a, t, now, false);
	}
}

struct pollset {
	struct pollfd *fds;
	struct source **src;
	size_t n, cap;
};

static int pollset_add(struct pollset *ps, int fd, struct source *s)
{
	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 16;
		struct pollfd *nf = realloc(ps->fds, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		ps->fds = nf;
		struct source **ns = realloc(ps->src, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		ps->src = ns;
		ps->cap = nc;
	}
	ps->fds[ps->n] = (struct pollfd){.fd = fd, .events = POLLIN};
	ps->src[ps->n] = s;
	ps->n++;
	return 0;
}

static int build_pollset(struct agent *a, struct pollset *ps)
{
	ps->n = 0;
	int rc = pollset_add(ps, a->wake_fd, NULL);
	for (struct target *t = a->targets; t && !rc; t = t->next)
		for (size_t i = 0; i < t->nsrc && !rc; i++) {
			struct source *s = t->src[i];
			if (s->ended || s->paused || !s->ops->fds)
				continue;
			int fds[4];
			int n = s->ops->fds(s, fds, 4);
			for (int j = 0; j < n && !rc; j++)
				rc = pollset_add(ps, fds[j], s);
		}
	return rc;
}

/* Read every source whose stream poll() found readable. */
static void dispatch(struct agent *a, struct pollset *ps)
{
	for (size_t i = 1; i < ps->n; i++) {
		if (!ps->fds[i].revents)
			continue;
		struct source *s = ps->src[i];
		if (s->ended || s->paused)
			continue;
		uint64_t t0 = mono_ns();
		bool starting = s->starting;
		unsigned failures = s->failures;
		int r = s->ops->readable(s, ps->fds[i].fd);
		s->cpu_ns += mono_ns() - t0;
		if (r == 0) {
			/* a start tried again answered */
			if (starting && !s->starting && failures)
				source_restarted(a, s);
			continue;
		}
		/* the stream ended: the target exited, or the session
		 * failed; a scan tells which */
		a->next_scan_ns = mono_ns();
		if (r < 0 && s->starting) { /* its session refused */
			source_start_failed(a, s, r);
			continue;
		}
		if (r < 0 && s->ops->close) {
			/* a failed stream's sessions are closed now, not at the
			 * retry on: unread, they would hold the target's exit;
			 * what was collected is cut into the windows */
			s->ops->close(s);
			target_take(a, s->t);
		}
		s->ended = true;
		if (r < 0) {
			source_failed(s, mono_ns());
			rtd_warn("target %s pid %d: %s: %s", s->t->service,
				 (int)s->t->pid, s->ops->name, s->err);
			pthread_mutex_lock(&a->lock);
			snprintf(s->t->errmsg, sizeof(s->t->errmsg),
				 "%s: %.200s", s->ops->name, s->err);
			a->st.target_errors++;
			pthread_mutex_unlock(&a->lock);
		}
	}
}

/*
 * Read, without waiting, whatever the sources' streams hold. Called between
 * the steps of work that blocks the loop (each new target's IPC handshakes
 * in a scan, each target's cut in a tick): a .NET runtime whose session
 * stream is not read blocks in its write once the socket is full, and its
 * shutdown waits for that write - a scan finding 16 programs at load 20
 * kept one that had returned from Main alive for 3 to 8 s.
 */
void agent_drain(struct agent *a)
{
	if (a->draining)
		return;
	a->draining = true;
	struct pollset ps = {0};
	if (build_pollset(a, &ps) == 0 && ps.n > 1 &&
	    poll(ps.fds, ps.n, 0) > 0)
		dispatch(a, &ps);
	free(ps.fds);
	free(ps.src);
	a->draining = false;
}

static void shutdown_flush(struct agent *a)
{
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_mutex_unlock(&a->lock);
	agent_handle_requests(a);
	int64_t now = unix_ns();
	for (struct target *t = a->targets; t; t = t->next) {
		target_take(a, t);
		target_finish_pulls(a, t, 0, true);
		target_close_window(a, t, now);
	}
	push_stop(a, STOP_PUSH_WAIT_NS);
}

RTD_API int rtd_agent_run(rtd_agent *ag)
{
	struct agent *a = (struct agent *)ag;
	struct pollset ps = {0};
	/* perf switches .NET perf maps on: the guardian that switches them
	 * off should the agent be killed is a copy of the agent as it is
	 * when forked, so it is forked now, before the first target */
	if (a->c->dotnet_cpu == DOTNET_CPU_PERF && rtd_guard_start())
		rtd_warn("agent: no guardian: .NET perf maps switched on are "
			 "switched off at the agent's normal end, not if it is "
			 "killed");
	uint64_t now = mono_ns();
	a->next_tick_ns = now + a->c->tick_ns;
	a->next_scan_ns = now;
	int rc = 0;
	while (!atomic_load(&a->stop)) {
		now = mono_ns();
		if (now >= a->next_scan_ns) {
			agent_scan(a);
			a->next_scan_ns = now + a->c->scan_ns;
			/* a young process to look at again (discover.c) */
			if (a->scan_soon && a->c->scan_ns > SCAN_SOON_NS)
				a->next_scan_ns = now + SCAN_SOON_NS;
			a->scan_soon = false;
			/* on a tick, at most a tick early: one wake-up for both
			 * (every other tick at the defaults, 2 s and 1 s) */
			uint64_t t = a->c->tick_ns;
			if (a->next_tick_ns > now &&
			    a->next_scan_ns > a->next_tick_ns)
				a->next_scan_ns = a->next_tick_ns +
						  (a->next_scan_ns - a->next_tick_ns) /
							  t * t;
		}
		if (now >= a->next_tick_ns) {
			tick(a, now);
			/* ticks on wall-clock seconds, so the cut that closes a
			 * window is made at its boundary */
			uint64_t t = a->c->tick_ns;
			a->next_tick_ns = mono_ns() + t - (uint64_t)unix_ns() % t;
		}
		due_pulls(a, now);
		retry_sources(a, now);
		rc = build_pollset(a, &ps);
		if (rc)
			break;
		uint64_t next = a->next_tick_ns < a->next_scan_ns
					? a->next_tick_ns
					: a->next_scan_ns;
		uint64_t pd = next_pull_deadline(a);
		if (pd && pd < next)
			next = pd;
		pd = next_retry(a);
		if (pd && pd < next)
			next = pd;
		now = mono_ns();
		int timeout = next > now ? (int)((next - now) / 1000000u) + 1 : 0;
		int n = poll(ps.fds, ps.n, timeout);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		if (ps.fds[0].revents) {
			uint64_t v;
			ssize_t r = read(a->wake_fd, &v, sizeof(v));
			(void)r;
			if (atomic_exchange(&a->reload, 0))
				http_reload(a);
		}
		dispatch(a, &ps);
		agent_handle_requests(a);
	}
	free(ps.fds);
	free(ps.src);
	shutdown_flush(a);
	return rc;
}

RTD_API void rtd_agent_free(rtd_agent *ag)
{
	struct agent *a = (struct agent *)ag;
	if (!a)
		return;
	/* answer every waiting request first: an HTTP thread waiting on one
	 * would keep the server from stopping */
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_mutex_unlock(&a->lock);
	agent_handle_requests(a);
	for (struct target *t = a->targets; t; t = t->next)
		target_finish_pulls(a, t, 0, true);
	if (a->http)
		http_stop(a);
	push_stop(a, 0);
	agent_flight_free_all(a);
	while (a->targets) {
		struct target *t = a->targets;
		a->targets = t->next;
		target_free(t);
	}
	/* after the targets: their sessions leave it as they are freed */
	rtd_ipc_spool_free(a->spool);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	agent_seen_free(a);
	rtd_agent_config_free(a->c);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
