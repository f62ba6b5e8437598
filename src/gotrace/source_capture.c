/* SPDX-License-Identifier: MIT */
/*
 * source_capture.c - a live Go execution trace capture as a record
 * source (`rtdiag record --go-trace`, rtdiag/gotrace_source.h): the
 * capture (capture.c) runs on a thread of the recorder's own and streams
 * into an unlinked temporary file, read by the Go trace source (source.c)
 * like any trace file: once stopped, or while it grows (the live source:
 * at the end of what came, grow() polls the file's size every 20 ms
 * until more came or the capture ended; it also cuts the capture once
 * the grace given by rtd_gotrace_recorder_end() is over).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtdiag/gocapture.h"
#include "rtdiag/gotrace_source.h"

#define GR_DEFAULT_SECONDS 3600.0 /* ?seconds= when the recording ends it */

struct rtd_gotrace_recorder {
	struct rtd_gotrace_recorder_opts o;
	char *host;
	int fd;
	char path[64]; /* /proc/self/fd/N: the file has no name */
	int werr;
	pthread_t th;
	bool joined;
	volatile int stop;
	volatile bool done;
	int rc;
	struct rtd_gocapture_result res;
	char msg[512];
	/* the live source's */
	int64_t end_at;     /* CLOCK_MONOTONIC ns: cut then (0: not asked) */
	volatile bool cut;  /* stopped by us before the trace ended */
	off_t seen;         /* the file's size at the last grow() */
	char note[512];     /* the live source's word on a cut trace */
	bool incomplete;    /* its trace broke off, not cut by us */
};

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Cut the capture now (its thread ends soon after). */
static void cut_now(rtd_gotrace_recorder *r)
{
	if (!rtd_gotrace_recorder_done(r))
		r->cut = true;
	r->stop = 1;
}

