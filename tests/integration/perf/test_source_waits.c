/* SPDX-License-Identifier: MIT */
/*
 * test_source_waits.c - an off-CPU profiler's waits as a record source
 * (rtd_perf_source_waits), on the real kernel: offcpu_waits_fp waits in
 * nanosleep (20 ms), a pipe read (30 ms) and a contended mutex (25 ms) on
 * three threads, under an off-CPU profiler; then
 *  - the source gives one SLICE_BEGIN and one SLICE_END per wait the
 *    profiler's own walk gives, the begins at the waits' start times;
 *  - records come in time order (the walk gives waits in the order they
 *    ended), and per thread the slices never overlap: each END closes the
 *    thread's open slice at start + duration;
 *  - every slice is category "off-cpu", named by its state ("sleep" for
 *    S) with the fields state and in; the program's threads are named by
 *    THREAD records before their first slice.
 */
#include <inttypes.h>

#include "common/map.h"
#include "perf_test.h"
#include "rtdiag/perf_source.h"

struct walk {
	size_t waits;
	uint64_t ns;
};

static int on_kept(const struct rtd_perf_profiler_sample *s, void *ctx)
{
	struct walk *w = ctx;
	w->waits += s->duration != 0;
	w->ns += s->duration;
	return 0;
}

int main(void)
{
	pt_require();
	char *path = (char *)pt_target_named("offcpu_waits_fp");
	char *argv[] = {path, "6", NULL};
	struct pt_child c = pt_spawn(argv);
	struct rtd_perf_profiler_opts o = {.sz = sizeof(o),
					   .pids = &c.pid,
					   .npids = 1,
					   .flags = RTD_PERF_PROF_ENABLE_ON_EXEC | RTD_PERF_PROF_OFF_CPU |
						    RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p))
		SKIP("off-CPU profiler: %s", rtd_perf_profiler_errmsg(NULL));
	pt_go(&c);
	int r = rtd_perf_profiler_run(p); /* until the child is gone */
	pt_wait(&c);
	if (r)
		FAIL("run: %s", rtd_perf_profiler_errmsg(p));
	struct walk w = {0};
	if (rtd_perf_profiler_each_sample(p, on_kept, &w))
		FAIL("each_sample: %s", rtd_perf_profiler_errmsg(p));
	if (w.waits < 18)
		FAIL("only %zu waits of 6 rounds of three waiting threads", w.waits);

	int err = 0;
	rtd_source *s = rtd_perf_source_waits(p, NULL, &err);
	if (!s)
		FAIL("source: %s", rtd_strerror(err));
	rtd_map open, named;
	rtd_map_init(&open, 0);
	rtd_map_init(&named, 0);
	const struct rtd_record *rec;
	size_t begins = 0, ends = 0, sleeps = 0;
	uint64_t ns = 0;
	int64_t last = INT64_MIN;
	while ((r = rtd_source_next(s, &rec)) == 1) {
		if (rec->mono < last)
			FAIL("time goes back: %" PRId64 " after %" PRId64, rec->mono, last);
		last = rec->mono;
		void *v;
		switch (rec->kind) {
		case RTD_REC_PROCESS:
			if (!rec->name || strncmp(rec->name, "offcpu_waits", 12))
				FAIL("process named '%s'", rec->name);
			break;
		case RTD_REC_THREAD:
			rtd_map_put(&named, rec->tid, (void *)1, NULL);
			break;
		case RTD_REC_SLICE_BEGIN:
			if (!rtd_map_get(&named, rec->tid, NULL))
				FAIL("thread %" PRIu64 " has a slice before its name", rec->tid);
			if (rtd_map_get(&open, rec->tid, NULL))
				FAIL("thread %" PRIu64 ": two waits at once", rec->tid);
			rtd_map_put(&open, rec->tid, (void *)(uintptr_t)(rec->mono + 1), NULL);
			if (strcmp(rec->category, "off-cpu") || rec->nfields != 2 ||
			    strcmp(rec->fields[0].name, "state") || strcmp(rec->fields[1].name, "in"))
				FAIL("slice '%s' of category '%s'", rec->name, rec->category);
			if (!strcmp(rec->fields[0].s, "S"))
				sleeps += !strcmp(rec->name, "sleep");
			begins++;
			break;
		case RTD_REC_SLICE_END:
			if (!rtd_map_get(&open, rec->tid, &v))
				FAIL("thread %" PRIu64 ": an end with no wait open", rec->tid);
			ns += (uint64_t)(rec->mono - ((int64_t)(uintptr_t)v - 1));
			rtd_map_del(&open, rec->tid);
			ends++;
			break;
		default:
			FAIL("a %s record", rtd_record_kind_name(rec->kind));
		}
	}
	if (r)
		FAIL("source: %s", rec->message);
	if (begins != w.waits || ends != w.waits || ns != w.ns)
		FAIL("%zu begins, %zu ends, %" PRIu64 " ns; the profiler kept %zu waits, %" PRIu64
		     " ns", begins, ends, ns, w.waits, w.ns);
	if (open.count)
		FAIL("%zu waits left open", open.count);
	if (!sleeps)
		FAIL("no wait in state S named sleep");
	OK("%zu waits = the profiler's, %.3f s off the CPU, in time order, none overlapping on "
	   "its thread, %zu named sleep", begins, (double)ns / 1e9, sleeps);
	rtd_map_free(&open);
	rtd_map_free(&named);
	rtd_source_free(s);
	rtd_perf_profiler_free(p);
	return 0;
}
