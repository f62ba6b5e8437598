/* SPDX-License-Identifier: MIT */
/*
 * flight.c - the flight recorder's ring (rtdiag/flight.h): records deep
 * copied into a chunked arena, whole chunks dropped when they are older
 * than the window or the cap needs their room, and what a snapshot needs
 * of the dropped ones (names, slices still open) kept beside.
 *
 * Chunks and the interner are reference counted: the ring holds one
 * reference to each, every snapshot one to each chunk it spans and one
 * to the interner, so a snapshot stays readable (on another thread too)
 * while the ring goes on. A chunk only grows at its end, and a snapshot
 * reads it only up to the length it had when the snapshot was taken.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/flight.h"

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* An interned string or stack's bytes, as counted against the cap: its
 * copy plus the table's own overhead. */
#define STRING_OVERHEAD 48u
#define STACK_OVERHEAD 64u
#define FLIGHT_COMPACT_MIN (256u << 10) /* the interner is not compacted below */

struct shared {
	rtd_intern *in;
	int refs;
};

struct chunk {
	struct chunk *next; /* newer */
	int refs;
	size_t used, cap;
	uint64_t nrec;
	int64_t last_mono;
	alignas(max_align_t) unsigned char data[];
};

/* One stored record: the record, then its fields, then its strings. */
struct entry {
	size_t size;
	struct rtd_record rec;
};

/* What the ring knows of a track (or a process) beyond the window. */
struct track {
	struct entry *name;  /* the latest PROCESS / THREAD record dropped */
	struct entry **open; /* slices begun before the window, still open */
	size_t nopen, capopen;
};

struct track_key {
	uint32_t pid;
	uint32_t kind; /* RTD_REC_PROCESS: a process; else a thread's track */
	uint64_t tid, lane;
};

struct rtd_flight {
	int64_t window;
	size_t max_bytes;
	uint64_t mono_error;
	struct shared *sh;
	size_t intern_bytes;
	size_t next_compact; /* intern_bytes past which compact() runs */
	struct chunk *oldest, *newest;
	size_t nchunks, chunk_bytes;
	rtd_strmap tracks; /* struct track_key -> struct track * */
	size_t state_bytes;
	int64_t last_mono;
	bool any;
	struct rtd_flight_stats st;
};

