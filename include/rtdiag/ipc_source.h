/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_source.h - a live EventPipe session as a record source
 * (rtdiag/source.h): the session's stream decoded as it comes, the
 * records those of rtd_nettrace_source_stream() (rtdiag/nettrace_source.h).
 */
#ifndef RTDIAG_IPC_SOURCE_H
#define RTDIAG_IPC_SOURCE_H

#include "rtdiag/common.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rtd_ipc_session_source - an EventPipe session's stream as a record source
 * @s: a session from rtd_ipc_session_start(), nothing read from it yet;
 *     borrowed: it must outlive the source, and nothing else reads it
 * @opts: options of the nettrace sources, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * rtd_source_next() blocks until the runtime has sent a sequence point's
 * window of events (the runtime flushes about every 100 ms) or the stream
 * ends: stop the session (rtd_ipc_session_stop(), from any thread) and
 * the source ends once the runtime has closed the stream. The target's
 * exit ends it too. Clock: as for a nettrace file (on Linux
 * CLOCK_MONOTONIC, error 0).
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -ENOMEM.
 */
RTD_API rtd_source *rtd_ipc_session_source(rtd_ipc_session *s,
					   const struct rtd_nettrace_source_opts *opts,
					   int *err);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_SOURCE_H */
