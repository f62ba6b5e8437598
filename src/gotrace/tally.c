/* SPDX-License-Identifier: MIT */
/*
 * tally.c - a raw decode that only counts (rtd_gotrace_dec_tally(), what
 * 'rtdiag gotrace stats' prints): events and bytes of each type, the time
 * span, distinct goroutines and Ps, generations.
 *
 * The common event (old format: v1_fast_event's shape, not a table, batch
 * or GCSTWStart; new format: a timed event of no stack or data inside its
 * batch) is counted straight off the wire: no event is built, no string
 * looked up. Every other event, and any byte the lean path is not sure
 * of, goes through rtd_gotrace_dec_next() and is counted from the event it
 * gives, so the tables, errors and their offsets are the general path's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/v2state.h"

/*
 * Distinct ids, counted in bounded memory: the runtime numbers goroutines
 * from 1 up, so ids below IDS_DENSE go in a bitmap grown to the largest
 * seen (16 MB at most, 128 KB for a million goroutines; a hash set of them
 * took 31 MB), the rare larger ones in a hash set of at most IDS_SPARSE,
 * past which the count is a lower bound.
 */
#define IDS_DENSE (1u << 27)
#define IDS_SPARSE (1u << 20)
struct idcount {
	uint8_t *bits;
	size_t nbytes;
	uint64_t *k;
	size_t cap, nsparse;
	uint64_t n;
	bool over; /* the count is at least n */
};

/* Which arguments of a new-format type name a goroutine ("g", "new_g") or
 * a proc ("p", but a CPU sample's), found when the type is first met (or
 * its names change), not compared at every event. */
struct id_args {
	const char *const *argnames;
	unsigned nargs;
	uint64_t g, p; /* bit i: argument i */
};

/* The new format's lean path, per type of the trace's version. */
struct v2_lean {
	bool ok;
	uint8_t nargs;
	uint8_t g, p; /* bit i: argument i names a goroutine, a proc */
};

struct rtd_gotrace_tally {
	uint64_t events;
	uint64_t count[256], bytes[256], bytes_out[256];
	int64_t tmin, tmax;
	uint64_t generations;
	int prev_type;
	uint64_t prev_off;
	struct idcount gs, ps;
	struct id_args args[256];
	int lean_ver; /* the version v2_lean[] is for (0: not made) */
	struct v2_lean v2_lean[256];
};

