/* SPDX-License-Identifier: MIT */
/*
 * decoder.c - EventPipe stream framing: the stream header, FastSerialization
 * objects (NetPerf V3, NetTrace V4/V5) or V6 blocks, and the blocks'
 * contents (events, metadata, stacks, sequence points, threads, labels).
 *
 * Streaming: rtd_nettrace_feed() parses complete units (one object or
 * block) straight from the caller's bytes; an incomplete unit is copied
 * into dec->in and completed by later calls. A unit's parser reports how
 * many bytes it needs in total, so a one-byte-at-a-time feed re-parses
 * only the few header bytes, never the block body.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/log.h"
#include "nettrace/nt.h"
#include "rtdiag/source.h"

enum {
	ST_HEADER = 0, /* stream header */
	ST_OBJECTS,    /* FastSerialization objects (V3-V5) */
	ST_BLOCKS,     /* V6 blocks */
	ST_EVENTS12,   /* NetPerf V1/V2: events inside the EventPipeFile object */
	ST_DONE,       /* end marker seen */
};

/* FastSerialization tags (NetTraceFormat_v5.md "Objects"). */
enum {
	TAG_NULL = 1,
	TAG_BEGIN_OBJECT = 4, /* NetPerf */
	TAG_BEGIN_PRIVATE = 5,
	TAG_END_OBJECT = 6,
};

/* V6 block kinds (NetTraceFormat.md "Blocks"). */
enum {
	BK_END = 0,
	BK_TRACE = 1,
	BK_EVENT = 2,
	BK_METADATA = 3,
	BK_SP = 4,
	BK_STACK = 5,
	BK_THREAD = 6,
	BK_REMOVE_THREAD = 7,
	BK_LABELS = 8,
};

static const char FS_MAGIC[] = "!FastSerialization.1";

int nt_fail(rtd_nettrace *dec, int err, uint64_t off, const char *fmt, ...)
{
	if (dec->err)
		return dec->err;
	va_list ap;
	va_start(ap, fmt);
	dec->err = rtd_verrf_at(dec->errmsg, sizeof(dec->errmsg), err, "offset",
				off, fmt, ap);
	va_end(ap);
	dec->err_off = off;
	return err;
}

/* ---- lifetime -------------------------------------------------------- */

rtd_nettrace *rtd_nettrace_new(const struct rtd_nettrace_opts *opts)
{
	rtd_nettrace *dec = calloc(1, sizeof(*dec));
	if (!dec)
		return NULL;
	if (rtd_opts_copy(&dec->o, sizeof(dec->o), opts,
			  RTD_OPTS_END(rtd_nettrace_opts, max_lent_bytes))) {
		free(dec);
		return NULL;
	}
	if (!dec->o.max_block)
		dec->o.max_block = NT_CAP_BLOCK_DEFAULT;
	if (!dec->o.max_metadata)
		dec->o.max_metadata = NT_CAP_METADATA_DEFAULT;
	if (!dec->o.max_stack_bytes)
		dec->o.max_stack_bytes = NT_CAP_STACK_BYTES_DEFAULT;
	/* an incomplete unit is at most one block plus its framing */
	rtd_buf_init(&dec->in, dec->o.max_block + 4096);
	rtd_map_init(&dec->meta, dec->o.max_metadata);
	rtd_map_init(&dec->threads, NT_CAP_THREADS);
	rtd_map_init(&dec->v6threads, NT_CAP_THREADS);
	rtd_buf_init(&dec->sbuf, RTD_CAP_STRING);
	rtd_buf_init(&dec->fbuf, RTD_CAP_LINE * 16);
	rtd_buf_init(&dec->gbuf, RTD_CAP_STRING);
	rtd_arena_init(&dec->lent,
		       dec->o.max_lent_bytes ? dec->o.max_lent_bytes : NT_CAP_LENT_BYTES);
	rtd_buf_init(&dec->nbuf, RTD_CAP_LINE * 16);
	if (!dec->o.max_sort_bytes)
		dec->o.max_sort_bytes = NT_CAP_SORT_DEFAULT;
	rtd_buf_init(&dec->sarena, dec->o.max_sort_bytes);
	rtd_buf_init(&dec->stack_text, dec->o.max_stack_bytes * 3);
	return dec;
}

static void free_meta_all(rtd_nettrace *dec)
{
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&dec->meta, &it, &k, &v))
		nt_meta_free(v);
	rtd_map_clear(&dec->meta);
	dec->meta_bytes = 0;
	dec->last_meta = NULL;
}

void rtd_nettrace_free(rtd_nettrace *dec)
{
	if (!dec)
		return;
	free_meta_all(dec);
	rtd_map_free(&dec->meta);
	rtd_map_free_vals(&dec->threads);
	rtd_map_free(&dec->v6threads);
	rtd_buf_free(&dec->in);
	rtd_buf_free(&dec->sbuf);
	rtd_buf_free(&dec->fbuf);
	rtd_buf_free(&dec->gbuf);
	rtd_arena_free(&dec->lent);
	rtd_buf_free(&dec->nbuf);
	rtd_buf_free(&dec->sarena);
	rtd_buf_free(&dec->stack_text);
	free(dec->stack_text_at);
	free(dec->held_base);
	free(dec->held_tmp);
	free(dec->frames);
	free(dec->stacks);
	free(dec->scratch);
	free(dec->labels);
	free(dec);
}

const char *rtd_nettrace_error(const rtd_nettrace *dec, uint64_t *offset)
{
	if (offset)
		*offset = dec->err ? dec->err_off : 0;
	return dec->err ? dec->errmsg : "";
}

const struct rtd_nettrace_info *rtd_nettrace_info(const rtd_nettrace *dec)
{
	return dec->have_info ? &dec->info : NULL;
}

void rtd_nettrace_stats(const rtd_nettrace *dec, struct rtd_nettrace_stats *out)
{
	*out = dec->st;
}

void rtd_nettrace_drops(const rtd_nettrace *dec, rtd_nettrace_drop_fn fn,
			void *ctx)
{
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&dec->threads, &it, &k, &v)) {
		struct nt_thread *t = v;
		if (t->dropped)
			fn(ctx, t->id, t->dropped);
	}
}

/* ---- sequence numbers and drops --------------------------------------- */

static struct nt_thread *thread_lookup(rtd_nettrace *dec, uint64_t id,
				       int *err)
{
	void *v;
	if (rtd_map_get(&dec->threads, id, &v)) {
		dec->last_thread = v;
		return v;
	}
	struct nt_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->id = id;
	int rc = rtd_map_put(&dec->threads, id, t, NULL);
	if (rc) {
		free(t);
		*err = rc;
		return NULL;
	}
	dec->last_thread = t;
	return t;
}

/* Events come in runs per thread: the last one is kept at hand. */
static inline struct nt_thread *thread_get(rtd_nettrace *dec, uint64_t id,
					   int *err)
{
	if (dec->last_thread && dec->last_thread->id == id)
		return dec->last_thread;
	return thread_lookup(dec, id, err);
}

/* An event's sequence number: a gap on its capture thread is drops
 * (NetTraceFormat.md "Event Sequence Numbers"); arithmetic wraps at 32
 * bits. A number that goes backwards is a recycled thread id, not drops. */
static inline int seq_event(rtd_nettrace *dec, uint64_t tid, uint32_t seq)
{
	int err = 0;
	struct nt_thread *t = thread_get(dec, tid, &err);
	if (!t)
		return err;
	if (t->have_seq) {
		uint32_t gap = seq - (t->last_seq + 1);
		if (gap != 0 && gap < 0x80000000u) {
			t->dropped += gap;
			dec->st.dropped += gap;
		}
	}
	t->last_seq = seq;
	t->have_seq = true;
	return 0;
}

/* A sequence point's lower bound for a thread's last sequence number. */
static int seq_point(rtd_nettrace *dec, uint64_t tid, uint32_t seq)
{
	int err = 0;
	struct nt_thread *t = thread_get(dec, tid, &err);
	if (!t)
		return err;
	if (t->have_seq) {
		uint32_t gap = seq - t->last_seq;
		if (gap != 0 && gap < 0x80000000u) {
			t->dropped += gap;
			dec->st.dropped += gap;
			t->last_seq = seq;
		}
	} else {
		t->last_seq = seq;
		t->have_seq = true;
	}
	return 0;
}

/* ---- stacks ---------------------------------------------------------- */

static void stacks_reset(rtd_nettrace *dec)
{
	dec->stack_text.len = 0;
	if (dec->stack_text_at)
		memset(dec->stack_text_at, 0,
		       dec->stack_text_cap * sizeof(*dec->stack_text_at));
	dec->nstacks = 0;
	dec->nframes_used = 0;
	dec->stack_base = 0;
	dec->nlabels = 0;
	dec->label_base = 0;
}

