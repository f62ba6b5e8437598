/* SPDX-License-Identifier: MIT */
/*
 * source_live.c - a perf profiler, or a system calls' recorder, as a live
 * record source (rtdiag/perf_source.h, rtd_perf_source_live(),
 * rtd_perf_source_syscalls_live()).
 *
 * Two threads of the source's own: the runner runs the profiler, and
 * between two runs drains what it kept (rtd_perf_profiler_drain(): named,
 * in time order; off-CPU waits in the order they ended) into a bounded
 * ring of records; the ticker cuts the run every window (it stops the
 * monitor, which drains its rings first). The consumer takes from the
 * ring without blocking: empty, the source is idle with the end of the
 * last run's loop as its watermark (perf_monitor_run_end()), and an
 * eventfd wakes it.
 *
 * Names are interned by the runner only; an interned string lives as
 * long as the source, so the consumer reads them without a lock. With
 * RTD_PERF_SOURCE_COPIED they live in generations instead: the runner
 * starts a new interner once the current one holds gen_stacks stacks, and
 * frees the one before when the consumer has taken every record pushed
 * while it was current and asked for another (the records are borrowed
 * until the next rtd_source_next(), and such a consumer copies what it
 * keeps). A sampled program's distinct stacks do not stop coming (a
 * runtime's unnamed native frames and the kernel's paths): held to the
 * source's end, they grew a flight recorder's memory for as long as it ran.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blockq.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/map.h"
#include "common/stats.h"
#include "perf/internal.h"
#include "perf/source_impl.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/symbols.h"
#include "rtdiag/perf_source.h"

#define PL_MAX_TIDS (1u << 22)       /* threads and processes named */
#define PL_DEFAULT_WINDOW_MS 100u
#define PL_DEFAULT_RECORDS 4096u
#define PL_MAX_RECORDS (1u << 24)
#define PL_DEFAULT_GEN_STACKS 512u

struct pl_entry {
	struct rtd_record rec;
	struct rtd_field f[3]; /* a wait's "state", "in" and "open" */
};

struct pl {
	struct rtd_perf_profiler *p;          /* one of these two */
	struct rtd_perf_syscall_recorder *sr;
	bool offcpu;           /* an off-CPU profiler's */
	struct rtd_perf_source_opts o;
	rtd_intern *intern;    /* the runner's (its current generation) */
	rtd_intern *old;       /* COPIED: the generation before, or NULL */
	size_t old_strings, old_stacks;
	uint64_t interned_base; /* stacks of the generations ended */
	rtd_map names;         /* the runner's: tid -> name; pid | 1 << 63 -> process */
	struct rtd_rec_frame *frames;
	size_t frames_cap;
	struct rtd_clock clock;
	pthread_t runner, ticker;
	bool run_started, tick_started;
	/* the ring of records; its mutex guards what follows it too; its
	 * space is also broadcast when released grows; stopped:
	 * rtd_source_free(); closed: ended */
	rtd_blockq q;
	pthread_cond_t tick;   /* the ticker's sleep */
	struct pl_entry cur;
	int end_rc;
	char end_msg[256];
	int64_t wm;            /* the last stopped run's loop's end */
	int64_t win_start;     /* the runner's: when the window being drained began */
	uint64_t released;     /* records the consumer is done with (q.taken, at its next pull) */
	uint64_t old_end;      /* q.pushed when old stopped taking names */
	struct rtd_perf_source_stats st; /* as of the last window */
	rtd_strmap maps;       /* module -> struct rtd_perf_source_mapping *, under q.mu */
	bool cut_asked;        /* rtd_perf_source_live_cut(): cut now */
	int walk_rc;
	bool stopping;         /* the runner's: a stop was seen, one window to go */
};

static bool stop_asked(const struct pl *s)
{
	return s->o.stop && *s->o.stop;
}

static struct rtd_perf_monitor *pl_monitor(struct pl *s)
{
	return s->p ? rtd_perf_profiler_monitor(s->p) : rtd_perf_syscall_recorder_monitor(s->sr);
}

static const char *pl_errmsg(struct pl *s)
{
	return s->p ? rtd_perf_profiler_errmsg(s->p) : rtd_perf_syscall_recorder_errmsg(s->sr);
}

/* Queue one record (waits while the ring is full). Returns 0, or
 * -RTD_E_STOPPED when the source is being freed. */
static int push(struct pl *s, const struct pl_entry *e)
{
	return rtd_blockq_push(&s->q, e, 0);
}

