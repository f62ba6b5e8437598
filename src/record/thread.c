/* SPDX-License-Identifier: MIT */
/*
 * thread.c - rtd_source_thread(): a blocking source (an EventPipe
 * session's stream, a Go trace read from a socket) pulled on a thread of
 * its own into a bounded queue of copied records, given out as a live
 * source (rtdiag/source.h, "Live sources").
 *
 * Each queued record owns one block holding its fields and every string
 * it points at; its stack is the input's (interned: it lives as long as
 * the input, which is freed after the thread is joined). The queue is
 * bounded twice, in records and in bytes: a full queue makes the thread
 * wait, so the input is read no faster than the merge consumes it.
 *
 * The blocks are cut in order from chunks of TQ_CHUNK bytes, and a chunk
 * is reused once every block cut from it was given out and released
 * (the queue is first in, first out). A malloc per record on this thread
 * and its free on the consumer's mixed glibc's arenas: chunks of varying
 * sizes freed into another thread's arena, the free space of both heaps
 * growing for minutes (issue #31, a flight ring's RSS).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "rtdiag/source.h"

#define TQ_DEFAULT_RECORDS 4096u
#define TQ_DEFAULT_BYTES (64u << 20)
#define TQ_DEFAULT_LAG_NS 2000000000ll
#define TQ_CHUNK (64u << 10)  /* blocks are cut from chunks this large */
#define TQ_SPARE_CHUNKS 16u   /* released chunks kept for reuse */

/* A chunk: blocks cut from data[0..used), released ones count in freed;
 * reused when sealed (no more is cut from it) and all are released. */
struct tq_chunk {
	struct tq_chunk *next; /* in the spare list */
	size_t used, freed;
	bool sealed;
	_Alignas(16) unsigned char data[TQ_CHUNK];
};

struct tq_entry {
	struct rtd_record rec;
	void *blob; /* its fields and strings */
	size_t bytes;
	struct tq_chunk *chunk; /* where blob was cut, NULL: malloc'd */
};

struct tq {
	rtd_source *in;
	struct rtd_source_thread_opts o;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t space;
	struct tq_entry *q; /* a ring of o.max_records */
	size_t head, n, bytes;
	struct tq_entry cur; /* the record out now (its blob freed at the next call) */
	struct tq_chunk *fill;  /* blocks are cut from it (the thread's) */
	struct tq_chunk *spare; /* released chunks */
	unsigned nspare;
	int efd;
	bool quit;
	bool ended;  /* the input ended: end_rc, and its error record */
	int end_rc;
	uint64_t end_offset;
	char end_msg[256];
	struct rtd_clock clock;
	bool have_clock;
};

static int64_t mono_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void ring(struct tq *t)
{
	uint64_t one = 1;
	ssize_t w = write(t->efd, &one, sizeof(one));
	(void)w;
}

static size_t str_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *str_put(char **p, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	memcpy(*p, s, n);
	const char *out = *p;
	*p += n;
	return out;
}

/* A chunk released whole: kept for reuse, or freed past TQ_SPARE_CHUNKS.
 * Under t->mu. */
static void chunk_release(struct tq *t, struct tq_chunk *c)
{
	if (t->nspare >= TQ_SPARE_CHUNKS) {
		free(c);
		return;
	}
	c->next = t->spare;
	t->spare = c;
	t->nspare++;
}

/* A block of @need bytes for a record's copy (16-aligned), cut from the
 * chunk being filled, else from a spare or new one; a block larger than a
 * chunk is malloc'd (*chunk NULL). NULL: out of memory. Under t->mu. */
static void *block_get(struct tq *t, size_t need, struct tq_chunk **chunk)
{
	need = (need + 15) & ~(size_t)15;
	*chunk = NULL;
	if (need > TQ_CHUNK)
		return malloc(need);
	struct tq_chunk *c = t->fill;
	if (c && TQ_CHUNK - c->used < need) {
		c->sealed = true;
		if (c->freed == c->used)
			chunk_release(t, c);
		c = t->fill = NULL;
	}
	if (!c) {
		if ((c = t->spare)) {
			t->spare = c->next;
			t->nspare--;
		} else if (!(c = malloc(sizeof(*c)))) {
			return NULL;
		}
		c->used = c->freed = 0;
		c->sealed = false;
		t->fill = c;
	}
	void *b = c->data + c->used;
	c->used += need;
	*chunk = c;
	return b;
}

