/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_session.h - EventPipe sessions over the diagnostics IPC:
 * CollectTracing, the nettrace stream read or pumped into a sink,
 * StopTracing, rundown snapshots, and recorded sessions played back.
 */
#ifndef RTDIAG_IPC_SESSION_H
#define RTDIAG_IPC_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc_client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_ipc_provider;

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
 * rtd_ipc_session_begin - send a CollectTracing request, not waiting for
 * its reply
 * @c: the client (connecting to the runtime, not listening for it); must
 *     outlive the session
 * @o: what to collect, as rtd_ipc_session_start(); read only here
 * @err: receives the error when NULL is returned (rtd_ipc_client_errmsg()
 *       says more)
 *
 * A starting runtime can take seconds to answer (its provider callbacks
 * run managed code, JIT first, on the diagnostic server's one thread);
 * a caller with other work polls rtd_ipc_session_fd() for POLLIN and calls
 * rtd_ipc_session_answer() when it is readable. Until then the session
 * must not be read or stopped. The connection stays open for the reply:
 * free the session to give up (a request closed unanswered ends there).
 *
 * Returns: the session, its reply to come, or NULL.
 */
RTD_API rtd_ipc_session *
rtd_ipc_session_begin(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
		      int *err);

/**
 * rtd_ipc_session_answer - read a begun session's reply, without waiting
 * @s: a session from rtd_ipc_session_begin() (or one started: 0)
 *
 * Reads no byte past the reply: the stream that follows is the session's.
 * A runtime that does not know the version asked is asked again at the
 * lower one rtd_ipc_session_start() would try, on a new connection (1):
 * poll the session's fd again, it may have changed.
 *
 * Returns: 0 the session runs (its id known, its stream ready to read),
 * 1 no whole reply yet, or a negative error (the runtime's refusal, or
 * -RTD_E_IPC_CLOSED: it closed the connection without a reply); after an
 * error the session can only be freed.
 */
RTD_API int rtd_ipc_session_answer(rtd_ipc_session *s);

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
 * rtd_ipc_session_close - close the stream now, keeping the session
 * @s: the session; NULL does nothing
 *
 * For a reader that gives up on a stream (it failed to decode) while
 * what it made from it lives on: the runtime ends the session when the
 * stream closes, and a stream left open and unread would, once its
 * socket is full, hold the runtime's writes and its exit. Later reads
 * give 0 (the end); rtd_ipc_session_fd() gives -1; free it as before.
 */
RTD_API void rtd_ipc_session_close(rtd_ipc_session *s);

/**
 * rtd_ipc_session_free - close the stream and free the session
 * @s: the session; NULL does nothing
 *
 * Does not stop the session: the runtime ends it when the stream closes.
 */
RTD_API void rtd_ipc_session_free(rtd_ipc_session *s);

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
#endif /* RTDIAG_IPC_SESSION_H */
