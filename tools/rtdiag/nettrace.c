/* SPDX-License-Identifier: MIT */
/*
 * nettrace.c - the 'rtdiag nettrace' command group: cat, stats, profile
 * over an EventPipe stream in a file or on stdin. Options come from one
 * table per command (opt.h); files are written through out.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "opt.h"
#include "out.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/nettrace_tally.h"
#include "rtdiag/profile.h"

#define READ_CHUNK (1u << 20)
#define OUT_FLUSH (256u << 10) /* cat writes its buffer at this size */

/* ---- input ------------------------------------------------------------- */

/*
 * An input stream: a regular file is mapped (no copy through the kernel;
 * pages already decoded are dropped so the resident set stays small),
 * anything else is read in chunks.
 */
struct input {
	const char *path;
	FILE *f;
	const uint8_t *map;
	size_t size;
};

static int input_open(struct input *in, const char *path)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->f = cli_open_in(path);
	if (!in->f)
		return -1;
	struct stat sb;
	int fd = fileno(in->f);
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (uint64_t)sb.st_size < SIZE_MAX && lseek(fd, 0, SEEK_CUR) == 0) {
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);
		if (m != MAP_FAILED) {
			in->map = m;
			in->size = (size_t)sb.st_size;
			madvise(m, in->size, MADV_SEQUENTIAL);
		}
	}
	return 0;
}

static void input_close(struct input *in)
{
	if (in->map)
		munmap((void *)in->map, in->size);
	cli_close_in(in->f);
	in->f = NULL;
	in->map = NULL;
}

static void show_progress(rtd_nettrace *dec, const char *path, uint64_t total)
{
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(dec, &st);
	char b[32];
	cli_progress("%s: %s, %" PRIu64 " events, %" PRIu64 " dropped", path,
		     cli_bytes((double)total, b, sizeof(b)), st.events,
		     st.dropped);
}

/*
 * Feed the whole input to a decoder and finish it (which also delivers
 * events held for sorting). Returns 0, or the first error: the decoder's
 * (with its message in the decoder), a read error (-errno, *read_err set)
 * or what a callback returned.
 */
static int pump(rtd_nettrace *dec, struct input *in, bool keep_pages,
		bool *read_err)
{
	int rc = 0;
	*read_err = false;
	if (in->map) {
		const size_t slice = 8u << 20;
		for (size_t off = 0; off < in->size && rc == 0; off += slice) {
			size_t n = in->size - off < slice ? in->size - off
							   : slice;
			rc = rtd_nettrace_feed(dec, in->map + off, n);
			if (!keep_pages)
				madvise((void *)(in->map + off), n,
					MADV_DONTNEED);
			if (cli_progress_enabled())
				show_progress(dec, in->path, off + n);
		}
	} else {
		uint8_t *buf = malloc(READ_CHUNK);
		if (!buf)
			return -ENOMEM;
		uint64_t total = 0;
		unsigned tick = 0;
		int fd = fileno(in->f);
		while (rc == 0) {
			ssize_t n = read(fd, buf, READ_CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = -errno;
				*read_err = true;
				break;
			}
			if (n == 0)
				break;
			total += (uint64_t)n;
			rc = rtd_nettrace_feed(dec, buf, (size_t)n);
			if ((++tick & 63) == 0 && cli_progress_enabled())
				show_progress(dec, in->path, total);
		}
		free(buf);
	}
	cli_progress_done();
	if (rc == 1)
		rc = 0; /* the end marker */
	/* finish even after an error: held events are complete ones */
	int frc = rtd_nettrace_finish(dec);
	return rc ? rc : frc;
}

/* Say what went wrong with the input: where it stopped and why. Returns
 * CLI_PARTIAL when what came before it was delivered (@delivered), else
 * CLI_FAIL. */
static int input_error(rtd_nettrace *dec, const struct input *in, int rc,
		       bool read_err, bool delivered)
{
	if (read_err)
		cli_fail("%s: read: %s", in->path, strerror(-rc));
	else if (rtd_nettrace_error(dec, NULL)[0])
		cli_fail("%s: %s", in->path, rtd_nettrace_error(dec, NULL));
	else
		cli_fail("%s: %s", in->path, rtd_strerror(rc));
	return delivered ? CLI_PARTIAL : CLI_FAIL;
}

