/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_process.h - the Process commands of the diagnostics IPC:
 * process info, resume, environment, perf maps, startup hooks.
 */
#ifndef RTDIAG_IPC_PROCESS_H
#define RTDIAG_IPC_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_call.h"
#include "rtdiag/ipc_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on sizes that come from the runtime. */
#define RTD_IPC_CAP_ENV (16u << 20)   /* ProcessEnvironment continuation */
#define RTD_IPC_CAP_ENV_VARS 65536u   /* entries in one environment */

/**
 * struct rtd_ipc_process_info - ProcessInfo, ProcessInfo2, ProcessInfo3
 * @version: which command answered (1, 2 or 3)
 * @pid: process id in the target's pid namespace
 * @cookie: runtime instance cookie
 * @cmdline: command line
 * @os: "Linux", ...
 * @arch: "x64", ...
 * @assembly: entry assembly name (version 2 and later, else "")
 * @clr_version: runtime product version (version 2 and later, else "")
 * @rid: runtime identifier, e.g. "linux-x64" (version 3, else "")
 * @info3_version: the payload version field of ProcessInfo3
 */
struct rtd_ipc_process_info {
	int version;
	uint64_t pid;
	uint8_t cookie[16];
	char *cmdline;
	char *os;
	char *arch;
	char *assembly;
	char *clr_version;
	char *rid;
	uint32_t info3_version;
};

/**
 * rtd_ipc_process_info - ask the runtime about its process
 * @c: the client
 * @max_version: newest command to try (3, 2 or 1; 0 means 3); a runtime
 *               that answers UNKNOWN_COMMAND is asked the next older one
 * @out: receives the fields; free with rtd_ipc_process_info_clear()
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_process_info(rtd_ipc_client *c, int max_version,
				 struct rtd_ipc_process_info *out);

/**
 * rtd_ipc_process_info_begin - send a ProcessInfo request, not waiting
 * for its reply
 * @c: the client (connecting to the runtime, not listening for it, nor a
 *     replay); must outlive the call
 * @max_version: as rtd_ipc_process_info()
 * @err: receives the error when NULL is returned (rtd_ipc_client_errmsg()
 *       says more)
 *
 * The reply is read by rtd_ipc_call_answer() (an older runtime asked the
 * older command there) and decoded by rtd_ipc_call_process_info().
 * Returns: the call, or NULL.
 */
RTD_API rtd_ipc_call *rtd_ipc_process_info_begin(rtd_ipc_client *c,
						 int max_version, int *err);

/**
 * rtd_ipc_call_process_info - the fields of an answered ProcessInfo call
 * @k: a call from rtd_ipc_process_info_begin() whose rtd_ipc_call_answer()
 *     returned 0
 * @out: receives the fields; free with rtd_ipc_process_info_clear()
 *
 * Returns: 0, -RTD_E_STATE for a call not answered (or of another
 * command), or the payload's decoding error.
 */
RTD_API int rtd_ipc_call_process_info(const rtd_ipc_call *k,
				      struct rtd_ipc_process_info *out);

/**
 * rtd_ipc_process_info_clear - free the strings of a process info
 * @pi: the info; its fields are zeroed
 */
RTD_API void rtd_ipc_process_info_clear(struct rtd_ipc_process_info *pi);

/**
 * rtd_ipc_process_info_parse - decode a ProcessInfo payload
 * @version: 1, 2 or 3
 * @buf: payload bytes
 * @len: their count
 * @out: receives the fields
 *
 * Returns: 0, -RTD_E_TRUNCATED, -RTD_E_UTF16, -RTD_E_CAP or -ENOMEM.
 */
RTD_API int rtd_ipc_process_info_parse(int version, const void *buf,
				       size_t len,
				       struct rtd_ipc_process_info *out);

/**
 * rtd_ipc_resume_runtime - let a runtime started suspended continue
 * @c: the client
 *
 * A no-op for a runtime that is not suspended. Returns: 0 or an error.
 */
RTD_API int rtd_ipc_resume_runtime(rtd_ipc_client *c);

/**
 * typedef rtd_ipc_env_fn - receives one environment entry
 * @entry: "NAME=value" as UTF-8; valid during the call
 * @ctx: the caller's pointer
 *
 * Returns: 0 to go on, anything else stops and is returned.
 */
typedef int (*rtd_ipc_env_fn)(const char *entry, void *ctx);

/**
 * rtd_ipc_process_env - read the target's environment block
 * @c: the client
 * @fn: called once per entry, in the runtime's order
 * @ctx: passed to @fn
 *
 * Returns: 0, what @fn returned, or an error.
 */
RTD_API int rtd_ipc_process_env(rtd_ipc_client *c, rtd_ipc_env_fn fn,
				void *ctx);

/**
 * rtd_ipc_set_env - set an environment variable inside the target
 * @c: the client
 * @name: variable name
 * @value: its value; NULL or "" unsets it (the runtime's rule)
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_set_env(rtd_ipc_client *c, const char *name,
			    const char *value);

enum rtd_ipc_perfmap_type {
	RTD_IPC_PERFMAP_DISABLED = 0,
	RTD_IPC_PERFMAP_ALL = 1,
	RTD_IPC_PERFMAP_JITDUMP = 2,
	RTD_IPC_PERFMAP_PERFMAP = 3,
};

/**
 * rtd_ipc_perfmap_enable - make the runtime write /tmp/perf-PID.map etc.
 * @c: the client
 * @type: what to write
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_perfmap_enable(rtd_ipc_client *c,
				   enum rtd_ipc_perfmap_type type);

/**
 * rtd_ipc_perfmap_enable_begin - send an EnablePerfMap request, not
 * waiting for its reply
 * @c: the client (connecting, as rtd_ipc_process_info_begin()); must
 *     outlive the call
 * @type: what to write
 * @err: receives the error when NULL is returned
 *
 * rtd_ipc_call_answer() returns 0 once the runtime said the map is on. A
 * runtime stopped or busy may switch it on later, even after the call is
 * freed unanswered: undo it with rtd_ipc_perfmap_disable() (or a guard,
 * rtdiag/guard.h, registered before this) either way.
 * Returns: the call, or NULL.
 */
RTD_API rtd_ipc_call *
rtd_ipc_perfmap_enable_begin(rtd_ipc_client *c, enum rtd_ipc_perfmap_type type,
			     int *err);

/**
 * rtd_ipc_perfmap_disable - stop writing perf map and jitdump files
 * @c: the client
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_perfmap_disable(rtd_ipc_client *c);

/**
 * rtd_ipc_apply_startup_hook - add a startup hook assembly
 * @c: the client
 * @path: the assembly, as the target sees the file system
 *
 * Only accepted while the runtime is suspended at startup (reverse
 * connection, before rtd_ipc_resume_runtime()); the hook runs on resume.
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_apply_startup_hook(rtd_ipc_client *c, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_PROCESS_H */
