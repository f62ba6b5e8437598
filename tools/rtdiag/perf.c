/* SPDX-License-Identifier: MIT */
/* perf.c - the 'rtdiag perf' command group: trace, stat, list. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "perf_cli.h"

static const char trace_help[] =
	"usage: rtdiag perf trace (-e SUBSYS:EVENT[/FILTER/] | --uprobe SPEC)...\n"
	"                         [-p PID | --cgroup PATH | -a] [--json]\n"
	"                         [--format perfetto|chrome-json] [-o FILE]\n"
	"                         [-m PAGES] [--duration SECONDS] [--stats] [-- COMMAND ARGS]\n"
	"\n"
	"Print kernel events live, one line each: time (CLOCK_MONOTONIC seconds),\n"
	"[cpu], pid/tid, event name and its decoded fields, in time order across\n"
	"CPUs.\n"
	"\n"
	"  -e SUBSYS:EVENT[/FILTER/]  a tracepoint, e.g. sched:sched_process_exec,\n"
	"                     with an optional kernel filter: -e 'sched:sched_switch/prev_pid != 0/'\n"
	"  --filter FILTER    filter for the preceding -e\n"
	"  --uprobe SPEC      a uprobe: 'BINARY:SYMBOL[+OFF][%return] [NAME=FETCHARG...]'\n"
	"                     e.g. --uprobe '/lib/x86_64-linux-gnu/libc.so.6:open path=+0(%di):string'\n"
	"                     (BINARY:0xADDR for an address as nm prints it). Without\n"
	"                     fetch args the uprobe PMU is used; with them a tracefs\n"
	"                     uprobe, removed on exit. Each line names the symbol.\n"
	"  --kprobe SPEC      a kprobe: 'SYMBOL[+OFF][%return] [ARGS...]' (needs a\n"
	"                     kernel with kprobes)\n"
	"  --format F, -o FILE  a timeline instead of lines: perfetto or chrome-json\n"
	"                     (or from FILE's extension, .perfetto-trace/.pftrace/.json);\n"
	"                     a track per CPU and per thread, sched_switch as running\n"
	"                     slices, other events as instants with their fields\n"
	"  -p PID             only this process (its threads; children with -i)\n"
	"  --cgroup PATH      only this cgroup: a path relative to the cgroup v2 mount\n"
	"                     (else to the v1 perf_event mount), or an absolute one\n"
	"  -a                 the whole system (default without -p, --cgroup or COMMAND)\n"
	"  -- COMMAND ARGS    run COMMAND and trace it and its children from its exec;\n"
	"                     tracing ends when COMMAND exits, as with perf record:\n"
	"                     children that outlive it are not traced further (to\n"
	"                     follow them, use --cgroup or -a --duration)\n"
	"  --json             one JSON object per line\n"
	"  -m PAGES           ring pages per CPU, a power of two (default 64)\n"
	"  --duration SECONDS stop after this long (default: Ctrl-C, or COMMAND's end)\n"
	"  --stats            at the end, print records, rounds, losses, ordering\n"
	"                     and the longest delay from event to delivery on stderr\n"
	"\n"
	"Note: syscalls:sys_enter_openat carries the filename pointer, not the\n"
	"string (the kernel's tracepoint has no string): it prints as a hex\n"
	"address. To see paths, probe libc: --uprobe 'LIBC:open path=+0(%di):string'.\n"
	"Losses (ring full) are reported on stderr per CPU.\n";

static const char stat_help[] =
	"usage: rtdiag perf stat [-e EVENT[,EVENT...]] [-o FILE] (-p PID [--duration S] | -- COMMAND ARGS)\n"
	"\n"
	"Count events for a command (and its children) or a process, and print\n"
	"them as perf stat does: on stderr, so they never mix with the command's\n"
	"output, or into FILE with -o. Counts are scaled by time enabled/running when\n"
	"a counter was multiplexed. '{a,b}' makes a group read at once.\n"
	"Default events: task-clock,context-switches,cpu-migrations,page-faults.\n";

static const char list_help[] =
	"usage: rtdiag perf list [PATTERN]\n"
	"\n"
	"List counters, PMUs, probe support and tracepoints (SUBSYS:EVENT),\n"
	"optionally only those matching a glob PATTERN.\n";

static int run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("perf", "missing subcommand");
	if (!strcmp(argv[1], "trace"))
		return perf_trace_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return perf_stat_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return perf_list_main(argc - 1, argv + 1);
	return cli_usage("perf", "no subcommand '%s'", argv[1]);
}

static bool help(FILE *f, const char *sub)
{
	if (!sub) {
		fprintf(f, "usage: rtdiag perf SUBCOMMAND ...\n\n"
			   "Linux perf_event and tracefs, live.\n\n"
			   "subcommands:\n"
			   "  trace   decoded tracepoint and uprobe events, one per line\n"
			   "  stat    counters for a command or process, perf stat's layout\n"
			   "  list    tracepoints, counters and PMUs\n\n"
			   "'rtdiag help perf SUBCOMMAND' tells more.\n");
		return true;
	}
	if (!strcmp(sub, "trace"))
		fputs(trace_help, f);
	else if (!strcmp(sub, "stat"))
		fputs(stat_help, f);
	else if (!strcmp(sub, "list"))
		fputs(list_help, f);
	else
		return false;
	return true;
}

const struct cli_group cli_group_perf = {"perf", "Linux perf_event: trace, stat, list", run, help};

/* ---- shared helpers ---------------------------------------------------------- */

int perf_child_start(struct perf_child *c, char **argv)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char b;
		close(go[1]);
		close(err[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* the parent gave up */
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(err[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

int perf_child_go(struct perf_child *c)
{
	char b = 1;
	ssize_t w = write(c->go_fd, &b, 1);
	(void)w;
	close(c->go_fd);
	int e = 0;
	ssize_t n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

void perf_child_abort(struct perf_child *c)
{
	close(c->go_fd);
	close(c->err_fd);
	waitpid(c->pid, NULL, 0);
}

static struct rtd_perf_monitor *volatile sig_monitor;
static volatile sig_atomic_t child_exited;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	struct rtd_perf_monitor *m = sig_monitor;
	if (m)
		rtd_perf_monitor_stop(m, false);
}

void perf_cli_signals(struct rtd_perf_monitor *m, unsigned duration_s)
{
	sig_monitor = m;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (duration_s)
		alarm(duration_s);
}

bool perf_cli_child_exited(void)
{
	return child_exited;
}

int perf_cli_fail(struct rtd_perf_monitor *m, const char *what, int err)
{
	const char *msg = rtd_perf_monitor_errmsg(m);
	if (msg && *msg)
		return cli_fail("%s", msg);
	return cli_fail("%s: %s", what, rtd_strerror(err));
}
