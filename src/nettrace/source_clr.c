/* SPDX-License-Identifier: MIT */
/*
 * source_clr.c - the CLR's paired events as slices (rtdiag/nettrace_source.h,
 * rtd_nettrace_source_clr()): a source over a nettrace source's records
 * that passes every record on and adds, for the runtime's start/stop
 * pairs, slices on the tracks where they happen:
 *
 *   GC/Start .. GC/Stop                  "GC" on the process's lane "GC"
 *   GC/SuspendEEStart .. GC/RestartEEStop "EE suspended" on the lane
 *                                        "EE suspended" (the managed
 *                                        threads are stopped inside it)
 *   Contention/Start .. Contention/Stop  "contention" on the waiting thread
 *
 * and GC/HeapStats's generation sizes as counters ("gen0 size" .. "gen2
 * size", "LOH size", "POH size", bytes). A stop with nothing open (the
 * session began inside a GC or a wait) is passed on as its instant only.
 * The lanes are named by THREAD records on their first use.
 *
 * Any other provider's (not the runtime's, whose Rundown has an unpaired
 * Runtime/Start) Start/Stop pairs (an EventSource's events of
 * opcode Start and Stop of one task, which the nettrace source names
 * "Provider/Task/Start" and "Provider/Task/Stop", as TraceEvent does;
 * System.Diagnostics.Activity's through DiagnosticSource's
 * "Activity1/Start"...) become a slice "Provider/Task" of category
 * Provider:
 * - written in an activity (the events carry an ActivityID: the runtime
 *   gives every Start one when TplEventSource's TasksFlowActivityIds
 *   keyword is on, and its Stop the same, on whatever thread the async
 *   code ends), a Start is matched with the Stop of its activity, as
 *   TraceEvent's StartStopActivityComputer does, and the slice given whole
 *   (RTD_REC_SLICE) at the Stop: on the thread's track when it began and
 *   ended there innermost, else on a lane of the process's track,
 *   "Provider/Task (async N)", the first of that name free since its
 *   begin (concurrent activities side by side);
 * - without one, matched per thread: the slice begins at the Start; a
 *   Stop closes the thread's innermost open pair when it is of its task;
 *   a Stop of another task than the innermost stays an instant only, so
 *   slices always nest. A slice still open at the stream's end is left
 *   open.
 * An activity still open at the stream's end is its Start instant only.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/nettrace_source.h"

#define CLR_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define CLR_MAX_OPEN (1u << 20) /* threads with a contention open */
#define ES_MAX_THREADS (1u << 20) /* threads with an EventSource pair open */
#define ES_MAX_DEPTH 64 /* pairs open on one thread */
#define ES_MAX_ACTS (1u << 16) /* activities open at once */
#define ES_MAX_ASYNC 256 /* async lanes of a process */
#define ES_LANE_ASYNC 16 /* the first async lane's number */

enum { LANE_NONE = 0, LANE_GC = 1, LANE_SUSPENDED = 2 };

static const struct pair {
	const char *event; /* after "Provider/" */
	unsigned kind;     /* RTD_REC_SLICE_BEGIN or _END */
	unsigned lane;     /* LANE_*, LANE_NONE: the event's thread */
	const char *name;  /* a begin's slice name */
	const char *category;
} pairs[] = {
	{"GC/Start", RTD_REC_SLICE_BEGIN, LANE_GC, "GC", "gc"},
	{"GC/Stop", RTD_REC_SLICE_END, LANE_GC, NULL, NULL},
	{"GC/SuspendEEStart", RTD_REC_SLICE_BEGIN, LANE_SUSPENDED, "EE suspended", "gc"},
	{"GC/RestartEEStop", RTD_REC_SLICE_END, LANE_SUSPENDED, NULL, NULL},
	{"Contention/Start", RTD_REC_SLICE_BEGIN, LANE_NONE, "contention", "contention"},
	{"Contention/Stop", RTD_REC_SLICE_END, LANE_NONE, NULL, NULL},
};

