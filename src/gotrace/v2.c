/* SPDX-License-Identifier: MIT */
/*
 * v2.c - the new Go trace format (Go 1.22+): wire reading and raw mode.
 *
 * Wire format (golang/exp trace/internal/raw/reader.go, trace/batch.go):
 * a 16-byte header "go 1.NN trace\0\0\0", then events: a type byte, the
 * spec's number of LEB128 arguments, for Stack 4 more per frame, for
 * events with data a LEB128 length and the bytes. Events are grouped in
 * batches: EventBatch [gen, m, time, size] followed by size bytes of
 * events. Timed events start with a delta to the previous timestamp of
 * their batch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "gotrace/v2.h"
#include "gotrace/v2state.h"

static int short_read(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, const char *what)
{
	if (r->err == -RTD_E_TRUNCATED && !d->finished)
		return 0;
	return gtd_fail_read(d, r, off, what);
}

int v2_read_raw(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, struct v2_raw *raw)
{
	uint8_t b = rd_u8(r);
	if (!rd_ok(r))
		return short_read(d, r, off, "an event");
	const struct v2_spec *sp = v2_spec_for(b, d->ver);
	if (!sp)
		return gtd_fail(d, -RTD_E_GO_EVENT, off,
				"invalid event type %u at offset %llu (go 1.%d trace)",
				b, (unsigned long long)off, d->ver % 1000);
	if (d->args_cap < 8 && gtd_args_reserve(d, 8) < 0)
		return gtd_fail(d, -ENOMEM, off, "out of memory");
	raw->off = off;
	raw->typ = b;
	raw->data = NULL;
	raw->dlen = 0;
	for (unsigned i = 0; i < sp->nargs; i++)
		d->args[i] = rd_varuint(r);
	if (!rd_ok(r))
		return short_read(d, r, off, sp->name);
	unsigned n = sp->nargs;
	if (sp->flags & V2_STACK) {
		uint64_t nf = d->args[1];
		if (nf > RTD_GOTRACE_MAX_FRAMES)
			return gtd_fail(d, -RTD_E_CAP, off,
					"stack at offset %llu has %llu frames (limit %u)",
					(unsigned long long)off,
					(unsigned long long)nf, RTD_GOTRACE_MAX_FRAMES);
		if (gtd_args_reserve(d, 2 + 4 * (size_t)nf) < 0)
			return gtd_fail(d, -ENOMEM, off, "out of memory");
		for (uint64_t i = 0; i < 4 * nf; i++)
			d->args[n++] = rd_varuint(r);
		if (!rd_ok(r))
			return short_read(d, r, off, "a stack");
	}
	if (sp->flags & V2_DATA) {
		uint64_t len = rd_varuint(r);
		if (!rd_ok(r))
			return short_read(d, r, off, sp->name);
		if (len > V2_MAX_DATA)
			return gtd_fail(d, -RTD_E_CAP, off,
					"%s at offset %llu has %llu bytes of data (limit %u)",
					sp->name, (unsigned long long)off,
					(unsigned long long)len, V2_MAX_DATA);
		if (!rd_bytes(r, (size_t)len, &raw->data))
			return short_read(d, r, off, sp->name);
		raw->dlen = (size_t)len;
	}
	raw->args = d->args;
	raw->nargs = n;
	return 1;
}

static int dict_bad(struct v2_bad *bad, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int dict_bad(struct v2_bad *bad, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(bad->msg, sizeof(bad->msg), 0, fmt, ap);
	va_end(ap);
	bad->set = true;
	bad->off = off;
	return -RTD_E_GO_EVENT;
}

/* One Stack entry of a Stacks batch (tracev2: id, frame count, then pc,
 * func, file and line per frame) into the stack table. */
static int dict_stack(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, struct v2_bad *bad)
{
	uint64_t id = rd_varuint(r), nf = rd_varuint(r);
	if (!rd_ok(r))
		return dict_bad(bad, off, "malformed stack");
	if (nf > V2_MAX_FRAMES)
		return dict_bad(bad, off, "invalid stack size %llu, maximum is %u",
				(unsigned long long)nf, V2_MAX_FRAMES);
	struct rtd_gotrace_frame f[V2_MAX_FRAMES];
	memset(f, 0, sizeof(f));
	for (uint64_t i = 0; i < nf; i++) {
		f[i].pc = rd_varuint(r);
		f[i].fn_id = rd_varuint(r);
		f[i].file_id = rd_varuint(r);
		f[i].line = rd_varuint(r);
	}
	if (!rd_ok(r))
		return dict_bad(bad, off, "reading frames for stack %llu: truncated",
				(unsigned long long)id);
	return table_add_stack(d, id, f, (size_t)nf, off);
}

