/* SPDX-License-Identifier: MIT */
/*
 * gotrace_analyze.c - 'rtdiag gotrace pprof|goroutines|gc|tasks': the
 * library's analyses (rtdiag/goanalysis.h) over one ordered pass of a
 * trace, printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "gotrace_analyze.h"
#include "gotrace_cli.h"
#include "opt.h"
#include "out.h"
#include "rtdiag/format.h"
#include "rtdiag/goan_table.h"
#include "rtdiag/goanalysis.h"
#include "rtdiag/profile.h"

/* ---- shared --------------------------------------------------------------- */

/* Go's time.Duration.String() of @d into @buf, returned */
static const char *go_dur(int64_t d, char *buf, size_t len)
{
	rtd_goan_duration_str(d, buf, len);
	return buf;
}

static void put_json_str(FILE *o, const char *s)
{
	if (rtd_format_json_str(o, s) < 0)
		fputs("\"\"", o);
}

enum { SEM_AUTO = 0 };

/* --go CHOICE index -> semantics */
static const unsigned go_sem[] = {RTD_GOAN_GO119, RTD_GOAN_GO122, RTD_GOAN_GO123};
#define GO_OPT(id)                                                             \
	{id, "go", 0, CLI_ARG_CHOICE, 0, "1.19|1.22|1.23",                     \
	 "answer as that Go's 'go tool trace' (default: the trace's own)", 0, 0}

#define THREADS_OPT(id)                                                        \
	{id, "threads", 0, CLI_ARG_INT, 0, "N",                                \
	 "2: a Go 1.22+ trace is ordered on one thread, analysed on another; 1: one thread (default: 2 when a core is idle by the 1-minute load average, RTDIAG_THREADS=1|2 overriding)", \
	 1, 2}

/* rtd_goan_run()'s flags: --threads, else cli_second_thread_pays() */
static unsigned run_flags = RTD_GOAN_RUN_THREAD;
static bool threads_given;

/* One analysis run over FILE: the ordered events into rtd_goan. */
struct run {
	const char *path;
	struct gt_in *in;
	rtd_goan *a;
	int dec_rc;   /* the decoder's error, 0 at a clean end */
	uint64_t dec_off;
	char dec_msg[512];
};

/* Read and analyse the whole trace. Returns 0 when the run happened (the
 * decoder's error, if any, is in r->dec_rc), or an exit code. */
static int next_event(void *in, struct rtd_gotrace_event *ev)
{
	return gt_next_quiet(in, ev);
}

static int run_trace(struct run *r, const char *path, struct rtd_goan_opts *o,
		     const rtd_goan **pa)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->in = malloc(gt_in_size());
	if (!r->in)
		return cli_fail("out of memory");
	if (gt_open(r->in, path, RTD_GOTRACE_ORDERED, 0) < 0) {
		free(r->in);
		r->in = NULL;
		return CLI_FAIL;
	}
	struct rtd_gotrace_event ev;
	int rc = 0;
	if (gt_prime_header(r->in) < 0 || rtd_gotrace_dec_version(gt_dec(r->in)) == 0) {
		rc = gt_next_quiet(r->in, &ev);
		if (rc >= 0) /* an empty input */
			return cli_fail("%s: not a Go execution trace (no header)", path);
		gt_report(r->in, rc);
		return CLI_FAIL;
	}
	r->a = rtd_goan_new(gt_dec(r->in), o);
	if (!r->a)
		return cli_fail("%s: %s", path, rtd_goan_new_error());
	if (pa)
		*pa = r->a;
	/* Go 1.22+: ordering on a thread of its own, the analyses on this
	 * one, when --threads 2 says so or a core is free for it */
	if (!threads_given)
		run_flags = cli_second_thread_pays() ? RTD_GOAN_RUN_THREAD : 0;
	/* next_event() passes the decoder's events through without reading
	 * them: they may cross to the analyses in the ordering's form */
	int arc = rtd_goan_run(r->a, next_event, r->in, run_flags | RTD_GOAN_RUN_DEC_NEXT, &rc);
	cli_progress_done();
	if (arc < 0)
		return cli_fail("%s: analysis: %s", path, rtd_goan_error(r->a));
	if (rc < 0) {
		r->dec_rc = rc;
		const char *m = rtd_gotrace_dec_error(gt_dec(r->in), &r->dec_off);
		snprintf(r->dec_msg, sizeof(r->dec_msg), "%s", *m ? m : rtd_strerror(rc));
	}
	if (rtd_goan_finish(r->a) < 0)
		return cli_fail("%s: analysis: %s", path, rtd_goan_error(r->a));
	return 0;
}

/* After the output: the decoder's error, if any. Returns the exit code. */
static int run_end(struct run *r)
{
	int code = CLI_OK;
	if (r->dec_rc < 0) {
		int ver = rtd_gotrace_dec_version(gt_dec(r->in));
		uint64_t n = rtd_goan_trace_bounds(r->a, NULL, NULL);
		fprintf(stderr, "rtdiag: %s: %s (at byte %" PRIu64 ")\n", r->path, r->dec_msg,
			r->dec_off);
		if (ver < 1022 && n == 0)
			fprintf(stderr, "rtdiag: %s: a Go 1.5-1.21 trace is ordered from its end (the runtime writes the clock frequency and the stacks last; 'go tool trace' refuses it too); nothing could be analysed\n",
				r->path);
		else
			fprintf(stderr, "rtdiag: %s: the answers above cover the %" PRIu64 " events before it\n",
				r->path, n);
		code = gt_exit(r->in, r->dec_rc, n);
	}
	if (r->a)
		rtd_goan_free(r->a);
	if (r->in) {
		gt_close(r->in);
		free(r->in);
	}
	return code;
}

