/* SPDX-License-Identifier: MIT */
/*
 * offcpu_maps.h - the records the off-CPU BPF program (offcpu.bpf.c)
 * shares with user space (offcpu_bpf.c): map keys and values, laid out
 * with fixed-width fields only so both compilers agree.
 */
#ifndef RTD_PERF_BPF_OFFCPU_MAPS_H
#define RTD_PERF_BPF_OFFCPU_MAPS_H

/* Caps on the kernel's maps; past them a wait is counted as lost. */
#define OFFCPU_BPF_MAX_PIDS 4096     /* processes in scope (forks follow) */
#define OFFCPU_BPF_MAX_WAITS 65536   /* distinct (thread, stacks, state) */
#define OFFCPU_BPF_MAX_STACKS 16384  /* distinct stacks (user and kernel;
				      * preallocated: 17 MB) */
#define OFFCPU_BPF_MAX_DEPTH 127     /* frames per stack (the kernel's max) */

/* config flags */
#define OFFCPU_BPF_ALL 1u        /* every process (system-wide) */
#define OFFCPU_BPF_NO_KERNEL 2u  /* no kernel stacks */

/* stats slots */
enum offcpu_bpf_stat {
	OFFCPU_BPF_OUTS,        /* switch-outs of threads in scope */
	OFFCPU_BPF_WAITS,       /* switch-ins paired with a switch-out */
	OFFCPU_BPF_LOST,        /* waits not counted: a map was full */
	OFFCPU_BPF_NOSTACK,     /* a stack not kept (stack map full) */
	OFFCPU_BPF_LATE,        /* waits whose end sched_switch did not
				 * report, closed at the thread's next
				 * switch-out (counted in _WAITS too) */
	OFFCPU_BPF_REPLACED,    /* waits whose end was not found */
	OFFCPU_BPF_NSTATS,
};

struct offcpu_bpf_conf {
	__u32 flags;
	__u32 pad;
	__u64 min_addr; /* vm.mmap_min_addr: user frames below it are not
			 * read (0: every frame is) */
};

/* A thread in scope: off the CPU since time (how it left), or on it
 * (time 0). */
struct offcpu_bpf_start {
	__u64 time;
	__u64 ustack, kstack; /* stack map keys (a hash of the frames), 0: none */
	__u32 pid;
	__u32 state;          /* sched_switch's prev_state as the tracepoint
			       * reports it (TASK_REPORT bit, 0x100 preempted) */
};

/* The waits map's key: one per (thread, stacks, state). */
struct offcpu_bpf_key {
	__u32 pid, tid;
	__u64 ustack, kstack;
	__u32 state;
	__u32 pad;
};

/* A stack: frames leaf first, zeros after the last. */
struct offcpu_bpf_stack {
	__u64 ips[OFFCPU_BPF_MAX_DEPTH];
};

struct offcpu_bpf_val {
	__u64 count;
	__u64 ns;
	char comm[16];        /* the thread's name at its first wait here */
};

#endif /* RTD_PERF_BPF_OFFCPU_MAPS_H */
