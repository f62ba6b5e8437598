/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/common.h - what every rtdiag module shares: the export macro,
 * error codes and their messages, the logging callback, the version.
 *
 * Naming: every public symbol starts with rtd_; each module adds its own
 * prefix (rtd_ipc_, rtd_nettrace_, rtd_perf_, rtd_gotrace_, rtd_profile_).
 * Functions are named object_verb. Handles are opaque and come in
 * _new/_free pairs; _free(NULL) does nothing.
 *
 * Return convention: functions returning int give 0 on success, a negative
 * errno for system failures, or a negative RTD_E* code from the table below.
 * rtd_strerror() turns either kind into a message.
 */
#ifndef RTDIAG_COMMON_H
#define RTDIAG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RTDIAG_BUILDING) && defined(__GNUC__)
#define RTD_API __attribute__((visibility("default")))
#else
#define RTD_API
#endif

#define RTD_VERSION_MAJOR 0
#define RTD_VERSION_MINOR 1
#define RTD_VERSION_PATCH 0
#define RTD_VERSION_STRING "0.1.0"

/*
 * RTD_ERRORS - the one table of rtdiag error codes.
 *
 * X(NAME, value, message). Values start at 1000 so they never collide with
 * errno values; functions return them negated (-RTD_E_TRUNCATED).
 * Each module keeps its codes in its own block; add new codes at the end
 * of your module's block.
 */
#define RTD_ERRORS(X)                                                          \
	/* common */                                                           \
	X(RTD_E_TRUNCATED, 1000, "input ends before the item is complete")     \
	X(RTD_E_FORMAT, 1001, "malformed input")                               \
	X(RTD_E_VARINT, 1002, "varint longer than its maximum width")          \
	X(RTD_E_UTF16, 1003, "invalid UTF-16 string")                          \
	X(RTD_E_CAP, 1004, "a size taken from input exceeds its limit")        \
	X(RTD_E_INVAL, 1005, "invalid argument")                               \
	X(RTD_E_UNSUPPORTED, 1006, "unsupported version or feature")           \
	X(RTD_E_STATE, 1007, "call not valid in the current state")            \
	X(RTD_E_NOTFOUND, 1008, "not found")                                   \
	X(RTD_E_OVERFLOW, 1009, "value out of range")                          \
	X(RTD_E_STOPPED, 1010, "stopped by request")                           \
	X(RTD_E_NOLIB, 1011, "an optional shared library is not installed") \
	/* nettrace */                                                         \
	X(RTD_E_NT_MAGIC, 1100, "not a nettrace or netperf stream")            \
	X(RTD_E_NT_BLOCK, 1101, "malformed block")                             \
	X(RTD_E_NT_METADATA, 1102, "malformed event metadata")                 \
	X(RTD_E_NT_EVENT, 1103, "malformed event header")                      \
	X(RTD_E_NT_PAYLOAD, 1104, "payload does not match its schema")         \
	X(RTD_E_NT_STACK, 1105, "malformed stack block")                       \
	/* end of nettrace */                                                  \
                                                                               \
	/* dotnet diagnostics ipc */                                           \
	X(RTD_E_IPC_MAGIC, 1200, "reply does not start with the DOTNET_IPC_V1 magic") \
	X(RTD_E_IPC_PROTOCOL, 1201, "malformed diagnostics IPC message")       \
	X(RTD_E_IPC_UNKNOWN_COMMAND, 1202, "the runtime does not know this command") \
	X(RTD_E_IPC_RUNTIME, 1203, "the runtime returned an error")            \
	X(RTD_E_IPC_NOSOCKET, 1204, "no diagnostic socket for this process")   \
	X(RTD_E_IPC_NOPROCESS, 1205, "no such process")                        \
	X(RTD_E_IPC_CLOSED, 1206, "the runtime closed the connection")         \
	X(RTD_E_IPC_TIMEOUT, 1207, "the runtime did not answer in time")      \
	X(RTD_E_IPC_BAD_ENCODING, 1208, "the runtime could not parse the request") \
	X(RTD_E_IPC_NOTSUPPORTED, 1209, "the runtime does not support this request") \
	X(RTD_E_IPC_INVALIDARG, 1210, "the runtime rejected an argument")     \
	X(RTD_E_IPC_NOT_YET_AVAILABLE, 1211, "the runtime is not ready for this command yet") \
	X(RTD_E_IPC_UNINITIALIZED, 1212, "the runtime is not initialized")    \
	X(RTD_E_IPC_ENVVAR_NOT_FOUND, 1213, "environment variable not found") \
	X(RTD_E_IPC_REJECTED_MAGIC, 1214, "the runtime rejected the IPC magic") \
	X(RTD_E_IPC_PROVIDER, 1215, "malformed provider specification")       \
	X(RTD_E_IPC_EXITED, 1216, "the process exited during the command")    \
	X(RTD_E_IPC_DROPPED, 1217, "stream bytes were dropped: the reader fell its buffer's cap behind") \
	/* end of ipc */                                                       \
                                                                               \
	/* perf_event */                                                       \
	X(RTD_E_PERF_NOEVENT, 1300, "no such event")                           \
	X(RTD_E_PERF_FILTER, 1301, "the kernel rejected the filter")           \
	X(RTD_E_PERF_NOTSUPP, 1302, "not supported by this kernel")            \
	X(RTD_E_PERF_PROBE, 1303, "the probe could not be created")            \
	X(RTD_E_PERF_TRACEFS, 1304, "tracefs is not mounted or not readable")  \
	/* end of perf */                                                      \
                                                                               \
	/* go execution traces */                                              \
	X(RTD_E_GO_VERSION, 1400, "unsupported Go trace version")              \
	X(RTD_E_GO_EVENT, 1401, "malformed trace event")                       \
	X(RTD_E_GO_ORDER, 1402, "trace fails validation")                      \
	X(RTD_E_GO_TEXT, 1403, "malformed Go trace text form")                 \
	/* end of gotrace */

