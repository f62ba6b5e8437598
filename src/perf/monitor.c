/* SPDX-License-Identifier: MIT */
/*
 * monitor.c - the perf_event monitor: scope, events, rings, run loop.
 *
 * Rings: one per online CPU, mapped from a dummy software event opened on
 * that CPU; every event's per-CPU descriptor is redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT. The kernel writes data_head after the
 * records (smp_store_release in perf_output_put_handle), so data_head is
 * read with acquire ordering before the records, and data_tail is written
 * with release ordering after we are done with them (the kernel reads it
 * with smp_load_acquire / a full barrier before overwriting). The fill is
 * head - tail in 64-bit arithmetic: a completely full ring is read as full,
 * never as empty.
 *
 * Order: each ring is time-ordered; records are merged across rings by
 * timestamp and a record is delivered only when its timestamp is older
 * than the time the previous round began (a record stamped before that had
 * been committed by the time this round read data_head: perf's
 * finished-round rule, tools/perf/util/ordered-events.c). Records that
 * must wait stay in their ring, so holding them back costs no copy and
 * no memory beyond the rings. With few rings the next record is found by
 * scanning every ring; from perf_heap_min_rings rings on, by a min-heap
 * of ring indices keyed by their next timestamp (same order, ties to the
 * lower ring index, so both give identical output).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

#include "common/errmsg.h"
#include "common/log.h"
#include "common/stats.h"
#include "perf/heap.h"
#include "common/file.h"
#include "perf/internal.h"
#include "rtdiag/guard.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/source.h"

int perf_set_err(struct rtd_perf_monitor *m, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(m->errmsg, sizeof(m->errmsg), err, fmt, ap);
	va_end(ap);
	rtd_debug("perf: %s", m->errmsg);
	return err;
}

const char *rtd_perf_monitor_errmsg(const struct rtd_perf_monitor *m)
{
	return m ? m->errmsg : "";
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
			       int cpu, int group_fd, unsigned long flags)
{
	long r = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			 flags | PERF_FLAG_FD_CLOEXEC);
	return r < 0 ? -errno : (int)r;
}

/* ---- scope ---------------------------------------------------------------- */

static int add_target(struct rtd_perf_monitor *m, int t)
{
	if (m->ntargets >= PERF_MAX_TARGETS)
		return perf_set_err(m, -RTD_E_CAP,
				    "more than %d threads or cgroups in scope",
				    PERF_MAX_TARGETS);
	int *n = realloc(m->targets, sizeof(int) * (m->ntargets + 1));
	if (!n)
		return -ENOMEM;
	m->targets = n;
	m->targets[m->ntargets++] = t;
	return 0;
}

/* RTD_PERF_SCOPE_CPU_WIDE: a process's state in m->scope */
enum { SCOPE_ON = 1, SCOPE_AT_EXEC = 2 };

/* RTD_PERF_SCOPE_CPU_WIDE: pid in scope, and a pidfd that says when it
 * has gone (a CPU-wide ring never hangs up) */
