/* SPDX-License-Identifier: MIT */
/*
 * source.c - an EventPipe stream as a record source (rtdiag/source.h,
 * rtdiag/nettrace_source.h): the push decoder's callbacks queue the
 * records one read of the input completes, rtd_source_next() hands them
 * out one at a time. The decoder sorts (sequence-point windows), so the
 * queue is at most one window's records, in time order.
 *
 * In stream order (opts.stream_order) the decoder is paused every
 * NTS_BATCH records (RTD_NT_PAUSE) and resumed when they are taken, so
 * the queue holds a few dozen records, not a read's thousands (a 64 KiB
 * read of samples completes ~5,500 events): the records stay in the
 * cache between the decoder that writes them and the consumer that reads
 * them, and are handed out where they are (rtd_source_ops.next_own).
 *
 * A field's text is the decoder's, lent (opts.lend_strings) until its
 * next call, which comes only once the queue is empty: a record's
 * strings are not copied.
 *
 * Frames are named by rtd_nettrace_methods; a file's rundown comes at its
 * end, so unless told otherwise the input is read once ahead for the
 * method events only (memory: the method table), then again for records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nettrace/clr_ids.h"
#include "nettrace/nt.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/input.h"
#include "common/map.h"
#include "common/recq.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"

#define NTS_PROVIDER_SAMPLES "Microsoft-DotNETCore-SampleProfiler"
#define NTS_MAX_THREADS (1u << 20)  /* distinct thread ids named */
#define NTS_MAX_FIELDS 256u         /* top-level fields kept per event */
#define NTS_MAX_META_BYTES (64u << 20) /* struct nts_meta of the event types */
#define NTS_META_NAMES 16u /* field names kept interned per event type */
#define NTS_MAX_WINDOW_STACKS (1u << 20) /* a window's stack ids remembered */
#define NTS_BATCH 32u /* stream order: records queued before the decoder pauses */

struct nts {
	struct rtd_nettrace_source_opts o;
	rtd_input in;
	int live_fd;                /* a live stream's descriptor, or -1 */
	rtd_nettrace *dec;
	rtd_nettrace_methods *methods;
	rtd_intern *intern;
	struct rtd_clock clock;
	bool mono_is_ts; /* the clock's mono of a time >= 0 is that time */
	uint32_t pid;
	rtd_map threads;            /* tid -> (void *)1: its THREAD record went out */
	rtd_recq q;                 /* records of the current read */
	struct rtd_field fields[NTS_MAX_FIELDS]; /* the event being walked */
	size_t nfields;
	bool counters; /* an EventCounters event: its Payload struct's fields too */
	int value_err;  /* on_value's own error in the walk */
	size_t cur_nfields; /* the walked type's top-level fields */
	struct rtd_rec_frame *frames;   /* a stack being named */
	size_t frames_cap;
	int err;                    /* a callback's error, for the decoder */
	bool eof, finished;
	int end_rc;                 /* the decoder's finish(): 0 or its error */
	const char *sample_name;    /* interned "Provider/ThreadSample" */
	rtd_arena metas;            /* struct nts_meta of each event type */
	struct nts_meta *cur;       /* the event's being read */
	/* a window's stacks by the stream's id, while frame names cannot
	 * change (address frames, every method known ahead, or a table that
	 * took no event since): the stack table of the stream restarts at
	 * each sequence point, and so this */
	rtd_map window_stacks;
	uint64_t window_changes; /* ...and the method table's then, when it learns */
	/* rtd_source_each() in stream order: each event's record handed to
	 * to the walk @take from on_event(), in @one, its fields where they
	 * were read */
	struct rtd_source_take *take;
	bool taken_stop; /* @take said stop: the decoder pauses */
	struct rtd_record one;
	struct nt_str_cache strs; /* flat types' strings, kept converted */
};

static bool wants(const struct nts *s, unsigned kind)
{
	return !s->o.kinds || (s->o.kinds & (1u << kind));
}

static struct rtd_record *push(struct nts *s, unsigned kind, int64_t ts)
{
	/* Linux's clock: mono is the time itself (what rtd_clock_to_mono()
	 * gives, without its two calls per record) */
	int64_t mono = s->mono_is_ts && ts >= 0 ? ts : rtd_clock_to_mono(&s->clock, ts);
	struct rtd_record *r = rtd_recq_push(&s->q, kind, ts, mono, &s->err);
	if (r)
		r->pid = s->pid;
	return r;
}

