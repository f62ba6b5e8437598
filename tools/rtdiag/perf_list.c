/* SPDX-License-Identifier: MIT */
/* perf_list.c - 'rtdiag perf list': counters, PMUs, probes, tracepoints. */
#include <dirent.h>
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

int perf_list_main(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		cli_group_perf.help(stdout, "list");
		return CLI_OK;
	}
	if (argc > 2)
		return cli_usage("perf list", "at most one PATTERN");
	pattern = argc > 1 ? argv[1] : NULL;
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
	bool up = tdir && access(f, W_OK) == 0;
	snprintf(f, sizeof(f), "%s/kprobe_events", tdir ? tdir : "");
	bool kp = tdir && access(f, W_OK) == 0;
	if (match("uprobe"))
		printf("  %-44s [Probe: %s]\n", "uprobe (BINARY:SYMBOL)",
		       up ? "tracefs and PMU" : "not supported here");
	if (match("kprobe"))
		printf("  %-44s [Probe: %s]\n", "kprobe (SYMBOL)",
		       kp ? "supported" : "not supported by this kernel");
	if (!tdir) {
		fprintf(stderr, "rtdiag: tracefs is not mounted and cannot be "
				"(mount -t tracefs nodev /sys/kernel/tracing): "
				"no tracepoints listed\n");
		return CLI_OK;
	}
	snprintf(path, sizeof(path), "%s/events", tdir);
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
