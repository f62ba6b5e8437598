/* SPDX-License-Identifier: MIT */
/*
 * cli_timeline.c - a Go trace or an EventPipe stream written as a timeline
 * (Perfetto, Chrome JSON): the input pumped through its decoder into the
 * source's adapter (rtd_tl_gotrace, rtd_tl_nettrace). Shared by
 * `rtdiag convert`, `gotrace cat --format` and `nettrace cat --format`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/timeline.h"

int64_t cli_pread_all(void *buf, size_t len, uint64_t off, void *ctx)
{
	int fd = *(int *)ctx;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
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

/* ---- Go traces -------------------------------------------------------------- */

int cli_gosrc_next(void *ctx, struct rtd_gotrace_event *ev)
{
	struct cli_gosrc *s = ctx;
	for (;;) {
		int rc = rtd_gotrace_dec_next(s->d, ev);
		if (rc != 0 || s->eof)
			return rc;
		size_t n = fread(s->buf, 1, 1 << 20, s->in);
		if (n)
			rc = rtd_gotrace_dec_feed(s->d, s->buf, n);
		else if (ferror(s->in))
			rc = -EIO;
		else {
			s->eof = true;
			rc = rtd_gotrace_dec_finish(s->d);
		}
		if (rc < 0)
			return rc;
	}
}

static int64_t gostream_read(void *ctx, void *buf, size_t len)
{
	struct cli_gostream *st = ctx;
	if (st->used < st->nfirst) {
		size_t n = st->nfirst - st->used < len ? st->nfirst - st->used : len;
		memcpy(buf, st->first + st->used, n);
		st->used += n;
		return (int64_t)n;
	}
	size_t n = fread(buf, 1, len, st->in);
	return n ? (int64_t)n : ferror(st->in) ? -EIO : 0;
}

struct rtd_source *cli_gotrace_source(FILE *in, const uint8_t *first, size_t nfirst,
				      const struct rtd_gotrace_source_opts *opts,
				      struct cli_gostream *st, int *err)
{
	int fd = fileno(in);
	struct stat sb;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		/* the file from its start, whatever was read of IN */
		char self[64];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		return rtd_gotrace_source_open(self, opts, err);
	}
	*st = (struct cli_gostream){.in = in, .first = first, .nfirst = nfirst};
	return rtd_gotrace_source_reader(gostream_read, st, opts, err);
}

struct gtl_sink {
	rtd_tl_gotrace *a;
	const rtd_gotrace_dec *d;
	const char *path;
	uint64_t events;
};

static int gtl_take(void *ctx, const struct rtd_gotrace_event *ev)
{
	struct gtl_sink *k = ctx;
	int rc = rtd_tl_gotrace_event(k->a, k->d, ev);
	if (rc < 0)
		return rc;
	if ((++k->events & 0xfffff) == 0 && cli_progress_enabled())
		cli_progress("%s: %llu events", k->path, (unsigned long long)k->events);
	return 0;
}

struct gtl_rec_sink {
	rtd_tl_gotrace *a;
	const char *path;
	uint64_t events;
};

static int gtl_take_rec(void *ctx, const struct rtd_record *rec)
{
	struct gtl_rec_sink *k = ctx;
	int rc = rtd_tl_gotrace_record(k->a, rec);
	if (rc < 0)
		return rc;
	if (rec->kind == RTD_REC_INSTANT && (++k->events & 0xfffff) == 0 &&
	    cli_progress_enabled())
		cli_progress("%s: %llu events", k->path, (unsigned long long)k->events);
	return 0;
}

/* The Go timeline drawn from the Go source's records (go_events), each
 * handed to the adapter from inside the source's loop (rtd_source_each):
 * the same bytes as the decoder's events (below) */
