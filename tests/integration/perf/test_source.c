/* SPDX-License-Identifier: MIT */
/*
 * test_source.c - a perf profiler's kept samples as a record source
 * (rtd_perf_source_profiler), on the real kernel: perf_target does fixed
 * CPU work under a CPU profiler (999 Hz, frame pointers), then
 *  - the source gives as many SAMPLE records as the profiler's own walk
 *    of its kept samples, each with the same time and pid/tid, in time
 *    order;
 *  - every sample's time lies between CLOCK_MONOTONIC read before the
 *    child started and after it ended (the events' use_clockid), and the
 *    clock says CLOCK_MONOTONIC with error 0;
 *  - a PROCESS record names perf_target, a THREAD record its thread, and
 *    the work loop's frame (main) is on the stacks;
 *  - the source freed halfway stops its walker thread.
 */
#include <inttypes.h>
#include <time.h>

#include "perf_test.h"
#include "rtdiag/perf_source.h"

static int64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct walk {
	uint64_t *time;
	uint32_t *tid;
	size_t n, cap;
};

static int on_kept(const struct rtd_perf_profiler_sample *s, void *ctx)
{
	struct walk *w = ctx;
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->time = realloc(w->time, w->cap * sizeof(*w->time));
		w->tid = realloc(w->tid, w->cap * sizeof(*w->tid));
		if (!w->time || !w->tid)
			FAIL("out of memory");
	}
	w->time[w->n] = s->time;
	w->tid[w->n] = s->tid;
	w->n++;
	return 0;
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	char *argv[] = {(char *)t, "work", "400", "0", NULL};
	struct pt_child c = pt_spawn(argv);
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 999};
	struct rtd_perf_profiler_opts o = {.sz = sizeof(o),
					   .pids = &c.pid,
					   .npids = 1,
					   .flags = RTD_PERF_PROF_ENABLE_ON_EXEC |
						    RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET,
					   .sampler = &so};
	struct rtd_perf_profiler *p;
	int r = rtd_perf_profiler_new(&o, &p);
	if (r)
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	int64_t t0 = mono_now();
	pt_go(&c);
	r = rtd_perf_profiler_run(p); /* until the child is gone */
	int64_t t1 = mono_now();
	pt_wait(&c);
	if (r)
		FAIL("run: %s", rtd_perf_profiler_errmsg(p));

	struct walk w = {0};
	if (rtd_perf_profiler_each_sample(p, on_kept, &w))
		FAIL("each_sample: %s", rtd_perf_profiler_errmsg(p));
	if (w.n < 10)
		FAIL("only %zu samples of 400 ms of work at 999 Hz", w.n);

	int err = 0;
	rtd_source *s = rtd_perf_source_profiler(p, NULL, &err);
	if (!s)
		FAIL("source: %s", rtd_strerror(err));
	const struct rtd_record *rec;
	size_t k = 0, procs = 0, threads = 0, with_main = 0;
	int64_t last = INT64_MIN;
	while ((r = rtd_source_next(s, &rec)) == 1) {
		if (rec->mono < last)
			FAIL("time goes back");
		last = rec->mono;
		if (rec->kind == RTD_REC_PROCESS) {
			procs++;
			if (rec->pid != (uint32_t)c.pid || strcmp(rec->name, "perf_target"))
				FAIL("process %u named '%s'", rec->pid, rec->name);
			continue;
		}
		if (rec->kind == RTD_REC_THREAD) {
			threads++;
			if (!rec->name || !rec->name[0])
				FAIL("a thread without a name");
			continue;
		}
		if (rec->kind != RTD_REC_SAMPLE)
			FAIL("a %s record", rtd_record_kind_name(rec->kind));
		if (k >= w.n || (uint64_t)rec->ts != w.time[k] || rec->tid != w.tid[k])
			FAIL("sample %zu differs from the profiler's walk", k);
		if (rec->mono < t0 || rec->mono > t1)
			FAIL("sample at %" PRId64 " outside [%" PRId64 ", %" PRId64 "]", rec->mono,
			     t0, t1);
		for (uint32_t i = 0; i < rec->stack->n; i++)
			if (rec->stack->frames[i].name && !strcmp(rec->stack->frames[i].name, "main")) {
				with_main++;
				break;
			}
		k++;
	}
	if (r)
		FAIL("source: %s", rec->message);
	if (k != w.n)
		FAIL("%zu SAMPLE records, the profiler kept %zu", k, w.n);
	OK("%zu SAMPLE records = the profiler's kept samples, in time order, all within the "
	   "child's run (CLOCK_MONOTONIC %.3f s)", k, (double)(t1 - t0) / 1e9);
	if (procs != 1 || threads < 1)
		FAIL("%zu PROCESS and %zu THREAD records", procs, threads);
	if (with_main * 2 < k)
		FAIL("only %zu of %zu samples have main on their stack", with_main, k);
	OK("perf_target named once, %zu thread record(s), main on %zu of %zu stacks", threads,
	   with_main, k);
	struct rtd_clock clk;
	rtd_source_clock(s, &clk);
	if (clk.domain != RTD_CLOCK_MONOTONIC || clk.mono_error_ns != 0 ||
	    !(clk.flags & RTD_CLOCK_HAS_WALL))
		FAIL("clock %s, error %" PRIu64, rtd_clock_domain_name(clk.domain),
		     clk.mono_error_ns);
	OK("clock: CLOCK_MONOTONIC, error 0; wall error %" PRIu64 " ns", clk.wall_error_ns);
	rtd_source_free(s);

	/* freed halfway: the walker thread is stopped and joined */
	s = rtd_perf_source_profiler(p, NULL, NULL);
	for (size_t i = 0; i < 5 && rtd_source_next(s, &rec) == 1; i++)
		;
	rtd_source_free(s);
	OK("a source freed halfway stops its walker");
	rtd_perf_profiler_free(p);
	free(w.time);
	free(w.tid);
	return 0;
}
