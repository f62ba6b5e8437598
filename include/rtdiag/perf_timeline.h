/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_timeline.h - perf_event records drawn as a timeline
 * (the timeline model: rtdiag/timeline.h).
 */
#ifndef RTDIAG_PERF_TIMELINE_H
#define RTDIAG_PERF_TIMELINE_H

#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_sample;
typedef struct rtd_tl_perf rtd_tl_perf;

/**
 * rtd_tl_perf_new - a timeline adapter for perf_event records
 * @tl: the timeline written to
 * @name: the name of the group of CPU tracks, or NULL ("CPUs")
 *
 * Give it every record of a monitor's run loop (rtd_tl_perf_record()).
 * It draws a track per CPU and per thread: sched:sched_switch as
 * "running" slices on both (on the CPU named by the thread, "comm (tid)");
 * samples with callchains as CPU samples on their thread; other
 * tracepoints and probes as instants with their fields; COMM names
 * threads, EXIT closes their tracks, LOST shows on its CPU.
 * Times are the records' perf clock in nanoseconds.
 *
 * Returns: the adapter, or NULL when out of memory.
 */
RTD_API rtd_tl_perf *rtd_tl_perf_new(rtd_timeline *tl, const char *name);

/**
 * rtd_tl_perf_record - draw one record
 * @a: the adapter
 * @s: the record, as the monitor's run loop gives it
 *
 * Returns: 0, or a timeline error.
 */
RTD_API int rtd_tl_perf_record(rtd_tl_perf *a, const struct rtd_perf_sample *s);

struct rtd_perf_profiler;

/**
 * rtd_tl_perf_profiler - a CPU profile's samples as a timeline
 * @tl: the timeline written to
 * @p: a perf profiler made with RTD_PERF_PROF_KEEP_SAMPLES, after its run
 * @name: the name of the recording's track, or NULL ("perf record")
 *
 * Draws the recording's span as a slice "recording" (samples and lost
 * as arguments; from the run's start or the first sample, whichever is
 * earlier, to its end) on a track of its own; a track per process and,
 * under it, per sampled thread (named by their comm); and each sample at
 * its time on its thread with its named stack (Perfetto: interned
 * callstacks, shown as the thread's CPU samples and their flame chart;
 * Chrome JSON: an instant with the frames). An off-CPU profiler's
 * (RTD_PERF_PROF_OFF_CPU) waits are slices on their threads from the
 * switch-out, as long as the wait, named by the state ("sleep", "disk",
 * "preempted", "other"; category "off-cpu"; arguments "state" and "in",
 * the first frame outside the kernel), each with its stack as a sample
 * at its start. Times are CLOCK_MONOTONIC ns.
 * Memory: a record per sampled thread and process; the samples come from
 * the profiler's temporary file one at a time.
 *
 * Returns: 0, or a timeline or profiler error.
 */
RTD_API int rtd_tl_perf_profiler(rtd_timeline *tl, struct rtd_perf_profiler *p,
				 const char *name);

/**
 * rtd_tl_perf_free - free the adapter (not the timeline)
 * @a: the adapter; NULL does nothing
 */
RTD_API void rtd_tl_perf_free(rtd_tl_perf *a);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_TIMELINE_H */
