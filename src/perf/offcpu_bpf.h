/* SPDX-License-Identifier: MIT */
/*
 * offcpu_bpf.h - off-CPU waits summed in the kernel by a BPF program
 * (bpf/offcpu.bpf.c), read as totals per (thread, stacks, state).
 *
 * The same waits as the perf path (offcpu.c fed by sched_switch samples
 * and switch records): a wait starts when a thread in scope leaves the
 * CPU and ends when it is switched in again; its state is the one the
 * sched_switch tracepoint reports. Nothing is copied out per switch.
 */
#ifndef RTD_PERF_OFFCPU_BPF_H
#define RTD_PERF_OFFCPU_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct offcpu_bpf;

struct offcpu_bpf_opts {
	const pid_t *pids;   /* processes (children follow); none: all */
	size_t npids;
	bool on_exec;        /* the pids count from their next exec */
	bool no_kernel;      /* no kernel stacks */
};

/*
 * Load and attach the program. Returns 0, or a negative error with a
 * one-line reason in why[] (no BPF in this build, no libbpf, not allowed).
 */
int offcpu_bpf_new(const struct offcpu_bpf_opts *o, struct offcpu_bpf **out,
		   char *why, size_t whylen);

/* The waits of one (thread, stacks, state) since the last read. The stacks
 * are leaf first, as perf call chains are; they live until fn returns. */
struct offcpu_bpf_wait {
	uint32_t pid, tid;
	uint32_t state;       /* sched_switch's prev_state (offcpu_state_of()) */
	const char *comm;     /* the thread's name */
	uint64_t count, ns;
	const uint64_t *kips; /* kernel frames */
	size_t nk;
	const uint64_t *uips; /* user frames */
	size_t nu;
};

typedef int (*offcpu_bpf_fn)(const struct offcpu_bpf_wait *w, void *ctx);

/* Calls fn for each total (of process pid, or all: 0) that grew since the
 * last read (waits ended meanwhile; none is lost or counted twice: the
 * kernel keeps totals, this keeps what it has passed on). Returns 0, fn's
 * non-zero return, or -errno. */
int offcpu_bpf_read(struct offcpu_bpf *b, uint32_t pid, offcpu_bpf_fn fn,
		    void *ctx);

/* The program's counters: OFFCPU_BPF_OUTS, _WAITS, _LOST, _NOSTACK
 * (bpf/offcpu_maps.h), summed over the CPUs. */
void offcpu_bpf_counters(struct offcpu_bpf *b, uint64_t *out, size_t n);

void offcpu_bpf_free(struct offcpu_bpf *b);

#endif /* RTD_PERF_OFFCPU_BPF_H */
