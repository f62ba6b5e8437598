/* SPDX-License-Identifier: MIT */
/*
 * pipe.c - decode on a thread of its own while the caller formats
 * (rtd_gotrace_pipe).
 *
 * 'cat --ordered' spends about two thirds of its time decoding and
 * ordering and one third printing; Go's own 'go tool trace -d' keeps both
 * cores busy (its collector runs beside the parser). The decoding thread
 * hands events over in chunks of a few hundred, so the two threads meet
 * once per chunk, not once per event.
 *
 * A chunk is a run of records. Most events go as a short record: the
 * fields a line needs and the arguments, strings inline (40 bytes and 8 a
 * word, not the 272 of the event; names come from a table per type that
 * is filled once). Others go whole, with what they borrow (strings,
 * frames) copied after them. What stays borrowed is static (names) or
 * lives in tables the decoder no longer changes: true of the old format
 * in ordered mode only (its tables are complete before the first event
 * comes out), which is what the CLI uses it for. The wire arguments
 * (raw) are not passed on: 'cat' prints none.
 *
 * The bytes that cross from one core to the other are the cost here. A
 * record written with ordinary stores first takes its cache lines back
 * from the printing core, which read them a round ago: the decoding
 * thread stalled on that (it ran 30% slower than on its own). Short
 * records are therefore written with streaming stores where the CPU has
 * them (x86-64: movnti), which take no line back, and a fence before each
 * chunk is published.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "rtdiag/gotrace.h"

#define PIPE_CHUNK (16u << 10) /* bytes of records per chunk */
#define PIPE_CHUNKS 16u        /* chunks in flight */
#define PIPE_BATCH 8u          /* chunks a sleeping side is woken for */
#define SPIN 64u               /* pauses (a few microseconds) before sleeping */
#define REC_STR_MAX 1024u      /* longer strings: a whole-event record */

enum { REC_LINE, REC_FULL };

/* A short record; the stack (when has_stack) and args[nargs] follow,
 * then each string argument as its length (8 bytes) and its bytes with a
 * NUL, padded to 8. Its name, argnames and sargnames are the type's in
 * struct rtd_gotrace_pipe's names[]; m is -1 (the old format's). */
struct rec {
	uint32_t size; /* of the record with what follows, a multiple of 8 */
	uint8_t kind, nargs, nsargs, has_stack;
	uint32_t type;
	int32_t p;
	int64_t ts;
	uint64_t g, off;
};
_Static_assert(sizeof(struct rec) == 40, "struct rec is 40 bytes");
#define REC_MAX 2304u /* room for any short record (REC_STR_MAX strings) */

/* The names of a type's events, set by the decoding thread before the
 * first short record of the type is published, never changed after. */
struct rec_names {
	const char *name;
	const char *const *argnames;
	const char *const *sargnames;
};

/* A whole-event record: the event, then the data it points at. */
struct rec_full {
	uint32_t size;
	uint8_t kind;
	struct rtd_gotrace_event ev;
};

/* Each on cache lines of its own: the threads own different chunks at a
 * time, and must not share lines that one of them writes per event. */
struct chunk {
	alignas(64) size_t len, cap;
	bool end; /* the last chunk: rc is the decoder's last answer */
	int rc;
	uint8_t *b; /* records, 8-aligned */
};

