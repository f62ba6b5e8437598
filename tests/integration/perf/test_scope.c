/* SPDX-License-Identifier: MIT */
/*
 * pid scoping and cgroup v2 scoping exclude other processes: a monitored
 * child and an unmonitored one both make N getppid() calls; the monitor
 * sees exactly the monitored one's N.
 */
#include <stdbool.h>
#include <time.h>

#include "perf_test.h"

#define N 3000

struct seen {
	pid_t want;
	uint64_t mine, others, lost;
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
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

static char nstr[16];

static void run_scoped(struct rtd_perf_opts *o, struct pt_child *mon,
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
	struct seen w = {.want = mon->pid};
	r = rtd_perf_monitor_run(m, on_rec, &w);
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
	if (w.mine != N)
		FAIL("%s: want exactly %d events, got %llu", what, N,
		     (unsigned long long)w.mine);
	OK("%s: exactly the child's %d calls", what, N);
	rtd_perf_monitor_free(m);
}

static bool find_cgroup2(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - cgroup2 ");
		if (!dash)
			continue;
		char mp[4096];
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 &&
		    strlen(mp) < n) {
			strcpy(out, mp);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	snprintf(nstr, sizeof(nstr), "%d", N);
	char *argv[] = {(char *)t, "flood", nstr, NULL};

	/* pid scope: the child is traced from its exec */
	struct pt_child mon = pt_spawn(argv), other = pt_spawn(argv);
	struct rtd_perf_opts o = {.sz = sizeof(o), .ring_pages = 256};
	o.pids = &mon.pid;
	o.npids = 1;
	o.flags = RTD_PERF_INHERIT | RTD_PERF_ENABLE_ON_EXEC;
	run_scoped(&o, &mon, &other, "pid", NULL);

	/* cgroup v2 scope */
	char cg2[4096], dir[4200], procs[4300];
	if (!find_cgroup2(cg2, sizeof(cg2)))
		SKIP("pid scope passed; no cgroup v2 mount for the cgroup test");
	snprintf(dir, sizeof(dir), "%s/rtdiag-perf-test-%d", cg2, (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		SKIP("pid scope passed; cannot create a cgroup under %s: %s",
		     cg2, strerror(errno));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	mon = pt_spawn(argv);
	other = pt_spawn(argv);
	struct rtd_perf_opts oc = {.sz = sizeof(oc), .ring_pages = 256};
	const char *cgs[] = {dir};
	oc.cgroups = cgs;
	oc.ncgroups = 1;
	run_scoped(&oc, &mon, &other, "cgroup v2", procs);
	if (rmdir(dir))
		printf("note: rmdir %s: %s\n", dir, strerror(errno));
	return 0;
}
