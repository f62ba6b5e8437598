/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/perf.h - a monitor over the Linux kernel's perf_event and tracefs.
 *
 * One struct rtd_perf_monitor owns one ring buffer per online CPU and any
 * number of events (tracepoints, uprobes, kprobes, counters). Every event of
 * the monitor is opened once per CPU (times once per pid or cgroup when the
 * monitor is scoped) and its samples are redirected into that CPU's ring.
 * rtd_perf_monitor_run() reads the rings, decodes each record and calls
 * back once per record, in timestamp order across CPUs.
 *
 * Borrowed pointers: everything a struct rtd_perf_sample points at (raw
 * data, callchain, strings) lives in a ring or a scratch buffer and is valid
 * only during the callback that received it.
 *
 * Threads and signals: a monitor is used from one thread, except
 * rtd_perf_monitor_stop(), which may be called from any thread or from a
 * signal handler.
 */
#ifndef RTDIAG_PERF_H
#define RTDIAG_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/common.h"
#include "rtdiag/profile.h"
#include "rtdiag/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

struct perf_event_attr;
struct rtd_perf_monitor;
struct rtd_perf_event;

/* Flags for rtd_perf_opts.flags. */
enum rtd_perf_flags {
	/* follow the scoped pids' children (attr.inherit) */
	RTD_PERF_INHERIT = 1u << 0,
	/* events start counting at the scoped process's next exec()
	 * (attr.enable_on_exec): the way to trace `-- COMMAND` from its first
	 * instruction; implies events start disabled */
	RTD_PERF_ENABLE_ON_EXEC = 1u << 1,
	/* events are registered disabled; rtd_perf_monitor_enable() starts them */
	RTD_PERF_START_DISABLED = 1u << 2,
	/* the first sampling event also asks for COMM (with exec), FORK and
	 * EXIT records: thread names as they change */
	RTD_PERF_TRACK_COMM = 1u << 3,
	/* a thread of the monitor's own copies records out of the rings as
	 * they come (rtd_perf_opts.copy_cap) while run()'s thread decodes
	 * and delivers them: a slow callback, or a delayed caller thread,
	 * no longer makes the kernel drop records. Delivery, order and loss
	 * counting are those of the single thread. */
	RTD_PERF_READER_THREAD = 1u << 4,
};

/* RTD_PERF_READER_THREAD: the copies' size, all CPUs, by default. */
#define RTD_PERF_COPY_CAP_DEFAULT ((size_t)64 << 20)

/**
 * struct rtd_perf_opts - options for rtd_perf_monitor_new()
 * @sz: sizeof(struct rtd_perf_opts), so old callers keep working
 * @pids: processes to observe; none (and no cgroups) means the whole system
 * @npids: number of @pids
 * @cgroups: cgroup directories to observe: absolute paths, or paths
 *           relative to the cgroup v2 mount (v1: relative to the perf_event
 *           controller's mount); exclusive with @pids
 * @ncgroups: number of @cgroups
 * @ring_pages: data pages per CPU ring, a power of two (0: perf's
 *              default, rtd_perf_default_ring_pages())
 * @wakeup_bytes: wake the reader when this many bytes wait in a ring
 *                (0: a quarter of the ring); a watermark, never per record
 * @max_latency_ms: longest a quiet ring's records wait before delivery
 *                  (0: 100)
 * @flags: RTD_PERF_* flags
 * @tracefs_dir: tracefs mount point (NULL: found, and mounted if missing)
 * @cgroup_dir: cgroup v2 mount point (NULL: found in /proc/self/mountinfo)
 * @cgroup_v1_dir: cgroup v1 perf_event controller mount (NULL: found)
 * @perf_event_dir: PMU directory (NULL: /sys/bus/event_source/devices)
 * @default_attr: template merged into every event's attr (sample_type bits
 *                such as PERF_SAMPLE_CALLCHAIN, exclude_* bits, ...); may be
 *                NULL
 * @copy_cap: RTD_PERF_READER_THREAD: bytes the reader thread may hold,
 *            all CPUs together (0: RTD_PERF_COPY_CAP_DEFAULT), split
 *            into a power-of-two copy per CPU of at least a ring; when a
 *            CPU's copy is full its ring is left to fill and the kernel
 *            drops and counts records as without the thread
 */
struct rtd_perf_opts {
	size_t sz;
	const pid_t *pids;
	size_t npids;
	const char *const *cgroups;
	size_t ncgroups;
	unsigned ring_pages;
	unsigned wakeup_bytes;
	unsigned max_latency_ms;
	unsigned flags;
	const char *tracefs_dir;
	const char *cgroup_dir;
	const char *cgroup_v1_dir;
	const char *perf_event_dir;
	const struct perf_event_attr *default_attr;
	size_t copy_cap;
};

/* What an event is. */
enum rtd_perf_event_kind {
	RTD_PERF_TRACEPOINT = 1,
	RTD_PERF_UPROBE,  /* also uretprobes */
	RTD_PERF_KPROBE,  /* also kretprobes */
	RTD_PERF_COUNTER, /* software, hardware or raw PMU counter */
	RTD_PERF_SAMPLER, /* a sampling event with call chains */
};

/* Kind of a decoded tracepoint field. */
enum rtd_perf_field_kind {
	RTD_PERF_FIELD_INT = 1, /* signed integer, i */
	RTD_PERF_FIELD_UINT,    /* unsigned integer or pointer, u */
	RTD_PERF_FIELD_STRING,  /* char array or __data_loc/__rel_loc string */
	RTD_PERF_FIELD_ARRAY,   /* other arrays: bytes + elem_size */
};

/**
 * struct rtd_perf_value - one decoded tracepoint field
 * @kind: how to read it; an integer array (__u8 saddr[4]) is an ARRAY,
 *        only char arrays are STRINGs
 * @is_pointer: the field is a kernel or user pointer (the tracepoint
 *              carries its value, not what it points at)
 * @elem_size: element size of an array
 * @i: the value of an INT field
 * @u: the value of a UINT field
 * @str: a STRING field, not NUL-terminated in general; see @len
 * @data: the bytes of an ARRAY field
 * @len: bytes in @str or @data
 */
