/* SPDX-License-Identifier: MIT */
/*
 * source.c - the one pull contract every source keeps (rtd_source_next:
 * 1 record, 0 end, or a sticky error with its error record), and
 * rtd_source_merge, the k-way merge of N sources by converted time.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/epoll.h>
#include <unistd.h>

#include "rtdiag/source.h"

/* An error record's message is kept whole up to this many bytes: the
 * decoders' own messages are up to 511 (a Go trace's ordering error names
 * the generation, the frontier and the offsets). */
#define SOURCE_MAX_MESSAGE 1024

struct rtd_source {
	const struct rtd_source_ops *ops;
	void *impl;
	int (*next_own)(void *impl, struct rtd_record *scratch, struct rtd_record **out);
	int (*next_batch)(void *impl, struct rtd_record *scratch, struct rtd_record **out,
			  size_t max);
	int (*each)(void *impl, struct rtd_record *scratch, struct rtd_source_take *t);
	struct rtd_record rec;
	int state;          /* 0 running, 1 ended, <0 the sticky error */
	bool any;           /* a record was given out: last_mono is set */
	int64_t last_mono;
	int64_t floor;      /* no record may be older: the last one's time, or
			     * a watermark the source gave (INT64_MIN: none) */
	struct rtd_source_stats stats;
	char message[SOURCE_MAX_MESSAGE]; /* the error record's message */
};

rtd_source *rtd_source_new(const struct rtd_source_ops *ops, void *impl)
{
	if (!ops || RTD_OPTS_VALID(ops, rtd_source_ops, each) < 0 ||
	    ops->sz < RTD_OPTS_END(rtd_source_ops, clock) || !ops->next || !ops->clock)
		return NULL;
	rtd_source *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ops = ops;
	s->impl = impl;
	if (ops->sz >= RTD_OPTS_END(rtd_source_ops, next_own))
		s->next_own = ops->next_own;
	/* a batch of records the source owns: only with next_own */
	if (ops->sz >= RTD_OPTS_END(rtd_source_ops, next_batch) && s->next_own)
		s->next_batch = ops->next_batch;
	/* records handed out one by one from the source's loop: the same */
	if (ops->sz >= RTD_OPTS_END(rtd_source_ops, each) && s->next_own)
		s->each = ops->each;
	s->floor = INT64_MIN;
	return s;
}

void rtd_source_free(rtd_source *s)
{
	if (!s)
		return;
	if (s->ops->sz >= RTD_OPTS_END(rtd_source_ops, free) && s->ops->free)
		s->ops->free(s->impl);
	free(s);
}

/* A record with nothing set but its source's index. Copied from a zero
 * record, not memset(): for its size the compiler's memset is a rep
 * stos, which costs a Go timeline's record stream ~4% of its time. */
static void rec_clear(struct rtd_record *rec, uint32_t src)
{
	static const struct rtd_record zero;
	*rec = zero;
	rec->source = src;
}

int rtd_source_error(struct rtd_record *rec, int code, uint64_t offset, const char *message)
{
	rec->kind = RTD_REC_ERROR;
	rec->code = code;
	rec->offset = offset;
	rec->message = message;
	return code;
}

/* Whether a record of @kind may be handed out */
static bool kind_ok(unsigned kind)
{
	return kind != RTD_REC_NONE && kind < RTD_REC_KINDS && kind != RTD_REC_ERROR;
}

/* A record @r the source gave (@rc 1): raised to the floor, counted. */
static void given(rtd_source *s, struct rtd_record *r)
{
	if (r->mono < s->floor) {
		r->mono = s->floor;
		s->stats.clamped++;
	}
	s->any = true;
	s->last_mono = s->floor = r->mono;
	s->stats.records[r->kind]++;
}

/* What a source's next said, other than a record: the watermark, the end
 * or the error record, in s->rec. */
static int __attribute__((noinline)) settle(rtd_source *s, int rc)
{
	uint32_t src = s->rec.source; /* a merge names the source that failed */
	if (rc == RTD_SOURCE_IDLE) {
		/* a promise: no later record is older than the watermark (a
		 * weaker one than the last record's time says no more) */
		int64_t wm = s->rec.mono;
		rec_clear(&s->rec, src);
		if (wm > s->floor)
			s->floor = wm;
		s->rec.mono = s->floor;
		return RTD_SOURCE_IDLE;
	}
	if (rc == 1) {
		rc = -RTD_E_STATE; /* a source's bug, said as such below */
		s->rec.message = "the source gave a record of no known kind";
	}
	if (rc == 0) {
		s->state = 1;
		return 0;
	}
	if (rc > 0) {
		rc = -RTD_E_STATE;
		s->rec.message = "the source returned no known value";
	}
	/* the error record: code, offset and message (copied: the source's
	 * own text may not outlive this call) */
	uint64_t off = s->rec.offset;
	const char *msg = s->rec.message ? s->rec.message : "";
	snprintf(s->message, sizeof(s->message), "%s", msg);
	rec_clear(&s->rec, src);
	s->rec.kind = RTD_REC_ERROR;
	s->rec.code = rc;
	s->rec.offset = off;
	s->rec.message = s->message;
	s->rec.mono = s->last_mono;
	s->state = rc;
	s->stats.records[RTD_REC_ERROR]++;
	return rc;
}

