/* SPDX-License-Identifier: MIT */
/*
 * analysis_run.c - a decoder's events handed to a consumer on another
 * thread (rtd_gotrace_run), and the analyses fed that way (rtd_goan_run).
 *
 * Ordering a Go 1.22+ trace costs about as much as analysing it (or
 * drawing it as a timeline), and the two are one stream: the decoding
 * thread calls the caller's next() and copies each event to a chunk of a
 * small ring; the caller's thread hands the chunks' events to the
 * consumer (the analyses, the timeline adapter) in order. What an event
 * borrows from the decoder stays valid for the generation
 * (rtd_gotrace_dec_set_tables_hook): before the decoder replaces its
 * tables the decoding thread hands over what it has and waits until the
 * consumer is done with it, so the consumer sees the decoder's strings
 * and stacks exactly as in one thread.
 * The rest is copied: the wire arguments, and UserTaskEnd's task name
 * (kept until the generation ends, so no two names share an address in a
 * generation). The events and their order are the serial run's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "gotrace/analysis_int.h"

#define RUN_BYTES (64u << 10) /* of records per chunk */
#define RUN_CHUNKS 16u  /* chunks in flight */
#define RUN_BATCH 4u    /* chunks a sleeping side is woken for */
#define RUN_SPIN 200u   /* looks before sleeping */

/*
 * An event crosses from one core to the other as a record of what the
 * consumer can see in it. Crossing costs about as much as making it (each
 * line of the ring moves between the cores' caches), so the record is
 * short: a 16-byte head with the time and offset as deltas from the last
 * event's, then only what changed since the last event (G, P, M, stack,
 * generation; the names when they are not the last ones of the event's
 * type), the arguments and the string arguments: 40-70 bytes. The reading
 * side keeps the last event and changes what the record says. An event
 * the short record cannot hold crosses whole (272 bytes). The wire
 * arguments (raw) are not passed on: neither the analyses nor the timeline
 * read them.
 */
struct rec {
	uint32_t dts;   /* ts - the last event's (unless R_TS) */
	int32_t doff;   /* off - the last event's (unless R_OFF) */
	uint16_t size;  /* of the record with what follows, a multiple of 8 */
	uint16_t type;
	uint16_t flags; /* R_*: the fields that follow, in this order */
	uint8_t nargs, nsargs;
};
enum {
	R_TS = 1 << 0, /* ts */
	R_OFF = 1 << 1, /* off */
	R_G = 1 << 2,
	R_P = 1 << 3,
	R_M = 1 << 4,
	R_STACK = 1 << 5,
	R_GEN = 1 << 6,
	R_NAMES = 1 << 7, /* name, argnames, sargnames */
	R_WHOLE = 1 << 8, /* the whole event follows, nothing else */
};
#define REC_MAX (sizeof(struct rec) + sizeof(struct rtd_gotrace_event))
#define REC_TYPES 512u /* event types whose last names are kept */

/* The last event as both sides know it (each side has its own). */
struct last {
	struct rtd_gotrace_event ev; /* the reading side hands this out */
	struct names {
		const char *name;
		const char *const *argnames;
		const char *const *sargnames;
	} names[REC_TYPES];
};

struct chunk {
	alignas(64) unsigned char b[RUN_BYTES];
	size_t len;
	int end;   /* 1: next() ended here with rc (0 or < 0) */
	int rc;
};

/*
 * made and used count chunks; each side waits for the other by looking
 * a few times, then sleeping on cv with its *_waiting flag set (both
 * sides change a counter before they look at the other's flag, and set
 * their flag before they look at the counter again: no wake-up is lost).
 * A sleeping side is woken for a few chunks at a time, not for each.
 */
struct run {
	rtd_gotrace_dec *d;
	rtd_gotrace_next_fn next;
	void *ctx;
	struct chunk *ring;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic uint64_t made, used; /* chunks published, chunks the consumer finished */
	_Atomic bool stop;           /* the consumer failed: the decoding thread stops */
	_Atomic bool cons_waiting, prod_waiting;
	size_t fill; /* a chunk goes when it has this many bytes */
	/* decoding thread only: the last event, UserTaskEnd names of the
	 * generation */
	struct last *last;
	char **names;
	size_t nnames, capnames;
};

