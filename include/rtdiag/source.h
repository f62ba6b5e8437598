/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/source.h - one record stream: sources give out normalized
 * records stamped with their clock, models and writers consume them
 * (docs/design.md "The record stream").
 *
 * A source (a nettrace file, a Go trace, a perf profiler, or anything
 * built with rtd_source_new()) is pulled with rtd_source_next(): 1 with a
 * record, 0 at the end, or a negative error with an error record
 * {code, offset, message}; after an error every call gives the same error
 * again. A record is borrowed: valid until the next rtd_source_next() on
 * the same source, except the strings and stacks it points at, which are
 * interned and live as long as the source.
 *
 * Every record carries its time twice: @ts in the source's clock domain
 * and @mono, that time converted to CLOCK_MONOTONIC nanoseconds with the
 * source's clock (struct rtd_clock, rtd_source_clock()), which also says
 * how to reach wall time and with what error. Within one source @mono
 * never decreases. rtd_source_merge() interleaves N sources by @mono.
 *
 * Live sources (a running process, read while it runs) keep one more
 * rule, so a merge of them never waits on the slowest one and never holds
 * more than a record per source: when a live source has no record yet it
 * does not block, it says "nothing from me before T" (RTD_SOURCE_IDLE,
 * @mono = T, its watermark); the merge gives out every record older than
 * the smallest watermark of its idle sources, and tells its caller when
 * to look again through a descriptor (rtd_source_fd(), rtd_source_wait()).
 * See "Live sources" below and docs/design.md, "The record stream".
 *
 * Options structs of this header, and every new one, have libbpf's shape:
 * zero-filled, `size_t sz` first; rtd_opts_check() is the one check.
 */
#ifndef RTDIAG_SOURCE_H
#define RTDIAG_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options: one shape, one check --------------------------------------- */

/**
 * rtd_opts_check - check an options struct of libbpf's shape
 * @opts: the caller's struct, starting with `size_t sz`; NULL is fine
 *        (every option at its default)
 * @known: the bytes this version knows: the end of its last field
 *         (RTD_OPTS_END())
 *
 * An older caller's struct, shorter than @known, is accepted: the fields
 * it lacks read as zero (copy it with rtd_opts_copy()). A newer caller's
 * longer struct is accepted only when every byte past @known is zero, so
 * an option this version does not know is refused rather than ignored.
 * The padding after the last field, up to the next multiple of
 * sizeof(size_t), is not read (a designated initializer may leave it
 * unset): a field added to such a struct must begin past it.
 *
 * Returns: 0; -RTD_E_INVAL when @opts->sz is smaller than sz itself or
 * a byte past @known is not zero.
 */
RTD_API int rtd_opts_check(const void *opts, size_t known);

/**
 * rtd_opts_copy - a checked copy of an options struct at this version's size
 * @dst: the struct to fill (this version's), of @dst_size bytes
 * @dst_size: sizeof(*@dst)
 * @src: the caller's struct (checked by rtd_opts_check()), or NULL
 * @known: as for rtd_opts_check()
 *
 * Copies the caller's bytes up to the shorter of the two sizes and zeroes
 * the rest, then sets @dst's sz to @dst_size: every field can be read
 * from @dst whatever the caller's version.
 *
 * Returns: 0 or -RTD_E_INVAL (as rtd_opts_check(); @dst is then zeroed).
 */
RTD_API int rtd_opts_copy(void *dst, size_t dst_size, const void *src, size_t known);

/* The end of @field in struct @type: the @known of rtd_opts_check(). */
#define RTD_OPTS_END(type, field)                                              \
	(offsetof(struct type, field) + sizeof(((struct type *)0)->field))

/* Check @opts (a struct @type *) knowing the fields up to @last. */
#define RTD_OPTS_VALID(opts, type, last) rtd_opts_check((opts), RTD_OPTS_END(type, last))

/* Declare a zero-filled options struct with its size set, as libbpf's
 * LIBBPF_OPTS; give at least one field: RTD_OPTS(x_opts, o, .flag = 1). */
#define RTD_OPTS(type, name, ...) struct type name = {.sz = sizeof(struct type), __VA_ARGS__}

/* ---- clocks ----------------------------------------------------------------- */

