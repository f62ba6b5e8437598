/* SPDX-License-Identifier: MIT */
/* internal.h - the perf module's private structures and helpers. */
#ifndef RTD_PERF_INTERNAL_H
#define RTD_PERF_INTERNAL_H

#include <linux/perf_event.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/file.h"
#include "common/map.h"
#include "perf/record.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_probe.h"
#include "rtdiag/perf_sample.h"
#include "rtdiag/perf_tracepoint.h"
#include "rtdiag/symbols.h"

struct tep_handle;
struct tracefs_dynevent;

/* Caps on what comes from the system or the caller. */
#define PERF_MAX_CPUS 4096          /* rings */

/*
 * From how many rings run() merges with a heap instead of a scan
 * (default 9). Tests lower it to run the heap on small machines.
 */
extern unsigned perf_heap_min_rings;
#define PERF_MAX_TARGETS 4096       /* threads or cgroups in scope */
#define PERF_MAX_SCOPED 65536       /* RTD_PERF_SCOPE_CPU_WIDE: processes followed */
#define PERF_MAX_FORMAT (256u << 10) /* one tracefs format file */
#define PERF_MAX_IDS (1u << 20)     /* kernel event ids of one monitor */
#define PERF_MAX_RING_PAGES (1u << 16)

/* One ring per online CPU. */
struct perf_ring {
	int cpu;
	int fd;                 /* the descriptor the ring is mapped from */
	void *base;             /* control page + data pages */
	size_t map_len;
	uint8_t *data;
	uint64_t size;          /* data bytes, a power of two */
	uint64_t head;          /* data_head as read this round */
	uint64_t tail;          /* our read position (data_tail written back) */
	uint8_t *scratch;       /* a record that wraps the end, copied out */
	uint64_t lost;          /* from LOST records */
	uint64_t lost_read;     /* from PERF_FORMAT_LOST reads */
	/* the next undelivered record */
	bool has_next;
	uint16_t next_size;
	const uint8_t *next;
	uint64_t next_ts;
	struct rtd_perf_event *next_ev; /* its event, NULL when unknown */
	bool hup;
	/*
	 * RTD_PERF_READER_THREAD: data/size/head/tail above are a copy of
	 * the kernel's ring in our memory, which the reader thread fills
	 * (reader.c); the kernel's ring is kdata/ksize/ktail.
	 */
	uint8_t *kdata;
	uint64_t ksize;
	uint64_t ktail;         /* reader: data_tail written back */
	uint64_t wr;            /* reader: copy bytes written */
	/* under m->rlock: the reader's last pass, the decoder's position */
	uint64_t pub_wr;        /* copy bytes written */
	uint64_t pub_last;      /* copy position of the last record copied */
	bool pub_full;          /* the pass stopped at the copy's end */
	uint64_t pub_rd;        /* copy bytes delivered (decoder) */
	uint64_t last_ts;       /* decoder: the last record delivered's time */
	uint64_t snap_last;     /* decoder: pub_last and pub_full as taken */
	bool snap_full;
};

struct rtd_perf_event {
	struct rtd_perf_monitor *m;
	struct rtd_perf_event *next;       /* the monitor's list */
	struct rtd_perf_event *leader;     /* counter group leader, or self */
	enum rtd_perf_event_kind kind;
	char *name;
	char *symbol;                      /* probes: what the user asked for */
	struct perf_event_attr attr;
	struct perf_layout lay;
	unsigned ts_off;                   /* offset of TIME in a sample */
	int *fds;                          /* one per (target, cpu), -1 absent */
	uint64_t *ids;                     /* kernel id of each fd */
	int *fd_ring;                      /* ring index of each fd, -1 none */
	size_t nfds;
	/* tracepoint fields: common ones first */
	struct rtd_perf_field *fields;
	unsigned nfields_all, ncommon;
	/* tracefs dynamic event this event created, removed on close */
	struct tracefs_dynevent *dyn;
	unsigned guard_id; /* its rtd_guard registration */
	unsigned nmembers;                 /* counters: group size (leader) */
};

