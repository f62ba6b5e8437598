/* SPDX-License-Identifier: MIT */
/*
 * records.c - the timeline as a consumer of records (rtdiag/source.h,
 * rtdiag/timeline_records.h): tracks keyed by the records' OS ids, made
 * when their first event comes and renamed when a better name comes.
 * Knows no source: only records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/profile.h"
#include "rtdiag/timeline_records.h"

#define TR_MAX_TRACKS RTD_TIMELINE_MAX_TRACKS

/* A track's key: the OS ids and the lane (padding zeroed: it is hashed). */
struct tkey {
	uint64_t pid;
	uint64_t tid;
	uint64_t lane;
};

/* A track, known by name before it has an event (id 0 until then). */
struct trk {
	uint64_t id;
	char *name;
	bool runtime_named;
};

struct rtd_timeline_records {
	rtd_timeline *tl;
	struct rtd_timeline_records_opts o;
	rtd_strmap tracks;   /* struct tkey -> struct trk * */
	rtd_strmap counters; /* pid, name, unit -> track id */
	struct rtd_frame *frames;
	size_t frames_cap;
	struct rtd_tl_arg args[RTD_TIMELINE_MAX_ARGS];
	struct rtd_timeline_records_stats st;
};

rtd_timeline_records *rtd_timeline_records_new(rtd_timeline *tl,
					       const struct rtd_timeline_records_opts *opts,
					       int *err)
{
	rtd_timeline_records *c = calloc(1, sizeof(*c));
	int rc = c ? 0 : -ENOMEM;
	if (c && (!tl || (rc = rtd_opts_copy(&c->o, sizeof(c->o), opts,
					      RTD_OPTS_END(rtd_timeline_records_opts,
							   runtime_sources))) < 0))
		rc = rc ? rc : -RTD_E_INVAL;
	if (rc < 0) {
		free(c);
		if (err)
			*err = rc;
		return NULL;
	}
	c->tl = tl;
	rtd_strmap_init(&c->tracks, TR_MAX_TRACKS);
	rtd_strmap_init(&c->counters, RTD_TIMELINE_RECORDS_MAX_COUNTERS);
	return c;
}

void rtd_timeline_records_free(rtd_timeline_records *c)
{
	if (!c)
		return;
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(&c->tracks, &b, e))) {
		struct trk *t = e->val;
		free(t->name);
		free(t);
	}
	rtd_strmap_free(&c->tracks);
	rtd_strmap_free(&c->counters);
	free(c->frames);
	free(c);
}

void rtd_timeline_records_stats(const rtd_timeline_records *c,
				struct rtd_timeline_records_stats *out)
{
	*out = c->st;
}

static struct trk *entry(rtd_timeline_records *c, uint64_t pid, uint64_t tid, uint64_t lane,
			 int *err)
{
	struct tkey k = {.pid = pid, .tid = tid, .lane = lane};
	void *v;
	if (rtd_strmap_get(&c->tracks, &k, sizeof(k), &v))
		return v;
	struct trk *t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	int rc = rtd_strmap_put(&c->tracks, &k, sizeof(k), t);
	if (rc < 0) {
		free(t);
		*err = rc;
		return NULL;
	}
	return t;
}