static const char *const lane_names[] = {NULL, "GC", "EE suspended"};

/* GC/HeapStats fields shown as counters */
static const struct {
	const char *field, *counter;
} heap[] = {
	{"GenerationSize0", "gen0 size"}, {"GenerationSize1", "gen1 size"},
	{"GenerationSize2", "gen2 size"}, {"GenerationSize3", "LOH size"},
	{"GenerationSize4", "POH size"},
};

#define CLR_QUEUE 8

struct clr {
	rtd_source *in;
	struct rtd_record q[CLR_QUEUE];
	size_t nq, qi;
	rtd_map open;      /* tid << 2 | lane -> open slices (depth) */
	bool named[3];     /* lane names sent */
	rtd_map es;        /* tid -> struct es_open */
	rtd_map acts;      /* act_key(ActivityID) -> struct act chain */
	size_t nacts;
	struct act *retired; /* ended: freed at the next pull */
	struct {
		const char *name; /* its activities' "Provider/Task" */
		int64_t end;      /* its last slice's end */
	} async[ES_MAX_ASYNC];
	size_t nasync;
	rtd_intern *intern; /* the slices' names */
};

static struct rtd_record *queue(struct clr *c, const struct rtd_record *like, unsigned kind)
{
	struct rtd_record *q = &c->q[c->nq++];
	memset(q, 0, sizeof(*q));
	q->kind = kind;
	q->ts = like->ts;
	q->mono = like->mono;
	q->pid = like->pid;
	return q;
}

static int pair_of(struct clr *c, const struct rtd_record *r, const struct pair *p)
{
	uint64_t tid = p->lane ? 0 : r->tid;
	uint64_t key = tid << 2 | p->lane;
	void *v = NULL;
	uintptr_t depth = rtd_map_get(&c->open, key, &v) ? (uintptr_t)v : 0;
	if (p->kind == RTD_REC_SLICE_END && !depth)
		return 0; /* began before the session */
	if (p->lane && !c->named[p->lane]) {
		struct rtd_record *t = queue(c, r, RTD_REC_THREAD);
		t->lane = p->lane;
		t->name = lane_names[p->lane];
		c->named[p->lane] = true;
	}
	depth += p->kind == RTD_REC_SLICE_BEGIN ? 1 : (uintptr_t)-1;
	int rc = depth ? rtd_map_put(&c->open, key, (void *)depth, NULL)
		       : (rtd_map_del(&c->open, key), 0);
	if (rc < 0)
		return rc;
	struct rtd_record *s = queue(c, r, p->kind);
	s->tid = tid;
	s->lane = p->lane;
	if (p->kind == RTD_REC_SLICE_BEGIN) {
		s->name = p->name;
		s->category = p->category;
		s->fields = r->fields;
		s->nfields = r->nfields;
	}
	return 0;
}

/* An EventSource Start written in an activity (a non-zero ActivityID):
 * kept until the Stop of the same activity, which may come on another
 * thread; its fields copied (a record's are borrowed until the next pull). */
struct act {
	uint8_t id[16];
	const char *name; /* interned "Provider/Task" */
	uint64_t tid;
	int64_t mono;
	size_t nfields;
	struct rtd_field *fields; /* and their strings, in the same block */
	struct act *next;         /* another activity whose id hashes alike */
};

/* A thread's open EventSource pairs, innermost last: a pair without an
 * activity id (@a NULL) was begun as a slice at its Start. */
struct es_open {
	size_t n;
	const char *name[ES_MAX_DEPTH]; /* interned "Provider/Task" */
	struct act *a[ES_MAX_DEPTH];
};