/* Before each record is named (and after a window, @window: the counts
 * too): with RTD_PERF_SOURCE_COPIED a new generation of names once the
 * current one is full and the one before it was given out whole; before
 * a record, a full generation waits for that (as a full queue waits), so
 * the source never holds more than two generations. Returns 0,
 * -RTD_E_STOPPED when the source is being freed, or -ENOMEM. */
static int generations(struct pl *s, bool window)
{
	size_t strings, stacks, ost = s->old_stacks, ostr = s->old_strings;
	rtd_intern_counts(s->intern, &strings, &stacks);
	bool full = (s->o.flags & RTD_PERF_SOURCE_COPIED) &&
		    (stacks >= s->o.gen_stacks || strings >= 8 * s->o.gen_stacks);
	if (!full && !window)
		return 0;
	pthread_mutex_lock(&s->q.mu);
	while (full && !window && !s->q.stopped && s->old && s->released < s->old_end)
		pthread_cond_wait(&s->q.space, &s->q.mu);
	bool old_out = !s->old || s->released >= s->old_end, quit = s->q.stopped;
	pthread_mutex_unlock(&s->q.mu);
	if (quit)
		return -RTD_E_STOPPED;
	rtd_intern *n = full && old_out ? rtd_intern_new() : NULL;
	if (full && old_out && !n)
		return -ENOMEM;
	if (n) {
		/* nothing queued or borrowed points into old */
		rtd_intern_free(s->old);
		s->old = s->intern;
		s->intern = n;
		s->old_strings = ostr = strings;
		s->old_stacks = ost = stacks;
		s->interned_base += stacks;
		/* the map's names point into old: each thread and process
		 * is named again in the new generation */
		rtd_map_free(&s->names);
		rtd_map_init(&s->names, PL_MAX_TIDS);
		strings = stacks = 0;
	}
	pthread_mutex_lock(&s->q.mu);
	if (n) {
		s->old_end = s->q.pushed;
		s->st.generations++;
	}
	s->st.stacks_interned = s->interned_base + stacks;
	s->st.strings = ostr + strings;
	s->st.stacks = ost + stacks;
	pthread_mutex_unlock(&s->q.mu);
	return 0;
}

/* The mappings of the sample's file-backed modules not seen yet, from the
 * profiler's symbolizer (the runner's, as the drain is). */
static void learn_mappings(struct pl *s, const struct rtd_perf_profiler_sample *smp)
{
	for (size_t i = 0; i < smp->nframes; i++) {
		const struct rtd_frame *f = &smp->frames[i];
		if (!f->module || f->module[0] == '[' || f->inlined ||
		    (f->kind != RTD_FRAME_NATIVE && f->kind != RTD_FRAME_RUNTIME))
			continue;
		size_t ml = strlen(f->module);
		pthread_mutex_lock(&s->q.mu);
		bool known = rtd_strmap_get(&s->maps, f->module, ml, NULL) ||
			     s->maps.count >= RTD_PERF_SOURCE_MAX_MAPPINGS;
		pthread_mutex_unlock(&s->q.mu);
		if (known)
			continue;
		struct rtd_sym_frame sf[RTD_SYM_MAX_INLINE + 1];
		int n = rtd_sym_resolve_addr(rtd_perf_profiler_symbolizer(s->p), (pid_t)smp->pid,
					     f->addr, false, sf, RTD_SYM_MAX_INLINE + 1);
		const struct rtd_sym_frame *h = n > 0 ? &sf[n - 1] : NULL;
		/* the mapping and its path in one block: freed together */
		size_t fl = h && h->module ? strlen(h->module) + 1 : 0;
		struct rtd_perf_source_mapping *m = fl ? calloc(1, sizeof(*m) + fl) : NULL;
		if (!m)
			continue;
		*m = (struct rtd_perf_source_mapping){.start = h->map_start, .limit = h->map_limit,
						      .offset = h->map_pgoff,
						      .file = memcpy(m + 1, h->module, fl)};
		rtd_hex_lower(m->build_id, h->build_id, h->build_id_len < 64 ? h->build_id_len : 64);
		pthread_mutex_lock(&s->q.mu);
		if (rtd_strmap_put(&s->maps, f->module, ml, m) < 0)
			free(m);
		pthread_mutex_unlock(&s->q.mu);
	}
}

static int renamed(struct pl *s, uint64_t key, const char *name, const char **interned)
{
	return rtd_perf_source_renamed(s->intern, &s->names, key, name, interned);
}

