/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_probe.h - dynamic probes of a perf monitor: uprobes,
 * uretprobes, kprobes and kretprobes, sampled or counted.
 */
#ifndef RTDIAG_PERF_PROBE_H
#define RTDIAG_PERF_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/perf_monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct rtd_perf_probe - a dynamic probe, as parsed by rtd_perf_probe_parse()
 * @kind: RTD_PERF_UPROBE or RTD_PERF_KPROBE
 * @retprobe: fire on return (uretprobe, kretprobe)
 * @target: uprobe: the binary's path; kprobe: NULL
 * @symbol: function symbol, or NULL when @addr is used
 * @offset: added to the symbol (or the file offset / kernel address)
 * @addr: uprobe: file offset when @symbol is NULL; kprobe: kernel address
 * @fetchargs: tracefs fetch arguments ("path=+0(%di):string n=%si:s32"),
 *             or NULL for none; with none the perf PMU form is used and no
 *             tracefs event is created
 * @name: event name, or NULL to derive one from the symbol
 */
struct rtd_perf_probe {
	enum rtd_perf_event_kind kind;
	bool retprobe;
	char *target;
	char *symbol;
	uint64_t offset;
	uint64_t addr;
	char *fetchargs;
	char *name;
};

/**
 * rtd_perf_probe_parse - parse a probe spec
 * @kind: RTD_PERF_UPROBE or RTD_PERF_KPROBE
 * @spec: uprobe "BINARY:SYMBOL[+OFF][%return] [ARGS...]" or
 *        "BINARY:0xOFFSET[%return] [ARGS...]"; kprobe
 *        "SYMBOL[+OFF][%return] [ARGS...]" or "0xADDR ..."
 * @out: filled; its strings are malloc'd (rtd_perf_probe_clear() frees them)
 *
 * Returns: 0 or -RTD_E_INVAL (with no allocation left behind).
 */
RTD_API int rtd_perf_probe_parse(enum rtd_perf_event_kind kind,
				 const char *spec, struct rtd_perf_probe *out);

/**
 * rtd_perf_probe_clear - free the strings of a parsed probe
 * @p: probe (its members are reset)
 */
RTD_API void rtd_perf_probe_clear(struct rtd_perf_probe *p);

/**
 * rtd_perf_monitor_add_probe - register a uprobe/uretprobe or kprobe/kretprobe
 * @m: monitor
 * @probe: what to probe; a uprobe symbol is resolved to its file offset
 *         with libelf (through the segment's file offset)
 * @out: receives the event handle (owned by @m), or NULL
 *
 * With fetch arguments a tracefs dynamic event is created in the group
 * "rtdiag_<pid>_<starttime>" and removed again by rtd_perf_monitor_free(); without,
 * the uprobe/kprobe PMU is used.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown symbol or binary,
 * -RTD_E_PERF_NOTSUPP when the kernel lacks this probe type,
 * -RTD_E_PERF_PROBE when tracefs rejects the probe, or a negative errno.
 */
RTD_API int rtd_perf_monitor_add_probe(struct rtd_perf_monitor *m,
				       const struct rtd_perf_probe *probe,
				       struct rtd_perf_event **out);

/**
 * rtd_perf_monitor_add_probe_counter - count the hits of a uprobe or kprobe
 * @m: monitor
 * @probe: as for rtd_perf_monitor_add_probe()
 * @leader: group leader (a counter), or NULL
 * @out: receives the event (owned by @m), or NULL
 *
 * The probe is created as rtd_perf_monitor_add_probe() does, and opened
 * as a counter (rtd_perf_event_count() reads it; perf stat's
 * -e probe_libc:malloc).
 *
 * Returns: as rtd_perf_monitor_add_probe().
 */
RTD_API int rtd_perf_monitor_add_probe_counter(struct rtd_perf_monitor *m,
					       const struct rtd_perf_probe *probe,
					       struct rtd_perf_event *leader,
					       struct rtd_perf_event **out);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_PROBE_H */
