/* SPDX-License-Identifier: MIT */
/*
 * A deliberately tiny ring (one page per CPU) under a flood of N getppid()
 * calls, read by a consumer that stalls for 30 ms at its first record,
 * loses records; the losses the kernel reports in PERF_RECORD_LOST
 * plus the samples delivered add up to exactly N, and the monitor's
 * per-ring counts agree with the LOST records seen. The run merges the
 * rings with the heap (forced here; the CLI loss test covers the scan).
 */
#include <pthread.h>
#include <time.h>

#include "perf_test.h"
#include "perf/internal.h"

#define N 200000

struct seen {
	uint64_t samples, lost_in_records, lost_records;
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
	if (s->type == 9 && w->samples++ == 0) {
		struct timespec ts = {0, 30 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (s->type == 2) {
		w->lost_in_records += s->rec.lost.lost;
		w->lost_records++;
	}
	return 0;
}

struct waiter {
	struct pt_child *c;
	struct rtd_perf_monitor *m;
};

static void *wait_child(void *arg)
{
	struct waiter *wt = arg;
	/* let run() start reading first: the flood is over in ~0.1 s */
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	pt_go(wt->c);
	pt_wait(wt->c);
	rtd_perf_monitor_stop(wt->m, false);
	return NULL;
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	perf_heap_min_rings = 1;
	char nstr[16];
	snprintf(nstr, sizeof(nstr), "%d", N);
	char *argv[] = {(char *)t, "flood", nstr, NULL};
	struct pt_child c = pt_spawn(argv);
	struct rtd_perf_opts o = {.sz = sizeof(o), .ring_pages = 1};
	o.pids = &c.pid;
	o.npids = 1;
	o.flags = RTD_PERF_INHERIT | RTD_PERF_ENABLE_ON_EXEC;
	struct rtd_perf_monitor *m =
		pt_monitor_tp(&o, "syscalls:sys_enter_getppid");
	struct waiter wt = {&c, m};
	struct seen w = {0};
	struct rtd_perf_stats st;
	pt_run_beside(m, on_rec, &w, wait_child, &wt, &st);
	printf("rounds %llu, wakeups %llu, max latency %.1f ms\n",
	       (unsigned long long)st.rounds, (unsigned long long)st.wakeups,
	       st.max_latency_ns / 1e6);
	uint64_t ring_sum = 0;
	for (unsigned i = 0; i < st.nrings && i < 256; i++)
		ring_sum += st.ring_lost[i];
	printf("%d calls: %llu delivered, %llu lost in %llu LOST records; "
	       "the kernel's lost counter (PERF_FORMAT_LOST): monitor total %llu, "
	       "per-ring sum %llu\n",
	       N, (unsigned long long)w.samples,
	       (unsigned long long)w.lost_in_records,
	       (unsigned long long)w.lost_records, (unsigned long long)st.lost,
	       (unsigned long long)ring_sum);
	/* how many LOST records arrive depends on whether the reader got a CPU
	 * during the flood (none if the ring stayed full to the end): the
	 * kernel's counter is the reference */
	if (!st.lost)
		FAIL("a one-page ring lost nothing under %d events", N);
	if (w.samples + st.lost != N)
		FAIL("delivered + lost = %llu, want %d",
		     (unsigned long long)(w.samples + st.lost), N);
	/* LOST records can trail the counter by the losses after the last
	 * write (the kernel reports those at its next write only) */
	if (st.lost_in_records != w.lost_in_records ||
	    w.lost_in_records > st.lost || ring_sum != st.lost)
		FAIL("the monitor's loss counts disagree with the LOST records");
	OK("delivered + kernel-counted lost = %d exactly; LOST records carry %llu of them",
	   N, (unsigned long long)w.lost_in_records);
	rtd_perf_monitor_free(m);
	return 0;
}
