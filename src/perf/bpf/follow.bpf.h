/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * follow.bpf.h - a pids map (tgid -> FOLLOW_ON, or FOLLOW_EXEC: from its
 * next exec) that follows forks (perf's inherit) and turns a command on
 * at its exec (perf's enable_on_exec); for the programs' fork and exec
 * handlers (sched_process_fork, sched_process_exec).
 */
#ifndef RTD_PERF_BPF_FOLLOW_H
#define RTD_PERF_BPF_FOLLOW_H

#define FOLLOW_ON 1
#define FOLLOW_EXEC 2

#ifdef __bpf__
/* a process in scope starts another: the child is in scope too, in the
 * same way (from its exec or at once) */
static __always_inline void follow_fork(void *pids, struct task_struct *parent,
					struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	if (ptgid == ctgid)
		return; /* a thread: its process is in scope already */
	__u32 *v = bpf_map_lookup_elem(pids, &ptgid);
	if (v) {
		__u32 nv = *v;
		bpf_map_update_elem(pids, &ctgid, &nv, BPF_ANY);
	}
}

static __always_inline void follow_exec(void *pids, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	__u32 *v = bpf_map_lookup_elem(pids, &tgid);
	if (v && *v == FOLLOW_EXEC) {
		__u32 on = FOLLOW_ON;
		bpf_map_update_elem(pids, &tgid, &on, BPF_EXIST);
	}
}
/* The two handlers, PREFIX_fork and PREFIX_exec, on the pids map MAP. */
#define FOLLOW_PROGS(prefix, map)                                              \
	SEC("tp_btf/sched_process_fork")                                       \
	int BPF_PROG(prefix##_fork, struct task_struct *parent,                \
		     struct task_struct *child)                                \
	{                                                                      \
		follow_fork(&map, parent, child);                              \
		return 0;                                                      \
	}                                                                      \
	SEC("tp_btf/sched_process_exec")                                       \
	int BPF_PROG(prefix##_exec, struct task_struct *p)                     \
	{                                                                      \
		follow_exec(&map, p);                                          \
		return 0;                                                      \
	}
#endif
#endif /* RTD_PERF_BPF_FOLLOW_H */