static int on_info(void *ctx, const struct rtd_nettrace_info *info)
{
	struct nts *s = ctx;
	s->pid = info->pid;
	struct rtd_clock *c = &s->clock;
	c->domain = RTD_CLOCK_QPC;
	c->freq = info->tick_freq;
	c->ref_ts = (int64_t)info->sync_ticks;
	c->mono_error_ns = RTD_CLOCK_ERROR_UNKNOWN;
	if (info->tick_freq == 1000000000u && !s->o.not_monotonic) {
		/* Linux: QueryPerformanceCounter is clock_gettime(
		 * CLOCK_MONOTONIC) in ns (PAL's QueryPerformanceCounter) */
		c->flags |= RTD_CLOCK_HAS_MONO;
		c->ref_mono = c->ref_ts;
		c->mono_error_ns = 0;
		/* ts - ref + ref: no saturation when both are >= 0 */
		s->mono_is_ts = c->ref_ts >= 0;
	}
	struct tm tm = {.tm_year = info->sync_year - 1900, .tm_mon = info->sync_month - 1,
			.tm_mday = info->sync_day, .tm_hour = info->sync_hour,
			.tm_min = info->sync_minute, .tm_sec = info->sync_second};
	time_t t = timegm(&tm);
	/* a damaged header's year must not overflow the nanoseconds */
	if (t != (time_t)-1 && info->sync_year > 0 && t >= 0 &&
	    (int64_t)t < INT64_MAX / 1000000000 - 1 && info->sync_ms >= 0 && info->sync_ms < 1000) {
		c->flags |= RTD_CLOCK_HAS_WALL;
		c->ref_wall = (int64_t)t * 1000000000 + (int64_t)info->sync_ms * 1000000;
		c->wall_error_ns = 1000000; /* the header keeps milliseconds */
	}
	if (info->pid && wants(s, RTD_REC_PROCESS)) {
		struct rtd_record *r = push(s, RTD_REC_PROCESS, c->ref_ts);
		if (!r)
			return s->err;
	}
	return 0;
}

/* What the source keeps of an event type, made once per metadata record
 * (kept in its ->user): its record name "Provider/Name" and category
 * (interned), and whether its events are the sampler's. */
struct nts_meta {
	const char *name;
	const char *category;
	bool sample;
	bool names; /* a method or module event (nt_names_of()) */
	bool dropped; /* refused by the caller's filter (opts.want) */
	uint8_t kind;  /* RTD_REC_SAMPLE or _INSTANT */
	bool wanted;   /* that kind is asked for (opts.kinds) */
	bool counters; /* EventCounters' fields: its Payload struct's too */
	/* the top-level fields read (opts.fields): none, or up to @stop_at
	 * (NULL: all) of @fields, the type's own array */
	bool no_fields;
	const struct rtd_nettrace_field *fields, *stop_at;
	/* a flat type's fields read straight (nt_read_flat()): its steps,
	 * how many, and the fields' interned names (NULL: walked) */
	struct nt_flat_step *plan;
	size_t flat_n;
	const char **flat_names;
	/* the fields the caller does not want (opts.field_want), by index
	 * (bit i: field i; past 64: every field is kept) */
	uint64_t skip;
	unsigned phase; /* RTD_FLOW_BEGIN/_END: its opcode is Start/Stop */
	const char *u32_field; /* a sample's one u32 field, once the walk named it */
	/* its fields' names as the walk gives them (the metadata's own
	 * strings, stable while it lives) and interned */
	const char *raw[NTS_META_NAMES], *interned[NTS_META_NAMES];
	/* the same by the field's index (the walk gives them in order) */
	const char *by_at_raw[NTS_META_NAMES], *by_at[NTS_META_NAMES];
};

/* A type whose fields the records carry, all flat (numbers, floats,
 * strings), is read straight (nt_read_flat()), its field names interned
 * once here: the walk and its callback per value cost several times the
 * reading (an allocation tick's nine fields). */
