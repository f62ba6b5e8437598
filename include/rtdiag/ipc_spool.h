/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_spool.h - a thread that keeps EventPipe session streams
 * moving: it takes a session's reading over into a capped buffer when the
 * session's reader falls behind, so a runtime never waits for its reader.
 *
 * A runtime writes a session's stream to its socket and, once the socket
 * is full (~212 KB), waits in that write; its exit waits for it too. A
 * reader that decodes on the same thread it reads on can fall that far
 * behind (a busy machine, many targets). While a session's reader keeps
 * up it reads the socket itself (rtd_ipc_session_read()); a spool's
 * thread (one for all sessions added to it) watches each socket every
 * ~50 ms and, when bytes have waited unread ~50 ms or 64 KiB wait, reads
 * the socket into a buffer of the session's; the reader's reads then take
 * the bytes from that buffer, in order, and read the socket again once
 * they have taken all of it. Past the buffer's cap the bytes are dropped
 * and counted, and the session is damaged: its reads give the bytes held
 * before the damage, then -RTD_E_IPC_DROPPED.
 */
#ifndef RTDIAG_IPC_SPOOL_H
#define RTDIAG_IPC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A session's buffer when rtd_ipc_spool_opts.cap is 0: 16 MiB, half the
 * runtime's own buffer as the agent asks for it (32 MB), ~60 s of a busy
 * profile session's stream. */
#define RTD_IPC_SPOOL_CAP_DEFAULT (16u << 20)
/* The smallest cap a spool takes (one read's chunk). */
#define RTD_IPC_SPOOL_CAP_MIN (64u << 10)

typedef struct rtd_ipc_spool rtd_ipc_spool;

/**
 * struct rtd_ipc_spool_opts - how a spool reads
 * @sz: sizeof(struct rtd_ipc_spool_opts)
 * @cap: bytes held at most for one session (0: RTD_IPC_SPOOL_CAP_DEFAULT;
 *       at least RTD_IPC_SPOOL_CAP_MIN); past it the bytes are dropped
 */
struct rtd_ipc_spool_opts {
	size_t sz;
	size_t cap;
};

/**
 * rtd_ipc_spool_new - start a spool and its reading thread
 * @o: options (struct rtd_ipc_spool_opts, libbpf's shape), or NULL
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Returns: the spool, or NULL: -RTD_E_INVAL (bad @o, a cap under
 * RTD_IPC_SPOOL_CAP_MIN), -ENOMEM, or the errno of epoll, eventfd or
 * pthread_create.
 */
RTD_API rtd_ipc_spool *rtd_ipc_spool_new(const struct rtd_ipc_spool_opts *o,
					 int *err);

/**
 * rtd_ipc_spool_add - read a session's stream on the spool's thread
 * @sp: the spool
 * @s: a live session (rtd_ipc_session_start()), not on a spool yet
 *
 * From now on the spool's thread watches @s's socket and reads it into
 * a buffer whenever @s's reader falls behind (see above);
 * rtd_ipc_session_read() gives the bytes in the socket's order, whoever
 * read them. rtd_ipc_session_fd() is then a descriptor (an epoll) that
 * polls readable while bytes, the stream's end or its damage wait to be
 * read, in the socket or in the buffer (call it again after adding: it
 * changed; a source made over @s must be made after this call). The session leaves
 * the spool when it is freed (rtd_ipc_session_free()). One thread reads
 * a session at a time, as before.
 *
 * Returns: 0, -RTD_E_INVAL (a replayed or closed session, one already on
 * a spool), -ENOMEM, or the errno of eventfd or epoll_ctl.
 */
RTD_API int rtd_ipc_spool_add(rtd_ipc_spool *sp, rtd_ipc_session *s);

/**
 * rtd_ipc_session_dropped - stream bytes a spool dropped for a session
 * @s: the session
 *
 * Returns: the bytes dropped past the spool's cap (0 for a session on no
 * spool, or one never damaged).
 */
RTD_API uint64_t rtd_ipc_session_dropped(const rtd_ipc_session *s);

/**
 * struct rtd_ipc_spool_stats - a spool's counters, over every session it
 * has read
 * @sz: sizeof(struct rtd_ipc_spool_stats), set by the caller
 * @bytes: stream bytes read from the sockets (by the readers and the
 *         thread)
 * @dropped: bytes dropped past a session's cap
 * @damaged: sessions that dropped bytes
 * @held_peak: the most bytes one session held at once
 * @direct: of @bytes, those the sessions' readers read from the sockets
 *          themselves
 * @taken: times the thread took a session's socket from its reader
 * @given: times a reader took its socket back (all held bytes read)
 */
struct rtd_ipc_spool_stats {
	size_t sz;
	uint64_t bytes;
	uint64_t dropped;
	uint64_t damaged;
	uint64_t held_peak;
	uint64_t direct;
	uint64_t taken;
	uint64_t given;
};

/**
 * rtd_ipc_spool_get_stats - read a spool's counters
 * @sp: the spool
 * @st: filled up to @st->sz bytes
 */
RTD_API void rtd_ipc_spool_get_stats(rtd_ipc_spool *sp,
				     struct rtd_ipc_spool_stats *st);

/**
 * rtd_ipc_spool_free - stop the spool's thread and free it
 * @sp: the spool; NULL does nothing
 *
 * Free the sessions first. A session still on the spool keeps the bytes
 * it holds (its reads give them, then its damage, or read its socket
 * directly again).
 */
RTD_API void rtd_ipc_spool_free(rtd_ipc_spool *sp);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_SPOOL_H */