static int scope_add_pid(struct rtd_perf_monitor *m, pid_t pid)
{
	if (pid <= 0)
		return perf_set_err(m, -RTD_E_INVAL, "pid %d: not a process id",
				    (int)pid);
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return perf_set_err(m, errno == ESRCH ? -RTD_E_NOTFOUND : -errno,
				    "pid %d: %s (pidfd_open)", (int)pid,
				    strerror(errno));
	int *n = realloc(m->pidfds, (m->npidfds + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	m->pidfds = n;
	n[m->npidfds++] = fd;
	uintptr_t st = m->flags & RTD_PERF_ENABLE_ON_EXEC ? SCOPE_AT_EXEC : SCOPE_ON;
	int r = rtd_map_put(&m->scope, (uint64_t)pid, (void *)st, NULL);
	return r ? perf_set_err(m, r, "more than %d processes in scope",
				PERF_MAX_SCOPED) : 0;
}

/* Why perf_event_open on thread tid was refused (EACCES/EPERM), as a
 * parenthesis for the message: a process of another user is named as
 * such (the usual cause), else what the kernel asks for. */
static void perm_hint(pid_t tid, const char *dflt, char *buf, size_t len)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	if (tid > 0 && stat(path, &st) == 0 && st.st_uid != geteuid()) {
		struct passwd pw, *res = NULL;
		char pbuf[1024];
		getpwuid_r(st.st_uid, &pw, pbuf, sizeof(pbuf), &res);
		snprintf(buf, len,
			 " (pid %d belongs to another user, %s (uid %u): "
			 "profiling it needs root or CAP_PERFMON)",
			 (int)tid, res ? res->pw_name : "?",
			 (unsigned)st.st_uid);
		return;
	}
	snprintf(buf, len, "%s", dflt);
}

RTD_API int rtd_perf_sampling_check(pid_t pid, char *why, size_t n)
{
	/* what a profiler opens first: cpu-clock sampling of user space (the
	 * least the kernel allows, as perf falls back to) */
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = 99,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = sys_perf_event_open(&a, pid, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		if (why && n)
			why[0] = 0;
		return 0;
	}
	if (why && n) {
		char hint[256] = "";
		if (fd == -EACCES || fd == -EPERM)
			perm_hint(pid, " (kernel.perf_event_paranoid, or a seccomp "
				  "policy, refuses it to this user: root or "
				  "CAP_PERFMON)", hint, sizeof(hint));
		else if (fd == -ENOSYS || fd == -ENOENT)
			snprintf(hint, sizeof(hint), " (no perf_event in this "
				 "kernel or container)");
		snprintf(why, n, "perf_event_open: %s%s", strerror(-fd), hint);
	}
	return fd;
}

struct add_tasks {
	struct rtd_perf_monitor *m;
	int added;
};

static int add_task(int tid, void *ctx)
{
	struct add_tasks *a = ctx;
	a->added++;
	return add_target(a->m, tid);
}

/* A pid's threads: perf_event's pid argument is a thread id. */
static int add_pid(struct rtd_perf_monitor *m, pid_t pid)
{
	if (pid <= 0)
		return perf_set_err(m, -RTD_E_INVAL, "pid %d: not a process id",
				    (int)pid);
	/* with inheritance the process's children follow on their own; the
	 * threads alive now are each a target */
	struct add_tasks a = {m, 0};
	int r = rtd_proc_tasks((int)pid, add_task, &a);
	if (r < 0 && !a.added) /* the list not read: add_target said nothing */
		return perf_set_err(m, -RTD_E_NOTFOUND, "pid %d: no such process (%s)",
				    (int)pid, strerror(-r));
	if (r == 0)
		return perf_set_err(m, -RTD_E_NOTFOUND, "pid %d: no threads", (int)pid);
	return r < 0 ? r : 0;
}

static int add_cgroup(struct rtd_perf_monitor *m, const char *cg)
{
	char path[PATH_MAX];
	int fd = -1;
	if (cg[0] == '/') {
		fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		/* v2 first, then the v1 perf_event hierarchy */
		const char *bases[2] = {m->cgroup2, m->cgroup1};
		for (int i = 0; i < 2 && fd < 0; i++) {
			if (!bases[i][0])
				continue;
			int n = snprintf(path, sizeof(path), "%s/%s", bases[i], cg);
			if (n < 0 || (size_t)n >= sizeof(path))
				continue; /* too long to be a cgroup there */
			fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (fd < 0)
		return perf_set_err(
			m, -RTD_E_NOTFOUND,
			"cgroup %s: not found (cgroup v2 at %s, v1 perf_event at %s)",
			cg, m->cgroup2[0] ? m->cgroup2 : "(none)",
			m->cgroup1[0] ? m->cgroup1 : "(none)");
	int r = add_target(m, fd);
	if (r)
		close(fd);
	return r;
}

static void find_mounts(struct rtd_perf_monitor *m)
{
	char *mi = malloc(1u << 20);
	if (!mi)
		return;
	if (rtd_read_small("/proc/self/mountinfo", mi, 1u << 20) > 0) {
		if (!m->tracefs[0] &&
		    perf_find_mount(mi, "tracefs", NULL, m->tracefs,
				    sizeof(m->tracefs)) < 0) {
			char dbg[PATH_MAX];
			if (perf_find_mount(mi, "debugfs", NULL, dbg,
					    sizeof(dbg)) == 0 &&
			    strlen(dbg) + 9 < sizeof(m->tracefs)) {
				snprintf(m->tracefs, sizeof(m->tracefs),
					 "%s/tracing", dbg);
				if (access(m->tracefs, R_OK) != 0)
					m->tracefs[0] = 0;
			}
		}
		if (!m->cgroup2[0])
			perf_find_mount(mi, "cgroup2", NULL, m->cgroup2,
					sizeof(m->cgroup2));
		if (!m->cgroup1[0])
			perf_find_mount(mi, "cgroup", "perf_event", m->cgroup1,
					sizeof(m->cgroup1));
	}
	free(mi);
	if (!m->tracefs[0]) {
		/* libtracefs mounts tracefs when it is missing (we may be root) */
		const char *d = tracefs_tracing_dir();
		if (d && strlen(d) < sizeof(m->tracefs))
			strcpy(m->tracefs, d);
	}
}

static int copy_path(char *dst, size_t n, const char *src)
{
	if (!src)
		return 0;
	if (strlen(src) >= n)
		return -RTD_E_INVAL;
	strcpy(dst, src);
	return 0;
}

int rtd_perf_monitor_new(const struct rtd_perf_opts *opts,
			 struct rtd_perf_monitor **out)
{
	struct rtd_perf_opts o;
	int r;
	*out = NULL;
	if (rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_perf_opts, copy_cap)))
		return -RTD_E_INVAL;
	if ((o.npids && !o.pids) || (o.ncgroups && !o.cgroups) ||
	    (o.npids && o.ncgroups))
		return -RTD_E_INVAL;
	if (o.ring_pages && (o.ring_pages & (o.ring_pages - 1)))
		return -RTD_E_INVAL;
	if (o.ring_pages > PERF_MAX_RING_PAGES)
		return -RTD_E_INVAL;

	struct rtd_perf_monitor *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->stop_fd = m->wake_fd = m->space_fd = -1;
	m->opts = o;
	m->opts.pids = NULL;
	if (o.npids && !(m->pids = malloc(o.npids * sizeof(*m->pids)))) {
		free(m);
		return -ENOMEM;
	}
	if (o.npids)
		memcpy(m->pids, o.pids, o.npids * sizeof(*m->pids));
	m->opts.cgroups = NULL;
	m->flags = o.flags;
	m->threaded = o.flags & RTD_PERF_READER_THREAD;
	m->ring_pages = o.ring_pages ? o.ring_pages : rtd_perf_default_ring_pages();
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t ring_bytes = (uint64_t)m->ring_pages * (uint64_t)pg;
	m->wakeup_bytes = o.wakeup_bytes ? o.wakeup_bytes
					 : (unsigned)(ring_bytes / 4);
	if (m->wakeup_bytes >= ring_bytes)
		m->wakeup_bytes = (unsigned)(ring_bytes / 2);
	m->max_latency_ms = o.max_latency_ms ? o.max_latency_ms : 100;
	if (o.default_attr) {
		m->defattr = *o.default_attr;
		m->have_defattr = true;
	}
	rtd_map_init(&m->ids, PERF_MAX_IDS);
	rtd_map_init(&m->scope, PERF_MAX_SCOPED);
	/* the start time tells this process from a later one with its pid */
	unsigned long long st = 0;
	perf_proc_starttime(getpid(), &st);
	snprintf(m->probe_group, sizeof(m->probe_group), "rtdiag_%d_%llu",
		 (int)getpid(), st);
	if ((r = copy_path(m->tracefs, sizeof(m->tracefs), o.tracefs_dir)) ||
	    (r = copy_path(m->cgroup2, sizeof(m->cgroup2), o.cgroup_dir)) ||
	    (r = copy_path(m->cgroup1, sizeof(m->cgroup1), o.cgroup_v1_dir)) ||
	    (r = copy_path(m->pmu_dir, sizeof(m->pmu_dir),
			   o.perf_event_dir ? o.perf_event_dir
					    : "/sys/bus/event_source/devices")))
		goto fail;
	r = perf_online_cpus(&m->cpus, &m->ncpus);
	if (r) {
		perf_set_err(m, r, "cannot read /sys/devices/system/cpu/online");
		goto fail;
	}
	find_mounts(m);
	m->scoped = (o.flags & RTD_PERF_SCOPE_CPU_WIDE) && o.npids;
	for (size_t i = 0; i < o.npids && !r; i++)
		r = m->scoped ? scope_add_pid(m, o.pids[i]) : add_pid(m, o.pids[i]);
	for (size_t i = 0; i < o.ncgroups && !r; i++)
		r = add_cgroup(m, o.cgroups[i]);
	if (r)
		goto fail;
	m->cgroup_scope = o.ncgroups > 0;
	if (!m->ntargets && (r = add_target(m, -1)))
		goto fail;
	m->tep = tep_alloc();
	if (!m->tep) {
		r = -ENOMEM;
		goto fail;
	}
	tep_set_long_size(m->tep, sizeof(long));
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stop_fd < 0) {
		r = -errno;
		goto fail;
	}
	m->base_lay.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
				  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	if (m->have_defattr)
		m->base_lay.sample_type |= m->defattr.sample_type;
	m->base_lay.sample_id_all = 1;
	/* only who may write tracefs can remove probes (and libtracefs 1.6
	 * leaks while it probes a tracefs it cannot read) */
	if (m->tracefs[0] && access(m->tracefs, W_OK) == 0)
		perf_probe_cleanup_stale(m->tracefs);
	*out = m;
	return 0;
fail:
	if (!m->errmsg[0])
		perf_set_err(m, r, "%s", rtd_strerror(r));
	rtd_debug("perf: monitor_new: %s", m->errmsg);
	rtd_perf_monitor_free(m);
	return r;
}

/* perf's perf_event_mlock_kb_in_pages() (tools/perf/util/evlist.c), its
 * default for perf record's and perf trace's -m */
unsigned perf_ring_pages_for(long mlock_kb, long page_size)
{
	if (page_size <= 0)
		page_size = 4096;
	long kb = mlock_kb < 0 ? 512 : mlock_kb - page_size / 1024;
	long pages = kb > 0 ? kb * 1024 / page_size : 0;
	unsigned p = 1;
	while ((long)p * 2 <= pages && p * 2 <= PERF_MAX_RING_PAGES)
		p *= 2;
	return p;
}

unsigned rtd_perf_default_ring_pages(void)
{
	char buf[32];
	long kb = -1;
	if (rtd_read_small("/proc/sys/kernel/perf_event_mlock_kb", buf,
			   sizeof(buf)) > 0)
		kb = strtol(buf, NULL, 10);
	return perf_ring_pages_for(kb, sysconf(_SC_PAGESIZE));
}

