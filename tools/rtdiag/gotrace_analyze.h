/* SPDX-License-Identifier: MIT */
/* gotrace_analyze.h - 'rtdiag gotrace' analyses and live capture. */
#ifndef RTD_GOTRACE_ANALYZE_H
#define RTD_GOTRACE_ANALYZE_H

int gt_cmd_pprof(int argc, char **argv);
int gt_cmd_goroutines(int argc, char **argv);
int gt_cmd_gc(int argc, char **argv);
int gt_cmd_tasks(int argc, char **argv);
int gt_cmd_capture(int argc, char **argv);

/* The commands as opt.h describes them (options, help), listed in
 * gotrace.c's group table. */
struct cli_cmd;
extern const struct cli_cmd gt_pprof_cmd, gt_goroutines_cmd, gt_gc_cmd, gt_tasks_cmd,
	gt_capture_cmd;

#endif
