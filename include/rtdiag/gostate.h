/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gostate.h - the goroutine state tracker (rtd_gostate): the
 * ordered events of a Go execution trace, either generation, as Go's
 * high-level events, and the table of live goroutines.
 *
 * It is the first of the two pieces of rtdiag/goanalysis.h, which
 * includes it and says more; the analyses (rtd_goan) are built on it.
 */
#ifndef RTDIAG_GOSTATE_H
#define RTDIAG_GOSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/gotrace_decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No goroutine (Go's NoGoroutine). */
#define RTD_GO_NOG UINT64_MAX

/* Caps, each named for what it bounds (errors with a message when hit). */
#define RTD_GOAN_MAX_STACKS (1u << 24)   /* distinct interned stacks */
#define RTD_GOAN_MAX_FRAMES (1u << 24)   /* distinct frame PCs */
#define RTD_GOAN_MAX_STRINGS (1u << 22)  /* distinct names (functions, files, reasons) */
#define RTD_GOAN_MAX_GOROUTINES (1u << 24) /* live goroutines tracked at once */
#define RTD_GOAN_MAX_REGIONS 4096u       /* open regions on one goroutine */
#define RTD_GOAN_MAX_WINDOW_POINTS (1u << 26) /* MMU: utilization changes inside the largest window */

/**
 * enum rtd_go_gstate - a goroutine's state (Go's trace.GoState)
 * @RTD_GO_G_UNDETERMINED: not known (the trace began with it alive)
 * @RTD_GO_G_NOTEXIST: does not exist (not created yet, or ended)
 * @RTD_GO_G_RUNNABLE: ready, waiting for a P
 * @RTD_GO_G_RUNNING: running on a thread and P
 * @RTD_GO_G_WAITING: blocked (the transition's reason says on what)
 * @RTD_GO_G_SYSCALL: in a system call
 */
enum rtd_go_gstate {
	RTD_GO_G_UNDETERMINED = 0,
	RTD_GO_G_NOTEXIST,
	RTD_GO_G_RUNNABLE,
	RTD_GO_G_RUNNING,
	RTD_GO_G_WAITING,
	RTD_GO_G_SYSCALL,
};

/**
 * enum rtd_go_pstate - a proc's state (Go's trace.ProcState)
 * @RTD_GO_P_UNDETERMINED: not known
 * @RTD_GO_P_NOTEXIST: does not exist
 * @RTD_GO_P_RUNNING: running (a goroutine may be on it)
 * @RTD_GO_P_IDLE: idle
 */
enum rtd_go_pstate {
	RTD_GO_P_UNDETERMINED = 0,
	RTD_GO_P_NOTEXIST,
	RTD_GO_P_RUNNING,
	RTD_GO_P_IDLE,
};

/**
 * enum rtd_goev_kind - what a high-level event is (Go's trace.EventKind)
 * @RTD_GOEV_SYNC: a generation boundary (Go's reader's Sync event)
 * @RTD_GOEV_METRIC: @name = "/sched/gomaxprocs:threads",
 *                   "/memory/classes/heap/objects:bytes" or
 *                   "/gc/heap/goal:bytes"; @value
 * @RTD_GOEV_LABEL: @name = a goroutine label ("GC (dedicated)"), for @g
 * @RTD_GOEV_SAMPLE: a CPU sample: @stack, on @g / @p / @m
 * @RTD_GOEV_RANGE_BEGIN: a range starts: @name ("GC concurrent mark
 *                        phase", "GC incremental sweep", "GC mark assist",
 *                        "stop-the-world (REASON)"), @scope, @scope_id
 * @RTD_GOEV_RANGE_ACTIVE: a range that was already going when the
 *                         generation (trace) began
 * @RTD_GOEV_RANGE_END: a range ends
 * @RTD_GOEV_TASK_BEGIN: @task begins, @parent, @name its type
 * @RTD_GOEV_TASK_END: @task ends (@parent and @name when its begin is known)
 * @RTD_GOEV_REGION_BEGIN: a region of type @name in @task starts on @g
 * @RTD_GOEV_REGION_END: the region ends
 * @RTD_GOEV_LOG: a log message: @task, @name = category, @message
 * @RTD_GOEV_STATE: a state transition of goroutine or proc @id
 *                  (@resource), @from -> @to, @reason, @tstack
 */
