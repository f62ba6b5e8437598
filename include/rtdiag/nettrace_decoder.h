/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_decoder.h - streaming decoder for .NET EventPipe streams:
 * NetPerf V1/V2 (.NET Core 2.0) and V3 (2.1/2.2), NetTrace V4/V5 (.NET
 * Core 3.0 to .NET 10,
 * files and IPC sessions alike) and NetTrace V6.
 *
 * Push model: create a decoder with rtd_nettrace_new(), hand it bytes with
 * rtd_nettrace_feed() in pieces of any size (one byte at a time works), and
 * it calls your callbacks as soon as each block is complete. End the stream
 * with rtd_nettrace_finish(). The decoder never needs the whole input: it
 * keeps at most one incomplete block, the metadata seen so far and the
 * stacks since the last sequence point, each under a cap (defaults: 16 MiB
 * block, 16 MiB of metadata, 16 MiB of stacks, 65536 threads), so its
 * memory stays under ~50 MiB whatever the input.
 *
 * Borrowing: every pointer handed to a callback (an event, its payload,
 * its stack, its metadata strings) is valid only during that callback,
 * except metadata (struct rtd_nettrace_metadata), which lives until the
 * decoder is freed or a V6 sequence point flushes the metadata cache.
 *
 * Events are delivered in stream order, which is not time order: EventPipe
 * writes per-thread buffers. Within one capture thread events are in time
 * order; between two sequence points all events lie between the two
 * points' times (NetTraceFormat.md "Event TimeStamp sorting"). With
 * opts.sort the decoder delivers them in time order instead, holding each
 * sorting window until it is complete.
 *
 * Errors: functions return 0 or a negative errno / -RTD_E_* code. After a
 * decoding error the decoder keeps the byte offset and a message
 * (rtd_nettrace_error()); every complete block before the damage has been
 * delivered already, and later calls return the same error.
 */
#ifndef RTDIAG_NETTRACE_DECODER_H
#define RTDIAG_NETTRACE_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_nettrace rtd_nettrace;

/**
 * enum rtd_nettrace_type - payload field types
 *
 * Values 1..26 are EventPipe's own type codes (NetTraceFormat.md "Type
 * format"); values from 64 up occur only in rtdiag's built-in schemas of
 * the runtime's providers, whose metadata in the stream carries no fields.
 */
enum rtd_nettrace_type {
	RTD_NT_T_OBJECT = 1,       /* struct: the fields in ->fields */
	RTD_NT_T_BOOL32 = 3,       /* 4-byte boolean */
	RTD_NT_T_CHAR16 = 4,       /* one UTF-16 code unit */
	RTD_NT_T_I8 = 5,
	RTD_NT_T_U8 = 6,
	RTD_NT_T_I16 = 7,
	RTD_NT_T_U16 = 8,
	RTD_NT_T_I32 = 9,
	RTD_NT_T_U32 = 10,
	RTD_NT_T_I64 = 11,
	RTD_NT_T_U64 = 12,
	RTD_NT_T_F32 = 13,
	RTD_NT_T_F64 = 14,
	RTD_NT_T_DECIMAL = 15,     /* 16 bytes, shown as hex */
	RTD_NT_T_DATETIME = 16,    /* 8-byte FILETIME (as TraceEvent reads it) */
	RTD_NT_T_GUID = 17,
	RTD_NT_T_STRING = 18,      /* NUL-terminated UTF-16 */
	RTD_NT_T_ARRAY = 19,       /* u16 count, then elements (->fields[0]) */
	RTD_NT_T_VARINT = 20,      /* V6: zigzag LEB128 */
	RTD_NT_T_VARUINT = 21,     /* V6: LEB128 */
	RTD_NT_T_FIXED_ARRAY = 22, /* V6: ->fixed_count elements */
	RTD_NT_T_CHAR8 = 23,       /* V6: one UTF-8 code unit */
	RTD_NT_T_RELLOC = 24,      /* V6: u32 (size<<16 | offset from next) */
	RTD_NT_T_DATALOC = 25,     /* V6: u32 (size<<16 | offset from start) */
	RTD_NT_T_BOOL8 = 26,       /* V6: 1-byte boolean */
	/* built-in schemas only */
	RTD_NT_T_POINTER = 64,     /* pointer-sized unsigned (trace's size) */
	RTD_NT_T_HEX32 = 65,       /* u32 shown in hex */
	RTD_NT_T_HEX64 = 66,       /* u64 shown in hex */
	RTD_NT_T_COUNTED = 67,     /* elements counted by sibling ->count_field */
	RTD_NT_T_BINARY = 68,      /* bytes counted by sibling ->count_field */
	RTD_NT_T_UTF8Z = 69,       /* NUL-terminated UTF-8 (V3 TraceLogging) */
};

