/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_user_events.h - EventPipe sessions that write to Linux
 * user_events tracepoints (CollectTracing5, .NET 10) instead of a stream.
 */
#ifndef RTDIAG_IPC_USER_EVENTS_H
#define RTDIAG_IPC_USER_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_client.h"
#include "rtdiag/ipc_providers.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_USER_EVENTS_H */
