/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_data.h - perf.data as Linux perf writes it (the kernel's
 * tools/perf/Documentation/perf.data-file-format.txt), read as a stream of
 * decoded records, and as a record source (rtdiag/source.h).
 *
 * The decoder reads the file header, the attributes with their ids and the
 * feature sections (event descriptions, tracing data, build ids, command
 * line, clock) when opened, then gives the data section's records one at
 * a time with rtd_perf_data_next(): PERF_RECORD_COMPRESSED records (perf
 * record -z, zstd) are inflated on the way, and the records of each round
 * (between two PERF_RECORD_FINISHED_ROUND) are put in time order as perf
 * report does: a record is given out once no later round can hold an
 * earlier one. Memory: a chunk of the file, the records of about two
 * rounds (at most RTD_PERF_DATA_MAX_QUEUE bytes), the feature sections.
 *
 * Errors name what and where: rtd_perf_data_error() gives a message and
 * the file offset of the damage; the records before it were given out.
 */
#ifndef RTDIAG_PERF_DATA_H
#define RTDIAG_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/perf.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_perf_data rtd_perf_data;

/* Caps, each named for what it bounds. */
#define RTD_PERF_DATA_MAX_ATTRS 4096u          /* events (attributes) */
#define RTD_PERF_DATA_MAX_IDS (1u << 20)       /* ids of all events */
#define RTD_PERF_DATA_MAX_FEATURE (64u << 20)  /* one feature section's bytes */
#define RTD_PERF_DATA_MAX_QUEUE (512u << 20)   /* record bytes held to sort */
#define RTD_PERF_DATA_MAX_BUILD_IDS (1u << 16) /* build-id entries */

/* Flags for rtd_perf_data_opts.flags. */
enum rtd_perf_data_flags {
	/* give the records in the file's order (no sorting by time) */
	RTD_PERF_DATA_FILE_ORDER = 1u << 0,
	/* leave the tracing data's format texts unparsed (libtraceevent
	 * 1.7 crashes and leaks on malformed ones, docs/perf.md): a
	 * tracepoint has its name, no fields */
	RTD_PERF_DATA_NO_FORMATS = 1u << 1,
};

/**
 * struct rtd_perf_data_opts - options for rtd_perf_data_open()
 * @sz: sizeof(struct rtd_perf_data_opts)
 * @flags: enum rtd_perf_data_flags
 */
struct rtd_perf_data_opts {
	size_t sz;
	unsigned flags;
};

/**
 * rtd_perf_data_open - open a perf.data file (perf's layout, or pipe mode:
 * `perf record -o - > x.data`)
 * @path: the file
 * @opts: options, or NULL
 * @out: gets the decoder, also when it fails after reading the header
 *       (then rtd_perf_data_error() says why; free it); NULL when the file
 *       cannot be opened or memory is short
 *
 * Returns: 0; -errno; -RTD_E_FORMAT (not perf.data, or a damaged header
 * or feature section), -RTD_E_TRUNCATED, -RTD_E_CAP, -RTD_E_UNSUPPORTED
 * (a big-endian file).
 */
RTD_API int rtd_perf_data_open(const char *path, const struct rtd_perf_data_opts *opts,
			       rtd_perf_data **out);

/**
 * rtd_perf_data_open_mem - read perf.data from memory
 * @buf: the bytes (borrowed: they must outlive the decoder)
 * @len: their count
 * @opts: options, or NULL
 * @out: as rtd_perf_data_open()
 *
 * Returns: as rtd_perf_data_open().
 */
RTD_API int rtd_perf_data_open_mem(const void *buf, size_t len,
				   const struct rtd_perf_data_opts *opts, rtd_perf_data **out);

/**
 * rtd_perf_data_open_reader - read a pipe-mode perf.data from a stream
 * (`perf record -o - | ...`)
 * @read: gives the next bytes into @buf (at most @len): their count, 0 at
 *        the end, or -errno
 * @ctx: its first argument
 * @opts: options, or NULL
 * @out: as rtd_perf_data_open()
 *
 * The stream is read once, in order, 1 MiB at a time. A file of perf's
 * seekable layout (its features follow the data) cannot be read so.
 *
 * Returns: as rtd_perf_data_open(); -RTD_E_UNSUPPORTED for a file that is
 * not in pipe mode.
 */
