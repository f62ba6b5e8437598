/* SPDX-License-Identifier: MIT */
/* gotrace_grep.c - 'rtdiag gotrace grep' (tracegrep). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "out.h"
#include "gotrace_cli.h"

#define CMD "gotrace grep"

struct grep {
	rtd_gotrace_filter *f;
	rtd_gotrace_filter_writer *w; /* -o */
	struct cli_out out;
	bool out_open, write_err;
	bool says_partial; /* a filtered Go 1.22+ -o says it kept what came first */
};

static int write_file(const void *buf, size_t len, void *ctx)
{
	return fwrite(buf, 1, len, (FILE *)ctx) == len ? 0 : -errno;
}

/* A time for --since/--until: a whole number is in the events' units (as
 * cat prints them); with a unit or a fraction ("1.5s", "200ms", "1.5",
 * "hh:mm:ss") a time after the trace's first event. */
static int parse_time(const char *s, int64_t *t, bool *from_start)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!errno && end != s && !*end) {
		*t = v;
		*from_start = false;
		return 0;
	}
	*from_start = true;
	return gt_parse_duration_ns(s, t);
}

static int add_id(struct grep *gr, enum rtd_gotrace_filter_id k, const char *opt,
		  const char *val)
{
	char *end;
	errno = 0;
	long long v = strtoll(val, &end, 0);
	if (errno || *end || end == val)
		return cli_usage(CMD, "%s takes a number, not '%s'", opt, val);
	return rtd_gotrace_filter_add_id(gr->f, k, v) < 0 ? cli_fail("out of memory") : CLI_OK;
}

static int add_re(struct grep *gr, enum rtd_gotrace_filter_re k, const char *opt,
		  const char *val)
{
	if (rtd_gotrace_filter_add_regex(gr->f, k, val) < 0)
		return cli_usage(CMD, "%s: %s", opt, rtd_gotrace_filter_error(gr->f));
	return CLI_OK;
}

struct grep_opts {
	const char *path, *out;
	bool count, ordered;
	bool has_since, has_until;
};

static int parse(struct grep *gr, struct grep_opts *o, int argc, char **argv)
{
	int rc = CLI_OK;
	for (int i = 1; i < argc && rc == CLI_OK; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(a, "-e") == 0 || strcmp(a, "-g") == 0 ||
			     strcmp(a, "-p") == 0 || strcmp(a, "-m") == 0 ||
			     strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0 ||
			     strcmp(a, "--stack") == 0 || strcmp(a, "--string") == 0 ||
			     strcmp(a, "-o") == 0;
		if (takes && !val)
			return cli_usage(CMD, "%s needs a value", a);
		if (takes)
			i++;
		if (strcmp(a, "-e") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_TYPE, a, val);
		} else if (strcmp(a, "--stack") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_STACK, a, val);
		} else if (strcmp(a, "--string") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_STRING, a, val);
		} else if (strcmp(a, "-g") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_G, a, val);
		} else if (strcmp(a, "-p") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_P, a, val);
		} else if (strcmp(a, "-m") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_M, a, val);
		} else if (strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0) {
			bool until = a[2] == 'u', rel;
			int64_t t;
			if (until ? o->has_until : o->has_since)
				return cli_usage(CMD, "%s given twice", a);
			if (parse_time(val, &t, &rel) < 0)
				return cli_usage(CMD, "%s takes a time in the trace's units (as cat prints it) or a duration from its start (1.5s, 200ms, 1:30), not '%s'",
						 a, val);
			rtd_gotrace_filter_set_time(gr->f, until, t, rel);
			*(until ? &o->has_until : &o->has_since) = true;
		} else if (strcmp(a, "-o") == 0) {
			o->out = val;
		} else if (strcmp(a, "-v") == 0) {
			rtd_gotrace_filter_set_invert(gr->f, true);
		} else if (strcmp(a, "-c") == 0) {
			o->count = true;
		} else if (strcmp(a, "--ordered") == 0) {
			o->ordered = true;
		} else if (takes || (a[0] == '-' && a[1])) {
			rc = cli_usage(CMD, "unknown option '%s'", a);
		} else if (o->path) {
			rc = cli_usage(CMD, "one FILE only");
		} else {
			o->path = a;
		}
	}
	if (rc == CLI_OK && !o->path)
		rc = cli_usage(CMD, "missing FILE (or - for stdin)");
	if (rc == CLI_OK && o->count && o->out)
		rc = cli_usage(CMD, "-c and -o do not go together");
	if (rc == CLI_OK && o->ordered && o->out && strcmp(o->path, "-") == 0)
		rc = cli_usage(CMD, "--ordered with -o needs a FILE: a first pass finds the matching events in Go's order, a second writes them from the file's batches");
	return rc;
}

/* After the header: what the filter cannot do with this input. */
static int check(struct grep *gr, const struct grep_opts *o, struct gt_in *in)
{
	char why[400];
	int c = rtd_gotrace_filter_check(gr->f, gt_dec(in), why, sizeof(why));
	if (c > 0)
		fprintf(stderr, "rtdiag: warning: %s: %s (use --ordered)\n", o->path, why);
	if (c >= 0)
		return CLI_OK;
	if (rtd_gotrace_dec_version(gt_dec(in)) < 1022)
		return cli_fail("%s: --stack on a Go 1.5-1.21 trace needs a FILE or --ordered: the runtime writes the stacks at the end of the trace, so raw mode reads them in a first pass",
				o->path);
	return cli_fail("%s: %s", o->path, why);
}

