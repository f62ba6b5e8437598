/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - off-CPU time: a thread's switch-out (the sched:sched_switch
 * sample with its stack and state) paired with its next switch-in
 * (PERF_RECORD_SWITCH), the delay between them attributed to the stack.
 *
 * Memory: one pending switch-out per thread, nothing per switch. The
 * caller keeps the stacks (a call tree node id); this only pairs times.
 */
#ifndef RTD_PERF_OFFCPU_H
#define RTD_PERF_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "common/map.h"

/* A switched-out thread's state, from sched_switch's prev_state. */
enum offcpu_state {
	OFFCPU_SLEEP = 0,     /* S: interruptible sleep (locks, I/O, timers) */
	OFFCPU_DISK,          /* D: uninterruptible (disk I/O, some locks) */
	OFFCPU_PREEMPTED,     /* R: still runnable (preempted or yielded) */
	OFFCPU_OTHER,         /* T, t, P, I: stopped, traced, parked, idle */
	OFFCPU_NSTATES,
	OFFCPU_DEAD = 0xff,   /* X, Z: an exiting thread, never back */
};

/* The letter of a state ("S", "D", "R", "T"). */
const char *offcpu_state_name(unsigned state);

/*
 * The state of a sched_switch prev_state value (kernel 4.14+: the
 * TASK_REPORT bits, 0 for R, and TASK_REPORT_MAX (0x100) added when the
 * task was preempted).
 */
unsigned offcpu_state_of(int64_t prev_state);

struct offcpu_pending {
	uint64_t out_ns; /* 0: none */
	uint32_t node;
	uint8_t state;
};

struct offcpu {
	rtd_map tids;        /* tid -> struct offcpu_pending * (owned) */
	uint64_t outs;       /* switch-outs seen */
	uint64_t waits;      /* paired */
	uint64_t unpaired;   /* a switch-in with no switch-out before it */
	uint64_t replaced;   /* a switch-out while one was pending */
	uint64_t dropped;    /* switch-outs past the thread cap */
	uint64_t count[OFFCPU_NSTATES];
	uint64_t ns[OFFCPU_NSTATES];
};

/* max_threads: cap on threads with a pending switch-out (0: none). */
void offcpu_init(struct offcpu *o, size_t max_threads);
void offcpu_free(struct offcpu *o);

/* A thread left the CPU at out_ns, in state, its stack at node. A dead
 * thread's switch-out is not kept. Returns 0 or -RTD_E_CAP/-ENOMEM. */
int offcpu_out(struct offcpu *o, uint32_t tid, uint64_t out_ns, uint32_t node,
	       unsigned state);

/* A thread came back at in_ns: true with its wait (node, state and
 * delay) when a switch-out was pending; the pending one is cleared. */
bool offcpu_in(struct offcpu *o, uint32_t tid, uint64_t in_ns,
	       struct offcpu_pending *w, uint64_t *delay_ns);

/* A thread exited: its pending switch-out (if any) is dropped. */
void offcpu_exit(struct offcpu *o, uint32_t tid);

/* The pending switch-outs, in no order: start with *it = 0; false at the
 * end. The node may be changed through the pointer (a call tree rebuilt). */
bool offcpu_next(struct offcpu *o, size_t *it, uint32_t *tid,
		 struct offcpu_pending **w);

#endif /* RTD_PERF_OFFCPU_H */