static void run_abort(struct run *r)
{
	rtd_goan_free(r->a);
	if (r->in) {
		gt_close(r->in);
		free(r->in);
	}
}

/* Times in the output: seconds since the trace's first event. */
static double since(const rtd_goan *a, int64_t t)
{
	int64_t first;
	rtd_goan_trace_bounds(a, &first, NULL);
	return (double)(t - first) / 1e9;
}

/* ---- pprof -------------------------------------------------------------------- */

static const char *const prof_names[RTD_GOAN_PROF_COUNT] = {"cpu", "net", "sync", "syscall", "sched"};


struct toprow {
	const char *name;
	int64_t flat, cum;
};

static int cmp_top(const void *a, const void *b)
{
	const struct rtd_profile_entry *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int write_top(FILE *f, rtd_profile *p, const rtd_goan *a, unsigned which)
{
	uint64_t count;
	int64_t ns;
	rtd_goan_profile_total(a, which, &count, &ns);
	char b[40];
	fprintf(f, "%s profile: %" PRIu64 " %s, total %s\n", prof_names[which], count,
		which == RTD_GOAN_PROF_CPU ? "samples" : "events", go_dur(ns, b, sizeof(b)));
	size_t max = 50;
	struct rtd_profile_entry *e = calloc(max, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int n = rtd_profile_top(p, e, max);
	if (n < 0) {
		free(e);
		return n;
	}
	qsort(e, (size_t)n, sizeof(*e), cmp_top);
	fprintf(f, "%14s %6s %6s %14s %6s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "function");
	int64_t sum = 0;
	for (int i = 0; i < n; i++) {
		char fb[40], cb[40];
		sum += e[i].self;
		double t = ns ? (double)ns : 1;
		fprintf(f, "%14s %5.1f%% %5.1f%% %14s %5.1f%%  %s\n", go_dur(e[i].self, fb, sizeof(fb)),
			100.0 * (double)e[i].self / t, 100.0 * (double)sum / t,
			go_dur(e[i].total, cb, sizeof(cb)), 100.0 * (double)e[i].total / t, e[i].name);
	}
	free(e);
	return 0;
}

/* --format raw: the records exactly, one per line: COUNT, NS, then the
 * frames leaf first as "0xPC FUNCTION FILE:LINE", tab-separated */
static int raw_rec(const struct rtd_goframe *f, size_t n, uint64_t count, int64_t ns, void *ctx)
{
	FILE *o = ctx;
	fprintf(o, "%" PRIu64 "\t%" PRId64, count, ns);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "\t0x%" PRIx64 " %s %s:%" PRIu64, f[i].pc, f[i].fn, f[i].file, f[i].line);
	fputc('\n', o);
	return ferror(o) ? -EIO : 0;
}

enum { PP_TYPE = 1, PP_FORMAT, PP_OUT, PP_GO, PP_THREADS };
static const struct cli_opt pprof_opts[] = {
	{PP_TYPE, "type", 't', CLI_ARG_CHOICE, 0, "cpu|net|sync|syscall|sched",
	 "the profile (required)", 0, 0},
	{PP_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "pprof|folded|top|raw",
	 "output format (default: pprof with -o, else top)", 0, 0},
	{PP_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE", "write to FILE (replaced only when complete)", 0, 0},
	GO_OPT(PP_GO),
	THREADS_OPT(PP_THREADS),
	{0},
};
const struct cli_cmd gt_pprof_cmd = {
	"gotrace pprof", "FILE|-",
	"Blocking and CPU profiles, as 'go tool trace -pprof=TYPE' gives them.\n"
	"Streaming: where goroutines waited, by the stack where the wait began: net,\n"
	"sync, syscall, sched; cpu: the trace's CPU samples (10 ms each).",
	pprof_opts, 1, 1, 0, gt_cmd_pprof,
	"The same events, stacks and totals as the 'go tool trace' of the trace's Go:\n"
	"Go 1.19's for Go 1.5-1.21 traces, Go 1.23's for Go 1.22+.\n"
	"raw: each stack's count and nanoseconds, then its frames leaf first as\n"
	"'0xPC FUNCTION FILE:LINE', tab-separated.\n"};

int gt_cmd_pprof(int argc, char **argv)
{
	static const char *const fmts[] = {"pprof", "folded", "top", "raw"};
	const char *path, *out = NULL, *fmt = NULL;
	int which = -1;
	unsigned sem = SEM_AUTO;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &gt_pprof_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case PP_TYPE: which = (int)v.i; break;
		case PP_FORMAT: fmt = fmts[v.i]; break;
		case PP_OUT: out = v.str; break;
		case PP_GO: sem = go_sem[v.i]; break;
		case PP_THREADS: run_flags = v.i > 1 ? RTD_GOAN_RUN_THREAD : 0; threads_given = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	path = p.pos[0];
	if (which < 0)
		return cli_cmd_usage(&gt_pprof_cmd, "missing --type cpu|net|sync|syscall|sched");
	if (!fmt && !cli_out_is_stdout(out)) {
		/* the one extension table (cli_format_ext()): pprof for a
		 * name it does not know, as before */
		struct cli_format f;
		if (cli_format_ext(gt_pprof_cmd.name, out, CLI_FMT_PROFILE, &f))
			return CLI_USAGE;
		fmt = f.kind ? rtd_profile_format_name(f.prof) : "pprof";
	}
	if (!fmt)
		fmt = "top";
	bool picture = !strcmp(fmt, "svg") || !strcmp(fmt, "speedscope");
	if (strcmp(fmt, "pprof") == 0 && cli_out_is_stdout(out) && isatty(STDOUT_FILENO))
		return cli_cmd_usage(&gt_pprof_cmd, "a pprof profile is binary: give -o FILE or a pipe (or --format top|folded)");
	/* the target first: a run that cannot write fails before reading */
	if (out && cli_out_check(out))
		return CLI_FAIL;
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_PPROF,
				  .profiles = 1u << which, .semantics = sem};
	struct run r;
	int code = run_trace(&r, path, &o, NULL);
	if (code) {
		run_abort(&r);
		return code;
	}
	rtd_profile *prof;
	if (rtd_goan_profile_build(r.a, (unsigned)which, &prof) < 0) {
		run_abort(&r);
		return cli_fail("out of memory");
	}
	if (picture) {
		/* the title says whose and how long: the trace (Go writes no
		 * process name into it) and its span */
		int64_t first, last;
		rtd_goan_trace_bounds(r.a, &first, &last);
		struct rtd_profile_meta m = {.sz = sizeof(m), .source = "gotrace",
					     .process = path,
					     .duration_nanos = last > first ? last - first : 0};
		rtd_profile_set_meta(prof, &m);
	}
	/* the pprof, folded, top and raw forms are go tool trace's, which
	 * writes a profile with no samples as such; a picture of nothing is
	 * refused, as convert does */
	if (picture && !rtd_profile_total(prof)) {
		rtd_profile_free(prof);
		run_abort(&r);
		return cli_fail("%s: no samples of this type (%s not written)",
				path, out);
	}
	struct cli_out of;
	int rc = cli_out_open(&of, out ? out : "-");
	if (rc == 0) {
		if (picture)
			rc = rtd_profile_write(prof, rtd_profile_format_from_name(fmt),
					       of.f, NULL);
		else if (strcmp(fmt, "pprof") == 0)
			rc = rtd_profile_write_pprof(prof, of.f);
		else if (strcmp(fmt, "folded") == 0)
			rc = rtd_profile_write_folded(prof, of.f);
		else if (strcmp(fmt, "raw") == 0)
			rc = rtd_goan_profile_foreach(r.a, (unsigned)which, raw_rec, of.f);
		else
			rc = write_top(of.f, prof, r.a, (unsigned)which);
		if (rc < 0) {
			cli_out_abort(&of);
			rc = cli_fail("%s: %s", out ? out : "stdout", rtd_strerror(rc));
		} else {
			rc = cli_out_commit(&of) < 0 ? CLI_FAIL : 0;
		}
	} else {
		rc = CLI_FAIL;
	}
	rtd_profile_free(prof);
	int end = run_end(&r);
	return rc ? rc : end;
}

/* ---- goroutines -------------------------------------------------------------- */


struct gctx {
	bool by_region;
	size_t limit;
	rtd_goan_table *groups;
	const rtd_goan *a;
};

static void on_goroutine(const struct rtd_goan_goroutine *go, void *ctx)
{
	struct gctx *g = ctx;
	rtd_goan_table_add_goroutine(g->groups, g->a, go);
}

static void on_region(const struct rtd_goan_region *rg, void *ctx)
{
	struct gctx *g = ctx;
	rtd_goan_table_add_region(g->groups, g->a, rg);
}

/* One group's rows as JSON objects, after the group's own. */
static void print_group_json(FILE *f, const struct gctx *g, const struct rtd_goan_table_group *gr)
{
	fputs(g->by_region ? "{\"region_type\":" : "{\"group\":", f);
	put_json_str(f, gr->name);
	if (g->by_region) {
		fputs(",\"frame\":", f);
		put_json_str(f, gr->frame);
	}
	fprintf(f, ",\"pc\":%" PRIu64 ",\"count\":%" PRIu64 ",\"exec_ns\":%" PRId64
		   ",\"total_ns\":%" PRId64 "}\n", gr->pc, gr->count, gr->exec, gr->total);
	for (size_t k = 0; k < gr->nrows; k++) {
		const struct rtd_goan_table_row *r = &gr->rows[k];
		fprintf(f, "{\"%s\":%" PRIu64, g->by_region ? "region_of" : "goroutine", r->id);
		fputs(g->by_region ? ",\"region_type\":" : ",\"group\":", f);
		put_json_str(f, gr->name);
		if (g->by_region)
			fprintf(f, ",\"pc\":%" PRIu64 ",\"task\":%" PRIu64, gr->pc, r->task);
		fprintf(f, ",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",\"total_ns\":%" PRId64
			   ",\"stats\":{", r->start, r->end, r->total);
		for (size_t s = 0; s < r->nstats; s++) {
			if (s)
				fputc(',', f);
			put_json_str(f, r->stats[s].name);
			fprintf(f, ":%" PRId64, r->stats[s].ns);
		}
		fputs("}}\n", f);
	}
}

/* One group as a table: its line, the columns' heads, a line per row. */
static void print_group_text(FILE *f, const struct gctx *g, const struct rtd_goan_table_group *gr,
			     size_t i, int64_t exec_all)
{
	char b1[40], b2[40];
	const char *const *cols = gr->columns;
	size_t nc = gr->ncolumns;
	if (g->by_region)
		fprintf(f, "%s%s (at %s): %" PRIu64 " regions, %s in all, execution %s\n",
			i ? "\n" : "", *gr->name ? gr->name : "(task inherited from the creator)",
			*gr->frame ? gr->frame : "no stack", gr->count,
			go_dur(gr->total, b1, sizeof(b1)), go_dur(gr->exec, b2, sizeof(b2)));
	else
		fprintf(f, "%s%s: %" PRIu64 " goroutines, execution %s (%.2f%% of the program's)\n",
			i ? "\n" : "", *gr->name ? gr->name : "(no stack showed the start function)",
			gr->count, go_dur(gr->exec, b1, sizeof(b1)),
			exec_all ? 100.0 * (double)gr->exec / (double)exec_all : 0.0);
	fprintf(f, "  %12s %14s", g->by_region ? "goroutine" : "goroutine",
		g->by_region ? "duration" : "total");
	/* each cell: the time, and its share of the row's total */
	for (size_t c = 0; c < nc; c++)
		fprintf(f, " %*s", (int)(strlen(cols[c]) > 20 ? strlen(cols[c]) : 20), cols[c]);
	fputc('\n', f);
	for (size_t k = 0; k < gr->nrows; k++) {
		const struct rtd_goan_table_row *r = &gr->rows[k];
		fprintf(f, "  %12" PRIu64 " %14s", r->id, go_dur(r->total, b1, sizeof(b1)));
		for (size_t c = 0; c < nc; c++) {
			bool have;
			int64_t v = rtd_goan_table_row_stat(r, cols[c], &have);
			int w = (int)(strlen(cols[c]) > 20 ? strlen(cols[c]) : 20);
			char cell[64];
			if (!have)
				snprintf(cell, sizeof(cell), "-");
			else if (r->total > 0)
				snprintf(cell, sizeof(cell), "%s %5.1f%%", go_dur(v, b2, sizeof(b2)),
					 100.0 * (double)v / (double)r->total);
			else
				snprintf(cell, sizeof(cell), "%s", go_dur(v, b2, sizeof(b2)));
			fprintf(f, " %*s", w, cell);
		}
		fputc('\n', f);
	}
	if (gr->count > gr->nrows)
		fprintf(f, "  ... %" PRIu64 " more (--limit)\n", gr->count - gr->nrows);
}

static void print_groups(FILE *f, struct gctx *g, bool json)
{
	size_t n = rtd_goan_table_count(g->groups);
	int64_t exec_all = 0;
	for (size_t i = 0; i < n; i++)
		exec_all += rtd_goan_table_get(g->groups, i)->exec;
	for (size_t i = 0; i < n; i++) {
		const struct rtd_goan_table_group *gr = rtd_goan_table_get(g->groups, i);
		if (json)
			print_group_json(f, g, gr);
		else
			print_group_text(f, g, gr, i, exec_all);
	}
}

enum { GR_GROUP = 1, GR_SORT, GR_LIMIT, GR_JSON, GR_GO, GR_THREADS };
static const struct cli_opt goroutines_opts[] = {
	{GR_GROUP, "group-by", 0, CLI_ARG_CHOICE, 0, "start-function|region",
	 "group goroutines by start function (default), or list regions by type", 0, 0},
	{GR_SORT, "sort", 0, CLI_ARG_STR, 0, "STAT",
	 "sort rows by total (default) or a column ('Execution time', exec, sched, ...)", 0, 0},
	{GR_LIMIT, "top", 0, CLI_ARG_INT, 0, "N", "rows per group (default 20; 0: all)", 0, 1e12},
	CLI_OLD(GR_LIMIT, "limit", 'n', CLI_ARG_INT, 0, "N",
		"--top N (-n is --name)", 0, 1e12),
	{GR_JSON, "json", 0, CLI_ARG_NONE, 0, NULL, "one JSON object per group and per row, times in ns", 0, 0},
	GO_OPT(GR_GO),
	THREADS_OPT(GR_THREADS),
	{0},
};
const struct cli_cmd gt_goroutines_cmd = {
	"gotrace goroutines", "FILE|-",
	"Goroutine analysis, as 'go tool trace' gives it.\n"
	"Streaming: each goroutine's time in the trace and where it went (execution,\n"
	"scheduler wait, blocked by reason, syscalls, GC ranges) with its share, grouped\n"
	"by start function and sorted by execution time as Go's page; or each user\n"
	"region, grouped by type.",
	goroutines_opts, 1, 1, 0, gt_cmd_goroutines,
	"Memory follows the live goroutines and the rows kept (--limit per group).\n"};

int gt_cmd_goroutines(int argc, char **argv)
{
	const char *path;
	struct gctx g = {0};
	g.limit = 20;
	const char *sort = NULL;
	bool json = false;
	unsigned sem = SEM_AUTO;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &gt_goroutines_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case GR_GROUP: g.by_region = v.i == 1; break;
		case GR_SORT: sort = v.str; break;
		case GR_LIMIT: g.limit = (size_t)v.i; break;
		case GR_JSON: json = true; break;
		case GR_GO: sem = go_sem[v.i]; break;
		case GR_THREADS: run_flags = v.i > 1 ? RTD_GOAN_RUN_THREAD : 0; threads_given = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	path = p.pos[0];
	struct rtd_goan_table_opts go = {.sz = sizeof(go), .sort = sort, .limit = g.limit,
					 .flags = g.by_region ? RTD_GOAN_TABLE_REGIONS : 0};
	int e = rtd_goan_table_new(&go, &g.groups);
	if (e)
		return cli_fail("%s", rtd_strerror(e));
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GOROUTINES, .semantics = sem,
				  .ctx = &g};
	if (g.by_region)
		o.on_region = on_region;
	else
		o.on_goroutine = on_goroutine;
	struct run r;
	int code = run_trace(&r, path, &o, &g.a);
	if (!code && (e = rtd_goan_table_finish(g.groups, r.a)) != 0)
		code = e == -RTD_E_CAP ? cli_fail("%s: more than %d groups", path, RTD_GOAN_TABLE_MAX_GROUPS)
				       : cli_fail("%s", e == -ENOMEM ? "out of memory" : rtd_strerror(e));
	if (code) {
		run_abort(&r);
		rtd_goan_table_free(g.groups);
		return code;
	}
	if (!json) {
		int64_t first, last;
		uint64_t n = rtd_goan_trace_bounds(r.a, &first, &last);
		char b[40];
		uint64_t total = 0;
		size_t ngroups = rtd_goan_table_count(g.groups);
		for (size_t i = 0; i < ngroups; i++)
			total += rtd_goan_table_get(g.groups, i)->count;
		printf("%" PRIu64 " %s in %zu %s; %" PRIu64 " events over %s; Go %s's analysis\n\n",
		       total, g.by_region ? "regions" : "goroutines", ngroups,
		       g.by_region ? "region types" : "groups by start function", n,
		       go_dur(last - first, b, sizeof(b)),
		       rtd_goan_semantics(r.a) == RTD_GOAN_GO119 ? "1.19"
		       : rtd_goan_semantics(r.a) == RTD_GOAN_GO122 ? "1.22" : "1.23");
	}
	print_groups(stdout, &g, json);
	rtd_goan_table_free(g.groups);
	if (fflush(stdout) != 0) {
		run_abort(&r);
		return cli_fail("stdout: %s", strerror(errno));
	}
	return run_end(&r);
}

/* ---- rows in start order --------------------------------------------------------- */

/* GC cycles and pauses, tasks and regions come to their callbacks as they
 * end; go tool trace and a reader list them as they start. Each row is
 * written to memory with its start and printed, sorted, at the end. */
struct out_row {
	int64_t start; /* INT64_MIN: began before the trace */
	size_t seq;
	char *text;
	size_t len;
};
struct rows {
	struct out_row *v;
	size_t n, cap;
	int err;
	char *buf; /* the row being written */
	size_t len;
};

static FILE *row_open(struct rows *r)
{
	r->buf = NULL;
	r->len = 0;
	FILE *o = open_memstream(&r->buf, &r->len);
	if (!o)
		r->err = -errno;
	return o;
}

static void row_close(struct rows *r, FILE *o, int64_t start)
{
	if (fclose(o) != 0 && !r->err)
		r->err = -errno;
	if (!r->len || r->err) {
		free(r->buf);
		return;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct out_row *v = realloc(r->v, cap * sizeof(*v));
		if (!v) {
			free(r->buf);
			r->err = -ENOMEM;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n] = (struct out_row){start < 0 ? INT64_MIN : start, r->n, r->buf, r->len};
	r->n++;
}

static int cmp_out_row(const void *a, const void *b)
{
	const struct out_row *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Write one row with write() and keep it with its start. */
static void emit_row(struct rows *r, int64_t start,
		     void (*write)(const void *item, void *ctx, FILE *o),
		     const void *item, void *ctx)
{
	FILE *o = row_open(r);
	if (!o)
		return;
	write(item, ctx, o);
	row_close(r, o, start);
}

/* Print the rows by start (equal starts as they came) and free them. */
static void rows_flush(struct rows *r, FILE *f)
{
	if (r->n) /* no rows: r->v is NULL, which qsort may not be given */
		qsort(r->v, r->n, sizeof(*r->v), cmp_out_row);
	for (size_t i = 0; i < r->n; i++) {
		fwrite(r->v[i].text, 1, r->v[i].len, f);
		free(r->v[i].text);
	}
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

/* ---- gc ------------------------------------------------------------------------ */


struct gcctx {
	bool json, summary;
	const rtd_goan *a;
	uint64_t cycles, pauses, gc_pauses;
	int64_t cycle_ns, cycle_max, pause_ns, pause_max;
	struct rows rows;
};

static void gc_row(const void *item, void *ctx, FILE *o)
{
	const struct rtd_goan_gc *gc = item;
	struct gcctx *g = ctx;
	int64_t first, last;
	rtd_goan_trace_bounds(g->a, &first, &last);
	int64_t s = gc->start >= 0 ? gc->start : first, e = gc->end >= 0 ? gc->end : last;
	int64_t d = e - s;
	if (gc->stw) {
		g->pauses++;
		g->gc_pauses += gc->gc;
		g->pause_ns += d;
		if (d > g->pause_max)
			g->pause_max = d;
	} else {
		g->cycles++;
		g->cycle_ns += d;
		if (d > g->cycle_max)
			g->cycle_max = d;
	}
	if (g->summary)
		return;
	char b[40];
	if (g->json) {
		fprintf(o, "{\"kind\":\"%s\",\"seq\":%" PRIu64 ",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64
		       ",\"duration_ns\":%" PRId64 ",\"before_trace\":%s,\"after_trace\":%s",
		       gc->stw ? "stw" : "gc", gc->seq, s, e, d, gc->start < 0 ? "true" : "false",
		       gc->end < 0 ? "true" : "false");
		if (gc->stw) {
			fputs(",\"reason\":", o);
			put_json_str(o, gc->reason);
			fprintf(o, ",\"gc\":%s", gc->gc ? "true" : "false");
		}
		fputs("}\n", o);
		return;
	}
	if (gc->stw)
		fprintf(o, "STW %-6" PRIu64 " at %12.9fs%s  %12s  %s%s\n", gc->seq, since(g->a, s),
		       gc->start < 0 ? "*" : " ", go_dur(d, b, sizeof(b)),
		       *gc->reason ? gc->reason : "(kind not in the trace)", gc->end < 0 ? " (not ended)" : "");
	else
		fprintf(o, "GC  %-6" PRIu64 " at %12.9fs%s  %12s%s\n", gc->seq, since(g->a, s),
		       gc->start < 0 ? "*" : " ", go_dur(d, b, sizeof(b)),
		       gc->end < 0 ? "  (not ended when the trace did)" : "");
}

static void on_gc(const struct rtd_goan_gc *gc, void *ctx)
{
	emit_row(&((struct gcctx *)ctx)->rows, gc->start, gc_row, gc, ctx);
}

static int parse_windows(const char *s, int64_t *w, size_t max, size_t *n)
{
	*n = 0;
	char buf[64];
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len == 0 || len >= sizeof(buf) || *n >= max)
			return -1;
		memcpy(buf, s, len);
		buf[len] = 0;
		double sec;
		int64_t ns;
		if (cli_parse_duration(buf, &sec, &ns) < 0 || ns <= 0)
			return -1;
		w[(*n)++] = ns;
		s += len;
		if (*s == ',')
			s++;
	}
	return *n ? 0 : -1;
}

enum { GC_MMU = 1, GC_UTIL, GC_PERPROC, GC_SUMMARY, GC_JSON, GC_GO, GC_THREADS };
static const struct cli_opt gc_opts[] = {
	{GC_MMU, "mmu", 0, CLI_ARG_STR, 0, "WINDOWS",
	 "MMU window sizes, comma-separated durations (default 1ms,10ms,100ms,1s)", 0, 0},
	{GC_UTIL, "util", 0, CLI_ARG_STR, 0, "stw,background,assist,sweep",
	 "what takes the mutator's time (default stw,background,assist)", 0, 0},
	{GC_PERPROC, "per-proc", 0, CLI_ARG_NONE, 0, NULL,
	 "one utilization per P (the MMU page's per-goroutine view)", 0, 0},
	{GC_SUMMARY, "summary", 0, CLI_ARG_NONE, 0, NULL, "totals and MMU only", 0, 0},
	{GC_JSON, "json", 0, CLI_ARG_NONE, 0, NULL, "one JSON object per cycle/pause, then the summary", 0, 0},
	GO_OPT(GC_GO),
	THREADS_OPT(GC_THREADS),
	{0},
};
const struct cli_cmd gt_gc_cmd = {
	"gotrace gc", "FILE|-",
	"GC cycles, stop-the-world pauses and the minimum mutator utilization.\n"
	"Every GC cycle and pause with its start and duration, in start order, then\n"
	"totals and the MMU as 'go tool trace''s MMU page computes it.",
	gc_opts, 1, 1, 0, gt_cmd_gc, NULL};

/* --util's list (stw,background,assist,sweep, split by , or |) into *flags;
 * -1 once the refusal is printed. */
static int parse_util(const char *arg, unsigned *flags)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok(buf, ",|"); t; t = strtok(NULL, ",|")) {
		if (strcmp(t, "stw") == 0)
			*flags |= RTD_GOAN_UTIL_STW;
		else if (strcmp(t, "background") == 0)
			*flags |= RTD_GOAN_UTIL_BACKGROUND;
		else if (strcmp(t, "assist") == 0)
			*flags |= RTD_GOAN_UTIL_ASSIST;
		else if (strcmp(t, "sweep") == 0)
			*flags |= RTD_GOAN_UTIL_SWEEP;
		else
			return cli_cmd_usage(&gt_gc_cmd, "--util takes stw, background, assist, sweep, not '%s'", t), -1;
	}
	if (!*flags)
		return cli_cmd_usage(&gt_gc_cmd, "--util needs stw,background,assist,sweep"), -1;
	return 0;
}