/**
 * enum rtd_clock_domain - what a source's timestamps count
 * @RTD_CLOCK_NONE: not known yet (before a source's header)
 * @RTD_CLOCK_MONOTONIC: CLOCK_MONOTONIC nanoseconds (perf_event with
 *                       use_clockid = CLOCK_MONOTONIC; a merge)
 * @RTD_CLOCK_QPC: EventPipe's QueryPerformanceCounter ticks at the trace's
 *                 frequency (on Linux: CLOCK_MONOTONIC ns, 10^9 per second)
 * @RTD_CLOCK_GO: Go trace nanoseconds as Go's reader computes them (each
 *                generation's ticks times 10^9 / its Frequency; Go
 *                1.5-1.21: since the first event)
 */
enum rtd_clock_domain {
	RTD_CLOCK_NONE = 0,
	RTD_CLOCK_MONOTONIC,
	RTD_CLOCK_QPC,
	RTD_CLOCK_GO,
};

/* struct rtd_clock.flags */
#define RTD_CLOCK_HAS_MONO 1u /* @ref_mono anchors the domain to CLOCK_MONOTONIC */
#define RTD_CLOCK_HAS_WALL 2u /* @ref_wall anchors it to wall-clock time */

/* An error bound that is not known. */
#define RTD_CLOCK_ERROR_UNKNOWN UINT64_MAX

/**
 * struct rtd_clock - a clock domain and its conversion
 * @domain: enum rtd_clock_domain
 * @flags: RTD_CLOCK_HAS_MONO, RTD_CLOCK_HAS_WALL
 * @freq: ticks per second of the domain (10^9 for nanoseconds); at most
 *        RTD_CLOCK_MAX_FREQ
 * @ref_ts: a time in the domain...
 * @ref_mono: ...and CLOCK_MONOTONIC nanoseconds at that moment
 *            (with RTD_CLOCK_HAS_MONO)
 * @ref_wall: ...and wall-clock nanoseconds since the Unix epoch, UTC
 *            (with RTD_CLOCK_HAS_WALL)
 * @mono_error_ns: bound on |converted - true| CLOCK_MONOTONIC time,
 *                 RTD_CLOCK_ERROR_UNKNOWN when not known (no anchor)
 * @wall_error_ns: the same for wall time
 *
 * mono = @ref_mono + (ts - @ref_ts) * 10^9 / @freq, wall likewise.
 */
struct rtd_clock {
	unsigned domain;
	unsigned flags;
	uint64_t freq;
	int64_t ref_ts;
	int64_t ref_mono;
	int64_t ref_wall;
	uint64_t mono_error_ns;
	uint64_t wall_error_ns;
};

/* The highest tick frequency a clock may have (9 GHz: a remainder times
 * 10^9 stays inside 64 bits). */
#define RTD_CLOCK_MAX_FREQ 9000000000ull

/**
 * rtd_clock_ticks_to_ns - ticks at a frequency as nanoseconds
 * @ticks: a tick count (may be negative)
 * @freq: ticks per second (1..RTD_CLOCK_MAX_FREQ; other values give @ticks)
 *
 * Exact for any count (no 64-bit overflow in the intermediate product);
 * rounds toward zero; saturates at INT64_MIN / INT64_MAX.
 *
 * Returns: the nanoseconds.
 */
RTD_API int64_t rtd_clock_ticks_to_ns(int64_t ticks, uint64_t freq);

/**
 * rtd_clock_to_mono - a time of a clock's domain as CLOCK_MONOTONIC ns
 * @c: the clock
 * @ts: a time in @c's domain
 *
 * Without RTD_CLOCK_HAS_MONO the domain is not anchored: the result is
 * (@ts - @ref_ts) in nanoseconds, on the domain's own time line (so two
 * such times still order and subtract correctly).
 *
 * Returns: the nanoseconds.
 */
RTD_API int64_t rtd_clock_to_mono(const struct rtd_clock *c, int64_t ts);

/**
 * rtd_clock_to_wall - a time of a clock's domain as wall-clock time
 * @c: the clock
 * @ts: a time in @c's domain
 * @wall: gets nanoseconds since the Unix epoch, UTC
 *
 * Returns: 0, or -RTD_E_NOTFOUND when @c has no wall anchor.
 */
RTD_API int rtd_clock_to_wall(const struct rtd_clock *c, int64_t ts, int64_t *wall);

/**
 * rtd_clock_domain_name - a clock domain's name
 * @domain: enum rtd_clock_domain
 *
 * Returns: "monotonic", "qpc", "go", "none", or "unknown".
 */
RTD_API const char *rtd_clock_domain_name(unsigned domain);

/* ---- records ---------------------------------------------------------------- */