enum rtd_goev_kind {
	RTD_GOEV_NONE = 0,
	RTD_GOEV_SYNC,
	RTD_GOEV_METRIC,
	RTD_GOEV_LABEL,
	RTD_GOEV_SAMPLE,
	RTD_GOEV_RANGE_BEGIN,
	RTD_GOEV_RANGE_ACTIVE,
	RTD_GOEV_RANGE_END,
	RTD_GOEV_TASK_BEGIN,
	RTD_GOEV_TASK_END,
	RTD_GOEV_REGION_BEGIN,
	RTD_GOEV_REGION_END,
	RTD_GOEV_LOG,
	RTD_GOEV_STATE,
};

/* What a transition or range is about (Go's trace.ResourceKind). */
enum rtd_goev_resource {
	RTD_GOEV_RES_NONE = 0,
	RTD_GOEV_RES_GOROUTINE,
	RTD_GOEV_RES_PROC,
	RTD_GOEV_RES_THREAD,
};

/**
 * struct rtd_goev - one high-level event (Go's internal/trace Event)
 * @kind: enum rtd_goev_kind
 * @ts: time in nanoseconds (strictly rising for old-format traces, as Go
 *      1.23's conversion makes them; see rtd_gostate_next())
 * @g: the goroutine running when it happened (the state *before* a
 *     transition), RTD_GO_NOG for none
 * @p: the proc, -1 for none
 * @m: the thread, -1 for none
 * @stack: the interned stack of the event's execution context (Go's
 *         Event.Stack()), 0 for none
 * @resource: for @RTD_GOEV_STATE, enum rtd_goev_resource
 * @id: the goroutine or proc that changes state
 * @from: its old state (enum rtd_go_gstate or enum rtd_go_pstate)
 * @to: its new state
 * @reason: why ("chan receive", "network", "sync", "preempted", ... as the
 *          runtime names it; "" when none); old-format traces get Go 1.23's
 *          names for their event types
 * @tstack: the transition's stack (Go's StateTransition.Stack): where the
 *          goroutine is (the start function's frame for a creation), 0 none
 * @name: range name, task or region type, label, log category or metric
 * @scope: a range's scope (enum rtd_goev_resource)
 * @scope_id: the goroutine or proc of the range's scope
 * @task: the task of a task, region or log event
 * @parent: a task's parent (0: none or not known)
 * @message: a log's message
 * @value: a metric's value
 * @src: the ordered event this came from (borrowed like the rest; for the
 *       events Go's readers synthesise it is the event that implied them)
 */
struct rtd_goev {
	unsigned kind;
	int64_t ts;
	uint64_t g;
	int64_t p, m;
	uint32_t stack;
	unsigned resource;
	uint64_t id;
	uint8_t from, to;
	const char *reason;
	uint32_t tstack;
	const char *name;
	unsigned scope;
	int64_t scope_id;
	uint64_t task, parent;
	const char *message;
	uint64_t value;
	const struct rtd_gotrace_event *src;
};

/**
 * struct rtd_goframe - one frame of an interned stack
 * @pc: program counter
 * @fn: function name ("" when the trace does not say)
 * @file: source file ("" when unknown)
 * @line: source line
 */
struct rtd_goframe {
	uint64_t pc;
	const char *fn;
	const char *file;
	uint64_t line;
};

/**
 * struct rtd_goroutine_info - what the tracker knows about a live goroutine
 * @id: the goroutine
 * @state: enum rtd_go_gstate now
 * @since: when it entered @state (ns)
 * @reason: why it is waiting or stopped ("" when not; valid while the
 *          tracker lives)
 * @stack: the stack of its last transition that had one (interned)
 * @start_fn: its start function, from the first stack that showed it
 *            ("" until then; valid while the tracker lives)
 * @start_pc: that frame's PC
 * @created: when it was created, or first seen (ns)
 */