/* ---- events --------------------------------------------------------------- */

struct rtd_perf_event *perf_event_alloc(struct rtd_perf_monitor *m,
					enum rtd_perf_event_kind kind,
					const char *name)
{
	struct rtd_perf_event *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->m = m;
	ev->kind = kind;
	ev->leader = ev;
	ev->name = strdup(name);
	if (!ev->name) {
		free(ev);
		return NULL;
	}
	return ev;
}

static void event_close_fds(struct rtd_perf_event *ev)
{
	ev->m->last_ev = NULL;
	for (size_t i = 0; i < ev->nfds; i++) {
		if (ev->fds[i] >= 0) {
			close(ev->fds[i]);
			rtd_map_del(&ev->m->ids, ev->ids[i]);
		}
	}
	free(ev->fds);
	free(ev->ids);
	free(ev->fd_ring);
	ev->fds = NULL;
	ev->ids = NULL;
	ev->fd_ring = NULL;
	ev->nfds = 0;
}

void perf_event_destroy(struct rtd_perf_event *ev)
{
	if (!ev)
		return;
	event_close_fds(ev);
	if (ev->dyn) {
		/* force: our descriptors are closed, nothing else uses it */
		if (tracefs_dynevent_destroy(ev->dyn, true) != 0)
			rtd_warn("perf: could not remove probe %s (the guardian "
				 "tries again when rtdiag ends)", ev->name);
		else
			rtd_guard_forget(ev->guard_id);
		tracefs_dynevent_free(ev->dyn);
	}
	perf_fields_free(ev->fields, ev->nfields_all);
	free(ev->name);
	free(ev->symbol);
	free(ev);
}

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

static void layout_from_attr(struct rtd_perf_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	ev->lay.sample_type = a->sample_type;
	ev->lay.read_format = a->read_format;
	ev->lay.branch_sample_type = a->branch_sample_type;
	ev->lay.regs_user_nr = popcount64(a->sample_regs_user);
	ev->lay.regs_intr_nr = popcount64(a->sample_regs_intr);
	ev->lay.sample_id_all = a->sample_id_all;
	unsigned off = 8;
	if (a->sample_type & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	if (a->sample_type & PERF_SAMPLE_IP)
		off += 8;
	if (a->sample_type & PERF_SAMPLE_TID)
		off += 8;
	ev->ts_off = off;
}

/* The attr every sampling event of the monitor shares. */
static void sampling_attr(struct rtd_perf_monitor *m,
			  struct perf_event_attr *a)
{
	struct perf_event_attr t = *a;
	if (m->have_defattr) {
		*a = m->defattr;
		a->type = t.type;
		a->config = t.config;
		a->config1 = t.config1;
		a->config2 = t.config2;
		a->sample_type |= t.sample_type;
	}
	a->size = sizeof(*a);
	a->sample_type |= m->base_lay.sample_type;
	if (!a->sample_period && !a->freq)
		a->sample_period = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = m->wakeup_bytes;
	/* CPU-wide (RTD_PERF_SCOPE_CPU_WIDE): deliver() follows children
	 * and waits for the exec; the kernel does neither for such events */
	bool on_exec = (m->flags & RTD_PERF_ENABLE_ON_EXEC) && !m->scoped;
	a->inherit = (m->flags & RTD_PERF_INHERIT) && !m->scoped;
	a->disabled = (m->flags & RTD_PERF_START_DISABLED) || on_exec;
	a->enable_on_exec = on_exec;
	a->read_format = RTD_PERF_FORMAT_ID |
			 (m->no_format_lost ? 0 : RTD_PERF_FORMAT_LOST);
}

static unsigned long target_flags(const struct rtd_perf_monitor *m)
{
	return m->cgroup_scope ? PERF_FLAG_PID_CGROUP : 0;
}

/* perf_event_open said ESRCH for a process target: it ended between the
 * monitor's making and its events' opening */
static int gone_err(struct rtd_perf_monitor *m, pid_t pid)
{
	return perf_set_err(m, -RTD_E_NOTFOUND,
			    "pid %d: the process ended while perf_event was "
			    "being set up (perf_event_open: %s)",
			    (int)pid, strerror(ESRCH));
}

static int rings_setup(struct rtd_perf_monitor *m)
{
	if (m->rings_ready)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	m->rings = calloc(m->ncpus, sizeof(*m->rings));
	if (!m->rings)
		return -ENOMEM;
	for (unsigned i = 0; i < m->ncpus; i++)
		m->rings[i].fd = -1;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		struct perf_event_attr a = {0};
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		sampling_attr(m, &a);
		/* the ring's own event: always on, samples nothing; bound
		 * to the first target so that it hangs up when a scoped
		 * process has gone */
		a.disabled = 0;
		a.enable_on_exec = 0;
		/* CPU-wide scope: the exec and fork records it follows,
		 * whatever the events ask for (deliver() keeps them back) */
		a.comm = a.comm_exec = a.task = m->scoped;
		int fd = sys_perf_event_open(&a, m->targets[0], m->cpus[i], -1,
					     target_flags(m));
		if ((fd == -EACCES || fd == -EPERM) && !a.exclude_kernel) {
			/* perf_event_paranoid 2: user space only, as perf does */
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
			fd = sys_perf_event_open(&a, m->targets[0], m->cpus[i],
						 -1, target_flags(m));
			if (fd >= 0)
				m->user_only = true;
		}
		if (fd == -ESRCH && !m->cgroup_scope && m->targets[0] > 0)
			return gone_err(m, m->targets[0]);
		if (fd < 0) {
			char hint[256] = "";
			if (fd == -EACCES || fd == -EPERM)
				perm_hint(m->targets[0],
					  " (needs root or CAP_PERFMON, or "
					  "kernel.perf_event_paranoid <= 0)",
					  hint, sizeof(hint));
			return perf_set_err(
				m, fd, "cpu %d: perf_event_open (ring): %s%s",
				m->cpus[i], strerror(-fd), hint);
		}
		rg->fd = fd;
		rg->cpu = m->cpus[i];
		rg->size = (uint64_t)m->ring_pages * (uint64_t)pg;
		rg->map_len = (size_t)rg->size + (size_t)pg;
		rg->base = mmap(NULL, rg->map_len, PROT_READ | PROT_WRITE,
				MAP_SHARED, fd, 0);
		if (rg->base == MAP_FAILED) {
			rg->base = NULL;
			int e = -errno;
			return perf_set_err(
				m, e,
				"cpu %d: mmap of a %u-page ring: %s%s",
				m->cpus[i], m->ring_pages, strerror(-e),
				e == -EPERM ? " (raise kernel.perf_event_mlock_kb)"
					    : "");
		}
		rg->data = (uint8_t *)rg->base + pg;
		uint64_t id;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
			rtd_map_put(&m->ids, id, NULL, NULL);
	}
	m->rings_ready = true;
	return 0;
}

static bool is_counter(const struct rtd_perf_event *ev)
{
	return ev->kind == RTD_PERF_COUNTER;
}

