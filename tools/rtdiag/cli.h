/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the command groups of the rtdiag CLI share.
 *
 * Each group lives in its own file (dotnet.c, nettrace.c, perf.c,
 * gotrace.c) and exports one struct cli_group, listed once in main.c.
 * Exit codes: 0 success, 1 failure, 2 bad usage, 3 incomplete but kept.
 */
#ifndef RTD_CLI_H
#define RTD_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* CLI_PARTIAL: the command kept an incomplete result (a trace whose
 * stream ended early is written, and says so). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_PARTIAL = 3 };

struct cli_cmd;

struct cli_group {
	const char *name;
	const char *summary; /* one line for `rtdiag --help` */
	/* argv[0] is the group name; returns an exit code */
	int (*run)(int argc, char **argv);
	/* full help for the group, or for one subcommand when sub != NULL;
	 * returns false when sub is unknown */
	bool (*help)(FILE *f, const char *sub);
	/* its commands, NULL-terminated, their option tables filled: what
	 * `rtdiag help --options` lists (docs/options.md) */
	const struct cli_cmd *const *(*cmds)(void);
};

extern const struct cli_group cli_group_dotnet;
extern const struct cli_group cli_group_nettrace;
extern const struct cli_group cli_group_perf;
extern const struct cli_group cli_group_gotrace;
extern const struct cli_group cli_group_agent;
extern const struct cli_group cli_group_convert;
extern const struct cli_group cli_group_record;

/* "rtdiag CMD: MESSAGE" + "Try 'rtdiag help CMD'." on stderr; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "rtdiag: MESSAGE" on stderr; returns 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* True when stderr is a terminal: long work shows progress there only. */
bool cli_progress_enabled(void);
/* Whether a command may decode on a second thread: not with
 * RTDIAG_THREADS=1 in the environment. Call it before that thread starts:
 * it also settles cli_progress_enabled(), which is not decided on a
 * thread. */
bool cli_threads_allowed(void);
/* Whether a Go 1.22+ trace's ordering on a second thread pays: it costs
 * ~10-20% more CPU (the events cross between the cores' caches) and
 * saves wall time only when a core is free. RTDIAG_THREADS=1 or 2
 * decides; else yes when two CPUs are online and the 1-minute load
 * average leaves one idle. Measured: bench/pictures/threads.sh (Go
 * timeline, 34 MB trace) and bench/gotrace/analysis.sh (pprof sync, 100
 * MB trace, quiet machine: 0.86-0.92 s wall / 1.5-1.6 s CPU on two
 * threads, 1.1 / 1.1 on one; at load 3+ on 2 cores two were no faster). Settles
 * cli_progress_enabled() too, as cli_threads_allowed() does. */
bool cli_second_thread_pays(void);
/* Rewrite the progress line on stderr (no-op when not a terminal). */
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clear the progress line. */
void cli_progress_done(void);
/* Open FILE for reading, "-" meaning stdin; on failure prints the error
 * and returns NULL. */
FILE *cli_open_in(const char *path);
/* Close what cli_open_in gave (never closes stdin). */
void cli_close_in(FILE *f);
/* What cli_nettrace_cpu() met: *read_err a read of @in failed (errno in
 * the result), @msg the source's message otherwise ("" for none). */
struct cli_nt_end {
	bool read_err;
	char msg[256];
};
/* Give @prof (a rtd_nettrace_profiler *) every record of the nettrace
 * stream on @in (@first/@nfirst: its bytes already read) through a
 * nettrace source of samples alone; a regular file shows its progress.
 * *@src gets the source, whose method table names @prof's frames: give
 * it to cli_nettrace_done() after the profile is built.
 * Returns 0, or the first error (the stream's, a read's: @end says). */
struct rtd_nettrace_profiler;
struct rtd_source;
int cli_nettrace_cpu(FILE *in, const char *path, const uint8_t *first,
		     size_t nfirst, struct rtd_nettrace_profiler *prof,
		     struct rtd_source **src, struct cli_nt_end *end);
/* A nettrace source's bytes (rtd_nettrace_read_fn): @first/@nfirst (what
 * was sniffed), then the rest of @f, a regular file or a pipe alike; a
 * terminal shows the bytes read unless @quiet. */
struct cli_nt_reader {
	FILE *f;
	const char *path;
	const uint8_t *first;
	size_t nfirst;
	uint64_t total;
	unsigned tick;
	bool read_err;
	bool quiet;
};
int64_t cli_nt_read(void *ctx, void *buf, size_t len);
/* Free what cli_nettrace_cpu() made. */
void cli_nettrace_done(struct rtd_source *src, struct cli_nt_end *end);
/* Is this argument "-h" or "--help"? */
bool cli_is_help(const char *arg);
/* Format a byte count as "12.3 MB" into buf. */
const char *cli_bytes(double n, char *buf, size_t len);
/* perf's --call-graph value, "fp", "dwarf", "dwarf,SIZE" (the user stack
 * bytes copied, 8 to 65528) or "none": *MODE an enum rtd_perf_callgraph,
 * *STACK SIZE or left as it was. Returns 0, or -1 (nothing else). */
int cli_callgraph(const char *s, int *mode, unsigned *stack);
/* The command line as typed, "rtdiag perf record -g -p 42" (PREFIX then
 * argv[1..]; perf.data's HEADER_CMDLINE), in a new string; NULL on ENOMEM. */
char *cli_cmdline(const char *prefix, int argc, char **argv);



/* For a group whose module has not landed: help lists what is planned,
 * running any subcommand says so and fails. Removed as groups land. */
int cli_unbuilt_run(const char *group, const char *const *subs, int argc,
		    char **argv);
bool cli_unbuilt_help(FILE *f, const char *group, const char *const *subs,
		      const char *sub);
#endif /* RTD_CLI_H */
