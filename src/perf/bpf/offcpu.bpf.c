/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * offcpu.bpf.c - off-CPU time summed in the kernel (CO-RE, built against
 * the running kernel's BTF at build time; loaded by ../offcpu_bpf.c).
 *
 * At sched_switch the thread leaving the CPU (prev, still current: its
 * stacks are the ones taken) is noted with the time, its user and kernel
 * stack ids and its state; the thread coming on (next) ends its wait: the
 * delay is added to the (pid, tid, stacks, state) total. Nothing leaves
 * the kernel per switch: user space reads the totals when it needs them.
 *
 * sched_switch does not report every switch: a kernel may leave out the
 * tracepoint's hits in the context of some tasks (on this project's test
 * machine, never once with the sandbox's own threads as prev, for BPF
 * and perf alike: 77 switches to them, none from them, in 71k events).
 * A thread handed the CPU by such a task is never seen as next, and its
 * wait stayed open until its next switch-out replaced it: the whole wait
 * was lost (1 test run in 5-8). The thread's own sched_info says when it
 * came back (last_arrival, the rq clock of that switch, CONFIG_SCHED_INFO),
 * so its next switch-out, or its exit, closes such a wait with that end,
 * in bpf_ktime_get_ns()'s clock through the offset between the two that
 * the switch-ins seen give (a thread's entry stays while it runs, with
 * the time it came back: at its switch-out, that time and last_arrival
 * are the same instant).
 *
 * The state is the one the sched_switch tracepoint reports
 * (__trace_sched_switch_state() in include/trace/events/sched.h), so the
 * perf path (sched_switch samples) and this one classify waits alike.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "follow.bpf.h"
#include "offcpu_maps.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_bpf_conf);
} conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_BPF_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u32);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_BPF_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_bpf_start);
} starts SEC(".maps");

/* Stacks by a 64-bit hash of their frames. Not a STACK_TRACE map: its
 * ids are buckets, and two stacks in one bucket (1 in 13 runs of the
 * timed-waits test with 16k buckets) leave one without frames. Not
 * BPF_F_NO_PREALLOC: allocating under the runqueue lock fails when the
 * per-CPU cache is empty (seen as a wait without its stack at load 30). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_BPF_MAX_STACKS);
	__type(key, __u64);
	__type(value, struct offcpu_bpf_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_bpf_stack);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_BPF_MAX_WAITS);
	__type(key, struct offcpu_bpf_key);
	__type(value, struct offcpu_bpf_val);
} waits SEC(".maps");

/* bpf_ktime_get_ns() - sched_info's rq clock, as last measured; 0: not yet */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} clock_off SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_BPF_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);
	if (v)
		*v += 1;
}

/* __trace_sched_switch_state(): TASK_REPORT_MAX when preempted, else one
 * TASK_REPORT bit (the highest of state | exit_state), TASK_REPORT_IDLE
 * for TASK_IDLE, uninterruptible for RT-lock waits and frozen tasks. */
static __always_inline __u32 report_state(bool preempt, unsigned int state,
					  int exit_state)
{
	if (preempt)
		return 0x100;                         /* TASK_REPORT_MAX */
	__u32 s = (state | (__u32)exit_state) & 0x7f; /* TASK_REPORT */
	if ((state & 0x402) == 0x402)                 /* TASK_IDLE */
		s = 0x80;                             /* TASK_REPORT_IDLE */
	if (state & (0x1000 | 0x8000))                /* RTLOCK_WAIT, FROZEN */
		s = 0x02;
	/* one bit: the highest */
	for (int b = 7; b >= 0; b--)
		if (s & (1u << b))
			return 1u << b;
	return 0;
}

/* The current stack (user or kernel) kept in stacks; its key, 0: none. */
static __always_inline __u64 stack_key(void *ctx, __u64 flags)
{
	__u32 z = 0;
	struct offcpu_bpf_stack *s = bpf_map_lookup_elem(&scratch, &z);
	if (!s)
		return 0;
	long n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
	if (n <= 0)
		return 0;
	n /= sizeof(__u64);
	/* FNV-1a over the frames */
	__u64 h = 0xcbf29ce484222325ull ^ flags;
	for (int i = 0; i < OFFCPU_BPF_MAX_DEPTH && i < n; i++)
		h = (h ^ s->ips[i]) * 0x100000001b3ull;
	h |= 1; /* never 0 */
	/* bpf_get_stack() zeroed the buffer past the last frame */
	if (bpf_map_lookup_elem(&stacks, &h))
		return h;
	if (bpf_map_update_elem(&stacks, &h, s, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&stacks, &h)) {
		stat_add(OFFCPU_BPF_NOSTACK);
		return 0;
	}
	return h;
}

