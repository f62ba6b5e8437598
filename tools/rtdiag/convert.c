/* SPDX-License-Identifier: MIT */
/*
 * convert.c - `rtdiag convert IN -o OUT`: any input rtdiag reads to any
 * output that fits it. The input's format is named by its bytes
 * (rtd_format_detect(): a Go execution trace, an EventPipe stream, a pprof
 * profile, folded stacks); anything else is refused before anything is
 * written. The output format comes from --format or OUT's extension by
 * the library's one table (cli_format.h); a profile with no samples is
 * refused rather than drawn empty.
 *
 *   Go trace  -> perfetto, chrome-json (the goroutine/P/M timeline);
 *                folded, pprof, top, svg, speedscope (its CPU samples)
 *   nettrace  -> folded, pprof, top, svg, speedscope (its CPU samples);
 *                perfetto, chrome-json (threads, GC, JIT, ... as a timeline)
 *   pprof, folded -> folded, pprof, top, svg, speedscope
 *   perf.data -> folded, pprof, top, svg, speedscope (one event's
 *                samples); perfetto, chrome-json (samples, tracepoints,
 *                switches) - convert_perfdata.c
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "convert_perfdata.h"
#include "opt.h"
#include "rtdiag/format.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"
#include "rtdiag/timeline.h"
#include "rtdiag/gotrace_profile.h"

static int firefox_of_trace(const char *path, enum rtd_input_format kind, const char *outp);

enum { OPT_OUT = 1, OPT_FORMAT, OPT_TYPE, OPT_TITLE, OPT_INVERTED,
       OPT_WIDTH, OPT_MIN_WIDTH, OPT_THREADS, OPT_NO_INLINE, OPT_EVENT };

static const struct cli_opt convert_opts[] = {
	{OPT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write to FILE (- or none: standard output)", 0, 0},
	{OPT_FORMAT, "format", 'f', CLI_ARG_STR, 0, "FORMAT",
	 "folded|pprof|top|svg|speedscope|perfetto|chrome-json, firefox (perf.data: "
	 "the Firefox Profiler's) (default: from FILE's extension)", 0, 0},
	{OPT_TYPE, "type", 't', CLI_ARG_STR, 0, "TYPE",
	 "the sample type one-value formats show (alloc_space, cpu, ...)", 0, 0},
	{OPT_TITLE, "title", 0, CLI_ARG_STR, 0, "TEXT",
	 "flame graph and speedscope title", 0, 0},
	{OPT_INVERTED, "inverted", 0, CLI_ARG_NONE, 0, NULL,
	 "flame graph: an icicle graph, roots on top", 0, 0},
	{OPT_WIDTH, "width", 0, CLI_ARG_INT, CLI_OPT_POSITIVE, "PX",
	 "flame graph width in pixels (1200)", 200, 100000},
	{OPT_MIN_WIDTH, "min-width", 0, CLI_ARG_DOUBLE, CLI_OPT_POSITIVE, "PX",
	 "flame graph: merge frames narrower than PX (0.1)", 0, 0},
	{OPT_THREADS, "thread-roots", 0, CLI_ARG_NONE, 0, NULL,
	 "folded, flame graph: start each stack with its thread", 0, 0},
	{OPT_EVENT, "event", 'e', CLI_ARG_STR, 0, "EVENT",
	 "perf.data: the profile of this event (default: the file's first)", 0, 0},
	{OPT_NO_INLINE, "no-inline", 0, CLI_ARG_NONE, 0, NULL,
	 "perf.data: no frames of inlined functions (as perf script --no-inline)", 0, 0},
	{0},
};

static int run_convert(int argc, char **argv);

static const struct cli_cmd convert_cmd = {
	.name = "convert",
	.args = "IN|-",
	.summary = "Convert a trace or profile into a picture or another format:\n"
		   "a Go execution trace into a Perfetto or Chrome JSON timeline (or its\n"
		   "CPU samples into a profile);\n"
		   "an EventPipe .nettrace into a timeline too (threads, GC, JIT,\n"
		   "contention, activities, counters, samples); a nettrace's CPU\n"
		   "samples, a pprof or folded profile into folded, pprof, top, an\n"
		   "SVG flame graph or speedscope JSON;\n"
		   "a perf.data file (perf record) into any of those, symbolized by rtdiag.",
	.opts = convert_opts,
	.min_pos = 1,
	.max_pos = 1,
	.run = run_convert,
	.details = "Examples:\n"
		   "  rtdiag convert trace.out -o trace.perfetto-trace   (open in ui.perfetto.dev)\n"
		   "  rtdiag convert app.nettrace -o cpu.svg\n"
		   "  rtdiag convert heap.pb.gz --type alloc_space -o heap.speedscope.json\n"
		   "  rtdiag convert perf.data -o cpu.svg   (perf record -g, --call-graph dwarf, -z)\n"
		   "  rtdiag convert perf.data -o t.pftrace   (samples, tracepoints, --switch-events waits)\n"
		   "A Go 1.22+ trace is decoded on a second thread while this one writes\n"
		   "the timeline when a core is free (the 1-minute load average leaves\n"
		   "one idle); RTDIAG_THREADS=1 in the environment keeps it to one\n"
		   "thread, RTDIAG_THREADS=2 always uses two.\n",
};

/* ---- Go traces ------------------------------------------------------------ */


