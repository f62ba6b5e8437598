/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the undo actions the guardian (guard.c) runs, each kept in the
 * module that makes the change. Both run in this process (rtd_guard_undo)
 * or in the guardian after this process has ended.
 */
#ifndef RTD_COMMON_GUARD_H
#define RTD_COMMON_GUARD_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* the perf map files rtdiag caused, in rtd_guard_perfmap()'s folder */
#define GUARD_MAP_FILE 1u  /* perf-NSPID.map */
#define GUARD_INFO_FILE 2u /* perfinfo-NSPID.map */

/* perfinfo-NSPID.map, beside the map perf-NSPID.map (@map) */
static inline void guard_info_name(const char *map, char *out, size_t n)
{
	snprintf(out, n, "perfinfo-%.*s", (int)(n > 10 ? n - 10 : 0),
		 strncmp(map, "perf-", 5) ? map : map + 5);
}

/*
 * dotnet_perfmap_undo - DisablePerfMap to @pid if it is still the process
 * that started at @start, then remove the files in @files from @dirfd
 * (@name is perf-NSPID.map; the perfinfo file is named after it) once
 * the map is off or the process is gone. Returns 0 or a negative error.
 * (src/dotnet/ipc_cmd.c)
 */
int dotnet_perfmap_undo(pid_t pid, unsigned long long start, int dirfd,
			const char *name, unsigned files);

/*
 * perf_probe_undo - remove the dynamic event GROUP/EVENT from tracefs.
 * Returns 0 (also when it is not there), -EBUSY while a perf descriptor
 * still uses it, or another negative errno. (src/perf/probe.c)
 */
int perf_probe_undo(const char *tracefs, bool kprobe, const char *group,
		    const char *event);

#endif /* RTD_COMMON_GUARD_H */