static __always_inline bool in_scope(struct task_struct *t)
{
	__u32 k = 0;
	struct offcpu_bpf_conf *c = bpf_map_lookup_elem(&conf, &k);
	if (!c)
		return false;
	if (c->flags & OFFCPU_BPF_ALL)
		return t->pid != 0; /* not the idle task */
	__u32 tgid = t->tgid;
	__u32 *v = bpf_map_lookup_elem(&pids, &tgid);
	return v && *v == FOLLOW_ON;
}

/* Add one wait to its (pid, tid, stacks, state) total. */
static __always_inline void wait_add(const struct offcpu_bpf_start *s,
				     __u32 tid, __u64 delay,
				     struct task_struct *t)
{
	struct offcpu_bpf_key key = {
		.pid = s->pid, .tid = tid, .ustack = s->ustack,
		.kstack = s->kstack, .state = s->state,
	};
	stat_add(OFFCPU_BPF_WAITS);
	struct offcpu_bpf_val *v = bpf_map_lookup_elem(&waits, &key);
	if (!v) {
		struct offcpu_bpf_val nv = {};
		bpf_probe_read_kernel_str(nv.comm, sizeof(nv.comm), t->comm);
		/* EEXIST: another CPU made it meanwhile; either way look again */
		bpf_map_update_elem(&waits, &key, &nv, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&waits, &key);
		if (!v) {
			stat_add(OFFCPU_BPF_LOST);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->ns, delay);
}

/* prev leaves the CPU: its entry tells how it came back. Seen (time 0):
 * the two clocks are measured against each other. Not seen (a wait still
 * open): the wait is closed where prev's sched_info says it came back. */
static __always_inline void came_back(struct task_struct *prev, __u32 tid)
{
	struct offcpu_bpf_start *o = bpf_map_lookup_elem(&starts, &tid);
	__u32 z = 0;
	__s64 *off = bpf_map_lookup_elem(&clock_off, &z);
	__u64 back = prev->sched_info.last_arrival;
	if (!o || !off)
		return;
	if (!o->time) {
		if (o->arrived && back)
			*off = (__s64)(o->arrived - back);
		return;
	}
	__u64 end = back + (__u64)*off;
	if (!back || !*off || end <= o->time) {
		stat_add(OFFCPU_BPF_REPLACED); /* no end known */
		return;
	}
	struct offcpu_bpf_start old = *o;
	stat_add(OFFCPU_BPF_LATE);
	wait_add(&old, tid, end - old.time, prev);
}

static __always_inline void switch_out(void *ctx, bool preempt,
				       struct task_struct *prev,
				       unsigned int prev_state)
{
	__u32 tid = prev->pid;
	came_back(prev, tid);
	struct offcpu_bpf_start s = {};
	s.state = report_state(preempt, prev_state, prev->exit_state);
	if (s.state & (0x10 | 0x20)) { /* EXIT_DEAD, EXIT_ZOMBIE: never back */
		bpf_map_delete_elem(&starts, &tid);
		return;
	}
	__u32 k = 0;
	struct offcpu_bpf_conf *c = bpf_map_lookup_elem(&conf, &k);
	s.time = bpf_ktime_get_ns();
	s.pid = prev->tgid;
	s.ustack = stack_key(ctx, BPF_F_USER_STACK);
	s.kstack = c && (c->flags & OFFCPU_BPF_NO_KERNEL)
			   ? 0 : stack_key(ctx, 0);
	stat_add(OFFCPU_BPF_OUTS);
	if (bpf_map_update_elem(&starts, &tid, &s, BPF_ANY))
		stat_add(OFFCPU_BPF_LOST);
}

/* next is back: its wait ends; its entry stays, on the CPU since now */
static __always_inline void switch_in(struct task_struct *next)
{
	__u32 tid = next->pid;
	struct offcpu_bpf_start *s = bpf_map_lookup_elem(&starts, &tid);
	if (!s || !s->time)
		return;
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_bpf_start st = *s;
	s->time = 0;
	s->arrived = now;
	wait_add(&st, tid, now > st.time ? now - st.time : 0, next);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	if (in_scope(prev))
		switch_out(ctx, preempt, prev, prev_state);
	switch_in(next);
	return 0;
}

FOLLOW_PROGS(offcpu, pids)