static int on_data(const void *buf, size_t len, void *ctx)
{
	rtd_gotrace_recorder *r = ctx;
	const char *p = buf;
	while (len) {
		ssize_t n = write(r->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->werr = errno ? errno : EIO;
			return -r->werr;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *run_thread(void *arg)
{
	rtd_gotrace_recorder *r = arg;
	RTD_OPTS(rtd_gocapture_opts, co, .host = r->host,
		 .seconds = r->o.seconds > 0 ? r->o.seconds : GR_DEFAULT_SECONDS,
		 .on_data = on_data, .ctx = r, .stop = &r->stop);
	r->rc = rtd_gocapture_run(&co, &r->res, r->msg, sizeof(r->msg));
	if (r->werr)
		snprintf(r->msg, sizeof(r->msg), "writing the trace's temporary file: %s",
			 strerror(r->werr));
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

int rtd_gotrace_recorder_start(const struct rtd_gotrace_recorder_opts *opts,
			       rtd_gotrace_recorder **out)
{
	if (!out)
		return -RTD_E_INVAL;
	*out = NULL;
	struct rtd_gotrace_recorder_opts o;
	int rc = rtd_opts_copy(&o, sizeof(o), opts,
			       RTD_OPTS_END(rtd_gotrace_recorder_opts, end_grace));
	if (rc || !opts || !o.host || !o.host[0] || o.seconds < 0)
		return -RTD_E_INVAL;
	rtd_gotrace_recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = o;
	r->fd = -1;
	r->joined = true; /* until the thread runs */
	if (!(r->host = strdup(o.host))) {
		free(r);
		return -ENOMEM;
	}
	char tmpl[] = "/tmp/rtd-gotrace-XXXXXX";
	r->fd = mkstemp(tmpl);
	if (r->fd < 0) {
		rc = -errno;
		rtd_gotrace_recorder_free(r);
		return rc;
	}
	unlink(tmpl);
	snprintf(r->path, sizeof(r->path), "/proc/self/fd/%d", r->fd);
	rc = pthread_create(&r->th, NULL, run_thread, r);
	if (rc) {
		rtd_gotrace_recorder_free(r);
		return -rc;
	}
	r->joined = false;
	*out = r;
	return 0;
}

bool rtd_gotrace_recorder_incomplete(const rtd_gotrace_recorder *r)
{
	return r && r->incomplete;
}

bool rtd_gotrace_recorder_done(const rtd_gotrace_recorder *r)
{
	return r && __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

int rtd_gotrace_recorder_stop(rtd_gotrace_recorder *r, double grace)
{
	if (!r)
		return -RTD_E_INVAL;
	if (!r->joined) {
		/* a capture of the recording's own length ends by itself:
		 * give it @grace seconds, polled */
		for (double t = 0; t < grace && !rtd_gotrace_recorder_done(r); t += 0.02)
			nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
		cut_now(r);
		pthread_join(r->th, NULL);
		r->joined = true;
	}
	return r->rc;
}

const char *rtd_gotrace_recorder_errmsg(const rtd_gotrace_recorder *r)
{
	return !r ? "" : r->msg[0] ? r->msg : r->note;
}

rtd_source *rtd_gotrace_recorder_source(rtd_gotrace_recorder *r, int *err)
{
	if (!r || !r->joined || !r->res.bytes) {
		if (err)
			*err = -RTD_E_INVAL;
		return NULL;
	}
	RTD_OPTS(rtd_gotrace_source_opts, so, .pid = r->o.pid);
	return rtd_gotrace_source_open(r->path, &so, err);
}

void rtd_gotrace_recorder_end(rtd_gotrace_recorder *r)
{
	if (!r)
		return;
	if (r->o.end_grace <= 0) {
		cut_now(r);
		return;
	}
	int64_t at = mono_ns() + (int64_t)(r->o.end_grace * 1e9);
	int64_t was = 0;
	__atomic_compare_exchange_n(&r->end_at, &was, at, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* rtd_gotrace_source_opts.grow: has the file grown, or may it still? */
static bool grow(void *ctx)
{
	rtd_gotrace_recorder *r = ctx;
	bool was_done = rtd_gotrace_recorder_done(r); /* before the size: all of it */
	struct stat st;
	if (fstat(r->fd, &st) == 0 && st.st_size != r->seen) {
		r->seen = st.st_size;
		return true;
	}
	if (was_done)
		return false;
	int64_t end = __atomic_load_n(&r->end_at, __ATOMIC_ACQUIRE);
	if (end && mono_ns() >= end)
		cut_now(r); /* the grace is over */
	nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	return true;
}

/* The live source: the Go trace source's records; a trace cut by us ends
 * after its complete part, without the decoder's error. */
struct live {
	rtd_gotrace_recorder *r;
	rtd_source *in;
};

static int live_next(void *impl, struct rtd_record *rec)
{
	struct live *l = impl;
	const struct rtd_record *in;
	int rc = rtd_source_next(l->in, &in);
	if (rc < 0) {
		/* the trace ends here; the recording's other sources go on */
		const char *why = in->message && in->message[0] ? in->message
								: rtd_strerror(in->code);
		if (l->r->cut)
			snprintf(l->r->note, sizeof(l->r->note),
				 "the trace was cut at the recording's end: its last part "
				 "(%s) is not in the recording", why);
		else
			snprintf(l->r->note, sizeof(l->r->note),
				 "the trace is incomplete: %s", why);
		l->r->incomplete = !l->r->cut;
		return 0;
	}
	*rec = *in;
	return rc;
}

static int live_clock(void *impl, struct rtd_clock *out)
{
	return rtd_source_clock(((struct live *)impl)->in, out);
}

static void live_free(void *impl)
{
	struct live *l = impl;
	rtd_source_free(l->in);
	free(l);
}

static const struct rtd_source_ops live_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "gotrace",
	.next = live_next,
	.clock = live_clock,
	.free = live_free,
};

rtd_source *rtd_gotrace_recorder_live(rtd_gotrace_recorder *r, int *err)
{
	if (!r || r->joined) {
		if (err)
			*err = -RTD_E_INVAL;
		return NULL;
	}
	RTD_OPTS(rtd_gotrace_source_opts, so, .pid = r->o.pid, .grow = grow, .grow_ctx = r);
	struct live *l = calloc(1, sizeof(*l));
	rtd_source *src = NULL;
	int e = -ENOMEM;
	if (l && (l->in = rtd_gotrace_source_open(r->path, &so, &e)) != NULL) {
		l->r = r;
		src = rtd_source_new(&live_ops, l);
	}
	if (!src) {
		if (l)
			live_free(l);
		if (err)
			*err = e;
	}
	return src;
}

void rtd_gotrace_recorder_free(rtd_gotrace_recorder *r)
{
	if (!r)
		return;
	rtd_gotrace_recorder_stop(r, 0);
	if (r->fd >= 0)
		close(r->fd);
	free(r->host);
	free(r);
}