static int flat_of(struct nts *s, struct nts_meta *nm, const struct rtd_nettrace_metadata *m,
		   size_t upto)
{
	size_t n = upto < m->nfields ? upto : m->nfields;
	nm->flat_n = 0;
	nm->flat_names = NULL;
	nm->plan = NULL;
	nm->skip = 0;
	for (size_t i = 0; i < n && i < 64 && s->o.field_want && !nm->dropped; i++)
		if (!s->o.field_want(s->o.fields_ctx, m, i))
			nm->skip |= 1ull << i;
	if (nm->dropped || !nm->wanted || nm->no_fields || nm->counters || n > NTS_MAX_FIELDS ||
	    !nt_flat(s->dec, m, n))
		return 0;
	int err = 0;
	const char **names = rtd_arena_alloc(&s->metas, n * sizeof(*names) + 1, &err);
	if (!names)
		return err;
	for (size_t i = 0; i < n; i++) {
		int rc = rtd_intern_string(s->intern, m->fields[i].name, strlen(m->fields[i].name),
					   &names[i]);
		if (rc < 0)
			return rc;
	}
	nm->plan = rtd_arena_alloc(&s->metas, n * sizeof(*nm->plan) + 1, &err);
	if (!nm->plan)
		return err;
	nm->flat_n = nt_flat_plan(m, n, nm->skip, nm->plan);
	nm->flat_names = names;
	/* a sample's payload, its Type alone: read as the u32 it is */
	const struct nt_flat_step *st = nm->plan;
	if (nm->sample && nm->flat_n == 1 && !st->skip && !st->ptrs && !st->pass &&
	    st->type == RTD_NT_T_U32)
		nm->u32_field = names[st->field];
	return 0;
}

static struct nts_meta *meta_of(struct nts *s, struct rtd_nettrace_metadata *m)
{
	if (m->user)
		return m->user;
	struct nts_meta *nm = rtd_arena_alloc(&s->metas, sizeof(*nm), &s->err);
	if (!nm)
		return NULL;
	size_t lp = strlen(m->provider), ln = strlen(m->name);
	char *buf = malloc(lp + ln + 2);
	if (!buf) {
		s->err = -ENOMEM;
		return NULL;
	}
	memcpy(buf, m->provider, lp);
	buf[lp] = '/';
	memcpy(buf + lp + 1, m->name, ln + 1);
	int rc = rtd_intern_string(s->intern, buf, lp + ln + 1, &nm->name);
	free(buf);
	if (rc == 0)
		rc = rtd_intern_string(s->intern, m->provider, lp, &nm->category);
	if (rc < 0) {
		s->err = rc;
		return NULL;
	}
	nm->sample = m->event_id == CLR_SAMPLE_PROFILER_THREAD_SAMPLE &&
		     !strcmp(m->provider, NTS_PROVIDER_SAMPLES);
	nm->names = nt_names_of(m) != NT_NAMES_NONE;
	nm->dropped = s->o.want && !s->o.want(s->o.want_ctx, m);
	nm->kind = nm->sample ? RTD_REC_SAMPLE : RTD_REC_INSTANT;
	nm->wanted = wants(s, nm->kind);
	nm->counters = !s->o.top_fields && !strcmp(m->name, "EventCounters");
	size_t upto = s->o.fields ? s->o.fields(s->o.fields_ctx, m) : SIZE_MAX;
	nm->no_fields = upto == 0;
	nm->fields = m->fields;
	nm->stop_at = upto < m->nfields ? m->fields + upto : NULL;
	nm->phase = m->opcode == 1 ? RTD_FLOW_BEGIN : m->opcode == 2 ? RTD_FLOW_END : 0;
	nm->u32_field = NULL;
	for (unsigned i = 0; i < NTS_META_NAMES; i++)
		nm->raw[i] = nm->interned[i] = nm->by_at_raw[i] = nm->by_at[i] = NULL;
	if ((rc = flat_of(s, nm, m, upto)) < 0) {
		s->err = rc;
		return NULL;
	}
	m->user = nm;
	return nm;
}

/* The decoder's filter: the caller's (opts.want); with no INSTANT asked
 * for, only the sampler's events. The method events that name frames,
 * when they are learnt as they are delivered, are always worth holding
 * for the sort and delivering (on_event then makes no record of those
 * the caller refused). */
static bool nts_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	struct nts *s = ctx;
	bool learn = s->o.no_prepass && !s->o.address_frames && nt_names_of(m) != NT_NAMES_NONE;
	if (s->o.want && !s->o.want(s->o.want_ctx, m))
		return learn;
	if (wants(s, RTD_REC_INSTANT) ||
	    (m->event_id == CLR_SAMPLE_PROFILER_THREAD_SAMPLE &&
	     !strcmp(m->provider, NTS_PROVIDER_SAMPLES)))
		return true;
	return learn;
}

/* Address frames are named by the consumer at its end: the method table
 * is learnt as the stream comes, unsorted (as the nettrace profiler
 * always learnt it), not held for the sort. */
