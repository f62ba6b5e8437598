/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_source.h - an EventPipe stream (nettrace/netperf file or
 * bytes in memory) as a record source (rtdiag/source.h).
 *
 * Records, in time order (the decoder's sort mode, one sequence-point
 * window at a time): a PROCESS for the header's pid; a THREAD the first
 * time a thread id appears; for each event one SAMPLE
 * (Microsoft-DotNETCore-SampleProfiler ThreadSample: value 1, unit
 * "count", its stack interned with each frame named from the trace's own
 * method events, leaf first) or one INSTANT (every other event: @name
 * "Provider/Event" as `rtdiag nettrace cat` prints it, @category the
 * provider, its top-level payload fields as named fields, its stack when
 * it has one, @phase RTD_FLOW_BEGIN or RTD_FLOW_END when its opcode is
 * Start or Stop: it opens or closes an activity). So SAMPLE + INSTANT
 * records equal the decoder's events. Each field carries the decoder's
 * value whole: @i, @u and @f as the decoder read them, @s its text.
 *
 * Clock: RTD_CLOCK_QPC at the header's tick frequency, wall time from the
 * header's sync time (millisecond precision: error 1 ms). On Linux the
 * runtime's QPC is CLOCK_MONOTONIC in nanoseconds: a trace whose
 * frequency is 10^9 is taken as CLOCK_MONOTONIC (error 0) unless
 * @not_monotonic; another frequency (Windows: 10 MHz) has no mono anchor.
 */
#ifndef RTDIAG_NETTRACE_SOURCE_H
#define RTDIAG_NETTRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/nettrace_methods.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_nettrace_metadata;
struct rtd_nettrace_stats;

/**
 * struct rtd_nettrace_source_opts - options for the nettrace sources
 * @sz: sizeof(struct rtd_nettrace_source_opts)
 * @no_prepass: do not read the input once ahead for method names: a frame
 *              is then named only by the method events before its sample
 *              (a file's rundown at its end then names nothing)
 * @not_monotonic: never take the trace's clock for CLOCK_MONOTONIC (a
 *                 trace from another machine or OS)
 * @max_queue_bytes: cap on what one read's records hold: their fields,
 *                   and, as much again, their strings (the decoder's,
 *                   lent); 0: 64 MiB; -RTD_E_CAP when a sort window needs
 *                   more
 * @kinds: the record kinds wanted, as bits 1u << RTD_REC_*; 0: all. An
 *         event that would make no wanted record is not read further
 *         (its payload is not walked, its stack not interned): a
 *         consumer of samples alone costs what decoding costs
 * @address_frames: stacks' frames carry their addresses only (@name
 *                  NULL): for a consumer that names frames itself, at
 *                  its end, with rtd_nettrace_source_methods() (the
 *                  rundown of a stream read once comes last)
 * @stream_order: records in the stream's own order, not sorted: the
 *                events as the decoder reads them (each thread's in time
 *                order, the threads' buffers interleaved as written), for
 *                a consumer whose output follows that order (the nettrace
 *                timeline's). Memory: one read's records, no sort window.
 *                @mono still never goes backwards: an earlier event's is
 *                raised to the last one's (rtd_source_stats().clamped);
 *                @ts is the event's own. rtd_source_each() then hands
 *                each event's record from inside the decoder's callback
 *                (no queue, its fields not copied)
 * @top_fields: an event's fields are its payload's top-level scalars
 *              only, as `rtdiag nettrace cat` and the timeline show them
 *              (an EventCounters' nested values are not lifted out), up
 *              to the first that cannot be read (a malformed string, a
 *              nesting too deep: the event is kept, not the stream's error)
 * @want: a filter of event types, asked once per type: an event of a type
 *        it refuses makes no record (not even its thread's), as the
 *        decoder's own @want; NULL: every type
 * @want_ctx: passed to @want
 * @fields: how many of an event type's top-level fields its records
 *          carry, asked once per type: 0 none (the payload is not read),
 *          n the first n (the walk stops there), SIZE_MAX all; NULL: all.
 *          A consumer that reads a few fields of frequent events
 *          (rtd_tl_nettrace_fields()) then costs no decoding of the rest
 * @fields_ctx: passed to @fields
 * @no_methods: with @address_frames, the source learns no method table
 *              (no prepass; rtd_nettrace_source_methods() stays empty):
 *              for a caller that names frames from a table of its own
 * @field_want: of the top-level fields @fields lets records carry, which
 *              they do (@i: the field's index in @m's), asked once per
 *              type and field, with @fields_ctx; NULL: every one. A
 *              consumer that reads a few fields by name
 *              (rtd_nettrace_profiler_field_want()) then costs no making
 *              of the fields between them
 */
struct rtd_nettrace_source_opts {
	size_t sz;
	bool no_prepass;
	bool not_monotonic;
	size_t max_queue_bytes;
	unsigned kinds;
	bool address_frames;
	bool stream_order;
	bool top_fields;
	bool (*want)(void *ctx, const struct rtd_nettrace_metadata *m);
	void *want_ctx;
	size_t (*fields)(void *ctx, const struct rtd_nettrace_metadata *m);
	void *fields_ctx;
	bool no_methods;
	bool (*field_want)(void *ctx, const struct rtd_nettrace_metadata *m, size_t i);
};

