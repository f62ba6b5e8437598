/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_timeline.h - a Go execution trace drawn as a timeline
 * (the timeline model: rtdiag/timeline.h).
 */
#ifndef RTDIAG_GOTRACE_TIMELINE_H
#define RTDIAG_GOTRACE_TIMELINE_H

#include "rtdiag/source.h"
#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_tl_gotrace rtd_tl_gotrace;

/**
 * rtd_tl_gotrace_new - a timeline adapter for a Go execution trace
 * @tl: the timeline written to
 * @name: the process track's name (the trace file, a program), or NULL
 *
 * Feed it every record of a Go source made with
 * rtd_gotrace_source_opts.go_events (Go's own events, any trace version;
 * rtdiag/gotrace_source.h). It draws what `go tool
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
 * rtd_tl_gotrace_record - draw one record
 * @a: the adapter
 * @rec: the source's next record, in its order: the PROCESS record (the
 *       trace's Go version) and Go's events (INSTANTs of category "go");
 *       others are ignored
 *
 * Where an event's arguments are among its fields is found once per
 * (name, fields array): records whose fields array is at one address
 * must name the same fields in the same order, as the Go source's
 * (rtd_gotrace_source_opts.go_events) do; a record's non-zero @shape
 * (which the Go source gives) finds that place in a table by shape.
 *
 * Returns: 0, a timeline error, or an error record's code.
 */
RTD_API int rtd_tl_gotrace_record(rtd_tl_gotrace *a, const struct rtd_record *rec);

/**
 * rtd_tl_gotrace_fields - the fields the timeline reads of a Go event
 * @ctx: unused (the shape of rtd_gotrace_source_opts.field_want)
 * @event: the event's name ("GoCreate")
 * @field: one of its fields' names
 *
 * Give it to a Go source as its @field_want: the records then carry
 * only the arguments the timeline reads (a stack argument only for the
 * GoCreate events), and the timeline drawn is the same.
 *
 * Returns: whether rtd_tl_gotrace_record() reads @field of @event.
 */
RTD_API bool rtd_tl_gotrace_fields(void *ctx, const char *event, const char *field);

/**
 * rtd_tl_gotrace_take - rtd_tl_gotrace_record() as rtd_source_each()'s callback
 * @a: the adapter (an rtd_tl_gotrace *)
 * @rec: the source's next record, as rtd_tl_gotrace_record() takes it
 *
 * Returns: what rtd_tl_gotrace_record() returns: 0 (go on) or an error,
 * which stops rtd_source_each() and is what it returns.
 */
RTD_API int rtd_tl_gotrace_take(void *a, const struct rtd_record *rec);

/**
 * rtd_tl_gotrace_free - free the adapter (not the timeline)
 * @a: the adapter; NULL does nothing
 */
RTD_API void rtd_tl_gotrace_free(rtd_tl_gotrace *a);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_TIMELINE_H */
