/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_profiler.h - profiles from an EventPipe stream: CPU or
 * thread time, allocations, locks, exceptions and waits, from the
 * runtime's own events.
 */
#ifndef RTDIAG_NETTRACE_PROFILER_H
#define RTDIAG_NETTRACE_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/nettrace_decoder.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_nettrace_profiler rtd_nettrace_profiler;
struct rtd_profile;

/* What a profile builder keeps (the same bits as RTD_IPC_PROFILE_*). */
enum rtd_nettrace_profile_kind {
	RTD_NETTRACE_PROFILE_CPU = 1u << 0,  /* SampleProfiler thread samples */
	RTD_NETTRACE_PROFILE_ALLOC = 1u << 1, /* GC/AllocationTick */
	RTD_NETTRACE_PROFILE_LOCK = 1u << 2,  /* Contention/Start + Stop */
	RTD_NETTRACE_PROFILE_EXCEPTION = 1u << 3, /* Exception/Start (thrown) */
	RTD_NETTRACE_PROFILE_WAIT = 1u << 4, /* WaitHandleWait/Start + Stop */
};

/**
 * rtd_nettrace_profile_kind_name - the word for one profile kind
 * @kind: one RTD_NETTRACE_PROFILE_* bit
 *
 * Return: "cpu", "alloc", "lock", "exception" or "wait" (the words
 * rtd_nettrace_profile_kinds() reads, `dotnet profile --type` and the
 * agent's dotnet-profiles take); NULL for anything else.
 */
RTD_API const char *rtd_nettrace_profile_kind_name(unsigned kind);

/**
 * rtd_nettrace_profile_kinds - read a list of profile kinds
 * @list: words of rtd_nettrace_profile_kind_name() separated by commas
 *        ("cpu,alloc"); a trailing comma is allowed
 * @kinds: gets the RTD_NETTRACE_PROFILE_* bits of the words
 * @bad: gets where the first word that is no kind starts (NULL: not asked)
 * @badlen: gets that word's length (NULL: not asked)
 *
 * Return: 0, or -RTD_E_INVAL at a word that is no kind (an empty one
 * too); *kinds is then left as it was.
 */
RTD_API int rtd_nettrace_profile_kinds(const char *list, unsigned *kinds,
				       const char **bad, size_t *badlen);

/**
 * struct rtd_nettrace_profiler_opts - options for rtd_nettrace_profiler_new()
 * @sz: sizeof(struct rtd_nettrace_profiler_opts)
 * @managed_only: thread time only while in managed code (dotnetdiag's
 *                --managed-only: the time a thread spends in a run of
 *                External samples is not counted)
 * @max_stacks: cap on distinct call stacks kept (0: 1 << 20)
 * @max_pending: cap on samples buffered between sequence points
 *               (0: 1 << 22)
 * @kinds: RTD_NETTRACE_PROFILE_* bits (0: CPU only)
 * @running_only: the CPU profile keeps only the samples of threads that
 *                were in managed code (the sampler's Managed type), each
 *                weighing the time since the thread's previous sample:
 *                thread time in managed code, running or runnable (not
 *                CPU time: rtd_nettrace_profiler_thread_cpu() makes it
 *                that), where the default is thread (wall-clock) time of
 *                every thread
 * @max_entries: cap on distinct (kind, stack, thread, type) value slots
 *               (0: 1 << 22)
 */
struct rtd_nettrace_profiler_opts {
	size_t sz;
	bool managed_only;
	size_t max_stacks;
	size_t max_pending;
	unsigned kinds;
	bool running_only;
	size_t max_entries;
};

