/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace.h - streaming decoder for .NET EventPipe streams:
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
#ifndef RTDIAG_NETTRACE_H
#define RTDIAG_NETTRACE_H

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
 * Returns: 0 to go on; any other value stops decoding and is returned by
 * rtd_nettrace_feed() (use a negative RTD_E_* or errno value).
 */
typedef int (*rtd_nettrace_event_fn)(void *ctx,
				     const struct rtd_nettrace_event *ev);

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
 * are ignored); a negative RTD_E_* code for bad input (see
 * rtd_nettrace_error()), -ENOMEM, -RTD_E_CAP; or a callback's nonzero
 * return value.
 */
RTD_API int rtd_nettrace_feed(rtd_nettrace *dec, const void *buf, size_t len);

/**
 * rtd_nettrace_finish - declare the end of the input
 * @dec: the decoder
 *
 * When the input stops inside an event or metadata block, the events of
 * that block that are complete (header and payload all there) are
 * delivered first, as they would have been had the block been whole.
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
 *       borrowed until the next step
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

/* ---- names of managed code ---------------------------------------------- */

typedef struct rtd_nettrace_methods rtd_nettrace_methods;

/**
 * rtd_nettrace_methods_new - an empty table of method names
 *
 * The table learns methods from the trace's own events
 * (rtd_nettrace_methods_event()): MethodLoadVerbose as methods are
 * jitted, MethodDCStart/StopVerbose from the rundown, R2RGetEntryPoint
 * for precompiled (ReadyToRun) code (no size given: it runs to the next
 * method known, at most 64 KiB; a sized record at its address wins, as
 * in the nettrace profiler's profiles), and module names from
 * ModuleLoad / ModuleDCStart/Stop. Lookups may interleave with
 * learning. Caps: 16 M methods, 256 MiB of names (-RTD_E_CAP).
 *
 * Returns: the table, or NULL when out of memory.
 */
RTD_API rtd_nettrace_methods *rtd_nettrace_methods_new(void);

/**
 * rtd_nettrace_methods_free - free a method table
 * @m: the table; NULL does nothing
 */
RTD_API void rtd_nettrace_methods_free(rtd_nettrace_methods *m);

/**
 * rtd_nettrace_methods_event - learn from one event
 * @m: the table
 * @ev: any event; those that name no method or module are ignored
 *
 * Returns: 0, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_methods_event(rtd_nettrace_methods *m,
				       const struct rtd_nettrace_event *ev);

/**
 * rtd_nettrace_methods_name - the method whose code holds an address
 * @m: the table
 * @ip: a code address (a stack frame)
 *
 * Returns: "module!Namespace.Method(signature)" (without "module!" when
 * the module is unknown), valid until the next call on @m; NULL when no
 * method learnt so far covers @ip. The latest definition of an address
 * wins.
 */
RTD_API const char *rtd_nettrace_methods_name(rtd_nettrace_methods *m,
					      uint64_t ip);

/**
 * rtd_nettrace_methods_count - methods learnt
 * @m: the table
 *
 * Returns: the count.
 */
RTD_API size_t rtd_nettrace_methods_count(const rtd_nettrace_methods *m);

/**
 * rtd_nettrace_glob - match a provider or event name as people type it
 * @pat: the pattern: '*' matches any run of characters; letters match in
 *       either case (e.g. "microsoft-windows-dotnetruntime*" or "GC/Start*")
 * @s: the name
 *
 * Returns: true when @s matches all of @pat.
 */
RTD_API bool rtd_nettrace_glob(const char *pat, const char *s);

/* ---- profiles: CPU / thread time, allocations, locks, exceptions ------- */

typedef struct rtd_nettrace_profiler rtd_nettrace_profiler;
struct rtd_profile;

/* What a profile builder keeps (the same bits as RTD_IPC_PROFILE_*). */
enum rtd_nettrace_profile_kind {
	RTD_NETTRACE_PROFILE_CPU = 1u << 0,  /* SampleProfiler thread samples */
	RTD_NETTRACE_PROFILE_ALLOC = 1u << 1, /* GC/AllocationTick */
	RTD_NETTRACE_PROFILE_LOCK = 1u << 2,  /* Contention/Start + Stop */
	RTD_NETTRACE_PROFILE_EXCEPTION = 1u << 3, /* Exception/Start (thrown) */
	RTD_NETTRACE_PROFILE_WAIT = 1u << 4, /* WaitHandleWait/Start + Stop */
};

