/* SPDX-License-Identifier: MIT */
/* cli_format.c - one way for every command to pick and write a format. */
#include "cli_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opt.h"
#include "rtdiag/format.h"

const char *cli_format_names(unsigned allow)
{
	if (allow == CLI_FMT_PROFILE)
		return "folded|pprof|top|svg|speedscope";
	if (allow == CLI_FMT_TIMELINE)
		return "perfetto|chrome-json";
	return "folded|pprof|top|svg|speedscope|perfetto|chrome-json";
}

/* A name to a format of the allowed kinds; kind 0 when none fits. */
static struct cli_format by_name(const char *name, unsigned allow)
{
	struct cli_format f = {0};
	if (!name)
		return f;
	if (allow & CLI_FMT_TIMELINE) {
		f.tl = rtd_timeline_format_from_name(name);
		/* "json" alone is a timeline only where a profile is not */
		if (f.tl && !(!strcmp(name, "json") && (allow & CLI_FMT_PROFILE))) {
			f.kind = CLI_FMT_TIMELINE;
			return f;
		}
		f.tl = RTD_TIMELINE_FMT_NONE;
	}
	if (allow & CLI_FMT_PROFILE) {
		f.prof = rtd_profile_format_from_name(name);
		if (!f.prof && !strcmp(name, "json"))
			f.prof = RTD_PROFILE_FMT_SPEEDSCOPE;
		if (f.prof)
			f.kind = CLI_FMT_PROFILE;
	}
	return f;
}

/* The extensions of the table that a command of ALLOW can write, for a
 * message: ".folded .pb.gz ...". */
static void ext_list(unsigned allow, char *buf, size_t n)
{
	size_t cnt, len = 0;
	const struct rtd_format_ext *t = rtd_format_ext_table(&cnt);
	buf[0] = 0;
	for (size_t i = 0; i < cnt && len < n; i++) {
		unsigned k = t[i].kind == RTD_FORMAT_TEXT ? CLI_FMT_PROFILE
			     : t[i].kind == RTD_FORMAT_PROFILE ? CLI_FMT_PROFILE
			     : t[i].kind == RTD_FORMAT_TIMELINE ? CLI_FMT_TIMELINE : 0;
		if (k & allow)
			len += (size_t)snprintf(buf + len, n - len, "%s%s",
						len ? " " : "", t[i].ext);
	}
}

int cli_format_ext(const char *cmd, const char *path, unsigned allow,
		   struct cli_format *out)
{
	memset(out, 0, sizeof(*out));
	const struct rtd_format_ext *x = cli_out_is_stdout(path)
						 ? NULL : rtd_format_ext_of(path);
	if (!x)
		return 0; /* none, or one the table does not know: the default */
	char exts[256];
	ext_list(allow, exts, sizeof(exts));
	if (x->kind == RTD_FORMAT_FOREIGN) {
		cli_usage(cmd, "%s: '%s' is %s, which rtdiag does not draw (it "
			  "writes %s; or give --format)", path, x->ext, x->what,
			  exts);
		return -1;
	}
	if ((x->kind & (RTD_FORMAT_PROFILE | RTD_FORMAT_TEXT)) &&
	    (allow & CLI_FMT_PROFILE)) {
		out->kind = CLI_FMT_PROFILE;
		out->prof = x->profile;
		return 0;
	}
	if (x->kind == RTD_FORMAT_TIMELINE && (allow & CLI_FMT_TIMELINE)) {
		out->kind = CLI_FMT_TIMELINE;
		out->tl = x->timeline;
		return 0;
	}
	cli_usage(cmd, "%s: '%s' is %s, which this cannot write (it writes "
		  "%s)%s", path, x->ext, x->what, exts,
		  !strcmp(x->ext, ".json") && (allow & CLI_FMT_PROFILE)
			  ? "; a speedscope profile is .speedscope.json" : "");
	return -1;
}

