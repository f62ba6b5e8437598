/* SPDX-License-Identifier: MIT */
/*
 * dec.c - the gotrace decoder: input buffering, the per-P parse state of
 * Go's parseEvents (last P, G and timestamp of each batch), string and
 * stack tables, raw-mode output and collection for ordered mode.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/gotrace_int.h"
#include "gotrace/v2.h"
#include "gotrace/v2state.h"
#include "rtdiag/source.h"

#define DEFAULT_MAX_INPUT (16ull << 30)
#define COMPACT_AT (256u << 10)

rtd_gotrace_dec *rtd_gotrace_dec_new(const struct rtd_gotrace_opts *opts)
{
	rtd_gotrace_dec *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	struct rtd_gotrace_opts o;
	if (rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_gotrace_opts, flags)) ||
	    (o.mode != RTD_GOTRACE_RAW && o.mode != RTD_GOTRACE_ORDERED)) {
		free(d);
		return NULL;
	}
	d->mode = o.mode;
	d->max_input = o.max_input;
	d->resolve = d->mode == RTD_GOTRACE_RAW && (o.flags & RTD_GOTRACE_RESOLVE);
	if (!d->max_input)
		d->max_input = DEFAULT_MAX_INPUT;
	d->max_window = RTD_GOTRACE_MAX_WINDOW;
	rtd_buf_init(&d->in, d->mode == RTD_GOTRACE_ORDERED || d->resolve ? (size_t)d->max_input : 0);
	rtd_buf_init(&d->sbuf, RTD_GOTRACE_MAX_STRING + 1);
	rtd_map_init(&d->strings, RTD_GOTRACE_MAX_STRINGS);
	rtd_map_init(&d->stacks, RTD_GOTRACE_MAX_STACKS);
	rtd_map_init(&d->ahead_strings, RTD_GOTRACE_MAX_STRINGS);
	rtd_map_init(&d->ahead_stacks, RTD_GOTRACE_MAX_STACKS);
	rtd_map_init(&d->timer_gs, 1u << 20);
	rtd_map_init(&d->futile_gs, 1u << 20);
	rtd_vmap_init(&d->pidx, sizeof(size_t), RTD_GOTRACE_MAX_PROCS);
	rtd_vmap_init(&d->bigg, sizeof(uint64_t), 0);
	return d;
}

void rtd_gotrace_dec_free(rtd_gotrace_dec *d)
{
	if (!d)
		return;
	rtd_buf_free(&d->in);
	rtd_buf_free(&d->sbuf);
	rtd_map_free_vals(&d->strings);
	rtd_map_free_vals(&d->stacks);
	rtd_map_free_vals(&d->ahead_strings);
	rtd_map_free_vals(&d->ahead_stacks);
	rtd_map_free(&d->timer_gs);
	rtd_vmap_free(&d->pidx);
	v1_order_free(d);
	for (size_t i = 0; i < d->nprocs; i++) {
		free(d->procs[i].idx.r);
		free(d->procs[i].bspan);
	}
	free(d->procs);
	free(d->samples);
	rtd_map_free(&d->futile_gs);
	free(d->refs);
	free(d->seqs);
	rtd_vmap_free(&d->bigg);
	free(d->out);
	free(d->args);
	free(d->frames);
	v2_free(d);
	free(d);
}

int rtd_gotrace_dec_version(const rtd_gotrace_dec *d)
{
	return d->ver;
}

int64_t rtd_gotrace_dec_frequency(const rtd_gotrace_dec *d)
{
	return d->freq;
}

const char *rtd_gotrace_dec_error(const rtd_gotrace_dec *d, uint64_t *off)
{
	if (off)
		*off = d->erroff;
	return d->errmsg;
}

const char *rtd_gotrace_dec_string(const rtd_gotrace_dec *d, uint64_t id,
				   size_t *len)
{
	return gtd_str_get(d, id, len);
}

/* The name of string @id for a frame ("" unknown); *@own stays true when
 * it is in d->strings. */
static const char *own_name(const rtd_gotrace_dec *d, uint64_t id, bool *own)
{
	void *v;
	if (rtd_map_get(&d->strings, id, &v))
		return ((const struct gtd_str *)v)->s;
	*own = false;
	const char *n = gtd_str_get(d, id, NULL);
	return n ? n : "";
}

