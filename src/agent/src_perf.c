/* SPDX-License-Identifier: MIT */
/*
 * src_perf.c - CPU profiles of any process from perf_event sampling (the
 * perf profiler of src/perf: cpu-clock at --cpu-hz, frame-pointer call
 * chains, kernel frames where perf_event_paranoid allows, symbols from
 * ELF/DWARF/perf maps through src/symbols).
 *
 * The wiring `rtdiag record` and the flight recorder use: the profiler as
 * a live record source (rtd_perf_source_live(): it runs on the source's
 * threads, which name what it sampled and queue it as records: here the
 * call tree's totals, RTD_PERF_PROF_TOTALS, a record per thread and stack
 * with its count and summed period, not one per sample), whose
 * records a profile consumer (rtd_profile_records) adds up on the
 * agent's loop, which polls the source's descriptor as it polls an
 * EventPipe session's. A cut asks the source for everything until now
 * (rtd_perf_source_live_cut(): the monitor drains its rings), takes it
 * and hands the profile over; the kernel keeps sampling into the rings
 * meanwhile, so nothing is lost between two cuts. The source's names
 * live in generations (RTD_PERF_SOURCE_COPIED: the profile copies what
 * it keeps), and the profiler forgets each window once drained
 * (RTD_PERF_PROF_WINDOWS): memory follows the stacks of a window, not of
 * the target's life.
 *
 * Each module's mapping (address range, file offset, build-id) is asked
 * of the source (RTD_PERF_SOURCE_MAPPINGS), as pprof writes it; with
 * --native-symbols full each frame's file and line come with the records
 * (RTD_PERF_SOURCE_LINES).
 *
 * source_perf_offcpu is the same profiler in its off-CPU mode (native
 * targets' /debug/pprof/block): every switch of a target's threads off
 * the CPU with its stack, paired with the switch back; through BPF (where
 * it can) the kernel keeps the totals and the source hands them out at
 * each cut (RTD_PERF_PROF_WAIT_TOTALS: an "off-cpu" sample per thread,
 * stack and state, its count and summed delay; nothing copied out per
 * switch), through perf each wait comes at its end as a slice with its
 * stack (RTD_PERF_SOURCE_WAIT_STACKS), adding 1 and its length; the
 * state a label: Go's block profile types. Waits only: preemption (R) is
 * not a wait. A wait still open at a cut goes to the window it ends in.
 *
 * A source starts on a thread of its own (start_main()): the profiler (the
 * processes' mappings, the kernel's ranges, the perf events, for off-CPU
 * the BPF program, whose load the kernel's verifier makes 0.3 s at load 3
 * and 12 s at load 30) and its live source. The loop polls the start's
 * eventfd meanwhile and goes on reading the other targets and answering
 * requests; a take while starting gives nothing. A start's failure comes
 * through the eventfd and is said as a start's failure was. Starts run one
 * at a time (start_mu), as they did on the loop. A source freed while
 * starting (its target exited, the agent stops) leaves the start to its
 * thread, which frees what it made once done (refcounted); a perf map it
 * asked a .NET runtime for keeps its guard (registered before the
 * request), which switches it off when rtdiag ends, as for any request
 * freed unanswered.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "common/log.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/profile_records.h"

#define TAKE_WAIT_MS 2000
#define MAP_SAY_NS 5000000000ull /* a perf map's reply this late is logged */
/* The source's own windows: a backstop, the agent cuts every second */
#define LIVE_WINDOW_MS 10000u
/* The source's queue: the loop takes records as they come, so a window
 * bigger than this waits for it (the default 4,096 entries, 1.2 MB touched
 * from the start, were +6 MB of the agent's RSS for six sources) */
#define LIVE_MAX_RECORDS 512u
/* Records taken per readable() call: the loop goes round between them */
#define LIVE_PULL_BUDGET 8192

/* One start, shared by the loop and the start's thread until both are done
 * with it: the last to let go frees it and whatever it still holds. */
struct ps_start {
	atomic_int refs;
	int efd;                  /* written once the start is done */
	/* what the thread needs, copied: the target may go meanwhile */
	pid_t pid;
	enum prof_kind kind;
	unsigned hz;
	bool dwarf;
	bool dotnet;
	/* the thread's results, the loop's once @done */
	atomic_bool done;
	int rc;
	struct rtd_perf_profiler *prof;
	rtd_source *live;
	char err[256];
};