static void ids_add_sparse(struct idcount *s, uint64_t v)
{
	if ((s->nsparse + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		uint64_t *k = s->nsparse >= IDS_SPARSE ? NULL : malloc(nc * sizeof(*k));
		if (!k) {
			s->over = true;
			return;
		}
		memset(k, 0xff, nc * sizeof(*k)); /* UINT64_MAX: empty */
		for (size_t i = 0; i < s->cap; i++) {
			if (s->k[i] == UINT64_MAX)
				continue;
			size_t j = (size_t)(s->k[i] * 0x9e3779b97f4a7c15ULL) & (nc - 1);
			while (k[j] != UINT64_MAX)
				j = (j + 1) & (nc - 1);
			k[j] = s->k[i];
		}
		free(s->k);
		s->k = k;
		s->cap = nc;
	}
	size_t j = (size_t)(v * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	while (s->k[j] != UINT64_MAX) {
		if (s->k[j] == v)
			return;
		j = (j + 1) & (s->cap - 1);
	}
	s->k[j] = v;
	s->nsparse++;
	s->n++;
}

static void __attribute__((noinline)) ids_grow(struct idcount *s, uint64_t v)
{
	size_t byte = (size_t)(v >> 3);
	size_t nb = s->nbytes ? s->nbytes : 4096;
	while (nb <= byte)
		nb *= 2;
	uint8_t *b = realloc(s->bits, nb);
	if (!b) {
		s->over = true;
		return;
	}
	memset(b + s->nbytes, 0, nb - s->nbytes);
	s->bits = b;
	s->nbytes = nb;
}

static inline void ids_add(struct idcount *s, uint64_t v)
{
	if (v >= IDS_DENSE) {
		if (v != UINT64_MAX)
			ids_add_sparse(s, v);
		return;
	}
	size_t byte = (size_t)(v >> 3);
	if (byte >= s->nbytes) {
		ids_grow(s, v);
		if (byte >= s->nbytes)
			return;
	}
	uint8_t bit = (uint8_t)(1u << (v & 7));
	/* no branch: most ids are seen again and again */
	s->n += !(s->bits[byte] & bit);
	s->bits[byte] |= bit;
}

static void ids_free(struct idcount *s)
{
	free(s->bits);
	free(s->k);
}

rtd_gotrace_tally *rtd_gotrace_tally_new(void)
{
	rtd_gotrace_tally *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tmin = INT64_MAX;
	t->tmax = INT64_MIN;
	t->prev_type = -1;
	return t;
}

void rtd_gotrace_tally_free(rtd_gotrace_tally *t)
{
	if (!t)
		return;
	ids_free(&t->gs);
	ids_free(&t->ps);
	free(t);
}

void rtd_gotrace_tally_counts(rtd_gotrace_tally *t, uint64_t size,
			      struct rtd_gotrace_counts *out)
{
	memcpy(t->bytes_out, t->bytes, sizeof(t->bytes));
	if (t->prev_type >= 0)
		t->bytes_out[t->prev_type] += size - t->prev_off;
	*out = (struct rtd_gotrace_counts){
		.events = t->events,
		.count = t->count,
		.bytes = t->bytes_out,
		.tmin = t->tmin,
		.tmax = t->tmax,
		.generations = t->generations,
		.goroutines = t->gs.n,
		.procs = t->ps.n,
		.goroutines_over = t->gs.over,
		.procs_over = t->ps.over,
	};
}

/* Tables, batches, frequency, sync: no time span of their own. */
static bool meta_event(const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (ev->gen) /* new format */
		return (t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
		       t >= RTD_GO2_EV_EXPERIMENTAL_BATCH;
	return v1_meta_type(t);
}

static void names_mask(const char *const *names, unsigned nargs, unsigned type,
		       uint64_t *g, uint64_t *p)
{
	*g = *p = 0;
	for (unsigned i = 0; i < nargs && i < 64; i++) {
		const char *a = names[i];
		if (strcmp(a, "g") == 0 || strcmp(a, "new_g") == 0)
			*g |= 1ull << i;
		if (strcmp(a, "p") == 0 && type != RTD_GO2_EV_CPU_SAMPLE)
			*p |= 1ull << i;
	}
}

static const struct id_args *id_args(struct id_args *cache,
				     const struct rtd_gotrace_event *ev)
{
	struct id_args *c = &cache[ev->type & 255];
	if (c->argnames == ev->argnames && c->nargs == ev->nargs)
		return c;
	c->argnames = ev->argnames;
	c->nargs = ev->nargs;
	names_mask(ev->argnames, ev->nargs, ev->type, &c->g, &c->p);
	return c;
}

static inline void span(rtd_gotrace_tally *t, int64_t ticks)
{
	if (ticks < t->tmin)
		t->tmin = ticks;
	if (ticks > t->tmax)
		t->tmax = ticks;
}

static inline void next_off(rtd_gotrace_tally *t, unsigned type, uint64_t off)
{
	if (t->prev_type >= 0)
		t->bytes[t->prev_type] += off - t->prev_off;
	t->prev_type = (int)type;
	t->prev_off = off;
	t->count[type]++;
	t->events++;
}

/* An event of the general path. */
static void count_event(rtd_gotrace_tally *t, const struct rtd_gotrace_event *ev)
{
	next_off(t, ev->type & 255, ev->off);
	if (!meta_event(ev) &&
	    ev->type != (ev->gen ? RTD_GO2_EV_CPU_SAMPLE : RTD_GO_EV_CPU_SAMPLE))
		span(t, ev->ticks);
	if (ev->gen) {
		/* new format: goroutines and procs are named in arguments */
		const struct id_args *ia = id_args(t->args, ev);
		for (unsigned i = 0; i < ev->nargs; i++) {
			if (ia->g >> i & 1)
				ids_add(&t->gs, ev->args[i]);
			if (ia->p >> i & 1)
				ids_add(&t->ps, ev->args[i]);
		}
		if (ev->type == RTD_GO2_EV_EVENT_BATCH && ev->args[0] > t->generations)
			t->generations = ev->args[0];
	} else {
		if (ev->g)
			ids_add(&t->gs, ev->g);
		if (ev->type == RTD_GO_EV_GO_CREATE)
			ids_add(&t->gs, ev->args[0]);
		if (ev->type == RTD_GO_EV_BATCH && ev->p >= 0)
			ids_add(&t->ps, (uint64_t)ev->p);
	}
}

/* The old format's lean path, from d->pos on; stops where the general
 * path is needed. */
static void lean_v1(rtd_gotrace_dec *d, rtd_gotrace_tally *t)
{
	const uint8_t *data = d->in.data;
	size_t pos = d->pos, len = d->in.len;
	struct v1_pstate ps = d->ps;
	int ver = d->ver;
	unsigned argoff = ver < 1007 ? 2 : 1;
	while (len - pos >= 40) {
		unsigned typ, narg;
		uint64_t a[8];
		size_t n = v1_fast_event(d, data + pos, len - pos, &typ, &narg, a, 0);
		/* tables, batches and the STW kinds Go 1.5-1.20 check: the
		 * general path */
		if (!n || (v1_kind[typ] & V1K_META) || typ == RTD_GO_EV_GC_STW_START)
			break;
		next_off(t, typ, d->base + pos);
		pos += n;
		int64_t ts, seq;
		uint64_t g;
		v1_pstep(ver, &ps, typ, a, &ts, &seq, &g);
		if (typ != RTD_GO_EV_CPU_SAMPLE)
			span(t, ps.ts);
		if (g)
			ids_add(&t->gs, g);
		if (typ == RTD_GO_EV_GO_CREATE) {
			/* Go's Args[0]: the first after time (and sequence),
			 * unless that is the stack (v1_fill) */
			bool stack_only = argoff == narg - 1 && v1_descs[typ].stack;
			ids_add(&t->gs, argoff < narg && !stack_only ? a[argoff] : 0);
		}
	}
	d->pos = pos;
	d->ps = ps;
}

static void lean_v2_init(rtd_gotrace_tally *t, int ver)
{
	for (unsigned b = 0; b < 256; b++) {
		const struct v2_spec *sp = v2_spec_for(b, ver);
		struct v2_lean *l = &t->v2_lean[b];
		*l = (struct v2_lean){0};
		/* timed, no stack table or data, not meta (meta_event) */
		if (!sp || !(sp->flags & V2_TIMED) || (sp->flags & (V2_STACK | V2_DATA)) ||
		    b <= RTD_GO2_EV_FREQUENCY || b >= RTD_GO2_EV_EXPERIMENTAL_BATCH ||
		    sp->nargs > RTD_GOTRACE_MAX_ARGS || sp->nargs == 0)
			continue;
		uint64_t g, p;
		names_mask(sp->args, sp->nargs, b, &g, &p);
		l->ok = true;
		l->nargs = (uint8_t)sp->nargs;
		l->g = (uint8_t)g;
		l->p = (uint8_t)p;
	}
	t->lean_ver = ver;
}

/* The new format's lean path: events of a batch of a generation (ev->gen
 * not 0), each inside its batch, varints under 10 bytes. */
static void lean_v2(rtd_gotrace_dec *d, rtd_gotrace_tally *t)
{
	struct v2_state *st = d->v2;
	if (!st->raw_gen)
		return;
	if (t->lean_ver != d->ver)
		lean_v2_init(t, d->ver);
	const uint8_t *data = d->in.data;
	size_t pos = d->pos, len = d->in.len;
	uint64_t base = d->base, batch_end = st->batch_end;
	int64_t ticks = st->ticks;
	/* room for 8 varints of 9 bytes and the type */
	while (len - pos >= 80) {
		const uint8_t *p = data + pos;
		const struct v2_lean *l = &t->v2_lean[*p];
		if (!l->ok)
			break;
		const uint8_t *q = p + 1;
		uint64_t a[RTD_GOTRACE_MAX_ARGS];
		unsigned i = 0;
		for (; i < l->nargs; i++) {
			if (*q < 0x80) /* most: one byte */
				a[i] = *q++;
			else if (!v1_varint9(&q, &a[i]))
				break;
		}
		uint64_t off = base + pos, end = off + (size_t)(q - p);
		if (i < l->nargs || off >= batch_end || end > batch_end)
			break;
		next_off(t, *p, off);
		pos += (size_t)(q - p);
		ticks = wrap_add(ticks, (int64_t)a[0]);
		span(t, ticks);
		for (unsigned k = 1; k < l->nargs; k++) {
			if (l->g >> k & 1)
				ids_add(&t->gs, a[k]);
			if (l->p >> k & 1)
				ids_add(&t->ps, a[k]);
		}
	}
	d->pos = pos;
	st->ticks = ticks;
}

int rtd_gotrace_dec_tally(rtd_gotrace_dec *d, rtd_gotrace_tally *t)
{
	if (d->mode != RTD_GOTRACE_RAW)
		return -EINVAL;
	struct rtd_gotrace_event ev;
	for (;;) {
		if (d->header && !d->err && !d->resolve) {
			if (d->v2)
				lean_v2(d, t);
			else
				lean_v1(d, t);
		}
		int rc = rtd_gotrace_dec_next(d, &ev);
		if (rc <= 0)
			return rc;
		count_event(t, &ev);
	}
}
