/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_source.h - a live EventPipe session as a record source
 * (rtdiag/source.h): the session's stream decoded as it comes (blocking,
 * or never: RTD_SOURCE_IDLE with the session's descriptor), or as
 * rtd_ipc_session_pump() reads it (stopped when asked or at a duration),
 * the records those of rtd_nettrace_source_stream()
 * (rtdiag/nettrace_source.h).
 */
#ifndef RTDIAG_IPC_SOURCE_H
#define RTDIAG_IPC_SOURCE_H

#include "rtdiag/common.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace_profiler.h"
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

/**
 * struct rtd_ipc_live_opts - how a live session source reads
 * @sz: sizeof(struct rtd_ipc_live_opts)
 * @round_bytes: at most this many bytes of the stream read in one round
 *               (from one RTD_SOURCE_IDLE to the next): once read,
 *               rtd_source_next() returns RTD_SOURCE_IDLE after the
 *               records they make, though the socket has more, so a
 *               poll loop with other work (the agent's other targets)
 *               gets its turn; the descriptor stays readable and the
 *               next round reads on. 0: no budget (a round reads until
 *               the socket has nothing)
 */
struct rtd_ipc_live_opts {
	size_t sz;
	uint64_t round_bytes;
};

/**
 * rtd_ipc_session_source_live - an EventPipe session's stream as a live
 * record source that never blocks
 * @s: a session from rtd_ipc_session_start(), nothing read from it yet;
 *     borrowed: it must outlive the source, and nothing else reads it
 * @lo: how it reads (struct rtd_ipc_live_opts, libbpf's shape), or NULL
 *      for the defaults
 * @opts: options of the nettrace sources, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The records of rtd_ipc_session_source(), for a caller with a poll loop
 * of its own (the agent's): rtd_source_next() reads what the socket has
 * and, when the bytes so far make no more records, returns
 * RTD_SOURCE_IDLE (the watermark: the last record's time) instead of
 * waiting; rtd_source_fd() is then the session's descriptor
 * (rtd_ipc_session_fd()), readable when more bytes come (poll it, or
 * rtd_source_wait()). A round also ends at @lo's @round_bytes, with
 * bytes left in the socket (so one busy session cannot hold the loop):
 * the records are the same, in the same order, in more rounds. Records
 * come a sequence point's window at a time, as the runtime flushes them
 * (about every 100 ms). Stop the session with rtd_ipc_session_stop() and
 * the source ends (0) once the runtime has closed the stream; the
 * target's exit ends it too. A consumer that pulls every record
 * (rtd_nettrace_profiler_pull()) gets RTD_SOURCE_IDLE back at each
 * round's end. Clock: as for rtd_ipc_session_source().
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (no @s, a session with no
 * descriptor: a replayed one; bad @lo or @opts), -ENOMEM.
 */
RTD_API rtd_source *rtd_ipc_session_source_live(rtd_ipc_session *s,
						const struct rtd_ipc_live_opts *lo,
						const struct rtd_nettrace_source_opts *opts,
						int *err);

/**
 * rtd_ipc_session_pump_source - an EventPipe session's stream as a record
 * source, read as rtd_ipc_session_pump() reads it
 * @s: a session from rtd_ipc_session_start(), nothing read from it yet;
 *     borrowed: it must outlive the source, and nothing else reads it
 * @po: how the reads run, as for rtd_ipc_session_pump(): the session is
 *      stopped when *@stop becomes non-zero or after @duration_ms, the
 *      rundown read for at most @rundown_wait_ms after the stop, @tick
 *      called about every 100 ms and once at the end; @sink, when set,
 *      gets every byte before the decoder does (a copy into a file), and
 *      anything it returns but 0 ends the source with an error
 *      (-ECANCELED for a positive value)
 * @res: how the reads ended, as rtd_ipc_session_pump() fills it: updated
 *       as the source reads, final after rtd_ipc_session_pump_drain()
 *       (the source stops reading at the stream's end marker; the drain
 *       reads on to the runtime's close); it must outlive the source
 *       (may be NULL)
 * @opts: options of the nettrace sources, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The pump's one loop with the decoder pulling: rtd_source_next() blocks
 * until a sequence point's window of records is complete, and in the
 * meantime stops the session when asked. @duration_ms counts from the
 * first rtd_source_next(), not from this call (a caller may do more
 * before it reads: a rundown of its own). A stream that ends without a
 * stop (the target exited) or whose rundown does not come in time ends
 * the source as a cut stream does (-RTD_E_TRUNCATED, the records before
 * delivered first), and @res says which; a failed read ends it with the
 * read's error (rtd_ipc_session_read()'s).
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (no @s, bad @po or @opts),
 * -ENOMEM.
 */
RTD_API rtd_source *rtd_ipc_session_pump_source(rtd_ipc_session *s,
						const struct rtd_ipc_pump_opts *po,
						struct rtd_ipc_pump_result *res,
						const struct rtd_nettrace_source_opts *opts,
						int *err);

/**
 * rtd_ipc_session_pump_drain - read the rest of a pump source's stream
 * @s: the session of an rtd_ipc_session_pump_source()
 *
 * Call it once the consumer is done with the source, at its end or
 * before (an error of its own, or the decoder's at damaged bytes): the
 * rest of the stream, to the runtime's close, is read and dropped under
 * the same rules (the stop when asked or at the duration, the rundown's
 * wait), so the session ends as it would have, and the pump's result is
 * then final. After a failed read it reads nothing.
 *
 * Returns: 0, the error that ended the reads (a failed read, or what the
 * sink returned), -RTD_E_INVAL (no @s) or -RTD_E_STATE (@s has no pump
 * source).
 */
RTD_API int rtd_ipc_session_pump_drain(rtd_ipc_session *s);

/**
 * rtd_ipc_stack_report - where each sampled managed thread is, as
 * 'dotnet-stack report' prints it
 * @p: a CPU profile builder (RTD_NETTRACE_PROFILE_CPU) that took a
 *     session's samples (rtd_nettrace_profiler_pull() of a pump source)
 * @pid: the process, for the threads' names (/proc/PID/task/TID/comm),
 *       or 0 for none
 * @out: where to write
 *
 * One block per thread with a sample, by thread id: 'Thread (0xD66)
 * ".NET TP Worker":' (no name when the thread has ended), then its latest
 * stack leaf first, one frame a line indented by two blanks, the frames
 * no method covers in a row folded into one "[Native Frames]" line, then
 * a blank line. Call it soon after the session: the names are those the
 * threads have now.
 *
 * Returns: 0, -EIO (@out's error flag set), -ENOMEM, -RTD_E_INVAL (no @p
 * or @out).
 */
RTD_API int rtd_ipc_stack_report(rtd_nettrace_profiler *p, pid_t pid, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_SOURCE_H */