/* The totals after the rows, and the MMU of each of the @nw windows. */
static void print_gc_summary(const struct gcctx *g, rtd_goan *a, size_t nw,
			     unsigned flags, bool perproc)
{
	int64_t first, last;
	rtd_goan_trace_bounds(a, &first, &last);
	char b1[40], b2[40], b3[40];
	if (g->json) {
		printf("{\"kind\":\"summary\",\"duration_ns\":%" PRId64 ",\"gc_cycles\":%" PRIu64
		       ",\"gc_ns\":%" PRId64 ",\"gc_max_ns\":%" PRId64 ",\"pauses\":%" PRIu64
		       ",\"pause_ns\":%" PRId64 ",\"pause_max_ns\":%" PRId64 ",\"mmu\":[",
		       last - first, g->cycles, g->cycle_ns, g->cycle_max, g->pauses, g->pause_ns, g->pause_max);
		for (size_t i = 0; i < nw; i++) {
			int64_t w;
			double m = rtd_goan_mmu(a, i, &w);
			printf("%s{\"window_ns\":%" PRId64 ",\"mmu\":", i ? "," : "", w);
			if (m < 0)
				fputs("null}", stdout);
			else
				printf("%.17g}", m);
		}
		fputs("]}\n", stdout);
	} else {
		if (!g->summary && (g->cycles || g->pauses))
			fputc('\n', stdout);
		int64_t dur = last - first;
		printf("trace:       %s\n", go_dur(dur, b1, sizeof(b1)));
		printf("GC cycles:   %" PRIu64 ", %s in all (%.2f%% of the trace), longest %s\n", g->cycles,
		       go_dur(g->cycle_ns, b1, sizeof(b1)),
		       dur > 0 ? 100.0 * (double)g->cycle_ns / (double)dur : 0.0,
		       go_dur(g->cycle_max, b2, sizeof(b2)));
		printf("STW pauses:  %" PRIu64 " (%" PRIu64 " of GC), %s in all, longest %s, mean %s\n",
		       g->pauses, g->gc_pauses, go_dur(g->pause_ns, b1, sizeof(b1)),
		       go_dur(g->pause_max, b2, sizeof(b2)),
		       go_dur(g->pauses ? g->pause_ns / (int64_t)g->pauses : 0, b3, sizeof(b3)));
		printf("MMU (%s%s%s%s%s):\n", flags & RTD_GOAN_UTIL_STW ? "stw " : "",
		       flags & RTD_GOAN_UTIL_BACKGROUND ? "background " : "",
		       flags & RTD_GOAN_UTIL_ASSIST ? "assist " : "",
		       flags & RTD_GOAN_UTIL_SWEEP ? "sweep " : "",
		       perproc ? "per-proc" : "system");
		for (size_t i = 0; i < nw; i++) {
			int64_t w;
			double m = rtd_goan_mmu(a, i, &w);
			if (m < 0)
				printf("  %10s  unknown (no GOMAXPROCS event)\n", go_dur(w, b1, sizeof(b1)));
			else
				printf("  %10s  %6.2f%%\n", go_dur(w, b1, sizeof(b1)), 100.0 * m);
		}
	}
}