/**
 * struct rtd_nettrace_enum - one named value of a value or bit map
 * @value: the value (a bit map: one or more bits)
 * @name: its name, e.g. "AllocSmall"
 */
struct rtd_nettrace_enum {
	uint64_t value;
	const char *name;
};

/**
 * struct rtd_nettrace_map - names of a field's values (the manifest's
 * valueMap / bitMap, e.g. GC/Start's Reason, Loader's ModuleFlags)
 * @name: the map's name in the manifest ("GCReasonMap")
 * @bits: true for a bit map (a value is several names joined by '|')
 * @n: entries in @v
 * @v: the names
 */
struct rtd_nettrace_map {
	const char *name;
	bool bits;
	uint16_t n;
	const struct rtd_nettrace_enum *v;
};

/**
 * struct rtd_nettrace_field - one field of an event's payload layout
 * @name: field name ("" when the stream gives none)
 * @type: an enum rtd_nettrace_type value
 * @nfields: number of entries in @fields
 * @fixed_count: element count of RTD_NT_T_FIXED_ARRAY
 * @count_field: for RTD_NT_T_COUNTED/BINARY, index of the sibling field
 *               (earlier in the same list) holding the count; else -1
 * @fields: for OBJECT the members; for ARRAY, FIXED_ARRAY, COUNTED, RELLOC
 *          and DATALOC one entry describing the element
 * @map: names of the values (built-in schemas only; NULL when none)
 */
struct rtd_nettrace_field {
	const char *name;
	uint16_t type;
	uint16_t nfields;
	uint16_t fixed_count;
	int16_t count_field;
	const struct rtd_nettrace_field *fields;
	const struct rtd_nettrace_map *map;
};

/**
 * rtd_nettrace_map_name - the name of a value in a map
 * @map: the map (NULL gives NULL)
 * @value: the value
 * @buf: room for a bit map's joined names
 * @n: its size
 *
 * A value map gives the entry's name, or NULL when no entry has this
 * value. A bit map gives the names of the bits set joined by '|', with
 * the bits no entry names as a hex number ("Jitted|0x200"); a zero value
 * is the name of the zero entry if there is one, else NULL.
 *
 * Returns: the name (in the map or in @buf), or NULL.
 */
RTD_API const char *rtd_nettrace_map_name(const struct rtd_nettrace_map *map,
					  uint64_t value, char *buf, size_t n);

/**
 * struct rtd_nettrace_metadata - one event type
 * @id: metadata id events refer to
 * @provider: provider name, e.g. "Microsoft-Windows-DotNETRuntime"
 * @event_id: event id within the provider
 * @event_name: the name the stream gives (often "" for runtime events)
 * @name: display name in TraceEvent's form: "GC/AllocationTick",
 *        "Method/LoadVerbose", an EventSource's "Name" or "Name/Opcode",
 *        "EventID(N)" when nothing better is known
 * @keywords: keyword bits
 * @version: event version
 * @level: verbosity level (1 critical .. 5 verbose)
 * @opcode: opcode (0 when the stream gives none and no schema is known)
 * @nfields: number of top-level payload fields
 * @fields: payload layout, from the stream or from a built-in schema
 * @builtin: true when @fields (and @name) come from rtdiag's built-in
 *           schema of a runtime provider
 * @user: free for the caller (starts NULL; the decoder never touches it)
 */
struct rtd_nettrace_metadata {
	uint32_t id;
	const char *provider;
	uint32_t event_id;
	const char *event_name;
	const char *name;
	uint64_t keywords;
	uint32_t version;
	uint32_t level;
	uint32_t opcode;
	size_t nfields;
	const struct rtd_nettrace_field *fields;
	bool builtin;
	void *user;
};

