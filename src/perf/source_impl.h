/* SPDX-License-Identifier: MIT */
/* source_impl.h - what the perf record sources (source.c, source_waits.c)
 * share. */
#ifndef RTD_PERF_SOURCE_IMPL_H
#define RTD_PERF_SOURCE_IMPL_H

#include "rtdiag/source.h"

/* CLOCK_MONOTONIC (the monitor's use_clockid), with wall time from a
 * REALTIME reading taken between two MONOTONIC ones; the error is their
 * distance. */
void rtd_perf_source_clock_init(struct rtd_clock *c);

#endif /* RTD_PERF_SOURCE_IMPL_H */