int gt_cmd_gc(int argc, char **argv)
{
	const char *path;
	struct gcctx g = {0};
	unsigned sem = SEM_AUTO, flags = 0;
	bool perproc = false;
	static int64_t windows[1024];
	size_t nwin = 0;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &gt_gc_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case GC_MMU:
			if (parse_windows(v.str, windows, 1024, &nwin) < 0)
				return cli_cmd_usage(&gt_gc_cmd, "--mmu takes durations, comma-separated: 1ms,10ms,100ms,1s (at most 1024)");
			break;
		case GC_UTIL:
			if (parse_util(v.str, &flags) < 0)
				return CLI_USAGE;
			break;
		case GC_PERPROC: perproc = true; break;
		case GC_SUMMARY: g.summary = true; break;
		case GC_JSON: g.json = true; break;
		case GC_GO: sem = go_sem[v.i]; break;
		case GC_THREADS: run_flags = v.i > 1 ? RTD_GOAN_RUN_THREAD : 0; threads_given = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	path = p.pos[0];
	if (!flags)
		flags = RTD_GOAN_UTIL_DEFAULT;
	if (perproc)
		flags |= RTD_GOAN_UTIL_PERPROC;
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GC, .semantics = sem,
				  .mmu_flags = flags, .on_gc = on_gc, .ctx = &g};
	if (nwin) {
		o.mmu_windows = windows;
		o.n_mmu_windows = nwin;
	}
	struct run r;
	int code = run_trace(&r, path, &o, &g.a);
	rows_flush(&g.rows, stdout); /* what came, also of a cut trace */
	if (!code && g.rows.err)
		code = cli_fail("gc rows: %s", strerror(-g.rows.err));
	if (code) {
		run_abort(&r);
		return code;
	}
	print_gc_summary(&g, r.a, nwin ? nwin : 4, flags, perproc);
	if (fflush(stdout) != 0) {
		run_abort(&r);
		return cli_fail("stdout: %s", strerror(errno));
	}
	return run_end(&r);
}

