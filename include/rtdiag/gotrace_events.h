/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_events.h - the event tables of Go's execution trace, one
 * per format generation, as X-macros: rtdiag/gotrace.h makes the enums of
 * type numbers from them, the decoder its names and argument lists, so
 * each fact is written once.
 *
 * Old format (Go 1.5-1.21; Go 1.19's internal/trace/parser.go
 * EventDescriptions, the 1.21 additions from golang/exp
 * trace/internal/oldtrace):
 *
 *	X(ID, number, "Name", first version, has a stack, args, string args)
 *
 * New format (Go 1.22-1.26; golang/go src/internal/trace/tracev2/events.go):
 *
 *	X(ID, number, "Name", kind, start, args, stack args, string args)
 *
 * ID names the constant (RTD_GO_EV_<ID>, RTD_GO2_EV_<ID>). The kind is
 * UNTIMED (no time delta: batch and dictionary framing, CPU samples),
 * FRAMES (a Stack: its
 * frames follow), DATA (bytes follow), TIMED (a time delta first) or EXP
 * (an experimental timed event). start is the ID of the event a range's
 * End or Active event closes (or NONE). Argument lists are
 * RTD_GOTRACE_ARGS("a", "b") or RTD_GOTRACE_NOARGS; the new format's stack
 * and string arguments are RTD_GOTRACE_AT(index...) of those arguments
 * (the time delta counted) or RTD_GOTRACE_NONE, and a string argument is
 * also named, without the "_string" of its id, by RTD_GOTRACE_SARGS.
 * These helper names are only tokens here: what expands a table defines
 * what they mean.
 */
#ifndef RTDIAG_GOTRACE_EVENTS_H
#define RTDIAG_GOTRACE_EVENTS_H