struct rtd_perf_monitor {
	struct rtd_perf_opts opts;         /* copied; pointers below */
	unsigned flags;
	/* scope: targets are tids, cgroup fds, or one -1 (system-wide) */
	pid_t *pids;                       /* the processes asked for (BPF) */
	/* RTD_PERF_SCOPE_CPU_WIDE: events on every CPU for all tasks, the
	 * records of the processes in scope kept (pid -> SCOPE_ON or
	 * SCOPE_AT_EXEC), the run over when every pidfd says gone */
	bool scoped;
	rtd_map scope;
	int *pidfds;
	size_t npidfds;
	uint64_t scope_full;               /* children not followed: cap */
	int *targets;
	size_t ntargets;
	bool cgroup_scope;
	int *cpus;
	unsigned ncpus;
	struct perf_ring *rings;
	bool rings_ready;
	unsigned ring_pages;
	unsigned wakeup_bytes;
	unsigned max_latency_ms;
	struct perf_event_attr defattr;
	bool have_defattr;
	struct perf_layout base_lay;       /* the sample_id layout all share */
	/*
	 * rtd_perf_monitor_stop() adds one to stop_gen, then writes stop_fd
	 * (which only wakes the pollers). A run() honours the stops asked
	 * before its loop ends: stop_seen (the run's thread's) is stop_gen as
	 * the last run's loop ended, so a stop asked later, in its final
	 * drain or between two runs, stays pending for the next run().
	 */
	int stop_fd;
	atomic_uint stop_gen;
	unsigned stop_seen;
	bool run_stopped;                  /* the last run honoured a stop */
	int64_t run_end_ns;                /* its loop's end (perf_monitor_run_end()) */
	atomic_int running;
	struct tep_handle *tep;
	char tracefs[PATH_MAX];
	char cgroup2[PATH_MAX];
	char cgroup1[PATH_MAX];
	char pmu_dir[PATH_MAX];
	char probe_group[48];              /* "rtdiag_<pid>_<starttime>" */
	rtd_map ids;                       /* kernel id -> event */
	uint64_t last_id;                  /* one-entry cache over ids */
	struct rtd_perf_event *last_ev;
	struct rtd_perf_event *events;
	unsigned probe_seq;
	char errmsg[1024];
	struct rtd_perf_stats st;
	bool no_format_lost;               /* kernel before 6.0 */
	bool user_only;                    /* the kernel refused kernel counting */
	bool tracking;                     /* a sampler asks for MMAP2/COMM/TASK */
	rtd_perf_idle_fn idle;
	/* RTD_PERF_READER_THREAD (reader.c) */
	bool threaded;
	uint64_t copy_bytes;               /* each ring's copy */
	pthread_mutex_t rlock;             /* the rings' pub_* and below */
	bool rlock_ready;
	uint64_t pub_limit;   /* no record older than this is still to copy
			       * from the rings the last pass emptied */
	bool reader_done;     /* the reader thread has left its loop */
	uint64_t copy_full;   /* passes stopped at a full copy */
	uint64_t copy_max;    /* most bytes waiting in one copy */
	uint64_t copy_bad;    /* corrupt kernel rings skipped by the reader */
	uint64_t pass_prev;   /* start time of the reader's last pass */
	atomic_int reader_quit;
	int wake_fd;          /* reader -> decoder: a pass is published */
	int space_fd;         /* decoder -> reader: copy space freed, quit */
};