/* rtd_source_next() of a source with next_own, past its first checks */
static int __attribute__((noinline)) next_own_other(rtd_source *s, struct rtd_record *r, int rc)
{
	if (r != &s->rec)
		s->rec = *r;
	return settle(s, rc);
}

/* rtd_source_next() of a source without next_own, or ended */
static int __attribute__((noinline)) next_copied(rtd_source *s, const struct rtd_record **rec)
{
	*rec = &s->rec;
	if (s->state > 0)
		return 0;
	if (s->state < 0)
		return s->state;
	rec_clear(&s->rec, s->rec.source);
	int rc = s->ops->next(s->impl, &s->rec);
	if (rc == 1 && kind_ok(s->rec.kind)) {
		given(s, &s->rec);
		return 1;
	}
	return settle(s, rc);
}

int rtd_source_next(rtd_source *s, const struct rtd_record **rec)
{
	if (!s->next_own || s->state != 0)
		return next_copied(s, rec);
	/* the source's own record: nothing cleared, nothing copied */
	struct rtd_record *r = &s->rec;
	int rc = s->next_own(s->impl, &s->rec, &r);
	if (rc == 1 && kind_ok(r->kind)) {
		given(s, r);
		*rec = r;
		return 1;
	}
	*rec = &s->rec;
	return next_own_other(s, r, rc);
}

/* rtd_source_next_batch() one record at a time: a source without
 * next_batch, or ended */
static int __attribute__((noinline)) next_one(rtd_source *s, const struct rtd_record **recs)
{
	int rc = rtd_source_next(s, recs);
	return rc == RTD_SOURCE_IDLE ? -EAGAIN : rc;
}

int rtd_source_next_batch(rtd_source *s, const struct rtd_record **recs, size_t max)
{
	if (!s->next_batch || s->state != 0 || max < 2)
		return max ? next_one(s, recs) : -RTD_E_INVAL;
	/* the records are the source's: only the checks and counts here */
	struct rtd_record **out = (struct rtd_record **)recs;
	int rc = s->next_batch(s->impl, &s->rec, out, max);
	if (rc <= 0 || (size_t)rc > max) {
		recs[0] = &s->rec;
		return settle(s, rc > 0 ? 1 : rc); /* too many: the source's bug */
	}
	int64_t floor = s->floor;
	for (int i = 0; i < rc; i++) {
		struct rtd_record *r = out[i];
		if (!kind_ok(r->kind)) {
			/* what came before it is lost with the source */
			recs[0] = &s->rec;
			return settle(s, 1);
		}
		if (r->mono < floor) {
			r->mono = floor;
			s->stats.clamped++;
		}
		floor = r->mono;
		s->stats.records[r->kind]++;
	}
	s->any = true;
	s->last_mono = s->floor = floor;
	return rc;
}

/* rtd_source_each() one record a pull: a source without each, or ended */
static int __attribute__((noinline)) each_pulled(rtd_source *s, rtd_record_fn fn, void *ctx)
{
	for (;;) {
		const struct rtd_record *r;
		int rc = rtd_source_next(s, &r);
		if (rc != 1)
			return rc;
		if ((rc = fn(ctx, r)) != 0)
			return rc;
	}
}

int rtd_source_take(struct rtd_source_take *t, struct rtd_record *r)
{
	if (!kind_ok(r->kind)) {
		t->bad = r;
		return 1;
	}
	if (r->mono < t->floor) {
		r->mono = t->floor;
		t->clamped++;
	}
	t->floor = r->mono;
	t->records[r->kind]++;
	return t->ret = t->fn(t->ctx, r);
}

/* What a source's each handed out (@t), into @s's counts and floor */
static void each_given(rtd_source *s, const struct rtd_source_take *t)
{
	uint64_t n = 0;
	for (size_t k = 0; k < RTD_REC_KINDS; k++) {
		s->stats.records[k] += t->records[k];
		n += t->records[k];
	}
	s->stats.clamped += t->clamped;
	if (n) {
		s->any = true;
		s->last_mono = s->floor = t->floor;
	}
}