RTD_API int rtd_perf_data_open_reader(int64_t (*read)(void *ctx, void *buf, size_t len),
				      void *ctx, const struct rtd_perf_data_opts *opts,
				      rtd_perf_data **out);

/**
 * rtd_perf_data_free - free a decoder (and close its file)
 * @d: the decoder; NULL does nothing
 */
RTD_API void rtd_perf_data_free(rtd_perf_data *d);

/**
 * struct rtd_perf_data_event - one event (attribute) of the file
 * @name: as perf names it ("cpu-clock", "cycles", "sched:sched_switch"),
 *        from the event descriptions, else from the type and config
 * @type: attr.type
 * @config: attr.config
 * @sample_type: attr.sample_type
 * @sample_regs_user: attr.sample_regs_user
 * @sample_period: attr.sample_period (or the frequency, with @freq)
 * @freq: attr.freq
 * @nids: entries in @ids
 * @ids: the ids its records carry
 * @nfields: a tracepoint's fields (from the tracing data), 0 otherwise
 * @fields: their descriptions (decode with rtd_perf_data_field())
 */
struct rtd_perf_data_event {
	const char *name;
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t sample_regs_user;
	uint64_t sample_period;
	bool freq;
	uint32_t nids;
	const uint64_t *ids;
	unsigned nfields;
	const struct rtd_perf_field *fields;
};

/**
 * rtd_perf_data_nevents - the number of events in the file
 * @d: the decoder
 *
 * Returns: the count.
 */
RTD_API size_t rtd_perf_data_nevents(const rtd_perf_data *d);

/**
 * rtd_perf_data_event - one event
 * @d: the decoder
 * @i: its index (0 .. rtd_perf_data_nevents() - 1)
 *
 * Returns: the event (valid as long as @d), or NULL for a bad @i.
 */
RTD_API const struct rtd_perf_data_event *rtd_perf_data_event(const rtd_perf_data *d, size_t i);

/**
 * struct rtd_perf_data_info - what the header and feature sections say
 * @hostname: HEADER_HOSTNAME, or NULL
 * @os_release: HEADER_OSRELEASE, or NULL
 * @version: HEADER_VERSION (perf's version), or NULL
 * @arch: HEADER_ARCH, or NULL
 * @cmdline: HEADER_CMDLINE, its words joined by spaces, or NULL
 * @clockid: HEADER_CLOCKID (perf record -k), -1 when absent (perf's own
 *           clock, local_clock())
 * @clock_ref_ns: HEADER_CLOCK_DATA: a time of @clockid...
 * @clock_wall_ns: ...and the wall-clock time then (0: no clock data)
 * @compressed: HEADER_COMPRESSED: records are zstd-compressed
 * @data_offset: the data section's offset
 * @data_size: its size
 * @features: bit i set: feature i is present (i < 64)
 */
struct rtd_perf_data_info {
	const char *hostname;
	const char *os_release;
	const char *version;
	const char *arch;
	const char *cmdline;
	int64_t clockid;
	uint64_t clock_ref_ns;
	uint64_t clock_wall_ns;
	bool compressed;
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t features;
};

/**
 * rtd_perf_data_info - the header's facts
 * @d: the decoder
 *
 * Returns: the facts (valid as long as @d).
 */
RTD_API const struct rtd_perf_data_info *rtd_perf_data_info(const rtd_perf_data *d);

/**
 * struct rtd_perf_data_build_id - one HEADER_BUILD_ID entry
 * @pid: the process (-1: the kernel and its modules)
 * @len: bytes of @id
 * @id: the GNU build id
 * @path: the file
 */
struct rtd_perf_data_build_id {
	int32_t pid;
	uint8_t len;
	uint8_t id[20];
	const char *path;
};

/**
 * rtd_perf_data_build_ids - the build ids perf recorded for the files hit
 * @d: the decoder
 * @n: gets their count
 *
 * Returns: the entries (valid as long as @d).
 */
RTD_API const struct rtd_perf_data_build_id *rtd_perf_data_build_ids(const rtd_perf_data *d,
								     size_t *n);

/**
 * struct rtd_perf_data_rec - one record of the data section
 * @s: the decoded record (its pointers are borrowed until the next call):
 *     the kernel's records only; those perf adds itself (types 64 and up:
 *     FINISHED_ROUND, COMPRESSED, ...) are used inside and not given out
 * @event: the index of its event, -1 when its id is not known (or it
 *         carries none)
 * @offset: its offset in the file (inside a compressed record: the
 *          compressed record's)
 */
