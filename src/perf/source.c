/* SPDX-License-Identifier: MIT */
/*
 * source.c - a perf profiler's kept CPU samples as a record source
 * (rtdiag/source.h, rtdiag/perf_source.h).
 *
 * rtd_perf_profiler_each_sample() pushes samples to a callback, and what
 * it gives lives until the callback returns. To pull them one at a time
 * without copying them all, the walk runs on a thread of its own: its
 * callback offers one sample and waits until the consumer asks for the
 * next one, so a sample's frames and names stay valid while its record
 * is out. Only the public profiler API is used.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/map.h"
#include "perf/source_impl.h"
#include "rtdiag/perf_source.h"

#define PS_MAX_TIDS (1u << 22) /* threads and processes named */

struct ps {
	struct rtd_perf_profiler *p;
	rtd_intern *intern;
	struct rtd_clock clock;
	rtd_map names;      /* tid -> its interned name; pid | 1 << 63 -> process */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const struct rtd_perf_profiler_sample *offer; /* the walker's sample */
	bool want;          /* the consumer asks for the next sample */
	bool done;          /* the walk ended: @walk_rc */
	bool stop;          /* the consumer is gone */
	int walk_rc;
	/* the sample being turned into records: a PROCESS, a THREAD, the SAMPLE */
	const struct rtd_perf_profiler_sample *cur;
	int step; /* enum psrc_step */
	struct rtd_rec_frame *frames;
	size_t frames_cap;
};

static int on_sample(const struct rtd_perf_profiler_sample *smp, void *ctx)
{
	struct ps *s = ctx;
	pthread_mutex_lock(&s->mu);
	while (!s->want && !s->stop)
		pthread_cond_wait(&s->cv, &s->mu);
	if (s->stop) {
		pthread_mutex_unlock(&s->mu);
		return -RTD_E_STOPPED;
	}
	s->want = false;
	s->offer = smp;
	pthread_cond_broadcast(&s->cv);
	/* hold the sample until the consumer asks for the next one */
	while (!s->want && !s->stop)
		pthread_cond_wait(&s->cv, &s->mu);
	s->offer = NULL;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static void *walker(void *arg)
{
	struct ps *s = arg;
	int rc = rtd_perf_profiler_each_sample(s->p, on_sample, s);
	pthread_mutex_lock(&s->mu);
	s->done = true;
	s->walk_rc = rc == -RTD_E_STOPPED && s->stop ? 0 : rc;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The next sample from the walker, or NULL at its end. */
static const struct rtd_perf_profiler_sample *take(struct ps *s)
{
	pthread_mutex_lock(&s->mu);
	s->want = true;
	pthread_cond_broadcast(&s->cv);
	while (s->want && !s->done)
		pthread_cond_wait(&s->cv, &s->mu);
	const struct rtd_perf_profiler_sample *smp = s->want ? NULL : s->offer;
	pthread_mutex_unlock(&s->mu);
	return smp;
}

int rtd_perf_source_renamed(rtd_intern *in, rtd_map *names, uint64_t key, const char *name,
			    const char **interned)
{
	*interned = NULL;
	if (!name)
		name = "";
	int rc = rtd_intern_string(in, name, strlen(name), interned);
	if (rc < 0)
		return rc;
	void *was = NULL;
	if (rtd_map_get(names, key, &was) && was == *interned)
		return 0;
	rc = rtd_map_put(names, key, (void *)*interned, NULL);
	return rc < 0 ? rc : 1;
}

static int renamed(struct ps *s, uint64_t key, const char *name, const char **interned)
{
	return rtd_perf_source_renamed(s->intern, &s->names, key, name, interned);
}

int rtd_perf_source_sample(rtd_intern *in, struct rtd_rec_frame **frames, size_t *cap,
			   const struct rtd_perf_profiler_sample *smp, bool lines,
			   struct rtd_record *rec)
{
	size_t n = smp->nframes < RTD_INTERN_MAX_DEPTH ? smp->nframes : RTD_INTERN_MAX_DEPTH;
	if (n) {
		struct rtd_rec_frame *f = rtd_grow(*frames, cap, n, sizeof(*f), 64);
		if (!f)
			return -ENOMEM;
		*frames = f;
	}
	for (size_t i = 0; i < n; i++)
		(*frames)[i] = (struct rtd_rec_frame){.ip = smp->frames[i].addr,
						      .name = smp->frames[i].name,
						      .module = smp->frames[i].module,
						      .kind = smp->frames[i].kind,
						      .file = lines ? smp->frames[i].file : NULL,
						      .line = lines ? smp->frames[i].line : 0,
						      .inlined = smp->frames[i].inlined};
	int rc = rtd_intern_stack(in, *frames, n, &rec->stack);
	if (rc < 0)
		return rc;
	rec->kind = RTD_REC_SAMPLE;
	rec->name = "cpu";
	rec->value = 1;
	rec->unit = "count";
	return 0;
}

static int ps_next(void *impl, struct rtd_record *rec)
{
	struct ps *s = impl;
	for (;;) {
		if (!s->cur) {
			s->cur = take(s);
			s->step = PSRC_STEP_PROCESS;
			if (!s->cur) {
				if (s->walk_rc < 0)
					return rtd_source_error(rec, s->walk_rc, 0,
								rtd_perf_profiler_errmsg(s->p));
				return 0;
			}
			if (s->cur->duration)
				return rtd_source_error(rec, -RTD_E_UNSUPPORTED, 0,
							"an off-CPU profile's waits come in the "
							"order they end: not a record source yet");
		}
		const struct rtd_perf_profiler_sample *smp = s->cur;
		rec->ts = (int64_t)smp->time;
		rec->mono = rec->ts; /* use_clockid: CLOCK_MONOTONIC */
		rec->pid = smp->pid;
		rec->tid = smp->tid;
		const char *name;
		int rc;
		switch (s->step++) {
		case PSRC_STEP_PROCESS:
			if ((rc = renamed(s, smp->pid | 1ull << 63, smp->process, &name)) < 0)
				return rc;
			if (!rc)
				continue;
			rec->kind = RTD_REC_PROCESS;
			rec->tid = 0;
			rec->name = name;
			return 1;
		case PSRC_STEP_THREAD:
			if ((rc = renamed(s, smp->tid, smp->thread, &name)) < 0)
				return rc;
			if (!rc)
				continue;
			rec->kind = RTD_REC_THREAD;
			rec->name = name;
			return 1;
		default:
			s->cur = NULL; /* the next call takes the next sample */
			return (rc = rtd_perf_source_sample(s->intern, &s->frames, &s->frames_cap,
							   smp, false, rec)) < 0 ? rc : 1;
		}
	}
}

static int ps_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct ps *)impl)->clock;
	return 0;
}

