/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c - pairing switch-outs with switch-ins (see offcpu.h).
 *
 * The kernel's order for one thread: the sched_switch tracepoint fires in
 * __schedule() while the thread is still current (its sample carries the
 * thread's stack and prev_state), then the switch-out record, and the
 * switch-in record in finish_task_switch() once the thread runs again, on
 * any CPU. The monitor delivers records of all rings in time order, so
 * per thread a switch-out is followed by its switch-in. What breaks the
 * pairing is counted, never guessed: a switch-in of a thread whose
 * switch-out came before the recording (unpaired), a second switch-out
 * (the switch-in was lost: the newer one replaces it).
 */
#include <errno.h>
#include <stdlib.h>

#include "perf/offcpu.h"
#include "rtdiag/perf_profiler.h"

const char *offcpu_state_name(unsigned state)
{
	static const char *const names[] = {"S", "D", "R", "T"};
	return state < OFFCPU_NSTATES ? names[state] : "X";
}

RTD_API const char *rtd_perf_wait_state_name(const char *state)
{
	switch (state ? state[0] : 0) {
	case 'S': return "sleep";
	case 'D': return "disk";
	case 'R': return "preempted";
	default: return "other";
	}
}

unsigned offcpu_state_of(int64_t prev_state)
{
	uint64_t s = (uint64_t)prev_state;
	if (s & 0x100)
		return OFFCPU_PREEMPTED; /* TASK_REPORT_MAX: preempted */
	s &= 0xff;
	if (!s)
		return OFFCPU_PREEMPTED; /* R: runnable (yielded) */
	if (s & 0x01)
		return OFFCPU_SLEEP;
	if (s & 0x02)
		return OFFCPU_DISK;
	if (s & (0x10 | 0x20))
		return OFFCPU_DEAD;     /* X, Z */
	return OFFCPU_OTHER;            /* T, t, P, I */
}

void offcpu_init(struct offcpu *o, size_t max_threads)
{
	*o = (struct offcpu){0};
	rtd_map_init(&o->tids, max_threads);
}

void offcpu_free(struct offcpu *o)
{
	rtd_map_free_vals(&o->tids);
}

int offcpu_out(struct offcpu *o, uint32_t tid, uint64_t out_ns, uint32_t node,
	       unsigned state)
{
	o->outs++;
	if (state >= OFFCPU_NSTATES) {
		offcpu_exit(o, tid);
		return 0;
	}
	void *v = NULL;
	struct offcpu_pending *w;
	if (rtd_map_get(&o->tids, tid, &v)) {
		w = v;
		if (w->out_ns)
			o->replaced++;
	} else {
		w = malloc(sizeof(*w));
		if (!w) {
			o->dropped++;
			return -ENOMEM;
		}
		int r = rtd_map_put(&o->tids, tid, w, NULL);
		if (r) {
			free(w);
			o->dropped++;
			return r;
		}
	}
	w->out_ns = out_ns ? out_ns : 1;
	w->node = node;
	w->state = (uint8_t)state;
	return 0;
}

bool offcpu_in(struct offcpu *o, uint32_t tid, uint64_t in_ns,
	       struct offcpu_pending *w, uint64_t *delay_ns)
{
	void *v = NULL;
	struct offcpu_pending *p;
	if (!rtd_map_get(&o->tids, tid, &v) || !(p = v)->out_ns) {
		o->unpaired++;
		return false;
	}
	*w = *p;
	*delay_ns = in_ns > p->out_ns ? in_ns - p->out_ns : 0;
	p->out_ns = 0;
	o->waits++;
	o->count[w->state]++;
	o->ns[w->state] += *delay_ns;
	return true;
}

void offcpu_exit(struct offcpu *o, uint32_t tid)
{
	free(rtd_map_del(&o->tids, tid));
}

bool offcpu_next(struct offcpu *o, size_t *it, uint32_t *tid,
		 struct offcpu_pending **w)
{
	uint64_t k;
	void *v;
	while (rtd_map_next(&o->tids, it, &k, &v)) {
		struct offcpu_pending *p = v;
		if (!p->out_ns)
			continue;
		*tid = (uint32_t)k;
		*w = p;
		return true;
	}
	return false;
}