struct rtd_gotrace_pipe {
	rtd_gotrace_next_fn next;
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t not_full, not_empty;
	uint64_t wr, rd;     /* chunks published, chunks given back */
	bool stop;           /* the reader wants no more */
	bool ended;          /* the last chunk is published */
	bool rsleep, wsleep; /* a side waits on its condition */
	struct chunk ch[PIPE_CHUNKS];
	struct rec_names names[256]; /* by type; written before use, then kept */
	/* the reader's side, on lines of its own */
	alignas(64) size_t at; /* next record in ch[rd % PIPE_CHUNKS] */
	bool have;
	struct rtd_gotrace_event line; /* what short records fill */
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Can @e go as a short record? (Its type's names are set on the way.) */
static bool short_ok(struct rtd_gotrace_pipe *p, const struct rtd_gotrace_event *e)
{
	/* one test for the six (most events have none) */
	if (((uint64_t)e->seq | (uint64_t)e->ticks | e->gen | (uintptr_t)e->str |
	     e->str_id | e->nframes) != 0 ||
	    e->nargs > RTD_GOTRACE_MAX_ARGS || e->nsargs > 2 || e->m != -1 ||
	    e->p != (int32_t)e->p || e->type > 255)
		return false;
	for (unsigned i = 0; i < e->nsargs; i++)
		if (!e->sargs[i] || e->sarg_lens[i] > REC_STR_MAX)
			return false;
	struct rec_names *t = &p->names[e->type];
	if (!t->name)
		*t = (struct rec_names){e->name, e->argnames, e->sargnames};
	return t->name == e->name && t->argnames == e->argnames &&
	       t->sargnames == e->sargnames;
}

/* The size of @e's whole-event record. */
static size_t full_size(const struct rtd_gotrace_event *e)
{
	size_t n = pad8(sizeof(struct rec_full));
	for (unsigned i = 0; i < e->nsargs && i < 2; i++)
		n += e->sargs[i] ? pad8(e->sarg_lens[i] + 1) : 0;
	if (e->str)
		n += pad8(e->str_len + 1);
	return n + e->nframes * sizeof(*e->frames);
}

/* Copy @n bytes and a NUL to @dst: the end, padded to 8 (with zeros). */
static uint8_t *put_str(uint8_t *dst, const char *s, size_t n)
{
	memset(dst + pad8(n + 1) - 8, 0, 8);
	memcpy(dst, s, n);
	dst[n] = 0;
	return dst + pad8(n + 1);
}

/* Copy @n bytes (a multiple of 8) of a record to the chunk: streaming
 * stores where there are (see the top of the file). */
static void rec_stream(uint8_t *dst, const uint64_t *src, size_t n)
{
#if defined(__x86_64__)
	for (size_t k = 0; k < n / 8; k++)
		_mm_stream_si64((long long *)(void *)(dst + 8 * k), (long long)src[k]);
#else
	memcpy(dst, src, n);
#endif
}

/* Build @e's short record in @tmp (REC_MAX bytes, where the stores stay
 * in this core's cache): its size, or 0 when @e must go whole. One pass
 * over the event: the decoding thread's time is what the pipe saves. */
static size_t rec_short(struct rtd_gotrace_pipe *p, const struct rtd_gotrace_event *e,
			uint64_t *tmp)
{
	if (!short_ok(p, e))
		return 0;
	struct rec *r = (struct rec *)tmp;
	r->kind = REC_LINE;
	r->nargs = (uint8_t)e->nargs;
	r->nsargs = (uint8_t)e->nsargs;
	r->has_stack = e->stack != 0;
	r->type = e->type;
	r->p = (int32_t)e->p;
	r->ts = e->ts;
	r->g = e->g;
	r->off = e->off;
	uint64_t *a = tmp + sizeof(*r) / 8;
	if (e->stack)
		*a++ = e->stack;
	for (unsigned i = 0; i < e->nargs; i++) /* a few: no memcpy call */
		a[i] = e->args[i];
	uint8_t *q = (uint8_t *)(a + e->nargs);
	for (unsigned i = 0; i < e->nsargs; i++) {
		uint64_t n = e->sarg_lens[i];
		memcpy(q, &n, 8);
		q = put_str(q + 8, e->sargs[i], e->sarg_lens[i]);
	}
	r->size = (uint32_t)(q - (uint8_t *)tmp);
	return r->size;
}
/* short_ok's limits (a stack, 8 args, 2 strings of REC_STR_MAX) fit */
_Static_assert(REC_MAX >= sizeof(struct rec) + 8 * (1 + RTD_GOTRACE_MAX_ARGS) +
			   2 * (8 + REC_STR_MAX + 8),
	       "REC_MAX holds any short record");

/* Write @e's whole-event record (@size bytes, from full_size()) at @dst. */
static void rec_full_put(uint8_t *dst, const struct rtd_gotrace_event *e, size_t size)
{
	struct rec_full *r = (struct rec_full *)dst;
	r->size = (uint32_t)size;
	r->kind = REC_FULL;
	r->ev = *e;
	r->ev.nraw = 0;
	r->ev.raw = NULL;
	uint8_t *q = dst + pad8(sizeof(*r));
	for (unsigned i = 0; i < e->nsargs && i < 2; i++) {
		if (e->sargs[i]) {
			r->ev.sargs[i] = (const char *)q;
			q = put_str(q, e->sargs[i], e->sarg_lens[i]);
		}
	}
	if (e->str) {
		r->ev.str = (const char *)q;
		q = put_str(q, e->str, e->str_len);
	}
	if (e->nframes) {
		r->ev.frames = (const struct rtd_gotrace_frame *)q;
		memcpy(q, e->frames, e->nframes * sizeof(*e->frames));
	}
}

/*
 * Waiting. A thread that finds nothing to do spins a moment, then sleeps
 * until there is a batch of work (PIPE_BATCH chunks, or the end): being
 * woken costs tens of microseconds in a VM, so the two should meet seldom.
 * Spinning longer (50 us) bought no wall time here and cost 20% more CPU.
 */
static uint64_t filled(struct rtd_gotrace_pipe *p)
{
	return __atomic_load_n(&p->wr, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&p->rd, __ATOMIC_ACQUIRE);
}

/* A pause in a spin: the CPU's hint where it has one. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static void spin_while(struct rtd_gotrace_pipe *p, uint64_t n)
{
	for (unsigned k = 0; k < SPIN && filled(p) == n &&
			     !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE); k++)
		cpu_relax();
}

/* Publish the chunk being written (the last one when @end). */
static void publish(struct rtd_gotrace_pipe *p, bool end)
{
#if defined(__x86_64__)
	_mm_sfence(); /* the streaming stores before the chunk is seen */
#endif
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->wr, p->wr + 1, __ATOMIC_RELEASE);
	p->ended = end;
	if (p->rsleep && (end || p->wr - p->rd >= PIPE_BATCH))
		pthread_cond_signal(&p->not_empty);
	pthread_mutex_unlock(&p->mu);
}

/* The next free chunk, emptied; NULL when the reader wants no more. */
static struct chunk *take(struct rtd_gotrace_pipe *p)
{
	spin_while(p, PIPE_CHUNKS);
	pthread_mutex_lock(&p->mu);
	if (p->wr - p->rd == PIPE_CHUNKS) {
		p->wsleep = true;
		while (p->wr - p->rd > PIPE_CHUNKS - PIPE_BATCH && !p->stop)
			pthread_cond_wait(&p->not_full, &p->mu);
		p->wsleep = false;
	}
	bool stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	if (stop)
		return NULL;
	struct chunk *c = &p->ch[p->wr % PIPE_CHUNKS];
	c->len = 0;
	c->end = false;
	return c;
}

/* The reader: wait for a published chunk. */
static void wait_chunk(struct rtd_gotrace_pipe *p)
{
	spin_while(p, 0);
	pthread_mutex_lock(&p->mu);
	if (p->wr == p->rd) {
		p->rsleep = true;
		while (p->wr == p->rd || (p->wr - p->rd < PIPE_BATCH && !p->ended))
			pthread_cond_wait(&p->not_empty, &p->mu);
		p->rsleep = false;
	}
	pthread_mutex_unlock(&p->mu);
}

/* The reader: give the chunk read back. */
static void release_chunk(struct rtd_gotrace_pipe *p)
{
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->rd, p->rd + 1, __ATOMIC_RELEASE);
	if (p->wsleep && p->wr - p->rd <= PIPE_CHUNKS - PIPE_BATCH)
		pthread_cond_signal(&p->not_full);
	pthread_mutex_unlock(&p->mu);
}

