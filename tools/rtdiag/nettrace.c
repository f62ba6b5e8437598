/* SPDX-License-Identifier: MIT */
/*
 * nettrace.c - the 'rtdiag nettrace' command group: cat, stats, profile
 * over an EventPipe stream in a file or on stdin.
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
#include "common/map.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

#define READ_CHUNK (1u << 20)

static const char *const subs[] = {"cat", "stats", "profile", NULL};

static const char usage_cat[] =
	"usage: rtdiag nettrace cat [--json] [--stack] [--provider NAME] "
	"[--event NAME] FILE|-\n"
	"\n"
	"Print every event of an EventPipe stream (.nettrace, .netperf), one "
	"per line:\n"
	"seconds since the trace start, thread, Provider/EventName, fields.\n"
	"\n"
	"  --json           JSON Lines: every field, header values, the stack\n"
	"  --stack          also print stack addresses in text mode\n"
	"  --provider NAME  only events of this provider\n"
	"  --event NAME     only events with this name (e.g. GC/Start)\n";

static const char usage_stats[] =
	"usage: rtdiag nettrace stats FILE|-\n"
	"\n"
	"Print the trace header, then one line per event type\n"
	"'Provider/EventName<TAB>count' sorted by name, then dropped events "
	"per\nthread and payload bytes per provider (indented).\n";

static const char usage_profile[] =
	"usage: rtdiag nettrace profile [--managed-only] [--format "
	"folded|pprof|top] [-o FILE] FILE|-\n"
	"\n"
	"CPU time per call stack from Microsoft-DotNETCore-SampleProfiler "
	"samples,\nmethod names from the rundown and MethodLoadVerbose "
	"events.\n"
	"\n"
	"  --managed-only   do not count time spent outside managed code\n"
	"  --format F       folded (default: 'root;...;leaf NANOSECONDS'), "
	"pprof\n"
	"                   (gzip protobuf), top (frames by self time)\n"
	"  -o FILE          write there instead of stdout\n";

static void show_progress(rtd_nettrace *dec, const char *path, uint64_t total)
{
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(dec, &st);
	char b[32];
	cli_progress("%s: %s, %" PRIu64 " events, %" PRIu64 " dropped", path,
		     cli_bytes((double)total, b, sizeof(b)), st.events,
		     st.dropped);
}

static int finish(rtd_nettrace *dec, const char *path, int rc)
{
	cli_progress_done();
	if (rc >= 0)
		rc = rtd_nettrace_finish(dec);
	if (rc < 0) {
		const char *msg = rtd_nettrace_error(dec, NULL);
		if (msg[0])
			return cli_fail("%s: %s", path, msg);
		return cli_fail("%s: %s", path, rtd_strerror(rc));
	}
	return 0;
}

/*
 * A regular file is mapped rather than read: no copy through the kernel.
 * Pages already decoded are dropped as the cursor moves (the decoder keeps
 * no pointer into its input after rtd_nettrace_feed() returns), so the
 * resident set stays a few MB whatever the file's size.
 */
static int pump_mapped(rtd_nettrace *dec, int fd, size_t size,
		       const char *path, bool *mapped)
{
	*mapped = false;
	void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	*mapped = true;
	madvise(map, size, MADV_SEQUENTIAL);
	const uint8_t *p = map;
	const size_t slice = 8u << 20;
	int rc = 0;
	for (size_t off = 0; off < size && rc == 0; off += slice) {
		size_t n = size - off < slice ? size - off : slice;
		rc = rtd_nettrace_feed(dec, p + off, n);
		madvise((void *)(p + off), n, MADV_DONTNEED);
		if (cli_progress_enabled())
			show_progress(dec, path, off + n);
	}
	munmap(map, size);
	return finish(dec, path, rc);
}

/* Feed a whole input to a decoder; prints the error and returns 1 on
 * failure. */
static int pump(rtd_nettrace *dec, FILE *in, const char *path)
{
	struct stat sb;
	if (fstat(fileno(in), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size > 0 && (uint64_t)sb.st_size < SIZE_MAX &&
	    lseek(fileno(in), 0, SEEK_CUR) == 0) {
		bool mapped;
		int r = pump_mapped(dec, fileno(in), (size_t)sb.st_size, path,
				    &mapped);
		if (mapped)
			return r;
	}
	uint8_t *buf = malloc(READ_CHUNK);
	if (!buf)
		return cli_fail("out of memory");
	int rc = 0;
	uint64_t total = 0;
	unsigned tick = 0;
	int fd = fileno(in);
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return cli_fail("%s: read: %s", path, strerror(errno));
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		rc = rtd_nettrace_feed(dec, buf, (size_t)n);
		if (rc < 0)
			break;
		if (rc == 1)
			break;
		if ((++tick & 63) == 0 && cli_progress_enabled())
			show_progress(dec, path, total);
	}
	free(buf);
	return finish(dec, path, rc);
}