size_t rtd_gotrace_dec_stack(const rtd_gotrace_dec *d, uint64_t id,
			     const struct rtd_gotrace_frame **frames)
{
	bool named;
	return dec_stack_named(d, id, frames, &named);
}

size_t dec_stack_named(const rtd_gotrace_dec *d, uint64_t id,
		       const struct rtd_gotrace_frame **frames, bool *named)
{
	void *v;
	*frames = NULL;
	*named = false;
	if (!rtd_map_get(&d->stacks, id, &v) &&
	    !(d->resolve && (ahead_miss(d, id), rtd_map_get(&d->ahead_stacks, id, &v))))
		return 0;
	struct gtd_stack *s = v;
	/* Strings may arrive after the stack: resolve names on each look-up
	 * until all are in the decoder's own table (a name read ahead may
	 * move, one not defined yet may come). */
	if (!s->named) {
		bool named = true;
		for (size_t i = 0; i < s->n; i++) {
			s->f[i].fn = own_name(d, s->f[i].fn_id, &named);
			s->f[i].file = own_name(d, s->f[i].file_id, &named);
		}
		s->named = named;
	}
	*named = s->named;
	*frames = s->f;
	return s->n;
}

int rtd_gotrace_dec_set_tables_hook(rtd_gotrace_dec *d, rtd_gotrace_tables_fn fn, void *ctx)
{
	if (!d)
		return -EINVAL;
	d->tables_fn = fn;
	d->tables_ctx = ctx;
	return 0;
}

int rtd_gotrace_dec_set_source(rtd_gotrace_dec *d, rtd_gotrace_read_at_fn read_at,
			       void *ctx)
{
	if (!read_at)
		return -EINVAL;
	if (d->in.len || d->base || d->finished)
		return -RTD_E_STATE;
	d->src = read_at;
	d->src_ctx = ctx;
	return 0;
}

static int read_header(rtd_gotrace_dec *d);
static int index_some(rtd_gotrace_dec *d);

int rtd_gotrace_dec_feed(rtd_gotrace_dec *d, const void *buf, size_t len)
{
	if (d->finished)
		return -RTD_E_STATE;
	if (d->err)
		return d->err;
	if ((d->mode == RTD_GOTRACE_RAW || d->stream_idx) && d->pos >= COMPACT_AT &&
	    d->pos * 2 >= d->in.len) {
		memmove(d->in.data, d->in.data + d->pos, d->in.len - d->pos);
		d->in.len -= d->pos;
		d->base += d->pos;
		d->pos = 0;
	}
	int rc = rtd_buf_append(&d->in, buf, len);
	if (rc == 0)
		d->fed += len;
	if (rc == -RTD_E_CAP)
		return gtd_fail(d, rc, d->base + d->in.len,
				d->mode == RTD_GOTRACE_ORDERED
				? "ordered mode keeps the whole input: more than %llu bytes (use raw mode)"
				: "a generation larger than %llu bytes to keep to resolve its names (give a source)",
				(unsigned long long)d->max_input);
	if (rc < 0 || !d->src || d->v2 || d->mode != RTD_GOTRACE_ORDERED)
		return rc;
	/* with a source, index as the bytes come and keep none of them */
	if (!d->header) {
		if (d->in.len - d->pos < 16)
			return 0;
		if ((rc = read_header(d)) < 0)
			return rc;
	}
	return d->stream_idx ? index_some(d) : 0;
}

static struct v1_proc *proc_for(rtd_gotrace_dec *d, int64_t p)
{
	bool created;
	size_t *idx = rtd_vmap_get(&d->pidx, (uint64_t)p, true, &created, NULL);
	if (!idx)
		return NULL;
	if (created) {
		struct v1_proc *np =
			realloc(d->procs, (d->nprocs + 1) * sizeof(*np));
		if (!np) {
			rtd_vmap_del(&d->pidx, (uint64_t)p);
			return NULL;
		}
		d->procs = np;
		memset(&np[d->nprocs], 0, sizeof(*np));
		np[d->nprocs].p = p;
		*idx = d->nprocs++;
	}
	return &d->procs[*idx];
}

static int push_run(struct v1_runs *x, uint32_t i)
{
	if (x->n && x->r[x->n - 1].start + x->r[x->n - 1].n == i) {
		x->r[x->n - 1].n++;
		x->nev++;
		return 0;
	}
	struct v1_run run = {i, 1};
	if (gtd_push((void **)&x->r, &x->n, &x->cap, sizeof(run), &run) < 0)
		return -ENOMEM;
	x->nev++;
	return 0;
}