struct ps {
	struct ps_start *st; /* while starting */
	bool unlisted;       /* its target is not listed until it answers */
	struct rtd_perf_profiler *prof;
	rtd_source *live;
	rtd_profile_records *cons;
	rtd_profile *cur;    /* what the records added since the last cut */
	bool gone;           /* every scoped process exited */
	int64_t period;
	pid_t pid;
	enum prof_kind kind; /* PK_CPU, or PK_BLOCK off-CPU */
	enum rtd_perf_offcpu_via via; /* off-CPU: BPF's totals or perf's waits */
	uint64_t start_ns;   /* monotonic: when the perf map was asked for */
	bool map_said;       /* its wait was logged */
};

/* The profile's mapping of a module, as the source learnt it (0: none). */
static int module_mapping(void *ctx, rtd_profile *p, const char *module)
{
	struct ps *ps = ctx;
	struct rtd_perf_source_mapping m;
	if (rtd_perf_source_live_mapping(ps->live, module, &m))
		return 0;
	return rtd_profile_add_mapping(p, m.start, m.limit, m.offset, m.file,
				       m.build_id[0] ? m.build_id : NULL);
}

/* An empty profile of the kind, typed as the profiler's own. */
static rtd_profile *new_profile(const struct ps *ps)
{
	static const struct rtd_profile_type cpu[2] = {{"samples", "count"},
						       {"cpu", "nanoseconds"}};
	/* Go's block profile */
	static const struct rtd_profile_type block[2] = {{"contentions", "count"},
							 {"delay", "nanoseconds"}};
	const struct rtd_profile_type *types = ps->kind == PK_BLOCK ? block : cpu;
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types, .ntypes = 2,
				      .default_type = 1,
				      .period_type = types[ps->kind == PK_BLOCK ? 0 : 1],
				      .period = ps->period};
	rtd_profile *p = rtd_profile_new2(&po);
	struct rtd_profile_meta m = {.sz = sizeof(m),
				     .source = ps->kind == PK_BLOCK ? "perf off-cpu" : "perf",
				     .pid = ps->pid};
	if (p)
		rtd_profile_set_meta(p, &m);
	return p;
}

/* Take what the source queued into the profile, up to a budget; *reached
 * (when given) once its watermark passed @until. Returns 0 to go on, 1 at
 * the source's end (the processes are gone), or a negative error with
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

/* The profiler of one process and kind (on the start's thread). */
static int open_profiler(struct ps_start *st)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so),
					   .freq = st->hz,
					   .callgraph = RTD_PERF_CG_FP};
	/* DWARF (inlined frames, file:line) costs ~12 MB a target: on ask */
	struct rtd_sym_opts symo = {
		.sz = sizeof(symo),
		.flags = st->dwarf ? 0u : RTD_SYM_NO_DWARF,
	};
	struct rtd_perf_profiler_opts po = {
		.sz = sizeof(po),
		.pids = &st->pid,
		.npids = 1,
		/* .NET: the perf map's request is answered on the loop
		 * (ps_readable()): a stopped runtime holds no other target */
		.flags = RTD_PERF_PROF_NO_COMM | RTD_PERF_PROF_WINDOWS |
			 RTD_PERF_PROF_DOTNET_BEGIN |
			 (st->dotnet ? 0 : RTD_PERF_PROF_NO_DOTNET),
		.sampler = &so,
		.ring_pages = 16,
		.sym = &symo,
	};
	/* CPU: each drain hands out the call tree's totals, a sample per
	 * thread and stack with its count and summed period, as the take's
	 * profile had them: work per stack, not per sample (each sample a
	 * record cost the agent +25-50% of its CPU, light.sh) */
	if (st->kind == PK_CPU)
		po.flags |= RTD_PERF_PROF_TOTALS;
	if (st->kind == PK_BLOCK) {
		/* a sample at every switch: rings for bursts of them (through
		 * perf); through BPF, the kernel's totals kept at each read */
		po.flags |= RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET |
			    RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_WAIT_TOTALS;
		po.ring_pages = 64;
		so.freq = 0;
	}
	int rc = rtd_perf_profiler_new(&po, &st->prof);
	if (rc)
		snprintf(st->err, sizeof(st->err), "%s",
			 rtd_perf_profiler_errmsg(NULL));
	return rc;
}

/* Off-CPU through perf: each wait a slice (else BPF's totals). */
static bool wait_slices(const struct ps_start *st)
{
	return st->kind == PK_BLOCK &&
	       rtd_perf_profiler_offcpu_via(st->prof, NULL) != RTD_PERF_OFFCPU_VIA_BPF;
}

