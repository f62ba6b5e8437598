/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_monitor.h - the perf monitor: rings, events, the run loop.
 *
 * One struct rtd_perf_monitor owns one ring buffer per online CPU and any
 * number of events (tracepoints, uprobes, kprobes, counters). Every event of
 * the monitor is opened once per CPU (times once per pid or cgroup when the
 * monitor is scoped) and its samples are redirected into that CPU's ring.
 * rtd_perf_monitor_run() reads the rings, decodes each record and calls
 * back once per record, in timestamp order across CPUs.
 *
 * Threads and signals: a monitor is used from one thread, except
 * rtd_perf_monitor_stop(), which may be called from any thread or from a
 * signal handler.
 *
 * The events a monitor takes have headers of their own:
 * rtdiag/perf_tracepoint.h, perf_probe.h, perf_counter.h, perf_sampler.h;
 * perf trace's system calls: rtdiag/perf_syscalls.h.
 */
#ifndef RTDIAG_PERF_MONITOR_H
#define RTDIAG_PERF_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/perf_sample.h"

#ifdef __cplusplus
extern "C" {
#endif

struct perf_event_attr;
struct rtd_perf_monitor;
struct rtd_perf_event;

/* Flags for rtd_perf_opts.flags. */
enum rtd_perf_flags {
	/* follow the scoped pids' children (attr.inherit) */
	RTD_PERF_INHERIT = 1u << 0,
	/* events start counting at the scoped process's next exec()
	 * (attr.enable_on_exec): the way to trace `-- COMMAND` from its first
	 * instruction; implies events start disabled */
	RTD_PERF_ENABLE_ON_EXEC = 1u << 1,
	/* events are registered disabled; rtd_perf_monitor_enable() starts them */
	RTD_PERF_START_DISABLED = 1u << 2,
	/* the first sampling event also asks for COMM (with exec), FORK and
	 * EXIT records: thread names as they change */
	RTD_PERF_TRACK_COMM = 1u << 3,
	/* a thread of the monitor's own copies records out of the rings as
	 * they come (rtd_perf_opts.copy_cap) while run()'s thread decodes
	 * and delivers them: a slow callback, or a delayed caller thread,
	 * no longer makes the kernel drop records. Delivery, order and loss
	 * counting are those of the single thread. */
	RTD_PERF_READER_THREAD = 1u << 4,
	/* with pids: every sampling event is opened once per CPU for all
	 * tasks, and the records of processes out of scope are dropped
	 * before delivery, so that no event sits in a scoped task's own
	 * perf context (each context switch of a task with events pays for
	 * them: +43% on a pipe ping-pong for a dummy event). The scope
	 * follows the FORK records of the scoped processes' children with
	 * RTD_PERF_INHERIT, and starts at the COMM record of their exec
	 * with RTD_PERF_ENABLE_ON_EXEC; run() returns once every scoped pid
	 * has exited (a pidfd each; Linux 5.3). Counters are refused: they
	 * cannot be filtered. Costs a record of every process's mappings,
	 * names and tasks when the events ask for them. */
	RTD_PERF_SCOPE_CPU_WIDE = 1u << 5,
};

/* RTD_PERF_READER_THREAD: the copies' size, all CPUs, by default. */
#define RTD_PERF_COPY_CAP_DEFAULT ((size_t)64 << 20)

/**
 * struct rtd_perf_opts - options for rtd_perf_monitor_new()
 * @sz: sizeof(struct rtd_perf_opts), so old callers keep working
 * @pids: processes to observe; none (and no cgroups) means the whole system
 * @npids: number of @pids
 * @cgroups: cgroup directories to observe: absolute paths, or paths
 *           relative to the cgroup v2 mount (v1: relative to the perf_event
 *           controller's mount); exclusive with @pids
 * @ncgroups: number of @cgroups
 * @ring_pages: data pages per CPU ring, a power of two (0: perf's
 *              default, rtd_perf_default_ring_pages())
 * @wakeup_bytes: wake the reader when this many bytes wait in a ring
 *                (0: a quarter of the ring); a watermark, never per record
 * @max_latency_ms: longest a quiet ring's records wait before delivery
 *                  (0: 100)
 * @flags: RTD_PERF_* flags
 * @tracefs_dir: tracefs mount point (NULL: found, and mounted if missing)
 * @cgroup_dir: cgroup v2 mount point (NULL: found in /proc/self/mountinfo)
 * @cgroup_v1_dir: cgroup v1 perf_event controller mount (NULL: found)
 * @perf_event_dir: PMU directory (NULL: /sys/bus/event_source/devices)
 * @default_attr: template merged into every event's attr (sample_type bits
 *                such as PERF_SAMPLE_CALLCHAIN, exclude_* bits, ...); may be
 *                NULL
 * @copy_cap: RTD_PERF_READER_THREAD: bytes the reader thread may hold,
 *            all CPUs together (0: RTD_PERF_COPY_CAP_DEFAULT), split
 *            into a power-of-two copy per CPU of at least a ring; when a
 *            CPU's copy is full its ring is left to fill and the kernel
 *            drops and counts records as without the thread
 */
struct rtd_perf_opts {
	size_t sz;
	const pid_t *pids;
	size_t npids;
	const char *const *cgroups;
	size_t ncgroups;
	unsigned ring_pages;
	unsigned wakeup_bytes;
	unsigned max_latency_ms;
	unsigned flags;
	const char *tracefs_dir;
	const char *cgroup_dir;
	const char *cgroup_v1_dir;
	const char *perf_event_dir;
	const struct perf_event_attr *default_attr;
	size_t copy_cap;
};

/* What an event is. */
enum rtd_perf_event_kind {
	RTD_PERF_TRACEPOINT = 1,
	RTD_PERF_UPROBE,  /* also uretprobes */
	RTD_PERF_KPROBE,  /* also kretprobes */
	RTD_PERF_COUNTER, /* software, hardware or raw PMU counter */
	RTD_PERF_SAMPLER, /* a sampling event with call chains */
};

/**
 * struct rtd_perf_stats - counters of a monitor
 * @sz: sizeof(struct rtd_perf_stats), set by the caller
 * @records: records read from all rings
 * @samples: PERF_RECORD_SAMPLE records delivered
 * @lost: records lost: the larger of the PERF_RECORD_LOST sums and the
 *        kernel's per-event counters (PERF_FORMAT_LOST, read when run()
 *        returns: they include losses at the very end, which the kernel
 *        reports in a LOST record only once it next writes to the ring;
 *        for inherited events the kernel counts the parent's only)
 * @lost_samples: PERF_RECORD_LOST_SAMPLES sums
 * @lost_records: LOST records seen
 * @lost_in_records: the PERF_RECORD_LOST sums alone
 * @rounds: ring-reading rounds
 * @wakeups: poll() returns with data
 * @late: records delivered after a newer one had been (should stay 0;
 *        records are held in the rings until perf's finished-round rule
 *        says no older one can still arrive)
 * @bad_records: records that failed to decode (skipped, counted)
 * @max_latency_ns: longest delay between a record's timestamp and its delivery
 * @nrings: rings (online CPUs)
 * @ring_lost: per ring lost counts (first min(nrings, 256) rings)
 * @ring_pages: data pages of each ring
 * @copy_bytes: RTD_PERF_READER_THREAD: each CPU's copy (0: no thread)
 * @copy_max: the most bytes that waited in one CPU's copy
 * @copy_full: reader passes that found a copy full (its ring then
 *             fills; what the kernel drops is in @lost)
 */
struct rtd_perf_stats {
	size_t sz;
	uint64_t records;
	uint64_t samples;
	uint64_t lost;
	uint64_t lost_samples;
	uint64_t lost_records;
	uint64_t lost_in_records;
	uint64_t rounds;
	uint64_t wakeups;
	uint64_t late;
	uint64_t bad_records;
	uint64_t max_latency_ns;
	uint32_t nrings;
	uint64_t ring_lost[256];
	uint32_t ring_pages;
	uint64_t copy_bytes;
	uint64_t copy_max;
	uint64_t copy_full;
};

/**
 * rtd_perf_default_ring_pages - perf's default ring size, in data pages
 *
 * What perf record and perf trace map per CPU when not told (-m): the
 * per-user limit kernel.perf_event_mlock_kb less one page, in pages,
 * rounded down to a power of two (128 pages, 512 KiB, with the kernel's
 * default 516 and 4 KiB pages); 512 KiB when the limit cannot be read.
 *
 * Returns: the page count, at least 1.
 */
RTD_API unsigned rtd_perf_default_ring_pages(void);

/**
 * rtd_perf_monitor_new - create a monitor: open no event yet, map no ring yet
 * @opts: options, or NULL for the whole system with defaults
 * @out: receives the monitor
 *
 * Reads the online CPUs from /sys/devices/system/cpu/online (gaps
 * allowed), finds tracefs and the cgroup mounts, opens the scope's cgroup
 * directories, and removes probes left by rtdiag processes that have died.
 *
 * Returns: 0, -RTD_E_INVAL for bad options, -RTD_E_NOTFOUND for a missing
 * cgroup, or a negative errno.
 */
RTD_API int rtd_perf_monitor_new(const struct rtd_perf_opts *opts,
				 struct rtd_perf_monitor **out);

/**
 * rtd_perf_monitor_free - close every event, unmap the rings, remove the
 * probes this monitor created
 * @m: monitor, or NULL (nothing happens)
 */
RTD_API void rtd_perf_monitor_free(struct rtd_perf_monitor *m);

/**
 * rtd_perf_monitor_errmsg - what went wrong in the last failed call
 * @m: monitor
 *
 * Returns: a message naming the event, file or filter concerned ("" when
 * none); valid until the next call on @m.
 */
RTD_API const char *rtd_perf_monitor_errmsg(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_monitor_remove - unregister an event, closing its descriptors
 * (and removing its tracefs probe)
 * @m: monitor
 * @ev: an event of @m (invalid afterwards); removing a group leader
 *      removes its members too
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_monitor_remove(struct rtd_perf_monitor *m,
				    struct rtd_perf_event *ev);

/**
 * rtd_perf_monitor_enable - enable one event, or all when @ev is NULL
 * @m: monitor
 * @ev: event or NULL
 *
 * Returns: 0 or a negative errno.
 */
RTD_API int rtd_perf_monitor_enable(struct rtd_perf_monitor *m,
				    struct rtd_perf_event *ev);

/**
 * rtd_perf_monitor_disable - disable one event, or all when @ev is NULL
 * @m: monitor
 * @ev: event or NULL
 *
 * Returns: 0 or a negative errno.
 */
RTD_API int rtd_perf_monitor_disable(struct rtd_perf_monitor *m,
				     struct rtd_perf_event *ev);

/**
 * rtd_perf_monitor_run - read the rings and deliver records in time order
 * @m: monitor
 * @fn: called once per record (samples and the other record types)
 * @ctx: passed to @fn
 *
 * Blocks until rtd_perf_monitor_stop() is called, @fn returns non-zero,
 * or every event's descriptors hung up (the scoped processes are gone).
 * Records from all CPUs are merged by timestamp: a record is delivered
 * once every ring has been read past the time it was read at (perf's
 * finished-round rule), or when the monitor stops (the rings are drained).
 *
 * A run honours the stops asked before its loop ends, whatever ended it;
 * a stop asked later (while it drains the rings, @fn included, or after
 * it returned) is kept: the next run() delivers what the rings hold and
 * returns at once.
 *
 * Returns: 0 when stopped or hung up, @fn's non-zero value, or a negative
 * errno.
 */
RTD_API int rtd_perf_monitor_run(struct rtd_perf_monitor *m,
				 rtd_perf_sample_fn fn, void *ctx);

/**
 * typedef rtd_perf_idle_fn - told when the run loop is about to sleep
 * @ctx: the pointer given to rtd_perf_monitor_run()
 *
 * The place to flush buffered output: nothing more is delivered until
 * new records arrive.
 */
typedef void (*rtd_perf_idle_fn)(void *ctx);

/**
 * rtd_perf_monitor_set_idle - set (or clear with NULL) the idle callback
 * @m: monitor
 * @fn: called from rtd_perf_monitor_run() each time it goes to sleep
 */
RTD_API void rtd_perf_monitor_set_idle(struct rtd_perf_monitor *m,
				       rtd_perf_idle_fn fn);

/**
 * rtd_perf_monitor_stop - make rtd_perf_monitor_run() return
 * @m: monitor
 * @wait: block until run() has returned (never from a signal handler or
 *        from the thread running the loop); false only signals
 *
 * A stop that comes before the running run()'s loop has ended is that
 * run's (it drains the rings and returns); one that comes later (while
 * it drains, @fn included, after it returned, or before any run) is kept:
 * the next rtd_perf_monitor_run() delivers what the rings hold and
 * returns at once. Stops that come before one run's loop ends count as
 * one.
 *
 * Async-signal-safe when @wait is false (a lock-free atomic add and an
 * eventfd write).
 */
RTD_API void rtd_perf_monitor_stop(struct rtd_perf_monitor *m, bool wait);

/**
 * rtd_perf_monitor_stats - counters of records, losses and ordering
 * @m: monitor
 * @st: filled up to @st->sz bytes (set sz first)
 */
RTD_API void rtd_perf_monitor_stats(const struct rtd_perf_monitor *m,
				    struct rtd_perf_stats *st);

/**
 * rtd_perf_monitor_ncpus - the number of rings (online CPUs)
 * @m: monitor
 *
 * Returns: count of rings.
 */
RTD_API unsigned rtd_perf_monitor_ncpus(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_monitor_user_only - did the kernel make events user-space only?
 * @m: monitor
 *
 * Returns: true when an event or the rings had to be opened with
 * exclude_kernel because the kernel refused more (perf_event_paranoid).
 */
RTD_API bool rtd_perf_monitor_user_only(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_event_name - the event's name ("sched:sched_switch", probe name)
 * @ev: event
 *
 * Returns: a string owned by the event.
 */
RTD_API const char *rtd_perf_event_name(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_kind - what the event is
 * @ev: event
 *
 * Returns: an enum rtd_perf_event_kind value.
 */
RTD_API enum rtd_perf_event_kind
rtd_perf_event_kind(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_symbol - a probe's symbol ("openat", "main+4"), or NULL
 * @ev: event
 *
 * Returns: a string owned by the event, or NULL for non-probes.
 */
RTD_API const char *rtd_perf_event_symbol(const struct rtd_perf_event *ev);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_MONITOR_H */
