/* SPDX-License-Identifier: MIT */
/* gotrace.c - 'rtdiag gotrace': cat, grep, stats, text2bin, bin2text. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "gotrace_analyze.h"
#include "gotrace_cli.h"
#include "opt.h"
#include "rtdiag/format.h"


struct gt_in {
	const char *path;
	FILE *f;
	rtd_gotrace_dec *d;
	uint64_t bytes;
	bool eof;
	int read_err;
	uint8_t buf[1 << 16];
};

int64_t gt_read_at(void *buf, size_t len, uint64_t off, void *ctx)
{
	struct gt_in *in = ctx;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fileno(in->f), (char *)buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int64_t)done;
}

/*
 * RTDIAG_GO_MAP_START=S[,S...] (test aid): order equal-time events of
 * different threads as one run of Go 1.22/1.23 did, its random map walk
 * starting at slot S of the first generation, the next S for the next one
 * (rtd_gotrace_dec_set_go_map_starts). The comparison tests use it to
 * find the run of go tool trace they compare with.
 */
static int gt_go_map_env(rtd_gotrace_dec *d, const char *path)
{
	const char *e = getenv("RTDIAG_GO_MAP_START");
	if (!e || !*e)
		return 0;
	unsigned s[RTD_GOTRACE_MAX_MAP_STARTS];
	size_t n = 0;
	for (const char *p = e; *p;) {
		if (*p < '0' || *p > '7' || (p[1] && p[1] != ',') || n == RTD_GOTRACE_MAX_MAP_STARTS) {
			cli_fail("%s: RTDIAG_GO_MAP_START=%s: want up to %d slots 0-7, separated by commas",
				 path, e, RTD_GOTRACE_MAX_MAP_STARTS);
			return -1;
		}
		s[n++] = (unsigned)(*p - '0');
		p += p[1] ? 2 : 1;
	}
	return rtd_gotrace_dec_set_go_map_starts(d, s, n);
}

/* The 16-byte header, checked before anything is printed (what is not a
 * Go trace is named, not tabled as "go 0.0"), then fed so that the decoder
 * knows the version before any event is ordered. */
static int read_header(struct gt_in *in)
{
	uint8_t h[16];
	size_t n = fread(h, 1, sizeof(h), in->f);
	in->bytes += n; /* a short read: the next fread sees the end again */
	int ver = rtd_gotrace_header_version(h, n);
	if (ver <= 0) {
		struct rtd_input_info info;
		enum rtd_input_format f = rtd_format_detect(h, n, n < sizeof(h), &info);
		if (f != RTD_INPUT_UNKNOWN)
			cli_fail("%s: %s, not a Go execution trace (rtdiag convert "
				 "reads it)", in->path, rtd_input_format_name(f));
		else if (ver == -RTD_E_UNSUPPORTED || n < sizeof(h))
			cli_fail("%s: not a Go execution trace: %s", in->path, info.why);
		else
			cli_fail("%s: not a Go execution trace (it does not start "
				 "\"go 1.N trace\")", in->path);
		gt_close(in);
		return -1;
	}
	struct rtd_gotrace_event ev;
	if (rtd_gotrace_dec_feed(in->d, h, n) < 0 || rtd_gotrace_dec_next(in->d, &ev) < 0) {
		gt_fail(in, -RTD_E_FORMAT);
		gt_close(in);
		return -1;
	}
	return 0;
}

int gt_open(struct gt_in *in, const char *path, enum rtd_gotrace_mode mode,
	    unsigned flags)
{
	memset(in, 0, sizeof(*in) - sizeof(in->buf));
	in->path = path;
	in->f = cli_open_in(path);
	if (!in->f)
		return -1;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode, .flags = flags};
	in->d = rtd_gotrace_dec_new(&o);
	if (!in->d) {
		cli_close_in(in->f);
		cli_fail("%s: out of memory", path);
		return -1;
	}
	if (mode == RTD_GOTRACE_ORDERED && gt_go_map_env(in->d, path) < 0) {
		rtd_gotrace_dec_free(in->d);
		cli_close_in(in->f);
		return -1;
	}
	/* Ordered mode (and raw mode resolving names ahead) reads a regular
	 * file again rather than keeping it; a pipe is kept in memory. */
	struct stat st;
	if ((mode == RTD_GOTRACE_ORDERED || (flags & RTD_GOTRACE_RESOLVE)) &&
	    fstat(fileno(in->f), &st) == 0 && S_ISREG(st.st_mode))
		rtd_gotrace_dec_set_source(in->d, gt_read_at, in);
	return read_header(in);
}