static void wake(struct run *r)
{
	pthread_mutex_lock(&r->mu);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void names_free(struct run *r)
{
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	r->nnames = 0;
}

/* Whether the short record has all of the event. */
static bool short_ok(const struct rtd_gotrace_event *ev)
{
	return ev->nargs <= RTD_GOTRACE_MAX_ARGS && ev->nsargs <= 2 && !ev->ticks && !ev->seq &&
	       !ev->str_id && !ev->str && !ev->str_len && !ev->nframes && !ev->frames;
}

/* A copy of the UserTaskEnd's task name that lives for the generation. */
static const char *keep_name(struct run *r, const struct rtd_gotrace_event *ev)
{
	char **n = rtd_grow(r->names, &r->capnames, r->nnames + 1, sizeof(*n), 16);
	if (!n)
		return NULL;
	r->names = n;
	char *t = malloc(ev->sarg_lens[0] + 1);
	if (!t)
		return NULL;
	memcpy(t, ev->sargs[0], ev->sarg_lens[0]);
	t[ev->sarg_lens[0]] = 0;
	r->names[r->nnames++] = t;
	return t;
}

/* Append the event to the chunk (room for REC_MAX is there). What it
 * borrows until the next call only is copied or dropped (raw). */
static int put_event(struct run *r, struct chunk *c, const struct rtd_gotrace_event *ev)
{
	struct rec *x = (struct rec *)(c->b + c->len);
	struct rtd_gotrace_event *l = &r->last->ev;
	const char *task = NULL;
	if (ev->type == RTD_GO2_EV_USER_TASK_END && ev->nsargs > 0 && !(task = keep_name(r, ev)))
		return -ENOMEM;
	if (!short_ok(ev)) {
		*x = (struct rec){.size = (uint16_t)REC_MAX, .flags = R_WHOLE};
		struct rtd_gotrace_event *w = (struct rtd_gotrace_event *)(x + 1);
		*w = *ev;
		w->raw = NULL;
		w->nraw = 0;
		if (task)
			w->sargs[0] = task;
		*l = *w;
		if (w->type < REC_TYPES)
			r->last->names[w->type] = (struct names){w->name, w->argnames, w->sargnames};
		c->len += REC_MAX;
		return 0;
	}
	unsigned flags = 0;
	uint64_t *a = (uint64_t *)(x + 1);
	uint64_t dts = (uint64_t)ev->ts - (uint64_t)l->ts;
	int64_t doff = (int64_t)(ev->off - l->off);
	if (dts <= UINT32_MAX) {
		x->dts = (uint32_t)dts;
	} else {
		x->dts = 0;
		flags |= R_TS;
		*a++ = (uint64_t)ev->ts;
	}
	if (doff >= INT32_MIN && doff <= INT32_MAX) {
		x->doff = (int32_t)doff;
	} else {
		x->doff = 0;
		flags |= R_OFF;
		*a++ = ev->off;
	}
	if (ev->g != l->g) {
		flags |= R_G;
		*a++ = ev->g;
	}
	if (ev->p != l->p) {
		flags |= R_P;
		*a++ = (uint64_t)ev->p;
	}
	if (ev->m != l->m) {
		flags |= R_M;
		*a++ = (uint64_t)ev->m;
	}
	if (ev->stack != l->stack) {
		flags |= R_STACK;
		*a++ = ev->stack;
	}
	if (ev->gen != l->gen) {
		flags |= R_GEN;
		*a++ = ev->gen;
	}
	struct names *nm = ev->type < REC_TYPES ? &r->last->names[ev->type] : NULL;
	if (!nm || nm->name != ev->name || nm->argnames != ev->argnames ||
	    nm->sargnames != ev->sargnames) {
		flags |= R_NAMES;
		*a++ = (uint64_t)(uintptr_t)ev->name;
		*a++ = (uint64_t)(uintptr_t)ev->argnames;
		*a++ = (uint64_t)(uintptr_t)ev->sargnames;
		if (nm)
			*nm = (struct names){ev->name, ev->argnames, ev->sargnames};
	}
	x->type = (uint16_t)ev->type;
	x->flags = (uint16_t)flags;
	x->nargs = (uint8_t)ev->nargs;
	x->nsargs = (uint8_t)ev->nsargs;
	memcpy(a, ev->args, ev->nargs * sizeof(*a));
	a += ev->nargs;
	for (unsigned i = 0; i < ev->nsargs; i++) {
		a[0] = (uint64_t)(uintptr_t)(i == 0 && task ? task : ev->sargs[i]);
		a[1] = ev->sarg_lens[i];
		a += 2;
	}
	size_t size = (size_t)((unsigned char *)a - (unsigned char *)x);
	x->size = (uint16_t)size;
	c->len += size;
	/* what the reading side's event will hold */
	l->ts = ev->ts;
	l->off = ev->off;
	l->g = ev->g;
	l->p = ev->p;
	l->m = ev->m;
	l->stack = ev->stack;
	l->gen = ev->gen;
	return 0;
}

/* The event of a record, in @l's event (the consumer's thread), which
 * holds the last one: a short record changes what it has and clears the
 * arguments after its own; the fields it never has are cleared when the
 * last event was a whole one (*whole). */
static const struct rtd_gotrace_event *get_event(const struct rec *x, struct last *l,
						 bool *whole)
{
	struct rtd_gotrace_event *ev = &l->ev;
	if (x->flags & R_WHOLE) {
		*ev = *(const struct rtd_gotrace_event *)(x + 1);
		if (ev->type < REC_TYPES)
			l->names[ev->type] = (struct names){ev->name, ev->argnames, ev->sargnames};
		*whole = true;
		return ev;
	}
	if (*whole) {
		ev->ticks = ev->seq = 0;
		ev->nraw = 0;
		ev->raw = NULL;
		ev->str_id = 0;
		ev->str = NULL;
		ev->str_len = 0;
		ev->nframes = 0;
		ev->frames = NULL;
		*whole = false;
	}
	unsigned flags = x->flags;
	const uint64_t *a = (const uint64_t *)(x + 1);
	ev->ts = (flags & R_TS) ? (int64_t)*a++ : (int64_t)((uint64_t)ev->ts + x->dts);
	ev->off = (flags & R_OFF) ? *a++ : ev->off + (uint64_t)(int64_t)x->doff;
	if (flags & R_G)
		ev->g = *a++;
	if (flags & R_P)
		ev->p = (int64_t)*a++;
	if (flags & R_M)
		ev->m = (int64_t)*a++;
	if (flags & R_STACK)
		ev->stack = *a++;
	if (flags & R_GEN)
		ev->gen = *a++;
	ev->type = x->type;
	struct names *nm = x->type < REC_TYPES ? &l->names[x->type] : NULL;
	if (flags & R_NAMES) {
		ev->name = (const char *)(uintptr_t)a[0];
		ev->argnames = (const char *const *)(uintptr_t)a[1];
		ev->sargnames = (const char *const *)(uintptr_t)a[2];
		a += 3;
		if (nm)
			*nm = (struct names){ev->name, ev->argnames, ev->sargnames};
	} else {
		ev->name = nm->name;
		ev->argnames = nm->argnames;
		ev->sargnames = nm->sargnames;
	}
	ev->nargs = x->nargs;
	ev->nsargs = x->nsargs;
	memset(ev->args, 0, sizeof(ev->args));
	memcpy(ev->args, a, x->nargs * sizeof(*a));
	a += x->nargs;
	ev->sargs[0] = ev->sargs[1] = NULL;
	ev->sarg_lens[0] = ev->sarg_lens[1] = 0;
	for (unsigned i = 0; i < x->nsargs; i++) {
		ev->sargs[i] = (const char *)(uintptr_t)a[0];
		ev->sarg_lens[i] = (size_t)a[1];
		a += 2;
	}
	return ev;
}

/* Decoding thread: may it go on (room in the ring, or with @drain every
 * chunk used)? */
static bool prod_may(struct run *r, bool drain)
{
	uint64_t m = atomic_load(&r->made), u = atomic_load(&r->used);
	return drain ? u >= m : m - u < RUN_CHUNKS;
}

/* Decoding thread: wait for room (or for every chunk to be used when
 * @drain). False when the consumer stopped. */
static bool wait_room(struct run *r, bool drain)
{
	for (unsigned i = 0; i < RUN_SPIN; i++) {
		if (atomic_load(&r->stop))
			return false;
		if (prod_may(r, drain))
			return true;
	}
	pthread_mutex_lock(&r->mu);
	atomic_store(&r->prod_waiting, true);
	/* the consumer may sleep on fewer chunks than it is woken for */
	if (atomic_load(&r->cons_waiting) && atomic_load(&r->made) > atomic_load(&r->used))
		pthread_cond_broadcast(&r->cv);
	while (!atomic_load(&r->stop) && !prod_may(r, drain))
		pthread_cond_wait(&r->cv, &r->mu);
	atomic_store(&r->prod_waiting, false);
	pthread_mutex_unlock(&r->mu);
	return !atomic_load(&r->stop);
}

/* Hand the chunk being filled over; wake the consumer if it sleeps and
 * there is enough for it (or @force: no more is coming for now). */
static void publish(struct run *r, bool force)
{
	uint64_t m = atomic_fetch_add(&r->made, 1) + 1;
	if (atomic_load(&r->cons_waiting) && (force || m - atomic_load(&r->used) >= RUN_BATCH))
		wake(r);
}

struct prod {
	struct run *r;
	struct chunk *c; /* being filled, or NULL */
	bool ok;
};

static struct chunk *cur_chunk(struct prod *p)
{
	struct run *r = p->r;
	if (!p->c) {
		if (!wait_room(r, false))
			return NULL;
		p->c = &r->ring[atomic_load(&r->made) % RUN_CHUNKS];
		p->c->len = 0;
		p->c->end = 0;
	}
	return p->c;
}

/* The decoder is about to replace its tables: hand over what is filled
 * and wait until the consumer is done with all of it. */
static void tables_going(void *ctx)
{
	struct prod *p = ctx;
	struct run *r = p->r;
	if (p->c && p->c->len) {
		publish(r, true);
		p->c = NULL;
	}
	if (!wait_room(r, true))
		p->ok = false;
	names_free(r);
}

static void *produce(void *arg)
{
	struct prod *p = arg;
	struct run *r = p->r;
	int rc;
	for (;;) {
		struct chunk *c = cur_chunk(p);
		if (!c)
			return NULL;
		struct rtd_gotrace_event ev;
		rc = r->next(r->ctx, &ev);
		if (!p->ok)
			return NULL; /* stopped while waiting in the hook */
		c = cur_chunk(p); /* the hook may have handed the chunk over */
		if (!c)
			return NULL;
		if (rc <= 0)
			break;
		if ((rc = put_event(r, c, &ev)) < 0)
			break;
		if (c->len >= r->fill) {
			publish(r, false);
			p->c = NULL;
		}
	}
	p->c->end = 1;
	p->c->rc = rc;
	publish(r, true);
	p->c = NULL;
	return NULL;
}

static int run_serial(rtd_gotrace_next_fn next, void *ctx, rtd_gotrace_take_fn take,
		      void *take_ctx, int *dec_rc)
{
	struct rtd_gotrace_event ev;
	int rc;
	while ((rc = next(ctx, &ev)) > 0) {
		int arc = take(take_ctx, &ev);
		if (arc < 0)
			return arc;
	}
	*dec_rc = rc;
	return 0;
}

int rtd_gotrace_run(rtd_gotrace_dec *d, rtd_gotrace_next_fn next, void *ctx,
		    rtd_gotrace_take_fn take, void *take_ctx, unsigned flags, int *dec_rc)
{
	*dec_rc = 0;
	bool thread = (flags & RTD_GOTRACE_RUN_THREAD) && rtd_gotrace_dec_version(d) >= 1022;
	if (thread && !(flags & RTD_GOTRACE_RUN_ANY_CPUS) && sysconf(_SC_NPROCESSORS_ONLN) < 2)
		thread = false;
	if (!thread)
		return run_serial(next, ctx, take, take_ctx, dec_rc);
	/* small chunks: about three events each */
	struct run r = {.d = d, .next = next, .ctx = ctx,
			.fill = flags & RTD_GOTRACE_RUN_SMALL_CHUNKS
				? 3 * (sizeof(struct rec) + 4 * sizeof(uint64_t))
				: RUN_BYTES - REC_MAX};
	atomic_init(&r.made, 0);
	atomic_init(&r.used, 0);
	atomic_init(&r.stop, false);
	atomic_init(&r.cons_waiting, false);
	atomic_init(&r.prod_waiting, false);
	r.ring = malloc(RUN_CHUNKS * sizeof(*r.ring));
	r.last = calloc(1, sizeof(*r.last));
	struct last *clast = calloc(1, sizeof(*clast)); /* the consumer's */
	if (!r.ring || !r.last || !clast) {
		free(r.ring);
		free(r.last);
		free(clast);
		return run_serial(next, ctx, take, take_ctx, dec_rc);
	}
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	struct prod p = {&r, NULL, true};
	rtd_gotrace_dec_set_tables_hook(d, tables_going, &p);
	pthread_t th;
	if (pthread_create(&th, NULL, produce, &p) != 0) {
		rtd_gotrace_dec_set_tables_hook(d, NULL, NULL);
		pthread_cond_destroy(&r.cv);
		pthread_mutex_destroy(&r.mu);
		free(r.ring);
		free(r.last);
		free(clast);
		return run_serial(next, ctx, take, take_ctx, dec_rc);
	}
	int rc = 0;
	bool whole = false; /* clast->ev: a whole event's fields to clear */
	for (uint64_t k = 0;; k++) {
		unsigned spin = 0;
		while (atomic_load(&r.made) <= k && spin < RUN_SPIN)
			spin++;
		if (atomic_load(&r.made) <= k) {
			pthread_mutex_lock(&r.mu);
			atomic_store(&r.cons_waiting, true);
			while (atomic_load(&r.made) <= k)
				pthread_cond_wait(&r.cv, &r.mu);
			atomic_store(&r.cons_waiting, false);
			pthread_mutex_unlock(&r.mu);
		}
		struct chunk *c = &r.ring[k % RUN_CHUNKS];
		for (size_t at = 0; at < c->len && rc == 0;) {
			const struct rec *x = (const struct rec *)(c->b + at);
			rc = take(take_ctx, get_event(x, clast, &whole));
			at += x->size;
		}
		bool end = c->end;
		if (end)
			*dec_rc = c->rc;
		if (rc < 0)
			atomic_store(&r.stop, true);
		uint64_t u = k + 1;
		atomic_store(&r.used, u);
		if (atomic_load(&r.prod_waiting) &&
		    (rc < 0 || u >= atomic_load(&r.made) || atomic_load(&r.made) - u <= RUN_CHUNKS - RUN_BATCH))
			wake(&r);
		if (end || rc < 0)
			break;
	}
	pthread_join(th, NULL);
	rtd_gotrace_dec_set_tables_hook(d, NULL, NULL);
	names_free(&r);
	free(r.names);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	free(r.ring);
	free(r.last);
	free(clast);
	return rc;
}

/* rtd_goan_run()'s flags are rtd_gotrace_run()'s */
_Static_assert(RTD_GOAN_RUN_THREAD == RTD_GOTRACE_RUN_THREAD &&
		       RTD_GOAN_RUN_ANY_CPUS == RTD_GOTRACE_RUN_ANY_CPUS &&
		       RTD_GOAN_RUN_SMALL_CHUNKS == RTD_GOTRACE_RUN_SMALL_CHUNKS,
	       "run flags");

static int goan_take(void *a, const struct rtd_gotrace_event *ev)
{
	return rtd_goan_feed(a, ev);
}

int rtd_goan_run(rtd_goan *a, rtd_gotrace_next_fn next, void *ctx, unsigned flags,
		 int *dec_rc)
{
	return rtd_gotrace_run(ga_goan_dec(a), next, ctx, goan_take, a, flags, dec_rc);
}
