/* SPDX-License-Identifier: MIT */
/* gotrace_analyze.h - 'rtdiag gotrace' analyses and live capture. */
#ifndef RTD_GOTRACE_ANALYZE_H
#define RTD_GOTRACE_ANALYZE_H

int gt_cmd_pprof(int argc, char **argv);
int gt_cmd_goroutines(int argc, char **argv);
int gt_cmd_gc(int argc, char **argv);
int gt_cmd_tasks(int argc, char **argv);
int gt_cmd_capture(int argc, char **argv);

extern const char gt_usage_pprof[], gt_usage_goroutines[], gt_usage_gc[],
	gt_usage_tasks[], gt_usage_capture[];

#endif
