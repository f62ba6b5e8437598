/* SPDX-License-Identifier: MIT */
/* perf_trace.c - 'rtdiag perf trace': decoded events live, one per line;
 * system calls as strace and perf trace show them. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "rtdiag/format.h"
#include "rtdiag/perf_line.h"
#include "rtdiag/perf_timeline.h"
#include "out.h"
#include "perf_cli.h"

#define MAX_SPECS 64
#define MAX_SYSCALLS 256

enum {
	T_EVENT = 1, T_FILTER, T_UPROBE, T_KPROBE, T_PID, T_CGROUP, T_ALL,
	T_JSON, T_PAGES, T_DUR, T_STATS, T_OUT, T_SUMMARY, T_WITH_SUMMARY,
	T_FORMAT, T_NOREADER,
};

static const struct cli_opt trace_opts[] = {
	{T_EVENT, "event", 'e', CLI_ARG_STR, CLI_OPT_REPEAT, "EVENT",
	 "a tracepoint SUBSYS:EVENT[/FILTER/] (sched:sched_process_exec, "
	 "'sched:sched_switch/prev_pid != 0/'), or system calls by name "
	 "(openat,read); default: every system call", 0, 0},
	{T_FILTER, "filter", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "FILTER",
	 "kernel filter for the preceding -e tracepoint", 0, 0},
	{T_UPROBE, "uprobe", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "SPEC",
	 "'BINARY:SYMBOL[+OFF][%return] [NAME=FETCHARG...]' (BINARY may be a "
	 "library's name: libc.so.6:open), or BINARY:0xADDR", 0, 0},
	{T_KPROBE, "kprobe", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "SPEC",
	 "'SYMBOL[+OFF][%return] [ARGS...]' (needs a kernel with kprobes)", 0, 0},
	{T_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID[,PID...]",
	 "only these processes (their threads, and children started later)", 0, 0},
	{T_CGROUP, "cgroup", 0, CLI_ARG_STR, 0, "PATH",
	 "only this cgroup (relative to the cgroup v2 mount, else v1 perf_event, "
	 "or absolute)", 0, 0},
	{T_ALL, "all-cpus", 'a', CLI_ARG_NONE, 0, NULL,
	 "the whole system (default without -p, --cgroup or COMMAND)", 0, 0},
	{T_JSON, "json", 0, CLI_ARG_NONE, 0, NULL, "one JSON object per line", 0, 0},
	{T_PAGES, "mmap-pages", 'm', CLI_ARG_INT, CLI_OPT_POSITIVE, "PAGES",
	 "ring data pages per CPU, a power of two (default perf's: 128 at the kernel's default mlock limit)", 1, 65536},
	{T_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME (1.5, 200ms, 00:01:00; default: Ctrl-C or COMMAND's end)", 0, 0},
	{T_STATS, "stats", 0, CLI_ARG_NONE, 0, NULL,
	 "at the end, print records, rounds, losses and delays on stderr", 0, 0},
	{T_NOREADER, "no-reader-thread", 0, CLI_ARG_NONE, 0, NULL,
	 "read the rings on the thread that decodes and prints (by default a "
	 "thread of its own copies them out at once, up to 64 MiB, so that "
	 "slow printing does not make the kernel drop events)", 0, 0},
	{T_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write to FILE instead of stdout (an existing FILE is replaced only when "
	 "tracing ran)", 0, 0},
	{T_SUMMARY, "summary", 's', CLI_ARG_NONE, 0, NULL,
	 "system calls: only a summary per process and call (counts, errors, times)", 0, 0},
	{T_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "perfetto|chrome-json",
	 "a timeline instead of lines (also picked by -o FILE.perfetto-trace, "
	 ".pftrace, or .json without --json): a track per CPU and per thread, sched_switch as running "
	 "slices, other events as instants with their fields", 0, 0},
	{T_WITH_SUMMARY, "with-summary", 'S', CLI_ARG_NONE, 0, NULL,
	 "system calls: every call, then the summary", 0, 0},
	{0},
};

const struct cli_cmd perf_cmd_trace = {
	"perf trace", NULL,
	"Kernel events live, one per line: system calls, tracepoints, probes.\n"
	"In time order across CPUs: system calls as strace and perf trace show\n"
	"them (name, arguments by type, return value with its errno name,\n"
	"duration), tracepoints with their decoded fields, uprobes and kprobes.",
	trace_opts, 0, 0, CLI_CMD_COMMAND, perf_trace_main,
	"System calls (the default, or -e NAME,...): 'TIME (DURATION ms): COMM/TID\n"
	"name(arg: value, ...) = RET', TIME in ms since the first event. Path\n"
	"arguments are read at the call's entry, as strace reads them, by a BPF\n"
	"program where rtdiag may load one (root, or CAP_BPF and CAP_PERFMON);\n"
	"otherwise (stderr says why), and for a string on a page the process had\n"
	"not touched yet, from the process when the call is seen (best effort:\n"
	"a string changed right after the call reads as it is then, '?' when\n"
	"unreadable). Tracepoints and probes: 'SECONDS [CPU] PID/TID name: field=value\n"
	"...', CLOCK_MONOTONIC seconds; integer arrays print as [1,2,3], and\n"
	"addresses as the event's format says (%pI4: 127.0.0.1).\n"
	"\n"
	"With -- COMMAND, tracing starts at its exec and ends when it exits, as with\n"
	"perf record (children that outlive it are not traced further: use\n"
	"--cgroup or -a --duration), and rtdiag exits with COMMAND's exit code.\n"
	"syscalls:sys_enter_openat carries the filename pointer only; the system\n"
	"call view (-e openat) prints the path. Losses (ring full) are reported on\n"
	"stderr, with how to raise the ring.\n"
	"\n"
	"examples:\n"
	"  rtdiag perf trace -- ls /tmp\n"
	"  rtdiag perf trace -e openat,execve -s -- make\n"
	"  rtdiag perf trace -e 'sched:sched_switch/prev_pid != 0/' -a -d 1\n"
	"  rtdiag perf trace --uprobe 'libc.so.6:open path=+0(%di):string' -p 4242\n",
};

struct spec {
	enum { SPEC_TP, SPEC_UPROBE, SPEC_KPROBE } kind;
	char *name;   /* tracepoint name or probe spec */
	char *filter; /* tracepoint filter, or NULL */
};

