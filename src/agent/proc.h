/* SPDX-License-Identifier: MIT */
/*
 * proc.h - what the agent reads about a process from procfs: identity
 * (pid + start time, so a reused pid is a new process), names, cgroup,
 * CPU time and memory; and which processes a target spec selects.
 */
#ifndef RTD_AGENT_PROC_H
#define RTD_AGENT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/config.h"

#define PROC_NAME_MAX 256
#define PROC_CGROUP_MAX 1024

/*
 * struct proc_stat - one read of /proc/PID/stat and statm
 * @start_ticks: start time after boot, in clock ticks (field 22)
 * @utime_ticks, @stime_ticks: CPU time in clock ticks
 * @threads: number of threads
 * @rss_bytes: resident memory
 * @vsize_bytes: virtual memory
 */
struct proc_stat {
	uint64_t start_ticks;
	uint64_t utime_ticks, stime_ticks;
	uint64_t threads;
	uint64_t rss_bytes;
	uint64_t vsize_bytes;
};

/*
 * struct proc_info - names of a process
 * @comm: its name (up to 15 characters)
 * @exe: the executable's path ("" when unreadable; " (deleted)" dropped)
 * @arg0: basename of argv[0]
 * @arg1: argv[1] ("" when none)
 * @cgroup: its cgroup v2 path (or v1 path of the first hierarchy)
 */
struct proc_info {
	char comm[32];
	char exe[PROC_NAME_MAX];
	char arg0[PROC_NAME_MAX];
	char arg1[PROC_NAME_MAX];
	char cgroup[PROC_CGROUP_MAX];
};

/* Parse the text of /proc/PID/stat. Returns 0 or -RTD_E_FORMAT. */
int proc_stat_parse(const char *text, struct proc_stat *st);
/* Read /proc/PID/stat (and statm). Returns 0, -ENOENT (gone) or an error. */
int proc_stat_read(const char *proc_dir, pid_t pid, struct proc_stat *st);
/* Read every name; missing ones stay "". Returns 0 or -ENOENT. */
int proc_info_read(const char *proc_dir, pid_t pid, struct proc_info *pi);

/* Does a name= spec match this process? */
bool proc_name_match(const struct agent_spec *sp, const struct proc_info *pi);
/* Does a cgroup= spec select this cgroup path (equal or below)? */
bool proc_cgroup_match(const char *spec_path, const char *cgroup);
/* The process's service name when the spec gives none: the app's .dll for
 * "dotnet app.dll", else the executable's name, else comm; characters
 * outside [A-Za-z0-9_.-] become '_'. */
void proc_service_name(const struct proc_info *pi, char *out, size_t len);

/* Clock ticks per second (sysconf). */
long proc_clk_tck(void);
/* The system's boot time, seconds since the epoch (btime in /proc/stat). */
uint64_t proc_boot_time(const char *proc_dir);

#endif /* RTD_AGENT_PROC_H */
