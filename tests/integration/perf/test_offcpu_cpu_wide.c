/* SPDX-License-Identifier: MIT */
/*
 * test_offcpu_cpu_wide.c - off-CPU through BPF puts no perf event in the
 * target's own context (#33). The BPF path needs the perf monitor only
 * for the records of mappings, names and tasks; opened per task (a ring
 * event per CPU on the first thread, a dummy event per thread and CPU,
 * inherited), they made every context switch of the target dearer (+43%
 * on a pipe ping-pong, bench/perf/offcpu_floor.sh). On the real kernel,
 * with offcpu_waits_fp (six threads, three of them waiting in nanosleep,
 * a pipe read and a contended mutex):
 *  - the profiler holds at most two perf events per CPU (the ring's and
 *    the dummy event, CPU-wide), not one per thread and CPU;
 *  - its run ends by itself when the target exits (no ring hangs up: a
 *    pidfd says so);
 *  - its profile holds the three waits, each in its own function.
 */
#include <dirent.h>
#include <signal.h>

#include "perf_test.h"
#include "rtdiag/profile.h"

#define THREADS 6 /* offcpu_waits: main, sleeper, reader, feeder, locker, holder */

static size_t perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;
	char path[300], link[256];
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = 0;
			n += strstr(link, "perf_event") != NULL;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static size_t threads_of(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* the voluntary switches of pid's threads, all together */
static long switches_of(pid_t pid)
{
	char path[64], f[4096];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	long n = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/proc/%d/task/%s/status", (int)pid, e->d_name);
		FILE *s = fopen(f, "r");
		char line[256];
		long v;
		while (s && fgets(line, sizeof(line), s))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
				n += v;
		if (s)
			fclose(s);
	}
	if (d)
		closedir(d);
	return n;
}

struct waiter {
	pid_t pid;
	long from;
};

/* Once the target has waited a few dozen times under the profiler,
 * ask it to finish its rounds (a condition, polled, not a time). */
static void *finish(void *arg)
{
	struct waiter *w = arg;
	struct timespec ts = {0, 10 * 1000 * 1000};
	while (switches_of(w->pid) < w->from + 30)
		nanosleep(&ts, NULL);
	kill(w->pid, SIGUSR1);
	return NULL;
}

int main(void)
{
	pt_require();
	char *path = (char *)pt_target_named("offcpu_waits_fp");
	char *argv[] = {path, "0", NULL}; /* rounds until SIGUSR1 */
	struct pt_child c = pt_spawn(argv);
	pt_go(&c);
	/* a generous bound, never reached unless something is broken */
	alarm(240);
	struct timespec ts = {0, 10 * 1000 * 1000};
	while (threads_of(c.pid) < THREADS)
		nanosleep(&ts, NULL);
	size_t before = perf_fds();
	struct rtd_perf_profiler_opts o = {.sz = sizeof(o),
					   .pids = &c.pid,
					   .npids = 1,
					   .flags = RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(c.pid, SIGKILL);
		FAIL("off-CPU profiler: %s", rtd_perf_profiler_errmsg(NULL));
	}
	const char *why = "";
	if (rtd_perf_profiler_offcpu_via(p, &why) != RTD_PERF_OFFCPU_VIA_BPF) {
		kill(c.pid, SIGKILL);
		SKIP("no BPF path here: %s", why);
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = perf_fds() - before;
	printf("%zu perf events for a %d-thread target on %ld CPUs\n", n,
	       THREADS, ncpu);
	if (n > 2 * (size_t)ncpu) {
		kill(c.pid, SIGKILL);
		FAIL("%zu perf events for a %d-thread target on %ld CPUs: events "
		     "per task, which its every context switch pays for",
		     n, THREADS, ncpu);
	}
	OK("at most two perf events per CPU (%zu on %ld CPUs)", n, ncpu);

	struct waiter w = {c.pid, switches_of(c.pid)};
	pthread_t th;
	pthread_create(&th, NULL, finish, &w);
	int r = rtd_perf_profiler_run(p); /* until the target is gone */
	pthread_join(th, NULL);
	int st = pt_wait(&c);
	if (r)
		FAIL("run: %s", rtd_perf_profiler_errmsg(p));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("offcpu_waits ended with status %d", st);
	OK("the run ended by itself when the target exited");

	rtd_profile *prof;
	if (rtd_perf_profiler_profile(p, &prof))
		FAIL("profile: %s", rtd_perf_profiler_errmsg(p));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || rtd_profile_write(prof, RTD_PROFILE_FMT_FOLDED, f, NULL))
		FAIL("writing the folded profile");
	fclose(f);
	const char *fns[] = {"wait_sleep", "wait_pipe", "wait_mutex"};
	for (size_t i = 0; i < 3; i++)
		if (!strstr(buf, fns[i]))
			FAIL("no wait in %s in the profile:\n%s", fns[i], buf);
	OK("the profile holds the waits in wait_sleep, wait_pipe, wait_mutex");
	free(buf);
	rtd_profile_free(prof);
	rtd_perf_profiler_free(p);
	return 0;
}
