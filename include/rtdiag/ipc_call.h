/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_call.h - a command of the diagnostics IPC sent without
 * waiting for its reply: the caller polls its descriptor and reads the
 * reply when it comes, so a runtime that is stopped or slow to answer
 * holds no one (a loop serving other runtimes goes on meanwhile).
 *
 * A call is begun by the command's own function (rtd_ipc_process_info_begin(),
 * rtd_ipc_perfmap_enable_begin() in rtdiag/ipc_process.h) and has no
 * deadline: it waits as long as the caller keeps it.
 */
#ifndef RTDIAG_IPC_CALL_H
#define RTDIAG_IPC_CALL_H

#include "rtdiag/common.h"
#include "rtdiag/ipc_client.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_ipc_call rtd_ipc_call;

/**
 * rtd_ipc_call_fd - the descriptor a begun call's reply comes on
 * @k: the call
 *
 * Poll it for POLLIN, then call rtd_ipc_call_answer(). It may change when
 * the call asks again (an older command on a new connection).
 * Returns: the descriptor, or -1 once the call is answered or failed.
 */
RTD_API int rtd_ipc_call_fd(const rtd_ipc_call *k);

/**
 * rtd_ipc_call_answer - read a call's reply, without waiting
 * @k: the call
 *
 * Reads what the connection holds. A runtime that does not know the
 * command asked is asked the older one the synchronous function would try
 * next, on a new connection (1: poll rtd_ipc_call_fd() again).
 *
 * Returns: 0 answered with success (again 0 on later calls), 1 no whole
 * reply yet, or a negative error: the runtime's refusal (its HRESULT in
 * rtd_ipc_client_hresult()), -RTD_E_IPC_CLOSED when it closed the
 * connection without a reply; rtd_ipc_client_errmsg() of the call's
 * client says more. After an error the call can only be freed.
 */
RTD_API int rtd_ipc_call_answer(rtd_ipc_call *k);

/**
 * rtd_ipc_call_free - give a call up, or free an answered one
 * @k: the call; NULL does nothing
 *
 * A request closed unanswered may still be carried out by the runtime
 * (it reads the request before it writes the reply): a caller that must
 * undo its effect does so whether or not the reply came.
 */
RTD_API void rtd_ipc_call_free(rtd_ipc_call *k);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_CALL_H */
