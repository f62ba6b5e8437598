/* SPDX-License-Identifier: MIT */
/* perf_list.c - 'rtdiag perf list': counters, PMUs, probes, tracepoints. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tracefs/tracefs.h>
#include <unistd.h>

#include "cli.h"
#include "perf_cli.h"

static const char *pattern;

static bool match(const char *name)
{
	if (!pattern)
		return true;
	if (strpbrk(pattern, "*?["))
		return fnmatch(pattern, name, 0) == 0;
	return strstr(name, pattern) != NULL;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted subdirectory names of dir. */
static char **subdirs(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	*n = 0;
	if (!d)
		return NULL;
	char **v = NULL;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_LNK &&
		    de->d_type != DT_UNKNOWN)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), cmpstr);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

const struct cli_cmd perf_cmd_list = {
	"perf list", "[PATTERN]",
	"List counters, PMUs, probe support and tracepoints.\n"
	"Tracepoints as SUBSYS:EVENT; with PATTERN (a glob, or a substring)\n"
	"only those matching.",
	NULL, 0, 1, 0, perf_list_main,
	"Tracepoints are read from tracefs, which is root's only unless mounted\n"
	"with mode=755: as another user, rtdiag says why none are listed.\n",
};

int perf_list_main(int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &perf_cmd_list, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0)
		;
	if (id < 0)
		return cli_opt_exit(id);
	pattern = ps.npos ? ps.pos[0] : NULL;
	const char *pmus = "/sys/bus/event_source/devices";
	char path[4096];
	snprintf(path, sizeof(path), "%s/cpu", pmus);
	bool hw = access(path, F_OK) == 0;
	for (const char *const *n = rtd_perf_counter_names(); *n; n++) {
		bool is_hw = !strcmp(*n, "cycles") || !strcmp(*n, "cpu-cycles") ||
			     !strcmp(*n, "instructions") || strstr(*n, "cache-") ||
			     strstr(*n, "branch") || strstr(*n, "cycles");
		if (match(*n))
			printf("  %-44s [%s event%s]\n", *n,
			       is_hw ? "Hardware" : "Software",
			       is_hw && !hw ? ", no CPU PMU here" : "");
	}
	size_t np;
	char **pm = subdirs(pmus, &np);
	for (size_t i = 0; i < np; i++) {
		char name[300];
		snprintf(name, sizeof(name), "%s//", pm[i]);
		if (match(name))
			printf("  %-44s [Kernel PMU: %s/config=N/]\n", name, pm[i]);
	}
	free_list(pm, np);
	const char *tdir = tracefs_tracing_dir();
	char f[4096];
	snprintf(f, sizeof(f), "%s/uprobe_events", tdir ? tdir : "");
	/* the file existing but not writable is a permission, not a kernel,
	 * matter: say which */
	bool up = tdir && access(f, W_OK) == 0;
	bool up_perm = tdir && !up && (errno == EACCES || errno == EPERM);
	snprintf(path, sizeof(path), "%s/uprobe", pmus);
	bool up_pmu = access(path, F_OK) == 0;
	snprintf(f, sizeof(f), "%s/kprobe_events", tdir ? tdir : "");
	bool kp = tdir && access(f, W_OK) == 0;
	bool kp_perm = tdir && !kp && (errno == EACCES || errno == EPERM);
	if (match("uprobe"))
		printf("  %-44s [Probe: %s]\n", "uprobe (BINARY:SYMBOL)",
		       up ? "tracefs and PMU"
		       : up_perm ? "needs root: tracefs is not writable by this user"
		       : up_pmu ? "PMU only (no tracefs uprobe_events)"
				: "not supported here");
	if (match("kprobe"))
		printf("  %-44s [Probe: %s]\n", "kprobe (SYMBOL)",
		       kp ? "supported"
		       : kp_perm ? "needs root: tracefs is not writable by this user"
				 : "not supported by this kernel");
	if (!tdir) {
		fprintf(stderr, "rtdiag: tracefs is not mounted and cannot be "
				"(mount -t tracefs nodev /sys/kernel/tracing): "
				"no tracepoints listed\n");
		return CLI_OK;
	}
	snprintf(path, sizeof(path), "%s/events", tdir);
	if (access(path, R_OK | X_OK) != 0) {
		int e = errno;
		fprintf(stderr, "rtdiag: no tracepoints listed: %s: %s%s\n", path,
			strerror(e),
			e == EACCES || e == EPERM
				? " (tracefs is root's only: run as root, or "
				  "'mount -o remount,mode=755 /sys/kernel/tracing')"
				: "");
		return CLI_OK;
	}
	size_t ns;
	char **sys = subdirs(path, &ns);
	for (size_t i = 0; i < ns; i++) {
		char sp[8300];
		snprintf(sp, sizeof(sp), "%s/%s", path, sys[i]);
		size_t ne;
		char **ev = subdirs(sp, &ne);
		for (size_t j = 0; j < ne; j++) {
			char name[600];
			snprintf(name, sizeof(name), "%s:%s", sys[i], ev[j]);
			if (match(name))
				printf("  %-44s [Tracepoint event]\n", name);
		}
		free_list(ev, ne);
	}
	free_list(sys, ns);
	return CLI_OK;
}