struct rtd_perf_data_rec {
	const struct rtd_perf_sample *s;
	int event;
	uint64_t offset;
};

/* Record types perf adds to its files (tools/perf/util/event.h). */
enum {
	RTD_PERF_RECORD_FINISHED_ROUND = 68,
	RTD_PERF_RECORD_COMPRESSED = 81,
	RTD_PERF_RECORD_FINISHED_INIT = 82,
};

/**
 * rtd_perf_data_next - the next record
 * @d: the decoder
 * @out: gets the record, borrowed until the next call on @d
 *
 * Returns: 1 with a record, 0 at the data section's end, or a negative
 * error (again on every later call; rtd_perf_data_error() says what and
 * where).
 */
RTD_API int rtd_perf_data_next(rtd_perf_data *d, struct rtd_perf_data_rec *out);

/**
 * rtd_perf_data_error - the last error's message
 * @d: the decoder
 * @offset: gets the file offset where it was found (may be NULL)
 *
 * Returns: "" when there was none; valid until the next call on @d.
 */
RTD_API const char *rtd_perf_data_error(const rtd_perf_data *d, uint64_t *offset);

/**
 * rtd_perf_data_field - decode a tracepoint field of a sample
 * @ev: the sample's event
 * @s: a PERF_RECORD_SAMPLE with raw data
 * @i: the field's index in @ev->fields
 * @v: gets the value; strings and arrays point into the sample
 *
 * Returns: 0, -RTD_E_INVAL (@i out of range), -RTD_E_TRUNCATED when the
 * raw data is too short for it, -RTD_E_FORMAT.
 */
RTD_API int rtd_perf_data_field(const struct rtd_perf_data_event *ev,
				const struct rtd_perf_sample *s, unsigned i,
				struct rtd_perf_value *v);

/**
 * struct rtd_perf_data_stats - what a decoder read
 * @records: records given out (those inside compressed ones included)
 * @samples: PERF_RECORD_SAMPLE among them
 * @lost: events the kernel reported lost (PERF_RECORD_LOST's counts)
 * @rounds: PERF_RECORD_FINISHED_ROUND records
 * @compressed: PERF_RECORD_COMPRESSED records inflated
 * @unknown_ids: records whose id matched no event
 * @max_queued: the most record bytes held at once to sort them
 */
struct rtd_perf_data_stats {
	uint64_t records, samples, lost, rounds, compressed, unknown_ids;
	uint64_t max_queued;
};

/**
 * rtd_perf_data_stats - counts so far
 * @d: the decoder
 * @out: filled in
 */
RTD_API void rtd_perf_data_stats(const rtd_perf_data *d, struct rtd_perf_data_stats *out);

/* ---- as a record source ------------------------------------------------ */

/**
 * struct rtd_perf_data_source_opts - options for rtd_perf_data_source()
 * @sz: sizeof(struct rtd_perf_data_source_opts)
 * @sym_flags: enum rtd_sym_flags for the symbolizer (RTD_SYM_NO_PROC_LOAD
 *             is always added: the recorded processes are gone; and
 *             RTD_SYM_VERSIONED: names as perf shows them)
 * @kallsyms: kernel symbol file (NULL: /proc/kallsyms)
 */
struct rtd_perf_data_source_opts {
	size_t sz;
	unsigned sym_flags;
	const char *kallsyms;
};

/**
 * rtd_perf_data_source - a perf.data file as a record source
 * @d: the decoder, fresh from rtd_perf_data_open(); owned by the source
 *     from now on (freed with it, also when this fails)
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Records: PROCESS and THREAD the first time a pid or tid appears and
 * again when its name changes (COMM); a SAMPLE per sample of a
 * non-tracepoint event (@name the event's, value 1, unit "count", the
 * field "period"), its stack symbolized by rtdiag from the file's
 * MMAP/MMAP2/FORK/EXIT records (a --call-graph dwarf sample is unwound
 * from its copy of the user stack); an INSTANT per tracepoint sample
 * (@name "sys:event", @category "tracepoint", its fields, its stack);
 * a SLICE "off-cpu" per wait seen in SWITCH/SWITCH_CPU_WIDE records
 * (perf record --switch-events), named "preempted" or "waiting"; an
 * INSTANT "lost" (@category "perf", field "lost") per LOST record.
 *
 * Clock: RTD_CLOCK_MONOTONIC when perf recorded with -k monotonic
 * (HEADER_CLOCKID), anchored to wall time by HEADER_CLOCK_DATA; perf's
 * own clock otherwise (local_clock(), close to CLOCK_MONOTONIC but not
 * anchored to it).
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -ENOMEM.
 */