int v2_parse_dict(rtd_gotrace_dec *d, const uint8_t *data, size_t len, uint64_t base,
		  struct v2_bad *bad)
{
	rtd_rd r;
	rd_init(&r, data, len);
	uint8_t kind = rd_u8(&r);
	if (!rd_ok(&r) || (kind != RTD_GO2_EV_STRINGS && kind != RTD_GO2_EV_STACKS))
		return 0;
	bool strings = kind == RTD_GO2_EV_STRINGS;
	while (rd_left(&r)) {
		uint64_t off = base + rd_off(&r);
		int rc;
		if (rd_u8(&r) != (strings ? RTD_GO2_EV_STRING : RTD_GO2_EV_STACK))
			return dict_bad(bad, off, strings ? "expected string event"
							  : "expected stack event");
		if (strings) {
			uint64_t id = rd_varuint(&r), n = rd_varuint(&r);
			const uint8_t *p;
			if (!rd_ok(&r) || n > V2_MAX_DATA || !rd_bytes(&r, (size_t)n, &p))
				return dict_bad(bad, off, "malformed string in the strings batch");
			rc = table_add_string(d, id, p, (size_t)n, off);
		} else {
			rc = dict_stack(d, &r, off, bad);
		}
		if (rc < 0)
			return rc;
	}
	return 1;
}

/* Fill the parts of an event that come from the wire alone. */
void v2_fill_raw(rtd_gotrace_dec *d, const struct v2_raw *raw,
		 struct rtd_gotrace_event *ev)
{
	const struct v2_spec *sp = &v2_specs[raw->typ];
	unsigned nargs = sp->nargs < RTD_GOTRACE_MAX_ARGS ? sp->nargs : RTD_GOTRACE_MAX_ARGS;
	/* every field, as a memset of the whole event did, but in one pass */
	*ev = (struct rtd_gotrace_event){
		.off = raw->off,
		.type = raw->typ,
		.name = sp->name,
		.p = -1,
		.m = -1,
		.nargs = nargs,
		.argnames = sp->args,
		.nraw = raw->nargs,
		.raw = raw->args,
		.str = (const char *)raw->data,
		.str_len = raw->dlen,
	};
	for (unsigned i = 0; i < nargs; i++)
		ev->args[i] = raw->args[i];
	if (sp->stack_arg[0] >= 0)
		ev->stack = raw->args[sp->stack_arg[0]];
	if (raw->typ == RTD_GO2_EV_STRING)
		ev->str_id = raw->args[0];
	if (sp->flags & V2_STACK) {
		size_t nf = (size_t)raw->args[1];
		if (nf > d->frames_cap) {
			struct rtd_gotrace_frame *f = realloc(d->frames, nf * sizeof(*f));
			if (!f)
				nf = 0;
			else {
				d->frames = f;
				d->frames_cap = nf;
			}
		}
		for (size_t i = 0; i < nf; i++) {
			struct rtd_gotrace_frame *f = &d->frames[i];
			f->pc = raw->args[2 + 4 * i];
			f->fn_id = raw->args[3 + 4 * i];
			f->file_id = raw->args[4 + 4 * i];
			f->line = raw->args[5 + 4 * i];
			const char *s = gtd_str_get(d, f->fn_id, NULL);
			f->fn = s ? s : "";
			s = gtd_str_get(d, f->file_id, NULL);
			f->file = s ? s : "";
		}
		ev->nframes = nf;
		ev->frames = d->frames;
	}
}

/* Resolve the string arguments an event names (when known), with the
 * generation's strings as @t has them; @nargs: of @args_with_dt (0 after). */
static inline __attribute__((always_inline)) void
fill_sargs_tab(rtd_gotrace_dec *d, const struct v2_strs *t,
	       struct rtd_gotrace_event *ev, const struct v2_spec *sp,
	       const uint64_t *args_with_dt, unsigned nargs)
{
	for (int k = 0; k < 2; k++) {
		int i = sp->str_arg[k];
		if (i < 0)
			continue;
		size_t len;
		const char *s;
		uint64_t id = (unsigned)i < nargs ? args_with_dt[i] : 0;
		if (t->dense) {
			const struct gtd_str *x;
			void *v;
			if (id < t->n)
				x = t->s[id];
			else
				x = rtd_map_get(&d->strings, id, &v) ? v : NULL;
			s = x ? x->s : NULL;
			len = x ? x->len : 0;
		} else {
			s = gtd_str_get(d, id, &len);
		}
		ev->sargs[ev->nsargs] = s ? s : "";
		ev->sarg_lens[ev->nsargs] = s ? len : 0;
		ev->nsargs++;
	}
}

void v2_strs_get(const rtd_gotrace_dec *d, struct v2_strs *t)
{
	const struct v2_state *st = d->v2;
	t->dense = st->dense;
	t->s = st->dense ? st->dstr : NULL;
	t->n = st->dense ? st->ndstr : 0;
}