/* input_error() for a source's end (cli_nettrace_cpu()) */
static int nt_end_error(const char *path, int rc, const struct cli_nt_end *end,
			bool delivered)
{
	if (end->read_err)
		cli_fail("%s: read: %s", path, strerror(-rc));
	else
		cli_fail("%s: %s", path, end->msg[0] ? end->msg : rtd_strerror(rc));
	return delivered ? CLI_PARTIAL : CLI_FAIL;
}

/* Events the decoder has handed out. */
static uint64_t events_of(const rtd_nettrace *dec)
{
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(dec, &st);
	return st.events;
}

/* ---- cat --------------------------------------------------------------- */

enum {
	CAT_JSON = 1,
	CAT_STACK,
	CAT_PROVIDER,
	CAT_EVENT,
	CAT_SORTED,
	CAT_STREAM,
	CAT_FORMAT,
	CAT_OUT,
};

static const struct cli_opt cat_opts[] = {
	{CAT_JSON, "json", 'j', CLI_ARG_NONE, 0, NULL,
	 "JSON Lines: every field as a number, value names under \"names\", "
	 "header values, the stack", 0, 0},
	{CAT_STACK, "stacks", 0, CLI_ARG_NONE, 0, NULL,
	 "print stacks, frames named from the trace's method events "
	 "(text: names; JSON: \"frames\" beside \"stack\")", 0, 0},
	CLI_OLD(CAT_STACK, "stack", 's', CLI_ARG_NONE, 0, NULL,
		"--stacks (-s is --summary)", 0, 0),
	{CAT_PROVIDER, "provider", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "NAME",
	 "only events of these providers (any case, * wildcards; "
	 "repeat for several)", 0, 0},
	CLI_OLD(CAT_PROVIDER, NULL, 'p', CLI_ARG_STR, CLI_OPT_REPEAT, "NAME",
		"--provider NAME (-p is a process id)", 0, 0),
	{CAT_EVENT, "event", 'e', CLI_ARG_STR, CLI_OPT_REPEAT, "NAME",
	 "only events with these names, e.g. GC/Start or 'GC/*' (any case; "
	 "repeat for several: any of them)", 0, 0},
	{CAT_SORTED, "sorted", 0, CLI_ARG_NONE, 0, NULL,
	 "time order (the default for a file): each sorting window of the "
	 "stream is held and sorted", 0, 0},
	{CAT_STREAM, "stream", 0, CLI_ARG_NONE, 0, NULL,
	 "stream order, as written (the default for stdin)", 0, 0},
	{CAT_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "text|perfetto|chrome-json",
	 "text (default), or a timeline: a track per thread, GC, JIT, "
	 "contention and Start/Stop pairs as slices, counters, named CPU "
	 "samples (Perfetto protobuf, Chrome JSON); without it, from -o's "
	 "extension", 0, 0},
	{CAT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write there instead of stdout (.perfetto-trace/.pftrace, .json: a "
	 "timeline; replaced only when complete)", 0, 0},
	{0},
};

#define MAX_FILTERS 64

struct cat_ctx {
	rtd_nettrace *dec;
	unsigned flags;
	const char *providers[MAX_FILTERS];
	int nproviders;
	const char *events[MAX_FILTERS];
	int nevents;
	rtd_nettrace_methods *methods; /* --stack: names for frames */
	bool learn;                    /* methods learnt as events come */
	char *buf;                     /* output gathered for one write */
	size_t len, cap;
	int out_errno;                 /* stdout failed with this */
};

/* Write the gathered output; on failure remember why (stdout's fault). */
static int cat_flush(struct cat_ctx *c)
{
	size_t off = 0;
	while (off < c->len) {
		ssize_t n = write(STDOUT_FILENO, c->buf + off, c->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			c->out_errno = errno;
			c->len = 0;
			return -EIO;
		}
		off += (size_t)n;
	}
	c->len = 0;
	return 0;
}

static const char *cat_frame(void *ctx, uint64_t ip)
{
	return rtd_nettrace_methods_name(ctx, ip);
}

/* Does the event pass the --provider and --event filters? */
static bool cat_wanted(const struct cat_ctx *c,
		       const struct rtd_nettrace_metadata *m)
{
	bool ok = c->nproviders == 0;
	for (int i = 0; i < c->nproviders && !ok; i++)
		ok = rtd_nettrace_glob(c->providers[i], m->provider);
	if (!ok)
		return false;
	ok = c->nevents == 0;
	for (int i = 0; i < c->nevents && !ok; i++)
		ok = rtd_nettrace_glob(c->events[i], m->name);
	return ok;
}

static int cat_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	/* the filters are decided once per event type */
	m->user = cat_wanted(ctx, m) ? (void *)1 : NULL;
	return 0;
}

