/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - Perfetto's protobuf trace format: a perfetto.protos.Trace
 * is a run of TracePacket messages (field 1), written here one at a time
 * as events arrive (shared/reference/perfetto/perfetto_trace.proto).
 *
 * Tracks are TrackDescriptor packets (process, thread, named child
 * tracks, counters with CounterDescriptor). Events are TrackEvent packets
 * on one trusted sequence: SLICE_BEGIN/END, INSTANT, COUNTER, with debug
 * annotations for arguments, flow_ids/terminating_flow_ids for arrows,
 * callstack_iid for CPU samples.
 *
 * Interning (InternedData on the same sequence): event names, categories,
 * argument names, short argument strings, and for samples function
 * names, frames and callstacks, each written once in the packet that
 * first uses it. The tables are capped (RTD_TIMELINE_MAX_INTERNED entries
 * in all): when full they are dropped and the next packet says
 * SEQ_INCREMENTAL_STATE_CLEARED, so memory stays bounded whatever the
 * input's size.
 *
 * Timestamps are deltas: each generation starts with a packet that says
 * SEQ_INCREMENTAL_STATE_CLEARED, sets TracePacketDefaults'
 * timestamp_clock_id to a sequence-scoped incremental clock (64) and
 * gives a ClockSnapshot tying that clock to BOOTTIME at the last
 * timestamp written (the trace's primary clock, in the events' own
 * nanoseconds); then a packet's timestamp is the time since the previous
 * one's. An event earlier than the previous one (a slice written whole at
 * its end) names BOOTTIME itself and gives its time in full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/timeline_impl.h"

/* Field numbers from perfetto_trace.proto. */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRACK_DESCRIPTOR = 60,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,
	DEF_TIMESTAMP_CLOCK_ID = 58, /* TracePacketDefaults */
	CS_CLOCKS = 1,               /* ClockSnapshot */
	CS_PRIMARY_TRACE_CLOCK = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,
	CLK_INCREMENTAL = 3,
	CLOCK_BOOTTIME = 6,
	CLOCK_DELTA = 64, /* ours: sequence-scoped, incremental, ns */
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	/* TrackDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_PROCESS_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_THREAD_NAME = 5,
	CD_UNIT_NAME = 6,
	/* TrackEvent */
	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	TE_CALLSTACK_IID = 56,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	/* InternedData */
	ID_EVENT_CATEGORIES = 1,
	ID_EVENT_NAMES = 2,
	ID_ANNOTATION_NAMES = 3,
	ID_FUNCTION_NAMES = 5,
	ID_ANNOTATION_STRINGS = 29,
	DA_STRING_IID = 17,
	ID_FRAMES = 6,
	ID_CALLSTACKS = 7,
	IID = 1,
	IID_NAME = 2, /* EventName.name, DebugAnnotationName.name,
			 InternedString.str */
	FRAME_FUNCTION_NAME_ID = 2,
	CALLSTACK_FRAME_IDS = 2,
};

#define SEQUENCE_ID 1

static void pf_reset_tables(struct tl_pf *pf)
{
	rtd_strmap_free(&pf->names);
	rtd_strmap_free(&pf->annos);
	rtd_strmap_free(&pf->funcs);
	rtd_strmap_free(&pf->stacks);
	rtd_strmap_free(&pf->strs);
	rtd_strmap_free(&pf->cats);
	rtd_strmap_init(&pf->strs, 0);
	rtd_strmap_init(&pf->cats, 0);
	rtd_strmap_init(&pf->names, 0);
	rtd_strmap_init(&pf->annos, 0);
	rtd_strmap_init(&pf->funcs, 0);
	rtd_strmap_init(&pf->stacks, 0);
	pf->next_iid = 1;
	pf->interned = 0;
	pf->cleared = true;
	pf->gen++;
}

int pf_start(rtd_timeline *tl)
{
	struct tl_pf *pf = &tl->pf;
	rtd_buf_init(&pf->ev.b, 0);
	rtd_buf_init(&pf->in.b, 0);
	pf_reset_tables(pf);
	return 0;
}

