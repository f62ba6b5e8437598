/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/recorder.h - one process recorded live: the kernel's side (CPU
 * samples, off-CPU waits, from perf_event) and the runtime's (an
 * EventPipe session for a .NET process), plus any source a caller adds,
 * merged by CLOCK_MONOTONIC time into one live record stream
 * (rtdiag/source.h, "Live sources") while the process runs.
 *
 * Memory is bounded for any duration: each source hands its records over
 * through a bounded queue (a full queue makes its reader wait, and the
 * kernel then counts what it could not keep as lost), and the merge
 * holds one record per source. What the recorder switches on in the
 * target (the EventPipe session, the .NET perf map) it switches off in
 * rtd_recorder_stop() or rtd_recorder_free(), however the recording ends.
 *
 *   rtd_recorder *r;
 *   RTD_OPTS(rtd_recorder_opts, o, .pid = pid);
 *   if (rtd_recorder_new(&o, &r) == 0 && rtd_recorder_start(r) == 0) {
 *       rtd_source *s = rtd_recorder_source(r);
 *       const struct rtd_record *rec;
 *       int rc;
 *       while ((rc = rtd_source_next(s, &rec)) > 0)
 *           if (rc == 1)
 *               consume(rec);
 *           else // RTD_SOURCE_IDLE
 *               rtd_source_wait(s, 100);
 *       // rtd_recorder_stop(r) (another thread, or between two calls):
 *       // the stream then ends once every source has given what it had
 *   }
 *   rtd_recorder_free(r);
 *
 * Threads: rtd_recorder_stop() may be called from any thread (not from a
 * signal handler: set a flag there); everything else from one thread.
 */
#ifndef RTDIAG_RECORDER_H
#define RTDIAG_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/profile.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_recorder rtd_recorder;

/* Flags for rtd_recorder_opts.flags. */
enum rtd_recorder_flags {
	/* no CPU samples */
	RTD_RECORDER_NO_CPU = 1u << 0,
	/* no off-CPU waits */
	RTD_RECORDER_NO_OFF_CPU = 1u << 1,
	/* no EventPipe session even when the target is .NET */
	RTD_RECORDER_NO_DOTNET = 1u << 2,
	/* @pid is a child stopped before its exec (rtdiag's -- COMMAND):
	 * perf counts from its exec; its EventPipe session starts once its
	 * runtime listens (the recorder polls for its diagnostics socket) */
	RTD_RECORDER_CHILD = 1u << 3,
	/* off-CPU waits of every state, preempted (R) ones too */
	RTD_RECORDER_PREEMPTED = 1u << 4,
	/* every system call as a slice (raw_syscalls tracepoints: root,
	 * CAP_PERFMON or kernel.perf_event_paranoid <= 1), a live source
	 * "perf-syscalls" (rtd_perf_source_syscalls_live()) */
	RTD_RECORDER_SYSCALLS = 1u << 5,
	/* the consumer copies the names and stacks it keeps before it asks
	 * for the next record (a flight ring): the perf sources then hold
	 * only recent ones (RTD_PERF_SOURCE_COPIED), not every one the
	 * recording met, so memory stays flat however long it runs */
	RTD_RECORDER_COPIED = 1u << 6,
	/* rtd_recorder_profile() will not be asked for: the perf profilers
	 * then forget each window once it is given (RTD_PERF_PROF_WINDOWS),
	 * so their call trees and symbolizers hold one window's stacks, not
	 * every one the recording met. (The off-CPU profiler always does: no
	 * profile is built from it.) */
	RTD_RECORDER_NO_PROFILE = 1u << 7,
	/* every mapped file's symbols read at the start
	 * (RTD_PERF_PROF_ALL_SYMBOLS): a flight ring's memory does not step
	 * up hours later; a short recording reads only what its samples hit */
	RTD_RECORDER_ALL_SYMBOLS = 1u << 8,
};

