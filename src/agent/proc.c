/* SPDX-License-Identifier: MIT */
/*
 * proc.c - procfs reads for the agent (proc(5)), the container ids a
 * cgroup path holds, and the matching of name= and cgroup= specs.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/proc.h"
#include "common/file.h"

long proc_clk_tck(void)
{
	static long tck;
	if (!tck) {
		long t = sysconf(_SC_CLK_TCK);
		tck = t > 0 ? t : 100;
	}
	return tck;
}

static void proc_stat_of(const struct rtd_pstat *ps, struct proc_stat *st)
{
	st->utime_ticks = ps->utime_ticks;
	st->stime_ticks = ps->stime_ticks;
	st->threads = ps->threads;
	st->start_ticks = ps->start_ticks;
	st->vsize_bytes = ps->vsize_bytes;
	st->rss_bytes = ps->rss_pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

int proc_stat_parse(const char *text, struct proc_stat *st)
{
	struct rtd_pstat ps;
	int rc = rtd_pstat_parse(text, &ps);
	if (!rc)
		proc_stat_of(&ps, st);
	return rc;
}

int proc_stat_read(const char *proc_dir, pid_t pid, struct proc_stat *st)
{
	struct rtd_pstat ps;
	int rc = rtd_pstat_read(proc_dir, (int)pid, 0, &ps);
	if (!rc)
		proc_stat_of(&ps, st);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int proc_info_read(const char *proc_dir, pid_t pid, struct proc_info *pi)
{
	char buf[4096];
	memset(pi, 0, sizeof(*pi));
	ssize_t n = rtd_proc_comm_at(proc_dir, (int)pid, 0, pi->comm, sizeof(pi->comm));
	if (n < 0)
		return n == -ESRCH ? -ENOENT : (int)n;

	rtd_proc_exe(proc_dir, pid, pi->exe, sizeof(pi->exe));
	char *del = strstr(pi->exe, " (deleted)");
	if (del && del[10] == 0)
		*del = 0;

	n = rtd_proc_cmdline(proc_dir, pid, buf, sizeof(buf));
	if (n > 0) {
		/* NUL-separated arguments */
		snprintf(pi->arg0, sizeof(pi->arg0), "%.255s", base_name(buf));
		size_t l0 = strlen(buf);
		if ((ssize_t)l0 + 1 < n)
			snprintf(pi->arg1, sizeof(pi->arg1), "%s", buf + l0 + 1);
	}

	rtd_proc_cgroup(proc_dir, pid, pi->cgroup, sizeof(pi->cgroup));
	return 0;
}

/* "dotnet app.dll": the app's name; else "" */
static void dotnet_app(const struct proc_info *pi, char *out, size_t len)
{
	out[0] = 0;
	const char *exe = base_name(pi->exe[0] ? pi->exe : pi->arg0);
	if (strcmp(exe, "dotnet") || !pi->arg1[0])
		return;
	const char *b = base_name(pi->arg1);
	size_t n = strlen(b);
	if (n > 4 && !strcasecmp(b + n - 4, ".dll"))
		n -= 4;
	else
		return; /* "dotnet run", "dotnet build": not an app */
	if (n >= len)
		n = len - 1;
	memcpy(out, b, n);
	out[n] = 0;
}

bool proc_name_match(const struct agent_spec *sp, const struct proc_info *pi)
{
	char app[PROC_NAME_MAX];
	if (!sp->has_re)
		return false;
	if (pi->comm[0] && !regexec(&sp->re, pi->comm, 0, NULL, 0))
		return true;
	if (pi->exe[0] && !regexec(&sp->re, base_name(pi->exe), 0, NULL, 0))
		return true;
	dotnet_app(pi, app, sizeof(app));
	if (app[0] && !regexec(&sp->re, app, 0, NULL, 0))
		return true;
	return false;
}

bool proc_cgroup_match(const char *spec_path, const char *cgroup)
{
	size_t n = strlen(spec_path);
	if (n == 1 && spec_path[0] == '/')
		return cgroup[0] == '/';
	return !strncmp(cgroup, spec_path, n) &&
	       (cgroup[n] == 0 || cgroup[n] == '/');
}

void proc_service_name(const struct proc_info *pi, char *out, size_t len)
{
	char app[PROC_NAME_MAX];
	dotnet_app(pi, app, sizeof(app));
	const char *src = app[0]    ? app
			  : pi->exe[0] ? base_name(pi->exe)
			  : pi->comm[0] ? pi->comm
					: "unknown";
	size_t i = 0;
	for (; src[i] && i + 1 < len && i < 128; i++) {
		char ch = src[i];
		out[i] = (isalnum((unsigned char)ch) || ch == '_' || ch == '.' ||
			  ch == '-')
				 ? ch
				 : '_';
	}
	out[i] = 0;
	if (!i && len > 1)
		snprintf(out, len, "unknown");
}

uint64_t proc_boot_time(const char *proc_dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/stat", proc_dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[256];
	uint64_t bt = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "btime %llu", &v) == 1) {
			bt = v;
			break;
		}
	}
	fclose(f);
	return bt;
}

/* ---- container ids --------------------------------------------------------- */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A pod uid at s: 8-4-4-4-12 hex digits with '-' or '_' between. */
static bool pod_uid_at(const char *s, size_t avail, char *out)
{
	static const int dash[] = {8, 13, 18, 23};
	if (avail < 36)
		return false;
	for (size_t i = 0, d = 0; i < 36; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-' && s[i] != '_')
				return false;
			out[i] = '-';
			d++;
		} else {
			if (!isxdigit((unsigned char)s[i]))
				return false;
			out[i] = (char)tolower((unsigned char)s[i]);
		}
	}
	if (avail > 36 && (isxdigit((unsigned char)s[36]) || s[36] == '-'))
		return false;
	out[36] = 0;
	return true;
}

RTD_API void rtd_agent_cgroup_parse(const char *path,
				    struct rtd_agent_cgroup_ids *out)
{
	memset(out, 0, sizeof(*out));
	if (!path)
		return;
	/* look at each component; the innermost id wins */
	for (const char *c = path; *c;) {
		while (*c == '/')
			c++;
		const char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);
		/* a container id: a run of exactly 64 lowercase hex digits
		 * ("docker-<id>.scope", "cri-containerd-<id>.scope",
		 * "crio-<id>.scope", "libpod-<id>.scope", "<id>") */
		for (size_t i = 0; i + 64 <= n; i++) {
			if ((i == 0 || !isxdigit((unsigned char)c[i - 1])) &&
			    is_hex(c + i, 64) &&
			    (i + 64 == n || !isxdigit((unsigned char)c[i + 64]))) {
				memcpy(out->container_id, c + i, 64);
				out->container_id[64] = 0;
				break;
			}
		}
		/* a pod: "pod<uid>" or "kubepods-...-pod<uid>.slice" */
		for (const char *p = c; p + 3 <= c + n; p++) {
			if (strncmp(p, "pod", 3))
				continue;
			char uid[40];
			if (pod_uid_at(p + 3, (size_t)(c + n - p - 3), uid)) {
				memcpy(out->pod_uid, uid, 37);
				break;
			}
		}
		c += n;
	}
}