static int frames_reserve(rtd_nettrace *dec, size_t n, uint64_t off)
{
	if (n > dec->frames_cap - dec->nframes_used) {
		size_t need = dec->nframes_used + n;
		if (need > dec->o.max_stack_bytes / 8)
			return nt_fail(dec, -RTD_E_CAP, off,
				       "stacks since the last sequence point "
				       "exceed %zu bytes",
				       dec->o.max_stack_bytes);
		size_t ncap = dec->frames_cap ? dec->frames_cap : 4096;
		while (ncap < need)
			ncap *= 2;
		uint64_t *nf = realloc(dec->frames, ncap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		dec->frames = nf;
		dec->frames_cap = ncap;
	}
	return 0;
}

/* Read n stack bytes as return addresses into frames[] at its end. */
static void read_ips(rtd_nettrace *dec, const uint8_t *p, size_t nbytes,
		     uint64_t *dst)
{
	size_t psz = dec->info.pointer_size;
	size_t n = nbytes / psz;
	for (size_t i = 0; i < n; i++) {
		rtd_rd r;
		rd_init(&r, p + i * psz, psz);
		dst[i] = psz == 8 ? rd_u64le(&r) : rd_u32le(&r);
	}
}

/* Stack block body (V4-V6): FirstId, Count, then Count sized stacks. */
static int stack_block(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	uint32_t first = rd_u32le(r);
	uint32_t count = rd_u32le(r);
	if (!rd_ok(r))
		return nt_fail(dec, -RTD_E_NT_STACK, nt_off(dec, r, base),
			       "stack block header truncated");
	if (dec->nstacks == 0)
		dec->stack_base = first;
	if (first < dec->stack_base)
		return nt_fail(dec, -RTD_E_NT_STACK, nt_off(dec, r, base),
			       "stack id %u goes back before %u without a "
			       "sequence point", first, dec->stack_base);
	/* ids between the stacks known and this block get empty entries */
	uint64_t end = (uint64_t)first + count;
	uint64_t want = end - dec->stack_base;
	if (want > dec->o.max_stack_bytes / 16)
		return nt_fail(dec, -RTD_E_CAP, nt_off(dec, r, base),
			       "stack ids %u..%llu: too many stacks since the "
			       "last sequence point", first,
			       (unsigned long long)end);
	if (want > dec->stacks_cap) {
		size_t ncap = dec->stacks_cap ? dec->stacks_cap : 1024;
		while (ncap < want)
			ncap *= 2;
		struct nt_stack_ent *ns = realloc(dec->stacks, ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		dec->stacks = ns;
		dec->stacks_cap = ncap;
	}
	while (dec->nstacks < want) {
		dec->stacks[dec->nstacks].start = 0;
		dec->stacks[dec->nstacks].n = 0;
		dec->nstacks++;
	}
	size_t psz = dec->info.pointer_size;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t soff = nt_off(dec, r, base);
		uint32_t size = rd_u32le(r);
		const uint8_t *p;
		if (!rd_bytes(r, size, &p))
			return nt_fail(dec, -RTD_E_NT_STACK, soff,
				       "stack %u of %u (%u bytes) runs past "
				       "the block end", i, count, size);
		if (size % psz)
			return nt_fail(dec, -RTD_E_NT_STACK, soff,
				       "stack size %u is not a multiple of the "
				       "pointer size %zu", size, psz);
		size_t n = size / psz;
		int err = frames_reserve(dec, n, soff);
		if (err)
			return err;
		if (n)
			read_ips(dec, p, size, dec->frames + dec->nframes_used);
		struct nt_stack_ent *e = &dec->stacks[first + i - dec->stack_base];
		e->start = (uint32_t)dec->nframes_used;
		e->n = (uint32_t)n;
		dec->nframes_used += n;
		dec->st.stacks++;
	}
	return 0;
}

static void stack_lookup(const rtd_nettrace *dec, uint32_t id,
			 struct rtd_nettrace_event *ev)
{
	ev->stack = NULL;
	ev->nframes = 0;
	if (id == 0 || id < dec->stack_base)
		return;
	uint64_t i = (uint64_t)id - dec->stack_base;
	if (i >= dec->nstacks || dec->stacks[i].n == 0)
		return;
	ev->stack = dec->frames + dec->stacks[i].start;
	ev->nframes = dec->stacks[i].n;
}

/* ---- metadata -------------------------------------------------------- */

static int meta_add(rtd_nettrace *dec, struct nt_meta *m, uint64_t off)
{
	void *old = NULL;
	if (m->pub.id == 0) {
		free(m);
		return nt_fail(dec, -RTD_E_NT_METADATA, off,
			       "metadata defines id 0");
	}
	int err = rtd_map_put(&dec->meta, m->pub.id, m, &old);
	if (err) {
		free(m);
		if (err == -RTD_E_CAP)
			return nt_fail(dec, err, off,
				       "more than %zu event types",
				       dec->o.max_metadata);
		return err;
	}
	if (old) {
		/* a redefinition replaces the old record; keep its counts */
		struct nt_meta *o = old;
		m->seen += o->seen;
		m->bytes += o->bytes;
		if (dec->last_meta == o)
			dec->last_meta = NULL;
		dec->meta_bytes -= o->alloc;
		nt_meta_free(o);
	}
	dec->meta_bytes += m->alloc;
	dec->st.metadata++;
	if (dec->o.on_metadata && (err = dec->o.on_metadata(dec->o.ctx, &m->pub)))
		return err;
	m->skip = dec->o.want && !dec->o.want(dec->o.ctx, &m->pub);
	return 0;
}

static struct nt_meta *meta_get(rtd_nettrace *dec, uint32_t id)
{
	if (dec->last_meta && dec->last_meta->pub.id == id)
		return dec->last_meta;
	void *v;
	if (!rtd_map_get(&dec->meta, id, &v))
		return NULL;
	dec->last_meta = v;
	return v;
}

/* ---- time-ordered delivery ------------------------------------------- */

/*
 * With opts.sort every event is copied (header and payload) into the sort
 * arena and held. An event with the IsSorted flag proves that nothing
 * later in the stream is earlier than it, so everything held up to its
 * time can go; a sequence point, the stream's end or an error releases
 * all. Stacks are looked up again when an event is released: the stack
 * table lives until the next sequence point, which releases first.
 * A sorted event that finds nothing held goes straight through (hold()
 * returns 1), and held events that came in time order are not sorted
 * again: what is released, and in what order, stays the same.
 */
static int hold(rtd_nettrace *dec, const struct rtd_nettrace_event *ev,
		uint64_t off)
{
	/* the payload stays where it is when the caller keeps its input
	 * (not when it lies in our buffer of an incomplete unit) */
	bool in_place = dec->o.stable_input &&
			!(dec->in.data && ev->payload >= dec->in.data &&
			  ev->payload < dec->in.data + dec->in.cap);
	size_t need = sizeof(*ev) + (in_place ? 0 : ev->payload_len);
	size_t at = (dec->sarena.len + 15) & ~(size_t)15;
	if (at - dec->sarena.len + need > dec->sarena.max - dec->sarena.len)
		return nt_fail(dec, -RTD_E_CAP, off,
			       "events held for sorting exceed %zu bytes (no "
			       "sequence point or sorted event for too long; "
			       "use stream order)", dec->o.max_sort_bytes);
	/* nothing held and nothing later earlier than this one: holding
	 * it and releasing up to its time would hand it straight over */
	if (ev->sorted && dec->nheld == 0 && !dec->flushing)
		return 1;
	int err = rtd_buf_reserve(&dec->sarena, at - dec->sarena.len + need);
	if (err)
		return err;
	dec->sarena.len = at;
	uint8_t *d = dec->sarena.data + at;
	memcpy(d, ev, sizeof(*ev));
	if (!in_place && ev->payload_len)
		memcpy(d + sizeof(*ev), ev->payload, ev->payload_len);
	dec->sarena.len += need;
	if (dec->held != dec->held_base &&
	    (size_t)(dec->held - dec->held_base) + dec->nheld == dec->held_cap) {
		/* the released ones' room, at the end of the array only: each
		 * held event is moved at most once per fill of it */
		memmove(dec->held_base, dec->held, dec->nheld * sizeof(*dec->held));
		dec->held = dec->held_base;
	}
	if (dec->nheld == dec->held_cap) {
		/* the held events and their sort scratch grow together */
		size_t cap = dec->held_cap, tcap = dec->held_cap;
		struct nt_held *nh = rtd_grow(dec->held_base, &cap, dec->nheld + 1,
					      sizeof(*nh), 4096);
		if (!nh)
			return -ENOMEM;
		dec->held = dec->held_base = nh;
		nh = rtd_grow(dec->held_tmp, &tcap, dec->nheld + 1, sizeof(*nh),
			      4096);
		if (!nh)
			return -ENOMEM;
		dec->held_tmp = nh;
		dec->held_cap = cap;
	}
	struct nt_held *h = &dec->held[dec->nheld];
	h->ts = ev->timestamp;
	h->seq = dec->held_seq++;
	h->off = at;
	h->in_place = in_place;
	/* still sorted when it comes no earlier than the last one (it is
	 * the latest to arrive): a stream in time order is never sorted */
	if (dec->held_sorted == dec->nheld &&
	    (dec->nheld == 0 || h->ts >= h[-1].ts))
		dec->held_sorted++;
	dec->nheld++;
	return 0;
}

static inline bool held_before(const struct nt_held *a,
			       const struct nt_held *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/*
 * Sort held[] by (time, arrival). Events come in per-thread runs that are
 * already in time order, so this merges the runs it finds (a natural
 * merge sort): O(n log runs), O(n) when they are few.
 */
static void sort_held(rtd_nettrace *dec)
{
	size_t n = dec->nheld;
	struct nt_held *a = dec->held, *t = dec->held_tmp;
	if (n < 2)
		return;
	for (;;) {
		size_t runs = 0, i = 0, o = 0;
		while (i < n) {
			size_t j = i + 1;
			while (j < n && !held_before(&a[j], &a[j - 1]))
				j++;
			size_t k = j;
			if (k < n) {
				k++;
				while (k < n && !held_before(&a[k], &a[k - 1]))
					k++;
			}
			/* merge a[i..j) and a[j..k) into t[o..) */
			size_t x = i, y = j;
			while (x < j && y < k)
				t[o++] = held_before(&a[y], &a[x]) ? a[y++]
								  : a[x++];
			while (x < j)
				t[o++] = a[x++];
			while (y < k)
				t[o++] = a[y++];
			runs++;
			i = k;
		}
		struct nt_held *sw = a;
		a = t;
		t = sw;
		if (runs <= 1)
			break;
	}
	if (a != dec->held) {
		memcpy(dec->held, a, n * sizeof(*a));
	}
}

/* on_event: its RTD_NT_PAUSE asks the feed to stop after this event,
 * honoured where the decoder can go on later from the event after it (a
 * block's loop in stream order, not a sort's release nor the salvage of a
 * cut block at the end); elsewhere it means go on. */
static int event_cb(rtd_nettrace *dec, const struct rtd_nettrace_event *ev)
{
	int rc = dec->o.on_event(dec->o.ctx, ev);
	if (rc != RTD_NT_PAUSE)
		return rc;
	if (!dec->salvage && !dec->finishing && !dec->flushing &&
	    !(dec->o.sort && dec->format >= 4))
		dec->pause_req = true;
	return 0;
}

/* Deliver the held events up to time `upto` (all with `all`), in order. */
static int flush_held(rtd_nettrace *dec, uint64_t upto, bool all)
{
	if (dec->nheld == 0 || dec->flushing)
		return 0;
	dec->flushing = true;
	if (dec->held_sorted < dec->nheld)
		sort_held(dec);
	dec->held_sorted = dec->nheld;
	size_t i = 0;
	int err = 0;
	for (; i < dec->nheld; i++) {
		const struct nt_held *h = &dec->held[i];
		if (!all && h->ts > upto)
			break;
		/* the held copy itself is handed over (16-aligned in the
		 * arena): no second copy per event */
		uint8_t *rec = dec->sarena.data + h->off;
		struct rtd_nettrace_event *ev = (void *)rec;
		if (!h->in_place)
			ev->payload = rec + sizeof(*ev);
		stack_lookup(dec, ev->stack_id, ev);
		if (dec->o.on_event && !err)
			err = event_cb(dec, ev);
		if (err) {
			i++;
			break;
		}
	}
	size_t rest = dec->nheld - i;
	if (rest == 0) {
		dec->sarena.len = 0;
		dec->held = dec->held_base;
	} else if (i > 0) {
		/* keep the rest, still sorted (moved down when room is needed) */
		dec->held += i;
		if (dec->sarena.len > dec->o.max_sort_bytes / 2) {
			size_t at = 0;
			for (size_t k = 0; k < rest; k++) {
				struct nt_held *h = &dec->held[k];
				const uint8_t *rec = dec->sarena.data + h->off;
				struct rtd_nettrace_event e;
				memcpy(&e, rec, sizeof(e));
				size_t sz = sizeof(e) +
					    (h->in_place ? 0 : e.payload_len);
				if (h->off != at)
					memmove(dec->sarena.data + at, rec, sz);
				h->off = at;
				at = (at + sz + 15) & ~(size_t)15;
			}
			dec->sarena.len = at;
		}
	}
	dec->nheld = rest;
	dec->held_sorted = rest;
	dec->flushing = false;
	return err;
}

/* ---- events ---------------------------------------------------------- */

static inline __attribute__((always_inline)) int
deliver(rtd_nettrace *dec, struct nt_hdr *h, const uint8_t *payload,
		   uint64_t ev_off, const uint64_t *inline_stack,
		   size_t inline_n)
{
	struct nt_meta *m = meta_get(dec, h->meta_id);
	if (!m)
		return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
			       "event refers to metadata id %u, which the "
			       "stream never defined", h->meta_id);
	struct rtd_nettrace_event *ev = &h->ev;
	ev->meta = &m->pub;
	ev->payload = payload;
	ev->offset = ev_off;
	if (dec->format <= 3) {
		ev->stack = inline_n ? inline_stack : NULL;
		ev->nframes = inline_n;
	} else {
		stack_lookup(dec, ev->stack_id, ev);
	}
	if (dec->format == 6) {
		void *v;
		ev->thread_id = h->tid;
		ev->capture_thread_id = h->cap_tid;
		if (rtd_map_get(&dec->v6threads, h->tid, &v) && v)
			ev->thread_id = (uint64_t)(uintptr_t)v - 1;
		if (h->cap_tid == h->tid)
			ev->capture_thread_id = ev->thread_id;
		else if (rtd_map_get(&dec->v6threads, h->cap_tid, &v) && v)
			ev->capture_thread_id = (uint64_t)(uintptr_t)v - 1;
		memset(ev->activity_id, 0, 16);
		memset(ev->related_activity_id, 0, 16);
		if (h->label_id && h->label_id >= dec->label_base &&
		    h->label_id - dec->label_base < dec->nlabels) {
			const struct nt_label *l =
				&dec->labels[h->label_id - dec->label_base];
			memcpy(ev->activity_id, l->activity, 16);
			memcpy(ev->related_activity_id, l->related, 16);
		}
	}
	if (dec->format >= 4) {
		/* drops are tracked per capture thread (V6: its index) */
		int err = seq_event(dec, dec->format == 6 ? h->cap_tid
							  : ev->capture_thread_id,
				    ev->sequence);
		if (err)
			return err;
	}
	m->seen++;
	m->bytes += ev->payload_len;
	dec->st.events++;
	if (dec->o.on_arrival) {
		int err = dec->o.on_arrival(dec->o.ctx, ev);
		if (err)
			return err;
	}
	if (m->skip) /* what it proves of the order still releases the held */
		return dec->o.sort && dec->format >= 4 && ev->sorted
			       ? flush_held(dec, ev->timestamp, false)
			       : 0;
	if (dec->o.sort && dec->format >= 4) {
		int err = hold(dec, ev, ev_off);
		if (err == 1)
			return dec->o.on_event ? event_cb(dec, ev) : 0;
		if (err || !ev->sorted)
			return err;
		/* nothing later in the stream is earlier than this event */
		return flush_held(dec, ev->timestamp, false);
	}
	if (dec->o.on_event)
		return event_cb(dec, ev);
	return 0;
}

static void read_guid(rtd_rd *r, uint8_t out[16])
{
	if (!rd_copy(r, out, 16))
		memset(out, 0, 16);
}

/* on_event paused inside a block: where its loop goes on (the block is
 * stepped again, whole, when the feed resumes) */
static int pause_block(rtd_nettrace *dec, const rtd_rd *r, const struct nt_hdr *h)
{
	dec->in_block = true;
	dec->block_at = (size_t)(r->p - r->start);
	if (h)
		dec->block_h = *h;
	return NT_PAUSED_BLOCK;
}

/*
 * Event and metadata blocks of V4-V6 (NetTraceFormat_v5.md "EventBlock",
 * "Event blobs"). In V4/V5 a metadata block has the same layout, its
 * events' payloads being metadata records.
 */
static int event_block(rtd_nettrace *dec, rtd_rd *r, uint64_t base,
		       bool is_meta)
{
	uint64_t boff = nt_off(dec, r, base);
	uint16_t hsize = rd_u16le(r);
	uint16_t flags = rd_u16le(r);
	bool hok = rd_ok(r) && hsize >= 4 && rd_skip(r, hsize - 4u);
	if (!hok && dec->salvage && r->err == -RTD_E_TRUNCATED)
		return NT_CUT;
	if (!hok)
		return nt_fail(dec, -RTD_E_NT_BLOCK, boff,
			       "%s block header truncated (header size %u)",
			       is_meta ? "metadata" : "event", hsize);
	bool compressed = flags & 1;
	bool v6 = dec->format >= 6;
	struct nt_hdr h;
	memset(&h, 0, sizeof(h));
	if (dec->in_block && !is_meta) {
		/* resumed after a pause: on from the event after it */
		dec->in_block = false;
		h = dec->block_h;
		rd_skip(r, dec->block_at - (size_t)(r->p - r->start));
	}
	while (rd_left(r) > 0) {
		uint64_t ev_off = nt_off(dec, r, base);
		const uint8_t *payload;
		/* the headers are a few hundred bytes apart (rundown events
		 * carry ~270 bytes of names), too far for the hardware to
		 * guess: ask for the lines two events on early. A prefetch
		 * never faults; the address is formed as an integer, not as
		 * a pointer past the block. */
		uintptr_t ahead = (uintptr_t)r->p + 512;
		__builtin_prefetch((const void *)ahead);
		__builtin_prefetch((const void *)(ahead + 64));
		if (compressed) {
			uint8_t f = rd_u8(r);
			if (f & 1)
				h.meta_id = rd_varuint32(r);
			if (f & 2) {
				h.ev.sequence += rd_varuint32(r);
				if (v6)
					h.cap_tid = rd_varuint(r);
				else
					h.ev.capture_thread_id = rd_varuint(r);
				h.ev.proc_number = rd_varuint32(r);
			}
			if (h.meta_id != 0)
				h.ev.sequence++;
			if ((f & 4) && v6)
				h.tid = rd_varuint(r);
			else if (f & 4)
				h.ev.thread_id = rd_varuint(r);
			if (f & 8)
				h.ev.stack_id = rd_varuint32(r);
			h.ev.timestamp += rd_varuint(r);
			if (v6) {
				if (f & 16)
					h.label_id = rd_varuint32(r);
			} else {
				if (f & 16)
					read_guid(r, h.ev.activity_id);
				if (f & 32)
					read_guid(r, h.ev.related_activity_id);
			}
			h.ev.sorted = f & 64;
			if (f & 128)
				h.ev.payload_len = rd_varuint32(r);
			if (!rd_ok(r) && dec->salvage)
				return NT_CUT;
			if (!rd_ok(r))
				return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
					       "compressed event header runs "
					       "past the block end");
			bool got = rd_bytes(r, h.ev.payload_len, &payload);
			if (!got && dec->salvage)
				return NT_CUT;
			if (!got)
				return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
					       "event payload of %u bytes runs "
					       "past the block end",
					       (unsigned)h.ev.payload_len);
		} else {
			uint32_t size = rd_u32le(r);
			rtd_rd e;
			if (!rd_ok(r) || !rd_sub(r, size, &e)) {
				if (dec->salvage)
					return NT_CUT;
				return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
					       "event of %u bytes runs past the "
					       "block end", size);
			}
			uint32_t mid = rd_u32le(&e);
			/* the high bit set means NOT sorted (shared
			 * reference README) */
			h.ev.sorted = !(mid & 0x80000000u);
			h.meta_id = mid & 0x7fffffffu;
			h.ev.sequence = rd_u32le(&e);
			h.tid = rd_u64le(&e);
			h.cap_tid = rd_u64le(&e);
			h.ev.thread_id = h.tid;
			h.ev.capture_thread_id = h.cap_tid;
			h.ev.proc_number = rd_u32le(&e);
			h.ev.stack_id = rd_u32le(&e);
			h.ev.timestamp = rd_u64le(&e);
			if (v6) {
				h.label_id = rd_u32le(&e);
			} else {
				read_guid(&e, h.ev.activity_id);
				read_guid(&e, h.ev.related_activity_id);
			}
			h.ev.payload_len = rd_u32le(&e);
			if (!rd_bytes(&e, h.ev.payload_len, &payload))
				return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
					       "event header or payload (%u "
					       "bytes) runs past the event's "
					       "%u bytes", (unsigned)h.ev.payload_len,
					       size);
			/* zero padding to a 4-byte stream offset (the
			 * block body starts 4-aligned) */
			if (!v6) {
				size_t pad = (4 - rd_off(r) % 4) % 4;
				rd_skip(r, pad < rd_left(r) ? pad : rd_left(r));
			}
		}
		if (is_meta) {
			rtd_rd mr;
			rd_init(&mr, payload, h.ev.payload_len);
			struct nt_meta *m = NULL;
			int err = nt_meta_parse_v5(
				dec, &mr, dec->format,
				base + (uint64_t)(payload - r->start), &m);
			if (err)
				return err;
			err = meta_add(dec, m, ev_off);
			if (err)
				return err;
		} else {
			int err = deliver(dec, &h, payload, ev_off, NULL, 0);
			if (err)
				return err;
			if (dec->pause_req && rd_left(r) > 0)
				return pause_block(dec, r, &h);
		}
	}
	dec->st.blocks++;
	return 0;
}