/* A CPU profile from a Go trace's CPU samples: the Go source's SAMPLE
 * records (only those: the goroutine tracker is not fed). */
static int go_profile(FILE *in, const char *path, const uint8_t *first,
		      size_t nfirst, rtd_profile **out)
{
	static const struct rtd_profile_type types[] = {
		{"samples", "count"}, {"cpu", "nanoseconds"}};
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types,
				      .ntypes = 2, .default_type = 1,
				      .period_type = {"cpu", "nanoseconds"},
				      .period = 10000000};
	rtd_profile *p = rtd_profile_new2(&po);
	RTD_OPTS(rtd_gotrace_source_opts, so, .kinds = 1u << RTD_REC_SAMPLE);
	struct cli_gostream st;
	int rc = -ENOMEM;
	rtd_source *src = p ? cli_gotrace_source(in, first, nfirst, &so, &st, &rc) : NULL;
	if (src)
		rc = rtd_profile_gotrace_pull(p, src);
	int ret = 0;
	if (rc < 0) {
		const struct rtd_record *er = NULL;
		/* the source's error record again, with the decoder's message */
		const char *msg = src && rtd_source_next(src, &er) < 0 && er ? er->message : "";
		bool some = p && rtd_profile_total(p);
		cli_fail("%s: %s%s", path, msg && *msg ? msg : rtd_strerror(rc),
			 some ? " (the samples before it are kept)" : "");
		ret = some ? 1 : -1;
	}
	if (p) {
		struct rtd_profile_meta m = {.sz = sizeof(m), .source = "gotrace",
					     .process = path};
		rtd_profile_set_meta(p, &m);
		if (!rtd_profile_total(p))
			fprintf(stderr, "rtdiag: %s: no CPU samples (the program "
					"traced without CPU profiling on?)\n", path);
	}
	rtd_source_free(src);
	*out = p;
	return ret;
}

/* ---- nettrace CPU samples --------------------------------------------------- */

static int nettrace_profile(FILE *in, const char *path, const uint8_t *first,
			    size_t nfirst, rtd_profile **out)
{
	RTD_OPTS(rtd_nettrace_profiler_opts, po, .kinds = 0);
	rtd_nettrace_profiler *np = rtd_nettrace_profiler_new(&po);
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	struct cli_nt_end end = {0};
	rtd_source *src = NULL;
	int fin = np && p ? cli_nettrace_cpu(in, path, first, nfirst, np, &src, &end)
			  : -ENOMEM;
	int ret = 0;
	if (fin < 0 && fin != -ENOMEM && np) {
		bool some = rtd_nettrace_profiler_samples(np);
		cli_fail("%s: %s%s", path, end.read_err ? rtd_strerror(fin)
					   : end.msg[0] ? end.msg : rtd_strerror(fin),
			 some ? " (the samples before it are kept)" : "");
		ret = some ? 1 : -1;
	} else if (fin < 0) {
		cli_fail("%s: %s", path, rtd_strerror(fin));
		ret = -1;
	}
	if (p && np) {
		int e = rtd_nettrace_profiler_finish(np, p);
		if (e && ret >= 0) {
			cli_fail("%s: building the profile: %s", path,
				 rtd_strerror(e));
			ret = -1;
		}
		struct rtd_profile_meta m = {.sz = sizeof(m), .source = "eventpipe",
					     .process = path};
		rtd_profile_set_meta(p, &m);
		if (rtd_nettrace_profiler_samples(np) == 0)
			fprintf(stderr, "rtdiag: %s: no SampleProfiler samples "
					"(was the Microsoft-DotNETCore-SampleProfiler "
					"provider enabled?)\n", path);
	}
	rtd_nettrace_profiler_free(np);
	cli_nettrace_done(src, &end);
	*out = p;
	return ret;
}

