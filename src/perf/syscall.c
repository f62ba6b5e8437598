/* SPDX-License-Identifier: MIT */
/*
 * syscall.c - system calls as strace and perf trace show them.
 *
 * Events come from raw_syscalls:sys_enter (id, args[6]) and
 * raw_syscalls:sys_exit (id, ret), paired per thread. Names come from
 * libseccomp's resolver (the kernel's own table for this architecture);
 * argument names and C types from the kernel's syscalls:sys_enter_NAME
 * format files (tracefs), read once per system call, and each argument is
 * printed by what it is: file descriptors (AT_FDCWD as CWD), open/mmap
 * flags and protections by name, modes in octal, pointers in hex, and
 * path-like strings read at the call's entry by a BPF program where the
 * process may load one (sysstr_bpf.c: as strace reads them), else (and
 * for a string on a page the process had not touched yet) from the
 * process (process_vm_readv) when the enter event is handled: a best
 * effort, since the process has run on by then (a string it changed or
 * freed in between reads as it is now, or as "?"). Return values of -4095..-1 are errors, shown with their errno
 * name and text (strerrorname_np).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <traceevent/event-parse.h>

#include "common/map.h"
#include "common/optlib_seccomp.h"
#include "perf/internal.h"
#include "perf/sysstr_bpf.h"
#include "rtdiag/perf_syscalls.h"

#define SC_MAX_NR 1024          /* syscall numbers kept in tables */
#define SC_MAX_PENDING 65536    /* threads inside a call at once */
#define SC_STR_MAX 256          /* bytes of a string argument shown */
#define SC_MAX_PROCS 16384      /* processes summarized (-s) */

struct sc_arg {
	char *name;
	char *type;
};

struct sc_info {
	bool loaded;
	char *name;          /* from libseccomp, or NULL */
	unsigned nargs;
	struct sc_arg args[6];
};

struct sc_pending {
	uint32_t pid;
	long nr;
	uint64_t args[6];
	uint64_t ts;
	char strs[6][SC_STR_MAX]; /* strings read at enter */
	bool has_str[6];
};

struct sc_stat {
	uint64_t calls, errors;
	double total, min, max, sumsq; /* ms */
};

struct sc_proc_stats {
	uint32_t pid;
	char comm[16];
	uint64_t events;
	struct sc_stat *by_nr; /* SC_MAX_NR entries */
};

struct rtd_perf_syscalls {
	struct rtd_perf_monitor *m;
	struct rtd_perf_event *enter, *exit;
	struct sc_info info[SC_MAX_NR];
	rtd_map pending;         /* tid -> struct sc_pending */
	rtd_map procs;           /* pid -> struct sc_proc_stats */
	rtd_map comms;           /* tid -> char[16] */
	struct tep_handle *tep;
	uint64_t total_events;
	bool read_strings;
	bool summary;
	struct sysstr_bpf *bpf;  /* strings read at entry, else NULL */
	char str_why[256];       /* why not */
};

static const char *nr_name(struct rtd_perf_syscalls *s, long nr)
{
	if (nr < 0 || nr >= SC_MAX_NR)
		return NULL;
	struct sc_info *i = &s->info[nr];
	if (!i->name && !i->loaded && rtd_optlib_want_seccomp()) {
		i->name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
	}
	return i->name;
}

const char *rtd_perf_syscall_name(struct rtd_perf_syscalls *s, long nr)
{
	return s ? nr_name(s, nr) : NULL;
}

long rtd_perf_syscall_nr(const char *name)
{
	if (!rtd_optlib_want_seccomp())
		return -1;
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name);
	return nr == __NR_SCMP_ERROR || nr < 0 ? -1 : nr;
}