/* An inline stack (NetPerf): its frames into dec->scratch. */
static int v3_stack(rtd_nettrace *dec, const uint8_t *sp, uint32_t ssize,
		    uint64_t ev_off, size_t *nout)
{
	size_t psz = dec->info.pointer_size;
	if (ssize % psz)
		return nt_fail(dec, -RTD_E_NT_STACK, ev_off,
			       "stack size %u is not a multiple of the "
			       "pointer size %zu", ssize, psz);
	size_t n = ssize / psz;
	if (n > NT_CAP_STACK_FRAMES)
		return nt_fail(dec, -RTD_E_CAP, ev_off,
			       "stack of %zu frames exceeds the cap %u", n,
			       NT_CAP_STACK_FRAMES);
	if (n > dec->scratch_cap) {
		uint64_t *ns = realloc(dec->scratch, n * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		dec->scratch = ns;
		dec->scratch_cap = n;
	}
	read_ips(dec, sp, n * psz, dec->scratch);
	if (n)
		dec->st.stacks++;
	*nout = n;
	return 0;
}

/* NetPerf V3 event block: events with inline metadata and stacks. */
static int event_block_v3(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	if (dec->in_block) {
		/* resumed after a pause: on from the event after it */
		dec->in_block = false;
		rd_skip(r, dec->block_at - (size_t)(r->p - r->start));
	}
	while (rd_left(r) > 0) {
		uint64_t ev_off = nt_off(dec, r, base);
		uint32_t size = rd_u32le(r);
		rtd_rd e;
		if (!rd_ok(r) || !rd_sub(r, size, &e)) {
			if (dec->salvage)
				return NT_CUT;
			return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
				       "event of %u bytes runs past the block "
				       "end", size);
		}
		struct nt_hdr h;
		memset(&h, 0, sizeof(h));
		h.meta_id = rd_u32le(&e);
		h.ev.thread_id = rd_u32le(&e);
		h.ev.capture_thread_id = h.ev.thread_id;
		h.ev.proc_number = 0xffffffffu;
		h.ev.timestamp = rd_u64le(&e);
		read_guid(&e, h.ev.activity_id);
		read_guid(&e, h.ev.related_activity_id);
		h.ev.payload_len = rd_u32le(&e);
		h.ev.sorted = true;
		const uint8_t *payload;
		if (!rd_bytes(&e, h.ev.payload_len, &payload))
			return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
				       "event payload of %u bytes runs past "
				       "the event's %u bytes", (unsigned)h.ev.payload_len,
				       size);
		uint32_t ssize = rd_u32le(&e);
		const uint8_t *sp;
		if (!rd_bytes(&e, ssize, &sp))
			return nt_fail(dec, -RTD_E_NT_EVENT, ev_off,
				       "event stack of %u bytes runs past the "
				       "event's %u bytes", ssize, size);
		size_t n;
		int err = v3_stack(dec, sp, ssize, ev_off, &n);
		if (err)
			return err;
		if (h.meta_id == 0) {
			rtd_rd mr;
			rd_init(&mr, payload, h.ev.payload_len);
			struct nt_meta *m = NULL;
			err = nt_meta_parse_v5(
				dec, &mr, 3, base + (uint64_t)(payload - r->start),
				&m);
			if (err)
				return err;
			err = meta_add(dec, m, ev_off);
		} else {
			err = deliver(dec, &h, payload, ev_off, dec->scratch, n);
		}
		if (err)
			return err;
		if (dec->pause_req && rd_left(r) > 0)
			return pause_block(dec, r, NULL);
	}
	dec->st.blocks++;
	return 0;
}

