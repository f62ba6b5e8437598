/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/timeline.h - one timeline model and its writers: Perfetto's
 * protobuf trace format and the Chrome Trace Event JSON format.
 *
 * A timeline is a stream: a source describes tracks (processes, threads,
 * named tracks such as a CPU or a goroutine, counters) and sends events on
 * them in time order (slices that begin and end, complete slices, instants
 * with arguments, counter values, CPU samples with stacks, flow arrows);
 * the writer encodes each as it comes. Memory holds the tracks and, for
 * Perfetto, the interning tables (names and stacks, capped: when a table
 * is full the writer starts a new interning generation), never the events,
 * so a multi-GB input becomes a timeline in bounded memory.
 *
 * Slices nest per track: rtd_timeline_end() ends the innermost open slice
 * of its track, and an end without a begin is -RTD_E_STATE. Slices still
 * open at rtd_timeline_finish() are ended at the last timestamp seen.
 *
 * It names no source: each source's adapter to it lives beside the source
 * (Go: rtdiag/gotrace_timeline.h, src/gotrace/timeline.c; EventPipe:
 * rtdiag/nettrace_timeline.h, src/nettrace/timeline.c; perf:
 * rtdiag/perf_timeline.h, src/perf/timeline.c), and any source's records
 * come in through rtdiag/timeline_records.h.
 */
#ifndef RTDIAG_TIMELINE_H
#define RTDIAG_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_timeline rtd_timeline;

/* Caps. */
#define RTD_TIMELINE_MAX_TRACKS (1u << 22)   /* live tracks in one timeline */
#define RTD_TIMELINE_MAX_DEPTH 4096          /* open slices on one track */
#define RTD_TIMELINE_MAX_ARGS 64             /* arguments of one event */
#define RTD_TIMELINE_MAX_INTERNED (1u << 16) /* Perfetto interning tables */

/**
 * enum rtd_timeline_format - timeline output formats
 * @RTD_TIMELINE_FMT_NONE: not a format
 * @RTD_TIMELINE_FMT_PERFETTO: Perfetto protobuf (perfetto.protos.Trace of
 *                             TracePackets with TrackEvents)
 * @RTD_TIMELINE_FMT_CHROME_JSON: Chrome Trace Event JSON ({"traceEvents":[...]})
 * @RTD_TIMELINE_FMT_COUNT: number of values
 */
enum rtd_timeline_format {
	RTD_TIMELINE_FMT_NONE = 0,
	RTD_TIMELINE_FMT_PERFETTO,
	RTD_TIMELINE_FMT_CHROME_JSON,
	RTD_TIMELINE_FMT_COUNT
};

/**
 * rtd_timeline_format_from_name - a format by name
 * @name: "perfetto" (also "pftrace", "protobuf") or "chrome-json" (also
 *        "json", "chrome")
 *
 * Returns: the format, or RTD_TIMELINE_FMT_NONE.
 */
RTD_API enum rtd_timeline_format rtd_timeline_format_from_name(const char *name);

/**
 * rtd_timeline_format_from_path - the format an output path asks for
 * @path: ".perfetto-trace", ".pftrace", ".perfetto" (Perfetto); ".json"
 *        (Chrome JSON), as rtd_format_ext_of()'s table (rtdiag/format.h)
 *        says (".speedscope.json" is a profile, not a timeline)
 *
 * Returns: the format, or RTD_TIMELINE_FMT_NONE.
 */
RTD_API enum rtd_timeline_format rtd_timeline_format_from_path(const char *path);

/**
 * rtd_timeline_format_name - a format's name
 * @fmt: the format
 *
 * Returns: "perfetto", "chrome-json", or "none".
 */
RTD_API const char *rtd_timeline_format_name(enum rtd_timeline_format fmt);

/**
 * struct rtd_timeline_opts - options for rtd_timeline_new()
 * @sz: sizeof(struct rtd_timeline_opts)
 * @format: the output format
 * @out: where to write; the caller keeps it open until rtd_timeline_free()
 * @max_interned: Perfetto: entries the interning tables hold before a new
 *                generation starts; 0 (or more than the cap):
 *                RTD_TIMELINE_MAX_INTERNED
 */
struct rtd_timeline_opts {
	size_t sz;
	enum rtd_timeline_format format;
	FILE *out;
	size_t max_interned;
};