/* ---- tasks --------------------------------------------------------------------- */


struct ttype {
	const char *name;
	uint64_t count, complete;
	int64_t sum, max;
	struct ttype *next;
};

struct tctx {
	bool json, regions;
	const rtd_goan *a;
	struct ttype *types;
	int err;
	struct rows rows;
};

static void print_stats(FILE *o, const struct rtd_goan_stat *st, size_t n, bool json)
{
	char b[40];
	for (size_t i = 0; i < n; i++) {
		if (json) {
			if (i)
				fputc(',', o);
			put_json_str(o, st[i].name);
			fprintf(o, ":%" PRId64, st[i].ns);
		} else if (st[i].ns) {
			fprintf(o, "  %s %s", st[i].name, go_dur(st[i].ns, b, sizeof(b)));
		}
	}
}

static void task_row(const void *item, void *ctx, FILE *o)
{
	const struct rtd_goan_task *t = item;
	struct tctx *c = ctx;
	int64_t first, last;
	rtd_goan_trace_bounds(c->a, &first, &last);
	int64_t s = t->start >= 0 ? t->start : first, e = t->end >= 0 ? t->end : last;
	bool complete = t->start >= 0 && t->end >= 0;
	struct ttype *ty = c->types;
	while (ty && strcmp(ty->name, t->name) != 0)
		ty = ty->next;
	if (!ty) {
		ty = calloc(1, sizeof(*ty));
		if (!ty) {
			c->err = -ENOMEM;
			return;
		}
		ty->name = t->name;
		ty->next = c->types;
		c->types = ty;
	}
	ty->count++;
	if (complete) {
		ty->complete++;
		ty->sum += e - s;
		if (e - s > ty->max)
			ty->max = e - s;
	}
	char b[40];
	if (c->json) {
		fprintf(o, "{\"task\":%" PRIu64 ",\"type\":", t->id);
		put_json_str(o, t->name);
		fprintf(o, ",\"parent\":%" PRIu64 ",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64
		       ",\"duration_ns\":%" PRId64 ",\"complete\":%s,\"goroutines\":%" PRIu64
		       ",\"regions\":%" PRIu64 ",\"logs\":%" PRIu64 ",\"stats\":{",
		       t->parent, s, e, e - s, complete ? "true" : "false", t->goroutines, t->regions,
		       t->logs);
		print_stats(o, t->stats, t->nstats, true);
		fputs("}}\n", o);
		return;
	}
	fprintf(o, "task %-6" PRIu64 " %-20s at %12.9fs  %12s  %s", t->id,
	       *t->name ? t->name : "\"\"", since(c->a, s), go_dur(e - s, b, sizeof(b)),
	       complete ? "complete" : t->start < 0 ? "began before the trace" : "not ended");
	if (t->parent)
		fprintf(o, "  parent %" PRIu64, t->parent);
	fprintf(o, "  goroutines %" PRIu64 "  regions %" PRIu64 "  logs %" PRIu64 "\n", t->goroutines,
	       t->regions, t->logs);
	if (t->regions) {
		fputs("    in its regions:", o);
		print_stats(o, t->stats, t->nstats, false);
		fputc('\n', o);
	}
}

