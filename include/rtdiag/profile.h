/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/profile.h - one profile model (a call tree of named frames with
 * weights) and its writers: folded stacks, pprof, a top-N table.
 *
 * Every profile source (EventPipe CPU samples, perf samples, Go CPU samples)
 * builds an rtd_profile; every output format reads one.
 */
#ifndef RTDIAG_PROFILE_H
#define RTDIAG_PROFILE_H

#include <stdio.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_profile rtd_profile;

/**
 * rtd_profile_new - create an empty profile
 * @sample_type: what a value measures, e.g. "cpu" or "samples"
 * @unit: its unit, e.g. "nanoseconds" or "count"
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
 * rtd_profile_add - add weight to one call stack
 * @p: the profile
 * @frames: frame names, frames[0] the root (outermost caller) and
 *          frames[nframes-1] the leaf; copied, the caller keeps them
 * @nframes: number of frames; 0 adds to the profile's total only
 * @value: weight to add (for example nanoseconds of CPU time)
 *
 * Equal stacks are merged. Returns: 0, or -ENOMEM.
 */
RTD_API int rtd_profile_add(rtd_profile *p, const char *const *frames,
			    size_t nframes, int64_t value);

/**
 * rtd_profile_total - sum of every value added
 * @p: the profile
 *
 * Returns: the total weight.
 */
RTD_API int64_t rtd_profile_total(const rtd_profile *p);

/**
 * rtd_profile_write_folded - write folded stacks
 * @p: the profile
 * @f: output stream
 *
 * One line per distinct stack, "root;caller;leaf VALUE", sorted by stack
 * text so output is stable. Returns: 0, or a negative errno on write error.
 */
RTD_API int rtd_profile_write_folded(const rtd_profile *p, FILE *f);

/**
 * rtd_profile_write_pprof - write a gzip-compressed pprof protobuf
 * @p: the profile
 * @f: output stream
 *
 * Readable by `go tool pprof` and every pprof consumer. Frames become
 * functions named by their frame text. Returns: 0, or a negative errno.
 */
RTD_API int rtd_profile_write_pprof(const rtd_profile *p, FILE *f);

/**
 * struct rtd_profile_entry - one row of rtd_profile_top()
 * @name: frame name; valid until the profile is freed
 * @self: weight where this frame is the leaf
 * @total: weight of stacks that contain this frame (counted once per stack)
 */
struct rtd_profile_entry {
	const char *name;
	int64_t self;
	int64_t total;
};

/**
 * rtd_profile_top - the frames with the most self weight
 * @p: the profile
 * @out: array receiving up to @max rows, highest self weight first
 * @max: its size
 *
 * Returns: the number of rows written (>= 0), or -ENOMEM.
 */
RTD_API int rtd_profile_top(const rtd_profile *p,
			    struct rtd_profile_entry *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PROFILE_H */
