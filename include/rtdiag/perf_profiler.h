/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_profiler.h - a CPU or off-CPU profiler over a perf monitor:
 * samples kept as a call tree, named after the run, given out as an
 * rtd_profile or sample by sample.
 */
#ifndef RTDIAG_PERF_PROFILER_H
#define RTDIAG_PERF_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/profile.h"
#include "rtdiag/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_monitor;
struct rtd_perf_sampler_opts;

struct rtd_perf_profiler;

/* Flags for rtd_perf_profiler_opts.flags. */
enum rtd_perf_profiler_flags {
	/* the scoped pid is a child waiting to exec: sample from its exec */
	RTD_PERF_PROF_ENABLE_ON_EXEC = 1u << 0,
	/* do not switch .NET perf maps on over the diagnostics IPC */
	RTD_PERF_PROF_NO_DOTNET = 1u << 1,
	/* no root frame per process ("comm") in the profile */
	RTD_PERF_PROF_NO_COMM = 1u << 2,
	/* keep each sample's time and stack for rtd_perf_profiler_each_sample()
	 * (32 bytes a sample, in a temporary file: memory stays bounded) */
	RTD_PERF_PROF_KEEP_SAMPLES = 1u << 3,
	/* off-CPU: where threads wait and how long, instead of CPU samples
	 * (see rtd_perf_profiler_new()) */
	RTD_PERF_PROF_OFF_CPU = 1u << 4,
	/* read the rings with a thread of their own (RTD_PERF_READER_THREAD,
	 * the default copy cap): symbolizing no longer makes the kernel drop
	 * samples, for up to 64 MiB more memory */
	RTD_PERF_PROF_READER_THREAD = 1u << 5,
	/* every record will be written out (rtd_perf_profiler_write_data()):
	 * off-CPU takes the perf path, which copies each switch out (the BPF
	 * path keeps totals in the kernel) */
	RTD_PERF_PROF_EACH_RECORD = 1u << 6,
	/* each rtd_perf_profiler_drain() forgets what it gave out: the call
	 * tree restarts (the off-CPU waits still open kept) and the
	 * symbolizer's locations and names are cut back to those still used
	 * once they pass a bound (rtd_sym_keep_locations()), so memory
	 * follows a window, not the recording; rtd_perf_profiler_profile()
	 * then counts only what was not drained. For a live consumer that
	 * copies what it keeps (a flight ring, a timeline being written) */
	RTD_PERF_PROF_WINDOWS = 1u << 7,
	/* the symbols of every file the pids map are read at the start
	 * (rtd_sym_proc_objects()), not minutes later at a first sample in
	 * it: memory does not step up in a ring that runs for hours, for
	 * ~7 MB more from the start on a .NET process (a short recording
	 * does not ask for it) */
	RTD_PERF_PROF_ALL_SYMBOLS = 1u << 8,
	/* with RTD_PERF_PROF_OFF_CPU and RTD_PERF_PROF_KEEP_SAMPLES: the
	 * kept waits may be totals, so off-CPU may go through BPF (nothing
	 * copied out per switch): each kept sample is then the waits of one
	 * thread, stack and state that ended since the previous read of the
	 * kernel's totals (rtd_perf_profiler_sample.count), for a consumer
	 * that adds waits up (a profile), not one that draws each (a
	 * timeline) */
	RTD_PERF_PROF_WAIT_TOTALS = 1u << 9,
	/* a CPU profiler's rtd_perf_profiler_drain() hands out the call
	 * tree's totals, not each sample: one sample per thread and stack
	 * sampled since the previous drain (rtd_perf_profiler_sample.count
	 * the samples, .duration their summed period), then the tree
	 * restarts as with RTD_PERF_PROF_WINDOWS; nothing is kept per sample
	 * (no RTD_PERF_PROF_KEEP_SAMPLES needed). For a consumer that adds
	 * samples up (a profile), at the cost of a take: per stack, not per
	 * sample. Not with RTD_PERF_PROF_OFF_CPU (which has
	 * RTD_PERF_PROF_WAIT_TOTALS) */
	RTD_PERF_PROF_TOTALS = 1u << 10,
	/* a .NET perf map's EnablePerfMap request is sent, not waited for:
	 * the caller polls rtd_perf_profiler_perfmap_fd() and reads the
	 * reply with rtd_perf_profiler_perfmap_answer() (a stopped or busy
	 * runtime holds no loop); JIT frames are named once the runtime
	 * wrote its map. Without it rtd_perf_profiler_new() waits up to
	 * 30 s a process for the reply */
	RTD_PERF_PROF_DOTNET_BEGIN = 1u << 11,
};

