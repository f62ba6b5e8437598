/* SPDX-License-Identifier: MIT */
/*
 * offcpu_floor_loader: loads a BPF object (a variant of
 * offcpu_floor.bpf.c, or the project's offcpu.bpf.o), puts PID in its
 * pids map (and, for offcpu.bpf.o, its conf: -k no kernel stacks),
 * attaches every program, optionally opens per-task dummy perf events on
 * PID as rtdiag's monitor does (-d: a ring event per CPU and one per
 * thread, inherited; -D: one event per CPU for every task, the records
 * to be filtered in user space), says "ready" on stderr, waits for PID to exit, and
 * prints the programs' run time (BPF_ENABLE_STATS) per switch-out of the
 * target. For bench/perf/offcpu_floor.sh.
 * usage: offcpu_floor_loader [-o OBJ] [-k] [-d|-D] -p PID
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_DEBUG ? 0 : vfprintf(stderr, f, ap);
}

/* cpu_wide: the same records from one event per CPU for every task
 * (pid -1), to be filtered in user space: no event in the task's context */
static void dummy_events(int pid, int cpu_wide)
{
	struct perf_event_attr a = {0};
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_period = 1;
	a.inherit = 1;
	a.mmap = a.comm = a.task = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < ncpu; c++) {
		a.inherit = !cpu_wide;
		int fd = (int)syscall(SYS_perf_event_open, &a, cpu_wide ? -1 : pid,
				      (int)c, -1, 0);
		if (fd < 0 || mmap(NULL, 65 * 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0) == MAP_FAILED)
			perror("ring event");
	}
	char d[64];
	snprintf(d, sizeof(d), "/proc/%d/task", pid);
	DIR *dd = cpu_wide ? NULL : opendir(d);
	struct dirent *e;
	a.mmap = a.comm = a.task = 0;
	while (dd && (e = readdir(dd)))
		if (e->d_name[0] != '.' &&
		    syscall(SYS_perf_event_open, &a, atoi(e->d_name), -1, -1, 0) < 0)
			perror("thread event");
	if (dd)
		closedir(dd);
}

int main(int argc, char **argv)
{
	const char *obj = NULL;
	int pid = 0, dummy = 0, nok = 0, opt;
	while ((opt = getopt(argc, argv, "o:p:dDk")) != -1) {
		if (opt == 'o')
			obj = optarg;
		else if (opt == 'p')
			pid = atoi(optarg);
		else if (opt == 'd')
			dummy = 1;
		else if (opt == 'D')
			dummy = 2;
		else if (opt == 'k')
			nok = 1;
	}
	if (!pid)
		return 2;
	libbpf_set_print(quiet);
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0) {
		perror("pidfd_open");
		return 1;
	}
	struct bpf_object *o = NULL;
	if (obj) {
		if (bpf_enable_stats(BPF_STATS_RUN_TIME) < 0)
			perror("BPF_ENABLE_STATS");
		o = bpf_object__open_file(obj, NULL);
		if (!o || bpf_object__load(o)) {
			fprintf(stderr, "loading %s: %s\n", obj, strerror(errno));
			return 1;
		}
		struct bpf_map *m = bpf_object__find_map_by_name(o, "conf");
		unsigned k = 0;
		unsigned long long conf[2] = {nok ? 2 : 0, 4096}; /* flags, min_addr */
		if (m)
			bpf_map_update_elem(bpf_map__fd(m), &k, conf, 0);
		m = bpf_object__find_map_by_name(o, "pids");
		unsigned t = (unsigned)pid, on = 1;
		if (m)
			bpf_map_update_elem(bpf_map__fd(m), &t, &on, 0);
		struct bpf_program *p;
		bpf_object__for_each_program(p, o)
			if (!bpf_program__attach(p)) {
				fprintf(stderr, "attach %s: %s\n",
					bpf_program__name(p), strerror(errno));
				return 1;
			}
	}
	if (dummy)
		dummy_events(pid, dummy == 2);
	fprintf(stderr, "ready\n");
	struct pollfd pf = {pfd, POLLIN, 0};
	poll(&pf, 1, -1);
	if (!o)
		return 0;
	unsigned long long ns = 0, outs = 0, v[1024];
	struct bpf_program *p;
	bpf_object__for_each_program(p, o) {
		struct bpf_prog_info i = {0};
		__u32 l = sizeof(i);
		if (!bpf_prog_get_info_by_fd(bpf_program__fd(p), &i, &l))
			ns += i.run_time_ns;
	}
	struct bpf_map *m = bpf_object__find_map_by_name(o, "stats");
	int ncpu = libbpf_num_possible_cpus();
	unsigned k = 0; /* slot 0: the switch-outs of the target, in both */
	if (m && ncpu > 0 && ncpu <= 1024 && !bpf_map_lookup_elem(bpf_map__fd(m), &k, v))
		for (int c = 0; c < ncpu; c++)
			outs += v[c];
	printf("%llu %llu\n", outs, outs ? ns / outs : 0);
	return 0;
}