static int timeline_gotrace_rec(FILE *in, const char *path, const uint8_t *first,
				size_t nfirst, const struct cli_format *f, const char *outp)
{
	struct cli_timeline t;
	if (cli_timeline_open(&t, f, outp))
		return CLI_FAIL;
	RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true,
		 .threads = cli_second_thread_pays() ? 2 : 1);
	struct cli_gostream st;
	int rc = -ENOMEM;
	rtd_source *src = cli_gotrace_source(in, first, nfirst, &so, &st, &rc);
	const char *base = strrchr(path, '/');
	struct gtl_rec_sink k = {.path = path};
	k.a = src ? rtd_tl_gotrace_new(t.tl, base ? base + 1 : path) : NULL;
	const struct rtd_record *r = NULL;
	if (k.a) {
		/* progress counted on a terminal; else the adapter is the
		 * callback, and the events are the source's count */
		bool counted = cli_progress_enabled();
		rc = counted ? rtd_source_each(src, gtl_take_rec, &k)
			     : rtd_source_each(src, rtd_tl_gotrace_take, k.a);
		struct rtd_source_stats ss;
		rtd_source_stats(src, &ss);
		if (rc < 0 && ss.records[RTD_REC_ERROR]) /* the source's: its error record */
			(void)rtd_source_next(src, &r);
		if (!counted)
			k.events = ss.records[RTD_REC_INSTANT];
	} else if (src) {
		rc = -ENOMEM;
	}
	cli_progress_done();
	int ret = CLI_OK;
	if (rc < 0 && cli_timeline_failed(&t)) {
		ret = CLI_FAIL;
	} else if (rc < 0) {
		const char *msg = r && r->kind == RTD_REC_ERROR ? r->message : NULL;
		cli_fail("%s: %s%s", path, msg && *msg ? msg : rtd_strerror(rc),
			 k.events ? " (the events before it are in the timeline)" : "");
		ret = k.events ? CLI_PARTIAL : CLI_FAIL;
	}
	int c = cli_timeline_close(&t, k.events > 0);
	if (c != CLI_OK)
		ret = c;
	rtd_tl_gotrace_free(k.a);
	rtd_source_free(src);
	return ret;
}

int cli_timeline_gotrace(FILE *in, const char *path, const uint8_t *first,
		       size_t nfirst, const struct cli_format *f,
		       const char *outp)
{
	/* the record path, for measuring it against this one (docs/pictures.md) */
	const char *via = getenv("RTDIAG_GO_TIMELINE");
	if (via && !strcmp(via, "records"))
		return timeline_gotrace_rec(in, path, first, nfirst, f, outp);
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	if (!d)
		return cli_fail("out of memory");
	int fd = fileno(in);
	struct stat st;
	/* a regular file is read again for the ordering, not kept */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		rtd_gotrace_dec_set_source(d, cli_pread_all, &fd);
	struct cli_timeline t;
	if (cli_timeline_open(&t, f, outp)) {
		rtd_gotrace_dec_free(d);
		return CLI_FAIL;
	}
	const char *base = strrchr(path, '/');
	struct cli_gosrc src = {.d = d, .in = in, .buf = malloc(1 << 20)};
	struct gtl_sink sink = {.a = rtd_tl_gotrace_new(t.tl, base ? base + 1 : path),
				.d = d, .path = path};
	int rc = sink.a && src.buf ? rtd_gotrace_dec_feed(d, first, nfirst) : -ENOMEM;
	/* The first event on this thread (the header tells the format), the
	 * rest from a decoding thread of their own for a Go 1.22+ trace when
	 * a core is free (cli_second_thread_pays()): the same events in the same
	 * order either way. */
	struct rtd_gotrace_event ev;
	int drc = rc < 0 ? rc : cli_gosrc_next(&src, &ev);
	if (drc > 0)
		rc = gtl_take(&sink, &ev);
	if (drc > 0 && rc == 0) {
		/* cli_gosrc_next passes the decoder's events through */
		unsigned flags = RTD_GOTRACE_RUN_DEC_NEXT |
				 (cli_second_thread_pays() ? RTD_GOTRACE_RUN_THREAD : 0);
		rc = rtd_gotrace_run(d, cli_gosrc_next, &src, gtl_take, &sink, flags, &drc);
	}
	if (rc == 0)
		rc = drc;
	cli_progress_done();
	int ret = CLI_OK;
	/* a failed write (a full disk) is the output's, said by the close */
	if (rc < 0 && cli_timeline_failed(&t)) {
		ret = CLI_FAIL;
	} else if (rc < 0) {
		const char *msg = rtd_gotrace_dec_error(d, NULL);
		cli_fail("%s: %s%s", path, msg && *msg ? msg : rtd_strerror(rc),
			 sink.events ? " (the events before it are in the timeline)"
				     : "");
		ret = sink.events ? CLI_PARTIAL : CLI_FAIL;
	}
	/* what was drawn before damage is kept */
	int c = cli_timeline_close(&t, sink.events > 0);
	if (c != CLI_OK)
		ret = c;
	rtd_tl_gotrace_free(sink.a);
	rtd_gotrace_dec_free(d);
	free(src.buf);
	return ret;
}

/* ---- EventPipe streams ----------------------------------------------------------- */