static int push_ref(rtd_gotrace_dec *d, const struct v1_ref *r,
		    struct v1_runs *runs, int64_t seq)
{
	if (d->nrefs >= UINT32_MAX - 1)
		return -RTD_E_CAP;
	if (d->nrefs == d->caprefs) {
		size_t nc = d->caprefs ? d->caprefs + d->caprefs / 2 : 4096;
		struct v1_ref *a = realloc(d->refs, nc * sizeof(*a));
		if (!a)
			return -ENOMEM;
		d->refs = a;
		int64_t *s = realloc(d->seqs, nc * sizeof(*s));
		if (!s)
			return -ENOMEM;
		d->seqs = s;
		d->caprefs = nc;
	}
	int rc = push_run(runs, (uint32_t)d->nrefs);
	if (rc == 0) {
		if (d->seqs)
			d->seqs[d->nrefs] = seq;
		d->refs[d->nrefs++] = *r;
	}
	return rc;
}

uint64_t rg(const rtd_gotrace_dec *d, const struct v1_ref *r)
{
	if (r->g != V1_BIG_G)
		return r->g;
	const uint64_t *g = rtd_vmap_get((struct rtd_vmap *)&d->bigg, (uint64_t)(r - d->refs), false, NULL, NULL);
	return g ? *g : V1_BIG_G;
}

void tables_reset(rtd_gotrace_dec *d)
{
	rtd_map_free_vals(&d->strings);
	rtd_map_free_vals(&d->stacks);
	d->stack_epoch++;
	rtd_map_init(&d->strings, RTD_GOTRACE_MAX_STRINGS);
	rtd_map_init(&d->stacks, RTD_GOTRACE_MAX_STACKS);
	d->strbytes = 0;
}

int table_add_string(rtd_gotrace_dec *d, uint64_t id, const uint8_t *data,
		     size_t len, uint64_t off)
{
	rtd_map *m = d->adding_ahead ? &d->ahead_strings : &d->strings;
	size_t *bytes = d->adding_ahead ? &d->ahead_strbytes : &d->strbytes;
	if (rtd_map_get(m, id, NULL))
		return gtd_fail(d, -RTD_E_GO_EVENT, off,
				"string at offset %llu has duplicate id %llu",
				(unsigned long long)off, (unsigned long long)id);
	if (*bytes + len > RTD_GOTRACE_MAX_STRING_BYTES)
		return gtd_fail(d, -RTD_E_CAP, off,
				"strings exceed %u bytes in all at offset %llu",
				RTD_GOTRACE_MAX_STRING_BYTES,
				(unsigned long long)off);
	struct gtd_str *s = malloc(sizeof(*s) + len + 1);
	if (!s)
		return gtd_fail(d, -ENOMEM, off, "out of memory");
	s->off = off;
	s->len = len;
	if (len)
		memcpy(s->s, data, len);
	s->s[len] = 0;
	int rc = rtd_map_put(m, id, s, NULL);
	if (rc < 0) {
		free(s);
		return gtd_fail(d, rc, off,
				"string table full at offset %llu (limit %u)",
				(unsigned long long)off, RTD_GOTRACE_MAX_STRINGS);
	}
	*bytes += len;
	return 0;
}

void ahead_reached(rtd_gotrace_dec *d, bool stack, uint64_t id, uint64_t off)
{
	rtd_map *m = stack ? &d->ahead_stacks : &d->ahead_strings;
	void *v;
	if (!rtd_map_get(m, id, &v))
		return;
	/* gtd_str and gtd_stack both start with the offset */
	if (*(const uint64_t *)v != off)
		return;
	if (!stack)
		d->ahead_strbytes -= ((struct gtd_str *)v)->len;
	else
		d->stack_epoch++;
	free(rtd_map_del(m, id));
}

void ahead_reset(rtd_gotrace_dec *d)
{
	rtd_map_free_vals(&d->ahead_strings);
	rtd_map_free_vals(&d->ahead_stacks);
	d->stack_epoch++;
	rtd_map_init(&d->ahead_strings, RTD_GOTRACE_MAX_STRINGS);
	rtd_map_init(&d->ahead_stacks, RTD_GOTRACE_MAX_STACKS);
	d->ahead_strbytes = 0;
}