/* Argument names and types from tracefs's syscalls:sys_enter_NAME. */
static void load_info(struct rtd_perf_syscalls *s, long nr)
{
	if (nr < 0 || nr >= SC_MAX_NR)
		return;
	struct sc_info *i = &s->info[nr];
	if (i->loaded)
		return;
	const char *name = nr_name(s, nr);
	i->loaded = true;
	if (!name || !s->m->tracefs[0])
		return;
	char path[PATH_MAX + 128];
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%.64s/format",
		 s->m->tracefs, name);
	char *buf = malloc(PERF_MAX_FORMAT);
	if (!buf)
		return;
	int n = rtd_read_small(path, buf, PERF_MAX_FORMAT);
	struct tep_event *e = NULL;
	if (n > 0 && tep_parse_format(s->tep, &e, buf, (size_t)n, "syscalls") == 0 && e) {
		struct tep_format_field **f = tep_event_fields(e);
		for (unsigned k = 0; f && f[k] && i->nargs < 6; k++) {
			if (!strcmp(f[k]->name, "__syscall_nr"))
				continue;
			i->args[i->nargs].name = strdup(f[k]->name);
			i->args[i->nargs].type = strdup(f[k]->type ? f[k]->type : "");
			i->nargs++;
		}
		free(f);
	}
	free(buf);
}

static bool stringish(const struct sc_arg *a);

/* The BPF program that reads string arguments at entry, for the calls
 * traced (every call when none is named); else the reason in str_why. */
static void strings_bpf(struct rtd_perf_syscalls *s, const char *const *names,
			size_t nnames)
{
	struct rtd_perf_monitor *m = s->m;
	if (m->cgroup_scope) {
		snprintf(s->str_why, sizeof(s->str_why), "cgroups: the BPF "
			 "program follows processes");
		return;
	}
	uint32_t *masks = calloc(SC_MAX_NR, sizeof(*masks));
	if (!masks) {
		snprintf(s->str_why, sizeof(s->str_why), "out of memory");
		return;
	}
	for (long nr = 0; nr < SC_MAX_NR; nr++) {
		bool want = !nnames;
		for (size_t i = 0; i < nnames && !want; i++)
			want = rtd_perf_syscall_nr(names[i]) == nr;
		if (!want || !nr_name(s, nr))
			continue;
		load_info(s, nr);
		for (unsigned k = 0; k < s->info[nr].nargs; k++)
			if (stringish(&s->info[nr].args[k]))
				masks[nr] |= 1u << k;
	}
	sysstr_bpf_new(m->pids, m->opts.npids,
		       m->opts.flags & RTD_PERF_ENABLE_ON_EXEC, masks, SC_MAX_NR,
		       &s->bpf, s->str_why, sizeof(s->str_why));
	free(masks);
}

int rtd_perf_syscalls_new(struct rtd_perf_monitor *m,
			  const char *const *names, size_t nnames,
			  unsigned flags, struct rtd_perf_syscalls **out)
{
	*out = NULL;
	if (!m)
		return -RTD_E_INVAL;
	struct rtd_perf_syscalls *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->m = m;
	s->read_strings = !(flags & RTD_PERF_SYSCALLS_NO_STRINGS);
	s->summary = !!(flags & RTD_PERF_SYSCALLS_SUMMARY);
	rtd_map_init(&s->pending, SC_MAX_PENDING);
	rtd_map_init(&s->procs, 0);
	rtd_map_init(&s->comms, 1u << 20);
	s->tep = tep_alloc();
	if (!s->tep) {
		rtd_perf_syscalls_free(s);
		return -ENOMEM;
	}
	tep_set_long_size(s->tep, sizeof(long));
	/* a kernel filter on the ids asked for: the rest never reaches us */
	char filter[4096] = "";
	size_t fl = 0;
	for (size_t i = 0; i < nnames; i++) {
		long nr = rtd_perf_syscall_nr(names[i]);
		if (nr < 0) {
			rtd_perf_syscalls_free(s);
			return perf_set_err(m, -RTD_E_NOTFOUND,
					    "%s: not a system call of this machine "
					    "(libseccomp knows no such name)",
					    names[i]);
		}
		int w = snprintf(filter + fl, sizeof(filter) - fl, "%sid == %ld",
				 i ? " || " : "", nr);
		if (w < 0 || (size_t)w >= sizeof(filter) - fl) {
			rtd_perf_syscalls_free(s);
			return perf_set_err(m, -RTD_E_CAP,
					    "too many system call names for one filter");
		}
		fl += (size_t)w;
	}
	int r = rtd_perf_monitor_add_tracepoint(m, "raw_syscalls:sys_enter",
						 nnames ? filter : NULL, &s->enter);
	if (!r)
		r = rtd_perf_monitor_add_tracepoint(m, "raw_syscalls:sys_exit",
						     nnames ? filter : NULL, &s->exit);
	if (r) {
		rtd_perf_syscalls_free(s);
		return r;
	}
	if (s->read_strings)
		strings_bpf(s, names, nnames);
	*out = s;
	return 0;
}

