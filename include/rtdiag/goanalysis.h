/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/goanalysis.h - answers from Go execution traces, streaming:
 * a goroutine state tracker and the analyses of `go tool trace`
 * (blocking profiles, goroutine analysis, GC and MMU, tasks and regions).
 *
 * Both take the events of an ordered decoder (rtd_gotrace_dec in
 * RTD_GOTRACE_ORDERED mode), one at a time, in one pass; their memory
 * follows what is alive at a moment (goroutines, procs, open regions and
 * tasks, the MMU windows) and the distinct stacks, never the length of
 * the trace.
 *
 * Two pieces:
 *
 * 1. rtd_gostate, the goroutine state tracker: it turns ordered events of
 *    either trace generation into Go's high-level events (Go 1.22+
 *    internal/trace Event: state transitions of goroutines and procs with
 *    their old and new state, reason and stacks; ranges; tasks, regions,
 *    logs; labels; metrics; CPU samples; syncs) and keeps a table of the
 *    live goroutines (state, since when, why, start function, stack).
 *    Go 1.5-1.21 traces are converted as Go 1.23's reader does
 *    (internal/trace/oldtrace.go). Stacks are interned across generations
 *    (rtd_gostate_stack()), so a stack id stays valid for the tracker's
 *    life. This is the piece to build goroutine timelines on.
 *
 * 2. rtd_goan, the analyses, with the semantics of the `go tool trace`
 *    that reads the trace: Go 1.19's cmd/trace and internal/trace for
 *    Go 1.5-1.21 traces (the blocking profiles follow Go's Link between a
 *    blocking event and the event that ends it; GoroutineStats;
 *    MutatorUtilization), Go 1.22/1.23's for Go 1.22+ traces (state
 *    transitions and the Summarizer; MutatorUtilizationV2). Where the two
 *    Go versions differ, rtd_goan_opts.semantics picks.
 *
 * Times are the ordered decoder's nanoseconds (old format: since the
 * first event; new format: Go's trace.Time). Strings and frames given to
 * callbacks or returned by *_next() are borrowed until the next call on
 * the same object unless said otherwise.
 */
#ifndef RTDIAG_GOANALYSIS_H
#define RTDIAG_GOANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gostate.h"
#include "rtdiag/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the analyses ------------------------------------------------------ */

/**
 * enum rtd_goan_prof - the profiles of `go tool trace -pprof=TYPE`, and cpu
 * @RTD_GOAN_PROF_CPU: the trace's CPU samples (Go 1.19+ traces with CPU
 *                     profiling on): samples/count, cpu/nanoseconds (one
 *                     sample is the profiling period, 10 ms unless the
 *                     program set another rate; the trace does not say)
 * @RTD_GOAN_PROF_NET: time blocked on the network (-pprof=net)
 * @RTD_GOAN_PROF_SYNC: time blocked on channels, selects, mutexes,
 *                      condition variables (-pprof=sync)
 * @RTD_GOAN_PROF_SYSCALL: time in system calls (-pprof=syscall)
 * @RTD_GOAN_PROF_SCHED: scheduler latency (-pprof=sched)
 *
 * The four blocking profiles have Go's sample types contentions/count and
 * delay/nanoseconds, by the stack where the wait began.
 */
enum rtd_goan_prof {
	RTD_GOAN_PROF_CPU = 0,
	RTD_GOAN_PROF_NET,
	RTD_GOAN_PROF_SYNC,
	RTD_GOAN_PROF_SYSCALL,
	RTD_GOAN_PROF_SCHED,
	RTD_GOAN_PROF_COUNT,
};

/* What to compute (rtd_goan_opts.what). */
#define RTD_GOAN_PPROF (1u << 0)      /* the profiles in .profiles */
#define RTD_GOAN_GOROUTINES (1u << 1) /* goroutine statistics */
#define RTD_GOAN_GC (1u << 2)         /* GC cycles, STW pauses, MMU */
#define RTD_GOAN_TASKS (1u << 3)      /* tasks and regions */