/* A total (rtd_perf_profiler_sample.count): BPF's of a thread's waits of
 * one stack and state (RTD_PERF_PROF_WAIT_TOTALS), one SAMPLE "off-cpu";
 * a CPU profiler's samples of one thread and stack since the last drain
 * (RTD_PERF_PROF_TOTALS), one SAMPLE "cpu". Each weighs the count, the
 * summed length or period its "period" field, stamped when read. */
static int push_total(struct pl *s, const struct rtd_perf_profiler_sample *smp,
		      struct pl_entry *e)
{
	int rc = rtd_perf_source_sample(s->intern, &s->frames, &s->frames_cap, smp,
					s->o.flags & RTD_PERF_SOURCE_LINES, &e->rec);
	if (rc < 0)
		return rc;
	e->rec.value = (double)smp->count;
	e->f[0] = (struct rtd_field){.name = "period", .type = RTD_FIELD_U64, .u = smp->duration};
	e->rec.nfields = 1;
	if (!s->offcpu)
		return push(s, e);
	const char *state;
	if ((rc = rtd_intern_string(s->intern, smp->state ? smp->state : "?",
				    smp->state ? strlen(smp->state) : 1, &state)) < 0)
		return rc;
	e->rec.name = "off-cpu";
	e->rec.category = "off-cpu";
	e->f[1] = (struct rtd_field){.name = "state", .type = RTD_FIELD_STR, .s = state};
	e->rec.nfields = 2;
	return push(s, e);
}

static int on_sample(const struct rtd_perf_profiler_sample *smp, void *ctx)
{
	struct pl *s = ctx;
	/* a wait is known at its end: that is its place in the stream; a
	 * total at the start of the window it sums (as pprof's time_nanos):
	 * stamped at its read, after the cut that ended the window, the
	 * first total of a drain lifted the watermark past that cut while
	 * the others were still to come, and a consumer pulling until the
	 * cut left them to its next cut (a 3 s /block held 2.05 s of sleep) */
	int64_t at = smp->count ? s->win_start : (int64_t)(smp->time + smp->duration);
	struct pl_entry e;
	const char *name;
	int rc = generations(s, false);
	if (rc < 0)
		return rc;
	memset(&e, 0, sizeof(e));
	e.rec.ts = e.rec.mono = at; /* use_clockid: CLOCK_MONOTONIC */
	e.rec.pid = smp->pid;
	/* the process, named once per name; the thread, again when renamed */
	if ((rc = renamed(s, smp->pid | 1ull << 63, smp->process, &name)) < 0)
		return rc;
	if (rc) {
		e.rec.kind = RTD_REC_PROCESS;
		e.rec.name = name;
		if ((rc = push(s, &e)) < 0)
			return rc;
	}
	e.rec.tid = smp->tid;
	if ((rc = renamed(s, smp->tid, smp->thread, &name)) < 0)
		return rc;
	if (rc) {
		e.rec.kind = RTD_REC_THREAD;
		e.rec.name = name;
		if ((rc = push(s, &e)) < 0)
			return rc;
	}
	size_t n = smp->nframes < RTD_INTERN_MAX_DEPTH ? smp->nframes : RTD_INTERN_MAX_DEPTH;
	if (s->o.flags & RTD_PERF_SOURCE_MAPPINGS)
		learn_mappings(s, smp);
	if (smp->count)
		return push_total(s, smp, &e);
	if (!smp->duration) {
		if ((rc = rtd_perf_source_sample(s->intern, &s->frames, &s->frames_cap, smp,
						 s->o.flags & RTD_PERF_SOURCE_LINES, &e.rec)) < 0)
			return rc;
		return push(s, &e);
	}
	/* the first frame outside the kernel: where the thread waited */
	const char *in = n ? smp->frames[0].name : NULL;
	for (size_t i = 0; i < n; i++)
		if (smp->frames[i].kind != RTD_FRAME_KERNEL) {
			in = smp->frames[i].name;
			break;
		}
	if ((s->o.flags & RTD_PERF_SOURCE_WAIT_STACKS) &&
	    (rc = rtd_perf_source_sample(s->intern, &s->frames, &s->frames_cap, smp,
					 s->o.flags & RTD_PERF_SOURCE_LINES, &e.rec)) < 0)
		return rc;
	e.rec.value = 0;
	e.rec.unit = NULL;
	const char *state, *where;
	rc = rtd_intern_string(s->intern, smp->state ? smp->state : "?",
			       smp->state ? strlen(smp->state) : 1, &state);
	if (rc == 0)
		rc = rtd_intern_string(s->intern, in ? in : "?", in ? strlen(in) : 1, &where);
	if (rc < 0)
		return rc;
	e.rec.kind = RTD_REC_SLICE;
	e.rec.dur = (int64_t)smp->duration;
	e.rec.name = rtd_perf_wait_state_name(smp->state);
	e.rec.category = "off-cpu";
	e.f[0] = (struct rtd_field){.name = "state", .type = RTD_FIELD_STR, .s = state};
	e.f[1] = (struct rtd_field){.name = "in", .type = RTD_FIELD_STR, .s = where};
	e.rec.nfields = 2;
	if (smp->open) /* still waiting at the stop: it ends there */
		e.f[e.rec.nfields++] = (struct rtd_field){.name = "open", .type = RTD_FIELD_I64, .i = 1};
	return push(s, &e);
}

