/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_profiler.h - the Profiler commands of the diagnostics IPC:
 * attaching a profiler library to a runtime, now or at startup.
 */
#ifndef RTDIAG_IPC_PROFILER_H
#define RTDIAG_IPC_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_client.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_PROFILER_H */
