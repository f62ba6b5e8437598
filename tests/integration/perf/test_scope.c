/* SPDX-License-Identifier: MIT */
/*
 * pid scoping and cgroup v2 scoping exclude other processes: a monitored
 * child and an unmonitored one both make N getppid() calls; the monitor
 * sees exactly the monitored one's N. The same through CPU-wide events
 * filtered by process (RTD_PERF_SCOPE_CPU_WIDE): the scope starts at the
 * exec, follows a forked child, and run() ends when the process exits.
 */
#include <linux/perf_event.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>

#include "perf_test.h"

#define N 3000

static char nstr[16];
static char dir[4200];

static void remove_cgroup(void)
{
	if (dir[0] && rmdir(dir) && errno != ENOENT)
		printf("note: rmdir %s: %s\n", dir, strerror(errno));
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

#define PRE 500 /* calls before the exec: not in scope yet */

struct seen {
	pid_t mon;
	uint64_t mine, all, lost;
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
	if (s->type == PERF_RECORD_LOST)
		w->lost += s->rec.lost.lost;
	if (s->type != PERF_RECORD_SAMPLE)
		return 0;
	w->all++;
	w->mine += (pid_t)s->pid == w->mon;
	return 0;
}

/*
 * RTD_PERF_SCOPE_CPU_WIDE (events on every CPU for all tasks, records
 * kept by process): the monitored child calls getppid() PRE times before
 * its exec (out of scope until the exec, as with enable_on_exec), then
 * forks; it and its child make N calls each (both in scope: the child is
 * followed by its FORK record); another process makes 2N (never in
 * scope). Exactly 2N are delivered, N of them the child's, and run()
 * returns by itself once the child has exited (its pidfd).
 */
static void cpu_wide(const char *t)
{
	char *argv[] = {(char *)t, "forkflood", nstr, NULL};
	int go[2];
	if (pipe(go))
		FAIL("pipe: %s", strerror(errno));
	pid_t mon = fork();
	if (mon < 0)
		FAIL("fork: %s", strerror(errno));
	if (mon == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		for (int i = 0; i < PRE; i++)
			syscall(SYS_getppid);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	struct pt_child other = pt_spawn(argv);
	struct rtd_perf_opts o = {.sz = sizeof(o), .ring_pages = 256};
	o.pids = &mon;
	o.npids = 1;
	o.flags = RTD_PERF_INHERIT | RTD_PERF_ENABLE_ON_EXEC |
		  RTD_PERF_SCOPE_CPU_WIDE;
	struct rtd_perf_monitor *m;
	if (rtd_perf_monitor_new(&o, &m))
		FAIL("cpu-wide: monitor_new failed");
	if (rtd_perf_monitor_add_tracepoint(m, "syscalls:sys_enter_getppid",
					    NULL, NULL))
		FAIL("cpu-wide: add: %s", rtd_perf_monitor_errmsg(m));
	char b = 1;
	if (write(go[1], &b, 1) != 1)
		FAIL("cannot start the child");
	close(go[1]);
	pt_go(&other);
	struct seen w = {.mon = mon};
	int r = rtd_perf_monitor_run(m, on_rec, &w); /* until mon is gone */
	int st = pt_wait(&(struct pt_child){mon, -1});
	pt_wait(&other);
	if (r)
		FAIL("cpu-wide: run: %s", rtd_strerror(r));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("cpu-wide: the child ended with status %d", st);
	printf("cpu-wide: %llu events, %llu of the monitored child, %llu lost\n",
	       (unsigned long long)w.all, (unsigned long long)w.mine,
	       (unsigned long long)w.lost);
	if (w.lost)
		FAIL("cpu-wide: losses with a large ring");
	if (w.mine != N)
		FAIL("cpu-wide: want the child's %u calls after its exec, got %llu",
		     N, (unsigned long long)w.mine);
	if (w.all != 2 * N)
		FAIL("cpu-wide: want %u calls (the child's and its own child's), "
		     "got %llu", 2 * N, (unsigned long long)w.all);
	OK("cpu-wide: exactly the %u calls of the child after its exec and of "
	   "its own child, none of others; run() ended at its exit", 2 * N);
	rtd_perf_monitor_free(m);
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
	pt_run_scoped(&o, N, &mon, &other, "pid", NULL);
	cpu_wide(t);

	/* cgroup v2 scope (a v1 perf_event mount elsewhere would steal the
	 * controller from v2: serialised with the v1 tests) */
	pt_cgroup_lock();
	char cg2[4096], procs[4300];
	if (!find_cgroup2(cg2, sizeof(cg2)))
		SKIP("pid scope passed; no cgroup v2 mount for the cgroup test");
	snprintf(dir, sizeof(dir), "%s/rtdiag-perf-test-%d", cg2, (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		SKIP("pid scope passed; cannot create a cgroup under %s: %s",
		     cg2, strerror(errno));
	atexit(remove_cgroup);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	mon = pt_spawn(argv);
	other = pt_spawn(argv);
	struct rtd_perf_opts oc = {.sz = sizeof(oc), .ring_pages = 256};
	const char *cgs[] = {dir};
	oc.cgroups = cgs;
	oc.ncgroups = 1;
	pt_run_scoped(&oc, N, &mon, &other, "cgroup v2", procs);
	return 0;
}