/* fill_sargs_tab() with the decoder's own tables. */
static inline __attribute__((always_inline)) void
fill_sargs_of(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev,
	      const struct v2_spec *sp, const uint64_t *args_with_dt)
{
	struct v2_strs t;
	v2_strs_get(d, &t);
	fill_sargs_tab(d, &t, ev, sp, args_with_dt, ~0u);
}

/* The string arguments of the event of type ev->type (most have none:
 * no call then). */
static inline void v2_fill_sargs(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev,
				 const uint64_t *args_with_dt)
{
	const struct v2_spec *sp = &v2_specs[ev->type];
	ev->nsargs = 0;
	ev->sargnames = sp->sargs;
	if (sp->str_arg[0] >= 0 || sp->str_arg[1] >= 0)
		fill_sargs_of(d, ev, sp, args_with_dt);
}

/*
 * The read-ahead of RTD_GOTRACE_RESOLVE: bytes [off, off + n) of the
 * input, from what is buffered or else from the source. Returns how many
 * there are (fewer at the end of the input), or -1 when they have not
 * been fed yet.
 */
static int64_t la_bytes(rtd_gotrace_dec *d, uint64_t off, size_t n, const uint8_t **p)
{
	struct v2_state *st = d->v2;
	uint64_t have = d->base + d->in.len;
	if (off + n <= have || (!d->src && d->finished)) {
		if (off >= have)
			return 0;
		*p = d->in.data + (off - d->base);
		return (int64_t)(off + n <= have ? n : have - off);
	}
	if (!d->src)
		return -1;
	if (!st->la_buf && !(st->la_buf = malloc(V2_MAX_BATCH + 64)))
		return 0; /* no memory: the read-ahead stops here */
	int64_t got = d->src(st->la_buf, n, off, d->src_ctx);
	*p = st->la_buf;
	return got < 0 ? 0 : got;
}

/* A table error met reading ahead is left for the events in order. */
static void la_stop(rtd_gotrace_dec *d)
{
	d->v2->la_ok = false;
	d->err = 0;
	d->errmsg[0] = 0;
	d->erroff = 0;
}

/*
 * RTD_GOTRACE_RESOLVE: read the generation that starts at the current
 * position ahead, to its end (the first batch of another generation, the
 * end of the input or damage, which the events in order then meet), and
 * put its Strings and Stacks batches in the tables. Returns 1 when done,
 * 0 when more input is needed.
 */
static int lookahead(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	if (!st->la_active) {
		st->la_active = st->la_ok = true;
		st->la_scan = d->base + d->pos;
		st->la_gen = 0;
		ahead_reset(d);
	}
	for (;;) {
		const uint8_t *p;
		int64_t n = la_bytes(d, st->la_scan, 1 + 5 * 10, &p);
		if (n < 0)
			return 0;
		if (n == 0)
			break; /* the end of the input */
		rtd_rd r;
		rd_init(&r, p, (size_t)n);
		uint8_t t = rd_u8(&r);
		bool exp = t == RTD_GO2_EV_EXPERIMENTAL_BATCH && d->ver >= 1023;
		if (!rd_ok(&r) || (t != RTD_GO2_EV_EVENT_BATCH && !exp))
			break;
		uint64_t a[5] = {0};
		for (int i = 0; i < (exp ? 5 : 4); i++)
			a[i] = rd_varuint(&r);
		uint64_t gen = exp ? a[1] : a[0], size = exp ? a[4] : a[3];
		if (!rd_ok(&r) || size > V2_MAX_BATCH || (st->la_gen && gen != st->la_gen))
			break;
		st->la_gen = gen;
		uint64_t data = st->la_scan + rd_off(&r);
		if (!exp && st->la_ok && size) {
			if ((n = la_bytes(d, data, (size_t)size, &p)) < 0)
				return 0;
			if ((uint64_t)n < size)
				break; /* cut short: the events in order say so */
			struct v2_bad bad = {0};
			d->adding_ahead = true;
			int rc = v2_parse_dict(d, p, (size_t)size, data, &bad);
			d->adding_ahead = false;
			if (rc < 0)
				la_stop(d);
		}
		st->la_scan = data + size;
	}
	st->la_end = st->la_scan;
	st->la_active = false;
	return 1;
}