/**
 * enum rtd_record_kind - what a record says
 * @RTD_REC_PROCESS: a process (@pid) and its @name (NULL: not known)
 * @RTD_REC_THREAD: a thread (@pid, @tid) and its @name; again whenever
 *                  the name changes
 * @RTD_REC_SAMPLE: a stack sampled on a thread: @stack, @value (a count or
 *                  a weight), @name (what was sampled), @fields
 * @RTD_REC_SLICE_BEGIN: a slice opens on (@pid, @tid, @lane): @name,
 *                       @category, @fields
 * @RTD_REC_SLICE_END: the slice open last on (@pid, @tid, @lane) closes
 * @RTD_REC_INSTANT: an event at a point: @name, @category, @fields, and
 *                   @stack when the event has one
 * @RTD_REC_COUNTER: a value of the series @name: @value, @unit
 * @RTD_REC_FLOW: an arrow @flow between the records of two threads,
 *                @phase begin, step or end
 * @RTD_REC_ERROR: the stream failed: @code, @offset, @message
 * @RTD_REC_SLICE: a whole slice on (@pid, @tid, @lane) that ENDED at
 *                 @mono and began @dur ns before: @name, @category,
 *                 @fields. A source that learns of a slice only when it
 *                 ends (an off-CPU wait: its switch-in) gives it so, in
 *                 the order of the ends, and never holds slices back to
 *                 sort their begins: a consumer must accept these out of
 *                 begin order (Perfetto's TrackEvent and Chrome JSON's
 *                 "X" events both do). It nests like a begin/end pair.
 */
enum rtd_record_kind {
	RTD_REC_NONE = 0,
	RTD_REC_PROCESS,
	RTD_REC_THREAD,
	RTD_REC_SAMPLE,
	RTD_REC_SLICE_BEGIN,
	RTD_REC_SLICE_END,
	RTD_REC_INSTANT,
	RTD_REC_COUNTER,
	RTD_REC_FLOW,
	RTD_REC_ERROR,
	RTD_REC_SLICE,
	RTD_REC_KINDS,
};

/**
 * rtd_record_kind_name - a record kind's name
 * @kind: enum rtd_record_kind
 *
 * Returns: "process", "thread", "sample", "slice_begin", "slice_end",
 * "instant", "counter", "flow", "error", "slice", or "unknown".
 */
RTD_API const char *rtd_record_kind_name(unsigned kind);

/* A flow's place (struct rtd_record.phase). */
enum rtd_flow_phase {
	RTD_FLOW_BEGIN = 1,
	RTD_FLOW_STEP,
	RTD_FLOW_END,
};

/* A field's type (struct rtd_field.type). */
enum rtd_field_type {
	RTD_FIELD_I64 = 1,
	RTD_FIELD_U64,
	RTD_FIELD_F64,
	RTD_FIELD_STR,
};

/**
 * struct rtd_field - one named value of a record
 * @name: its name (interned)
 * @type: enum rtd_field_type
 * @i: RTD_FIELD_I64 value
 * @u: RTD_FIELD_U64 value
 * @f: RTD_FIELD_F64 value
 * @s: RTD_FIELD_STR value (borrowed like the record)
 */
struct rtd_field {
	const char *name;
	unsigned type;
	int64_t i;
	uint64_t u;
	double f;
	const char *s;
};

/**
 * struct rtd_rec_frame - one frame of a record's stack
 * @ip: its address (0 when the source gives only a name)
 * @name: its function ("module!Namespace.Method(signature)", a Go
 *        function...), NULL when the source cannot name it (interned)
 * @module: the image it is in, NULL when not known or part of @name
 *          (interned)
 * @file: its source file, NULL when not known (interned; a Go trace's
 *        stacks say it)
 * @line: its line in @file, 0 when not known
 * @kind: what code it is, an enum rtd_frame_kind (rtdiag/profile.h:
 *        kernel, native, managed JIT code...) when the source knows it
 *        (perf's profiler does), 0 (unknown) otherwise: a consumer may
 *        then tell it from @module
 * @inlined: the frame was inlined into the next one toward the root (the
 *           same @ip; DWARF's inline tree)
 */
struct rtd_rec_frame {
	uint64_t ip;
	const char *name;
	const char *module;
	const char *file;
	uint64_t line;
	uint8_t kind;
	bool inlined;
};

/**
 * struct rtd_stack - an interned stack
 * @id: its id in its source (1, 2, ...; equal stacks have one id)
 * @n: frames in @frames
 * @frames: leaf first
 */
