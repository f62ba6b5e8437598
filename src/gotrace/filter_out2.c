/* SPDX-License-Identifier: MIT */
/*
 * filter_out2.c - rtd_gotrace_filter_writer for the new format (Go 1.22+)
 * with a filter: a trace of the same version with the kept events.
 *
 * Streaming, one batch and one generation's dictionary at a time:
 * - an event batch is buffered (at most 64 KiB, tracev2.MaxBatchSize),
 *   the kept events in it are written with their time deltas computed
 *   again, and the batch is written with its new size when the next
 *   batch starts; a batch left without events is dropped;
 * - CPU samples are filtered the same way in their own batches;
 * - frequency and (Go 1.25+) sync batches are copied whole;
 * - a generation's strings and stacks are held until the generation ends
 *   (its next batch is from the next generation, an EndOfGeneration
 *   batch, or the input ends), then only those the kept events use
 *   (directly, or as a kept stack's function and file names) are written,
 *   in Strings and Stacks batches of at most 64 KiB, before the next
 *   generation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "gotrace/filter.h"
#include "gotrace/v2.h"

enum { K_NONE, K_EVENTS, K_CPU, K_COPY, K_DICT };

/* A string or stack of the generation, encoded as on the wire. */
struct g2entry {
	uint64_t id;
	size_t off, len;       /* in g2w.dict */
	size_t fstr, nfstr;    /* stacks: its frames' string ids in g2w.fstrs */
	bool stack;
};

struct g2w {
	rtd_gotrace_write_fn write;
	void *ctx;
	int ver;
	bool hdr;
	/* the batch being filtered */
	int kind;
	bool eog;
	uint64_t gen, m, time, last;
	uint8_t *buf;
	size_t len;
	/* the generation's dictionary */
	uint64_t dgen;
	bool have_gen;
	uint64_t dict_time;    /* earliest time of its string/stack batches */
	uint8_t *dict;
	size_t dlen, dcap;
	struct g2entry *ents;
	size_t nents, capents;
	uint64_t *fstrs;
	size_t nfstrs, capfstrs;
	rtd_map want_str, want_stack, seen; /* seen: (id<<1|stack) -> entry+1 */
};

#define G2_MAX_DICT ((size_t)1 << 30) /* one generation's strings and stacks */
#define G2_MAX_IDS (1u << 24)

static int out(struct g2w *w, const void *p, size_t n)
{
	return w->write(p, n, w->ctx);
}

static int write_header(struct g2w *w)
{
	if (w->hdr)
		return 0;
	char h[16] = {0};
	snprintf(h, sizeof(h), "go 1.%d trace", w->ver % 1000);
	w->hdr = true;
	return out(w, h, sizeof(h));
}

/* One batch: EventBatch gen m time size, then the data. */
static int write_batch(struct g2w *w, uint64_t gen, uint64_t m, uint64_t time,
		       const uint8_t *data, size_t len)
{
	uint8_t h[1 + 4 * 10];
	size_t k = 0;
	h[k++] = RTD_GO2_EV_EVENT_BATCH;
	k += v2_put_uvarint(h + k, gen);
	k += v2_put_uvarint(h + k, m);
	k += v2_put_uvarint(h + k, time);
	k += v2_put_uvarint(h + k, len);
	int rc = write_header(w);
	if (rc == 0)
		rc = out(w, h, k);
	return rc == 0 && len ? out(w, data, len) : rc;
}

/* Encode an event: type, args (dt replaced when dt != NULL), data. */
static size_t encode(uint8_t *o, const struct rtd_gotrace_event *ev, const uint64_t *dt)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	size_t k = 0;
	o[k++] = (uint8_t)ev->type;
	for (unsigned i = 0; i < ev->nraw; i++)
		k += v2_put_uvarint(o + k, i == 0 && dt ? *dt : ev->raw[i]);
	if (sp->flags & V2_DATA) {
		k += v2_put_uvarint(o + k, ev->str_len);
		memcpy(o + k, ev->str, ev->str_len);
		k += ev->str_len;
	}
	return k;
}

static size_t encoded_max(const struct rtd_gotrace_event *ev)
{
	return 1 + 10 * (size_t)ev->nraw + 10 + ev->str_len;
}

struct g2w *g2w_new(rtd_gotrace_write_fn write, void *ctx, int ver)
{
	struct g2w *w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(V2_MAX_BATCH + 64))) {
		free(w);
		return NULL;
	}
	w->write = write;
	w->ctx = ctx;
	w->ver = ver;
	rtd_map_init(&w->want_str, G2_MAX_IDS);
	rtd_map_init(&w->want_stack, G2_MAX_IDS);
	rtd_map_init(&w->seen, 2 * G2_MAX_IDS);
	return w;
}

void g2w_free(struct g2w *w)
{
	if (!w)
		return;
	rtd_map_free(&w->want_str);
	rtd_map_free(&w->want_stack);
	rtd_map_free(&w->seen);
	free(w->buf);
	free(w->dict);
	free(w->ents);
	free(w->fstrs);
	free(w);
}

