/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_sampler.h - sampling events with call chains on a perf
 * monitor, and whether this process may sample another.
 */
#ifndef RTDIAG_PERF_SAMPLER_H
#define RTDIAG_PERF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_monitor;
struct rtd_perf_event;

/* How a sample's user-space call chain is found. */
enum rtd_perf_callgraph {
	RTD_PERF_CG_FP = 0,  /* the kernel walks frame pointers (callchain) */
	RTD_PERF_CG_DWARF,   /* a copy of the user stack and registers,
			      * unwound by libdw from .eh_frame/.debug_frame */
	RTD_PERF_CG_NONE,    /* the sampled address only */
};

/**
 * struct rtd_perf_sampler_opts - a sampling event (rtd_perf_monitor_add_sampler())
 * @sz: sizeof(struct rtd_perf_sampler_opts)
 * @event: counter name as for rtd_perf_monitor_add_counter() (NULL:
 *         "cpu-clock", the software timer every kernel has), or a
 *         tracepoint "subsystem:name", sampled at every hit with its raw
 *         fields (PERF_SAMPLE_RAW; @freq must be 0)
 * @freq: samples per second per thread or CPU (0: 99, unless @period)
 * @period: sample every @period events instead of a frequency
 * @callgraph: RTD_PERF_CG_*
 * @stack_bytes: RTD_PERF_CG_DWARF: user stack bytes copied per sample
 *               (0: 8192, perf's default; at most 65528)
 * @exclude_kernel: user space only (no kernel frames)
 * @no_tracking: no MMAP2/COMM/FORK/EXIT/EXEC records (they are on by
 *               default, on the first sampler of a monitor)
 * @max_stack: deepest call chain taken (0: the kernel's limit)
 * @context_switch: also PERF_RECORD_SWITCH records (attr.context_switch):
 *                  each scoped thread's switch out and back in, with
 *                  its tid and time (SWITCH_CPU_WIDE system-wide)
 * @no_kernel_frames: call chains without their kernel part
 *                    (attr.exclude_callchain_kernel, perf's
 *                    --user-callchains): unlike @exclude_kernel, the
 *                    event still counts in the kernel, as a tracepoint
 *                    only can
 */
struct rtd_perf_sampler_opts {
	size_t sz;
	const char *event;
	unsigned freq;
	uint64_t period;
	enum rtd_perf_callgraph callgraph;
	unsigned stack_bytes;
	bool exclude_kernel;
	bool no_tracking;
	unsigned max_stack;
	bool context_switch;
	bool no_kernel_frames;
};

/**
 * rtd_perf_monitor_add_sampler - register a sampling event with call chains
 * @m: monitor
 * @o: options (NULL: cpu-clock at 99 Hz with frame-pointer call chains)
 * @out: receives the event (owned by @m), or NULL
 *
 * Samples carry IP, TID, TIME, PERIOD and CALLCHAIN (kernel and user;
 * with RTD_PERF_CG_DWARF the kernel part only, plus REGS_USER and
 * STACK_USER). The first sampler also asks for the records that tell
 * where code is: MMAP2 (executable mappings), COMM (with exec), FORK and
 * EXIT. When the kernel refuses kernel samples to this user
 * (perf_event_paranoid), the event counts user space only, as perf does,
 * and rtd_perf_monitor_user_only() says so.
 *
 * Returns: 0, -RTD_E_PERF_NOEVENT, -RTD_E_PERF_NOTSUPP, or a negative errno.
 */
RTD_API int rtd_perf_monitor_add_sampler(struct rtd_perf_monitor *m,
					 const struct rtd_perf_sampler_opts *o,
					 struct rtd_perf_event **out);

/**
 * rtd_perf_sampling_check - may this process sample @pid through perf_event?
 * @pid: the process (0: this one)
 * @why: receives why not, one line (may be NULL)
 * @n: size of @why
 *
 * Opens (and closes) a cpu-clock sampling event of user space on @pid,
 * the least a profiler asks for: a caller with another way to sample
 * (EventPipe's sampler) chooses with this and says why.
 *
 * Returns: 0, or the negative errno perf_event_open gave (-EACCES,
 * -EPERM, -ENOSYS, -ESRCH, ...).
 */
RTD_API int rtd_perf_sampling_check(pid_t pid, char *why, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_SAMPLER_H */