/* A system call's slice (rtd_perf_syscall_recorder_drain()), its thread
 * named first and again when renamed. */
static int on_call(void *ctx, const struct rtd_record *rec, const char *comm)
{
	struct pl *s = ctx;
	struct pl_entry e;
	const char *name;
	int rc = generations(s, false);
	if (rc < 0)
		return rc;
	memset(&e, 0, sizeof(e));
	if (comm) {
		if ((rc = renamed(s, (uint64_t)rec->tid, comm, &name)) < 0)
			return rc;
		if (rc) {
			e.rec = (struct rtd_record){.kind = RTD_REC_THREAD, .ts = rec->ts,
						    .mono = rec->mono, .pid = rec->pid,
						    .tid = rec->tid, .name = name};
			if ((rc = push(s, &e)) < 0)
				return rc;
		}
	}
	e.rec = *rec;
	e.rec.fields = NULL;
	if (e.rec.nfields > 3)
		e.rec.nfields = 3;
	for (size_t i = 0; i < e.rec.nfields; i++)
		e.f[i] = rec->fields[i];
	return push(s, &e);
}

static void end_with(struct pl *s, int rc, const char *msg)
{
	pthread_mutex_lock(&s->q.mu);
	s->q.closed = true;
	s->end_rc = rc;
	snprintf(s->end_msg, sizeof(s->end_msg), "%s", msg ? msg : "");
	pthread_cond_broadcast(&s->tick); /* the ticker's work is done */
	pthread_mutex_unlock(&s->q.mu);
	rtd_blockq_ring(&s->q);
}

static void *runner(void *arg)
{
	struct pl *s = arg;
	for (;;) {
		int rc = s->p ? rtd_perf_profiler_run(s->p) : rtd_perf_syscall_recorder_run(s->sr);
		/* ended on a stop: the ticker's, or one it asked while the run
		 * before drained (the monitor keeps it for this run), or the
		 * free's; else the processes are gone */
		bool stopped = perf_monitor_run_stopped(pl_monitor(s));
		int64_t end = perf_monitor_run_end(pl_monitor(s));
		/* a stop is seen after a window; one more window follows it (the
		 * last), so that what the kernel wrote before the stop and the
		 * reader had not copied yet comes too: a program's last calls
		 * before it exited, 20-40 of 130 in a loaded sanitized run */
		bool last = stop_asked(s) && s->stopping;
		if (stop_asked(s))
			s->stopping = true;
		/* the last window: a thread still off the CPU waits until the
		 * stop (else its wait, begun in the recording, is lost) */
		int cw = s->p && rc >= 0 && last
				 ? rtd_perf_profiler_close_waits(s->p, (uint64_t)rtd_now_ns())
				 : 0;
		if (cw < 0) {
			end_with(s, cw, pl_errmsg(s));
			return NULL;
		}
		int dr = s->p ? rtd_perf_profiler_drain(s->p, on_sample, s)
			      : rtd_perf_syscall_recorder_drain(s->sr, on_call, s);
		if (dr == -RTD_E_STOPPED) {
			end_with(s, 0, NULL);
			return NULL;
		}
		if (dr < 0 || rc < 0) {
			end_with(s, dr < 0 ? dr : rc, pl_errmsg(s));
			return NULL;
		}
		int gr = generations(s, true);
		if (gr == -RTD_E_STOPPED) {
			end_with(s, 0, NULL);
			return NULL;
		}
		if (gr < 0) {
			end_with(s, gr, "out of memory");
			return NULL;
		}
		pthread_mutex_lock(&s->q.mu);
		bool quit = s->q.stopped;
		if (stopped && end > s->wm) {
			/* every record stamped before the run's loop ended was
			 * in the rings its drain read: nothing older is to come.
			 * Not the time of the last tick: a tick whose stop came
			 * during the drain (kept for the next run) is later than
			 * the drain's read, and what was stamped between came
			 * with the next run, older than the watermark. A cut's
			 * stop follows its `at`, and the run honouring it ends
			 * after both: the watermark passes `at` after that run. */
			s->wm = end;
		}
		if (s->wm > s->win_start)
			s->win_start = s->wm; /* the next window's totals */
		pthread_mutex_unlock(&s->q.mu);
		if (quit || last || !stopped) {
			/* freed, the last window, or not stopped: the processes
			 * are gone */
			end_with(s, 0, NULL);
			return NULL;
		}
		rtd_blockq_ring(&s->q); /* a newer watermark */
	}
}