/* monitor.c */
int perf_set_err(struct rtd_perf_monitor *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int perf_event_open_all(struct rtd_perf_monitor *m, struct rtd_perf_event *ev);
struct rtd_perf_event *perf_event_alloc(struct rtd_perf_monitor *m,
					enum rtd_perf_event_kind kind,
					const char *name);
void perf_event_destroy(struct rtd_perf_event *ev);
int perf_add_tracepoint_named(struct rtd_perf_monitor *m, const char *sys,
			      const char *name, const char *filter,
			      struct rtd_perf_event *ev);

/* reader.c: the reader thread (RTD_PERF_READER_THREAD) */
/* Allocate each ring's copy and the fds; idempotent. */
int perf_copies_setup(struct rtd_perf_monitor *m);
void perf_copies_free(struct rtd_perf_monitor *m);
/* One pass over every kernel ring: copy what fits into the copies and
 * publish it, with prev_start (the previous pass's start) as pub_limit.
 * Returns the most bytes copied from one ring. */
uint64_t perf_reader_pass(struct rtd_perf_monitor *m, uint64_t pass_start);
void *perf_reader_main(void *arg);
/* Add one to an eventfd. */
void perf_efd_post(int fd);
/* Is a stop asked and not yet honoured by a run()? */
bool perf_stop_pending(struct rtd_perf_monitor *m);
/* The stop eventfd was readable: empty it, then say whether a stop is
 * pending (in this order, so a stop asked meanwhile wakes the next poll) */
bool perf_stop_woken(struct rtd_perf_monitor *m);
/* Did the last run() end on a stop (it honoured one), rather than on
 * a hang-up or its callback? */
bool perf_monitor_run_stopped(const struct rtd_perf_monitor *m);
/* When the last run()'s loop ended (CLOCK_MONOTONIC ns): taken after the
 * stops it honours were counted, as its final drain began; the drain
 * reads every ring at least twice from then on, so every record stamped
 * before it was delivered by that run (the round rule: what was stamped
 * before a round began is in its ring by the next). A stop asked before
 * it was honoured by that run. 0 when the run failed before its loop or
 * while it looped. */
int64_t perf_monitor_run_end(const struct rtd_perf_monitor *m);
struct pollfd;
/* Every ring's descriptor in pfd[0..n) has hung up (or failed). */
bool perf_rings_hup(const struct pollfd *pfd, unsigned n);
/* The poll entries of the monitor's pidfds (after n others), and whether
 * the processes of all of them are gone (false when there are none). */
void perf_pidfds_poll(const struct rtd_perf_monitor *m, struct pollfd *pfd);
bool perf_pidfds_gone(const struct rtd_perf_monitor *m,
		      const struct pollfd *pfd);

/* sysfs.c: reading the system's description of itself */
int perf_parse_cpulist(const char *s, int *cpus, unsigned max,
		       unsigned *n);
int perf_online_cpus(int **cpus, unsigned *n);
int perf_find_mount(const char *mountinfo, const char *fstype,
		    const char *option, char *out, size_t outlen);
int perf_pmu_type(const char *pmu_dir, const char *pmu, uint32_t *type);
int perf_pmu_format_bit(const char *pmu_dir, const char *pmu,
			const char *name, unsigned *bit);

/* profiler.c: a MMAP or MMAP2 record's executable mapping into @sym */
void perf_sym_mmap(rtd_symbolizer *sym, const struct rtd_perf_sample *s);

/* tpfield.c: tracepoint formats and field decoding */
int perf_fields_from_format(struct tep_handle *tep, const char *sys,
			    const char *buf, size_t len, int *id,
			    struct rtd_perf_field **fields, unsigned *nall,
			    unsigned *ncommon);
struct tep_event;
int perf_fields_from_event(struct tep_event *e, int *id,
			   struct rtd_perf_field **fields, unsigned *nall,
			   unsigned *ncommon);
void perf_fields_free(struct rtd_perf_field *f, unsigned n);
int perf_field_decode(const struct rtd_perf_field *f, const uint8_t *raw,
		      size_t raw_size, struct rtd_perf_value *v);
int perf_tracepoint_load(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
			 const char *sys, const char *name);

/* probe.c */
int perf_elf_sym_offset(const char *path, const char *sym, uint64_t vaddr,
			uint64_t *off);
int perf_probe_cleanup_stale(const char *tracefs);
bool perf_probe_group_stale(const char *sys);
/* perf's default ring pages for a perf_event_mlock_kb (< 0: unreadable)
 * and a page size (rtd_perf_default_ring_pages) */
unsigned perf_ring_pages_for(long mlock_kb, long page_size);
int perf_proc_starttime(pid_t pid, unsigned long long *ticks);
struct perf_probe_plan {
	bool use_pmu;             /* no fetch args: perf's uprobe/kprobe PMU */
	char event[64];           /* tracefs event name */
	char location[PATH_MAX + 64]; /* uprobe: "PATH:0xOFF", kprobe: "SYM+OFF" */
	uint64_t file_offset;     /* uprobe */
	char display[256];        /* symbol shown on each line */
};
int perf_probe_plan(const struct rtd_perf_probe *p, unsigned seq,
		    struct perf_probe_plan *plan);
int perf_probe_pmu_attr(const char *pmu_dir, const struct rtd_perf_probe *p,
			const struct perf_probe_plan *plan,
			struct perf_event_attr *attr);

/* counter.c */
/* Open a counter whose attr is set (kind, inherit, group, enable bits are
 * set here); nothing is linked or freed on failure. */
int perf_counter_open(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
		      struct rtd_perf_event *leader);
/* Put an opened counter on the monitor's list (and its leader's count). */
void perf_counter_link(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
		       struct rtd_perf_event **out);
int perf_counter_attr(const char *pmu_dir, const char *name,
		      struct perf_event_attr *attr);

#endif /* RTD_PERF_INTERNAL_H */