static int seqpoint_done(rtd_nettrace *dec, uint64_t ts)
{
	stacks_reset(dec);
	dec->st.seqpoints++;
	dec->st.blocks++;
	if (dec->o.on_seqpoint)
		return dec->o.on_seqpoint(dec->o.ctx, ts);
	return 0;
}

/* V4/V5 sequence point: time, then (thread id, sequence) pairs. */
static int sp_block(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	int ferr = flush_held(dec, 0, true);
	if (ferr)
		return ferr;
	uint64_t ts = rd_u64le(r);
	uint32_t n = rd_u32le(r);
	if (!rd_ok(r) || n > rd_left(r) / 12)
		return nt_fail(dec, -RTD_E_NT_BLOCK, base,
			       "sequence point block: %u threads do not fit "
			       "in the block", n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t tid = rd_u64le(r);
		uint32_t seq = rd_u32le(r);
		int err = seq_point(dec, tid, seq);
		if (err)
			return err;
	}
	return seqpoint_done(dec, ts);
}

/* V6 sequence point: time, flags, then varint (thread index, sequence). */
static int sp_block_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	int ferr = flush_held(dec, 0, true);
	if (ferr)
		return ferr;
	uint64_t ts = rd_u64le(r);
	uint32_t flags = rd_u32le(r);
	uint32_t n = rd_u32le(r);
	if (!rd_ok(r) || n > rd_left(r) / 2)
		return nt_fail(dec, -RTD_E_NT_BLOCK, base,
			       "sequence point block: %u threads do not fit "
			       "in the block", n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t idx = rd_varuint(r);
		uint32_t seq = rd_varuint32(r);
		if (!rd_ok(r))
			return nt_fail(dec, -RTD_E_NT_BLOCK,
				       nt_off(dec, r, base),
				       "sequence point thread %u truncated", i);
		int err = seq_point(dec, idx, seq);
		if (err)
			return err;
	}
	if (flags & 1)
		rtd_map_clear(&dec->v6threads);
	if (flags & 2)
		free_meta_all(dec);
	return seqpoint_done(dec, ts);
}