/* The track of (pid, tid, lane), added now if it has none yet. */
static int track(rtd_timeline_records *c, uint64_t pid, uint64_t tid, uint64_t lane,
		 uint64_t *out)
{
	int rc = 0;
	struct trk *t = entry(c, pid, tid, lane, &rc);
	if (!t)
		return rc;
	if (t->id) {
		*out = t->id;
		return 0;
	}
	uint64_t parent = 0;
	if ((lane || tid) && (rc = track(c, pid, lane ? tid : 0, 0, &parent)) < 0)
		return rc;
	char fallback[48];
	struct rtd_track d = {.sz = sizeof(d), .pid = (int64_t)pid, .tid = (int64_t)tid,
			      .parent = parent, .name = t->name};
	if (lane) {
		d.kind = RTD_TRACK_NAMED;
		snprintf(fallback, sizeof(fallback), "lane %" PRIu64, lane);
	} else if (tid) {
		d.kind = RTD_TRACK_THREAD;
		snprintf(fallback, sizeof(fallback), "thread %" PRIu64, tid);
	} else {
		d.kind = RTD_TRACK_PROCESS;
		snprintf(fallback, sizeof(fallback), "process %" PRIu64, pid);
	}
	if (!d.name)
		d.name = fallback;
	int64_t id = rtd_timeline_add_track(c->tl, &d);
	if (id < 0)
		return (int)id;
	t->id = (uint64_t)id;
	if (lane)
		c->st.lanes++;
	else if (tid)
		c->st.threads++;
	else
		c->st.processes++;
	*out = t->id;
	return 0;
}

/* A PROCESS or THREAD record's name: kept, and the track renamed when it
 * exists and the name is better (a runtime's, or a newer one of equal rank). */
static int name(rtd_timeline_records *c, const struct rtd_record *r)
{
	if (!r->name || !*r->name)
		return 0;
	bool runtime = r->source < 64 && (c->o.runtime_sources >> r->source & 1);
	int rc = 0;
	uint64_t tid = r->kind == RTD_REC_PROCESS ? 0 : r->tid;
	uint64_t lane = r->kind == RTD_REC_PROCESS ? 0 : r->lane;
	struct trk *t = entry(c, r->pid, tid, lane, &rc);
	if (!t)
		return rc;
	if ((t->runtime_named && !runtime) || (t->name && !strcmp(t->name, r->name)))
		return 0;
	char *n = strdup(r->name);
	if (!n)
		return -ENOMEM;
	free(t->name);
	t->name = n;
	t->runtime_named |= runtime;
	if (!t->id || lane)
		return 0; /* a lane is named before its first event, or keeps its name */
	c->st.renamed++;
	return rtd_timeline_rename_track(c->tl, t->id, n);
}

/* A record's fields as the timeline's arguments. */
static size_t args_of(rtd_timeline_records *c, const struct rtd_record *r)
{
	size_t n = r->nfields < RTD_TIMELINE_MAX_ARGS ? r->nfields : RTD_TIMELINE_MAX_ARGS;
	c->st.dropped_fields += r->nfields - n;
	for (size_t i = 0; i < n; i++) {
		const struct rtd_field *f = &r->fields[i];
		struct rtd_tl_arg *a = &c->args[i];
		memset(a, 0, sizeof(*a));
		a->key = f->name ? f->name : "?";
		switch (f->type) {
		case RTD_FIELD_I64: a->type = RTD_TL_INT; a->i = f->i; break;
		case RTD_FIELD_U64: a->type = RTD_TL_UINT; a->u = f->u; break;
		case RTD_FIELD_F64: a->type = RTD_TL_DOUBLE; a->d = f->f; break;
		default: a->type = RTD_TL_STR; a->s = f->s ? f->s : ""; break;
		}
	}
	return n;
}

static int event(rtd_timeline_records *c, const struct rtd_record *r, uint64_t id)
{
	struct rtd_tl_event e = {.sz = sizeof(e), .track = id, .ts = r->mono,
				 .name = r->name ? r->name : "?", .category = r->category,
				 .args = c->args, .nargs = args_of(c, r)};
	if (r->kind == RTD_REC_SLICE_BEGIN) {
		c->st.slices++;
		return rtd_timeline_begin(c->tl, &e);
	}
	if (r->kind == RTD_REC_SLICE) {
		/* given at its end: a whole slice, written as one (Perfetto
		 * and Chrome JSON take them out of begin order) */
		c->st.slices++;
		e.dur = r->dur > 0 ? r->dur : 0;
		e.ts = r->mono - e.dur;
		return rtd_timeline_slice(c->tl, &e);
	}
	c->st.instants++;
	return rtd_timeline_instant(c->tl, &e);
}