/* The decoding thread. */
static void *produce(void *arg)
{
	struct rtd_gotrace_pipe *p = arg;
	struct rtd_gotrace_event ev;
	struct chunk *c = take(p);
	int rc;
	if (!c)
		return NULL;
	uint64_t tmp[REC_MAX / 8];
	while ((rc = p->next(p->ctx, &ev)) > 0) {
		size_t n = rec_short(p, &ev, tmp);
		bool full = n == 0;
		if (full)
			n = full_size(&ev);
		if (c->len + n > c->cap && c->len > 0) {
			publish(p, false);
			if (!(c = take(p)))
				return NULL;
		}
		if (n > c->cap) { /* a large event: an empty chunk grows */
			uint8_t *nb = realloc(c->b, n);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			c->b = nb;
			c->cap = n;
		}
		if (full)
			rec_full_put(c->b + c->len, &ev, n);
		else
			rec_stream(c->b + c->len, tmp, n);
		c->len += n;
	}
	c->end = true;
	c->rc = rc;
	publish(p, true);
	return NULL;
}

rtd_gotrace_pipe *rtd_gotrace_pipe_new(rtd_gotrace_next_fn next, void *ctx)
{
	if (!next)
		return NULL;
	struct rtd_gotrace_pipe *p = aligned_alloc(64, (sizeof(*p) + 63) & ~(size_t)63);
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->next = next;
	p->ctx = ctx;
	p->line.m = -1; /* every short record's (the old format's) */
	for (unsigned k = 0; k < PIPE_CHUNKS; k++) {
		/* malloc's alignment suits the records */
		p->ch[k].b = malloc(PIPE_CHUNK);
		p->ch[k].cap = PIPE_CHUNK;
		if (!p->ch[k].b)
			goto fail;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->not_full, NULL);
	pthread_cond_init(&p->not_empty, NULL);
	if (pthread_create(&p->th, NULL, produce, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->not_full);
		pthread_cond_destroy(&p->not_empty);
		goto fail;
	}
	return p;
fail:
	for (unsigned k = 0; k < PIPE_CHUNKS; k++)
		free(p->ch[k].b);
	free(p);
	return NULL;
}