/* The profiler and its live source (on the start's thread). */
static int start_open(struct ps_start *st)
{
	int rc = open_profiler(st);
	if (rc)
		return rc;
	int err = 0;
	RTD_OPTS(rtd_perf_source_opts, lo, .window_ms = LIVE_WINDOW_MS,
		 .max_records = LIVE_MAX_RECORDS,
		 .flags = RTD_PERF_SOURCE_COPIED | RTD_PERF_SOURCE_MAPPINGS |
			  (st->dwarf ? RTD_PERF_SOURCE_LINES : 0) |
			  (wait_slices(st) ? RTD_PERF_SOURCE_WAIT_STACKS : 0));
	st->live = rtd_perf_source_live(st->prof, &lo, &err);
	if (!st->live) {
		snprintf(st->err, sizeof(st->err), "the perf record source: %s",
			 rtd_strerror(err ? err : -ENOMEM));
		return err ? err : -ENOMEM;
	}
	return 0;
}

/* Let go of a start: the last one frees it and what it still holds. */
static void start_put(struct ps_start *st)
{
	if (atomic_fetch_sub(&st->refs, 1) != 1)
		return;
	rtd_source_free(st->live); /* joins its threads: before the profiler */
	rtd_perf_profiler_free(st->prof);
	close(st->efd);
	free(st);
}

/* The start answered (or is given up): its target may be listed now, and
 * for good once no first start of it is left. */
static void start_answered(struct source *src, struct ps *ps)
{
	struct target *t = src->t;
	if (!ps->unlisted)
		return;
	ps->unlisted = false;
	pthread_mutex_lock(&src->a->lock);
	if (!--t->unlisted)
		t->listed = true;
	pthread_mutex_unlock(&src->a->lock);
}

/* One start at a time, as on the loop: a scan finding many targets loads
 * neither their BPF programs nor their symbols all at once */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

static void *start_main(void *arg)
{
	struct ps_start *st = arg;
	pthread_mutex_lock(&start_mu);
	/* nobody wants it any more (its target exited while it waited) */
	st->rc = atomic_load(&st->refs) > 1 ? start_open(st) : -ECANCELED;
	pthread_mutex_unlock(&start_mu);
	atomic_store(&st->done, true);
	uint64_t one = 1;
	ssize_t n = write(st->efd, &one, sizeof(one));
	(void)n;
	start_put(st);
	return NULL;
}

/* Hand the start to a thread of its own; 0, or a negative errno with
 * src->err set. */
static int start_begin(struct source *src, struct ps *ps)
{
	struct ps_start *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	atomic_init(&st->refs, 2);
	atomic_init(&st->done, false);
	st->pid = src->t->pid;
	st->kind = ps->kind;
	st->hz = src->a->c->cpu_hz;
	st->dwarf = src->a->c->native_dwarf;
	st->dotnet = !strcmp(src->t->runtime, "dotnet");
	st->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int e = st->efd < 0 ? errno : 0;
	pthread_attr_t at;
	pthread_t th;
	if (!e && !(e = pthread_attr_init(&at))) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		e = pthread_create(&th, &at, start_main, st);
		pthread_attr_destroy(&at);
	}
	if (e) {
		snprintf(src->err, sizeof(src->err), "a thread for the start: %s",
			 strerror(e));
		if (st->efd >= 0)
			close(st->efd);
		free(st);
		return -e;
	}
	ps->st = st;
	src->starting = true;
	/* the target is listed once its first starts answered: /targets
	 * then says what they said, as when they ran on the loop */
	pthread_mutex_lock(&src->a->lock);
	ps->unlisted = !src->t->listed;
	src->t->unlisted += ps->unlisted;
	pthread_mutex_unlock(&src->a->lock);
	return 0;
}

static int start_kind(struct source *src, enum prof_kind kind)
{
	struct ps *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	src->priv = ps;
	ps->kind = kind;
	ps->pid = src->t->pid;
	src->kinds = 1u << kind;
	/* each perf source holds its libraries' symbols (the kernel's are
	 * shared by all): over the memory cap, no new one */
	if (src->a->rss_bytes > src->a->c->max_memory) {
		snprintf(src->err, sizeof(src->err),
			 "the agent is over its memory cap (%llu MB): no perf "
			 "source for a new target",
			 (unsigned long long)(src->a->c->max_memory >> 20));
		return -ENOMEM;
	}
	ps->start_ns = mono_ns();
	return start_begin(src, ps);
}

/* The start failed (rc, src->err): said as a start's failure (the log,
 * /targets, the errors counter, a retry later), the kind taken back, and
 * only then the target listed. Returns 1: the source ended. */
static int start_failed(struct source *src, int rc)
{
	src->kinds = 0;
	target_kinds_update(src->a, src->t);
	source_start_failed(src->a, src, rc);
	start_answered(src, src->priv);
	return 1;
}

/* The start's thread is done: its profiler and source are the loop's now
 * (the profile and its consumer made here), or its failure is said.
 * Returns 0, or 1 when it failed (the source ended, to be tried again). */