/**
 * rtd_nettrace_profile_kind_name - the word for one profile kind
 * @kind: one RTD_NETTRACE_PROFILE_* bit
 *
 * Return: "cpu", "alloc", "lock", "exception" or "wait" (the words
 * rtd_nettrace_profile_kinds() reads, `dotnet profile --type` and the
 * agent's dotnet-profiles take); NULL for anything else.
 */
RTD_API const char *rtd_nettrace_profile_kind_name(unsigned kind);

/**
 * rtd_nettrace_profile_kinds - read a list of profile kinds
 * @list: words of rtd_nettrace_profile_kind_name() separated by commas
 *        ("cpu,alloc"); a trailing comma is allowed
 * @kinds: gets the RTD_NETTRACE_PROFILE_* bits of the words
 * @bad: gets where the first word that is no kind starts (NULL: not asked)
 * @badlen: gets that word's length (NULL: not asked)
 *
 * Return: 0, or -RTD_E_INVAL at a word that is no kind (an empty one
 * too); *kinds is then left as it was.
 */
RTD_API int rtd_nettrace_profile_kinds(const char *list, unsigned *kinds,
				       const char **bad, size_t *badlen);

/**
 * struct rtd_nettrace_profiler_opts - options for rtd_nettrace_profiler_new()
 * @sz: sizeof(struct rtd_nettrace_profiler_opts)
 * @managed_only: thread time only while in managed code (dotnetdiag's
 *                --managed-only: the time a thread spends in a run of
 *                External samples is not counted)
 * @max_stacks: cap on distinct call stacks kept (0: 1 << 20)
 * @max_pending: cap on samples buffered between sequence points
 *               (0: 1 << 22)
 * @kinds: RTD_NETTRACE_PROFILE_* bits (0: CPU only)
 * @running_only: the CPU profile keeps only the samples of threads that
 *                were in managed code (the sampler's Managed type), each
 *                weighing the time since the thread's previous sample:
 *                thread time in managed code, running or runnable (not
 *                CPU time: rtd_nettrace_profiler_thread_cpu() makes it
 *                that), where the default is thread (wall-clock) time of
 *                every thread
 * @max_entries: cap on distinct (kind, stack, thread, type) value slots
 *               (0: 1 << 22)
 */
struct rtd_nettrace_profiler_opts {
	size_t sz;
	bool managed_only;
	size_t max_stacks;
	size_t max_pending;
	unsigned kinds;
	bool running_only;
	size_t max_entries;
};

/**
 * rtd_nettrace_profiler_new - create a profile builder
 * @opts: options; NULL for defaults
 *
 * CPU: Microsoft-DotNETCore-SampleProfiler ThreadSample events, following
 * dotnetdiag's SampleProfiler model: the samples of each thread are
 * ordered by time within each sequence-point interval; each sample is
 * weighted with the time since the thread's previous sample; a thread's
 * first sample weighs nothing. The sampler samples every managed thread,
 * running or waiting: this is thread time ("wall"), unless @running_only.
 *
 * Allocations: GC/AllocationTick (keyword GC at Verbose), one about every
 * 100 KB a thread allocates, weighted by the amount it stands for; the
 * allocated type is the leaf frame. Locks: Contention/Start to Stop per
 * thread (keyword Contention), the waiting thread's stack at Start, the
 * delay from Stop's DurationNs (.NET 8+) or the two timestamps.
 * Waits: WaitHandleWait/Start to Stop per thread (keyword WaitHandle at
 * Verbose, .NET 9+: waits on wait handles, Monitor.Wait, and a contended
 * Monitor.Enter's wait), the waiting thread's stack at Start, the delay
 * the two timestamps; a wait counts when it ends (as Go's block profile
 * counts), one whose Start came before the session does not.
 * Exceptions: Exception/Start, counted by type (the leaf frame) and
 * throwing stack (keyword Exception).
 *
 * Frames are named "module!Namespace.Method(signature)" from
 * MethodLoadVerbose / MethodDCStart/EndVerbose events (runtime and
 * rundown providers) and ModuleLoad / ModuleDCStart/End; an address no
 * method covers is "?!?".
 *
 * Memory grows with distinct stacks, threads and type names (each capped),
 * not with the number of events.
 *
 * Returns: the builder, or NULL when out of memory.
 */
RTD_API rtd_nettrace_profiler *
rtd_nettrace_profiler_new(const struct rtd_nettrace_profiler_opts *opts);

/**
 * rtd_nettrace_profiler_free - free a profile builder
 * @p: the builder; NULL does nothing
 */