static void on_task(const struct rtd_goan_task *t, void *ctx)
{
	emit_row(&((struct tctx *)ctx)->rows, t->start, task_row, t, ctx);
}

static void region_row(const void *item, void *ctx, FILE *o)
{
	const struct rtd_goan_region *rg = item;
	struct tctx *c = ctx;
	int64_t first, last;
	rtd_goan_trace_bounds(c->a, &first, &last);
	int64_t s = rg->start >= 0 ? rg->start : first, e = rg->end >= 0 ? rg->end : last;
	char b[40];
	if (c->json) {
		fprintf(o, "{\"region\":");
		put_json_str(o, rg->name);
		fprintf(o, ",\"goroutine\":%" PRIu64 ",\"task\":%" PRIu64 ",\"start_ns\":%" PRId64
		       ",\"end_ns\":%" PRId64 ",\"duration_ns\":%" PRId64 ",\"stats\":{",
		       rg->g, rg->task, s, e, e - s);
		print_stats(o, rg->stats, rg->nstats, true);
		fputs("}}\n", o);
		return;
	}
	fprintf(o, "  region %-20s g %-8" PRIu64 " task %-6" PRIu64 " at %12.9fs  %12s", 
	       *rg->name ? rg->name : "(inherited)", rg->g, rg->task, since(c->a, s),
	       go_dur(e - s, b, sizeof(b)));
	print_stats(o, rg->stats, rg->nstats, false);
	fputc('\n', o);
}