/**
 * rtd_nettrace_profiler_new - create a profile builder
 * @opts: options; NULL for defaults
 *
 * CPU: Microsoft-DotNETCore-SampleProfiler ThreadSample events, following
 * dotnetdiag's SampleProfiler model: the samples of each thread are
 * ordered by time within each sequence-point interval; each sample is
 * weighted with the time since the thread's previous sample; a thread's
 * first sample weighs nothing. The sampler samples every managed thread,
 * running or waiting: this is thread time ("wall"), unless @running_only.
 *
 * Allocations: GC/AllocationTick (keyword GC at Verbose), one about every
 * 100 KB a thread allocates, weighted by the amount it stands for; the
 * allocated type is the leaf frame. Locks: Contention/Start to Stop per
 * thread (keyword Contention), the waiting thread's stack at Start, the
 * delay from Stop's DurationNs (.NET 8+) or the two timestamps.
 * Waits: WaitHandleWait/Start to Stop per thread (keyword WaitHandle at
 * Verbose, .NET 9+: waits on wait handles, Monitor.Wait, and a contended
 * Monitor.Enter's wait), the waiting thread's stack at Start, the delay
 * the two timestamps; a wait counts when it ends (as Go's block profile
 * counts), one whose Start came before the session does not.
 * Exceptions: Exception/Start, counted by type (the leaf frame) and
 * throwing stack (keyword Exception).
 *
 * Frames are named "module!Namespace.Method(signature)" from
 * MethodLoadVerbose / MethodDCStart/EndVerbose events (runtime and
 * rundown providers) and ModuleLoad / ModuleDCStart/End; an address no
 * method covers is "?!?".
 *
 * Memory grows with distinct stacks, threads and type names (each capped),
 * not with the number of events.
 *
 * Returns: the builder, or NULL when out of memory.
 */
RTD_API rtd_nettrace_profiler *
rtd_nettrace_profiler_new(const struct rtd_nettrace_profiler_opts *opts);

/**
 * rtd_nettrace_profiler_free - free a profile builder
 * @p: the builder; NULL does nothing
 */
