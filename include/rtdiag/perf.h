/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf.h - a monitor over the Linux kernel's perf_event and tracefs.
 *
 * An umbrella: one header per object, each usable alone.
 *   rtdiag/perf_sample.h      one decoded record (struct rtd_perf_sample)
 *   rtdiag/perf_monitor.h     the monitor: rings, events, the run loop
 *   rtdiag/perf_tracepoint.h  tracepoints, filters and their fields
 *   rtdiag/perf_probe.h       uprobes and kprobes
 *   rtdiag/perf_counter.h     counters and counter groups
 *   rtdiag/perf_sampler.h     sampling events with call chains
 *   rtdiag/perf_syscalls.h    system calls paired (perf trace)
 *   rtdiag/perf_profiler.h    the CPU and off-CPU profiler
 * docs/api.md lists which header holds what.
 */
#ifndef RTDIAG_PERF_H
#define RTDIAG_PERF_H

#include "rtdiag/perf_counter.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_probe.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/perf_sample.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/perf_syscalls.h"
#include "rtdiag/perf_tracepoint.h"

#endif /* RTDIAG_PERF_H */