int perf_event_open_all(struct rtd_perf_monitor *m, struct rtd_perf_event *ev)
{
	int r;
	bool sampling = !is_counter(ev);
	if (!sampling && m->scoped)
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: a counter cannot be scoped to processes "
				    "on CPU-wide events (RTD_PERF_SCOPE_CPU_WIDE)",
				    ev->name);
	if (sampling) {
		if ((r = rings_setup(m)))
			return r;
		sampling_attr(m, &ev->attr);
	}
	bool can_user_only = ev->kind == RTD_PERF_COUNTER ||
			     ev->kind == RTD_PERF_SAMPLER;
	if (can_user_only && m->user_only) {
		ev->attr.exclude_kernel = 1;
		ev->attr.exclude_hv = 1;
	}
	bool track = sampling && (m->flags & RTD_PERF_TRACK_COMM) && !m->tracking;
	if (track) {
		ev->attr.comm = 1;
		ev->attr.comm_exec = 1;
		ev->attr.task = 1;
	}
	layout_from_attr(ev);
	/* a counter scoped to processes counts on every CPU with one fd */
	bool any_cpu = !sampling && !m->cgroup_scope && m->targets[0] != -1;
	size_t ncpu = any_cpu ? 1 : m->ncpus;
	size_t n = m->ntargets * ncpu;
	ev->fds = malloc(sizeof(int) * n);
	ev->ids = calloc(n, sizeof(uint64_t));
	ev->fd_ring = malloc(sizeof(int) * n);
	if (!ev->fds || !ev->ids || !ev->fd_ring)
		return -ENOMEM;
	ev->nfds = n;
	for (size_t i = 0; i < n; i++)
		ev->fds[i] = -1;
	size_t opened = 0;
	for (size_t t = 0; t < m->ntargets; t++) {
		for (size_t c = 0; c < ncpu; c++) {
			size_t i = t * ncpu + c;
			int cpu = any_cpu ? -1 : m->cpus[c];
			int group = -1;
			if (ev->leader != ev) {
				group = ev->leader->fds[i];
				if (group < 0)
					continue;
			}
			ev->fd_ring[i] = sampling ? (int)c : -1;
			int fd = sys_perf_event_open(&ev->attr, m->targets[t],
						     cpu, group,
						     target_flags(m));
			if (fd == -EINVAL && sampling &&
			    (ev->attr.read_format & RTD_PERF_FORMAT_LOST)) {
				/* PERF_FORMAT_LOST is 6.0+: go on without */
				m->no_format_lost = true;
				ev->attr.read_format &= ~(uint64_t)RTD_PERF_FORMAT_LOST;
				fd = sys_perf_event_open(&ev->attr, m->targets[t],
							 cpu, group,
							 target_flags(m));
			}
			if ((fd == -EACCES || fd == -EPERM) && can_user_only &&
			    !ev->attr.exclude_kernel) {
				/* the kernel refuses kernel counting to this
				 * user (perf_event_paranoid): count user
				 * space only, as perf does, and say so */
				ev->attr.exclude_kernel = 1;
				ev->attr.exclude_hv = 1;
				fd = sys_perf_event_open(&ev->attr, m->targets[t],
							 cpu, group,
							 target_flags(m));
				if (fd >= 0)
					m->user_only = true;
			}
			if (fd == -ESRCH && !m->cgroup_scope &&
			    m->ntargets > 1)
				continue; /* that thread has exited */
			if (fd == -ESRCH && !m->cgroup_scope &&
			    m->targets[t] > 0)
				return gone_err(m, m->targets[t]);
			if (fd < 0) {
				char hint[256] = "";
				if (fd == -ENOENT || fd == -EOPNOTSUPP)
					snprintf(hint, sizeof(hint),
						 " (this kernel or CPU does "
						 "not support the event)");
				else if (fd == -EACCES || fd == -EPERM)
					perm_hint(m->targets[t],
						  " (needs root or CAP_PERFMON)",
						  hint, sizeof(hint));
				r = perf_set_err(m, fd,
						 "%s: perf_event_open on cpu %d: %s%s",
						 ev->name, cpu, strerror(-fd),
						 hint);
				if (fd == -ENOENT || fd == -EOPNOTSUPP)
					r = -RTD_E_PERF_NOTSUPP;
				return r;
			}
			ev->fds[i] = fd;
			opened++;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &ev->ids[i]) != 0)
				return perf_set_err(m, -errno,
						    "%s: PERF_EVENT_IOC_ID: %s",
						    ev->name, strerror(errno));
			if ((r = rtd_map_put(&m->ids, ev->ids[i], ev, NULL)))
				return perf_set_err(m, r,
						    "%s: too many event ids",
						    ev->name);
			if (sampling &&
			    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				  m->rings[c].fd) != 0)
				return perf_set_err(
					m, -errno,
					"%s: cpu %d: redirecting into the ring: %s",
					ev->name, cpu, strerror(errno));
		}
	}
	if (!opened)
		return perf_set_err(m, -RTD_E_NOTFOUND,
				    "%s: no process left to observe", ev->name);
	if (track)
		m->tracking = true;
	return 0;
}

static void link_event(struct rtd_perf_monitor *m, struct rtd_perf_event *ev)
{
	struct rtd_perf_event **pp = &m->events;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ev;
}

static int split_tp_name(const char *name, char *sys, size_t ns, char *ev,
			 size_t ne)
{
	const char *c = strchr(name, ':');
	if (!c)
		c = strchr(name, '/');
	if (!c || c == name || !c[1] || (size_t)(c - name) >= ns ||
	    strlen(c + 1) >= ne)
		return -RTD_E_INVAL;
	memcpy(sys, name, (size_t)(c - name));
	sys[c - name] = 0;
	strcpy(ev, c + 1);
	return 0;
}

/* Register the tracepoint sys:name under a display name (probes use it). */
int perf_add_tracepoint_named(struct rtd_perf_monitor *m, const char *sys,
			      const char *name, const char *filter,
			      struct rtd_perf_event *ev)
{
	int r;
	if (!m->tracefs[0])
		return perf_set_err(m, -RTD_E_PERF_TRACEFS,
				    "tracefs is not mounted (mount -t tracefs "
				    "nodev /sys/kernel/tracing)");
	if ((r = perf_tracepoint_load(m, ev, sys, name)))
		return r;
	if ((r = perf_event_open_all(m, ev)))
		return r;
	if (filter && *filter && (r = rtd_perf_event_set_filter(ev, filter)))
		return r;
	return 0;
}

int rtd_perf_monitor_add_tracepoint(struct rtd_perf_monitor *m,
				    const char *name, const char *filter,
				    struct rtd_perf_event **out)
{
	char sys[256], evn[256];
	if (out)
		*out = NULL;
	if (!m || !name)
		return -RTD_E_INVAL;
	m->errmsg[0] = 0;
	if (split_tp_name(name, sys, sizeof(sys), evn, sizeof(evn)))
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: not a tracepoint name (want "
				    "subsystem:event, e.g. sched:sched_switch)",
				    name);
	char full[520];
	snprintf(full, sizeof(full), "%s:%s", sys, evn);
	struct rtd_perf_event *ev =
		perf_event_alloc(m, RTD_PERF_TRACEPOINT, full);
	if (!ev)
		return -ENOMEM;
	int r = perf_add_tracepoint_named(m, sys, evn, filter, ev);
	if (r) {
		perf_event_destroy(ev);
		return r;
	}
	link_event(m, ev);
	if (out)
		*out = ev;
	return 0;
}