static int store_string(rtd_gotrace_dec *d, const struct v1_raw *raw)
{
	if (d->resolve)
		ahead_reached(d, false, raw->args[0], raw->off);
	return table_add_string(d, raw->args[0], raw->s, raw->slen, raw->off);
}

static int store_stack(rtd_gotrace_dec *d, const struct rtd_gotrace_event *ev,
		       uint64_t off)
{
	if (d->resolve)
		ahead_reached(d, true, ev->args[0], off);
	if (ev->args[0] == 0 || ev->nframes == 0)
		return 0;
	return table_add_stack(d, ev->args[0], ev->frames, ev->nframes, off);
}

/*
 * Old format, raw mode with RTD_GOTRACE_RESOLVE and a source: read the
 * whole input once ahead, in raw mode, for its string and stack tables
 * (Go writes the stacks at the end), taken as they are where that pass
 * stops (at the end, or at an error that the events in order meet again).
 * Done at the first look-up of a name not seen yet (ahead_miss): a trace
 * whose strings all come before their use, printed without stacks, is
 * read once.
 */
int dec_run_source(rtd_gotrace_dec *d, rtd_gotrace_read_at_fn read_at, void *ctx,
		   int (*fn)(void *arg, const struct rtd_gotrace_event *ev), void *arg)
{
	uint8_t *buf = malloc(1u << 16);
	struct rtd_gotrace_event ev;
	uint64_t off = 0;
	bool fin = false;
	int rc = buf ? 0 : -ENOMEM;
	while (rc >= 0) {
		rc = rtd_gotrace_dec_next(d, &ev);
		if (rc > 0) {
			rc = fn ? fn(arg, &ev) : 0;
			continue;
		}
		if (rc < 0 || fin)
			break;
		int64_t n = read_at(buf, 1u << 16, off, ctx);
		if (n < 0) {
			rc = (int)n;
		} else if (n == 0) {
			fin = true;
			rc = rtd_gotrace_dec_finish(d);
		} else {
			off += (uint64_t)n;
			rc = rtd_gotrace_dec_feed(d, buf, (size_t)n);
		}
	}
	free(buf);
	return rc;
}

static void v1_preload(rtd_gotrace_dec *d);

void ahead_miss(const rtd_gotrace_dec *d, uint64_t id)
{
	/* only what the events in order cannot know yet: an old-format
	 * trace's first name that is not defined before its use */
	if (!d->resolve || d->preloaded || d->v2 || d->mode != RTD_GOTRACE_RAW || !d->header ||
	    id == 0)
		return;
	v1_preload((rtd_gotrace_dec *)d); /* a look-up's side effect: not const */
}

static void v1_preload(rtd_gotrace_dec *d)
{
	d->preloaded = true;
	if (!d->src)
		return;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *pre = rtd_gotrace_dec_new(&o);
	int rc = pre ? dec_run_source(pre, d->src, d->src_ctx, NULL, NULL) : -ENOMEM;
	if (pre && (rc == 0 || pre->err)) {
		/* the tables of that pass, up to where it stopped */
		rtd_map t = d->ahead_strings;
		d->ahead_strings = pre->strings;
		pre->strings = t;
		t = d->ahead_stacks;
		d->ahead_stacks = pre->stacks;
		pre->stacks = t;
		d->stack_epoch++;
		d->ahead_strbytes = pre->strbytes;
	}
	rtd_gotrace_dec_free(pre);
}

int table_add_stack(rtd_gotrace_dec *d, uint64_t id,
		    const struct rtd_gotrace_frame *f, size_t n, uint64_t off)
{
	struct gtd_stack *s = malloc(sizeof(*s) + n * sizeof(*f));
	if (!s)
		return gtd_fail(d, -ENOMEM, off, "out of memory");
	s->off = off;
	s->n = n;
	s->named = false;
	if (n)
		memcpy(s->f, f, n * sizeof(*s->f));
	void *old = NULL;
	int rc = rtd_map_put(d->adding_ahead ? &d->ahead_stacks : &d->stacks, id, s, &old);
	d->stack_epoch++;
	if (rc < 0) {
		free(s);
		return gtd_fail(d, rc, off,
				"stack table full at offset %llu (limit %u)",
				(unsigned long long)off, RTD_GOTRACE_MAX_STACKS);
	}
	free(old);
	return 0;
}