/**
 * struct rtd_nettrace_event - one event, borrowed during the callback
 * @meta: its event type
 * @timestamp: ticks (see struct rtd_nettrace_info.tick_freq)
 * @thread_id: OS thread the event describes (V6: the thread's OS id when
 *             a thread block gave one, else its thread index)
 * @capture_thread_id: thread that wrote it (V3: same as @thread_id)
 * @proc_number: processor number (0xFFFFFFFF when unknown)
 * @sequence: per-capture-thread sequence number (V3: 0)
 * @sorted: the IsSorted flag: no later event has an earlier timestamp
 * @activity_id: activity id (zero when absent)
 * @related_activity_id: related activity id (zero when absent)
 * @payload: payload bytes, laid out as @meta->fields
 * @payload_len: their length
 * @stack: return addresses, leaf first; NULL when the event has none
 * @nframes: number of entries in @stack
 * @stack_id: the stream's stack id (V4+; 0 is "no stack")
 * @offset: stream offset of the event's first byte
 */
struct rtd_nettrace_event {
	const struct rtd_nettrace_metadata *meta;
	uint64_t timestamp;
	uint64_t thread_id;
	uint64_t capture_thread_id;
	uint32_t proc_number;
	uint32_t sequence;
	bool sorted;
	uint8_t activity_id[16];
	uint8_t related_activity_id[16];
	const uint8_t *payload;
	size_t payload_len;
	const uint64_t *stack;
	size_t nframes;
	uint32_t stack_id;
	uint64_t offset;
};

/**
 * struct rtd_nettrace_info - the trace header
 * @format: 1, 2 (NetPerf of .NET Core 2.0), 3 (NetPerf), 4, 5 or 6
 * @sync_year: wall clock at session start, UTC: year
 * @sync_month: month 1-12
 * @sync_day: day 1-31
 * @sync_hour: hour
 * @sync_minute: minute
 * @sync_second: second
 * @sync_ms: millisecond
 * @sync_ticks: timestamp (ticks) taken at that wall-clock time
 * @tick_freq: ticks per second
 * @pointer_size: 4 or 8
 * @pid: traced process id (0 when unknown)
 * @nprocs: number of processors (0 when unknown)
 * @sampling_rate: expected CPU sampling rate field (0 when unknown)
 */
struct rtd_nettrace_info {
	int format;
	int sync_year, sync_month, sync_day;
	int sync_hour, sync_minute, sync_second, sync_ms;
	uint64_t sync_ticks;
	uint64_t tick_freq;
	uint32_t pointer_size;
	uint32_t pid;
	uint32_t nprocs;
	uint32_t sampling_rate;
};

/**
 * typedef rtd_nettrace_event_fn - receives each event
 * @ctx: the opts' @ctx
 * @ev: the event, borrowed until the callback returns
 *
 * Returns: 0 to go on; RTD_NT_PAUSE (@on_event only) to have
 * rtd_nettrace_feed() return RTD_NT_PAUSED after this event; any other
 * value stops decoding and is returned by rtd_nettrace_feed() (use a
 * negative RTD_E_* or errno value).
 */
typedef int (*rtd_nettrace_event_fn)(void *ctx,
				     const struct rtd_nettrace_event *ev);

/* @on_event's answer: stop the feed after this event, to go on with
 * rtd_nettrace_resume(). Honoured in stream order (not with @sort on a
 * NetTrace V4+ stream) and not inside rtd_nettrace_finish(); elsewhere
 * it means go on. A caller so takes a block's events a few at a time
 * instead of all the block's at once. */
#define RTD_NT_PAUSE 2
/* rtd_nettrace_feed()/_resume(): paused by @on_event (RTD_NT_PAUSE) */
#define RTD_NT_PAUSED 2

/**
 * typedef rtd_nettrace_meta_fn - receives each new event type
 * @ctx: the opts' @ctx
 * @meta: the metadata; valid until the decoder is freed (or a V6
 *        sequence point flushes metadata). The callback may set
 *        @meta->user; events of this type carry it.
 *
 * Returns: 0 to go on, else stops decoding as for rtd_nettrace_event_fn.
 */