void pf_free(rtd_timeline *tl)
{
	struct tl_pf *pf = &tl->pf;
	rtd_buf_free(&pf->ev.b);
	rtd_buf_free(&pf->in.b);
	rtd_strmap_free(&pf->names);
	rtd_strmap_free(&pf->annos);
	rtd_strmap_free(&pf->funcs);
	rtd_strmap_free(&pf->stacks);
	rtd_strmap_free(&pf->strs);
	rtd_strmap_free(&pf->cats);
}

/* Before interning what one packet needs: start a new generation when the
 * tables are full, so the packet's own entries fit in the new one. */
static void pf_room(struct tl_pf *pf, size_t need)
{
	if (pf->interned + need > pf->max_interned)
		pf_reset_tables(pf);
}

/* An iid for key in table m; a new one is written to the InternedData
 * being built as message field (name as IID_NAME). */
static uint64_t pf_intern(rtd_timeline *tl, rtd_strmap *m, unsigned field,
			  const char *key, size_t klen, bool *fresh)
{
	struct tl_pf *pf = &tl->pf;
	void *v;
	*fresh = false;
	if (rtd_strmap_get(m, key, klen, &v))
		return (uint64_t)(uintptr_t)v;
	uint64_t iid = pf->next_iid++;
	tl_put(tl, rtd_strmap_put(m, key, klen, (void *)(uintptr_t)iid));
	pf->interned++;
	*fresh = true;
	if (field) {
		size_t mk = pbw_begin(&pf->in, field);
		pbw_uint(&pf->in, IID, iid);
		pbw_bytes(&pf->in, IID_NAME, key, klen);
		pbw_end(&pf->in, mk);
	}
	return iid;
}

/* Whether the cache's slot @h holds @s of table @m */
static inline bool pf_cached(const struct tl_pf *pf, size_t h, const rtd_strmap *m, const char *s)
{
	return pf->cache[h].ptr == s && pf->cache[h].table == m && pf->cache[h].gen == pf->gen &&
	       !strcmp(pf->cache[h].key, s);
}

/* pf_name() past its name's first two slots: its other slots, else the table
 * (and the name cached) */
static uint64_t __attribute__((noinline)) pf_name_miss(rtd_timeline *tl, rtd_strmap *m,
						       unsigned field, const char *s, size_t h)
{
	struct tl_pf *pf = &tl->pf;
	for (size_t w = 2; w < PF_NAME_WAYS; w++)
		if (pf_cached(pf, h ^ w, m, s))
			return pf->cache[h ^ w].iid;
	bool fresh;
	size_t n = strlen(s);
	/* one look-up for a name interned before (the usual miss) */
	rtd_strmap_entry *e = rtd_strmap_find(m, s, n);
	uint64_t iid = e ? (uint64_t)(uintptr_t)e->val
			 : pf_intern(tl, m, field, s, n, &fresh);
	if (!tl->err) {
		if (!e)
			e = rtd_strmap_find(m, s, n);
		if (e) {
			/* the first free or stale of its slots, else each
			 * in turn */
			size_t w = 0;
			while (w < PF_NAME_WAYS && pf->cache[h ^ w].ptr &&
			       pf->cache[h ^ w].gen == pf->gen)
				w++;
			h ^= w < PF_NAME_WAYS ? w : pf->evict++ % PF_NAME_WAYS;
			pf->cache[h].table = m;
			pf->cache[h].ptr = s;
			if (n < sizeof(pf->cache[h].text)) {
				memcpy(pf->cache[h].text, s, n + 1);
				pf->cache[h].key = pf->cache[h].text;
			} else {
				pf->cache[h].key = e->key;
			}
			pf->cache[h].iid = iid;
			pf->cache[h].gen = pf->gen;
		}
	}
	return iid;
}

/* The iid of the name @s in table @m (field: its InternedData field),
 * looked up by the caller's pointer first. Four slots a name: up to
 * four hot names of one hash all stay (a layout's luck: with two, a Go
 * timeline's record path under valgrind missed 110k times in 532k,
 * three function names taking turns in two slots). Inline: the usual
 * name is in its first two. */
static inline uint64_t pf_name(rtd_timeline *tl, rtd_strmap *m, unsigned field, const char *s)
{
	struct tl_pf *pf = &tl->pf;
	size_t h = (size_t)(((uintptr_t)s ^ (uintptr_t)m >> 4) * 0x9E3779B97F4A7C15u >> 32) &
		   (PF_NAME_CACHE - 1);
	if (pf_cached(pf, h, m, s))
		return pf->cache[h].iid;
	if (pf_cached(pf, h ^ 1, m, s))
		return pf->cache[h ^ 1].iid;
	return pf_name_miss(tl, m, field, s, h);
}