struct rtd_stack {
	uint32_t id;
	uint32_t n;
	const struct rtd_rec_frame *frames;
};

/**
 * struct rtd_record - one record, borrowed until the next pull of its source
 * @kind: enum rtd_record_kind
 * @source: index of its source in a merge (0 outside one)
 * @ts: time in the source's clock domain
 * @mono: @ts as CLOCK_MONOTONIC nanoseconds (see rtd_clock_to_mono();
 *        never less than the source's previous record's)
 * @pid: OS process id (0: not known)
 * @shape: the layout of the record, when its source says it (0: not
 *         said): records of one source with the same non-zero @shape
 *         have the same @kind, @name, @category and @fields array (one
 *         address, the same names, types and order; only the values
 *         change; in one batch of rtd_source_next_batch() a shape's
 *         records after the first have their own arrays, with the same
 *         names, types and order), so a consumer may find what it reads
 *         in them once per shape, in a table indexed by it: a source
 *         numbers its shapes
 *         1, 2, 3... (the Go source's go_events, one per event type and
 *         argument count)
 * @tid: OS thread id; 0 for the process's own track
 * @lane: a sub-track of the thread's (0: the thread's own)
 * @name: what it is (interned or borrowed; see the kinds)
 * @category: a class of @name ("goroutine", "gc", a provider...), or NULL
 * @stack: the interned stack of a sample or instant, or NULL
 * @value: a sample's weight or count, a counter's value
 * @unit: a counter's or sample's unit ("ns", "bytes", "count"), or NULL
 * @nfields: entries in @fields
 * @fields: named values
 * @flow: a flow's id
 * @phase: a flow's enum rtd_flow_phase
 * @code: an error record's code (negative errno or -RTD_E_*)
 * @offset: an error record's byte offset in the source's input
 * @message: an error record's message ("" when none)
 * @dur: a RTD_REC_SLICE's length in ns (it began at @mono - @dur)
 * @activity: the activity an EventPipe event was written in (its header's
 *            ActivityID, as TraceEvent reads it); all zero when it has none
 */
struct rtd_record {
	unsigned kind;
	uint32_t source;
	int64_t ts;
	int64_t mono;
	uint32_t pid;
	uint32_t shape;
	uint64_t tid;
	uint64_t lane;
	const char *name;
	const char *category;
	const struct rtd_stack *stack;
	double value;
	const char *unit;
	size_t nfields;
	const struct rtd_field *fields;
	uint64_t flow;
	unsigned phase;
	int code;
	uint64_t offset;
	const char *message;
	int64_t dur;
	uint8_t activity[16];
};

/* ---- interning: strings and stacks that live as long as their source ---- */

/* Caps of an interner, each named for what it bounds. */
#define RTD_INTERN_MAX_STRINGS (1u << 22)         /* distinct strings */
#define RTD_INTERN_MAX_STRING_BYTES (256u << 20)  /* their bytes together */
#define RTD_INTERN_MAX_STACKS (1u << 22)          /* distinct stacks */
#define RTD_INTERN_MAX_FRAMES (1u << 26)          /* frames of all stacks */
#define RTD_INTERN_MAX_DEPTH 4096u                /* frames of one stack */

typedef struct rtd_intern rtd_intern;

/**
 * rtd_intern_new - an empty interner of strings and stacks
 *
 * Returns: the interner, or NULL when out of memory.
 */
RTD_API rtd_intern *rtd_intern_new(void);

/**
 * rtd_intern_free - free an interner and everything it interned
 * @in: the interner; NULL does nothing
 */
RTD_API void rtd_intern_free(rtd_intern *in);

/**
 * rtd_intern_string - the one copy of a string
 * @in: the interner
 * @s: the bytes (need not be NUL-terminated)
 * @len: their count (at most RTD_CAP_STRING)
 * @out: gets the NUL-terminated copy, valid until @in is freed; equal
 *       strings get the same pointer
 *
 * Returns: 0, -ENOMEM, or -RTD_E_CAP (RTD_INTERN_MAX_STRINGS,
 * RTD_INTERN_MAX_STRING_BYTES or one string's RTD_CAP_STRING).
 */
RTD_API int rtd_intern_string(rtd_intern *in, const char *s, size_t len, const char **out);

