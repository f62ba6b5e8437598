/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_profile.h - a Go execution trace's CPU samples into a
 * profile (the profile model: rtdiag/profile.h), from the Go source's
 * records (rtdiag/gotrace_source.h).
 */
#ifndef RTDIAG_GOTRACE_PROFILE_H
#define RTDIAG_GOTRACE_PROFILE_H

#include "rtdiag/profile.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rtd_profile_gotrace_record - add a Go trace's CPU sample
 * @p: the profile, best made with types "samples/count" and
 *     "cpu/nanoseconds" (then each sample adds 1 and 10 ms, runtime/pprof's
 *     period); other types get the period in "cpu" or a count
 * @rec: any record of a Go source (rtd_gotrace_source_open() and kin;
 *       give it @kinds = 1u << RTD_REC_SAMPLE when only the profile is
 *       wanted): only SAMPLE records named "CPUSample" are taken
 *
 * The stack is added leaf first (names, files, lines, addresses) with Go
 * and Go-runtime frame kinds, on a thread named after the record's M
 * (its field "m"; none when it is -1).
 *
 * Returns: 0; as rtd_profile_add_sample(); or an error record's code.
 */
RTD_API int rtd_profile_gotrace_record(rtd_profile *p, const struct rtd_record *rec);

/**
 * rtd_profile_gotrace_pull - add every CPU sample of a Go source
 * @p: the profile, as for rtd_profile_gotrace_record()
 * @src: the source, pulled to its end
 *
 * Returns: 0 at the source's end, or the first error (the source's, with
 * its error record from rtd_source_next() again; or the profile's): the
 * samples before it are in @p.
 */
RTD_API int rtd_profile_gotrace_pull(rtd_profile *p, rtd_source *src);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_PROFILE_H */