int cli_format_recording(const char *cmd, const char *path, const char *what)
{
	const struct rtd_format_ext *x = cli_out_is_stdout(path)
						 ? NULL : rtd_format_ext_of(path);
	if (!x || x->kind == RTD_FORMAT_DATA)
		return 0;
	cli_usage(cmd, "%s: '%s' is %s; this writes %s", path, x->ext, x->what,
		  what);
	return -1;
}

int cli_format_pick(const char *cmd, const char *name, const char *path,
		    unsigned allow, const char *dflt, struct cli_format *out)
{
	memset(out, 0, sizeof(*out));
	if (name) {
		*out = by_name(name, allow);
		if (!out->kind) {
			cli_usage(cmd, "--format must be %s (not '%s')",
				  cli_format_names(allow), name);
			return -1;
		}
		return 0;
	}
	if (cli_format_ext(cmd, path, allow, out))
		return -1;
	if (out->kind)
		return 0;
	*out = by_name(dflt, allow);
	return out->kind ? 0 : -1;
}

bool cli_format_binary(const struct cli_format *f)
{
	return (f->kind == CLI_FMT_PROFILE && f->prof == RTD_PROFILE_FMT_PPROF) ||
	       (f->kind == CLI_FMT_TIMELINE && f->tl == RTD_TIMELINE_FMT_PERFETTO);
}

static const char *fmt_name(const struct cli_format *f)
{
	return f->kind == CLI_FMT_TIMELINE ? rtd_timeline_format_name(f->tl)
					   : rtd_profile_format_name(f->prof);
}

/* Binary output to a terminal helps nobody. */
static int refuse_tty(const struct cli_format *f, const char *path)
{
	if (cli_out_is_stdout(path) && cli_format_binary(f) &&
	    isatty(fileno(stdout)))
		return cli_fail("%s output is binary: use -o FILE or a pipe",
				fmt_name(f));
	return 0;
}

int cli_write_profile(const rtd_profile *p, const struct cli_format *f,
		      const char *path, const struct rtd_profile_write_opts *o)
{
	if (refuse_tty(f, path))
		return CLI_FAIL;
	struct cli_out out;
	if (cli_out_open(&out, path ? path : "-"))
		return CLI_FAIL;
	int err = rtd_profile_write(p, f->prof, out.f, o);
	if (err) {
		cli_out_abort(&out);
		return cli_fail("%s: writing %s: %s (nothing written; an "
				"existing file is unchanged)",
				path ? path : "stdout", fmt_name(f),
				rtd_strerror(err));
	}
	return cli_out_commit(&out) ? CLI_FAIL : CLI_OK;
}

int cli_timeline_open(struct cli_timeline *t, const struct cli_format *f,
		      const char *path)
{
	memset(t, 0, sizeof(*t));
	if (refuse_tty(f, path))
		return -1;
	if (cli_out_open(&t->out, path ? path : "-"))
		return -1;
	struct rtd_timeline_opts o = {.sz = sizeof(o), .format = f->tl,
				      .out = t->out.f};
	t->tl = rtd_timeline_new(&o);
	if (!t->tl) {
		cli_out_abort(&t->out);
		cli_fail("out of memory");
		return -1;
	}
	return 0;
}

bool cli_timeline_failed(const struct cli_timeline *t)
{
	return t->out.f && ferror(t->out.f);
}

int cli_timeline_close(struct cli_timeline *t, bool keep)
{
	int err = rtd_timeline_finish(t->tl);
	rtd_timeline_free(t->tl);
	t->tl = NULL;
	if (err || !keep) {
		cli_out_abort(&t->out);
		if (err)
			return cli_fail("%s: writing the timeline: %s (nothing "
					"written; an existing file is unchanged)",
					t->out.path ? t->out.path : "stdout",
					rtd_strerror(err));
		return CLI_FAIL;
	}
	return cli_out_commit(&t->out) ? CLI_FAIL : CLI_OK;
}
