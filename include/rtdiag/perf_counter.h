/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_counter.h - counting events of a perf monitor (perf stat):
 * software, hardware and raw PMU counters, alone or in groups.
 */
#ifndef RTDIAG_PERF_COUNTER_H
#define RTDIAG_PERF_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_monitor;
struct rtd_perf_event;

/**
 * struct rtd_perf_count - a counter's value, summed over its CPUs and pids
 * @raw: the count as read
 * @time_enabled: ns the counter was enabled
 * @time_running: ns it was really on a PMU
 * @scaled: raw * enabled / running (raw when running is 0 or equal)
 * @multiplexed: running < enabled (the counter shared a PMU)
 */
struct rtd_perf_count {
	uint64_t raw;
	uint64_t time_enabled;
	uint64_t time_running;
	double scaled;
	bool multiplexed;
};

/**
 * rtd_perf_monitor_add_counter - register a counting event
 * @m: monitor
 * @name: "task-clock", "page-faults", "cycles", ... (see
 *        rtd_perf_counter_names()), "PMU/config=N/" for a raw PMU event,
 *        or "subsystem:event" for a tracepoint (its hits are counted)
 * @leader: group leader (an earlier counter), or NULL to lead a new group
 * @out: receives the event handle (owned by @m), or NULL
 *
 * Counters are read with PERF_FORMAT_TOTAL_TIME_ENABLED|RUNNING|ID, and
 * as a group (PERF_FORMAT_GROUP) through their leader.
 *
 * Returns: 0, -RTD_E_PERF_NOEVENT for an unknown name,
 * -RTD_E_PERF_NOTSUPP when the CPU or kernel has no such counter, or a
 * negative errno.
 */
RTD_API int rtd_perf_monitor_add_counter(struct rtd_perf_monitor *m,
					 const char *name,
					 struct rtd_perf_event *leader,
					 struct rtd_perf_event **out);

/**
 * rtd_perf_event_user_only - does the event count user space only?
 * @ev: event
 *
 * True when it was asked for, or when the kernel refused this user kernel
 * counting and the monitor fell back to user space (perf prints such
 * counters as "task-clock:u").
 *
 * Returns: true for a user-space-only event.
 */
RTD_API bool rtd_perf_event_user_only(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_count - read a counter, summed over CPUs and pids, scaled
 * @ev: counter event
 * @out: the count
 *
 * Returns: 0 or a negative errno.
 */
RTD_API int rtd_perf_event_count(struct rtd_perf_event *ev,
				 struct rtd_perf_count *out);

/**
 * rtd_perf_group_count - read a counter group at once (PERF_FORMAT_GROUP)
 * @leader: the group's leader
 * @out: one entry per member, leader first, each scaled by the group's
 *       time enabled/running
 * @n: room in @out
 *
 * Returns: the number of members (may exceed @n: only @n are filled), or
 * a negative errno.
 */
RTD_API int rtd_perf_group_count(struct rtd_perf_event *leader,
				 struct rtd_perf_count *out, size_t n);

/**
 * rtd_perf_counter_names - the counter names rtd_perf_monitor_add_counter()
 * knows
 *
 * Returns: a NULL-terminated static array.
 */
RTD_API const char *const *rtd_perf_counter_names(void);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_COUNTER_H */