static int cat_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct cat_ctx *c = ctx;
	if (c->learn) {
		int err = rtd_nettrace_methods_event(c->methods, ev);
		if (err)
			return err;
	}
	if (!ev->meta->user)
		return 0;
	int err = rtd_nettrace_format_append(
		c->dec, ev, c->flags, c->methods ? cat_frame : NULL, c->methods,
		&c->buf, &c->len, &c->cap);
	if (err)
		return err;
	if (c->len >= OUT_FLUSH)
		return cat_flush(c);
	return 0;
}

static int cmd_cat(int argc, char **argv);

static const struct cli_cmd cmd_cat_def = {
	"nettrace cat", "FILE|-",
	"Print every event of an EventPipe stream (.nettrace, .netperf), one "
	"per line:\nseconds since the trace start, thread, Provider/EventName, "
	"fields (mapped values\nsuch as GC Reason by name).",
	cat_opts, 1, 1, 0, cmd_cat,
	"Order: a file is printed in time order (--sorted) as TraceEvent "
	"delivers it; stdin\nin stream order (--stream), which differs where "
	"threads' buffers interleave.\nBytes a built-in schema does not "
	"describe are shown as unparsed=0x..., never dropped.\n"
	"Examples:\n  rtdiag nettrace cat --event 'GC/*' --event "
	"Exception/Start trace.nettrace\n  rtdiag nettrace cat --json --stack "
	"--provider '*dotnetruntime' trace.nettrace\n"};

static bool cat_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	return cat_wanted(ctx, m);
}

/* cat --format perfetto|chrome-json: the filtered events as a timeline. */
static int cat_timeline(struct cat_ctx *c, const char *path, int fmt,
			const char *outp, bool sorted)
{
	static const char *const names[] = {"text", "perfetto", "chrome-json"};
	struct cli_format f;
	if (cli_format_pick(cmd_cat_def.name, fmt > 0 ? names[fmt] : NULL, outp,
			    CLI_FMT_TIMELINE, "perfetto", &f))
		return CLI_USAGE;
	if (c->flags)
		return cli_cmd_usage(&cmd_cat_def, "--json and --stack are for "
				     "text: a timeline names its samples' "
				     "frames itself");
	if (sorted)
		fprintf(stderr, "rtdiag: --sorted: a timeline is in stream "
				"order (its viewers sort by time)\n");
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	int rc = cli_timeline_nettrace(in, path, NULL, 0, &f, outp, cat_want, c);
	cli_close_in(in);
	return rc;
}