/**
 * struct rtd_recorder_opts - what to record, and how
 * @sz: sizeof(struct rtd_recorder_opts)
 * @pid: the process (every thread, later ones too)
 * @flags: RTD_RECORDER_* flags
 * @freq: CPU samples per second per thread (0: 99)
 * @providers: EventPipe providers added to the default ones (GC, JIT,
 *             loader, contention, exceptions, threading at Informational),
 *             in dotnet-trace's syntax, or NULL
 * @window_ms: how often the perf sources hand over what they read (0:
 *             100 ms): the stream's latency, and the watermarks' step
 * @lag_ns: how late the runtime's events may come after their time (0:
 *          2 s; see rtd_source_thread())
 * @queue_records: records each source's queue holds at most (0: 4096)
 * @clrevents: the runtime's keywords by dotnet-trace's names
 *             ("gc+jit+..."), in place of the default ones, or NULL
 * @callgraph: the CPU samples' stacks: enum rtd_perf_callgraph (0: frame
 *             pointers)
 * @stack_bytes: user stack copied per sample with RTD_PERF_CG_DWARF (0:
 *               the sampler's default)
 * @perf_data: a perf.data writer (rtdiag/perf_data.h; borrowed, its events
 *             not given yet) that also gets the CPU profiler's records as
 *             the kernel wrote them, from the start (its event and the
 *             synthesized start-up records in rtd_recorder_new()), or NULL.
 *             The caller finishes it after rtd_recorder_free(): `perf
 *             script` and `perf report` read it. The off-CPU waits and the
 *             runtime's events are not in it.
 * @go_trace_url: a Go program's net/http/pprof server ("HOST:PORT" or an
 *                http:// URL), or NULL: its execution trace is captured
 *                as a rolling capture (rtdiag/gotrace_source.h, "Rolling
 *                capture") from rtd_recorder_start() on, a runtime source
 *                "gotrace" read on a thread of its own;
 *                rtd_recorder_gotrace() gives the capture
 * @go_trace_piece: seconds each piece of that capture asks for (0: 3)
 * @go_trace_seconds: the recording's planned length, or 0 (until
 *                    stopped): with it the pieces end by themselves at
 *                    that time and rtd_recorder_stop() gives the last one
 *                    10 s to arrive; without it rtd_recorder_stop() cuts
 *                    the piece under way at once
 */
struct rtd_perf_data_writer;
struct rtd_recorder_opts {
	size_t sz;
	pid_t pid;
	unsigned flags;
	unsigned freq;
	const char *providers;
	unsigned window_ms;
	int64_t lag_ns;
	size_t queue_records;
	const char *clrevents;
	unsigned callgraph;
	unsigned stack_bytes;
	struct rtd_perf_data_writer *perf_data;
	const char *go_trace_url;
	double go_trace_piece;
	double go_trace_seconds;
};

/**
 * rtd_recorder_new - set a recording up (perf events open, nothing runs)
 * @o: options
 * @out: receives the recorder
 *
 * Opens the CPU profiler, the off-CPU profiler (when the kernel lets this
 * user sample sched_switch: otherwise the recording goes on without waits
 * and rtd_recorder_warnings() says why), and for a .NET process (its
 * diagnostics socket is found) checks @providers; the EventPipe session
 * itself starts in rtd_recorder_start().
 *
 * Returns: 0, or a negative error (-RTD_E_INVAL for bad options or
 * @providers, perf's errors); rtd_recorder_errmsg(NULL) says more, per
 * thread.
 */
RTD_API int rtd_recorder_new(const struct rtd_recorder_opts *o, rtd_recorder **out);

struct rtd_ipc_providers;

/**
 * rtd_recorder_providers - the EventPipe providers a recording asks for
 * @spec: providers added to the default ones, in dotnet-trace's syntax, or
 *        NULL
 * @out: appended to (free with rtd_ipc_providers_clear())
 * @err: receives a message naming what is wrong in @spec (may be NULL)
 * @errlen: size of @err
 *
 * The default: Microsoft-Windows-DotNETRuntime with the keywords gc, jit,
 * loader, contention, exception and threading at Informational, and
 * System.Threading.Tasks.TplEventSource with TasksFlowActivityIds (0x80,
 * no events of its own: EventSource Start/Stop events then carry the
 * ActivityID that pairs them across threads); then
 * @spec (a provider named again replaces the default). A caller checks a
 * user's @spec with it before anything starts.
 *
 * Returns: 0, -RTD_E_IPC_PROVIDER or -ENOMEM.
 */
RTD_API int rtd_recorder_providers(const char *spec, struct rtd_ipc_providers *out, char *err,
				   size_t errlen);