int gtd_push(void **arr, size_t *n, size_t *cap, size_t isz, const void *item)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void *a = realloc(*arr, nc * isz);
		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = nc;
	}
	memcpy((uint8_t *)*arr + *n * isz, item, isz);
	(*n)++;
	return 0;
}

/* The index pass: a batch of P procs[pi] starts at @off; the open one (of
 * whichever P) ends there. */
static void span_close(rtd_gotrace_dec *d, uint64_t end)
{
	if (d->open_proc) {
		struct v1_proc *pr = &d->procs[d->open_proc - 1];
		pr->bspan[pr->nbspan - 1].end = end;
		d->open_proc = 0;
	}
}

static int span_open(rtd_gotrace_dec *d, size_t pi, uint64_t off)
{
	span_close(d, off);
	struct v1_proc *pr = &d->procs[pi];
	struct v1_span sp = {off, UINT64_MAX};
	if (gtd_push((void **)&pr->bspan, &pr->nbspan, &pr->capbspan,
		      sizeof(sp), &sp) < 0)
		return gtd_fail(d, -ENOMEM, off, "out of memory");
	d->open_proc = pi + 1;
	return 0;
}

/*
 * The index pass of ordered mode (Go 1.7+) for one in-stream event: where
 * each P's batches start, the CPU samples, and what bounds the re-sort
 * (how far GoSysExit moves back, which goroutines have futile wakeups).
 */
static int index_note(rtd_gotrace_dec *d, unsigned typ, uint64_t off,
		      const uint64_t *wire, int64_t ts, uint64_t g)
{
	const uint64_t *a = wire + 1;
	int rc = 0;
	d->any_events = true;
	if (!d->seen_batch) {
		/* events before the first batch belong to P 0's stream */
		struct v1_proc *pr = proc_for(d, d->last_p);
		if (!pr)
			return gtd_fail(d, -ENOMEM, off, "out of memory");
		if ((rc = span_open(d, (size_t)(pr - d->procs), off)) < 0)
			return rc;
		d->seen_batch = true;
	}
	switch (typ) {
	case RTD_GO_EV_CPU_SAMPLE: {
		struct v1_sample smp = {ts, off};
		rc = gtd_push((void **)&d->samples, &d->nsamples,
			       &d->capsamples, sizeof(smp), &smp);
		break;
	}
	case RTD_GO_EV_GO_SYS_EXIT:
		if (a[2] != 0) {
			int64_t back;
			if (__builtin_sub_overflow(ts, (int64_t)a[2], &back))
				back = INT64_MAX;
			if (back > d->sysexit_shift)
				d->sysexit_shift = back;
		}
		break;
	case RTD_GO_EV_FUTILE_WAKEUP:
		if (!rtd_map_get(&d->futile_gs, g, NULL) &&
		    rtd_map_put(&d->futile_gs, g, d, NULL) < 0)
			return gtd_fail(d, -RTD_E_CAP, off,
					"too many goroutines with futile wakeups");
		break;
	}
	if (rc < 0)
		return gtd_fail(d, rc, off, "out of memory");
	return 0;
}

static inline int index_event(rtd_gotrace_dec *d, unsigned typ, uint64_t off,
			      const uint64_t *wire, int64_t ts, uint64_t g)
{
	if (d->seen_batch && d->any_events && typ != RTD_GO_EV_CPU_SAMPLE &&
	    typ != RTD_GO_EV_GO_SYS_EXIT && typ != RTD_GO_EV_FUTILE_WAKEUP)
		return 0; /* the common event: nothing to note */
	return index_note(d, typ, off, wire, ts, g);
}

