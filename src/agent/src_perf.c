/* SPDX-License-Identifier: MIT */
/*
 * src_perf.c - CPU profiles of any process from perf_event sampling (the
 * perf profiler of src/perf: cpu-clock at --cpu-hz, frame-pointer call
 * chains, kernel frames where perf_event_paranoid allows, symbols from
 * ELF/DWARF/perf maps through src/symbols).
 *
 * The profiler's run loop blocks, so it runs on a thread of its own. A cut
 * stops the loop (the rings are drained first), takes the profile of the
 * samples since the last cut, and starts the loop again; the kernel keeps
 * sampling into the rings meanwhile, so nothing is lost between two runs.
 *
 * source_perf_offcpu is the same profiler in its off-CPU mode (native
 * targets' /debug/pprof/block): every switch of a target's threads off
 * the CPU with its stack, paired with the switch back, the delay added to
 * that stack; Go's block profile types. Waits only: preemption (R) is not
 * a wait. A wait still open at a cut goes to the window it ends in.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "common/log.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/perf_sampler.h"

#define TAKE_WAIT_MS 2000

struct ps {
	struct rtd_perf_profiler *prof;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool quit;
	bool want;          /* a cut is asked for */
	bool gone;          /* every scoped process exited */
	rtd_profile *taken; /* the cut's profile, handed over */
	int take_err;
	int64_t period;
	enum prof_kind kind; /* PK_CPU, or PK_BLOCK off-CPU */
};

static void *ps_main(void *arg)
{
	struct source *src = arg;
	struct ps *ps = src->priv;
	for (;;) {
		int rc = rtd_perf_profiler_run(ps->prof);
		pthread_mutex_lock(&ps->mu);
		if (ps->want || ps->quit) {
			rtd_profile *p = NULL;
			ps->take_err = rtd_perf_profiler_take(ps->prof, &p);
			rtd_profile_free(ps->taken);
			ps->taken = p;
			ps->want = false;
			pthread_cond_broadcast(&ps->cond);
		} else {
			/* not stopped by us: the process is gone (or an error) */
			ps->gone = true;
			if (rc < 0)
				ps->take_err = rc;
		}
		bool stop = ps->quit || ps->gone;
		pthread_mutex_unlock(&ps->mu);
		if (stop)
			break;
	}
	return NULL;
}

static int start_kind(struct source *src, enum prof_kind kind)
{
	struct ps *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	src->priv = ps;
	ps->kind = kind;
	src->kinds = 1u << kind;
	pthread_mutex_init(&ps->mu, NULL);
	pthread_cond_init(&ps->cond, NULL);
	struct target *t = src->t;
	unsigned hz = src->a->c->cpu_hz;
	/* each perf source holds its libraries' symbols (the kernel's are
	 * shared by all): over the memory cap, no new one */
	if (src->a->rss_bytes > src->a->c->max_memory) {
		snprintf(src->err, sizeof(src->err),
			 "the agent is over its memory cap (%llu MB): no perf "
			 "source for a new target",
			 (unsigned long long)(src->a->c->max_memory >> 20));
		return -ENOMEM;
	}
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so),
					   .freq = hz,
					   .callgraph = RTD_PERF_CG_FP};
	/* DWARF (inlined frames, file:line) costs ~12 MB a target: on ask */
	struct rtd_sym_opts symo = {
		.sz = sizeof(symo),
		.flags = src->a->c->native_dwarf ? 0u : RTD_SYM_NO_DWARF,
	};
	struct rtd_perf_profiler_opts po = {
		.sz = sizeof(po),
		.pids = &t->pid,
		.npids = 1,
		.flags = RTD_PERF_PROF_NO_COMM |
			 (strcmp(t->runtime, "dotnet") ? RTD_PERF_PROF_NO_DOTNET
						       : 0),
		.sampler = &so,
		.ring_pages = 16,
		.sym = &symo,
	};
	if (kind == PK_BLOCK) {
		/* a sample at every switch: rings for bursts of them */
		po.flags |= RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET;
		po.ring_pages = 64;
		so.freq = 0;
	}
	int rc = rtd_perf_profiler_new(&po, &ps->prof);
	if (rc) {
		snprintf(src->err, sizeof(src->err), "%s",
			 rtd_perf_profiler_errmsg(NULL));
		return rc;
	}
	const char *why = "";
	if (kind == PK_BLOCK && rtd_perf_profiler_offcpu_via(ps->prof, &why) ==
					RTD_PERF_OFFCPU_VIA_PERF)
		rtd_info("target %s pid %d: off-CPU through perf, every switch "
			 "copied out: %s", t->service, (int)t->pid, why);
	ps->period = kind == PK_BLOCK ? 1 : (int64_t)(1000000000u / hz);
	rc = pthread_create(&ps->th, NULL, ps_main, src);
	if (rc) {
		snprintf(src->err, sizeof(src->err), "thread: %s", strerror(rc));
		return -rc;
	}
	ps->started = true;
	return 0;
}

static int ps_start(struct source *src)
{
	return start_kind(src, PK_CPU);
}

static int ps_start_offcpu(struct source *src)
{
	return start_kind(src, PK_BLOCK);
}

static int ps_fds(struct source *src, int *fds, int max)
{
	(void)src;
	(void)fds;
	(void)max;
	return 0; /* a thread of its own */
}

static int ps_readable(struct source *src, int fd)
{
	(void)src;
	(void)fd;
	return 0;
}

static int ps_take(struct source *src, struct take *t)
{
	struct ps *ps = src->priv;
	pthread_mutex_lock(&ps->mu);
	if (ps->gone) {
		/* the last samples, taken when the loop ended */
		pthread_mutex_unlock(&ps->mu);
		src->ended = true;
		return 0;
	}
	ps->want = true;
	pthread_mutex_unlock(&ps->mu);
	rtd_perf_monitor_stop(rtd_perf_profiler_monitor(ps->prof), false);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += TAKE_WAIT_MS / 1000;
	pthread_mutex_lock(&ps->mu);
	while (ps->want && !ps->gone)
		if (pthread_cond_timedwait(&ps->cond, &ps->mu, &ts))
			break;
	rtd_profile *p = ps->taken;
	ps->taken = NULL;
	int err = ps->take_err;
	pthread_mutex_unlock(&ps->mu);
	if (p) {
		t->p[ps->kind] = p;
		t->period[ps->kind] = ps->period;
	}
	return err;
}

static void ps_free(struct source *src)
{
	struct ps *ps = src->priv;
	if (!ps)
		return;
	if (ps->started) {
		pthread_mutex_lock(&ps->mu);
		ps->quit = true;
		pthread_mutex_unlock(&ps->mu);
		rtd_perf_monitor_stop(rtd_perf_profiler_monitor(ps->prof), false);
		pthread_join(ps->th, NULL);
	}
	rtd_profile_free(ps->taken);
	rtd_perf_profiler_free(ps->prof);
	pthread_mutex_destroy(&ps->mu);
	pthread_cond_destroy(&ps->cond);
	free(ps);
	src->priv = NULL;
}

const struct source_ops source_perf = {
	.name = "perf",
	.start = ps_start,
	.fds = ps_fds,
	.readable = ps_readable,
	.take = ps_take,
	.pause = NULL,
	.free = ps_free,
};

const struct source_ops source_perf_offcpu = {
	.name = "perf off-cpu",
	.start = ps_start_offcpu,
	.fds = ps_fds,
	.readable = ps_readable,
	.take = ps_take,
	.pause = NULL,
	.free = ps_free,
};