static int read_utf8s(rtd_rd *r, const uint8_t **s, uint32_t *len)
{
	*len = rd_varuint32(r);
	if (!rd_ok(r) || !rd_bytes(r, *len, s))
		return -RTD_E_TRUNCATED;
	return 0;
}

/* V6 thread block: rows of (size, index, optional info). */
static int thread_block_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	while (rd_left(r) > 0) {
		uint64_t roff = nt_off(dec, r, base);
		uint16_t size = rd_u16le(r);
		rtd_rd row;
		if (!rd_ok(r) || !rd_sub(r, size, &row))
			return nt_fail(dec, -RTD_E_NT_BLOCK, roff,
				       "thread row of %u bytes runs past the "
				       "block end", size);
		uint64_t idx = rd_varuint(&row);
		uint64_t os_tid = 0;
		bool have = false;
		while (rd_ok(&row) && rd_left(&row) > 0) {
			uint8_t kind = rd_u8(&row);
			const uint8_t *s;
			uint32_t l;
			switch (kind) {
			case NT_THREAD_NAME:
				read_utf8s(&row, &s, &l);
				break;
			case NT_THREAD_OS_PROCESS_ID:
				(void)rd_varuint(&row);
				break;
			case NT_THREAD_OS_THREAD_ID:
				os_tid = rd_varuint(&row);
				have = true;
				break;
			case NT_THREAD_KEY_VALUE:
				read_utf8s(&row, &s, &l);
				read_utf8s(&row, &s, &l);
				break;
			default:
				/* unknown info ends what we can read */
				row.p = row.end;
				break;
			}
		}
		if (!rd_ok(&row))
			return nt_fail(dec, -RTD_E_NT_BLOCK, roff,
				       "thread row malformed");
		if (have && os_tid < UINT64_MAX) {
			int err = rtd_map_put(&dec->v6threads, idx,
					      (void *)(uintptr_t)(os_tid + 1),
					      NULL);
			if (err)
				return nt_fail(dec, err, roff,
					       "too many threads");
		}
	}
	dec->st.blocks++;
	return 0;
}

static int remove_thread_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	while (rd_left(r) > 0) {
		uint64_t idx = rd_varuint(r);
		uint32_t seq = rd_varuint32(r);
		if (!rd_ok(r))
			return nt_fail(dec, -RTD_E_NT_BLOCK,
				       nt_off(dec, r, base),
				       "remove-thread entry truncated");
		int err = seq_point(dec, idx, seq);
		if (err)
			return err;
		rtd_map_del(&dec->v6threads, idx);
	}
	dec->st.blocks++;
	return 0;
}

/* V6 label lists: only activity ids are kept (what V4/V5 headers had). */
static int labels_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	uint32_t first = rd_u32le(r);
	uint32_t count = rd_u32le(r);
	if (!rd_ok(r) || first == 0)
		return nt_fail(dec, -RTD_E_NT_BLOCK, base,
			       "label list block header malformed");
	if (dec->nlabels == 0)
		dec->label_base = first;
	if (first < dec->label_base ||
	    (uint64_t)first + count - dec->label_base > NT_CAP_LABELS)
		return nt_fail(dec, -RTD_E_CAP, base,
			       "label list ids %u+%u out of range", first,
			       count);
	size_t want = (size_t)((uint64_t)first + count - dec->label_base);
	if (want > dec->labels_cap) {
		size_t ncap = dec->labels_cap ? dec->labels_cap : 256;
		while (ncap < want)
			ncap *= 2;
		struct nt_label *nl = realloc(dec->labels, ncap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		dec->labels = nl;
		dec->labels_cap = ncap;
	}
	while (dec->nlabels < want)
		memset(&dec->labels[dec->nlabels++], 0, sizeof(struct nt_label));
	for (uint32_t i = 0; i < count; i++) {
		struct nt_label *l = &dec->labels[first + i - dec->label_base];
		memset(l, 0, sizeof(*l));
		for (;;) {
			uint64_t loff = nt_off(dec, r, base);
			uint8_t kind = rd_u8(r);
			const uint8_t *s;
			uint32_t n;
			switch (kind & NT_LABEL_KIND_MASK) {
			case NT_LABEL_ACTIVITY_ID: read_guid(r, l->activity); break;
			case NT_LABEL_RELATED_ACTIVITY_ID: read_guid(r, l->related); break;
			case NT_LABEL_TRACE_ID: rd_skip(r, 16); break;
			case NT_LABEL_SPAN_ID: rd_skip(r, 8); break;
			case NT_LABEL_KEY_STRING: read_utf8s(r, &s, &n); read_utf8s(r, &s, &n); break;
			case NT_LABEL_KEY_VARINT: read_utf8s(r, &s, &n); (void)rd_varuint(r); break;
			case NT_LABEL_OPCODE: case NT_LABEL_LEVEL: case NT_LABEL_VERSION: rd_skip(r, 1); break;
			case NT_LABEL_KEYWORDS: rd_skip(r, 8); break;
			default:
				return nt_fail(dec, -RTD_E_NT_BLOCK, loff,
					       "unknown label kind %u", kind);
			}
			if (!rd_ok(r))
				return nt_fail(dec, -RTD_E_NT_BLOCK, loff,
					       "label list truncated");
			if (kind & NT_LABEL_LAST)
				break;
		}
	}
	dec->st.blocks++;
	return 0;
}

/* V6 metadata block: u16 header size + header, then sized rows. */
static int meta_block_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	uint16_t hsize = rd_u16le(r);
	if (!rd_ok(r) || !rd_skip(r, hsize))
		return nt_fail(dec, -RTD_E_NT_BLOCK, base,
			       "metadata block header truncated");
	while (rd_left(r) > 0) {
		uint64_t roff = nt_off(dec, r, base);
		uint16_t size = rd_u16le(r);
		rtd_rd row;
		if (!rd_ok(r) || !rd_sub(r, size, &row))
			return nt_fail(dec, -RTD_E_NT_METADATA, roff,
				       "metadata row of %u bytes runs past the "
				       "block end", size);
		struct nt_meta *m = NULL;
		int err = nt_meta_parse_v6(dec, &row, base, &m);
		if (err)
			return err;
		err = meta_add(dec, m, roff);
		if (err)
			return err;
	}
	dec->st.blocks++;
	return 0;
}

/* The trace header's SYSTEMTIME, start timestamp, frequency and, where
 * the format has it, pointer size. NetPerf V1/V2 (@ptr_size false) has
 * none: only 64-bit Linux wrote it (.NET Core 2.0), so pointers are 8
 * bytes. */
static void set_info(rtd_nettrace *dec, rtd_rd *r, bool ptr_size)
{
	int16_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = rd_i16le(r);
	dec->info.sync_year = t[0];
	dec->info.sync_month = t[1];
	dec->info.sync_day = t[3];
	dec->info.sync_hour = t[4];
	dec->info.sync_minute = t[5];
	dec->info.sync_second = t[6];
	dec->info.sync_ms = t[7];
	dec->info.sync_ticks = rd_u64le(r);
	dec->info.tick_freq = rd_u64le(r);
	dec->info.pointer_size = ptr_size ? rd_u32le(r) : 8;
}

static int info_done(rtd_nettrace *dec, uint64_t off)
{
	if (dec->info.pointer_size != 4 && dec->info.pointer_size != 8)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "trace header gives pointer size %u (want 4 "
			       "or 8)", dec->info.pointer_size);
	if (dec->info.tick_freq == 0)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "trace header gives a tick frequency of 0");
	dec->info.format = dec->format;
	dec->have_info = true;
	if (dec->o.on_info)
		return dec->o.on_info(dec->o.ctx, &dec->info);
	return 0;
}