/* ---- cat --------------------------------------------------------------- */

struct cat_ctx {
	rtd_nettrace *dec;
	unsigned flags;
	const char *provider;
	const char *event;
	FILE *out;
};

static int cat_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct cat_ctx *c = ctx;
	if (c->provider && strcmp(c->provider, ev->meta->provider))
		return 0;
	if (c->event && strcmp(c->event, ev->meta->name))
		return 0;
	size_t len;
	const char *s = rtd_nettrace_format(c->dec, ev, c->flags, &len);
	if (!s)
		return -ENOMEM;
	fwrite(s, 1, len, c->out);
	fputc('\n', c->out);
	if (ferror(c->out))
		return -EIO;
	return 0;
}

static int cmd_cat(int argc, char **argv)
{
	struct cat_ctx c = {0};
	c.out = stdout;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(usage_cat, stdout);
			return CLI_OK;
		} else if (!strcmp(argv[i], "--json")) {
			c.flags |= RTD_NT_FMT_JSON | RTD_NT_FMT_STACK;
		} else if (!strcmp(argv[i], "--stack")) {
			c.flags |= RTD_NT_FMT_STACK;
		} else if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
			c.provider = argv[++i];
		} else if (!strcmp(argv[i], "--event") && i + 1 < argc) {
			c.event = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("nettrace cat", "unknown option '%s'",
					 argv[i]);
		} else if (!path) {
			path = argv[i];
		} else {
			return cli_usage("nettrace cat", "one FILE only");
		}
	}
	if (!path)
		return cli_usage("nettrace cat", "missing FILE (or - for stdin)");
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &c,
				      .on_event = cat_event};
	c.dec = rtd_nettrace_new(&o);
	if (!c.dec) {
		cli_close_in(in);
		return cli_fail("out of memory");
	}
	int rc = pump(c.dec, in, path);
	fflush(stdout);
	rtd_nettrace_free(c.dec);
	cli_close_in(in);
	return rc ? CLI_FAIL : CLI_OK;
}

/* ---- stats ------------------------------------------------------------- */

struct counter {
	uint64_t events;
	uint64_t bytes;
};

struct stats_ctx {
	rtd_strmap types;     /* "Provider/Name" -> counter */
	rtd_strmap providers; /* provider -> counter */
	char key[1024];
	int err;
};

static struct counter *counter_for(rtd_strmap *m, const char *key, int *err)
{
	void *v;
	if (rtd_strmap_get(m, key, strlen(key), &v))
		return v;
	struct counter *c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	int e = rtd_strmap_put(m, key, strlen(key), c);
	if (e) {
		free(c);
		*err = e;
		return NULL;
	}
	return c;
}

static int stats_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct stats_ctx *s = ctx;
	snprintf(s->key, sizeof(s->key), "%s/%s", m->provider, m->name);
	int err = 0;
	struct counter *c = counter_for(&s->types, s->key, &err);
	if (!c)
		return err;
	m->user = c;
	return 0;
}

static int stats_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	(void)ctx;
	struct counter *c = ev->meta->user;
	c->events++;
	c->bytes += ev->payload_len;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_drop(void *ctx, uint64_t tid, uint64_t n)
{
	(void)ctx;
	printf("  thread %" PRIu64 "\t%" PRIu64 "\n", tid, n);
}

