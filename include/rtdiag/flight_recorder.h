/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/flight_recorder.h - the flight recorder wired whole: one
 * process recorded live (rtdiag/recorder.h) into a ring
 * (rtdiag/flight.h), watched by triggers (rtdiag/trigger.h), and the
 * ring written as a timeline file when something goes wrong: on a
 * request (a signal, an HTTP call), when a trigger fires (after @post_ns,
 * spaced by @cooldown_ns), at the stop, or at the target's end (marked
 * incomplete). The recording goes on after each snapshot. 'rtdiag record
 * --ring' and the agent's `flight:` section are this same wiring
 * (docs/flight.md, issue #31).
 *   rtd_flight_recorder *fr;
 *   RTD_OPTS(rtd_recorder_opts, ro, .pid = pid);
 *   RTD_OPTS(rtd_flight_recorder_opts, o, .recorder = &ro,
 *            .ring_ns = 8000000000, .dir = "/var/tmp/flight");
 *   if (rtd_flight_recorder_new(&o, &fr, err, sizeof(err)) == 0 &&
 *       rtd_flight_recorder_start(fr) == 0)
 *       rtd_flight_recorder_run(fr); // until stopped or the target ends
 *   rtd_flight_recorder_free(fr);
 * A snapshot's files: DIR/rtdiag-flight-TIME-pPID-CAUSE[-incomplete][-N].EXT
 * (TIME in UTC to the millisecond, -N when one millisecond holds more
 * than one; EXT .pftrace or .json), and beside it one file per action
 * with the same stem. Each is written to a temporary file
 * (.NAME.rtdiag-XXXXXX) and renamed into place, so a collector watching
 * DIR sees whole files only.
 * Threads: rtd_flight_recorder_run() on one thread; rtd_flight_recorder_take(),
 * rtd_flight_recorder_snapshots() from any other; rtd_flight_recorder_signal()
 * and rtd_flight_recorder_stop() from anywhere, signal handlers too.
 */
#ifndef RTDIAG_FLIGHT_RECORDER_H
#define RTDIAG_FLIGHT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/flight.h"
#include "rtdiag/recorder.h"
#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_flight_recorder rtd_flight_recorder;

/**
 * enum rtd_flight_action - what a snapshot writes beside its timeline
 * @RTD_FLIGHT_ACT_FOLDED: STEM.folded: the ring's CPU samples as folded
 *                         stacks (one line a stack, its count)
 * @RTD_FLIGHT_ACT_PPROF: STEM.pb.gz: the same samples as a gzip pprof
 *                        (samples/count)
 * @RTD_FLIGHT_ACT_DUMP: STEM.dmp: a .NET target's core dump with its heap
 *                       (dotnet-monitor's default dump type), written by
 *                       the runtime's createdump through the diagnostics
 *                       IPC: the path is the target's view of the file
 *                       system (the same for a process outside a
 *                       container)
 * @RTD_FLIGHT_ACT_STACKS: STEM.stacks.txt: a .NET target's managed thread
 *                         stacks now, as 'rtdiag dotnet stack' (and
 *                         dotnet-stack report) prints them: a quarter of
 *                         a second of the runtime's SampleProfiler in a
 *                         session of its own, each thread's latest stack
 * @RTD_FLIGHT_ACT_GCDUMP: STEM.gcdump: a .NET target's GC heap as the
 *                         .gcdump file dotnet-gcdump report and PerfView
 *                         read (rtd_gcheap_gcdump(): the runtime's heap
 *                         walk, a full blocking GC, in a session of its
 *                         own)
 */
enum rtd_flight_action {
	RTD_FLIGHT_ACT_FOLDED = 1u << 0,
	RTD_FLIGHT_ACT_PPROF = 1u << 1,
	RTD_FLIGHT_ACT_DUMP = 1u << 2,
	RTD_FLIGHT_ACT_STACKS = 1u << 3,
	RTD_FLIGHT_ACT_GCDUMP = 1u << 4,
};
#define RTD_FLIGHT_ACT_COUNT 5

/* Caps. */
#define RTD_FLIGHT_MAX_TRIGGERS 16u  /* triggers of one recorder */
#define RTD_FLIGHT_PATH_MAX 1024u    /* a snapshot file's path */
#define RTD_FLIGHT_MAX_LISTED 1024u  /* snapshots listed (the oldest leave the list) */

/**
 * struct rtd_flight_recorder_opts - options for rtd_flight_recorder_new()
 * @sz: sizeof(struct rtd_flight_recorder_opts)
 * @recorder: what to record (required; copied whole, borrowed for the
 *            call): the counter triggers' EventPipe providers are added
 *            after its @providers
 * @ring_ns: how much the ring keeps (required, > 0)
 * @max_bytes: the ring's hard cap (0: RTD_FLIGHT_DEFAULT_MAX_BYTES)
 * @dir: the folder snapshots are written into (required; it must exist)
 * @format: the timeline's format (0: RTD_TIMELINE_FMT_PERFETTO)
 * @triggers: trigger expressions (rtd_trigger_parse()), or NULL
 * @ntriggers: how many (at most RTD_FLIGHT_MAX_TRIGGERS)
 * @post_ns: after a trigger fires, record this long before writing
 * @cooldown_ns: no snapshot by a trigger within this of the last
 *               trigger's
 * @interval_ns: how often counters are published and CPU and memory
 *               read for the triggers (0: 1 s)
 * @max_snapshots: the recording stops after this many (0: no limit)
 * @keep_bytes: the snapshots this recorder wrote are kept under this many
 *              bytes, the oldest removed (0: no cap); the newest is kept
 *              even when it alone is larger
 * @actions: enum rtd_flight_action bits
 * @note: called with a line for a person ("snapshot PATH: ...", a trigger
 *        that fired, one dropped by the cooldown), on the run's thread;
 *        or NULL
 * @note_ctx: passed to @note
 */
struct rtd_flight_recorder_opts {
	size_t sz;
	const struct rtd_recorder_opts *recorder;
	int64_t ring_ns;
	size_t max_bytes;
	const char *dir;
	enum rtd_timeline_format format;
	const char *const *triggers;
	size_t ntriggers;
	int64_t post_ns;
	int64_t cooldown_ns;
	int64_t interval_ns;
	uint64_t max_snapshots;
	uint64_t keep_bytes;
	unsigned actions;
	void (*note)(void *ctx, const char *msg);
	void *note_ctx;
};

/**
 * struct rtd_flight_snapshot_info - one snapshot written
 * @path: its timeline file
 * @cause: what took it: "signal", "request", "interrupt", "exit",
 *         "error", or a trigger's rtd_trigger_cause()
 * @why: a line for a person ("SIGUSR1", "--trigger 'cpu>90%': ...")
 * @unix_ns: when it was written (CLOCK_REALTIME ns)
 * @pid: the process recorded
 * @incomplete: the target ended (or the recording failed) before it
 * @bytes: its files' bytes (the timeline and the actions')
 * @records: records of the ring written
 * @span_ns: the time between the ring's first and last record
 * @actions: the enum rtd_flight_action bits whose files were written
 * @action_err: why an action asked for was not written, "" when none
 */
struct rtd_flight_snapshot_info {
	char path[RTD_FLIGHT_PATH_MAX];
	char cause[64];
	char why[512];
	int64_t unix_ns;
	int pid;
	bool incomplete;
	uint64_t bytes;
	uint64_t records;
	int64_t span_ns;
	unsigned actions;
	char action_err[256];
};

/**
 * rtd_flight_recorder_new - set a flight recorder up (nothing runs yet)
 * @opts: options
 * @out: gets the recorder
 * @err: gets a message saying what is wrong (may be NULL)
 * @errlen: size of @err
 * Parses the triggers, opens the recording (rtd_recorder_new()) and makes
 * the ring.
 * Returns: 0, -RTD_E_INVAL (bad @opts), -RTD_E_FORMAT (a trigger: @err
 * names it), -RTD_E_CAP (too many triggers), the recorder's errors, or
 * -ENOMEM.
 */
RTD_API int rtd_flight_recorder_new(const struct rtd_flight_recorder_opts *opts,
				    rtd_flight_recorder **out, char *err, size_t errlen);

/**
 * rtd_flight_recorder_recorder - the recording underneath
 * @fr: the flight recorder
 * Returns: its recorder (rtd_recorder_warnings(), errors), owned by @fr.
 */
RTD_API rtd_recorder *rtd_flight_recorder_recorder(rtd_flight_recorder *fr);

/**
 * rtd_flight_recorder_start - start recording
 * @fr: the flight recorder
 * Returns: 0, or rtd_recorder_start()'s error (rtd_recorder_errmsg() of
 * rtd_flight_recorder_recorder() says more).
 */
RTD_API int rtd_flight_recorder_start(rtd_flight_recorder *fr);

/* What rtd_flight_recorder_run() returns when the target ended first. */
#define RTD_FLIGHT_RUN_ENDED 1

/**
 * rtd_flight_recorder_run - record until the stop or the target's end
 * @fr: the flight recorder, started
 * Feeds the ring and the triggers, writes the snapshots asked for, trims
 * the ring as time passes. At rtd_flight_recorder_stop() it writes a last
 * snapshot (cause "interrupt") when asked to; at the target's end (or a
 * recording that failed) a last one marked incomplete (cause "exit",
 * "error"); after @max_snapshots none more.
 * Returns: 0 (stopped, or @max_snapshots taken), RTD_FLIGHT_RUN_ENDED
 * (the target ended or the recording failed: the last snapshot was
 * written, marked incomplete), or the last snapshot's error.
 */
RTD_API int rtd_flight_recorder_run(rtd_flight_recorder *fr);

/**
 * rtd_flight_recorder_signal - a snapshot at the run's next turn (cause
 * "signal", why "SIGUSR1")
 * @fr: the flight recorder
 * Async-signal-safe: it sets a flag the run looks at every 100 ms at
 * most.
 */
RTD_API void rtd_flight_recorder_signal(rtd_flight_recorder *fr);

/**
 * rtd_flight_recorder_stop - end the run
 * @fr: the flight recorder
 * @last_snapshot: write a last snapshot (cause "interrupt", why
 *                 "Ctrl-C") before rtd_flight_recorder_run() returns
 * Async-signal-safe.
 */
RTD_API void rtd_flight_recorder_stop(rtd_flight_recorder *fr, bool last_snapshot);

/**
 * rtd_flight_recorder_take - a snapshot now, and where it went
 * @fr: the flight recorder, its run going on another thread
 * @cause: the cause in its file name ([A-Za-z0-9._-], at most 63)
 * @why: a line for a person, in the snapshot's rtdiag/snapshot instant
 * @timeout_ms: wait at most this long (0: 60 s)
 * @out: gets the snapshot's description
 * Requests that come together may share one snapshot (the first one's
 * cause).
 * Returns: 0, -RTD_E_INVAL (a bad @cause), -RTD_E_STATE (the run is not
 * going on), -ETIMEDOUT, or the snapshot's error.
 */
RTD_API int rtd_flight_recorder_take(rtd_flight_recorder *fr, const char *cause,
				     const char *why, int timeout_ms,
				     struct rtd_flight_snapshot_info *out);

/**
 * rtd_flight_recorder_snapshots - the snapshots written and still kept
 * @fr: the flight recorder
 * @out: gets up to @max of them, oldest first (may be NULL with @max 0)
 * @max: room in @out
 * Snapshots removed by @keep_bytes are not listed; past
 * RTD_FLIGHT_MAX_LISTED the oldest leave the list (their files stay).
 * Returns: how many there are (more than @max when @out was too small).
 */
RTD_API size_t rtd_flight_recorder_snapshots(rtd_flight_recorder *fr,
					     struct rtd_flight_snapshot_info *out, size_t max);

/**
 * struct rtd_flight_recorder_stats - what a flight recorder did
 * @taken: snapshots written
 * @failed: snapshots that could not be written
 * @removed: snapshots removed to keep under @keep_bytes
 * @kept_bytes: the bytes of the snapshots listed now
 * @ring: the ring's counters (struct rtd_flight_stats), as of the run's
 *        last turn
 */
struct rtd_flight_recorder_stats {
	uint64_t taken, failed, removed, kept_bytes;
	struct rtd_flight_stats ring;
};

/**
 * rtd_flight_recorder_stats - counters now (any thread)
 * @fr: the flight recorder
 * @out: filled in
 */
RTD_API void rtd_flight_recorder_stats(rtd_flight_recorder *fr,
				       struct rtd_flight_recorder_stats *out);

/**
 * rtd_flight_action_from_name - an action by its name
 * @name: "folded", "pprof", "dump", "stacks"
 * Returns: its enum rtd_flight_action bit, or 0 for none.
 */
RTD_API unsigned rtd_flight_action_from_name(const char *name);

/**
 * rtd_flight_action_name - an action's name
 * @action: one enum rtd_flight_action bit
 * Returns: "folded", "pprof", "dump", "stacks", or NULL.
 */
RTD_API const char *rtd_flight_action_name(unsigned action);

/**
 * rtd_flight_recorder_free - stop, undo and free
 * @fr: the flight recorder (its run returned, or never started); NULL
 *      does nothing
 */
RTD_API void rtd_flight_recorder_free(rtd_flight_recorder *fr);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_FLIGHT_RECORDER_H */
