/* SPDX-License-Identifier: MIT */
/*
 * sampler.c - sampling events with call chains (what perf record -g opens).
 *
 * The attr follows perf record's: a frequency (attr.freq) on cpu-clock or
 * a PMU event, PERF_SAMPLE_CALLCHAIN for kernel and frame-pointer user
 * chains; for --call-graph dwarf the user registers (all the general ones
 * but the segment registers, as perf's PERF_REGS_MASK) and a copy of the
 * top of the user stack, with exclude_callchain_user so the kernel does
 * not walk frame pointers that are not there. The first sampler of a
 * monitor carries mmap/mmap2/comm/comm_exec/task, so every executable
 * mapping, exec, fork and exit of the scope arrives in the rings in time
 * order with the samples.
 *
 * A tracepoint ("sched:sched_switch") samples every hit (period 1) with
 * its raw fields and the same call chains; context_switch adds the
 * PERF_RECORD_SWITCH records that say when a thread runs again (the
 * off-CPU profiler's switch-in times).
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <string.h>

#include "perf/internal.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/source.h"

#define SAMPLER_REGS_MASK                                                      \
	(((1ull << PERF_REG_X86_64_MAX) - 1) &                                 \
	 ~((1ull << PERF_REG_X86_DS) | (1ull << PERF_REG_X86_ES) |             \
	   (1ull << PERF_REG_X86_FS) | (1ull << PERF_REG_X86_GS)))

int rtd_perf_monitor_add_sampler(struct rtd_perf_monitor *m,
				 const struct rtd_perf_sampler_opts *opts,
				 struct rtd_perf_event **out)
{
	struct rtd_perf_sampler_opts o;
	if (out)
		*out = NULL;
	if (!m || rtd_opts_copy(&o, sizeof(o), opts,
				RTD_OPTS_END(rtd_perf_sampler_opts, no_kernel_frames)))
		return -RTD_E_INVAL;
	m->errmsg[0] = 0;
	const char *name = o.event ? o.event : "cpu-clock";
	if (o.callgraph > RTD_PERF_CG_NONE || o.stack_bytes > 65528 ||
	    (o.freq && o.period))
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: bad sampler options", name);
	const char *colon = strchr(name, ':');
	if (colon && o.freq)
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: a tracepoint samples every hit "
				    "(period 1), not a frequency", name);
	struct rtd_perf_event *ev = perf_event_alloc(m, RTD_PERF_SAMPLER, name);
	if (!ev)
		return -ENOMEM;
	int r;
	if (colon) {
		char sys[128];
		size_t sl = (size_t)(colon - name);
		if (sl >= sizeof(sys) || !sl || !colon[1]) {
			r = perf_set_err(m, -RTD_E_INVAL,
					 "%s: not a tracepoint name", name);
			goto fail;
		}
		memcpy(sys, name, sl);
		sys[sl] = 0;
		if (!m->tracefs[0]) {
			r = perf_set_err(m, -RTD_E_PERF_TRACEFS,
					 "tracefs is not mounted (mount -t "
					 "tracefs nodev /sys/kernel/tracing)");
			goto fail;
		}
		r = perf_tracepoint_load(m, ev, sys, colon + 1);
	} else {
		r = perf_counter_attr(m->pmu_dir, name, &ev->attr);
		if (r)
			perf_set_err(m, r, "%s: unknown event (see 'rtdiag "
					   "perf list')", name);
	}
	if (r)
		goto fail;
	struct perf_event_attr *a = &ev->attr;
	a->read_format = 0;
	if (colon) {
		a->sample_period = o.period ? o.period : 1;
	} else if (o.period) {
		a->sample_period = o.period;
	} else {
		a->freq = 1;
		a->sample_freq = o.freq ? o.freq : 99;
	}
	a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			  PERF_SAMPLE_PERIOD;
	a->context_switch = o.context_switch;
	if (o.callgraph != RTD_PERF_CG_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o.callgraph == RTD_PERF_CG_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = SAMPLER_REGS_MASK;
		a->sample_stack_user = o.stack_bytes ? o.stack_bytes & ~7u : 8192;
		a->exclude_callchain_user = 1;
	}
	if (o.max_stack)
		a->sample_max_stack = (uint16_t)(o.max_stack > 65535 ? 65535
								     : o.max_stack);
	a->exclude_kernel = o.exclude_kernel;
	a->exclude_hv = o.exclude_kernel;
	a->exclude_callchain_kernel = o.no_kernel_frames;
	if (!o.no_tracking && !m->tracking) {
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		/* perf record -g dwarf's: the data mappings too, where a
		 * reader of its perf.data finds each module's .eh_frame_hdr */
		a->mmap_data = o.callgraph == RTD_PERF_CG_DWARF;
	}
	if ((r = perf_event_open_all(m, ev))) {
		if (r == -RTD_E_PERF_NOTSUPP && a->type == PERF_TYPE_HARDWARE)
			perf_set_err(m, r,
				     "%s: this machine has no hardware counters "
				     "(a VM without PMU passthrough?): sample "
				     "cpu-clock instead",
				     name);
		goto fail;
	}
	if (a->mmap2)
		m->tracking = true;
	struct rtd_perf_event **pp = &m->events;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ev;
	if (out)
		*out = ev;
	return 0;
fail:
	perf_event_destroy(ev);
	return r;
}
