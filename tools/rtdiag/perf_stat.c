/* SPDX-License-Identifier: MIT */
/* perf_stat.c - 'rtdiag perf stat': counters in perf stat's layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "out.h"
#include "perf_cli.h"

#define MAX_COUNTERS 64

enum { S_EVENT = 1, S_UPROBE, S_KPROBE, S_PID, S_DUR, S_OUT };

static const struct cli_opt stat_opts[] = {
	{S_EVENT, "event", 'e', CLI_ARG_STR, CLI_OPT_REPEAT, "EVENT[,EVENT...]",
	 "counters: task-clock, page-faults, cycles, ... ('rtdiag perf list'), a tracepoint "
	 "SUBSYS:EVENT (its hits), '{a,b}' for a group read at once", 0, 0},
	{S_UPROBE, "uprobe", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "SPEC",
	 "count the calls of BINARY:SYMBOL (a library by name: libc.so.6:malloc)", 0, 0},
	{S_KPROBE, "kprobe", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "SPEC",
	 "count the hits of a kernel SYMBOL (needs a kernel with kprobes)", 0, 0},
	{S_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID[,PID...]",
	 "count these processes (their threads and later children) until they exit, "
	 "Ctrl-C or --duration", 0, 0},
	{S_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME (1.5, 200ms, 00:01:00)", 0, 0},
	{S_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write the counts to FILE instead of stderr (an existing FILE is replaced only "
	 "when counting worked)", 0, 0},
	{0},
};

const struct cli_cmd perf_cmd_stat = {
	"perf stat", NULL,
	"Count events of a command or of processes, in perf stat's layout.\n"
	"Counts go to stderr, as perf's do, so they never mix with the\n"
	"command's output (or into FILE with -o); they are scaled by time\n"
	"enabled/running when a counter was multiplexed.",
	stat_opts, 0, 0, CLI_CMD_COMMAND, perf_stat_main,
	"Default events: task-clock,context-switches,cpu-migrations,page-faults.\n"
	"When the kernel lets this user count user space only\n"
	"(kernel.perf_event_paranoid 2), counters count user space and are shown\n"
	"with a ':u' suffix, as perf shows them. With -- COMMAND, rtdiag exits with\n"
	"COMMAND's exit code.\n"
	"\n"
	"examples:\n"
	"  rtdiag perf stat -- make -j2\n"
	"  rtdiag perf stat -e sched:sched_switch,syscalls:sys_enter_openat -- ls\n"
	"  rtdiag perf stat --uprobe libc.so.6:malloc -p 4242 -d 5\n",
};

/* Alive and not a zombie (a zombie's counters no longer move). */
static bool proc_alive(pid_t pid)
{
	struct rtd_pstat st;
	return rtd_pstat_read(NULL, pid, 0, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

struct counter {
	char *name;   /* as the user wrote it */
	char *probe;  /* a --uprobe/--kprobe spec, or NULL */
	bool kprobe;
	int group;
	struct rtd_perf_event *ev;
	int err;      /* not supported, ... */
};

static void print_count(FILE *out, const struct counter *c,
			const struct rtd_perf_count *v, double task_ms,
			double elapsed_s)
{
	char name[300];
	snprintf(name, sizeof(name), "%s%s", c->name,
		 c->ev && rtd_perf_event_user_only(c->ev) ? ":u" : "");
	if (c->err) {
		fprintf(out, "   %-16s      %-32s\n",
			c->err == -RTD_E_PERF_NOTSUPP ? "<not supported>"
						      : "<not counted>",
			name);
		return;
	}
	double sec = task_ms > 0 ? task_ms / 1e3 : elapsed_s;
	if (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock")) {
		double ms = v->scaled / 1e6;
		fprintf(out, "%18.2f msec %-32s #  %7.3f CPUs utilized          \n",
			ms, name, elapsed_s > 0 ? ms / 1e3 / elapsed_s : 0);
	} else {
		double rate = sec > 0 ? v->scaled / sec : 0;
		const char *unit = "/sec";
		if (rate >= 1e9) {
			rate /= 1e9;
			unit = "G/sec";
		} else if (rate >= 1e6) {
			rate /= 1e6;
			unit = "M/sec";
		} else if (rate >= 1e3) {
			rate /= 1e3;
			unit = "K/sec";
		}
		fprintf(out, "%18.0f      %-32s #  %7.3f %-5s                \n",
			v->scaled, name, rate, unit);
	}
	if (v->multiplexed && v->time_enabled)
		fprintf(out, "%18s      (%.2f%%)\n", "",
			100.0 * (double)v->time_running / (double)v->time_enabled);
}

/* Split "a,{b,c},d" (braces make groups) into counters. */
static int split_events(const char *events, struct counter *cs, size_t *nc,
			int *ngroups)
{
	int group = -1;
	for (const char *p = events; p && *p;) {
		bool open = *p == '{';
		if (open) {
			p++;
			group = (*ngroups)++;
		}
		size_t l = strcspn(p, ",}");
		bool close = p[l] == '}';
		if (!l || *nc == MAX_COUNTERS)
			return -1;
		struct counter *c = &cs[(*nc)++];
		c->name = strndup(p, l);
		c->group = group >= 0 ? group : (*ngroups)++;
		p += l;
		if (close) {
			group = -1;
			p++;
		}
		if (*p == ',')
			p++;
	}
	return 0;
}

struct stat_args {
	struct counter cs[MAX_COUNTERS];
	size_t nc;
	int ngroups;
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	double duration;
	const char *out;
	char **cmd;
};

static int parse(struct stat_args *a, int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &perf_cmd_stat, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case S_EVENT:
			if (split_events(v.str, a->cs, &a->nc, &a->ngroups))
				return cli_cmd_usage(&perf_cmd_stat,
						     "-e %s: bad event list (want EVENT[,EVENT...], "
						     "'{a,b}' for a group; at most %d)",
						     v.str, MAX_COUNTERS);
			break;
		case S_UPROBE:
		case S_KPROBE:
			if (a->nc == MAX_COUNTERS)
				return cli_cmd_usage(&perf_cmd_stat, "at most %d counters",
						     MAX_COUNTERS);
			a->cs[a->nc].name = strdup(v.str);
			a->cs[a->nc].probe = a->cs[a->nc].name;
			a->cs[a->nc].kprobe = id == S_KPROBE;
			a->cs[a->nc++].group = a->ngroups++;
			break;
		case S_PID:
			for (size_t i = 0; i < v.npids && a->npids < CLI_MAX_PIDS; i++)
				a->pids[a->npids++] = v.pids[i];
			break;
		case S_DUR: a->duration = v.d; break;
		case S_OUT: a->out = v.str; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	a->cmd = ps.rest;
	if (!a->cmd && !a->npids)
		return cli_cmd_usage(&perf_cmd_stat, "give -p PID or -- COMMAND ARGS");
	if (a->cmd && a->npids)
		return cli_cmd_usage(&perf_cmd_stat, "-p and -- COMMAND exclude each other");
	if (!a->nc)
		split_events("task-clock,context-switches,cpu-migrations,page-faults",
			     a->cs, &a->nc, &a->ngroups);
	return -1;
}

static int add_counters(struct rtd_perf_monitor *m, struct stat_args *a)
{
	for (size_t i = 0; i < a->nc; i++) {
		struct counter *c = &a->cs[i];
		struct rtd_perf_event *leader = NULL;
		for (size_t j = 0; j < i; j++)
			if (a->cs[j].group == c->group && a->cs[j].ev) {
				leader = a->cs[j].ev;
				break;
			}
		int r;
		if (c->probe) {
			struct rtd_perf_probe p;
			enum rtd_perf_event_kind k = c->kprobe ? RTD_PERF_KPROBE
							       : RTD_PERF_UPROBE;
			if (rtd_perf_probe_parse(k, c->probe, &p))
				return cli_fail("%s '%s': want %s", c->kprobe ? "--kprobe" : "--uprobe",
						c->probe, c->kprobe ? "SYMBOL[+OFF][%return]"
								    : "BINARY:SYMBOL[+OFF][%return]");
			r = rtd_perf_monitor_add_probe_counter(m, &p, leader, &c->ev);
			rtd_perf_probe_clear(&p);
		} else {
			r = rtd_perf_monitor_add_counter(m, c->name, leader, &c->ev);
		}
		if (r == -RTD_E_PERF_NOTSUPP && !c->probe)
			c->err = r; /* printed as perf does */
		else if (r)
			return perf_cli_fail(m, c->name, r);
	}
	return CLI_OK;
}

static void print_all(FILE *f, struct stat_args *a, double elapsed,
		      const struct rusage *ru)
{
	struct rtd_perf_count vals[MAX_COUNTERS];
	double task_ms = 0;
	for (size_t i = 0; i < a->nc; i++) {
		memset(&vals[i], 0, sizeof(vals[i]));
		if (a->cs[i].err)
			continue;
		int r = rtd_perf_event_count(a->cs[i].ev, &vals[i]);
		if (r) {
			a->cs[i].err = r;
			continue;
		}
		if (!strcmp(a->cs[i].name, "task-clock"))
			task_ms = vals[i].scaled / 1e6;
	}
	fprintf(f, "\n Performance counter stats for ");
	if (a->cmd) {
		fprintf(f, "'");
		for (char **s = a->cmd; *s; s++)
			fprintf(f, "%s%s", s == a->cmd ? "" : " ", *s);
		fprintf(f, "':\n\n");
	} else {
		fprintf(f, "process id '");
		for (size_t i = 0; i < a->npids; i++)
			fprintf(f, "%s%d", i ? "," : "", (int)a->pids[i]);
		fprintf(f, "':\n\n");
	}
	for (size_t i = 0; i < a->nc; i++)
		print_count(f, &a->cs[i], &vals[i], task_ms, elapsed);
	fprintf(f, "\n%17.9f seconds time elapsed\n\n", elapsed);
	if (a->cmd) {
		fprintf(f, "%17.9f seconds user\n",
			(double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6);
		fprintf(f, "%17.9f seconds sys\n\n",
			(double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6);
	}
}

static bool any_alive(const pid_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (proc_alive(p[i]))
			return true;
	return false;
}

int perf_stat_main(int argc, char **argv)
{
	struct stat_args *a = calloc(1, sizeof(*a));
	if (!a)
		return cli_fail("out of memory");
	int rc = parse(a, argc, argv);
	struct rtd_perf_monitor *m = NULL;
	struct perf_child child = {0};
	bool have_child = false;
	if (rc >= 0)
		goto done;
	rc = CLI_FAIL;
	if (a->out && cli_out_check(a->out))
		goto done;
	if (a->cmd) {
		if (perf_cli_start(&child, a->cmd, a->pids, &a->npids))
			goto done;
		have_child = true;
	}
	struct rtd_perf_opts o = {.sz = sizeof(o)};
	o.pids = a->pids;
	o.npids = a->npids;
	o.flags = RTD_PERF_INHERIT | (a->cmd ? RTD_PERF_ENABLE_ON_EXEC : 0);
	int r = rtd_perf_monitor_new(&o, &m);
	if (r) {
		if (!a->cmd && r == -RTD_E_NOTFOUND)
			cli_fail("pid %d: no such process", (int)gone_pid(a->pids, a->npids));
		else
			cli_fail("cannot set up perf_event: %s", rtd_strerror(r));
		goto done;
	}
	if (add_counters(m, a) != CLI_OK)
		goto done;
	struct timespec t0, t1;
	struct rusage ru = {0};
	int status = 0;
	perf_cli_signals(m, a->duration);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (have_child) {
		int e = perf_child_go(&child);
		have_child = false;
		if (e) {
			cli_fail("%s: cannot run: %s", a->cmd[0], strerror(e));
			waitpid(child.pid, NULL, 0);
			goto done;
		}
		while (wait4(child.pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
	} else {
		/* until Ctrl-C, the duration, or the processes' end */
		while (any_alive(a->pids, a->npids) && !perf_cli_child_exited()) {
			struct timespec ts = {0, 50000000};
			if (nanosleep(&ts, NULL) && errno == EINTR &&
			    !perf_cli_child_exited())
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	perf_cli_signals(NULL, 0);
	double elapsed = (double)(t1.tv_sec - t0.tv_sec) +
			 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	struct cli_out out;
	if (a->out) {
		if (cli_out_open(&out, a->out))
			goto done;
		print_all(out.f, a, elapsed, &ru);
		if (cli_out_commit(&out))
			goto done;
	} else {
		print_all(stderr, a, elapsed, &ru);
		fflush(stderr);
	}
	rc = CLI_OK;
	if (a->cmd)
		rc = perf_child_code(status); /* like perf: the command's status */
done:
	rtd_perf_monitor_free(m);
	if (have_child)
		perf_child_abort(&child);
	for (size_t i = 0; i < a->nc; i++)
		free(a->cs[i].name);
	free(a);
	return rc;
}