static int nts_arrival(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct nts *s = ctx;
	const struct nts_meta *nm = meta_of(s, (struct rtd_nettrace_metadata *)ev->meta);
	if (!nm)
		return s->err ? s->err : -ENOMEM;
	return nm->names ? rtd_nettrace_methods_event(s->methods, ev) : 0;
}

/* A field's interned name: looked up once per event type and field */
static int field_name(struct nts *s, const char *raw, const char **out)
{
	struct nts_meta *nm = s->cur;
	unsigned i = 0;
	for (; i < NTS_META_NAMES && nm->raw[i]; i++)
		if (nm->raw[i] == raw) {
			*out = nm->interned[i];
			return 0;
		}
	int rc = rtd_intern_string(s->intern, raw, strlen(raw), out);
	if (rc == 0 && i < NTS_META_NAMES) {
		nm->raw[i] = raw;
		nm->interned[i] = *out;
	}
	return rc;
}

/* The interned name of the type's top-level field @at (SIZE_MAX: not one
 * of them), found once: the walk gives them in order */
static int name_at(struct nts *s, const struct rtd_nettrace_value *v, size_t at,
		   const char **out)
{
	struct nts_meta *nm = s->cur;
	if (at < NTS_META_NAMES && nm->by_at[at] && nm->by_at_raw[at] == v->name) {
		*out = nm->by_at[at];
		return 0;
	}
	int rc = field_name(s, v->name, out);
	if (rc == 0 && at < NTS_META_NAMES) {
		nm->by_at_raw[at] = v->name;
		nm->by_at[at] = *out;
	}
	return rc;
}

/* Each value of the walk: a top-level scalar becomes a named field (the
 * decoder's value whole, a character's code beside its text, a date's
 * ticks: a consumer reads what the decoder's reader reads) */
static int on_value(void *ctx, const struct rtd_nettrace_value *v)
{
	struct nts *s = ctx;
	if (v->depth != 0 && !s->counters)
		return 0; /* inside a top-level field: walked past */
	const struct nts_meta *nm = s->cur;
	size_t at = SIZE_MAX; /* which of the type's top-level fields */
	if (v->depth == 0) {
		uintptr_t p = (uintptr_t)v->field, from = (uintptr_t)nm->fields;
		if (p >= from && (p - from) % sizeof(*v->field) == 0 &&
		    p < from + s->cur_nfields * sizeof(*v->field))
			at = (p - from) / sizeof(*v->field);
		/* past the last field the caller reads (opts.fields) */
		if (nm->stop_at && at != SIZE_MAX &&
		    at >= (size_t)(nm->stop_at - nm->fields))
			return 1;
		if (at < 64 && (nm->skip >> at & 1))
			return 0; /* not wanted (opts.field_want) */
	}
	if (v->kind != RTD_NT_V_SCALAR || !v->name || s->nfields >= NTS_MAX_FIELDS)
		return 0;
	const char *name;
	int rc = name_at(s, v, at, &name);
	if (rc < 0) {
		s->value_err = rc; /* the source's own failure, not the payload's */
		return rc;
	}
	s->fields[s->nfields++] = (struct rtd_field){.name = name, .type = nt_field_type(v->type, v->str != NULL),
						     .i = v->i, .u = v->u, .f = v->f, .s = v->str};
	return 0;
}

static int intern_frames(struct nts *s, const struct rtd_nettrace_event *ev,
			 const struct rtd_stack **out);

static int stack_of(struct nts *s, const struct rtd_nettrace_event *ev,
		    const struct rtd_stack **out)
{
	bool fixed = s->o.address_frames || !s->o.no_prepass; /* names cannot change */
	if (!fixed && ev->stack_id) {
		/* names learnt as events come: the same while the table takes
		 * no method or module event */
		uint64_t changes = nt_methods_changes(s->methods);
		if (changes != s->window_changes) {
			rtd_map_clear(&s->window_stacks);
			s->window_changes = changes;
		}
		fixed = true;
	}
	void *v;
	if (fixed && ev->stack_id && rtd_map_get(&s->window_stacks, ev->stack_id, &v)) {
		*out = v;
		return 0;
	}
	int rc = intern_frames(s, ev, out);
	if (rc == 0 && fixed && ev->stack_id)
		rc = rtd_map_put(&s->window_stacks, ev->stack_id, (void *)*out, NULL);
	return rc == -RTD_E_CAP ? 0 : rc; /* a full cache: intern each time */
}

