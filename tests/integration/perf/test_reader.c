/* SPDX-License-Identifier: MIT */
/*
 * The reader thread (RTD_PERF_READER_THREAD) copies records out of the
 * rings while the callback is stalled, and stops at its cap so that the
 * kernel's loss count stays exact: a one-page ring and the smallest copies
 * (copy_cap 1: 128 KiB a CPU) under N getppid() calls, with a callback
 * that stalls at its first record until the flood is over. The reader
 * fills its copy meanwhile (copy_full > 0: the single-thread run() never
 * reads while its callback runs), what is delivered plus what the kernel
 * counted lost is exactly N, and delivery stays in time order.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "perf_test.h"
#include "perf/internal.h"

#define N 1000000

struct seen {
	uint64_t samples, last, backwards;
	atomic_int flood_over;
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
	if (s->time) {
		if (s->time < w->last)
			w->backwards++;
		else
			w->last = s->time;
	}
	if (s->type != 9 /* SAMPLE */ || w->samples++)
		return 0;
	/* the first record: stall until the flood is over (a condition,
	 * polled; the bound is for a broken child only) */
	struct timespec ts = {0, 1000 * 1000};
	for (int i = 0; i < 600000 && !atomic_load(&w->flood_over); i++)
		nanosleep(&ts, NULL);
	if (!atomic_load(&w->flood_over))
		FAIL("the flood did not end in 10 minutes");
	return 0;
}

struct waiter {
	struct pt_child *c;
	struct rtd_perf_monitor *m;
	struct seen *w;
};

static void *wait_child(void *arg)
{
	struct waiter *wt = arg;
	pt_go(wt->c);
	pt_wait(wt->c);
	atomic_store(&wt->w->flood_over, 1);
	rtd_perf_monitor_stop(wt->m, false);
	return NULL;
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	char nstr[16];
	snprintf(nstr, sizeof(nstr), "%d", N);
	/* 100 ms after exec: the events start at exec, run() should be
	 * reading by the flood (it is correct either way) */
	char *argv[] = {(char *)t, "flood", nstr, "100", NULL};
	struct pt_child c = pt_spawn(argv);
	struct rtd_perf_opts o = {.sz = sizeof(o), .ring_pages = 1,
				  .copy_cap = 1};
	o.pids = &c.pid;
	o.npids = 1;
	o.flags = RTD_PERF_INHERIT | RTD_PERF_ENABLE_ON_EXEC |
		  RTD_PERF_READER_THREAD;
	struct rtd_perf_monitor *m =
		pt_monitor_tp(&o, "syscalls:sys_enter_getppid");
	struct seen w = {0};
	struct waiter wt = {&c, m, &w};
	struct rtd_perf_stats st;
	pt_run_beside(m, on_rec, &w, wait_child, &wt, &st);
	printf("%d calls: %llu delivered, %llu lost (%llu in LOST records); "
	       "copies of %llu KiB a CPU, at most %llu KiB waited, full in "
	       "%llu passes; %llu rounds, late %llu\n",
	       N, (unsigned long long)w.samples, (unsigned long long)st.lost,
	       (unsigned long long)st.lost_in_records,
	       (unsigned long long)(st.copy_bytes >> 10),
	       (unsigned long long)(st.copy_max >> 10),
	       (unsigned long long)st.copy_full, (unsigned long long)st.rounds,
	       (unsigned long long)st.late);
	if (!st.copy_bytes)
		FAIL("no reader thread copies");
	if (!st.copy_full)
		FAIL("the reader never filled its copy while the callback stalled "
		     "(%llu KiB waited at most)",
		     (unsigned long long)(st.copy_max >> 10));
	if (st.copy_max > st.copy_bytes)
		FAIL("%llu bytes waited in a %llu-byte copy",
		     (unsigned long long)st.copy_max,
		     (unsigned long long)st.copy_bytes);
	if (!st.lost)
		FAIL("%d events fit in a one-page ring and 128 KiB copies", N);
	if (w.samples + st.lost != N)
		FAIL("delivered + lost = %llu, want %d",
		     (unsigned long long)(w.samples + st.lost), N);
	if (w.backwards || st.late)
		FAIL("%llu records out of time order (%llu late)",
		     (unsigned long long)w.backwards, (unsigned long long)st.late);
	OK("the reader filled its copy during the stall; delivered + lost = %d "
	   "exactly, in time order", N);
	rtd_perf_monitor_free(m);
	return 0;
}