static int want(rtd_map *m, uint64_t id)
{
	if (id == 0 || rtd_map_get(m, id, NULL))
		return 0;
	int rc = rtd_map_put(m, id, (void *)1, NULL);
	return rc < 0 ? rc : 0;
}

/* Note the strings and stacks a kept event uses. */
static int want_ids(struct g2w *w, const struct rtd_gotrace_event *ev)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	int rc = 0;
	for (int k = 0; k < 2 && rc == 0; k++) {
		if (sp->stack_arg[k] >= 0 && (unsigned)sp->stack_arg[k] < ev->nraw)
			rc = want(&w->want_stack, ev->raw[sp->stack_arg[k]]);
		if (rc == 0 && sp->str_arg[k] >= 0 && (unsigned)sp->str_arg[k] < ev->nraw)
			rc = want(&w->want_str, ev->raw[sp->str_arg[k]]);
	}
	return rc;
}

/* Room for need elements of size elem at *p (capacity *cap, doubling). */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 256;
	while (nc < need)
		nc *= 2;
	void *n = realloc(*p, nc * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

/* Keep a String or Stack event of the generation for later. */
static int dict_add(struct g2w *w, const struct rtd_gotrace_event *ev, bool stack)
{
	uint64_t id = stack ? ev->raw[0] : ev->str_id;
	uint64_t key = id << 1 | (stack ? 1 : 0);
	if (rtd_map_get(&w->seen, key, NULL))
		return 0; /* Go rejects duplicates; keep the first */
	size_t need = encoded_max(ev);
	if (w->dlen + need > G2_MAX_DICT)
		return -RTD_E_CAP;
	void *dict = w->dict, *ents = w->ents;
	int rc = grow(&dict, &w->dcap, w->dlen + need, 1);
	w->dict = dict;
	if (rc == 0)
		rc = grow(&ents, &w->capents, w->nents + 1, sizeof(*w->ents));
	w->ents = ents;
	if (rc < 0)
		return rc;
	struct g2entry *e = &w->ents[w->nents];
	*e = (struct g2entry){.id = id, .off = w->dlen, .stack = stack, .fstr = w->nfstrs};
	e->len = encode(w->dict + w->dlen, ev, NULL);
	w->dlen += e->len;
	if (stack && ev->nframes) {
		void *f = w->fstrs;
		rc = grow(&f, &w->capfstrs, w->nfstrs + 2 * ev->nframes, sizeof(*w->fstrs));
		w->fstrs = f;
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < ev->nframes; i++) {
			w->fstrs[w->nfstrs++] = ev->frames[i].fn_id;
			w->fstrs[w->nfstrs++] = ev->frames[i].file_id;
		}
		e->nfstr = 2 * ev->nframes;
	}
	rc = rtd_map_put(&w->seen, key, (void *)(uintptr_t)(w->nents + 1), NULL);
	if (rc < 0)
		return rc;
	w->nents++;
	return 0;
}

/* Write the wanted entries of one kind in batches of at most 64 KiB. */
static int dict_write_kind(struct g2w *w, bool stack)
{
	size_t len = 0;
	int rc = 0;
	for (size_t i = 0; i <= w->nents && rc == 0; i++) {
		const struct g2entry *e = i < w->nents ? &w->ents[i] : NULL;
		if (e && (e->stack != stack ||
			  !rtd_map_get(stack ? &w->want_stack : &w->want_str, e->id, NULL)))
			continue;
		if (len && (!e || len + e->len > V2_MAX_BATCH)) {
			rc = write_batch(w, w->dgen, V2_NO_THREAD, w->dict_time, w->buf, len);
			len = 0;
		}
		if (!e || rc)
			break;
		if (len == 0)
			w->buf[len++] = stack ? RTD_GO2_EV_STACKS : RTD_GO2_EV_STRINGS;
		if (e->len + 1 > V2_MAX_BATCH) { /* larger than any batch: alone */
			uint8_t *b = malloc(e->len + 1);
			if (!b)
				return -ENOMEM;
			b[0] = w->buf[0];
			memcpy(b + 1, w->dict + e->off, e->len);
			rc = write_batch(w, w->dgen, V2_NO_THREAD, w->dict_time, b, e->len + 1);
			free(b);
			len = 0;
			continue;
		}
		memcpy(w->buf + len, w->dict + e->off, e->len);
		len += e->len;
	}
	return rc;
}

/* The generation ends: its wanted stacks, then strings (a stack's frames
 * name strings too). */