/* The sequence point: the stream's stack ids start again */
static int on_seqpoint(void *ctx, uint64_t ts)
{
	(void)ts;
	rtd_map_clear(&((struct nts *)ctx)->window_stacks);
	return 0;
}

static int intern_frames(struct nts *s, const struct rtd_nettrace_event *ev,
			 const struct rtd_stack **out)
{
	size_t n = ev->nframes < RTD_INTERN_MAX_DEPTH ? ev->nframes : RTD_INTERN_MAX_DEPTH;
	if (n > s->frames_cap) {
		struct rtd_rec_frame *f = rtd_grow(s->frames, &s->frames_cap, n, sizeof(*f), 64);
		if (!f)
			return -ENOMEM;
		s->frames = f;
	}
	for (size_t i = 0; i < n; i++) {
		/* no module: the name carries it ("module!Method") */
		s->frames[i] = (struct rtd_rec_frame){.ip = ev->stack[i]};
		if (s->o.address_frames)
			continue;
		s->frames[i].name = rtd_nettrace_methods_name(s->methods, ev->stack[i]);
		/* the name is the table's until its next call: intern it now */
		if (s->frames[i].name) {
			int rc = rtd_intern_string(s->intern, s->frames[i].name,
						   strlen(s->frames[i].name), &s->frames[i].name);
			if (rc < 0)
				return rc;
		}
	}
	return rtd_intern_stack(s->intern, s->frames, n, out);
}

static int thread_seen(struct nts *s, uint64_t tid, int64_t ts)
{
	if (!wants(s, RTD_REC_THREAD) || rtd_map_get(&s->threads, tid, NULL))
		return 0;
	int rc = rtd_map_put(&s->threads, tid, (void *)1, NULL);
	if (rc < 0)
		return rc;
	struct rtd_record *r = push(s, RTD_REC_THREAD, ts);
	if (!r)
		return s->err;
	r->tid = tid;
	return 0;
}

/* rtd_source_each(): the queued records (a THREAD before its thread's
 * first event) handed to the caller first; true when the queue is empty
 * and the caller still takes */
static bool hand_queued(struct nts *s)
{
	struct rtd_record *q;
	while (!s->taken_stop && (q = rtd_recq_take(&s->q)))
		if (rtd_source_take(s->take, q))
			s->taken_stop = true;
	return !s->taken_stop;
}

