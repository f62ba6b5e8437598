/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_source.h - a Go execution trace (any version, 1.5 to
 * 1.26) as a record source (rtdiag/source.h).
 *
 * The ordered decoder and the goroutine state tracker (rtd_gostate) turn
 * the trace into Go's high-level events; the source turns those into
 * records, in Go's order:
 *  - goroutine states as slices: Go 1.22+ names the OS thread (M) of each
 *    event, which on Linux is the thread id, so a goroutine's Running and
 *    Syscall states are slices on that thread (@tid = M, @name "Running"
 *    or "Syscall", @category "goroutine", field g), with a THREAD record
 *    the first time an M appears. Go 1.5-1.21 traces name no OS thread:
 *    their states go on the goroutine's own lane of the process track
 *    (@tid 0, @lane RTD_GOTRACE_LANE_G + g).
 *  - a goroutine blocking: INSTANT "GoBlock" (fields g, reason; the
 *    stack), and being made runnable: INSTANT "GoUnblock" (field g);
 *  - ranges (GC, stop-the-world, sweeping, mark assists) as slices on the
 *    process track, one lane per range and scope;
 *  - user regions as slices on the goroutine's region lane
 *    (RTD_GOTRACE_LANE_REGION + g); tasks and logs as INSTANTs
 *    ("UserTaskBegin", "UserTaskEnd", "UserLog" with fields task, parent,
 *    name, category, message); labels as INSTANT "GoLabel";
 *  - CPU samples as SAMPLE records (value 1, unit "count", name
 *    "CPUSample", fields g and m (I64, the sample's M, -1 when the trace
 *    names none: Go 1.5-1.21), the stack interned with function names,
 *    files and lines);
 *  - metrics (GOMAXPROCS, heap bytes, heap goal) as COUNTERs.
 * Slices left open at the end of the trace are closed at its last time.
 *
 * Order: Go 1.22+ records come in Go's order, which is time order. In
 * Go 1.5-1.21 traces a system call's transitions are known only at the
 * goroutine's next event (Go's reader looks ahead; rtd_gostate waits), so
 * they come after records of later times; rtd_source_next() raises their
 * @mono to the latest given out (rtd_source_stats() counts them: 836 of
 * http_1_19_good's records, 0 of every Go 1.22+ vector). Reordering them
 * within a bounded window is a later step.
 *
 * Clock: RTD_CLOCK_GO, Go's nanoseconds. Go 1.22+ outside Windows takes
 * its trace clock from nanotime() / 64, at the constant frequency
 * 15625000 (runtime/tracetime.go), and on Linux nanotime() is
 * CLOCK_MONOTONIC: a Go 1.22+ trace at that frequency is taken as
 * CLOCK_MONOTONIC, error 64 ns, unless @not_monotonic. A Go 1.25+ trace
 * also carries a clock snapshot per generation (trace time,
 * CLOCK_MONOTONIC via nanotime(), wall time): the conversion is anchored
 * at each one, and the distance between the previous anchor's
 * extrapolation and the new snapshot is measured into the error bound
 * (plus 1 us for the three clock reads). Go 1.5-1.21 traces (cputicks,
 * ns since the first event) have no anchor unless the caller gives one
 * (@anchor_ts, @anchor_mono: e.g. a live capture's start).
 */
#ifndef RTDIAG_GOTRACE_SOURCE_H
#define RTDIAG_GOTRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lanes of the process track (@tid 0) the Go source uses. */
#define RTD_GOTRACE_LANE_G (1ull << 62)      /* + g: a goroutine's states (Go 1.5-1.21) */
#define RTD_GOTRACE_LANE_REGION (1ull << 61) /* + g: a goroutine's user regions */

/**
 * struct rtd_gotrace_source_opts - options for the Go trace sources
 * @sz: sizeof(struct rtd_gotrace_source_opts)
 * @pid: the traced process (a Go trace does not say it); 0: not known
 * @anchor_ts: with @anchor_mono (non-zero): a trace time (ns)...
 * @anchor_mono: ...and the CLOCK_MONOTONIC ns of that moment, for a
 *               trace without clock snapshots (Go 1.22-1.24)
 * @anchor_error_ns: the error of that anchor (0: unknown)
 * @not_monotonic: never take a Go 1.22+ trace's nanotime() clock for
 *                 CLOCK_MONOTONIC (a trace recorded on macOS, say)
 * @grow: the file is still being written (a live capture), or NULL: at
 *        its end the source calls @grow(@grow_ctx), which returns true
 *        when more bytes may have come (it may wait a little first: the
 *        source's next() then blocks) and false once the file is whole
 * @grow_ctx: passed to @grow
 * @kinds: the record kinds wanted, a mask of 1u << RTD_REC_*; 0: every
 *         kind. Records of other kinds are not made. When nothing but
 *         SAMPLE (and THREAD, PROCESS) records is asked for, the
 *         goroutine tracker is not fed: each CPUSample event of the
 *         ordered decoder becomes its SAMPLE record at once (the same
 *         record, stack as the decoder names it), so a CPU profile costs
 *         what decoding does
 * @go_events: Go's own events in place of the tracker's records: first a
 *             PROCESS record (field go_version: 1005..1025), then each
 *             event of the ordered decoder, in its order, as one INSTANT
 *             (category "go") named by Go ("GoCreate", "ProcStart"...),
 *             @ts its time, @stack its stack (interned), and fields: its
 *             context ev.g (U64), ev.p, ev.m (I64: -1 none) as struct
 *             rtd_gotrace_event has them, then its arguments by the
 *             decoder's names (U64; an argument naming a stack, "stack"
 *             or "new_stack", is followed by "NAME.fn", the STR top
 *             function of that stack, interned; NULL for stack 0 or an
 *             unnamed frame), then its string arguments (STR, borrowed
 *             like the record). Each event is handed out as the decoder
 *             gives it, with no queue: every record of one event type
 *             and argument count has the same fields array (same
 *             address, names and order, for the source's life; only the
 *             values change; in a batch, rtd_source_next_batch(), the
 *             type's second and later records have arrays of their own
 *             in the same order), so a consumer may find where a field
 *             is once per array or per @shape. Pulled in batches, a Go
 *             1.22+ trace's string arguments stay valid across a
 *             generation's end (copied then). For consumers that draw Go's views
 *             (rtd_tl_gotrace); the Go 1.22+ clock and its anchors are
 *             the same. @kinds still filters (PROCESS, INSTANT)
 * @threads: with @go_events, the threads to read with: 0 or 1, the
 *           caller's alone; 2 (or more): a Go 1.22+ trace is decoded on a
 *           thread of its own when more than one CPU is online, as
 *           rtd_gotrace_run() with RTD_GOTRACE_RUN_THREAD does (from the
 *           second event on; the same records in the same order), and
 *           each pull takes the next event it decoded. Ignored without
 *           @go_events and for Go 1.5-1.21 traces
 * @field_want: with @go_events, which of an event's fields its records
 *              carry, asked once per event type and argument names
 *              (@event its name, @field an argument's, a stack argument's
 *              "NAME.fn" or a string argument's name): false leaves the
 *              field out (a stack argument refused takes its "NAME.fn"
 *              with it); ev.g, ev.p and ev.m are always first. NULL: all.
 *              A consumer that reads a few fields of frequent events
 *              (rtd_tl_gotrace_fields()) then costs no writing of the rest
 * @field_want_ctx: passed to @field_want
 */
struct rtd_gotrace_source_opts {
	size_t sz;
	uint32_t pid;
	int64_t anchor_ts;
	int64_t anchor_mono;
	uint64_t anchor_error_ns;
	bool not_monotonic;
	bool (*grow)(void *grow_ctx);
	void *grow_ctx;
	uint32_t kinds;
	bool go_events;
	size_t threads;
	bool (*field_want)(void *ctx, const char *event, const char *field);
	void *field_want_ctx;
};

/**
 * rtd_gotrace_source_open - a Go trace file as a record source
 * @path: the file (binary trace)
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The file is read in pieces and read again where the ordered decoder
 * needs it (rtd_gotrace_dec_set_source()), so memory follows the trace's
 * live goroutines and a generation's tables, not its size.
 *
 * Returns: the source, or NULL: -errno (the file), -RTD_E_INVAL (@opts),
 * -ENOMEM.
 */
RTD_API rtd_source *rtd_gotrace_source_open(const char *path,
					    const struct rtd_gotrace_source_opts *opts, int *err);

/**
 * rtd_gotrace_source_mem - a Go trace in memory as a record source
 * @buf: the trace; borrowed, it must outlive the source
 * @len: its length
 * @opts: options, or NULL
 * @err: as for rtd_gotrace_source_open()
 *
 * Returns: the source, or NULL.
 */
RTD_API rtd_source *rtd_gotrace_source_mem(const void *buf, size_t len,
					   const struct rtd_gotrace_source_opts *opts, int *err);

/**
 * rtd_gotrace_source_reader - a Go trace from a stream as a record source
 * @read: gives the next bytes: fills up to @len bytes of @buf and returns
 *        their count, 0 at the end, or a negative errno (a pipe, standard
 *        input); called in order, never asked to read again
 * @ctx: passed to @read
 * @opts: options, or NULL (@grow must be NULL: a stream ends when @read
 *        says so)
 * @err: as for rtd_gotrace_source_open()
 *
 * The bytes are read once: what the ordered decoder must read again (a
 * Go 1.5-1.21 trace's stacks at its end, a generation's tables) it keeps
 * in memory, as with rtd_gotrace_dec_feed() alone.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (@read NULL, @opts), -ENOMEM.
 */
RTD_API rtd_source *rtd_gotrace_source_reader(int64_t (*read)(void *ctx, void *buf, size_t len),
					      void *ctx,
					      const struct rtd_gotrace_source_opts *opts,
					      int *err);

/* ---- a live capture as a source (`rtdiag record --go-trace`) ------------ */

typedef struct rtd_gotrace_recorder rtd_gotrace_recorder;

/**
 * struct rtd_gotrace_recorder_opts - what rtd_gotrace_recorder_start() captures
 * @sz: sizeof(struct rtd_gotrace_recorder_opts)
 * @host: the program's net/http/pprof server: "HOST:PORT" or an
 *        http:// URL, as struct rtd_gocapture_opts @host
 * @pid: the program's process id, for the records (0: not known)
 * @seconds: how long the program is asked to trace (?seconds=); 0: 3600,
 *           the recording then ends it with rtd_gotrace_recorder_stop()
 * @end_grace: rtd_gotrace_recorder_end(): seconds the trace is given to
 *             end by itself before it is cut (0: cut at once)
 * @piece: a rolling capture: the program is asked for consecutive traces
 *         ("pieces") of @piece seconds each, back to back, until the
 *         recorder is stopped (then the piece under way is cut at once),
 *         or for @seconds in all when @seconds is set (the last piece
 *         then asks for what remains, and ends by itself); 0: one trace
 *         of @seconds. See "Rolling capture" below.
 */
struct rtd_gotrace_recorder_opts {
	size_t sz;
	const char *host;
	uint32_t pid;
	double seconds;
	double end_grace;
	double piece;
};

/*
 * Rolling capture (@piece > 0): net/http/pprof runs one trace at a time
 * (a second /debug/pprof/trace while one runs is refused: "tracing is
 * already enabled"), so each piece is asked for the moment the previous
 * one has ended; the program's events between the two (the request's
 * round trip and trace.Start's stop-the-world) are not traced. Each piece
 * is a whole trace, decoded as it arrives into an unlinked temporary file
 * and dropped once read (at most RTD_GOTRACE_ROLL_MAX_PENDING pieces wait
 * to be read: the capture waits for the reader beyond that).
 *
 * The live source (rtd_gotrace_recorder_live()) gives the pieces' records
 * one piece after the other, on the one clock (each piece converts its own
 * times: a Go 1.22+ piece by nanotime(), a Go 1.5-1.21 piece anchored at
 * the time its request was sent, with the request's round trip as its
 * error); strings and stacks are copied into the source's own interner,
 * so they live as long as the source, not the piece. Across a cut:
 *  - between two pieces comes a whole slice (RTD_REC_SLICE) "Go trace gap"
 *    (category "gotrace", on the process track, lane
 *    RTD_GOTRACE_LANE_GAP) from the last record of one piece to the first
 *    of the next, with fields piece (the next one's number, from 1) and
 *    gap_ns: nothing of the program is traced inside it;
 *  - a goroutine running, in a system call or blocked across the cut is
 *    closed at the piece's last time and opened again from the next
 *    piece's first state (Go 1.22+ traces start with every goroutine's
 *    and P's status), so its slice is split by the gap;
 *  - an M's THREAD record is given once, not once per piece.
 * A piece that breaks off, or a request that fails (the program gone),
 * ends the source there: rtd_gotrace_recorder_incomplete() is true and
 * rtd_gotrace_recorder_errmsg() says why.
 * Go 1.5-1.21 pieces are whole traces too, but such a trace can only be
 * decoded once it has ended (its frequency, stacks and strings come at
 * its end): each piece's records come when the piece ends, up to @piece
 * seconds late (a reader's lag must allow that), and a piece cut by the
 * stop is lost.
 */

/* Pieces captured but not read yet, at most (the capture waits). */
#define RTD_GOTRACE_ROLL_MAX_PENDING 4
/* The lane of the process track the rolling capture's gaps use. */
#define RTD_GOTRACE_LANE_GAP (1ull << 60)

/**
 * struct rtd_gotrace_roll_stats - what a rolling capture did
 * @sz: sizeof(struct rtd_gotrace_roll_stats)
 * @pieces: pieces whose records were read
 * @gaps: gaps between pieces (each a "Go trace gap" slice)
 * @gap_total_ns: their length together
 * @gap_max_ns: the longest
 */
struct rtd_gotrace_roll_stats {
	size_t sz;
	uint64_t pieces;
	uint64_t gaps;
	int64_t gap_total_ns;
	int64_t gap_max_ns;
};

/**
 * rtd_gotrace_recorder_start - capture a Go program's execution trace on a
 * thread of the recorder's own
 * @opts: options (@host required)
 * @out: receives the recorder
 *
 * The trace (rtd_gocapture_run(), the same request as `rtdiag gotrace
 * capture`) streams into an unlinked temporary file: memory stays
 * bounded whatever its length.
 *
 * Returns: 0, -RTD_E_INVAL, -ENOMEM, or a negative errno (the temporary
 * file, the thread).
 */
RTD_API int rtd_gotrace_recorder_start(const struct rtd_gotrace_recorder_opts *opts,
				       rtd_gotrace_recorder **out);

/**
 * rtd_gotrace_recorder_done - has the capture ended by itself?
 * @r: the recorder
 *
 * Returns: true once the trace has all arrived or the capture failed.
 */
RTD_API bool rtd_gotrace_recorder_done(const rtd_gotrace_recorder *r);

/**
 * rtd_gotrace_recorder_stop - end the capture and wait for its thread
 * @r: the recorder (stopped already: nothing happens)
 * @grace: seconds to wait for the trace to end by itself first (a
 *         capture of the recording's own length ends on its own)
 *
 * A capture stopped before the program's trace ended keeps the bytes
 * that came: a trace cut short, whose complete part the source reads.
 *
 * Returns: 0 when the whole trace arrived, -ECANCELED when it was cut
 * short here, or the capture's error (rtd_gotrace_recorder_errmsg()).
 */
RTD_API int rtd_gotrace_recorder_stop(rtd_gotrace_recorder *r, double grace);

/**
 * rtd_gotrace_recorder_errmsg - what went wrong, for a person
 * @r: the recorder
 *
 * Returns: the capture's message ("" when none).
 */
RTD_API const char *rtd_gotrace_recorder_errmsg(const rtd_gotrace_recorder *r);

/**
 * rtd_gotrace_recorder_source - a stopped recorder's trace as a record source
 * @r: the recorder, stopped; borrowed: it must outlive the source
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * rtd_gotrace_source_open() on the captured bytes, with the recorder's
 * @pid: on Linux a Go 1.22+ trace's clock is CLOCK_MONOTONIC / 64 and its
 * Ms are OS thread ids, so its records share the perf sources' clock and
 * tracks. A trace cut short ends with its decoder's error after its
 * complete part.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (@r running or empty), or
 * the source's error.
 */
RTD_API rtd_source *rtd_gotrace_recorder_source(rtd_gotrace_recorder *r, int *err);

/**
 * rtd_gotrace_recorder_live - a running recorder's trace as a live record
 * source
 * @r: the recorder, started; borrowed: it must outlive the source
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * rtd_gotrace_recorder_source()'s records, read while the capture writes
 * them: the source's next() blocks at the end of what came (polling the
 * file every 20 ms) until more comes or the capture ends, so give it to
 * rtd_recorder_add_source() as a blocking source (a thread reads it,
 * watermarks trail the clock by the source's lag). A Go 1.22+ trace
 * comes a generation at a time (the runtime cuts one about every second,
 * and the decoder orders a generation once the next one begins): its
 * records are that late. A capture that brought nothing ends the source
 * at once, empty (rtd_gotrace_recorder_errmsg() says why). A trace that
 * breaks off (the program died, or rtd_gotrace_recorder_end() or _stop()
 * cut it) ends the source after its last complete part, without an error
 * record, so that a recording's other sources go on;
 * rtd_gotrace_recorder_errmsg() says where, and
 * rtd_gotrace_recorder_incomplete() is true unless it was cut here.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (@r not running), or the
 * source's error.
 */
RTD_API rtd_source *rtd_gotrace_recorder_live(rtd_gotrace_recorder *r, int *err);

/**
 * rtd_gotrace_recorder_incomplete - did the live source's trace break off
 * before its end, other than by rtd_gotrace_recorder_end() or _stop()?
 * @r: the recorder
 *
 * Returns: true when what came of the trace is incomplete.
 */
RTD_API bool rtd_gotrace_recorder_incomplete(const rtd_gotrace_recorder *r);

/**
 * rtd_gotrace_recorder_end - ask the capture to end, without waiting
 * @r: the recorder
 *
 * The trace is given @end_grace seconds (rtd_gotrace_recorder_opts) to end
 * by itself (a capture of the recording's own length does), then cut; a
 * live source (rtd_gotrace_recorder_live()) then ends after the bytes that
 * came. Safe from any thread.
 */
RTD_API void rtd_gotrace_recorder_end(rtd_gotrace_recorder *r);

/**
 * rtd_gotrace_recorder_lag_ns - how late the live source's records may
 * come after their time
 * @r: the recorder
 *
 * 5 s: a Go 1.22+ generation (about a second) is ordered when the next
 * one begins. A rolling capture whose program is older (Go 1.5-1.21: a
 * piece is decoded when it ends), or not known yet (before the first
 * piece's header came), @piece + 2 s when that is more. It never grows:
 * give it to rtd_source_thread() as @lag_fn.
 *
 * Returns: nanoseconds.
 */
RTD_API int64_t rtd_gotrace_recorder_lag_ns(const rtd_gotrace_recorder *r);

/**
 * rtd_gotrace_recorder_roll_stats - counts of a rolling capture's source
 * @r: the recorder
 * @out: filled up to @out->sz bytes (zero when @r is not rolling); read it
 *       from the thread that reads the live source, or after it ended
 */
RTD_API void rtd_gotrace_recorder_roll_stats(const rtd_gotrace_recorder *r,
					     struct rtd_gotrace_roll_stats *out);

/**
 * rtd_gotrace_recorder_free - free a recorder (stopping it at once first)
 * @r: the recorder; NULL does nothing
 */
RTD_API void rtd_gotrace_recorder_free(rtd_gotrace_recorder *r);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_SOURCE_H */