int v2_next_raw(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev)
{
	struct v2_state *st = d->v2;
	if (d->resolve && d->base + d->pos >= st->la_end && !lookahead(d))
		return 0;
	if (d->pos >= d->in.len) {
		if (d->finished && st->batch_end > d->base + d->pos)
			return gtd_fail(d, -RTD_E_TRUNCATED, d->base + d->pos,
					"trace ends inside the batch at offset %llu (%llu bytes short)",
					(unsigned long long)st->batch_off,
					(unsigned long long)(st->batch_end - d->base - d->pos));
		if (d->finished && st->raw_gen && st->raw_freq_gen != st->raw_gen)
			/* the runtime writes a generation's frequency, stacks
			 * and strings when it ends (traceAdvance) */
			return gtd_fail(d, -RTD_E_TRUNCATED, d->base + d->pos,
					"the trace ends in generation %llu before its Frequency "
					"batch, which the runtime writes with the stacks and "
					"strings when a generation ends",
					(unsigned long long)st->raw_gen);
		return 0;
	}
	rtd_rd r;
	struct v2_raw raw;
	uint64_t off = d->base + d->pos;
	rd_init(&r, d->in.data + d->pos, d->in.len - d->pos);
	int rc = v2_read_raw(d, &r, off, &raw);
	if (rc <= 0)
		return rc;
	uint64_t end = off + rd_off(&r);
	bool batch_hdr = raw.typ == RTD_GO2_EV_EVENT_BATCH ||
			 raw.typ == RTD_GO2_EV_EXPERIMENTAL_BATCH;
	if (!batch_hdr) {
		if (off >= st->batch_end)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"%s at offset %llu is outside of any batch",
					v2_specs[raw.typ].name, (unsigned long long)off);
		if (end > st->batch_end)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"%s at offset %llu runs past the end of its batch (offset %llu)",
					v2_specs[raw.typ].name, (unsigned long long)off,
					(unsigned long long)st->batch_end);
	} else if (off < st->batch_end) {
		return gtd_fail(d, -RTD_E_GO_EVENT, off,
				"batch header at offset %llu inside the batch that ends at %llu",
				(unsigned long long)off, (unsigned long long)st->batch_end);
	}
	d->pos += rd_off(&r);
	v2_fill_raw(d, &raw, ev);
	if (d->resolve && (raw.typ == RTD_GO2_EV_STRING || raw.typ == RTD_GO2_EV_STACK))
		ahead_reached(d, raw.typ == RTD_GO2_EV_STACK, raw.args[0], off);
	switch (raw.typ) {
	case RTD_GO2_EV_EVENT_BATCH:
		if (raw.args[3] > V2_MAX_BATCH)
			return gtd_fail(d, -RTD_E_CAP, off,
					"batch at offset %llu is %llu bytes (limit %u)",
					(unsigned long long)off,
					(unsigned long long)raw.args[3], V2_MAX_BATCH);
		if (raw.args[0] != st->raw_gen) {
			/* Strings and stacks are per generation. */
			tables_reset(d);
			st->raw_gen = raw.args[0];
		}
		st->batch_off = off;
		st->batch_end = end + raw.args[3];
		st->batch_m = raw.args[1];
		st->ticks = (int64_t)raw.args[2];
		ev->ts = ev->ticks = st->ticks;
		break;
	case RTD_GO2_EV_EXPERIMENTAL_BATCH:
		st->batch_end = end; /* the data was the batch */
		ev->ts = ev->ticks = (int64_t)raw.args[3];
		ev->gen = raw.args[1];
		ev->m = raw.args[2] == V2_NO_THREAD ? -1 : (int64_t)raw.args[2];
		return 1;
	case RTD_GO2_EV_STRING:
		if ((rc = table_add_string(d, raw.args[0], raw.data, raw.dlen, off)) < 0)
			return rc;
		break;
	case RTD_GO2_EV_STACK:
		if (ev->nframes &&
		    (rc = table_add_stack(d, raw.args[0], ev->frames, ev->nframes, off)) < 0)
			return rc;
		break;
	case RTD_GO2_EV_FREQUENCY:
		d->freq = (int64_t)raw.args[0];
		st->raw_freq_gen = st->raw_gen;
		break;
	case RTD_GO2_EV_CPU_SAMPLE: /* its thread, P and G are its own */
		ev->ts = ev->ticks = (int64_t)raw.args[0];
		ev->p = (int64_t)raw.args[2];
		ev->g = raw.args[3];
		ev->gen = st->raw_gen;
		ev->m = (int64_t)raw.args[1];
		v2_fill_sargs(d, ev, raw.args);
		return 1;
	default:
		if (v2_specs[raw.typ].flags & V2_TIMED) {
			st->ticks = wrap_add(st->ticks, (int64_t)raw.args[0]);
			ev->ts = ev->ticks = st->ticks;
		}
	}
	ev->gen = st->raw_gen;
	ev->m = st->batch_m == V2_NO_THREAD ? -1 : (int64_t)st->batch_m;
	v2_fill_sargs(d, ev, raw.args);
	return 1;
}

