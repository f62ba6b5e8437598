/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_discovery.h - finding .NET processes and their diagnostic
 * sockets, and the names processes and threads go by.
 */
#ifndef RTDIAG_IPC_DISCOVERY_H
#define RTDIAG_IPC_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rtd_ipc_socket_find - find the diagnostic socket of a process
 * @pid: the process, as this process sees it
 * @path: receives a path to connect to (through /proc/PID/root when the
 *        target lives in another mount namespace)
 * @len: size of @path
 * @where: receives the directory searched, for messages (may be NULL)
 * @wlen: size of @where
 *
 * Looks in the target's TMPDIR (read from /proc/PID/environ) or /tmp, as
 * the target sees it, for dotnet-diagnostic-{nspid}-{key}-socket, where
 * nspid is the pid inside the target's own pid namespace (NSpid) and key
 * its start time; a stale socket of an earlier process with the same pid
 * (an older key: a runtime killed by SIGKILL leaves its socket) is never
 * taken. On -RTD_E_IPC_NOSOCKET @path holds the name of such a stale
 * socket when there is one, else "".
 *
 * Returns: 0; -RTD_E_IPC_NOPROCESS, -RTD_E_IPC_NOSOCKET, -ENAMETOOLONG.
 */
RTD_API int rtd_ipc_socket_find(pid_t pid, char *path, size_t len,
				char *where, size_t wlen);

/**
 * struct rtd_ipc_proc - one process with a diagnostic socket
 * @pid: pid as this process sees it
 * @nspid: pid inside the target's pid namespace
 * @socket: path to connect to
 */
struct rtd_ipc_proc {
	pid_t pid;
	pid_t nspid;
	char socket[512];
};

/**
 * rtd_ipc_socket_own_path - a socket path of rtd_ipc_socket_find() as our
 * own root names the same file
 * @pid: the process it was found for
 * @path: the path it gave, rewritten in place
 *
 * A path through /proc/PID/root names nothing once the process is gone,
 * though a runtime killed by a signal leaves its socket behind. When
 * @path is /proc/PID/root/X and X in our own root is the same file (same
 * device and inode), @path becomes X, which outlives the process; else
 * it becomes "" (the target lives in another mount namespace).
 *
 * Returns: 0 when @path is X, -ENOENT when it is "".
 */
RTD_API int rtd_ipc_socket_own_path(pid_t pid, char *path);

/**
 * rtd_ipc_list - every process with a diagnostic socket
 * @out: receives a malloc'd array (free() it)
 * @n: receives its length
 *
 * Sorted by pid. Sockets left behind by processes that are gone are not
 * listed. Returns: 0 or a negative errno.
 */
RTD_API int rtd_ipc_list(struct rtd_ipc_proc **out, size_t *n);

/**
 * rtd_ipc_proc_name - the name a .NET process goes by
 * @pid: the process
 * @buf: receives the name
 * @len: size of @buf
 *
 * For the muxer running an application ("dotnet X.dll ...") the
 * application's assembly name X; else the executable's file name (an
 * apphost is named after its assembly), or its comm.
 *
 * Returns: 0, or a negative errno when the process cannot be read.
 */
RTD_API int rtd_ipc_proc_name(pid_t pid, char *buf, size_t len);

/**
 * rtd_ipc_thread_name - the name a thread of a process goes by
 * @pid: the process
 * @tid: one of its threads, as the runtime's events give it (the OS
 *       thread id)
 * @buf: receives the name
 * @len: size of @buf
 *
 * The name the thread has in the kernel (/proc/PID/task/TID/comm): what
 * the runtime set (".NET TP Worker", ".NET Finalizer", ".NET SigHandler")
 * or the program's Thread.Name, cut to 15 bytes by Linux; the main
 * thread has the process's comm.
 *
 * Returns: 0, -ENOENT when there is no such thread (it ended, or its id
 * is of another pid namespace), or another negative errno.
 */
RTD_API int rtd_ipc_thread_name(pid_t pid, uint64_t tid, char *buf,
				size_t len);

/**
 * rtd_ipc_proc_loads_dotnet - has a process loaded a .NET host or runtime?
 * @pid: the process
 *
 * A program started to run .NET maps the host first (libhostfxr.so,
 * libhostpolicy.so: the muxer or an apphost), then the runtime
 * (libcoreclr.so, libclrjit.so); one of them in its mappings
 * (/proc/PID/maps) says it is a .NET process before its diagnostic
 * socket is there.
 *
 * Returns: 1 when one of them is mapped, 0 when none is, or a negative
 * errno when the mappings cannot be read (-ENOENT: no such process).
 */
RTD_API int rtd_ipc_proc_loads_dotnet(pid_t pid);

/**
 * rtd_ipc_proc_matches - does a process go by a name?
 * @pid: the process
 * @name: a name, as dotnet-trace's -n takes it
 *
 * True when @name is the process's comm, its executable's file name, or
 * the assembly it runs (with or without ".dll").
 *
 * Returns: true or false.
 */
RTD_API bool rtd_ipc_proc_matches(pid_t pid, const char *name);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_DISCOVERY_H */