/* Mutator utilization (rtd_goan_opts.mmu_flags; Go's trace.UtilFlags). */
#define RTD_GOAN_UTIL_STW (1u << 0)        /* stop-the-world pauses */
#define RTD_GOAN_UTIL_BACKGROUND (1u << 1) /* background mark workers */
#define RTD_GOAN_UTIL_ASSIST (1u << 2)     /* mark assists */
#define RTD_GOAN_UTIL_SWEEP (1u << 3)      /* sweeping */
#define RTD_GOAN_UTIL_PERPROC (1u << 4)    /* one function per P ("per-goroutine" view) */
/* what the MMU page of `go tool trace` shows by default */
#define RTD_GOAN_UTIL_DEFAULT \
	(RTD_GOAN_UTIL_STW | RTD_GOAN_UTIL_BACKGROUND | RTD_GOAN_UTIL_ASSIST)

/**
 * enum rtd_goan_semantics - whose `go tool trace` the answers follow
 * @RTD_GOAN_AUTO: Go 1.19's for Go 1.5-1.21 traces, Go 1.23's for Go 1.22+
 * @RTD_GOAN_GO119: Go 1.19 (old-format traces only)
 * @RTD_GOAN_GO122: Go 1.22 (new-format traces; differs from 1.23 in which
 *                  goroutines count as system goroutines for regions)
 * @RTD_GOAN_GO123: Go 1.23 (also for old-format traces: converted as Go
 *                  1.23 reads them, through the state tracker)
 */
enum rtd_goan_semantics {
	RTD_GOAN_AUTO = 0,
	RTD_GOAN_GO119 = 1019,
	RTD_GOAN_GO122 = 1022,
	RTD_GOAN_GO123 = 1023,
};

/**
 * struct rtd_goan_stat - one named time of a goroutine or region
 * @name: the statistic, as the trace UI of the semantics' Go names it:
 *        Go 1.22+: "Execution time", "Sched wait time", "Syscall execution
 *        time", "Block time (syscall)", "Block time (REASON)", "Unknown
 *        time", and the ranges "GC mark assist", "GC incremental sweep",
 *        "stop-the-world (...)" (which overlap the others);
 *        Go 1.19: "Execution", "Network wait", "Sync block", "Blocking
 *        syscall", "Scheduler wait", "GC sweeping", "GC pause"
 * @ns: nanoseconds
 * @overlaps: a range time, overlapping the others (not part of the total)
 */
struct rtd_goan_stat {
	const char *name;
	int64_t ns;
	bool overlaps;
};

/**
 * struct rtd_goan_goroutine - statistics of one goroutine, when it ends
 * (or at the end of the trace) - Go's GoroutineSummary / GDesc
 * @id: the goroutine
 * @name: its start function ("" when no stack showed it)
 * @pc: the start function's PC (Go 1.19 groups goroutines by it)
 * @creation: first appearance (ns)
 * @start: first time it ran (0 if never)
 * @end: when it ended (0 if not in the trace)
 * @total: time in the trace (Go's TotalTime)
 * @exec: execution time (also among @stats)
 * @stats: the named times, in a fixed order for the semantics
 * @nstats: their count
 */
struct rtd_goan_goroutine {
	uint64_t id;
	const char *name;
	uint64_t pc;
	int64_t creation, start, end;
	int64_t total;
	int64_t exec;
	const struct rtd_goan_stat *stats;
	size_t nstats;
};

/**
 * struct rtd_goan_region - one user region, when it ends - Go's
 * UserRegionSummary / UserRegionDesc with the goroutine's times inside it
 * @g: its goroutine
 * @task: its task (0: none)
 * @name: its type; "" for the synthetic region of a goroutine created
 *        inside a task's region
 * @start: its start time, or -1 when it began before the trace
 * @end: its end time, or -1 when the trace ended first (Go 1.19 counts up
 *       to the last event; Go 1.22+ up to the goroutine's end)
 * @frame_fn, @frame_pc: the top frame of its start event (Go 1.19 groups
 *       regions by it with the type), "" and 0 when none
 * @stats, @nstats: the goroutine's times while the region was open
 */
struct rtd_goan_region {
	uint64_t g;
	uint64_t task;
	const char *name;
	int64_t start, end;
	const char *frame_fn;
	uint64_t frame_pc;
	const struct rtd_goan_stat *stats;
	size_t nstats;
};

/**
 * struct rtd_goan_task - one user task, when it ends (or at the end)
 * @id: the task
 * @name: its type ("" when its begin is not in the trace)
 * @parent: parent task, 0 for none
 * @start: begin time, -1 when before the trace
 * @end: end time, -1 when after the trace
 * @goroutines: goroutines that touched it (begin, end, logs, regions)
 * @regions: its regions so far
 * @logs: its log messages
 * @stats, @nstats: the sums of its regions' times (only regions ended
 *                  when the task ends count)
 */
