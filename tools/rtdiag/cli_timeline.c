/* SPDX-License-Identifier: MIT */
/*
 * cli_timeline.c - a Go trace or an EventPipe stream written as a timeline
 * (Perfetto, Chrome JSON): a Go trace's records through a Go source into
 * its adapter (rtd_tl_gotrace), an EventPipe stream's records through a
 * nettrace source into rtd_tl_nettrace_pull(). Shared by
 * `rtdiag convert`, `gotrace cat --format` and `nettrace cat --format`.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_format.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/timeline.h"

/* ---- Go traces -------------------------------------------------------------- */

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
	const char *path;
	uint64_t events;
};

static int gtl_take(void *ctx, const struct rtd_record *rec)
{
	struct gtl_sink *k = ctx;
	int rc = rtd_tl_gotrace_record(k->a, rec);
	if (rc < 0)
		return rc;
	if (rec->kind == RTD_REC_INSTANT && (++k->events & 0xfffff) == 0 &&
	    cli_progress_enabled())
		cli_progress("%s: %llu events", k->path, (unsigned long long)k->events);
	return 0;
}

/* The Go timeline drawn from the Go source's records (go_events), each
 * handed to the adapter from inside the source's loop (rtd_source_each);
 * the records carry only the fields the timeline reads */
int cli_timeline_gotrace(FILE *in, const char *path, const uint8_t *first,
			 size_t nfirst, const struct cli_format *f, const char *outp)
{
	struct cli_timeline t;
	if (cli_timeline_open(&t, f, outp))
		return CLI_FAIL;
	RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true,
		 .threads = cli_second_thread_pays() ? 2 : 1, .field_want = rtd_tl_gotrace_fields);
	struct cli_gostream st;
	int rc = -ENOMEM;
	rtd_source *src = cli_gotrace_source(in, first, nfirst, &so, &st, &rc);
	const char *base = strrchr(path, '/');
	struct gtl_sink k = {.path = path};
	k.a = src ? rtd_tl_gotrace_new(t.tl, base ? base + 1 : path) : NULL;
	const struct rtd_record *r = NULL;
	if (k.a) {
		/* progress counted on a terminal; else the adapter is the
		 * callback, and the events are the source's count */
		bool counted = cli_progress_enabled();
		rc = counted ? rtd_source_each(src, gtl_take, &k)
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

/* ---- EventPipe streams ----------------------------------------------------------- */

/* The stream's records drawn in its own order (the timeline's viewers
 * sort by time): a file's frames named by the adapter from every method
 * of a first pass, a pipe's by the source as their events come. */
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
	rtd_tl_nettrace *a = rtd_tl_nettrace_new(t.tl, base ? base + 1 : path);
	struct stat sb;
	bool file = fstat(fileno(in), &sb) == 0 && S_ISREG(sb.st_mode);
	rtd_nettrace_methods *m = file ? rtd_nettrace_methods_new() : NULL;
	if (m) {
		/* the rundown that names what was jitted before the session
		 * comes at the end: a file is read once first for it (a read
		 * error or damage is the second pass's to report) */
		if (rtd_nettrace_methods_learn_fd(m, fileno(in)) == -ENOMEM) {
			rtd_nettrace_methods_free(m);
			m = NULL;
		}
		rtd_tl_nettrace_set_methods(a, m);
	}
	struct cli_nt_reader r = {.f = in, .path = path, .first = first, .nfirst = nfirst,
				  .quiet = true};
	RTD_OPTS(rtd_nettrace_source_opts, so, .stream_order = true, .top_fields = true,
		 .address_frames = file, .no_methods = file, .want = want, .want_ctx = want_ctx,
		 .fields = rtd_tl_nettrace_fields, .kinds = RTD_TL_NETTRACE_KINDS);
	int rc = a && (m || !file) ? 0 : -ENOMEM;
	rtd_source *src = rc ? NULL : rtd_nettrace_source_stream(cli_nt_read, &r, &so, &rc);
	if (src)
		rc = rtd_tl_nettrace_pull(a, src);
	int ret = CLI_OK;
	struct rtd_nettrace_stats st = {0};
	if (src)
		rtd_nettrace_source_stats(src, &st);
	const struct rtd_record *er;
	if (rc < 0 && cli_timeline_failed(&t)) {
		ret = CLI_FAIL; /* the output's, said by the close */
	} else if (rc < 0) {
		const char *msg = r.read_err ? rtd_strerror(-EIO)
			: src && rtd_source_next(src, &er) < 0 ? er->message : "";
		cli_fail("%s: %s%s", path, msg && *msg ? msg : rtd_strerror(rc),
			 st.events ? " (the events before it are in the timeline)" : "");
		ret = st.events ? CLI_PARTIAL : CLI_FAIL;
	}
	int cr = cli_timeline_close(&t, st.events > 0);
	if (cr != CLI_OK)
		ret = cr;
	rtd_source_free(src);
	rtd_tl_nettrace_free(a);
	rtd_nettrace_methods_free(m);
	return ret;
}