static void *ticker(void *arg)
{
	struct pl *s = arg;
	pthread_mutex_lock(&s->q.mu);
	while (!s->q.stopped && !s->q.closed) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += (long)(s->o.window_ms % 1000) * 1000000L;
		t.tv_sec += s->o.window_ms / 1000 + t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		int w = s->cut_asked ? ETIMEDOUT : pthread_cond_timedwait(&s->tick, &s->q.mu, &t);
		if (s->q.stopped || s->q.closed)
			break;
		if (w != ETIMEDOUT && !s->cut_asked)
			continue;
		/* one thread cuts (the runner asks the monitor whether a run
		 * ended on a stop, and when its loop ended: two cuts may end
		 * one run, or a run its next) */
		s->cut_asked = false;
		rtd_perf_monitor_stop(pl_monitor(s), false);
	}
	pthread_mutex_unlock(&s->q.mu);
	return NULL;
}

static int pl_next(void *impl, struct rtd_record *rec)
{
	struct pl *s = impl;
	pthread_mutex_lock(&s->q.mu);
	if (s->released != s->q.taken) {
		/* the caller is done with what it had: a generation waiting
		 * for that may be freed */
		s->released = s->q.taken;
		pthread_cond_broadcast(&s->q.space);
	}
	if (rtd_blockq_pop_locked(&s->q, &s->cur)) {
		pthread_mutex_unlock(&s->q.mu);
		*rec = s->cur.rec;
		if (rec->nfields)
			rec->fields = s->cur.f;
		return 1;
	}
	int rc;
	if (s->q.closed) {
		rc = s->end_rc;
		if (rc < 0)
			rtd_source_error(rec, rc, 0, s->end_msg);
	} else {
		rc = RTD_SOURCE_IDLE;
		rec->mono = s->wm;
	}
	pthread_mutex_unlock(&s->q.mu);
	return rc;
}

static int pl_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct pl *)impl)->clock;
	return 0;
}

static int pl_fd(void *impl)
{
	return ((struct pl *)impl)->q.efd;
}

static void pl_free(void *impl)
{
	struct pl *s = impl;
	rtd_blockq_stop(&s->q);
	pthread_mutex_lock(&s->q.mu);
	pthread_cond_broadcast(&s->tick);
	pthread_mutex_unlock(&s->q.mu);
	if (s->tick_started)
		pthread_join(s->ticker, NULL);
	if (s->run_started) {
		/* a stop asked while the runner drained is not lost: the
		 * monitor keeps it for the next run, and the runner looks at
		 * quit after every run */
		rtd_perf_monitor_stop(pl_monitor(s), false);
		pthread_join(s->runner, NULL);
	}
	pthread_cond_destroy(&s->tick);
	rtd_map_free(&s->names);
	size_t b = 0;
	for (rtd_strmap_entry *e = NULL; (e = rtd_strmap_next(&s->maps, &b, e));)
		free(e->val);
	rtd_strmap_free(&s->maps);
	rtd_intern_free(s->intern);
	rtd_intern_free(s->old);
	free(s->frames);
	rtd_blockq_free(&s->q, NULL);
	free(s);
}

static const struct rtd_source_ops pl_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "perf-live",
	.next = pl_next,
	.clock = pl_clock,
	.free = pl_free,
	.fd = pl_fd,
};