/**
 * rtd_nettrace_source_open - a nettrace file as a record source
 * @path: the file
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The file is read in pieces (twice without @no_prepass: method names
 * first); memory is the decoder's (its caps) plus one sort window's
 * records.
 *
 * Returns: the source, or NULL: -errno (the file), -RTD_E_INVAL (@opts),
 * -ENOMEM.
 */
RTD_API rtd_source *rtd_nettrace_source_open(const char *path,
					     const struct rtd_nettrace_source_opts *opts,
					     int *err);

/**
 * rtd_nettrace_source_mem - nettrace bytes in memory as a record source
 * @buf: the stream; borrowed, it must outlive the source
 * @len: its length
 * @opts: options, or NULL
 * @err: as for rtd_nettrace_source_open()
 *
 * Returns: the source, or NULL.
 */
RTD_API rtd_source *rtd_nettrace_source_mem(const void *buf, size_t len,
					    const struct rtd_nettrace_source_opts *opts,
					    int *err);

/* Reads up to @len stream bytes into @buf: their count, 0 at the end of
 * the stream, or a negative error; may block until bytes come. */
typedef int64_t (*rtd_nettrace_read_fn)(void *ctx, void *buf, size_t len);

/**
 * rtd_nettrace_source_stream - a live EventPipe stream as a record source
 * @read: gives the stream's bytes as they come (a session's socket:
 *        rtd_ipc_session_source() of rtdiag/ipc_source.h wraps one)
 * @ctx: passed to @read
 * @opts: options, or NULL; @no_prepass is implied (a stream is read once:
 *        frames are named by the method events before their sample)
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * rtd_source_next() reads when it has no record queued, so it blocks as
 * @read does; records come out a sequence point's window at a time, in
 * time order, as for a file. Memory: the decoder's, one window's records,
 * the method table.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (no @read, bad @opts), -ENOMEM.
 */
RTD_API rtd_source *rtd_nettrace_source_stream(rtd_nettrace_read_fn read, void *ctx,
					       const struct rtd_nettrace_source_opts *opts,
					       int *err);

/**
 * rtd_nettrace_source_live - a live EventPipe stream that may have no
 * bytes now, as a record source that does not block
 * @read: gives the stream's bytes as they come, or -EAGAIN for "no bytes
 *        now" when @fd >= 0 (a session's socket: rtd_ipc_session_source_live()
 *        of rtdiag/ipc_source.h wraps one)
 * @ctx: passed to @read
 * @fd: polls readable when @read has bytes again; < 0: @read blocks, and
 *      the source is rtd_nettrace_source_stream()'s
 * @opts: options, or NULL; @no_prepass is implied
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * When @read says -EAGAIN, rtd_source_next() is RTD_SOURCE_IDLE (its
 * watermark: the last record's time) and rtd_source_fd() is @fd; records
 * come out as rtd_nettrace_source_stream() gives them.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (no @read, bad @opts), -ENOMEM.
 */
RTD_API rtd_source *rtd_nettrace_source_live(rtd_nettrace_read_fn read, void *ctx, int fd,
					     const struct rtd_nettrace_source_opts *opts,
					     int *err);

/**
 * rtd_nettrace_source_methods - the method table a nettrace source names
 * frames with
 * @src: a source of rtd_nettrace_source_open(), _mem() or _stream()
 *
 * With the prepass it holds every method of the input from the start;
 * otherwise the methods of the events read so far (at the source's end:
 * all, the rundown included). Look addresses up with
 * rtd_nettrace_methods_name().
 *
 * Returns: the table, valid as long as @src; NULL when @src is not a
 * nettrace source.
 */
RTD_API rtd_nettrace_methods *rtd_nettrace_source_methods(rtd_source *src);

/**
 * rtd_nettrace_source_stats - a nettrace source's decoder counts
 * @src: a source of rtd_nettrace_source_open(), _mem() or _stream()
 * @out: gets the decoder's counts of the record pass (events read, those
 *       filtered out included; drops; bytes)
 *
 * Returns: 0, or -RTD_E_INVAL when @src is not a nettrace source.
 */
RTD_API int rtd_nettrace_source_stats(rtd_source *src, struct rtd_nettrace_stats *out);

/**
 * rtd_nettrace_source_clr - a nettrace source's records with the CLR's
 * start/stop pairs as slices
 * @in: a nettrace source (borrowed: free it after this one)
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Every record of @in comes out as it was; after the runtime's events
 * (Microsoft-Windows-DotNETRuntime) that open or close something come
 * slices: GC/Start..GC/Stop "GC" and GC/SuspendEEStart..GC/RestartEEStop
 * "EE suspended" (category "gc") on lanes 1 and 2 of the process's track
 * (tid 0), named "GC" and "EE suspended" by THREAD records on first use;
 * Contention/Start..Contention/Stop "contention" on the waiting thread. A
 * stop with nothing open is left as its instant. GC/HeapStats also gives
 * COUNTER records "gen0 size", "gen1 size", "gen2 size", "LOH size" and
 * "POH size" (bytes). Memory: one entry per thread with a wait open.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (no @in), -ENOMEM.
 */
RTD_API rtd_source *rtd_nettrace_source_clr(rtd_source *in, int *err);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_SOURCE_H */
