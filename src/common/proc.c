/* SPDX-License-Identifier: MIT */
/*
 * proc.c - the CPU time of each thread of a process, as the kernel counts
 * it (rtdiag/common.h): /proc/PID/task/TID/schedstat's first field, the
 * nanoseconds the thread has run (sum_exec_runtime, what perf's
 * task-clock counts), or utime + stime of .../stat in clock ticks when
 * the kernel has no schedstat.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/common.h"

/* One thread's CPU time in ns; false when it cannot be read (gone). */
static bool thread_ns(int pid, long tid, uint64_t *ns)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/schedstat", pid, tid);
	if (rtd_read_small(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%" SCNu64, ns) == 1)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", pid, tid);
	if (rtd_read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	/* the fields after the command name, which may hold spaces */
	const char *p = strrchr(buf, ')');
	unsigned long long ut, stm;
	long hz = sysconf(_SC_CLK_TCK);
	if (!p || hz <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &stm) != 2)
		return false;
	*ns = (uint64_t)(ut + stm) * (1000000000ull / (uint64_t)hz);
	return true;
}

int rtd_thread_cpu_read(int pid, struct rtd_thread_cpu **out, size_t *n)
{
	if (!out || !n || pid <= 0)
		return -RTD_E_INVAL;
	*out = NULL;
	*n = 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct rtd_thread_cpu *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *e;
	int err = 0;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		uint64_t ns;
		if (*end || tid <= 0 || !thread_ns(pid, tid, &ns))
			continue; /* "." and "..", or a thread that just ended */
		if (cnt == RTD_THREAD_CPU_MAX) {
			err = -RTD_E_CAP;
			break;
		}
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct rtd_thread_cpu *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		v[cnt++] = (struct rtd_thread_cpu){.tid = tid, .ns = ns};
	}
	closedir(d);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}