/**
 * rtd_intern_stack - the one copy of a stack
 * @in: the interner
 * @frames: the frames, leaf first; their names are interned too
 * @n: their count (at most RTD_INTERN_MAX_DEPTH)
 * @out: gets the stack, valid until @in is freed; equal stacks (same
 *       addresses, names, modules, files and lines) get the same pointer
 *       and id
 *
 * Returns: 0, -ENOMEM, or -RTD_E_CAP (RTD_INTERN_MAX_STACKS,
 * RTD_INTERN_MAX_FRAMES, RTD_INTERN_MAX_DEPTH, or a name's cap).
 */
RTD_API int rtd_intern_stack(rtd_intern *in, const struct rtd_rec_frame *frames, size_t n,
			     const struct rtd_stack **out);

/**
 * rtd_intern_counts - what an interner holds
 * @in: the interner
 * @strings: gets the distinct strings (may be NULL)
 * @stacks: gets the distinct stacks (may be NULL)
 */
RTD_API void rtd_intern_counts(const rtd_intern *in, size_t *strings, size_t *stacks);

/* ---- sources ------------------------------------------------------------ */

typedef struct rtd_source rtd_source;

/* rtd_source_each()'s callback: 0 to go on, non-zero to stop */
typedef int (*rtd_record_fn)(void *ctx, const struct rtd_record *rec);

/**
 * struct rtd_source_take - rtd_source_each()'s walk, as a source's @each
 *                          hands records to it
 * @fn: the caller's callback
 * @ctx: passed to @fn
 * @ret: @fn's non-zero value, when it stopped the walk
 * @floor: no record may be older: a record's @mono below it is raised to
 *         it (counted in @clamped); then @floor is the record's @mono
 * @clamped: records raised to @floor
 * @records: records handed to @fn, by kind
 * @bad: a record of no kind a record may have (RTD_REC_NONE, ERROR or
 *       past the kinds): the source's bug, not handed out; the walk stops
 *
 * rtd_source_each() fills it (the counts zero) and reads it back after
 * @each returns. rtd_source_take() makes the checks and counts for a
 * record and calls @fn; a source may make them in its own loop instead
 * (a record of a known kind, raised to @floor, @floor set, counted, then
 * @fn called, its non-zero value kept in @ret), with what its loop keeps
 * in registers written back before @each returns.
 */
struct rtd_source_take {
	rtd_record_fn fn;
	void *ctx;
	int ret;
	int64_t floor;
	uint64_t clamped;
	uint64_t records[RTD_REC_KINDS];
	struct rtd_record *bad;
};

/**
 * struct rtd_source_ops - what a source is made of
 * @sz: sizeof(struct rtd_source_ops)
 * @name: the source's kind ("nettrace", "gotrace", "merge"...)
 * @next: fill @rec (zeroed before the call) with the next record: @kind,
 *        @ts, @mono and what the kind needs (@source is set for you).
 *        Return 1 with a record, 0 at the end, or a negative error; with
 *        an error it may set @rec->offset and @rec->message (copied).
 *        Never called again after it returned 0 or an error.
 * @clock: fill @out with the clock now (it may change as the source
 *         learns it: a header, a Go clock snapshot); return 0
 * @free: free the implementation (may be NULL)
 * @fd: a live source: a descriptor that polls readable when the source
 *      may have something new after its @next said RTD_SOURCE_IDLE (an
 *      eventfd, an epoll descriptor), owned by the source; -1 or a NULL
 *      @fd: the source is never idle. A live @next may return
 *      RTD_SOURCE_IDLE with @rec->mono its watermark, and must not block.
 * @next_own: optional, used in place of @next: the next record in a
 *            record the source owns (so what stays the same from one
 *            record to the next is not written again), valid until the
 *            next call: *@out points to @scratch when called; the source
 *            points it to its own record, or fills @scratch, which is NOT
 *            zeroed (clear it first). Returns as @next; an error or
 *            RTD_SOURCE_IDLE is said in *@out as @next says it in @rec.
 *            rtd_source_next() may change the record's @mono (raised to
 *            the previous record's) and @source before handing it out.
 * @next_batch: optional (with @next_own): up to @max (at least 1) next
 *              records at once, for rtd_source_next_batch(): pointers to
 *              records the source owns in @out[0..n-1], all valid until
 *              the next call (so a record of a shape given twice in one
 *              batch is in two records of the shape's); returns n > 0,
 *              0 at the end, or a negative error said in @scratch (not
 *              zeroed) as @next_own says it. Records it could not finish
 *              before an error or the end are given out first; the
 *              error or end comes at the next call.
 * @each: optional (with @next_own): the next records handed one by one
 *        to the caller's callback, for rtd_source_each(): each in a
 *        record the source owns, valid until the callback returns, and
 *        each finished before the next is read (so no record has to
 *        outlive another's reading). Hand each record with
 *        rtd_source_take(@t, rec), or make its checks and counts in the
 *        source's own loop (struct rtd_source_take says which) and call
 *        @t->fn itself. When a record stops the walk (rtd_source_take()
 *        or @t->fn returned non-zero), return 1 at once (the next record
 *        comes at the next call); return 0 at the end, or a negative
 *        error said in @scratch (not zeroed) as @next_own says it.
 */