int rtd_perf_event_set_filter(struct rtd_perf_event *ev, const char *filter)
{
	if (!ev)
		return -RTD_E_INVAL;
	struct rtd_perf_monitor *m = ev->m;
	if (ev->attr.type != PERF_TYPE_TRACEPOINT)
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: filters apply to tracepoints only",
				    ev->name);
	/* the kernel takes "0" as no filter being set: clear with it */
	const char *f = filter && *filter ? filter : "0";
	for (size_t i = 0; i < ev->nfds; i++) {
		if (ev->fds[i] < 0)
			continue;
		if (ioctl(ev->fds[i], PERF_EVENT_IOC_SET_FILTER, f) != 0) {
			int e = errno;
			if (e == EINVAL)
				return perf_set_err(
					m, -RTD_E_PERF_FILTER,
					"%s: the kernel rejected the filter "
					"'%s' (check field names and operators "
					"against the event's format)",
					ev->name, f);
			return perf_set_err(m, -e, "%s: setting filter: %s",
					    ev->name, strerror(e));
		}
	}
	return 0;
}

int rtd_perf_monitor_remove(struct rtd_perf_monitor *m,
			    struct rtd_perf_event *ev)
{
	if (!m || !ev || ev->m != m)
		return -RTD_E_INVAL;
	/* members first: they hold the leader's group */
	struct rtd_perf_event **pp = &m->events;
	while (*pp) {
		struct rtd_perf_event *e = *pp;
		if (e != ev && e->leader == ev) {
			*pp = e->next;
			perf_event_destroy(e);
		} else {
			pp = &e->next;
		}
	}
	for (pp = &m->events; *pp; pp = &(*pp)->next) {
		if (*pp == ev) {
			*pp = ev->next;
			if (ev->leader != ev)
				ev->leader->nmembers--;
			perf_event_destroy(ev);
			return 0;
		}
	}
	return -RTD_E_INVAL;
}

static int event_ioctl(struct rtd_perf_event *ev, unsigned long req)
{
	for (size_t i = 0; i < ev->nfds; i++)
		if (ev->fds[i] >= 0 && ioctl(ev->fds[i], req, 0) != 0)
			return perf_set_err(ev->m, -errno, "%s: %s", ev->name,
					    strerror(errno));
	return 0;
}

int rtd_perf_monitor_enable(struct rtd_perf_monitor *m,
			    struct rtd_perf_event *ev)
{
	if (!m)
		return -RTD_E_INVAL;
	if (ev)
		return event_ioctl(ev, PERF_EVENT_IOC_ENABLE);
	for (struct rtd_perf_event *e = m->events; e; e = e->next) {
		int r = event_ioctl(e, PERF_EVENT_IOC_ENABLE);
		if (r)
			return r;
	}
	return 0;
}

int rtd_perf_monitor_disable(struct rtd_perf_monitor *m,
			     struct rtd_perf_event *ev)
{
	if (!m)
		return -RTD_E_INVAL;
	if (ev)
		return event_ioctl(ev, PERF_EVENT_IOC_DISABLE);
	for (struct rtd_perf_event *e = m->events; e; e = e->next) {
		int r = event_ioctl(e, PERF_EVENT_IOC_DISABLE);
		if (r)
			return r;
	}
	return 0;
}

void rtd_perf_monitor_free(struct rtd_perf_monitor *m)
{
	if (!m)
		return;
	/* members before leaders, all before the rings */
	while (m->events) {
		struct rtd_perf_event *e = m->events;
		while (e->next)
			e = e->next;
		rtd_perf_monitor_remove(m, e);
	}
	perf_copies_free(m);
	if (m->rings) {
		for (unsigned i = 0; i < m->ncpus; i++) {
			struct perf_ring *rg = &m->rings[i];
			if (rg->base)
				munmap(rg->base, rg->map_len);
			if (rg->fd >= 0)
				close(rg->fd);
			free(rg->scratch);
		}
		free(m->rings);
	}
	if (m->cgroup_scope)
		for (size_t i = 0; i < m->ntargets; i++)
			close(m->targets[i]);
	free(m->targets);
	free(m->pids);
	for (size_t i = 0; i < m->npidfds; i++)
		close(m->pidfds[i]);
	free(m->pidfds);
	rtd_map_free(&m->scope);
	free(m->cpus);
	if (m->tep)
		tep_free(m->tep);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	rtd_map_free(&m->ids);
	free(m);
}

/* ---- reading the rings ------------------------------------------------------ */

static inline uint64_t ring_load_head(const struct perf_ring *rg)
{
	const struct perf_event_mmap_page *pc = rg->base;
	return __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
}

static inline void ring_store_tail(struct perf_ring *rg)
{
	struct perf_event_mmap_page *pc = rg->base;
	__atomic_store_n(&pc->data_tail, rg->tail, __ATOMIC_RELEASE);
}

static inline struct rtd_perf_event *lookup(struct rtd_perf_monitor *m,
					    uint64_t id)
{
	if (m->last_ev && id == m->last_id)
		return m->last_ev; /* the common case: one busy event */
	void *v = NULL;
	rtd_map_get(&m->ids, id, &v);
	m->last_id = id;
	m->last_ev = v;
	return v;
}

/* Copy n bytes starting at ring offset pos, across the end if need be. */
static void ring_copy(const struct perf_ring *rg, uint64_t pos, void *dst,
		      size_t n)
{
	uint64_t off = pos & (rg->size - 1);
	size_t first = (size_t)(rg->size - off);
	if (first >= n) {
		memcpy(dst, rg->data + off, n);
	} else {
		memcpy(dst, rg->data + off, first);
		memcpy((uint8_t *)dst + first, rg->data, n - first);
	}
}

/* Look at the ring's next record: set has_next, next, next_size, next_ts. */
static void ring_peek(struct rtd_perf_monitor *m, struct perf_ring *rg)
{
	rg->has_next = false;
	uint64_t avail = rg->head - rg->tail;
	if (!avail)
		return;
	struct perf_event_header h;
	if (avail < sizeof(h))
		goto corrupt;
	ring_copy(rg, rg->tail, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size > avail || (h.size & 7))
		goto corrupt;
	uint64_t off = rg->tail & (rg->size - 1);
	if (off + h.size <= rg->size) {
		rg->next = rg->data + off;
	} else {
		/* the record wraps the end of the ring: copy it out */
		if (!rg->scratch && !(rg->scratch = malloc(RTD_PERF_MAX_RECORD)))
			return; /* retried next round */
		ring_copy(rg, rg->tail, rg->scratch, h.size);
		rg->next = rg->scratch;
	}
	rg->next_size = h.size;
	uint64_t id = 0, ts = 0;
	unsigned tsoff;
	perf_record_identifier(rg->next, h.size, 1, &id);
	struct rtd_perf_event *ev = lookup(m, id);
	rg->next_ev = ev;
	if (h.type == PERF_RECORD_SAMPLE) {
		tsoff = ev ? ev->ts_off : 8 + 8 + 8; /* id, tid */
	} else {
		/* trailer: tid time [id] [stream_id] cpu identifier */
		unsigned back = 8 + 8 + 8; /* identifier, cpu, time */
		if (m->base_lay.sample_type & PERF_SAMPLE_ID)
			back += 8;
		if (m->base_lay.sample_type & PERF_SAMPLE_STREAM_ID)
			back += 8;
		tsoff = h.size >= back + 8 ? h.size - back : h.size;
	}
	if (tsoff + 8 <= h.size)
		memcpy(&ts, rg->next + tsoff, 8);
	rg->next_ts = ts;
	rg->has_next = true;
	return;
corrupt:
	/* cannot happen with a sane kernel; skip what is there */
	rtd_warn("perf: cpu %d: corrupt ring at %llu (head %llu): skipped",
		 rg->cpu, (unsigned long long)rg->tail,
		 (unsigned long long)rg->head);
	m->st.bad_records++;
	rg->tail = rg->head;
}

