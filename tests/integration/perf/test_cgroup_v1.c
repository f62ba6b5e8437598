/* SPDX-License-Identifier: MIT */
/*
 * cgroup v1 scoping: the perf_event controller is mounted as a v1
 * hierarchy in a temporary directory (when no v1 perf_event mount exists),
 * a child cgroup holds one process, and a monitor scoped to that cgroup by
 * a path relative to the v1 mount (found in /proc/self/mountinfo, after the
 * v2 lookup fails) sees exactly that process's N getppid() calls and none
 * of a concurrent process outside it. Everything is unmounted and removed
 * at exit, also on failure.
 */
#include <stdbool.h>
#include <time.h>

#include "perf_test.h"

#define N 3000

static char mnt[64], cg[4200], name[64];
static bool mounted;
static struct pt_child mon = {-1, -1}, other = {-1, -1};

/* The perf_event line of /proc/cgroups: its hierarchy id (0: unbound). */
static int perf_event_hierarchy(void)
{
	FILE *f = fopen("/proc/cgroups", "r");
	char line[256];
	int h = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "perf_event %d", &h) == 1)
			break;
	if (f)
		fclose(f);
	return h;
}

static void cleanup(void)
{
	struct pt_child *c[2] = {&mon, &other};
	for (int i = 0; i < 2; i++)
		if (c[i]->pid > 0 && kill(c[i]->pid, SIGKILL) == 0)
			pt_wait(c[i]);
	if (cg[0] && rmdir(cg) && errno != ENOENT)
		printf("note: rmdir %s: %s\n", cg, strerror(errno));
	if (mounted) {
		/* A removed cgroup leaves its parent's list only once its last
		 * reference is gone, and an unmount that still sees a child
		 * keeps the hierarchy (and perf_event off cgroup v2) alive with
		 * no mount. So: unmount, and if perf_event stays bound, mount
		 * the same hierarchy again and retry. */
		for (int tries = 0; tries < 10; tries++) {
			usleep(100000);
			if (umount(mnt)) {
				printf("note: umount %s: %s\n", mnt, strerror(errno));
				break;
			}
			for (int i = 0; i < 20 && perf_event_hierarchy() > 0; i++)
				usleep(10000);
			if (perf_event_hierarchy() <= 0 ||
			    mount("none", mnt, "cgroup", 0, "perf_event"))
				break;
		}
		rmdir(mnt);
		if (perf_event_hierarchy() > 0)
			printf("note: perf_event still bound to a v1 hierarchy\n");
	}
}

int main(void)
{
	pt_require();
	const char *t = pt_target();
	pt_cgroup_lock();
	if (perf_event_hierarchy() < 0)
		SKIP("no perf_event controller in /proc/cgroups");
	atexit(cleanup);
	snprintf(mnt, sizeof(mnt), "/tmp/rtdiag-perf-cg1.XXXXXX");
	if (!mkdtemp(mnt))
		FAIL("mkdtemp: %s", strerror(errno));
	if (mount("none", mnt, "cgroup", 0, "perf_event")) {
		int e = errno;
		rmdir(mnt);
		SKIP("cannot mount the v1 perf_event hierarchy on %s: %s "
		     "(bound elsewhere, or cgroup v1 unavailable)",
		     mnt, strerror(e));
	}
	mounted = true;
	if (perf_event_hierarchy() <= 0)
		FAIL("mounted %s but /proc/cgroups shows perf_event unbound", mnt);

	snprintf(name, sizeof(name), "rtdiag-perf-v1-%d", (int)getpid());
	snprintf(cg, sizeof(cg), "%s/%s", mnt, name);
	if (mkdir(cg, 0755))
		FAIL("mkdir %s: %s", cg, strerror(errno));

	char nstr[16], procs[4300];
	snprintf(nstr, sizeof(nstr), "%d", N);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	char *argv[] = {(char *)t, "flood", nstr, NULL};
	mon = pt_spawn(argv);
	other = pt_spawn(argv);
	/* a relative path: v2 has no such cgroup, so the v1 mount is used */
	struct rtd_perf_opts o = {.sz = sizeof(o), .ring_pages = 256};
	const char *cgs[] = {name};
	o.cgroups = cgs;
	o.ncgroups = 1;
	pt_run_scoped(&o, N, &mon, &other, "cgroup v1", procs);
	mon.pid = other.pid = -1; /* reaped */
	return 0;
}