typedef int (*rtd_nettrace_meta_fn)(void *ctx,
				    struct rtd_nettrace_metadata *meta);

/**
 * typedef rtd_nettrace_info_fn - receives the trace header, once
 * @ctx: the opts' @ctx
 * @info: the header; valid until the decoder is freed
 */
typedef int (*rtd_nettrace_info_fn)(void *ctx,
				    const struct rtd_nettrace_info *info);

/**
 * typedef rtd_nettrace_seqpoint_fn - receives each sequence point
 * @ctx: the opts' @ctx
 * @timestamp: the sequence point's time (ticks)
 *
 * Every event delivered before the call happened before @timestamp and
 * every later event after it. Stack ids restart after it.
 */
typedef int (*rtd_nettrace_seqpoint_fn)(void *ctx, uint64_t timestamp);

/**
 * struct rtd_nettrace_opts - options for rtd_nettrace_new()
 * @sz: sizeof(struct rtd_nettrace_opts), for compatibility
 * @ctx: passed to every callback
 * @on_event: called for each event (may be NULL)
 * @on_metadata: called for each metadata record (may be NULL)
 * @on_info: called once for the trace header (may be NULL)
 * @on_seqpoint: called for each sequence point (may be NULL)
 * @max_block: cap on one block's size in bytes (0: 16 MiB)
 * @max_metadata: cap on distinct metadata records (0: 65536)
 * @max_stack_bytes: cap on stack bytes kept between two sequence points
 *                   (0: 16 MiB)
 * @sort: deliver events in time order (timestamp, then stream order)
 *        instead of stream order. Events are held only until the stream
 *        proves no earlier one can follow: a sequence point, or an event
 *        with the IsSorted flag (NetTraceFormat "Event TimeStamp
 *        sorting"), so memory stays bounded by one such window
 *        (@max_sort_bytes). Sequence point callbacks come after the
 *        events before them.
 * @max_sort_bytes: cap on the events held for sorting (0: 256 MiB)
 * @stable_input: the caller keeps every byte it feeds readable until
 *                rtd_nettrace_finish() returns (a mapped file): events held
 *                for sorting then point at their payload instead of
 *                copying it
 * @want: asked once per metadata record (after @on_metadata): false
 *        and its events are counted (stats, drops) but neither held for
 *        sorting nor delivered; NULL: every event is delivered. A consumer
 *        of a few event types so skips the sort's copy of the others.
 * @on_arrival: called for each event as it comes, in stream order, before
 *              @sort holds it (@want's refused ones too); may be NULL.
 *              What needs no order (a table of method names looked up
 *              later) is so learnt without the sort's copy.
 * @lend_strings: a walk's texts (rtd_nettrace_value.str) stay valid until
 *                the caller's next rtd_nettrace_feed(), _resume() or
 *                _finish() (or the decoder's free), not only until the
 *                walk's next step: a consumer that keeps an event's
 *                strings until then needs no copy of them. They are made
 *                where they stay (memory: about 1.5x the string bytes the
 *                call's events hold, at most @max_lent_bytes; past it a
 *                walk fails with -RTD_E_CAP).
 * @max_lent_bytes: cap on the strings lent between two calls (0: 64 MiB)
 */
struct rtd_nettrace_opts {
	size_t sz;
	void *ctx;
	rtd_nettrace_event_fn on_event;
	rtd_nettrace_meta_fn on_metadata;
	rtd_nettrace_info_fn on_info;
	rtd_nettrace_seqpoint_fn on_seqpoint;
	size_t max_block;
	size_t max_metadata;
	size_t max_stack_bytes;
	bool sort;
	size_t max_sort_bytes;
	bool stable_input;
	bool (*want)(void *ctx, const struct rtd_nettrace_metadata *m);
	rtd_nettrace_event_fn on_arrival;
	bool lend_strings;
	size_t max_lent_bytes;
};

/**
 * rtd_nettrace_new - create a stream decoder
 * @opts: options (copied); NULL for defaults
 *
 * Returns: the decoder, or NULL when out of memory or @opts->sz is 0.
 */
