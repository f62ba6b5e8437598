/* SPDX-License-Identifier: MIT */
/* perf_test.h - helpers for the perf integration tests written in C. */
#ifndef RTD_PERF_TEST_H
#define RTD_PERF_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtdiag/perf.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/trigger.h"

#define SKIP(...)                                                              \
	do {                                                                   \
		printf("SKIP: " __VA_ARGS__);                                  \
		printf("\n");                                                  \
		exit(77);                                                      \
	} while (0)
#define FAIL(...)                                                              \
	do {                                                                   \
		printf("FAIL: " __VA_ARGS__);                                  \
		printf("\n");                                                  \
		exit(1);                                                       \
	} while (0)
#define OK(...)                                                                \
	do {                                                                   \
		printf("ok: " __VA_ARGS__);                                    \
		printf("\n");                                                  \
	} while (0)

/* A monitor with the tracepoint tp added (skips where there is none). */
static inline struct rtd_perf_monitor *
pt_monitor_tp(const struct rtd_perf_opts *o, const char *tp)
{
	struct rtd_perf_monitor *m;
	int r = rtd_perf_monitor_new(o, &m);
	if (r)
		FAIL("monitor_new: %s", rtd_strerror(r));
	r = rtd_perf_monitor_add_tracepoint(m, tp, NULL, NULL);
	if (r == -RTD_E_PERF_NOEVENT)
		SKIP("no %s here", tp);
	if (r)
		FAIL("add %s: %s", tp, rtd_perf_monitor_errmsg(m));
	return m;
}

/* run() with thread_fn(arg) beside it (which ends the run); *st gets the
 * monitor's stats. */
static inline void pt_run_beside(struct rtd_perf_monitor *m,
				 rtd_perf_sample_fn fn, void *ctx,
				 void *(*thread_fn)(void *), void *arg,
				 struct rtd_perf_stats *st)
{
	pthread_t th;
	pthread_create(&th, NULL, thread_fn, arg);
	int r = rtd_perf_monitor_run(m, fn, ctx);
	pthread_join(th, NULL);
	if (r)
		FAIL("run: %s", rtd_strerror(r));
	st->sz = sizeof(*st);
	rtd_perf_monitor_stats(m, st);
}

/* A monitor with sched:sched_switch added (skips where there is none). */
static inline struct rtd_perf_monitor *
pt_monitor_switch(const struct rtd_perf_opts *o)
{
	return pt_monitor_tp(o, "sched:sched_switch");
}

/* The test program NAME in tests/targets (fails when it is not built);
 * one buffer: valid until the next call. */
static inline const char *pt_target_named(const char *name)
{
	static char path[4096];
	const char *b = getenv("RTD_BINARY_DIR");
	if (!b)
		SKIP("RTD_BINARY_DIR not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/tests/targets/%s", b, name);
	if (access(path, X_OK))
		FAIL("%s not built at %s", name, path);
	return path;
}

static inline const char *pt_target(void)
{
	return pt_target_named("perf_target");
}

/* The CPU seconds a process has used, 0 when unknown: a bound on a
 * sampled child's run that follows its CPU, not the wall clock (the
 * samples come at its CPU's pace, however loaded the machine). */
static inline double pt_cpu_seconds(pid_t pid)
{
	struct rtd_proc_usage u;
	return rtd_proc_usage_read((int)pid, &u) ? 0 : (double)u.cpu_ns / 1e9;
}

/* Root, and tracefs mounted (mounted here when missing). */
static inline void pt_require(void)
{
	if (geteuid() != 0)
		SKIP("needs root for perf_event and tracefs");
	if (access("/sys/kernel/tracing/events", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events", F_OK) != 0) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			SKIP("tracefs is not mounted and cannot be: %s",
			     strerror(errno));
	}
}

/* A child that waits for pt_go() before exec'ing argv. */
struct pt_child {
	pid_t pid;
	int go;
};

