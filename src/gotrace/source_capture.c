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
 *
 * A rolling capture (@piece) asks for consecutive traces instead, each
 * into a file of its own; its live source reads them one after the other
 * ("Rolling capture" in rtdiag/gotrace_source.h).
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
#include "common/map.h"
#include "common/stats.h"

#define GR_DEFAULT_SECONDS 3600.0 /* ?seconds= when the recording ends it */
 /* How late the live source's records may come: a Go 1.22+ generation
 * (about a second) is ordered when the next begins, so its records are up
 * to two generations late; a Go 1.5-1.21 piece comes whole at its end,
 * decoded within GR_PIECE_LAG_NS. */
#define GR_LAG_NS 5000000000ll
#define GR_PIECE_LAG_NS 2000000000ll
#define GR_MIN_PIECE 0.05          /* seconds: less than this left, no piece */
#define GR_MAX_FIELDS 32           /* a record's fields copied, at most */
#define GR_MAX_THREADS 65536       /* Ms whose THREAD record was given */

/* One piece of a rolling capture: a whole trace in a file of its own.
 * The capture's thread appends it and fills it; the live source reads it
 * once it is first in the list, and frees it. */
struct piece {
	struct piece *next;
	uint64_t n;         /* 1, 2, ... */
	int fd;
	char path[64];
	int64_t sent;       /* CLOCK_MONOTONIC ns: its request sent */
	int64_t first;      /* ...its first bytes came (0: none yet): the
			     * anchor's error for a Go 1.5-1.21 piece */
	volatile bool done; /* its request ended (release: the bytes are in) */
	char head[16];      /* its first bytes: "go 1.23 trace" */
	size_t nhead;
	off_t seen;         /* the reader's grow(): the size last seen */
};

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
	/* a rolling capture's (@piece > 0): the pieces not read yet, in order */
	pthread_mutex_t mu;
	pthread_cond_t cv;  /* a piece came, was read, or the stop */
	struct piece *head, *tail, *cur; /* cur: the one being written */
	size_t pending;
	volatile bool ending; /* rtd_gotrace_recorder_end(): no new piece */
	int version;        /* the first piece's Go version (1023), 0: not known */
	struct rtd_gotrace_roll_stats rs;
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
	if (r->o.piece > 0) { /* a capture waiting for the reader wakes */
		pthread_mutex_lock(&r->mu);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
}