/* A generation's first packet: SEQ_INCREMENTAL_STATE_CLEARED, the
 * incremental clock as the default, and a ClockSnapshot tying it to
 * BOOTTIME at pf->clock (where the next delta starts). */
static void pf_clock_packet(rtd_timeline *tl)
{
	struct tl_pf *pf = &tl->pf;
	rtd_pbw *w = &pf->pkt;
	w->b = tl->b;
	w->err = 0;
	size_t pk = pbw_begin(w, TRACE_PACKET);
	pbw_uint(w, PKT_SEQUENCE_ID, SEQUENCE_ID);
	pbw_uint(w, PKT_SEQUENCE_FLAGS,
		 SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	size_t d = pbw_begin(w, PKT_DEFAULTS);
	pbw_uint(w, DEF_TIMESTAMP_CLOCK_ID, CLOCK_DELTA);
	pbw_end(w, d);
	size_t cs = pbw_begin(w, PKT_CLOCK_SNAPSHOT);
	size_t c = pbw_begin(w, CS_CLOCKS);
	pbw_uint(w, CLK_ID, CLOCK_BOOTTIME);
	pbw_uint(w, CLK_TIMESTAMP, pf->clock);
	pbw_end(w, c);
	c = pbw_begin(w, CS_CLOCKS);
	pbw_uint(w, CLK_ID, CLOCK_DELTA);
	pbw_uint(w, CLK_TIMESTAMP, pf->clock);
	pbw_uint(w, CLK_INCREMENTAL, 1);
	pbw_end(w, c);
	pbw_uint(w, CS_PRIMARY_TRACE_CLOCK, CLOCK_BOOTTIME);
	pbw_end(w, cs);
	pbw_end(w, pk);
	tl->b = w->b;
	memset(&w->b, 0, sizeof(w->b));
	tl_put(tl, w->err);
}

/* Write the packet: timestamp, sequence, interned data, and the event or
 * descriptor built in pf->ev as @field. The packet's length is worked out
 * first, so the packet goes straight into the output buffer with one copy
 * of the event. */
static void pf_packet(rtd_timeline *tl, int64_t ts, bool has_ts,
		      unsigned field)
{
	struct tl_pf *pf = &tl->pf;
	tl_put(tl, pf->ev.err);
	tl_put(tl, pf->in.err);
	if (tl->err)
		return;
	if (pf->cleared)
		pf_clock_packet(tl);
	pf->cleared = false;
	/* the time since the last packet's, or (earlier) in full on BOOTTIME */
	uint64_t t = ts < 0 ? 0 : (uint64_t)ts;
	bool absolute = has_ts && t < pf->clock;
	if (has_ts && !absolute) {
		uint64_t d = t - pf->clock;
		pf->clock = t;
		t = d;
	}
	size_t in = pf->in.b.len, ev = pf->ev.b.len;
	unsigned evkey = field << 3 | PB_LEN;
	size_t body = (has_ts ? 1 + pbw_varint_len(t) : 0) + (absolute ? 3 : 0) +
		      2 + 2 + (in ? 1 + pbw_varint_len(in) + in : 0) +
		      pbw_varint_len(evkey) + pbw_varint_len(ev) + ev;
	/* room for all of it at once, then plain stores */
	int err = rtd_buf_reserve(&tl->b, 1 + 10 + body);
	if (err) {
		tl_put(tl, err);
		rtd_buf_reset(&pf->ev.b);
		rtd_buf_reset(&pf->in.b);
		return;
	}
	uint8_t *p = tl->b.data + tl->b.len;
	*p++ = TRACE_PACKET << 3 | PB_LEN;
	p = pbw_put_varint(p, body);
	if (has_ts)
		p = pbw_put_uint(p, PKT_TIMESTAMP, t);
	if (absolute)
		p = pbw_put_uint(p, PKT_TIMESTAMP_CLOCK_ID, CLOCK_BOOTTIME);
	p = pbw_put_uint(p, PKT_SEQUENCE_ID, SEQUENCE_ID);
	p = pbw_put_uint(p, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	if (in)
		p = pbw_put_bytes(p, PKT_INTERNED_DATA, pf->in.b.data, in);
	p = pbw_put_bytes(p, field, pf->ev.b.data, ev);
	tl->b.len = (size_t)(p - tl->b.data);
	*p = 0;
	rtd_buf_reset(&pf->ev.b);
	rtd_buf_reset(&pf->in.b);
}

int pf_track(rtd_timeline *tl, uint64_t id, const struct rtd_track *t)
{
	rtd_pbw *w = &tl->pf.ev;
	const char *name = t->name ? t->name : "";
	pbw_uint(w, TD_UUID, id);
	if (t->parent)
		pbw_uint(w, TD_PARENT_UUID, t->parent);
	size_t m;
	switch (t->kind) {
	case RTD_TRACK_PROCESS:
		m = pbw_begin(w, TD_PROCESS);
		pbw_int(w, PD_PID, t->pid);
		pbw_str(w, PD_PROCESS_NAME, name);
		pbw_end(w, m);
		break;
	case RTD_TRACK_THREAD:
		m = pbw_begin(w, TD_THREAD);
		pbw_int(w, THD_PID, t->pid);
		pbw_int(w, THD_TID, t->tid);
		pbw_str(w, THD_THREAD_NAME, name);
		pbw_end(w, m);
		break;
	case RTD_TRACK_NAMED:
		pbw_str(w, TD_NAME, name);
		break;
	case RTD_TRACK_COUNTER:
		pbw_str(w, TD_NAME, name);
		m = pbw_begin(w, TD_COUNTER);
		if (t->unit && t->unit[0])
			pbw_str(w, CD_UNIT_NAME, t->unit);
		pbw_end(w, m);
		break;
	}
	pf_packet(tl, 0, false, PKT_TRACK_DESCRIPTOR);
	return tl->err;
}

static void pf_annotation(rtd_timeline *tl, const struct rtd_tl_arg *a)
{
	rtd_pbw *w = &tl->pf.ev;
	uint64_t iid = pf_name(tl, &tl->pf.annos, ID_ANNOTATION_NAMES, a->key);
	/* the usual ones, a name and a number (short strings repeat:
	 * function names, reasons; interned), stored at once: under 128
	 * bytes, so the length takes one byte (as pbw_end() writes it) */
	unsigned f = 0;
	uint64_t v = 0;
	switch (a->type) {
	case RTD_TL_STR:
		if (strlen(a->s) <= 128) {
			f = DA_STRING_IID;
			v = pf_name(tl, &tl->pf.strs, ID_ANNOTATION_STRINGS, a->s);
		}
		break;
	case RTD_TL_INT: f = DA_INT; v = (uint64_t)a->i; break;
	case RTD_TL_UINT: f = DA_UINT; v = a->u; break;
	case RTD_TL_BOOL: f = DA_BOOL; v = a->i != 0; break;
	default: break;
	}
	if (f) {
		uint8_t *p = pbw_room(w, 2 + 2 * 12);
		if (!p)
			return;
		*p++ = TE_DEBUG_ANNOTATIONS << 3 | PB_LEN;
		uint8_t *len = p++;
		p = pbw_put_uint(p, DA_NAME_IID, iid);
		p = pbw_put_uint(p, f, v);
		*len = (uint8_t)(p - len - 1);
		pbw_done(w, p);
		return;
	}
	size_t m = pbw_begin(w, TE_DEBUG_ANNOTATIONS);
	pbw_uint(w, DA_NAME_IID, iid);
	switch (a->type) {
	case RTD_TL_STR: pbw_str(w, DA_STRING, a->s); break;
	case RTD_TL_DOUBLE: pbw_double(w, DA_DOUBLE, a->d); break;
	default: pbw_str(w, DA_STRING, "");
	}
	pbw_end(w, m);
}

static void pf_fixed64(rtd_pbw *w, unsigned field, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pbw_key(w, field, PB_I64);
	pbw_raw(w, b, 8);
}

int pf_event(rtd_timeline *tl, enum tl_ev type, const struct rtd_tl_event *e)
{
	struct tl_pf *pf = &tl->pf;
	rtd_pbw *w = &pf->ev;
	pf_room(pf, 2 + 2 * e->nargs);
	unsigned t = type == TL_INSTANT ? TYPE_INSTANT : TYPE_SLICE_BEGIN;
	uint64_t name = pf_name(tl, &pf->names, ID_EVENT_NAMES, e->name);
	uint64_t cat = e->category ? pf_name(tl, &pf->cats, ID_EVENT_CATEGORIES,
					     e->category)
				   : 0;
	uint8_t *p = pbw_room(w, 4 * 12);
	if (p) {
		p = pbw_put_uint(p, TE_TYPE, t);
		p = pbw_put_uint(p, TE_TRACK_UUID, e->track);
		p = pbw_put_uint(p, TE_NAME_IID, name);
		if (e->category)
			p = pbw_put_uint(p, TE_CATEGORY_IIDS, cat);
		pbw_done(w, p);
	}
	for (size_t i = 0; i < e->nargs; i++)
		pf_annotation(tl, &e->args[i]);
	if (e->flow_out)
		pf_fixed64(w, TE_FLOW_IDS, e->flow_out);
	if (e->flow_in)
		pf_fixed64(w, TE_TERMINATING_FLOW_IDS, e->flow_in);
	pf_packet(tl, e->ts, true, PKT_TRACK_EVENT);
	if (type == TL_COMPLETE)
		pf_end(tl, e->track, e->ts + e->dur);
	return tl->err;
}

int pf_end(rtd_timeline *tl, uint64_t track, int64_t ts)
{
	rtd_pbw *w = &tl->pf.ev;
	uint8_t *p = pbw_room(w, 2 * 12);
	if (p) {
		p = pbw_put_uint(p, TE_TYPE, TYPE_SLICE_END);
		p = pbw_put_uint(p, TE_TRACK_UUID, track);
		pbw_done(w, p);
	}
	pf_packet(tl, ts, true, PKT_TRACK_EVENT);
	return tl->err;
}

int pf_counter(rtd_timeline *tl, uint64_t track, int64_t ts, double v)
{
	rtd_pbw *w = &tl->pf.ev;
	pbw_uint(w, TE_TYPE, TYPE_COUNTER);
	pbw_uint(w, TE_TRACK_UUID, track);
	pbw_double(w, TE_DOUBLE_COUNTER_VALUE, v);
	pf_packet(tl, ts, true, PKT_TRACK_EVENT);
	return tl->err;
}

int pf_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
	      const struct rtd_frame *frames, size_t n)
{
	struct tl_pf *pf = &tl->pf;
	pf_room(pf, 2 + 2 * n);
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	char buf[256];
	/* a frame per function name, sharing its iid; root first */
	for (size_t i = 0; i < n; i++) {
		const char *name = tl_frame_name(&frames[n - 1 - i], buf, sizeof(buf));
		bool fresh;
		uint64_t iid = pf_intern(tl, &pf->funcs, ID_FUNCTION_NAMES, name,
					 strlen(name), &fresh);
		if (fresh) {
			size_t m = pbw_begin(&pf->in, ID_FRAMES);
			pbw_uint(&pf->in, IID, iid);
			pbw_uint(&pf->in, FRAME_FUNCTION_NAME_ID, iid);
			pbw_end(&pf->in, m);
		}
		ids[i] = iid;
	}
	bool fresh;
	uint64_t cs = pf_intern(tl, &pf->stacks, 0, (const char *)ids,
				n * sizeof(*ids), &fresh);
	if (fresh) {
		size_t m = pbw_begin(&pf->in, ID_CALLSTACKS);
		pbw_uint(&pf->in, IID, cs);
		for (size_t i = 0; i < n; i++)
			pbw_uint(&pf->in, CALLSTACK_FRAME_IDS, ids[i]);
		pbw_end(&pf->in, m);
	}
	free(ids);
	rtd_pbw *w = &pf->ev;
	pbw_uint(w, TE_TYPE, TYPE_INSTANT);
	pbw_uint(w, TE_TRACK_UUID, track);
	pbw_uint(w, TE_NAME_IID, pf_name(tl, &pf->names, ID_EVENT_NAMES, "sample"));
	pbw_uint(w, TE_CALLSTACK_IID, cs);
	pf_packet(tl, ts, true, PKT_TRACK_EVENT);
	return tl->err;
}

int pf_finish(rtd_timeline *tl)
{
	(void)tl;
	return 0;
}
