/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf_sample.h - one decoded perf record, as a monitor delivers it
 * (rtdiag/perf_monitor.h) and a perf.data reader gives it (rtdiag/perf_data.h).
 *
 * Borrowed pointers: everything a struct rtd_perf_sample points at (raw
 * data, callchain, strings) lives in a ring or a scratch buffer and is valid
 * only during the callback that received it.
 */
#ifndef RTDIAG_PERF_SAMPLE_H
#define RTDIAG_PERF_SAMPLE_H

#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_perf_event;

/* Limits of decoded sample arrays, checked against the record's size. */
#define RTD_PERF_MAX_READ_VALUES 64

/**
 * struct rtd_perf_read_value - one counter in a PERF_SAMPLE_READ or read()
 * @value: raw count
 * @id: kernel id (PERF_FORMAT_ID), else 0
 * @lost: lost samples (PERF_FORMAT_LOST), else 0
 */
struct rtd_perf_read_value {
	uint64_t value;
	uint64_t id;
	uint64_t lost;
};

/**
 * struct rtd_perf_sample - one decoded perf record
 *
 * @type is the PERF_RECORD_* type. For PERF_RECORD_SAMPLE the sample_*
 * members hold each PERF_SAMPLE_* field the event asked for (a field not
 * asked for is zero/NULL; @has tells which were present). Other records
 * fill their part of @rec and, with sample_id_all, the id fields (pid, tid,
 * time, id, stream_id, cpu).
 */
struct rtd_perf_sample {
	uint32_t type;
	uint16_t misc;
	uint16_t size;            /* record size in bytes, header included */
	uint64_t has;             /* PERF_SAMPLE_* bits present */
	struct rtd_perf_event *event; /* NULL when the id is unknown */
	uint32_t ring;            /* index of the ring it came from */
	const uint8_t *bytes;     /* the whole record as the kernel wrote it */

	/* PERF_SAMPLE_* fields (and the sample_id trailer of other records) */
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	struct {
		uint64_t time_enabled, time_running;
		uint32_t nr; /* values[] entries */
		struct rtd_perf_read_value values[RTD_PERF_MAX_READ_VALUES];
	} read;
	uint64_t callchain_nr;
	const uint8_t *callchain; /* callchain_nr u64 ips (use rtd_perf_u64_at) */
	uint32_t raw_size;
	const uint8_t *raw;       /* tracepoint data */
	uint64_t branch_nr;
	uint64_t branch_hw_idx;   /* with PERF_SAMPLE_BRANCH_HW_INDEX */
	const uint8_t *branches;  /* branch_nr * 24 bytes: from, to, flags */
	uint64_t regs_user_abi;
	const uint8_t *regs_user; /* popcount(sample_regs_user) u64s */
	uint32_t regs_user_nr;
	uint64_t stack_user_size;
	const uint8_t *stack_user;
	uint64_t stack_user_dyn_size;
	uint64_t weight;          /* PERF_SAMPLE_WEIGHT, or WEIGHT_STRUCT full */
	uint32_t weight_var1;     /* WEIGHT_STRUCT parts */
	uint16_t weight_var2, weight_var3;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t regs_intr_abi;
	const uint8_t *regs_intr;
	uint32_t regs_intr_nr;
	uint64_t phys_addr;
	uint64_t aux_size;
	const uint8_t *aux;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;

	/* payload of the other record types */
	union {
		struct { /* MMAP, MMAP2 */
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint8_t build_id_size;
			uint8_t build_id[20];
			uint32_t prot, flags;
			const char *filename;
		} mmap;
		struct { /* COMM */
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct { /* FORK, EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct { /* LOST, LOST_SAMPLES (id 0) */
			uint64_t id, lost;
		} lost;
		struct { /* THROTTLE, UNTHROTTLE */
			uint64_t time, id, stream_id;
		} throttle;
		struct { /* READ */
			uint32_t pid, tid;
		} read;
		struct { /* AUX */
			uint64_t offset, size, flags;
		} aux;
		struct { /* ITRACE_START */
			uint32_t pid, tid;
		} itrace;
		struct { /* SWITCH_CPU_WIDE */
			uint32_t next_prev_pid, next_prev_tid;
		} sw;
		struct { /* NAMESPACES */
			uint32_t pid, tid;
			uint64_t nr;
			const uint8_t *ns; /* nr pairs of u64 dev, inode */
		} ns;
		struct { /* KSYMBOL */
			uint64_t addr;
			uint32_t len;
			uint16_t ksym_type, flags;
			const char *name;
		} ksymbol;
		struct { /* BPF_EVENT */
			uint16_t type, flags;
			uint32_t id;
			uint8_t tag[8];
		} bpf;
		struct { /* CGROUP */
			uint64_t id;
			const char *path;
		} cgroup;
		struct { /* TEXT_POKE */
			uint64_t addr;
			uint16_t old_len, new_len;
			const uint8_t *bytes; /* old then new */
		} poke;
		struct { /* AUX_OUTPUT_HW_ID */
			uint64_t hw_id;
		} hwid;
		struct { /* CALLCHAIN_DEFERRED */
			uint64_t cookie, nr;
			const uint8_t *ips;
		} deferred;
	} rec;
};

/* Read the i-th u64 of a borrowed array (callchain, regs) without
 * assuming alignment. */
static inline uint64_t rtd_perf_u64_at(const uint8_t *p, uint64_t i)
{
	uint64_t v;
	__builtin_memcpy(&v, p + i * 8, 8);
	return v;
}

/**
 * typedef rtd_perf_sample_fn - receives each record from the run loop
 * @s: the record; its pointers are valid during the call only
 * @ctx: the pointer given to rtd_perf_monitor_run()
 *
 * Returns: 0 to go on, non-zero to stop the run loop (run returns it).
 */
typedef int (*rtd_perf_sample_fn)(const struct rtd_perf_sample *s,
				  void *ctx);

/**
 * rtd_perf_record_name - name of a PERF_RECORD_* type ("SAMPLE", "LOST", ...)
 * @type: record type
 *
 * Returns: a static string ("UNKNOWN" for unknown types).
 */
RTD_API const char *rtd_perf_record_name(uint32_t type);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_SAMPLE_H */