static int dict_flush(struct g2w *w)
{
	int rc = 0;
	if (!w->have_gen)
		return 0;
	for (size_t i = 0; i < w->nents && rc == 0; i++) {
		const struct g2entry *e = &w->ents[i];
		if (!e->stack || !rtd_map_get(&w->want_stack, e->id, NULL))
			continue;
		for (size_t j = 0; j < e->nfstr && rc == 0; j++)
			rc = want(&w->want_str, w->fstrs[e->fstr + j]);
	}
	if (rc == 0)
		rc = dict_write_kind(w, true);
	if (rc == 0)
		rc = dict_write_kind(w, false);
	rtd_map_clear(&w->want_str);
	rtd_map_clear(&w->want_stack);
	rtd_map_clear(&w->seen);
	w->dlen = w->nents = w->nfstrs = 0;
	w->dict_time = 0;
	w->have_gen = false;
	return rc;
}

/* Write the batch being filtered, if anything of it is left. */
static int batch_flush(struct g2w *w)
{
	int rc = 0;
	if (w->eog)
		rc = dict_flush(w);
	if (rc == 0 && w->len && (w->kind == K_EVENTS || w->kind == K_CPU || w->kind == K_COPY))
		rc = write_batch(w, w->gen, w->m, w->time, w->buf, w->len);
	w->len = 0;
	w->kind = K_NONE;
	w->eog = false;
	return rc;
}

/* A batch of generation gen starts (or, gen 0, the input ends). */
static int next_batch(struct g2w *w, uint64_t gen)
{
	int rc = batch_flush(w);
	if (rc == 0 && w->have_gen && gen != w->dgen)
		rc = dict_flush(w);
	if (gen) {
		w->dgen = gen;
		w->have_gen = true;
	}
	return rc;
}

static int append(struct g2w *w, const struct rtd_gotrace_event *ev, const uint64_t *dt)
{
	if (w->len + encoded_max(ev) > V2_MAX_BATCH + 64)
		return -RTD_E_CAP; /* cannot happen: the batch came within 64 KiB */
	w->len += encode(w->buf + w->len, ev, dt);
	return 0;
}

/*
 * g2w_event - take the next raw-mode event of a new-format trace, in
 * file order; @keep: whether a timed event, CPU sample or experimental
 * batch is kept (the structure and dictionary are handled here).
 * Returns 0 or a negative error.
 */
int g2w_event(struct g2w *w, const struct rtd_gotrace_event *ev, bool keep)
{
	int rc;
	switch (ev->type) {
	case RTD_GO2_EV_EVENT_BATCH:
		if ((rc = next_batch(w, ev->raw[0])) < 0)
			return rc;
		w->gen = ev->raw[0];
		w->m = ev->raw[1];
		w->time = w->last = ev->raw[2];
		return 0;
	case RTD_GO2_EV_EXPERIMENTAL_BATCH: {
		if ((rc = next_batch(w, ev->raw[1])) < 0 || !keep)
			return rc;
		uint8_t *b = malloc(encoded_max(ev));
		if (!b)
			return -ENOMEM;
		size_t n = encode(b, ev, NULL);
		rc = write_header(w);
		if (rc == 0)
			rc = out(w, b, n);
		free(b);
		return rc;
	}
	case RTD_GO2_EV_STRINGS:
	case RTD_GO2_EV_STACKS:
		w->kind = K_DICT;
		if (w->dict_time == 0 || w->time < w->dict_time)
			w->dict_time = w->time;
		return 0;
	case RTD_GO2_EV_STRING:
		return dict_add(w, ev, false);
	case RTD_GO2_EV_STACK:
		return dict_add(w, ev, true);
	case RTD_GO2_EV_CPU_SAMPLES:
		w->kind = K_CPU;
		return 0;
	case RTD_GO2_EV_CPU_SAMPLE:
		if (!keep)
			return 0;
		if (w->len == 0)
			w->buf[w->len++] = RTD_GO2_EV_CPU_SAMPLES;
		if ((rc = want_ids(w, ev)) < 0)
			return rc;
		return append(w, ev, NULL);
	}
	if (w->kind == K_NONE) /* the first event says what the batch is */
		w->kind = (v2_specs[ev->type].flags & V2_TIMED) &&
				  ev->type != RTD_GO2_EV_CLOCK_SNAPSHOT
			  ? K_EVENTS : K_COPY;
	if (w->kind == K_COPY) { /* frequency, sync, EndOfGeneration */
		if (ev->type == RTD_GO2_EV_END_OF_GENERATION)
			w->eog = true;
		if (w->len + encoded_max(ev) > V2_MAX_BATCH + 64)
			return -RTD_E_CAP;
		w->len += encode(w->buf + w->len, ev, NULL);
		return 0;
	}
	if (!keep)
		return 0;
	if ((rc = want_ids(w, ev)) < 0)
		return rc;
	uint64_t dt = (uint64_t)ev->ticks - w->last;
	w->last = (uint64_t)ev->ticks;
	return append(w, ev, &dt);
}

/* g2w_finish - the input ended: write what is left (0 or <0). */
int g2w_finish(struct g2w *w)
{
	int rc = next_batch(w, 0);
	if (rc == 0)
		rc = dict_flush(w);
	if (rc == 0)
		rc = write_header(w);
	return rc;
}