/* A pprof or folded profile: the readers take a stream, so the sniffed
 * bytes are put back before the rest. */
static int read_profile(FILE *in, const char *path, const uint8_t *first,
			size_t nfirst, rtd_profile **p)
{
	FILE *whole = in;
	char *joined = NULL;
	size_t jlen = 0;
	if (nfirst) {
		FILE *m = open_memstream(&joined, &jlen);
		uint8_t b[1 << 16];
		size_t n;
		if (!m)
			return cli_fail("%s: out of memory", path), -ENOMEM;
		fwrite(first, 1, nfirst, m);
		while ((n = fread(b, 1, sizeof(b), in)) > 0)
			fwrite(b, 1, n, m);
		fclose(m);
		whole = fmemopen(joined, jlen, "r");
	}
	struct rtd_profile_read_err e = {0};
	int err = whole ? rtd_profile_read(p, whole, &e) : -ENOMEM;
	if (err)
		cli_fail("%s: %s%s", path, e.msg[0] ? e.msg : rtd_strerror(err),
			 *p && rtd_profile_total(*p) ? " (what came before is converted)"
						     : "");
	if (whole && whole != in)
		fclose(whole);
	free(joined);
	return err;
}

/* Convert IN (of KIND; FIRST/NFIRST its bytes already read) to OUTP in
 * format F. */
static int convert_in(FILE *in, const char *path, enum rtd_input_format kind,
		      const uint8_t *first, size_t nfirst,
		      const struct cli_format *f, const char *outp,
		      const struct rtd_profile_write_opts *wo)
{
	bool go = kind == RTD_INPUT_GOTRACE;
	bool nt = kind == RTD_INPUT_NETTRACE || kind == RTD_INPUT_NETPERF;
	if (go && f->kind == CLI_FMT_TIMELINE)
		return cli_timeline_gotrace(in, path, first, nfirst, f, outp);
	if (nt && f->kind == CLI_FMT_TIMELINE)
		return cli_timeline_nettrace(in, path, first, nfirst, f, outp,
					     NULL, NULL);
	rtd_profile *p = NULL;
	int err;
	if (nt)
		err = nettrace_profile(in, path, first, nfirst, &p);
	else if (go)
		err = go_profile(in, path, first, nfirst, &p);
	else if ((err = read_profile(in, path, first, nfirst, &p)) < 0 && p)
		err = 1; /* damaged after what it read: that is converted */
	if (!p)
		return CLI_FAIL;
	int type = wo->type ? rtd_profile_find_type(p, wo->type) : -1;
	if (wo->type && type < 0) {
		rtd_profile_free(p);
		return cli_fail("%s has no sample type '%s'", path, wo->type);
	}
	/* an empty picture would stand for a profile that has nothing in it:
	 * refused, and an existing output stays */
	if (!(type >= 0 ? rtd_profile_total_of(p, (unsigned)type)
			: rtd_profile_total(p))) {
		rtd_profile_free(p);
		return cli_fail("%s: no samples to convert (%s%s written)", path,
				cli_out_is_stdout(outp) ? "nothing" : outp,
				cli_out_is_stdout(outp) ? "" : " not");
	}
	int rc = cli_write_profile(p, f, outp, wo);
	rtd_profile_free(p);
	/* err > 0: the input was damaged after what the profile holds */
	if (rc == CLI_OK && err)
		rc = err > 0 ? CLI_PARTIAL : CLI_FAIL;
	return rc;
}

/* ---- the command ------------------------------------------------------------ */