struct trace_out {
	FILE *f;
	rtd_perf_line *line;
	uint64_t lines;
	int err;
	/* system calls */
	struct rtd_perf_syscalls *sc;
	bool sc_lines;
	/* a timeline instead of lines: --format, or -o FILE.perfetto-trace */
	struct cli_timeline tlo;
	rtd_tl_perf *tla;
};

/* Nothing more until new records arrive: show what we have. */
static void on_idle(void *ctx)
{
	struct trace_out *o = ctx;
	fflush(o->f);
}

static int emit(struct trace_out *o, const char *line, size_t len)
{
	if (fwrite(line, 1, len, o->f) != len) {
		o->err = errno ? errno : EIO;
		return 1; /* output closed (a pipe to head): stop */
	}
	o->lines++;
	return 0;
}

static int on_syscall(struct trace_out *o, const struct rtd_perf_syscall *c)
{
	if (!o->sc_lines)
		return 0;
	size_t n;
	const char *t = rtd_perf_line_syscall(o->line, o->sc, c, &n);
	return emit(o, t, n);
}

static int on_record(const struct rtd_perf_sample *s, void *ctx)
{
	struct trace_out *o = ctx;
	if (o->tla)
		return rtd_tl_perf_record(o->tla, s);
	if (s->type == PERF_RECORD_LOST || s->type == PERF_RECORD_LOST_SAMPLES) {
		fflush(o->f);
		fprintf(stderr, "rtdiag: cpu %u: %llu events lost (the ring was "
				"full: raise -m or filter more)\n",
			s->cpu, (unsigned long long)s->rec.lost.lost);
		return 0;
	}
	if (s->type != PERF_RECORD_SAMPLE || !s->event)
		return 0;
	if (o->sc && s->type != PERF_RECORD_SAMPLE)
		rtd_perf_syscalls_feed(o->sc, s, NULL);
	if (o->sc && s->type == PERF_RECORD_SAMPLE && s->event) {
		struct rtd_perf_syscall c;
		int k = rtd_perf_syscalls_feed(o->sc, s, &c);
		if (k > 0)
			return on_syscall(o, &c);
		const char *en = rtd_perf_event_name(s->event);
		if (!strncmp(en, "raw_syscalls:", 13))
			return 0;
	}
	size_t n;
	const char *t = rtd_perf_line_sample(o->line, s, &n);
	return emit(o, t, n);
}