int rtd_source_each(rtd_source *s, rtd_record_fn fn, void *ctx)
{
	if (!s || !fn)
		return -RTD_E_INVAL;
	if (!s->each || s->state != 0)
		return each_pulled(s, fn, ctx);
	struct rtd_source_take t = {.fn = fn, .ctx = ctx, .floor = s->floor};
	int rc = s->each(s->impl, &s->rec, &t);
	each_given(s, &t);
	if (rc == 1 && t.bad)
		return next_own_other(s, t.bad, 1); /* what came before it is delivered */
	if (rc == 1 && t.ret)
		return t.ret;
	if (rc == 1) /* a source's bug: 1 without its callback's stop */
		rc = RTD_SOURCE_IDLE + 1;
	return settle(s, rc);
}

int rtd_source_clock(rtd_source *s, struct rtd_clock *out)
{
	memset(out, 0, sizeof(*out));
	return s->ops->clock(s->impl, out);
}

const char *rtd_source_name(const rtd_source *s)
{
	return s->ops->name ? s->ops->name : "";
}

void *rtd_source_impl_of(rtd_source *s, const struct rtd_source_ops *ops)
{
	return s && s->ops == ops ? s->impl : NULL;
}

void rtd_source_stats(const rtd_source *s, struct rtd_source_stats *out)
{
	*out = s->stats;
}

int rtd_source_fd(rtd_source *s)
{
	if (s->ops->sz < RTD_OPTS_END(rtd_source_ops, fd) || !s->ops->fd)
		return -1;
	return s->ops->fd(s->impl);
}

int rtd_source_wait(rtd_source *s, int timeout_ms)
{
	int fd = rtd_source_fd(s);
	if (fd < 0)
		return 1; /* never idle: there is something to pull now */
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return -errno;
	return n > 0;
}

/* ---- the merge ------------------------------------------------------------ */

struct merge {
	rtd_source **srcs; /* a copy of the caller's array; the sources borrowed */
	size_t n;
	const struct rtd_record **pending; /* by source index */
	uint32_t *heap;    /* source indexes with a pending record */
	size_t nheap;
	bool primed;
	long last;         /* the source whose record went out last, or -1 */
	/* live sources: those idle now, with their watermarks */
	bool *idle;
	int64_t *wm;
	size_t nidle;
	int epfd;          /* epoll over the sources' wake-up descriptors, or -1 */
};

static bool before(const struct merge *m, uint32_t a, uint32_t b)
{
	int64_t ta = m->pending[a]->mono, tb = m->pending[b]->mono;
	return ta < tb || (ta == tb && a < b);
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		if (l < m->nheap && before(m, m->heap[l], m->heap[min]))
			min = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[min]))
			min = r;
		if (min == i)
			return;
		uint32_t t = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = t;
		i = min;
	}
}

static void sift_up(struct merge *m, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(m, m->heap[i], m->heap[p]))
			return;
		uint32_t t = m->heap[i];
		m->heap[i] = m->heap[p];
		m->heap[p] = t;
		i = p;
	}
}

/* Pull source @i into the heap, or among the idle ones. Returns 0 (added,
 * idle or ended) or its error, with its error record copied to @rec. */
static int pull(struct merge *m, uint32_t i, struct rtd_record *rec)
{
	const struct rtd_record *r;
	int rc = rtd_source_next(m->srcs[i], &r);
	if (rc == 0)
		return 0;
	if (rc == RTD_SOURCE_IDLE) {
		m->idle[i] = true;
		m->wm[i] = r->mono;
		m->nidle++;
		return 0;
	}
	if (rc < 0) {
		*rec = *r;
		rec->source = i;
		return rc;
	}
	m->pending[i] = r;
	m->heap[m->nheap++] = i;
	sift_up(m, m->nheap - 1);
	return 0;
}

static int merge_next(void *impl, struct rtd_record *rec)
{
	struct merge *m = impl;
	int rc;
	if (!m->primed) {
		m->primed = true;
		for (uint32_t i = 0; i < m->n; i++)
			if ((rc = pull(m, i, rec)) < 0)
				return rc;
	} else if (m->last >= 0) {
		/* the record handed out last is done with: only now may its
		 * source be pulled again */
		uint32_t i = (uint32_t)m->last;
		m->last = -1;
		if ((rc = pull(m, i, rec)) < 0)
			return rc;
	}
	if (m->nidle) {
		/* take the wake-ups first, then ask: one that comes after
		 * the question wakes the caller's next wait */
		struct epoll_event ev[16];
		while (m->epfd >= 0 && epoll_wait(m->epfd, ev, 16, 0) == 16)
			;
		for (uint32_t j = 0; j < m->n; j++) {
			if (!m->idle[j])
				continue;
			m->idle[j] = false;
			m->nidle--;
			if ((rc = pull(m, j, rec)) < 0)
				return rc;
		}
	}
	if (m->nheap == 0 && m->nidle == 0)
		return 0;
	/* the watermark rule: nothing goes out that an idle source may
	 * still precede */
	int64_t low = INT64_MAX;
	for (uint32_t j = 0; m->nidle && j < m->n; j++)
		if (m->idle[j] && m->wm[j] < low)
			low = m->wm[j];
	if (m->nheap == 0 || m->pending[m->heap[0]]->mono > low) {
		if (m->nheap && m->pending[m->heap[0]]->mono < low)
			low = m->pending[m->heap[0]]->mono;
		rec->mono = rec->ts = low;
		return RTD_SOURCE_IDLE;
	}
	uint32_t i = m->heap[0];
	m->heap[0] = m->heap[--m->nheap];
	sift_down(m, 0);
	*rec = *m->pending[i];
	rec->source = i;
	m->pending[i] = NULL;
	m->last = i;
	return 1;
}