/* The one record handed from on_event(), as push() makes a queued one */
static struct rtd_record *fill_one(struct nts *s, unsigned kind, int64_t ts)
{
	int64_t mono = s->mono_is_ts && ts >= 0 ? ts : rtd_clock_to_mono(&s->clock, ts);
	s->one = (struct rtd_record){.kind = kind, .ts = ts, .mono = mono, .pid = s->pid};
	return &s->one;
}

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct nts *s = ctx;
	int rc;
	struct rtd_nettrace_metadata *m = (struct rtd_nettrace_metadata *)ev->meta;
	struct nts_meta *nm = meta_of(s, m);
	if (!nm)
		return s->err ? s->err : -ENOMEM;
	s->cur = nm;
	if (s->o.no_prepass && !s->o.address_frames && nm->names &&
	    (rc = rtd_nettrace_methods_event(s->methods, ev)) < 0)
		return rc;
	if (nm->dropped)
		return 0;
	int64_t ts = (int64_t)ev->timestamp;
	if ((rc = thread_seen(s, ev->thread_id, ts)) < 0)
		return rc;
	bool sample = nm->sample;
	if (!nm->wanted)
		return 0;
	s->nfields = 0;
	/* an EventSource's counter values are one struct "Payload" {Name,
	 * Mean or Increment, ...} (nested as the runtime's metadata says,
	 * read by name as src/dotnet/counters.c does): its scalars become
	 * the instant's fields */
	s->counters = nm->counters;
	uint32_t u32 = 0;
	if (ev->payload_len == 4) {
		rtd_rd r;
		rd_init(&r, ev->payload, 4);
		u32 = rd_u32le(&r);
	}
	s->cur_nfields = m->nfields;
	if (nm->no_fields) {
		/* the caller reads none (opts.fields) */
	} else if (nm->u32_field && ev->payload_len == 4) {
		/* what the walk gave the first time, without walking */
		s->fields[0] = (struct rtd_field){.name = nm->u32_field, .type = RTD_FIELD_U64,
						  .u = u32, .i = u32};
		s->nfields = 1;
	} else if (nm->flat_names) {
		rc = nt_read_flat(s->dec, ev, nm->plan, nm->flat_n, s->fields, &s->nfields,
				  nm->flat_names, &s->strs);
		/* a payload shorter than its layout keeps what came before */
		if (rc < 0 && rc != -RTD_E_NT_PAYLOAD)
			return s->dec->lent_err ? s->dec->lent_err : rc;
	} else {
		s->value_err = 0;
		rc = rtd_nettrace_walk(s->dec, ev, on_value, s);
		/* a payload shorter than its layout keeps what came before, and
		 * with top_fields so does any value it cannot read */
		if (rc < 0 && (s->value_err || s->dec->lent_err ||
			       (rc != -RTD_E_NT_PAYLOAD && !s->o.top_fields)))
			return rc;
		/* a sampler's payload: one u32 (its Type); the next are read
		 * straight (a sample per managed thread per millisecond) */
		if (sample && s->nfields == 1 && s->fields[0].type == RTD_FIELD_U64 &&
		    ev->payload_len == 4 && s->fields[0].u == u32)
			nm->u32_field = s->fields[0].name;
	}
	const struct rtd_stack *stack = NULL;
	if ((sample || ev->nframes) && (rc = stack_of(s, ev, &stack)) < 0)
		return rc;
	bool direct = s->take && hand_queued(s);
	struct rtd_record *r = direct ? fill_one(s, nm->kind, ts) : push(s, nm->kind, ts);
	if (!r)
		return s->err;
	r->tid = ev->thread_id;
	r->name = nm->name;
	r->category = nm->category;
	r->stack = stack;
	memcpy(r->activity, ev->activity_id, sizeof(r->activity));
	if (sample) {
		r->value = 1;
		r->unit = "count";
	} else {
		r->phase = nm->phase;
	}
	if (direct) {
		/* the fields where they were read, valid while @take runs */
		r->fields = s->nfields ? s->fields : NULL;
		r->nfields = s->nfields;
		if (rtd_source_take(s->take, r))
			s->taken_stop = true;
		return s->taken_stop ? RTD_NT_PAUSE : 0;
	}
	if (s->nfields) {
		struct rtd_field *f = rtd_recq_fields(&s->q, s->fields, s->nfields, &rc);
		if (!f)
			return rc;
		r->fields = f;
		r->nfields = s->nfields;
	}
	/* stream order: the consumer takes these before the next are decoded */
	return s->o.stream_order && (s->q.n - s->q.head >= NTS_BATCH || s->taken_stop)
		       ? RTD_NT_PAUSE
		       : 0;
}

static int learn_methods(void *ctx, const struct rtd_nettrace_event *ev)
{
	return rtd_nettrace_methods_event(ctx, ev);
}

/* Every method event of @in, from where it is, into @m. A damaged input
 * stops it quietly: the reading pass reports the damage where it is. */
static int learn_input(rtd_nettrace_methods *m, rtd_input *in)
{
	RTD_OPTS(rtd_nettrace_opts, o, .ctx = m, .on_event = learn_methods);
	rtd_nettrace *d = rtd_nettrace_new(&o);
	if (!d)
		return -ENOMEM;
	const uint8_t *p;
	int64_t n;
	int rc = 0;
	while ((n = rtd_input_next(in, &p)) > 0) {
		rc = rtd_nettrace_feed(d, p, (size_t)n);
		if (rc != 0)
			break;
	}
	rtd_nettrace_free(d);
	if (n < 0)
		return (int)n;
	return rc == -ENOMEM || rc == -RTD_E_CAP ? rc : 0;
}

/* The prepass: every method of the input into the table, then back to
 * its start */
static int prepass(struct nts *s)
{
	int rc = learn_input(s->methods, &s->in);
	rtd_input_rewind(&s->in);
	return rc == -RTD_E_CAP ? 0 : rc; /* what fits names what it can */
}

struct fd_reader {
	int fd;
	uint64_t off;
};