struct rtd_perf_value {
	enum rtd_perf_field_kind kind;
	bool is_pointer;
	unsigned elem_size;
	int64_t i;
	uint64_t u;
	const char *str;
	const uint8_t *data;
	size_t len;
};

/**
 * struct rtd_perf_field - a tracepoint field's description
 * @name: field name
 * @type: C type as the kernel's format file gives it
 * @offset: byte offset in the raw data
 * @size: byte size in the raw data (4 for __data_loc)
 * @kind: what rtd_perf_sample_field() returns for it
 * @is_dynamic: a __data_loc field (offset and length stored in the record)
 * @is_relative: a __rel_loc field (offset relative to the field's end)
 * @is_signed: signed integer
 * @is_pointer: a pointer value
 * @elem_size: element size of arrays
 * @print: how the event's print format shows it: an enum
 *         rtd_perf_field_print value (%pI4, %pI6c, %pM: addresses)
 */
struct rtd_perf_field {
	const char *name;
	const char *type;
	unsigned offset;
	unsigned size;
	enum rtd_perf_field_kind kind;
	bool is_dynamic;
	bool is_relative;
	bool is_signed;
	bool is_pointer;
	unsigned elem_size;
	unsigned print;
};

/* How a field's print format shows it (rtd_perf_field.print). */
enum rtd_perf_field_print {
	RTD_PERF_PRINT_DEFAULT = 0,
	RTD_PERF_PRINT_IPV4,  /* %pI4: 127.0.0.1 */
	RTD_PERF_PRINT_IPV6,  /* %pI6 / %pI6c: ::1 */
	RTD_PERF_PRINT_MAC,   /* %pM: 00:11:22:33:44:55 */
};

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
 * struct rtd_perf_stats - counters of a monitor
 * @sz: sizeof(struct rtd_perf_stats), set by the caller
 * @records: records read from all rings
 * @samples: PERF_RECORD_SAMPLE records delivered
 * @lost: records lost: the larger of the PERF_RECORD_LOST sums and the
 *        kernel's per-event counters (PERF_FORMAT_LOST, read when run()
 *        returns: they include losses at the very end, which the kernel
 *        reports in a LOST record only once it next writes to the ring;
 *        for inherited events the kernel counts the parent's only)
 * @lost_samples: PERF_RECORD_LOST_SAMPLES sums
 * @lost_records: LOST records seen
 * @lost_in_records: the PERF_RECORD_LOST sums alone
 * @rounds: ring-reading rounds
 * @wakeups: poll() returns with data
 * @late: records delivered after a newer one had been (should stay 0;
 *        records are held in the rings until perf's finished-round rule
 *        says no older one can still arrive)
 * @bad_records: records that failed to decode (skipped, counted)
 * @max_latency_ns: longest delay between a record's timestamp and its delivery
 * @nrings: rings (online CPUs)
 * @ring_lost: per ring lost counts (first min(nrings, 256) rings)
 * @ring_pages: data pages of each ring
 * @copy_bytes: RTD_PERF_READER_THREAD: each CPU's copy (0: no thread)
 * @copy_max: the most bytes that waited in one CPU's copy
 * @copy_full: reader passes that found a copy full (its ring then
 *             fills; what the kernel drops is in @lost)
 */
struct rtd_perf_stats {
	size_t sz;
	uint64_t records;
	uint64_t samples;
	uint64_t lost;
	uint64_t lost_samples;
	uint64_t lost_records;
	uint64_t lost_in_records;
	uint64_t rounds;
	uint64_t wakeups;
	uint64_t late;
	uint64_t bad_records;
	uint64_t max_latency_ns;
	uint32_t nrings;
	uint64_t ring_lost[256];
	uint32_t ring_pages;
	uint64_t copy_bytes;
	uint64_t copy_max;
	uint64_t copy_full;
};

/**
 * rtd_perf_default_ring_pages - perf's default ring size, in data pages
 *
 * What perf record and perf trace map per CPU when not told (-m): the
 * per-user limit kernel.perf_event_mlock_kb less one page, in pages,
 * rounded down to a power of two (128 pages, 512 KiB, with the kernel's
 * default 516 and 4 KiB pages); 512 KiB when the limit cannot be read.
 *
 * Returns: the page count, at least 1.
 */
RTD_API unsigned rtd_perf_default_ring_pages(void);

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
 * rtd_perf_monitor_new - create a monitor: open no event yet, map no ring yet
 * @opts: options, or NULL for the whole system with defaults
 * @out: receives the monitor
 *
 * Reads the online CPUs from /sys/devices/system/cpu/online (gaps
 * allowed), finds tracefs and the cgroup mounts, opens the scope's cgroup
 * directories, and removes probes left by rtdiag processes that have died.
 *
 * Returns: 0, -RTD_E_INVAL for bad options, -RTD_E_NOTFOUND for a missing
 * cgroup, or a negative errno.
 */
RTD_API int rtd_perf_monitor_new(const struct rtd_perf_opts *opts,
				 struct rtd_perf_monitor **out);

/**
 * rtd_perf_monitor_free - close every event, unmap the rings, remove the
 * probes this monitor created
 * @m: monitor, or NULL (nothing happens)
 */
RTD_API void rtd_perf_monitor_free(struct rtd_perf_monitor *m);

/**
 * rtd_perf_monitor_errmsg - what went wrong in the last failed call
 * @m: monitor
 *
 * Returns: a message naming the event, file or filter concerned ("" when
 * none); valid until the next call on @m.
 */
