/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * sysstr.bpf.c - the string arguments of system calls, read at entry as
 * strace reads them (CO-RE; loaded by ../sysstr_bpf.c).
 *
 * At sys_enter of a process in scope, a call whose number has string
 * arguments (the masks user space put in strargs, from the kernel's
 * syscalls:sys_enter_* formats) gets each such argument read from user
 * memory and sent, with the call's number and argument registers, on a
 * ring buffer. User space pairs it with the perf sys_enter record of the
 * same thread, number and arguments. A string on a page the process has
 * not touched yet cannot be read at entry (no page faults here: a libc
 * literal such as "/usr/lib/locale/locale-archive", seen in 3 runs of 6);
 * the call is then kept per thread and its record sent at sys_exit, the
 * failed strings read again: the kernel has faulted the page in to read
 * the path itself. Still unreadable: marked failed, user space then tries
 * process_vm_readv.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "follow.bpf.h"
#include "sysstr_maps.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sysstr_conf);
} sconf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SYSSTR_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u32);
} spids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SYSSTR_MAX_NR);
	__type(key, __u32);
	__type(value, __u32);
} strargs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SYSSTR_RING);
} recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

/* calls whose strings are read again at exit, by tid */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SYSSTR_MAX_LATE);
	__type(key, __u32);
	__type(value, struct sysstr_rec);
} late SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(sysstr_enter, struct pt_regs *regs, long id)
{
	__u32 nr = (__u32)id, z = 0;
	__u32 *mask = bpf_map_lookup_elem(&strargs, &nr);
	if (!mask || !*mask)
		return 0;
	struct sysstr_conf *c = bpf_map_lookup_elem(&sconf, &z);
	if (!c)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (!(c->flags & SYSSTR_ALL)) {
		__u32 tgid = pt >> 32;
		__u32 *v = bpf_map_lookup_elem(&spids, &tgid);
		if (!v || *v != FOLLOW_ON)
			return 0;
	}
	struct sysstr_rec *r = bpf_ringbuf_reserve(&recs, sizeof(*r), 0);
	if (!r) {
		__u64 *d = bpf_map_lookup_elem(&dropped, &z);
		if (d)
			__sync_fetch_and_add(d, 1);
		return 0;
	}
	r->tid = (__u32)pt;
	r->nr = nr;
	r->mask = *mask;
	r->failed = 0;
	/* x86-64: the system call's arguments in di, si, dx, r10, r8, r9 */
	r->args[0] = regs->di;
	r->args[1] = regs->si;
	r->args[2] = regs->dx;
	r->args[3] = regs->r10;
	r->args[4] = regs->r8;
	r->args[5] = regs->r9;
	for (int k = 0; k < 6; k++) {
		r->strs[k][0] = 0;
		if (!(r->mask & (1u << k)))
			continue;
		if (bpf_probe_read_user_str(r->strs[k], SYSSTR_LEN,
					    (const void *)r->args[k]) < 0)
			r->failed |= 1u << k;
	}
	__u32 tid = r->tid;
	if (r->failed && !bpf_map_update_elem(&late, &tid, r, BPF_ANY)) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sysstr_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sysstr_rec *r = bpf_map_lookup_elem(&late, &tid);
	if (!r)
		return 0;
	for (int k = 0; k < 6; k++) {
		if (!(r->failed & (1u << k)))
			continue;
		if (bpf_probe_read_user_str(r->strs[k], SYSSTR_LEN,
					    (const void *)r->args[k]) >= 0)
			r->failed &= ~(1u << k);
	}
	if (bpf_ringbuf_output(&recs, r, sizeof(*r), 0)) {
		__u32 z = 0;
		__u64 *d = bpf_map_lookup_elem(&dropped, &z);
		if (d)
			__sync_fetch_and_add(d, 1);
	}
	bpf_map_delete_elem(&late, &tid);
	return 0;
}

FOLLOW_PROGS(sysstr, spids)