struct rtd_source_ops {
	size_t sz;
	const char *name;
	int (*next)(void *impl, struct rtd_record *rec);
	int (*clock)(void *impl, struct rtd_clock *out);
	void (*free)(void *impl);
	int (*fd)(void *impl);
	int (*next_own)(void *impl, struct rtd_record *scratch, struct rtd_record **out);
	int (*next_batch)(void *impl, struct rtd_record *scratch, struct rtd_record **out,
			  size_t max);
	int (*each)(void *impl, struct rtd_record *scratch, struct rtd_source_take *t);
};

/**
 * rtd_source_new - a source from its operations
 * @ops: the operations (checked with rtd_opts_check(); borrowed: they
 *       must outlive the source); @next and @clock are required
 * @impl: passed to them; freed with @ops->free by rtd_source_free()
 *
 * Returns: the source, or NULL when out of memory or @ops is invalid
 * (then @impl is not freed).
 */
RTD_API rtd_source *rtd_source_new(const struct rtd_source_ops *ops, void *impl);

/**
 * rtd_source_free - free a source
 * @s: the source; NULL does nothing
 */
RTD_API void rtd_source_free(rtd_source *s);

/**
 * rtd_source_impl_of - a source's @impl, when it was made with @ops
 * @s: a source; NULL gives NULL
 * @ops: the operations it would have been made with (compared by address)
 *
 * For a source's own functions beyond the contract (a live source's
 * stop, its statistics): the implementation finds its state again, and a
 * source of another kind is told apart.
 *
 * Returns: the @impl given to rtd_source_new(), or NULL when @s was made
 * with other operations.
 */
RTD_API void *rtd_source_impl_of(rtd_source *s, const struct rtd_source_ops *ops);

/* rtd_source_next(): a live source has no record now (see "Live sources"). */
#define RTD_SOURCE_IDLE 2

/**
 * rtd_source_next - the next record
 * @s: the source
 * @rec: gets the record, borrowed until the next call on @s
 *
 * A record whose converted time is earlier than the previous record's
 * (a clock re-anchored backwards), or than a watermark the source gave,
 * gets that @mono instead, so a source's @mono never decreases and never
 * breaks its promise; rtd_source_stats() counts those (@clamped).
 *
 * Returns: 1 with a record; 0 at the end (and again after it);
 * RTD_SOURCE_IDLE from a live source that has no record now, never
 * blocking: *@rec is then a record of kind RTD_REC_NONE whose @mono is the
 * watermark (no later record of @s is older; INT64_MIN when it cannot say
 * yet): wait with rtd_source_wait() and call again; or a negative error,
 * with *@rec the error record {code, offset, message}; every later call
 * returns the same error and record. A consumer that reads only finished
 * sources (files) never sees RTD_SOURCE_IDLE.
 */
RTD_API int rtd_source_next(rtd_source *s, const struct rtd_record **rec);

/**
 * rtd_source_next_batch - the next records, up to @max at once
 * @s: the source
 * @recs: gets the records, in order, all borrowed until the next call on
 *        @s; at an error, @recs[0] is the error record
 * @max: room in @recs (at least 1)
 *
 * The records, their order, clamping and counts are what as many calls of
 * rtd_source_next() would give; only the calls and checks are made once
 * per batch where the source hands records out in batches
 * (rtd_source_ops.next_batch: the Go source's go_events). Any other
 * source gives one record a call. A batch may be shorter than @max with
 * more to come.
 *
 * Returns: the records given (1..@max); 0 at the end (and again after
 * it); -EAGAIN from a live source that has no record now (where
 * rtd_source_next() says RTD_SOURCE_IDLE: @recs[0] is the watermark
 * record; not an error, call again); or another negative error with
 * @recs[0] the error record, every later call returning the same.
 */
RTD_API int rtd_source_next_batch(rtd_source *s, const struct rtd_record **recs, size_t max);