static uint64_t parse_u64_dec(const uint8_t *s, uint32_t n)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return v;
}

static int trace_block_v6(rtd_nettrace *dec, rtd_rd *r, uint64_t base)
{
	set_info(dec, r, true);
	uint32_t n = rd_u32le(r);
	for (uint32_t i = 0; i < n && rd_ok(r); i++) {
		const uint8_t *k, *v;
		uint32_t kl, vl;
		read_utf8s(r, &k, &kl);
		read_utf8s(r, &v, &vl);
		if (!rd_ok(r))
			break;
		if (kl == 9 && !memcmp(k, "ProcessId", 9))
			dec->info.pid = (uint32_t)parse_u64_dec(v, vl);
		else if (kl == 19 && !memcmp(k, "HardwareThreadCount", 19))
			dec->info.nprocs = (uint32_t)parse_u64_dec(v, vl);
		else if (kl == 23 && !memcmp(k, "ExpectedCPUSamplingRate", 23))
			dec->info.sampling_rate = (uint32_t)parse_u64_dec(v, vl);
	}
	if (!rd_ok(r))
		return nt_fail(dec, -RTD_E_NT_BLOCK, base,
			       "trace block truncated");
	return info_done(dec, base);
}

/* ---- units ----------------------------------------------------------- */

/*
 * One parse step over avail bytes at dec->off. Returns >0 consumed bytes,
 * 0 needing more (dec->need set to the total the unit needs), or a
 * negative error.
 */
static long step_header(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	if (avail < 8) {
		dec->need = 8;
		return 0;
	}
	if (!memcmp(p, "Nettrace", 8)) {
		if (avail < 12) {
			dec->need = 12;
			return 0;
		}
		rtd_rd r;
		rd_init(&r, p + 8, avail - 8);
		uint32_t x = rd_u32le(&r);
		if (x == 20) {
			if (avail < 32) {
				dec->need = 32;
				return 0;
			}
			if (memcmp(p + 12, FS_MAGIC, 20))
				return nt_fail(dec, -RTD_E_NT_MAGIC, 12,
					       "'Nettrace' is not followed by "
					       "!FastSerialization.1");
			dec->format = 4; /* 4 or 5: the trace object says */
			dec->state = ST_OBJECTS;
			return 32;
		}
		if (x == 0) {
			if (avail < 20) {
				dec->need = 20;
				return 0;
			}
			uint32_t major = rd_u32le(&r);
			if (major < 6 || major > 6)
				return nt_fail(dec, -RTD_E_UNSUPPORTED, 12,
					       "NetTrace major version %u is not "
					       "supported (want 4 to 6)", major);
			dec->format = 6;
			dec->state = ST_BLOCKS;
			return 20;
		}
		return nt_fail(dec, -RTD_E_NT_MAGIC, 8,
			       "unknown header after 'Nettrace' (%u)", x);
	}
	if (!memcmp(p, "\x14\0\0\0!Fas", 8)) {
		if (avail < 24) {
			dec->need = 24;
			return 0;
		}
		if (memcmp(p + 4, FS_MAGIC, 20))
			return nt_fail(dec, -RTD_E_NT_MAGIC, 4,
				       "not a netperf stream");
		dec->format = 3;
		dec->state = ST_OBJECTS;
		return 24;
	}
	return nt_fail(dec, -RTD_E_NT_MAGIC, 0,
		       "not a nettrace or netperf stream (no 'Nettrace' or "
		       "'!FastSerialization.1' magic)");
}

/* An object's type header: FastSerialization's begin tags, version and
 * type name (tn, NUL-terminated). r is left after it. */
struct obj_head {
	rtd_rd r;
	uint32_t version;
	size_t hdr; /* bytes up to and including the type's end tag */
	char tn[NT_CAP_TYPE_NAME + 1];
};

/* Returns >0 (the header's size), 0 needing more, or an error. */
static long object_head(rtd_nettrace *dec, const uint8_t *p, size_t avail,
			struct obj_head *h)
{
	uint64_t off = dec->off;
	uint8_t begin = dec->format == 3 ? TAG_BEGIN_OBJECT : TAG_BEGIN_PRIVATE;
	if (p[0] != begin && p[0] != TAG_BEGIN_OBJECT &&
	    p[0] != TAG_BEGIN_PRIVATE)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "expected an object (tag %u) or the end of the "
			       "stream (tag 1), found byte %u", begin, p[0]);
	/* tag, type: tag, null tag, version, min version, name length */
	const size_t fixed = 1 + 1 + 1 + 4 + 4 + 4;
	if (avail < fixed) {
		dec->need = fixed;
		return 0;
	}
	rtd_rd *r = &h->r;
	rd_init(r, p, avail);
	rd_skip(r, 1);
	uint8_t t1 = rd_u8(r), t2 = rd_u8(r);
	h->version = rd_u32le(r);
	(void)rd_u32le(r); /* minimum reader version */
	uint32_t nlen = rd_u32le(r);
	if ((t1 != TAG_BEGIN_PRIVATE && t1 != TAG_BEGIN_OBJECT) ||
	    t2 != TAG_NULL)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off + 1,
			       "object's type header is malformed (tags %u "
			       "%u)", t1, t2);
	if (nlen == 0 || nlen > NT_CAP_TYPE_NAME)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off + 11,
			       "object type name of %u bytes (cap %u)", nlen,
			       NT_CAP_TYPE_NAME);
	h->hdr = fixed + nlen + 1;
	if (avail < h->hdr) {
		dec->need = h->hdr;
		return 0;
	}
	const uint8_t *name;
	rd_bytes(r, nlen, &name);
	if (rd_u8(r) != TAG_END_OBJECT)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off + h->hdr - 1,
			       "object's type header does not end with tag 6");
	memcpy(h->tn, name, nlen);
	h->tn[nlen] = 0;
	return (long)h->hdr;
}

/*
 * .NET Core 2.0 (NetPerf object version 1, provider GUIDs; 2, provider
 * names): the entry object holds a forward reference (to the end of the
 * events), SYSTEMTIME, the start timestamp and the clock frequency, then
 * the events, unframed.
 */
static long object_eventpipefile(rtd_nettrace *dec, size_t avail,
				 struct obj_head *h)
{
	uint64_t off = dec->off;
	if (dec->format != 3 || dec->have_info)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "EventPipeFile object in the wrong place");
	if (h->version != 1 && h->version != 2)
		return nt_fail(dec, -RTD_E_UNSUPPORTED, off,
			       "EventPipeFile object version %u is not "
			       "supported (want 1 or 2)", h->version);
	size_t total = h->hdr + 4 + 16 + 8 + 8;
	if (avail < total) {
		dec->need = total;
		return 0;
	}
	(void)rd_u32le(&h->r); /* forward reference index */
	set_info(dec, &h->r, false);
	dec->format = (int)h->version;
	dec->state = ST_EVENTS12;
	int err = info_done(dec, off);
	if (err)
		return err;
	return (long)total;
}

/* The Trace object: the stream's clock, pointer size, pid and CPUs; its
 * version tells a V4 nettrace from a V5 one. */
static long object_trace(rtd_nettrace *dec, size_t avail, struct obj_head *h)
{
	uint64_t off = dec->off;
	uint32_t version = h->version;
	if (dec->have_info)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "a second Trace object");
	size_t total = h->hdr + 48 + 1;
	if (avail < total) {
		dec->need = total;
		return 0;
	}
	if (version == 3 && dec->format != 3)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "Trace object version 3 in a nettrace stream");
	if (dec->format == 3 && version != 3)
		return nt_fail(dec, -RTD_E_UNSUPPORTED, off,
			       "netperf Trace object version %u is not "
			       "supported (want 3)", version);
	if (dec->format != 3) {
		if (version != 4 && version != 5)
			return nt_fail(dec, -RTD_E_UNSUPPORTED, off,
				       "nettrace Trace object version %u is "
				       "not supported (want 4 or 5)", version);
		dec->format = (int)version;
	}
	rtd_rd *r = &h->r;
	set_info(dec, r, true);
	dec->info.pid = rd_u32le(r);
	dec->info.nprocs = rd_u32le(r);
	dec->info.sampling_rate = rd_u32le(r);
	if (rd_u8(r) != TAG_END_OBJECT)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off + total - 1,
			       "Trace object does not end with tag 6");
	int err = info_done(dec, off);
	if (err)
		return err;
	return (long)total;
}

/* A block's body by its type name; unknown objects are skipped. */
static int object_body(rtd_nettrace *dec, const char *tn, rtd_rd *body,
		       uint64_t base)
{
	if (!strcmp(tn, "EventBlock"))
		return dec->format == 3 ? event_block_v3(dec, body, base)
					: event_block(dec, body, base, false);
	if (!strcmp(tn, "MetadataBlock"))
		return event_block(dec, body, base, true);
	if (!strcmp(tn, "StackBlock")) {
		int err = stack_block(dec, body, base);
		if (!err)
			dec->st.blocks++;
		return err;
	}
	if (!strcmp(tn, "SPBlock"))
		return sp_block(dec, body, base);
	rtd_debug("nettrace: skipping object '%s' at %llu", tn,
		  (unsigned long long)dec->off);
	dec->st.skipped_blocks++;
	return 0;
}

