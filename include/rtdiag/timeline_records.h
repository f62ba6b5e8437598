/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/timeline_records.h - the timeline as a consumer of the record
 * stream (rtdiag/source.h): whatever the sources, one merged stream of
 * records becomes one timeline (rtdiag/timeline.h) on one clock.
 *
 * Tracks are keyed by the records' OS ids: a process track per pid, a
 * thread track per (pid, tid) under it (tid 0 is the process's own
 * track), and a named sub-track per (pid, tid, lane) for a lane other
 * than 0. A track is added when its first event comes, named with the
 * best name known then, and renamed when a better one comes later: a name
 * from a runtime source (its index set in @runtime_sources) wins over any
 * other (the kernel's comm); among equals the latest wins. A THREAD
 * record with a @lane names that lane's track ("lane N" otherwise), when
 * it comes before the lane's first event.
 *
 * By kind: SLICE_BEGIN/_END open and close slices on their track (an end
 * with nothing open there is counted, not written); SLICE (given at its
 * end) a whole slice from @mono - @dur, written as one event, out of
 * begin order (both formats' readers sort); INSTANT an instant
 * with its fields as arguments (at most RTD_TIMELINE_MAX_ARGS, the rest
 * counted as dropped); SAMPLE a CPU sample with its stack, leaf first;
 * COUNTER a value on a counter track per (pid, name, unit) under the
 * process; FLOW is counted (the timeline draws flows between events, a
 * record flow has no event of its own yet); ERROR ends the stream with
 * its code. Times are the records' @mono: CLOCK_MONOTONIC nanoseconds.
 *
 * Memory: one entry per track and per counter series seen.
 */
#ifndef RTDIAG_TIMELINE_RECORDS_H
#define RTDIAG_TIMELINE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/source.h"
#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_timeline_records rtd_timeline_records;

/* Caps. */
#define RTD_TIMELINE_RECORDS_MAX_COUNTERS (1u << 16) /* counter series */

/**
 * struct rtd_timeline_records_opts - options for rtd_timeline_records_new()
 * @sz: sizeof(struct rtd_timeline_records_opts)
 * @runtime_sources: bit i set: names of source i (struct rtd_record
 *                   @source, its index in a merge, below 64) are a
 *                   runtime's and win over other sources' names
 */
struct rtd_timeline_records_opts {
	size_t sz;
	uint64_t runtime_sources;
};

/**
 * rtd_timeline_records_new - a consumer of records writing to a timeline
 * @tl: the timeline (borrowed: it must outlive the consumer; finish it
 *      after the last record)
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Returns: the consumer, or NULL: -RTD_E_INVAL (no @tl, bad @opts),
 * -ENOMEM.
 */
RTD_API rtd_timeline_records *rtd_timeline_records_new(rtd_timeline *tl,
						       const struct rtd_timeline_records_opts *opts,
						       int *err);

/**
 * rtd_timeline_records_add - one record onto the timeline
 * @c: the consumer
 * @rec: the record (borrowed for the call); records come in order of
 *       @mono, as rtd_source_next() and rtd_source_merge() give them
 *
 * Returns: 0; an ERROR record's code; or the timeline's error
 * (-RTD_E_CAP, -ENOMEM, -EIO...).
 */
RTD_API int rtd_timeline_records_add(rtd_timeline_records *c, const struct rtd_record *rec);

/**
 * rtd_timeline_records_pull - every record of a source onto the timeline
 * @c: the consumer
 * @src: the source, pulled to its end
 *
 * Returns: 0 at the source's end, the source's error, or the timeline's.
 */
RTD_API int rtd_timeline_records_pull(rtd_timeline_records *c, rtd_source *src);

/**
 * struct rtd_timeline_records_stats - what a consumer wrote and skipped
 * @processes: process tracks added
 * @threads: thread tracks added
 * @lanes: lane tracks added
 * @counters: counter series
 * @renamed: tracks renamed after their first event
 * @slices: slices begun
 * @unmatched_ends: slice ends with no slice open on their track
 * @instants: instants written
 * @samples: samples written
 * @values: counter values written
 * @flows: flow records (not drawn)
 * @dropped_fields: instant fields past RTD_TIMELINE_MAX_ARGS
 */
struct rtd_timeline_records_stats {
	uint64_t processes, threads, lanes, counters, renamed;
	uint64_t slices, unmatched_ends, instants, samples, values, flows;
	uint64_t dropped_fields;
};

/**
 * rtd_timeline_records_stats - counts so far
 * @c: the consumer
 * @out: filled in
 */
RTD_API void rtd_timeline_records_stats(const rtd_timeline_records *c,
					struct rtd_timeline_records_stats *out);

/**
 * rtd_timeline_records_free - free a consumer (the timeline stays)
 * @c: the consumer; NULL does nothing
 */
RTD_API void rtd_timeline_records_free(rtd_timeline_records *c);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_TIMELINE_RECORDS_H */