static int start_done(struct source *src)
{
	struct ps *ps = src->priv;
	struct ps_start *st = ps->st;
	if (!atomic_load(&st->done))
		return 0;
	int rc = st->rc;
	ps->prof = st->prof;
	ps->live = st->live;
	bool slices = !rc && wait_slices(st);
	st->prof = NULL;
	st->live = NULL;
	if (rc)
		snprintf(src->err, sizeof(src->err), "%s", st->err);
	ps->st = NULL;
	start_put(st);
	struct target *t = src->t;
	if (rc)
		return start_failed(src, rc);
	const char *why = "";
	ps->via = ps->kind == PK_BLOCK ? rtd_perf_profiler_offcpu_via(ps->prof, &why)
				       : RTD_PERF_OFFCPU_VIA_AUTO;
	if (ps->via == RTD_PERF_OFFCPU_VIA_PERF)
		rtd_info("target %s pid %d: off-CPU through perf, every switch "
			 "copied out: %s", t->service, (int)t->pid, why);
	ps->period = ps->kind == PK_BLOCK ? 1 : (int64_t)(1000000000u / src->a->c->cpu_hz);
	ps->cur = new_profile(ps);
	/* CPU: the totals weigh their count and summed period; off-CPU:
	 * BPF's totals weigh their count and delay, perf's slices 1 and
	 * their length; the state a label */
	int err = 0;
	RTD_OPTS(rtd_profile_records_opts, co,
		 .name = ps->kind == PK_BLOCK ? "off-cpu" : "cpu", .period = ps->period,
		 .category = slices ? "off-cpu" : NULL,
		 .label = ps->kind == PK_BLOCK ? "state" : NULL,
		 .mapping = module_mapping, .mapping_ctx = ps);
	ps->cons = ps->cur ? rtd_profile_records_new(ps->cur, &co, &err) : NULL;
	if (!ps->cons) {
		snprintf(src->err, sizeof(src->err), "the perf record source: %s",
			 rtd_strerror(err ? err : -ENOMEM));
		return start_failed(src, err ? err : -ENOMEM);
	}
	/* a start tried again is said by the agent (dispatch()) */
	src->starting = false;
	start_answered(src, ps);
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
	int n = 0;
	if (ps->st) /* starting */
		return max > 0 ? (fds[n++] = ps->st->efd, n) : 0;
	if (ps->live && n < max)
		fds[n++] = rtd_source_fd(ps->live);
	int pm = rtd_perf_profiler_perfmap_fd(ps->prof);
	if (pm >= 0 && n < max)
		fds[n++] = pm;
	return n;
}

static int ps_readable(struct source *src, int fd)
{
	struct ps *ps = src->priv;
	if (ps->st)
		return start_done(src);
	if (fd >= 0 && fd == rtd_perf_profiler_perfmap_fd(ps->prof)) {
		/* the runtime answered (or went): JIT frames are named from
		 * when its map is written */
		if (!rtd_perf_profiler_perfmap_answer(ps->prof) && ps->map_said)
			rtd_info("target %s pid %d: the runtime answered the perf "
				 "map's request after %.1f s", src->t->service,
				 (int)src->t->pid, (mono_ns() - ps->start_ns) / 1e9);
		return 0;
	}
	return live_pull(src, 0, NULL);
}

/* Everything the source has until now into the profile, handed over. */
static int ps_take(struct source *src, struct take *t)
{
	struct ps *ps = src->priv;
	int64_t at = 0;
	if (ps->st || !ps->cons)
		return 0; /* starting: nothing yet, and no wait for it */
	if (!ps->map_said && rtd_perf_profiler_perfmap_fd(ps->prof) >= 0 &&
	    mono_ns() - ps->start_ns > MAP_SAY_NS) {
		rtd_info("target %s pid %d: no reply to the perf map's request "
			 "after %.0f s; waiting (JIT frames unnamed meanwhile)",
			 src->t->service, (int)src->t->pid,
			 (mono_ns() - ps->start_ns) / 1e9);
		ps->map_said = true;
	}
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
	rtd_profile *next = new_profile(ps);
	if (next) {
		t->p[ps->kind] = ps->cur;
		t->period[ps->kind] = ps->period;
		ps->cur = next;
		rtd_profile_records_retarget(ps->cons, next);
	} /* else out of memory: the samples go on into this one */
	if (ps->gone)
		src->ended = true;
	return rc < 0 ? rc : 0;
}

static void ps_free(struct source *src)
{
	struct ps *ps = src->priv;
	if (!ps)
		return;
	/* starting: its thread frees what it makes, once done */
	if (ps->st)
		start_put(ps->st);
	start_answered(src, ps);
	rtd_source_free(ps->live); /* joins its threads: before the profiler */
	rtd_profile_records_free(ps->cons);
	rtd_profile_free(ps->cur);
	rtd_perf_profiler_free(ps->prof);
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