/* An entry's block given back. Under t->mu. */
static void block_put(struct tq *t, struct tq_entry *e)
{
	if (!e->blob)
		return;
	struct tq_chunk *c = e->chunk;
	if (!c) {
		free(e->blob);
	} else {
		c->freed += (e->bytes + 15) & ~(size_t)15;
		if (c->sealed && c->freed == c->used)
			chunk_release(t, c);
	}
	e->blob = NULL;
}

/* @r deep-copied into @e (its stack shared), its block from @t's chunks. */
static int copy_rec(struct tq *t, struct tq_entry *e, const struct rtd_record *r)
{
	size_t need = r->nfields * sizeof(struct rtd_field) + str_bytes(r->name) +
		      str_bytes(r->category) + str_bytes(r->unit) + str_bytes(r->message);
	for (size_t i = 0; i < r->nfields; i++)
		need += str_bytes(r->fields[i].name) +
			(r->fields[i].type == RTD_FIELD_STR ? str_bytes(r->fields[i].s) : 0);
	e->rec = *r;
	e->chunk = NULL;
	if (need) {
		pthread_mutex_lock(&t->mu);
		e->blob = block_get(t, need, &e->chunk);
		pthread_mutex_unlock(&t->mu);
	} else {
		e->blob = NULL;
	}
	e->bytes = need;
	if (need && !e->blob)
		return -ENOMEM;
	struct rtd_field *f = e->blob;
	char *p = need ? (char *)e->blob + r->nfields * sizeof(*f) : NULL; /* nothing to copy */
	for (size_t i = 0; i < r->nfields; i++) {
		f[i] = r->fields[i];
		f[i].name = str_put(&p, r->fields[i].name);
		if (f[i].type == RTD_FIELD_STR)
			f[i].s = str_put(&p, r->fields[i].s);
	}
	e->rec.fields = r->nfields ? f : NULL;
	e->rec.name = str_put(&p, r->name);
	e->rec.category = str_put(&p, r->category);
	e->rec.unit = str_put(&p, r->unit);
	e->rec.message = str_put(&p, r->message);
	return 0;
}

static void end_with(struct tq *t, int rc, const struct rtd_record *r)
{
	pthread_mutex_lock(&t->mu);
	t->ended = true;
	t->end_rc = rc;
	if (rc < 0 && r) {
		t->end_offset = r->offset;
		snprintf(t->end_msg, sizeof(t->end_msg), "%s", r->message ? r->message : "");
	}
	pthread_mutex_unlock(&t->mu);
	ring(t);
}

static void *tq_main(void *arg)
{
	struct tq *t = arg;
	for (;;) {
		const struct rtd_record *r;
		int rc = rtd_source_next(t->in, &r);
		if (rc == RTD_SOURCE_IDLE) {
			/* a live input after all: wait for it here */
			rtd_source_wait(t->in, 100);
			pthread_mutex_lock(&t->mu);
			bool quit = t->quit;
			pthread_mutex_unlock(&t->mu);
			if (quit) {
				end_with(t, 0, NULL);
				return NULL;
			}
			continue;
		}
		if (rc != 1) {
			struct rtd_clock c;
			bool clk = rtd_source_clock(t->in, &c) == 0;
			pthread_mutex_lock(&t->mu);
			if (clk) {
				t->clock = c;
				t->have_clock = true;
			}
			pthread_mutex_unlock(&t->mu);
			end_with(t, rc, r);
			return NULL;
		}
		struct tq_entry e;
		if (copy_rec(t, &e, r) < 0) {
			struct rtd_record er = {.message = "out of memory copying a record"};
			end_with(t, -ENOMEM, &er);
			return NULL;
		}
		bool clk = !t->have_clock; /* read only here, written only here */
		struct rtd_clock c;
		if (clk)
			clk = rtd_source_clock(t->in, &c) == 0;
		pthread_mutex_lock(&t->mu);
		if (clk) {
			t->clock = c;
			t->have_clock = true;
		}
		while (!t->quit && (t->n == t->o.max_records ||
				    (t->n && t->bytes + e.bytes > t->o.max_bytes)))
			pthread_cond_wait(&t->space, &t->mu);
		if (t->quit) {
			block_put(t, &e);
			pthread_mutex_unlock(&t->mu);
			end_with(t, 0, NULL);
			return NULL;
		}
		bool was_empty = t->n == 0;
		t->q[(t->head + t->n) % t->o.max_records] = e;
		t->n++;
		t->bytes += e.bytes;
		pthread_mutex_unlock(&t->mu);
		if (was_empty)
			ring(t);
	}
}