/* "Provider/Task/Start" or ".../Stop": the kind and the slice's name. */
static unsigned es_kind(const char *name, size_t *len)
{
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, "/Start")) {
		*len = n - 6;
		return RTD_REC_SLICE_BEGIN;
	}
	if (n > 5 && !strcmp(name + n - 5, "/Stop")) {
		*len = n - 5;
		return RTD_REC_SLICE_END;
	}
	return 0;
}

static bool has_activity(const struct rtd_record *r)
{
	static const uint8_t zero[16];
	return memcmp(r->activity, zero, sizeof(zero)) != 0;
}

static uint64_t act_key(const uint8_t id[16])
{
	uint64_t a, b;
	memcpy(&a, id, 8);
	memcpy(&b, id + 8, 8);
	return a ^ (b * 0x9e3779b97f4a7c15ull);
}

/* The open activity @id of slice @name, unlinked from the map; NULL when
 * none (its Start came before the session, or was another task's). */
static struct act *act_take(struct clr *c, const uint8_t id[16], const char *name)
{
	uint64_t key = act_key(id);
	void *v = NULL;
	if (!rtd_map_get(&c->acts, key, &v))
		return NULL;
	struct act *head = v, **pp = &head;
	while (*pp && (memcmp((*pp)->id, id, 16) || (*pp)->name != name))
		pp = &(*pp)->next;
	struct act *a = *pp;
	if (!a)
		return NULL;
	*pp = a->next;
	if (head)
		rtd_map_put(&c->acts, key, head, NULL); /* replaces: cannot fail */
	else
		rtd_map_del(&c->acts, key);
	c->nacts--;
	return a;
}

static struct act *act_new(const struct rtd_record *r, const char *name)
{
	size_t bytes = sizeof(struct act) + r->nfields * sizeof(struct rtd_field);
	for (size_t i = 0; i < r->nfields; i++) {
		bytes += (r->fields[i].name ? strlen(r->fields[i].name) + 1 : 0);
		if (r->fields[i].type == RTD_FIELD_STR && r->fields[i].s)
			bytes += strlen(r->fields[i].s) + 1;
	}
	struct act *a = malloc(bytes);
	if (!a)
		return NULL;
	memset(a, 0, sizeof(*a));
	memcpy(a->id, r->activity, 16);
	a->name = name;
	a->tid = r->tid;
	a->mono = r->mono;
	a->nfields = r->nfields;
	a->fields = (struct rtd_field *)(a + 1);
	char *p = (char *)(a->fields + r->nfields);
	for (size_t i = 0; i < r->nfields; i++) {
		struct rtd_field *f = &a->fields[i];
		*f = r->fields[i];
		if (f->name) {
			size_t n = strlen(f->name) + 1;
			f->name = memcpy(p, f->name, n);
			p += n;
		}
		if (f->type == RTD_FIELD_STR && f->s) {
			size_t n = strlen(f->s) + 1;
			f->s = memcpy(p, f->s, n);
			p += n;
		}
	}
	return a;
}

/* The lane of the process's track where an activity that ended on
 * another thread than it began (async code) is drawn: of the lanes of
 * its name, the first whose last slice ended by @begin (slices come at
 * their ends, so a lane's last is its latest); named on first use. */
static uint64_t async_lane(struct clr *c, const struct rtd_record *r, const char *name,
			   int64_t begin)
{
	size_t k, nth = 0; /* the lanes of @name still busy at @begin */
	for (k = 0; k < c->nasync; k++) {
		if (c->async[k].name != name)
			continue;
		if (c->async[k].end <= begin)
			break; /* free again: drawn on */
		nth++;
	}
	if (k == c->nasync) {
		if (c->nasync == ES_MAX_ASYNC)
			return 0;
		c->async[k].name = name;
		struct rtd_record *t = queue(c, r, RTD_REC_THREAD);
		t->lane = ES_LANE_ASYNC + k;
		char label[512];
		snprintf(label, sizeof(label), "%s (async %zu)", name, nth + 1);
		if (rtd_intern_string(c->intern, label, strlen(label), &t->name) < 0)
			t->name = name;
		c->nasync++;
	}
	c->async[k].end = r->mono;
	return ES_LANE_ASYNC + k;
}