/* -o: where the matching events go. */
static int open_out(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
		    bool filtered)
{
	int ver = rtd_gotrace_dec_version(gt_dec(in));
	if (cli_out_open(&gr->out, o->out) < 0)
		return CLI_FAIL;
	gr->out_open = true;
	gr->says_partial = ver >= 1022 && filtered;
	if (!(gr->w = rtd_gotrace_filter_writer_new(ver, filtered, write_file, gr->out.f)))
		return cli_fail("%s: cannot write a go %d.%d trace", o->out, ver / 1000, ver % 1000);
	return CLI_OK;
}

/* The events through the filter: printed, counted or written. */
static int run(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
	       uint64_t *nmatch, bool *in_err)
{
	struct rtd_gotrace_event ev;
	struct gt_pr pr = {.fmt = GT_TEXT, .ordered = o->ordered, .d = gt_dec(in)};
	bool filtered = rtd_gotrace_filter_active(gr->f);
	int r, rc = CLI_OK;
	bool first = true;
	while ((r = gt_next(in, &ev)) > 0) {
		if (first && (rc = check(gr, o, in)) != CLI_OK)
			return rc;
		first = false;
		bool m = rtd_gotrace_filter_match(gr->f, gt_dec(in), &ev);
		*nmatch += m;
		if (!o->out) {
			if (m && !o->count)
				gt_print(stdout, &pr, &ev);
			continue;
		}
		if (!gr->w && (rc = open_out(gr, o, in, filtered)) != CLI_OK)
			return rc;
		int e = rtd_gotrace_filter_writer_event(gr->w, gt_dec(in), &ev, m);
		gr->write_err = e < 0;
		if (e < 0)
			return cli_fail("%s: writing event at offset %" PRIu64 ": %s", o->out,
					ev.off, rtd_strerror(e));
	}
	*in_err = r < 0;
	return r < 0 ? CLI_FAIL : CLI_OK;
}

static int finish_out(struct grep *gr, const struct grep_opts *o, int rc, bool in_err)
{
	if (gr->w) {
		/* Damaged input: the events before the damage are kept. */
		int e = (rc == CLI_OK || in_err) && !gr->write_err
			? rtd_gotrace_filter_writer_finish(gr->w) : 0;
		gr->write_err |= e < 0;
		if (e < 0)
			rc = cli_fail("%s: %s", o->out, rtd_strerror(e));
		else if (in_err && gr->says_partial)
			cli_fail("%s: written with the matching events before the damage", o->out);
		rtd_gotrace_filter_writer_free(gr->w);
	}
	/* OUT is replaced by a whole result, or by what came before damage
	 * in the input; never by a failed write */
	if (gr->out_open) {
		if (rc == CLI_OK || (in_err && !gr->write_err)) {
			if (cli_out_commit(&gr->out) < 0)
				rc = CLI_FAIL;
		} else {
			cli_out_abort(&gr->out);
		}
	}
	return rc;
}

int gt_cmd_grep(int argc, char **argv)
{
	struct grep *gr = calloc(1, sizeof(*gr));
	if (!gr || !(gr->f = rtd_gotrace_filter_new())) {
		free(gr);
		return cli_fail("out of memory");
	}
	struct grep_opts o = {0};
	int rc = parse(gr, &o, argc, argv);
	if (rc == CLI_OK && o.out && cli_out_check(o.out) < 0)
		rc = CLI_FAIL;
	struct gt_in *in = NULL;
	if (rc == CLI_OK && o.ordered && o.out) {
		/* Go 1.22+: match in Go's order (G and P known), keep by offset. */
		in = malloc(gt_in_size());
		if (!in || gt_open(in, o.path, RTD_GOTRACE_RAW, 0) < 0) {
			free(in);
			in = NULL;
			rc = CLI_FAIL;
		} else if (rtd_gotrace_filter_keep_ordered(gr->f, gt_read_at, in) < 0) {
			rc = cli_fail("%s: %s", o.path, rtd_gotrace_filter_error(gr->f));
		}
		if (in)
			gt_close(in);
		free(in);
		in = NULL;
		o.ordered = false;
	}
	enum rtd_gotrace_mode mode = o.ordered ? RTD_GOTRACE_ORDERED : RTD_GOTRACE_RAW;
	if (rc == CLI_OK) {
		in = malloc(gt_in_size());
		if (!in || gt_open(in, o.path, mode, RTD_GOTRACE_RESOLVE) < 0) {
			free(in);
			in = NULL;
			rc = CLI_FAIL;
		}
	}
	if (rc == CLI_OK &&
	    rtd_gotrace_filter_prepare(gr->f, mode, gt_in_is_file(in) ? gt_read_at : NULL, in) < 0)
		rc = gt_in_is_file(in)
		     ? cli_fail("%s: %s", o.path, rtd_gotrace_filter_error(gr->f))
		     : cli_usage(CMD, "--since/--until with a time from the start (1.5s) need a FILE in raw mode (a first pass finds the trace's frequency and first time), or --ordered");
	uint64_t nmatch = 0;
	bool in_err = false;
	if (rc == CLI_OK)
		rc = run(gr, &o, in, &nmatch, &in_err);
	gt_flush();
	cli_progress_done();
	rc = finish_out(gr, &o, rc, in_err);
	if (o.count && rc == CLI_OK)
		printf("%" PRIu64 "\n", nmatch);
	if (in) {
		gt_close(in);
		free(in);
	}
	rtd_gotrace_filter_free(gr->f);
	free(gr);
	if (rc == CLI_OK && fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return rc;
}