/**
 * rtd_recorder_providers_clr - rtd_recorder_providers() with the runtime's
 * keywords chosen
 * @spec: as for rtd_recorder_providers()
 * @clrevents: dotnet-trace's keyword names ("gc+jit+loader"), or NULL
 *             for the default ones
 * @out: as for rtd_recorder_providers()
 * @err: receives a message naming what is wrong (may be NULL)
 * @errlen: size of @err
 *
 * Returns: 0, -RTD_E_INVAL (a keyword name not known), -RTD_E_IPC_PROVIDER
 * or -ENOMEM.
 */
RTD_API int rtd_recorder_providers_clr(const char *spec, const char *clrevents,
				       struct rtd_ipc_providers *out, char *err, size_t errlen);

/**
 * rtd_recorder_errmsg - what the last failed call went wrong on
 * @r: the recorder, or NULL after a failed rtd_recorder_new()
 *
 * Returns: a message, "" when none.
 */
RTD_API const char *rtd_recorder_errmsg(const rtd_recorder *r);

/**
 * struct rtd_recorder_source_opts - options for rtd_recorder_add_source()
 * @sz: sizeof(struct rtd_recorder_source_opts)
 * @runtime: the source speaks for a runtime: its thread and process names
 *           win over the kernel's comm (rtd_recorder_runtime_sources())
 * @blocking: its rtd_source_next() blocks until records come (it is not
 *            live): it is read on a thread of its own through
 *            rtd_source_thread() with the recorder's @lag_ns
 * @stop: called by rtd_recorder_stop() so that the source ends (for a
 *        blocking one: makes its blocked read return), or NULL
 * @stop_ctx: passed to @stop
 * @lag_ns: a blocking source's lag (rtd_source_thread()), when its records
 *          come later than the recorder's @lag_ns allows (0: that one)
 */
struct rtd_recorder_source_opts {
	size_t sz;
	bool runtime;
	bool blocking;
	void (*stop)(void *ctx);
	void *stop_ctx;
	int64_t lag_ns;
};

/**
 * rtd_recorder_add_source - one more source in the recording (a Go trace,
 * system calls...): the extension point
 * @r: the recorder, before rtd_recorder_start()
 * @src: the source; owned by @r from now on (also when this fails)
 * @opts: options, or NULL
 *
 * Sources come out of the merged stream with @source the index they were
 * added at, after the recorder's own (rtd_recorder_source_name()).
 *
 * Returns: 0, -RTD_E_INVAL, -RTD_E_STATE (started), -RTD_E_CAP (more
 * than RTD_RECORDER_MAX_SOURCES) or -ENOMEM.
 */
RTD_API int rtd_recorder_add_source(rtd_recorder *r, rtd_source *src,
				    const struct rtd_recorder_source_opts *opts);

/* Sources of one recording at most (rtd_recorder_add_source()). */
#define RTD_RECORDER_MAX_SOURCES 16
/* Streams a recording merges at most: its own (CPU samples, off-CPU
 * waits, EventPipe, system calls) and the added sources: a bound on a
 * record's @source. */
#define RTD_RECORDER_MAX_STREAMS (RTD_RECORDER_MAX_SOURCES + 4)

/**
 * rtd_recorder_start - start every source
 * @r: the recorder
 *
 * The perf profilers run on threads of their own; the EventPipe session
 * of a running process has started when it returns (a child's starts on
 * its reading thread once the child's runtime listens; a session that
 * cannot start leaves the kernel's side recorded: rtd_recorder_warnings()
 * says why).
 *
 * Returns: 0, -RTD_E_STATE (started twice), -ENOMEM or a thread's -errno.
 */
RTD_API int rtd_recorder_start(rtd_recorder *r);

/**
 * rtd_recorder_source - the merged live stream
 * @r: the recorder, started
 *
 * A live source (rtdiag/source.h): pull it with rtd_source_next(), wait
 * with rtd_source_wait() when it is RTD_SOURCE_IDLE. It ends (0) once
 * every source has ended: the target exited, or rtd_recorder_stop() was
 * called and each source gave what it had; a source's error ends it too
 * (the error record names the source). At its end every source is
 * stopped and its threads joined. Owned by @r. With glibc, every 10 s
 * that it is idle it gives the free pages of the process's heaps back to
 * the kernel (malloc_trim()): a long recording's windows leave freed
 * memory scattered in them, which RSS would keep.
 *
 * Returns: the source, or NULL before rtd_recorder_start().
 */
RTD_API rtd_source *rtd_recorder_source(rtd_recorder *r);

