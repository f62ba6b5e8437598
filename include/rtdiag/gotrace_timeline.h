/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_timeline.h - a Go execution trace drawn as a timeline
 * (the timeline model: rtdiag/timeline.h).
 */
#ifndef RTDIAG_GOTRACE_TIMELINE_H
#define RTDIAG_GOTRACE_TIMELINE_H

#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_gotrace_dec;
struct rtd_gotrace_event;
typedef struct rtd_tl_gotrace rtd_tl_gotrace;

/**
 * rtd_tl_gotrace_new - a timeline adapter for a Go execution trace
 * @tl: the timeline written to
 * @name: the process track's name (the trace file, a program), or NULL
 *
 * Feed it every event of an ordered-mode decoder (struct rtd_gotrace_dec,
 * any trace version; times in nanoseconds). It draws what `go tool
 * trace`'s views show: a track per goroutine with its states as slices
 * ("running", "runnable", "blocked: chan receive", "syscall", ...) and
 * mark assists, user regions and logs; a track per P with the goroutine it
 * runs; a track per M with the P it holds; GC cycles, stop-the-world
 * pauses with their kind, heap size and goal as counters; a track per user
 * task; CPU samples with their stacks on their goroutine; and a flow arrow
 * from each unblocking to the unblocked goroutine's next run.
 * Memory: a record per live goroutine, P, M and open task.
 *
 * Returns: the adapter, or NULL when out of memory.
 */
RTD_API rtd_tl_gotrace *rtd_tl_gotrace_new(rtd_timeline *tl, const char *name);

/**
 * rtd_tl_gotrace_event - draw one event
 * @a: the adapter
 * @d: the decoder the event came from (for stacks and the version)
 * @ev: the event, in Go's order
 *
 * Returns: 0, or a timeline error.
 */
RTD_API int rtd_tl_gotrace_event(rtd_tl_gotrace *a,
				 const struct rtd_gotrace_dec *d,
				 const struct rtd_gotrace_event *ev);

/**
 * rtd_tl_gotrace_free - free the adapter (not the timeline)
 * @a: the adapter; NULL does nothing
 */
RTD_API void rtd_tl_gotrace_free(rtd_tl_gotrace *a);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_TIMELINE_H */