static int cmd_cat(int argc, char **argv)
{
	struct cat_ctx c;
	memset(&c, 0, sizeof(c));
	int sorted = -1, fmt = -1;
	const char *outp = NULL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &cmd_cat_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case CAT_JSON:
			c.flags |= RTD_NT_FMT_JSON | RTD_NT_FMT_STACK;
			break;
		case CAT_STACK:
			c.flags |= RTD_NT_FMT_STACK;
			c.methods = (void *)1; /* made below */
			break;
		case CAT_PROVIDER:
		case CAT_EVENT: {
			int *n = id == CAT_PROVIDER ? &c.nproviders
						    : &c.nevents;
			if (*n == MAX_FILTERS)
				return cli_cmd_usage(&cmd_cat_def,
						     "at most %d --%s",
						     MAX_FILTERS,
						     v.opt->name);
			(id == CAT_PROVIDER ? c.providers
					    : c.events)[(*n)++] = v.str;
			break;
		}
		case CAT_FORMAT: fmt = (int)v.i; break;
		case CAT_OUT: outp = v.str; break;
		case CAT_SORTED:
		case CAT_STREAM:
			if (sorted == (id == CAT_STREAM))
				return cli_cmd_usage(&cmd_cat_def,
						     "--sorted and --stream "
						     "exclude each other");
			sorted = id == CAT_SORTED;
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (fmt > 0 || (fmt < 0 && outp && !cli_out_is_stdout(outp) &&
			 rtd_timeline_format_from_path(outp)))
		return cat_timeline(&c, p.pos[0], fmt, outp, sorted > 0);
	if (outp)
		return cli_cmd_usage(&cmd_cat_def, "-o is for a timeline: "
				     "--format perfetto|chrome-json");
	struct input in;
	if (input_open(&in, p.pos[0]))
		return CLI_FAIL;
	if (sorted < 0)
		sorted = in.map != NULL;
	int rc = 0;
	if (c.methods) {
		c.methods = rtd_nettrace_methods_new();
		if (!c.methods) {
			input_close(&in);
			return cli_fail("out of memory");
		}
		/* a file: every method first (its rundown comes last) */
		if (!in.map)
			c.learn = true;
		else if (rtd_nettrace_methods_learn_fd(c.methods, fileno(in.f)) == -ENOMEM)
			rc = -ENOMEM;
	}
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &c,
				      .on_event = cat_event,
				      .on_metadata = cat_meta,
				      .sort = sorted,
				      .stable_input = in.map != NULL};
	c.dec = rtd_nettrace_new(&o);
	if (!c.dec || rc) {
		input_close(&in);
		rtd_nettrace_methods_free(c.methods);
		rtd_nettrace_free(c.dec);
		return cli_fail("out of memory");
	}
	bool read_err;
	rc = pump(c.dec, &in, false, &read_err);
	if (!c.out_errno)
		cat_flush(&c);
	int ret = CLI_OK;
	if (c.out_errno)
		/* stdout failed (a full disk, a closed pipe): say so, not
		 * that the input is bad */
		ret = cli_fail("stdout: %s", strerror(c.out_errno));
	else if (rc)
		ret = input_error(c.dec, &in, rc, read_err,
				  events_of(c.dec) > 0);
	free(c.buf);
	rtd_nettrace_free(c.dec);
	rtd_nettrace_methods_free(c.methods);
	input_close(&in);
	return ret;
}

/* ---- stats ------------------------------------------------------------- */

struct stats_ctx {
	rtd_nettrace_tally *tally;
	int err;
};

static int stats_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct stats_ctx *s = ctx;
	return rtd_nettrace_tally_metadata(s->tally, m);
}

static int stats_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct stats_ctx *s = ctx;
	rtd_nettrace_tally_event(s->tally, ev);
	return 0;
}

static void print_drop(void *ctx, uint64_t tid, uint64_t n)
{
	(void)ctx;
	printf("  thread %" PRIu64 "\t%" PRIu64 "\n", tid, n);
}