/* States of an off-CPU wait (rtd_perf_profiler_opts.offcpu_states), from
 * sched_switch's prev_state. */
enum rtd_perf_offcpu_state {
	RTD_PERF_OFFCPU_SLEEP = 1u << 0,     /* S: interruptible sleep: locks,
					      * futexes, I/O readiness, timers */
	RTD_PERF_OFFCPU_DISK = 1u << 1,      /* D: uninterruptible: disk I/O,
					      * page faults, some kernel locks */
	RTD_PERF_OFFCPU_PREEMPTED = 1u << 2, /* R: still runnable, taken off
					      * the CPU (preempted, yielded):
					      * CPU contention, not a wait */
	RTD_PERF_OFFCPU_OTHER = 1u << 3,     /* T, t, P, I: stopped, traced,
					      * parked, idle */
	/* the default: every state but preempted */
	RTD_PERF_OFFCPU_WAITS = RTD_PERF_OFFCPU_SLEEP | RTD_PERF_OFFCPU_DISK |
				RTD_PERF_OFFCPU_OTHER,
	RTD_PERF_OFFCPU_ALL = RTD_PERF_OFFCPU_WAITS | RTD_PERF_OFFCPU_PREEMPTED,
};

/* How off-CPU waits are taken (rtd_perf_profiler_opts.offcpu_via). */
enum rtd_perf_offcpu_via {
	/* BPF where this process may load it and the options allow it,
	 * else perf (rtd_perf_profiler_offcpu_via() says why) */
	RTD_PERF_OFFCPU_VIA_AUTO = 0,
	/* a BPF program on sched_switch sums the waits per (thread, stacks,
	 * state) in the kernel; rtd_perf_profiler_new() fails without it */
	RTD_PERF_OFFCPU_VIA_BPF,
	/* every switch copied out: sched_switch samples with their stacks,
	 * paired with switch records in user space */
	RTD_PERF_OFFCPU_VIA_PERF,
};

/**
 * struct rtd_perf_profiler_opts - what to profile, and how
 * @sz: sizeof(struct rtd_perf_profiler_opts)
 * @pids: processes (every thread, later ones too); none and no cgroups:
 *        the whole system
 * @npids: number of @pids
 * @cgroups: cgroups to profile instead (see struct rtd_perf_opts)
 * @ncgroups: number of @cgroups
 * @flags: RTD_PERF_PROF_* flags
 * @sampler: the sampling event (NULL: defaults)
 * @ring_pages: ring data pages per CPU (0: perf's default,
 *              rtd_perf_default_ring_pages(); off-CPU at least 512)
 * @sym: symbolizer options (NULL: defaults)
 * @offcpu_states: RTD_PERF_PROF_OFF_CPU: the RTD_PERF_OFFCPU_* states
 *                 whose waits are kept (0: RTD_PERF_OFFCPU_WAITS)
 * @offcpu_via: RTD_PERF_PROF_OFF_CPU: an enum rtd_perf_offcpu_via
 */
struct rtd_perf_profiler_opts {
	size_t sz;
	const pid_t *pids;
	size_t npids;
	const char *const *cgroups;
	size_t ncgroups;
	unsigned flags;
	const struct rtd_perf_sampler_opts *sampler;
	unsigned ring_pages;
	const struct rtd_sym_opts *sym;
	unsigned offcpu_states;
	unsigned offcpu_via;
};