/* ---- ordered mode: collect a generation, order it, hand it out ---- */

/* v2_fill_out(), inline in hand_out() */
static inline __attribute__((always_inline)) void
fill_out(rtd_gotrace_dec *d, const struct v2_strs *strs, const struct v2_out *o,
	 const uint64_t *args, int64_t t, uint64_t gen, struct rtd_gotrace_event *ev)
{
	const struct v2_spec *sp = &v2_specs[o->type];
	/* every field set (no memset of the whole event: this runs for each
	 * event handed out) */
	ev->off = o->off;
	ev->type = o->type;
	ev->name = sp->name;
	ev->ts = t;
	ev->ticks = 0;
	ev->seq = 0;
	unsigned skip = (sp->flags & V2_TIMED) ? 1 : 0;
	unsigned n = o->nargs > skip ? o->nargs - skip : 0;
	if (n > RTD_GOTRACE_MAX_ARGS)
		n = RTD_GOTRACE_MAX_ARGS;
	ev->nargs = n;
	ev->argnames = sp->args ? sp->args + skip : NULL;
	/* a fixed-size clear (the rest after nargs would be a rep stos) */
	memset(ev->args, 0, sizeof(ev->args));
	for (unsigned i = 0; i < n; i++)
		ev->args[i] = args[i + skip];
	ev->raw = args;
	ev->nraw = o->nargs;
	ev->m = o->m == V2_NO_THREAD ? -1 : (int64_t)o->m;
	ev->p = o->p;
	ev->g = o->g == UINT64_MAX ? 0 : o->g;
	ev->gen = gen;
	/* (o->args are 0 after nargs; @args may end there) */
	int si = sp->stack_arg[0];
	ev->stack = si >= 0 && (unsigned)si < o->nargs ? args[si] : 0;
	ev->sargs[0] = ev->sargs[1] = NULL;
	ev->sarg_lens[0] = ev->sarg_lens[1] = 0;
	ev->str_id = 0;
	ev->str = NULL;
	ev->str_len = 0;
	ev->nframes = 0;
	ev->frames = NULL;
	ev->nsargs = 0;
	ev->sargnames = sp->sargs;
	if (sp->str_arg[0] >= 0 || sp->str_arg[1] >= 0) {
		if (strs)
			fill_sargs_tab(d, strs, ev, sp, args, o->nargs);
		else
			fill_sargs_of(d, ev, sp, args);
	}
	if (o->type == RTD_GO2_EV_USER_TASK_END) {
		/* its task's parent and name (the ordering found them) */
		static const char *const argn[] = {"task", "stack", "parent_task"};
		static const char *const sargn[] = {"name"};
		ev->argnames = argn;
		ev->nargs = 3;
		ev->args[2] = o->task_parent;
		ev->nsargs = 1;
		ev->sargnames = sargn;
		ev->sargs[0] = o->task_name;
		ev->sarg_lens[0] = strlen(o->task_name);
	}
}

void v2_out_sargs(rtd_gotrace_dec *d, const struct v2_out *o, struct rtd_gotrace_event *ev)
{
	const struct v2_spec *sp = &v2_specs[o->type];
	ev->nsargs = 0;
	ev->sargnames = sp->sargs;
	if (sp->str_arg[0] >= 0 || sp->str_arg[1] >= 0)
		fill_sargs_of(d, ev, sp, o->args);
}

void v2_fill_out(rtd_gotrace_dec *d, const struct v2_strs *strs, const struct v2_out *o,
		 const uint64_t *args, int64_t t, uint64_t gen, struct rtd_gotrace_event *ev)
{
	fill_out(d, strs, o, args, t, gen, ev);
}

/* The time Go's reader gives the next event (strictly rising). */
static int64_t out_time(struct v2_state *st, const struct v2_out *o)
{
	int64_t t = o->time;
	if (t <= st->last_time)
		t = wrap_add(st->last_time, 1);
	st->last_time = t;
	return t;
}

/* The next queued event, built whole, or in compact mode only its
 * offset, type, name, time and generation (the rest is in st->cout). */
static inline __attribute__((always_inline)) void
hand_out(rtd_gotrace_dec *d, const struct v2_out *o, struct rtd_gotrace_event *ev)
{
	struct v2_state *st = d->v2;
	int64_t t = out_time(st, o);
	if (!st->compact) {
		fill_out(d, NULL, o, o->args, t, st->qgen, ev);
		return;
	}
	st->cout = o;
	ev->off = o->off;
	ev->type = o->type;
	ev->name = v2_specs[o->type].name;
	ev->ts = t;
	ev->gen = st->qgen;
}

bool v2_set_compact(rtd_gotrace_dec *d, bool on)
{
	if (!d->v2 || d->mode != RTD_GOTRACE_ORDERED)
		return false;
	d->v2->compact = on;
	d->v2->cout = NULL;
	return on;
}

