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
 * Every trace source feeds this model through an adapter in src/timeline/
 * (EventPipe: rtd_timeline_nettrace_*, Go: rtd_timeline_gotrace_*, perf:
 * rtd_timeline_perf_*), declared at the end of this header.
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

/* ---- Go execution traces ---------------------------------------------------- */

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

/* ---- EventPipe (nettrace) streams ------------------------------------------ */

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

/* ---- perf_event records ------------------------------------------------------ */

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
#endif /* RTDIAG_TIMELINE_H */