static void on_task_region(const struct rtd_goan_region *rg, void *ctx)
{
	emit_row(&((struct tctx *)ctx)->rows, rg->start, region_row, rg, ctx);
}

static int cmp_type(const void *a, const void *b)
{
	return strcmp((*(struct ttype *const *)a)->name, (*(struct ttype *const *)b)->name);
}

enum { TK_REGIONS = 1, TK_JSON, TK_GO, TK_THREADS };
static const struct cli_opt tasks_opts[] = {
	{TK_REGIONS, "regions", 0, CLI_ARG_NONE, 0, NULL, "each region too", 0, 0},
	{TK_JSON, "json", 0, CLI_ARG_NONE, 0, NULL, "one JSON object per task, region and task type", 0, 0},
	GO_OPT(TK_GO),
	THREADS_OPT(TK_THREADS),
	{0},
};
const struct cli_cmd gt_tasks_cmd = {
	"gotrace tasks", "FILE|-",
	"User tasks and regions, with durations and the time in each state.\n"
	"Each task (runtime/trace.NewTask) in start order: type, parent, start,\n"
	"duration, goroutines, regions, logs and the times its regions' goroutines\n"
	"spent in each state; then a table per task type, as the trace UI's task page.",
	tasks_opts, 1, 1, 0, gt_cmd_tasks, NULL};