struct rtd_goroutine_info {
	uint64_t id;
	unsigned state;
	int64_t since;
	const char *reason;
	uint32_t stack;
	const char *start_fn;
	uint64_t start_pc;
	int64_t created;
};

typedef struct rtd_gostate rtd_gostate;

/**
 * rtd_gostate_new - create a goroutine state tracker
 * @d: the ordered decoder whose events will be fed (its string and stack
 *     tables are read while each event is fed); it must outlive the tracker
 *
 * Returns: the tracker, or NULL when out of memory.
 */
RTD_API rtd_gostate *rtd_gostate_new(rtd_gotrace_dec *d);

/**
 * rtd_gostate_free - free a tracker
 * @s: the tracker, or NULL (no-op)
 */
RTD_API void rtd_gostate_free(rtd_gostate *s);

/**
 * rtd_gostate_feed - take the next ordered event
 * @s: the tracker
 * @ev: the event, as rtd_gotrace_dec_next() gave it in ordered mode
 *
 * Queues the high-level events it implies (none for dictionary events,
 * up to a few for others); read them with rtd_gostate_next() before the
 * next feed. Old-format system calls: Go's reader looks ahead for the
 * goroutine's next event to learn whether the call blocked; the tracker
 * waits for that event instead, so the syscall's transitions come out
 * with it (their times are the syscall's own, earlier than events of
 * other goroutines given out meanwhile).
 *
 * Returns: 0, -ENOMEM, or -RTD_E_CAP (a cap above; rtd_gostate_error()
 * says which).
 */
RTD_API int rtd_gostate_feed(rtd_gostate *s, const struct rtd_gotrace_event *ev);

/**
 * rtd_gostate_finish - end of the ordered events
 * @s: the tracker
 *
 * Queues what was waiting (old-format syscalls whose goroutine had no
 * later event: Go gives them 1 ns).
 * Returns: 0 or a negative error.
 */
RTD_API int rtd_gostate_finish(rtd_gostate *s);

/**
 * rtd_gostate_next - the next high-level event
 * @s: the tracker
 * @out: filled in; borrowed until the next feed/next/finish
 *
 * Returns: 1 with an event, 0 when the queue is empty.
 */
RTD_API int rtd_gostate_next(rtd_gostate *s, struct rtd_goev *out);

/**
 * rtd_gostate_stack - the frames of an interned stack
 * @s: the tracker
 * @id: a stack id from an event (0: none)
 * @frames: gets the frames, leaf first (valid until the next call of
 *          rtd_gostate_stack() on @s)
 *
 * Returns: the frame count (0 for id 0 or an unknown id).
 */
RTD_API size_t rtd_gostate_stack(const rtd_gostate *s, uint32_t id,
				 const struct rtd_goframe **frames);

/**
 * rtd_gostate_goroutine - what the tracker knows about a goroutine now
 * @s: the tracker
 * @g: the goroutine
 * @out: filled in
 *
 * Returns: 0, or -RTD_E_NOTFOUND when it is not alive (ended, or never
 * seen).
 */
RTD_API int rtd_gostate_goroutine(const rtd_gostate *s, uint64_t g,
				  struct rtd_goroutine_info *out);

/**
 * rtd_gostate_error - message for the last error
 * @s: the tracker
 *
 * Returns: the message ("" when none).
 */
RTD_API const char *rtd_gostate_error(const rtd_gostate *s);

/**
 * rtd_go_gstate_name - a goroutine state's name
 * @state: enum rtd_go_gstate
 *
 * Returns: "Undetermined", "NotExist", "Runnable", "Running", "Waiting",
 * "Syscall" (Go's names), or "Bad".
 */
RTD_API const char *rtd_go_gstate_name(unsigned state);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOSTATE_H */
