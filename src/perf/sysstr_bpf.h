/* SPDX-License-Identifier: MIT */
/*
 * sysstr_bpf.h - the string arguments of system calls, read in the kernel
 * at entry by a BPF program (bpf/sysstr.bpf.c), as strace shows them,
 * paired here with the perf sys_enter records of the same calls.
 */
#ifndef RTD_PERF_SYSSTR_BPF_H
#define RTD_PERF_SYSSTR_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SYSSTR_BPF_LEN 256 /* bytes a string, its NUL included */

struct sysstr_bpf;

/*
 * Load and attach: masks[nr] (nmasks numbers) has bit k set when argument
 * k of call nr is a string; pids (none: all) count from their next exec
 * with on_exec. Returns 0, or a negative error with a one-line reason.
 */
int sysstr_bpf_new(const pid_t *pids, size_t npids, bool on_exec,
		   const uint32_t *masks, size_t nmasks,
		   struct sysstr_bpf **out, char *why, size_t whylen);

/*
 * The strings read at the entry of tid's call nr with these arguments
 * (or at its exit when unreadable at entry), once its exit is seen:
 * true when the kernel sent them; *got then has bit k set for each
 * strs[k] read (a string unreadable at entry has its bit clear).
 */
bool sysstr_bpf_take(struct sysstr_bpf *b, uint32_t tid, long nr,
		     const uint64_t args[6], char strs[6][SYSSTR_BPF_LEN],
		     unsigned *got);

/* A thread exited: what is queued for it goes. */
void sysstr_bpf_exit(struct sysstr_bpf *b, uint32_t tid);

void sysstr_bpf_free(struct sysstr_bpf *b);

#endif /* RTD_PERF_SYSSTR_BPF_H */
