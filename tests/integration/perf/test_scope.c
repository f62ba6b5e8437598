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