const struct v2_out *v2_compact_take(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	const struct v2_out *o = st->cout;
	st->cout = NULL;
	return o;
}

static int add_batch(rtd_gotrace_dec *d, const struct v2_batch *b)
{
	struct v2_state *st = d->v2;
	if (st->nb == st->capb) {
		size_t nc = st->capb ? st->capb * 2 : 64;
		struct v2_batch *n = realloc(st->b, nc * sizeof(*n));
		if (!n)
			return gtd_fail(d, -ENOMEM, b->off, "out of memory");
		st->b = n;
		st->capb = nc;
	}
	st->b[st->nb++] = *b;
	return 0;
}

/* Stash the current error to report once the queued events are out. */
static void defer_error(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	st->deferred = d->err;
	st->deferred_off = d->erroff;
	memcpy(st->deferred_msg, d->errmsg, sizeof(st->deferred_msg));
	st->deferred_set = true;
	d->err = 0;
	d->errmsg[0] = 0;
}

/* 1: a generation is complete (or the input ended), 0: need more, <0. */
static int collect(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	if (st->scan < d->pos)
		st->scan = d->pos;
	for (;;) {
		size_t p = st->scan;
		if (p >= d->in.len)
			return d->finished ? 1 : 0;
		rtd_rd r;
		uint64_t off = d->base + p;
		rd_init(&r, d->in.data + p, d->in.len - p);
		uint8_t t = rd_u8(&r);
		bool exp = t == RTD_GO2_EV_EXPERIMENTAL_BATCH && d->ver >= 1023;
		if (rd_ok(&r) && t != RTD_GO2_EV_EVENT_BATCH && !exp)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"expected a batch header at offset %llu, found event type %u",
					(unsigned long long)off, t);
		uint64_t a[5] = {0};
		bool gen_ok = false; /* the generation number is all there */
		for (int i = 0; i < (exp ? 5 : 4); i++) {
			a[i] = rd_varuint(&r);
			if (i == (exp ? 1 : 0))
				gen_ok = rd_ok(&r);
		}
		/* experimental: exp, gen, m, time, then the data length */
		uint64_t gen = exp ? a[1] : a[0], m = exp ? a[2] : a[1];
		uint64_t time = exp ? a[3] : a[2], size = exp ? a[4] : a[3];
		if (rd_ok(&r) && size > V2_MAX_BATCH)
			return gtd_fail(d, -RTD_E_CAP, off,
					"batch at offset %llu is %llu bytes (limit %u)",
					(unsigned long long)off, (unsigned long long)size,
					V2_MAX_BATCH);
		if (rd_ok(&r))
			rd_skip(&r, (size_t)size);
		if (!rd_ok(&r)) {
			if (r.err == -RTD_E_TRUNCATED && !d->finished)
				return 0;
			gtd_fail(d, r.err == -RTD_E_TRUNCATED ? -RTD_E_TRUNCATED : -RTD_E_GO_EVENT,
				 off, "trace ends inside the batch at offset %llu", (unsigned long long)off);
			if (st->nb == 0)
				return d->err;
			/* the cut batch is this generation's (or may be):
			 * the generation is not whole */
			st->cut_here = !gen_ok || gen == st->gen;
			defer_error(d);
			st->done = true;
			return 1;
		}
		if (gen == 0)
			return gtd_fail(d, -RTD_E_GO_EVENT, off, "invalid generation number 0 at offset %llu",
					(unsigned long long)off);
		if (st->gen == 0)
			st->gen = gen;
		if (gen == st->gen + 1 && st->nb)
			return 1; /* the next generation starts here */
		if (gen != st->gen)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"generations out of order at offset %llu (%llu after %llu)",
					(unsigned long long)off, (unsigned long long)gen,
					(unsigned long long)st->gen);
		struct v2_batch b = {.off = off, .gen = exp ? UINT64_MAX : gen, .m = m,
				     .time = (int64_t)time,
				     .data = p + rd_off(&r) - (size_t)size, .len = (size_t)size};
		int rc = add_batch(d, &b);
		if (rc < 0)
			return rc;
		st->scan = p + rd_off(&r);
	}
}

/* Go's synthetic Sync event at time t (raised to keep time rising). */
static const char *const sync_args[] = {"clock_time", "clock_mono", "clock_sec", "clock_nsec"};

