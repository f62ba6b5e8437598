/* SPDX-License-Identifier: MIT */
/* gotrace_cli.h - what the 'rtdiag gotrace' files share. */
#ifndef RTD_GOTRACE_CLI_H
#define RTD_GOTRACE_CLI_H
#include <stdbool.h>
#include <stdio.h>

#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_text.h"

enum gt_format { GT_TEXT, GT_JSON, GT_GODEBUG };

struct gt_in;
int gt_open(struct gt_in *in, const char *path, enum rtd_gotrace_mode mode,
	    unsigned flags);
bool gt_in_is_file(const struct gt_in *in);
/* Reads a regular file opened by gt_open() again (rtd_gotrace_read_at_fn). */
int64_t gt_read_at(void *buf, size_t len, uint64_t off, void *ctx);
void gt_close(struct gt_in *in);
int gt_next(struct gt_in *in, struct rtd_gotrace_event *ev);
int gt_next_quiet(struct gt_in *in, struct rtd_gotrace_event *ev);
int gt_report(struct gt_in *in, int rc);
int gt_fail(struct gt_in *in, int rc);
/* The exit code after reading stopped with @rc (reported already):
 * CLI_OK for rc >= 0; CLI_PARTIAL when the input was damaged or cut
 * (the decoder's error, or a read error) after @delivered events were
 * handed on; else CLI_FAIL. */
int gt_exit(struct gt_in *in, int rc, uint64_t delivered);
int gt_prime_header(struct gt_in *in);
size_t gt_in_size(void);
rtd_gotrace_dec *gt_dec(struct gt_in *in);
/* A text writer of events (rtdiag/gotrace_text.h) to @o: the format,
 * whether they are in Go's order (the new format's G and P are known only
 * then), and with --stacks the frames of each stack an event names, from
 * @d's tables. NULL (told) when out of memory. */
rtd_gotrace_text *gt_text_new(FILE *o, enum gt_format fmt, bool ordered, bool stacks,
			      rtd_gotrace_dec *d);

/* The commands of other files (opt.h's struct cli_cmd). */
struct cli_cmd;
/* Parse the arguments of a command that takes a FILE and no option:
 * -1 with *path set, or the exit code (--help, a usage error). */
int gt_file_only(const struct cli_cmd *def, int argc, char **argv, const char **path);
extern const struct cli_cmd gt_grep_def, gt_text2bin_def, gt_bin2text_def;
#endif