/**
 * rtd_recorder_source_name - what a merged record's @source is
 * @r: the recorder
 * @i: a record's @source
 *
 * Returns: "perf" (CPU samples), "perf-offcpu", "eventpipe", the added
 * source's rtd_source_name(), or NULL for no such source.
 */
RTD_API const char *rtd_recorder_source_name(const rtd_recorder *r, uint32_t i);

/**
 * rtd_recorder_runtime_sources - the sources that speak for a runtime
 * @r: the recorder
 *
 * Returns: a bit per @source index (struct
 * rtd_timeline_records_opts.runtime_sources takes it as is).
 */
RTD_API uint64_t rtd_recorder_runtime_sources(const rtd_recorder *r);

typedef struct rtd_gotrace_recorder rtd_gotrace_recorder;

/**
 * rtd_recorder_gotrace - the Go trace's capture (@go_trace_url)
 * @r: the recorder
 *
 * For its messages and counts (rtd_gotrace_recorder_errmsg(),
 * _incomplete(), _roll_stats(): read them once the stream ended).
 *
 * Returns: the capture, owned by @r; NULL without @go_trace_url or before
 * rtd_recorder_start().
 */
RTD_API rtd_gotrace_recorder *rtd_recorder_gotrace(const rtd_recorder *r);

/**
 * rtd_recorder_stop - end the recording
 * @r: the recorder
 *
 * Stops the perf monitors and the EventPipe session (StopTracing: the
 * runtime then closes the stream) and calls the added sources' @stop.
 * Returns at once: the merged stream gives what the sources still had,
 * then ends. Safe to call more than once, and from any thread.
 */
RTD_API void rtd_recorder_stop(rtd_recorder *r);

/**
 * rtd_recorder_target_ended - did the target exit
 * @r: the recorder
 *
 * Returns: true when the target process is gone (or was never there).
 */
RTD_API bool rtd_recorder_target_ended(const rtd_recorder *r);

/**
 * rtd_recorder_profile - the CPU samples' profile of the recording
 * @r: the recorder, after its stream ended
 * @out: receives a new profile ("samples"/"count", "cpu"/"nanoseconds"),
 *       as rtd_perf_profiler_profile() builds it
 *
 * Memory follows the distinct stacks, not the samples.
 *
 * Returns: 0, -RTD_E_STATE (still running, no CPU samples asked for, or
 * RTD_RECORDER_NO_PROFILE) or -ENOMEM.
 */
RTD_API int rtd_recorder_profile(rtd_recorder *r, rtd_profile **out);

/**
 * struct rtd_recorder_stats - what a recording did
 * @sz: sizeof(struct rtd_recorder_stats)
 * @cpu_samples: CPU samples taken
 * @waits: off-CPU waits given out
 * @lost: perf records the kernel could not keep (a ring was full)
 * @late: records clamped to their source's watermark (came later than
 *        promised: the EventPipe stream past @lag_ns)
 * @eventpipe: an EventPipe session ran
 * @eventpipe_closed: the runtime closed its stream after StopTracing
 * @user_only: the kernel allowed user space only (perf_event_paranoid)
 */
struct rtd_recorder_stats {
	size_t sz;
	uint64_t cpu_samples;
	uint64_t waits;
	uint64_t lost;
	uint64_t late;
	bool eventpipe;
	bool eventpipe_closed;
	bool user_only;
};

/**
 * rtd_recorder_stats - counters of a recording
 * @r: the recorder
 * @out: filled up to @out->sz bytes; while the stream runs only
 *       @cpu_samples and @waits (the rest once it ended)
 */
RTD_API void rtd_recorder_stats(const rtd_recorder *r, struct rtd_recorder_stats *out);

/**
 * rtd_recorder_warnings - what the recording goes without, and why
 * @r: the recorder
 *
 * Returns: lines of text ("no off-CPU waits: ...\n"), "" when none; valid
 * until the next call on @r.
 */
RTD_API const char *rtd_recorder_warnings(const rtd_recorder *r);

/**
 * rtd_recorder_free - stop, undo and free
 * @r: the recorder; NULL does nothing
 *
 * Whatever state it is in: the sources are stopped, the threads joined,
 * the EventPipe session stopped and the .NET perf map switched off.
 */
RTD_API void rtd_recorder_free(rtd_recorder *r);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_RECORDER_H */