/* Test hook (internal.h): the ring count from which the heap merges. */
unsigned perf_heap_min_rings = 9;

struct deliver_ctx {
	unsigned *heap;      /* ring indices, NULL: linear scan */
	uint64_t *heap_ts;   /* each ring's next timestamp, by ring index */
	rtd_perf_sample_fn fn;
	void *ctx;
	uint64_t round_ns;
	uint64_t last_ts;
	struct rtd_perf_sample s;
};

/* The state of pid in m->scope, 0: out of scope. */
static uintptr_t scope_of(const struct rtd_perf_monitor *m, uint32_t pid)
{
	void *v = NULL;
	return rtd_map_get(&m->scope, pid, &v) ? (uintptr_t)v : 0;
}

/* A FORK record: a new thread is in its process's scope; a scoped
 * process's child joins with its parent's state (RTD_PERF_INHERIT, as
 * the kernel's inherited events); a pid in scope that another process
 * forks is a reused one, and leaves. */
static bool scope_fork(struct rtd_perf_monitor *m,
		       const struct rtd_perf_sample *s)
{
	uint32_t pid = s->rec.task.pid, ppid = s->rec.task.ppid;
	uintptr_t parent = scope_of(m, ppid);
	if (pid == ppid)
		return parent == SCOPE_ON;
	if (!parent) {
		rtd_map_del(&m->scope, pid);
		return false;
	}
	if ((m->flags & RTD_PERF_INHERIT) &&
	    rtd_map_put(&m->scope, pid, (void *)parent, NULL) && !m->scope_full++)
		rtd_warn("perf: more than %d processes in scope: the children "
			 "of the others are not followed", PERF_MAX_SCOPED);
	return parent == SCOPE_ON;
}

/* RTD_PERF_SCOPE_CPU_WIDE: whether a record of a CPU-wide event is one a
 * per-task event of the scope would have had. */
static bool scope_keep(struct rtd_perf_monitor *m,
		       const struct rtd_perf_sample *s)
{
	uint32_t pid;
	switch (s->type) {
	case PERF_RECORD_FORK:
		return scope_fork(m, s);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pid = s->rec.mmap.pid;
		break;
	case PERF_RECORD_COMM:
		pid = s->rec.comm.pid;
		break;
	case PERF_RECORD_EXIT:
		pid = s->rec.task.pid;
		break;
	case PERF_RECORD_LOST:
	case RTD_PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_TEXT_POKE:
		return true; /* the ring's or the kernel's, no process's */
	default:
		pid = s->pid;
		break;
	}
	uintptr_t st = scope_of(m, pid);
	if (st == SCOPE_AT_EXEC && s->type == PERF_RECORD_COMM &&
	    (s->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		/* the kernel enables an enable_on_exec event just before */
		rtd_map_put(&m->scope, pid, (void *)SCOPE_ON, NULL);
		return true;
	}
	return st == SCOPE_ON;
}

static int deliver(struct rtd_perf_monitor *m, unsigned ri,
		   struct deliver_ctx *d)
{
	struct perf_ring *rg = &m->rings[ri];
	struct rtd_perf_sample *s = &d->s;
	struct rtd_perf_event *ev = rg->next_ev;
	size_t eoff;
	int r = perf_record_decode(rg->next, rg->next_size,
				   ev ? &ev->lay : &m->base_lay, s, &eoff);
	m->st.records++;
	if (r) {
		m->st.bad_records++;
		rtd_warn("perf: cpu %d: %s record of %u bytes: %s at byte %zu",
			 rg->cpu, rtd_perf_record_name(s->type),
			 rg->next_size, rtd_strerror(r), eoff);
		return 0;
	}
	s->event = ev;
	s->ring = ri;
	s->bytes = rg->next;
	if (s->time)
		rg->last_ts = s->time;
	if (m->scoped && (!scope_keep(m, s) ||
			  (!ev && (s->type == PERF_RECORD_COMM ||
				   s->type == PERF_RECORD_FORK ||
				   s->type == PERF_RECORD_EXIT))))
		return 0; /* another process's, or the scope's own */
	if (s->type == PERF_RECORD_LOST) {
		rg->lost += s->rec.lost.lost;
		m->st.lost_in_records += s->rec.lost.lost;
		m->st.lost_records++;
	} else if (s->type == RTD_PERF_RECORD_LOST_SAMPLES) {
		m->st.lost_samples += s->rec.lost.lost;
	} else if (s->type == PERF_RECORD_SAMPLE) {
		m->st.samples++;
	}
	if (s->time) {
		if (s->time < d->last_ts)
			m->st.late++;
		else
			d->last_ts = s->time;
		if (d->round_ns > s->time &&
		    d->round_ns - s->time > m->st.max_latency_ns)
			m->st.max_latency_ns = d->round_ns - s->time;
	}
	return d->fn(s, d->ctx);
}

/* The kernel's own per-event loss counters (PERF_FORMAT_LOST). */
static void read_lost(struct rtd_perf_monitor *m)
{
	for (unsigned i = 0; i < m->ncpus; i++)
		m->rings[i].lost_read = 0;
	for (struct rtd_perf_event *e = m->events; e; e = e->next) {
		if (e->kind == RTD_PERF_COUNTER ||
		    !(e->attr.read_format & RTD_PERF_FORMAT_LOST))
			continue;
		for (size_t i = 0; i < e->nfds; i++) {
			uint64_t v[3]; /* value, id, lost */
			if (e->fds[i] < 0 || e->fd_ring[i] < 0)
				continue;
			if (read(e->fds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
				m->rings[e->fd_ring[i]].lost_read += v[2];
		}
	}
}

/* Deliver in time order what is older than limit: scan every ring per record. */
static int merge_scan(struct rtd_perf_monitor *m, struct deliver_ctx *d,
		      uint64_t limit)
{
	int r = 0;
	for (;;) {
		int best = -1;
		uint64_t bts = UINT64_MAX;
		for (unsigned i = 0; i < m->ncpus; i++) {
			struct perf_ring *rg = &m->rings[i];
			if (rg->has_next && rg->next_ts <= limit &&
			    (best < 0 || rg->next_ts < bts)) {
				best = (int)i;
				bts = rg->next_ts;
			}
		}
		if (best < 0)
			break;
		struct perf_ring *rg = &m->rings[best];
		r = deliver(m, (unsigned)best, d);
		rg->tail += rg->next_size;
		if (r)
			break;
		ring_peek(m, rg);
	}
	return r;
}

/*
 * The same with a heap of the rings whose next record is due (a ring whose
 * next record is newer than limit keeps it for the round, as in the scan).
 */
static int merge_heap(struct rtd_perf_monitor *m, struct deliver_ctx *d,
		      uint64_t limit)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		if (rg->has_next && rg->next_ts <= limit) {
			d->heap_ts[i] = rg->next_ts;
			d->heap[n++] = i;
		}
	}
	perf_heap_build(d->heap, n, d->heap_ts);
	while (n) {
		unsigned ri = d->heap[0];
		struct perf_ring *rg = &m->rings[ri];
		int r = deliver(m, ri, d);
		rg->tail += rg->next_size;
		if (r)
			return r;
		ring_peek(m, rg);
		if (rg->has_next && rg->next_ts <= limit) {
			d->heap_ts[ri] = rg->next_ts;
			perf_heap_down(d->heap, n, d->heap_ts, 0);
		} else {
			n = perf_heap_pop(d->heap, n, d->heap_ts);
		}
	}
	return 0;
}

/*
 * One round: read every head, deliver in order what is older than limit.
 * *fresh gets the bytes that arrived since the last round (the most in any
 * one ring), *held whether records had to wait for the next round.
 */
static int round_once(struct rtd_perf_monitor *m, struct deliver_ctx *d,
		      uint64_t limit, uint64_t *fresh, bool *held)
{
	m->st.rounds++;
	*fresh = 0;
	*held = false;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		uint64_t h = ring_load_head(rg);
		if (h - rg->head > *fresh)
			*fresh = h - rg->head;
		rg->head = h;
		ring_peek(m, rg);
	}
	int r = d->heap ? merge_heap(m, d, limit) : merge_scan(m, d, limit);
	for (unsigned i = 0; i < m->ncpus; i++) {
		ring_store_tail(&m->rings[i]);
		if (m->rings[i].has_next)
			*held = true;
	}
	return r;
}

