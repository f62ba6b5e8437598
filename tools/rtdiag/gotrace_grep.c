/* SPDX-License-Identifier: MIT */
/* gotrace_grep.c - 'rtdiag gotrace grep' (tracegrep). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gotrace_cli.h"
#include "opt.h"
#include "out.h"


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
 * cat prints them); a duration with a unit or a fraction ("1.5s",
 * "200ms", "1.5", "hh:mm:ss") a time after the trace's first event. */
static int parse_time(const char *s, int64_t *t, bool *from_start)
{
	long long v;
	double sec;
	if (cli_parse_int(s, &v) == 0 && strchr(s, 'x') == NULL && strchr(s, 'X') == NULL) {
		*t = v;
		*from_start = false;
		return 0;
	}
	*from_start = true;
	return cli_parse_duration(s, &sec, t);
}

enum {
	G_TYPE = 1, G_G, G_P, G_M, G_SINCE, G_UNTIL, G_STACK, G_STRING, G_INVERT, G_COUNT,
	G_ORDERED, G_OUT,
};

static const struct cli_opt grep_opts[] = {
	{G_TYPE, "event", 'e', CLI_ARG_STR, CLI_OPT_REPEAT, "REGEXP",
	 "events whose name matches (extended regexp)", 0, 0},
	CLI_OLD(G_TYPE, "type", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "REGEXP",
		"--event REGEXP (--type is a profile's kind)", 0, 0),
	{G_G, "goroutine", 'G', CLI_ARG_INT, CLI_OPT_REPEAT, "G", "events of goroutine G", 0, 0},
	CLI_OLD(G_G, NULL, 'g', CLI_ARG_INT, CLI_OPT_REPEAT, "G",
		"-G G (-g is call stacks, as perf's)", 0, 0),
	{G_P, "proc", 'P', CLI_ARG_INT, CLI_OPT_REPEAT, "P", "events on P", 0, 0},
	CLI_OLD(G_P, NULL, 'p', CLI_ARG_INT, CLI_OPT_REPEAT, "P",
		"-P P (-p is a process id)", 0, 0),
	{G_M, "thread", 'M', CLI_ARG_INT, CLI_OPT_REPEAT, "M",
	 "events on thread M (old format: of the P's last ProcStart)", 0, 0},
	CLI_OLD(G_M, NULL, 'm', CLI_ARG_INT, CLI_OPT_REPEAT, "M",
		"-M M (-m is --mmap-pages)", 0, 0),
	{G_SINCE, "since", 0, CLI_ARG_STR, 0, "T", "events at T or later", 0, 0},
	{G_UNTIL, "until", 0, CLI_ARG_STR, 0, "T", "events at T or earlier", 0, 0},
	{G_STACK, "stack", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "REGEXP",
	 "events with a frame 'FUNC FILE:LINE' or '0xPC' that matches", 0, 0},
	{G_STRING, "string", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "REGEXP",
	 "events with a string argument that matches", 0, 0},
	{G_INVERT, "invert", 'v', CLI_ARG_NONE, 0, NULL, "the events that do not match", 0, 0},
	{G_COUNT, "count", 'c', CLI_ARG_NONE, 0, NULL, "print how many match", 0, 0},
	{G_ORDERED, "ordered", 0, CLI_ARG_NONE, 0, NULL,
	 "filter Go's ordered events (Go 1.22+: their G and P are known only so)", 0, 0},
	{G_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write the matching events, with the strings and stacks they use, as a trace "
	 "of the same version", 0, 0},
	{0},
};

static int gt_cmd_grep(int argc, char **argv);

const struct cli_cmd gt_grep_def = {
	"gotrace grep", "FILE|-",
	"Print the events that match, count them (-c), or write them as a trace (-o).\n"
	"A filter given twice matches either value; different filters must all match.",
	grep_opts, 1, 1, 0, gt_cmd_grep,
	"Raw mode by default; --ordered filters Go's ordered events. In raw mode the G\n"
	"and P of a Go 1.22+ event are not known: -g/-p then match CPU samples only,\n"
	"with a warning. T: a whole number is a time as cat prints it (raw: ticks,\n"
	"ordered: ns); a duration (1.5s, 200ms, 1.5, hh:mm:ss) a time after the trace's\n"
	"first event (raw mode then reads a FILE twice).\n"
	"-o replaces FILE only with a result (a failure leaves it as it was). Go 1.22+\n"
	"with -o: the kept events stay in their batches (times recomputed), with each\n"
	"generation's frequency/sync batch and only the strings and stacks they use;\n"
	"--ordered -o (FILE only) matches in Go's order, then keeps those events; Go's\n"
	"synthetic events count for the event they come from.\n"
	"Examples:\n"
	"  rtdiag gotrace grep -e '^GoBlock' -e '^GoUnblock' --stack 'main\\.worker' t.trace\n"
	"  rtdiag gotrace grep --ordered -g 7 --since 1.5s --until 2s t.trace\n"};

struct grep_opts {
	const char *path, *out;
	bool count, ordered;
};

