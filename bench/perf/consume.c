/* SPDX-License-Identifier: MIT */
/*
 * consume - the rtdiag side of the perf bench: attach to PID, read one
 * tracepoint through librtdiag (every record decoded, every tracepoint
 * field decoded), count, and exit when the process is gone.
 * Usage: consume PID PAGES SUBSYS:EVENT
 * RTD_BENCH_HEAP=1 forces the heap merge across rings (used from 9 rings
 * on), to compare it with the scan on a small machine.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rtdiag/perf.h"

extern unsigned perf_heap_min_rings; /* src/perf/internal.h */

static volatile uint64_t sink;

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	uint64_t *n = ctx;
	if (s->type != 9 || !s->event)
		return 0;
	(*n)++;
	unsigned nf = rtd_perf_event_nfields(s->event);
	for (unsigned i = 0; i < nf; i++) {
		struct rtd_perf_value v;
		if (!rtd_perf_sample_field_at(s, i, &v))
			sink += v.u + v.len;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: consume PID PAGES SUBSYS:EVENT\n");
		return 2;
	}
	if (getenv("RTD_BENCH_HEAP"))
		perf_heap_min_rings = 1;
	pid_t pid = (pid_t)atoi(argv[1]);
	struct rtd_perf_opts o = {.sz = sizeof(o), .pids = &pid, .npids = 1,
				  .ring_pages = (unsigned)atoi(argv[2]),
				  .flags = RTD_PERF_INHERIT};
	struct rtd_perf_monitor *m;
	int r = rtd_perf_monitor_new(&o, &m);
	if (r || (r = rtd_perf_monitor_add_tracepoint(m, argv[3], NULL, NULL))) {
		fprintf(stderr, "consume: %s\n", m ? rtd_perf_monitor_errmsg(m) : rtd_strerror(r));
		return 1;
	}
	uint64_t n = 0;
	r = rtd_perf_monitor_run(m, on_rec, &n);
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(m, &st);
	printf("samples %llu lost %llu\n", (unsigned long long)n,
	       (unsigned long long)st.lost);
	rtd_perf_monitor_free(m);
	return r ? 1 : 0;
}
