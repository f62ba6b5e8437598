/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_syscalls.h - system calls traced on a perf monitor (perf
 * trace): each call's entry and exit paired, formatted, summed up.
 */
#ifndef RTDIAG_PERF_SYSCALLS_H
#define RTDIAG_PERF_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_monitor;
struct rtd_perf_sample;

struct rtd_perf_syscalls;

/* Bytes of a string argument kept (rtd_perf_syscall.strs). */
#define RTD_PERF_SYSCALL_STR 256

/**
 * struct rtd_perf_syscall - one system call, its enter and exit paired
 * @pid: process
 * @tid: thread
 * @nr: the call's number on this machine
 * @name: its name (libseccomp), or NULL for a number it does not know
 * @args: the six argument registers at entry
 * @ret: the return value (-4095..-1: -errno)
 * @enter_ns: CLOCK_MONOTONIC at entry
 * @exit_ns: CLOCK_MONOTONIC at exit
 * @has_enter: the entry was seen (false for a call entered before tracing)
 * @comm: the thread's name (COMM records, else /proc when first seen)
 * @has_str: which arguments' strings were read
 * @strs: path-like string arguments, read from the process at entry
 *        ("\x01" alone: unreadable)
 */
struct rtd_perf_syscall {
	uint32_t pid, tid;
	long nr;
	const char *name;
	uint64_t args[6];
	int64_t ret;
	uint64_t enter_ns, exit_ns;
	bool has_enter;
	char comm[16];
	bool has_str[6];
	char strs[6][RTD_PERF_SYSCALL_STR];
};

/* Flags for rtd_perf_syscalls_new(). */
enum rtd_perf_syscalls_flags {
	/* keep counts and times per process and call (memory grows with
	 * the processes seen, up to 16384 of them) */
	RTD_PERF_SYSCALLS_SUMMARY = 1u << 0,
	/* do not read path arguments from the processes */
	RTD_PERF_SYSCALLS_NO_STRINGS = 1u << 1,
};

/**
 * rtd_perf_syscalls_new - trace system calls on a monitor
 * @m: monitor (its scope: processes, cgroup or system)
 * @names: only these calls ("openat", "read"), by name; NULL/0: all
 * @nnames: their count
 * @flags: RTD_PERF_SYSCALLS_* flags
 * @out: receives the tracer
 *
 * Registers raw_syscalls:sys_enter and sys_exit, with a kernel filter on
 * the numbers of @names (create the monitor with RTD_PERF_TRACK_COMM so
 * thread names follow exec). Names and numbers come from libseccomp; argument
 * names and types from the kernel's syscalls:sys_enter_* formats.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown name (the monitor's errmsg
 * names it), or an error of rtd_perf_monitor_add_tracepoint().
 */
RTD_API int rtd_perf_syscalls_new(struct rtd_perf_monitor *m,
				  const char *const *names, size_t nnames,
				  unsigned flags, struct rtd_perf_syscalls **out);

/**
 * rtd_perf_syscalls_strings_at_entry - are string arguments read at entry?
 * @s: tracer
 * @why: receives, when they are not, why (one line, owned by @s); may be
 *       NULL
 *
 * Where the process may load BPF (root, or CAP_BPF and CAP_PERFMON) and
 * libbpf.so.1 is there, a BPF program at sys_enter reads each traced
 * call's path-like arguments from the process as strace does, at entry.
 * Otherwise, and for a string on a page the process had not touched at
 * entry, they are read with process_vm_readv when the call is handled:
 * after the fact, "?" (RTD_PERF_SYSCALL_STR's "\x01") when gone.
 *
 * Returns: true when read at entry (BPF).
 */
RTD_API bool rtd_perf_syscalls_strings_at_entry(const struct rtd_perf_syscalls *s,
						const char **why);

/**
 * rtd_perf_syscalls_free - free a tracer (its events belong to the monitor)
 * @s: tracer, or NULL
 */
RTD_API void rtd_perf_syscalls_free(struct rtd_perf_syscalls *s);

/**
 * rtd_perf_syscalls_feed - give the tracer a record of the monitor
 * @s: tracer
 * @smp: a record from rtd_perf_monitor_run()
 * @out: filled when a call completed
 *
 * Returns: 1 when @out holds a completed call (at its exit), 0 otherwise
 * (an entry, or a record of another event).
 */
RTD_API int rtd_perf_syscalls_feed(struct rtd_perf_syscalls *s,
				   const struct rtd_perf_sample *smp,
				   struct rtd_perf_syscall *out);

/**
 * rtd_perf_syscalls_format_args - the arguments as perf trace shows them
 * @s: tracer
 * @c: a completed call
 * @buf: receives "dfd: CWD, filename: \"/etc/hosts\", flags: RDONLY|CLOEXEC"
 * @n: its size (the text is cut to fit)
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_syscalls_format_args(struct rtd_perf_syscalls *s,
					  const struct rtd_perf_syscall *c,
					  char *buf, size_t n);

/**
 * rtd_perf_syscalls_format_ret - the return value: "3", "0x7f..." or
 * "-1 ENOENT (No such file or directory)"
 * @c: a completed call
 * @buf: receives the text
 * @n: its size
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_syscalls_format_ret(const struct rtd_perf_syscall *c,
					 char *buf, size_t n);

/**
 * rtd_perf_syscalls_write_summary - perf trace -s: per process, per call:
 * calls, errors, total/min/avg/max time and stddev
 * @s: tracer
 * @f: output
 *
 * Returns: 0, -ENOMEM or -EIO.
 */
RTD_API int rtd_perf_syscalls_write_summary(struct rtd_perf_syscalls *s,
					    FILE *f);

/**
 * rtd_perf_syscall_name - a system call's name on this machine
 * @s: tracer (caches names)
 * @nr: its number
 *
 * Returns: the name, or NULL.
 */
RTD_API const char *rtd_perf_syscall_name(struct rtd_perf_syscalls *s, long nr);

/**
 * rtd_perf_syscall_nr - a system call's number on this machine
 * @name: its name ("openat")
 *
 * Returns: the number, or -1 for a name libseccomp does not know.
 */
RTD_API long rtd_perf_syscall_nr(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_SYSCALLS_H */