/* The timestamp of the record at copy position pos (0: none there). */
static uint64_t copy_ts_at(struct rtd_perf_monitor *m, struct perf_ring *rg,
			   uint64_t pos)
{
	struct perf_ring t = *rg;
	t.tail = pos;
	ring_peek(m, &t);
	rg->scratch = t.scratch; /* allocated there if it was the first */
	return t.has_next ? t.next_ts : 0;
}

/*
 * One round over the copies (RTD_PERF_READER_THREAD): take what the
 * reader's last pass published, deliver in order what no record still to
 * come can precede (all of it when final), give the space back.
 */
static int round_copies(struct rtd_perf_monitor *m, struct deliver_ctx *d,
			bool final, uint64_t *fresh, bool *held)
{
	m->st.rounds++;
	*fresh = 0;
	*held = false;
	uint64_t limit = UINT64_MAX, pub_limit;
	bool any_full = false;
	pthread_mutex_lock(&m->rlock);
	pub_limit = m->pub_limit;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		if (rg->pub_wr - rg->head > *fresh)
			*fresh = rg->pub_wr - rg->head;
		rg->head = rg->pub_wr;
		rg->snap_full = rg->pub_full;
		rg->snap_last = rg->pub_last;
	}
	pthread_mutex_unlock(&m->rlock);
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct perf_ring *rg = &m->rings[i];
		uint64_t last = rg->snap_last, b = pub_limit;
		if (rg->snap_full) {
			/* behind: nothing older than its last copied record
			 * is still in its ring */
			any_full = true;
			b = rg->tail <= last && last < rg->head
				    ? copy_ts_at(m, rg, last)
				    : rg->last_ts;
		}
		if (!final && b < limit)
			limit = b;
	}
	for (unsigned i = 0; i < m->ncpus; i++)
		ring_peek(m, &m->rings[i]);
	uint64_t before = m->st.records;
	int r = d->heap ? merge_heap(m, d, limit) : merge_scan(m, d, limit);
	pthread_mutex_lock(&m->rlock);
	for (unsigned i = 0; i < m->ncpus; i++) {
		m->rings[i].pub_rd = m->rings[i].tail;
		if (m->rings[i].has_next)
			*held = true;
	}
	pthread_mutex_unlock(&m->rlock);
	if (any_full && m->st.records != before)
		perf_efd_post(m->space_fd);
	return r;
}

/* rtd_perf_monitor_stop() runs in signal handlers: its add must not lock */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a lock-free atomic_uint");

bool perf_stop_pending(struct rtd_perf_monitor *m)
{
	return atomic_load(&m->stop_gen) != m->stop_seen;
}

bool perf_stop_woken(struct rtd_perf_monitor *m)
{
	uint64_t v;
	while (read(m->stop_fd, &v, sizeof(v)) > 0)
		;
	return perf_stop_pending(m);
}

bool perf_monitor_run_stopped(const struct rtd_perf_monitor *m)
{
	return m->run_stopped;
}

int64_t perf_monitor_run_end(const struct rtd_perf_monitor *m)
{
	return m->run_end_ns;
}

/* run() with the reader thread: this thread decodes and delivers; *seen
 * gets the stop generation as its loop ended. */
static int run_copies(struct rtd_perf_monitor *m, struct deliver_ctx *d,
		      unsigned *seen)
{
	int r = perf_copies_setup(m);
	if (r)
		return r;
	m->reader_done = false;
	atomic_store(&m->reader_quit, 0);
	pthread_t th;
	if ((r = pthread_create(&th, NULL, perf_reader_main, m)))
		return perf_set_err(m, -r, "reader thread: %s", strerror(r));
	struct pollfd pw = {.fd = m->wake_fd, .events = POLLIN};
	uint64_t fresh, v;
	bool held, done = false;
	while (!done && !perf_stop_pending(m)) {
		while (read(m->wake_fd, &v, sizeof(v)) > 0)
			;
		pthread_mutex_lock(&m->rlock);
		done = m->reader_done;
		pthread_mutex_unlock(&m->rlock);
		d->round_ns = rtd_now_ns();
		if ((r = round_copies(m, d, false, &fresh, &held)))
			break;
		if (done || poll(&pw, 1, 0) > 0)
			continue; /* the reader published more meanwhile */
		/* about to wait: the caller's moment to flush (records held
		 * for the next pass count as waiting: with a record every
		 * pass some always are) */
		if (m->idle)
			m->idle(d->ctx);
		if (poll(&pw, 1, (int)m->max_latency_ms) > 0 && !fresh)
			m->st.wakeups++;
	}
	/* taken after done was read: with the stop the reader saw; a stop
	 * from here on is the next run's */
	*seen = atomic_load(&m->stop_gen);
	atomic_store(&m->reader_quit, 1);
	perf_efd_post(m->space_fd);
	pthread_join(th, NULL);
	/* drain, this thread alone now: copy and deliver until a pass has
	 * emptied every ring, then deliver all. Two passes at least: what
	 * was stamped before the first one's start is in a ring by the
	 * second's (the round rule), so that start is the run's end */
	bool first = true;
	if (!r)
		m->run_end_ns = (int64_t)rtd_now_ns();
	while (!r) {
		uint64_t start = rtd_now_ns();
		perf_reader_pass(m, m->pass_prev);
		m->pass_prev = start;
		bool full = first;
		for (unsigned i = 0; i < m->ncpus; i++)
			full |= m->rings[i].pub_full;
		first = false;
		d->round_ns = rtd_now_ns();
		r = round_copies(m, d, !full, &fresh, &held);
		if (!full)
			break;
	}
	return r;
}

