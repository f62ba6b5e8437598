/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/guard.h - undo what rtdiag changed in a target or in the kernel,
 * however rtdiag ends.
 *
 * rtdiag switches things on outside its own process: a .NET runtime's
 * perf map (EnablePerfMap over the diagnostics IPC, which makes the
 * runtime write /tmp/perf-PID.map), uprobe and kprobe events in tracefs.
 * It switches them off again when it ends normally; killed with SIGKILL
 * it cannot. A guardian can: a small process forked (twice, so that it is
 * nobody's child) when the first change is registered, told over a
 * socket what to undo, and watching this process through a pidfd and the
 * socket's end. When this process ends in any way, the guardian undoes
 * everything still registered and exits; when this process undoes a
 * change itself it unregisters it, so a normal end leaves the guardian
 * nothing to do.
 *
 * Register a change before making it (a kill between the two then leaves
 * nothing behind; undoing a change that was not made is harmless), and
 * undo it with rtd_guard_undo(), or rtd_guard_forget() it when it was
 * undone another way or never made.
 *
 * The guardian is a copy of this process as it was when it was forked
 * (its memory is shared copy-on-write): a long-running program that will
 * register changes calls rtd_guard_start() early, while it is small. The
 * guardian closes every descriptor it inherited (it must not hold a perf
 * event or a terminal open), ignores the terminal's signals (it runs in a
 * session of its own), and on SIGTERM undoes everything and exits.
 */
#ifndef RTDIAG_GUARD_H
#define RTDIAG_GUARD_H

#include <stdbool.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RTD_GUARD_MAX - registrations a process may hold at once */
#define RTD_GUARD_MAX 4096

/**
 * rtd_guard_start - fork the guardian now, if it is not running
 *
 * Registering the first change starts it anyway; this only chooses when
 * (early, while the process is small). Returns 0 or a negative errno.
 */
RTD_API int rtd_guard_start(void);

/**
 * rtd_guard_pid - the guardian's process id
 *
 * Returns: its pid, or 0 when this process has none.
 */
RTD_API pid_t rtd_guard_pid(void);

/**
 * rtd_guard_perfmap - register a .NET perf map about to be switched on
 * @pid: the .NET process
 * @map_path: the map file as this process reaches it
 *            ("/proc/PID/root/tmp/perf-NSPID.map", rtd_sym_perfmap_path())
 * @id: receives the registration's id
 *
 * Undoing it sends DisablePerfMap to @pid when it is still the process
 * that was registered (same start time, not a zombie), then removes the
 * map file when it did not exist at registration: rtdiag caused it, and
 * nothing reads it once the map is off (a runtime switched on again
 * writes it anew). The file's folder is held open, so a map is removed
 * even when its process has gone, from whatever mount namespace it was in.
 *
 * Returns: 0, -RTD_E_CAP past RTD_GUARD_MAX registrations, -ENOENT when
 * @pid is gone, or a negative errno (the guardian could not be started).
 */
RTD_API int rtd_guard_perfmap(pid_t pid, const char *map_path, unsigned *id);

/**
 * rtd_guard_probe - register a tracefs dynamic event about to be created
 * @tracefs: the tracefs mount ("/sys/kernel/tracing")
 * @kprobe: true for a kprobe or kretprobe, false for a uprobe or uretprobe
 * @group: the event's group ("rtdiag_PID_START")
 * @event: the event's name in the group
 * @id: receives the registration's id
 *
 * Undoing it writes "-:GROUP/EVENT" to uprobe_events or kprobe_events;
 * the guardian retries while the event is busy (the dead process's perf
 * descriptors are still being released).
 *
 * Returns: 0, -RTD_E_INVAL for a name too long, -RTD_E_CAP, or a
 * negative errno.
 */
RTD_API int rtd_guard_probe(const char *tracefs, bool kprobe,
			    const char *group, const char *event,
			    unsigned *id);

/**
 * rtd_guard_undo - undo a registered change here, now, and unregister it
 * @id: the registration
 *
 * Returns: 0, -RTD_E_NOTFOUND for an id not registered, or the undo's
 * error (the registration is dropped either way: the guardian would fail
 * the same way).
 */
RTD_API int rtd_guard_undo(unsigned id);

/**
 * rtd_guard_forget - unregister a change without undoing it
 * @id: the registration (0 or an unknown id does nothing)
 *
 * For a change that was undone another way, or never made.
 */
RTD_API void rtd_guard_forget(unsigned id);

#ifdef __cplusplus
}
#endif

#endif /* RTDIAG_GUARD_H */