/**
 * rtd_source_each - hand the next records to a callback, one by one
 * @s: the source
 * @fn: called with each record, borrowed until @fn returns; returns 0
 *      for the next record, or a non-zero value to stop
 * @ctx: passed to @fn
 *
 * The records, their order, clamping and counts are what as many calls of
 * rtd_source_next() would give, and the two may be mixed. A source that
 * hands out records itself (rtd_source_ops.each: the Go source's
 * go_events, a nettrace source in stream order) fills each in its own record and calls @fn from inside its
 * reading loop, with no batch to keep: what a record points to need only
 * last while @fn runs. Any other source is pulled with rtd_source_next().
 *
 * Returns: @fn's non-zero value when it stopped the walk (the records after
 * that one come at the next call); 0 at the end (and again after it);
 * RTD_SOURCE_IDLE from a live source that has no record now (wait with
 * rtd_source_wait() and call again); or a negative
 * error of the source, whose error record rtd_source_next() then gives;
 * -RTD_E_INVAL when @s or @fn is NULL (nothing read).
 * A negative value from @fn is returned as it is: keep it in @ctx to tell
 * the two apart.
 */
RTD_API int rtd_source_each(rtd_source *s, rtd_record_fn fn, void *ctx);

/**
 * rtd_source_take - hand one record to rtd_source_each()'s callback
 * @t: the walk, as a source's rtd_source_ops.each was given it
 * @rec: the record, in a record the source owns
 *
 * For a source's @each: the checks and counts rtd_source_next() makes on
 * a record (its kind, its @mono raised to @t->floor, counted), then
 * @t->fn with it.
 *
 * Returns: 0 to go on; non-zero to stop the walk (@fn's value, kept in
 * @t->ret, or 1 for a record of no known kind, kept in @t->bad and not
 * handed out): then @each returns 1.
 */
RTD_API int rtd_source_take(struct rtd_source_take *t, struct rtd_record *rec);

/**
 * rtd_source_clock - the source's clock now
 * @s: the source
 * @out: gets the clock
 *
 * A file source learns its clock from its header, a Go trace from its
 * clock snapshots: until then the domain may be RTD_CLOCK_NONE or lack
 * an anchor. Ask after the first record.
 *
 * Returns: 0, or the error of the source's clock operation.
 */
RTD_API int rtd_source_clock(rtd_source *s, struct rtd_clock *out);

/**
 * rtd_source_name - the source's kind
 * @s: the source
 *
 * Returns: its operations' name ("nettrace", ...).
 */
RTD_API const char *rtd_source_name(const rtd_source *s);

/**
 * struct rtd_source_stats - what a source has given out
 * @records: records of each kind, by enum rtd_record_kind
 * @clamped: records whose @mono was raised to the previous one's
 */
struct rtd_source_stats {
	uint64_t records[RTD_REC_KINDS];
	uint64_t clamped;
};

/**
 * rtd_source_stats - counts of the records given out so far
 * @s: the source
 * @out: gets the counts
 */
RTD_API void rtd_source_stats(const rtd_source *s, struct rtd_source_stats *out);

/**
 * rtd_source_error - build the error record of a failed source (for
 * implementations of @next that fail in a helper)
 * @rec: the record passed to @next
 * @code: the error (negative)
 * @offset: where in the input
 * @message: why ("" for none); copied by rtd_source_next()
 *
 * Returns: @code, to be returned by @next.
 */
RTD_API int rtd_source_error(struct rtd_record *rec, int code, uint64_t offset,
			     const char *message);

/* ---- live sources --------------------------------------------------------- */

/**
 * rtd_source_fd - a live source's wake-up descriptor
 * @s: the source
 *
 * After rtd_source_next() returned RTD_SOURCE_IDLE, the descriptor polls
 * readable (POLLIN) when the source may have a record or a newer
 * watermark; a wake-up may be spurious (call next again, it may be idle
 * again). The source owns it: do not read or close it.
 *
 * Returns: the descriptor, or -1 for a source that is never idle.
 */
RTD_API int rtd_source_fd(rtd_source *s);

/**
 * rtd_source_wait - wait until a live source may have something new
 * @s: the source
 * @timeout_ms: at most this long (-1: no limit; 0: do not wait)
 *
 * Polls rtd_source_fd() (a source that is never idle returns at once).
 *
 * Returns: 1 when woken, 0 on timeout, or a negative errno (-EINTR when a
 * signal came: check what it asked and call again).
 */
RTD_API int rtd_source_wait(rtd_source *s, int timeout_ms);