#define RTD_GOTRACE1_EVENTS(X)                                                                  \
	X(NONE, 0, "None", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)                     \
	X(BATCH, 1, "Batch", 1005, 0, RTD_GOTRACE_ARGS("p", "ticks"), RTD_GOTRACE_NOARGS)       \
	X(FREQUENCY, 2, "Frequency", 1005, 0, RTD_GOTRACE_ARGS("freq"), RTD_GOTRACE_NOARGS)     \
	X(STACK, 3, "Stack", 1005, 0, RTD_GOTRACE_ARGS("id", "siz"), RTD_GOTRACE_NOARGS)        \
	X(GOMAXPROCS, 4, "Gomaxprocs", 1005, 1, RTD_GOTRACE_ARGS("procs"), RTD_GOTRACE_NOARGS)  \
	X(PROC_START, 5, "ProcStart", 1005, 0, RTD_GOTRACE_ARGS("thread"), RTD_GOTRACE_NOARGS)  \
	X(PROC_STOP, 6, "ProcStop", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)            \
	X(GC_START, 7, "GCStart", 1005, 1, RTD_GOTRACE_ARGS("seq"), RTD_GOTRACE_NOARGS)         \
	X(GC_DONE, 8, "GCDone", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)                \
	X(GC_STW_START, 9, "GCSTWStart", 1005, 0, RTD_GOTRACE_ARGS("kindid"),                   \
	  RTD_GOTRACE_ARGS("kind"))                                                             \
	X(GC_STW_DONE, 10, "GCSTWDone", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)        \
	X(GC_SWEEP_START, 11, "GCSweepStart", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)  \
	X(GC_SWEEP_DONE, 12, "GCSweepDone", 1005, 0, RTD_GOTRACE_ARGS("swept", "reclaimed"),    \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_CREATE, 13, "GoCreate", 1005, 1, RTD_GOTRACE_ARGS("g", "stack"), RTD_GOTRACE_NOARGS) \
	X(GO_START, 14, "GoStart", 1005, 0, RTD_GOTRACE_ARGS("g", "seq"), RTD_GOTRACE_NOARGS)   \
	X(GO_END, 15, "GoEnd", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)                 \
	X(GO_STOP, 16, "GoStop", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)               \
	X(GO_SCHED, 17, "GoSched", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)             \
	X(GO_PREEMPT, 18, "GoPreempt", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)         \
	X(GO_SLEEP, 19, "GoSleep", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)             \
	X(GO_BLOCK, 20, "GoBlock", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)             \
	X(GO_UNBLOCK, 21, "GoUnblock", 1005, 1, RTD_GOTRACE_ARGS("g", "seq"), RTD_GOTRACE_NOARGS) \
	X(GO_BLOCK_SEND, 22, "GoBlockSend", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)    \
	X(GO_BLOCK_RECV, 23, "GoBlockRecv", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)    \
	X(GO_BLOCK_SELECT, 24, "GoBlockSelect", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS) \
	X(GO_BLOCK_SYNC, 25, "GoBlockSync", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)    \
	X(GO_BLOCK_COND, 26, "GoBlockCond", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)    \
	X(GO_BLOCK_NET, 27, "GoBlockNet", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)      \
	X(GO_SYSCALL, 28, "GoSysCall", 1005, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)         \
	X(GO_SYS_EXIT, 29, "GoSysExit", 1005, 0, RTD_GOTRACE_ARGS("g", "seq", "ts"),            \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_SYS_BLOCK, 30, "GoSysBlock", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)      \
	X(GO_WAITING, 31, "GoWaiting", 1005, 0, RTD_GOTRACE_ARGS("g"), RTD_GOTRACE_NOARGS)      \
	X(GO_IN_SYSCALL, 32, "GoInSyscall", 1005, 0, RTD_GOTRACE_ARGS("g"), RTD_GOTRACE_NOARGS) \
	X(HEAP_ALLOC, 33, "HeapAlloc", 1005, 0, RTD_GOTRACE_ARGS("mem"), RTD_GOTRACE_NOARGS)    \
	X(HEAP_GOAL, 34, "HeapGoal", 1005, 0, RTD_GOTRACE_ARGS("mem"), RTD_GOTRACE_NOARGS)      \
	X(TIMER_GOROUTINE, 35, "TimerGoroutine", 1005, 0, RTD_GOTRACE_ARGS("g"),                \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(FUTILE_WAKEUP, 36, "FutileWakeup", 1005, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)   \
	X(STRING, 37, "String", 1007, 0, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)                \
	X(GO_START_LOCAL, 38, "GoStartLocal", 1007, 0, RTD_GOTRACE_ARGS("g"), RTD_GOTRACE_NOARGS) \
	X(GO_UNBLOCK_LOCAL, 39, "GoUnblockLocal", 1007, 1, RTD_GOTRACE_ARGS("g"),               \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_SYS_EXIT_LOCAL, 40, "GoSysExitLocal", 1007, 0, RTD_GOTRACE_ARGS("g", "ts"),        \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_START_LABEL, 41, "GoStartLabel", 1008, 0, RTD_GOTRACE_ARGS("g", "seq", "labelid"), \
	  RTD_GOTRACE_ARGS("label"))                                                            \
	X(GO_BLOCK_GC, 42, "GoBlockGC", 1008, 1, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NOARGS)        \
	X(GC_MARK_ASSIST_START, 43, "GCMarkAssistStart", 1009, 1, RTD_GOTRACE_NOARGS,           \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GC_MARK_ASSIST_DONE, 44, "GCMarkAssistDone", 1009, 0, RTD_GOTRACE_NOARGS,             \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(USER_TASK_CREATE, 45, "UserTaskCreate", 1011, 1,                                      \
	  RTD_GOTRACE_ARGS("taskid", "pid", "typeid"), RTD_GOTRACE_ARGS("name"))                \
	X(USER_TASK_END, 46, "UserTaskEnd", 1011, 1, RTD_GOTRACE_ARGS("taskid"),                \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(USER_REGION, 47, "UserRegion", 1011, 1, RTD_GOTRACE_ARGS("taskid", "mode", "typeid"), \
	  RTD_GOTRACE_ARGS("name"))                                                             \
	X(USER_LOG, 48, "UserLog", 1011, 1, RTD_GOTRACE_ARGS("id", "keyid"),                    \
	  RTD_GOTRACE_ARGS("category", "message"))                                              \
	X(CPU_SAMPLE, 49, "CPUSample", 1019, 1, RTD_GOTRACE_ARGS("ts", "p", "g"),               \
	  RTD_GOTRACE_NOARGS)

#define RTD_GOTRACE2_EVENTS(X)                                                                  \
	X(EVENT_BATCH, 1, "EventBatch", UNTIMED, NONE,                                            \
	  RTD_GOTRACE_ARGS("gen", "m", "time", "size"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,     \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(STACKS, 2, "Stacks", UNTIMED, NONE, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NONE,              \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(STACK, 3, "Stack", FRAMES, NONE, RTD_GOTRACE_ARGS("id", "nframes"), RTD_GOTRACE_NONE, \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(STRINGS, 4, "Strings", UNTIMED, NONE, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NONE,            \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(STRING, 5, "String", DATA, NONE, RTD_GOTRACE_ARGS("id"), RTD_GOTRACE_NONE,            \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(CPU_SAMPLES, 6, "CPUSamples", UNTIMED, NONE, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NONE,     \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(CPU_SAMPLE, 7, "CPUSample", UNTIMED, NONE,                                              \
	  RTD_GOTRACE_ARGS("time", "m", "p", "g", "stack"), RTD_GOTRACE_AT(4), RTD_GOTRACE_NONE, \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(FREQUENCY, 8, "Frequency", UNTIMED, NONE, RTD_GOTRACE_ARGS("freq"), RTD_GOTRACE_NONE,  \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(PROCS_CHANGE, 9, "ProcsChange", TIMED, NONE,                                           \
	  RTD_GOTRACE_ARGS("dt", "procs_value", "stack"), RTD_GOTRACE_AT(2), RTD_GOTRACE_NONE,  \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(PROC_START, 10, "ProcStart", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "p", "p_seq"),       \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(PROC_STOP, 11, "ProcStop", TIMED, NONE, RTD_GOTRACE_ARGS("dt"), RTD_GOTRACE_NONE,     \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(PROC_STEAL, 12, "ProcSteal", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "p", "p_seq", "m"),  \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(PROC_STATUS, 13, "ProcStatus", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "p", "pstatus"),   \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_CREATE, 14, "GoCreate", TIMED, NONE,                                                \
	  RTD_GOTRACE_ARGS("dt", "new_g", "new_stack", "stack"), RTD_GOTRACE_AT(3, 2),          \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(GO_CREATE_SYSCALL, 15, "GoCreateSyscall", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "new_g"), \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_START, 16, "GoStart", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "g", "g_seq"),           \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_DESTROY, 17, "GoDestroy", TIMED, NONE, RTD_GOTRACE_ARGS("dt"), RTD_GOTRACE_NONE,   \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(GO_DESTROY_SYSCALL, 18, "GoDestroySyscall", TIMED, NONE, RTD_GOTRACE_ARGS("dt"),      \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_STOP, 19, "GoStop", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "reason_string", "stack"), \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_AT(1), RTD_GOTRACE_ARGS("reason"))                     \
	X(GO_BLOCK, 20, "GoBlock", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "reason_string", "stack"), \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_AT(1), RTD_GOTRACE_ARGS("reason"))                     \
	X(GO_UNBLOCK, 21, "GoUnblock", TIMED, NONE,                                              \
	  RTD_GOTRACE_ARGS("dt", "g", "g_seq", "stack"), RTD_GOTRACE_AT(3), RTD_GOTRACE_NONE,   \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_SYSCALL_BEGIN, 22, "GoSyscallBegin", TIMED, NONE,                                   \
	  RTD_GOTRACE_ARGS("dt", "p_seq", "stack"), RTD_GOTRACE_AT(2), RTD_GOTRACE_NONE,        \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_SYSCALL_END, 23, "GoSyscallEnd", TIMED, GO_SYSCALL_BEGIN, RTD_GOTRACE_ARGS("dt"),  \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_SYSCALL_END_BLOCKED, 24, "GoSyscallEndBlocked", TIMED, GO_SYSCALL_BEGIN,           \
	  RTD_GOTRACE_ARGS("dt"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)       \
	X(GO_STATUS, 25, "GoStatus", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "g", "m", "gstatus"),  \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(STW_BEGIN, 26, "STWBegin", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "kind_string", "stack"), \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_AT(1), RTD_GOTRACE_ARGS("kind"))                       \
	X(STW_END, 27, "STWEnd", TIMED, STW_BEGIN, RTD_GOTRACE_ARGS("dt"), RTD_GOTRACE_NONE,    \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(GC_ACTIVE, 28, "GCActive", TIMED, GC_BEGIN, RTD_GOTRACE_ARGS("dt", "gc_seq"),         \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GC_BEGIN, 29, "GCBegin", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "gc_seq", "stack"),      \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                              \
	X(GC_END, 30, "GCEnd", TIMED, GC_BEGIN, RTD_GOTRACE_ARGS("dt", "gc_seq"),               \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GC_SWEEP_ACTIVE, 31, "GCSweepActive", TIMED, GC_SWEEP_BEGIN, RTD_GOTRACE_ARGS("dt", "p"), \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GC_SWEEP_BEGIN, 32, "GCSweepBegin", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "stack"),     \
	  RTD_GOTRACE_AT(1), RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                              \
	X(GC_SWEEP_END, 33, "GCSweepEnd", TIMED, GC_SWEEP_BEGIN,                                 \
	  RTD_GOTRACE_ARGS("dt", "swept_value", "reclaimed_value"), RTD_GOTRACE_NONE,           \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(GC_MARK_ASSIST_ACTIVE, 34, "GCMarkAssistActive", TIMED, GC_MARK_ASSIST_BEGIN,         \
	  RTD_GOTRACE_ARGS("dt", "g"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)  \
	X(GC_MARK_ASSIST_BEGIN, 35, "GCMarkAssistBegin", TIMED, NONE,                            \
	  RTD_GOTRACE_ARGS("dt", "stack"), RTD_GOTRACE_AT(1), RTD_GOTRACE_NONE,                 \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GC_MARK_ASSIST_END, 36, "GCMarkAssistEnd", TIMED, GC_MARK_ASSIST_BEGIN,               \
	  RTD_GOTRACE_ARGS("dt"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)       \
	X(HEAP_ALLOC, 37, "HeapAlloc", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "heapalloc_value"),  \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(HEAP_GOAL, 38, "HeapGoal", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "heapgoal_value"),     \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_LABEL, 39, "GoLabel", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "label_string"),         \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_AT(1), RTD_GOTRACE_ARGS("label"))                       \
	X(USER_TASK_BEGIN, 40, "UserTaskBegin", TIMED, NONE,                                     \
	  RTD_GOTRACE_ARGS("dt", "task", "parent_task", "name_string", "stack"),                \
	  RTD_GOTRACE_AT(4), RTD_GOTRACE_AT(3), RTD_GOTRACE_ARGS("name"))                       \
	X(USER_TASK_END, 41, "UserTaskEnd", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "task", "stack"), \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                              \
	X(USER_REGION_BEGIN, 42, "UserRegionBegin", TIMED, NONE,                                 \
	  RTD_GOTRACE_ARGS("dt", "task", "name_string", "stack"), RTD_GOTRACE_AT(3),            \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_ARGS("name"))                                          \
	X(USER_REGION_END, 43, "UserRegionEnd", TIMED, USER_REGION_BEGIN,                        \
	  RTD_GOTRACE_ARGS("dt", "task", "name_string", "stack"), RTD_GOTRACE_AT(3),            \
	  RTD_GOTRACE_AT(2), RTD_GOTRACE_ARGS("name"))                                          \
	X(USER_LOG, 44, "UserLog", TIMED, NONE,                                                  \
	  RTD_GOTRACE_ARGS("dt", "task", "key_string", "value_string", "stack"),                \
	  RTD_GOTRACE_AT(4), RTD_GOTRACE_AT(2, 3), RTD_GOTRACE_ARGS("key", "value"))            \
	X(GO_SWITCH, 45, "GoSwitch", TIMED, NONE, RTD_GOTRACE_ARGS("dt", "g", "g_seq"),         \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GO_SWITCH_DESTROY, 46, "GoSwitchDestroy", TIMED, NONE,                                 \
	  RTD_GOTRACE_ARGS("dt", "g", "g_seq"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,             \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GO_CREATE_BLOCKED, 47, "GoCreateBlocked", TIMED, NONE,                                 \
	  RTD_GOTRACE_ARGS("dt", "new_g", "new_stack", "stack"), RTD_GOTRACE_AT(3, 2),          \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(GO_STATUS_STACK, 48, "GoStatusStack", TIMED, NONE,                                     \
	  RTD_GOTRACE_ARGS("dt", "g", "m", "gstatus", "stack"), RTD_GOTRACE_AT(4),              \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(EXPERIMENTAL_BATCH, 49, "ExperimentalBatch", DATA, NONE,                               \
	  RTD_GOTRACE_ARGS("exp", "gen", "m", "time"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,      \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(SYNC, 50, "Sync", UNTIMED, NONE, RTD_GOTRACE_NOARGS, RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(CLOCK_SNAPSHOT, 51, "ClockSnapshot", TIMED, NONE,                                      \
	  RTD_GOTRACE_ARGS("dt", "mono", "sec", "nsec"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,    \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(END_OF_GENERATION, 52, "EndOfGeneration", UNTIMED, NONE, RTD_GOTRACE_NOARGS,           \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	/* experimental (AllocFree), Go 1.23+ */                                                 \
	X(SPAN, 128, "Span", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id", "npages_value", "kindclass"), \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(SPAN_ALLOC, 129, "SpanAlloc", EXP, NONE,                                               \
	  RTD_GOTRACE_ARGS("dt", "id", "npages_value", "kindclass"), RTD_GOTRACE_NONE,          \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(SPAN_FREE, 130, "SpanFree", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id"), RTD_GOTRACE_NONE, \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                                                 \
	X(HEAP_OBJECT, 131, "HeapObject", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id", "type"),      \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(HEAP_OBJECT_ALLOC, 132, "HeapObjectAlloc", EXP, NONE,                                  \
	  RTD_GOTRACE_ARGS("dt", "id", "type"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,             \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(HEAP_OBJECT_FREE, 133, "HeapObjectFree", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id"),     \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GOROUTINE_STACK, 134, "GoroutineStack", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id", "order"), \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)                               \
	X(GOROUTINE_STACK_ALLOC, 135, "GoroutineStackAlloc", EXP, NONE,                          \
	  RTD_GOTRACE_ARGS("dt", "id", "order"), RTD_GOTRACE_NONE, RTD_GOTRACE_NONE,            \
	  RTD_GOTRACE_NOARGS)                                                                   \
	X(GOROUTINE_STACK_FREE, 136, "GoroutineStackFree", EXP, NONE, RTD_GOTRACE_ARGS("dt", "id"), \
	  RTD_GOTRACE_NONE, RTD_GOTRACE_NONE, RTD_GOTRACE_NOARGS)

/* A goroutine's state as the new format's GoStatus and GoStatusStack
 * events give it (their "gstatus" argument; Go's tracev2.GoStatus). */
enum rtd_go_status {
	RTD_GO_STATUS_BAD = 0,
	RTD_GO_STATUS_RUNNABLE = 1,
	RTD_GO_STATUS_RUNNING = 2,
	RTD_GO_STATUS_SYSCALL = 3,
	RTD_GO_STATUS_WAITING = 4,
};

#endif /* RTDIAG_GOTRACE_EVENTS_H */
