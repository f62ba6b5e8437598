/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_filter.h - which events of a Go execution trace a user
 * asked for (names, ids, a time window), and a filter writer: a valid
 * trace of the events a filter keeps.
 */
#ifndef RTDIAG_GOTRACE_FILTER_H
#define RTDIAG_GOTRACE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/gotrace_decoder.h"
#include "rtdiag/gotrace_encoder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_gotrace_filter rtd_gotrace_filter;

/* Regular-expression criteria (POSIX extended). */
enum rtd_gotrace_filter_re {
	RTD_GOTRACE_FILTER_TYPE,   /* the event's name ("GoCreate") */
	RTD_GOTRACE_FILTER_STACK,  /* "FUNC FILE:LINE" or "0xPC" of a frame of its stack */
	RTD_GOTRACE_FILTER_STRING, /* one of its string arguments */
	RTD_GOTRACE_FILTER_NRE
};

/* Number criteria. */
enum rtd_gotrace_filter_id {
	RTD_GOTRACE_FILTER_G, /* the goroutine (0: none) */
	RTD_GOTRACE_FILTER_P, /* the P (-1: none; fake Ps in ordered mode) */
	RTD_GOTRACE_FILTER_M, /* the thread (old format: of the P's last ProcStart) */
	RTD_GOTRACE_FILTER_NID
};

/**
 * rtd_gotrace_filter_new - a filter that matches every event
 *
 * Criteria added of one kind are alternatives (any may match); kinds
 * are combined (each must match). Dictionary and batch events (String,
 * Stack, EventBatch, Frequency, ...) have no G, P or time: they match a
 * name criterion, or no criterion at all.
 *
 * Returns: the filter, or NULL without memory.
 */
RTD_API rtd_gotrace_filter *rtd_gotrace_filter_new(void);

/**
 * rtd_gotrace_filter_free - free a filter
 * @f: the filter, or NULL (no-op)
 */
RTD_API void rtd_gotrace_filter_free(rtd_gotrace_filter *f);

/**
 * rtd_gotrace_filter_add_regex - add a regular-expression criterion
 * @f: the filter
 * @which: what it matches
 * @re: a POSIX extended regular expression
 *
 * Returns: 0, -RTD_E_INVAL for a bad expression (rtd_gotrace_filter_error()
 * says why) or -ENOMEM.
 */
RTD_API int rtd_gotrace_filter_add_regex(rtd_gotrace_filter *f,
					 enum rtd_gotrace_filter_re which, const char *re);

/**
 * rtd_gotrace_filter_add_id - add a goroutine, P or thread criterion
 * @f: the filter
 * @which: what it matches
 * @id: the value (a thread of none is -1)
 *
 * In raw mode a Go 1.22+ event's goroutine and P are not known (only
 * ordering follows them), except a CPU sample's: such a criterion then
 * matches CPU samples only (rtd_gotrace_filter_check() says so).
 *
 * Returns: 0, -RTD_E_INVAL or -ENOMEM.
 */
RTD_API int rtd_gotrace_filter_add_id(rtd_gotrace_filter *f,
				      enum rtd_gotrace_filter_id which, int64_t id);

/**
 * rtd_gotrace_filter_set_time - bound the events' time
 * @f: the filter
 * @until: false for the earliest time kept, true for the latest
 * @t: the time, inclusive
 * @from_start: false: @t is in the events' units (raw mode: ticks, ordered
 *              mode: ns, as rtd_gotrace_event.ts); true: @t is ns after
 *              the trace's first event (raw mode then needs
 *              rtd_gotrace_filter_prepare())
 *
 * Returns: 0, or -RTD_E_INVAL for a negative time from the start.
 */
RTD_API int rtd_gotrace_filter_set_time(rtd_gotrace_filter *f, bool until, int64_t t,
					bool from_start);

/**
 * rtd_gotrace_filter_set_invert - match the events the criteria do not
 * @f: the filter
 * @invert: true to invert
 */
RTD_API void rtd_gotrace_filter_set_invert(rtd_gotrace_filter *f, bool invert);

/**
 * rtd_gotrace_filter_active - does the filter select anything?
 * @f: the filter
 *
 * Returns: false when it has no criterion and is not inverted (it then
 * matches every event).
 */
RTD_API bool rtd_gotrace_filter_active(const rtd_gotrace_filter *f);

/**
 * rtd_gotrace_filter_prepare - a first pass, when raw mode needs one
 * @f: the filter
 * @mode: the mode the events will be matched in
 * @read_at: reads the input (see rtd_gotrace_read_at_fn), or NULL
 * @ctx: passed to @read_at
 *
 * A time from the trace's start, in raw mode, is turned into ticks with
 * the trace's frequency (the old format writes it at the end) from its
 * earliest event: a raw pass over the input finds both. Nothing is done
 * in ordered mode (times are ns and the first event comes first) or
 * without such a time.
 *
 * Returns: 0; -RTD_E_STATE when a pass is needed and @read_at is NULL;
 * the pass's decoding error; -RTD_E_GO_EVENT when the trace has no
 * frequency. rtd_gotrace_filter_error() says why.
 */
RTD_API int rtd_gotrace_filter_prepare(rtd_gotrace_filter *f, enum rtd_gotrace_mode mode,
				       rtd_gotrace_read_at_fn read_at, void *ctx);