bool rtd_perf_syscalls_strings_at_entry(const struct rtd_perf_syscalls *s,
					const char **why)
{
	if (why)
		*why = s ? s->str_why : "";
	return s && s->bpf;
}

void rtd_perf_syscalls_free(struct rtd_perf_syscalls *s)
{
	if (!s)
		return;
	for (int i = 0; i < SC_MAX_NR; i++) {
		free(s->info[i].name);
		for (unsigned k = 0; k < s->info[i].nargs; k++) {
			free(s->info[i].args[k].name);
			free(s->info[i].args[k].type);
		}
	}
	size_t it = 0;
	uint64_t key;
	void *v;
	while (rtd_map_next(&s->pending, &it, &key, &v))
		free(v);
	it = 0;
	while (rtd_map_next(&s->procs, &it, &key, &v)) {
		struct sc_proc_stats *ps = v;
		free(ps->by_nr);
		free(ps);
	}
	it = 0;
	while (rtd_map_next(&s->comms, &it, &key, &v))
		free(v);
	sysstr_bpf_free(s->bpf);
	rtd_map_free(&s->pending);
	rtd_map_free(&s->procs);
	rtd_map_free(&s->comms);
	if (s->tep)
		tep_free(s->tep);
	free(s);
}

static bool stringish(const struct sc_arg *a)
{
	return strstr(a->type, "char *") &&
	       (strstr(a->name, "name") || strstr(a->name, "path") ||
		strstr(a->name, "file") || strstr(a->name, "dir"));
}

static void read_str(uint32_t pid, uint64_t addr, char *out)
{
	struct iovec local = {out, SC_STR_MAX - 1};
	struct iovec remote = {(void *)(uintptr_t)addr, SC_STR_MAX - 1};
	out[0] = 0;
	if (!addr)
		return;
	/* a string near the end of a mapping: try shorter reads */
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	for (size_t want = 64; n < 0 && want >= 8; want /= 2) {
		local.iov_len = remote.iov_len = want;
		n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	}
	if (n <= 0) {
		strcpy(out, "\x01"); /* unreadable */
		return;
	}
	out[n] = 0;
}

/* BPF: the strings the kernel read for this call (at its entry, or at
 * its exit when the page was not in at entry); the rest from the
 * process now, the best effort left. */
static void strings_at_exit(struct rtd_perf_syscalls *s, uint32_t tid,
			    struct sc_pending *p)
{
	unsigned got = 0;
	sysstr_bpf_take(s->bpf, tid, p->nr, p->args, p->strs, &got);
	for (unsigned k = 0; k < 6; k++)
		if (p->has_str[k] && !(got & (1u << k)))
			read_str(p->pid, p->args[k], p->strs[k]);
}

static int u64_field(const struct rtd_perf_sample *smp, const char *name,
		     uint64_t *v, unsigned idx)
{
	struct rtd_perf_value val;
	if (rtd_perf_sample_field(smp, name, &val))
		return -1;
	if (val.kind == RTD_PERF_FIELD_ARRAY) {
		unsigned es = val.elem_size ? val.elem_size : 8;
		if (es != 8 || (size_t)(idx + 1) * 8 > val.len)
			return -1;
		memcpy(v, val.data + idx * 8, 8);
		return 0;
	}
	*v = val.kind == RTD_PERF_FIELD_INT ? (uint64_t)val.i : val.u;
	return 0;
}

static char *comm_of(struct rtd_perf_syscalls *s, uint32_t pid, uint32_t tid,
		     const char *set);

static struct sc_proc_stats *proc_stats(struct rtd_perf_syscalls *s,
					uint32_t pid)
{
	void *v;
	if (rtd_map_get(&s->procs, pid, &v))
		return v;
	struct sc_proc_stats *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->by_nr = calloc(SC_MAX_NR, sizeof(*ps->by_nr));
	if (!ps->by_nr || rtd_map_put(&s->procs, pid, ps, NULL)) {
		free(ps->by_nr);
		free(ps);
		return NULL;
	}
	ps->pid = pid;
	const char *cm = comm_of(s, pid, pid, NULL);
	if (cm)
		snprintf(ps->comm, sizeof(ps->comm), "%s", cm);
	return ps;
}

