/* SPDX-License-Identifier: MIT */
/*
 * sysfs.c - what the system says about itself: online CPUs, mounts, PMUs.
 *
 * CPUs come from /sys/devices/system/cpu/online ("0-3,6,8-9": offline CPUs
 * leave gaps), never from /proc/cpuinfo. Mounts come from
 * /proc/self/mountinfo, never from fixed paths.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/internal.h"

int perf_parse_cpulist(const char *s, int *cpus, unsigned max, unsigned *n)
{
	*n = 0;
	const char *p = s;
	while (*p && *p != '\n') {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -RTD_E_FORMAT;
		unsigned long a = strtoul(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -RTD_E_FORMAT;
			b = strtoul(p, &end, 10);
			p = end;
		}
		if (b < a || b >= PERF_MAX_CPUS)
			return -RTD_E_FORMAT;
		for (unsigned long c = a; c <= b; c++) {
			if (*n >= max)
				return -RTD_E_CAP;
			if (*n && cpus[*n - 1] >= (int)c)
				return -RTD_E_FORMAT; /* must ascend */
			cpus[(*n)++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -RTD_E_FORMAT;
	}
	return *n ? 0 : -RTD_E_FORMAT;
}

int perf_online_cpus(int **cpus, unsigned *n)
{
	char buf[4096];
	int r = rtd_read_small("/sys/devices/system/cpu/online", buf,
			       sizeof(buf));
	if (r < 0)
		return r;
	int *c = malloc(sizeof(int) * PERF_MAX_CPUS);
	if (!c)
		return -ENOMEM;
	r = perf_parse_cpulist(buf, c, PERF_MAX_CPUS, n);
	if (r < 0) {
		free(c);
		return r;
	}
	*cpus = c;
	return 0;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

/*
 * perf_find_mount - the mount point of the first fstype mount (with a
 * super option when option is not NULL, e.g. "perf_event" for cgroup v1)
 * in a mountinfo text. A line is "id parent maj:min root mountpoint opts
 * [optional...] - type source superopts" (proc(5)).
 */
int perf_find_mount(const char *mountinfo, const char *fstype,
		    const char *option, char *out, size_t outlen)
{
	const char *line = mountinfo;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char tmp[4096], *tok[64];
		int nt = 0, dash = -1;
		if (len < sizeof(tmp)) {
			memcpy(tmp, line, len);
			tmp[len] = 0;
			char *save = NULL;
			for (char *t = strtok_r(tmp, " ", &save); t && nt < 64;
			     t = strtok_r(NULL, " ", &save)) {
				if (dash < 0 && !strcmp(t, "-") && nt >= 6)
					dash = nt;
				tok[nt++] = t;
			}
		}
		if (dash > 0 && dash + 3 < nt && !strcmp(tok[dash + 1], fstype)) {
			bool ok = !option;
			char *save = NULL;
			for (char *o = strtok_r(tok[dash + 3], ",", &save);
			     o && !ok; o = strtok_r(NULL, ",", &save))
				ok = !strcmp(o, option);
			if (ok) {
				unescape(tok[4]);
				if (strlen(tok[4]) >= outlen)
					return -RTD_E_CAP;
				strcpy(out, tok[4]);
				return 0;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -RTD_E_NOTFOUND;
}

int perf_pmu_type(const char *pmu_dir, const char *pmu, uint32_t *type)
{
	char path[PATH_MAX], buf[64];
	snprintf(path, sizeof(path), "%s/%s/type", pmu_dir, pmu);
	int r = rtd_read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? -RTD_E_PERF_NOTSUPP : r;
	char *end;
	unsigned long v = strtoul(buf, &end, 10);
	if (end == buf || v > UINT32_MAX)
		return -RTD_E_FORMAT;
	*type = (uint32_t)v;
	return 0;
}

/* A one-bit format such as "config:0" (uprobe/kprobe "retprobe"). */
int perf_pmu_format_bit(const char *pmu_dir, const char *pmu,
			const char *name, unsigned *bit)
{
	char path[PATH_MAX], buf[64];
	snprintf(path, sizeof(path), "%s/%s/format/%s", pmu_dir, pmu, name);
	int r = rtd_read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? -RTD_E_PERF_NOTSUPP : r;
	unsigned b;
	if (sscanf(buf, "config:%u", &b) != 1 || b > 63)
		return -RTD_E_FORMAT;
	*bit = b;
	return 0;
}
