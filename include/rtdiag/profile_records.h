/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/profile_records.h - the profile as a consumer of the record
 * stream (rtdiag/source.h): the stacked records of one name (SAMPLE
 * records, and INSTANT records that carry a stack: a tracepoint's) become
 * samples of a profile (rtdiag/profile.h), on their threads.
 *
 * Each record adds its @value to the profile's first sample type and, when
 * the profile has a second, the record's field "period" (a perf sample's
 * period: nanoseconds of a clock event, events of a counter) to it. A
 * frame's kind comes from its module: "[kernel.kallsyms]" and other
 * "[name]" kernel modules are kernel code, a file is native code. THREAD
 * records name the samples' threads. Memory: one entry per thread.
 */
#ifndef RTDIAG_PROFILE_RECORDS_H
#define RTDIAG_PROFILE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/profile.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_profile_records rtd_profile_records;

/* Threads named, at most. */
#define RTD_PROFILE_RECORDS_MAX_THREADS (1u << 22)

/**
 * struct rtd_profile_records_opts - options for rtd_profile_records_new()
 * @sz: sizeof(struct rtd_profile_records_opts)
 * @name: take the records of this @name only ("cpu-clock",
 *        "sched:sched_switch"); NULL: the name of the first stacked record
 */
struct rtd_profile_records_opts {
	size_t sz;
	const char *name;
};

/**
 * rtd_profile_records_new - a consumer of records adding to a profile
 * @p: the profile (borrowed: it must outlive the consumer), with one
 *     sample type (counts) or two (counts, then periods)
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Returns: the consumer, or NULL: -RTD_E_INVAL, -ENOMEM.
 */
RTD_API rtd_profile_records *rtd_profile_records_new(rtd_profile *p,
						     const struct rtd_profile_records_opts *opts,
						     int *err);

/**
 * rtd_profile_records_add - one record into the profile
 * @c: the consumer
 * @rec: the record (borrowed for the call)
 *
 * Returns: 0; an ERROR record's code; the profile's error (-RTD_E_CAP,
 * -ENOMEM).
 */
RTD_API int rtd_profile_records_add(rtd_profile_records *c, const struct rtd_record *rec);

/**
 * rtd_profile_records_pull - every record of a source into the profile
 * @c: the consumer
 * @src: the source, pulled to its end
 *
 * Returns: 0 at the source's end, the source's error, or the profile's.
 */
RTD_API int rtd_profile_records_pull(rtd_profile_records *c, rtd_source *src);

/**
 * rtd_profile_records_stats - what a consumer took
 * @c: the consumer
 * @samples: gets the records added as samples (may be NULL)
 * @first: gets the time (@mono) of the first, 0 without (may be NULL)
 * @last: gets the time of the last (may be NULL)
 */
RTD_API void rtd_profile_records_stats(const rtd_profile_records *c, uint64_t *samples,
				       int64_t *first, int64_t *last);

/**
 * rtd_profile_records_free - free a consumer (the profile stays)
 * @c: the consumer; NULL does nothing
 */
RTD_API void rtd_profile_records_free(rtd_profile_records *c);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PROFILE_RECORDS_H */
