/* SPDX-License-Identifier: MIT */
/* source_impl.h - what the perf record sources (source.c, source_waits.c)
 * share. */
#ifndef RTD_PERF_SOURCE_IMPL_H
#define RTD_PERF_SOURCE_IMPL_H

#include "common/map.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/source.h"

/* The records a sample or a wait comes with, one a call (a source's
 * step): its process named once per name, its thread again whenever its
 * name changes, then the event itself. */
enum psrc_step { PSRC_STEP_PROCESS, PSRC_STEP_THREAD, PSRC_STEP_EVENT };

/* CLOCK_MONOTONIC (the monitor's use_clockid), with wall time from a
 * REALTIME reading taken between two MONOTONIC ones; the error is their
 * distance. */
void rtd_perf_source_clock_init(struct rtd_clock *c);

/* Is @name (NULL: "") new for @key (a tid, or a pid with the top bit)?
 * Interns it into *@interned and keeps it in @names. Returns 1 new, 0 the
 * same as before, or an interner's or map's error. */
int rtd_perf_source_renamed(rtd_intern *in, rtd_map *names, uint64_t key, const char *name,
			    const char **interned);

/* A CPU sample's record: @smp's frames (at most RTD_INTERN_MAX_DEPTH,
 * through *@frames, grown as needed, *@cap its room) interned as
 * @rec's stack, with each frame's file and line when @lines
 * (RTD_PERF_SOURCE_LINES); kind RTD_REC_SAMPLE, "cpu", 1 count. The
 * caller sets the times and ids. Returns 0 or -ENOMEM / an interner's
 * error. */
struct rtd_perf_profiler_sample;
int rtd_perf_source_sample(rtd_intern *in, struct rtd_rec_frame **frames, size_t *cap,
			   const struct rtd_perf_profiler_sample *smp, bool lines,
			   struct rtd_record *rec);

/* The live system calls' source (source_live.c) over a recorder
 * (source_syscalls.c): run its monitor until stopped; hand over the calls
 * completed since the last drain, as RTD_REC_SLICE records in the order
 * they ended (@comm: the thread's interned name, or NULL), then forget
 * them. */
struct rtd_perf_syscall_recorder;
typedef int (*rtd_perf_syscall_drain_fn)(void *ctx, const struct rtd_record *rec,
					 const char *comm);
int rtd_perf_syscall_recorder_claim(struct rtd_perf_syscall_recorder *r); /* 0 or -RTD_E_STATE */
int rtd_perf_syscall_recorder_run(struct rtd_perf_syscall_recorder *r);
struct rtd_perf_monitor *rtd_perf_syscall_recorder_monitor(struct rtd_perf_syscall_recorder *r);
int rtd_perf_syscall_recorder_drain(struct rtd_perf_syscall_recorder *r,
				    rtd_perf_syscall_drain_fn fn, void *ctx);

#endif /* RTD_PERF_SOURCE_IMPL_H */
