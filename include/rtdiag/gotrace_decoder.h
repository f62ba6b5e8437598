/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_decoder.h - Go execution traces: a streaming decoder (raw
 * and ordered mode), its event types and tallies.
 *
 * Decoding is push-based: rtd_gotrace_dec_feed() bytes as they arrive,
 * rtd_gotrace_dec_next() events out, rtd_gotrace_dec_finish() at end of
 * input. In raw mode events come out in file order as soon as their bytes
 * are in, with memory bounded by the largest event plus the string and
 * stack tables. In ordered mode the input is kept and, at finish, events
 * come out in Go's global order after Go's validation (the frontier merge
 * of Go 1.19's internal/trace order.go and parser.go).
 *
 * Pointers inside a returned event (names, strings, frames, raw args) are
 * borrowed: valid until the next call on the same decoder.
 */
#ifndef RTDIAG_GOTRACE_DECODER_H
#define RTDIAG_GOTRACE_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The event tables, from which the enums below are made. */
#include "rtdiag/gotrace_events.h"

/* Old-format event types (Go's runtime/trace.go numbering):
 * RTD_GO_EV_NONE (0), RTD_GO_EV_BATCH (1) ... RTD_GO_EV_CPU_SAMPLE (49). */
#define RTD_GOTRACE1_ENUM_(id, num, ...) RTD_GO_EV_##id = num,
enum rtd_gotrace_type {
	RTD_GOTRACE1_EVENTS(RTD_GOTRACE1_ENUM_)
	RTD_GO_EV_COUNT = RTD_GO_EV_CPU_SAMPLE + 1,
};
#undef RTD_GOTRACE1_ENUM_

/* New-format (Go 1.22+) event types (Go's tracev2 numbering):
 * RTD_GO2_EV_EVENT_BATCH (1) ... RTD_GO2_EV_END_OF_GENERATION (52), the
 * experimental RTD_GO2_EV_SPAN (128) ... RTD_GO2_EV_GOROUTINE_STACK_FREE
 * (136), and RTD_GO2_EV_READER_SYNC. */
#define RTD_GOTRACE2_ENUM_(id, num, ...) RTD_GO2_EV_##id = num,
enum rtd_gotrace2_type {
	RTD_GO2_EV_NONE = 0,
	RTD_GOTRACE2_EVENTS(RTD_GOTRACE2_ENUM_)
	/*
	 * Ordered mode only, never on the wire: the Sync event Go's trace
	 * reader adds per generation (name "Sync", m and p -1, g 0, no
	 * args; @off is where the generation's batches end). For go 1.22
	 * and 1.23 traces one follows each generation's events, as Go
	 * 1.22/1.23 emit it; for go 1.25+ traces one precedes each
	 * generation and one ends the trace, as Go 1.25+ emit it. Its
	 * time is the last event's + 1 (or, before a generation, that
	 * generation's first batch time if later). A Go 1.25+ Sync at the
	 * start of a generation with a clock snapshot has 4 args:
	 * clock_time (the snapshot's trace time, ns), clock_mono,
	 * clock_sec and clock_nsec (wall clock), as Go's Sync event has.
	 */
	RTD_GO2_EV_READER_SYNC = 256,
};
#undef RTD_GOTRACE2_ENUM_

/* Fake P numbers Go's parser gives events in ordered mode. */
#define RTD_GOTRACE_TIMER_P 1000001
#define RTD_GOTRACE_NETPOLL_P 1000002
#define RTD_GOTRACE_SYSCALL_P 1000003
#define RTD_GOTRACE_GC_P 1000004
#define RTD_GOTRACE_PROFILE_P 1000005

/* Caps on sizes taken from input. */
#define RTD_GOTRACE_MAX_STRING 1000000u    /* one string (Go's own limit) */
#define RTD_GOTRACE_MAX_FRAMES 1000u       /* frames in one stack (Go's) */
#define RTD_GOTRACE_MAX_EVENT_BYTES 65536u /* one length-prefixed event */
#define RTD_GOTRACE_MAX_ARGS 8u            /* args of a non-stack event */
#define RTD_GOTRACE_MAX_STRINGS (1u << 22) /* entries in the string table */
#define RTD_GOTRACE_MAX_STACKS (1u << 22)  /* entries in the stack table */
#define RTD_GOTRACE_MAX_STRING_BYTES (512u << 20) /* all strings together */
#define RTD_GOTRACE_MAX_PROCS 65536u       /* distinct P ids */
/* events waiting in ordered mode's re-sort window (Go 1.7-1.21): it spans
 * the longest a GoSysExit moves back, milliseconds in real traces */
#define RTD_GOTRACE_MAX_WINDOW (1u << 24)

enum rtd_gotrace_mode {
	RTD_GOTRACE_RAW = 0,     /* file order, streaming */
	RTD_GOTRACE_ORDERED = 1, /* Go's global order and validation */
};

/*
 * Decoder flags (struct rtd_gotrace_opts.flags).
 *
 * RTD_GOTRACE_RESOLVE (raw mode): every string and stack id an event
 * names resolves, although Go writes the tables after the events that use
 * them. New format: before a generation's first event comes out, its
 * Strings and Stacks batches are read ahead (with a source, by reading
 * the input again; without one the generation's bytes are kept until it
 * is handed out: memory one generation). Old format: with a source, the
 * whole input is read once ahead for its strings and stacks (the stack
 * table is written at the end of the trace), at the first look-up of one
 * not defined yet; without a source the flag has no effect on the old
 * format. An error in a table read ahead is
 * reported where the table is, after the events before it.
 */
#define RTD_GOTRACE_RESOLVE 1u

/**
 * struct rtd_gotrace_opts - decoder options
 * @sz: sizeof(struct rtd_gotrace_opts), for compatibility
 * @mode: raw or ordered
 * @max_input: ordered mode keeps the input (Go 1.7-1.21 traces not when a
 *             source is set: rtd_gotrace_dec_set_source()): cap in bytes
 *             (0: 16 GiB); also the cap of a generation kept by
 *             RTD_GOTRACE_RESOLVE without a source
 * @flags: RTD_GOTRACE_RESOLVE or 0
 */
struct rtd_gotrace_opts {
	size_t sz;
	enum rtd_gotrace_mode mode;
	uint64_t max_input;
	unsigned flags;
};

struct rtd_gotrace_frame {
	uint64_t pc;
	uint64_t fn_id, file_id; /* string ids (0 in Go 1.5 traces) */
	const char *fn, *file;   /* resolved ("" when unknown) */
	uint64_t line;
};

/**
 * struct rtd_gotrace_event - one decoded event (all fields borrowed)
 * @off: byte offset of the event's first byte in the input
 * @type: enum rtd_gotrace_type (after Go's Local->global rewrite in
 *        ordered mode)
 * @name: Go's name for @type ("GoCreate")
 * @ts: raw mode: absolute CPU ticks; ordered mode: nanoseconds since the
 *      first event, computed exactly as Go's parser does
 * @ticks: raw mode: absolute ticks at which the event was written (the
 *         wire value; differs from @ts for CPU samples); 0 in ordered mode
 * @seq: Go 1.5 traces: absolute sequence number; else 0
 * @p: P id (-1 for none; fake Ps in ordered mode)
 * @g: goroutine
 * @stack: stack id (0: none)
 * @nargs: number of @args; @argnames names them (Go's names)
 * @args: Go's event arguments (after timestamp, sequence and stack)
 * @nsargs: number of string arguments; @sargnames, @sargs (a string id
 *          not seen yet resolves to ""; in raw mode a P's batch may use an
 *          id that a batch later in the file defines)
 * @nraw: wire arguments as read (timestamp delta first, except for Batch,
 *        Frequency, Stack, TimerGoroutine); @raw
 * @str_id, @str, @str_len: for String events
 * @nframes, @frames: for Stack events (@args[0] is the id)
 * @gen: new format (Go 1.22+): the generation; 0 in the old format
 * @m: new format: the thread (M) of the event's batch, -1 for none
 *
 * New format (rtd_gotrace_dec_version() >= 1022): @type numbers the
 * events of Go's tracev2 tables (RTD_GO2_EV_*), not enum rtd_gotrace_type;
 * @raw holds every wire argument (for Stack the frames too), @str/@str_len
 * an event's trailing data (String, ExperimentalBatch). In ordered mode
 * @args are the arguments after the timestamp delta and @ts is in
 * nanoseconds, as Go's parser gives them; UserTaskEnd then also has its
 * task's parent (@args[2], "parent_task"; 0: none or not known) and name
 * (@sargs[0], "name"; "" when the task began before the trace), found
 * however many generations back the task began, as Go's reader does.
 */
struct rtd_gotrace_event {
	uint64_t off;
	unsigned type;
	const char *name;
	int64_t ts;
	int64_t ticks;
	int64_t seq;
	int64_t p;
	uint64_t g;
	uint64_t stack;
	unsigned nargs;
	uint64_t args[RTD_GOTRACE_MAX_ARGS];
	const char *const *argnames;
	unsigned nsargs;
	const char *sargs[2];
	size_t sarg_lens[2];
	const char *const *sargnames;
	unsigned nraw;
	const uint64_t *raw;
	uint64_t str_id;
	const char *str;
	size_t str_len;
	size_t nframes;
	const struct rtd_gotrace_frame *frames;
	uint64_t gen;
	int64_t m;
};

typedef struct rtd_gotrace_dec rtd_gotrace_dec;

/**
 * rtd_gotrace_dec_new - create a decoder
 * @opts: options, or NULL for raw mode
 *
 * Returns: the decoder, or NULL when out of memory or @opts is invalid.
 */
RTD_API rtd_gotrace_dec *rtd_gotrace_dec_new(const struct rtd_gotrace_opts *opts);

/**
 * rtd_gotrace_dec_free - free a decoder
 * @d: the decoder, or NULL (no-op)
 */
RTD_API void rtd_gotrace_dec_free(rtd_gotrace_dec *d);

/**
 * rtd_gotrace_dec_feed - give the decoder more input
 * @d: the decoder
 * @buf: bytes, copied
 * @len: their count
 *
 * Returns: 0, -RTD_E_CAP when ordered mode would keep more than
 * max_input bytes, -ENOMEM, or -RTD_E_STATE after finish.
 */
RTD_API int rtd_gotrace_dec_feed(rtd_gotrace_dec *d, const void *buf, size_t len);

/**
 * typedef rtd_gotrace_read_at_fn - read the input again
 * @buf: where the bytes go
 * @len: how many
 * @off: offset in the input (the first byte fed is offset 0)
 * @ctx: the pointer given to rtd_gotrace_dec_set_source()
 *
 * Returns: the number of bytes read, fewer than @len only at the end of
 * the input, or a negative errno.
 */
typedef int64_t (*rtd_gotrace_read_at_fn)(void *buf, size_t len, uint64_t off,
					  void *ctx);

/**
 * rtd_gotrace_dec_set_source - let ordered mode read the input again
 * @d: an ordered-mode decoder, before the first feed
 * @read_at: reads the same bytes as are fed, at any offset (a regular file)
 * @ctx: passed to @read_at
 *
 * Go 1.7-1.21 traces are ordered by merging every P's batches, which
 * needs the input at random. Without a source the decoder keeps every
 * byte fed (memory about the input's size). With one it keeps none: it
 * notes where each batch is as bytes are fed and reads the batches again
 * during the merge, so its memory is bounded by the Ps, the goroutine
 * tables and the re-sort window, whatever the input's size. (Go 1.5/1.6
 * traces, sorted by a global sequence number, and the new format, ordered
 * one generation at a time, do not use it.)
 *
 * In raw mode a source serves RTD_GOTRACE_RESOLVE: the tables are read
 * ahead from it instead of keeping the input (without that flag raw mode
 * does not use it).
 *
 * Returns: 0, -EINVAL without @read_at, -RTD_E_STATE once input was fed.
 */
RTD_API int rtd_gotrace_dec_set_source(rtd_gotrace_dec *d,
				       rtd_gotrace_read_at_fn read_at, void *ctx);

/**
 * rtd_gotrace_dec_finish - mark the end of input
 * @d: the decoder
 *
 * In ordered mode this ends the index pass (Go 1.7-1.21) or the input;
 * the ordering and validation run as events are asked for.
 * Returns: 0, or a negative error (the message has the details).
 */
RTD_API int rtd_gotrace_dec_finish(rtd_gotrace_dec *d);

/**
 * rtd_gotrace_dec_next - the next event
 * @d: the decoder
 * @ev: filled in; its pointers stay valid until the next call on @d
 *
 * Returns: 1 with an event, 0 when more input is needed (or, after
 * finish, at the end), or a negative RTD_E_* error; after an error every
 * call returns it again. A truncated input gives every complete event
 * before the damage, then -RTD_E_TRUNCATED. In ordered mode an ordering
 * or validation error likewise comes after the events ordered before it
 * (the error is the one Go reports for the trace).
 */
RTD_API int rtd_gotrace_dec_next(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev);

/**
 * struct rtd_gotrace_counts - a summary of the events decoded so far
 * (rtd_gotrace_tally_counts())
 * @events: events decoded
 * @count: events of each type (indexed by the type number of the trace's
 *         format)
 * @bytes: bytes of each type: an event runs from its offset to the next
 *         event's, the last one to the end of the input given
 * @tmin: earliest time in ticks of the events but the tables, batches,
 *        frequency and CPU samples (INT64_MAX when none)
 * @tmax: latest such time (INT64_MIN when none)
 * @generations: new format: the largest generation number of a batch
 * @goroutines: distinct goroutine ids: of the old format, the running
 *              goroutine of each event and GoCreate's new one; of the new,
 *              every "g" and "new_g" argument
 * @procs: distinct P ids: the old format's batches, the new's "p"
 *         arguments (but CPU samples')
 * @goroutines_over: @goroutines is a lower bound (ids too many or too
 *                   sparse to keep: see rtd_gotrace_tally_new())
 * @procs_over: the same for @procs
 */
struct rtd_gotrace_counts {
	uint64_t events;
	const uint64_t *count, *bytes;
	int64_t tmin, tmax;
	uint64_t generations, goroutines, procs;
	bool goroutines_over, procs_over;
};

typedef struct rtd_gotrace_tally rtd_gotrace_tally;

/**
 * rtd_gotrace_tally_new - counters for rtd_gotrace_dec_tally()
 *
 * Distinct ids are counted in bounded memory: ids below 2^27 in a bitmap
 * grown to the largest seen (16 MB at most), at most 2^20 larger ones in
 * a hash set, past which the count is a lower bound.
 *
 * Returns: the counters, zero, or NULL when out of memory.
 */
RTD_API rtd_gotrace_tally *rtd_gotrace_tally_new(void);

/**
 * rtd_gotrace_tally_free - free counters
 * @t: the counters, or NULL (no-op)
 */
RTD_API void rtd_gotrace_tally_free(rtd_gotrace_tally *t);

/**
 * rtd_gotrace_dec_tally - decode the events buffered, counting them only
 * @d: a raw-mode decoder
 * @t: the counters to add them to
 *
 * What a loop of rtd_gotrace_dec_next() gives, summarized into @t without
 * an event built for each: the same events in the same order, the same
 * tables kept and the same errors at the same event (the events before an
 * error are counted). The common events take a lean path.
 *
 * Returns: 0 when more input is needed (or, after finish, at the end), or
 * the negative error rtd_gotrace_dec_next() would return; -EINVAL in
 * ordered mode.
 */
RTD_API int rtd_gotrace_dec_tally(rtd_gotrace_dec *d, rtd_gotrace_tally *t);

/**
 * rtd_gotrace_tally_counts - what was counted
 * @t: the counters
 * @size: the input's size in bytes (where the last event ends)
 * @out: filled in; its arrays live as long as @t
 */
RTD_API void rtd_gotrace_tally_counts(rtd_gotrace_tally *t, uint64_t size,
				      struct rtd_gotrace_counts *out);

/**
 * rtd_gotrace_header_version - the version a Go trace's header names
 * @buf: the input's first bytes
 * @len: how many (16 are read: "go 1.N trace" padded with NULs)
 *
 * Returns: the version this decoder reads (1005 ... 1021 for the old
 * format, 1022, 1023, 1025, 1026 for the new), -RTD_E_TRUNCATED when
 * @len < 16, -RTD_E_GO_VERSION when the bytes are no Go trace header,
 * -RTD_E_UNSUPPORTED for a well-formed header of a version not read.
 */
RTD_API int rtd_gotrace_header_version(const void *buf, size_t len);

/**
 * rtd_gotrace_dec_version - trace version from the header
 * @d: the decoder
 *
 * Returns: 1005, 1007, ... 1021, or 0 before the header is read.
 */
RTD_API int rtd_gotrace_dec_version(const rtd_gotrace_dec *d);

/**
 * rtd_gotrace_dec_frequency - ticks per second from the Frequency event
 * @d: the decoder
 *
 * Returns: the frequency, or 0 when not seen yet.
 */
RTD_API int64_t rtd_gotrace_dec_frequency(const rtd_gotrace_dec *d);

/**
 * rtd_gotrace_dec_error - message for the last error
 * @d: the decoder
 * @off: if not NULL, gets the byte offset where it happened
 *
 * Returns: the message ("" when there was no error); valid until @d is freed.
 */
RTD_API const char *rtd_gotrace_dec_error(const rtd_gotrace_dec *d, uint64_t *off);

/**
 * rtd_gotrace_dec_string - look up a string seen so far
 * @d: the decoder
 * @id: string id
 * @len: if not NULL, gets the length
 *
 * Returns: the NUL-terminated string, or NULL when unknown.
 */
RTD_API const char *rtd_gotrace_dec_string(const rtd_gotrace_dec *d, uint64_t id, size_t *len);

/**
 * rtd_gotrace_dec_stack - look up a stack seen so far
 * @d: the decoder
 * @id: stack id
 * @frames: gets the frames (borrowed until @d is freed)
 *
 * Returns: the frame count; 0 when unknown or empty.
 */
RTD_API size_t rtd_gotrace_dec_stack(const rtd_gotrace_dec *d, uint64_t id,
				     const struct rtd_gotrace_frame **frames);

/**
 * rtd_gotrace_dec_set_go_map_start - emulate one walk of Go 1.22/1.23's map
 * @d: an ordered-mode decoder whose new-format header has been read
 * @slot: 0-7, the slot at which Go's walk of its per-thread map starts
 *
 * Go 1.22 and 1.23 build their heap of per-thread cursors by walking a
 * map, from a slot the runtime picks at random for each generation, so
 * the order of events with equal times can differ between runs of
 * `go tool trace`. With up to 8 threads in a generation the walk is a
 * rotation of the order the threads appear in: slot 0 (the default) is
 * that order, which golang/exp and Go 1.24+ always use; slot s < the
 * thread count starts at the s-th thread. Test aid; it applies to every
 * generation ordered after the call.
 *
 * Returns: 0, or -RTD_E_STATE (not ordered mode, header not read yet or
 * not the new format, @slot > 7).
 */
RTD_API int rtd_gotrace_dec_set_go_map_start(rtd_gotrace_dec *d, unsigned slot);

/** The most generations rtd_gotrace_dec_set_go_map_starts() takes. */
#define RTD_GOTRACE_MAX_MAP_STARTS 16

/**
 * rtd_gotrace_dec_set_go_map_starts - one Go 1.22/1.23 map walk per generation
 * @d: an ordered-mode decoder (before or after its header is read)
 * @slots: 0-7 each: the slot Go's walk starts at for the first, second, ...
 *	generation ordered after the call; the last applies to the rest
 * @n: how many (at most RTD_GOTRACE_MAX_MAP_STARTS; 0 clears them)
 *
 * One run of Go 1.22/1.23's reader picks a start for each generation at
 * random, so to reproduce the tie order of that run (and every answer
 * derived from it: an analysis of a trace where equal-time events of two
 * threads decide which event is moved 1 ns later) each generation needs
 * its own start. Test aid, like rtd_gotrace_dec_set_go_map_start(), which
 * it overrides while set.
 *
 * Returns: 0, or -RTD_E_INVAL (not ordered mode, @n too large, a slot > 7).
 */
RTD_API int rtd_gotrace_dec_set_go_map_starts(rtd_gotrace_dec *d, const unsigned *slots, size_t n);

/**
 * typedef rtd_gotrace_tables_fn - told before a decoder replaces its tables
 * @ctx: the pointer given to rtd_gotrace_dec_set_tables_hook()
 */
typedef void (*rtd_gotrace_tables_fn)(void *ctx);

/**
 * rtd_gotrace_dec_set_tables_hook - be told when a generation's tables go
 * @d: the decoder
 * @fn: called, or NULL for none
 * @ctx: passed to @fn
 *
 * In ordered mode a new-format (Go 1.22+) decoder replaces its string and
 * stack tables at the start of each generation. The string arguments of
 * the events handed out before (sargs) and the stacks they name
 * (rtd_gotrace_dec_stack()) stay valid until then, not only until the
 * next call, and @fn is called, on the thread calling
 * rtd_gotrace_dec_next(), just before they go: a consumer on another
 * thread that still holds such events can finish them first
 * (rtd_goan_run() does). The event's other borrowed fields (raw, and
 * UserTaskEnd's task name) last until the next call only, as always.
 *
 * Returns: 0, or -EINVAL without a decoder.
 */
RTD_API int rtd_gotrace_dec_set_tables_hook(rtd_gotrace_dec *d, rtd_gotrace_tables_fn fn,
					    void *ctx);

/**
 * rtd_gotrace_type_name - Go's name of an old-format event type
 * @type: enum rtd_gotrace_type
 *
 * Returns: "GoCreate" and so on, or NULL for an unknown type.
 */
RTD_API const char *rtd_gotrace_type_name(unsigned type);

/**
 * rtd_gotrace_type_lookup - event type by Go's name
 * @name: "GoCreate"
 *
 * Returns: the type, or -1 when unknown.
 */
RTD_API int rtd_gotrace_type_lookup(const char *name);

/**
 * rtd_gotrace_event_name - name of an event type in a trace version
 * @type: event type
 * @version: 1005 ... 1021 (old format) or 1022, 1023, 1025, 1026
 *
 * Returns: Go's name ("GoCreate", "EventBatch"), or NULL when the type
 * does not exist in that version.
 */
RTD_API const char *rtd_gotrace_event_name(unsigned type, int version);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_DECODER_H */
