/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/flight.h - the flight recorder: a ring of records (rtdiag/source.h)
 * that keeps only the last window of CLOCK_MONOTONIC time, in bounded
 * memory, and replays it as a source when something goes wrong
 * (docs/flight.md, issue #31).
 *
 * rtd_flight_add() deep-copies a record: its fixed part, its fields and
 * their string values go into the current chunk of a chunked arena; its
 * name, category, unit, field names and stack are interned in the ring's
 * own interner, so they stay alive whatever happens to the source that
 * gave them (when those grow past a quarter of the cap, the ring is copied
 * into a new interner holding only what its records still use). Whole
 * chunks leave the ring when their newest record is older
 * than the window (rtd_flight_trim()), or, oldest first, when the ring's
 * bytes would pass its hard cap. A new chunk is a sixteenth of what the
 * ring holds (4 KiB to 256 KiB), so the ring keeps about a sixteenth more
 * than its window, at any record rate.
 *
 * What leaves the ring is not forgotten entirely: the ring keeps the
 * latest name of every process and thread and the slices still open at
 * its start (begun before the window, not ended by then), so that a
 * snapshot names its tracks and opens those slices at its first instant
 * (field "begun_before_ns": how long before that they really began).
 *
 * rtd_flight_snapshot() gives the ring's records, oldest first, as a
 * source on CLOCK_MONOTONIC: the timeline and profile consumers write it
 * as any recording. A snapshot holds references to the chunks it spans,
 * so the ring may go on (add, trim, evict) while the snapshot is read,
 * on another thread too; one ring is used by one thread at a time.
 */
#ifndef RTDIAG_FLIGHT_H
#define RTDIAG_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_flight rtd_flight;

/* Caps and defaults. */
#define RTD_FLIGHT_DEFAULT_MAX_BYTES (256u << 20) /* the ring's hard cap */
#define RTD_FLIGHT_MIN_MAX_BYTES (1u << 20)       /* the smallest cap allowed */
#define RTD_FLIGHT_CHUNK_BYTES (256u << 10)       /* the largest arena chunk */
#define RTD_FLIGHT_MIN_CHUNK_BYTES (4u << 10)     /* the smallest */
#define RTD_FLIGHT_MAX_FIELDS 256u                /* fields kept per record */
#define RTD_FLIGHT_MAX_TRACKS (1u << 16)          /* named threads and open-slice tracks kept */
#define RTD_FLIGHT_MAX_OPEN 1024u                 /* slices open at once on one track */

/**
 * struct rtd_flight_opts - options for rtd_flight_new()
 * @sz: sizeof(struct rtd_flight_opts)
 * @window_ns: how much time the ring keeps, in ns (required, > 0)
 * @max_bytes: the hard cap on the ring's memory (chunks, interned names
 *             and stacks, kept names and open slices); 0:
 *             RTD_FLIGHT_DEFAULT_MAX_BYTES; at least RTD_FLIGHT_MIN_MAX_BYTES
 * @mono_error_ns: the error the snapshot's clock declares (the error of
 *                 the sources that fed the ring; 0 when they are
 *                 CLOCK_MONOTONIC themselves)
 */
struct rtd_flight_opts {
	size_t sz;
	int64_t window_ns;
	size_t max_bytes;
	uint64_t mono_error_ns;
};

/**
 * rtd_flight_new - an empty ring
 * @opts: options (required: the window)
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Returns: the ring, or NULL: -RTD_E_INVAL (no window, a cap below
 * RTD_FLIGHT_MIN_MAX_BYTES, bad @opts), -ENOMEM.
 */
RTD_API rtd_flight *rtd_flight_new(const struct rtd_flight_opts *opts, int *err);

/**
 * rtd_flight_free - free a ring (snapshots taken from it stay readable)
 * @f: the ring; NULL does nothing
 */
RTD_API void rtd_flight_free(rtd_flight *f);

/**
 * rtd_flight_add - a deep copy of a record into the ring
 * @f: the ring
 * @rec: the record (borrowed for the call), in order of @mono: a record
 *       earlier than the previous one is stored at the previous one's
 *       time (counted in struct rtd_flight_stats @clamped). An ERROR
 *       record is not stored (-RTD_E_INVAL).
 *
 * Evicts the oldest chunks when the ring would pass its cap (counted in
 * @capped_chunks). Fields past RTD_FLIGHT_MAX_FIELDS are dropped and
 * counted. Does not trim by time: call rtd_flight_trim().
 *
 * Returns: 0; -RTD_E_INVAL; -RTD_E_CAP when one record alone, or the
 * names and stacks interned, do not fit the cap (the ring is unchanged);
 * -ENOMEM.
 */
RTD_API int rtd_flight_add(rtd_flight *f, const struct rtd_record *rec);

/**
 * rtd_flight_trim - drop what is older than the window
 * @f: the ring
 * @now_mono: the time now (CLOCK_MONOTONIC ns): whole chunks whose newest
 *            record is before @now_mono - window leave the ring
 *
 * Returns: the chunks dropped.
 */
RTD_API size_t rtd_flight_trim(rtd_flight *f, int64_t now_mono);

/**
 * rtd_flight_snapshot - the ring's records as a source
 * @f: the ring
 * @out: gets the source (CLOCK_MONOTONIC; rtd_source_free() it): first
 *       the kept names of processes and threads and the slices open at
 *       the ring's start, then every record of the ring, oldest first.
 *       Records the ring takes after this call are not in it.
 *
 * Returns: 0, or -ENOMEM.
 */
RTD_API int rtd_flight_snapshot(rtd_flight *f, rtd_source **out);

/**
 * struct rtd_flight_stats - what a ring holds and has dropped
 * @records: records in the ring now
 * @bytes: the ring's memory now (chunks, interned names and stacks,
 *         kept names, open slices), what the cap bounds
 * @chunk_bytes: of @bytes, the chunks'
 * @intern_bytes: of @bytes, the interned names and stacks' (they stay as
 *                long as the ring: their number follows the distinct
 *                names and stacks seen, not the time)
 * @chunks: chunks in the ring now
 * @first_mono: the oldest record's time (0 when empty)
 * @last_mono: the newest record's time (0 when empty)
 * @added: records ever added
 * @record_bytes: arena bytes ever used by records (with @added: the
 *                average bytes per record)
 * @evicted_records: records that left by time or by the cap
 * @evicted_chunks: chunks that left by time
 * @capped_chunks: chunks that left because of the cap, before their time
 * @clamped: records added earlier than the previous one
 * @dropped_fields: fields past RTD_FLIGHT_MAX_FIELDS
 * @dropped_open: slices begun before the window not kept (a track past
 *                RTD_FLIGHT_MAX_OPEN or past RTD_FLIGHT_MAX_TRACKS)
 * @compactions: times the ring was copied into a new interner, holding
 *               only the names and stacks of the records still in it
 *               (when the interned bytes passed a quarter of the cap, or
 *               twice what they were after the last compaction)
 * @kind_added: @added by record kind (enum rtd_record_kind)
 * @kind_bytes: @record_bytes by record kind: with @kind_added, the bytes a
 *              sample, a slice, an instant take in the ring
 */
struct rtd_flight_stats {
	uint64_t records, bytes, chunk_bytes, intern_bytes, chunks;
	int64_t first_mono, last_mono;
	uint64_t added, record_bytes, evicted_records, evicted_chunks, capped_chunks;
	uint64_t clamped, dropped_fields, dropped_open, compactions;
	uint64_t kind_added[RTD_REC_KINDS], kind_bytes[RTD_REC_KINDS];
};

/**
 * rtd_flight_stats - counts now
 * @f: the ring
 * @out: filled in
 */
RTD_API void rtd_flight_stats(const rtd_flight *f, struct rtd_flight_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_FLIGHT_H */