static void shared_put(struct shared *sh)
{
	if (sh && __atomic_sub_fetch(&sh->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		rtd_intern_free(sh->in);
		free(sh);
	}
}

/* Where the interner is compacted next: at twice what the ring's records
 * used after the last compaction, and never below 256 KiB (a quarter of a
 * smaller cap): a ring at a steady rate then holds at most about twice the
 * names and stacks of its window. (At a quarter of the cap alone, 64 MiB by
 * default, every distinct stack a recording met was held to that size:
 * the RSS of a 10-minute ring grew by 5-14 MB. At 1 MiB, a busy .NET
 * program's ~4 KB a second of new stacks took 4 minutes to reach it: RSS
 * grew that long. A compaction copies the ring's records: an 8 s ring
 * of it is ~3,500 records, 1.4 MB.) */
static size_t compact_at(const rtd_flight *f)
{
	size_t floor = f->max_bytes / 4 < FLIGHT_COMPACT_MIN ? f->max_bytes / 4
							     : FLIGHT_COMPACT_MIN;
	return f->intern_bytes * 2 > floor ? f->intern_bytes * 2 : floor;
}

static void chunk_put(struct chunk *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(c);
}

rtd_flight *rtd_flight_new(const struct rtd_flight_opts *opts, int *err)
{
	struct rtd_flight_opts o;
	int rc = opts ? rtd_opts_copy(&o, sizeof(o), opts,
				      RTD_OPTS_END(rtd_flight_opts, mono_error_ns))
		      : -RTD_E_INVAL;
	if (!rc && (o.window_ns <= 0 || (o.max_bytes && o.max_bytes < RTD_FLIGHT_MIN_MAX_BYTES)))
		rc = -RTD_E_INVAL;
	rtd_flight *f = NULL;
	if (!rc) {
		f = calloc(1, sizeof(*f));
		struct shared *sh = f ? calloc(1, sizeof(*sh)) : NULL;
		rtd_intern *in = sh ? rtd_intern_new() : NULL;
		if (!in) {
			free(sh);
			free(f);
			f = NULL;
			rc = -ENOMEM;
		} else {
			sh->in = in;
			sh->refs = 1;
			f->sh = sh;
			f->window = o.window_ns;
			f->max_bytes = o.max_bytes ? o.max_bytes : RTD_FLIGHT_DEFAULT_MAX_BYTES;
			f->next_compact = compact_at(f);
			f->mono_error = o.mono_error_ns;
			rtd_strmap_init(&f->tracks, RTD_FLIGHT_MAX_TRACKS);
		}
	}
	if (err)
		*err = rc;
	return f;
}

static void track_free(struct track *t)
{
	free(t->name);
	for (size_t i = 0; i < t->nopen; i++)
		free(t->open[i]);
	free(t->open);
	free(t);
}

void rtd_flight_free(rtd_flight *f)
{
	if (!f)
		return;
	for (struct chunk *c = f->oldest, *n; c; c = n) {
		n = c->next;
		chunk_put(c);
	}
	size_t b = 0;
	for (rtd_strmap_entry *e = NULL; (e = rtd_strmap_next(&f->tracks, &b, e));)
		track_free(e->val);
	rtd_strmap_free(&f->tracks);
	shared_put(f->sh);
	free(f);
}

/* ---- one record's copy ------------------------------------------------------ */

/* An interned copy of @s (NULL stays NULL), counted against the cap. */
static int intern_str(rtd_flight *f, const char *s, const char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	size_t before;
	rtd_intern_counts(f->sh->in, &before, NULL);
	size_t len = strlen(s);
	int rc = rtd_intern_string(f->sh->in, s, len, out);
	size_t after;
	rtd_intern_counts(f->sh->in, &after, NULL);
	if (after != before)
		f->intern_bytes += len + 1 + STRING_OVERHEAD;
	return rc;
}

static int intern_stack(rtd_flight *f, const struct rtd_stack *s, const struct rtd_stack **out)
{
	*out = NULL;
	if (!s)
		return 0;
	size_t strs0, stacks0, strs1, stacks1;
	rtd_intern_counts(f->sh->in, &strs0, &stacks0);
	int rc = rtd_intern_stack(f->sh->in, s->frames, s->n, out);
	rtd_intern_counts(f->sh->in, &strs1, &stacks1);
	if (stacks1 != stacks0)
		f->intern_bytes += s->n * sizeof(struct rtd_rec_frame) + STACK_OVERHEAD;
	/* the frames' names: their length is not known here; a frame name
	 * is counted at a typical 64 bytes */
	f->intern_bytes += (strs1 - strs0) * (64 + STRING_OVERHEAD);
	return rc;
}

/* The bytes of @rec's entry (with @extra more fields' room). */
static size_t entry_size(const struct rtd_record *rec, size_t nf, size_t extra)
{
	size_t n = ALIGN8(sizeof(struct entry)) + (nf + extra) * sizeof(struct rtd_field);
	for (size_t i = 0; i < nf; i++)
		if (rec->fields[i].type == RTD_FIELD_STR && rec->fields[i].s)
			n += strlen(rec->fields[i].s) + 1;
	return ALIGN8(n);
}

/* Write @rec into @e (entry_size() bytes): its first @nf fields and
 * their string values copied into it, with room for @slots fields in
 * all; the other strings already interned (or living as long as @e's
 * owner). */
static void entry_write(struct entry *e, size_t size, const struct rtd_record *rec, size_t nf,
			size_t slots)
{
	e->size = size;
	e->rec = *rec;
	e->rec.message = NULL;
	struct rtd_field *fl = (struct rtd_field *)((unsigned char *)e + ALIGN8(sizeof(*e)));
	char *s = (char *)(fl + slots);
	for (size_t i = 0; i < nf; i++) {
		fl[i] = rec->fields[i];
		if (fl[i].type == RTD_FIELD_STR && fl[i].s) {
			size_t n = strlen(fl[i].s) + 1;
			memcpy(s, fl[i].s, n);
			fl[i].s = s;
			s += n;
		}
	}
	e->rec.nfields = nf;
	e->rec.fields = nf ? fl : NULL;
}

/* A malloc'd copy of a stored entry (its strings interned or inside). */
static struct entry *entry_dup(const struct entry *e)
{
	struct entry *d = malloc(e->size);
	if (d)
		entry_write(d, e->size, &e->rec, e->rec.nfields, e->rec.nfields);
	return d;
}

/* ---- what the dropped records leave behind ---------------------------------- */

static struct track *track_get(rtd_flight *f, const struct rtd_record *r, unsigned kind)
{
	struct track_key k = {.pid = r->pid, .kind = kind};
	if (kind != RTD_REC_PROCESS) {
		k.tid = r->tid;
		k.lane = r->lane;
	}
	void *v = NULL;
	if (rtd_strmap_get(&f->tracks, &k, sizeof(k), &v))
		return v;
	struct track *t = calloc(1, sizeof(*t));
	if (t && rtd_strmap_put(&f->tracks, &k, sizeof(k), t) < 0) {
		free(t);
		t = NULL;
	}
	if (t)
		f->state_bytes += sizeof(*t) + sizeof(k) + STRING_OVERHEAD;
	return t;
}

/* A record leaves the ring: keep the latest names and the open slices. */
static void forget(rtd_flight *f, const struct entry *e)
{
	const struct rtd_record *r = &e->rec;
	struct track *t;
	switch (r->kind) {
	case RTD_REC_PROCESS:
	case RTD_REC_THREAD:
		t = track_get(f, r, r->kind);
		if (!t)
			return;
		if (t->name) {
			f->state_bytes -= t->name->size;
			free(t->name);
		}
		t->name = entry_dup(e);
		if (t->name)
			f->state_bytes += e->size;
		return;
	case RTD_REC_SLICE_BEGIN:
		t = track_get(f, r, RTD_REC_THREAD);
		if (!t || t->nopen == RTD_FLIGHT_MAX_OPEN) {
			f->st.dropped_open++;
			return;
		}
		if (t->nopen == t->capopen) {
			size_t cap = t->capopen ? t->capopen * 2 : 4;
			struct entry **n = realloc(t->open, cap * sizeof(*n));
			if (!n) {
				f->st.dropped_open++;
				return;
			}
			f->state_bytes += (cap - t->capopen) * sizeof(*n);
			t->open = n;
			t->capopen = cap;
		}
		if (!(t->open[t->nopen] = entry_dup(e))) {
			f->st.dropped_open++;
			return;
		}
		f->state_bytes += e->size;
		t->nopen++;
		return;
	case RTD_REC_SLICE_END:
		/* the slice it ends began before the window (or before the
		 * ring: then there is nothing to pop) */
		t = track_get(f, r, RTD_REC_THREAD);
		if (t && t->nopen) {
			t->nopen--;
			f->state_bytes -= t->open[t->nopen]->size;
			free(t->open[t->nopen]);
		}
		return;
	default:
		return;
	}
}

static void chunk_drop(rtd_flight *f)
{
	struct chunk *c = f->oldest;
	for (size_t at = 0; at < c->used;) {
		const struct entry *e = (const struct entry *)(c->data + at);
		forget(f, e);
		at += e->size;
	}
	f->oldest = c->next;
	if (!f->oldest)
		f->newest = NULL;
	f->nchunks--;
	f->chunk_bytes -= sizeof(*c) + c->cap;
	f->st.evicted_records += c->nrec;
	f->st.records -= c->nrec;
	chunk_put(c);
}

size_t rtd_flight_trim(rtd_flight *f, int64_t now_mono)
{
	size_t n = 0;
	/* a chunk leaves whole, when its newest record is out of the window:
	 * the ring holds up to one chunk's worth more than the window */
	while (f->oldest && f->oldest->last_mono < now_mono - f->window) {
		chunk_drop(f);
		n++;
	}
	f->st.evicted_chunks += n;
	return n;
}

static size_t ring_bytes(const rtd_flight *f)
{
	return f->chunk_bytes + f->intern_bytes + f->state_bytes;
}

/* Room for @need more bytes in the arena: a new chunk when the newest is
 * full, dropping the oldest ones when the cap needs it. */
static int make_room(rtd_flight *f, size_t need)
{
	if (f->newest && f->newest->cap - f->newest->used >= need)
		return 0;
	/* a chunk of a sixteenth of what the ring holds (between the min
	 * and the max size), rounded up to a power of two: whole chunks
	 * leave, so the ring keeps at most about an eighth more than its
	 * window, whatever the record rate */
	size_t cap = f->chunk_bytes / 16;
	cap = cap < RTD_FLIGHT_MIN_CHUNK_BYTES ? RTD_FLIGHT_MIN_CHUNK_BYTES
	      : cap > RTD_FLIGHT_CHUNK_BYTES  ? RTD_FLIGHT_CHUNK_BYTES
					      : cap;
	/* a power of two (the bounds are): a chunk dropped leaves a hole
	 * the next one of its size fills. Sizes following the ring's bytes
	 * left holes of every size in the heap, its free space growing for
	 * minutes (issue #31); the ring may keep an eighth more */
	size_t pow2 = RTD_FLIGHT_MIN_CHUNK_BYTES;
	while (pow2 < cap)
		pow2 *= 2;
	cap = need > pow2 ? need : pow2;
	size_t add = sizeof(struct chunk) + cap;
	if (add > f->max_bytes / 2)
		return -RTD_E_CAP;
	while (f->oldest && ring_bytes(f) + add > f->max_bytes) {
		chunk_drop(f);
		f->st.capped_chunks++;
	}
	if (ring_bytes(f) + add > f->max_bytes)
		return -RTD_E_CAP; /* names and stacks alone fill the cap */
	struct chunk *c = malloc(add);
	if (!c)
		return -ENOMEM;
	c->next = NULL;
	c->refs = 1;
	c->used = 0;
	c->cap = cap;
	c->nrec = 0;
	c->last_mono = 0;
	if (f->newest)
		f->newest->next = c;
	else
		f->oldest = c;
	f->newest = c;
	f->nchunks++;
	f->chunk_bytes += add;
	return 0;
}

/* Copy @rec into the ring (@fresh: a new record, counted as added; else
 * one of the ring's own, moved by compact()). */
static int store(rtd_flight *f, const struct rtd_record *rec, bool fresh)
{
	struct rtd_record r = *rec;
	if (f->any && r.mono < f->last_mono) {
		r.mono = f->last_mono;
		f->st.clamped++;
	}
	size_t nf = r.nfields;
	if (nf > RTD_FLIGHT_MAX_FIELDS) {
		f->st.dropped_fields += nf - RTD_FLIGHT_MAX_FIELDS;
		nf = RTD_FLIGHT_MAX_FIELDS;
	}
	/* the snapshot is on CLOCK_MONOTONIC: its ts is the mono time */
	r.ts = r.mono;
	struct rtd_field fl[RTD_FLIGHT_MAX_FIELDS];
	int rc = intern_str(f, rec->name, &r.name);
	if (!rc)
		rc = intern_str(f, rec->category, &r.category);
	if (!rc)
		rc = intern_str(f, rec->unit, &r.unit);
	if (!rc)
		rc = intern_stack(f, rec->stack, &r.stack);
	for (size_t i = 0; i < nf && !rc; i++) {
		fl[i] = rec->fields[i];
		rc = intern_str(f, rec->fields[i].name, &fl[i].name);
	}
	if (rc)
		return rc;
	r.fields = fl;
	size_t size = entry_size(&r, nf, 0);
	if ((rc = make_room(f, size)) < 0)
		return rc;
	struct chunk *c = f->newest;
	entry_write((struct entry *)(c->data + c->used), size, &r, nf, nf);
	c->used += size;
	c->nrec++;
	c->last_mono = r.mono;
	f->last_mono = r.mono;
	f->any = true;
	f->st.records++;
	if (fresh) {
		f->st.added++;
		f->st.record_bytes += size;
		if ((unsigned)r.kind < RTD_REC_KINDS) {
			f->st.kind_added[r.kind]++;
			f->st.kind_bytes[r.kind] += size;
		}
	}
	return 0;
}

/* A stored entry's interned strings and stack, again in the ring's
 * (new) interner; its own strings stay where they are. */
static int reintern(rtd_flight *f, struct entry *e)
{
	struct rtd_record *r = &e->rec;
	int rc = intern_str(f, r->name, &r->name);
	if (!rc)
		rc = intern_str(f, r->category, &r->category);
	if (!rc)
		rc = intern_str(f, r->unit, &r->unit);
	if (!rc)
		rc = intern_stack(f, r->stack, &r->stack);
	struct rtd_field *fl = (struct rtd_field *)r->fields;
	for (size_t i = 0; i < r->nfields && !rc; i++)
		rc = intern_str(f, fl[i].name, &fl[i].name);
	return rc;
}

/* The interner only grows (every distinct name and stack ever seen: a
 * sampled leaf's many addresses make many stacks), so when it has doubled
 * since the last time (and passed a quarter of the cap) the ring is
 * copied into a new one: what the records still in it need, and no more.
 * Snapshots keep the old chunks and interner by their references. */
static void compact(rtd_flight *f)
{
	struct shared *sh = calloc(1, sizeof(*sh));
	rtd_intern *in = sh ? rtd_intern_new() : NULL;
	if (!in) {
		free(sh);
		return; /* not now: the cap still holds */
	}
	sh->in = in;
	sh->refs = 1;
	struct shared *old = f->sh;
	struct chunk *c = f->oldest;
	f->sh = sh;
	f->intern_bytes = 0;
	f->oldest = f->newest = NULL;
	f->nchunks = 0;
	f->chunk_bytes = 0;
	f->st.records = 0;
	size_t b = 0;
	for (rtd_strmap_entry *e = NULL; (e = rtd_strmap_next(&f->tracks, &b, e));) {
		struct track *t = e->val;
		if (t->name && reintern(f, t->name))
			t->name->rec.name = NULL; /* past the cap: unnamed */
		for (size_t i = 0; i < t->nopen; i++)
			if (reintern(f, t->open[i]))
				t->open[i]->rec.name = NULL;
	}
	bool any = f->any;
	f->any = false;
	for (struct chunk *n; c; c = n) {
		n = c->next;
		for (size_t at = 0; at < c->used;) {
			const struct entry *e = (const struct entry *)(c->data + at);
			if (store(f, &e->rec, false))
				f->st.evicted_records++;
			at += e->size;
		}
		chunk_put(c);
	}
	f->any = any;
	shared_put(old);
	f->st.compactions++;
	f->next_compact = compact_at(f);
}

int rtd_flight_add(rtd_flight *f, const struct rtd_record *rec)
{
	if (!rec || rec->kind == RTD_REC_NONE || rec->kind >= RTD_REC_KINDS ||
	    rec->kind == RTD_REC_ERROR || (rec->nfields && !rec->fields))
		return -RTD_E_INVAL;
	if (f->intern_bytes > f->next_compact)
		compact(f);
	return store(f, rec, true);
}

void rtd_flight_stats(const rtd_flight *f, struct rtd_flight_stats *out)
{
	*out = f->st;
	out->bytes = ring_bytes(f);
	out->chunk_bytes = f->chunk_bytes;
	out->intern_bytes = f->intern_bytes;
	out->chunks = f->nchunks;
	out->first_mono = out->last_mono = 0;
	if (f->oldest && f->oldest->used) {
		out->first_mono = ((const struct entry *)f->oldest->data)->rec.mono;
		out->last_mono = f->last_mono;
	}
}

/* ---- the snapshot: a source over the ring's chunks ---------------------- */

struct snap {
	struct shared *sh;
	struct chunk **chunks;
	size_t *used; /* each chunk's length when the snapshot was taken */
	size_t nchunks, ci, at;
	struct entry **pro; /* the prologue: names, then slices begun before */
	size_t npro, pi;
	uint64_t mono_error;
};

static int snap_next(void *impl, struct rtd_record *rec)
{
	struct snap *s = impl;
	if (s->pi < s->npro) {
		*rec = s->pro[s->pi++]->rec;
		return 1;
	}
	while (s->ci < s->nchunks && s->at >= s->used[s->ci]) {
		s->ci++;
		s->at = 0;
	}
	if (s->ci == s->nchunks)
		return 0;
	const struct entry *e = (const struct entry *)(s->chunks[s->ci]->data + s->at);
	s->at += e->size;
	*rec = e->rec;
	return 1;
}

static int snap_clock(void *impl, struct rtd_clock *out)
{
	struct snap *s = impl;
	out->domain = RTD_CLOCK_MONOTONIC;
	out->flags = RTD_CLOCK_HAS_MONO;
	out->freq = 1000000000ull;
	out->mono_error_ns = s->mono_error;
	out->wall_error_ns = RTD_CLOCK_ERROR_UNKNOWN;
	return 0;
}

static void snap_free(void *impl)
{
	struct snap *s = impl;
	for (size_t i = 0; i < s->nchunks; i++)
		chunk_put(s->chunks[i]);
	for (size_t i = 0; i < s->npro; i++)
		free(s->pro[i]);
	free(s->pro);
	free(s->chunks);
	free(s->used);
	shared_put(s->sh);
	free(s);
}

static const struct rtd_source_ops snap_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "flight",
	.next = snap_next,
	.clock = snap_clock,
	.free = snap_free,
};

