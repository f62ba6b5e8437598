/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc.h - a client of the .NET Diagnostics IPC protocol.
 *
 * Every command opens its own Unix-socket connection (the runtime serves
 * one command per connection). A client names where the runtime is: a pid
 * (its socket is found through /proc/PID/root and the target's TMPDIR, so
 * a process in a container works), a socket path, or a runtime that
 * connected to a listener of ours (DOTNET_DiagnosticPorts, "reverse"
 * connections: each command then takes the runtime's next connection).
 *
 * Errors: functions return 0 or a negative errno / -RTD_E_IPC_*. The
 * runtime's HRESULTs map to RTD_E_IPC_* codes; the raw HRESULT and a
 * message naming the target stay readable with rtd_ipc_client_hresult()
 * and rtd_ipc_client_errmsg().
 *
 * Strings handed out by the library are UTF-8; on the wire they are
 * UTF-16LE. Every size read from the wire has a cap (RTD_IPC_CAP_*).
 */
#ifndef RTDIAG_IPC_H
#define RTDIAG_IPC_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on sizes that come from the runtime. */
#define RTD_IPC_CAP_ENV (16u << 20)   /* ProcessEnvironment continuation */
#define RTD_IPC_CAP_ENV_VARS 65536u   /* entries in one environment */

/* Command sets and ids (ipc-protocol.md "Commands"). */
enum rtd_ipc_cmdset {
	RTD_IPC_SET_DUMP = 0x01,
	RTD_IPC_SET_EVENTPIPE = 0x02,
	RTD_IPC_SET_PROFILER = 0x03,
	RTD_IPC_SET_PROCESS = 0x04,
	RTD_IPC_SET_SERVER = 0xFF,
};

/* The runtime's HRESULTs (ipc-protocol.md "Errors"). */
#define RTD_IPC_HR_BAD_ENCODING 0x80131384u
#define RTD_IPC_HR_UNKNOWN_COMMAND 0x80131385u
#define RTD_IPC_HR_UNKNOWN_MAGIC 0x80131386u
#define RTD_IPC_HR_NOTSUPPORTED 0x80131515u
#define RTD_IPC_HR_FAIL 0x80004005u
#define RTD_IPC_HR_NOT_YET_AVAILABLE 0x8013135bu
#define RTD_IPC_HR_RUNTIME_UNINITIALIZED 0x80131371u
#define RTD_IPC_HR_INVALIDARG 0x80070057u
#define RTD_IPC_HR_INSUFFICIENT_BUFFER 0x8007007Au
#define RTD_IPC_HR_ENVVAR_NOT_FOUND 0x800000CBu

/**
 * rtd_ipc_hresult_error - map a runtime HRESULT to an rtdiag error
 * @hr: the HRESULT from an error reply
 *
 * Returns: a negative RTD_E_IPC_* code (RTD_E_IPC_RUNTIME for HRESULTs
 * without a name of their own), or 0 for a success HRESULT.
 */
RTD_API int rtd_ipc_hresult_error(uint32_t hr);

/**
 * rtd_ipc_hresult_name - symbolic name of a runtime HRESULT
 * @hr: the HRESULT
 *
 * Returns: "DS_IPC_E_UNKNOWN_COMMAND" and so on (general HRESULTs such as
 * 0x8007007E carry a short explanation), or NULL when unknown.
 */
RTD_API const char *rtd_ipc_hresult_name(uint32_t hr);

/* ---- discovery ----------------------------------------------------------- */

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

/* ---- reverse connections (DOTNET_DiagnosticPorts) ---------------------- */

typedef struct rtd_ipc_listener rtd_ipc_listener;

/**
 * struct rtd_ipc_advertise - the ADVR_V1 message a runtime sends first
 * @cookie: the runtime instance cookie (a GUID, bytes as on the wire)
 * @pid: the process id, in the runtime's own pid namespace
 */
struct rtd_ipc_advertise {
	uint8_t cookie[16];
	uint64_t pid;
};

/**
 * rtd_ipc_listen - listen for runtimes started with DOTNET_DiagnosticPorts
 * @path: the Unix socket to create (an old socket file there is replaced)
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Returns: the listener, or NULL.
 */
RTD_API rtd_ipc_listener *rtd_ipc_listen(const char *path, int *err);

/**
 * rtd_ipc_listener_free - close the listener and remove its socket file
 * @l: the listener; NULL does nothing
 */
RTD_API void rtd_ipc_listener_free(rtd_ipc_listener *l);

/**
 * rtd_ipc_listener_fd - the listening socket, for poll()
 * @l: the listener
 *
 * Returns: the file descriptor.
 */
RTD_API int rtd_ipc_listener_fd(const rtd_ipc_listener *l);

/**
 * rtd_ipc_listener_accept - wait for a runtime to connect and advertise
 * @l: the listener
 * @timeout_ms: how long to wait; negative waits forever
 * @adv: receives the advertise message
 * @fd: receives the connection, ready for one command (close it, or give
 *      it to rtd_ipc_client_new_fd()); may be NULL to close it at once
 *
 * Returns: 0, -RTD_E_IPC_TIMEOUT, -RTD_E_IPC_PROTOCOL for a peer that
 * does not speak ADVR_V1, or a negative errno.
 */
RTD_API int rtd_ipc_listener_accept(rtd_ipc_listener *l, int timeout_ms,
				    struct rtd_ipc_advertise *adv, int *fd);

/**
 * rtd_ipc_advertise_parse - decode a 34-byte ADVR_V1 message
 * @buf: the bytes
 * @len: their count
 * @adv: receives the fields
 *
 * Returns: 0, -RTD_E_TRUNCATED or -RTD_E_IPC_PROTOCOL (wrong magic).
 */
RTD_API int rtd_ipc_advertise_parse(const void *buf, size_t len,
				    struct rtd_ipc_advertise *adv);

/* ---- clients --------------------------------------------------------------- */

typedef struct rtd_ipc_client rtd_ipc_client;

/**
 * struct rtd_ipc_client_opts - how a client talks to the runtime
 * @sz: sizeof(struct rtd_ipc_client_opts)
 * @timeout_ms: wait for a reply at most this long (0: 30 s; a dump or a
 *              profiler attach may take long, give them more)
 * @record: when set, every byte the runtime sends on every connection is
 *          appended to this file, framed so rtd_ipc_replay_open() can play
 *          it back (see docs/ipc.md)
 * @on_wait: when set, called with @wait_ctx about every 10 ms while a
 *           command waits for the runtime's reply (a CollectTracing reply
 *           comes after the runtime's provider callbacks ran, seconds on a
 *           loaded machine). A caller that reads other runtimes' session
 *           streams on the same thread reads them here: a runtime whose
 *           stream is not read blocks in its write, and so does its exit.
 *           It must not use this client.
 * @wait_ctx: passed to @on_wait
 */
struct rtd_ipc_client_opts {
	size_t sz;
	int timeout_ms;
	FILE *record;
	void (*on_wait)(void *ctx);
	void *wait_ctx;
};

/**
 * rtd_ipc_client_new - a client for the runtime in process @pid
 * @pid: the target process
 * @opts: options, or NULL for defaults
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Finds the socket (rtd_ipc_socket_find()) but does not connect yet.
 * Returns: the client, or NULL (see rtd_ipc_errmsg_last() for why).
 */
RTD_API rtd_ipc_client *rtd_ipc_client_new(pid_t pid,
					   const struct rtd_ipc_client_opts *opts,
					   int *err);

/**
 * rtd_ipc_client_new_path - a client for the runtime listening at @path
 * @path: the socket path; paths longer than sun_path are reached through
 *        /proc/self/fd of their directory
 * @opts: options, or NULL
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Returns: the client, or NULL.
 */
RTD_API rtd_ipc_client *
rtd_ipc_client_new_path(const char *path, const struct rtd_ipc_client_opts *opts,
			int *err);

/**
 * rtd_ipc_client_new_listener - a client for a runtime that connects to us
 * @l: the listener the runtime connects to; must outlive the client
 * @adv: the runtime, as it advertised itself (its cookie picks its
 *       connections out of others on the same listener)
 * @fd: a connection already accepted from it for the first command, or -1
 * @opts: options, or NULL
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Returns: the client (it owns @fd), or NULL.
 */
RTD_API rtd_ipc_client *
rtd_ipc_client_new_listener(rtd_ipc_listener *l,
			    const struct rtd_ipc_advertise *adv, int fd,
			    const struct rtd_ipc_client_opts *opts, int *err);

/**
 * rtd_ipc_client_free - free a client
 * @c: the client; NULL does nothing
 */
RTD_API void rtd_ipc_client_free(rtd_ipc_client *c);

/**
 * rtd_ipc_client_errmsg - what went wrong in the client's last call
 * @c: the client
 *
 * Returns: a message naming the target and the cause, e.g. "pid 4242: no
 * diagnostic socket in /proc/4242/root/tmp (is DOTNET_EnableDiagnostics=0
 * set?)"; "" when the last call succeeded. Valid until the next call.
 */
RTD_API const char *rtd_ipc_client_errmsg(const rtd_ipc_client *c);

/**
 * rtd_ipc_errmsg_last - why the last rtd_ipc_client_new*() on this thread
 * returned NULL
 *
 * Returns: a thread-local message, "" when none.
 */
RTD_API const char *rtd_ipc_errmsg_last(void);

/**
 * rtd_ipc_client_hresult - the HRESULT of the last error reply
 * @c: the client
 *
 * Returns: the HRESULT, or 0 when the last call got no error reply.
 */
RTD_API uint32_t rtd_ipc_client_hresult(const rtd_ipc_client *c);

/**
 * rtd_ipc_client_target - how the client names its target in messages
 * @c: the client
 *
 * Returns: "pid 4242", or the socket path.
 */
RTD_API const char *rtd_ipc_client_target(const rtd_ipc_client *c);

/**
 * struct rtd_ipc_reply - a reply as it came off the wire
 * @cmdset: 0xFF for the server's generic replies
 * @cmdid: 0x00 OK, 0xFF error
 * @payload: the payload (malloc'd; rtd_ipc_reply_clear() frees it)
 * @len: its length
 */
struct rtd_ipc_reply {
	uint8_t cmdset;
	uint8_t cmdid;
	uint8_t *payload;
	size_t len;
};

/**
 * rtd_ipc_reply_clear - free a reply's payload
 * @r: the reply
 */
RTD_API void rtd_ipc_reply_clear(struct rtd_ipc_reply *r);

/**
 * rtd_ipc_command - send any command and read its reply message
 * @c: the client
 * @cmdset: command set
 * @cmdid: command id
 * @payload: the payload bytes, already encoded (may be NULL when @len is 0)
 * @len: their count (at most 65535 - 20)
 * @reply: receives the reply; an error reply is returned here too
 *
 * For commands this header has no function for, and for tests. The
 * connection is closed afterwards (a continuation is not read).
 * Returns: 0 when a reply was read (check @reply->cmdid), or an error.
 */
RTD_API int rtd_ipc_command(rtd_ipc_client *c, uint8_t cmdset, uint8_t cmdid,
			    const void *payload, size_t len,
			    struct rtd_ipc_reply *reply);

/* ---- Process commands --------------------------------------------------- */

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

/* ---- Dump commands ------------------------------------------------------ */

enum rtd_ipc_dump_type {
	RTD_IPC_DUMP_MINI = 1,
	RTD_IPC_DUMP_HEAP = 2,
	RTD_IPC_DUMP_TRIAGE = 3,
	RTD_IPC_DUMP_FULL = 4,
};

/* GenerateCoreDump2/3 flags. */
#define RTD_IPC_DUMP_LOG 0x1u
#define RTD_IPC_DUMP_LOG_VERBOSE 0x2u
#define RTD_IPC_DUMP_CRASHREPORT 0x4u

/**
 * rtd_ipc_dump - make the runtime write a core dump of its process
 * @c: the client
 * @path: where, as the target sees the file system
 * @type: what the dump holds
 * @flags: RTD_IPC_DUMP_* flags
 * @msg: receives the runtime's error text (GenerateCoreDump3), may be NULL
 * @msglen: size of @msg
 *
 * Tries GenerateCoreDump3, then 2, then 1 while the runtime answers
 * UNKNOWN_COMMAND (flags beyond logging need 2). Returns: 0 or an error.
 */
RTD_API int rtd_ipc_dump(rtd_ipc_client *c, const char *path,
			 enum rtd_ipc_dump_type type, uint32_t flags, char *msg,
			 size_t msglen);

/* ---- Profiler commands -------------------------------------------------- */

/**
 * rtd_ipc_guid_parse - parse "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
 * @s: the text, braces allowed
 * @guid: receives the 16 bytes in wire (Windows GUID) order
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_ipc_guid_parse(const char *s, uint8_t guid[16]);

/**
 * rtd_ipc_guid_format - format a wire-order GUID
 * @guid: 16 bytes
 * @buf: receives 36 characters and a NUL
 * @len: size of @buf (at least 37)
 *
 * Returns: @buf.
 */
RTD_API const char *rtd_ipc_guid_format(const uint8_t guid[16], char *buf,
					size_t len);

/**
 * rtd_ipc_attach_profiler - load a profiler into the running runtime
 * @c: the client
 * @timeout_ms: how long the runtime waits for the profiler to attach
 * @clsid: the profiler's CLSID (wire order)
 * @path: the profiler library, as the target sees the file system
 * @data: client data handed to the profiler (may be NULL)
 * @len: its length
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_attach_profiler(rtd_ipc_client *c, uint32_t timeout_ms,
				    const uint8_t clsid[16], const char *path,
				    const void *data, size_t len);

/**
 * rtd_ipc_startup_profiler - register a profiler to load at startup
 * @c: the client (a runtime suspended at startup)
 * @clsid: the profiler's CLSID (wire order)
 * @path: the profiler library
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_startup_profiler(rtd_ipc_client *c,
				     const uint8_t clsid[16], const char *path);

/* ---- EventPipe ---------------------------------------------------------- */

/**
 * struct rtd_ipc_provider - one provider of a session
 * @name: provider name, e.g. "Microsoft-Windows-DotNETRuntime"
 * @keywords: keyword mask
 * @level: 0 LogAlways .. 5 Verbose
 * @args: "key=value;key=value" arguments, or NULL
 * @filter_ids: event ids to enable (@filter_enable) or disable
 *              (CollectTracing5); NULL for no filter
 * @n_filter_ids: their count
 * @filter_enable: true: only @filter_ids are enabled
 */
struct rtd_ipc_provider {
	const char *name;
	uint64_t keywords;
	uint32_t level;
	const char *args;
	const uint32_t *filter_ids;
	uint32_t n_filter_ids;
	bool filter_enable;
};

/**
 * struct rtd_ipc_providers - a provider list (owns its strings and filter ids)
 * @v: the providers
 * @n: their count
 */
struct rtd_ipc_providers {
	struct rtd_ipc_provider *v;
	size_t n;
};

/**
 * rtd_ipc_providers_parse - parse dotnet-trace's --providers syntax
 * @spec: "Name[:Keywords[:Level[:Args]]],..." where Keywords is hex (0x
 *        optional; empty or absent: all), Level 0 to 5 or a name
 *        (Critical, Error, Warning, Informational, Verbose, LogAlways;
 *        empty or absent: Verbose; above 5 is refused, where dotnet-trace
 *        takes it as 5), Args "k=v;k=v" (may be double-quoted to hold ':'
 *        or ','; a value may be double-quoted to hold ';' or '='; a pair
 *        without '=' is refused)
 * @out: appended to (a provider named again replaces the earlier one)
 * @err: receives a message naming the offending part, may be NULL
 * @errlen: size of @err
 *
 * Returns: 0, -RTD_E_IPC_PROVIDER or -ENOMEM.
 */
RTD_API int rtd_ipc_providers_parse(const char *spec,
				    struct rtd_ipc_providers *out, char *err,
				    size_t errlen);

/**
 * rtd_ipc_providers_add_profile - add a dotnet-trace profile's providers
 * @name: "dotnet-common", "dotnet-sampled-thread-time" (dotnet-trace 10's
 *        default pair), "cpu-sampling" (dotnet-trace 9's CPU profile: the
 *        runtime's Default keywords and the sampler), "gc-verbose",
 *        "gc-collect" or "database"
 * @out: appended to
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown profile, or -ENOMEM.
 */
RTD_API int rtd_ipc_providers_add_profile(const char *name,
					  struct rtd_ipc_providers *out);

/**
 * rtd_ipc_clrevents_parse - dotnet-trace's --clrevents keyword names
 * @list: names joined by '+' ("gc+jit+loader"), case-insensitive, as
 *        dotnet-trace's list (the runtime's ClrEtwAll.man keywords)
 * @keywords: receives the keyword mask of Microsoft-Windows-DotNETRuntime
 * @bad: receives the first unknown name (may be NULL)
 * @badlen: size of @bad
 *
 * Returns: 0, or -RTD_E_IPC_PROVIDER for an unknown or empty name.
 */
RTD_API int rtd_ipc_clrevents_parse(const char *list, uint64_t *keywords,
				    char *bad, size_t badlen);

/**
 * rtd_ipc_profile_names - the profiles rtd_ipc_providers_add_profile() knows
 *
 * Returns: a NULL-terminated static array of names.
 */
RTD_API const char *const *rtd_ipc_profile_names(void);

struct rtd_ipc_session_opts;

/* What a profile of rtdiag records (rtd_ipc_profile_request()). */
enum rtd_ipc_profile_kind {
	RTD_IPC_PROFILE_CPU = 1u << 0,       /* SampleProfiler thread samples */
	RTD_IPC_PROFILE_ALLOC = 1u << 1,     /* GC/AllocationTick */
	RTD_IPC_PROFILE_LOCK = 1u << 2,      /* Contention/Start, Stop */
	RTD_IPC_PROFILE_EXCEPTION = 1u << 3, /* Exception/Start (thrown) */
	RTD_IPC_PROFILE_WAIT = 1u << 4,      /* WaitHandleWait/Start, Stop */
};

/* Rundown keywords for names only: loader, JIT and ReadyToRun methods and
 * modules, without IL-to-native maps and GC settings. */
#define RTD_IPC_RUNDOWN_NAMES 0x80000138ull

/**
 * rtd_ipc_profile_request - the session a profile needs, and nothing more
 * @kinds: RTD_IPC_PROFILE_* bits (at least one)
 * @out: receives the providers (appended to)
 * @so: its providers are not touched; receives no_stackwalk (stacks are
 *      walked only when an event other than a sample needs one: the
 *      runtime's sampler sends its own), rundown_keyword
 *      (RTD_IPC_RUNDOWN_NAMES) and filters_optional
 *
 * Microsoft-Windows-DotNETRuntime is enabled for the keywords the kinds
 * need plus Jit, Loader and CompilationDiagnostic at Verbose
 * (MethodLoadVerbose and R2RGetEntryPoint are Verbose events: they name
 * the methods compiled or first run from precompiled code during the
 * session, so frames are named even without the end rundown), with a
 * CollectTracing5 event filter that lets through only the events a
 * profile reads (MethodLoadVerbose, R2RGetEntryPoint, ModuleLoad,
 * DomainModuleLoad and those of the kinds; for allocations also GCStart
 * and GCJoin_V2, which the Linux GC checks at every collection to decide
 * whether AllocationTick is on). The filter is optional: a runtime
 * before .NET 10 gets the keywords alone. Waits (RTD_IPC_PROFILE_WAIT)
 * are the WaitHandle keyword's WaitHandleWait/Start and Stop, which only
 * .NET 9 and later send (rtd_ipc_profile_supported()).
 *
 * Returns: 0, -RTD_E_INVAL for no kind, or -ENOMEM.
 */
RTD_API int rtd_ipc_profile_request(unsigned kinds,
				    struct rtd_ipc_providers *out,
				    struct rtd_ipc_session_opts *so);

/**
 * rtd_ipc_profile_supported - whether a runtime sends what a profile reads
 * @kind: one RTD_IPC_PROFILE_* bit
 * @clr_version: the runtime's product version as ProcessInfo2 gives it
 *               (struct rtd_ipc_process_info.clr_version, e.g.
 *               "10.0.12+a1b2c3"); NULL or "" when unknown
 * @why: receives the reason when the kind is not supported (may be NULL)
 * @whylen: size of @why
 *
 * Only waits depend on the version today: WaitHandleWait/Start and Stop
 * came with .NET 9; an older runtime accepts the keyword and sends
 * nothing, so a wait profile of it would be empty, not a profile of no
 * waits. An unknown version is taken to be supported.
 *
 * Returns: true when the runtime sends the kind's events.
 */
RTD_API bool rtd_ipc_profile_supported(unsigned kind, const char *clr_version,
				       char *why, size_t whylen);

/**
 * rtd_ipc_providers_clear - free a provider list
 * @p: the list; emptied
 */
RTD_API void rtd_ipc_providers_clear(struct rtd_ipc_providers *p);

/* Rundown keyword the runtime uses for "rundown on" (CollectTracing4). */
#define RTD_IPC_RUNDOWN_DEFAULT 0x80020139ull

/**
 * struct rtd_ipc_session_opts - what a tracing session collects
 * @sz: sizeof(struct rtd_ipc_session_opts)
 * @providers: the providers
 * @n_providers: their count (at least 1)
 * @buffer_mb: the runtime's circular buffer (0: 256)
 * @no_rundown: no rundown events at the end (CollectTracing2+)
 * @rundown_keyword: rundown keywords (CollectTracing4+); 0 means
 *                   RTD_IPC_RUNDOWN_DEFAULT unless @no_rundown
 * @no_stackwalk: do not collect stacks with events (CollectTracing3+)
 * @block_mode: producers wait instead of dropping (CollectTracing6, .NET 11)
 * @version: first CollectTracing version to try (0: 5). On UNKNOWN_COMMAND
 *           the lowest version that covers the request is tried next.
 * @filters_optional: the providers' event filters only spare the runtime
 *           work: a runtime that does not know CollectTracing5 (before
 *           .NET 10) gets the request without them
 */
struct rtd_ipc_session_opts {
	size_t sz;
	const struct rtd_ipc_provider *providers;
	size_t n_providers;
	uint32_t buffer_mb;
	bool no_rundown;
	uint64_t rundown_keyword;
	bool no_stackwalk;
	bool block_mode;
	int version;
	bool filters_optional;
};

/**
 * rtd_ipc_collect_payload - encode a CollectTracing payload
 * @version: 1 to 6
 * @o: the request
 * @buf: receives the payload (malloc'd)
 * @len: receives its length
 *
 * Returns: 0, -RTD_E_UNSUPPORTED when @version cannot express @o,
 * -RTD_E_INVAL, -RTD_E_CAP (over 65515 bytes) or -ENOMEM.
 */
RTD_API int rtd_ipc_collect_payload(int version,
				    const struct rtd_ipc_session_opts *o,
				    uint8_t **buf, size_t *len);

/**
 * rtd_ipc_collect_min_version - lowest CollectTracing that covers a request
 * @o: the request
 *
 * Returns: 1 to 6, or -RTD_E_INVAL for options this version does not
 * know (rtd_opts_check()).
 */
RTD_API int rtd_ipc_collect_min_version(const struct rtd_ipc_session_opts *o);

typedef struct rtd_ipc_session rtd_ipc_session;

/**
 * rtd_ipc_session_start - start an EventPipe session
 * @c: the client; must outlive the session
 * @o: what to collect
 * @err: receives the error when NULL is returned (rtd_ipc_client_errmsg()
 *       says more)
 *
 * Returns: the session, its nettrace stream ready to read, or NULL.
 */
RTD_API rtd_ipc_session *
rtd_ipc_session_start(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
		      int *err);

/**
 * rtd_ipc_session_id - the runtime's id of the session
 * @s: the session
 *
 * Returns: the id (for StopTracing from elsewhere).
 */
RTD_API uint64_t rtd_ipc_session_id(const rtd_ipc_session *s);

/**
 * rtd_ipc_session_version - which CollectTracing command started it
 * @s: the session
 *
 * Returns: 1 to 6; 0 for a replayed recording.
 */
RTD_API int rtd_ipc_session_version(const rtd_ipc_session *s);

/**
 * rtd_ipc_session_fd - the stream's file descriptor, for poll()
 * @s: the session
 *
 * Returns: the descriptor.
 */
RTD_API int rtd_ipc_session_fd(const rtd_ipc_session *s);

/**
 * rtd_ipc_session_read - read stream bytes
 * @s: the session
 * @buf: receives bytes
 * @len: its size
 * @timeout_ms: wait at most this long; negative waits forever
 *
 * Returns: bytes read (> 0), 0 at the end of the stream, -RTD_E_IPC_TIMEOUT,
 * or a negative errno.
 */
RTD_API ssize_t rtd_ipc_session_read(rtd_ipc_session *s, void *buf,
				     size_t len, int timeout_ms);

/**
 * rtd_ipc_session_stop - ask the runtime to end the session
 * @s: the session
 *
 * Sends StopTracing on a second connection; the runtime then writes the
 * rundown and closes the stream. Calling it again does nothing.
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_session_stop(rtd_ipc_session *s);

/**
 * rtd_ipc_stop_tracing - StopTracing for a session id
 * @c: the client
 * @session_id: the session
 *
 * The runtime answers OK whatever the id (it stops a session of that id
 * if it has one): check the id first with rtd_ipc_session_id_mapped().
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_stop_tracing(rtd_ipc_client *c, uint64_t session_id);

/**
 * rtd_ipc_session_id_mapped - could @id be a session of process @pid?
 * @pid: the target, as this process sees it
 * @id: a session id
 *
 * A session id is the address of the runtime's session object in the
 * target, so an id that is no writable address of the target is no
 * session of it. (A mapped address may still be no session: the runtime
 * cannot be asked which sessions it has.)
 *
 * Returns: 1 when @id lies in a readable and writable mapping of @pid
 * (/proc/PID/maps), 0 when not, or a negative errno when the maps cannot
 * be read.
 */
RTD_API int rtd_ipc_session_id_mapped(pid_t pid, uint64_t id);

/**
 * typedef rtd_ipc_sink_fn - receives stream bytes from rtd_ipc_session_pump()
 * @data: the bytes; valid during the call
 * @len: their count
 * @ctx: the caller's pointer
 *
 * Returns: 0 to go on; anything else ends the pump, which returns it.
 */
typedef int (*rtd_ipc_sink_fn)(const void *data, size_t len, void *ctx);

/**
 * struct rtd_ipc_pump_opts - how rtd_ipc_session_pump() runs
 * @sz: sizeof(struct rtd_ipc_pump_opts)
 * @sink: receives every byte of the stream, in order
 * @ctx: passed to @sink
 * @stop: when it becomes non-zero (a signal handler may set it), the
 *        session is stopped and the rundown read
 * @duration_ms: stop after this long (0: until @stop or the stream ends)
 * @rundown_wait_ms: after StopTracing, read at most this long (0: 30 s)
 * @tick: called about every 100 ms with the totals (may be NULL)
 */
struct rtd_ipc_pump_opts {
	size_t sz;
	rtd_ipc_sink_fn sink;
	void *ctx;
	volatile int *stop;
	uint64_t duration_ms;
	uint64_t rundown_wait_ms;
	void (*tick)(uint64_t bytes, void *ctx);
};

/**
 * struct rtd_ipc_pump_result - how a pump ended
 * @bytes: stream bytes delivered
 * @stopped: StopTracing was sent
 * @ended: the runtime closed the stream (after a stop: rundown complete)
 * @rundown_timeout: the rundown did not end within @rundown_wait_ms
 * @target_gone: the stream ended without a stop (the target exited)
 */
struct rtd_ipc_pump_result {
	uint64_t bytes;
	bool stopped;
	bool ended;
	bool rundown_timeout;
	bool target_gone;
};

/**
 * rtd_ipc_session_pump - stream a session into a sink until it ends
 * @s: the session
 * @o: options
 * @res: receives how it ended (may be NULL)
 *
 * Reads in bounded chunks (memory does not grow with the stream). A
 * stream that ends without a stop is not an error: every byte received
 * was delivered and @res->target_gone says so.
 * Returns: 0, what the sink returned, or an error.
 */
RTD_API int rtd_ipc_session_pump(rtd_ipc_session *s,
				 const struct rtd_ipc_pump_opts *o,
				 struct rtd_ipc_pump_result *res);

/**
 * rtd_ipc_rundown_snapshot - the runtime's rundown now, in a session of its own
 * @c: the client
 * @rundown_keyword: what the rundown lists (0: RTD_IPC_RUNDOWN_DEFAULT)
 * @sink: receives the session's nettrace stream
 * @ctx: passed to @sink
 * @wait_ms: read the rundown at most this long (0: 30 s)
 *
 * Starts a session that enables no event (Microsoft-Windows-DotNETRuntime,
 * keywords 0, level LogAlways, no stacks), stops it at once and streams
 * it to its end: what remains is the rundown, the DCStop events naming
 * every loaded module and method with its code address and size. A tool
 * that takes one at the start of a longer session can name the frames of
 * samples even when that session's own rundown never comes (the target
 * died or hung). It may run while another session of the same client is
 * open; that session's events wait in the runtime's buffer meanwhile.
 *
 * Returns: 0, -RTD_E_IPC_TIMEOUT when the rundown did not end within
 * @wait_ms (what arrived was delivered), what @sink returned, or an error
 * (rtd_ipc_client_errmsg() says more).
 */
RTD_API int rtd_ipc_rundown_snapshot(rtd_ipc_client *c, uint64_t rundown_keyword,
				     rtd_ipc_sink_fn sink, void *ctx,
				     int wait_ms);

/**
 * rtd_ipc_session_free - close the stream and free the session
 * @s: the session; NULL does nothing
 *
 * Does not stop the session: the runtime ends it when the stream closes.
 */
RTD_API void rtd_ipc_session_free(rtd_ipc_session *s);

/**
 * struct rtd_ipc_tracepoint_set - event ids written to one tracepoint
 * @name: the user_events tracepoint name
 * @event_ids: the provider's event ids that go there
 * @n_event_ids: their count (at least 1)
 */
struct rtd_ipc_tracepoint_set {
	const char *name;
	const uint32_t *event_ids;
	uint32_t n_event_ids;
};

/**
 * struct rtd_ipc_user_events_provider - a provider of a user_events session
 * @p: name, keywords, level, arguments and event id filter
 * @default_tracepoint: tracepoint for enabled events no set names, or NULL
 * @sets: tracepoints for particular event ids (may be NULL)
 * @n_sets: their count; @default_tracepoint or @sets must be given
 */
struct rtd_ipc_user_events_provider {
	struct rtd_ipc_provider p;
	const char *default_tracepoint;
	const struct rtd_ipc_tracepoint_set *sets;
	uint32_t n_sets;
};

/**
 * rtd_ipc_user_events_payload - encode CollectTracing5 for user_events
 * @v: the providers
 * @n: their count (at least 1)
 * @rundown_keyword: rundown keywords (0: no rundown)
 * @buf: receives the payload (malloc'd)
 * @len: receives its length
 *
 * Returns: 0, -RTD_E_INVAL (a provider without a tracepoint), -RTD_E_CAP
 * or -ENOMEM.
 */
RTD_API int rtd_ipc_user_events_payload(
	const struct rtd_ipc_user_events_provider *v, size_t n,
	uint64_t rundown_keyword, uint8_t **buf, size_t *len);

/**
 * rtd_ipc_user_events_start - start a user_events session (Linux, .NET 10)
 * @c: the client
 * @v: the providers and their tracepoints
 * @n: their count
 * @rundown_keyword: rundown keywords (0: none)
 * @user_events_fd: an open /sys/kernel/tracing/user_events_data; passed to
 *                  the runtime with SCM_RIGHTS (it registers and writes
 *                  the tracepoints; read them with perf or tracefs)
 * @session_id: receives the session id (stop it with
 *              rtd_ipc_stop_tracing())
 *
 * Returns: 0 or an error.
 */
RTD_API int rtd_ipc_user_events_start(
	rtd_ipc_client *c, const struct rtd_ipc_user_events_provider *v,
	size_t n, uint64_t rundown_keyword, int user_events_fd,
	uint64_t *session_id);

/* ---- recording and replay ----------------------------------------------- */

/**
 * rtd_ipc_replay_open - play back a session recorded by a client
 * @path: a file written through rtd_ipc_client_opts.record
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * The returned session reads the first recorded session stream (the
 * bytes after the CollectTracing reply) as if live: rtd_ipc_session_read()
 * and rtd_ipc_session_pump() work; stop does nothing.
 * Returns: the session, or NULL (-RTD_E_FORMAT when the file holds no
 * recorded session).
 */
RTD_API rtd_ipc_session *rtd_ipc_replay_open(const char *path, int *err);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_H */