RTD_API const char *rtd_perf_monitor_errmsg(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_monitor_add_tracepoint - register a tracepoint
 * @m: monitor
 * @name: "subsystem:event" (or "subsystem/event")
 * @filter: kernel filter expression (e.g. "common_pid != 0"), or NULL
 * @out: receives the event handle (owned by @m), or NULL
 *
 * The tracepoint's format is parsed with libtraceevent so its fields can
 * be read by name with rtd_perf_sample_field().
 *
 * Returns: 0, -RTD_E_PERF_NOEVENT when tracefs has no such event,
 * -RTD_E_PERF_FILTER when the kernel rejects @filter,
 * -RTD_E_PERF_TRACEFS, or a negative errno.
 */
RTD_API int rtd_perf_monitor_add_tracepoint(struct rtd_perf_monitor *m,
					    const char *name,
					    const char *filter,
					    struct rtd_perf_event **out);

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
 * rtd_perf_monitor_remove - unregister an event, closing its descriptors
 * (and removing its tracefs probe)
 * @m: monitor
 * @ev: an event of @m (invalid afterwards); removing a group leader
 *      removes its members too
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_monitor_remove(struct rtd_perf_monitor *m,
				    struct rtd_perf_event *ev);

/**
 * rtd_perf_monitor_enable - enable one event, or all when @ev is NULL
 * @m: monitor
 * @ev: event or NULL
 *
 * Returns: 0 or a negative errno.
 */
RTD_API int rtd_perf_monitor_enable(struct rtd_perf_monitor *m,
				    struct rtd_perf_event *ev);

/**
 * rtd_perf_monitor_disable - disable one event, or all when @ev is NULL
 * @m: monitor
 * @ev: event or NULL
 *
 * Returns: 0 or a negative errno.
 */
RTD_API int rtd_perf_monitor_disable(struct rtd_perf_monitor *m,
				     struct rtd_perf_event *ev);

/**
 * rtd_perf_event_set_filter - set (or clear with NULL/"") a tracepoint filter
 * @ev: tracepoint or probe event
 * @filter: kernel filter expression
 *
 * Returns: 0, -RTD_E_PERF_FILTER when the kernel rejects it (the monitor's
 * rtd_perf_monitor_errmsg() names the event and the filter), or a
 * negative errno.
 */
RTD_API int rtd_perf_event_set_filter(struct rtd_perf_event *ev,
				      const char *filter);

/**
 * rtd_perf_monitor_run - read the rings and deliver records in time order
 * @m: monitor
 * @fn: called once per record (samples and the other record types)
 * @ctx: passed to @fn
 *
 * Blocks until rtd_perf_monitor_stop() is called, @fn returns non-zero,
 * or every event's descriptors hung up (the scoped processes are gone).
 * Records from all CPUs are merged by timestamp: a record is delivered
 * once every ring has been read past the time it was read at (perf's
 * finished-round rule), or when the monitor stops (the rings are drained).
 *
 * Returns: 0 when stopped or hung up, @fn's non-zero value, or a negative
 * errno.
 */
RTD_API int rtd_perf_monitor_run(struct rtd_perf_monitor *m,
				 rtd_perf_sample_fn fn, void *ctx);

/**
 * typedef rtd_perf_idle_fn - told when the run loop is about to sleep
 * @ctx: the pointer given to rtd_perf_monitor_run()
 *
 * The place to flush buffered output: nothing more is delivered until
 * new records arrive.
 */
typedef void (*rtd_perf_idle_fn)(void *ctx);

/**
 * rtd_perf_monitor_set_idle - set (or clear with NULL) the idle callback
 * @m: monitor
 * @fn: called from rtd_perf_monitor_run() each time it goes to sleep
 */
RTD_API void rtd_perf_monitor_set_idle(struct rtd_perf_monitor *m,
				       rtd_perf_idle_fn fn);

/**
 * rtd_perf_monitor_stop - make rtd_perf_monitor_run() return
 * @m: monitor
 * @wait: block until run() has returned (never from a signal handler or
 *        from the thread running the loop); false only signals
 *
 * Async-signal-safe when @wait is false (it writes an eventfd).
 */
RTD_API void rtd_perf_monitor_stop(struct rtd_perf_monitor *m, bool wait);

/**
 * rtd_perf_monitor_stats - counters of records, losses and ordering
 * @m: monitor
 * @st: filled up to @st->sz bytes (set sz first)
 */
RTD_API void rtd_perf_monitor_stats(const struct rtd_perf_monitor *m,
				    struct rtd_perf_stats *st);

/**
 * rtd_perf_monitor_ncpus - the number of rings (online CPUs)
 * @m: monitor
 *
 * Returns: count of rings.
 */
RTD_API unsigned rtd_perf_monitor_ncpus(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_event_name - the event's name ("sched:sched_switch", probe name)
 * @ev: event
 *
 * Returns: a string owned by the event.
 */
RTD_API const char *rtd_perf_event_name(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_kind - what the event is
 * @ev: event
 *
 * Returns: an enum rtd_perf_event_kind value.
 */
RTD_API enum rtd_perf_event_kind
rtd_perf_event_kind(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_symbol - a probe's symbol ("openat", "main+4"), or NULL
 * @ev: event
 *
 * Returns: a string owned by the event, or NULL for non-probes.
 */
RTD_API const char *rtd_perf_event_symbol(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_nfields - number of a tracepoint's own fields
 * @ev: event (tracepoints and tracefs probes have fields)
 *
 * Returns: the count (common_* fields not included), 0 for none.
 */
RTD_API unsigned rtd_perf_event_nfields(const struct rtd_perf_event *ev);

/**
 * rtd_perf_event_field - describe a tracepoint field
 * @ev: event
 * @i: index below rtd_perf_event_nfields()
 *
 * Returns: the description, owned by the event, or NULL when out of range.
 */
RTD_API const struct rtd_perf_field *
rtd_perf_event_field(const struct rtd_perf_event *ev, unsigned i);

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
 * rtd_perf_sample_field - decode a tracepoint field of a sample by name
 * @s: a PERF_RECORD_SAMPLE of a tracepoint or probe event
 * @name: field name (common_pid and the other common fields too)
 * @v: the value; strings and arrays point into the sample
 *
 * Every offset and length (including __data_loc/__rel_loc ones) is
 * checked against the raw data's size.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown field, -RTD_E_TRUNCATED when
 * the raw data is too short for it.
 */
RTD_API int rtd_perf_sample_field(const struct rtd_perf_sample *s,
				  const char *name, struct rtd_perf_value *v);

/**
 * rtd_perf_sample_field_at - decode the i-th field (see rtd_perf_event_field())
 * @s: sample
 * @i: field index
 * @v: the value
 *
 * Returns: as rtd_perf_sample_field().
 */
RTD_API int rtd_perf_sample_field_at(const struct rtd_perf_sample *s,
				     unsigned i, struct rtd_perf_value *v);

/**
 * rtd_perf_record_name - name of a PERF_RECORD_* type ("SAMPLE", "LOST", ...)
 * @type: record type
 *
 * Returns: a static string ("UNKNOWN" for unknown types).
 */
RTD_API const char *rtd_perf_record_name(uint32_t type);

/**
 * rtd_perf_counter_names - the counter names rtd_perf_monitor_add_counter()
 * knows
 *
 * Returns: a NULL-terminated static array.
 */
RTD_API const char *const *rtd_perf_counter_names(void);

/* ---- system calls (perf trace) ----------------------------------------- */

struct rtd_perf_syscalls;

/* Bytes of a string argument kept (rtd_perf_syscall.strs). */
#define RTD_PERF_SYSCALL_STR 256

/**
 * struct rtd_perf_syscall - one system call, its enter and exit paired
 * @pid: process
 * @tid: thread
 * @nr: the call's number on this machine
 * @name: its name (libseccomp), or NULL for a number it does not know
 * @args: the six argument registers at entry
 * @ret: the return value (-4095..-1: -errno)
 * @enter_ns: CLOCK_MONOTONIC at entry
 * @exit_ns: CLOCK_MONOTONIC at exit
 * @has_enter: the entry was seen (false for a call entered before tracing)
 * @comm: the thread's name (COMM records, else /proc when first seen)
 * @has_str: which arguments' strings were read
 * @strs: path-like string arguments, read from the process at entry
 *        ("\x01" alone: unreadable)
 */
struct rtd_perf_syscall {
	uint32_t pid, tid;
	long nr;
	const char *name;
	uint64_t args[6];
	int64_t ret;
	uint64_t enter_ns, exit_ns;
	bool has_enter;
	char comm[16];
	bool has_str[6];
	char strs[6][RTD_PERF_SYSCALL_STR];
};

/* Flags for rtd_perf_syscalls_new(). */
enum rtd_perf_syscalls_flags {
	/* keep counts and times per process and call (memory grows with
	 * the processes seen, up to 16384 of them) */
	RTD_PERF_SYSCALLS_SUMMARY = 1u << 0,
	/* do not read path arguments from the processes */
	RTD_PERF_SYSCALLS_NO_STRINGS = 1u << 1,
};

/**
 * rtd_perf_syscalls_new - trace system calls on a monitor
 * @m: monitor (its scope: processes, cgroup or system)
 * @names: only these calls ("openat", "read"), by name; NULL/0: all
 * @nnames: their count
 * @flags: RTD_PERF_SYSCALLS_* flags
 * @out: receives the tracer
 *
 * Registers raw_syscalls:sys_enter and sys_exit, with a kernel filter on
 * the numbers of @names (create the monitor with RTD_PERF_TRACK_COMM so
 * thread names follow exec). Names and numbers come from libseccomp; argument
 * names and types from the kernel's syscalls:sys_enter_* formats.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown name (the monitor's errmsg
 * names it), or an error of rtd_perf_monitor_add_tracepoint().
 */
RTD_API int rtd_perf_syscalls_new(struct rtd_perf_monitor *m,
				  const char *const *names, size_t nnames,
				  unsigned flags, struct rtd_perf_syscalls **out);

/**
 * rtd_perf_syscalls_strings_at_entry - are string arguments read at entry?
 * @s: tracer
 * @why: receives, when they are not, why (one line, owned by @s); may be
 *       NULL
 *
 * Where the process may load BPF (root, or CAP_BPF and CAP_PERFMON) and
 * libbpf.so.1 is there, a BPF program at sys_enter reads each traced
 * call's path-like arguments from the process as strace does, at entry.
 * Otherwise, and for a string on a page the process had not touched at
 * entry, they are read with process_vm_readv when the call is handled:
 * after the fact, "?" (RTD_PERF_SYSCALL_STR's "\x01") when gone.
 *
 * Returns: true when read at entry (BPF).
 */
RTD_API bool rtd_perf_syscalls_strings_at_entry(const struct rtd_perf_syscalls *s,
						const char **why);

/**
 * rtd_perf_syscalls_free - free a tracer (its events belong to the monitor)
 * @s: tracer, or NULL
 */
RTD_API void rtd_perf_syscalls_free(struct rtd_perf_syscalls *s);

/**
 * rtd_perf_syscalls_feed - give the tracer a record of the monitor
 * @s: tracer
 * @smp: a record from rtd_perf_monitor_run()
 * @out: filled when a call completed
 *
 * Returns: 1 when @out holds a completed call (at its exit), 0 otherwise
 * (an entry, or a record of another event).
 */
RTD_API int rtd_perf_syscalls_feed(struct rtd_perf_syscalls *s,
				   const struct rtd_perf_sample *smp,
				   struct rtd_perf_syscall *out);

/**
 * rtd_perf_syscalls_format_args - the arguments as perf trace shows them
 * @s: tracer
 * @c: a completed call
 * @buf: receives "dfd: CWD, filename: \"/etc/hosts\", flags: RDONLY|CLOEXEC"
 * @n: its size (the text is cut to fit)
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_syscalls_format_args(struct rtd_perf_syscalls *s,
					  const struct rtd_perf_syscall *c,
					  char *buf, size_t n);

/**
 * rtd_perf_syscalls_format_ret - the return value: "3", "0x7f..." or
 * "-1 ENOENT (No such file or directory)"
 * @c: a completed call
 * @buf: receives the text
 * @n: its size
 *
 * Returns: 0 or -RTD_E_INVAL.
 */
RTD_API int rtd_perf_syscalls_format_ret(const struct rtd_perf_syscall *c,
					 char *buf, size_t n);

/**
 * rtd_perf_syscalls_write_summary - perf trace -s: per process, per call:
 * calls, errors, total/min/avg/max time and stddev
 * @s: tracer
 * @f: output
 *
 * Returns: 0, -ENOMEM or -EIO.
 */
RTD_API int rtd_perf_syscalls_write_summary(struct rtd_perf_syscalls *s,
					    FILE *f);

/**
 * rtd_perf_syscall_name - a system call's name on this machine
 * @s: tracer (caches names)
 * @nr: its number
 *
 * Returns: the name, or NULL.
 */
RTD_API const char *rtd_perf_syscall_name(struct rtd_perf_syscalls *s, long nr);

/**
 * rtd_perf_syscall_nr - a system call's number on this machine
 * @name: its name ("openat")
 *
 * Returns: the number, or -1 for a name libseccomp does not know.
 */
RTD_API long rtd_perf_syscall_nr(const char *name);

/* ---- sampling CPU profiles ------------------------------------------------ */

/* How a sample's user-space call chain is found. */
enum rtd_perf_callgraph {
	RTD_PERF_CG_FP = 0,  /* the kernel walks frame pointers (callchain) */
	RTD_PERF_CG_DWARF,   /* a copy of the user stack and registers,
			      * unwound by libdw from .eh_frame/.debug_frame */
	RTD_PERF_CG_NONE,    /* the sampled address only */
};

/**
 * struct rtd_perf_sampler_opts - a sampling event (rtd_perf_monitor_add_sampler())
 * @sz: sizeof(struct rtd_perf_sampler_opts)
 * @event: counter name as for rtd_perf_monitor_add_counter() (NULL:
 *         "cpu-clock", the software timer every kernel has), or a
 *         tracepoint "subsystem:name", sampled at every hit with its raw
 *         fields (PERF_SAMPLE_RAW; @freq must be 0)
 * @freq: samples per second per thread or CPU (0: 99, unless @period)
 * @period: sample every @period events instead of a frequency
 * @callgraph: RTD_PERF_CG_*
 * @stack_bytes: RTD_PERF_CG_DWARF: user stack bytes copied per sample
 *               (0: 8192, perf's default; at most 65528)
 * @exclude_kernel: user space only (no kernel frames)
 * @no_tracking: no MMAP2/COMM/FORK/EXIT/EXEC records (they are on by
 *               default, on the first sampler of a monitor)
 * @max_stack: deepest call chain taken (0: the kernel's limit)
 * @context_switch: also PERF_RECORD_SWITCH records (attr.context_switch):
 *                  each scoped thread's switch out and back in, with
 *                  its tid and time (SWITCH_CPU_WIDE system-wide)
 * @no_kernel_frames: call chains without their kernel part
 *                    (attr.exclude_callchain_kernel, perf's
 *                    --user-callchains): unlike @exclude_kernel, the
 *                    event still counts in the kernel, as a tracepoint
 *                    only can
 */
struct rtd_perf_sampler_opts {
	size_t sz;
	const char *event;
	unsigned freq;
	uint64_t period;
	enum rtd_perf_callgraph callgraph;
	unsigned stack_bytes;
	bool exclude_kernel;
	bool no_tracking;
	unsigned max_stack;
	bool context_switch;
	bool no_kernel_frames;
};

/**
 * rtd_perf_monitor_add_sampler - register a sampling event with call chains
 * @m: monitor
 * @o: options (NULL: cpu-clock at 99 Hz with frame-pointer call chains)
 * @out: receives the event (owned by @m), or NULL
 *
 * Samples carry IP, TID, TIME, PERIOD and CALLCHAIN (kernel and user;
 * with RTD_PERF_CG_DWARF the kernel part only, plus REGS_USER and
 * STACK_USER). The first sampler also asks for the records that tell
 * where code is: MMAP2 (executable mappings), COMM (with exec), FORK and
 * EXIT. When the kernel refuses kernel samples to this user
 * (perf_event_paranoid), the event counts user space only, as perf does,
 * and rtd_perf_monitor_user_only() says so.
 *
 * Returns: 0, -RTD_E_PERF_NOEVENT, -RTD_E_PERF_NOTSUPP, or a negative errno.
 */
RTD_API int rtd_perf_monitor_add_sampler(struct rtd_perf_monitor *m,
					 const struct rtd_perf_sampler_opts *o,
					 struct rtd_perf_event **out);

/**
 * rtd_perf_monitor_user_only - did the kernel make events user-space only?
 * @m: monitor
 *
 * Returns: true when an event or the rings had to be opened with
 * exclude_kernel because the kernel refused more (perf_event_paranoid).
 */
RTD_API bool rtd_perf_monitor_user_only(const struct rtd_perf_monitor *m);

/**
 * rtd_perf_sampling_check - may this process sample @pid through perf_event?
 * @pid: the process (0: this one)
 * @why: receives why not, one line (may be NULL)
 * @n: size of @why
 *
 * Opens (and closes) a cpu-clock sampling event of user space on @pid,
 * the least a profiler asks for: a caller with another way to sample
 * (EventPipe's sampler) chooses with this and says why.
 *
 * Returns: 0, or the negative errno perf_event_open gave (-EACCES,
 * -EPERM, -ENOSYS, -ESRCH, ...).
 */
RTD_API int rtd_perf_sampling_check(pid_t pid, char *why, size_t n);

struct rtd_perf_profiler;

/* Flags for rtd_perf_profiler_opts.flags. */
enum rtd_perf_profiler_flags {
	/* the scoped pid is a child waiting to exec: sample from its exec */
	RTD_PERF_PROF_ENABLE_ON_EXEC = 1u << 0,
	/* do not switch .NET perf maps on over the diagnostics IPC */
	RTD_PERF_PROF_NO_DOTNET = 1u << 1,
	/* no root frame per process ("comm") in the profile */
	RTD_PERF_PROF_NO_COMM = 1u << 2,
	/* keep each sample's time and stack for rtd_perf_profiler_each_sample()
	 * (16 bytes a sample, in a temporary file: memory stays bounded) */
	RTD_PERF_PROF_KEEP_SAMPLES = 1u << 3,
	/* off-CPU: where threads wait and how long, instead of CPU samples
	 * (see rtd_perf_profiler_new()) */
	RTD_PERF_PROF_OFF_CPU = 1u << 4,
	/* read the rings with a thread of their own (RTD_PERF_READER_THREAD,
	 * the default copy cap): symbolizing no longer makes the kernel drop
	 * samples, for up to 64 MiB more memory */
	RTD_PERF_PROF_READER_THREAD = 1u << 5,
	/* every record will be written out (rtd_perf_profiler_write_data()):
	 * off-CPU takes the perf path, which copies each switch out (the BPF
	 * path keeps totals in the kernel) */
	RTD_PERF_PROF_EACH_RECORD = 1u << 6,
	/* each rtd_perf_profiler_drain() forgets what it gave out: the call
	 * tree restarts (the off-CPU waits still open kept) and the
	 * symbolizer's locations and names are cut back to those still used
	 * once they pass a bound (rtd_sym_keep_locations()), so memory
	 * follows a window, not the recording; rtd_perf_profiler_profile()
	 * then counts only what was not drained. For a live consumer that
	 * copies what it keeps (a flight ring, a timeline being written) */
	RTD_PERF_PROF_WINDOWS = 1u << 7,
};

/* States of an off-CPU wait (rtd_perf_profiler_opts.offcpu_states), from
 * sched_switch's prev_state. */
enum rtd_perf_offcpu_state {
	RTD_PERF_OFFCPU_SLEEP = 1u << 0,     /* S: interruptible sleep: locks,
					      * futexes, I/O readiness, timers */
	RTD_PERF_OFFCPU_DISK = 1u << 1,      /* D: uninterruptible: disk I/O,
					      * page faults, some kernel locks */
	RTD_PERF_OFFCPU_PREEMPTED = 1u << 2, /* R: still runnable, taken off
					      * the CPU (preempted, yielded):
					      * CPU contention, not a wait */
	RTD_PERF_OFFCPU_OTHER = 1u << 3,     /* T, t, P, I: stopped, traced,
					      * parked, idle */
	/* the default: every state but preempted */
	RTD_PERF_OFFCPU_WAITS = RTD_PERF_OFFCPU_SLEEP | RTD_PERF_OFFCPU_DISK |
				RTD_PERF_OFFCPU_OTHER,
	RTD_PERF_OFFCPU_ALL = RTD_PERF_OFFCPU_WAITS | RTD_PERF_OFFCPU_PREEMPTED,
};

/* How off-CPU waits are taken (rtd_perf_profiler_opts.offcpu_via). */
enum rtd_perf_offcpu_via {
	/* BPF where this process may load it and the options allow it,
	 * else perf (rtd_perf_profiler_offcpu_via() says why) */
	RTD_PERF_OFFCPU_VIA_AUTO = 0,
	/* a BPF program on sched_switch sums the waits per (thread, stacks,
	 * state) in the kernel; rtd_perf_profiler_new() fails without it */
	RTD_PERF_OFFCPU_VIA_BPF,
	/* every switch copied out: sched_switch samples with their stacks,
	 * paired with switch records in user space */
	RTD_PERF_OFFCPU_VIA_PERF,
};

/**
 * struct rtd_perf_profiler_opts - what to profile, and how
 * @sz: sizeof(struct rtd_perf_profiler_opts)
 * @pids: processes (every thread, later ones too); none and no cgroups:
 *        the whole system
 * @npids: number of @pids
 * @cgroups: cgroups to profile instead (see struct rtd_perf_opts)
 * @ncgroups: number of @cgroups
 * @flags: RTD_PERF_PROF_* flags
 * @sampler: the sampling event (NULL: defaults)
 * @ring_pages: ring data pages per CPU (0: perf's default,
 *              rtd_perf_default_ring_pages(); off-CPU at least 512)
 * @sym: symbolizer options (NULL: defaults)
 * @offcpu_states: RTD_PERF_PROF_OFF_CPU: the RTD_PERF_OFFCPU_* states
 *                 whose waits are kept (0: RTD_PERF_OFFCPU_WAITS)
 * @offcpu_via: RTD_PERF_PROF_OFF_CPU: an enum rtd_perf_offcpu_via
 */
struct rtd_perf_profiler_opts {
	size_t sz;
	const pid_t *pids;
	size_t npids;
	const char *const *cgroups;
	size_t ncgroups;
	unsigned flags;
	const struct rtd_perf_sampler_opts *sampler;
	unsigned ring_pages;
	const struct rtd_sym_opts *sym;
	unsigned offcpu_states;
	unsigned offcpu_via;
};

/**
 * rtd_perf_profiler_new - set up a CPU profiler (events open, not running)
 * @o: options
 * @out: receives the profiler
 *
 * For each scoped .NET process whose perf map is off, the map is switched
 * on over the diagnostics IPC now and off again by
 * rtd_perf_profiler_free(), so JIT-compiled methods get their names.
 *
 * With RTD_PERF_PROF_OFF_CPU the profile says where threads wait instead
 * of where they run, without BPF: every sched:sched_switch of a scoped
 * thread is sampled with its call chain (frame pointers, or a stack copy
 * for -g dwarf; the sampler's event and frequency are ignored) and its
 * prev_state, and the thread's next switch-in (a PERF_RECORD_SWITCH) ends
 * the wait: delay = switch-in time - switch-out time, attributed to the
 * switch-out stack. Memory: one pending switch-out per thread. The
 * profile has Go's block profile types: "contentions"/"count" (waits) and
 * "delay"/"nanoseconds" (the default), with a "state" label (S, D, R, T).
 * A wait still open when the profile is built is not in it (a take keeps
 * it for the next one). Needs tracefs and the right to sample
 * tracepoints (root, or CAP_PERFMON with perf_event_paranoid <= 1).
 * A switch happens in the kernel: the sampler's @exclude_kernel then
 * means stacks without kernel frames (its @no_kernel_frames), not a
 * sampler that never fires.
 *
 * Off-CPU through BPF (@offcpu_via; the default where possible): a BPF
 * program on sched_switch (tp_btf, CO-RE) keeps the same waits as totals
 * per (thread, user and kernel stack, state) in the kernel, read when
 * rtd_perf_profiler_run() returns and when a process in scope exits (its
 * mappings are still known then); the monitor then carries
 * only the records that say where code is. Same answers, nothing copied
 * out per switch. Not for RTD_PERF_PROF_KEEP_SAMPLES (a timeline needs
 * each wait's own time), -g dwarf (BPF takes frame-pointer stacks) or
 * cgroups; needs libbpf.so.1 at run time and root (or CAP_BPF and
 * CAP_PERFMON).
 *
 * Returns: 0, or a negative error; rtd_perf_profiler_errmsg() says more.
 */
RTD_API int rtd_perf_profiler_new(const struct rtd_perf_profiler_opts *o,
				  struct rtd_perf_profiler **out);

/**
 * rtd_perf_profiler_errmsg - what the last failed call went wrong on
 * @p: profiler (may be NULL after a failed rtd_perf_profiler_new(): then
 *     the message of that call, per thread)
 *
 * Returns: a message, "" when none.
 */
RTD_API const char *rtd_perf_profiler_errmsg(const struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_offcpu_via - how an off-CPU profiler takes its waits
 * @p: profiler
 * @why: receives, for the perf path, why BPF is not used (one line,
 *       owned by @p: "asked for" when it was); may be NULL
 *
 * Returns: RTD_PERF_OFFCPU_VIA_BPF or RTD_PERF_OFFCPU_VIA_PERF;
 * RTD_PERF_OFFCPU_VIA_AUTO for a CPU profiler.
 */
RTD_API enum rtd_perf_offcpu_via
rtd_perf_profiler_offcpu_via(const struct rtd_perf_profiler *p,
			     const char **why);

/**
 * rtd_perf_profiler_monitor - the monitor underneath (for stats, stop)
 * @p: profiler
 *
 * Returns: the monitor, owned by @p.
 */
RTD_API struct rtd_perf_monitor *
rtd_perf_profiler_monitor(struct rtd_perf_profiler *p);

struct rtd_perf_data_writer;

/**
 * rtd_perf_profiler_write_data - also write everything recorded to a
 * perf.data file, as perf record would (rtdiag/perf_data.h)
 * @p: a profiler not run yet
 * @w: an open writer (borrowed until rtd_perf_profiler_run() returns;
 *     the caller closes it)
 *
 * Gives @w the profiler's events (attributes, names, ids), the records
 * perf record synthesizes for what exists already (the kernel's mapping,
 * the scoped processes' threads and executable mappings; every process
 * when system-wide; none for a program started with enable_on_exec, whose
 * mappings the kernel writes as it execs), then during the run every
 * record the kernel writes.
 *
 * Returns: 0, -RTD_E_UNSUPPORTED for off-CPU through BPF (made without
 * RTD_PERF_PROF_EACH_RECORD: the switches stay in the kernel), or the
 * writer's error.
 */
RTD_API int rtd_perf_profiler_write_data(struct rtd_perf_profiler *p,
					 struct rtd_perf_data_writer *w);

/**
 * rtd_perf_profiler_run - sample until stopped or every scoped process is gone
 * @p: profiler
 *
 * Stacks are kept as location ids in a call tree (memory grows with
 * distinct stacks, not with samples); names are found after the run.
 * Stop it with rtd_perf_monitor_stop() on rtd_perf_profiler_monitor().
 *
 * Returns: 0 or a negative error.
 */
RTD_API int rtd_perf_profiler_run(struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_profile - name every location and build the profile
 * @p: profiler
 * @out: receives a new profile ("samples"/"count" and "cpu"/"nanoseconds")
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_perf_profiler_profile(struct rtd_perf_profiler *p,
				      rtd_profile **out);

/**
 * rtd_perf_profiler_take - the profile of the samples since the last take,
 * for a profiler that goes on (a continuous profiler's windows)
 * @p: profiler, between two rtd_perf_profiler_run() calls (stop the run
 *     loop, take, run again: the kernel keeps sampling into the rings
 *     meanwhile, so nothing is lost)
 * @out: receives a new profile, as rtd_perf_profiler_profile() makes it;
 *       only the locations of the samples taken are named
 *
 * The call tree then restarts empty: memory follows the distinct stacks of
 * one take, not of the whole run; the symbolizer keeps what it loaded.
 *
 * Returns: 0, -RTD_E_INVAL or -ENOMEM.
 */
RTD_API int rtd_perf_profiler_take(struct rtd_perf_profiler *p,
				   rtd_profile **out);

/**
 * struct rtd_perf_profiler_sample - one kept sample, named
 * @sz: sizeof(struct rtd_perf_profiler_sample)
 * @time: when it was taken, CLOCK_MONOTONIC ns
 * @pid: its process
 * @tid: its thread
 * @thread: the thread's name (its last COMM), or NULL
 * @process: the name of the process's main thread when it was seen, or NULL
 * @frames: its stack, leaf first, inlined functions as frames of their
 *          own (names as in rtd_perf_profiler_profile()'s profile; file
 *          code no symbol names is "module+0xOFFSET")
 * @nframes: their count
 * @duration: off-CPU (RTD_PERF_PROF_OFF_CPU): the wait's length in ns,
 *            @time being when the thread left the CPU; 0 for a CPU sample
 * @state: off-CPU: the thread's state when it left ("S" sleep, "D" disk,
 *         "R" preempted, "T" other); NULL for a CPU sample
 * @open: an off-CPU wait still going on when the recording stopped
 *        (rtd_perf_profiler_close_waits()): @duration runs to the stop
 */
struct rtd_perf_profiler_sample {
	size_t sz;
	uint64_t time;
	uint32_t pid, tid;
	const char *thread;
	const char *process;
	const struct rtd_frame *frames;
	size_t nframes;
	uint64_t duration;
	const char *state;
	bool open;
};

/**
 * rtd_perf_wait_state_name - what an off-CPU wait is called by its state
 * @state: a sample's @state ("S", "D", "R", "T", ...), or NULL
 *
 * Returns: "sleep" (S), "disk" (D), "preempted" (R) or "other", the names
 * timelines give off-CPU slices; never NULL.
 */
RTD_API const char *rtd_perf_wait_state_name(const char *state);

/* Called for each kept sample; a non-zero return stops the walk and is
 * returned. Everything it is given lives until it returns. */
typedef int (*rtd_perf_profiler_sample_fn)(
	const struct rtd_perf_profiler_sample *s, void *ctx);

/**
 * rtd_perf_profiler_each_sample - every kept sample, in the order taken
 * @p: profiler made with RTD_PERF_PROF_KEEP_SAMPLES, after a run
 * @fn: called for each sample (time order: the monitor merges its rings;
 *      off-CPU, each wait in the order the waits ended, with @time its
 *      start and @duration its length, so starts may go back in time
 *      across threads, never within one)
 * @ctx: passed to @fn
 *
 * Names every location first (as rtd_perf_profiler_profile() does; the
 * two may be called in either order). rtd_perf_profiler_take() drops the
 * samples kept so far.
 *
 * Returns: 0, what @fn returned, -RTD_E_STATE when samples are not kept,
 * -RTD_E_INVAL, -ENOMEM or -EIO.
 */
RTD_API int rtd_perf_profiler_each_sample(struct rtd_perf_profiler *p,
					  rtd_perf_profiler_sample_fn fn,
					  void *ctx);

/**
 * rtd_perf_profiler_close_waits - the off-CPU waits still going on, kept
 * as if they ended at @end_ns (a recording's stop)
 * @p: an off-CPU profiler (RTD_PERF_PROF_OFF_CPU), between runs
 * @end_ns: the stop's time, on the samples' clock (CLOCK_MONOTONIC)
 *
 * A thread that left the CPU during the recording and was not back at its
 * stop would otherwise leave no trace of its wait: each such wait is
 * counted in the call tree and kept (RTD_PERF_PROF_KEEP_SAMPLES) with
 * @open set, from its switch-out to @end_ns. The waits are then no longer
 * pending (a later switch-in is not paired).
 *
 * Returns: the number of waits closed, 0 for a CPU profiler, or -EIO.
 */
RTD_API int rtd_perf_profiler_close_waits(struct rtd_perf_profiler *p, uint64_t end_ns);

/**
 * rtd_perf_profiler_drain - the samples kept since the last drain, then
 * dropped: a recording read while it runs
 * @p: profiler made with RTD_PERF_PROF_KEEP_SAMPLES, between two
 *     rtd_perf_profiler_run() calls (stop the run, drain, run again: the
 *     kernel keeps sampling into the rings meanwhile)
 * @fn: called for each sample, as rtd_perf_profiler_each_sample() gives
 *      them (off-CPU: each wait that ended, in the order of the ends)
 * @ctx: passed to @fn
 *
 * Names only the locations these samples use, then empties the kept
 * samples' file: disk and time follow one window, not the recording. The
 * call tree keeps them: rtd_perf_profiler_profile() at the end still
 * counts every sample (memory follows the recording's distinct stacks),
 * unless the profiler was made with RTD_PERF_PROF_WINDOWS: then the tree
 * restarts after each drain and the locations are trimmed. Once a
 * profiler is drained its runs are windows of one recording: the
 * profile's start is the first run's. The names given to @fn are valid
 * until the next drain.
 *
 * Returns: as rtd_perf_profiler_each_sample().
 */
RTD_API int rtd_perf_profiler_drain(struct rtd_perf_profiler *p,
				    rtd_perf_profiler_sample_fn fn, void *ctx);

/**
 * rtd_perf_profiler_frame_module - the module a frame name of the profile
 * was found in
 * @p: profiler, after rtd_perf_profiler_profile()
 * @name: a frame name of that profile
 *
 * Returns: the module as the process names it ("/usr/lib/.../libc.so.6",
 * "[kernel.kallsyms]", "[jit]"), or NULL when @name is not a frame of it.
 */
RTD_API const char *rtd_perf_profiler_frame_module(struct rtd_perf_profiler *p,
						   const char *name);

/**
 * struct rtd_perf_profiler_stats - what a profiler saw
 * @sz: sizeof(struct rtd_perf_profiler_stats)
 * @samples: samples taken
 * @kernel_samples: of those, in the kernel
 * @lost: samples lost (ring full)
 * @nodes: call tree nodes (distinct stack prefixes)
 * @truncated: stacks cut at the call tree's cap
 * @unwind_failed: dwarf mode: stacks libdw could not unwind past the leaf
 * @processes: processes seen
 * @mmaps: MMAP/MMAP2 records
 * @comms: COMM records
 * @forks: FORK records
 * @exits: EXIT records
 * @user_only: the kernel allowed user space only
 * @dotnet_perfmaps: .NET perf maps switched on for the run
 * @run_start: when rtd_perf_profiler_run() started, CLOCK_MONOTONIC ns (the
 *             clock of the samples' times)
 * @run_end: when it returned, the same clock (0 while it runs)
 * @offcpu_waits: off-CPU: switch-outs paired with their switch-in
 *                (every state, kept or not)
 * @offcpu_unpaired: off-CPU: switch-ins without a switch-out (the thread
 *                   left the CPU before the recording began) or
 *                   switch-outs whose switch-in was lost
 * @offcpu_ns: off-CPU: wait time by state, S, D, R (preempted), T
 *             (other), kept or not
 * @location_trims: times the symbolizer's locations were cut back to those
 *                  the call tree still used (RTD_PERF_PROF_WINDOWS, and
 *                  rtd_perf_profiler_take())
 */
struct rtd_perf_profiler_stats {
	size_t sz;
	uint64_t samples;
	uint64_t kernel_samples;
	uint64_t lost;
	uint64_t nodes;
	uint64_t truncated;
	uint64_t unwind_failed;
	uint64_t processes;
	uint64_t mmaps, comms, forks, exits;
	bool user_only;
	unsigned dotnet_perfmaps;
	uint64_t run_start, run_end;
	uint64_t offcpu_waits;
	uint64_t offcpu_unpaired;
	uint64_t offcpu_ns[4];
	uint64_t location_trims;
};

/**
 * rtd_perf_profiler_stats - counters of a profiler
 * @p: profiler
 * @st: filled up to @st->sz bytes
 */
RTD_API void rtd_perf_profiler_stats(const struct rtd_perf_profiler *p,
				     struct rtd_perf_profiler_stats *st);

/**
 * rtd_perf_profiler_symbolizer - the symbolizer of a profiler
 * @p: profiler
 *
 * Returns: the symbolizer, owned by @p (for its stats and warnings).
 */
RTD_API rtd_symbolizer *rtd_perf_profiler_symbolizer(struct rtd_perf_profiler *p);

/**
 * rtd_perf_profiler_free - close everything; .NET perf maps switched on
 * by the profiler are switched off again
 * @p: profiler, or NULL
 */
RTD_API void rtd_perf_profiler_free(struct rtd_perf_profiler *p);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_PERF_H */