/**
 * rtd_gotrace_filter_keep_ordered - match in Go's order, keep by offset
 * @f: the filter, complete
 * @read_at: reads the input (a Go 1.22+ trace)
 * @ctx: passed to @read_at
 *
 * The goroutine and P of a Go 1.22+ event are known in ordered mode only,
 * but a trace is rewritten (rtd_gotrace_filter_writer) from its raw events. This
 * runs the filter over the ordered events once and remembers the offsets
 * of those that match (a synthetic event, like a GoSwitch's GoBlock,
 * counts for the wire event it comes from); afterwards
 * rtd_gotrace_filter_match() matches raw events by offset. Memory: a
 * hash entry per kept event (capped at 2^28).
 *
 * Returns: 0; -RTD_E_UNSUPPORTED for an old-format trace; a decoding
 * error; -RTD_E_CAP. rtd_gotrace_filter_error() says why.
 */
RTD_API int rtd_gotrace_filter_keep_ordered(rtd_gotrace_filter *f,
					    rtd_gotrace_read_at_fn read_at, void *ctx);

/**
 * rtd_gotrace_filter_check - can the criteria match with this decoder?
 * @f: the filter
 * @d: the decoder the events come from, its header read
 * @why: gets the reason for a non-zero answer (may be NULL)
 * @len: size of @why
 *
 * Returns: 0; 1 when a criterion can match only some events in this mode
 * (a warning: a goroutine or P in raw mode on a Go 1.22+ trace); or
 * -RTD_E_STATE when the criteria cannot be evaluated (stacks of an
 * old-format trace in raw mode without read-ahead; a time from the start
 * in raw mode before rtd_gotrace_filter_prepare()).
 */
RTD_API int rtd_gotrace_filter_check(const rtd_gotrace_filter *f, const rtd_gotrace_dec *d,
				     char *why, size_t len);

/**
 * rtd_gotrace_filter_match - does an event match?
 * @f: the filter
 * @d: the decoder the event came from (its tables resolve stacks)
 * @ev: the event
 *
 * Give it every event of the trace, in the decoder's order: the filter
 * follows what they tell (the old format's thread per P, the first time).
 *
 * Returns: 1 or 0.
 */
RTD_API int rtd_gotrace_filter_match(rtd_gotrace_filter *f, const rtd_gotrace_dec *d,
				     const struct rtd_gotrace_event *ev);

/**
 * rtd_gotrace_filter_error - why the last call failed
 * @f: the filter
 *
 * Returns: the message ("" when none); valid until @f is freed.
 */
RTD_API const char *rtd_gotrace_filter_error(const rtd_gotrace_filter *f);

typedef struct rtd_gotrace_filter_writer rtd_gotrace_filter_writer;

/**
 * rtd_gotrace_filter_writer_new - write a trace of chosen events
 * @version: the version of the trace read (rtd_gotrace_dec_version())
 * @filtered: false: every event is written as it came (a rewrite: byte for
 *            byte the old format's input; the new format's with minimal
 *            batch-size varints); true: only the events kept, with what
 *            they need
 * @write: where the trace goes
 * @ctx: passed to @write
 *
 * Give it every event of the input in raw mode (file order), saying of
 * each whether it is kept (rtd_gotrace_filter_match(), or
 * rtd_gotrace_filter_keep_ordered() for a choice made in Go's order).
 * The output is a trace of the same version that Go's tools read:
 * - old format: the kept events with their batch's Batch event, the
 *   strings and stacks they name, the frequency, and a GoStartLocal where
 *   the kept events would otherwise lose their goroutine (the old format
 *   names a goroutine only where it starts); time deltas are recomputed;
 * - new format: each event batch keeps its kept events (time deltas
 *   recomputed; a batch left empty is dropped), CPU samples likewise,
 *   frequency and sync batches are copied, and each generation's strings
 *   and stacks are held until it ends and only those the kept events
 *   use (directly, or through a kept stack's frames) are written, in
 *   batches of at most 64 KiB. Memory: one batch and one generation's
 *   strings and stacks.
 *
 * Returns: the writer, or NULL for a version it cannot write or without
 * memory.
 */
RTD_API rtd_gotrace_filter_writer *rtd_gotrace_filter_writer_new(int version, bool filtered,
								  rtd_gotrace_write_fn write,
								  void *ctx);

/**
 * rtd_gotrace_filter_writer_event - the next event of the input
 * @w: the writer
 * @d: the (raw-mode) decoder it came from: its tables give the strings
 * @ev: the event
 * @keep: whether it is kept (the framing and dictionary events are the
 *        writer's to decide)
 *
 * Returns: 0, or a negative error (the write callback's, -RTD_E_CAP,
 * -ENOMEM, -RTD_E_GO_EVENT for an old-format event before any batch).
 */
RTD_API int rtd_gotrace_filter_writer_event(rtd_gotrace_filter_writer *w,
					    const rtd_gotrace_dec *d,
					    const struct rtd_gotrace_event *ev, bool keep);

/**
 * rtd_gotrace_filter_writer_finish - the input ended (or was damaged)
 * @w: the writer
 *
 * Writes what is held (the new format's last generation's strings and
 * stacks) and flushes. A trace whose input was damaged is complete up to
 * the damage.
 *
 * Returns: 0 or a negative error.
 */
RTD_API int rtd_gotrace_filter_writer_finish(rtd_gotrace_filter_writer *w);

/**
 * rtd_gotrace_filter_writer_free - free a writer
 * @w: the writer, or NULL (no-op)
 *
 * Call rtd_gotrace_filter_writer_finish() first for a complete trace
 * (free may still flush what the old format's encoder buffered).
 */
RTD_API void rtd_gotrace_filter_writer_free(rtd_gotrace_filter_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_FILTER_H */