/* Go 1.5/1.6 ordered mode: keep a ref of the event. */
static int keep_ref(rtd_gotrace_dec *d, const struct v1_raw *raw,
		    const struct rtd_gotrace_event *ev)
{
	if (raw->off > V1_MAX_OFF)
		return gtd_fail(d, -RTD_E_CAP, raw->off, "ordered mode reads up to 256 TB");
	struct v1_ref r = {
		.off_lo = (uint32_t)raw->off,
		.off_hi = (uint16_t)(raw->off >> 32),
		.ts = ev->ts,
		.g = ev->g >= V1_BIG_G ? V1_BIG_G : (uint32_t)ev->g,
		.p = (int32_t)ev->p,
		.type = (uint8_t)raw->typ,
	};
	if (ev->g >= V1_BIG_G) {
		uint64_t *slot = rtd_vmap_get(&d->bigg, d->nrefs, true, NULL, NULL);
		if (!slot)
			return gtd_fail(d, -ENOMEM, raw->off, "out of memory");
		*slot = ev->g;
	}
	d->any_events = true;
	struct v1_proc *pr = d->cur_proc ? &d->procs[d->cur_proc - 1]
					 : proc_for(d, d->last_p);
	int rc = pr ? push_ref(d, &r, &pr->idx, ev->seq) : -RTD_E_CAP;
	if (rc < 0)
		return gtd_fail(d, rc, raw->off, rc == -RTD_E_CAP
				? "more than 4G events in ordered mode (use raw mode)"
				: "out of memory");
	return 0;
}

/*
 * Give a raw event its meaning in file order (Go's parseEvents): track the
 * batch's P, its last G and timestamp. In raw mode fills ev; in ordered
 * mode indexes the event (@ev is then only filled for what needs it).
 */
static int step(rtd_gotrace_dec *d, const struct v1_raw *raw,
		struct rtd_gotrace_event *ev)
{
	bool raw_mode = d->mode == RTD_GOTRACE_RAW;
	int rc;
	if (raw_mode || raw->typ == RTD_GO_EV_STACK) {
		rc = v1_fill(d, raw->typ, raw, ev);
		if (rc < 0)
			return gtd_fail(d, rc, raw->off, "%s", rtd_strerror(rc));
	}
	ev->ts = ev->ticks = 0;
	ev->seq = 0;
	ev->p = d->last_p;
	ev->g = 0;
	switch (raw->typ) {
	case RTD_GO_EV_BATCH: {
		struct v1_proc *pr = proc_for(d, d->last_p);
		if (!pr)
			return gtd_fail(d, -RTD_E_CAP, raw->off,
					"too many Ps at offset %llu (limit %u)",
					(unsigned long long)raw->off,
					RTD_GOTRACE_MAX_PROCS);
		pr->lastg = d->ps.g;
		d->last_p = (int64_t)raw->args[0];
		pr = proc_for(d, d->last_p);
		if (!pr)
			return gtd_fail(d, -RTD_E_CAP, raw->off,
					"too many Ps at offset %llu (limit %u)",
					(unsigned long long)raw->off,
					RTD_GOTRACE_MAX_PROCS);
		d->ps.g = pr->lastg;
		d->cur_proc = (size_t)(pr - d->procs) + 1;
		if (d->ver < 1007) {
			d->ps.seq = (int64_t)raw->args[1];
			d->ps.ts = (int64_t)raw->args[2];
		} else {
			d->ps.ts = (int64_t)raw->args[1];
		}
		ev->p = d->last_p;
		ev->ts = ev->ticks = d->ps.ts;
		ev->seq = d->ps.seq;
		if (!raw_mode && d->ver >= 1007) {
			d->seen_batch = true;
			return span_open(d, (size_t)(pr - d->procs), raw->off);
		}
		return 0;
	}
	case RTD_GO_EV_FREQUENCY:
		d->freq = (int64_t)raw->args[0];
		if (d->freq <= 0)
			return gtd_fail(d, -RTD_E_GO_EVENT, raw->off,
					"time stamps out of order (frequency %lld at offset %llu)",
					(long long)d->freq,
					(unsigned long long)raw->off);
		return 0;
	case RTD_GO_EV_TIMER_GOROUTINE:
		if (!rtd_map_get(&d->timer_gs, raw->args[0], NULL) &&
		    rtd_map_put(&d->timer_gs, raw->args[0], d, NULL) < 0)
			return gtd_fail(d, -RTD_E_CAP, raw->off,
					"too many timer goroutines");
		return 0;
	case RTD_GO_EV_STRING:
		return store_string(d, raw);
	case RTD_GO_EV_STACK:
		return store_stack(d, ev, raw->off);
	}
	v1_pstep(d->ver, &d->ps, raw->typ, raw->args, &ev->ts, &ev->seq, &ev->g);
	ev->ticks = d->ps.ts; /* the stream's time (a CPU sample has its own ts) */
	if (raw->typ == RTD_GO_EV_CPU_SAMPLE) {
		ev->p = (int64_t)raw->args[2];
		ev->args[0] = 0;
	}
	if (raw_mode)
		return 0;
	if (d->ver < 1007)
		return keep_ref(d, raw, ev);
	return index_event(d, raw->typ, raw->off, raw->args, ev->ts, ev->g);
}

