/* SPDX-License-Identifier: MIT */
/*
 * proc.c - the CPU time of each thread of a process, as the kernel counts
 * it (rtdiag/common.h): /proc/PID/task/TID/schedstat's first field, the
 * nanoseconds the thread has run (sum_exec_runtime, what perf's
 * task-clock counts), or utime + stime of .../stat in clock ticks when
 * the kernel has no schedstat. And rtdiag's one reader of /proc/PID/stat
 * (rtd_pstat_*), of /proc/PID/status (rtd_proc_status_num(), and a
 * process's pid in its own namespace), of its environment, its
 * executable and its arguments (rtd_proc_env(), rtd_proc_tmpdir()), its
 * command name and cgroup under a procfs root (rtd_proc_comm_at(),
 * rtd_proc_cgroup()), and the one place paths through its root and to its
 * mappings' files are built (rtd_proc_root_path(), rtd_proc_open_in_root(),
 * rtd_proc_map_file_open()). Its mappings: maps.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/textrd.h"
#include "rtdiag/common.h"

RTD_API int rtd_pstat_parse(const char *text, struct rtd_pstat *out)
{
	if (!text || !out)
		return -RTD_E_INVAL;
	/* "pid (comm) S ppid ...": comm may hold ')' and blanks; the last
	 * ')' ends it */
	const char *p = strrchr(text, ')');
	if (!p)
		return -RTD_E_FORMAT;
	p++;
	unsigned long long f[24] = {0};
	char state = 0;
	/* fields 3.. : the state is a letter, then numbers */
	int field = 3;
	while (*p && field <= 24) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (field == 3) {
			state = *p++;
		} else {
			char *e;
			long long v = strtoll(p, &e, 10);
			if (e == p)
				return -RTD_E_FORMAT;
			f[field - 1] = (unsigned long long)v;
			p = e;
		}
		field++;
	}
	if (field <= 24)
		return -RTD_E_FORMAT;
	*out = (struct rtd_pstat){
		.state = state,
		.ppid = (int)f[3],
		.utime_ticks = f[13],
		.stime_ticks = f[14],
		.threads = f[19],
		.start_ticks = f[21],
		.vsize_bytes = f[22],
		.rss_pages = f[23],
	};
	return 0;
}

RTD_API int rtd_pstat_read(const char *proc_dir, int pid, int tid, struct rtd_pstat *out)
{
	if (pid <= 0 || tid < 0 || !out)
		return -RTD_E_INVAL;
	char path[320], buf[1024];
	if (!proc_dir)
		proc_dir = "/proc";
	if (tid)
		snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc_dir, pid, tid);
	else
		snprintf(path, sizeof(path), "%s/%d/stat", proc_dir, pid);
	int n = rtd_read_small(path, buf, sizeof(buf));
	if (n == 0)
		return -RTD_E_FORMAT;
	if (n < 0)
		return n == -ESRCH ? -ENOENT : n;
	return rtd_pstat_parse(buf, out);
}

/* One thread's CPU time in ns; false when it cannot be read (gone). */
static bool thread_ns(int pid, long tid, uint64_t *ns)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/schedstat", pid, tid);
	if (rtd_read_small(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%" SCNu64, ns) == 1)
		return true;
	struct rtd_pstat st;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || rtd_pstat_read(NULL, pid, (int)tid, &st))
		return false;
	*ns = (st.utime_ticks + st.stime_ticks) * (1000000000ull / (uint64_t)hz);
	return true;
}

int rtd_proc_tasks(int pid, int (*fn)(int tid, void *ctx), void *ctx)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *e;
	int rc = 0, n = 0;
	while (!rc && (e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid > INT_MAX)
			continue; /* "." and ".." */
		rc = fn((int)tid, ctx);
		n++;
	}
	closedir(d);
	return rc ? rc : n;
}

struct thread_cpu_acc {
	int pid;
	struct rtd_thread_cpu *v;
	size_t n, cap;
};

static int thread_cpu_one(int tid, void *ctx)
{
	struct thread_cpu_acc *a = ctx;
	uint64_t ns;
	if (!thread_ns(a->pid, tid, &ns))
		return 0; /* a thread that just ended */
	if (a->n == RTD_THREAD_CPU_MAX)
		return -RTD_E_CAP;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		struct rtd_thread_cpu *nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = nc;
	}
	a->v[a->n++] = (struct rtd_thread_cpu){.tid = tid, .ns = ns};
	return 0;
}