/* Is the input a regular file (which can be read again)? */
bool gt_in_is_file(const struct gt_in *in)
{
	struct stat st;
	return fstat(fileno(in->f), &st) == 0 && S_ISREG(st.st_mode);
}

/* Feed just the 16-byte header, so that the decoder knows the version
 * before any event is ordered. */
int gt_prime_header(struct gt_in *in)
{
	/* gt_open() has read it */
	return rtd_gotrace_dec_version(in->d) > 0 ? 0 : -1;
}

size_t gt_in_size(void)
{
	return sizeof(struct gt_in);
}

rtd_gotrace_dec *gt_dec(struct gt_in *in)
{
	return in->d;
}

void gt_close(struct gt_in *in)
{
	rtd_gotrace_dec_free(in->d);
	cli_close_in(in->f);
}

/* Report a decoder error as "rtdiag: FILE: message". */
int gt_fail(struct gt_in *in, int rc)
{
	const char *msg = rtd_gotrace_dec_error(in->d, NULL);
	return cli_fail("%s: %s", in->path, *msg ? msg : rtd_strerror(rc));
}

/* More input for the decoder: 1 fed (or finished at the end of the input),
 * 0 at the end already, <0 on an error not yet reported (see
 * gt_next_quiet()). */
static int gt_feed(struct gt_in *in)
{
	if (in->eof)
		return 0;
	size_t n = fread(in->buf, 1, sizeof(in->buf), in->f);
	if (n == 0) {
		if (ferror(in->f)) {
			in->read_err = errno ? errno : EIO;
			return -in->read_err;
		}
		in->eof = true;
		int rc = rtd_gotrace_dec_finish(in->d);
		return rc < 0 ? rc : 1;
	}
	in->bytes += n;
	if (cli_progress_enabled() && (in->bytes & ((1u << 24) - 1)) < n) {
		char b[32];
		cli_progress("%s: %s read", in->path,
			     cli_bytes((double)in->bytes, b, sizeof(b)));
	}
	int rc = rtd_gotrace_dec_feed(in->d, in->buf, n);
	return rc < 0 ? rc : 1;
}

/* Next event: 1, 0 at the end, <0 on an error not yet reported (for
 * gt_report(); a failed read leaves its errno in read_err). */
int gt_next_quiet(struct gt_in *in, struct rtd_gotrace_event *ev)
{
	for (;;) {
		int rc = rtd_gotrace_dec_next(in->d, ev);
		if (rc != 0 || in->eof)
			return rc;
		if ((rc = gt_feed(in)) < 0)
			return rc;
	}
}

/* Report what gt_next_quiet() returned: rc. */
int gt_report(struct gt_in *in, int rc)
{
	if (in->read_err)
		cli_fail("%s: read: %s", in->path, strerror(in->read_err));
	else
		gt_fail(in, rc);
	return rc;
}

int gt_exit(struct gt_in *in, int rc, uint64_t delivered)
{
	if (rc >= 0)
		return CLI_OK;
	bool input = in->read_err || *rtd_gotrace_dec_error(in->d, NULL);
	return input && delivered && rc != -ENOMEM ? CLI_PARTIAL : CLI_FAIL;
}

/* Next event: 1, 0 at the end, <0 after reporting the error. */
int gt_next(struct gt_in *in, struct rtd_gotrace_event *ev)
{
	int rc = gt_next_quiet(in, ev);
	return rc < 0 ? gt_report(in, rc) : rc;
}

/* The text writer's output: stdout's descriptor, after what stdio holds
 * (stdio would copy the 64 KiB pieces again). A failed write is left to
 * stdio, which keeps (and the final fflush reports) the error. */