int rtd_gotrace_header_version(const void *buf, size_t len)
{
	if (len < 16)
		return -RTD_E_TRUNCATED;
	int ver = v1_parse_header(buf);
	if (ver < 0)
		return -RTD_E_GO_VERSION;
	return gtd_version_known(ver) ? ver : -RTD_E_UNSUPPORTED;
}

static int read_header(rtd_gotrace_dec *d)
{
	if (d->in.len - d->pos < 16) {
		if (!d->finished)
			return 0;
		return gtd_fail(d, -RTD_E_TRUNCATED, d->base + d->pos,
				"failed to read header: the input has %zu bytes, a Go trace header has 16",
				d->in.len - d->pos);
	}
	const uint8_t *h = d->in.data + d->pos;
	int ver = rtd_gotrace_header_version(h, 16);
	if (ver == -RTD_E_GO_VERSION)
		return gtd_fail(d, -RTD_E_GO_VERSION, 0,
				"not a Go execution trace (header does not read \"go 1.N trace\")");
	if (ver < 0) {
		ver = v1_parse_header(h);
		return gtd_fail(d, -RTD_E_GO_VERSION, 0,
				"unsupported trace file version %d.%d",
				ver / 1000, ver % 1000);
	}
	if (ver >= 1022) {
		d->v2 = calloc(1, sizeof(*d->v2));
		if (!d->v2)
			return gtd_fail(d, -ENOMEM, 0, "out of memory");
	}
	d->ver = ver;
	d->pos += 16;
	d->header = true;
	d->stream_idx = d->src && d->mode == RTD_GOTRACE_ORDERED && !d->v2 &&
			ver >= 1007;
	return 1;
}

/* The index pass over the complete events buffered (0 at an incomplete
 * one before the end of input). */
static int index_some(rtd_gotrace_dec *d)
{
	struct rtd_gotrace_event ev;
	while (d->pos < d->in.len) {
		struct v1_raw raw;
		int rc;
		unsigned typ, narg;
		uint64_t off = d->base + d->pos;
		const uint64_t *wire = d->args;
		/* the common event without the checked reader's set-up; Go
		 * 1.7+: only the first 4 arguments of a long one, what the
		 * lean path below reads (step's types there, Batch, Frequency
		 * and TimerGoroutine, have at most 2) */
		size_t n = v1_fast_event(d, d->in.data + d->pos, d->in.len - d->pos,
					 &typ, &narg, d->args,
					 d->ver >= 1007 ? V1F_HEAD : 0);
		if (n) {
			d->pos += n;
		} else {
			rtd_rd r;
			rd_init(&r, d->in.data + d->pos, d->in.len - d->pos);
			rc = v1_read_raw(d, &r, off, &raw);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return d->finished ? gtd_fail(d, -RTD_E_TRUNCATED, off,
							      "trace ends inside an event at offset %llu",
							      (unsigned long long)off)
						   : 0;
			d->pos += rd_off(&r);
			typ = raw.typ;
			wire = raw.args;
		}
		if (d->ver >= 1007 && !v1_meta_type(typ)) {
			/* the common case, lean: no event to fill */
			int64_t ts, seq;
			uint64_t g;
			v1_pstep(d->ver, &d->ps, typ, wire, &ts, &seq, &g);
			if ((rc = index_event(d, typ, off, wire, ts, g)) < 0)
				return rc;
			continue;
		}
		if (n) /* all its arguments: see V1F_HEAD above */
			raw = (struct v1_raw){.off = off, .typ = typ, .nargs = narg,
					      .args = d->args};
		if ((rc = step(d, &raw, &ev)) < 0)
			return rc;
	}
	return 0;
}

int rtd_gotrace_dec_finish(rtd_gotrace_dec *d)
{
	if (d->err)
		return d->err;
	d->finished = true;
	if (d->mode != RTD_GOTRACE_ORDERED || d->v2)
		return 0;
	if (!d->header && d->in.len - d->pos >= 16) {
		int rc = read_header(d);
		if (rc < 0)
			return rc;
		if (d->v2)
			return 0;
	}
	/* Index everything; the order is made as events are asked for. */
	int rc;
	if (!d->header && (rc = read_header(d)) <= 0)
		return rc < 0 ? rc : gtd_fail(d, -RTD_E_TRUNCATED, 0, "no header");
	if ((rc = index_some(d)) < 0)
		return rc;
	d->total = d->base + d->in.len;
	span_close(d, d->total);
	return v1_order(d);
}