enum rtd_error {
#define RTD_ERR_ENUM(name, value, msg) name = value,
	RTD_ERRORS(RTD_ERR_ENUM)
#undef RTD_ERR_ENUM
};

/**
 * rtd_strerror - message for an rtdiag return value
 * @err: a return value: 0, a negative errno or a negative RTD_E* code
 *       (a positive value is taken as its negation)
 *
 * Returns: a static string; never NULL.
 */
RTD_API const char *rtd_strerror(int err);

/**
 * rtd_errname - symbolic name of an rtdiag error code
 * @err: as for rtd_strerror()
 *
 * Returns: "RTD_E_TRUNCATED" and so on, "OK" for 0, "errno" for system
 * errors, "unknown" otherwise; never NULL.
 */
RTD_API const char *rtd_errname(int err);

enum rtd_log_level {
	RTD_LOG_ERROR = 0,
	RTD_LOG_WARN = 1,
	RTD_LOG_INFO = 2,
	RTD_LOG_DEBUG = 3,
};

/**
 * typedef rtd_log_fn - receives the library's log messages
 * @level: severity of the message
 * @msg: the message, without a trailing newline; valid during the call
 * @ctx: the pointer given to rtd_set_log()
 */
typedef void (*rtd_log_fn)(enum rtd_log_level level, const char *msg,
			   void *ctx);

/**
 * rtd_set_log - route the library's log messages
 * @fn: callback, or NULL to silence the library (the default)
 * @ctx: passed back to @fn
 * @max_level: messages above this level are not formatted at all
 *
 * The library never prints on its own. The setting is process-wide.
 */
RTD_API void rtd_set_log(rtd_log_fn fn, void *ctx,
			 enum rtd_log_level max_level);

/**
 * struct rtd_pstat - what the kernel says of a process or thread in
 * /proc/PID/stat (/proc/PID/task/TID/stat), proc(5)
 * @state: 'R' running, 'S' sleeping, 'D' in uninterruptible wait, 'Z' a
 *         zombie (ended, not yet reaped), 'X' dead, ...
 * @ppid: its parent's pid
 * @utime_ticks: CPU time in user mode, in clock ticks (sysconf(_SC_CLK_TCK))
 * @stime_ticks: CPU time in kernel mode, in clock ticks
 * @threads: its threads
 * @start_ticks: when it started, in clock ticks after boot: with the pid
 *               it names one process even when pids are reused
 * @vsize_bytes: its virtual memory
 * @rss_pages: its resident pages
 */
struct rtd_pstat {
	char state;
	int ppid;
	uint64_t utime_ticks, stime_ticks;
	uint64_t threads;
	uint64_t start_ticks;
	uint64_t vsize_bytes;
	uint64_t rss_pages;
};

/**
 * rtd_pstat_parse - parse the text of a /proc stat file
 * @text: the file's text, NUL-terminated
 * @out: receives the fields
 *
 * The command may hold blanks and parentheses: the fields count from the
 * last ')'. rtdiag's one reader of these files.
 *
 * Returns: 0, or -RTD_E_FORMAT when a field is missing.
 */
