/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_timeline.h - an EventPipe stream drawn as a timeline
 * (the timeline model: rtdiag/timeline.h).
 */
#ifndef RTDIAG_NETTRACE_TIMELINE_H
#define RTDIAG_NETTRACE_TIMELINE_H

#include "rtdiag/source.h"
#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_nettrace;
struct rtd_nettrace_event;
struct rtd_nettrace_info;
struct rtd_nettrace_metadata;
struct rtd_clock;
struct rtd_record;
struct rtd_source;
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
 * rtd_tl_nettrace_clock - the stream's clock, for records
 * @a: the adapter
 * @clock: a nettrace source's clock (rtd_source_clock()): its frequency
 *         converts the records' @ts to ns, as _info()'s header does
 */
RTD_API void rtd_tl_nettrace_clock(rtd_tl_nettrace *a, const struct rtd_clock *clock);

/**
 * rtd_tl_nettrace_record - draw one record of a nettrace source
 * @a: the adapter
 * @rec: a record of rtd_nettrace_source_open(), _mem() or _stream()
 *       (rtdiag/nettrace_source.h), opened with @top_fields (the instants'
 *       arguments as rtd_tl_nettrace_event() shows them) and, for the
 *       same output as the events', @stream_order
 *
 * The same drawing as rtd_tl_nettrace_event(), by the same handlers: the
 * PROCESS record is the header's pid, SAMPLE and INSTANT records are the
 * events (their @name "Provider/Event", @category the provider, @phase
 * the Start/Stop opcode, @fields by name); THREAD records are not needed
 * (a thread's track is made by its first event). Times are @ts at the
 * frequency rtd_tl_nettrace_clock() gave. A sampled frame keeps the name
 * its record gives; the method table of rtd_tl_nettrace_set_methods(), if
 * any, names it anew when it covers the address. For the events' names:
 * a file with @address_frames and the source's table
 * (rtd_nettrace_source_methods(), every method known ahead); a stream
 * read once without @address_frames and no table (each frame named by
 * the source with the methods known when its event came). The output is in the records'
 * order: a source's default time order draws the same timeline as the
 * stream order, in another order of bytes.
 *
 * Returns: 0, or a timeline error.
 */
RTD_API int rtd_tl_nettrace_record(rtd_tl_nettrace *a, const struct rtd_record *rec);

/* The record kinds rtd_tl_nettrace_record() draws (a nettrace source's
 * @kinds: its THREAD records are not needed) */
#define RTD_TL_NETTRACE_KINDS \
	((1u << RTD_REC_PROCESS) | (1u << RTD_REC_SAMPLE) | (1u << RTD_REC_INSTANT))

/**
 * rtd_tl_nettrace_fields - the fields the timeline reads of an event type
 * @ctx: unused (the shape of rtd_nettrace_source_opts.fields)
 * @m: the event type
 *
 * Give it to a nettrace source as its @fields: a GC/AllocationTick's
 * records then carry its fields up to AllocationAmount64, a sample's or a
 * slice's none, an instant's all; the timeline drawn is the same.
 *
 * Returns: the count of leading top-level fields read, or SIZE_MAX.
 */
RTD_API size_t rtd_tl_nettrace_fields(void *ctx, const struct rtd_nettrace_metadata *m);

/**
 * rtd_tl_nettrace_pull - draw every record of a nettrace source
 * @a: the adapter
 * @src: the source (as for rtd_tl_nettrace_record()), read to its end
 *
 * Takes the source's clock at its first record. A source whose header came but no
 * event still draws the process's tracks, as _info() does.
 *
 * Returns: 0 at the source's end, the source's error (the records before
 * it are drawn: rtd_source_next() gives its error record again), or a
 * timeline error.
 */
RTD_API int rtd_tl_nettrace_pull(rtd_tl_nettrace *a, struct rtd_source *src);

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