static int write_stdout(const void *buf, size_t len, void *ctx)
{
	FILE *o = ctx;
	size_t done = 0;
	if (fflush(o) == 0) {
		while (done < len) {
			ssize_t k = write(fileno(o), (const char *)buf + done, len - done);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			done += (size_t)k;
		}
	}
	if (done < len)
		fwrite_unlocked((const char *)buf + done, 1, len - done, o);
	return 0;
}

rtd_gotrace_text *gt_text_new(FILE *o, enum gt_format fmt, bool ordered, bool stacks,
			      rtd_gotrace_dec *d)
{
	static const int fmts[] = {[GT_TEXT] = RTD_GOTRACE_TEXT_PLAIN,
				   [GT_JSON] = RTD_GOTRACE_TEXT_JSON,
				   [GT_GODEBUG] = RTD_GOTRACE_TEXT_GODEBUG};
	struct rtd_gotrace_text_opts to = {.sz = sizeof(to), .format = fmts[fmt],
					   .ordered = ordered, .stacks = stacks, .dec = d,
					   .write = write_stdout, .ctx = o};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&to);
	if (!t)
		cli_fail("out of memory");
	return t;
}

/* The pipe's source: the input's events, errors reported by the caller. */
static int pipe_source(void *ctx, struct rtd_gotrace_event *ev)
{
	return gt_next_quiet(ctx, ev);
}

enum { CAT_ORDERED = 1, CAT_STACKS, CAT_COUNT, CAT_FORMAT, CAT_MAP_START, CAT_OUT };

static const struct cli_opt cat_opts[] = {
	{CAT_ORDERED, "ordered", 0, CLI_ARG_NONE, 0, NULL,
	 "Go's global order, after Go's validation (go tool trace -d, -d=1)", 0, 0},
	{CAT_STACKS, "stacks", 0, CLI_ARG_NONE, 0, NULL,
	 "under each event, all the frames (function, file:line) of each stack it names (without: its first frame after stack=ID:)", 0, 0},
	{CAT_COUNT, "max-events", 0, CLI_ARG_INT, 0, "N", "stop after N events", 0, 1e18},
	CLI_OLD(CAT_COUNT, "count", 'n', CLI_ARG_INT, 0, "N",
		"--max-events N (-n is --name, --count a flag)", 0, 1e18),
	{CAT_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0,
	 "text|json|go-debug|perfetto|chrome-json",
	 "text (default), JSON Lines, what Go 1.19's 'go tool trace -d' prints, or "
	 "a timeline of goroutines, Ps, Ms, GC, tasks and regions (Perfetto "
	 "protobuf, Chrome JSON; also from -o's extension)", 0, 0},
	{CAT_MAP_START, "go-map-start", 0, CLI_ARG_INT, 0, "S",
	 "with --ordered, Go 1.22+: order equal-time events of different threads as "
	 "Go 1.22/1.23 do when their random map walk starts at slot S (default 0: "
	 "golang/exp's and Go 1.24+'s order)", 0, 7},
	{CAT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "a timeline to FILE (.perfetto-trace/.pftrace, .json), replaced only "
	 "when written", 0, 0},
	{0},
};

static int cmd_cat(int argc, char **argv);

static const struct cli_cmd cat_def = {
	"gotrace cat", "FILE|-",
	"Print the events of a Go execution trace.\n"
	"Raw mode (default): file order, streaming, strings and stacks included (their\n"
	"names read ahead). --ordered: Go's order, as go tool trace -d (-d=1) sees it.",
	cat_opts, 1, 1, 0, cmd_cat,
	"Go 1.22+ lines: 'TIME Name M= P= G= off= args' ordered (the event's thread,\n"
	"P and goroutine, as go tool trace -d=1 names them), and 'TIME Name off= args'\n"
	"raw (Go's text form: the thread is on the batch line).\n"
	"Threads: an ordered Go 1.5-1.21 trace is decoded on a second thread while\n"
	"this one prints, and a timeline (--format perfetto|chrome-json, -o x.pftrace)\n"
	"of a Go 1.22+ trace is decoded on a second thread while this one draws,\n"
	"when a core is free (the 1-minute load average leaves one idle).\n"
	"RTDIAG_THREADS=1 in the environment keeps either to one thread;\n"
	"RTDIAG_THREADS=2 makes either use two whatever the load.\n"};