/* The Stop @r of activity @a (taken from the map and from its thread's
 * pairs): a whole slice on its thread when it began and ended there with
 * nothing of that thread's still open inside it, else on an async lane. */
static void act_end(struct clr *c, const struct rtd_record *r, struct act *a, bool inner)
{
	uint64_t tid = a->tid, lane = 0;
	if (!inner || a->tid != r->tid) {
		tid = 0;
		lane = async_lane(c, r, a->name, a->mono);
	}
	if (tid || lane) {
		struct rtd_record *s = queue(c, r, RTD_REC_SLICE);
		s->tid = tid;
		s->lane = lane;
		s->name = a->name;
		s->category = r->category;
		s->fields = a->fields;
		s->nfields = a->nfields;
		s->dur = r->mono > a->mono ? r->mono - a->mono : 0;
	}
	a->next = c->retired; /* its fields are the slice's until the next pull */
	c->retired = a;
}

static int es_pair(struct clr *c, const struct rtd_record *r)
{
	size_t len;
	unsigned kind = es_kind(r->name, &len);
	if (!kind || !memchr(r->name, '/', len))
		return 0; /* not Provider/Task/Start|Stop */
	const char *name;
	int rc = rtd_intern_string(c->intern, r->name, len, &name);
	if (rc < 0)
		return rc;
	void *v = NULL;
	struct es_open *o = rtd_map_get(&c->es, r->tid, &v) ? v : NULL;
	if (kind == RTD_REC_SLICE_END) {
		struct act *a = has_activity(r) ? act_take(c, r->activity, name) : NULL;
		if (a) {
			/* out of its thread's open pairs, wherever it is */
			void *w = NULL;
			struct es_open *ao = rtd_map_get(&c->es, a->tid, &w) ? w : NULL;
			bool inner = false;
			for (size_t i = ao ? ao->n : 0; i-- > 0;)
				if (ao->a[i] == a) {
					inner = i + 1 == ao->n;
					memmove(&ao->name[i], &ao->name[i + 1], (ao->n - i - 1) * sizeof(ao->name[0]));
					memmove(&ao->a[i], &ao->a[i + 1], (ao->n - i - 1) * sizeof(ao->a[0]));
					ao->n--;
					break;
				}
			act_end(c, r, a, inner);
			return 0;
		}
		if (!o || !o->n || o->name[o->n - 1] != name || o->a[o->n - 1])
			return 0; /* nothing of its task innermost: an instant only */
		o->n--;
		struct rtd_record *s = queue(c, r, RTD_REC_SLICE_END);
		s->tid = r->tid;
		return 0;
	}
	if (!o) {
		if (!(o = calloc(1, sizeof(*o))))
			return -ENOMEM;
		if ((rc = rtd_map_put(&c->es, r->tid, o, NULL)) < 0) {
			free(o);
			return rc;
		}
	}
	if (o->n == ES_MAX_DEPTH)
		return 0; /* deeper than any real nesting: an instant only */
	if (has_activity(r)) {
		/* its slice is drawn at its Stop, where it ends */
		if (c->nacts == ES_MAX_ACTS)
			return 0; /* too many open: an instant only */
		struct act *a = act_new(r, name);
		if (!a)
			return -ENOMEM;
		uint64_t key = act_key(a->id);
		void *head = NULL;
		rtd_map_get(&c->acts, key, &head);
		a->next = head;
		if ((rc = rtd_map_put(&c->acts, key, a, NULL)) < 0) {
			free(a);
			return rc;
		}
		c->nacts++;
		o->a[o->n] = a;
		o->name[o->n++] = name;
		return 0;
	}
	o->a[o->n] = NULL;
	o->name[o->n++] = name;
	struct rtd_record *s = queue(c, r, RTD_REC_SLICE_BEGIN);
	s->tid = r->tid;
	s->name = name;
	s->category = r->category;
	s->fields = r->fields;
	s->nfields = r->nfields;
	return 0;
}