/**
 * rtd_timeline_new - start a timeline
 * @o: the options
 *
 * Returns: the timeline, or NULL for bad options or out of memory.
 */
RTD_API rtd_timeline *rtd_timeline_new(const struct rtd_timeline_opts *o);

/**
 * rtd_timeline_finish - end open slices and write the format's trailer
 * @tl: the timeline
 *
 * Returns: 0, -EIO when writing failed (also for any earlier write), or
 * -RTD_E_STATE when called twice.
 */
RTD_API int rtd_timeline_finish(rtd_timeline *tl);

/**
 * rtd_timeline_free - free a timeline (without finishing it)
 * @tl: the timeline; NULL does nothing
 */
RTD_API void rtd_timeline_free(rtd_timeline *tl);

/**
 * enum rtd_track_kind - what a track is
 * @RTD_TRACK_PROCESS: a process (@pid, @name)
 * @RTD_TRACK_THREAD: a thread (@pid, @tid, @name)
 * @RTD_TRACK_NAMED: a named track of slices and instants (a CPU, a
 *                   goroutine, "GC"), under @parent
 * @RTD_TRACK_COUNTER: a counter (@name, @unit), under @parent
 */
enum rtd_track_kind {
	RTD_TRACK_PROCESS = 0,
	RTD_TRACK_THREAD,
	RTD_TRACK_NAMED,
	RTD_TRACK_COUNTER,
};

/**
 * struct rtd_track - a track to add
 * @sz: sizeof(struct rtd_track)
 * @kind: an enum rtd_track_kind
 * @pid: process id (PROCESS, THREAD; others take their parent's)
 * @tid: thread id (THREAD)
 * @name: the name shown; copied
 * @parent: a track id from rtd_timeline_add_track(), 0 for none
 * @unit: counter unit ("bytes", "count", ...), NULL when none
 */
struct rtd_track {
	size_t sz;
	enum rtd_track_kind kind;
	int64_t pid, tid;
	const char *name;
	uint64_t parent;
	const char *unit;
};

/**
 * rtd_timeline_add_track - add a track
 * @tl: the timeline
 * @t: its description
 *
 * Returns: the track's id (>= 1), or -RTD_E_INVAL, -RTD_E_CAP, -ENOMEM,
 * -EIO.
 */
RTD_API int64_t rtd_timeline_add_track(rtd_timeline *tl,
				       const struct rtd_track *t);

/**
 * enum rtd_tl_arg_type - type of an event argument
 * @RTD_TL_STR: text (@s)
 * @RTD_TL_INT: signed integer (@i)
 * @RTD_TL_UINT: unsigned integer (@u)
 * @RTD_TL_DOUBLE: floating point (@d)
 * @RTD_TL_BOOL: true or false (@i)
 */
enum rtd_tl_arg_type {
	RTD_TL_STR = 0,
	RTD_TL_INT,
	RTD_TL_UINT,
	RTD_TL_DOUBLE,
	RTD_TL_BOOL,
};

/**
 * struct rtd_tl_arg - one argument of an event
 * @key: its name
 * @type: an enum rtd_tl_arg_type
 * @s: text value
 * @i: integer or bool value
 * @u: unsigned value
 * @d: double value
 */
struct rtd_tl_arg {
	const char *key;
	int type;
	const char *s;
	int64_t i;
	uint64_t u;
	double d;
};

/**
 * struct rtd_tl_event - a slice or instant
 * @sz: sizeof(struct rtd_tl_event)
 * @track: the track's id
 * @ts: timestamp in nanoseconds
 * @dur: duration in nanoseconds, for rtd_timeline_slice() only
 * @name: what happened
 * @category: a category ("gc", "sched", ...), NULL for none
 * @args: arguments shown with the event
 * @nargs: their count, up to RTD_TIMELINE_MAX_ARGS
 * @flow_out: a flow arrow starts here (an id the matching @flow_in names),
 *            0 for none
 * @flow_in: a flow arrow ends here, 0 for none
 */
struct rtd_tl_event {
	size_t sz;
	uint64_t track;
	int64_t ts;
	int64_t dur;
	const char *name;
	const char *category;
	const struct rtd_tl_arg *args;
	size_t nargs;
	uint64_t flow_out;
	uint64_t flow_in;
};

