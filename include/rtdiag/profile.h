/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/profile.h - one profile model and its writers.
 *
 * Every profile source (EventPipe CPU samples, perf samples, Go CPU and
 * heap samples, the agent's windows) builds an rtd_profile; every output
 * format (folded stacks, pprof, a top table, an SVG flame graph, speedscope
 * JSON) reads one through rtd_profile_write().
 *
 * The model:
 * - one or more *sample types* (pprof's sample_type list: "samples/count"
 *   and "cpu/nanoseconds", "alloc_objects/count" and "alloc_space/bytes",
 *   ...); every sample carries one value per type;
 * - *frames* with a display name, module, source file and line, address,
 *   mapping, kind (native, kernel, .NET, Go, ...) and an inlined flag;
 * - *mappings* (executable images: address range, file offset, path,
 *   build id), which pprof keeps so `go tool pprof -addresses` works;
 * - per-sample *thread* (pid, tid, name) and *labels* (key with a string
 *   or a number), which pprof keeps and speedscope uses for one profile per
 *   thread;
 * - profile *metadata*: source, process, start time and duration.
 *
 * Memory: a profile is a call tree of interned frames under one root per
 * distinct (thread, labels) context. Equal stacks share nodes, so memory
 * grows with the number of distinct call paths, never with the number of
 * samples. Every table has a cap (RTD_PROFILE_MAX_*); hitting one is
 * -RTD_E_CAP and the profile keeps everything added before.
 *
 * Views: pprof keeps every frame as given (locations with addresses and
 * mappings; inlined frames become extra lines of their caller's location).
 * The function-level views (folded, top, SVG, speedscope) merge frames of
 * the same display name along a path.
 *
 * The profile is not thread-safe: one writer at a time, readers only when
 * nobody adds.
 */
#ifndef RTDIAG_PROFILE_H
#define RTDIAG_PROFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_profile rtd_profile;

/* Caps, each named for what it bounds. */
#define RTD_PROFILE_MAX_TYPES 16            /* sample types per profile */
#define RTD_PROFILE_MAX_STRINGS (8u << 20)  /* distinct strings */
#define RTD_PROFILE_MAX_FRAMES (8u << 20)   /* distinct frames */
#define RTD_PROFILE_MAX_NODES (16u << 20)   /* call-tree nodes */
#define RTD_PROFILE_MAX_MAPPINGS (1u << 16) /* mappings */
#define RTD_PROFILE_MAX_CONTEXTS (1u << 20) /* distinct thread+labels sets */
#define RTD_PROFILE_MAX_LABELS 64           /* labels on one sample */
#define RTD_PROFILE_MAX_LINE (16u << 20)    /* one line of folded text */
#define RTD_PROFILE_MAX_PPROF (1u << 30)    /* a pprof message, uncompressed */

/**
 * struct rtd_profile_type - what a sample value measures
 * @type: e.g. "cpu", "samples", "alloc_space", "contentions"
 * @unit: e.g. "nanoseconds", "count", "bytes"
 */
struct rtd_profile_type {
	const char *type;
	const char *unit;
};

/**
 * struct rtd_profile_opts - options for rtd_profile_new2()
 * @sz: sizeof(struct rtd_profile_opts)
 * @types: the sample types, 1 to RTD_PROFILE_MAX_TYPES; copied
 * @ntypes: their count
 * @default_type: index of the type one-value views show by default
 * @period_type: pprof's period_type; NULL strings: the default type's
 * @period: pprof's period (e.g. 10000000 for a 100 Hz cpu profile), 0 unset
 */
struct rtd_profile_opts {
	size_t sz;
	const struct rtd_profile_type *types;
	size_t ntypes;
	size_t default_type;
	struct rtd_profile_type period_type;
	int64_t period;
};

/**
 * rtd_profile_new2 - create an empty profile with several sample types
 * @o: the options; their strings are copied
 *
 * Returns: the profile, or NULL when out of memory or when @o is invalid
 * (no types, too many, a NULL type name, @default_type out of range).
 */
RTD_API rtd_profile *rtd_profile_new2(const struct rtd_profile_opts *o);

/**
 * rtd_profile_new - create an empty profile with one sample type
 * @sample_type: what a value measures, e.g. "cpu"; NULL: "samples"
 * @unit: its unit, e.g. "nanoseconds"; NULL: "count"
 *
 * Returns: the profile, or NULL when out of memory.
 */
RTD_API rtd_profile *rtd_profile_new(const char *sample_type,
				     const char *unit);

/**
 * rtd_profile_free - free a profile and every string it holds
 * @p: the profile; NULL does nothing
 */
RTD_API void rtd_profile_free(rtd_profile *p);

/**
 * rtd_profile_ntypes - number of sample types
 * @p: the profile
 *
 * Returns: at least 1.
 */
RTD_API size_t rtd_profile_ntypes(const rtd_profile *p);

/**
 * rtd_profile_get_type - one sample type
 * @p: the profile
 * @i: its index, below rtd_profile_ntypes()
 *
 * Returns: the type (strings valid until the profile is freed), or NULL
 * when @i is out of range.
 */
RTD_API const struct rtd_profile_type *
rtd_profile_get_type(const rtd_profile *p, size_t i);

/**
 * rtd_profile_find_type - index of a sample type by name
 * @p: the profile
 * @type: the type's name ("cpu", "alloc_space", ...); NULL: the default
 *
 * Returns: the index (>= 0), or -RTD_E_NOTFOUND.
 */
RTD_API int rtd_profile_find_type(const rtd_profile *p, const char *type);

/**
 * rtd_profile_default_type - index of the default sample type
 * @p: the profile
 *
 * Returns: the index given at creation (0 for rtd_profile_new()).
 */
RTD_API size_t rtd_profile_default_type(const rtd_profile *p);

/* ---- metadata ----------------------------------------------------------- */

/**
 * struct rtd_profile_meta - what the profile is of, for titles and pprof
 * @sz: sizeof(struct rtd_profile_meta)
 * @source: "perf", "eventpipe", "gotrace", "pprof", "folded", ...
 * @process: the process's name or command line
 * @pid: its id, 0 when unknown or when the profile covers several
 * @time_nanos: when sampling began, nanoseconds since the Unix epoch, 0 unknown
 * @duration_nanos: how long it lasted, 0 unknown
 * @comment: free text carried as a pprof comment
 */
struct rtd_profile_meta {
	size_t sz;
	const char *source;
	const char *process;
	int64_t pid;
	int64_t time_nanos;
	int64_t duration_nanos;
	const char *comment;
};

/**
 * rtd_profile_set_meta - set metadata fields
 * @p: the profile
 * @m: the fields to set: a NULL string or a 0 number leaves that field as
 *     it is, so a source can set what it knows as it learns it; strings
 *     are copied
 *
 * Returns: 0, -RTD_E_INVAL for a bad @m, or -ENOMEM.
 */
RTD_API int rtd_profile_set_meta(rtd_profile *p,
				 const struct rtd_profile_meta *m);

/**
 * rtd_profile_get_meta - read the metadata
 * @p: the profile
 * @m: filled in (unset strings are NULL); strings stay valid until the next
 *     rtd_profile_set_meta(), rtd_profile_merge() into @p, or free
 */
RTD_API void rtd_profile_get_meta(const rtd_profile *p,
				  struct rtd_profile_meta *m);

/* ---- frames, mappings, samples ------------------------------------------ */

/**
 * enum rtd_frame_kind - what kind of code a frame runs, for colours
 * @RTD_FRAME_UNKNOWN: not known
 * @RTD_FRAME_NATIVE: native user-space code (C, C++, Rust, the runtime's own)
 * @RTD_FRAME_KERNEL: the kernel
 * @RTD_FRAME_MANAGED: .NET managed code
 * @RTD_FRAME_GO: Go code
 * @RTD_FRAME_GO_RUNTIME: Go's runtime (package runtime and its kin)
 * @RTD_FRAME_INTERPRETED: interpreted or JIT code of another runtime
 * @RTD_FRAME_OTHER: a synthetic frame (a thread root, a marker)
 * @RTD_FRAME_RUNTIME: native code of a language runtime (libcoreclr,
 *                     libclrjit, libjvm, libpython...): not the program's
 * @RTD_FRAME_KIND_COUNT: number of kinds
 */
enum rtd_frame_kind {
	RTD_FRAME_UNKNOWN = 0,
	RTD_FRAME_NATIVE,
	RTD_FRAME_KERNEL,
	RTD_FRAME_MANAGED,
	RTD_FRAME_GO,
	RTD_FRAME_GO_RUNTIME,
	RTD_FRAME_INTERPRETED,
	RTD_FRAME_OTHER,
	RTD_FRAME_RUNTIME,
	RTD_FRAME_KIND_COUNT
};

/**
 * rtd_frame_kind_name - a kind's short name
 * @kind: an enum rtd_frame_kind value
 *
 * Returns: "native", "kernel", "managed", "go", "go-runtime",
 * "interpreted", "other" or "unknown"; never NULL.
 */
RTD_API const char *rtd_frame_kind_name(unsigned kind);

/**
 * struct rtd_frame - one frame of a call stack
 * @name: function name as people read it ("System.Text.Json!Utf8JsonWriter.Flush",
 *        "runtime.mallocgc", "do_syscall_64"); NULL or "" when unsymbolized
 * @module: the image or assembly it is in ("libc.so.6", "[kernel]",
 *          "System.Private.CoreLib"); NULL when unknown
 * @file: source file, NULL when unknown
 * @line: source line, 0 when unknown
 * @addr: instruction address, 0 when unknown
 * @mapping: an id from rtd_profile_add_mapping(), 0 for none
 * @kind: an enum rtd_frame_kind
 * @inlined: this frame was inlined into the next frame toward the root
 *           (its caller): they share one address, and pprof writes them as
 *           lines of one location
 *
 * A frame without a name but with an address is shown as
 * "module+0xOFFSET" (the offset in the mapping's file when the mapping is
 * known, else the address), or "0xADDR" without a module; it is never
 * dropped.
 */
struct rtd_frame {
	const char *name;
	const char *module;
	const char *file;
	uint32_t line;
	uint64_t addr;
	uint32_t mapping;
	uint8_t kind;
	bool inlined;
};

/**
 * rtd_profile_add_mapping - describe an executable mapping
 * @p: the profile
 * @start: first address of the mapping
 * @limit: one past its last address
 * @offset: file offset of @start
 * @file: the image's path, NULL or "" when unknown
 * @build_id: its build id as hex text, NULL when unknown
 *
 * Adding an equal mapping again returns the same id.
 * Returns: the mapping's id (>= 1), or -RTD_E_CAP, -ENOMEM.
 */
RTD_API int rtd_profile_add_mapping(rtd_profile *p, uint64_t start,
				    uint64_t limit, uint64_t offset,
				    const char *file, const char *build_id);

/**
 * struct rtd_label - one sample label (pprof Label)
 * @key: the label's name ("thread", "span_id", "bytes", ...)
 * @str: its text value; NULL for a numeric label
 * @num: its numeric value, when @str is NULL
 * @unit: the number's unit ("bytes", ...); NULL when none
 */
struct rtd_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

/**
 * struct rtd_sample - one sample for rtd_profile_add_sample()
 * @sz: sizeof(struct rtd_sample)
 * @frames: the call stack; copied, the caller keeps it
 * @nframes: number of frames; 0 adds to the totals only
 * @leaf_first: @frames[0] is the leaf (as perf and EventPipe give stacks);
 *              false: @frames[0] is the root (outermost caller)
 * @values: one value per sample type, in the profile's type order
 * @nvalues: how many; fewer than the types leaves the rest 0, more is
 *           -RTD_E_INVAL
 * @pid: the sampled process, 0 when unknown
 * @tid: the sampled thread, 0 when unknown
 * @thread: the thread's name, NULL when unknown
 * @labels: labels for pprof (up to RTD_PROFILE_MAX_LABELS); the thread
 *          needs none, it is written as labels "pid", "tid" and "thread"
 * @nlabels: their count
 */
struct rtd_sample {
	size_t sz;
	const struct rtd_frame *frames;
	size_t nframes;
	bool leaf_first;
	const int64_t *values;
	size_t nvalues;
	int64_t pid;
	int64_t tid;
	const char *thread;
	const struct rtd_label *labels;
	size_t nlabels;
};

/**
 * rtd_profile_add_sample - add one sample
 * @p: the profile
 * @s: the sample; everything is copied
 *
 * Equal stacks in the same context (thread and labels) are merged: their
 * values are summed. On error no value was added (strings, frames and
 * empty call-tree nodes made on the way may stay).
 * Returns: 0, -RTD_E_INVAL (bad @s, a mapping id never added), -RTD_E_CAP
 * or -ENOMEM.
 */
RTD_API int rtd_profile_add_sample(rtd_profile *p, const struct rtd_sample *s);

/**
 * rtd_profile_add - add weight to one call stack of frame names
 * @p: the profile
 * @frames: frame names, frames[0] the root (outermost caller) and
 *          frames[nframes-1] the leaf; copied, the caller keeps them;
 *          a NULL name is "?"
 * @nframes: number of frames; 0 adds to the profile's total only
 * @value: weight to add to the default sample type
 *
 * The frames have kind RTD_FRAME_UNKNOWN and no thread; equal stacks are
 * merged. Returns: 0, -RTD_E_CAP or -ENOMEM.
 */
RTD_API int rtd_profile_add(rtd_profile *p, const char *const *frames,
			    size_t nframes, int64_t value);

/**
 * rtd_profile_total - sum of every value of the default type
 * @p: the profile
 *
 * Returns: the total weight.
 */
RTD_API int64_t rtd_profile_total(const rtd_profile *p);

/**
 * rtd_profile_total_of - sum of every value of one type
 * @p: the profile
 * @type: the type's index
 *
 * Returns: the total, 0 for an index out of range.
 */
RTD_API int64_t rtd_profile_total_of(const rtd_profile *p, size_t type);

/**
 * rtd_profile_samples - how many samples a profile holds
 * @p: the profile
 *
 * A sample is one observation (a stack caught by a sampler, one event
 * such as a contention or an allocation tick), however many distinct
 * stacks they make: the total of the type named "samples" with unit
 * "count" or, without one, of the first type whose unit is "count"
 * ("contentions", "alloc_objects", "exceptions"). The top table and the
 * SVG subtitle say this number.
 *
 * Returns: the number, or -1 when no type counts (the profile then knows
 * only its stacks' values, e.g. nanoseconds alone).
 */
RTD_API int64_t rtd_profile_samples(const rtd_profile *p);

/**
 * struct rtd_profile_stats - sizes, for progress lines and tests
 * @samples: calls that added a sample (a source that adds each distinct
 *           stack once with its count makes this the number of stacks;
 *           rtd_profile_samples() counts samples)
 * @stacks: distinct (context, stack) paths with a value
 * @nodes: call-tree nodes
 * @frames: distinct frames
 * @strings: distinct strings
 * @mappings: mappings
 * @contexts: distinct thread+labels contexts
 * @threads: distinct threads (pid, tid) among them
 */
struct rtd_profile_stats {
	uint64_t samples;
	size_t stacks, nodes, frames, strings, mappings, contexts, threads;
};

/**
 * rtd_profile_get_stats - count what a profile holds
 * @p: the profile
 * @st: filled in
 */
RTD_API void rtd_profile_get_stats(const rtd_profile *p,
				   struct rtd_profile_stats *st);

/**
 * rtd_profile_merge - add every sample of one profile to another
 * @dst: the profile added to
 * @src: the profile read; unchanged
 *
 * Every type of @src must exist in @dst (matched by type and unit names);
 * @dst may have more. Threads, labels, frames and mappings are carried
 * over. Metadata: @dst keeps its own fields and takes those it lacks from
 * @src; the time span becomes the union of both spans.
 * Returns: 0, -RTD_E_INVAL when a type of @src is missing in @dst (nothing
 * is added then), -RTD_E_CAP or -ENOMEM (then @dst holds part of @src).
 */
RTD_API int rtd_profile_merge(rtd_profile *dst, const rtd_profile *src);

/**
 * rtd_profile_reset - drop every sample, frame and mapping
 * @p: the profile
 *
 * Keeps the types, period and the metadata's source, process and pid;
 * clears the time span. The node and frame arrays are kept for reuse.
 * Returns: 0, or -ENOMEM (then the profile can only be freed).
 */
RTD_API int rtd_profile_reset(rtd_profile *p);

/* ---- writers ---------------------------------------------------------------- */

/**
 * enum rtd_profile_format - output formats of rtd_profile_write()
 * @RTD_PROFILE_FMT_NONE: not a format (an unknown name or extension)
 * @RTD_PROFILE_FMT_FOLDED: folded stacks, "root;caller;leaf VALUE" per line
 * @RTD_PROFILE_FMT_PPROF: gzip-compressed pprof protobuf
 * @RTD_PROFILE_FMT_TOP: a table of the frames with most self weight
 * @RTD_PROFILE_FMT_SVG: an interactive flame graph, one self-contained SVG
 * @RTD_PROFILE_FMT_SPEEDSCOPE: speedscope's JSON file format
 * @RTD_PROFILE_FMT_COUNT: number of values
 */
enum rtd_profile_format {
	RTD_PROFILE_FMT_NONE = 0,
	RTD_PROFILE_FMT_FOLDED,
	RTD_PROFILE_FMT_PPROF,
	RTD_PROFILE_FMT_TOP,
	RTD_PROFILE_FMT_SVG,
	RTD_PROFILE_FMT_SPEEDSCOPE,
	RTD_PROFILE_FMT_COUNT
};

/**
 * rtd_profile_format_from_name - a format by its name
 * @name: "folded", "pprof", "top", "svg" or "speedscope" (also
 *        "collapsed", "flamegraph")
 *
 * Returns: the format, or RTD_PROFILE_FMT_NONE.
 */
RTD_API enum rtd_profile_format rtd_profile_format_from_name(const char *name);

/**
 * rtd_profile_format_from_path - the format a file name asks for
 * @path: an output path: ".svg"; ".speedscope.json" (speedscope); ".pb.gz",
 *        ".pb", ".pprof", ".prof" (pprof); ".folded", ".collapsed",
 *        ".stacks" (folded); ".txt" (top), as rtd_format_ext_of()'s table
 *        (rtdiag/format.h) says: ".json" is a Chrome JSON timeline there,
 *        no profile
 *
 * Returns: the format, or RTD_PROFILE_FMT_NONE for any other name.
 */
RTD_API enum rtd_profile_format rtd_profile_format_from_path(const char *path);

/**
 * rtd_profile_format_name - a format's name, as rtd_profile_format_from_name()
 * takes it
 * @fmt: the format
 *
 * Returns: a static string, "none" for RTD_PROFILE_FMT_NONE or out of range.
 */
RTD_API const char *rtd_profile_format_name(enum rtd_profile_format fmt);

/**
 * struct rtd_profile_write_opts - options for rtd_profile_write()
 * @sz: sizeof(struct rtd_profile_write_opts)
 * @type: the sample type one-value formats show (folded, top, SVG,
 *        speedscope), by name; NULL: the default type. pprof writes all.
 * @title: SVG and speedscope title; NULL: made from the metadata
 * @inverted: SVG: an icicle graph (roots at the top) instead of a flame graph
 * @width: SVG width in pixels; 0: 1200
 * @min_width: SVG: frames narrower than this many pixels are merged into
 *             one grey box per parent; 0: 0.1
 * @top: TOP: number of rows; 0: 30
 * @thread_roots: folded, SVG: start every stack with a frame naming its
 *                thread (samples without a thread get none)
 */
struct rtd_profile_write_opts {
	size_t sz;
	const char *type;
	const char *title;
	bool inverted;
	unsigned width;
	double min_width;
	size_t top;
	bool thread_roots;
};

/**
 * rtd_profile_write - write a profile in one format
 * @p: the profile
 * @fmt: the format
 * @f: output stream
 * @o: options, NULL for the defaults
 *
 * Returns: 0, -RTD_E_INVAL (unknown format or options), -RTD_E_NOTFOUND
 * (no such @o->type), -ENOMEM, or -EIO when writing to @f failed.
 */
RTD_API int rtd_profile_write(const rtd_profile *p,
			      enum rtd_profile_format fmt, FILE *f,
			      const struct rtd_profile_write_opts *o);

/**
 * rtd_profile_write_folded - write folded stacks of the default type
 * @p: the profile
 * @f: output stream
 *
 * One line per distinct function-level stack, "root;caller;leaf VALUE",
 * sorted by stack text so output is stable; stacks of value 0 are left out.
 * Same as rtd_profile_write() with RTD_PROFILE_FMT_FOLDED.
 * Returns: 0, -ENOMEM, or -EIO on write error.
 */
RTD_API int rtd_profile_write_folded(const rtd_profile *p, FILE *f);

/**
 * rtd_profile_write_pprof - write a gzip-compressed pprof protobuf
 * @p: the profile
 * @f: output stream
 *
 * Readable by `go tool pprof` and every pprof consumer: all sample types,
 * mappings, locations with addresses and lines (inlined frames as extra
 * lines), functions with file names, labels (the thread as "pid", "tid",
 * "thread"), period, time, duration and comments from the metadata.
 * Returns: 0, -ENOMEM, or -EIO.
 */
RTD_API int rtd_profile_write_pprof(const rtd_profile *p, FILE *f);

/**
 * enum rtd_profile_go_text - Go's legacy text forms (net/http/pprof ?debug=1)
 * @RTD_PROFILE_GO_HEAP: "heap profile: ..." (Go's /allocs and /heap):
 *                       inuse_objects, inuse_space, alloc_objects,
 *                       alloc_space, each 0 where the profile lacks it
 * @RTD_PROFILE_GO_CONTENTION: "--- contention:" (Go's /block): delay as
 *                             cycles of a 1 GHz clock, contentions
 * @RTD_PROFILE_GO_MUTEX: "--- mutex:" (Go's /mutex), the same values
 */
enum rtd_profile_go_text {
	RTD_PROFILE_GO_HEAP = 1,
	RTD_PROFILE_GO_CONTENTION,
	RTD_PROFILE_GO_MUTEX,
};

/**
 * rtd_profile_write_go_text - write a profile as runtime/pprof's WriteTo(w, 1)
 * @p: the profile
 * @form: which of Go's text forms
 * @f: output stream
 *
 * A header, then one record per stack, largest first: its values and
 * its frames' addresses (leaf first; a frame without an address gets a
 * made-up one, distinct per frame), then a "#" line per frame with the
 * address, name+0x0 and file:line ("?:0" unknown). pprof's legacy
 * parser reads it (addresses only: the names are for people).
 * Returns: 0, -RTD_E_INVAL (a form whose value types @p lacks: the lock
 * forms need "delay" and "contentions"), -ENOMEM or -EIO.
 */
RTD_API int rtd_profile_write_go_text(const rtd_profile *p,
				      enum rtd_profile_go_text form, FILE *f);

/**
 * struct rtd_otlp_attr - an OpenTelemetry attribute of a resource
 * @key: its name ("service.name", "process.pid", ...); NULL skips it
 * @str: its string value; NULL for an integer
 * @num: its integer value, when @str is NULL
 */
struct rtd_otlp_attr {
	const char *key;
	const char *str;
	int64_t num;
};

/**
 * struct rtd_otlp_resource - the profiles of one resource (a process)
 * @attrs: the resource's attributes (semantic conventions: service.name,
 *         process.pid, host.name, container.id, k8s.pod.uid, ...)
 * @nattrs: their count
 * @profiles: its profiles; NULL entries are skipped
 * @nprofiles: their count
 */
struct rtd_otlp_resource {
	const struct rtd_otlp_attr *attrs;
	size_t nattrs;
	const rtd_profile *const *profiles;
	size_t nprofiles;
};

/**
 * struct rtd_otlp_opts - options of rtd_profile_write_otlp()
 * @sz: sizeof(struct rtd_otlp_opts)
 * @scope_name: the instrumentation scope's name; NULL: "rtdiag"
 * @scope_version: its version; NULL: rtdiag's
 */
struct rtd_otlp_opts {
	size_t sz;
	const char *scope_name;
	const char *scope_version;
};

/**
 * rtd_profile_write_otlp - write profiles as OpenTelemetry profiles (alpha)
 * @res: the resources and their profiles
 * @nres: their count
 * @o: options, NULL for the defaults
 * @f: output stream
 *
 * Writes one ProfilesData message of opentelemetry-proto v1.11.0
 * (opentelemetry/proto/profiles/v1development/profiles.proto), which is
 * also the body of an OTLP/HTTP export (ExportProfilesServiceRequest has
 * the same fields), uncompressed protobuf. One dictionary serves every
 * profile; each sample type of a profile is a Profile of its own (the
 * signal has one type a Profile); frames inlined into their caller are
 * lines of one Location; a frame's kind is the Location attribute
 * "profile.frame.type"; a sample's thread the attributes "thread.id" and
 * "thread.name", its labels attributes of their names; time, duration and
 * period from the profile. The signal is alpha: its field numbers may
 * change in later releases.
 *
 * Returns: 0, -RTD_E_INVAL, -RTD_E_CAP (a table past 2^30 entries or a
 * message past 256 MiB), -ENOMEM, or -EIO.
 */
RTD_API int rtd_profile_write_otlp(const struct rtd_otlp_resource *res,
				   size_t nres, const struct rtd_otlp_opts *o,
				   FILE *f);

/**
 * struct rtd_profile_entry - one row of rtd_profile_top()
 * @name: frame name; valid until the profile is changed or freed
 * @self: weight where this frame is the leaf
 * @total: weight of stacks that contain this frame (counted once per stack)
 */
struct rtd_profile_entry {
	const char *name;
	int64_t self;
	int64_t total;
};

/**
 * rtd_profile_top - the frames with the most self weight (default type)
 * @p: the profile
 * @out: array receiving up to @max rows, highest self weight first
 * @max: its size
 *
 * Frames are merged by display name. Returns: the number of rows written
 * (>= 0), or -ENOMEM.
 */
RTD_API int rtd_profile_top(const rtd_profile *p,
			    struct rtd_profile_entry *out, size_t max);

/**
 * struct rtd_profile_sort_entry - one row of rtd_profile_top_sorted()
 * @comm: the sample's thread name, as perf's comm ("" when not a key or
 *        not known)
 * @pid: its process id (0 when not a key or not known)
 * @dso: the leaf frame's module, a file name ("" when not a key or not
 *       known)
 * @sym: the leaf frame's name ("" when not a key)
 * @self: the weight of the samples with these keys
 *
 * Strings are valid until the profile is changed or freed.
 */
struct rtd_profile_sort_entry {
	const char *comm;
	int64_t pid;
	const char *dso;
	const char *sym;
	int64_t self;
};

/**
 * rtd_profile_top_sorted - the weight of the leaves, grouped as
 * `perf report --sort KEYS --no-children` groups them
 * @p: the profile
 * @type: sample type index
 * @keys: perf's sort keys, comma-separated: comm (thread name), pid, dso
 *        (module), sym; samples equal in these are one row
 * @out: array receiving up to @max rows, heaviest first (ties in key
 *       order)
 * @max: its size
 *
 * Returns: the number of rows written, or -RTD_E_INVAL (an unknown or
 * repeated key, no key, a bad @type), -ENOMEM.
 */
RTD_API int rtd_profile_top_sorted(const rtd_profile *p, size_t type,
				   const char *keys,
				   struct rtd_profile_sort_entry *out,
				   size_t max);

/**
 * rtd_profile_top_of - rtd_profile_top() for any sample type
 * @p: the profile
 * @type: the type's index
 * @out: array receiving up to @max rows
 * @max: its size
 *
 * Returns: rows written (>= 0), -RTD_E_INVAL for a bad @type, or -ENOMEM.
 */
RTD_API int rtd_profile_top_of(const rtd_profile *p, size_t type,
			       struct rtd_profile_entry *out, size_t max);

/* ---- readers ---------------------------------------------------------------- */

/**
 * struct rtd_profile_read_err - where and why a reader stopped
 * @offset: byte offset of the damage in the input (uncompressed for pprof)
 * @line: line number (folded text), 0 otherwise
 * @msg: what was wrong, for people
 */
struct rtd_profile_read_err {
	uint64_t offset;
	uint64_t line;
	char msg[160];
};

/**
 * rtd_profile_read_folded - add folded stacks to a profile
 * @p: the profile; each line's count goes to its default type
 * @f: the text, "root;caller;leaf COUNT" per line (FlameGraph's suffixes
 *     "_[k]" kernel, "_[j]" JIT and "_[i]" inlined are understood)
 * @e: filled in on error; may be NULL
 *
 * Lines before a bad one are in @p. Returns: 0, -RTD_E_FORMAT (a line
 * without a count), -RTD_E_CAP (a line longer than RTD_PROFILE_MAX_LINE),
 * -ENOMEM or -EIO.
 */
RTD_API int rtd_profile_read_folded(rtd_profile *p, FILE *f,
				    struct rtd_profile_read_err *e);

/**
 * rtd_profile_read_pprof - decode a pprof profile
 * @out: receives a new profile with the pprof's sample types, even on
 *       error (then holding the samples before the damage), or NULL
 * @buf: the message, gzip-compressed or plain
 * @len: its length
 * @e: filled in on error; may be NULL
 *
 * Returns: 0, -RTD_E_FORMAT, -RTD_E_TRUNCATED, -RTD_E_VARINT, -RTD_E_CAP
 * (more than RTD_PROFILE_MAX_PPROF bytes uncompressed, or a table cap),
 * -ENOMEM.
 */
RTD_API int rtd_profile_read_pprof(rtd_profile **out, const void *buf,
				   size_t len, struct rtd_profile_read_err *e);

/**
 * rtd_profile_read - read a profile file, folded or pprof, whichever it is
 * @out: receives the profile (also on error, with what was read), or NULL
 * @f: the input
 * @e: filled in on error; may be NULL
 *
 * A folded profile has one type, "samples/count", and source "folded".
 * Returns: as the two readers.
 */
RTD_API int rtd_profile_read(rtd_profile **out, FILE *f,
			     struct rtd_profile_read_err *e);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PROFILE_H */