static int merge_clock(void *impl, struct rtd_clock *out)
{
	struct merge *m = impl;
	out->domain = RTD_CLOCK_MONOTONIC;
	out->flags = RTD_CLOCK_HAS_MONO;
	out->freq = 1000000000u;
	out->mono_error_ns = 0;
	out->wall_error_ns = 0;
	bool wall = m->n > 0;
	for (size_t i = 0; i < m->n; i++) {
		struct rtd_clock c;
		int rc = rtd_source_clock(m->srcs[i], &c);
		if (rc < 0)
			return rc;
		uint64_t e = (c.flags & RTD_CLOCK_HAS_MONO) ? c.mono_error_ns : RTD_CLOCK_ERROR_UNKNOWN;
		if (e > out->mono_error_ns)
			out->mono_error_ns = e;
		/* wall time of the merged line: from the first source that
		 * anchors both, its error plus the mono errors */
		if (wall && (c.flags & RTD_CLOCK_HAS_MONO) && (c.flags & RTD_CLOCK_HAS_WALL) &&
		    !(out->flags & RTD_CLOCK_HAS_WALL)) {
			out->flags |= RTD_CLOCK_HAS_WALL;
			out->ref_ts = c.ref_mono;
			out->ref_mono = c.ref_mono;
			out->ref_wall = c.ref_wall;
			out->wall_error_ns = c.wall_error_ns;
		}
	}
	if ((out->flags & RTD_CLOCK_HAS_WALL) && out->mono_error_ns != RTD_CLOCK_ERROR_UNKNOWN &&
	    out->wall_error_ns != RTD_CLOCK_ERROR_UNKNOWN)
		out->wall_error_ns += out->mono_error_ns;
	else if (out->flags & RTD_CLOCK_HAS_WALL)
		out->wall_error_ns = RTD_CLOCK_ERROR_UNKNOWN;
	return 0;
}

static int merge_fd(void *impl)
{
	return ((struct merge *)impl)->epfd;
}

static void merge_free(void *impl)
{
	struct merge *m = impl;
	if (m->epfd >= 0)
		close(m->epfd);
	free(m->srcs);
	free(m->pending);
	free(m->heap);
	free(m->idle);
	free(m->wm);
	free(m);
}

static const struct rtd_source_ops merge_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "merge",
	.next = merge_next,
	.clock = merge_clock,
	.free = merge_free,
	.fd = merge_fd,
};

/* The merge's wake-up descriptor: edge-triggered on each live source's
 * (a source's descriptor may stay readable while its record waits in
 * the heap; only a new event must wake the caller). */
static int merge_epoll(struct merge *m)
{
	m->epfd = -1;
	for (size_t i = 0; i < m->n; i++) {
		int fd = rtd_source_fd(m->srcs[i]);
		if (fd < 0)
			continue;
		if (m->epfd < 0 && (m->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
			return -errno;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = (uint32_t)i};
		if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			return -errno;
	}
	return 0;
}

rtd_source *rtd_source_merge(rtd_source *const *srcs, size_t n, const struct rtd_merge_opts *opts)
{
	if (RTD_OPTS_VALID(opts, rtd_merge_opts, sz) < 0 || (n && !srcs) || n > UINT32_MAX)
		return NULL;
	struct merge *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->n = n;
	m->srcs = calloc(n ? n : 1, sizeof(*m->srcs));
	if (m->srcs && n)
		memcpy(m->srcs, srcs, n * sizeof(*m->srcs));
	m->last = -1;
	m->pending = calloc(n ? n : 1, sizeof(*m->pending));
	m->heap = calloc(n ? n : 1, sizeof(*m->heap));
	m->idle = calloc(n ? n : 1, sizeof(*m->idle));
	m->wm = calloc(n ? n : 1, sizeof(*m->wm));
	m->epfd = -1;
	rtd_source *s = m->srcs && m->pending && m->heap && m->idle && m->wm &&
				merge_epoll(m) == 0
			? rtd_source_new(&merge_ops, m)
			: NULL;
	if (!s)
		merge_free(m);
	return s;
}