/* "sys:event/filter/" -> name and filter */
static int split_filter(const char *arg, struct spec *sp)
{
	const char *colon = strchr(arg, ':');
	const char *slash = colon ? strchr(colon, '/') : NULL;
	if (!slash) {
		sp->name = strdup(arg);
		return sp->name ? 0 : -ENOMEM;
	}
	size_t al = strlen(arg);
	if (arg[al - 1] != '/' || arg + al - 1 == slash)
		return -RTD_E_INVAL;
	sp->name = strndup(arg, (size_t)(slash - arg));
	sp->filter = strndup(slash + 1, (size_t)(arg + al - 1 - slash - 1));
	return sp->name && sp->filter ? 0 : -ENOMEM;
}

struct trace_args {
	struct spec specs[MAX_SPECS];
	size_t nspec;
	char *sc_names[MAX_SYSCALLS];
	size_t nsc;
	bool syscalls;
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	const char *cgroup;
	bool all, stats, json, summary, with_summary, no_reader;
	unsigned pages;
	double duration;
	const char *out;
	const char *format; /* --format perfetto|chrome-json, or NULL */
	char **cmd;
};

static int add_syscall_names(struct trace_args *a, const char *list)
{
	char *dup = strdup(list), *save = NULL;
	if (!dup)
		return -ENOMEM;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (a->nsc == MAX_SYSCALLS)
			break;
		a->sc_names[a->nsc++] = strdup(t);
	}
	free(dup);
	a->syscalls = true;
	return 0;
}

static int parse(struct trace_args *a, int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &perf_cmd_trace, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case T_EVENT:
			if (!strchr(v.str, ':')) {
				add_syscall_names(a, v.str);
				break;
			}
			/* fall through */
		case T_UPROBE:
		case T_KPROBE: {
			if (a->nspec == MAX_SPECS)
				return cli_cmd_usage(&perf_cmd_trace, "at most %d events",
						     MAX_SPECS);
			struct spec *sp = &a->specs[a->nspec++];
			if (id == T_EVENT) {
				sp->kind = SPEC_TP;
				if (split_filter(v.str, sp))
					return cli_cmd_usage(&perf_cmd_trace,
							     "-e %s: want SUBSYS:EVENT or "
							     "SUBSYS:EVENT/FILTER/", v.str);
			} else {
				sp->kind = id == T_UPROBE ? SPEC_UPROBE : SPEC_KPROBE;
				sp->name = strdup(v.str);
			}
			break;
		}
		case T_FILTER:
			if (!a->nspec || a->specs[a->nspec - 1].kind != SPEC_TP)
				return cli_cmd_usage(&perf_cmd_trace,
						     "--filter must follow a -e tracepoint");
			free(a->specs[a->nspec - 1].filter);
			a->specs[a->nspec - 1].filter = strdup(v.str);
			break;
		case T_PID:
			for (size_t i = 0; i < v.npids && a->npids < CLI_MAX_PIDS; i++)
				a->pids[a->npids++] = v.pids[i];
			break;
		case T_CGROUP: a->cgroup = v.str; break;
		case T_ALL: a->all = true; break;
		case T_JSON: a->json = true; break;
		case T_PAGES:
			if (v.i & (v.i - 1))
				return cli_cmd_usage(&perf_cmd_trace,
						     "-m %s: want a power of two (pages per CPU)",
						     v.str);
			a->pages = (unsigned)v.i;
			break;
		case T_DUR: a->duration = v.d; break;
		case T_STATS: a->stats = true; break;
		case T_NOREADER: a->no_reader = true; break;
		case T_OUT: a->out = v.str; break;
		case T_FORMAT: a->format = v.str; break;
		case T_SUMMARY: a->summary = true; break;
		case T_WITH_SUMMARY: a->with_summary = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	a->cmd = ps.rest;
	if (!a->nspec && !a->syscalls)
		a->syscalls = true; /* every system call, as perf trace and strace */
	if ((a->npids > 0) + (a->cgroup != NULL) + a->all + (a->cmd != NULL) > 1)
		return cli_cmd_usage(&perf_cmd_trace,
				     "-p, --cgroup, -a and -- COMMAND exclude each other");
	if ((a->summary || a->with_summary) && !a->syscalls)
		return cli_cmd_usage(&perf_cmd_trace,
				     "-s/-S summarize system calls: give -e with call "
				     "names, or no -e");
	return -1;
}