/* Every object after the Trace: i32 size, padding to 4, body, end tag. */
static long object_block(rtd_nettrace *dec, const uint8_t *p, size_t avail,
			 struct obj_head *h)
{
	uint64_t off = dec->off;
	const char *tn = h->tn;
	size_t hdr = h->hdr;
	if (!dec->have_info)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "object '%s' before the Trace object", tn);
	if (avail < hdr + 4) {
		dec->need = hdr + 4;
		return 0;
	}
	uint32_t bsize = rd_u32le(&h->r);
	if (bsize > dec->o.max_block)
		return nt_fail(dec, -RTD_E_CAP, off + hdr,
			       "%s of %u bytes exceeds the block cap %zu", tn,
			       bsize, dec->o.max_block);
	uint64_t after = off + hdr + 4;
	size_t pad = (size_t)((4 - after % 4) % 4);
	size_t total = hdr + 4 + pad + bsize + 1;
	if (avail < total) {
		dec->need = total;
		return 0;
	}
	if (p[total - 1] != TAG_END_OBJECT)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off + total - 1,
			       "%s does not end with tag 6 (found %u)", tn,
			       p[total - 1]);
	rtd_rd body;
	rd_init(&body, p + hdr + 4 + pad, bsize);
	int err = object_body(dec, tn, &body, off + hdr + 4 + pad);
	if (err == NT_PAUSED_BLOCK)
		return 0; /* stepped again on resume */
	if (err)
		return err;
	return (long)total;
}

/* One FastSerialization object (V3-V5), or the stream's end tag. */
static long step_object(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	if (avail < 1) {
		dec->need = 1;
		return 0;
	}
	if (p[0] == TAG_NULL) {
		dec->state = ST_DONE;
		dec->seen_end = 1;
		return 1;
	}
	struct obj_head h;
	long n = object_head(dec, p, avail, &h);
	if (n <= 0)
		return n;
	if (!strcmp(h.tn, "Microsoft.DotNet.Runtime.EventPipeFile"))
		return object_eventpipefile(dec, avail, &h);
	if (!strcmp(h.tn, "Trace"))
		return object_trace(dec, avail, &h);
	return object_block(dec, p, avail, &h);
}

static long step_block_v6(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	uint64_t off = dec->off;
	if (avail < 4) {
		dec->need = 4;
		return 0;
	}
	uint32_t h = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	uint32_t size = h & 0xffffffu;
	uint8_t kind = (uint8_t)(h >> 24);
	if (size > dec->o.max_block)
		return nt_fail(dec, -RTD_E_CAP, off,
			       "block of %u bytes exceeds the block cap %zu",
			       size, dec->o.max_block);
	size_t total = 4 + (size_t)size;
	if (avail < total) {
		dec->need = total;
		return 0;
	}
	rtd_rd body;
	rd_init(&body, p + 4, size);
	uint64_t base = off + 4;
	if (kind != BK_TRACE && kind != BK_END && !dec->have_info)
		return nt_fail(dec, -RTD_E_NT_BLOCK, off,
			       "block kind %u before the trace block", kind);
	int err = 0;
	switch (kind) {
	case BK_END:
		dec->state = ST_DONE;
		dec->seen_end = 1;
		break;
	case BK_TRACE:
		if (dec->have_info)
			return nt_fail(dec, -RTD_E_NT_BLOCK, off,
				       "a second trace block");
		err = trace_block_v6(dec, &body, base);
		break;
	case BK_EVENT:
		err = event_block(dec, &body, base, false);
		break;
	case BK_METADATA:
		err = meta_block_v6(dec, &body, base);
		break;
	case BK_SP:
		err = sp_block_v6(dec, &body, base);
		break;
	case BK_STACK:
		err = stack_block(dec, &body, base);
		if (!err)
			dec->st.blocks++;
		break;
	case BK_THREAD:
		err = thread_block_v6(dec, &body, base);
		break;
	case BK_REMOVE_THREAD:
		err = remove_thread_v6(dec, &body, base);
		break;
	case BK_LABELS:
		err = labels_v6(dec, &body, base);
		break;
	default:
		dec->st.skipped_blocks++;
		break;
	}
	if (err == NT_PAUSED_BLOCK)
		return 0; /* stepped again on resume */
	if (err)
		return err;
	return (long)total;
}

/*
 * One NetPerf V1/V2 event: u32 size of the rest, u32 metadata label (the
 * stream offset of the metadata event, 0 for a metadata event itself),
 * u32 thread, u64 timestamp, activity and related activity GUIDs, u32
 * payload size and payload, u32 stack size and stack. After the last
 * event come the entry object's EndObject tag, the serializer's forward
 * reference table (u32 count, count labels, the first being this tag's
 * offset) and its trailer (u32 table offset, u32 trailer offset): that
 * exact shape is the end of the stream.
 */
