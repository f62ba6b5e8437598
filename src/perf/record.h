/* SPDX-License-Identifier: MIT */
/*
 * record.h - decoding of perf ring records (PERF_RECORD_*, PERF_SAMPLE_*).
 *
 * Pure functions over untrusted bytes: the fuzz target calls them directly.
 * Layouts are from include/uapi/linux/perf_event.h.
 */
#ifndef RTD_PERF_RECORD_H
#define RTD_PERF_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/perf_sample.h"

/* Record types newer than the installed uapi header. */
enum {
	RTD_PERF_RECORD_MMAP = 1,
	RTD_PERF_RECORD_LOST = 2,
	RTD_PERF_RECORD_COMM = 3,
	RTD_PERF_RECORD_EXIT = 4,
	RTD_PERF_RECORD_THROTTLE = 5,
	RTD_PERF_RECORD_UNTHROTTLE = 6,
	RTD_PERF_RECORD_FORK = 7,
	RTD_PERF_RECORD_READ = 8,
	RTD_PERF_RECORD_SAMPLE = 9,
	RTD_PERF_RECORD_MMAP2 = 10,
	RTD_PERF_RECORD_AUX = 11,
	RTD_PERF_RECORD_ITRACE_START = 12,
	RTD_PERF_RECORD_LOST_SAMPLES = 13,
	RTD_PERF_RECORD_SWITCH = 14,
	RTD_PERF_RECORD_SWITCH_CPU_WIDE = 15,
	RTD_PERF_RECORD_NAMESPACES = 16,
	RTD_PERF_RECORD_KSYMBOL = 17,
	RTD_PERF_RECORD_BPF_EVENT = 18,
	RTD_PERF_RECORD_CGROUP = 19,
	RTD_PERF_RECORD_TEXT_POKE = 20,
	RTD_PERF_RECORD_AUX_OUTPUT_HW_ID = 21,
	RTD_PERF_RECORD_CALLCHAIN_DEFERRED = 22,
	RTD_PERF_RECORD_MAX_KNOWN = 23,
};

/* PERF_FORMAT_LOST arrived in 6.0, PERF_SAMPLE_* up to bit 24 in 5.12. */
#define RTD_PERF_FORMAT_TOTAL_TIME_ENABLED (1u << 0)
#define RTD_PERF_FORMAT_TOTAL_TIME_RUNNING (1u << 1)
#define RTD_PERF_FORMAT_ID (1u << 2)
#define RTD_PERF_FORMAT_GROUP (1u << 3)
#define RTD_PERF_FORMAT_LOST (1u << 4)
#define RTD_PERF_SAMPLE_BRANCH_HW_INDEX (1u << 17)
#define RTD_PERF_MISC_MMAP_BUILD_ID (1u << 14)

/* Cap on one record: the header's size is 16 bits. */
#define RTD_PERF_MAX_RECORD 65536u

/**
 * struct perf_layout - what decides the layout of an event's records
 * @sample_type: attr.sample_type
 * @read_format: attr.read_format
 * @branch_sample_type: attr.branch_sample_type
 * @regs_user_nr: popcount(attr.sample_regs_user)
 * @regs_intr_nr: popcount(attr.sample_regs_intr)
 * @sample_id_all: attr.sample_id_all (non-sample records carry the trailer)
 */
struct perf_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t branch_sample_type;
	uint32_t regs_user_nr;
	uint32_t regs_intr_nr;
	int sample_id_all;
};

/**
 * perf_record_decode - decode one record
 * @rec: the record, header included
 * @len: bytes available at @rec (the header's size must fit)
 * @lay: the layout of the event it belongs to
 * @s: filled (zeroed first; event and ring are left to the caller)
 * @err_off: on error, the byte offset in the record where decoding failed
 *
 * Returns: 0, -RTD_E_TRUNCATED when a field runs past the record, or
 * -RTD_E_CAP when a count exceeds its cap.
 */
int perf_record_decode(const uint8_t *rec, size_t len,
		       const struct perf_layout *lay, struct rtd_perf_sample *s,
		       size_t *err_off);

/**
 * perf_record_identifier - the PERF_SAMPLE_IDENTIFIER of a record
 * @rec: the record
 * @len: its size (from the header, checked by the caller)
 * @id_all: non-sample records carry the sample_id trailer
 * @id: receives the identifier
 *
 * Every event of a monitor sets PERF_SAMPLE_IDENTIFIER, so the id sits
 * right after the header in samples and in the last 8 bytes of others.
 *
 * Returns: 0, or -RTD_E_NOTFOUND when the record carries no id.
 */
int perf_record_identifier(const uint8_t *rec, size_t len, int id_all,
			   uint64_t *id);

#endif /* RTD_PERF_RECORD_H */