static int run_convert(int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	const char *outp = NULL, *fmt = NULL;
	bool no_inline = false;
	const char *event = NULL;
	struct rtd_profile_write_opts wo = {.sz = sizeof(wo)};
	cli_opt_init(&ps, &convert_cmd, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case OPT_OUT: outp = v.str; break;
		case OPT_FORMAT: fmt = v.str; break;
		case OPT_TYPE: wo.type = v.str; break;
		case OPT_TITLE: wo.title = v.str; break;
		case OPT_INVERTED: wo.inverted = true; break;
		case OPT_WIDTH: wo.width = (unsigned)v.i; break;
		case OPT_MIN_WIDTH: wo.min_width = v.d; break;
		case OPT_THREADS: wo.thread_roots = true; break;
		case OPT_NO_INLINE: no_inline = true; break;
		case OPT_EVENT: event = v.str; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	const char *path = ps.pos[0];
	if (outp && cli_out_check(outp))
		return CLI_FAIL;
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	/* what the input is, before anything is written */
	uint8_t *first = malloc(RTD_FORMAT_SNIFF_BYTES);
	size_t nfirst = 0, n;
	while (first && nfirst < RTD_FORMAT_SNIFF_BYTES &&
	       (n = fread(first + nfirst, 1, RTD_FORMAT_SNIFF_BYTES - nfirst, in)) > 0)
		nfirst += n;
	if (!first || ferror(in)) {
		int e = errno;
		free(first);
		cli_close_in(in);
		return cli_fail("%s: %s", path, first ? strerror(e) : "out of memory");
	}
	struct rtd_input_info info;
	enum rtd_input_format kind = rtd_format_detect(first, nfirst, feof(in), &info);
	if (kind == RTD_INPUT_UNKNOWN) {
		free(first);
		cli_close_in(in);
		return cli_fail("%s: not a format rtdiag reads (tried %s): %s; "
				"nothing written", path, rtd_format_tried(),
				info.why);
	}
	bool trace = kind == RTD_INPUT_GOTRACE || kind == RTD_INPUT_NETTRACE ||
		     kind == RTD_INPUT_NETPERF || kind == RTD_INPUT_PERF_DATA;
	unsigned allow = trace ? CLI_FMT_PROFILE | CLI_FMT_TIMELINE : CLI_FMT_PROFILE;
	struct cli_format f = {0};
	const char *dflt = kind == RTD_INPUT_GOTRACE ? "perfetto" : "folded";
	/* the Firefox Profiler's Gecko profile: of the record sources */
	bool firefox = fmt && !strcmp(fmt, "firefox");
	bool ff_file = (kind == RTD_INPUT_GOTRACE || kind == RTD_INPUT_NETTRACE) && strcmp(path, "-");
	if (firefox && kind != RTD_INPUT_PERF_DATA && !ff_file) {
		free(first);
		cli_close_in(in);
		return cli_fail("%s: --format firefox takes perf.data, a Go trace or a nettrace "
				"file (this is %s%s)", path, rtd_input_format_name(kind),
				strcmp(path, "-") ? "" : " on standard input: give its file name");
	}
	if (firefox && ff_file) {
		free(first);
		cli_close_in(in);
		return firefox_of_trace(path, kind, outp);
	}
	if (!firefox && cli_format_pick("convert", fmt, outp, allow, dflt, &f)) {
		free(first);
		cli_close_in(in);
		return CLI_USAGE;
	}
	int rc = kind == RTD_INPUT_PERF_DATA ? cli_convert_perfdata(path, &f, outp, &wo, event, no_inline,
								    firefox, in, first, nfirst)
					     : convert_in(in, path, kind, first, nfirst, &f, outp, &wo);
	free(first);
	cli_close_in(in);
	return rc;
}

/* A Go trace or a nettrace file to the Firefox Profiler, through its
 * record source (the runtime's events of a nettrace as slices too). */
static int firefox_of_trace(const char *path, enum rtd_input_format kind, const char *outp)
{
	int e = 0;
	rtd_source *in = kind == RTD_INPUT_GOTRACE ? rtd_gotrace_source_open(path, NULL, &e)
						   : rtd_nettrace_source_open(path, NULL, &e);
	rtd_source *src = in && kind == RTD_INPUT_NETTRACE ? rtd_nettrace_source_clr(in, &e) : in;
	if (!src) {
		rtd_source_free(in);
		return cli_fail("%s: %s (nothing written)", path, rtd_strerror(e));
	}
	int rc = cli_convert_firefox(src, path, outp);
	if (src != in)
		rtd_source_free(src);
	rtd_source_free(in);
	return rc;
}

static int convert_run(int argc, char **argv)
{
	return run_convert(argc, argv);
}

static bool convert_help(FILE *f, const char *sub)
{
	if (sub)
		return false;
	cli_cmd_help(f, &convert_cmd);
	return true;
}

static const struct cli_cmd *const *convert_cmds(void)
{
	static const struct cli_cmd *const list[] = {&convert_cmd, NULL};
	return list;
}

const struct cli_group cli_group_convert = {
	.name = "convert",
	.summary = "convert traces and profiles: flame graphs, speedscope, Perfetto",
	.run = convert_run,
	.help = convert_help,
	.cmds = convert_cmds,
};
