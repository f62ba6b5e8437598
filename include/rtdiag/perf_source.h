/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_source.h - the CPU samples a perf profiler kept, as a
 * record source (rtdiag/source.h).
 *
 * Records, in the order the samples were taken (the monitor merges its
 * rings by time): a PROCESS the first time a pid appears (its comm), a
 * THREAD the first time a tid appears and again whenever its name
 * changes, and one SAMPLE per sample (value 1, unit "count", @name
 * "cpu", its stack interned leaf first with the profiler's names and
 * modules).
 *
 * Clock: the monitor opens every event with use_clockid = 1 and clockid
 * CLOCK_MONOTONIC, so a sample's time is CLOCK_MONOTONIC ns (error 0);
 * wall time from a CLOCK_REALTIME / CLOCK_MONOTONIC pair read when the
 * source is made (error: the time between the reads, then clock drift).
 */
#ifndef RTDIAG_PERF_SOURCE_H
#define RTDIAG_PERF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/perf.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct rtd_perf_source_opts - options for the perf record sources
 * @sz: sizeof(struct rtd_perf_source_opts)
 * @window_ms: rtd_perf_source_live(): how often the run is cut and what
 *             it read handed over (0: 100 ms)
 * @max_records: rtd_perf_source_live(): records its queue holds at most
 *               (0: 4096)
 * @stop: rtd_perf_source_live(): set non-zero (from any thread, a signal
 *        handler too) to end the source after its current window; NULL:
 *        it ends when the profiled processes are gone or it is freed
 * @flags: RTD_PERF_SOURCE_* flags
 * @gen_stacks: with RTD_PERF_SOURCE_COPIED: distinct stacks a generation
 *              of names interns before the next one starts (0: 512)
 */
struct rtd_perf_source_opts {
	size_t sz;
	unsigned window_ms;
	size_t max_records;
	const volatile int *stop;
	unsigned flags;
	size_t gen_stacks;
};

/* Flags of struct rtd_perf_source_opts. */
enum rtd_perf_source_flags {
	/*
	 * rtd_perf_source_live(): the consumer copies the names and stacks it
	 * keeps before it asks for the next record (a flight ring does,
	 * rtd_flight_add()). The source's strings and stacks then live until
	 * the consumer has taken every record of their generation and asked
	 * for one more, not as long as the source: a generation ends once it
	 * holds @gen_stacks stacks, the one before it is freed when given out
	 * (a full generation waits for that, as a full queue waits: at most
	 * two are held), and each thread and process is named again in the
	 * new one. Without it every distinct stack a recording samples is
	 * held to its end (a runtime's unnamed native frames and the kernel's
	 * paths make new ones for as long as it runs).
	 */
	RTD_PERF_SOURCE_COPIED = 1u << 0,
	/*
	 * rtd_perf_source_live() of an off-CPU profiler: each wait's slice
	 * carries its stack too (@stack, interned as a sample's, leaf first:
	 * where the thread left the CPU), for a consumer that builds a block
	 * profile of them (rtd_profile_records_opts.category).
	 */
	RTD_PERF_SOURCE_WAIT_STACKS = 1u << 1,
	/* (An off-CPU profiler made with RTD_PERF_PROF_WAIT_TOTALS, through
	 * BPF, gives no slices but totals: each an RTD_REC_SAMPLE named and
	 * of category "off-cpu" with its stack, @value the count of waits of
	 * that thread, stack and state ended since the kernel's totals were
	 * read before, a "period" field (RTD_FIELD_U64) their summed length
	 * in ns and a "state" field, read at each window's end or cut and
	 * stamped at the start of the window they sum (the cut before), as
	 * a CPU profiler's totals (RTD_PERF_PROF_TOTALS) are: so a consumer
	 * pulling until rtd_perf_source_live_cut()'s @at gets every total
	 * of the window that cut ends. rtd_profile_records with .name
	 * "off-cpu" adds them up as the profiler's own block profile.) */
	/*
	 * rtd_perf_source_live(): learn the mapping of each file-backed
	 * module the records name, for rtd_perf_source_live_mapping()
	 */
	RTD_PERF_SOURCE_MAPPINGS = 1u << 2,
	/*
	 * rtd_perf_source_live(): each frame of a record's stack carries its
	 * source file and line where the profiler's symbolizer reads DWARF
	 * (rtd_rec_frame.file, .line), as the profiler's own profile has
	 * them; stacks that differ only by line are then distinct
	 */
	RTD_PERF_SOURCE_LINES = 1u << 3,
};

/**
 * struct rtd_perf_source_stats - what a live perf source holds
 * @sz: sizeof(struct rtd_perf_source_stats)
 * @strings: interned strings held now (both generations)
 * @stacks: interned stacks held now (both generations)
 * @stacks_interned: distinct stacks interned since the start (a stack
 *                   interned again in a later generation counts again)
 * @generations: generations ended (RTD_PERF_SOURCE_COPIED), 0 without
 */