int rtd_thread_cpu_read(int pid, struct rtd_thread_cpu **out, size_t *n)
{
	if (!out || !n || pid <= 0)
		return -RTD_E_INVAL;
	*out = NULL;
	*n = 0;
	struct thread_cpu_acc a = {.pid = pid};
	int rc = rtd_proc_tasks(pid, thread_cpu_one, &a);
	if (rc < 0) {
		free(a.v);
		return rc;
	}
	*out = a.v;
	*n = a.n;
	return 0;
}

/*
 * The value of the first entry "NAME<eq>value" of a file of entries ended
 * by @sep (/proc/PID/environ: NUL and '='; /proc/PID/status: '\n' and
 * ':'), into @out (cut to @len - 1 bytes), read a piece at a time: neither
 * file has a bound (a Groups line of thousands of groups puts status's
 * NSpid past 4 KB; an environment can be megabytes).
 * Returns the value's whole length, -ENOENT (no such entry) or -errno.
 */
static int entry_value(const char *path, const char *name, char sep, char eq, char *out,
		       size_t len)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t nl = strlen(name), at = 0, vl = 0;
	bool skip = false, found = false;
	int err = -ENOENT;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				err = -errno;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			if (found) {
				if (c == sep)
					goto done;
				if (vl + 1 < len)
					out[vl] = c;
				vl++;
			} else if (c == sep) {
				at = 0; /* the next entry */
				skip = false;
			} else if (skip) {
				continue;
			} else if (at < nl) {
				skip = c != name[at++];
			} else {
				skip = c != eq;
				found = !skip;
			}
		}
	}
done:
	close(fd);
	if (!found)
		return err;
	out[vl < len ? vl : len - 1] = 0;
	return vl > INT_MAX ? INT_MAX : (int)vl;
}

/* A field of /proc/PID/status ("Tgid:\t4242"): as entry_value(). */
static int status_value(pid_t pid, const char *field, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return entry_value(path, field, '\n', ':', out, len);
}

pid_t rtd_proc_ns_pid(pid_t pid)
{
	char v[256];
	if (status_value(pid, "NSpid", v, sizeof(v)) < 0)
		return pid;
	/* "NSpid:\t4242\t17\t1": the pid in each namespace, outermost first */
	pid_t last = pid;
	for (const char *p = v; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		char *e;
		last = (pid_t)strtol(p, &e, 10);
		p = e;
	}
	return last;
}

/* The pick as lines come: the first v1 hierarchy's path kept until v2's
 * line (which ends it) */
struct cg_pick {
	char *out;
	size_t len;
	bool have;
};

static void cg_copy(struct cg_pick *c, const char *path, size_t n)
{
	if (n >= c->len)
		n = c->len - 1;
	memcpy(c->out, path, n);
	c->out[n] = 0;
	c->have = true;
}

/* One line "ID:controllers:path"; cgroup v2's is "0::path": 1 there. */
static int cg_line(const char *l, size_t n, size_t lineno, void *ctx)
{
	(void)lineno;
	struct cg_pick *c = ctx;
	const char *end = l + n;
	const char *c1 = memchr(l, ':', n);
	const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	if (!c2)
		return 0;
	const char *path = c2 + 1;
	if (c1 - l == 1 && l[0] == '0' && c2 == c1 + 1) {
		cg_copy(c, path, (size_t)(end - path));
		return 1;
	}
	if (!c->have)
		cg_copy(c, path, (size_t)(end - path));
	return 0;
}

static int cg_piece(const char *buf, size_t len, void *ctx, size_t *lineno)
{
	return each_line(buf, len, lineno, cg_line, ctx);
}

void rtd_proc_cgroup_pick(const char *text, char *out, size_t len)
{
	struct cg_pick c = {out, len, false};
	size_t lineno = 0;
	out[0] = 0;
	(void)each_line(text, strlen(text), &lineno, cg_line, &c);
}

/* The longest line taken: a path of PATH_MAX and its controllers */
#define CGROUP_LINE_MAX (PATH_MAX + 512)

