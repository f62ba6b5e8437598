/* SPDX-License-Identifier: MIT */
/* gotrace_cli.h - what the 'rtdiag gotrace' files share. */
#ifndef RTD_GOTRACE_CLI_H
#define RTD_GOTRACE_CLI_H
#include <stdbool.h>
#include <stdio.h>

#include "rtdiag/gotrace.h"

enum gt_format { GT_TEXT, GT_JSON, GT_GODEBUG };

struct gt_in;
int gt_open(struct gt_in *in, const char *path, enum rtd_gotrace_mode mode,
	    unsigned flags);
bool gt_in_is_file(const struct gt_in *in);
/* Reads a regular file opened by gt_open() again (rtd_gotrace_read_at_fn). */
int64_t gt_read_at(void *buf, size_t len, uint64_t off, void *ctx);
int gt_parse_duration_ns(const char *s, int64_t *ns);
void gt_close(struct gt_in *in);
int gt_next(struct gt_in *in, struct rtd_gotrace_event *ev);
int gt_next_quiet(struct gt_in *in, struct rtd_gotrace_event *ev);
int gt_report(struct gt_in *in, int rc);
int gt_fail(struct gt_in *in, int rc);
int gt_prime_header(struct gt_in *in);
size_t gt_in_size(void);
rtd_gotrace_dec *gt_dec(struct gt_in *in);
/* How events are printed: the format, whether they are in Go's order (the
 * new format's G and P are known only then), and with --stacks the frames
 * of each stack an event names, from the decoder's tables. */
struct gt_pr {
	enum gt_format fmt;
	bool ordered;
	bool stacks;
	rtd_gotrace_dec *d;
};
void gt_print(FILE *o, const struct gt_pr *pr, const struct rtd_gotrace_event *ev);
/* Write out what gt_print() buffered: before any other output to its FILE. */
void gt_flush(void);
int gt_parse_format(const char *s, enum gt_format *f);
bool gt_is_meta(const struct rtd_gotrace_event *ev);

int gt_cmd_grep(int argc, char **argv);

/* gotrace_pipe.c: decoding on a thread of its own (old format, ordered
 * mode; NULL otherwise). gt_pipe_next: as gt_next, the event valid until
 * the next call. */
struct gt_pipe;
struct gt_pipe *gt_pipe_start(struct gt_in *in, enum rtd_gotrace_mode mode);
int gt_pipe_next(struct gt_pipe *p, const struct rtd_gotrace_event **ev);
void gt_pipe_stop(struct gt_pipe *p);

/* gotrace_grep2.c: filtered -o for the new format */
struct g2w;
struct g2w *g2w_new(FILE *of, int ver);
int g2w_event(struct g2w *w, const struct rtd_gotrace_event *ev, bool keep);
int g2w_finish(struct g2w *w);
uint64_t g2w_written(const struct g2w *w);
void g2w_free(struct g2w *w);
int gt_cmd_text2bin(int argc, char **argv);
int gt_cmd_bin2text(int argc, char **argv);
#endif