static int64_t fd_pread(void *ctx, void *buf, size_t len)
{
	struct fd_reader *r = ctx;
	ssize_t n;
	do
		n = pread(r->fd, buf, len, (off_t)r->off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	r->off += (uint64_t)n;
	return n;
}

int rtd_nettrace_methods_learn_fd(rtd_nettrace_methods *m, int fd)
{
	if (!m || fd < 0)
		return -RTD_E_INVAL;
	struct fd_reader r = {.fd = fd};
	rtd_input in;
	int rc = rtd_input_reader(&in, fd_pread, &r);
	if (rc)
		return rc;
	rc = learn_input(m, &in);
	rtd_input_close(&in);
	return rc;
}

static int nts_fail(struct nts *s, struct rtd_record *rec, int rc)
{
	uint64_t off = s->in.pos;
	const char *msg = rtd_nettrace_error(s->dec, &off);
	if (!msg || !*msg)
		msg = rtd_strerror(rc);
	return rtd_source_error(rec, rc, off, msg);
}

/* The next record in the queue (by reference: valid until the next
 * pull), decoding on when it is empty; 0 at the end, or an error in @rec. */
static int nts_next_own(void *impl, struct rtd_record *rec, struct rtd_record **out)
{
	struct nts *s = impl;
	if (s->q.head < s->q.n) {
		*out = &s->q.r[s->q.head++]; /* rtd_recq_take()'s usual case */
		return 1;
	}
	for (;;) {
		*out = rec;
		if (s->taken_stop)
			return 1; /* rtd_source_each(): its caller said stop */
		if ((*out = rtd_recq_take(&s->q)))
			return 1;
		*out = rec;
		if (s->finished) {
			memset(rec, 0, sizeof(*rec));
			return s->end_rc < 0 ? nts_fail(s, rec, s->end_rc) : 0;
		}
		int rc;
		if (rtd_nettrace_paused(s->dec)) {
			rc = rtd_nettrace_resume(s->dec);
			if (rc == 1)
				s->eof = true;
			else if (rc < 0) {
				s->finished = true;
				s->end_rc = s->err ? s->err : rc;
			}
			continue;
		}
		if (s->eof) {
			/* the end: the last sort window comes out of finish() */
			s->finished = true;
			rc = rtd_nettrace_finish(s->dec);
			s->end_rc = s->err ? s->err : rc;
			continue;
		}
		const uint8_t *p;
		int64_t n = rtd_input_next(&s->in, &p);
		if (n == -EAGAIN && s->live_fd >= 0) {
			/* a live stream with no bytes now: its records so far
			 * are out, the watermark is the last one's */
			memset(rec, 0, sizeof(*rec));
			rec->mono = INT64_MIN;
			return RTD_SOURCE_IDLE;
		}
		if (n < 0) {
			memset(rec, 0, sizeof(*rec));
			return rtd_source_error(rec, (int)n, s->in.pos, "reading the input");
		}
		if (n == 0) {
			s->eof = true;
			continue;
		}
		rc = rtd_nettrace_feed(s->dec, p, (size_t)n);
		if (rc == 1)
			s->eof = true; /* the end marker: bytes after it are ignored */
		else if (rc < 0) {
			/* the records completed before the damage go out first */
			s->finished = true;
			s->end_rc = s->err ? s->err : rc;
		}
	}
}

/*
 * rtd_source_each(): in stream order the records are handed out from the
 * decoder's callback (on_event()), the queue used only for what comes
 * between events (a THREAD, the PROCESS) and for the event whose turn
 * came after the caller said stop; in time order, one queued record a
 * call to @take.
 */
static int nts_each(void *impl, struct rtd_record *scratch, struct rtd_source_take *take)
{
	struct nts *s = impl;
	struct rtd_record *r;
	int rc;
	s->taken_stop = false;
	if (s->o.stream_order)
		s->take = take;
	while ((rc = nts_next_own(impl, scratch, &r)) == 1 && !s->taken_stop)
		if (rtd_source_take(take, r))
			break;
	s->take = NULL;
	s->taken_stop = false;
	return rc;
}

static int nts_next(void *impl, struct rtd_record *rec)
{
	struct rtd_record *r = rec;
	int rc = nts_next_own(impl, rec, &r);
	if (r != rec)
		*rec = *r;
	return rc;
}

static int nts_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct nts *)impl)->clock;
	return 0;
}

static void nts_free(void *impl)
{
	struct nts *s = impl;
	if (!s)
		return;
	rtd_nettrace_free(s->dec);
	rtd_nettrace_methods_free(s->methods);
	rtd_intern_free(s->intern);
	rtd_map_free(&s->threads);
	rtd_recq_free(&s->q);
	rtd_arena_free(&s->metas);
	rtd_map_free(&s->window_stacks);
	nt_str_cache_free(&s->strs);
	rtd_input_close(&s->in);
	free(s->frames);
	free(s);
}

static int nts_fd(void *impl)
{
	return ((struct nts *)impl)->live_fd;
}