RTD_API void rtd_nettrace_profiler_free(rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_event - give the builder one event
 * @p: the builder
 * @dec: the decoder that delivered @ev
 * @ev: any event; those the builder does not use are ignored
 *
 * Call from your rtd_nettrace_event_fn for every event. Events may come
 * from more than one decoder: the samples from one stream, method and
 * module names from others as well (a rundown taken in a session of its
 * own, rtd_ipc_rundown_snapshot()), so that frames are named even when
 * the sampled stream's own rundown never came. The clock is the one of
 * the decoder that delivers the first sample.
 *
 * Returns: 0, -ENOMEM, -RTD_E_CAP when a cap is reached, or -RTD_E_STATE
 * after the builder has finished.
 */
RTD_API int rtd_nettrace_profiler_event(rtd_nettrace_profiler *p,
					rtd_nettrace *dec,
					const struct rtd_nettrace_event *ev);

/**
 * rtd_nettrace_profiler_record - give the builder one record of a nettrace
 * source
 * @p: the builder
 * @clock: the source's clock (rtd_source_clock() once its first event's
 *         record came: the header's frequency and sync time), or NULL
 *         (ticks are then taken for nanoseconds)
 * @rec: any record of a source of rtdiag/nettrace_source.h: its SAMPLE
 *       records (the ThreadSamples, field "Type") and the INSTANTs of the
 *       runtime's GC/AllocationTick, Contention/Start and /Stop,
 *       Exception/Start and WaitHandleWait/Start and /Stop (their payload
 *       fields by name) are used, the rest ignored. Give the source @kinds
 *       = 1u << RTD_REC_SAMPLE when only the CPU profile is wanted.
 *
 * The same handlers as rtd_nettrace_profiler_event()'s, from the
 * record's facts: a record stream in time order (as the nettrace
 * sources sort it) gives the profiles a decoder's events give with
 * their sequence points. Frames are named at the end by address, from
 * the method events given with rtd_nettrace_profiler_event() and from
 * the source's table when rtd_nettrace_profiler_pull() reads it.
 *
 * Returns: 0, -ENOMEM, -RTD_E_CAP, an error record's code, -RTD_E_INVAL
 * (no @p or @rec), or -RTD_E_STATE after the builder has finished.
 */
RTD_API int rtd_nettrace_profiler_record(rtd_nettrace_profiler *p,
					 const struct rtd_clock *clock,
					 const struct rtd_record *rec);

/**
 * rtd_nettrace_profiler_pull - give the builder every record of a source
 * @p: the builder
 * @src: a nettrace source (rtd_nettrace_source_open(), _mem(),
 *       _stream(); with @address_frames and no prepass it costs the least),
 *       pulled to its end; its method table (rtd_nettrace_source_methods())
 *       names the frames, so free it only after the profiles are built
 *
 * A live source's records carry no sequence points: at its idle the
 * samples pending in the builder are accounted as at a sequence point
 * (rtd_nettrace_profiler_seqpoint()), so they wait one round, not a
 * window, and a rtd_nettrace_profiler_take() after pulls gives the
 * profiles the decoder's events give cut at the same bytes, when the
 * source is in @stream_order (in time order a source holds the records
 * after its last sequence point until the next one).
 *
 * Returns: 0 at the source's end; RTD_SOURCE_IDLE when a live source
 * (rtd_ipc_session_source_live()) has no record now: the records so far
 * are in the builder, pull again when rtd_source_fd() is readable; or
 * the first error (the source's: its error record comes again from
 * rtd_source_next(); or the builder's): the records before it are in the
 * profiles.
 */
RTD_API int rtd_nettrace_profiler_pull(rtd_nettrace_profiler *p, rtd_source *src);

/**
 * typedef rtd_nettrace_tee_fn - a second consumer of the records a pull
 * hands the builder
 * @ctx: the @ctx given to rtd_nettrace_profiler_pull_tee()
 * @clock: the source's clock (as the builder gets it)
 * @rec: the record, borrowed until the call returns
 *
 * Returns: 0 to go on; a negative error stops the pull, which returns it.
 */
typedef int (*rtd_nettrace_tee_fn)(void *ctx, const struct rtd_clock *clock,
				   const struct rtd_record *rec);

/**
 * rtd_nettrace_profiler_pull_tee - rtd_nettrace_profiler_pull(), each
 * record also given to a second consumer
 * @p: the builder
 * @src: a nettrace source, as for rtd_nettrace_profiler_pull()
 * @fn: called with each record before the builder gets it (a counters
 *      reader's rtd_counters_record(): one pass of one stream feeds
 *      both), or NULL (then it is rtd_nettrace_profiler_pull())
 * @ctx: passed to @fn
 *
 * Give the source a filter that lets through what both read (the OR of
 * their @want, the most of their @fields).
 *
 * Returns: as rtd_nettrace_profiler_pull(); also @fn's negative value,
 * when it stopped the pull (the record it refused is not in the builder).
 */
RTD_API int rtd_nettrace_profiler_pull_tee(rtd_nettrace_profiler *p, rtd_source *src,
					   rtd_nettrace_tee_fn fn, void *ctx);

/**
 * rtd_nettrace_profiler_want - the event types the builder reads records of
 * @ctx: the builder (an rtd_nettrace_profiler *)
 * @m: an event type
 *
 * A filter for a nettrace source's @want (with @want_ctx the builder):
 * the sampler's ThreadSample when the builder keeps the CPU profile, and
 * the runtime's events of the other kinds it keeps; method and module
 * events are not (the source learns them into its table with
 * @address_frames), nor anything else. A source so filtered costs no
 * record, field or stack for the events the builder would ignore.
 *
 * Returns: true for a type the builder uses; false otherwise (a NULL
 * @ctx or @m too).
 */
RTD_API bool rtd_nettrace_profiler_want(void *ctx, const struct rtd_nettrace_metadata *m);

/**
 * rtd_nettrace_profiler_fields - the fields the builder reads of an event type
 * @ctx: the builder (an rtd_nettrace_profiler *)
 * @m: an event type
 *
 * For a nettrace source's @fields (with @fields_ctx the builder): an
 * allocation tick's fields up to ObjectSize, Contention/Stop's up to
 * DurationNs, Exception/Start's ExceptionType (not its message), a
 * sample's Type, none of a Start or of a wait's Stop (their time and
 * stack are all the builder reads). The records then cost no decoding of
 * the fields after those.
 *
 * Returns: how many of @m's top-level fields to read (0: none; also for a
 * type the builder does not use, and for a NULL @ctx or @m).
 */
RTD_API size_t rtd_nettrace_profiler_fields(void *ctx, const struct rtd_nettrace_metadata *m);

/**
 * rtd_nettrace_profiler_field_want - whether the builder reads a field
 * @ctx: the builder (an rtd_nettrace_profiler *)
 * @m: an event type
 * @i: the index of one of @m's top-level fields
 *
 * For a nettrace source's @field_want (with @fields
 * rtd_nettrace_profiler_fields() and @fields_ctx the builder): the fields
 * rtd_nettrace_profiler_fields() names, by name; the others between them
 * (an allocation tick's kind, type id, heap, address) are not made.
 *
 * Returns: true for a field the builder reads; false otherwise (a NULL
 * @ctx or @m, an @i past @m's fields too).
 */
RTD_API bool rtd_nettrace_profiler_field_want(void *ctx, const struct rtd_nettrace_metadata *m,
					      size_t i);

/**
 * rtd_nettrace_profiler_seqpoint - tell the builder a sequence point passed
 * @p: the builder
 *
 * Call from your rtd_nettrace_seqpoint_fn. Samples buffered since the
 * previous sequence point are ordered and accounted.
 *
 * Returns: 0, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_profiler_seqpoint(rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_finish - resolve names and fill a one-type profile
 * @p: the builder
 * @out: an empty profile from rtd_profile_new("cpu", "nanoseconds");
 *       stacks are added with frames root first, values in nanoseconds of
 *       thread time summed over threads (dotnetdiag's output)
 *
 * Samples after the last sequence point are accounted too. After it,
 * rtd_nettrace_profiler_profile() still works.
 *
 * Returns: 0, -ENOMEM, or -RTD_E_STATE when called twice.
 */
RTD_API int rtd_nettrace_profiler_finish(rtd_nettrace_profiler *p,
					 struct rtd_profile *out);

/**
 * rtd_nettrace_profiler_profile - the profile of one kind
 * @p: the builder
 * @kind: one RTD_NETTRACE_PROFILE_* bit the builder was made for
 * @err: receives the error when NULL is returned (may be NULL)
 *
 * Resolves names (accounting what is pending first) and builds a new
 * profile with pprof's sample types for the kind, the last one the
 * default: CPU "samples/count" + "wall/nanoseconds" ("cpu/nanoseconds"
 * with @running_only); ALLOC "alloc_objects/count" + "alloc_space/bytes";
 * LOCK and WAIT "contentions/count" + "delay/nanoseconds" (Go's mutex
 * and block profiles); EXCEPTION "exceptions/count". Samples carry their thread id; frames are
 * RTD_FRAME_MANAGED with their addresses, the allocated or thrown type a
 * leaf frame of kind RTD_FRAME_OTHER. No more events are taken after it.
 *
 * Returns: the profile (rtd_profile_free() it), or NULL: -RTD_E_INVAL for
 * a kind the builder does not keep, -ENOMEM, -RTD_E_CAP.
 */
RTD_API struct rtd_profile *
rtd_nettrace_profiler_profile(rtd_nettrace_profiler *p, unsigned kind,
			      int *err);

/**
 * typedef rtd_nettrace_thread_stack_fn - one thread's latest sampled stack
 * @ctx: as given
 * @tid: the thread
 * @frames: its frames, leaf first, "module!Namespace.Method(signature)"
 *          ("?!?" for an address no method covers); valid during the call
 * @n: their count
 *
 * Returns: 0 to go on; anything else stops the walk and is returned.
 */
typedef int (*rtd_nettrace_thread_stack_fn)(void *ctx, uint64_t tid,
					    const char *const *frames,
					    size_t n);

/**
 * rtd_nettrace_profiler_thread_stacks - where every sampled thread was last
 * @p: the builder (made with RTD_NETTRACE_PROFILE_CPU)
 * @fn: called once per thread that has a sample, by thread id
 * @ctx: passed to @fn
 *
 * The managed stack of each thread at its latest ThreadSample: what
 * 'dotnet-stack report' prints. Accounts what is pending first; no more
 * events are taken after it.
 *
 * Returns: 0, -ENOMEM, or what @fn returned.
 */
RTD_API int rtd_nettrace_profiler_thread_stacks(rtd_nettrace_profiler *p,
						rtd_nettrace_thread_stack_fn fn,
						void *ctx);

/* Number of profile kinds: rtd_nettrace_profiler_take() fills one slot
 * per kind, in the order of the RTD_NETTRACE_PROFILE_* bits. */
#define RTD_NETTRACE_PROFILE_KINDS 5

/**
 * rtd_nettrace_profiler_take - the profiles of the events since the last
 * take, for a session that goes on (a continuous profiler's windows)
 * @p: the builder
 * @out: RTD_NETTRACE_PROFILE_KINDS slots: out[0] CPU, out[1] allocations,
 *       out[2] locks, out[3] exceptions, out[4] waits; each receives a new profile (as
 *       rtd_nettrace_profiler_profile() makes it) when the kind has values
 *       since the last take, else NULL
 *
 * Samples buffered since the last sequence point are accounted first;
 * names are resolved with the methods seen so far (events from a rundown
 * run on the side may name them). The values and stacks taken are then
 * dropped, so memory does not grow with the session's length; methods,
 * modules and each thread's state (its previous sample, an open
 * contention or wait) stay, so the next take goes on where this one ended.
 *
 * Returns: the number of samples with a frame no known method covers
 * (named "?!?": a rundown would name them), -ENOMEM, -RTD_E_CAP, or
 * -RTD_E_STATE after the builder has finished.
 */
RTD_API int rtd_nettrace_profiler_take(rtd_nettrace_profiler *p,
				       struct rtd_profile **out);

/**
 * rtd_nettrace_profiler_samples - number of ThreadSample events seen
 * @p: the builder
 *
 * Returns: the count.
 */
RTD_API uint64_t rtd_nettrace_profiler_samples(const rtd_nettrace_profiler *p);

/**
 * rtd_nettrace_profiler_count - events counted into a kind's profile
 * @p: the builder
 * @kind: an RTD_NETTRACE_PROFILE_* bit
 *
 * CPU: the samples accounted (with @running_only, the Managed ones);
 * ALLOC: allocation ticks; LOCK: contentions that ended in the session;
 * EXCEPTION: exceptions thrown; WAIT: waits that ended in the session. Samples still pending before a sequence
 * point are not counted yet.
 *
 * Returns: the count.
 */
RTD_API uint64_t rtd_nettrace_profiler_count(const rtd_nettrace_profiler *p,
					     unsigned kind);

/**
 * rtd_nettrace_profiler_thread_cpu - give the CPU profile the kernel's
 *                                    CPU time of the sampled threads
 * @p: a builder with @running_only
 * @before: rtd_thread_cpu_read() of the process at the session's start
 * @nbefore: its length
 * @after: the same at the session's end
 * @nafter: its length
 *
 * The SampleProfiler does not see the CPU: about every millisecond it
 * suspends the runtime and records each managed thread's state, Managed
 * (in managed code) or External, with its stack. A thread in managed code
 * that is runnable but not running (more threads than CPUs), or spinning
 * in Monitor.Enter's slow path, is Managed all the same, so the thread
 * time of the Managed samples can exceed wall time x CPUs many times.
 * With the kernel's figures, each thread's CPU time in the session is
 * spread over its samples (of either state) by their thread time, and
 * the CPU profile keeps the Managed samples' shares: CPU time as the
 * kernel counted it, in the stacks the sampler saw; never more than the
 * threads really used. A thread missing from @after (it ended during the
 * session) weighs nothing; one missing from @before began in the session.
 * Call before the profile is built.
 *
 * Returns: 0, -RTD_E_INVAL (not @running_only), or -ENOMEM.
 */
RTD_API int rtd_nettrace_profiler_thread_cpu(rtd_nettrace_profiler *p,
					     const struct rtd_thread_cpu *before,
					     size_t nbefore,
					     const struct rtd_thread_cpu *after,
					     size_t nafter);

/**
 * struct rtd_nettrace_cpu_stats - what the CPU profile's total is made of
 * @sz: sizeof(struct rtd_nettrace_cpu_stats), set by the caller
 * @kernel_known: rtd_nettrace_profiler_thread_cpu() was given
 * @thread_ns: the thread time of the samples kept (with @running_only the
 *             Managed ones): what the sampler alone can tell, not CPU
 * @placed_ns: with @kernel_known, the CPU time in those samples (the
 *             profile's total); else equal to @thread_ns
 * @sampled_ns: the CPU time of the sampled threads in the session
 * @process_ns: the CPU time of every thread of the process in it
 * @threads_unknown: sampled threads the kernel gave no figure for
 */
struct rtd_nettrace_cpu_stats {
	size_t sz;
	bool kernel_known;
	uint64_t thread_ns;
	uint64_t placed_ns;
	uint64_t sampled_ns;
	uint64_t process_ns;
	size_t threads_unknown;
};

/**
 * rtd_nettrace_profiler_cpu_stats - the CPU profile's totals
 * @p: the builder (its pending samples are accounted first)
 * @st: filled in; @st->sz set by the caller
 *
 * Returns: 0, -RTD_E_INVAL, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_profiler_cpu_stats(rtd_nettrace_profiler *p,
					    struct rtd_nettrace_cpu_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_PROFILER_H */