RTD_API rtd_nettrace *rtd_nettrace_new(const struct rtd_nettrace_opts *opts);

/**
 * rtd_nettrace_free - free a decoder
 * @dec: the decoder; NULL does nothing
 */
RTD_API void rtd_nettrace_free(rtd_nettrace *dec);

/**
 * rtd_nettrace_feed - decode the next bytes of the stream
 * @dec: the decoder
 * @buf: bytes; need not outlive the call
 * @len: their count (0 is allowed)
 *
 * Calls the callbacks for every block completed by these bytes. An
 * incomplete block is kept (copied) until later bytes complete it.
 *
 * Returns: 0; 1 when the stream's end marker has been seen (bytes after it
 * are ignored); RTD_NT_PAUSED when @on_event paused (the bytes not
 * decoded yet are borrowed, not copied: keep @buf unchanged until
 * rtd_nettrace_resume() stops saying RTD_NT_PAUSED); a negative RTD_E_*
 * code for bad input (see rtd_nettrace_error()), -ENOMEM, -RTD_E_CAP;
 * -RTD_E_STATE while paused; or a callback's nonzero return value.
 */
RTD_API int rtd_nettrace_feed(rtd_nettrace *dec, const void *buf, size_t len);

/**
 * rtd_nettrace_resume - go on with a feed that @on_event paused
 * @dec: the decoder
 *
 * Decodes on from the event after the one that paused, over the rest of
 * the bytes the paused rtd_nettrace_feed() was given.
 *
 * Returns: as rtd_nettrace_feed() (RTD_NT_PAUSED again when @on_event
 * paused again); 0 when not paused.
 */
RTD_API int rtd_nettrace_resume(rtd_nettrace *dec);

/**
 * rtd_nettrace_paused - whether a feed is paused
 * @dec: the decoder
 *
 * Returns: true between a feed's RTD_NT_PAUSED and the resume that
 * finishes its bytes; false after an error.
 */
RTD_API bool rtd_nettrace_paused(const rtd_nettrace *dec);

/**
 * rtd_nettrace_finish - declare the end of the input
 * @dec: the decoder
 *
 * When the input stops inside an event or metadata block, the events of
 * that block that are complete (header and payload all there) are
 * delivered first, as they would have been had the block been whole.
 *
 * A paused feed is finished first (its events delivered, no more pauses).
 *
 * Returns: 0 when the stream ended cleanly (its end marker was seen);
 * -RTD_E_TRUNCATED when it stops inside a block or before the end marker
 * (everything complete has been delivered; rtd_nettrace_error() says
 * "truncated at byte N: ..." with N, the bytes fed, as its offset, and
 * what it stopped inside); or the error that stopped decoding earlier.
 */
RTD_API int rtd_nettrace_finish(rtd_nettrace *dec);

/**
 * rtd_nettrace_error - where and why decoding failed
 * @dec: the decoder
 * @offset: receives the stream offset of the damage (may be NULL)
 *
 * Returns: a message naming what was wrong, e.g. "event block at offset
 * 4096: event header runs past the block end"; "" when there was no
 * error. Valid until the decoder is freed.
 */
RTD_API const char *rtd_nettrace_error(const rtd_nettrace *dec,
				       uint64_t *offset);

/**
 * rtd_nettrace_info - the trace header
 * @dec: the decoder
 *
 * Returns: the header, or NULL before it has been decoded.
 */
RTD_API const struct rtd_nettrace_info *
rtd_nettrace_info(const rtd_nettrace *dec);

/**
 * struct rtd_nettrace_stats - running totals of a decoder
 * @bytes: bytes consumed
 * @events: events delivered
 * @metadata: metadata records seen
 * @blocks: blocks decoded
 * @stacks: stacks seen
 * @seqpoints: sequence points seen
 * @dropped: events the writer dropped, from sequence number gaps and
 *           sequence points, summed over threads
 * @skipped_blocks: blocks of unknown kind skipped
 */
struct rtd_nettrace_stats {
	uint64_t bytes;
	uint64_t events;
	uint64_t metadata;
	uint64_t blocks;
	uint64_t stacks;
	uint64_t seqpoints;
	uint64_t dropped;
	uint64_t skipped_blocks;
};

