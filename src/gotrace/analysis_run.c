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
#include "gotrace/gotrace_int.h"
#include "gotrace/v2state.h"

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
 *
 * With RTD_GOTRACE_RUN_DEC_NEXT (@next passes the decoder's events through)
 * a Go 1.22+ event crosses as the ordering made it (struct v2_out: the
 * decoder's compact mode): its time and offset as above, the thread, P,
 * goroutine and generation when they changed since the last such record,
 * the wire arguments after the time delta, and UserTaskEnd's task; the
 * consumer's thread builds the event from it (v2_fill_out(), the same
 * code as the decoder's), so the decoding thread neither builds the
 * 272-byte event nor reads it back. The rest (Go's Sync events) cross
 * whole.
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
	R_OUT = 1 << 9,   /* an ordering's event: R_TS, R_OFF, R_G, R_P, R_M,
			   * R_GEN against the last R_OUT record, then its
			   * arguments after the time delta, then (R_TASK)
			   * UserTaskEnd's parent and name */
	R_TASK = 1 << 10,
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
	/* the last R_OUT record's event (its time in out.time) */
	struct v2_out out;
	uint64_t out_gen;
	struct v2_strs strs; /* reading side: out_gen's strings */
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
	bool compact; /* the decoder's compact mode is on (R_OUT records) */
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

/* A copy of a UserTaskEnd's task name that lives for the generation. */
static const char *keep_str(struct run *r, const char *s, size_t len)
{
	char **n = rtd_grow(r->names, &r->capnames, r->nnames + 1, sizeof(*n), 16);
	if (!n)
		return NULL;
	r->names = n;
	char *t = malloc(len + 1);
	if (!t)
		return NULL;
	memcpy(t, s, len);
	t[len] = 0;
	r->names[r->nnames++] = t;
	return t;
}

/* A record's time and offset: deltas from the last ones in the head, or
 * whole after it (R_TS, R_OFF). Returns where the record goes on. */
static uint64_t *put_ts_off(struct rec *x, unsigned *flags, int64_t ts, int64_t last_ts,
			    uint64_t off, uint64_t last_off)
{
	uint64_t *a = (uint64_t *)(x + 1);
	uint64_t dts = (uint64_t)ts - (uint64_t)last_ts;
	int64_t doff = (int64_t)(off - last_off);
	if (dts <= UINT32_MAX) {
		x->dts = (uint32_t)dts;
	} else {
		x->dts = 0;
		*flags |= R_TS;
		*a++ = (uint64_t)ts;
	}
	if (doff >= INT32_MIN && doff <= INT32_MAX) {
		x->doff = (int32_t)doff;
	} else {
		x->doff = 0;
		*flags |= R_OFF;
		*a++ = off;
	}
	return a;
}

/* put_ts_off()'s fields read back into *ts and *off (the last ones). */
static const uint64_t *get_ts_off(const struct rec *x, int64_t *ts, uint64_t *off)
{
	const uint64_t *a = (const uint64_t *)(x + 1);
	*ts = (x->flags & R_TS) ? (int64_t)*a++ : (int64_t)((uint64_t)*ts + x->dts);
	*off = (x->flags & R_OFF) ? *a++ : *off + (uint64_t)(int64_t)x->doff;
	return a;
}

/* Append the event to the chunk (room for REC_MAX is there), @whole: as
 * a whole one. What it borrows until the next call only is copied or
 * dropped (raw). */
static int put_event(struct run *r, struct chunk *c, const struct rtd_gotrace_event *ev,
		     bool whole)
{
	struct rec *x = (struct rec *)(c->b + c->len);
	struct rtd_gotrace_event *l = &r->last->ev;
	const char *task = NULL;
	if (ev->type == RTD_GO2_EV_USER_TASK_END && ev->nsargs > 0 &&
	    !(task = keep_str(r, ev->sargs[0], ev->sarg_lens[0])))
		return -ENOMEM;
	if (whole || !short_ok(ev)) {
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
	uint64_t *a = put_ts_off(x, &flags, ev->ts, l->ts, ev->off, l->off);
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

/* @n (at most V2_OUT_ARGS) arguments one by one: a memcpy of n is a
 * slow rep movs, a vector copy stalls on the entry's fields just stored. */
static inline void copy_args(uint64_t *to, const uint64_t *from, unsigned n)
{
	switch (n) {
	case 6: to[5] = from[5]; /* fall through */
	case 5: to[4] = from[4]; /* fall through */
	case 4: to[3] = from[3]; /* fall through */
	case 3: to[2] = from[2]; /* fall through */
	case 2: to[1] = from[1]; /* fall through */
	case 1: to[0] = from[0]; /* fall through */
	default: break;
	}
}
_Static_assert(V2_OUT_ARGS == 6, "copy_args");

/* Append the ordering's event @o (the decoder's compact mode; @ev has its
 * time and generation) to the chunk (room for REC_MAX is there). */
static int put_out(struct run *r, struct chunk *c, const struct v2_out *o,
		   const struct rtd_gotrace_event *ev)
{
	struct rec *x = (struct rec *)(c->b + c->len);
	struct v2_out *l = &r->last->out;
	unsigned flags = R_OUT;
	uint64_t *a = put_ts_off(x, &flags, ev->ts, l->time, o->off, l->off);
	if (o->g != l->g) {
		flags |= R_G;
		*a++ = o->g;
	}
	if (o->p != l->p) {
		flags |= R_P;
		*a++ = (uint64_t)o->p;
	}
	if (o->m != l->m) {
		flags |= R_M;
		*a++ = o->m;
	}
	if (ev->gen != r->last->out_gen) {
		flags |= R_GEN;
		*a++ = ev->gen;
	}
	unsigned skip = (v2_specs[o->type].flags & V2_TIMED) ? 1 : 0;
	unsigned n = o->nargs > skip ? o->nargs - skip : 0;
	copy_args(a, o->args + skip, n);
	a += n;
	if (o->type == RTD_GO2_EV_USER_TASK_END) {
		flags |= R_TASK;
		const char *task = NULL;
		if (!(task = keep_str(r, o->task_name, strlen(o->task_name))))
			return -ENOMEM;
		a[0] = o->task_parent;
		a[1] = (uint64_t)(uintptr_t)task;
		a += 2;
	}
	x->type = o->type;
	x->flags = (uint16_t)flags;
	x->nargs = o->nargs;
	x->nsargs = 0;
	size_t size = (size_t)((unsigned char *)a - (unsigned char *)x);
	x->size = (uint16_t)size;
	c->len += size;
	l->time = ev->ts;
	l->off = o->off;
	l->g = o->g;
	l->p = o->p;
	l->m = o->m;
	r->last->out_gen = ev->gen;
	return 0;
}

/* The event of an R_OUT record, built in @l's event as the decoder would
 * have (v2_fill_out()), without the wire arguments. */
static const struct rtd_gotrace_event *get_out(rtd_gotrace_dec *d, const struct rec *x,
					       struct last *l)
{
	struct v2_out *o = &l->out;
	unsigned flags = x->flags;
	const uint64_t *a = get_ts_off(x, &o->time, &o->off);
	if (flags & R_G)
		o->g = *a++;
	if (flags & R_P)
		o->p = (int64_t)*a++;
	if (flags & R_M)
		o->m = *a++;
	if (flags & R_GEN) {
		l->out_gen = *a++;
		v2_strs_get(d, &l->strs); /* its tables are in place */
	}
	o->type = (uint8_t)x->type;
	o->nargs = x->nargs;
	unsigned skip = (v2_specs[o->type].flags & V2_TIMED) ? 1 : 0;
	unsigned n = o->nargs > skip ? o->nargs - skip : 0;
	/* the arguments in place: a - 1 (the time delta's place, for a timed
	 * event) is the record's, and v2_fill_out() does not read it */
	const uint64_t *args = a - skip;
	a += n;
	if (flags & R_TASK) {
		o->task_parent = a[0];
		o->task_name = (const char *)(uintptr_t)a[1];
	}
	v2_fill_out(d, &l->strs, o, args, o->time, l->out_gen, &l->ev);
	l->ev.raw = NULL;
	l->ev.nraw = 0;
	return &l->ev;
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
	const uint64_t *a = get_ts_off(x, &ev->ts, &ev->off);
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
		const struct v2_out *o = r->compact ? v2_compact_take(r->d) : NULL;
		if ((rc = o ? put_out(r, c, o, &ev) : put_event(r, c, &ev, r->compact)) < 0)
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

/* The consumer's side of a run with a decoding thread, read by pulls. */
struct gt_pull {
	struct run r;
	struct prod p;
	struct last *clast; /* the consumer's last event */
	pthread_t th;
	uint64_t k;         /* the chunk being read (or waited for) */
	struct chunk *c;    /* that chunk, once it is made */
	size_t at;          /* where in it */
	bool whole;         /* clast->ev: a whole event's fields to clear */
	bool end;           /* the end was reached: dec_rc is the decoder's */
	int dec_rc;
};

static void pull_release(struct gt_pull *p)
{
	rtd_gotrace_dec_set_tables_hook(p->r.d, NULL, NULL);
	v2_set_compact(p->r.d, false);
	names_free(&p->r);
	free(p->r.names);
	pthread_cond_destroy(&p->r.cv);
	pthread_mutex_destroy(&p->r.mu);
	free(p->r.ring);
	free(p->r.last);
	free(p->clast);
	free(p);
}

int gt_pull_start(struct gt_pull **out, rtd_gotrace_dec *d, rtd_gotrace_next_fn next, void *ctx,
		  unsigned flags)
{
	*out = NULL;
	if (!(flags & RTD_GOTRACE_RUN_THREAD) || rtd_gotrace_dec_version(d) < 1022 ||
	    (!(flags & RTD_GOTRACE_RUN_ANY_CPUS) && sysconf(_SC_NPROCESSORS_ONLN) < 2))
		return 0;
	struct gt_pull *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	struct run *r = &p->r;
	/* small chunks: about three events each */
	*r = (struct run){.d = d, .next = next, .ctx = ctx,
			  .fill = flags & RTD_GOTRACE_RUN_SMALL_CHUNKS
				  ? 3 * (sizeof(struct rec) + 4 * sizeof(uint64_t))
				  : RUN_BYTES - REC_MAX};
	atomic_init(&r->made, 0);
	atomic_init(&r->used, 0);
	atomic_init(&r->stop, false);
	atomic_init(&r->cons_waiting, false);
	atomic_init(&r->prod_waiting, false);
	r->ring = malloc(RUN_CHUNKS * sizeof(*r->ring));
	r->last = calloc(1, sizeof(*r->last));
	p->clast = calloc(1, sizeof(*p->clast));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (!r->ring || !r->last || !p->clast) {
		pull_release(p);
		return -ENOMEM;
	}
	p->p = (struct prod){r, NULL, true};
	rtd_gotrace_dec_set_tables_hook(d, tables_going, &p->p);
	r->compact = (flags & RTD_GOTRACE_RUN_DEC_NEXT) && v2_set_compact(d, true);
	int rc = pthread_create(&p->th, NULL, produce, &p->p);
	if (rc != 0) {
		pull_release(p);
		return -rc;
	}
	*out = p;
	return 0;
}

int gt_pull_next(struct gt_pull *p, const struct rtd_gotrace_event **ev)
{
	struct run *r = &p->r;
	for (;;) {
		if (p->end)
			return p->dec_rc;
		if (!p->c) {
			unsigned spin = 0;
			while (atomic_load(&r->made) <= p->k && spin < RUN_SPIN)
				spin++;
			if (atomic_load(&r->made) <= p->k) {
				pthread_mutex_lock(&r->mu);
				atomic_store(&r->cons_waiting, true);
				while (atomic_load(&r->made) <= p->k)
					pthread_cond_wait(&r->cv, &r->mu);
				atomic_store(&r->cons_waiting, false);
				pthread_mutex_unlock(&r->mu);
			}
			p->c = &r->ring[p->k % RUN_CHUNKS];
			p->at = 0;
		}
		struct chunk *c = p->c;
		if (p->at < c->len) {
			const struct rec *x = (const struct rec *)(c->b + p->at);
			if (x->flags & R_OUT) {
				*ev = get_out(r->d, x, p->clast);
				p->whole = false;
			} else {
				*ev = get_event(x, p->clast, &p->whole);
			}
			p->at += x->size;
			return 1;
		}
		/* the chunk is done with (its last event too: this is the
		 * next pull) */
		if (c->end) {
			p->end = true;
			p->dec_rc = c->rc;
		}
		uint64_t u = ++p->k;
		p->c = NULL;
		atomic_store(&r->used, u);
		if (atomic_load(&r->prod_waiting) &&
		    (u >= atomic_load(&r->made) || atomic_load(&r->made) - u <= RUN_CHUNKS - RUN_BATCH))
			wake(r);
	}
}

void gt_pull_stop(struct gt_pull *p)
{
	if (!p)
		return;
	if (!p->end) {
		/* stopped early: the decoding thread stops at its next look */
		atomic_store(&p->r.stop, true);
		atomic_store(&p->r.used, p->k + 1);
		wake(&p->r);
	}
	pthread_join(p->th, NULL);
	pull_release(p);
}

int rtd_gotrace_run(rtd_gotrace_dec *d, rtd_gotrace_next_fn next, void *ctx,
		    rtd_gotrace_take_fn take, void *take_ctx, unsigned flags, int *dec_rc)
{
	*dec_rc = 0;
	struct gt_pull *p = NULL;
	if (gt_pull_start(&p, d, next, ctx, flags) < 0 || !p)
		return run_serial(next, ctx, take, take_ctx, dec_rc);
	const struct rtd_gotrace_event *ev;
	int n, rc = 0;
	while ((n = gt_pull_next(p, &ev)) == 1)
		if ((rc = take(take_ctx, ev)) < 0)
			break;
	if (rc == 0)
		*dec_rc = n;
	gt_pull_stop(p);
	return rc;
}

/* rtd_goan_run()'s flags are rtd_gotrace_run()'s */
_Static_assert(RTD_GOAN_RUN_THREAD == RTD_GOTRACE_RUN_THREAD &&
		       RTD_GOAN_RUN_ANY_CPUS == RTD_GOTRACE_RUN_ANY_CPUS &&
		       RTD_GOAN_RUN_SMALL_CHUNKS == RTD_GOTRACE_RUN_SMALL_CHUNKS &&
		       RTD_GOAN_RUN_DEC_NEXT == RTD_GOTRACE_RUN_DEC_NEXT,
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