struct rtd_goan_task {
	uint64_t id;
	const char *name;
	uint64_t parent;
	int64_t start, end;
	uint64_t goroutines, regions, logs;
	const struct rtd_goan_stat *stats;
	size_t nstats;
};

/**
 * struct rtd_goan_gc - one GC cycle or stop-the-world pause
 * @stw: a pause (true) or a GC cycle (false)
 * @seq: GC cycles: the cycle's number in the trace (1, 2, ...);
 *       pauses: their number
 * @start: begin (ns); -1 when it began before the trace
 * @end: end (ns); -1 when the trace ended first
 * @reason: a pause's kind ("GC mark termination", "GC sweep termination",
 *          "stop the world (...)" as the runtime names it; "" when the
 *          trace does not say)
 * @gc: for a pause, whether it belongs to a GC (Go's "stop-the-world"
 *      with "GC" in the name; Go 1.19: every STW event is a GC's)
 */
struct rtd_goan_gc {
	bool stw;
	uint64_t seq;
	int64_t start, end;
	const char *reason;
	bool gc;
};

/**
 * struct rtd_goan_opts - what to compute, and how
 * @sz: sizeof(struct rtd_goan_opts)
 * @what: RTD_GOAN_PPROF | RTD_GOAN_GOROUTINES | RTD_GOAN_GC | RTD_GOAN_TASKS
 * @profiles: with RTD_GOAN_PPROF, a bit (1u << enum rtd_goan_prof) per profile
 * @semantics: enum rtd_goan_semantics
 * @mmu_flags: RTD_GOAN_UTIL_* (0: RTD_GOAN_UTIL_DEFAULT)
 * @mmu_windows: window sizes in ns for rtd_goan_mmu() (NULL: 1 ms, 10 ms,
 *               100 ms, 1 s); copied
 * @n_mmu_windows: their count (at most 1024)
 * @on_goroutine: called for each goroutine when Go finalizes it (its end,
 *                or the end of the trace)
 * @on_region: called for each region when it ends (or at the end)
 * @on_task: called for each task when it ends (or at the end)
 * @on_gc: called for each GC cycle and pause when it ends (or at the end)
 * @ctx: passed to the callbacks
 *
 * Callbacks run inside rtd_goan_feed() and rtd_goan_finish(); what they
 * get is borrowed for the call.
 */
struct rtd_goan_opts {
	size_t sz;
	unsigned what;
	unsigned profiles;
	unsigned semantics;
	unsigned mmu_flags;
	const int64_t *mmu_windows;
	size_t n_mmu_windows;
	void (*on_goroutine)(const struct rtd_goan_goroutine *g, void *ctx);
	void (*on_region)(const struct rtd_goan_region *r, void *ctx);
	void (*on_task)(const struct rtd_goan_task *t, void *ctx);
	void (*on_gc)(const struct rtd_goan_gc *gc, void *ctx);
	void *ctx;
};

typedef struct rtd_goan rtd_goan;

/**
 * rtd_goan_new - create the analyses
 * @d: the ordered decoder whose events will be fed; it must outlive the
 *     analyses (its header must have been read, so its version is known:
 *     feed the first event before, or create this at the first event)
 * @o: what to compute
 *
 * Returns: the analyses, or NULL (out of memory, bad options, or
 * semantics that do not fit the trace: rtd_goan_new_error()).
 */
RTD_API rtd_goan *rtd_goan_new(rtd_gotrace_dec *d, const struct rtd_goan_opts *o);

/**
 * rtd_goan_new_error - why the last rtd_goan_new() on this thread failed
 *
 * Returns: a message ("" when it did not fail).
 */
RTD_API const char *rtd_goan_new_error(void);

/**
 * rtd_goan_free - free the analyses
 * @a: the analyses, or NULL (no-op)
 */
RTD_API void rtd_goan_free(rtd_goan *a);

/**
 * rtd_goan_feed - take the next ordered event
 * @a: the analyses
 * @ev: the event from rtd_gotrace_dec_next() (ordered mode)
 *
 * Returns: 0, or a negative error (rtd_goan_error()).
 */