struct rtd_perf_source_stats {
	size_t sz;
	uint64_t strings;
	uint64_t stacks;
	uint64_t stacks_interned;
	uint64_t generations;
};

/**
 * rtd_perf_source_live_stats - what a live perf source holds now
 * @src: a source of rtd_perf_source_live() or
 *       rtd_perf_source_syscalls_live()
 * @st: filled up to @st->sz bytes; as of the last window handed over
 *
 * Returns: 0, or -RTD_E_INVAL when @src is not such a source.
 */
RTD_API int rtd_perf_source_live_stats(rtd_source *src, struct rtd_perf_source_stats *st);

/**
 * rtd_perf_source_live_cut - cut a live perf source's window now
 * @src: a source of rtd_perf_source_live() or
 *       rtd_perf_source_syscalls_live()
 * @at: gets the time of the ask (CLOCK_MONOTONIC ns; may be NULL)
 *
 * Asks the source's ticker to cut the run now rather than at the end of
 * its @window_ms: the monitor drains its rings, what it read is queued,
 * and the source's watermark (the @mono of an RTD_SOURCE_IDLE answer)
 * passes @at. A consumer that needs every record stamped before a moment
 * (the agent's one-second cut of a profile) pulls until then, waiting
 * with rtd_source_wait(), instead of running short windows all the time.
 * The source's own windows go on as before.
 *
 * Returns: 0, -RTD_E_INVAL when @src is not such a source, or
 * -RTD_E_STATE when it has ended.
 */
RTD_API int rtd_perf_source_live_cut(rtd_source *src, int64_t *at);

/**
 * struct rtd_perf_source_mapping - the executable mapping of a module
 * @start: its first address (in the profiled process)
 * @limit: the byte after its last
 * @offset: its file offset
 * @file: the mapped file's path as the process names it (valid as long
 *        as the source)
 * @build_id: the file's GNU build-id in hex, "" when it has none
 */
struct rtd_perf_source_mapping {
	uint64_t start, limit, offset;
	const char *file;
	char build_id[2 * 64 + 1];
};

/* Modules a live perf source keeps the mapping of, at most. */
#define RTD_PERF_SOURCE_MAX_MAPPINGS 4096u

/**
 * rtd_perf_source_live_mapping - where a module of the records is mapped
 * @src: a source of rtd_perf_source_live()
 * @module: a frame's @module (a file: native or runtime code)
 * @out: gets its mapping
 *
 * A record's frame names its module only; a consumer that writes
 * mappings (pprof's: address range, file offset, build-id, as
 * rtd_perf_profiler_profile() gives them) asks here. The source learns a
 * module's mapping from the profiler's symbolizer the first time a frame
 * of it is queued (in the first process seen: the source's profiler
 * should scope one process), so a module of a record given out is known.
 * Safe beside the source's threads.
 *
 * Returns: 0, -ENOENT (not known: not a file, or over
 * RTD_PERF_SOURCE_MAX_MAPPINGS), -RTD_E_INVAL.
 */
RTD_API int rtd_perf_source_live_mapping(rtd_source *src, const char *module,
					 struct rtd_perf_source_mapping *out);

/**
 * rtd_perf_source_profiler - a profiler's kept CPU samples as a record source
 * @p: a profiler made with RTD_PERF_PROF_KEEP_SAMPLES whose run has
 *     ended; borrowed: it must outlive the source, and nothing else may
 *     use it meanwhile
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The samples are walked with rtd_perf_profiler_each_sample() on a thread
 * of the source's own that hands them over one at a time, so memory is
 * one sample whatever their number. Off-CPU profiles (their waits come
 * in the order they end, not in time order) end with -RTD_E_UNSUPPORTED.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -ENOMEM, or a thread's
 * -errno.
 */
RTD_API rtd_source *rtd_perf_source_profiler(struct rtd_perf_profiler *p,
					     const struct rtd_perf_source_opts *opts, int *err);

/* Waits an off-CPU source holds at most (rtd_perf_source_waits()). */
#define RTD_PERF_SOURCE_MAX_WAITS (1u << 22)

