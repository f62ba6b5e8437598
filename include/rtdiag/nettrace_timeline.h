/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_timeline.h - an EventPipe stream drawn as a timeline
 * (the timeline model: rtdiag/timeline.h).
 */
#ifndef RTDIAG_NETTRACE_TIMELINE_H
#define RTDIAG_NETTRACE_TIMELINE_H

#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_nettrace;
struct rtd_nettrace_event;
struct rtd_nettrace_info;
typedef struct rtd_tl_nettrace rtd_tl_nettrace;

/**
 * rtd_tl_nettrace_new - a timeline adapter for an EventPipe stream
 * @tl: the timeline written to
 * @name: the process track's name, or NULL
 *
 * Give it the decoder's header (rtd_tl_nettrace_info(), from the
 * on_info callback) and every event (rtd_tl_nettrace_event(), from
 * on_event). It draws a track per thread; the runtime's start/stop pairs
 * as slices: GC on a "GC" track, EE suspension and restart on a "GC
 * suspension" track, JIT ("JIT Namespace.Method"), lock contention and
 * every EventSource Start/Stop pair (request activities, thread-pool
 * workers) on their thread; GC heap size (GC/HeapStats) and bytes
 * allocated (GC/AllocationTick) as counters; SampleProfiler samples with
 * their stacks (addresses, or names with rtd_tl_nettrace_set_methods());
 * every other event as an instant with its top-level fields as arguments. Times are the stream's ticks in ns.
 *
 * Returns: the adapter, or NULL when out of memory.
 */
RTD_API rtd_tl_nettrace *rtd_tl_nettrace_new(rtd_timeline *tl,
					     const char *name);

struct rtd_nettrace_methods;

/**
 * rtd_tl_nettrace_set_methods - name sampled frames from a method table
 * @a: the adapter
 * @m: a table of the stream's methods (rtdiag/nettrace.h), or NULL for
 *     addresses only; the caller keeps it alive and may go on teaching it
 *     while events come (rtd_nettrace_methods_event())
 *
 * A SampleProfiler stack's frames are then named "module!Namespace.Method"
 * where a method the table knows covers the address; the others keep
 * their addresses. The rundown that names methods jitted before the
 * session comes at the stream's end: a file read twice (the table taught
 * by a first pass) names them all.
 */
RTD_API void rtd_tl_nettrace_set_methods(rtd_tl_nettrace *a,
					 struct rtd_nettrace_methods *m);

/**
 * rtd_tl_nettrace_info - the stream's header: clock and process id
 * @a: the adapter
 * @info: the header
 *
 * Returns: 0, or a timeline error.
 */
RTD_API int rtd_tl_nettrace_info(rtd_tl_nettrace *a,
				 const struct rtd_nettrace_info *info);

/**
 * rtd_tl_nettrace_event - draw one event
 * @a: the adapter
 * @dec: the decoder that delivered it (to read its fields)
 * @ev: the event
 *
 * Returns: 0, or a timeline error.
 */
RTD_API int rtd_tl_nettrace_event(rtd_tl_nettrace *a, struct rtd_nettrace *dec,
				  const struct rtd_nettrace_event *ev);

/**
 * rtd_tl_nettrace_unmatched - stops that had no open start (dropped)
 * @a: the adapter
 *
 * Returns: their count.
 */
RTD_API uint64_t rtd_tl_nettrace_unmatched(const rtd_tl_nettrace *a);

/**
 * rtd_tl_nettrace_free - free the adapter (not the timeline)
 * @a: the adapter; NULL does nothing
 */
RTD_API void rtd_tl_nettrace_free(rtd_tl_nettrace *a);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_TIMELINE_H */