static void account(struct rtd_perf_syscalls *s, const struct rtd_perf_syscall *c)
{
	if (!s->summary || (s->procs.count >= SC_MAX_PROCS &&
			    !rtd_map_get(&s->procs, c->pid, NULL)))
		return; /* past the cap, new processes are not summarized */
	struct sc_proc_stats *ps = proc_stats(s, c->pid);
	if (!ps || c->nr < 0 || c->nr >= SC_MAX_NR)
		return;
	ps->events++;
	struct sc_stat *st = &ps->by_nr[c->nr];
	double ms = c->has_enter ? (double)(c->exit_ns - c->enter_ns) / 1e6 : 0;
	if (!st->calls || ms < st->min)
		st->min = ms;
	if (ms > st->max)
		st->max = ms;
	st->calls++;
	st->total += ms;
	st->sumsq += ms * ms;
	if (c->ret < 0 && c->ret >= -4095)
		st->errors++;
}

/* A thread's name: from COMM records, else /proc when first seen. */
static char *comm_of(struct rtd_perf_syscalls *s, uint32_t pid, uint32_t tid,
		     const char *set)
{
	void *v = NULL;
	char *c = rtd_map_get(&s->comms, tid, &v) ? v : NULL;
	if (!c) {
		c = calloc(1, 16);
		if (!c || rtd_map_put(&s->comms, tid, c, NULL)) {
			free(c);
			return NULL;
		}
		if (!set) {
			rtd_proc_comm((int)pid, (int)tid, c, 16);
			c[15] = 0;
		}
	}
	if (set)
		snprintf(c, 16, "%s", set);
	return c;
}

int rtd_perf_syscalls_feed(struct rtd_perf_syscalls *s,
			   const struct rtd_perf_sample *smp,
			   struct rtd_perf_syscall *out)
{
	if (s && smp && smp->type == RTD_PERF_RECORD_COMM && smp->rec.comm.comm) {
		comm_of(s, smp->rec.comm.pid, smp->rec.comm.tid, smp->rec.comm.comm);
		return 0;
	}
	if (s && smp && smp->type == RTD_PERF_RECORD_EXIT) {
		/* a thread gone: its name (kept in a summary by pid) and any
		 * call it never returned from */
		if (!s->summary || smp->rec.task.tid != smp->rec.task.pid)
			free(rtd_map_del(&s->comms, smp->rec.task.tid));
		free(rtd_map_del(&s->pending, smp->rec.task.tid));
		sysstr_bpf_exit(s->bpf, smp->rec.task.tid);
		return 0;
	}
	if (!s || !smp || smp->type != RTD_PERF_RECORD_SAMPLE || !smp->event)
		return 0;
	s->total_events++;
	uint64_t id;
	if (smp->event == s->enter) {
		if (u64_field(smp, "id", &id, 0))
			return 0;
		struct sc_pending *p = NULL;
		void *v;
		if (rtd_map_get(&s->pending, smp->tid, &v)) {
			p = v;
		} else {
			p = malloc(sizeof(*p));
			if (!p || rtd_map_put(&s->pending, smp->tid, p, NULL)) {
				free(p);
				return 0;
			}
		}
		comm_of(s, smp->pid, smp->tid, NULL); /* while it lives */
		p->pid = smp->pid;
		p->nr = (long)id;
		p->ts = smp->time;
		for (unsigned k = 0; k < 6; k++) {
			p->args[k] = 0;
			u64_field(smp, "args", &p->args[k], k);
			p->has_str[k] = false;
		}
		if (s->read_strings && p->nr >= 0 && p->nr < SC_MAX_NR) {
			load_info(s, p->nr);
			const struct sc_info *in = &s->info[p->nr];
			/* BPF: taken at the exit (strings_at_exit());
			 * else read now, after the fact */
			for (unsigned k = 0; k < in->nargs; k++)
				if (stringish(&in->args[k])) {
					if (!s->bpf)
						read_str(p->pid, p->args[k], p->strs[k]);
					p->has_str[k] = true;
				}
		}
		return 0;
	}
	if (smp->event != s->exit || u64_field(smp, "id", &id, 0))
		return 0;
	uint64_t ret = 0;
	u64_field(smp, "ret", &ret, 0);
	memset(out, 0, sizeof(*out));
	out->pid = smp->pid;
	out->tid = smp->tid;
	out->nr = (long)id;
	out->ret = (int64_t)ret;
	out->exit_ns = smp->time;
	out->name = nr_name(s, out->nr);
	const char *cm = comm_of(s, smp->pid, smp->tid, NULL);
	if (cm)
		snprintf(out->comm, sizeof(out->comm), "%s", cm);
	struct sc_pending *p = rtd_map_del(&s->pending, smp->tid);
	if (p && p->nr == out->nr && s->bpf)
		strings_at_exit(s, smp->tid, p);
	if (p && p->nr == out->nr) {
		out->has_enter = true;
		out->enter_ns = p->ts;
		memcpy(out->args, p->args, sizeof(out->args));
		for (unsigned k = 0; k < 6; k++)
			if (p->has_str[k]) {
				memcpy(out->strs[k], p->strs[k], SC_STR_MAX);
				out->has_str[k] = true;
			}
	}
	free(p);
	account(s, out);
	return 1;
}