static int sample(rtd_timeline_records *c, const struct rtd_record *r, uint64_t id)
{
	size_t n = r->stack ? r->stack->n : 0;
	if (n > c->frames_cap) {
		struct rtd_frame *f = realloc(c->frames, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->frames = f;
		c->frames_cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rtd_rec_frame *rf = &r->stack->frames[i];
		c->frames[i] = (struct rtd_frame){.name = rf->name, .module = rf->module,
						  .addr = rf->ip};
	}
	c->st.samples++;
	return rtd_timeline_sample(c->tl, id, r->mono, c->frames, n);
}

static int counter(rtd_timeline_records *c, const struct rtd_record *r)
{
	const char *nm = r->name ? r->name : "?", *unit = r->unit ? r->unit : "";
	size_t ln = strlen(nm), lu = strlen(unit);
	char stackbuf[256], *key = ln + lu + 16 <= sizeof(stackbuf) ? stackbuf
								     : malloc(ln + lu + 16);
	if (!key)
		return -ENOMEM;
	uint32_t pid = r->pid;
	memcpy(key, &pid, 4);
	memcpy(key + 4, nm, ln + 1);
	memcpy(key + 5 + ln, unit, lu);
	size_t klen = 5 + ln + lu;
	void *v;
	int rc = 0;
	uint64_t id = 0;
	if (rtd_strmap_get(&c->counters, key, klen, &v)) {
		id = (uint64_t)(uintptr_t)v;
	} else if ((rc = track(c, r->pid, 0, 0, &id)) == 0) {
		struct rtd_track d = {.sz = sizeof(d), .kind = RTD_TRACK_COUNTER, .name = nm,
				      .parent = id, .unit = r->unit};
		int64_t t = rtd_timeline_add_track(c->tl, &d);
		if (t < 0)
			rc = (int)t;
		else if ((rc = rtd_strmap_put(&c->counters, key, klen, (void *)(uintptr_t)t)) == 0) {
			id = (uint64_t)t;
			c->st.counters++;
		}
	}
	if (key != stackbuf)
		free(key);
	if (rc < 0)
		return rc;
	c->st.values++;
	return rtd_timeline_counter(c->tl, id, r->mono, r->value);
}

int rtd_timeline_records_add(rtd_timeline_records *c, const struct rtd_record *r)
{
	uint64_t id = 0;
	int rc;
	switch (r->kind) {
	case RTD_REC_PROCESS:
	case RTD_REC_THREAD:
		return name(c, r);
	case RTD_REC_SLICE_END: {
		struct tkey k = {.pid = r->pid, .tid = r->tid, .lane = r->lane};
		void *v;
		rc = rtd_strmap_get(&c->tracks, &k, sizeof(k), &v) && ((struct trk *)v)->id
			     ? rtd_timeline_end(c->tl, ((struct trk *)v)->id, r->mono)
			     : -RTD_E_STATE;
		if (rc == -RTD_E_STATE) {
			c->st.unmatched_ends++;
			return 0;
		}
		return rc;
	}
	case RTD_REC_SLICE_BEGIN:
	case RTD_REC_SLICE:
	case RTD_REC_INSTANT:
		rc = track(c, r->pid, r->tid, r->lane, &id);
		return rc < 0 ? rc : event(c, r, id);
	case RTD_REC_SAMPLE:
		rc = track(c, r->pid, r->tid, r->lane, &id);
		return rc < 0 ? rc : sample(c, r, id);
	case RTD_REC_COUNTER:
		return counter(c, r);
	case RTD_REC_FLOW:
		c->st.flows++;
		return 0;
	case RTD_REC_ERROR:
		return r->code < 0 ? r->code : -RTD_E_INVAL;
	default:
		return -RTD_E_INVAL;
	}
}

int rtd_timeline_records_pull(rtd_timeline_records *c, rtd_source *src)
{
	const struct rtd_record *r;
	int rc;
	while ((rc = rtd_source_next(src, &r)) == 1)
		if ((rc = rtd_timeline_records_add(c, r)) < 0)
			return rc;
	return rc;
}