/* The event of the short record @r, in p->line. */
static const struct rtd_gotrace_event *rec_get(struct rtd_gotrace_pipe *p, const struct rec *r)
{
	struct rtd_gotrace_event *e = &p->line;
	const struct rec_names *t = &p->names[r->type];
	e->type = r->type;
	e->ts = r->ts;
	e->p = r->p;
	e->g = r->g;
	e->off = r->off;
	e->name = t->name;
	e->argnames = t->argnames;
	e->sargnames = t->sargnames;
	e->nargs = r->nargs;
	e->nsargs = r->nsargs;
	const uint64_t *a = (const uint64_t *)(r + 1);
	e->stack = r->has_stack ? *a++ : 0;
	for (unsigned i = 0; i < r->nargs; i++)
		e->args[i] = a[i];
	const uint8_t *q = (const uint8_t *)(a + r->nargs);
	for (unsigned i = 0; i < 2; i++) {
		e->sargs[i] = NULL;
		e->sarg_lens[i] = 0;
	}
	for (unsigned i = 0; i < r->nsargs; i++) {
		uint64_t n;
		memcpy(&n, q, 8);
		e->sargs[i] = (const char *)q + 8;
		e->sarg_lens[i] = (size_t)n;
		q += 8 + pad8(n + 1);
	}
	return e;
}

int rtd_gotrace_pipe_next(rtd_gotrace_pipe *p, const struct rtd_gotrace_event **ev)
{
	for (;;) {
		if (!p->have) {
			wait_chunk(p);
			p->have = true;
			p->at = 0;
		}
		struct chunk *c = &p->ch[p->rd % PIPE_CHUNKS];
		if (p->at < c->len) {
			const uint8_t *q = c->b + p->at;
			const struct rec *r = (const struct rec *)q;
			p->at += r->size;
			*ev = r->kind == REC_LINE ? rec_get(p, r)
						  : &((const struct rec_full *)q)->ev;
			return 1;
		}
		if (c->end) /* the thread has stopped: its source is ours again */
			return c->rc;
		release_chunk(p);
		p->have = false;
	}
}

void rtd_gotrace_pipe_free(rtd_gotrace_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	pthread_cond_signal(&p->not_full);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->not_full);
	pthread_cond_destroy(&p->not_empty);
	for (unsigned k = 0; k < PIPE_CHUNKS; k++)
		free(p->ch[k].b);
	free(p);
}