/* ---- formatting -------------------------------------------------------------- */

struct bitname {
	uint64_t bit;
	const char *name;
};

static const struct bitname open_flags[] = {
	{O_WRONLY, "WRONLY"}, {O_RDWR, "RDWR"}, {O_CREAT, "CREAT"},
	{O_EXCL, "EXCL"}, {O_NOCTTY, "NOCTTY"}, {O_TRUNC, "TRUNC"},
	{O_APPEND, "APPEND"}, {O_NONBLOCK, "NONBLOCK"}, {O_DSYNC, "DSYNC"},
	{O_DIRECT, "DIRECT"}, {O_LARGEFILE, "LARGEFILE"},
	{O_DIRECTORY, "DIRECTORY"}, {O_NOFOLLOW, "NOFOLLOW"},
	{O_NOATIME, "NOATIME"}, {O_CLOEXEC, "CLOEXEC"}, {O_PATH, "PATH"},
	{__O_TMPFILE, "TMPFILE"}, {0, NULL}};
static const struct bitname prot_flags[] = {
	{PROT_READ, "READ"}, {PROT_WRITE, "WRITE"}, {PROT_EXEC, "EXEC"},
	{0, NULL}};
static const struct bitname map_flags[] = {
	{MAP_SHARED, "SHARED"}, {MAP_PRIVATE, "PRIVATE"}, {MAP_FIXED, "FIXED"},
	{MAP_ANONYMOUS, "ANONYMOUS"}, {MAP_GROWSDOWN, "GROWSDOWN"},
	{MAP_DENYWRITE, "DENYWRITE"}, {MAP_EXECUTABLE, "EXECUTABLE"},
	{MAP_LOCKED, "LOCKED"}, {MAP_NORESERVE, "NORESERVE"},
	{MAP_POPULATE, "POPULATE"}, {MAP_NONBLOCK, "NONBLOCK"},
	{MAP_STACK, "STACK"}, {MAP_HUGETLB, "HUGETLB"},
	{MAP_FIXED_NOREPLACE, "FIXED_NOREPLACE"}, {0, NULL}};

static size_t put_bits(char *b, size_t n, uint64_t v, const struct bitname *t,
		       const char *zero)
{
	size_t k = 0;
	bool any = false;
	for (; t->name; t++) {
		if ((v & t->bit) == t->bit && t->bit) {
			k += (size_t)snprintf(b + k, k < n ? n - k : 0, "%s%s",
					      any ? "|" : "", t->name);
			v &= ~t->bit;
			any = true;
		}
	}
	if (v && any)
		k += (size_t)snprintf(b + k, k < n ? n - k : 0, "|%#llx",
				      (unsigned long long)v);
	else if (v)
		k += (size_t)snprintf(b + k, k < n ? n - k : 0, "%#llx",
				      (unsigned long long)v);
	else if (!any)
		k += (size_t)snprintf(b + k, k < n ? n - k : 0, "%s", zero);
	return k;
}