int rtd_perf_monitor_run(struct rtd_perf_monitor *m, rtd_perf_sample_fn fn,
			 void *ctx)
{
	if (!m || !fn)
		return -RTD_E_INVAL;
	if (!m->rings_ready)
		return perf_set_err(m, -RTD_E_STATE,
				    "no event registered: nothing to read");
	if (atomic_exchange(&m->running, 1))
		return -RTD_E_STATE;
	struct deliver_ctx *d = calloc(1, sizeof(*d));
	struct pollfd *pfd = calloc(m->ncpus + 1 + m->npidfds, sizeof(*pfd));
	int r = 0;
	/* the stops this run honours: those asked before its loop ends (none
	 * when it fails before its loop) */
	unsigned seen = m->stop_seen;
	m->run_end_ns = 0;
	if (!d || !pfd) {
		r = -ENOMEM;
		goto out;
	}
	d->fn = fn;
	d->ctx = ctx;
	if (m->ncpus >= perf_heap_min_rings) {
		d->heap = calloc(m->ncpus, sizeof(*d->heap));
		d->heap_ts = calloc(m->ncpus, sizeof(*d->heap_ts));
		if (!d->heap || !d->heap_ts) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (m->threaded) {
		r = run_copies(m, d, &seen);
		if (!r)
			read_lost(m);
		goto out;
	}
	pfd[0].fd = m->stop_fd;
	pfd[0].events = POLLIN;
	for (unsigned i = 0; i < m->ncpus; i++) {
		pfd[i + 1].fd = m->rings[i].fd;
		pfd[i + 1].events = POLLIN;
		m->rings[i].hup = false;
	}
	perf_pidfds_poll(m, pfd + 1 + m->ncpus);
	uint64_t prev_round = 0;
	for (;;) {
		if (perf_stop_pending(m))
			break;
		uint64_t now = rtd_now_ns();
		uint64_t fresh;
		bool held, busy;
		d->round_ns = now;
		r = round_once(m, d, prev_round, &fresh, &held);
		prev_round = now;
		if (r) {
			seen = atomic_load(&m->stop_gen);
			goto out;
		}
		/*
		 * Data arrived, or records wait for the next round: read again
		 * at once, as perf record does while data flows (what came
		 * while we slept was all held back by the round rule, and only
		 * the next round frees it). Sleeping here instead, even 1 ms at
		 * a time, lost records under load where perf lost none.
		 */
		busy = fresh > 0 || held;
		if (!busy && m->idle)
			m->idle(ctx);
		int n = poll(pfd, m->ncpus + 1 + m->npidfds,
			     busy ? 0 : (int)m->max_latency_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			seen = atomic_load(&m->stop_gen);
			goto out;
		}
		if (n > 0 && !busy)
			m->st.wakeups++;
		if ((pfd[0].revents & POLLIN) && perf_stop_woken(m))
			break;
		if (perf_rings_hup(pfd + 1, m->ncpus) ||
		    perf_pidfds_gone(m, pfd + 1 + m->ncpus))
			break; /* the observed processes are gone */
	}
	/* the loop's end: the stops asked by now are this run's; one asked
	 * during the drain below stays pending for the next run() */
	seen = atomic_load(&m->stop_gen);
	/* drain, in two rounds as the loop's: the first gives what the
	 * round before it held back (stamped before that round began), the
	 * second all the rest. The first's start is the run's end
	 * (perf_monitor_run_end()): what was stamped before it is in its
	 * ring by the second (the round rule); with one read of the rings, a
	 * record being written as the drain read its ring came with the
	 * next run, older than that end */
	uint64_t fresh;
	bool held;
	d->round_ns = rtd_now_ns();
	m->run_end_ns = (int64_t)d->round_ns;
	r = round_once(m, d, prev_round, &fresh, &held);
	if (!r) {
		d->round_ns = rtd_now_ns();
		r = round_once(m, d, UINT64_MAX, &fresh, &held);
	}
	read_lost(m);
out:
	m->run_stopped = seen != m->stop_seen;
	m->stop_seen = seen;
	free(pfd);
	if (d) {
		free(d->heap);
		free(d->heap_ts);
	}
	free(d);
	atomic_store(&m->running, 0);
	return r;
}

void rtd_perf_monitor_set_idle(struct rtd_perf_monitor *m, rtd_perf_idle_fn fn)
{
	if (m)
		m->idle = fn;
}

void rtd_perf_monitor_stop(struct rtd_perf_monitor *m, bool wait)
{
	if (!m)
		return;
	int saved = errno; /* signal handlers must not clobber errno */
	/* a lock-free add and a write(): async-signal-safe */
	atomic_fetch_add(&m->stop_gen, 1);
	uint64_t one = 1;
	ssize_t w = write(m->stop_fd, &one, sizeof(one));
	(void)w;
	errno = saved;
	if (!wait)
		return;
	struct timespec ts = {0, 1000000};
	while (atomic_load(&m->running))
		nanosleep(&ts, NULL);
}

void rtd_perf_monitor_stats(const struct rtd_perf_monitor *m,
			    struct rtd_perf_stats *st)
{
	if (!m || !st || st->sz < sizeof(size_t))
		return;
	struct rtd_perf_stats t = m->st;
	t.nrings = m->ncpus;
	t.ring_pages = m->ring_pages;
	uint64_t read_sum = 0;
	for (unsigned i = 0; i < m->ncpus && m->rings; i++) {
		const struct perf_ring *rg = &m->rings[i];
		uint64_t l = rg->lost > rg->lost_read ? rg->lost : rg->lost_read;
		if (i < 256)
			t.ring_lost[i] = l;
		read_sum += rg->lost_read;
	}
	t.lost = t.lost_in_records > read_sum ? t.lost_in_records : read_sum;
	t.copy_bytes = m->copy_bytes;
	t.copy_max = m->copy_max;
	t.copy_full = m->copy_full;
	t.bad_records += m->copy_bad;
	rtd_stats_copy(st, &t, sizeof(t));
}

bool rtd_perf_monitor_user_only(const struct rtd_perf_monitor *m)
{
	return m && m->user_only;
}

unsigned rtd_perf_monitor_ncpus(const struct rtd_perf_monitor *m)
{
	return m ? m->ncpus : 0;
}

/* ---- accessors ------------------------------------------------------------- */

const char *rtd_perf_event_name(const struct rtd_perf_event *ev)
{
	return ev ? ev->name : "";
}

enum rtd_perf_event_kind rtd_perf_event_kind(const struct rtd_perf_event *ev)
{
	return ev ? ev->kind : 0;
}

const char *rtd_perf_event_symbol(const struct rtd_perf_event *ev)
{
	return ev ? ev->symbol : NULL;
}

unsigned rtd_perf_event_nfields(const struct rtd_perf_event *ev)
{
	return ev ? ev->nfields_all - ev->ncommon : 0;
}

const struct rtd_perf_field *rtd_perf_event_field(const struct rtd_perf_event *ev,
						  unsigned i)
{
	if (!ev || i >= ev->nfields_all - ev->ncommon)
		return NULL;
	return &ev->fields[ev->ncommon + i];
}

int rtd_perf_sample_field(const struct rtd_perf_sample *s, const char *name,
			  struct rtd_perf_value *v)
{
	if (!s || !s->event || !name || !v)
		return -RTD_E_INVAL;
	const struct rtd_perf_event *ev = s->event;
	for (unsigned i = 0; i < ev->nfields_all; i++)
		if (!strcmp(ev->fields[i].name, name))
			return perf_field_decode(&ev->fields[i], s->raw,
						 s->raw_size, v);
	return -RTD_E_NOTFOUND;
}

int rtd_perf_sample_field_at(const struct rtd_perf_sample *s, unsigned i,
			     struct rtd_perf_value *v)
{
	if (!s || !s->event || !v)
		return -RTD_E_INVAL;
	const struct rtd_perf_field *f = rtd_perf_event_field(s->event, i);
	if (!f)
		return -RTD_E_NOTFOUND;
	return perf_field_decode(f, s->raw, s->raw_size, v);
}
