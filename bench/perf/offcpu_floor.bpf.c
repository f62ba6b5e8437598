/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * offcpu_floor.bpf.c - what one piece of the off-CPU program costs at
 * sched_switch (bench/perf/offcpu_floor.sh). Built once per variant:
 * F_EMPTY: nothing (the floor of a tp_btf program on this kernel);
 * otherwise a tgid filter, then at each switch-out of the target REPS
 * calls of one thing: F_USER bpf_get_stack() of the user stack, F_KERN
 * of the kernel stack, F_WALK a frame-pointer walk in the program (as
 * offcpu.bpf.c's user_walk), F_KTIME bpf_ktime_get_ns(); none of them:
 * the filter alone. Not the project's program: a measuring aid.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#ifndef REPS
#define REPS 1
#endif
#define DEPTH 127

struct buf { __u64 ips[DEPTH]; };
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 1);
	 __type(key, __u32); __type(value, struct buf); } scratch SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16);
	 __type(key, __u32); __type(value, __u32); } pids SEC(".maps");
/* [0] switch-outs of the target, [1] the helpers' results summed */
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 2);
	 __type(key, __u32); __type(value, __u64); } stats SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
#ifndef F_EMPTY
	__u32 tgid = prev->tgid, z = 0;
	if (!bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	struct buf *b = bpf_map_lookup_elem(&scratch, &z);
	if (!b)
		return 0;
	long n = 0;
	for (int i = 0; i < REPS; i++) {
#if defined(F_USER)
		n += bpf_get_stack(ctx, b->ips, sizeof(b->ips), BPF_F_USER_STACK);
#elif defined(F_KERN)
		n += bpf_get_stack(ctx, b->ips, sizeof(b->ips), 0);
#elif defined(F_WALK)
		struct task_struct *cur = bpf_get_current_task_btf();
		struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(cur);
		__u64 fp = BPF_CORE_READ(r, bp);
		b->ips[0] = BPF_CORE_READ(r, ip);
		for (int k = 1; k < 32; k++) {
			__u64 fr[2];
			if (fp < 4096 || bpf_probe_read_user(fr, sizeof(fr), (void *)fp))
				break;
			b->ips[k] = fr[1];
			fp = fr[0];
			n++;
		}
#elif defined(F_KTIME)
		n += bpf_ktime_get_ns();
#endif
	}
	__u64 *v = bpf_map_lookup_elem(&stats, &z);
	if (v)
		*v += 1;
	z = 1;
	v = bpf_map_lookup_elem(&stats, &z);
	if (v)
		*v += n;
#endif
	return 0;
}