static int add_events(struct rtd_perf_monitor *m, struct trace_args *a,
		      struct trace_out *o, bool switches)
{
	int r;
	if (a->syscalls) {
		r = rtd_perf_syscalls_new(m, (const char *const *)a->sc_names, a->nsc,
					  a->summary || a->with_summary
						  ? RTD_PERF_SYSCALLS_SUMMARY : 0,
					  &o->sc);
		if (r)
			return perf_cli_fail(m, "system calls", r);
		const char *why = "";
		if (!rtd_perf_syscalls_strings_at_entry(o->sc, &why))
			fprintf(stderr, "rtdiag: path arguments read after the "
					"fact (process_vm_readv; \"?\" when gone), "
					"not at entry: %s\n", why);
	}
	for (size_t i = 0; i < a->nspec; i++) {
		struct spec *sp = &a->specs[i];
		if (sp->kind == SPEC_TP) {
			r = rtd_perf_monitor_add_tracepoint(m, sp->name, sp->filter, NULL);
		} else {
			struct rtd_perf_probe p;
			enum rtd_perf_event_kind k = sp->kind == SPEC_UPROBE ? RTD_PERF_UPROBE
									   : RTD_PERF_KPROBE;
			if (rtd_perf_probe_parse(k, sp->name, &p))
				return cli_fail("%s '%s': want %s",
						k == RTD_PERF_UPROBE ? "--uprobe" : "--kprobe",
						sp->name,
						k == RTD_PERF_UPROBE
							? "BINARY:SYMBOL[+OFF][%return] [NAME=FETCHARG...]"
							: "SYMBOL[+OFF][%return] [NAME=FETCHARG...]");
			r = rtd_perf_monitor_add_probe(m, &p, NULL);
			rtd_perf_probe_clear(&p);
		}
		if (r)
			return perf_cli_fail(m, sp->name, r);
	}
	if (switches) {
		/* a thread's sched_switch is seen only as it leaves the CPU
		 * unless the whole system is traced: its own switch records
		 * (on a dummy event) say when it runs again */
		struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .event = "dummy",
						   .period = 1, .no_tracking = true,
						   .context_switch = true};
		r = rtd_perf_monitor_add_sampler(m, &so, NULL);
		if (r)
			return perf_cli_fail(m, "context switch records", r);
	}
	return CLI_OK;
}

static void print_stats(struct rtd_perf_monitor *m, bool always)
{
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(m, &st);
	unsigned pages = st.ring_pages;
	if (always)
		fprintf(stderr,
			"rtdiag: %llu records (%llu samples) from %u rings of %u pages "
			"in %llu rounds, %llu wakeups; lost %llu (%llu in LOST records), "
			"%llu bad; %llu out of order; max delay from event to delivery "
			"%.3f ms",
			(unsigned long long)st.records, (unsigned long long)st.samples,
			st.nrings, pages, (unsigned long long)st.rounds,
			(unsigned long long)st.wakeups, (unsigned long long)st.lost,
			(unsigned long long)st.lost_in_records,
			(unsigned long long)st.bad_records, (unsigned long long)st.late,
			(double)st.max_latency_ns / 1e6);
	if (always && st.copy_bytes)
		fprintf(stderr, "; reader thread: %llu KiB copies, at most %llu "
			"KiB waited, full in %llu passes",
			(unsigned long long)(st.copy_bytes >> 10),
			(unsigned long long)(st.copy_max >> 10),
			(unsigned long long)st.copy_full);
	if (always)
		fputc('\n', stderr);
	if (st.lost || st.lost_samples) {
		fprintf(stderr, "rtdiag: %llu events lost in total:",
			(unsigned long long)(st.lost + st.lost_samples));
		for (unsigned i = 0; i < st.nrings && i < 256; i++)
			if (st.ring_lost[i])
				fprintf(stderr, " ring %u: %llu", i,
					(unsigned long long)st.ring_lost[i]);
		fprintf(stderr, "; the rings were full: raise them with -m %u "
				"(now %u pages per CPU), or trace fewer events\n",
			pages < 32768 ? pages * 4 : 65536, pages);
	}
}

