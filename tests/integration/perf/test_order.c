/* SPDX-License-Identifier: MIT */
/*
 * sched:sched_switch system-wide arrives in time order across all CPUs;
 * and rtd_perf_monitor_stop() from another thread ends the run. With
 * the merge that scans every ring per record (what 2 CPUs use), and with
 * the heap merge forced (what more than 8 CPUs use); each on the run()
 * thread alone and with the reader thread (RTD_PERF_READER_THREAD),
 * whose copies are merged by the same rule.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "perf_test.h"
#include "perf/internal.h"

struct seen {
	uint64_t n, last, backwards;
	uint64_t per_cpu[64];
	int bad_field;
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
	if (s->type != 9 /* SAMPLE */)
		return 0;
	if (s->time < w->last)
		w->backwards++;
	w->last = s->time;
	w->n++;
	if (s->cpu < 64)
		w->per_cpu[s->cpu]++;
	struct rtd_perf_value v;
	if (rtd_perf_sample_field(s, "next_pid", &v) || v.kind != RTD_PERF_FIELD_INT)
		w->bad_field++;
	return 0;
}

static void *stopper(void *arg)
{
	struct timespec ts = {0, 400 * 1000 * 1000};
	nanosleep(&ts, NULL);
	rtd_perf_monitor_stop(arg, true); /* waits for run() to return */
	return NULL;
}

static void check_order(const char *t, const char *merge, unsigned flags)
{
	struct rtd_perf_opts o = {.sz = sizeof(o), .max_latency_ms = 20};
	o.flags = flags;
	struct rtd_perf_monitor *m = pt_monitor_switch(&o);
	int r;
	/* load: two sleepers switching ~1000 times each, on both CPUs */
	char *argv[] = {(char *)t, "work", "1", "800", NULL};
	struct pt_child a = pt_spawn(argv), b = pt_spawn(argv);
	/* pin them to two different CPUs: left alone, a quiet scheduler may
	 * keep both on one and the cross-CPU order would go untested */
	cpu_set_t mine;
	if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_COUNT(&mine) > 1) {
		pid_t kids[2] = {a.pid, b.pid};
		for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++) {
			if (!CPU_ISSET(c, &mine))
				continue;
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			sched_setaffinity(kids[k++], sizeof(one), &one);
		}
	}
	pt_go(&a);
	pt_go(&b);
	pthread_t th;
	pthread_create(&th, NULL, stopper, m);
	struct seen w = {0};
	r = rtd_perf_monitor_run(m, on_rec, &w);
	pthread_join(th, NULL);
	pt_wait(&a);
	pt_wait(&b);
	if (r)
		FAIL("%s: run: %s", merge, rtd_strerror(r));
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(m, &st);
	unsigned ncpu = rtd_perf_monitor_ncpus(m), cpus_seen = 0;
	for (unsigned i = 0; i < 64; i++)
		cpus_seen += w.per_cpu[i] > 0;
	printf("%s: %llu switches, %u of %u CPUs, %llu rounds, lost %llu, late %llu, max latency %.1f ms\n",
	       merge, (unsigned long long)w.n, cpus_seen, ncpu,
	       (unsigned long long)st.rounds, (unsigned long long)st.lost,
	       (unsigned long long)st.late, st.max_latency_ns / 1e6);
	if (w.n < 500)
		FAIL("only %llu switches in 400 ms of load", (unsigned long long)w.n);
	if (ncpu > 1 && cpus_seen < 2)
		FAIL("switches from one CPU only");
	if (w.backwards || st.late)
		FAIL("%s: %llu records out of time order (%llu late)", merge, (unsigned long long)w.backwards, (unsigned long long)st.late);
	if (w.bad_field)
		FAIL("%d samples without a decodable next_pid", w.bad_field);
	OK("%s: time order across %u CPUs", merge, cpus_seen);
	rtd_perf_monitor_free(m);
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	check_order(t, "scan merge", 0);
	check_order(t, "scan merge, reader thread", RTD_PERF_READER_THREAD);
	perf_heap_min_rings = 1;
	check_order(t, "heap merge", 0);
	check_order(t, "heap merge, reader thread", RTD_PERF_READER_THREAD);
	return 0;
}