static void print_stats(rtd_nettrace *dec, struct stats_ctx *s)
{
	const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(dec, &st);
	printf("format: %s V%d\n", info->format <= 3 ? "NetPerf" : "NetTrace",
	       info->format);
	printf("start: %04d-%02d-%02dT%02d:%02d:%02d.%03dZ\n",
	       info->sync_year, info->sync_month, info->sync_day,
	       info->sync_hour, info->sync_minute, info->sync_second,
	       info->sync_ms);
	printf("clock: %" PRIu64 " ticks/s, start at tick %" PRIu64 "\n",
	       info->tick_freq, info->sync_ticks);
	printf("pointer size: %u\n", info->pointer_size);
	printf("pid: %u\n", info->pid);
	printf("processors: %u\n", info->nprocs);
	printf("bytes: %" PRIu64 "\n", st.bytes);
	printf("events: %" PRIu64 "\n", st.events);
	printf("event types: %" PRIu64 "\n", st.metadata);
	printf("stacks: %" PRIu64 "\n", st.stacks);
	printf("sequence points: %" PRIu64 "\n", st.seqpoints);
	printf("dropped events: %" PRIu64 "\n", st.dropped);
	printf("\n");
	size_t n;
	const struct rtd_nettrace_tally_entry *t;
	if (rtd_nettrace_tally_types(s->tally, &t, &n))
		s->err = -ENOMEM;
	for (size_t i = 0; !s->err && i < n; i++)
		printf("%s\t%" PRIu64 "\n", t[i].name, t[i].events);
	printf("\ndropped events per thread:\n");
	if (st.dropped)
		rtd_nettrace_drops(dec, print_drop, NULL);
	else
		printf("  none\n");
	printf("payload bytes per provider:\n");
	int e = rtd_nettrace_tally_providers(s->tally, &t, &n);
	if (e)
		s->err = e;
	for (size_t i = 0; i < n; i++)
		printf("  %s\t%" PRIu64 "\n", t[i].name, t[i].bytes);
}

static int cmd_stats(int argc, char **argv);

static const struct cli_cmd cmd_stats_def = {
	"nettrace stats", "FILE|-",
	"Print the trace header, then one line per event type\n"
	"'Provider/EventName<TAB>count' sorted by name, then dropped events "
	"per thread and\npayload bytes per provider (indented).",
	NULL, 1, 1, 0, cmd_stats,
	"After damage the counts of everything decoded before it are "
	"printed, then where\nand why it stopped (exit 3); input that is no "
	"trace at all prints only the error.\n"};

static int cmd_stats(int argc, char **argv)
{
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &cmd_stats_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		;
	if (id < 0)
		return cli_opt_exit(id);
	struct input in;
	if (input_open(&in, p.pos[0]))
		return CLI_FAIL;
	struct stats_ctx s;
	memset(&s, 0, sizeof(s));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &s,
				      .on_event = stats_event,
				      .on_metadata = stats_meta};
	rtd_nettrace *dec = rtd_nettrace_tally_new(&s.tally) ? NULL : rtd_nettrace_new(&o);
	int ret = CLI_OK;
	if (!dec) {
		ret = cli_fail("out of memory");
	} else {
		bool read_err;
		int rc = pump(dec, &in, false, &read_err);
		/* what was decoded before damage is complete: print it; a
		 * stream with no header is no trace: print only the error */
		if (rtd_nettrace_info(dec))
			print_stats(dec, &s);
		fflush(stdout);
		if (rc)
			ret = input_error(dec, &in, rc, read_err,
					  rtd_nettrace_info(dec) != NULL);
		else if (s.err)
			ret = cli_fail("out of memory");
		else if (ferror(stdout))
			ret = cli_fail("stdout: %s", strerror(errno));
	}
	input_close(&in);
	rtd_nettrace_tally_free(s.tally);
	rtd_nettrace_free(dec);
	return ret;
}

/* ---- profile ----------------------------------------------------------- */

enum { PROF_MANAGED = 1, PROF_FORMAT, PROF_OUT };

