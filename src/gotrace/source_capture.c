/* SPDX-License-Identifier: MIT */
/*
 * source_capture.c - a live Go execution trace capture as a record
 * source (`rtdiag record --go-trace`, rtdiag/gotrace_source.h): the
 * capture (capture.c) runs on a thread of the recorder's own and streams
 * into an unlinked temporary file; once stopped, the file is read by the
 * Go trace source (source.c) like any trace file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
};

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
			       RTD_OPTS_END(rtd_gotrace_recorder_opts, seconds));
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
		r->stop = 1;
		pthread_join(r->th, NULL);
		r->joined = true;
	}
	return r->rc;
}

const char *rtd_gotrace_recorder_errmsg(const rtd_gotrace_recorder *r)
{
	return r ? r->msg : "";
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