RTD_API int rtd_goan_feed(rtd_goan *a, const struct rtd_gotrace_event *ev);

/* rtd_goan_run() flags */
#define RTD_GOAN_RUN_THREAD 1u    /* decode on a thread of its own (Go 1.22+) */
#define RTD_GOAN_RUN_ANY_CPUS 2u  /* ... even with one CPU online (tests) */
#define RTD_GOAN_RUN_SMALL_CHUNKS 4u /* test aid: hand over 3 events at a time */
#define RTD_GOAN_RUN_DEC_NEXT 8u  /* @next passes the decoder's events through */

/**
 * rtd_goan_run - feed the analyses every event a source gives
 * @a: the analyses (of the decoder @next reads)
 * @next: gives the ordered events of the decoder given to rtd_goan_new()
 *        (typically: feed it from a file, call rtd_gotrace_dec_next()),
 *        1 with an event, 0 at the end, <0 on an error
 * @ctx: passed to @next
 * @flags: RTD_GOAN_RUN_THREAD: for a Go 1.22+ trace, when more than one
 *         CPU is online, call @next on a thread of its own while the
 *         analyses run on the caller's (ordering and analysing then take
 *         two cores; the events, their order and so every answer are the
 *         same as without it). The decoder's tables hook
 *         (rtd_gotrace_dec_set_tables_hook()) is taken for the call.
 *         Otherwise, or for older traces, one thread: @next then
 *         rtd_goan_feed() per event. RTD_GOAN_RUN_DEC_NEXT: @next passes
 *         what rtd_gotrace_dec_next() gives untouched, and does not read
 *         it (see rtd_gotrace_run()): less crosses between the threads.
 * @dec_rc: gets @next's last answer: 0 at the end, or its error (the
 *          events before it were fed)
 *
 * Stops at the first error of the analyses (not calling @next further).
 * Callbacks of the options run on the caller's thread. rtd_goan_finish()
 * is the caller's to call after.
 *
 * Returns: 0, or the analyses' negative error (rtd_goan_error()).
 */
RTD_API int rtd_goan_run(rtd_goan *a, rtd_gotrace_next_fn next, void *ctx, unsigned flags,
			 int *dec_rc);

/**
 * rtd_goan_finish - end of the events
 * @a: the analyses
 *
 * Finalizes what is still open (goroutines, regions, tasks, GC, the MMU
 * windows), as Go does at the end of its event list. After a decoder
 * error, call it too: the answers then cover the events before the error
 * (Go 1.22+ answers what it read up to its last complete generation).
 * Returns: 0, or a negative error.
 */
RTD_API int rtd_goan_finish(rtd_goan *a);

/**
 * rtd_goan_error - message for the last error
 * @a: the analyses
 *
 * Returns: the message ("" when none).
 */
RTD_API const char *rtd_goan_error(const rtd_goan *a);

/**
 * rtd_goan_semantics - the semantics in use
 * @a: the analyses
 *
 * Returns: RTD_GOAN_GO119, RTD_GOAN_GO122 or RTD_GOAN_GO123.
 */
RTD_API unsigned rtd_goan_semantics(const rtd_goan *a);

/**
 * rtd_goan_stack - the frames of a stack the analyses interned
 * @a: the analyses
 * @id: the stack id given to a callback (0: none)
 * @frames: gets the frames, leaf first (valid until the next call of
 *          rtd_goan_stack() on @a)
 *
 * Returns: the frame count.
 */
RTD_API size_t rtd_goan_stack(const rtd_goan *a, uint32_t id,
			      const struct rtd_goframe **frames);

/**
 * typedef rtd_goan_record_fn - one record of a profile
 * @frames: the stack, leaf first (borrowed)
 * @nframes: its length
 * @count: events (contentions; CPU samples)
 * @ns: delay in nanoseconds (CPU: samples times the period, see
 *      enum rtd_goan_prof)
 * @ctx: the caller's pointer
 *
 * Returns: 0 to go on, or a negative error to stop with.
 */
typedef int (*rtd_goan_record_fn)(const struct rtd_goframe *frames, size_t nframes,
				  uint64_t count, int64_t ns, void *ctx);

/**
 * rtd_goan_profile_foreach - the records of one profile (after finish)
 * @a: the analyses
 * @which: enum rtd_goan_prof (computed when asked for in the options)
 * @fn: called per distinct stack, in the order stacks first counted
 * @ctx: passed to @fn
 *
 * Returns: 0, -RTD_E_STATE when the profile was not asked for, or @fn's
 * error.
 */