static inline struct pt_child pt_spawn(char *const argv[])
{
	int p[2];
	if (pipe(p))
		FAIL("pipe: %s", strerror(errno));
	struct pt_child c = {fork(), p[1]};
	if (c.pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (c.pid == 0) {
		char b;
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	return c;
}

static inline void pt_go(struct pt_child *c)
{
	char b = 1;
	if (write(c->go, &b, 1) != 1)
		FAIL("cannot start the child");
	close(c->go);
}

/*
 * Waits until thread @tid sits off the CPU in read(@fd, ...): its
 * /proc/TID/syscall names the call only while the task is blocked in it
 * (and says "running" otherwise). A wait that began before a profiler
 * attached is seen by none; one that began in between, by some. Polled,
 * with a bound (60 s) no busy machine reaches.
 */
static inline void pt_wait_blocked_in_read(pid_t tid, int fd)
{
	char path[64], want[32], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	snprintf(want, sizeof(want), "%d 0x%x ", (int)SYS_read, (unsigned)fd);
	for (int i = 0; i < 60000; i++) {
		FILE *f = fopen(path, "r");
		bool in = false;
		if (f) {
			in = fgets(buf, sizeof(buf), f) && !strncmp(buf, want, strlen(want));
			fclose(f);
		}
		if (in)
			return;
		usleep(1000);
	}
	FAIL("thread %d never blocked in read(%d): %s", (int)tid, fd, path);
}

static inline int pt_wait(struct pt_child *c)
{
	int st = 0;
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/*
 * Serialises the tests that scope to a cgroup: mounting the v1 perf_event
 * hierarchy moves the controller off cgroup v2, so a v2 test running at the
 * same time would see nothing. Held until exit.
 */
static inline void pt_cgroup_lock(void)
{
	int fd = open("/tmp/rtdiag-perf-cgroup.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX))
		FAIL("locking /tmp/rtdiag-perf-cgroup.lock: %s", strerror(errno));
}

/*
 * Monitored child @mon and unmonitored @other both make @n getppid()
 * calls; the monitor built from @o must see exactly @mon's @n. With
 * @cgroup_procs, @mon is moved there before it starts.
 */
struct pt_seen {
	pid_t want;
	uint64_t mine, others, lost;
};

static inline int pt_on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct pt_seen *w = ctx;
	if (s->type == 2 /* LOST */)
		w->lost += s->rec.lost.lost;
	if (s->type != 9)
		return 0;
	if ((pid_t)s->pid == w->want)
		w->mine++;
	else
		w->others++;
	return 0;
}

static inline void pt_run_scoped(struct rtd_perf_opts *o, unsigned n, struct pt_child *mon,
		       struct pt_child *other, const char *what,
		       const char *cgroup_procs)
{
	struct rtd_perf_monitor *m;
	int r = rtd_perf_monitor_new(o, &m);
	if (r)
		FAIL("%s: monitor_new: %s (%s)", what, rtd_strerror(r),
		     "see errmsg");
	r = rtd_perf_monitor_add_tracepoint(m, "syscalls:sys_enter_getppid",
					    NULL, NULL);
	if (r == -RTD_E_PERF_NOEVENT)
		SKIP("no syscalls:sys_enter_getppid (CONFIG_FTRACE_SYSCALLS off)");
	if (r)
		FAIL("%s: add: %s", what, rtd_perf_monitor_errmsg(m));
	if (cgroup_procs) {
		FILE *f = fopen(cgroup_procs, "w");
		if (!f || fprintf(f, "%d\n", (int)mon->pid) < 0 || fclose(f))
			FAIL("moving %d into %s: %s", (int)mon->pid,
			     cgroup_procs, strerror(errno));
	}
	pt_go(mon);
	pt_go(other);
	pt_wait(mon);
	pt_wait(other);
	/* both are done: stop at once; run() drains the rings */
	rtd_perf_monitor_stop(m, false);
	struct pt_seen w = {.want = mon->pid};
	r = rtd_perf_monitor_run(m, pt_on_rec, &w);
	if (r)
		FAIL("%s: run: %s", what, rtd_strerror(r));
	printf("%s: %llu events of the monitored child, %llu of others, %llu lost\n",
	       what, (unsigned long long)w.mine, (unsigned long long)w.others,
	       (unsigned long long)w.lost);
	if (w.lost)
		FAIL("%s: losses with a large ring", what);
	if (w.others)
		FAIL("%s: %llu events from other processes", what,
		     (unsigned long long)w.others);
	if (w.mine != n)
		FAIL("%s: want exactly %u events, got %llu", what, n,
		     (unsigned long long)w.mine);
	OK("%s: exactly the child's %u calls", what, n);
	rtd_perf_monitor_free(m);
}

#ifdef PT_WANT_WINDOWS
#include "rtdiag/perf_source.h"

/* A profiler of @child drained window by window, as a flight recorder's
 * and a plain recording's are (RTD_PERF_PROF_KEEP_SAMPLES | _NO_DOTNET |
 * _WINDOWS | @flags, sampled as @so says); the child killed and the test
 * failed when it cannot be made. */
static inline struct rtd_perf_profiler *pt_window_profiler(pid_t child, unsigned flags,
							    const struct rtd_perf_sampler_opts *so)
{
	static pid_t pid;
	pid = child;
	struct rtd_perf_profiler_opts o = {
		.sz = sizeof(o),
		.pids = &pid,
		.npids = 1,
		.flags = RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET |
			 RTD_PERF_PROF_WINDOWS | flags,
		.sampler = so};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(child, SIGKILL);
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	}
	return p;
}

/* @p through a live source (the recorder's wiring: 20 ms windows, copied
 * names), each sample record of @child given to @on_sample, until
 * @enough(@ctx) says so or the child has used @max_cpu seconds of CPU
 * (samples follow its CPU, not the wall clock); then the source is
 * stopped and read to its end, so that its last window is drained whole
 * (a trim follows each drain; a source freed in the middle of one holds
 * what that window met). The source freed (its runner joined: the
 * profiler and its symbolizer are the caller's again), the child killed
 * and reaped. Returns the child's CPU seconds as last read. */
static inline double pt_read_windows(struct rtd_perf_profiler *p, pid_t child, double max_cpu,
				     bool (*enough)(void *ctx),
				     void (*on_sample)(const struct rtd_record *rec, void *ctx),
				     void *ctx)
{
	static volatile int stop;
	stop = 0;
	RTD_OPTS(rtd_perf_source_opts, po, .window_ms = 20, .flags = RTD_PERF_SOURCE_COPIED,
		 .stop = &stop);
	int err = 0;
	rtd_source *s = rtd_perf_source_live(p, &po, &err);
	if (!s) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	const struct rtd_record *rec;
	int r = 0;
	double child_cpu = 0;
	for (;;) {
		if (enough(ctx) || child_cpu >= max_cpu)
			stop = 1;
		r = rtd_source_next(s, &rec);
		if (r == RTD_SOURCE_IDLE) {
			child_cpu = pt_cpu_seconds(child);
			rtd_source_wait(s, 100);
		} else if (r != 1) {
			break;
		} else if (rec->kind == RTD_REC_SAMPLE && rec->tid == (uint32_t)child && !stop) {
			on_sample(rec, ctx);
		}
	}
	if (r < 0)
		FAIL("source: %s", rec->message);
	rtd_source_free(s);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return child_cpu;
}
#endif

#ifdef PT_WANT_SLED
/* A child for the tests of what a profiler holds: it runs one function
 * for ever, a loop over 64 Ki one-byte instructions, so nearly every
 * sample has a leaf address of its own (as a runtime's unnamed code and
 * the kernel's paths give new addresses for as long as a program runs);
 * its samples are led by "nop_sled". Defined only where asked for: 64 KiB
 * of code. */
__attribute__((noinline, used)) static void pt_nop_sled(void)
{
	__asm__ volatile(".rept 65536\n\tnop\n\t.endr" ::: "memory");
}

/* Forks that child (the test fails when it cannot). */
static inline pid_t pt_fork_sled(void)
{
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0)
		for (;;)
			pt_nop_sled();
	return child;
}
#endif

/* A forked `yes` writing to /dev/null until killed (skips where there is
 * no `yes`). */
static inline pid_t pt_yes(void)
{
	if (access("/usr/bin/yes", X_OK))
		SKIP("no /usr/bin/yes");
	pid_t c = fork();
	if (c < 0)
		FAIL("fork: %s", strerror(errno));
	if (!c) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execl("/usr/bin/yes", "yes", (char *)NULL);
		_exit(127);
	}
	return c;
}

/* A live source (windows of window_ms) of the system calls of pt_yes():
 * *child gets its pid, *rec the recorder (free it after the source).
 * Skips where there are no raw_syscalls tracepoints. */
static inline rtd_source *pt_yes_calls_source(unsigned window_ms, pid_t *child,
					      rtd_perf_syscall_recorder **rec)
{
	pid_t c = pt_yes();
	struct rtd_perf_syscall_recorder_opts ro = {.sz = sizeof(ro), .pids = &c, .npids = 1};
	int e = rtd_perf_syscall_recorder_new(&ro, rec);
	if (e) {
		kill(c, SIGKILL);
		if (e == -RTD_E_PERF_NOEVENT)
			SKIP("no raw_syscalls tracepoints here");
		FAIL("recorder: %s", rtd_perf_syscall_recorder_errmsg(NULL));
	}
	struct rtd_perf_source_opts so = {.sz = sizeof(so), .window_ms = window_ms};
	rtd_source *s = rtd_perf_source_syscalls_live(*rec, &so, &e);
	if (!s) {
		kill(c, SIGKILL);
		FAIL("source: %s", rtd_strerror(e));
	}
	*child = c;
	return s;
}

#endif