static void ps_free(void *impl)
{
	struct ps *s = impl;
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	rtd_map_free(&s->names);
	rtd_intern_free(s->intern);
	free(s->frames);
	free(s);
}

static const struct rtd_source_ops ps_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "perf",
	.next = ps_next,
	.clock = ps_clock,
	.free = ps_free,
};

/* CLOCK_MONOTONIC, with wall time from a REALTIME reading taken between
 * two MONOTONIC ones; the error is their distance. */
void rtd_perf_source_clock_init(struct rtd_clock *c)
{
	struct timespec m1, w, m2;
	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	int64_t a = (int64_t)m1.tv_sec * 1000000000 + m1.tv_nsec;
	int64_t b = (int64_t)m2.tv_sec * 1000000000 + m2.tv_nsec;
	c->domain = RTD_CLOCK_MONOTONIC;
	c->flags = RTD_CLOCK_HAS_MONO | RTD_CLOCK_HAS_WALL;
	c->freq = 1000000000u;
	c->ref_ts = c->ref_mono = a + (b - a) / 2;
	c->ref_wall = (int64_t)w.tv_sec * 1000000000 + w.tv_nsec;
	c->mono_error_ns = 0;
	c->wall_error_ns = (uint64_t)(b - a) / 2 + 1;
}

rtd_source *rtd_perf_source_profiler(struct rtd_perf_profiler *p,
				     const struct rtd_perf_source_opts *opts, int *err)
{
	int rc = p ? RTD_OPTS_VALID(opts, rtd_perf_source_opts, stop) : -RTD_E_INVAL;
	struct ps *s = rc == 0 ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
		return NULL;
	}
	s->p = p;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	rtd_map_init(&s->names, PS_MAX_TIDS);
	rtd_perf_source_clock_init(&s->clock);
	s->intern = rtd_intern_new();
	rc = s->intern ? -pthread_create(&s->thread, NULL, walker, s) : -ENOMEM;
	s->started = rc == 0;
	rtd_source *src = rc == 0 ? rtd_source_new(&ps_ops, s) : NULL;
	if (!src) {
		ps_free(s);
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
	}
	return src;
}