static int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(usage_stats, stdout);
			return CLI_OK;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("nettrace stats", "unknown option '%s'",
					 argv[i]);
		} else if (!path) {
			path = argv[i];
		} else {
			return cli_usage("nettrace stats", "one FILE only");
		}
	}
	if (!path)
		return cli_usage("nettrace stats",
				 "missing FILE (or - for stdin)");
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	struct stats_ctx s;
	memset(&s, 0, sizeof(s));
	rtd_strmap_init(&s.types, 0);
	rtd_strmap_init(&s.providers, 0);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &s,
				      .on_event = stats_event,
				      .on_metadata = stats_meta};
	rtd_nettrace *dec = rtd_nettrace_new(&o);
	if (!dec) {
		cli_close_in(in);
		return cli_fail("out of memory");
	}
	int rc = pump(dec, in, path);
	cli_close_in(in);

	/* print what was decoded even after an error: it is all complete */
	const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(dec, &st);
	if (info) {
		printf("format: %s V%d\n", info->format == 3 ? "NetPerf"
							       : "NetTrace",
		       info->format);
		printf("start: %04d-%02d-%02dT%02d:%02d:%02d.%03dZ\n",
		       info->sync_year, info->sync_month, info->sync_day,
		       info->sync_hour, info->sync_minute, info->sync_second,
		       info->sync_ms);
		printf("clock: %" PRIu64 " ticks/s, start at tick %" PRIu64
		       "\n", info->tick_freq, info->sync_ticks);
		printf("pointer size: %u\n", info->pointer_size);
		printf("pid: %u\n", info->pid);
		printf("processors: %u\n", info->nprocs);
	}
	printf("bytes: %" PRIu64 "\n", st.bytes);
	printf("events: %" PRIu64 "\n", st.events);
	printf("event types: %" PRIu64 "\n", st.metadata);
	printf("stacks: %" PRIu64 "\n", st.stacks);
	printf("sequence points: %" PRIu64 "\n", st.seqpoints);
	printf("dropped events: %" PRIu64 "\n", st.dropped);
	printf("\n");

	size_t n = s.types.count, k = 0;
	const char **names = calloc(n ? n : 1, sizeof(*names));
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	int err = 0;
	while (names && (e = rtd_strmap_next(&s.types, &b, e))) {
		struct counter *c = e->val;
		if (c->events)
			names[k++] = e->key;
		/* provider = key up to its first '/' after the provider */
	}
	if (names) {
		qsort(names, k, sizeof(*names), cmp_str);
		for (size_t i = 0; i < k; i++) {
			void *v;
			rtd_strmap_get(&s.types, names[i], strlen(names[i]), &v);
			struct counter *c = v;
			printf("%s\t%" PRIu64 "\n", names[i], c->events);
		}
	}
	/* bytes per provider: metadata knows each type's provider */
	b = 0;
	e = NULL;
	printf("\ndropped events per thread:\n");
	if (st.dropped)
		rtd_nettrace_drops(dec, print_drop, NULL);
	else
		printf("  none\n");
	printf("payload bytes per provider:\n");
	while ((e = rtd_strmap_next(&s.types, &b, e))) {
		struct counter *c = e->val;
		/* the provider name is the key before the event name; event
		 * names may contain '/', provider names do not */
		const char *slash = strchr(e->key, '/');
		size_t plen = slash ? (size_t)(slash - e->key) : e->klen;
		char pk[512];
		snprintf(pk, sizeof(pk), "%.*s", (int)plen, e->key);
		struct counter *pc = counter_for(&s.providers, pk, &err);
		if (pc) {
			pc->events += c->events;
			pc->bytes += c->bytes;
		}
	}
	n = s.providers.count;
	const char **pn = calloc(n ? n : 1, sizeof(*pn));
	k = 0;
	b = 0;
	e = NULL;
	while (pn && (e = rtd_strmap_next(&s.providers, &b, e)))
		pn[k++] = e->key;
	if (pn) {
		qsort(pn, k, sizeof(*pn), cmp_str);
		for (size_t i = 0; i < k; i++) {
			void *v;
			rtd_strmap_get(&s.providers, pn[i], strlen(pn[i]), &v);
			struct counter *c = v;
			printf("  %s\t%" PRIu64 "\n", pn[i], c->bytes);
		}
	}
	free(pn);
	free(names);
	b = 0;
	e = NULL;
	while ((e = rtd_strmap_next(&s.types, &b, e)))
		free(e->val);
	b = 0;
	e = NULL;
	while ((e = rtd_strmap_next(&s.providers, &b, e)))
		free(e->val);
	rtd_strmap_free(&s.types);
	rtd_strmap_free(&s.providers);
	rtd_nettrace_free(dec);
	if (err)
		return cli_fail("out of memory");
	return rc ? CLI_FAIL : CLI_OK;
}

/* ---- profile ----------------------------------------------------------- */

struct prof_ctx {
	rtd_nettrace *dec;
	rtd_nettrace_profiler *prof;
};

static int prof_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct prof_ctx *p = ctx;
	return rtd_nettrace_profiler_event(p->prof, p->dec, ev);
}

static int prof_sp(void *ctx, uint64_t ts)
{
	(void)ts;
	struct prof_ctx *p = ctx;
	return rtd_nettrace_profiler_seqpoint(p->prof);
}