static void heap_stats(struct clr *c, const struct rtd_record *r)
{
	for (size_t i = 0; i < r->nfields; i++)
		for (size_t k = 0; k < sizeof(heap) / sizeof(heap[0]); k++) {
			const struct rtd_field *f = &r->fields[i];
			if (!f->name || strcmp(f->name, heap[k].field) || c->nq == CLR_QUEUE)
				continue;
			struct rtd_record *q = queue(c, r, RTD_REC_COUNTER);
			q->name = heap[k].counter;
			q->unit = "bytes";
			q->value = f->type == RTD_FIELD_I64 ? (double)f->i
				   : f->type == RTD_FIELD_F64 ? f->f : (double)f->u;
		}
}

static void acts_free(struct act *a)
{
	while (a) {
		struct act *next = a->next;
		free(a);
		a = next;
	}
}

static int clr_next(void *impl, struct rtd_record *rec)
{
	struct clr *c = impl;
	if (c->qi == c->nq) {
		c->qi = c->nq = 0;
		acts_free(c->retired);
		c->retired = NULL;
		const struct rtd_record *r;
		int rc = rtd_source_next(c->in, &r);
		if (rc < 0)
			return rtd_source_error(rec, r->code, r->offset, r->message);
		if (rc == 0)
			return 0;
		c->q[c->nq++] = *r; /* the record itself, always */
		size_t lp = strlen(CLR_PROVIDER);
		if (r->kind == RTD_REC_INSTANT && r->name && !strncmp(r->name, CLR_PROVIDER, lp) &&
		    r->name[lp] == '/') {
			const char *ev = r->name + lp + 1;
			for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
				if (!strcmp(ev, pairs[i].event) && (rc = pair_of(c, r, &pairs[i])) < 0)
					return rc;
			if (!strcmp(ev, "GC/HeapStats"))
				heap_stats(c, r);
		} else if (r->kind == RTD_REC_INSTANT && r->name &&
			   strncmp(r->name, CLR_PROVIDER, lp) && /* not Rundown's Runtime/Start */
			   (rc = es_pair(c, r)) < 0) {
			return rc;
		}
	}
	*rec = c->q[c->qi++];
	rec->source = 0;
	return 1;
}

static int clr_clock(void *impl, struct rtd_clock *out)
{
	return rtd_source_clock(((struct clr *)impl)->in, out);
}

static void clr_free(void *impl)
{
	struct clr *c = impl;
	rtd_map_free(&c->open);
	rtd_map_free_vals(&c->es);
	size_t it = 0;
	uint64_t key;
	void *v;
	while (rtd_map_next(&c->acts, &it, &key, &v))
		acts_free(v);
	rtd_map_free(&c->acts);
	acts_free(c->retired);
	rtd_intern_free(c->intern);
	free(c);
}

static const struct rtd_source_ops clr_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "nettrace",
	.next = clr_next,
	.clock = clr_clock,
	.free = clr_free,
};

rtd_source *rtd_nettrace_source_clr(rtd_source *in, int *err)
{
	struct clr *c = in ? calloc(1, sizeof(*c)) : NULL;
	rtd_source *s = NULL;
	if (c) {
		c->in = in;
		rtd_map_init(&c->open, CLR_MAX_OPEN);
		rtd_map_init(&c->es, ES_MAX_THREADS);
		rtd_map_init(&c->acts, ES_MAX_ACTS);
		c->intern = rtd_intern_new();
		s = c->intern ? rtd_source_new(&clr_ops, c) : NULL;
		if (!s)
			clr_free(c);
	}
	if (!s && err)
		*err = in ? -ENOMEM : -RTD_E_INVAL;
	return s;
}