/**
 * rtd_perf_profiler_new - set up a CPU profiler (events open, not running)
 * @o: options
 * @out: receives the profiler
 *
 * For each scoped .NET process whose perf map is off, the map is switched
 * on over the diagnostics IPC now and off again by
 * rtd_perf_profiler_free(), so JIT-compiled methods get their names.
 *
 * With RTD_PERF_PROF_OFF_CPU the profile says where threads wait instead
 * of where they run, without BPF: every sched:sched_switch of a scoped
 * thread is sampled with its call chain (frame pointers, or a stack copy
 * for -g dwarf; the sampler's event and frequency are ignored) and its
 * prev_state, and the thread's next switch-in (a PERF_RECORD_SWITCH) ends
 * the wait: delay = switch-in time - switch-out time, attributed to the
 * switch-out stack. Memory: one pending switch-out per thread. The
 * profile has Go's block profile types: "contentions"/"count" (waits) and
 * "delay"/"nanoseconds" (the default), with a "state" label (S, D, R, T).
 * A wait still open when the profile is built is not in it (a take keeps
 * it for the next one). Needs tracefs and the right to sample
 * tracepoints (root, or CAP_PERFMON with perf_event_paranoid <= 1).
 * A switch happens in the kernel: the sampler's @exclude_kernel then
 * means stacks without kernel frames (its @no_kernel_frames), not a
 * sampler that never fires.
 *
 * Off-CPU through BPF (@offcpu_via; the default where possible): a BPF
 * program on sched_switch (tp_btf, CO-RE) keeps the same waits as totals
 * per (thread, user and kernel stack, state) in the kernel, read when
 * rtd_perf_profiler_run() returns and when a process in scope exits (its
 * mappings are still known then); the monitor then carries
 * only the records that say where code is. Same answers, nothing copied
 * out per switch. Not for RTD_PERF_PROF_KEEP_SAMPLES (a timeline needs
 * each wait's own time) unless RTD_PERF_PROF_WAIT_TOTALS, -g dwarf (BPF takes frame-pointer stacks) or
 * cgroups; needs libbpf.so.1 at run time and root (or CAP_BPF and
 * CAP_PERFMON).
 *
 * Returns: 0, or a negative error; rtd_perf_profiler_errmsg() says more.
 */
RTD_API int rtd_perf_profiler_new(const struct rtd_perf_profiler_opts *o,
				  struct rtd_perf_profiler **out);

/**
 * rtd_perf_profiler_errmsg - what the last failed call went wrong on
 * @p: profiler (may be NULL after a failed rtd_perf_profiler_new(): then
 *     the message of that call, per thread)
 *
 * Returns: a message, "" when none.
 */