static void put_str_arg(char *b, size_t n, const char *s)
{
	if (s[0] == '\x01' && !s[1]) {
		snprintf(b, n, "?");
		return;
	}
	size_t k = 0;
	if (k < n)
		b[k++] = '"';
	for (const char *p = s; *p && k + 5 < n; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			k += (size_t)snprintf(b + k, n - k, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			k += (size_t)snprintf(b + k, n - k, "\\x%02x", c);
		else
			b[k++] = (char)c;
	}
	if (k + 1 < n)
		b[k++] = '"';
	b[k < n ? k : n - 1] = 0;
}

static bool is_fd_name(const char *n)
{
	return !strcmp(n, "fd") || !strcmp(n, "dfd") || !strcmp(n, "olddfd") ||
	       !strcmp(n, "newdfd") || !strcmp(n, "oldfd") || !strcmp(n, "newfd") ||
	       !strcmp(n, "epfd") || !strcmp(n, "fd_in") || !strcmp(n, "fd_out") ||
	       !strcmp(n, "dirfd");
}

static void format_arg(const char *sc, const struct sc_arg *a, uint64_t v,
		       const char *str, char *b, size_t n)
{
	if (str) {
		put_str_arg(b, n, str);
	} else if (is_fd_name(a->name)) {
		int fd = (int)v;
		if (fd == AT_FDCWD)
			snprintf(b, n, "CWD");
		else
			snprintf(b, n, "%d", fd);
	} else if (!strcmp(a->name, "flags") && sc &&
		   (!strcmp(sc, "open") || !strcmp(sc, "openat"))) {
		size_t k = 0;
		if ((v & O_ACCMODE) == O_RDONLY)
			k = (size_t)snprintf(b, n, "RDONLY%s", v & ~(uint64_t)O_ACCMODE ? "|" : "");
		if (v & ~(uint64_t)O_ACCMODE || (v & O_ACCMODE) != O_RDONLY)
			put_bits(b + k, k < n ? n - k : 0,
				 (v & O_ACCMODE) == O_RDONLY ? v & ~(uint64_t)O_ACCMODE : v,
				 open_flags, "0");
	} else if (!strcmp(a->name, "prot") && sc &&
		   (!strcmp(sc, "mmap") || !strcmp(sc, "mprotect"))) {
		put_bits(b, n, v, prot_flags, "NONE");
	} else if (!strcmp(a->name, "flags") && sc && !strcmp(sc, "mmap")) {
		put_bits(b, n, v, map_flags, "0");
	} else if (!strcmp(a->name, "mode") || !strcmp(a->type, "umode_t")) {
		snprintf(b, n, "%#llo", (unsigned long long)v);
	} else if (strchr(a->type, '*')) {
		if (v)
			snprintf(b, n, "%#llx", (unsigned long long)v);
		else
			snprintf(b, n, "NULL");
	} else if (!strncmp(a->type, "unsigned", 8) || !strcmp(a->type, "size_t") ||
		   !strncmp(a->type, "u32", 3) || !strncmp(a->type, "u64", 3)) {
		snprintf(b, n, "%llu", (unsigned long long)v);
	} else if (!strcmp(a->type, "int") || !strcmp(a->type, "pid_t") ||
		   !strcmp(a->type, "key_serial_t") || !strcmp(a->type, "clockid_t") ||
		   !strcmp(a->type, "uid_t") || !strcmp(a->type, "gid_t")) {
		snprintf(b, n, "%d", (int)v);
	} else {
		snprintf(b, n, "%lld", (long long)v);
	}
}

int rtd_perf_syscalls_format_args(struct rtd_perf_syscalls *s,
				  const struct rtd_perf_syscall *c, char *buf,
				  size_t n)
{
	if (!s || !c || !buf || !n)
		return -RTD_E_INVAL;
	buf[0] = 0;
	if (!c->has_enter)
		return 0; /* entered before tracing began: arguments unknown */
	size_t k = 0;
	const struct sc_info *in = NULL;
	if (c->nr >= 0 && c->nr < SC_MAX_NR) {
		load_info(s, c->nr);
		in = &s->info[c->nr];
	}
	unsigned na = in && in->nargs ? in->nargs : 6;
	/* open's mode means something only with O_CREAT or O_TMPFILE */
	bool no_mode = c->name && (!strcmp(c->name, "open") || !strcmp(c->name, "openat")) &&
		       !(c->args[!strcmp(c->name, "open") ? 1 : 2] & (O_CREAT | __O_TMPFILE));
	for (unsigned i = 0; i < na && k + 1 < n; i++) {
		char val[SC_STR_MAX + 16];
		if (no_mode && in && in->nargs && !strcmp(in->args[i].name, "mode"))
			continue;
		struct sc_arg anon = {(char *)"arg", (char *)"unsigned long"};
		const struct sc_arg *a = in && in->nargs ? &in->args[i] : &anon;
		format_arg(c->name, a, c->args[i], c->has_str[i] ? c->strs[i] : NULL,
			   val, sizeof(val));
		if (in && in->nargs)
			k += (size_t)snprintf(buf + k, n - k, "%s%s: %s", i ? ", " : "",
					      a->name, val);
		else
			k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", val);
	}
	return 0;
}

int rtd_perf_syscalls_format_ret(const struct rtd_perf_syscall *c, char *buf,
				 size_t n)
{
	if (!c || !buf || !n)
		return -RTD_E_INVAL;
	if (c->ret < 0 && c->ret >= -4095) {
		int e = (int)-c->ret;
		const char *en = strerrorname_np(e);
		snprintf(buf, n, "-1 %s (%s)", en ? en : "E?", strerror(e));
	} else if (c->name && (!strcmp(c->name, "mmap") || !strcmp(c->name, "brk") ||
			       !strcmp(c->name, "mremap"))) {
		snprintf(buf, n, "%#llx", (unsigned long long)c->ret);
	} else {
		snprintf(buf, n, "%lld", (long long)c->ret);
	}
	return 0;
}

static int cmp_stat(const void *a, const void *b, void *ctx)
{
	const struct sc_stat *v = ctx;
	long x = *(const long *)a, y = *(const long *)b;
	if (v[x].total != v[y].total)
		return v[x].total > v[y].total ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct sc_proc_stats *x = *(struct sc_proc_stats *const *)a;
	const struct sc_proc_stats *y = *(struct sc_proc_stats *const *)b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int rtd_perf_syscalls_write_summary(struct rtd_perf_syscalls *s, FILE *f)
{
	if (!s || !f)
		return -RTD_E_INVAL;
	size_t np = s->procs.count, i = 0, it = 0;
	uint64_t key;
	void *v;
	struct sc_proc_stats **ps = calloc(np ? np : 1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	while (rtd_map_next(&s->procs, &it, &key, &v) && i < np)
		ps[i++] = v;
	qsort(ps, i, sizeof(*ps), cmp_pid);
	fprintf(f, "\n Summary of events:\n");
	uint64_t all = 0;
	for (size_t k = 0; k < i; k++)
		all += ps[k]->events;
	long order[SC_MAX_NR];
	for (size_t k = 0; k < i; k++) {
		struct sc_proc_stats *p = ps[k];
		fprintf(f, "\n %s (%u), %llu events, %.1f%%\n\n", p->comm[0] ? p->comm : "?",
			p->pid, (unsigned long long)p->events * 2,
			all ? 100.0 * (double)p->events / (double)all : 0.0);
		fprintf(f, "   syscall            calls  errors  total       min       avg       max       stddev\n"
			   "                                     (msec)    (msec)    (msec)    (msec)        (%%)\n"
			   "   --------------- --------  ------ -------- --------- --------- ---------     ------\n");
		size_t nn = 0;
		for (long nr = 0; nr < SC_MAX_NR; nr++)
			if (p->by_nr[nr].calls)
				order[nn++] = nr;
		qsort_r(order, nn, sizeof(*order), cmp_stat, p->by_nr);
		for (size_t j = 0; j < nn; j++) {
			const struct sc_stat *st = &p->by_nr[order[j]];
			double avg = st->total / (double)st->calls;
			double var = st->calls > 1 ? (st->sumsq - st->total * avg) /
							     (double)(st->calls - 1)
						   : 0;
			double sd = var > 0 && avg > 0 ? sqrt(var / (double)st->calls) / avg * 100 : 0;
			const char *nm = nr_name(s, order[j]);
			char nb[32];
			if (!nm) {
				snprintf(nb, sizeof(nb), "syscall_%ld", order[j]);
				nm = nb;
			}
			fprintf(f, "   %-15s %8llu %7llu %8.3f %9.3f %9.3f %9.3f %9.2f%%\n", nm,
				(unsigned long long)st->calls,
				(unsigned long long)st->errors, st->total, st->min,
				avg, st->max, sd);
		}
	}
	free(ps);
	return ferror(f) ? -EIO : 0;
}
