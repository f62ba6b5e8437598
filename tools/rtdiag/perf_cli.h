/* SPDX-License-Identifier: MIT */
/* perf_cli.h - what the 'rtdiag perf' subcommands share. */
#ifndef RTD_PERF_CLI_H
#define RTD_PERF_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "opt.h"
#include "rtdiag/perf.h"

/* A command started stopped before exec(): counters and events are
 * attached to its pid, then perf_child_go() lets it exec. */
struct perf_child {
	pid_t pid;
	int go_fd;   /* write a byte: exec */
	int err_fd;  /* reads errno if exec failed, EOF on success */
};

/* Fork argv[0] (looked up in PATH); the child waits. 0 or -errno. */
int perf_child_start(struct perf_child *c, char **argv);
/* perf_child_start() for COMMAND, its pid added to the targets (pids,
 * *npids). 0, or -1 after printing "COMMAND: cannot start: why". */
int perf_cli_start(struct perf_child *c, char **cmd, pid_t *pids,
		   size_t *npids);
/* Of pids (n > 0), the first that is gone (no such process), else the
 * first: the one to name when the library said "not found". */
pid_t gone_pid(const pid_t *pids, size_t n);
/* Let it exec; returns 0, or the child's exec errno (positive). */
int perf_child_go(struct perf_child *c);
/* The exit code that passes a child's wait status on: its exit status, or
 * 128 + the signal that ended it. */
int perf_child_code(int status);
/* Kill and reap a child that will not be let go. */
void perf_child_abort(struct perf_child *c);

/* SIGINT/SIGTERM/SIGCHLD/SIGALRM stop this monitor (NULL to detach). */
void perf_cli_signals(struct rtd_perf_monitor *m, double duration_s);
/* True once SIGCHLD has been seen. */
bool perf_cli_child_exited(void);
/* The cli_fail() message for a library error. */
int perf_cli_fail(struct rtd_perf_monitor *m, const char *what, int err);

int perf_trace_main(int argc, char **argv);
int perf_stat_main(int argc, char **argv);
int perf_list_main(int argc, char **argv);
int perf_record_main(int argc, char **argv);
extern const struct cli_cmd perf_cmd_record;
extern const struct cli_cmd perf_cmd_stat;
extern const struct cli_cmd perf_cmd_list;
extern const struct cli_cmd perf_cmd_trace;

#endif
