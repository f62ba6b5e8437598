/* SPDX-License-Identifier: MIT */
/*
 * sysstr_maps.h - what the syscall-strings BPF program (sysstr.bpf.c)
 * shares with user space (../sysstr_bpf.c).
 */
#ifndef RTD_PERF_BPF_SYSSTR_MAPS_H
#define RTD_PERF_BPF_SYSSTR_MAPS_H

#define SYSSTR_MAX_PIDS 4096  /* processes in scope (forks follow) */
#define SYSSTR_MAX_NR 1024    /* system call numbers */
#define SYSSTR_LEN 256        /* bytes of a string (as syscall.c shows) */
#define SYSSTR_RING (4u << 20) /* ring buffer bytes */
#define SYSSTR_MAX_LATE 4096  /* calls waiting for their exit */

#define SYSSTR_ALL 1u         /* conf flags: every process */

struct sysstr_conf {
	__u32 flags;
	__u32 pad;
};

/* One system call entry with string arguments, read at entry. */
struct sysstr_rec {
	__u32 tid;
	__u32 nr;
	__u64 args[6];
	__u32 mask;           /* the arguments read (bit k: args[k]) */
	__u32 failed;         /* of those, unreadable at entry (bit k) */
	char strs[6][SYSSTR_LEN];
};

#endif /* RTD_PERF_BPF_SYSSTR_MAPS_H */
