/* SPDX-License-Identifier: MIT */
/* gotrace_analyze.h - 'rtdiag gotrace' analyses and live capture. */
#ifndef RTD_GOTRACE_ANALYZE_H
#define RTD_GOTRACE_ANALYZE_H

int gt_cmd_pprof(int argc, char **argv);
int gt_cmd_goroutines(int argc, char **argv);
int gt_cmd_gc(int argc, char **argv);
int gt_cmd_tasks(int argc, char **argv);
int gt_cmd_capture(int argc, char **argv);

/* The commands as opt.h describes them (options, help), for a group
 * table built on cli_group_run(). */
struct cli_cmd;
extern const struct cli_cmd gt_pprof_cmd, gt_goroutines_cmd, gt_gc_cmd, gt_tasks_cmd,
	gt_capture_cmd;

/* Their help as one text, for gotrace.c's table until it uses the
 * cli_cmd entries (kept in step with them). */
extern const char gt_usage_pprof[], gt_usage_goroutines[], gt_usage_gc[],
	gt_usage_tasks[], gt_usage_capture[];

#endif