void v1_ev_wire(rtd_gotrace_dec *d, const struct v1_raw *raw, struct v1_ev *e)
{
	/* one by one: a wide copy of args just stored one by one would wait
	 * on store forwarding */
	const uint64_t *a = raw->args; /* room for >= 8: see v1_read_raw */
	unsigned n = raw->nargs;
#define W(k) e->w[k] = (k) < n ? a[k] : 0
	W(0); W(1); W(2); W(3); W(4); W(5); W(6); W(7);
#undef W
	e->nw = raw->nargs <= V1_EV_WIRE && raw->typ != RTD_GO_EV_USER_LOG
			? (uint8_t)raw->nargs : UINT8_MAX;
	e->argoff = d->ver < 1007 ? 2 : 1;
}

int v1_emit_slow(rtd_gotrace_dec *d, const struct v1_ev *e,
		 struct rtd_gotrace_event *ev)
{
	struct v1_raw raw;
	int rc;
	if (e->nw <= V1_EV_WIRE) { /* kept: no need to read it again */
		raw = (struct v1_raw){.off = e->off, .nargs = e->nw, .args = d->args};
		memcpy(d->args, e->w, sizeof(e->w)); /* d->args holds >= 8 */
	} else if ((rc = v1_reread(d, e->off, &raw)) < 0) {
		return rc;
	}
	rc = v1_fill(d, e->type, &raw, ev);
	if (rc < 0)
		return gtd_fail(d, rc, e->off, "%s", rtd_strerror(rc));
	v1_emit_time(e, ev);
	return 1;
}

void v1_goargs(int ver, const struct v1_raw *raw, uint64_t a[3])
{
	const struct v1_desc *desc = &v1_descs[raw->typ];
	unsigned argoff = ver < 1007 ? 2 : 1;
	a[0] = a[1] = a[2] = 0;
	for (unsigned i = argoff; i < raw->nargs; i++) {
		if (i == raw->nargs - 1 && desc->stack)
			break;
		if (i - argoff < 3)
			a[i - argoff] = raw->args[i];
	}
}

void v1_ref_args(rtd_gotrace_dec *d, const struct v1_ref *ref, uint64_t a[3])
{
	rtd_rd r;
	struct v1_raw raw;
	a[0] = a[1] = a[2] = 0;
	uint64_t off = roff(ref);
	rd_init(&r, d->in.data + off, d->in.len - off);
	int err = d->err;
	if (v1_read_raw(d, &r, off, &raw) <= 0) {
		d->err = err; /* it was read once: cannot fail */
		return;
	}
	v1_goargs(d->ver, &raw, a);
}

int rtd_gotrace_dec_next(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev)
{
	int rc;
	if (d->ord && !d->err) /* old format, ordered, after finish */
		return v1_order_next(d, ev);
	if (d->err)
		return d->err;
	if (!d->header && (rc = read_header(d)) <= 0)
		return rc;
	if (d->v2) {
		rc = d->mode == RTD_GOTRACE_ORDERED ? v2_next_ordered(d, ev)
						    : v2_next_raw(d, ev);
		return rc;
	}
	if (d->mode == RTD_GOTRACE_ORDERED)
		return d->ord ? v1_order_next(d, ev) : 0;
	if (d->pos >= d->in.len && d->finished && d->freq == 0)
		/* the old format has no end marker: its Frequency event,
		 * written at the end with the stacks, says it is whole */
		return gtd_fail(d, -RTD_E_TRUNCATED, d->base + d->pos,
				"the trace ends before its Frequency event (the "
				"runtime writes it and the stack table at the "
				"end of the trace)");
	if (d->pos >= d->in.len)
		return 0;
	rtd_rd r;
	struct v1_raw raw;
	rd_init(&r, d->in.data + d->pos, d->in.len - d->pos);
	rc = v1_read_raw(d, &r, d->base + d->pos, &raw);
	if (rc <= 0)
		return rc;
	d->pos += rd_off(&r);
	if ((rc = step(d, &raw, ev)) < 0)
		return rc;
	return 1;
}