static void fill_sync(rtd_gotrace_dec *d, int64_t t, uint64_t off, bool snap,
		      struct rtd_gotrace_event *ev)
{
	struct v2_state *st = d->v2;
	memset(ev, 0, sizeof(*ev));
	if (snap) { /* Go 1.25+: the generation's clock snapshot */
		ev->nargs = 4;
		ev->argnames = sync_args;
		memcpy(ev->args, st->snap_args, sizeof(st->snap_args));
	}
	ev->off = off;
	ev->type = RTD_GO2_EV_READER_SYNC;
	ev->name = "Sync";
	if (t <= st->last_time)
		t = wrap_add(st->last_time, 1);
	st->last_time = t;
	ev->ts = t;
	ev->p = -1;
	ev->m = -1;
	ev->gen = st->qgen;
}

/* Go 1.25+ readers: the first timestamp of the generation (minTs). */
static int64_t gen_min_time(const rtd_gotrace_dec *d)
{
	const struct v2_state *st = d->v2;
	uint64_t min = 0;
	for (size_t i = 0; i < st->nb; i++)
		if (min == 0 || (uint64_t)st->b[i].time < min)
			min = (uint64_t)st->b[i].time;
	if (d->freq <= 0)
		return 0;
	return f2i((double)min * (1.0 / ((double)d->freq / 1e9)));
}

/*
 * Go's reader adds a Sync event per generation. Go 1.22/1.23 (the
 * readers of go 1.22 and 1.23 traces) emit it after each generation's
 * events at the last time + 1, none before the first. Later readers
 * (those of go 1.25/1.26 traces) emit one at the start of each
 * generation at its first batch time, one at the end, and one before an
 * error met while reading a generation. rtdiag does what the trace's
 * own Go release does.
 */
/* The generation's bytes are no longer needed. */
static void release_generation(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	size_t used = st->scan;
	memmove(d->in.data, d->in.data + used, d->in.len - used);
	d->in.len -= used;
	d->base += used;
	d->pos = 0;
	st->scan = 0;
	st->nb = 0;
	st->gen = 0;
}

/*
 * The merge of a cut generation (st->cut) has ended: at its last batch,
 * or with @rc < 0 at an event that cannot go next, most likely for want
 * of what the runtime had not written yet. Either way the input's end
 * is the cause to report: "truncated at byte N", what was ordered, and
 * where the ordering stopped.
 */
static int cut_end(rtd_gotrace_dec *d, int rc)
{
	struct v2_state *st = d->v2;
	char why[512] = "";
	uint64_t off = d->fed;
	if (rc < 0 && st->gen_out == 0) {
		/* typically the batch with the trace's start (its STW and
		 * first states), which the M running StartTrace flushes last */
		snprintf(why, sizeof(why), "; none can go first without batches the runtime "
			 "had not written yet (the first waiting: offset %llu: %.300s); "
			 "without --ordered they are printed", (unsigned long long)d->erroff,
			 d->errmsg);
		off = d->erroff;
	} else if (rc < 0) {
		snprintf(why, sizeof(why), "; the ordering stopped at offset %llu: %.400s",
			 (unsigned long long)d->erroff, d->errmsg);
		off = d->erroff;
	} else if (st->deferred_set) {
		/* collect's own message, after its "truncated at byte N: " */
		const char *m = strstr(st->deferred_msg, ": ");
		snprintf(why, sizeof(why), " (%.400s)", m ? m + 2 : st->deferred_msg);
	}
	st->nq = st->iq = 0;
	st->deferred_set = false;
	st->done = true;
	st->sync_after = false; /* the generation is not whole */
	d->err = 0;
	d->errmsg[0] = 0;
	return gtd_fail(d, -RTD_E_TRUNCATED, off,
			"generation %llu is cut short before the runtime wrote its stacks "
			"and strings: %llu of its events ordered (their stacks and "
			"strings unresolved%s)%s",
			(unsigned long long)st->qgen, (unsigned long long)st->gen_out,
			st->freq_assumed ? "; times at Go's 15625000 ticks/s of every OS "
					  "but Windows: its frequency was not written either"
					: "",
		       why);
}

