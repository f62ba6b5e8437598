/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_profile.h - a Go execution trace's CPU samples into a
 * profile (the profile model: rtdiag/profile.h).
 */
#ifndef RTDIAG_GOTRACE_PROFILE_H
#define RTDIAG_GOTRACE_PROFILE_H

#include "rtdiag/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_gotrace_dec;
struct rtd_gotrace_event;

/**
 * rtd_profile_gotrace_event - add a Go execution trace's CPU sample
 * @p: the profile, best made with types "samples/count" and
 *     "cpu/nanoseconds" (then each sample adds 1 and 10 ms, runtime/pprof's
 *     period); other types get the period in "cpu" or a count
 * @d: the decoder (for the stack)
 * @ev: any event of it: only CPUSample events are taken
 *
 * The stack is added leaf first with Go and Go-runtime frame kinds, on a
 * thread named after the M that was running. Returns: 0, or as
 * rtd_profile_add_sample().
 */
RTD_API int rtd_profile_gotrace_event(rtd_profile *p,
				      const struct rtd_gotrace_dec *d,
				      const struct rtd_gotrace_event *ev);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_PROFILE_H */