int rtd_proc_cgroup(const char *proc_dir, pid_t pid, char *out, size_t len)
{
	char path[PATH_MAX];
	if (!len)
		return -RTD_E_INVAL;
	out[0] = 0;
	int l = snprintf(path, sizeof(path), "%s/%d/cgroup", proc_dir ? proc_dir : "/proc",
			 (int)pid);
	if (l < 0 || (size_t)l >= sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a line at a time: a hybrid layout's v2 line comes last, after as
	 * many v1 hierarchies as there are, whatever their paths' length */
	struct cg_pick c = {out, len, false};
	size_t bad = 0;
	int rc = rtd_lines_read_fd(fd, CGROUP_LINE_MAX, cg_piece, &c, &bad);
	close(fd);
	return rc < 0 ? rc : 0;
}

int rtd_proc_root_path(char *out, size_t n, pid_t pid, const char *fmt, ...)
{
	int l = snprintf(out, n, "/proc/%d/root", (int)pid);
	if (l < 0 || (size_t)l >= n) {
		if (n)
			out[0] = 0;
		return -ENAMETOOLONG;
	}
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(out + l, n - (size_t)l, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= n - (size_t)l) {
		out[0] = 0;
		return -ENAMETOOLONG;
	}
	return 0;
}

int rtd_proc_open_in_root(pid_t pid, const char *path)
{
	char full[PATH_MAX + 64];
	if (pid > 0 && !rtd_proc_root_path(full, sizeof(full), pid, "%s", path)) {
		int fd = open(full, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || errno == EMFILE)
			return fd;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

int rtd_proc_map_file_open(pid_t pid, uint64_t start, uint64_t end)
{
	char mf[96];
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start,
		 end); /* fits: 10 + 16 + 16 digits */
	return open(mf, O_RDONLY | O_CLOEXEC);
}

int rtd_proc_comm(int pid, int tid, char *out, size_t len)
{
	return rtd_proc_comm_at(NULL, pid, tid, out, len);
}

int rtd_proc_comm_at(const char *proc_dir, int pid, int tid, char *out, size_t len)
{
	char path[PATH_MAX];
	int l;
	if (!proc_dir)
		proc_dir = "/proc";
	if (tid)
		l = snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc_dir, pid, tid);
	else
		l = snprintf(path, sizeof(path), "%s/%d/comm", proc_dir, pid);
	if (l < 0 || (size_t)l >= sizeof(path))
		return -ENAMETOOLONG;
	int n = rtd_read_small(path, out, len);
	if (n >= 0)
		out[strcspn(out, "\n")] = 0;
	return n;
}

/*
 * One pass over /proc/PID/environ's "NAME=value\0" entries, a chunk at a
 * time (an environment may be megabytes: no entry needs to fit a buffer).
 */
int rtd_proc_env(pid_t pid, const char *name, char *out, size_t len)
{
	if (pid <= 0 || !name || !*name || !out || !len)
		return -RTD_E_INVAL;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	return entry_value(path, name, '\0', '=', out, len);
}

int rtd_proc_tmpdir(pid_t pid, char *out, size_t len)
{
	if (!out || len < sizeof("/tmp"))
		return -RTD_E_INVAL;
	int n = rtd_proc_env(pid, "TMPDIR", out, len);
	/* empty is none (GetTempPathA); a relative one is left for now: it
	 * would name a directory under the target's working directory */
	if (n <= 0 || (size_t)n >= len || out[0] != '/') {
		snprintf(out, len, "/tmp");
		return n < 0 && n != -ENOENT ? n : 0;
	}
	while (n > 1 && out[n - 1] == '/')
		out[--n] = 0;
	return 0;
}

long long rtd_proc_status_num(pid_t pid, const char *field)
{
	char v[64];
	if (pid <= 0 || !field || !*field)
		return -RTD_E_INVAL;
	int rc = status_value(pid, field, v, sizeof(v));
	if (rc < 0)
		return rc;
	char *e;
	long long n = strtoll(v, &e, 10);
	return e == v || n < 0 ? -RTD_E_FORMAT : n;
}

int rtd_proc_exe(const char *proc_dir, pid_t pid, char *out, size_t len)
{
	char path[320];
	if (!out || !len)
		return -RTD_E_INVAL;
	out[0] = 0;
	snprintf(path, sizeof(path), "%s/%d/exe", proc_dir ? proc_dir : "/proc", (int)pid);
	ssize_t n = readlink(path, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = 0;
	return (int)n;
}

int rtd_proc_cmdline(const char *proc_dir, pid_t pid, char *buf, size_t len)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_dir ? proc_dir : "/proc", (int)pid);
	return rtd_read_small(path, buf, len);
}