/* A timeline instead of lines: --format, or -o's extension by the one
 * table (.json with --json: JSON lines); lines go to any other name, but
 * not to a picture's. Returns -1, or a usage error's exit code. */
static int pick_output(const struct trace_args *a, struct cli_format *tf,
		       bool *timeline)
{
	const struct rtd_format_ext *x = a->format || cli_out_is_stdout(a->out)
						 ? NULL : rtd_format_ext_of(a->out);
	*timeline = a->format || (x && x->kind == RTD_FORMAT_TIMELINE &&
				  !(a->json && !strcmp(x->ext, ".json")));
	if (x && !*timeline && (x->kind & (RTD_FORMAT_PROFILE | RTD_FORMAT_FOREIGN)))
		return cli_usage("perf trace", "%s: '%s' is %s; perf trace writes "
				 "lines (any other name) or a timeline (.pftrace, "
				 ".json)", a->out, x->ext, x->what);
	if (!*timeline)
		return -1;
	if (cli_format_pick("perf trace", a->format, a->out, CLI_FMT_TIMELINE,
			    "perfetto", tf))
		return CLI_USAGE;
	if (a->json || a->summary || a->with_summary)
		return cli_usage("perf trace", "a timeline (--format) has no "
				 "--json, --summary or --with-summary");
	return -1;
}

/* The monitor of the processes, cgroup or system traced; -1 when it
 * cannot be (said why). */
static int open_monitor(struct trace_args *a, struct rtd_perf_monitor **m)
{
	struct rtd_perf_opts o = {.sz = sizeof(o)};
	o.ring_pages = a->pages; /* 0: perf's default */
	if (a->npids) {
		o.pids = a->pids;
		o.npids = a->npids;
		o.flags = RTD_PERF_INHERIT;
		if (a->cmd)
			o.flags |= RTD_PERF_ENABLE_ON_EXEC;
	}
	if (a->syscalls)
		o.flags |= RTD_PERF_TRACK_COMM;
	if (!a->no_reader)
		o.flags |= RTD_PERF_READER_THREAD;
	if (a->cgroup) {
		o.cgroups = &a->cgroup;
		o.ncgroups = 1;
	}
	int r = rtd_perf_monitor_new(&o, m);
	if (!r)
		return 0;
	if (a->npids && !a->cmd && r == -RTD_E_NOTFOUND)
		cli_fail("pid %d: no such process", (int)gone_pid(a->pids, a->npids));
	else if (a->cgroup && r == -RTD_E_NOTFOUND)
		cli_fail("cgroup %s: not found (give a path relative to the "
			 "cgroup v2 mount, or an absolute one)", a->cgroup);
	else
		cli_fail("cannot set up perf_event: %s", rtd_strerror(r));
	return -1;
}

/* A timeline's running slices of traced threads (not the whole system:
 * there sched_switch shows both sides). */
static bool want_switches(const struct trace_args *a)
{
	for (size_t i = 0; !a->all && i < a->nspec; i++)
		if (a->specs[i].kind == SPEC_TP &&
		    (!strcmp(a->specs[i].name, "sched:sched_switch") ||
		     !strcmp(a->specs[i].name, "sched/sched_switch")))
			return true;
	return false;
}

/* Where the events go: a timeline (@tf), -o's file, or stdout; -1 when
 * it cannot be opened (said why). */