/**
 * rtd_perf_source_waits - an off-CPU profiler's kept waits as a record source
 * @p: a profiler made with RTD_PERF_PROF_OFF_CPU and
 *     RTD_PERF_PROF_KEEP_SAMPLES whose run has ended; borrowed: it must
 *     outlive the source
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Each wait is a slice on its thread (SLICE_BEGIN when the thread left
 * the CPU, SLICE_END when it came back) of @category "off-cpu", named by
 * the state it left in ("sleep" S, "disk" D, "preempted" R, "other"),
 * with the fields "state" (the letter) and "in" (the first frame outside
 * the kernel), as `rtdiag perf record --off-cpu` timelines write them;
 * PROCESS and THREAD records name their ids before their first slice and
 * again when a name changes. The profiler gives waits in the order they
 * ended, so the constructor walks them all and sorts them by time: memory
 * is about 150 bytes a wait, at most RTD_PERF_SOURCE_MAX_WAITS waits (more:
 * the waits kept come out, then the error -RTD_E_CAP). Clock: as
 * rtd_perf_source_profiler()'s.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -ENOMEM. A failed walk is
 * the stream's error record, after the waits it kept.
 */
RTD_API rtd_source *rtd_perf_source_waits(struct rtd_perf_profiler *p,
					  const struct rtd_perf_source_opts *opts, int *err);

/* ---- system calls as slices (`rtdiag record --syscalls`) --------------- */

/* System calls a recorder keeps at most (40 bytes each, in memory). */
#define RTD_PERF_SOURCE_MAX_SYSCALLS (1u << 22)

typedef struct rtd_perf_syscall_recorder rtd_perf_syscall_recorder;

/* Flags of struct rtd_perf_syscall_recorder_opts. */
enum rtd_perf_syscall_recorder_flags {
	/* the scoped pid is a child waiting to exec: trace from its exec */
	RTD_PERF_SCREC_ENABLE_ON_EXEC = 1u << 0,
};

/**
 * struct rtd_perf_syscall_recorder_opts - what rtd_perf_syscall_recorder_new() traces
 * @sz: sizeof(struct rtd_perf_syscall_recorder_opts)
 * @pids: processes (every thread, and their children as they come)
 * @npids: their count (at least 1)
 * @flags: RTD_PERF_SCREC_* flags
 * @ring_pages: ring data pages per CPU (0: rtd_perf_default_ring_pages())
 */
struct rtd_perf_syscall_recorder_opts {
	size_t sz;
	const pid_t *pids;
	size_t npids;
	unsigned flags;
	unsigned ring_pages;
};

/**
 * rtd_perf_syscall_recorder_new - set up a recorder of every system call
 * of some processes (events open, not running)
 * @opts: options (@pids required)
 * @out: receives the recorder
 *
 * Opens raw_syscalls:sys_enter and sys_exit through perf_event (a
 * monitor of its own, events inherited by children) and pairs them per
 * thread with rtd_perf_syscalls_feed(). Needs tracefs and the right to
 * read tracepoints (root, or CAP_PERFMON / perf_event_paranoid <= 1).
 *
 * Returns: 0, -RTD_E_INVAL, -ENOMEM, or the monitor's error;
 * rtd_perf_syscall_recorder_errmsg() says more.
 */
RTD_API int rtd_perf_syscall_recorder_new(const struct rtd_perf_syscall_recorder_opts *opts,
					  rtd_perf_syscall_recorder **out);

/**
 * rtd_perf_syscall_recorder_errmsg - what went wrong last
 * @r: the recorder, or NULL for a failed rtd_perf_syscall_recorder_new()
 *     of this thread
 *
 * Returns: a message ("" when none).
 */
