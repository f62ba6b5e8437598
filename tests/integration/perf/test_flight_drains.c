/* SPDX-License-Identifier: MIT */
/*
 * test_flight_drains.c - a profiler drained window by window (as a flight
 * ring's two are, 20 times a second each) allocates nothing per drain once
 * what it names is known, and nothing large while new locations keep
 * coming (issue #31: RSS flat over a 10-minute ring).
 *
 * The old drain calloc'ed two temporaries sized by the symbolizer's
 * locations at every window (each location's frames and a mark per
 * location), and at each window that met a new location a 400 KB block of
 * resolved frames and a block of named frames, all freed at its end
 * (12,256 of each in 11 minutes of a ring): blocks of every size left in
 * the runner thread's heap as the locations grew and were trimmed.
 *
 * On the real kernel, user space only, a profiler of a forked child is
 * run and drained on this thread, a helper thread stopping each run after
 * 20 ms (the live source's window), until 40 windows after 10 warm-up ones
 * held samples of the child (bounded by 10 s of its CPU: samples follow
 * it, not the wall clock). malloc, calloc and realloc are wrapped at link
 * time (this test only) to count the calls made on this thread inside
 * rtd_perf_profiler_drain(), and those of 64 KiB or more:
 *  - a child spinning in one small function (a few addresses: after the
 *    first windows no location is new): every window's samples are named
 *    in it, and the measured drains made fewer than one allocation per 4
 *    drains (the old drain made two per drain and a few more: it fails
 *    with "85 allocations in 40 drains");
 *  - a child in a 64 KiB nop sled (nearly every sample a new location,
 *    300 windows after the warm-up, the locations trimmed on the way):
 *    at most one allocation of 64 KiB or more per trim (the symbolizer's
 *    names, made again after it) and 4 more (buffers grown by doubling)
 *    in the measured drains (the old drain made one or two per drain).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>

#define PT_WANT_WINDOWS
#define PT_WANT_SLED
#include "perf_test.h"

#define WARM_DRAINS 10u
#define BIG_ALLOC (64u << 10)
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
static unsigned long allocs, big_allocs;

static void count(size_t n)
{
	if (counting) {
		allocs++;
		big_allocs += n >= BIG_ALLOC;
	}
}

void *__wrap_malloc(size_t n)
{
	count(n);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	count(n * sz);
	return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	count(n);
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
 * once: the monitor keeps it). */
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

struct result {
	unsigned drains; /* measured */
	unsigned long samples, named, allocs, big;
	uint64_t trims;
};

/* Runs and drains a profiler of @child until @want windows after the
 * warm-up held samples (the child killed and reaped after). */
static struct result drain_windows(pid_t child, unsigned want)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 999, .exclude_kernel = true};
	struct rtd_perf_profiler *p = pt_window_profiler(child, 0, &so);
	struct stopper st = {.m = rtd_perf_profiler_monitor(p)};
	pthread_t th;
	if (pthread_create(&th, NULL, stop_runs, &st)) {
		kill(child, SIGKILL);
		FAIL("pthread_create");
	}
	struct result res = {0};
	unsigned full = 0;
	double child_cpu = 0;
	allocs = big_allocs = 0;
	while (full < WARM_DRAINS + want && child_cpu < MAX_CHILD_CPU) {
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
		res.drains += measured;
		if (w.samples) {
			full++;
			if (measured) {
				res.samples += w.samples;
				res.named += w.named;
			}
		}
		child_cpu = pt_cpu_seconds(child);
	}
	atomic_store(&st.done, 1);
	pthread_join(th, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	struct rtd_perf_profiler_stats ps = {.sz = sizeof(ps)};
	rtd_perf_profiler_stats(p, &ps);
	res.trims = ps.location_trims;
	res.allocs = allocs;
	res.big = big_allocs;
	rtd_perf_profiler_free(p);
	if (full < WARM_DRAINS + want)
		FAIL("only %u windows with samples in %.1f s of the child's CPU", full, child_cpu);
	return res;
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
	struct result a = drain_windows(child, 40);
	printf("# one function: %u drains measured, %lu samples (%lu named spin_here), "
	       "%lu allocations in them\n",
	       a.drains, a.samples, a.named, a.allocs);
	if (a.named * 2 < a.samples)
		FAIL("only %lu of %lu samples named spin_here", a.named, a.samples);
	if (a.allocs * 4 >= a.drains)
		FAIL("%lu allocations in %u drains", a.allocs, a.drains);
	OK("%lu allocations in %u drains of a known function's samples", a.allocs, a.drains);

	struct result b = drain_windows(pt_fork_sled(), 300);
	printf("# nop sled: %u drains measured, %lu samples, %" PRIu64 " location trims, "
	       "%lu allocations in them, %lu of 64 KiB or more\n",
	       b.drains, b.samples, b.trims, b.allocs, b.big);
	if (b.big > b.trims + 4)
		FAIL("%lu allocations of 64 KiB or more in %u drains of new locations", b.big,
		     b.drains);
	OK("%lu allocations of 64 KiB or more in %u drains of new locations (%" PRIu64
	   " trims)",
	   b.big, b.drains, b.trims);
	return 0;
}