RTD_API int rtd_goan_profile_foreach(const rtd_goan *a, unsigned which,
				     rtd_goan_record_fn fn, void *ctx);

/**
 * rtd_goan_profile_build - one profile as an rtd_profile (after finish)
 * @a: the analyses
 * @which: enum rtd_goan_prof
 * @out: gets the profile (the caller frees it)
 *
 * Blocking profiles: sample type delay/nanoseconds (Go's second type;
 * contentions are in rtd_goan_profile_foreach()); cpu: cpu/nanoseconds.
 * Frames are the functions' names, root first.
 * Returns: 0, -RTD_E_STATE, or -ENOMEM.
 */
RTD_API int rtd_goan_profile_build(const rtd_goan *a, unsigned which,
				   rtd_profile **out);

/**
 * rtd_goan_profile_total - totals of one profile (after finish)
 * @a: the analyses
 * @which: enum rtd_goan_prof
 * @count: gets the event count (may be NULL)
 * @ns: gets the nanoseconds (may be NULL)
 *
 * Returns: 0 or -RTD_E_STATE.
 */
RTD_API int rtd_goan_profile_total(const rtd_goan *a, unsigned which,
				   uint64_t *count, int64_t *ns);

/**
 * rtd_goan_mmu - minimum mutator utilization for one window (after finish)
 * @a: the analyses (with RTD_GOAN_GC)
 * @i: index into the window sizes of the options
 * @window: gets the window size in ns (may be NULL)
 *
 * The MMU as `go tool trace`'s MMU page computes it (Go's
 * MMUCurve.MMU over the MutatorUtilization functions of the flags): the
 * lowest mean utilization over every window of that size; a window longer
 * than the trace is the trace.
 * Returns: the MMU in [0, 1], or a negative value for a bad @i or when no
 * utilization is known (no Gomaxprocs/ProcsChange event).
 */
RTD_API double rtd_goan_mmu(const rtd_goan *a, size_t i, int64_t *window);

/**
 * struct rtd_goan_group - goroutines with one start function (after finish)
 * @name: the start function ("" for goroutines no stack showed)
 * @pc: Go 1.19: the start PC the group is keyed by; else 0
 * @count: goroutines
 * @exec: their execution time
 * @total: their time in the trace
 * @stats, @nstats: sums of their named times (same names as the
 *                  goroutines')
 */
struct rtd_goan_group {
	const char *name;
	uint64_t pc;
	uint64_t count;
	int64_t exec;
	int64_t total;
	const struct rtd_goan_stat *stats;
	size_t nstats;
};

/**
 * rtd_goan_groups_foreach - the goroutine groups (after finish)
 * @a: the analyses (with RTD_GOAN_GOROUTINES)
 * @fn: called per group, in no set order
 * @ctx: passed to @fn
 *
 * Returns: 0, -RTD_E_STATE, or @fn's error.
 */
RTD_API int rtd_goan_groups_foreach(const rtd_goan *a,
				    int (*fn)(const struct rtd_goan_group *g, void *ctx),
				    void *ctx);

/**
 * rtd_goan_trace_bounds - the first and last event times seen
 * @a: the analyses
 * @first: gets the first time (may be NULL)
 * @last: gets the last time (may be NULL)
 *
 * Returns: the number of events fed.
 */
RTD_API uint64_t rtd_goan_trace_bounds(const rtd_goan *a, int64_t *first, int64_t *last);

/**
 * rtd_goan_duration_str - a duration as Go's time.Duration.String() says it
 * @ns: the duration in nanoseconds (negative too)
 * @buf: gets the text, NUL-terminated (cut to fit)
 * @len: size of @buf (32 bytes hold every duration)
 *
 * "0s", "850ns", "1.5µs" (U+00B5, as Go writes it), "1.234567ms", "3.3s",
 * "4m5.001s", "1h2m3s": the largest unit below a second, else hours,
 * minutes and seconds, the fraction without trailing zeros; what go tool
 * trace prints for a duration.
 *
 * Returns: the text's length, as snprintf() (cut when >= @len).
 */
RTD_API int rtd_goan_duration_str(int64_t ns, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOANALYSIS_H */