RTD_API int rtd_pstat_parse(const char *text, struct rtd_pstat *out);

/**
 * rtd_pstat_read - read a process's or thread's stat file
 * @proc_dir: procfs's mount point; NULL for "/proc"
 * @pid: the process
 * @tid: one of its threads, or 0 for the process
 * @out: receives the fields
 *
 * Returns: 0, -ENOENT when there is no such process or thread (-ESRCH
 * from a read of one that just ended is -ENOENT too), -RTD_E_FORMAT, or
 * another negative errno.
 */
RTD_API int rtd_pstat_read(const char *proc_dir, int pid, int tid, struct rtd_pstat *out);

/* the most threads rtd_thread_cpu_read() lists */
#define RTD_THREAD_CPU_MAX 65536

/**
 * struct rtd_thread_cpu - one thread's CPU time, as the kernel counts it
 * @tid: the thread's id
 * @ns: nanoseconds it has run on a CPU since it began (user and kernel)
 */
struct rtd_thread_cpu {
	int64_t tid;
	uint64_t ns;
};

/**
 * rtd_thread_cpu_read - the CPU time of every thread of a process
 * @pid: the process
 * @out: receives an array (free() it), one entry per live thread
 * @n: receives its length
 *
 * From /proc/PID/task/TID/schedstat (the scheduler's sum_exec_runtime,
 * what perf's task-clock counts), or utime + stime of .../stat (clock
 * ticks) where the kernel keeps no schedstat. Two reads, at a session's
 * start and end, give each thread's CPU time in between; a thread that
 * ended in between is in neither the second read nor the difference.
 *
 * Returns: 0, -RTD_E_INVAL, -RTD_E_CAP (more than RTD_THREAD_CPU_MAX
 * threads), -ENOMEM, or a negative errno (-ENOENT: no such process,
 * -EACCES: not this user's to read).
 */
RTD_API int rtd_thread_cpu_read(int pid, struct rtd_thread_cpu **out,
				size_t *n);

/* the longest duration rtd_parse_duration() takes: int64 nanoseconds */
#define RTD_DURATION_MAX_S 9.2e9

/**
 * rtd_parse_number - read a plain decimal number, as options spell them
 * @s: digits with an optional fraction ("1.5", ".5", "10"); no sign, no
 *     exponent, no hex, no blanks, at most 40 characters
 * @v: receives the number
 * @why: as for rtd_parse_duration()
 * @why_len: the size of @why
 *
 * Returns: 0, -RTD_E_INVAL, or -RTD_E_OVERFLOW (over 40 characters).
 */
RTD_API int rtd_parse_number(const char *s, double *v, char *why, size_t why_len);

/**
 * rtd_parse_duration - read a duration as every rtdiag option spells it
 * @s: "1.5" or "1.5s" (seconds), "200ms", "10us", "250ns", "2m" or
 *     "2min", "1h", or [[d:]hh:]mm:ss[.f] ("00:00:01.5", as .NET's
 *     TimeSpan prints it); a plain decimal number, no sign or exponent
 * @ns: receives nanoseconds (rounded), or NULL
 * @seconds: receives seconds, or NULL
 * @why: receives why @s was refused, quoting what was not understood
 *       ("unknown unit 'x' (...)"), or NULL
 * @why_len: the size of @why
 *
 * The grammar is written down once, in docs/options.md.
 *
 * Returns: 0, -RTD_E_INVAL when @s is empty or not a duration, or
 * -RTD_E_OVERFLOW above RTD_DURATION_MAX_S seconds.
 */
RTD_API int rtd_parse_duration(const char *s, int64_t *ns, double *seconds,
			       char *why, size_t why_len);

/**
 * rtd_parse_size - read a size in bytes as every rtdiag option spells it
 * @s: "4096" or "100B", "64k", "8M", "1G", "1T" (powers of 1024, either
 *     case; "KiB", "MB" the same), "1.5k" when it makes whole bytes
 * @bytes: receives the size
 * @why: as for rtd_parse_duration()
 * @why_len: the size of @why
 *
 * Returns: 0, -RTD_E_INVAL, or -RTD_E_OVERFLOW (1.8e19 bytes or more).
 */
RTD_API int rtd_parse_size(const char *s, uint64_t *bytes, char *why,
			   size_t why_len);

/**
 * rtd_version - the library's version
 *
 * Returns: "MAJOR.MINOR.PATCH" as a static string.
 */
RTD_API const char *rtd_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_COMMON_H */