RTD_API const char *rtd_perf_syscall_recorder_errmsg(const rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_syscall_recorder_start - record on a thread of the recorder's own
 * @r: the recorder (started at most once)
 *
 * Completed calls are kept (RTD_PERF_SOURCE_MAX_SYSCALLS at most; later
 * ones are counted as dropped and the source ends with -RTD_E_CAP after
 * the kept ones). A call entered before the recording began has no start
 * and is not kept; one still open at the end is not kept either.
 *
 * Returns: 0 or a negative errno from pthread_create().
 */
RTD_API int rtd_perf_syscall_recorder_start(rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_syscall_recorder_stop - stop recording and wait for the thread
 * @r: the recorder; one never started, or stopped already, is fine
 *
 * The rings are drained first: calls that ended before the stop are kept.
 *
 * Returns: 0, or the error the recording thread ended with (the calls it
 * kept before stay usable).
 */
RTD_API int rtd_perf_syscall_recorder_stop(rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_syscall_recorder_done - has the recording ended by itself?
 * @r: the recorder
 *
 * Returns: true once the traced processes are all gone (or it failed).
 */
RTD_API bool rtd_perf_syscall_recorder_done(const rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_syscall_recorder_lost - records the kernel dropped (its rings
 * were full), and so calls missed or left unpaired
 * @r: the recorder, stopped or its live source ended
 *
 * Returns: the count (PERF_RECORD_LOST's and lost samples').
 */
RTD_API uint64_t rtd_perf_syscall_recorder_lost(const rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_syscall_recorder_free - free a recorder (stopping it first)
 * @r: the recorder; NULL does nothing
 */
RTD_API void rtd_perf_syscall_recorder_free(rtd_perf_syscall_recorder *r);

/**
 * rtd_perf_source_syscalls_live - a recorder's system calls as a live
 * record source
 * @r: a recorder made with rtd_perf_syscall_recorder_new(), not started:
 *     the source runs it (rtd_perf_syscall_recorder_start() and _stop()
 *     then do nothing); borrowed: it must outlive the source
 * @opts: options (window_ms, max_records, stop: as rtd_perf_source_live()'s)
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The live form of rtd_perf_source_syscalls(), for `rtdiag record
 * --syscalls`: the tracing is cut every window, and the calls that
 * completed in it are handed over as whole slices (RTD_REC_SLICE: the
 * record's time is the call's exit, @dur its length; name, category and
 * fields as rtd_perf_source_syscalls() gives them), in the order they
 * ended, each thread named (RTD_REC_THREAD) before its first call and
 * again when renamed. Memory follows one window, not the recording.
 * Watermarks and the end: as rtd_perf_source_live()'s.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -RTD_E_STATE (@r started,
 * or given to another source), -ENOMEM, a thread's -errno.
 */
RTD_API rtd_source *rtd_perf_source_syscalls_live(rtd_perf_syscall_recorder *r,
						  const struct rtd_perf_source_opts *opts,
						  int *err);

/**
 * rtd_perf_source_syscalls - a stopped recorder's system calls as a record source
 * @r: the recorder, stopped; borrowed: it must outlive the source
 * @opts: options, or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * Records, in time order: a THREAD (its comm) the first time a tid
 * appears and whenever its name changes, then one slice per call on the
 * thread's own track (lane 0): SLICE_BEGIN at its entry, named by the
 * call ("openat", from libseccomp's table of this machine; "syscall_N"
 * for a number it does not know), category "syscall", fields "ret" (the
 * return value, I64) and, for -4095..-1, "errno" ("ENOENT"); SLICE_END
 * at its exit. A thread is in one call at a time, so its slices never
 * overlap; an off-CPU wait inside a call (rtd_perf_source_waits())
 * nests inside its slice.
 *
 * Returns: the source, or NULL: -RTD_E_INVAL (@r running), -ENOMEM.
 */
RTD_API rtd_source *rtd_perf_source_syscalls(rtd_perf_syscall_recorder *r,
					     const struct rtd_perf_source_opts *opts, int *err);
/**
 * rtd_perf_source_live - a perf profiler as a live record source, while it runs
 * @p: a profiler made with RTD_PERF_PROF_KEEP_SAMPLES (CPU samples, or
 *     with RTD_PERF_PROF_OFF_CPU its waits), not running; borrowed: it
 *     must outlive the source, and nothing else may run or drain it
 *     meanwhile (rtd_perf_profiler_profile() after the source ended is fine)
 * @opts: options (@window_ms, @max_records, @stop), or NULL
 * @err: gets the error when NULL is returned (may be NULL)
 *
 * The profiler runs on a thread of the source's own, in windows: every
 * @window_ms the run is stopped (the monitor drains its rings: every
 * record stamped before the stop is delivered), what it kept is handed
 * over with rtd_perf_profiler_drain() into a bounded queue, and the run
 * goes on. rtd_source_next() takes from the queue and never blocks: while
 * it is empty the source is idle (RTD_SOURCE_IDLE) with the time the
 * last window's run ended (after its stop, as its drain began) as its
 * watermark. A full queue makes the profiler's
 * thread wait; the kernel then counts what its rings could not hold as
 * lost (rtd_perf_profiler_stats()).
 *
 * CPU samples come as rtd_perf_source_profiler()'s records. An off-CPU
 * wait is known only when it ends (the thread's switch-in), and waits
 * end in another order than they begin, so each is one RTD_REC_SLICE at
 * its end (@mono its switch-in, @dur its length, @category "off-cpu",
 * named and with fields as rtd_perf_source_waits() gives them): no wait
 * is held back to sort the begins, so memory is the queue whatever the
 * waits' lengths (a thread asleep for the whole recording holds
 * nothing); consumers take whole slices out of begin order (Perfetto and
 * Chrome JSON do). A wait still open at the end is not given.
 *
 * The source ends after the window in which @stop was set, the processes
 * went away, or the run failed (its error, after what came before).
 *
 * Returns: the source, or NULL: -RTD_E_INVAL, -ENOMEM, or a thread's
 * -errno.
 */
RTD_API rtd_source *rtd_perf_source_live(struct rtd_perf_profiler *p,
					 const struct rtd_perf_source_opts *opts, int *err);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_SOURCE_H */