static int opt_value(struct grep *gr, int id, const struct cli_val *v)
{
	static const enum rtd_gotrace_filter_id ids[] = {
		[G_G] = RTD_GOTRACE_FILTER_G, [G_P] = RTD_GOTRACE_FILTER_P,
		[G_M] = RTD_GOTRACE_FILTER_M};
	static const enum rtd_gotrace_filter_re res[] = {
		[G_TYPE] = RTD_GOTRACE_FILTER_TYPE, [G_STACK] = RTD_GOTRACE_FILTER_STACK,
		[G_STRING] = RTD_GOTRACE_FILTER_STRING};
	int rc = 0;
	bool rel;
	int64_t t;
	switch (id) {
	case G_TYPE:
	case G_STACK:
	case G_STRING:
		if (rtd_gotrace_filter_add_regex(gr->f, res[id], v->str) < 0)
			return cli_cmd_usage(&gt_grep_def, "--%s: %s", v->opt->name,
					     rtd_gotrace_filter_error(gr->f));
		return CLI_OK;
	case G_G:
	case G_P:
	case G_M:
		rc = rtd_gotrace_filter_add_id(gr->f, ids[id], v->i);
		return rc < 0 ? cli_fail("out of memory") : CLI_OK;
	case G_SINCE:
	case G_UNTIL:
		if (parse_time(v->str, &t, &rel) < 0)
			return cli_cmd_usage(&gt_grep_def, "--%s takes a time in the trace's units (as cat prints it) or a duration from its start (1.5s, 200ms, 1:30), not '%s'",
					     v->opt->name, v->str);
		rtd_gotrace_filter_set_time(gr->f, id == G_UNTIL, t, rel);
		return CLI_OK;
	case G_INVERT:
		rtd_gotrace_filter_set_invert(gr->f, true);
		return CLI_OK;
	}
	return CLI_OK;
}

/* Options: -1 to go on, else the exit code. */
static int parse(struct grep *gr, struct grep_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	struct cli_val v;
	int id, rc = CLI_OK;
	cli_opt_init(&p, &gt_grep_def, argc, argv);
	while (rc == CLI_OK && (id = cli_opt_next(&p, &v)) > 0) {
		if (id == G_COUNT)
			o->count = true;
		else if (id == G_ORDERED)
			o->ordered = true;
		else if (id == G_OUT)
			o->out = v.str;
		else
			rc = opt_value(gr, id, &v);
	}
	if (rc != CLI_OK)
		return rc;
	if (id < 0)
		return cli_opt_exit(id);
	o->path = p.pos[0];
	if (o->count && o->out)
		return cli_cmd_usage(&gt_grep_def, "-c and -o do not go together");
	if (o->ordered && o->out && strcmp(o->path, "-") == 0)
		return cli_cmd_usage(&gt_grep_def, "--ordered with -o needs a FILE: a first pass finds the matching events in Go's order, a second writes them from the file's batches");
	return -1;
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
static int run_events(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
		      rtd_gotrace_text *t, uint64_t *nmatch, bool *in_err)
{
	struct rtd_gotrace_event ev;
	bool filtered = rtd_gotrace_filter_active(gr->f);
	int r, rc = CLI_OK;
	bool first = true;
	uint64_t nread = 0;
	while ((r = gt_next(in, &ev)) > 0) {
		if (first && (rc = check(gr, o, in)) != CLI_OK)
			return rc;
		first = false;
		nread++;
		bool m = rtd_gotrace_filter_match(gr->f, gt_dec(in), &ev);
		*nmatch += m;
		if (!o->out) {
			if (m && !o->count)
				rtd_gotrace_text_event(t, &ev);
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
	/* damage after events: they were searched, exit 3 */
	return r < 0 ? gt_exit(in, r, nread) : CLI_OK;
}

static int run(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
	       uint64_t *nmatch, bool *in_err)
{
	rtd_gotrace_text *t = gt_text_new(stdout, GT_TEXT, o->ordered, false, gt_dec(in));
	if (!t)
		return CLI_FAIL;
	int rc = run_events(gr, o, in, t, nmatch, in_err);
	rtd_gotrace_text_flush(t);
	rtd_gotrace_text_free(t);
	return rc;
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

static int gt_cmd_grep(int argc, char **argv)
{
	struct grep *gr = calloc(1, sizeof(*gr));
	if (!gr || !(gr->f = rtd_gotrace_filter_new())) {
		free(gr);
		return cli_fail("out of memory");
	}
	struct grep_opts o = {0};
	int rc = parse(gr, &o, argc, argv);
	if (rc >= 0) { /* --help, or a usage error */
		rtd_gotrace_filter_free(gr->f);
		free(gr);
		return rc;
	}
	rc = o.out && cli_out_check(o.out) < 0 ? CLI_FAIL : CLI_OK;
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
		     : cli_cmd_usage(&gt_grep_def, "--since/--until with a time from the start (1.5s) need a FILE in raw mode (a first pass finds the trace's frequency and first time), or --ordered");
	uint64_t nmatch = 0;
	bool in_err = false;
	if (rc == CLI_OK)
		rc = run(gr, &o, in, &nmatch, &in_err);
	cli_progress_done();
	rc = finish_out(gr, &o, rc, in_err);
	if (o.count && (rc == CLI_OK || rc == CLI_PARTIAL))
		printf("%" PRIu64 "\n", nmatch);
	if (in) {
		gt_close(in);
		free(in);
	}
	rtd_gotrace_filter_free(gr->f);
	free(gr);
	if ((rc == CLI_OK || rc == CLI_PARTIAL) && fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return rc;
}