/**
 * rtd_nettrace_stats - running totals
 * @dec: the decoder
 * @out: receives the totals
 */
RTD_API void rtd_nettrace_stats(const rtd_nettrace *dec,
				struct rtd_nettrace_stats *out);

/**
 * typedef rtd_nettrace_drop_fn - receives one thread's dropped-event count
 * @ctx: as given to rtd_nettrace_drops()
 * @thread_id: capture thread id (V6: thread index)
 * @dropped: events lost on that thread
 */
typedef void (*rtd_nettrace_drop_fn)(void *ctx, uint64_t thread_id,
				     uint64_t dropped);

/**
 * rtd_nettrace_drops - list the threads that dropped events
 * @dec: the decoder
 * @fn: called once per thread with a nonzero count
 * @ctx: passed to @fn
 */
RTD_API void rtd_nettrace_drops(const rtd_nettrace *dec,
				rtd_nettrace_drop_fn fn, void *ctx);

/**
 * enum rtd_nettrace_vkind - what a payload visitor call describes
 */
enum rtd_nettrace_vkind {
	RTD_NT_V_SCALAR = 0,  /* one value */
	RTD_NT_V_BEGIN_OBJECT, /* a struct begins; its fields follow */
	RTD_NT_V_END_OBJECT,
	RTD_NT_V_BEGIN_ARRAY,  /* an array begins; @count elements follow */
	RTD_NT_V_END_ARRAY,
	RTD_NT_V_TRAILING,     /* payload bytes after the last field: @raw */
};

/**
 * struct rtd_nettrace_value - one step of a payload walk
 * @kind: what this is
 * @field: the layout entry (for array elements: the element's entry)
 * @name: field name, or NULL for an array element
 * @depth: nesting depth, 0 for top-level fields
 * @type: @field->type, with POINTER resolved to U32 or U64
 * @i: signed integer value (integers, booleans, chars)
 * @u: unsigned integer value (same bits as @i)
 * @f: floating-point value (F32, F64)
 * @str: UTF-8 text of STRING, CHAR16, CHAR8 and UTF8Z values, a GUID as
 *       "xxxxxxxx-xxxx-...", a DATETIME as ISO 8601; NUL-terminated,
 *       borrowed until the next step (with rtd_nettrace_opts.lend_strings
 *       until the caller's next call of the decoder)
 * @str_len: its length in bytes
 * @raw: the value's bytes in the payload
 * @raw_len: their count
 * @count: element count (BEGIN_ARRAY)
 */
struct rtd_nettrace_value {
	enum rtd_nettrace_vkind kind;
	const struct rtd_nettrace_field *field;
	const char *name;
	unsigned depth;
	unsigned type;
	int64_t i;
	uint64_t u;
	double f;
	const char *str;
	size_t str_len;
	const uint8_t *raw;
	size_t raw_len;
	size_t count;
};

/**
 * typedef rtd_nettrace_value_fn - receives each step of a payload walk
 * @ctx: as given to rtd_nettrace_walk()
 * @v: the step, borrowed until the callback returns
 *
 * Returns: 0 to go on, nonzero to stop the walk (returned by it).
 */
typedef int (*rtd_nettrace_value_fn)(void *ctx,
				     const struct rtd_nettrace_value *v);

/**
 * rtd_nettrace_walk - decode an event's payload field by field
 * @dec: the decoder that delivered @ev (for pointer size, scratch space)
 * @ev: the event
 * @fn: called for every value, struct and array, in payload order
 * @ctx: passed to @fn
 *
 * Returns: 0; -RTD_E_NT_PAYLOAD when the payload is shorter than its
 * layout (values before that point have been delivered); or @fn's
 * nonzero return. Bytes after the last field (an event version newer
 * than the schema, or a schema that is wrong) are handed to @fn as one
 * RTD_NT_V_TRAILING step, so nothing is dropped unseen; a built-in
 * schema of an older version than the event's stops cleanly at the
 * payload's end.
 */
RTD_API int rtd_nettrace_walk(rtd_nettrace *dec,
			      const struct rtd_nettrace_event *ev,
			      rtd_nettrace_value_fn fn, void *ctx);