static int tq_next(void *impl, struct rtd_record *rec)
{
	struct tq *t = impl;
	pthread_mutex_lock(&t->mu);
	block_put(t, &t->cur);
	if (t->n == 0 && !t->ended) {
		/* clear the wake-up, then look again: a record queued after
		 * the look rings it again */
		pthread_mutex_unlock(&t->mu);
		uint64_t v;
		ssize_t rd = read(t->efd, &v, sizeof(v));
		(void)rd;
		pthread_mutex_lock(&t->mu);
	}
	if (t->n) {
		t->cur = t->q[t->head];
		t->head = (t->head + 1) % t->o.max_records;
		/* empty: the next record goes to the first slot (the pages
		 * written follow the queue's depth, as the perf source's) */
		if (!--t->n)
			t->head = 0;
		t->bytes -= t->cur.bytes;
		pthread_cond_signal(&t->space);
		pthread_mutex_unlock(&t->mu);
		*rec = t->cur.rec;
		return 1;
	}
	int rc = 0;
	if (t->ended) {
		rc = t->end_rc;
		if (rc < 0)
			rtd_source_error(rec, rc, t->end_offset, t->end_msg);
	} else {
		rc = RTD_SOURCE_IDLE;
		/* the stated rule: a record comes at most lag after its time */
		rec->mono = mono_now() - (t->o.lag_fn ? t->o.lag_fn(t->o.lag_ctx) : t->o.lag_ns);
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

static int tq_clock(void *impl, struct rtd_clock *out)
{
	struct tq *t = impl;
	pthread_mutex_lock(&t->mu);
	if (t->have_clock)
		*out = t->clock;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

static int tq_fd(void *impl)
{
	return ((struct tq *)impl)->efd;
}

static void tq_free(void *impl)
{
	struct tq *t = impl;
	if (t->started) {
		pthread_mutex_lock(&t->mu);
		t->quit = true;
		pthread_cond_broadcast(&t->space);
		pthread_mutex_unlock(&t->mu);
		if (t->o.stop)
			t->o.stop(t->o.stop_ctx);
		pthread_join(t->th, NULL);
	}
	for (size_t i = 0; t->q && i < t->n; i++)
		block_put(t, &t->q[(t->head + i) % t->o.max_records]);
	block_put(t, &t->cur);
	/* every block is back: what is left are chunks, whole */
	free(t->fill);
	while (t->spare) {
		struct tq_chunk *c = t->spare;
		t->spare = c->next;
		free(c);
	}
	free(t->q);
	rtd_source_free(t->in);
	if (t->efd >= 0)
		close(t->efd);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->space);
	free(t);
}

static const struct rtd_source_ops tq_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "thread",
	.next = tq_next,
	.clock = tq_clock,
	.free = tq_free,
	.fd = tq_fd,
};

rtd_source *rtd_source_thread(rtd_source *in, const struct rtd_source_thread_opts *opts, int *err)
{
	struct tq *t = NULL;
	int rc = in ? 0 : -RTD_E_INVAL;
	if (!rc && !(t = calloc(1, sizeof(*t))))
		rc = -ENOMEM;
	if (!rc)
		rc = rtd_opts_copy(&t->o, sizeof(t->o), opts,
				   RTD_OPTS_END(rtd_source_thread_opts, lag_ctx));
	if (rc) {
		free(t);
		rtd_source_free(in);
		if (err)
			*err = rc;
		return NULL;
	}
	t->in = in;
	t->efd = -1;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->space, NULL);
	if (!t->o.max_records)
		t->o.max_records = TQ_DEFAULT_RECORDS;
	if (t->o.max_records > RTD_SOURCE_THREAD_MAX_RECORDS)
		t->o.max_records = RTD_SOURCE_THREAD_MAX_RECORDS;
	if (!t->o.max_bytes)
		t->o.max_bytes = TQ_DEFAULT_BYTES;
	if (t->o.lag_ns <= 0)
		t->o.lag_ns = TQ_DEFAULT_LAG_NS;
	/* written whole now, as the perf source's: RSS does not grow as
	 * the queue's depth first reaches its later pages */
	t->q = rtd_alloc_touched(t->o.max_records * sizeof(*t->q));
	t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = !t->q ? -ENOMEM : t->efd < 0 ? -errno : -pthread_create(&t->th, NULL, tq_main, t);
	t->started = rc == 0;
	rtd_source *s = rc == 0 ? rtd_source_new(&tq_ops, t) : NULL;
	if (!s) {
		tq_free(t);
		if (err)
			*err = rc < 0 ? rc : -ENOMEM;
	}
	return s;
}