/**
 * rtd_timeline_begin - a slice begins
 * @tl: the timeline
 * @e: the slice's track, start, name, category, arguments, flows
 *
 * Returns: 0, -RTD_E_INVAL (unknown track, a counter track, bad @e),
 * -RTD_E_CAP (nesting deeper than RTD_TIMELINE_MAX_DEPTH), -ENOMEM, -EIO.
 */
RTD_API int rtd_timeline_begin(rtd_timeline *tl, const struct rtd_tl_event *e);

/**
 * rtd_timeline_end - the innermost open slice of a track ends
 * @tl: the timeline
 * @track: the track
 * @ts: when, in nanoseconds
 *
 * Returns: 0, -RTD_E_STATE when no slice is open there, -RTD_E_INVAL, -EIO.
 */
RTD_API int rtd_timeline_end(rtd_timeline *tl, uint64_t track, int64_t ts);

/**
 * rtd_timeline_slice - a whole slice, begin and duration at once
 * @tl: the timeline
 * @e: the slice, with @e->dur >= 0
 *
 * It nests inside the track's open slice; it must not outlast it.
 * Returns: as rtd_timeline_begin().
 */
RTD_API int rtd_timeline_slice(rtd_timeline *tl, const struct rtd_tl_event *e);

/**
 * rtd_timeline_instant - an instant event
 * @tl: the timeline
 * @e: the event
 *
 * Returns: as rtd_timeline_begin().
 */
RTD_API int rtd_timeline_instant(rtd_timeline *tl, const struct rtd_tl_event *e);

/**
 * rtd_timeline_counter - a counter's value from now on
 * @tl: the timeline
 * @track: a RTD_TRACK_COUNTER track
 * @ts: when, in nanoseconds
 * @value: the value
 *
 * Returns: 0, -RTD_E_INVAL (not a counter track), -EIO.
 */
RTD_API int rtd_timeline_counter(rtd_timeline *tl, uint64_t track, int64_t ts,
				 double value);

/**
 * rtd_timeline_close_track - a track will have no more events
 * @tl: the timeline
 * @track: the track
 * @ts: when its open slices end, in nanoseconds
 *
 * Ends what is open on it and forgets it, so memory follows the live
 * tracks (a goroutine that ended, a thread that exited), not every track
 * the input ever had. Its id is not reused.
 * Returns: 0, -RTD_E_INVAL for an unknown track, or a write error.
 */
RTD_API int rtd_timeline_close_track(rtd_timeline *tl, uint64_t track,
				     int64_t ts);

/**
 * rtd_timeline_rename_track - a process or thread track gets a new name
 * @tl: the timeline
 * @track: a RTD_TRACK_PROCESS or RTD_TRACK_THREAD track
 * @name: its name from now on; copied
 *
 * The track's descriptor is written again with the same id and the new
 * name (a viewer shows the latest): for a thread named after its first
 * events came (a runtime's thread name, the kernel's comm).
 * Returns: 0, -RTD_E_INVAL (unknown track, another kind, no @name),
 * -RTD_E_STATE after rtd_timeline_finish(), -ENOMEM, -EIO.
 */
RTD_API int rtd_timeline_rename_track(rtd_timeline *tl, uint64_t track, const char *name);

struct rtd_frame;

/**
 * rtd_timeline_sample - a CPU sample with its stack
 * @tl: the timeline
 * @track: the sampled thread's track
 * @ts: when, in nanoseconds
 * @frames: the stack, leaf first (struct rtd_frame of rtdiag/profile.h;
 *          only names are used, an unnamed frame shows its address)
 * @nframes: their count
 *
 * Perfetto: an instant "sample" with an interned callstack; Chrome JSON:
 * an instant "sample" whose "stack" argument lists the frames, leaf first.
 * Returns: as rtd_timeline_instant().
 */
RTD_API int rtd_timeline_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
				const struct rtd_frame *frames, size_t nframes);

/**
 * struct rtd_timeline_stats - what was written
 * @tracks: tracks added
 * @events: events written (a complete slice counts once)
 * @bytes: bytes written
 * @open: slices open now
 */
struct rtd_timeline_stats {
	uint64_t tracks, events, bytes, open;
};

/**
 * rtd_timeline_get_stats - counts so far
 * @tl: the timeline
 * @st: filled in
 */
RTD_API void rtd_timeline_get_stats(const rtd_timeline *tl,
				    struct rtd_timeline_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_TIMELINE_H */