/**
 * rtd_nettrace_get - decode one top-level field by name
 * @dec: the decoder that delivered @ev
 * @ev: the event
 * @name: field name (exact match)
 * @out: receives the value (strings borrowed until the next call on @dec)
 *
 * Returns: 0; -RTD_E_NOTFOUND when the event has no such field;
 * -RTD_E_NT_PAYLOAD when the payload ends before it.
 */
RTD_API int rtd_nettrace_get(rtd_nettrace *dec,
			     const struct rtd_nettrace_event *ev,
			     const char *name,
			     struct rtd_nettrace_value *out);

/** Flags for rtd_nettrace_format(). */
enum rtd_nettrace_format_flags {
	RTD_NT_FMT_TEXT = 0,      /* one line: time thread Provider/Name k=v ... */
	RTD_NT_FMT_JSON = 1 << 0, /* one JSON object (no newline) */
	RTD_NT_FMT_STACK = 1 << 1 /* include the stack addresses */
};

/**
 * rtd_nettrace_format - render an event as text or JSON
 * @dec: the decoder that delivered @ev
 * @ev: the event
 * @flags: RTD_NT_FMT_* bits
 * @len: receives the length (may be NULL)
 *
 * Text: "SECONDS.MICROS THREAD Provider/Name field=value ..." with time
 * relative to the trace's sync time; a mapped field (GC Reason, flags)
 * by its name. JSON: {"time":..., "ts":..., "thread":...,
 * "provider":..., "event":..., "id":..., "fields":{...}, "names":{...},
 * "stack":[...]} with every field as its number and, under "names", the
 * names of mapped values. Floats print as the shortest text that reads
 * back the same (NaN and infinities as "NaN", "Infinity", "-Infinity").
 * A payload that does not match its layout is rendered up to the damage
 * followed by an "error" member; bytes after the last field follow as
 * "unparsed" (text: unparsed=0x...).
 *
 * Returns: the NUL-terminated text, borrowed until the next call on @dec;
 * NULL when out of memory or past the line cap.
 */
RTD_API const char *rtd_nettrace_format(rtd_nettrace *dec,
					const struct rtd_nettrace_event *ev,
					unsigned flags, size_t *len);

/**
 * typedef rtd_nettrace_frame_fn - names a stack frame for formatting
 * @ctx: as given with it
 * @ip: the return address
 *
 * Returns: a name valid until the next call, or NULL to print the address.
 */
typedef const char *(*rtd_nettrace_frame_fn)(void *ctx, uint64_t ip);

/**
 * rtd_nettrace_format_append - render an event and a newline into a buffer
 * @dec: the decoder that delivered @ev
 * @ev: the event
 * @flags: RTD_NT_FMT_* bits
 * @sym: names stack frames (RTD_NT_FMT_STACK); NULL prints addresses
 * @sym_ctx: passed to @sym
 * @buf: the buffer (malloc'd; may be NULL with @cap 0); grown as needed
 * @len: bytes used in it, advanced past the new line
 * @cap: its allocated size, updated when it grows
 *
 * As rtd_nettrace_format(), appended to the caller's buffer, so a writer
 * can gather many events and write them with one system call.
 *
 * Returns: 0, or -ENOMEM / -RTD_E_CAP (the buffer is left as it was).
 */
RTD_API int rtd_nettrace_format_append(rtd_nettrace *dec,
				       const struct rtd_nettrace_event *ev,
				       unsigned flags,
				       rtd_nettrace_frame_fn sym,
				       void *sym_ctx, char **buf, size_t *len,
				       size_t *cap);

/**
 * rtd_nettrace_type_name - name of a field type
 * @type: an enum rtd_nettrace_type value
 *
 * Returns: "int32", "string", ...; "unknown" for other values.
 */
RTD_API const char *rtd_nettrace_type_name(unsigned type);

/**
 * rtd_nettrace_glob - match a provider or event name as people type it
 * @pat: the pattern: '*' matches any run of characters; letters match in
 *       either case (e.g. "microsoft-windows-dotnetruntime*" or "GC/Start*")
 * @s: the name
 *
 * Returns: true when @s matches all of @pat.
 */
RTD_API bool rtd_nettrace_glob(const char *pat, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_DECODER_H */