RTD_API rtd_source *rtd_perf_data_source(rtd_perf_data *d,
					 const struct rtd_perf_data_source_opts *opts, int *err);

/* ---- writing ------------------------------------------------------------ */

typedef struct rtd_perf_data_writer rtd_perf_data_writer;
struct perf_event_attr;

/* Caps of a writer. */
#define RTD_PERF_DATA_WRITER_MAX_EVENTS 64u /* events */

/**
 * struct rtd_perf_data_writer_opts - options for rtd_perf_data_writer_new()
 * @sz: sizeof(struct rtd_perf_data_writer_opts)
 * @cmdline: HEADER_CMDLINE's text (NULL: none)
 */
struct rtd_perf_data_writer_opts {
	size_t sz;
	const char *cmdline;
};

/**
 * rtd_perf_data_writer_new - start writing a perf.data file
 * @f: the file, open for writing and seekable (borrowed: the caller closes
 *     it after rtd_perf_data_writer_finish())
 * @opts: options, or NULL
 * @out: gets the writer
 *
 * The file is what perf record writes: the header, the events' attributes
 * and ids, the records as the kernel wrote them, and the feature sections
 * perf report and perf script read (event names, command line, host,
 * OS release, arch, CPUs), and the build ids of the kernel and of every
 * file mapped executable in the synthesized and the recorded MMAP/MMAP2
 * records (HEADER_BUILD_ID, as perf record --buildid-all: perf report
 * and perf archive find the files by them). Give every event with
 * rtd_perf_data_writer_event() before the first record.
 *
 * Returns: 0, -errno, -RTD_E_INVAL.
 */
RTD_API int rtd_perf_data_writer_new(FILE *f, const struct rtd_perf_data_writer_opts *opts,
				     rtd_perf_data_writer **out);

/**
 * rtd_perf_data_writer_event - describe one event of the records to come
 * @w: the writer
 * @attr: its perf_event_attr as it was opened (copied)
 * @name: its name ("cpu-clock", "sched:sched_switch")
 * @ids: the kernel ids of its descriptors (PERF_EVENT_IOC_ID; copied)
 * @nids: their count
 *
 * Returns: 0, -RTD_E_STATE (after the first record), -RTD_E_CAP
 * (RTD_PERF_DATA_WRITER_MAX_EVENTS), -ENOMEM.
 */
RTD_API int rtd_perf_data_writer_event(rtd_perf_data_writer *w,
				       const struct perf_event_attr *attr, const char *name,
				       const uint64_t *ids, size_t nids);

/**
 * rtd_perf_data_writer_record - append one record
 * @w: the writer
 * @rec: the record, header included, as the kernel wrote it
 * @len: its size (the header's)
 *
 * Returns: 0, -RTD_E_INVAL (a size that is not the header's), -errno.
 */
RTD_API int rtd_perf_data_writer_record(rtd_perf_data_writer *w, const void *rec, size_t len);

/**
 * rtd_perf_data_writer_synthesize - the records perf record makes for what
 * existed before recording: the kernel's mapping, and each thread's COMM
 * and each executable mapping (MMAP2) of @pid from /proc
 * @w: the writer (events given)
 * @pid: a process; -1: every process of the machine; 0: only the
 *       kernel's mapping
 *
 * Their sample_id trailers carry the first event's first id, time 0.
 *
 * Returns: 0, or -errno (a process that ended meanwhile is skipped).
 */
RTD_API int rtd_perf_data_writer_synthesize(rtd_perf_data_writer *w, pid_t pid);

/**
 * rtd_perf_data_writer_finish - write the feature sections and the header
 * (the file is flushed, not closed)
 * @w: the writer; freed, also on an error; NULL does nothing
 *
 * Returns: 0, or the first error writing the file met (-errno).
 */
RTD_API int rtd_perf_data_writer_finish(rtd_perf_data_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_DATA_H */
