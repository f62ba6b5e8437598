/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_listener.h - reverse connections (DOTNET_DiagnosticPorts): a
 * listener runtimes connect to, and the ADVR_V1 message they send first.
 */
#ifndef RTDIAG_IPC_LISTENER_H
#define RTDIAG_IPC_LISTENER_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_LISTENER_H */