struct cat_opts {
	const char *path, *out;
	bool timeline; /* --format perfetto|chrome-json, or -o's extension */
	bool ordered, stacks;
	long long count, map_start;
	enum gt_format fmt;
};

static int cat_parse(struct cat_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	struct cli_val v;
	int id;
	*o = (struct cat_opts){.count = -1, .map_start = -1, .fmt = GT_TEXT};
	cli_opt_init(&p, &cat_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case CAT_ORDERED:
			o->ordered = true;
			break;
		case CAT_STACKS:
			o->stacks = true;
			break;
		case CAT_COUNT:
			o->count = v.i;
			break;
		case CAT_FORMAT:
			o->fmt = (enum gt_format)v.i; /* the order of the choices */
			break;
		case CAT_MAP_START:
			o->map_start = v.i;
			break;
		case CAT_OUT:
			o->out = v.str;
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	o->path = p.pos[0];
	/* the choices after go-debug are timelines (cli_format.h) */
	o->timeline = (int)o->fmt > GT_GODEBUG ||
		      (o->fmt == GT_TEXT && o->out && !cli_out_is_stdout(o->out) &&
		       rtd_timeline_format_from_path(o->out));
	if (o->out && !o->timeline)
		return cli_cmd_usage(&cat_def, "-o is for a timeline: --format "
				     "perfetto|chrome-json, or FILE.perfetto-trace, "
				     ".pftrace or .json");
	if (o->timeline && (o->stacks || o->count >= 0 || o->map_start >= 0))
		return cli_cmd_usage(&cat_def, "--stacks, --count and "
				     "--go-map-start are for the event list, not "
				     "a timeline");
	if (o->map_start >= 0 && !o->ordered)
		return cli_cmd_usage(&cat_def, "--go-map-start needs --ordered");
	return -1;
}

/* Old-format ordered output: decoding on a second thread when a core is
 * free (cli_second_thread_pays(): RTDIAG_THREADS=1 never, =2 always). The
 * hand-over costs CPU (a fifth more in all), paid back in time only where
 * the printing thread has a core of its own. */
static rtd_gotrace_pipe *cat_pipe(const struct cat_opts *o, struct gt_in *in)
{
	if (!o->ordered || o->map_start >= 0 || o->stacks || !cli_second_thread_pays() ||
	    gt_prime_header(in) < 0)
		return NULL;
	int ver = rtd_gotrace_dec_version(gt_dec(in));
	if (ver > 0 && ver < 1022) /* the old format's tables stay put */
		return rtd_gotrace_pipe_new(pipe_source, in);
	return NULL;
}

/* Plain ordered text: the library takes the decoder's events and writes
 * them in one loop, this feeds it (as gt_next). 1 after @count, 0 at the
 * end, <0 on an error (told). */
static int cat_decoded(const struct cat_opts *o, struct gt_in *in, rtd_gotrace_text *t,
		       long long *n)
{
	int rc;
	for (;;) {
		uint64_t k = 0, max = o->count < 0 ? UINT64_MAX : (uint64_t)(o->count - *n);
		rc = rtd_gotrace_text_decoded(t, gt_dec(in), max, &k);
		*n += (long long)k;
		if (rc != 0 || in->eof || (rc = gt_feed(in)) < 0)
			break;
	}
	return rc < 0 ? gt_report(in, rc) : rc;
}

/* The events out: 1 after @count, 0 at the end, <0 on an error (told). */
static int cat_events(const struct cat_opts *o, struct gt_in *in, long long *n)
{
	/* A large stdout buffer: cat writes one short line per event. */
	static char obuf[1 << 20];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	rtd_gotrace_text *t = gt_text_new(stdout, o->fmt, o->ordered, o->stacks, gt_dec(in));
	if (!t)
		return -ENOMEM;
	rtd_gotrace_pipe *pipe = cat_pipe(o, in);
	struct rtd_gotrace_event evbuf;
	const struct rtd_gotrace_event *ev = &evbuf;
	int rc = 0, ver = -1;
	bool decoded = !pipe && o->fmt == GT_TEXT && o->ordered && !o->stacks;
	if (decoded)
		rc = cat_decoded(o, in, t, n);
	while (!decoded && (o->count < 0 || *n < o->count) &&
	       (rc = pipe ? rtd_gotrace_pipe_next(pipe, &ev) : gt_next(in, &evbuf)) > 0) {
		if (ver < 0) /* known from the first event on (a call per event was ~1%) */
			ver = rtd_gotrace_dec_version(gt_dec(in));
		/* go-debug mirrors Go's event list: no dictionary events. */
		if (o->fmt == GT_GODEBUG && !pipe && ver >= 1022) {
			rc = -cli_fail("%s: --format go-debug is what Go 1.19's 'go tool trace -d' prints, for the old format (Go 1.5-1.21) only; use text or json",
				       o->path);
			break;
		}
		if (o->fmt == GT_GODEBUG && rtd_gotrace_event_is_meta(ev))
			continue;
		if (o->stacks && *n == 0 && !o->ordered && !gt_in_is_file(in) && ver < 1022) {
			rc = -cli_fail("%s: --stacks on a Go 1.5-1.21 trace needs a FILE or --ordered: the runtime writes the stacks at the end of the trace, so raw mode reads them in a first pass",
				       o->path);
			break;
		}
		rtd_gotrace_text_event(t, ev);
		++*n;
	}
	if (pipe && rc < 0) /* the thread has stopped: the decoder is ours */
		gt_report(in, rc);
	rtd_gotrace_pipe_free(pipe);
	rtd_gotrace_text_flush(t);
	rtd_gotrace_text_free(t);
	cli_progress_done();
	return o->count >= 0 && *n >= o->count ? 1 : rc;
}

/* cat --format perfetto|chrome-json: the trace as a timeline, in Go's
 * order (what --ordered validates), as `rtdiag convert` writes it. */
static int cat_timeline(const struct cat_opts *o)
{
	static const char *const names[] = {"text", "json", "go-debug", "perfetto",
					    "chrome-json"};
	struct cli_format f;
	if (cli_format_pick(cat_def.name,
			    (int)o->fmt > GT_GODEBUG ? names[o->fmt] : NULL, o->out,
			    CLI_FMT_TIMELINE, "perfetto", &f))
		return CLI_USAGE;
	FILE *in = cli_open_in(o->path);
	if (!in)
		return CLI_FAIL;
	int rc = cli_timeline_gotrace(in, o->path, NULL, 0, &f, o->out);
	cli_close_in(in);
	return rc;
}

static int cmd_cat(int argc, char **argv)
{
	struct cat_opts o;
	int rc = cat_parse(&o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o.timeline)
		return cat_timeline(&o);
	struct gt_in *in = malloc(gt_in_size());
	if (!in)
		return cli_fail("out of memory");
	if (gt_open(in, o.path, o.ordered ? RTD_GOTRACE_ORDERED : RTD_GOTRACE_RAW,
		    RTD_GOTRACE_RESOLVE) < 0) {
		free(in);
		return CLI_FAIL;
	}
	if (o.map_start >= 0 &&
	    (gt_prime_header(in) < 0 ||
	     rtd_gotrace_dec_set_go_map_start(gt_dec(in), (unsigned)o.map_start) < 0)) {
		gt_close(in);
		free(in);
		return cli_fail("%s: --go-map-start is for Go 1.22+ traces (Go 1.22/1.23's random map walk)",
				o.path);
	}
	long long n = 0;
	rc = cat_events(&o, in, &n);
	/* a trace cut short (the process was killed while tracing): its
	 * last event is cut, or the end with the frequency is missing */
	int ver = rtd_gotrace_dec_version(gt_dec(in));
	if (rc < 0 && o.ordered && n == 0 && ver >= 1005 && ver < 1022 &&
	    rc == -RTD_E_TRUNCATED)
		fprintf(stderr, "rtdiag: %s: ordering a Go 1.5-1.21 trace needs all of it (the runtime writes the clock frequency and the stacks at its end; 'go tool trace' refuses it too): without --ordered, cat prints the events before the damage\n",
			o.path);
	int code = gt_exit(in, rc, (uint64_t)n);
	gt_close(in);
	free(in);
	if (fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return code;
}

static int cmd_stats(int argc, char **argv);

static const struct cli_cmd stats_def = {
	"gotrace stats", "FILE|-",
	"Summarize a trace.\n"
	"Version, size, duration, generations (Go 1.22+), goroutines, procs, and the\n"
	"events and bytes of each type.",
	NULL, 1, 1, 0, cmd_stats,
	"Raw decoding, streaming: memory is a generation's string and stack tables and\n"
	"a bitmap of the goroutine ids (128 KB for a million goroutines).\n"};

int gt_file_only(const struct cli_cmd *def, int argc, char **argv, const char **path)
{
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		;
	if (id < 0)
		return cli_opt_exit(id);
	*path = p.pos[0];
	return -1;
}

static int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	int rc = gt_file_only(&stats_def, argc, argv, &path);
	if (rc >= 0)
		return rc;
	struct gt_in *in = malloc(sizeof(*in));
	if (!in)
		return cli_fail("out of memory");
	if (gt_open(in, path, RTD_GOTRACE_RAW, 0) < 0) {
		free(in);
		return CLI_FAIL;
	}
	rtd_gotrace_tally *t = rtd_gotrace_tally_new();
	if (!t) {
		gt_close(in);
		free(in);
		return cli_fail("out of memory");
	}
	/* counted by the library, without an event built for each */
	while ((rc = rtd_gotrace_dec_tally(in->d, t)) == 0 && (rc = gt_feed(in)) > 0)
		;
	if (rc < 0)
		gt_report(in, rc);
	struct rtd_gotrace_counts c;
	rtd_gotrace_tally_counts(t, in->bytes, &c);
	cli_progress_done();
	int ver = rtd_gotrace_dec_version(in->d);
	int64_t freq = rtd_gotrace_dec_frequency(in->d);
	printf("file:        %s\n", path);
	printf("version:     go %d.%d (%s format)\n", ver / 1000, ver % 1000, ver >= 1022 ? "new" : "old");
	if (ver >= 1022)
		printf("generations: %" PRIu64 "\n", c.generations);
	printf("size:        %" PRIu64 " bytes\n", in->bytes);
	printf("events:      %" PRIu64 "%s\n", c.events, rc < 0 ? " (stopped at the error)" : "");
	if (freq > 0 && c.tmax >= c.tmin)
		printf("duration:    %.6f s (%" PRId64 " ticks at %" PRId64 " ticks/s)\n",
		       (double)(c.tmax - c.tmin) / (double)freq, c.tmax - c.tmin, freq);
	else
		printf("duration:    unknown (no Frequency event)\n");
	printf("goroutines:  %s%" PRIu64 "\n", c.goroutines_over ? "at least " : "", c.goroutines);
	printf("procs:       %s%" PRIu64 "\n", c.procs_over ? "at least " : "", c.procs);
	printf("%-20s %10s %12s %8s\n", "type", "events", "bytes", "B/event");
	for (unsigned t = 1; t < 256; t++)
		if (c.count[t])
			printf("%-20s %10" PRIu64 " %12" PRIu64 " %8.1f\n",
			       rtd_gotrace_event_name(t, ver), c.count[t], c.bytes[t],
			       (double)c.bytes[t] / (double)c.count[t]);
	int code = gt_exit(in, rc, c.events);
	rtd_gotrace_tally_free(t);
	gt_close(in);
	free(in);
	return code;
}

/* The commands, in the order help lists them. */
static const struct cli_cmd *const cmds[] = {
	&cat_def, &gt_grep_def, &stats_def, &gt_text2bin_def, &gt_bin2text_def,
	/* the analyses and live capture (gotrace_analyze.c, gotrace_capture.c) */
	&gt_pprof_cmd, &gt_goroutines_cmd, &gt_gc_cmd, &gt_tasks_cmd, &gt_capture_cmd, NULL,
};

static const char summary[] =
	"Go execution traces (Go 1.5-1.26: the old format and the new, Go 1.22+),\n"
	"from a file or - for stdin.";

static int run(int argc, char **argv)
{
	return cli_group_run("gotrace", cmds, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_group_help(f, "gotrace", summary, cmds, sub);
}

static const struct cli_cmd *const *list_cmds(void)
{
	return cmds;
}

const struct cli_group cli_group_gotrace = {"gotrace", "Go execution traces: cat, grep, stats, text2bin, bin2text, pprof, goroutines, gc, tasks, capture", run, help, list_cmds};
