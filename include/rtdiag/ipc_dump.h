/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_dump.h - the Dump commands of the diagnostics IPC: a core
 * dump of the target written by its runtime.
 */
#ifndef RTDIAG_IPC_DUMP_H
#define RTDIAG_IPC_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_client.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_DUMP_H */