/**
 * struct rtd_source_thread_opts - options for rtd_source_thread()
 * @sz: sizeof(struct rtd_source_thread_opts)
 * @max_records: records the queue holds at most (0: 4096; at most
 *               RTD_SOURCE_THREAD_MAX_RECORDS); a full queue makes the
 *               thread wait, so the input is read no faster than it is
 *               consumed
 * @max_bytes: their copied fields and strings at most (0: 64 MiB)
 * @lag_ns: how late the input may give a record after its time (0: 2 s):
 *          while the queue is empty the watermark is now - @lag_ns on
 *          CLOCK_MONOTONIC; a record that comes later than that is
 *          clamped to the watermark and counted (rtd_source_stats())
 * @stop: called by rtd_source_free() (from the caller's thread) to make a
 *        blocked read of the input return (stop an EventPipe session...);
 *        may be NULL when the input ends on its own
 * @stop_ctx: passed to @stop
 * @lag_fn: the lag now, in place of @lag_ns, or NULL: asked whenever the
 *          queue is empty (from the caller's thread), for an input that
 *          learns how late it may be (a Go trace's version); it must
 *          never grow, so that the watermark never goes back
 * @lag_ctx: passed to @lag_fn
 */
struct rtd_source_thread_opts {
	size_t sz;
	size_t max_records;
	size_t max_bytes;
	int64_t lag_ns;
	void (*stop)(void *ctx);
	void *stop_ctx;
	int64_t (*lag_fn)(void *ctx);
	void *lag_ctx;
};

#define RTD_SOURCE_THREAD_MAX_RECORDS (1u << 24) /* records in one queue */

/**
 * rtd_source_thread - a blocking source read on a thread of its own, as a
 * live source
 * @in: a source whose rtd_source_next() blocks until records come (an
 *      EventPipe session's, rtd_ipc_session_source(), a Go trace read
 *      from a socket); owned from now on: freed by rtd_source_free() of
 *      the result, after the thread is joined
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The thread pulls @in into a bounded queue of copied records (their
 * fields, names and strings; stacks and interned strings of @in are
 * shared, as they live as long as @in); rtd_source_next() of the result
 * takes from the queue and is RTD_SOURCE_IDLE while it is empty. The
 * clock is @in's (asked after its first record). @in's end or error is
 * the result's, after the records before it.
 *
 * Returns: the live source, or NULL: -RTD_E_INVAL, -ENOMEM, or a
 * thread's -errno (then @in is freed too).
 */
RTD_API rtd_source *rtd_source_thread(rtd_source *in, const struct rtd_source_thread_opts *opts,
				      int *err);

/* ---- merge ---------------------------------------------------------------- */

/**
 * struct rtd_merge_opts - options for rtd_source_merge()
 * @sz: sizeof(struct rtd_merge_opts)
 */
struct rtd_merge_opts {
	size_t sz;
};

/**
 * rtd_source_merge - N sources as one, in order of converted time
 * @srcs: the sources (borrowed: free them after the merge); each must
 *        give records with nondecreasing @mono, as rtd_source_next() does
 * @n: their count (0: an empty stream)
 * @opts: options, or NULL
 *
 * A k-way merge on a min-heap keyed by (@mono, source index): equal times
 * come out lowest index first, each source's records in its own order.
 * It holds one pending record per source, borrowed from that source until
 * the merge hands it out and is pulled again, so its memory is O(@n).
 * Records come out with @source set to their source's index. A source at
 * its end drops out; a source's error ends the merge: its error record
 * (with @source) is returned, then again on every call.
 *
 * Live sources (the watermark rule): a source that returns
 * RTD_SOURCE_IDLE holds no place in the heap; the merge gives out its
 * smallest pending record only when it is no later than every idle
 * source's watermark (so at equal times the index order may yield to the
 * watermark), and asks each idle source again at every call. When it
 * can give nothing the merge is itself idle: RTD_SOURCE_IDLE with the
 * smallest of its pending records' times and idle watermarks, and its
 * rtd_source_fd() (an epoll descriptor over its sources' descriptors)
 * wakes when one of them does. Merges of live merges nest.
 *
 * The merge's clock is CLOCK_MONOTONIC, its error the largest of its
 * sources' (unknown when one of them has no anchor: their times were
 * merged on their own time lines).
 *
 * Returns: the merged source (rtd_source_free() it before its sources),
 * or NULL when out of memory or @opts is invalid.
 */
RTD_API rtd_source *rtd_source_merge(rtd_source *const *srcs, size_t n,
				     const struct rtd_merge_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_SOURCE_H */
