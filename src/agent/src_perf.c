/* SPDX-License-Identifier: MIT */
/*
 * src_perf.c - CPU profiles of any process from perf_event sampling (the
 * perf profiler of src/perf: cpu-clock at --cpu-hz, frame-pointer call
 * chains, kernel frames where perf_event_paranoid allows, symbols from
 * ELF/DWARF/perf maps through src/symbols).
 *
 * CPU is wired as `rtdiag record` and the flight recorder wire it: the
 * profiler as a live record source (rtd_perf_source_live(): it runs on
 * the source's threads, which name what it sampled and queue it as
 * records), whose SAMPLE records a profile consumer (rtd_profile_records)
 * adds up on the agent's loop, which polls the source's descriptor as it
 * polls a session's. A cut asks the source for everything until now
 * (rtd_perf_source_live_cut(): the monitor drains its rings), takes it
 * and hands the profile over, each module's mapping (address range, file
 * offset, build-id) asked of the source; the kernel keeps sampling into
 * the rings meanwhile, so nothing is lost between two cuts. The source's
 * names live in generations (RTD_PERF_SOURCE_COPIED: the profile copies
 * what it keeps) and the profiler forgets each window once drained
 * (RTD_PERF_PROF_WINDOWS).
 *
 * Off-CPU runs the profiler on a thread of its own and takes its call
 * tree at each cut (rtd_perf_profiler_take()): its waits' totals come from
 * BPF in the kernel, where a record source needs each wait's own time,
 * every switch copied out (a pipe ping-pong: 7% of a core against 0.2%).
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
#include "rtdiag/perf_source.h"
#include "rtdiag/profile_records.h"

#define TAKE_WAIT_MS 2000
/* The source's own windows: a backstop, the agent cuts every second */
#define LIVE_WINDOW_MS 10000u
/* Records taken per readable() call: the loop goes round between them */
#define LIVE_PULL_BUDGET 8192

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
	/* CPU: the record path (loop thread only) */
	rtd_source *live;
	rtd_profile_records *cons;
	rtd_profile *cur;   /* what the records added since the last cut */
	pid_t pid;
};

/* An empty CPU profile, typed as the profiler's own. */
static rtd_profile *cpu_profile(const struct ps *ps)
{
	static const struct rtd_profile_type types[2] = {{"samples", "count"},
							 {"cpu", "nanoseconds"}};
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types, .ntypes = 2,
				      .default_type = 1, .period_type = types[1],
				      .period = ps->period};
	rtd_profile *p = rtd_profile_new2(&po);
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf", .pid = ps->pid};
	if (p)
		rtd_profile_set_meta(p, &m);
	return p;
}

/* The profile's mapping of a module, as the source learnt it (0: none). */
static int module_mapping(void *ctx, rtd_profile *p, const char *module)
{
	struct ps *ps = ctx;
	struct rtd_perf_source_mapping m;
	if (rtd_perf_source_live_mapping(ps->live, module, &m))
		return 0;
	int id = rtd_profile_add_mapping(p, m.start, m.limit, m.offset, m.file,
					 m.build_id[0] ? m.build_id : NULL);
	return id;
}

/* Take what the source queued into the profile, up to a budget; *reached
 * (when given) once its watermark passed @until. Returns 0 to go on, 1 at
 * the source's end (the process is gone), or a negative error with
 * src->err set. */
static int live_pull(struct source *src, int64_t until, bool *reached)
{
	struct ps *ps = src->priv;
	for (int i = 0; i < LIVE_PULL_BUDGET; i++) {
		const struct rtd_record *r;
		int rc = rtd_source_next(ps->live, &r);
		if (rc == 1) {
			int ar = rtd_profile_records_add(ps->cons, r);
			if (ar < 0) {
				snprintf(src->err, sizeof(src->err), "profile: %s",
					 rtd_strerror(ar));
				return ar;
			}
			continue;
		}
		if (rc == RTD_SOURCE_IDLE) {
			if (reached)
				*reached = r->mono >= until;
			return 0;
		}
		if (rc == 0) {
			ps->gone = true;
			return 1;
		}
		snprintf(src->err, sizeof(src->err), "%s", r->message ? r->message : "");
		return rc;
	}
	return 0;
}

/* CPU: the live source and its consumer. */
static int live_start(struct source *src)
{
	struct ps *ps = src->priv;
	int err = 0;
	RTD_OPTS(rtd_perf_source_opts, lo, .window_ms = LIVE_WINDOW_MS,
		 .flags = RTD_PERF_SOURCE_COPIED | RTD_PERF_SOURCE_MAPPINGS);
	ps->live = rtd_perf_source_live(ps->prof, &lo, &err);
	ps->cur = ps->live ? cpu_profile(ps) : NULL;
	/* cpu-clock's samples each weigh its fixed period */
	RTD_OPTS(rtd_profile_records_opts, co, .name = "cpu", .period = ps->period,
		 .mapping = module_mapping, .mapping_ctx = ps);
	ps->cons = ps->cur ? rtd_profile_records_new(ps->cur, &co, &err) : NULL;
	if (!ps->cons) {
		snprintf(src->err, sizeof(src->err), "the perf record source: %s",
			 rtd_strerror(err ? err : -ENOMEM));
		return err ? err : -ENOMEM;
	}
	return 0;
}

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
	if (kind == PK_CPU)
		po.flags |= RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_WINDOWS;
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
	ps->pid = t->pid;
	if (kind == PK_CPU)
		return live_start(src);
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
	struct ps *ps = src->priv;
	if (!ps->live || max < 1)
		return 0; /* off-CPU: a thread of its own */
	fds[0] = rtd_source_fd(ps->live);
	return 1;
}

static int ps_readable(struct source *src, int fd)
{
	struct ps *ps = src->priv;
	(void)fd;
	return ps->live ? live_pull(src, 0, NULL) : 0;
}

/* CPU: everything the source has until now into the profile, handed over. */
static int live_take(struct source *src, struct take *t)
{
	struct ps *ps = src->priv;
	int64_t at = 0;
	int rc = ps->gone ? 0 : rtd_perf_source_live_cut(ps->live, &at);
	uint64_t end = mono_ns() + TAKE_WAIT_MS * 1000000ull;
	while (!rc && !ps->gone) {
		bool reached = false;
		if ((rc = live_pull(src, at, &reached)) || reached)
			break;
		uint64_t now = mono_ns();
		if (now >= end)
			break;
		rtd_source_wait(ps->live, (int)((end - now + 999999) / 1000000));
	}
	rtd_profile *next = cpu_profile(ps);
	if (next) {
		t->p[PK_CPU] = ps->cur;
		t->period[PK_CPU] = ps->period;
		ps->cur = next;
		rtd_profile_records_retarget(ps->cons, next);
	} /* else out of memory: the samples go on into this one */
	if (ps->gone)
		src->ended = true;
	return rc < 0 ? rc : 0;
}

static int ps_take(struct source *src, struct take *t)
{
	struct ps *ps = src->priv;
	if (ps->live)
		return live_take(src, t);
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
	rtd_source_free(ps->live); /* joins its threads: before the profiler */
	rtd_profile_records_free(ps->cons);
	rtd_profile_free(ps->cur);
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