static rtd_source *live_new(struct rtd_perf_profiler *p, struct rtd_perf_syscall_recorder *sr,
			    const struct rtd_perf_source_opts *opts, int *err)
{
	struct pl *s = NULL;
	int rc = p || sr ? 0 : -RTD_E_INVAL;
	if (!rc && !(s = calloc(1, sizeof(*s))))
		rc = -ENOMEM;
	if (!rc)
		rc = rtd_opts_copy(&s->o, sizeof(s->o), opts,
				   RTD_OPTS_END(rtd_perf_source_opts, gen_stacks));
	if (rc) {
		free(s);
		if (err)
			*err = rc;
		return NULL;
	}
	s->p = p;
	s->sr = sr;
	s->offcpu = p && rtd_perf_profiler_offcpu_via(p, NULL) != RTD_PERF_OFFCPU_VIA_AUTO;
	s->wm = INT64_MIN;
	s->win_start = (int64_t)rtd_now_ns();
	if (!s->o.window_ms)
		s->o.window_ms = PL_DEFAULT_WINDOW_MS;
	if (!s->o.max_records)
		s->o.max_records = PL_DEFAULT_RECORDS;
	if (s->o.max_records > PL_MAX_RECORDS)
		s->o.max_records = PL_MAX_RECORDS;
	if (!s->o.gen_stacks)
		s->o.gen_stacks = PL_DEFAULT_GEN_STACKS;
	pthread_cond_init(&s->tick, NULL);
	rtd_map_init(&s->names, PL_MAX_TIDS);
	rtd_strmap_init(&s->maps, RTD_PERF_SOURCE_MAX_MAPPINGS);
	rtd_perf_source_clock_init(&s->clock);
	s->intern = rtd_intern_new();
	/* the ring written whole now: its pages are in RSS from the start,
	 * not one by one as the queue's depth first reaches them in
	 * bursts, minutes apart (issue #31) */
	rc = rtd_blockq_init(&s->q, sizeof(struct pl_entry), s->o.max_records, 0);
	if (!rc && !s->intern)
		rc = -ENOMEM;
	if (!rc)
		s->run_started = (rc = -pthread_create(&s->runner, NULL, runner, s)) == 0;
	if (!rc)
		s->tick_started = (rc = -pthread_create(&s->ticker, NULL, ticker, s)) == 0;
	rtd_source *src = rc == 0 ? rtd_source_new(&pl_ops, s) : NULL;
	if (!src) {
		pl_free(s);
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
	}
	return src;
}

int rtd_perf_source_live_cut(rtd_source *src, int64_t *at)
{
	struct pl *s = rtd_source_impl_of(src, &pl_ops);
	if (!s)
		return -RTD_E_INVAL;
	if (at)
		*at = (int64_t)rtd_now_ns();
	pthread_mutex_lock(&s->q.mu);
	int rc = s->q.closed ? -RTD_E_STATE : 0;
	if (!rc) {
		s->cut_asked = true;
		pthread_cond_broadcast(&s->tick);
	}
	pthread_mutex_unlock(&s->q.mu);
	return rc;
}

int rtd_perf_source_live_mapping(rtd_source *src, const char *module,
				 struct rtd_perf_source_mapping *out)
{
	struct pl *s = rtd_source_impl_of(src, &pl_ops);
	if (!s || !module || !out)
		return -RTD_E_INVAL;
	void *v = NULL;
	pthread_mutex_lock(&s->q.mu);
	bool found = rtd_strmap_get(&s->maps, module, strlen(module), &v);
	if (found)
		*out = *(const struct rtd_perf_source_mapping *)v;
	pthread_mutex_unlock(&s->q.mu);
	return found ? 0 : -ENOENT;
}

int rtd_perf_source_live_stats(rtd_source *src, struct rtd_perf_source_stats *st)
{
	struct pl *s = rtd_source_impl_of(src, &pl_ops);
	if (!s || !st)
		return -RTD_E_INVAL;
	pthread_mutex_lock(&s->q.mu);
	struct rtd_perf_source_stats t = s->st;
	pthread_mutex_unlock(&s->q.mu);
	t.sz = sizeof(t);
	rtd_stats_copy(st, &t, sizeof(t));
	return 0;
}

rtd_source *rtd_perf_source_live(struct rtd_perf_profiler *p,
				 const struct rtd_perf_source_opts *opts, int *err)
{
	return live_new(p, NULL, opts, err);
}

rtd_source *rtd_perf_source_syscalls_live(rtd_perf_syscall_recorder *r,
					  const struct rtd_perf_source_opts *opts, int *err)
{
	int rc = r ? rtd_perf_syscall_recorder_claim(r) : -RTD_E_INVAL;
	if (rc) { /* started, or another source's */
		if (err)
			*err = rc;
		return NULL;
	}
	return live_new(NULL, r, opts, err);
}