RTD_API void rtd_nettrace_profiler_free(rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_event - give the builder one event
 * @p: the builder
 * @dec: the decoder that delivered @ev
 * @ev: any event; those the builder does not use are ignored
 *
 * Call from your rtd_nettrace_event_fn for every event. Events may come
 * from more than one decoder: the samples from one stream, method and
 * module names from others as well (a rundown taken in a session of its
 * own, rtd_ipc_rundown_snapshot()), so that frames are named even when
 * the sampled stream's own rundown never came. The clock is the one of
 * the decoder that delivers the first sample.
 *
 * Returns: 0, -ENOMEM, -RTD_E_CAP when a cap is reached, or -RTD_E_STATE
 * after the builder has finished.
 */
RTD_API int rtd_nettrace_profiler_event(rtd_nettrace_profiler *p,
					rtd_nettrace *dec,
					const struct rtd_nettrace_event *ev);

/**
 * rtd_nettrace_profiler_seqpoint - tell the builder a sequence point passed
 * @p: the builder
 *
 * Call from your rtd_nettrace_seqpoint_fn. Samples buffered since the
 * previous sequence point are ordered and accounted.
 *
 * Returns: 0, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_profiler_seqpoint(rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_finish - resolve names and fill a one-type profile
 * @p: the builder
 * @out: an empty profile from rtd_profile_new("cpu", "nanoseconds");
 *       stacks are added with frames root first, values in nanoseconds of
 *       thread time summed over threads (dotnetdiag's output)
 *
 * Samples after the last sequence point are accounted too. After it,
 * rtd_nettrace_profiler_profile() still works.
 *
 * Returns: 0, -ENOMEM, or -RTD_E_STATE when called twice.
 */
RTD_API int rtd_nettrace_profiler_finish(rtd_nettrace_profiler *p,
					 struct rtd_profile *out);

/**
 * rtd_nettrace_profiler_profile - the profile of one kind
 * @p: the builder
 * @kind: one RTD_NETTRACE_PROFILE_* bit the builder was made for
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Resolves names (accounting what is pending first) and builds a new
 * profile with pprof's sample types for the kind, the last one the
 * default: CPU "samples/count" + "wall/nanoseconds" ("cpu/nanoseconds"
 * with @running_only); ALLOC "alloc_objects/count" + "alloc_space/bytes";
 * LOCK and WAIT "contentions/count" + "delay/nanoseconds" (Go's mutex
 * and block profiles); EXCEPTION "exceptions/count". Samples carry their thread id; frames are
 * RTD_FRAME_MANAGED with their addresses, the allocated or thrown type a
 * leaf frame of kind RTD_FRAME_OTHER. No more events are taken after it.
 *
 * Returns: the profile (rtd_profile_free() it), or NULL: -RTD_E_INVAL for
 * a kind the builder does not keep, -ENOMEM, -RTD_E_CAP.
 */
RTD_API struct rtd_profile *
rtd_nettrace_profiler_profile(rtd_nettrace_profiler *p, unsigned kind,
			      int *err);

/**
 * typedef rtd_nettrace_thread_stack_fn - one thread's latest sampled stack
 * @ctx: as given
 * @tid: the thread
 * @frames: its frames, leaf first, "module!Namespace.Method(signature)"
 *          ("?!?" for an address no method covers); valid during the call
 * @n: their count
 *
 * Returns: 0 to go on; anything else stops the walk and is returned.
 */
typedef int (*rtd_nettrace_thread_stack_fn)(void *ctx, uint64_t tid,
					    const char *const *frames,
					    size_t n);

/**
 * rtd_nettrace_profiler_thread_stacks - where every sampled thread was last
 * @p: the builder (made with RTD_NETTRACE_PROFILE_CPU)
 * @fn: called once per thread that has a sample, by thread id
 * @ctx: passed to @fn
 *
 * The managed stack of each thread at its latest ThreadSample: what
 * 'dotnet-stack report' prints. Accounts what is pending first; no more
 * events are taken after it.
 *
 * Returns: 0, -ENOMEM, or what @fn returned.
 */
RTD_API int rtd_nettrace_profiler_thread_stacks(rtd_nettrace_profiler *p,
						rtd_nettrace_thread_stack_fn fn,
						void *ctx);

/* Number of profile kinds: rtd_nettrace_profiler_take() fills one slot
 * per kind, in the order of the RTD_NETTRACE_PROFILE_* bits. */
#define RTD_NETTRACE_PROFILE_KINDS 5

/**
 * rtd_nettrace_profiler_take - the profiles of the events since the last
 * take, for a session that goes on (a continuous profiler's windows)
 * @p: the builder
 * @out: RTD_NETTRACE_PROFILE_KINDS slots: out[0] CPU, out[1] allocations,
 *       out[2] locks, out[3] exceptions, out[4] waits; each receives a new profile (as
 *       rtd_nettrace_profiler_profile() makes it) when the kind has values
 *       since the last take, else NULL
 *
 * Samples buffered since the last sequence point are accounted first;
 * names are resolved with the methods seen so far (events from a rundown
 * run on the side may name them). The values and stacks taken are then
 * dropped, so memory does not grow with the session's length; methods,
 * modules and each thread's state (its previous sample, an open
 * contention or wait) stay, so the next take goes on where this one ended.
 *
 * Returns: the number of samples with a frame no known method covers
 * (named "?!?": a rundown would name them), -ENOMEM, -RTD_E_CAP, or
 * -RTD_E_STATE after the builder has finished.
 */
RTD_API int rtd_nettrace_profiler_take(rtd_nettrace_profiler *p,
				       struct rtd_profile **out);

/**
 * rtd_nettrace_profiler_samples - number of ThreadSample events seen
 * @p: the builder
 *
 * Returns: the count.
 */
RTD_API uint64_t rtd_nettrace_profiler_samples(const rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_count - events counted into a kind's profile
 * @p: the builder
 * @kind: an RTD_NETTRACE_PROFILE_* bit
 *
 * CPU: the samples accounted (with @running_only, the Managed ones);
 * ALLOC: allocation ticks; LOCK: contentions that ended in the session;
 * EXCEPTION: exceptions thrown; WAIT: waits that ended in the session. Samples still pending before a sequence
 * point are not counted yet.
 *
 * Returns: the count.
 */
RTD_API uint64_t rtd_nettrace_profiler_count(const rtd_nettrace_profiler *p,
					     unsigned kind);

/**
 * rtd_nettrace_profiler_thread_cpu - give the CPU profile the kernel's
 *                                    CPU time of the sampled threads
 * @p: a builder with @running_only
 * @before: rtd_thread_cpu_read() of the process at the session's start
 * @nbefore: its length
 * @after: the same at the session's end
 * @nafter: its length
 *
 * The SampleProfiler does not see the CPU: about every millisecond it
 * suspends the runtime and records each managed thread's state, Managed
 * (in managed code) or External, with its stack. A thread in managed code
 * that is runnable but not running (more threads than CPUs), or spinning
 * in Monitor.Enter's slow path, is Managed all the same, so the thread
 * time of the Managed samples can exceed wall time x CPUs many times.
 * With the kernel's figures, each thread's CPU time in the session is
 * spread over its samples (of either state) by their thread time, and
 * the CPU profile keeps the Managed samples' shares: CPU time as the
 * kernel counted it, in the stacks the sampler saw; never more than the
 * threads really used. A thread missing from @after (it ended during the
 * session) weighs nothing; one missing from @before began in the session.
 * Call before the profile is built.
 *
 * Returns: 0, -RTD_E_INVAL (not @running_only), or -ENOMEM.
 */
RTD_API int rtd_nettrace_profiler_thread_cpu(rtd_nettrace_profiler *p,
					     const struct rtd_thread_cpu *before,
					     size_t nbefore,
					     const struct rtd_thread_cpu *after,
					     size_t nafter);

/**
 * struct rtd_nettrace_cpu_stats - what the CPU profile's total is made of
 * @sz: sizeof(struct rtd_nettrace_cpu_stats), set by the caller
 * @kernel_known: rtd_nettrace_profiler_thread_cpu() was given
 * @thread_ns: the thread time of the samples kept (with @running_only the
 *             Managed ones): what the sampler alone can tell, not CPU
 * @placed_ns: with @kernel_known, the CPU time in those samples (the
 *             profile's total); else equal to @thread_ns
 * @sampled_ns: the CPU time of the sampled threads in the session
 * @process_ns: the CPU time of every thread of the process in it
 * @threads_unknown: sampled threads the kernel gave no figure for
 */
struct rtd_nettrace_cpu_stats {
	size_t sz;
	bool kernel_known;
	uint64_t thread_ns;
	uint64_t placed_ns;
	uint64_t sampled_ns;
	uint64_t process_ns;
	size_t threads_unknown;
};

/**
 * rtd_nettrace_profiler_cpu_stats - the CPU profile's totals
 * @p: the builder (its pending samples are accounted first)
 * @st: filled in; @st->sz set by the caller
 *
 * Returns: 0, -RTD_E_INVAL, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_profiler_cpu_stats(rtd_nettrace_profiler *p,
					    struct rtd_nettrace_cpu_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_H */
