/* SPDX-License-Identifier: MIT */
/* rtdiag/perf.h - placeholder until the perf module lands. */
#ifndef RTDIAG_PERF_H
#define RTDIAG_PERF_H

#include "rtdiag/common.h"

#endif /* RTDIAG_PERF_H */