int gt_cmd_tasks(int argc, char **argv)
{
	const char *path;
	struct tctx c = {0};
	unsigned sem = SEM_AUTO;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &gt_tasks_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case TK_REGIONS: c.regions = true; break;
		case TK_JSON: c.json = true; break;
		case TK_GO: sem = go_sem[v.i]; break;
		case TK_THREADS: run_flags = v.i > 1 ? RTD_GOAN_RUN_THREAD : 0; threads_given = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	path = p.pos[0];
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_TASKS, .semantics = sem,
				  .on_task = on_task, .ctx = &c};
	if (c.regions)
		o.on_region = on_task_region;
	struct run r;
	int code = run_trace(&r, path, &o, &c.a);
	rows_flush(&c.rows, stdout); /* what came, also of a cut trace */
	if (!code && c.rows.err)
		code = cli_fail("task rows: %s", strerror(-c.rows.err));
	size_t n = 0;
	for (struct ttype *t = c.types; t; t = t->next)
		n++;
	struct ttype **all = calloc(n ? n : 1, sizeof(*all));
	if (!code && !c.err && all) {
		n = 0;
		for (struct ttype *t = c.types; t; t = t->next)
			all[n++] = t;
		qsort(all, n, sizeof(*all), cmp_type);
		char b1[40], b2[40];
		if (!c.json && n) {
			printf("\n%-24s %8s %9s %14s %14s\n", "task type", "count", "complete", "mean", "max");
			for (size_t i = 0; i < n; i++)
				printf("%-24s %8" PRIu64 " %9" PRIu64 " %14s %14s\n",
				       *all[i]->name ? all[i]->name : "\"\"", all[i]->count, all[i]->complete,
				       go_dur(all[i]->complete ? all[i]->sum / (int64_t)all[i]->complete : 0,
					      b1, sizeof(b1)),
				       go_dur(all[i]->max, b2, sizeof(b2)));
		} else if (c.json) {
			for (size_t i = 0; i < n; i++) {
				fputs("{\"task_type\":", stdout);
				put_json_str(stdout, all[i]->name);
				printf(",\"count\":%" PRIu64 ",\"complete\":%" PRIu64 ",\"sum_ns\":%" PRId64
				       ",\"max_ns\":%" PRId64 "}\n", all[i]->count, all[i]->complete,
				       all[i]->sum, all[i]->max);
			}
		}
	}
	free(all);
	while (c.types) {
		struct ttype *nx = c.types->next;
		free(c.types);
		c.types = nx;
	}
	if (code) {
		run_abort(&r);
		return code;
	}
	if (c.err) {
		run_abort(&r);
		return cli_fail("out of memory");
	}
	if (fflush(stdout) != 0) {
		run_abort(&r);
		return cli_fail("stdout: %s", strerror(errno));
	}
	return run_end(&r);
}