static int cmd_profile(int argc, char **argv)
{
	const char *path = NULL, *outp = NULL, *format = "folded";
	bool managed_only = false;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			fputs(usage_profile, stdout);
			return CLI_OK;
		} else if (!strcmp(argv[i], "--managed-only")) {
			managed_only = true;
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			format = argv[++i];
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			outp = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("nettrace profile",
					 "unknown option '%s'", argv[i]);
		} else if (!path) {
			path = argv[i];
		} else {
			return cli_usage("nettrace profile", "one FILE only");
		}
	}
	if (!path)
		return cli_usage("nettrace profile",
				 "missing FILE (or - for stdin)");
	if (strcmp(format, "folded") && strcmp(format, "pprof") &&
	    strcmp(format, "top"))
		return cli_usage("nettrace profile",
				 "--format must be folded, pprof or top");
	FILE *in = cli_open_in(path);
	if (!in)
		return CLI_FAIL;
	struct prof_ctx pc;
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.managed_only = managed_only};
	pc.prof = rtd_nettrace_profiler_new(&po);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &pc,
				      .on_event = prof_event,
				      .on_seqpoint = prof_sp};
	pc.dec = rtd_nettrace_new(&o);
	rtd_profile *prof = rtd_profile_new("cpu", "nanoseconds");
	if (!pc.prof || !pc.dec || !prof) {
		cli_close_in(in);
		rtd_nettrace_free(pc.dec);
		rtd_nettrace_profiler_free(pc.prof);
		rtd_profile_free(prof);
		return cli_fail("out of memory");
	}
	int rc = pump(pc.dec, in, path);
	cli_close_in(in);
	int err = rtd_nettrace_profiler_finish(pc.prof, prof);
	if (err)
		rc = cli_fail("%s: building the profile: %s", path,
			      rtd_strerror(err));
	else if (rtd_nettrace_profiler_samples(pc.prof) == 0)
		fprintf(stderr, "rtdiag: %s: no SampleProfiler samples (was "
				"the Microsoft-DotNETCore-SampleProfiler "
				"provider enabled?)\n", path);
	FILE *out = stdout;
	if (!err && outp) {
		out = fopen(outp, "wb");
		if (!out) {
			rc = cli_fail("%s: %s", outp, strerror(errno));
			err = -errno;
		}
	}
	if (!err) {
		if (!strcmp(format, "folded")) {
			err = rtd_profile_write_folded(prof, out);
		} else if (!strcmp(format, "pprof")) {
			if (!outp && isatty(fileno(stdout)))
				err = -EINVAL, rc = cli_fail(
					"pprof output is binary: use -o FILE "
					"or a pipe");
			else
				err = rtd_profile_write_pprof(prof, out);
		} else {
			struct rtd_profile_entry top[40];
			int nt = rtd_profile_top(prof, top, 40);
			int64_t tot = rtd_profile_total(prof);
			fprintf(out, "%14s %6s %14s %6s  %s\n", "self(ns)",
				"self%", "total(ns)", "total%", "frame");
			for (int i = 0; i < nt; i++)
				fprintf(out,
					"%14" PRId64 " %5.1f%% %14" PRId64
					" %5.1f%%  %s\n",
					top[i].self,
					tot ? 100.0 * (double)top[i].self /
						      (double)tot
					    : 0.0,
					top[i].total,
					tot ? 100.0 * (double)top[i].total /
						      (double)tot
					    : 0.0,
					top[i].name);
			if (nt < 0)
				err = nt;
		}
		if (!rc && err)
			rc = cli_fail("writing the profile: %s",
				      rtd_strerror(err));
	}
	if (out && out != stdout)
		fclose(out);
	rtd_profile_free(prof);
	rtd_nettrace_profiler_free(pc.prof);
	rtd_nettrace_free(pc.dec);
	return rc ? CLI_FAIL : CLI_OK;
}

/* ---- group ------------------------------------------------------------- */

static int run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("nettrace", "missing subcommand");
	if (!strcmp(argv[1], "cat"))
		return cmd_cat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "profile"))
		return cmd_profile(argc - 1, argv + 1);
	return cli_usage("nettrace", "no subcommand '%s'", argv[1]);
}

static bool help(FILE *f, const char *sub)
{
	if (!sub) {
		fprintf(f, "usage: rtdiag nettrace SUBCOMMAND ...\n\n"
			   "EventPipe streams (.nettrace V4-V6, .netperf V3), "
			   "from a file or - for stdin:\n"
			   "  cat      print events (text or --json)\n"
			   "  stats    header, counts per event type, drops\n"
			   "  profile  CPU profile from SampleProfiler "
			   "samples\n");
		return true;
	}
	if (!strcmp(sub, "cat"))
		fputs(usage_cat, f);
	else if (!strcmp(sub, "stats"))
		fputs(usage_stats, f);
	else if (!strcmp(sub, "profile"))
		fputs(usage_profile, f);
	else
		return false;
	(void)subs;
	return true;
}

const struct cli_group cli_group_nettrace = {
	"nettrace", "EventPipe streams: cat, stats, profile", run, help};
