/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_client.h - a client of the .NET Diagnostics IPC protocol: its
 * transport, any command and its reply, and the runtime's HRESULTs.
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
#ifndef RTDIAG_IPC_CLIENT_H
#define RTDIAG_IPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_listener.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_CLIENT_H */