static int open_output(const struct trace_args *a, struct cli_format *tf,
		       struct trace_out *out, struct cli_out *co, bool *out_open)
{
	if (tf) {
		out->f = stdout;
		if (cli_timeline_open(&out->tlo, tf, a->out))
			return -1;
		if (!(out->tla = rtd_tl_perf_new(out->tlo.tl, NULL))) {
			cli_timeline_close(&out->tlo, false);
			cli_fail("out of memory");
			return -1;
		}
		return 0;
	}
	if (a->out) {
		if (cli_out_open(co, a->out))
			return -1;
		*out_open = true;
		out->f = co->f;
	} else {
		out->f = stdout;
		/* few large writes; flushed whenever the monitor goes idle, so
		 * the output stays live on a terminal and in a pipe */
		static char obuf[1 << 20];
		setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	}
	if (!(out->line = rtd_perf_line_new(a->json ? RTD_PERF_LINE_JSON : 0))) {
		cli_fail("out of memory");
		return -1;
	}
	return 0;
}

int perf_trace_main(int argc, char **argv)
{
	struct trace_args *a = calloc(1, sizeof(*a));
	struct trace_out out = {0};
	struct rtd_perf_monitor *m = NULL;
	struct perf_child child = {0};
	bool have_child = false, out_open = false;
	struct cli_out co;
	if (!a)
		return cli_fail("out of memory");
	int rc = parse(a, argc, argv);
	if (rc >= 0)
		goto done;
	rc = CLI_FAIL;
	if (a->out && cli_out_check(a->out))
		goto done;
	struct cli_format tf;
	bool timeline;
	if ((rc = pick_output(a, &tf, &timeline)) >= 0)
		goto done;
	rc = CLI_FAIL;
	out.sc_lines = !a->summary;
	if (a->cmd) {
		if (perf_cli_start(&child, a->cmd, a->pids, &a->npids))
			goto done;
		have_child = true;
	}
	if (open_monitor(a, &m))
		goto done;
	if (add_events(m, a, &out, timeline && want_switches(a)) != CLI_OK)
		goto done;
	if (open_output(a, timeline ? &tf : NULL, &out, &co, &out_open))
		goto done;
	rtd_perf_monitor_set_idle(m, on_idle);
	perf_cli_signals(m, a->duration);
	if (have_child) {
		int e = perf_child_go(&child);
		have_child = false;
		if (e) {
			cli_fail("%s: cannot run: %s", a->cmd[0], strerror(e));
			waitpid(child.pid, NULL, 0);
			goto done;
		}
	}
	int r = rtd_perf_monitor_run(m, on_record, &out);
	perf_cli_signals(NULL, 0);
	if (out.sc && (a->summary || a->with_summary))
		rtd_perf_syscalls_write_summary(out.sc, out.f);
	fflush(out.f);
	if (r < 0)
		perf_cli_fail(m, "reading events", r);
	else if (out.err && out.err != EPIPE)
		cli_fail("writing %s: %s", a->out ? a->out : "output", strerror(out.err));
	else
		rc = CLI_OK;
	print_stats(m, a->stats);
	if (out.tla) {
		/* what was traced is worth keeping, even after an error */
		rtd_tl_perf_free(out.tla);
		out.tla = NULL;
		if (cli_timeline_close(&out.tlo, true) != CLI_OK)
			rc = CLI_FAIL;
	}
	if (out_open) {
		/* what was traced is worth keeping, even after an error */
		out_open = false;
		if (cli_out_commit(&co))
			rc = CLI_FAIL;
	}
	if (a->cmd) {
		int status = 0;
		if (waitpid(a->pids[0], &status, a->duration > 0 ? WNOHANG : 0) ==
			    a->pids[0] &&
		    rc == CLI_OK)
			rc = perf_child_code(status); /* as perf stat: COMMAND's code */
	}
done:
	if (out_open)
		cli_out_abort(&co);
	if (out.tla) {
		rtd_tl_perf_free(out.tla);
		cli_timeline_close(&out.tlo, false);
	}
	rtd_perf_syscalls_free(out.sc);
	rtd_perf_line_free(out.line);
	rtd_perf_monitor_free(m);
	if (have_child)
		perf_child_abort(&child);
	for (size_t i = 0; i < a->nspec; i++) {
		free(a->specs[i].name);
		free(a->specs[i].filter);
	}
	for (size_t i = 0; i < a->nsc; i++)
		free(a->sc_names[i]);
	free(a);
	return rc;
}
