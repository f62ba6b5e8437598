/* SPDX-License-Identifier: MIT */
/* perf_test.h - helpers for the perf integration tests written in C. */
#ifndef RTD_PERF_TEST_H
#define RTD_PERF_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtdiag/perf.h"

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

/* The CPU seconds a process has used (utime + stime), 0 when unknown:
 * a run bounded by its target's CPU, not by the wall clock of a busy box. */
static inline double pt_cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	/* after "pid (comm)": state, then 10 fields before utime and stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			 &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

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

static inline const char *pt_target(void)
{
	static char path[4096];
	const char *b = getenv("RTD_BINARY_DIR");
	if (!b)
		SKIP("RTD_BINARY_DIR not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/tests/targets/perf_target", b);
	if (access(path, X_OK))
		FAIL("perf_target not built at %s", path);
	return path;
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

#endif