RTD_API const char *rtd_perf_profiler_errmsg(const struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_offcpu_via - how an off-CPU profiler takes its waits
 * @p: profiler
 * @why: receives, for the perf path, why BPF is not used (one line,
 *       owned by @p: "asked for" when it was); may be NULL
 *
 * Returns: RTD_PERF_OFFCPU_VIA_BPF or RTD_PERF_OFFCPU_VIA_PERF;
 * RTD_PERF_OFFCPU_VIA_AUTO for a CPU profiler.
 */
RTD_API enum rtd_perf_offcpu_via
rtd_perf_profiler_offcpu_via(const struct rtd_perf_profiler *p,
			     const char **why);

/**
 * rtd_perf_profiler_monitor - the monitor underneath (for stats, stop)
 * @p: profiler
 *
 * Returns: the monitor, owned by @p.
 */
RTD_API struct rtd_perf_monitor *
rtd_perf_profiler_monitor(struct rtd_perf_profiler *p);

struct rtd_perf_data_writer;

/**
 * rtd_perf_profiler_write_data - also write everything recorded to a
 * perf.data file, as perf record would (rtdiag/perf_data.h)
 * @p: a profiler not run yet
 * @w: an open writer (borrowed until rtd_perf_profiler_run() returns;
 *     the caller closes it)
 *
 * Gives @w the profiler's events (attributes, names, ids), the records
 * perf record synthesizes for what exists already (the kernel's mapping,
 * the scoped processes' threads and executable mappings; every process
 * when system-wide; none for a program started with enable_on_exec, whose
 * mappings the kernel writes as it execs), then during the run every
 * record the kernel writes.
 *
 * Returns: 0, -RTD_E_UNSUPPORTED for off-CPU through BPF (made without
 * RTD_PERF_PROF_EACH_RECORD: the switches stay in the kernel), or the
 * writer's error.
 */
RTD_API int rtd_perf_profiler_write_data(struct rtd_perf_profiler *p,
					 struct rtd_perf_data_writer *w);

/**
 * rtd_perf_profiler_run - sample until stopped or every scoped process is gone
 * @p: profiler
 *
 * Stacks are kept as location ids in a call tree (memory grows with
 * distinct stacks, not with samples); names are found after the run.
 * Stop it with rtd_perf_monitor_stop() on rtd_perf_profiler_monitor().
 *
 * Returns: 0 or a negative error.
 */
RTD_API int rtd_perf_profiler_run(struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_profile - name every location and build the profile
 * @p: profiler
 * @out: receives a new profile ("samples"/"count" and "cpu"/"nanoseconds")
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_perf_profiler_profile(struct rtd_perf_profiler *p,
				      rtd_profile **out);

/**
 * rtd_perf_profiler_take - the profile of the samples since the last take,
 * for a profiler that goes on (a continuous profiler's windows)
 * @p: profiler, between two rtd_perf_profiler_run() calls (stop the run
 *     loop, take, run again: the kernel keeps sampling into the rings
 *     meanwhile, so nothing is lost)
 * @out: receives a new profile, as rtd_perf_profiler_profile() makes it;
 *       only the locations of the samples taken are named
 *
 * The call tree then restarts empty: memory follows the distinct stacks of
 * one take, not of the whole run; the symbolizer keeps what it loaded.
 *
 * Returns: 0, -RTD_E_INVAL or -ENOMEM.
 */
RTD_API int rtd_perf_profiler_take(struct rtd_perf_profiler *p,
				   rtd_profile **out);

/**
 * struct rtd_perf_profiler_sample - one kept sample, named
 * @sz: sizeof(struct rtd_perf_profiler_sample)
 * @time: when it was taken, CLOCK_MONOTONIC ns
 * @pid: its process
 * @tid: its thread
 * @thread: the thread's name (its last COMM), or NULL
 * @process: the name of the process's main thread when it was seen, or NULL
 * @frames: its stack, leaf first, inlined functions as frames of their
 *          own (names as in rtd_perf_profiler_profile()'s profile; file
 *          code no symbol names is "module+0xOFFSET")
 * @nframes: their count
 * @duration: off-CPU (RTD_PERF_PROF_OFF_CPU): the wait's length in ns,
 *            @time being when the thread left the CPU; 0 for a CPU sample
 * @state: off-CPU: the thread's state when it left ("S" sleep, "D" disk,
 *         "R" preempted, "T" other); NULL for a CPU sample
 * @open: an off-CPU wait still going on when the recording stopped
 *        (rtd_perf_profiler_close_waits()): @duration runs to the stop
 * @count: 0 for one sample or one wait; off-CPU through BPF with
 *         RTD_PERF_PROF_WAIT_TOTALS: a total, @count waits of this thread,
 *         stack and state that ended since the kernel's totals were read
 *         before, @duration their summed length, @time when they were
 *         read (CLOCK_MONOTONIC ns, the end of a run or a process's exit);
 *         a CPU profiler's drain with RTD_PERF_PROF_TOTALS: @count samples
 *         of this thread and stack since the previous drain, @duration
 *         their summed sampling period in ns, @time the last run's end
 */
struct rtd_perf_profiler_sample {
	size_t sz;
	uint64_t time;
	uint32_t pid, tid;
	const char *thread;
	const char *process;
	const struct rtd_frame *frames;
	size_t nframes;
	uint64_t duration;
	const char *state;
	bool open;
	uint64_t count;
};

/**
 * rtd_perf_wait_state_name - what an off-CPU wait is called by its state
 * @state: a sample's @state ("S", "D", "R", "T", ...), or NULL
 *
 * Returns: "sleep" (S), "disk" (D), "preempted" (R) or "other", the names
 * timelines give off-CPU slices; never NULL.
 */
RTD_API const char *rtd_perf_wait_state_name(const char *state);

/* Called for each kept sample; a non-zero return stops the walk and is
 * returned. Everything it is given lives until it returns. */
typedef int (*rtd_perf_profiler_sample_fn)(
	const struct rtd_perf_profiler_sample *s, void *ctx);

/**
 * rtd_perf_profiler_each_sample - every kept sample, in the order taken
 * @p: profiler made with RTD_PERF_PROF_KEEP_SAMPLES, after a run
 * @fn: called for each sample (time order: the monitor merges its rings;
 *      off-CPU, each wait in the order the waits ended, with @time its
 *      start and @duration its length, so starts may go back in time
 *      across threads, never within one)
 * @ctx: passed to @fn
 *
 * Names every location first (as rtd_perf_profiler_profile() does; the
 * two may be called in either order). rtd_perf_profiler_take() drops the
 * samples kept so far.
 *
 * Returns: 0, what @fn returned, -RTD_E_STATE when samples are not kept,
 * -RTD_E_INVAL, -ENOMEM or -EIO.
 */
RTD_API int rtd_perf_profiler_each_sample(struct rtd_perf_profiler *p,
					  rtd_perf_profiler_sample_fn fn,
					  void *ctx);

/**
 * rtd_perf_profiler_close_waits - the off-CPU waits still going on, kept
 * as if they ended at @end_ns (a recording's stop)
 * @p: an off-CPU profiler (RTD_PERF_PROF_OFF_CPU), between runs
 * @end_ns: the stop's time, on the samples' clock (CLOCK_MONOTONIC)
 *
 * A thread that left the CPU during the recording and was not back at its
 * stop would otherwise leave no trace of its wait: each such wait is
 * counted in the call tree and kept (RTD_PERF_PROF_KEEP_SAMPLES) with
 * @open set, from its switch-out to @end_ns. The waits are then no longer
 * pending (a later switch-in is not paired).
 *
 * Returns: the number of waits closed, 0 for a CPU profiler, or -EIO.
 */
RTD_API int rtd_perf_profiler_close_waits(struct rtd_perf_profiler *p, uint64_t end_ns);

/**
 * rtd_perf_profiler_drain - the samples kept since the last drain, then
 * dropped: a recording read while it runs
 * @p: profiler made with RTD_PERF_PROF_KEEP_SAMPLES (or a CPU one with
 *     RTD_PERF_PROF_TOTALS), between two rtd_perf_profiler_run() calls
 *     (stop the run, drain, run again: the kernel keeps sampling into the
 *     rings meanwhile)
 * @fn: called for each sample, as rtd_perf_profiler_each_sample() gives
 *      them (off-CPU: each wait that ended, in the order of the ends)
 * @ctx: passed to @fn
 *
 * Names only the locations these samples use, then empties the kept
 * samples' file: disk and time follow one window, not the recording. The
 * call tree keeps them: rtd_perf_profiler_profile() at the end still
 * counts every sample (memory follows the recording's distinct stacks),
 * unless the profiler was made with RTD_PERF_PROF_WINDOWS: then the tree
 * restarts after each drain and the locations are trimmed. Once a
 * profiler is drained its runs are windows of one recording: the
 * profile's start is the first run's. The names given to @fn are valid
 * until the next drain. With RTD_PERF_PROF_TOTALS @fn gets one sample
 * per thread and stack with its @count and summed period (@duration), in
 * no particular order, and the tree restarts.
 *
 * Returns: as rtd_perf_profiler_each_sample().
 */
RTD_API int rtd_perf_profiler_drain(struct rtd_perf_profiler *p,
				    rtd_perf_profiler_sample_fn fn, void *ctx);

/**
 * rtd_perf_profiler_frame_module - the module a frame name of the profile
 * was found in
 * @p: profiler, after rtd_perf_profiler_profile()
 * @name: a frame name of that profile
 *
 * Returns: the module as the process names it ("/usr/lib/.../libc.so.6",
 * "[kernel.kallsyms]", "[jit]"), or NULL when @name is not a frame of it.
 */
RTD_API const char *rtd_perf_profiler_frame_module(struct rtd_perf_profiler *p,
						   const char *name);

/**
 * struct rtd_perf_profiler_stats - what a profiler saw
 * @sz: sizeof(struct rtd_perf_profiler_stats)
 * @samples: samples taken
 * @kernel_samples: of those, in the kernel
 * @lost: samples lost (ring full)
 * @nodes: call tree nodes (distinct stack prefixes)
 * @truncated: stacks cut at the call tree's cap
 * @unwind_failed: dwarf mode: stacks libdw could not unwind past the leaf
 * @processes: processes seen
 * @mmaps: MMAP/MMAP2 records
 * @comms: COMM records
 * @forks: FORK records
 * @exits: EXIT records
 * @user_only: the kernel allowed user space only
 * @dotnet_perfmaps: .NET perf maps switched on for the run
 * @run_start: when rtd_perf_profiler_run() started, CLOCK_MONOTONIC ns (the
 *             clock of the samples' times)
 * @run_end: when it returned, the same clock (0 while it runs)
 * @offcpu_waits: off-CPU: switch-outs paired with their switch-in
 *                (every state, kept or not)
 * @offcpu_unpaired: off-CPU: switch-ins without a switch-out (the thread
 *                   left the CPU before the recording began) or
 *                   switch-outs whose switch-in was lost
 * @offcpu_ns: off-CPU: wait time by state, S, D, R (preempted), T
 *             (other), kept or not
 * @location_trims: times the symbolizer's locations were cut back to those
 *                  the call tree still used (RTD_PERF_PROF_WINDOWS, and
 *                  rtd_perf_profiler_take())
 */
struct rtd_perf_profiler_stats {
	size_t sz;
	uint64_t samples;
	uint64_t kernel_samples;
	uint64_t lost;
	uint64_t nodes;
	uint64_t truncated;
	uint64_t unwind_failed;
	uint64_t processes;
	uint64_t mmaps, comms, forks, exits;
	bool user_only;
	unsigned dotnet_perfmaps;
	uint64_t run_start, run_end;
	uint64_t offcpu_waits;
	uint64_t offcpu_unpaired;
	uint64_t offcpu_ns[4];
	uint64_t location_trims;
};

/**
 * rtd_perf_profiler_stats - counters of a profiler
 * @p: profiler
 * @st: filled up to @st->sz bytes
 */
RTD_API void rtd_perf_profiler_stats(const struct rtd_perf_profiler *p,
				     struct rtd_perf_profiler_stats *st);

/**
 * rtd_perf_profiler_symbolizer - the symbolizer of a profiler
 * @p: profiler
 *
 * Returns: the symbolizer, owned by @p (for its stats and warnings).
 */
RTD_API rtd_symbolizer *rtd_perf_profiler_symbolizer(struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_perfmap_fd - where a perf map's reply is to come
 * @p: a profiler made with RTD_PERF_PROF_DOTNET_BEGIN
 *
 * Returns: a descriptor to poll for POLLIN (then call
 * rtd_perf_profiler_perfmap_answer()), or -1 when no request waits.
 */
RTD_API int rtd_perf_profiler_perfmap_fd(const struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_perfmap_answer - read the perf maps' replies that came
 * @p: the profiler
 *
 * Without waiting. A refusal is logged and the map's guard dropped; a
 * request freed unanswered (rtd_perf_profiler_free()) keeps its guard,
 * which switches the map off when rtdiag ends (the runtime may still
 * carry it out).
 * Returns: how many requests still wait (0: none; the descriptor from
 * rtd_perf_profiler_perfmap_fd() may have changed).
 */
RTD_API int rtd_perf_profiler_perfmap_answer(struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_free - close everything; .NET perf maps switched on
 * by the profiler are switched off again
 * @p: profiler, or NULL
 */
RTD_API void rtd_perf_profiler_free(struct rtd_perf_profiler *p);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_PROFILER_H */