/* v2_next_ordered() past a queued event. */
static int __attribute__((noinline)) next_ordered(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev)
{
	struct v2_state *st = d->v2;
	bool late = d->ver >= 1025;
	for (;;) {
		if (st->sync_before) {
			st->sync_before = false;
			fill_sync(d, st->sync_time, st->sync_off_before, st->snap, ev);
			return 1;
		}
		if (st->iq < st->nq) {
			hand_out(d, &st->q[st->iq++], ev);
			return 1;
		}
		if (st->g) {
			/* Merge lazily: memory is the generation's batches. */
			int rc;
			if (st->pend) {
				/* the events before the end are out */
				st->pend = false;
				rc = st->pend_rc;
				if (rc < 0) {
					d->err = rc;
					d->erroff = st->pend_off;
					memcpy(d->errmsg, st->pend_msg, sizeof(d->errmsg));
				}
			} else {
				st->nq = st->iq = 0;
				uint64_t prev_off = d->erroff;
				rc = v2_gen_step(d);
				st->gen_out += st->nq;
				if (rc > 0)
					continue;
				if (st->nq) {
					/* the events before the end (or the error) first */
					st->pend = true;
					st->pend_rc = rc;
					if (rc < 0) {
						st->pend_off = d->erroff;
						memcpy(st->pend_msg, d->errmsg, sizeof(st->pend_msg));
						d->err = 0;
						d->erroff = prev_off;
						d->errmsg[0] = 0;
					}
					continue;
				}
			}
			v2_gen_free(st->g);
			st->g = NULL;
			if (st->cut && rc != -ENOMEM)
				return cut_end(d, rc);
			if (rc < 0) {
				/* Go returns the error in place of the event; an
				 * error met while reading further is not reached. */
				st->nq = st->iq = 0;
				st->deferred_set = false;
				st->done = true;
				return rc;
			}
			/* Go 1.22/1.23: a Sync after each generation; Go 1.25+:
			 * one before an error met reading the next (the final
			 * one comes when the input ends). */
			st->sync_after = late ? st->spill_err : true;
			release_generation(d);
			continue;
		}
		if (st->sync_after) {
			st->sync_after = false;
			fill_sync(d, st->last_time, st->sync_off, false, ev);
			return 1;
		}
		if (st->deferred_set) {
			d->err = st->deferred;
			d->erroff = st->deferred_off;
			memcpy(d->errmsg, st->deferred_msg, sizeof(d->errmsg));
			st->deferred_set = false;
			st->done = true;
			return d->err;
		}
		if (st->done)
			return 0;
		int rc = collect(d);
		if (rc <= 0)
			return rc;
		if (st->nb == 0) {
			st->done = true;
			st->sync_after = late && st->qgen != 0; /* the final Sync */
			continue;
		}
		st->qgen = st->gen;
		st->sync_off = d->base + st->scan;
		st->sync_off_before = st->b[0].off;
		st->gen_parsed = false;
		st->snap = false;
		st->spill_err = st->deferred_set; /* collect met damage after it */
		/* nothing follows the generation: it may be cut */
		st->at_end = d->finished && (st->scan >= d->in.len ||
					     (st->deferred_set && st->cut_here));
		st->gen_out = 0;
		if (d->tables_fn)
			d->tables_fn(d->tables_ctx); /* the last generation's tables go */
		rc = v2_gen_begin(d);
		if (st->snap && d->freq > 0)
			st->snap_args[0] = (uint64_t)f2i((double)st->snap_ticks *
							 (1.0 / ((double)d->freq / 1e9)));
		if (late) {
			st->sync_before = true;
			st->sync_time = st->gen_parsed ? gen_min_time(d) : st->last_time;
		}
		if (rc < 0) {
			/* The generation cannot be read: its error (after the
			 * Go 1.25+ Sync) replaces the one met further on. */
			defer_error(d);
			st->done = true;
			release_generation(d);
		}
	}
}

int v2_next_ordered(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev)
{
	struct v2_state *st = d->v2;
	/* the common case: a queued event (a Sync due before the queued
	 * events is only set while none is queued) */
	if (st->iq < st->nq) {
		hand_out(d, &st->q[st->iq++], ev);
		return 1;
	}
	return next_ordered(d, ev);
}

void v2_free(rtd_gotrace_dec *d)
{
	struct v2_state *st = d->v2;
	if (!st)
		return;
	free(st->b);
	free(st->q);
	free(st->la_buf);
	free((void *)st->dstr);
	free((void *)st->dstk);
	v2_gen_free(st->g);
	v2_order_free(st->ord);
	free(st);
	d->v2 = NULL;
}

int rtd_gotrace_dec_set_go_map_start(rtd_gotrace_dec *d, unsigned slot)
{
	if (!d || !d->v2 || d->mode != RTD_GOTRACE_ORDERED || slot > 7)
		return -RTD_E_STATE;
	d->v2->map_start = slot;
	return 0;
}

int rtd_gotrace_dec_set_go_map_starts(rtd_gotrace_dec *d, const unsigned *slots, size_t n)
{
	if (!d || d->mode != RTD_GOTRACE_ORDERED || n > RTD_GOTRACE_MAX_MAP_STARTS || (n && !slots))
		return -RTD_E_INVAL;
	for (size_t i = 0; i < n; i++)
		if (slots[i] > 7)
			return -RTD_E_INVAL;
	for (size_t i = 0; i < n; i++)
		d->go_map[i] = (uint8_t)slots[i];
	d->ngo_map = (unsigned)n;
	d->go_map_gen = 0;
	return 0;
}

size_t v2_put_uvarint(uint8_t *o, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		o[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (uint8_t)v;
	return n;
}