static long step_event12(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	uint64_t off = dec->off;
	if (avail < 1) {
		dec->need = 1;
		return 0;
	}
	if (p[0] == TAG_END_OBJECT) {
		if (avail < 5) {
			dec->need = 5;
			return 0;
		}
		rtd_rd t;
		rd_init(&t, p + 1, avail - 1);
		uint32_t count = rd_u32le(&t);
		if (count >= 1 && count <= 100) {
			size_t total = 1 + 4 + 4 * (size_t)count + 8;
			if (avail < total) {
				dec->need = total;
				return 0;
			}
			uint32_t first = rd_u32le(&t);
			rd_skip(&t, 4 * (size_t)(count - 1));
			uint32_t tstart = rd_u32le(&t), tr = rd_u32le(&t);
			if (first == (uint32_t)off && tstart == (uint32_t)(off + 1) &&
			    tr == (uint32_t)(off + 5 + 4 * (uint64_t)count)) {
				dec->state = ST_DONE;
				dec->seen_end = 1;
				return (long)total;
			}
		}
	}
	if (avail < 4) {
		dec->need = 4;
		return 0;
	}
	uint32_t size = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			(uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	if (size > dec->o.max_block)
		return nt_fail(dec, -RTD_E_CAP, off,
			       "event of %u bytes exceeds the block cap %zu",
			       size, dec->o.max_block);
	size_t total = 4 + (size_t)size;
	if (avail < total) {
		dec->need = total;
		return 0;
	}
	rtd_rd e;
	rd_init(&e, p + 4, size);
	struct nt_hdr h;
	memset(&h, 0, sizeof(h));
	uint32_t label = rd_u32le(&e);
	h.ev.thread_id = rd_u32le(&e);
	h.ev.capture_thread_id = h.ev.thread_id;
	h.ev.proc_number = 0xffffffffu;
	h.ev.timestamp = rd_u64le(&e);
	read_guid(&e, h.ev.activity_id);
	read_guid(&e, h.ev.related_activity_id);
	h.ev.payload_len = rd_u32le(&e);
	h.ev.sorted = true;
	const uint8_t *payload, *sp;
	if (!rd_bytes(&e, h.ev.payload_len, &payload))
		return nt_fail(dec, -RTD_E_NT_EVENT, off,
			       "event payload of %u bytes runs past the event's "
			       "%u bytes", (unsigned)h.ev.payload_len, size);
	uint32_t ssize = rd_u32le(&e);
	if (!rd_bytes(&e, ssize, &sp))
		return nt_fail(dec, -RTD_E_NT_EVENT, off,
			       "event stack of %u bytes runs past the event's "
			       "%u bytes", ssize, size);
	int err;
	if (label == 0) {
		/* a metadata event: later events name it by its offset */
		rtd_rd mr;
		rd_init(&mr, payload, h.ev.payload_len);
		struct nt_meta *m = NULL;
		err = nt_meta_parse_v5(dec, &mr, dec->format,
				       off + (uint64_t)(payload - p), &m);
		if (!err) {
			m->pub.id = (uint32_t)off;
			err = meta_add(dec, m, off);
		}
	} else {
		size_t n;
		err = v3_stack(dec, sp, ssize, off, &n);
		if (!err) {
			h.meta_id = label;
			err = deliver(dec, &h, payload, off, dec->scratch, n);
		}
	}
	if (err)
		return err;
	dec->st.blocks++;
	return (long)total;
}

static long step(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	switch (dec->state) {
	case ST_HEADER:
		return step_header(dec, p, avail);
	case ST_OBJECTS:
		return step_object(dec, p, avail);
	case ST_BLOCKS:
		return step_block_v6(dec, p, avail);
	case ST_EVENTS12:
		return step_event12(dec, p, avail);
	default:
		return (long)avail;
	}
}

/* Run one step; on success advance the offset and byte count. */
static long run_step(rtd_nettrace *dec, const uint8_t *p, size_t avail)
{
	long n = step(dec, p, avail);
	if (n < 0) {
		if (!dec->err)
			nt_fail(dec, (int)n, dec->off, "%s",
				rtd_strerror((int)n));
		return dec->err ? dec->err : n;
	}
	if (n > 0) {
		dec->off += (uint64_t)n;
		dec->st.bytes += (uint64_t)n;
		dec->need = 0;
	}
	return n;
}

/* A pause asked by on_event: the fed bytes from @p not stepped yet are
 * kept (by reference: the caller keeps them) for rtd_nettrace_resume(). */
static int pause_feed(rtd_nettrace *dec, const uint8_t *p, size_t len)
{
	dec->pause_req = false;
	dec->paused = true;
	dec->rest = p;
	dec->rest_len = len;
	return RTD_NT_PAUSED;
}

/* opts.lend_strings: what the last call lent is the caller's no more */
static void lent_reset(rtd_nettrace *dec)
{
	if (dec->lent.used)
		rtd_arena_reset(&dec->lent);
}

static int feed(rtd_nettrace *dec, const uint8_t *p, size_t len)
{
	lent_reset(dec);
	while (dec->state != ST_DONE) {
		if (dec->in.len == 0) {
			if (len == 0)
				break;
			long n = run_step(dec, p, len);
			if (n < 0)
				return (int)n;
			if (n > 0) {
				p += n;
				len -= (size_t)n;
				if (dec->pause_req)
					return pause_feed(dec, p, len);
				continue;
			}
			if (dec->in_block)
				return pause_feed(dec, p, len);
			/* incomplete: keep what there is */
			int err = rtd_buf_append(&dec->in, p, len);
			if (err)
				return nt_fail(dec, err, dec->off,
					       "cannot buffer %zu bytes",
					       len);
			p += len;
			len = 0;
			break;
		}
		if (dec->in.len < dec->need) {
			size_t take = dec->need - dec->in.len;
			if (take > len)
				take = len;
			int err = rtd_buf_append(&dec->in, p, take);
			if (err)
				return nt_fail(dec, err, dec->off,
					       "cannot buffer a unit of %zu "
					       "bytes", dec->need);
			p += take;
			len -= take;
			if (dec->in.len < dec->need)
				break;
		}
		size_t had = dec->need;
		long n = run_step(dec, dec->in.data, dec->in.len);
		if (n < 0)
			return (int)n;
		if (n == 0 && dec->in_block)
			return pause_feed(dec, p, len);
		if (n == 0) {
			if (dec->need <= had)
				return nt_fail(dec, -RTD_E_STATE, dec->off,
					       "decoder made no progress");
			continue;
		}
		size_t rest = dec->in.len - (size_t)n;
		if (rest)
			memmove(dec->in.data, dec->in.data + n, rest);
		dec->in.len = rest;
		if (dec->pause_req)
			return pause_feed(dec, p, len);
	}
	if (dec->state == ST_DONE)
		return 1;
	return 0;
}

int rtd_nettrace_feed(rtd_nettrace *dec, const void *buf, size_t len)
{
	if (!dec || (!buf && len))
		return -RTD_E_INVAL;
	if (dec->err)
		return dec->err;
	if (dec->paused)
		return -RTD_E_STATE; /* rtd_nettrace_resume() first */
	return feed(dec, buf, len);
}

int rtd_nettrace_resume(rtd_nettrace *dec)
{
	if (!dec)
		return -RTD_E_INVAL;
	if (dec->err)
		return dec->err;
	if (!dec->paused)
		return 0;
	dec->paused = false;
	return feed(dec, dec->rest, dec->rest_len);
}

bool rtd_nettrace_paused(const rtd_nettrace *dec)
{
	return dec && dec->paused && !dec->err;
}

/*
 * The stream ends inside a block: deliver the events of it that are
 * complete (header and payload all there), as the block parser would have
 * had the block been whole. Only event and metadata blocks carry anything
 * a later event does not need the rest of the block for; a cut stack or
 * sequence point block gives nothing. Sets *what to the unit's name (in
 * @tn when it is an object's) and *total to the size its header announces
 * (0 when not known yet).
 */
static void salvage(rtd_nettrace *dec, char tn[NT_CAP_TYPE_NAME + 1],
		    const char **what, size_t *total)
{
	const uint8_t *p = dec->in.data;
	size_t avail = dec->in.len;
	*what = "block";
	*total = 0;
	rtd_rd body;
	uint64_t base;
	int kind; /* 0 events, 1 metadata */
	if (dec->state == ST_OBJECTS) {
		struct obj_head h;
		if (avail < 1 || object_head(dec, p, avail, &h) <= 0 ||
		    !dec->have_info)
			return; /* the header itself is cut */
		memcpy(tn, h.tn, NT_CAP_TYPE_NAME + 1);
		*what = tn;
		if (avail < h.hdr + 4)
			return;
		uint32_t bsize = rd_u32le(&h.r);
		uint64_t after = dec->off + h.hdr + 4;
		size_t pad = (size_t)((4 - after % 4) % 4);
		*total = h.hdr + 4 + pad + bsize + 1;
		if (!strcmp(h.tn, "EventBlock"))
			kind = 0;
		else if (!strcmp(h.tn, "MetadataBlock"))
			kind = 1;
		else
			return;
		if (avail <= h.hdr + 4 + pad)
			return;
		size_t n = avail - (h.hdr + 4 + pad);
		rd_init(&body, p + h.hdr + 4 + pad, n < bsize ? n : bsize);
		base = after + pad;
	} else if (dec->state == ST_BLOCKS) {
		if (avail < 4)
			return;
		uint32_t hd = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		uint8_t k = (uint8_t)(hd >> 24);
		*total = 4 + (size_t)(hd & 0xffffffu);
		*what = k == BK_EVENT ? "event block"
			: k == BK_METADATA ? "metadata block" : "block";
		if ((k != BK_EVENT && k != BK_METADATA) || !dec->have_info)
			return;
		kind = k == BK_METADATA;
		rd_init(&body, p + 4, avail - 4);
		base = dec->off + 4;
		if (kind == 1) {
			/* V6 metadata blocks have their own layout: whole
			 * only */
			return;
		}
	} else {
		return;
	}
	uint64_t before = dec->st.events;
	dec->salvage = true;
	if (kind == 0)
		(void)(dec->format == 3 ? event_block_v3(dec, &body, base)
					: event_block(dec, &body, base, false));
	else
		(void)event_block(dec, &body, base, true);
	dec->salvage = false;
	dec->salvaged = dec->st.events - before;
}

/* The truncation error: where the input ended (the byte count fed), what
 * it ended inside, and what of that was still delivered. */
static int truncated(rtd_nettrace *dec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int truncated(rtd_nettrace *dec, const char *fmt, ...)
{
	if (dec->err)
		return dec->err;
	uint64_t end = dec->off + dec->in.len;
	va_list ap;
	va_start(ap, fmt);
	dec->err = rtd_verrf_at(dec->errmsg, sizeof(dec->errmsg), -RTD_E_TRUNCATED,
				"truncated at byte", end, fmt, ap);
	va_end(ap);
	dec->err_off = end;
	return dec->err;
}

int rtd_nettrace_finish(rtd_nettrace *dec)
{
	if (!dec)
		return -RTD_E_INVAL;
	const char *what = "block";
	char tn[NT_CAP_TYPE_NAME + 1];
	size_t total = 0;
	lent_reset(dec);
	/* a paused feed is done first, without pausing again */
	dec->finishing = true;
	if (dec->paused) {
		int rc = rtd_nettrace_resume(dec);
		if (rc < 0)
			return rc;
	}
	if (!dec->err && dec->state != ST_DONE && dec->in.len)
		salvage(dec, tn, &what, &total);
	/* events held for sorting are complete: deliver them whatever
	 * stopped the stream */
	int ferr = flush_held(dec, 0, true);
	if (dec->err)
		return dec->err;
	if (ferr)
		return ferr;
	if (dec->state == ST_DONE)
		return 0;
	if (dec->in.len && dec->state == ST_HEADER)
		return truncated(dec, "the stream header is cut (%zu of %zu "
				 "bytes)", dec->in.len, dec->need);
	if (dec->in.len && total)
		return truncated(dec, "the stream ends inside the %s at "
				 "offset %llu (%zu of its %zu bytes; the %llu "
				 "complete events in it delivered)", what,
				 (unsigned long long)dec->off, dec->in.len,
				 total, (unsigned long long)dec->salvaged);
	if (dec->in.len)
		return truncated(dec, "the stream ends inside the header of "
				 "the %s at offset %llu (%zu bytes)", what,
				 (unsigned long long)dec->off, dec->in.len);
	if (dec->state == ST_HEADER)
		return truncated(dec, "empty stream");
	return truncated(dec, "the stream ends without its end marker (the "
			 "session may have been cut short)");
}