static const struct rtd_source_ops nts_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "nettrace",
	.next = nts_next,
	.clock = nts_clock,
	.free = nts_free,
	.fd = nts_fd,
	.next_own = nts_next_own,
	.each = nts_each,
};

rtd_nettrace_methods *rtd_nettrace_source_methods(rtd_source *src)
{
	struct nts *s = rtd_source_impl_of(src, &nts_ops);
	return s ? s->methods : NULL;
}

int rtd_nettrace_source_stats(rtd_source *src, struct rtd_nettrace_stats *out)
{
	struct nts *s = rtd_source_impl_of(src, &nts_ops);
	if (!s)
		return -RTD_E_INVAL;
	rtd_nettrace_stats(s->dec, out);
	return 0;
}

static rtd_source *nts_new(struct nts *s, bool mem, int *err)
{
	int rc = -ENOMEM;
	s->methods = rtd_nettrace_methods_new();
	s->intern = rtd_intern_new();
	rtd_map_init(&s->threads, NTS_MAX_THREADS);
	rtd_recq_init(&s->q, s->o.max_queue_bytes);
	rtd_arena_init(&s->metas, NTS_MAX_META_BYTES);
	rtd_map_init(&s->window_stacks, NTS_MAX_WINDOW_STACKS);
	nt_str_cache_init(&s->strs);
	RTD_OPTS(rtd_nettrace_opts, o, .ctx = s, .on_event = on_event, .on_info = on_info,
		 .on_seqpoint = on_seqpoint, .sort = !s->o.stream_order, .stable_input = mem,
		 .lend_strings = true, .max_lent_bytes = s->o.max_queue_bytes,
		 .want = wants(s, RTD_REC_INSTANT) && !s->o.want ? NULL : nts_want,
		 .on_arrival = s->o.no_prepass && s->o.address_frames && !s->o.no_methods
				       ? nts_arrival : NULL);
	s->dec = rtd_nettrace_new(&o);
	rtd_source *src = NULL;
	if (s->methods && s->intern && s->dec &&
	    (s->o.no_prepass || s->o.no_methods || (rc = prepass(s)) == 0))
		src = rtd_source_new(&nts_ops, s);
	if (!src) {
		nts_free(s);
		if (err)
			*err = rc;
	}
	return src;
}

/* A source over the file @path, or the @len bytes at @buf when @path is NULL */
static rtd_source *nts_make(const char *path, const void *buf, size_t len,
			    const struct rtd_nettrace_source_opts *opts, int *err)
{
	struct nts *s = calloc(1, sizeof(*s));
	if (s)
		s->live_fd = -1;
	int rc = s ? rtd_input_setup(&s->in, path, buf, len, &s->o, sizeof(s->o), opts,
				     RTD_OPTS_END(rtd_nettrace_source_opts, field_want))
		   : -ENOMEM;
	if (rc < 0) {
		free(s);
		if (err)
			*err = rc;
		return NULL;
	}
	return nts_new(s, !path, err);
}

rtd_source *rtd_nettrace_source_stream(rtd_nettrace_read_fn read, void *ctx,
				       const struct rtd_nettrace_source_opts *opts, int *err)
{
	return rtd_nettrace_source_live(read, ctx, -1, opts, err);
}

rtd_source *rtd_nettrace_source_live(rtd_nettrace_read_fn read, void *ctx, int fd,
				     const struct rtd_nettrace_source_opts *opts, int *err)
{
	struct nts *s = read ? calloc(1, sizeof(*s)) : NULL;
	int rc = !read ? -RTD_E_INVAL
	       : !s    ? -ENOMEM
		       : rtd_opts_copy(&s->o, sizeof(s->o), opts,
				       RTD_OPTS_END(rtd_nettrace_source_opts, field_want));
	if (rc == 0)
		rc = rtd_input_reader(&s->in, read, ctx);
	if (rc < 0) {
		if (s)
			rtd_input_close(&s->in);
		free(s);
		if (err)
			*err = rc;
		return NULL;
	}
	s->o.no_prepass = true; /* read once: methods are learnt as they come */
	s->live_fd = fd >= 0 ? fd : -1;
	return nts_new(s, false, err);
}

rtd_source *rtd_nettrace_source_open(const char *path, const struct rtd_nettrace_source_opts *opts,
				     int *err)
{
	return nts_make(path, NULL, 0, opts, err);
}

rtd_source *rtd_nettrace_source_mem(const void *buf, size_t len,
				    const struct rtd_nettrace_source_opts *opts, int *err)
{
	return nts_make(NULL, buf, len, opts, err);
}