/* A prologue record: @e at time @at; a slice with its true begin in the
 * field "begun_before_ns". */
static struct entry *prologue_entry(const struct entry *e, int64_t at)
{
	bool slice = e->rec.kind == RTD_REC_SLICE_BEGIN;
	size_t nf = e->rec.nfields;
	size_t size = entry_size(&e->rec, nf, slice);
	struct entry *d = malloc(size);
	if (!d)
		return NULL;
	entry_write(d, size, &e->rec, nf, nf + slice);
	if (slice) {
		struct rtd_field *fl =
			(struct rtd_field *)((unsigned char *)d + ALIGN8(sizeof(*d)));
		fl[nf] = (struct rtd_field){.name = "begun_before_ns", .type = RTD_FIELD_U64,
					    .u = (uint64_t)(at - e->rec.mono)};
		d->rec.fields = fl;
		d->rec.nfields = nf + 1;
	}
	d->rec.mono = d->rec.ts = at;
	return d;
}

static int snap_prologue(rtd_flight *f, struct snap *s, int64_t at)
{
	size_t n = 0, b = 0;
	for (rtd_strmap_entry *e = NULL; (e = rtd_strmap_next(&f->tracks, &b, e));) {
		struct track *t = e->val;
		n += (t->name != NULL) + t->nopen;
	}
	if (!n)
		return 0;
	if (!(s->pro = calloc(n, sizeof(*s->pro))))
		return -ENOMEM;
	/* processes, then threads, then the open slices, bottom first */
	for (int pass = 0; pass < 3; pass++) {
		b = 0;
		for (rtd_strmap_entry *e = NULL; (e = rtd_strmap_next(&f->tracks, &b, e));) {
			struct track *t = e->val;
			const struct track_key *k = (const struct track_key *)e->key;
			size_t from = s->npro;
			if (pass < 2 && t->name && (pass == 0) == (k->kind == RTD_REC_PROCESS))
				s->pro[s->npro++] = prologue_entry(t->name, at);
			for (size_t i = 0; pass == 2 && i < t->nopen; i++)
				s->pro[s->npro++] = prologue_entry(t->open[i], at);
			for (size_t i = from; i < s->npro; i++)
				if (!s->pro[i])
					return -ENOMEM;
		}
	}
	return 0;
}

int rtd_flight_snapshot(rtd_flight *f, rtd_source **out)
{
	*out = NULL;
	struct snap *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mono_error = f->mono_error;
	s->sh = f->sh;
	__atomic_add_fetch(&f->sh->refs, 1, __ATOMIC_ACQ_REL);
	int rc = 0;
	if (f->nchunks) {
		s->chunks = calloc(f->nchunks, sizeof(*s->chunks));
		s->used = calloc(f->nchunks, sizeof(*s->used));
		if (!s->chunks || !s->used)
			rc = -ENOMEM;
	}
	for (struct chunk *c = f->oldest; c && !rc; c = c->next) {
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
		s->chunks[s->nchunks] = c;
		s->used[s->nchunks++] = c->used;
	}
	/* the prologue stands at the ring's first record */
	int64_t at = f->oldest && f->oldest->used
			     ? ((const struct entry *)f->oldest->data)->rec.mono
			     : f->last_mono;
	if (!rc)
		rc = snap_prologue(f, s, at);
	rtd_source *src = rc ? NULL : rtd_source_new(&snap_ops, s);
	if (!src) {
		snap_free(s);
		return rc ? rc : -ENOMEM;
	}
	*out = src;
	return 0;
}
