/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_pipe.h - a Go trace decoder on a thread of its own: a
 * pipe that gives its events out, and a run that feeds them to a
 * consumer.
 */
#ifndef RTDIAG_GOTRACE_PIPE_H
#define RTDIAG_GOTRACE_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/gotrace_decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_gotrace_pipe rtd_gotrace_pipe;

/**
 * typedef rtd_gotrace_next_fn - where a pipe's events come from
 * @ctx: the pointer given to rtd_gotrace_pipe_new()
 * @ev: gets the next event
 *
 * Called on the pipe's thread only, until it returns <= 0 or the pipe is
 * freed. Typically it feeds a decoder from a file and calls
 * rtd_gotrace_dec_next().
 *
 * Returns: 1 with an event, 0 at the end, or a negative error.
 */
typedef int (*rtd_gotrace_next_fn)(void *ctx, struct rtd_gotrace_event *ev);

/**
 * rtd_gotrace_pipe_new - take events from @next on a thread of its own
 * @next: gives the events
 * @ctx: passed to @next
 *
 * The pipe's thread calls @next ahead of the caller and hands the events
 * over in chunks (16 KiB, 16 in flight), so decoding and whatever the
 * caller does with the events (formatting them) run on two cores. What an
 * event borrows is copied (strings, frames, trailing data), except its
 * names (name, argnames, sargnames), which must stay valid until the pipe
 * is freed: true of a decoder's events in ordered mode for the old format
 * (Go 1.5-1.21), whose tables are complete before the first event comes
 * out; not of the new format, whose tables change per generation. The
 * wire arguments (raw, nraw) are not passed on.
 *
 * Returns: the pipe (its thread started), or NULL without memory or thread.
 */
RTD_API rtd_gotrace_pipe *rtd_gotrace_pipe_new(rtd_gotrace_next_fn next, void *ctx);

/**
 * rtd_gotrace_pipe_next - the next event
 * @p: the pipe
 * @ev: gets the event, valid until the next call on @p
 *
 * Returns: 1 with an event; once @next has returned 0 or an error, that
 * answer (after the events before it), from then on. The source behind
 * @next is the caller's again then (to read its error message).
 */
RTD_API int rtd_gotrace_pipe_next(rtd_gotrace_pipe *p, const struct rtd_gotrace_event **ev);

/**
 * rtd_gotrace_pipe_free - stop the pipe's thread and free the pipe
 * @p: the pipe, or NULL (no-op)
 *
 * May be called before the end: the thread stops at its next chunk.
 */
RTD_API void rtd_gotrace_pipe_free(rtd_gotrace_pipe *p);

/**
 * typedef rtd_gotrace_take_fn - where rtd_gotrace_run() hands each event
 * @ctx: the pointer given to rtd_gotrace_run()
 * @ev: the event; its strings (sargs) and the stacks it names
 *      (rtd_gotrace_dec_stack()) are the decoder's, valid for the
 *      generation, as without a thread; the wire arguments (raw) are not
 *      passed on
 *
 * Returns: 0, or a negative error, which stops the run.
 */
typedef int (*rtd_gotrace_take_fn)(void *ctx, const struct rtd_gotrace_event *ev);

/* rtd_gotrace_run() flags */
#define RTD_GOTRACE_RUN_THREAD 1u       /* decode on a thread of its own (Go 1.22+) */
#define RTD_GOTRACE_RUN_ANY_CPUS 2u     /* ... even with one CPU online (tests) */
#define RTD_GOTRACE_RUN_SMALL_CHUNKS 4u /* test aid: hand over 3 events at a time */
#define RTD_GOTRACE_RUN_DEC_NEXT 8u     /* @next passes @d's events through */

/**
 * rtd_gotrace_run - hand every event of a source to a consumer
 * @d: the ordered-mode decoder @next reads; its header must have been
 *     read (take the first event before) for the thread to be used
 * @next: gives the ordered events of @d (typically: feed it from a file,
 *        call rtd_gotrace_dec_next()), 1 with an event, 0 at the end,
 *        <0 on an error
 * @ctx: passed to @next
 * @take: called with each event, in order, on the caller's thread
 * @take_ctx: passed to @take
 * @flags: RTD_GOTRACE_RUN_THREAD: for a Go 1.22+ trace, when more than one
 *         CPU is online, call @next on a thread of its own while @take
 *         runs on the caller's (decoding and consuming then take two
 *         cores; the events and their order are the same as without it).
 *         The decoder's tables hook (rtd_gotrace_dec_set_tables_hook()) is
 *         taken for the call. Otherwise, or for older traces, one thread:
 *         @next then @take per event.
 *         RTD_GOTRACE_RUN_DEC_NEXT: @next gives what rtd_gotrace_dec_next()
 *         of @d gives, untouched (it may feed @d before): with the thread,
 *         a Go 1.22+ event then crosses in the ordering's own compact
 *         form and is built on the caller's thread (@next must not read
 *         the events it passes on: only off, type, name, ts and gen are
 *         set then). The events @take gets are the same.
 * @dec_rc: gets @next's last answer: 0 at the end, or its error (the
 *          events before it were taken)
 *
 * Stops at @take's first error (not calling @next further). rtd_goan_run()
 * is this with the analyses as the consumer.
 *
 * Returns: 0, or @take's negative error.
 */
RTD_API int rtd_gotrace_run(rtd_gotrace_dec *d, rtd_gotrace_next_fn next, void *ctx,
			    rtd_gotrace_take_fn take, void *take_ctx, unsigned flags,
			    int *dec_rc);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_PIPE_H */
