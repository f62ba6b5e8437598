/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/trigger.h - when the flight recorder (rtdiag/flight.h) writes a
 * snapshot: a condition on a counter, the process's CPU or memory, a GC
 * pause or an exception, parsed from a short expression and fed with
 * what a recording sees (docs/flight.md, issue #31).
 *
 *   System.Runtime/cpu-usage>80        a counter as dotnet-counters names
 *   Bars.Meter/bars.queue.length>=40 for 10s   it (Provider/name), held 10 s
 *   cpu>90%                            the process's CPU (100% = one core)
 *   rss>2GB                            its resident memory (KB, MB, GB are
 *                                      1024-based; KiB... too; B)
 *   gc-pause>100ms                     one suspension of the managed threads
 *   exception=System.TimeoutException  an exception of that type thrown
 *
 * The operators are >, >=, <, <= (and = for exceptions). A threshold
 * fires each time it has held for its `for` time (at once without one);
 * held on, it fires again after as long again: spacing snapshots further
 * is the caller's (a cooldown). A condition that stops holding restarts
 * the count.
 */
#ifndef RTDIAG_TRIGGER_H
#define RTDIAG_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_trigger rtd_trigger;

/**
 * enum rtd_trigger_kind - what a trigger watches
 * @RTD_TRIGGER_COUNTER: a counter's values: COUNTER records named
 *                       "Provider/name", a meter's value events of the
 *                       System.Diagnostics.Metrics EventSource (instants
 *                       with meterName, instrumentName and the value
 *                       dotnet-counters shows: a counter's rate, an
 *                       up-down counter's value, a gauge's lastValue),
 *                       an EventSource's "Provider/EventCounters"
 *                       instants (Name, and Mean or Increment), or
 *                       rtd_trigger_counter()
 * @RTD_TRIGGER_CPU: the process's CPU, percent of one core
 *                   (rtd_trigger_proc())
 * @RTD_TRIGGER_RSS: the process's resident bytes (rtd_trigger_proc())
 * @RTD_TRIGGER_GC_PAUSE: the runtime's suspensions ("EE suspended" slices
 *                        of the record stream), in ns
 * @RTD_TRIGGER_EXCEPTION: exceptions thrown (instants named
 *                         ".../Exception/Start" with a field ExceptionType)
 */
enum rtd_trigger_kind {
	RTD_TRIGGER_COUNTER = 1,
	RTD_TRIGGER_CPU,
	RTD_TRIGGER_RSS,
	RTD_TRIGGER_GC_PAUSE,
	RTD_TRIGGER_EXCEPTION,
};

/* Caps. */
#define RTD_TRIGGER_MAX_EXPR 512u /* bytes of an expression */

/**
 * rtd_trigger_parse - a trigger from its expression
 * @expr: the expression (see the header's comment)
 * @out: gets the trigger
 * @err: gets a message naming the bad part of @expr (may be NULL)
 * @errlen: size of @err
 *
 * Returns: 0, -RTD_E_FORMAT (message in @err), -RTD_E_CAP (longer than
 * RTD_TRIGGER_MAX_EXPR), -ENOMEM.
 */
RTD_API int rtd_trigger_parse(const char *expr, rtd_trigger **out, char *err, size_t errlen);

/**
 * rtd_trigger_free - free a trigger
 * @t: the trigger; NULL does nothing
 */
RTD_API void rtd_trigger_free(rtd_trigger *t);

/**
 * rtd_trigger_kind - what @t watches
 * @t: the trigger
 *
 * Returns: an enum rtd_trigger_kind.
 */
RTD_API unsigned rtd_trigger_kind(const rtd_trigger *t);

/**
 * rtd_trigger_counter_name - a counter trigger's provider and counter
 * @t: the trigger
 * @provider: gets the provider ("System.Runtime", a Meter's name)
 * @name: gets the counter's name
 *
 * Returns: 0, or -RTD_E_INVAL when @t watches no counter.
 */
RTD_API int rtd_trigger_counter_name(const rtd_trigger *t, const char **provider,
				     const char **name);

/**
 * rtd_trigger_cause - a short name of what fired, for a file name
 * @t: the trigger
 *
 * Returns: "cpu", "rss", "gc-pause", "exception", or the counter's name,
 * with only [A-Za-z0-9._-] in it.
 */
RTD_API const char *rtd_trigger_cause(const rtd_trigger *t);

/**
 * struct rtd_trigger_hit - why a trigger fired
 * @mono: when (CLOCK_MONOTONIC ns: the record's or sample's time)
 * @value: the value that crossed (a counter's, percent, bytes, ns of
 *         pause; 0 for an exception)
 * @text: a line for a person ("cpu 93.4% > 90% for 10s")
 */
struct rtd_trigger_hit {
	int64_t mono;
	double value;
	char text[256];
};

/**
 * rtd_trigger_record - feed a record of the stream
 * @t: the trigger
 * @rec: a record (borrowed for the call); the kinds @t does not watch are
 *       ignored
 * @hit: filled when it fires (may be NULL)
 *
 * Returns: 1 when @t fires, 0 otherwise.
 */
RTD_API int rtd_trigger_record(rtd_trigger *t, const struct rtd_record *rec,
			       struct rtd_trigger_hit *hit);

/**
 * rtd_trigger_counter - feed one value of a counter
 * @t: the trigger
 * @mono: its time (CLOCK_MONOTONIC ns)
 * @provider: its provider (EventSource or Meter)
 * @name: its name
 * @value: its value (the value dotnet-counters shows)
 * @hit: filled when it fires (may be NULL)
 *
 * Returns: 1 when @t fires, 0 otherwise (another counter, or not held).
 */
RTD_API int rtd_trigger_counter(rtd_trigger *t, int64_t mono, const char *provider,
				const char *name, double value, struct rtd_trigger_hit *hit);

/**
 * struct rtd_proc_usage - a process's CPU time and memory at one moment
 * @mono: when it was read (CLOCK_MONOTONIC ns)
 * @cpu_ns: user + system CPU time of all its threads so far
 * @rss: resident bytes
 */
struct rtd_proc_usage {
	int64_t mono;
	uint64_t cpu_ns;
	uint64_t rss;
};

/**
 * rtd_proc_usage_read - read a process's usage now (/proc/PID/stat, statm)
 * @pid: the process (0: this one)
 * @out: filled in
 *
 * Returns: 0, -ESRCH when it is gone, or another negative errno.
 */
RTD_API int rtd_proc_usage_read(int pid, struct rtd_proc_usage *out);

/**
 * rtd_trigger_proc - feed two readings of the process's usage
 * @t: the trigger
 * @prev: the reading before (the CPU is the time used between the two,
 *        over the time between them)
 * @now: the latest
 * @hit: filled when it fires (may be NULL)
 *
 * Returns: 1 when @t fires, 0 otherwise (and for a trigger on neither
 * CPU nor memory).
 */
RTD_API int rtd_trigger_proc(rtd_trigger *t, const struct rtd_proc_usage *prev,
			     const struct rtd_proc_usage *now, struct rtd_trigger_hit *hit);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_TRIGGER_H */
