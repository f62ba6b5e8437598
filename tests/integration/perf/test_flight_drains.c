/* SPDX-License-Identifier: MIT */
/*
 * test_flight_drains.c - a profiler drained window by window (as a flight
 * ring's two are, 20 times a second each) allocates nothing per drain once
 * what it names is known (issue #31: RSS flat over a 10-minute ring).
 *
 * The old drain calloc'ed two temporaries sized by the symbolizer's
 * locations at every window (each location's frames and a mark per
 * location), freed at its end: 12,256 of each in 11 minutes of a ring,
 * holes of every size left in the runner thread's heap as the locations
 * grew and were trimmed.
 *
 * A forked child spins in one small function (a few addresses: after the
 * first windows no location is new). On the real kernel, user space only,
 * the profiler is run and drained on this thread, a helper thread
 * stopping each run after 20 ms (the live source's window), until 40
 * windows after 10 warm-up ones held samples of the child (bounded by 10 s
 * of its CPU: samples follow it, not the wall clock). malloc, calloc and
 * realloc are wrapped at link time (this test only) to count the calls
 * made on this thread inside rtd_perf_profiler_drain():
 *  - every window's samples are named in the child's function;
 *  - the measured drains made fewer than one allocation per 4 drains
 *    (the old drain made two per drain and a few more: it fails with
 *    "85 allocations in 40 drains").
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>

#define PT_WANT_WINDOWS
#include "perf_test.h"

#define WARM_DRAINS 10u
#define WANT_DRAINS 40u
#define WINDOW_NS 20000000L
#define MAX_CHILD_CPU 10.0

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t sz);
void *__wrap_realloc(void *p, size_t n);

/* set on this thread around each drain */
static _Thread_local bool counting;
static unsigned long allocs;

void *__wrap_malloc(size_t n)
{
	allocs += counting;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	allocs += counting;
	return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs += counting;
	return __real_realloc(p, n);
}

__attribute__((noinline)) static void spin_here(void)
{
	volatile uint64_t x = 0;
	for (;;)
		x++;
}

struct stopper {
	struct rtd_perf_monitor *m;
	atomic_int done;
};

/* Ends a run every 20 ms (a stop between two runs ends the next one at
 * once: the eventfd keeps it). */
static void *stop_runs(void *arg)
{
	struct stopper *st = arg;
	struct timespec w = {0, WINDOW_NS};
	while (!atomic_load(&st->done)) {
		nanosleep(&w, NULL);
		rtd_perf_monitor_stop(st->m, false);
	}
	return NULL;
}

struct window {
	unsigned samples, named;
};

static int on_sample(const struct rtd_perf_profiler_sample *s, void *ctx)
{
	struct window *w = ctx;
	w->samples++;
	if (s->nframes && s->frames[0].name && strstr(s->frames[0].name, "spin_here"))
		w->named++;
	return 0;
}

int main(void)
{
	pt_require();
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		spin_here();
		_exit(0);
	}
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 999, .exclude_kernel = true};
	struct rtd_perf_profiler *p = pt_window_profiler(child, 0, &so);
	struct stopper st = {.m = rtd_perf_profiler_monitor(p)};
	pthread_t th;
	if (pthread_create(&th, NULL, stop_runs, &st)) {
		kill(child, SIGKILL);
		FAIL("pthread_create");
	}
	unsigned full = 0, drains = 0;
	unsigned long samples = 0, named = 0;
	double child_cpu = 0;
	while (full < WARM_DRAINS + WANT_DRAINS && child_cpu < MAX_CHILD_CPU) {
		int r = rtd_perf_profiler_run(p);
		if (r)
			FAIL("run: %s", rtd_perf_profiler_errmsg(p));
		struct window w = {0};
		bool measured = full >= WARM_DRAINS;
		counting = measured;
		r = rtd_perf_profiler_drain(p, on_sample, &w);
		counting = false;
		if (r)
			FAIL("drain: %s", rtd_perf_profiler_errmsg(p));
		drains += measured;
		if (w.samples) {
			full++;
			if (measured) {
				samples += w.samples;
				named += w.named;
			}
		}
		child_cpu = pt_cpu_seconds(child);
	}
	atomic_store(&st.done, 1);
	pthread_join(th, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("# %u drains measured (%u windows with samples, %lu samples, %lu named "
	       "spin_here), %lu allocations in them; child %.1f s of CPU\n",
	       drains, full, samples, named, allocs, child_cpu);
	if (full < WARM_DRAINS + WANT_DRAINS)
		FAIL("only %u windows with samples in %.1f s of the child's CPU", full, child_cpu);
	if (named * 2 < samples)
		FAIL("only %lu of %lu samples named spin_here", named, samples);
	if (allocs * 4 >= drains)
		FAIL("%lu allocations in %u drains", allocs, drains);
	OK("%lu allocations in %u drains of a known function's samples", allocs, drains);
	rtd_perf_profiler_free(p);
	return 0;
}
