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
 * in bpf_ktime_get_ns()'s clock through how far that CPU's run-queue
 * clock is from it at that switch-out. (An offset measured only from the
 * in-scope switch-ins seen was unknown in a short-lived process whose one
 * switch-in was missed: `sleep 0.2` lost its only wait, about 1 run in
 * 100 at load 33 and more often on an idle machine.)
 *
 * The state is the one the sched_switch tracepoint reports
 * (__trace_sched_switch_state() in include/trace/events/sched.h), so the
 * perf path (sched_switch samples) and this one classify waits alike.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

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

/* Each thread's entry in its own task_struct: no hash of tids looked up
 * at every switch (the switch-in of any thread on the machine looked
 * its tid up), no cap on threads, freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
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

/* The user stack of current into ips, as the kernel's frame-pointer walk
 * (perf_callchain_user() in arch/x86/events/core.c, which bpf_get_stack()
 * and the perf path's samples use) takes it: the interrupted ip, then
 * the return address of each frame from the saved rbp on, until a frame
 * cannot be read. Walked here because bpf_get_stack() costs ~0.8 us a
 * call on the test machine for a two-frame stack, mostly the fault of its
 * last read at the end of the chain (rbp 0), this ~0.25 us (the
 * ping-pong's switch is ~1.6 us). Frames past the last are zeroed, as
 * bpf_get_stack() does. Returns the frames, or -1 where the kernel's walk
 * would differ (a 32-bit task; a task that has met a uprobe: the kernel
 * then fixes up the uretprobe trampoline's addresses): the caller takes
 * bpf_get_stack() instead. */
static __always_inline long user_walk(struct offcpu_bpf_stack *s,
				      __u64 min_addr)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	if (cur->flags & (0x00200000 | 0x00004000)) /* PF_KTHREAD, PF_USER_WORKER */
		return 0;
	if (cur->utask)
		return -1;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs || regs->cs != 0x33) /* __USER_CS: not a 64-bit task */
		return -1;
	__u64 fp = regs->bp;
	s->ips[0] = regs->ip;
	long n = 1;
	for (int i = 1; i < OFFCPU_BPF_MAX_DEPTH; i++) {
		__u64 fr[2]; /* struct stack_frame: next_frame, return_address */
		/* below vm.mmap_min_addr nothing is mapped (unless a process
		 * with CAP_SYS_RAWIO mapped it): the read would fault, and a
		 * fault costs ~0.6 us here (most chains end at rbp 0) */
		if (fp < min_addr ||
		    bpf_probe_read_user(fr, sizeof(fr), (void *)fp))
			break;
		s->ips[i] = fr[1];
		fp = fr[0];
		n = i + 1;
	}
	for (int i = 1; i < OFFCPU_BPF_MAX_DEPTH; i++)
		if (i >= n)
			s->ips[i] = 0;
	return n;
}

/* The current stack (user or kernel) kept in stacks; its key, 0: none.
 * last: the key of the thread's previous wait's stack, kept already (a
 * thread mostly waits where it waited before: the ping-pong always). */
static __always_inline __u64 stack_key(void *ctx, __u64 flags,
				       const struct offcpu_bpf_conf *c,
				       __u64 last)
{
	__u32 z = 0;
	struct offcpu_bpf_stack *s = bpf_map_lookup_elem(&scratch, &z);
	if (!s)
		return 0;
	long n = flags & BPF_F_USER_STACK ? user_walk(s, c->min_addr) : -1;
	if (n < 0) {
		n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
		n = n > 0 ? (long)((unsigned long)n / sizeof(__u64)) : 0;
	}
	if (n <= 0)
		return 0;
	/* FNV-1a over the frames */
	__u64 h = 0xcbf29ce484222325ull ^ flags;
	for (int i = 0; i < OFFCPU_BPF_MAX_DEPTH && i < n; i++)
		h = (h ^ s->ips[i]) * 0x100000001b3ull;
	h |= 1; /* never 0 */
	/* zeros past the last frame */
	if (h == last || bpf_map_lookup_elem(&stacks, &h))
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

/* prev leaves the CPU with a wait still open in its entry: its switch-in
 * was not reported (sched_switch does not fire for some tasks here, and a
 * thread they hand the CPU to is never seen as next). The wait ends where
 * prev's sched_info says it came back, on this CPU's run-queue clock,
 * turned into ours by how far the two are apart now (prev arrived on this
 * CPU: it has run here since). A kernel without group scheduling has no
 * way to its run queue here: such a wait stays unended (REPLACED). */
static __always_inline void came_back(struct task_struct *prev,
				      struct offcpu_bpf_start *o, __u32 tid)
{
	if (!o || !o->time)
		return;
	__u64 back = prev->sched_info.last_arrival, rq_now = 0;
	/* prev's run queue, this CPU's (not the runqueues per-CPU symbol: a
	 * kernel without CONFIG_KALLSYMS_ALL, as here, has no address for it) */
	struct cfs_rq *cq = 0;
	/* without CONFIG_FAIR_GROUP_SCHED sched_entity has no cfs_rq: a
	 * guarded read is dead code there, an unguarded one fails the load */
	if (bpf_core_field_exists(prev->se.cfs_rq))
		cq = prev->se.cfs_rq;
	if (cq && bpf_core_field_exists(cq->rq)) {
		struct rq *rq = BPF_CORE_READ(cq, rq);
		if (rq)
			rq_now = BPF_CORE_READ(rq, clock);
	}
	__u64 now = bpf_ktime_get_ns();
	__u64 end = back + (now - rq_now);
	if (!back || !rq_now || back > rq_now || end <= o->time) {
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
	struct offcpu_bpf_start *o = bpf_task_storage_get(&starts, prev, 0, 0);
	came_back(prev, o, tid);
	__u32 state = report_state(preempt, prev_state, prev->exit_state);
	if (state & (0x10 | 0x20)) { /* EXIT_DEAD, EXIT_ZOMBIE: never back */
		if (o)
			bpf_task_storage_delete(&starts, prev);
		return;
	}
	if (!o)
		o = bpf_task_storage_get(&starts, prev, 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	stat_add(OFFCPU_BPF_OUTS);
	if (!o) {
		stat_add(OFFCPU_BPF_LOST);
		return;
	}
	__u32 k = 0;
	struct offcpu_bpf_conf *c = bpf_map_lookup_elem(&conf, &k);
	if (!c)
		return;
	o->time = bpf_ktime_get_ns();
	o->state = state;
	o->pid = prev->tgid;
	o->ustack = stack_key(ctx, BPF_F_USER_STACK, c, o->ustack);
	o->kstack = c->flags & OFFCPU_BPF_NO_KERNEL ? 0
						   : stack_key(ctx, 0, c, o->kstack);
}

/* next is back: its wait ends; its entry stays, on the CPU since now */
static __always_inline void switch_in(struct task_struct *next)
{
	__u32 tid = next->pid;
	struct offcpu_bpf_start *s = bpf_task_storage_get(&starts, next, 0, 0);
	if (!s || !s->time)
		return;
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_bpf_start st = *s;
	s->time = 0;
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
