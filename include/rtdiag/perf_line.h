/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_line.h - perf events as lines of text (perf script's shape)
 * or JSON Lines, as `rtdiag perf trace` prints them.
 */
#ifndef RTDIAG_PERF_LINE_H
#define RTDIAG_PERF_LINE_H

#include "rtdiag/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_perf_line rtd_perf_line;

/* JSON Lines instead of text */
#define RTD_PERF_LINE_JSON 1u

/**
 * rtd_perf_line_new - a line writer
 * @flags: RTD_PERF_LINE_JSON or 0
 *
 * A line longer than 1 MiB is cut: what fits is kept.
 *
 * Returns: the writer, or NULL when out of memory.
 */
RTD_API rtd_perf_line *rtd_perf_line_new(unsigned flags);

/**
 * rtd_perf_line_free - free a line writer
 * @l: the writer, or NULL
 */
RTD_API void rtd_perf_line_free(rtd_perf_line *l);

/**
 * rtd_perf_line_sample - one event sample as a line
 * @l: the writer
 * @s: a PERF_RECORD_SAMPLE of a tracepoint or probe (with @s->event)
 *
 * Text: "SEC.NSEC [CPU] PID/TID EVENT: [SYMBOL] field=value ...", a field
 * that does not fit the record "<truncated>"; JSON: time_ns, cpu, pid,
 * tid, event, symbol, ip, fields (null for one that does not fit).
 * Strings are quoted and escaped, pointers in hex, an address field as
 * its print format shows it (IPv4, IPv6, MAC), at most 256 elements of
 * an array.
 *
 * Returns: the line with its '\n' (valid until the next call on @l),
 * its length in *@len; NULL (*@len 0) for a sample with no event.
 */
RTD_API const char *rtd_perf_line_sample(rtd_perf_line *l,
					 const struct rtd_perf_sample *s,
					 size_t *len);

/**
 * rtd_perf_line_syscall - one completed system call as a line
 * @l: the writer
 * @sc: the tracer that gave @c (its argument names)
 * @c: the call
 * @len: receives the line's length
 *
 * Text as perf trace: "TIME (DURATION ms): COMM/TID NAME(ARGS) = RET",
 * TIME in ms since the first call @l was given; JSON: time_ns, pid, tid,
 * comm, syscall, args, ret, errno, duration_ns.
 *
 * Returns: the line with its '\n', valid until the next call on @l.
 */
RTD_API const char *rtd_perf_line_syscall(rtd_perf_line *l,
					  struct rtd_perf_syscalls *sc,
					  const struct rtd_perf_syscall *c,
					  size_t *len);

/**
 * rtd_perf_line_value - one field's value, as rtd_perf_line_sample()
 * writes it
 * @l: the writer (its JSON flag decides the form)
 * @v: the decoded value (rtd_perf_sample_field_at())
 * @print: the field's print kind (RTD_PERF_PRINT_*), 0 for none
 * @len: receives the text's length
 *
 * Returns: the text alone (no '\n'), valid until the next call on @l.
 */
RTD_API const char *rtd_perf_line_value(rtd_perf_line *l,
					const struct rtd_perf_value *v,
					unsigned print, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_LINE_H */