static const struct cli_opt prof_opts[] = {
	{PROF_MANAGED, "managed-only", 0, CLI_ARG_NONE, 0, NULL,
	 "do not count time spent outside managed code", 0, 0},
	{PROF_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0,
	 "folded|pprof|top|svg|speedscope",
	 "folded (default: 'root;...;leaf NANOSECONDS'), pprof (gzip "
	 "protobuf), top (frames by self time), svg (a flame graph), "
	 "speedscope (JSON); without it, from -o's extension", 0, 0},
	{PROF_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write there instead of stdout (replaced only when the profile is "
	 "written)", 0, 0},
	{0},
};

int64_t cli_nt_read(void *ctx, void *buf, size_t len)
{
	struct cli_nt_reader *r = ctx;
	if (r->nfirst) {
		size_t n = r->nfirst < len ? r->nfirst : len;
		memcpy(buf, r->first, n);
		r->first += n;
		r->nfirst -= n;
		return (int64_t)n;
	}
	size_t n = fread(buf, 1, len, r->f);
	if (n == 0 && ferror(r->f)) {
		r->read_err = true;
		return errno ? -errno : -EIO;
	}
	r->total += n;
	if ((++r->tick & 7) == 0 && !r->quiet && cli_progress_enabled()) {
		char b[32];
		cli_progress("%s: %s", r->path, cli_bytes((double)r->total, b, sizeof(b)));
	}
	return (int64_t)n;
}

int cli_nettrace_cpu(FILE *in, const char *path, const uint8_t *first,
		     size_t nfirst, struct rtd_nettrace_profiler *prof,
		     rtd_source **srcp, struct cli_nt_end *end)
{
	struct cli_nt_reader r = {.f = in, .path = path, .first = first,
			      .nfirst = nfirst};
	/* frames are named at the end, from the methods the stream gave */
	RTD_OPTS(rtd_nettrace_source_opts, so, .kinds = 1u << RTD_REC_SAMPLE,
		 .address_frames = true);
	memset(end, 0, sizeof(*end));
	int rc = 0;
	rtd_source *src = rtd_nettrace_source_stream(cli_nt_read, &r, &so, &rc);
	if (src)
		rc = rtd_nettrace_profiler_pull(prof, src);
	cli_progress_done();
	const struct rtd_record *er;
	if (rc < 0 && src && rtd_source_next(src, &er) < 0)
		snprintf(end->msg, sizeof(end->msg), "%s", er->message);
	end->read_err = r.read_err;
	*srcp = src;
	return rc;
}

void cli_nettrace_done(rtd_source *src, struct cli_nt_end *end)
{
	(void)end;
	rtd_source_free(src);
}

static int write_top(rtd_profile *prof, FILE *out)
{
	struct rtd_profile_entry top[40];
	int nt = rtd_profile_top(prof, top, 40);
	if (nt < 0)
		return nt;
	int64_t tot = rtd_profile_total(prof);
	fprintf(out, "%14s %6s %14s %6s  %s\n", "self(ns)", "self%",
		"total(ns)", "total%", "frame");
	for (int i = 0; i < nt; i++)
		fprintf(out, "%14" PRId64 " %5.1f%% %14" PRId64 " %5.1f%%  %s\n",
			top[i].self,
			tot ? 100.0 * (double)top[i].self / (double)tot : 0.0,
			top[i].total,
			tot ? 100.0 * (double)top[i].total / (double)tot : 0.0,
			top[i].name);
	return 0;
}

static int cmd_profile(int argc, char **argv);

static const struct cli_cmd cmd_profile_def = {
	"nettrace profile", "FILE|-",
	"CPU time per call stack from Microsoft-DotNETCore-SampleProfiler "
	"samples,\nmethod names from the rundown and MethodLoadVerbose events.",
	prof_opts, 1, 1, 0, cmd_profile,
	"With -o, FILE is checked before the input is read and replaced only "
	"when the\nprofile is written: a failed run leaves an existing FILE "
	"as it was. After damage\nin the input (a trace cut short) the profile "
	"of the samples before it is written,\nthen where and why the input "
	"stopped, exit 3.\n"};

/* @prof in @format (0 folded, 1 pprof, 2 top, 3 svg, 4 speedscope) */
static int write_profile(rtd_profile *prof, FILE *f, int format,
			 const char *path)
{
	if (format == 0)
		return rtd_profile_write_folded(prof, f);
	if (format == 1)
		return rtd_profile_write_pprof(prof, f);
	if (format == 2)
		return write_top(prof, f);
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "eventpipe",
				     .process = path};
	rtd_profile_set_meta(prof, &m);
	return rtd_profile_write(prof, format == 3 ? RTD_PROFILE_FMT_SVG
						   : RTD_PROFILE_FMT_SPEEDSCOPE,
				 f, NULL);
}