struct ntl_ctx {
	rtd_nettrace *dec;
	rtd_tl_nettrace *a;
	rtd_nettrace_methods *methods;
	bool learn; /* the methods are learnt as events come */
	bool (*want)(void *ctx, const struct rtd_nettrace_metadata *m);
	void *want_ctx;
};

static int ntl_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct ntl_ctx *c = ctx;
	/* the filter is decided once per event type */
	m->user = !c->want || c->want(c->want_ctx, m) ? (void *)1 : NULL;
	return 0;
}

static int ntl_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct ntl_ctx *c = ctx;
	if (c->learn) {
		int err = rtd_nettrace_methods_event(c->methods, ev);
		if (err)
			return err;
	}
	if (!ev->meta->user)
		return 0;
	return rtd_tl_nettrace_event(c->a, c->dec, ev);
}

static int ntl_info(void *ctx, const struct rtd_nettrace_info *info)
{
	return rtd_tl_nettrace_info(((struct ntl_ctx *)ctx)->a, info);
}

static int learn_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	return rtd_nettrace_methods_event(ctx, ev);
}

/* A regular file is read once first for its methods: the rundown that
 * names what was jitted before the session comes at the stream's end.
 * Damage is reported by the second pass. */
static void learn_file(int fd, rtd_nettrace_methods *m, uint8_t *buf)
{
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = m,
				      .on_event = learn_event};
	rtd_nettrace *dec = rtd_nettrace_new(&o);
	if (!dec)
		return;
	int64_t n;
	uint64_t off = 0;
	int rc = 0;
	while (rc == 0 && (n = cli_pread_all(buf, 1 << 20, off, &fd)) > 0) {
		rc = rtd_nettrace_feed(dec, buf, (size_t)n);
		off += (uint64_t)n;
	}
	(void)rtd_nettrace_finish(dec);
	rtd_nettrace_free(dec);
}

int cli_timeline_nettrace(FILE *in, const char *path, const uint8_t *first,
			  size_t nfirst, const struct cli_format *f,
			  const char *outp,
			  bool (*want)(void *ctx,
				       const struct rtd_nettrace_metadata *m),
			  void *want_ctx)
{
	struct cli_timeline t;
	if (cli_timeline_open(&t, f, outp))
		return CLI_FAIL;
	const char *base = strrchr(path, '/');
	struct ntl_ctx c = {.a = rtd_tl_nettrace_new(t.tl, base ? base + 1 : path),
			    .methods = rtd_nettrace_methods_new(),
			    .want = want, .want_ctx = want_ctx};
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &c,
				      .on_event = ntl_event, .on_info = ntl_info,
				      .on_metadata = ntl_meta};
	c.dec = rtd_nettrace_new(&o);
	uint8_t *buf = malloc(1 << 20);
	int rc = c.a && c.dec && c.methods && buf ? 0 : -ENOMEM;
	if (!rc) {
		int fd = fileno(in);
		struct stat sb;
		if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
			learn_file(fd, c.methods, buf);
		else
			c.learn = true;
		rtd_tl_nettrace_set_methods(c.a, c.methods);
		rc = rtd_nettrace_feed(c.dec, first, nfirst);
	}
	size_t n;
	while (rc == 0 && (n = fread(buf, 1, 1 << 20, in)) > 0)
		rc = rtd_nettrace_feed(c.dec, buf, n);
	if (rc >= 0 && ferror(in))
		rc = -EIO;
	int fin = rc >= 0 && c.dec ? rtd_nettrace_finish(c.dec) : rc;
	int ret = CLI_OK;
	struct rtd_nettrace_stats st = {0};
	if (c.dec)
		rtd_nettrace_stats(c.dec, &st);
	if (fin < 0 && cli_timeline_failed(&t)) {
		ret = CLI_FAIL; /* the output's, said by the close */
	} else if (fin < 0) {
		const char *msg = c.dec ? rtd_nettrace_error(c.dec, NULL) : "";
		cli_fail("%s: %s%s", path, msg && *msg ? msg : rtd_strerror(fin),
			 st.events ? " (the events before it are in the timeline)"
				   : "");
		ret = st.events ? CLI_PARTIAL : CLI_FAIL;
	}
	int cr = cli_timeline_close(&t, st.events > 0);
	if (cr != CLI_OK)
		ret = cr;
	rtd_nettrace_free(c.dec);
	rtd_tl_nettrace_free(c.a);
	rtd_nettrace_methods_free(c.methods);
	free(buf);
	return ret;
}
