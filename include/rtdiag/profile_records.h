/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/profile_records.h - the profile as a consumer of the record
 * stream (rtdiag/source.h): the stacked records of one name (SAMPLE
 * records, and INSTANT records that carry a stack: a tracepoint's), and
 * when asked the stacked slices of one category (off-CPU waits), become
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
 * @period: what one unit of a record's @value weighs in the second sample
 *          type when the record has no "period" field (0: nothing). A
 *          clock event's samples all have one: perf's cpu-clock sampled
 *          at F Hz has the fixed period 10^9/F ns (the kernel turns the
 *          frequency of its hrtimer events into that period), which the
 *          live perf source does not repeat in every record.
 * @category: also take the whole slices (RTD_REC_SLICE) of this @category
 *            that carry a stack, whatever their @name: each adds 1 to the
 *            first sample type and its @dur to the second (an off-CPU
 *            wait of rtd_perf_source_live() with RTD_PERF_SOURCE_WAIT_STACKS,
 *            "off-cpu": Go's block profile); NULL: none
 * @label: the name of a string field copied into each sample's labels
 *         under that name ("state"), when the record has it; NULL: none
 * @mapping: called for a frame whose module the consumer has not met since
 *           it started or was retargeted: returns the profile's mapping
 *           of that module (rtd_profile_add_mapping() on @p, >= 1), or 0
 *           for none (the pprof writer then names one by the module);
 *           NULL: no mappings
 * @mapping_ctx: passed to @mapping
 */
struct rtd_profile_records_opts {
	size_t sz;
	const char *name;
	int64_t period;
	const char *category;
	const char *label;
	int (*mapping)(void *ctx, rtd_profile *p, const char *module);
	void *mapping_ctx;
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
 * rtd_profile_records_retarget - go on into another profile
 * @c: the consumer
 * @p: the profile the next records go to (borrowed, as rtd_profile_records_new()'s)
 *
 * For a consumer that cuts its profile (the agent hands over one every
 * second): the thread names it learnt stay (a source names a thread once,
 * then again only when the name changes), the counts of
 * rtd_profile_records_stats() go on.
 *
 * Returns: 0, or -RTD_E_INVAL (@p NULL).
 */
RTD_API int rtd_profile_records_retarget(rtd_profile_records *c, rtd_profile *p);

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