static int cmd_profile(int argc, char **argv)
{
	const char *outp = NULL;
	int format = -1; /* folded, pprof, top, svg, speedscope */
	bool managed_only = false;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &cmd_profile_def, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case PROF_MANAGED: managed_only = true; break;
		case PROF_FORMAT: format = (int)v.i; break;
		case PROF_OUT: outp = v.str; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	const char *path = p.pos[0];
	if (format < 0) { /* from the file name, as every command does */
		struct cli_format f;
		if (cli_format_pick(cmd_profile_def.name, NULL, outp,
				    CLI_FMT_PROFILE, "folded", &f))
			return CLI_USAGE;
		format = f.prof == RTD_PROFILE_FMT_PPROF ? 1
			 : f.prof == RTD_PROFILE_FMT_TOP ? 2
			 : f.prof == RTD_PROFILE_FMT_SVG ? 3
			 : f.prof == RTD_PROFILE_FMT_SPEEDSCOPE ? 4
							    : 0;
	}
	if (format == 1 && cli_out_is_stdout(outp) && isatty(STDOUT_FILENO))
		return cli_cmd_usage(&cmd_profile_def,
				     "pprof output is binary: use -o FILE or a "
				     "pipe");
	/* the target first: a run that cannot write fails before reading */
	if (outp && cli_out_check(outp))
		return CLI_FAIL;
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	rtd_nettrace_profiler *np;
	rtd_source *src = NULL;
	struct cli_nt_end end = {0};
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.managed_only = managed_only};
	np = rtd_nettrace_profiler_new(&po);
	rtd_profile *prof = rtd_profile_new("cpu", "nanoseconds");
	int ret = CLI_OK;
	if (!np || !prof) {
		ret = cli_fail("out of memory");
		goto done;
	}
	int rc = cli_nettrace_cpu(in, path, NULL, 0, np, &src, &end);
	if (rc && (rc == -ENOMEM || rtd_nettrace_profiler_samples(np) == 0)) {
		/* nothing to show: say what is wrong with the input, and
		 * only that */
		ret = nt_end_error(path, rc, &end, false);
		goto done;
	}
	if (rc) /* damage after samples: their profile, then where and why */
		ret = nt_end_error(path, rc, &end, true);
	int err = rtd_nettrace_profiler_finish(np, prof);
	if (err) {
		ret = cli_fail("%s: building the profile: %s", path,
			       rtd_strerror(err));
		goto done;
	}
	if (rtd_nettrace_profiler_samples(np) == 0)
		fprintf(stderr, "rtdiag: %s: no SampleProfiler samples (was "
				"the Microsoft-DotNETCore-SampleProfiler "
				"provider enabled?)\n", path);
	struct cli_out out;
	if (cli_out_open(&out, outp ? outp : "-")) {
		ret = CLI_FAIL;
		goto done;
	}
	err = write_profile(prof, out.f, format, path);
	if (err) {
		cli_out_abort(&out);
		ret = cli_fail("%s: writing the profile: %s",
			       outp ? outp : "stdout", rtd_strerror(err));
	} else if (cli_out_commit(&out)) {
		ret = CLI_FAIL;
	} else if (ret == CLI_PARTIAL) {
		fprintf(stderr, "rtdiag: %s: the profile has the %" PRIu64
				" samples before that\n", path,
			rtd_nettrace_profiler_samples(np));
	}
done:
	cli_close_in(in);
	rtd_profile_free(prof);
	rtd_nettrace_profiler_free(np);
	cli_nettrace_done(src, &end);
	return ret;
}

/* ---- group ------------------------------------------------------------- */

static const struct cli_cmd *const cmds[] = {
	&cmd_cat_def, &cmd_stats_def, &cmd_profile_def, NULL};

static const char summary[] =
	"EventPipe streams (.nettrace V4-V6, .netperf V1-V3), from a file or - "
	"for stdin.";

static int run(int argc, char **argv)
{
	return cli_group_run("nettrace", cmds, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_group_help(f, "nettrace", summary, cmds, sub);
}

static const struct cli_cmd *const *list_cmds(void)
{
	return cmds;
}

const struct cli_group cli_group_nettrace = {
	"nettrace", "EventPipe streams: cat, stats, profile", run, help,
	list_cmds};
