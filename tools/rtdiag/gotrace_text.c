/* SPDX-License-Identifier: MIT */
/* gotrace_text.c - 'rtdiag gotrace text2bin' and 'bin2text': Go's text
 * form of a trace (golang/exp trace/internal/raw) and the binary format. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_format.h"
#include "gotrace_cli.h"
#include "opt.h"
#include "out.h"

#define TEXT_CAP (256u << 20) /* the text form is for tests and debugging */

/* The output of text2bin; err keeps why a write failed (it is the
 * output's, not the input's). */
struct bin_out {
	FILE *f;
	int err;
};

static int write_file(const void *buf, size_t len, void *ctx)
{
	struct bin_out *o = ctx;
	if (fwrite(buf, 1, len, o->f) == len)
		return 0;
	o->err = errno > 0 ? -errno : -EIO; /* what the failed write(2) left */
	return o->err;
}

/* The "-- trace --" section of a txtar .test file, or the whole text. */
static void trace_section(char *text, size_t len, char **s, size_t *n)
{
	*s = text;
	*n = len;
	if (len < 3 || memcmp(text, "-- ", 3) != 0)
		return;
	const char *mark = "-- trace --";
	char *p = text;
	while (p && p < text + len) {
		if ((size_t)(text + len - p) >= strlen(mark) &&
		    memcmp(p, mark, strlen(mark)) == 0) {
			char *b = memchr(p, '\n', (size_t)(text + len - p));
			b = b ? b + 1 : text + len;
			char *e = b;
			while (e < text + len) {
				if ((size_t)(text + len - e) >= 3 && memcmp(e, "-- ", 3) == 0)
					break;
				char *nl = memchr(e, '\n', (size_t)(text + len - e));
				e = nl ? nl + 1 : text + len;
			}
			*s = b;
			*n = (size_t)(e - b);
			return;
		}
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		p = nl ? nl + 1 : NULL;
	}
}

enum { T_OUT = 1, T_GO };

static const struct cli_opt text2bin_opts[] = {
	{T_OUT, "output", 'o', CLI_ARG_STR, 0, "OUT", "the binary trace (required)", 0, 0},
	{T_GO, "go", 0, CLI_ARG_CHOICE, 0, "1.22|1.23|1.25|1.26",
	 "the version of a text without its 'Trace Go1.N' line (go tool trace -d=2 "
	 "prints none)", 0, 0},
	{0},
};

static int gt_cmd_text2bin(int argc, char **argv);

const struct cli_cmd gt_text2bin_def = {
	"gotrace text2bin", "FILE",
	"Convert Go's text form of a trace to binary.\n"
	"The text is what bin2text or go tool trace -d=2 prints, or a golang/exp .test\n"
	"file (its trace section).",
	text2bin_opts, 1, 1, 0, gt_cmd_text2bin,
	"Go 1.22's own names of CPUSample's arguments (time p g m stack, for the wire's\n"
	"time m p g stack) are read too. OUT is replaced only by a whole conversion.\n"};

static int gt_cmd_text2bin(int argc, char **argv)
{
	static const int vers[] = {1022, 1023, 1025, 1026};
	const char *in, *out = NULL;
	int ver = 0, id;
	struct cli_parser p;
	struct cli_val v;
	cli_opt_init(&p, &gt_text2bin_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (id == T_OUT)
			out = v.str;
		else
			ver = vers[v.i];
	}
	if (id < 0)
		return cli_opt_exit(id);
	in = p.pos[0];
	if (!out)
		return cli_cmd_usage(&gt_text2bin_def, "-o OUT is needed");
	if (cli_format_recording(gt_text2bin_def.name, out, "a Go execution trace"))
		return CLI_USAGE;
	if (cli_out_check(out) < 0)
		return CLI_FAIL;
	FILE *f = cli_open_in(in);
	if (!f)
		return CLI_FAIL;
	size_t cap = 1 << 16, len = 0, n;
	char *text = malloc(cap);
	while (text && (n = fread(text + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= TEXT_CAP) {
				free(text);
				cli_close_in(f);
				return cli_fail("%s: text form larger than %u MB", in, TEXT_CAP >> 20);
			}
			char *t = realloc(text, cap *= 2);
			if (!t) {
				free(text);
				text = NULL;
			} else {
				text = t;
			}
		}
	}
	cli_close_in(f);
	if (!text)
		return cli_fail("%s: out of memory", in);
	char *s;
	size_t sl;
	trace_section(text, len, &s, &sl);
	/* OUT is replaced only by a whole conversion */
	struct cli_out o;
	if (cli_out_open(&o, out) < 0) {
		free(text);
		return CLI_FAIL;
	}
	char err[512];
	struct bin_out bo = {.f = o.f};
	int rc = rtd_gotrace_text2bin_as(s, sl, ver, write_file, &bo, err, sizeof(err));
	free(text);
	if (rc < 0) {
		cli_out_abort(&o);
		if (bo.err)
			return cli_fail("%s: %s (nothing written; an existing "
					"file is unchanged)", out,
					rtd_strerror(bo.err));
		return cli_fail("%s: %s", in, err[0] ? err : rtd_strerror(rc));
	}
	return cli_out_commit(&o) < 0 ? CLI_FAIL : CLI_OK;
}

static int gt_cmd_bin2text(int argc, char **argv);

const struct cli_cmd gt_bin2text_def = {
	"gotrace bin2text", "FILE|-",
	"Print a Go 1.22+ binary trace in Go's text form.\n"
	"What go tool trace -d=2 prints, after a 'Trace Go1.N' line.",
	NULL, 1, 1, 0, gt_cmd_bin2text, NULL};

static int gt_cmd_bin2text(int argc, char **argv)
{
	const char *path = NULL;
	int rc = gt_file_only(&gt_bin2text_def, argc, argv, &path);
	if (rc >= 0)
		return rc;
	struct gt_in *in = malloc(gt_in_size());
	if (!in)
		return cli_fail("out of memory");
	if (gt_open(in, path, RTD_GOTRACE_RAW, 0) < 0) {
		free(in);
		return CLI_FAIL;
	}
	struct rtd_gotrace_event ev;
	bool hdr = false;
	while ((rc = gt_next(in, &ev)) > 0) {
		int ver = rtd_gotrace_dec_version(gt_dec(in));
		if (ver < 1022) {
			rc = cli_fail("%s: Go's text form exists for Go 1.22+ traces only; this is go %d.%d (use 'rtdiag gotrace cat')",
				      path, ver / 1000, ver % 1000);
			break;
		}
		if (!hdr) {
			rtd_gotrace_bin2text_header(stdout, ver);
			hdr = true;
		}
		rtd_gotrace_bin2text_event(stdout, &ev);
	}
	cli_progress_done();
	/* damage after events: they are printed, exit 3 */
	int code = rc > 0 ? CLI_FAIL : gt_exit(in, rc, hdr);
	gt_close(in);
	free(in);
	if (fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return code;
}