static int on_data(const void *buf, size_t len, void *ctx)
{
	rtd_gotrace_recorder *r = ctx;
	const char *p = buf;
	int fd = r->fd;
	if (r->o.piece > 0) { /* the piece under way (only this thread writes) */
		fd = r->cur->fd;
		struct piece *cp = r->cur;
		if (!cp->first)
			__atomic_store_n(&cp->first, mono_ns(), __ATOMIC_RELEASE);
		if (cp->nhead < sizeof(cp->head) - 1) { /* its version, from its header */
			size_t k = sizeof(cp->head) - 1 - cp->nhead;
			k = k < len ? k : len;
			memcpy(cp->head + cp->nhead, buf, k);
			cp->nhead += k;
			int minor;
			if (sscanf(cp->head, "go 1.%d trace", &minor) == 1 && strstr(cp->head, " trace") &&
			    !__atomic_load_n(&r->version, __ATOMIC_ACQUIRE))
				__atomic_store_n(&r->version, 1000 + minor, __ATOMIC_RELEASE);
		}
	}
	while (len) {
		ssize_t n = write(fd, p, len);
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

static void piece_free(struct piece *p)
{
	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

/* A new piece, its file made and unlinked; NULL with errno. */
static struct piece *piece_new(uint64_t n)
{
	struct piece *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->n = n;
	char tmpl[] = "/tmp/rtd-gotrace-XXXXXX";
	p->fd = mkstemp(tmpl);
	if (p->fd < 0) {
		int e = errno;
		free(p);
		errno = e;
		return NULL;
	}
	unlink(tmpl);
	snprintf(p->path, sizeof(p->path), "/proc/self/fd/%d", p->fd);
	return p;
}

/* The rolling capture: one request after the other, each the moment the
 * last ended (the server runs one trace at a time), until stopped, ended,
 * @seconds are over, or a request fails. */
static void roll(rtd_gotrace_recorder *r)
{
	int64_t t0 = mono_ns();
	for (uint64_t n = 1;; n++) {
		double left = r->o.seconds > 0 ? r->o.seconds - (double)(mono_ns() - t0) / 1e9
						 : r->o.piece;
		if (left < GR_MIN_PIECE || r->stop || r->ending)
			break;
		pthread_mutex_lock(&r->mu);
		while (r->pending >= RTD_GOTRACE_ROLL_MAX_PENDING && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
		if (r->stop)
			break;
		struct piece *p = piece_new(n);
		if (!p) {
			r->rc = -errno;
			snprintf(r->msg, sizeof(r->msg), "a temporary file for the trace: %s",
				 strerror(errno));
			break;
		}
		p->sent = mono_ns();
		r->cur = p;
		pthread_mutex_lock(&r->mu);
		if (r->tail)
			r->tail->next = p;
		else
			r->head = p;
		r->tail = p;
		r->pending++;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		RTD_OPTS(rtd_gocapture_opts, co, .host = r->host,
			 .seconds = left < r->o.piece ? left : r->o.piece, .on_data = on_data,
			 .ctx = r, .stop = &r->stop);
		struct rtd_gocapture_result res;
		r->rc = rtd_gocapture_run(&co, &res, r->msg, sizeof(r->msg));
		r->res.status = res.status;
		r->res.bytes += res.bytes;
		r->res.seconds += res.seconds;
		snprintf(r->res.url, sizeof(r->res.url), "%s", res.url);
		pthread_mutex_lock(&r->mu);
		__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (r->rc < 0)
			break;
	}
	if (r->rc == -ECANCELED && r->stop)
		r->msg[0] = 0; /* cut by us: the live source says so */
}

static void *run_thread(void *arg)
{
	rtd_gotrace_recorder *r = arg;
	if (r->o.piece > 0) {
		roll(r);
		pthread_mutex_lock(&r->mu);
		__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		return NULL;
	}
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
			       RTD_OPTS_END(rtd_gotrace_recorder_opts, piece));
	if (rc || !opts || !o.host || !o.host[0] || o.seconds < 0 || o.piece < 0)
		return -RTD_E_INVAL;
	rtd_gotrace_recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = o;
	r->fd = -1;
	r->joined = true; /* until the thread runs */
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (!(r->host = strdup(o.host))) {
		rtd_gotrace_recorder_free(r);
		return -ENOMEM;
	}
	if (o.piece <= 0) { /* one trace, one file (a rolling one: a file a piece) */
		char tmpl[] = "/tmp/rtd-gotrace-XXXXXX";
		r->fd = mkstemp(tmpl);
		if (r->fd < 0) {
			rc = -errno;
			rtd_gotrace_recorder_free(r);
			return rc;
		}
		unlink(tmpl);
		snprintf(r->path, sizeof(r->path), "/proc/self/fd/%d", r->fd);
	}
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

static rtd_source *roll_source(rtd_gotrace_recorder *r, int *err);

rtd_source *rtd_gotrace_recorder_source(rtd_gotrace_recorder *r, int *err)
{
	if (r && r->joined && r->res.bytes && r->o.piece > 0)
		return roll_source(r, err);
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
	r->ending = true; /* a rolling capture asks for no more pieces */
	/* a rolling capture without @seconds: its piece does not end with the
	 * recording, cut it (bounded: libcurl's progress callback comes at
	 * least once a second) */
	if (r->o.end_grace <= 0 || (r->o.piece > 0 && r->o.seconds <= 0)) {
		cut_now(r);
		return;
	}
	int64_t at = mono_ns() + (int64_t)(r->o.end_grace * 1e9);
	int64_t was = 0;
	__atomic_compare_exchange_n(&r->end_at, &was, at, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

/* Has the file @fd grown since @seen, or may it still (@was_done: its
 * writer had ended before the look at its size)? Waits 20 ms when not. */
static bool file_grow(rtd_gotrace_recorder *r, int fd, off_t *seen, bool was_done)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size != *seen) {
		*seen = st.st_size;
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

/* rtd_gotrace_source_opts.grow: has the file grown, or may it still? */
static bool grow(void *ctx)
{
	rtd_gotrace_recorder *r = ctx;
	bool was_done = rtd_gotrace_recorder_done(r); /* before the size: all of it */
	return file_grow(r, r->fd, &r->seen, was_done);
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
	if (r->o.piece > 0)
		return roll_source(r, err);
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

/* ---- the rolling capture's source ------------------------------------------ */

/* The pieces one after the other, each through the Go trace source; what
 * a piece's records point at is copied into our interner, so that a piece
 * is freed once read. */
struct roll {
	rtd_gotrace_recorder *r;
	struct piece *p;    /* the piece being read (first in the list) */
	rtd_source *in;     /* its Go trace source */
	bool ended;
	rtd_intern *intern;
	rtd_map threads;    /* M -> its name (interned) given in a THREAD record */
	struct rtd_clock clock;
	bool have_clock;
	int64_t last;       /* the last record's mono (0: none yet) */
	bool gap_due;       /* a piece ended: the next one's first record
			     * comes after the gap between them */
	struct rtd_record held; /* that record, given after the gap */
	bool holding;
	struct rtd_field fields[GR_MAX_FIELDS];
	struct rtd_rec_frame frames[RTD_INTERN_MAX_DEPTH];
	struct rtd_field gapf[2];
};

/* rtd_gotrace_source_opts.grow for a piece: more bytes came, or may come */
static bool piece_grow(void *ctx)
{
	struct roll *l = ctx;
	struct piece *p = l->p;
	bool was_done = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE); /* before the size */
	return file_grow(l->r, p->fd, &p->seen, was_done);
}

/* The next piece's source, waiting for its request to be sent; 0 with
 * l->in set, 1 when no piece will come. */
static int roll_open(struct roll *l)
{
	rtd_gotrace_recorder *r = l->r;
	pthread_mutex_lock(&r->mu);
	while (!r->head && !rtd_gotrace_recorder_done(r))
		pthread_cond_wait(&r->cv, &r->mu);
	l->p = r->head;
	pthread_mutex_unlock(&r->mu);
	if (!l->p)
		return 1;
	/* a Go 1.5-1.21 piece has no clock of its own: its first event is at
	 * about the moment the request reached the server */
	int64_t first = __atomic_load_n(&l->p->first, __ATOMIC_ACQUIRE);
	RTD_OPTS(rtd_gotrace_source_opts, so, .pid = r->o.pid, .anchor_ts = 0,
		 .anchor_mono = l->p->sent,
		 .anchor_error_ns = first > l->p->sent ? (uint64_t)(first - l->p->sent) : 0,
		 .grow = piece_grow, .grow_ctx = l);
	int e = 0;
	l->in = rtd_gotrace_source_open(l->p->path, &so, &e);
	return l->in ? 0 : e;
}

/* The piece read: dropped (the capture may start one more). */
static void roll_drop(struct roll *l)
{
	rtd_gotrace_recorder *r = l->r;
	rtd_source_free(l->in);
	l->in = NULL;
	pthread_mutex_lock(&r->mu);
	r->head = l->p->next;
	if (!r->head)
		r->tail = NULL;
	r->pending--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	piece_free(l->p);
	l->p = NULL;
	r->rs.pieces++;
}

/* @rec's strings, fields and stack, copied into ours */
static int roll_copy(struct roll *l, struct rtd_record *rec)
{
	int rc = 0;
	const char **strs[3] = {&rec->name, &rec->category, &rec->unit};
	for (int i = 0; i < 3 && !rc; i++)
		if (*strs[i])
			rc = rtd_intern_string(l->intern, *strs[i], strlen(*strs[i]), strs[i]);
	size_t nf = rec->nfields < GR_MAX_FIELDS ? rec->nfields : GR_MAX_FIELDS;
	for (size_t i = 0; i < nf && !rc; i++) {
		l->fields[i] = rec->fields[i]; /* a string value is borrowed: as the record */
		if (l->fields[i].name)
			rc = rtd_intern_string(l->intern, l->fields[i].name,
					       strlen(l->fields[i].name), &l->fields[i].name);
	}
	rec->fields = nf ? l->fields : NULL;
	rec->nfields = nf;
	if (rec->stack && !rc) {
		size_t n = rec->stack->n < RTD_INTERN_MAX_DEPTH ? rec->stack->n : RTD_INTERN_MAX_DEPTH;
		memcpy(l->frames, rec->stack->frames, n * sizeof(l->frames[0]));
		rc = rtd_intern_stack(l->intern, l->frames, n, &rec->stack);
	}
	return rc;
}

/* A THREAD (or PROCESS) record already given with this name, in an
 * earlier piece (@rec copied: its name is ours) */
static bool roll_thread_known(struct roll *l, const struct rtd_record *rec)
{
	uint64_t key = rec->kind == RTD_REC_PROCESS ? 1ull << 63 | rec->pid : rec->tid;
	void *was;
	if (rtd_map_get(&l->threads, key, &was) && was == rec->name)
		return true;
	rtd_map_put(&l->threads, key, (void *)rec->name, NULL); /* full: given again */
	return false;
}

static void roll_gap(struct roll *l, struct rtd_record *rec, int64_t until)
{
	rtd_gotrace_recorder *r = l->r;
	int64_t gap = until - l->last;
	r->rs.gaps++;
	r->rs.gap_total_ns += gap;
	if (gap > r->rs.gap_max_ns)
		r->rs.gap_max_ns = gap;
	l->gapf[0] = (struct rtd_field){.name = "piece", .type = RTD_FIELD_U64,
					.u = r->rs.pieces + 1};
	l->gapf[1] = (struct rtd_field){.name = "gap_ns", .type = RTD_FIELD_I64, .i = gap};
	*rec = (struct rtd_record){.kind = RTD_REC_SLICE, .ts = l->held.ts, .mono = until,
				   .dur = gap, .pid = r->o.pid, .lane = RTD_GOTRACE_LANE_GAP,
				   .name = "Go trace gap", .category = "gotrace",
				   .nfields = 2, .fields = l->gapf};
}

static int roll_next(void *impl, struct rtd_record *rec)
{
	struct roll *l = impl;
	rtd_gotrace_recorder *r = l->r;
	if (l->holding) {
		l->holding = false;
		*rec = l->held;
		return 1;
	}
	for (;;) {
		if (l->ended)
			return 0;
		if (!l->in) {
			int rc = roll_open(l);
			if (rc == 1) {
				/* no more pieces: a request that failed (the program
				 * gone) leaves the trace short of the recording */
				if (r->rc < 0 && !r->cut && r->rc != -ECANCELED)
					r->incomplete = true;
				l->ended = true;
				return 0;
			}
			if (rc < 0) {
				snprintf(r->note, sizeof(r->note), "piece %llu of the trace: %s",
					 (unsigned long long)(r->rs.pieces + 1), rtd_strerror(rc));
				r->incomplete = true;
				l->ended = true;
				return 0;
			}
		}
		const struct rtd_record *in;
		int rc = rtd_source_next(l->in, &in);
		if (rc <= 0) {
			if (rc < 0) {
				/* the piece broke off: its complete part went out */
				const char *why = in->message && in->message[0]
							  ? in->message : rtd_strerror(in->code);
				if (r->cut)
					snprintf(r->note, sizeof(r->note),
						 "the trace was cut at the recording's end: the last "
						 "part of its piece %llu (%s) is not in the recording",
						 (unsigned long long)l->p->n, why);
				else
					snprintf(r->note, sizeof(r->note),
						 "the trace is incomplete: piece %llu: %s",
						 (unsigned long long)l->p->n, why);
				r->incomplete = r->incomplete || !r->cut;
			}
			if (rtd_source_clock(l->in, &l->clock) == 0)
				l->have_clock = true;
			roll_drop(l);
			if (l->last)
				l->gap_due = true;
			if (rc < 0 && !r->cut) {
				l->ended = true; /* the program died: no more piece comes */
				return 0;
			}
			continue;
		}
		*rec = *in;
		if ((rc = roll_copy(l, rec)) < 0)
			return rc;
		if ((rec->kind == RTD_REC_THREAD || rec->kind == RTD_REC_PROCESS) &&
		    roll_thread_known(l, rec))
			continue;
		if (rtd_source_clock(l->in, &l->clock) == 0)
			l->have_clock = true;
		if (l->gap_due && rec->mono) {
			l->gap_due = false;
			l->held = *rec;
			l->holding = true;
			roll_gap(l, rec, rec->mono > l->last ? rec->mono : l->last);
			return 1;
		}
		if (rec->mono > l->last)
			l->last = rec->mono;
		return 1;
	}
}

static int roll_clock(void *impl, struct rtd_clock *out)
{
	struct roll *l = impl;
	if (l->in)
		return rtd_source_clock(l->in, out);
	if (l->have_clock) {
		*out = l->clock;
		return 0;
	}
	/* no piece opened yet: a Go 1.22+ trace's, as the Go source starts */
	*out = (struct rtd_clock){.domain = RTD_CLOCK_GO, .freq = 1000000000u};
	return 0;
}

static void roll_free(void *impl)
{
	struct roll *l = impl;
	rtd_source_free(l->in);
	rtd_intern_free(l->intern);
	rtd_map_free(&l->threads);
	free(l);
}

static const struct rtd_source_ops roll_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "gotrace",
	.next = roll_next,
	.clock = roll_clock,
	.free = roll_free,
};

static rtd_source *roll_source(rtd_gotrace_recorder *r, int *err)
{
	struct roll *l = calloc(1, sizeof(*l));
	rtd_source *src = NULL;
	if (l && (l->intern = rtd_intern_new()) != NULL) {
		l->r = r;
		rtd_map_init(&l->threads, GR_MAX_THREADS);
		src = rtd_source_new(&roll_ops, l);
		if (!src)
			rtd_map_free(&l->threads);
	}
	if (!src) {
		if (l)
			rtd_intern_free(l->intern);
		free(l);
		if (err)
			*err = -ENOMEM;
	}
	return src;
}

int64_t rtd_gotrace_recorder_lag_ns(const rtd_gotrace_recorder *r)
{
	int64_t lag = GR_LAG_NS;
	if (!r || r->o.piece <= 0)
		return lag;
	/* a Go 1.5-1.21 piece (or one not known yet) comes whole at its end */
	int v = __atomic_load_n(&r->version, __ATOMIC_ACQUIRE);
	int64_t whole = (int64_t)(r->o.piece * 1e9) + GR_PIECE_LAG_NS;
	return v >= 1022 || whole < lag ? lag : whole;
}

void rtd_gotrace_recorder_roll_stats(const rtd_gotrace_recorder *r,
				     struct rtd_gotrace_roll_stats *out)
{
	struct rtd_gotrace_roll_stats t = {.sz = sizeof(t)};
	if (r && r->o.piece > 0)
		t = r->rs;
	t.sz = sizeof(t);
	rtd_stats_copy(out, &t, sizeof(t));
}

void rtd_gotrace_recorder_free(rtd_gotrace_recorder *r)
{
	if (!r)
		return;
	rtd_gotrace_recorder_stop(r, 0);
	if (r->fd >= 0)
		close(r->fd);
	while (r->head) {
		struct piece *p = r->head;
		r->head = p->next;
		piece_free(p);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r->host);
	free(r);
}
