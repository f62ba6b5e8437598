/* SPDX-License-Identifier: MIT */
/*
 * filter.c - which events of a Go trace a user asked for
 * (rtd_gotrace_filter): event name, goroutine, P, thread, time range,
 * stack frames and strings. Values of one kind are alternatives (OR),
 * kinds are combined (AND), as grep does with its patterns.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "gotrace/filter.h"

struct relist {
	regex_t *re;
	size_t n, cap;
};

struct idlist {
	int64_t *v;
	size_t n, cap;
};

/* The old format names a thread only in ProcStart: the last one per P. */
struct pthread {
	int64_t p;
	int64_t m;
};

struct rtd_gotrace_filter {
	struct relist re[RTD_GOTRACE_FILTER_NRE];
	struct idlist id[RTD_GOTRACE_FILTER_NID];
	bool has_since, has_until, since_rel, until_rel, invert;
	int64_t since, until; /* as given: event units, or ns from the start */
	char err[256];
	/* what the events in order tell */
	struct pthread *pm;
	size_t npm;
	bool have_start;
	int64_t start;  /* the first time of the trace, in event units */
	int64_t freq;   /* raw mode: ticks per second (prepare) */
	bool prepared;
	/* rtd_gotrace_filter_keep_ordered(): the offsets of the events that
	 * matched in Go's order */
	bool keep;
	rtd_map kept;
};

rtd_gotrace_filter *rtd_gotrace_filter_new(void)
{
	return calloc(1, sizeof(struct rtd_gotrace_filter));
}

void rtd_gotrace_filter_free(rtd_gotrace_filter *f)
{
	if (!f)
		return;
	for (int k = 0; k < RTD_GOTRACE_FILTER_NRE; k++) {
		for (size_t i = 0; i < f->re[k].n; i++)
			regfree(&f->re[k].re[i]);
		free(f->re[k].re);
	}
	for (int k = 0; k < RTD_GOTRACE_FILTER_NID; k++)
		free(f->id[k].v);
	free(f->pm);
	rtd_map_free(&f->kept);
	free(f);
}

const char *rtd_gotrace_filter_error(const rtd_gotrace_filter *f)
{
	return f->err;
}

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4;
	void *q = realloc(*p, nc * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

int rtd_gotrace_filter_add_regex(rtd_gotrace_filter *f, enum rtd_gotrace_filter_re which,
				 const char *re)
{
	if ((unsigned)which >= RTD_GOTRACE_FILTER_NRE || !re)
		return -RTD_E_INVAL;
	struct relist *l = &f->re[which];
	void *p = l->re;
	if (grow(&p, &l->cap, l->n, sizeof(regex_t)) < 0)
		return -ENOMEM;
	l->re = p;
	int rc = regcomp(&l->re[l->n], re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[200];
		regerror(rc, &l->re[l->n], msg, sizeof(msg));
		snprintf(f->err, sizeof(f->err), "bad regexp '%s': %s", re, msg);
		return -RTD_E_INVAL;
	}
	l->n++;
	return 0;
}

int rtd_gotrace_filter_add_id(rtd_gotrace_filter *f, enum rtd_gotrace_filter_id which,
			      int64_t id)
{
	if ((unsigned)which >= RTD_GOTRACE_FILTER_NID)
		return -RTD_E_INVAL;
	struct idlist *l = &f->id[which];
	void *p = l->v;
	if (grow(&p, &l->cap, l->n, sizeof(int64_t)) < 0)
		return -ENOMEM;
	l->v = p;
	l->v[l->n++] = id;
	return 0;
}

int rtd_gotrace_filter_set_time(rtd_gotrace_filter *f, bool until, int64_t t,
				bool from_start)
{
	if (from_start && t < 0)
		return -RTD_E_INVAL;
	if (until) {
		f->has_until = true;
		f->until = t;
		f->until_rel = from_start;
	} else {
		f->has_since = true;
		f->since = t;
		f->since_rel = from_start;
	}
	return 0;
}

void rtd_gotrace_filter_set_invert(rtd_gotrace_filter *f, bool invert)
{
	f->invert = invert;
}

/* Criteria beyond the event name. */
static bool has_event_criteria(const rtd_gotrace_filter *f)
{
	for (int k = 0; k < RTD_GOTRACE_FILTER_NID; k++)
		if (f->id[k].n)
			return true;
	return f->has_since || f->has_until || f->re[RTD_GOTRACE_FILTER_STACK].n ||
	       f->re[RTD_GOTRACE_FILTER_STRING].n;
}

bool rtd_gotrace_filter_active(const rtd_gotrace_filter *f)
{
	return f->re[RTD_GOTRACE_FILTER_TYPE].n || has_event_criteria(f) || f->invert;
}

static bool relative(const rtd_gotrace_filter *f)
{
	return (f->has_since && f->since_rel) || (f->has_until && f->until_rel);
}

/* The earliest time of the events the first pass sees. */
static int note_start(void *arg, const struct rtd_gotrace_event *ev)
{
	rtd_gotrace_filter *f = arg;
	if (!filter_meta(ev) && (!f->have_start || ev->ts < f->start)) {
		f->start = ev->ts;
		f->have_start = true;
	}
	return 0;
}

/*
 * The first pass relative times need in raw mode: the trace's frequency
 * (the old format writes it at the end) and its first time (the earliest
 * event: batches are not in time order).
 */
int rtd_gotrace_filter_prepare(rtd_gotrace_filter *f, enum rtd_gotrace_mode mode,
			       rtd_gotrace_read_at_fn read_at, void *ctx)
{
	if (mode != RTD_GOTRACE_RAW || !relative(f) || f->prepared)
		return 0;
	if (!read_at) {
		snprintf(f->err, sizeof(f->err),
			 "a time from the trace's start in raw mode needs its frequency and first time, which a first pass over the input finds (give a source)");
		return -RTD_E_STATE;
	}
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	int rc = d ? dec_run_source(d, read_at, ctx, note_start, f) : -ENOMEM;
	f->freq = d ? rtd_gotrace_dec_frequency(d) : 0;
	if (rc < 0)
		snprintf(f->err, sizeof(f->err), "first pass for the trace's start: %s",
			 d && *rtd_gotrace_dec_error(d, NULL) ? rtd_gotrace_dec_error(d, NULL)
							   : rtd_strerror(rc));
	else if (f->freq <= 0)
		snprintf(f->err, sizeof(f->err),
			 "no frequency in the trace: a time from its start cannot be given in ticks");
	rtd_gotrace_dec_free(d);
	if (rc < 0)
		return rc;
	if (f->freq <= 0)
		return -RTD_E_GO_EVENT;
	f->prepared = true;
	return 0;
}

int rtd_gotrace_filter_check(const rtd_gotrace_filter *f, const rtd_gotrace_dec *d,
			     char *why, size_t len)
{
	int ver = rtd_gotrace_dec_version(d);
	bool raw = filter_dec_mode(d) == RTD_GOTRACE_RAW;
	if (why && len)
		why[0] = 0;
	if (raw && relative(f) && !f->prepared) {
		if (why)
			snprintf(why, len, "a time from the trace's start in raw mode needs rtd_gotrace_filter_prepare() first");
		return -RTD_E_STATE;
	}
	if (raw && ver > 0 && ver < 1022 && f->re[RTD_GOTRACE_FILTER_STACK].n &&
	    !filter_dec_resolves(d)) {
		if (why)
			snprintf(why, len, "matching stacks of a Go 1.5-1.21 trace in raw mode needs its stack table, which the runtime writes at its end: read it ahead from a source (RTD_GOTRACE_RESOLVE), or order the events");
		return -RTD_E_STATE;
	}
	if (raw && ver >= 1022 && !f->keep &&
	    (f->id[RTD_GOTRACE_FILTER_G].n || f->id[RTD_GOTRACE_FILTER_P].n)) {
		if (why)
			snprintf(why, len, "in raw mode the goroutine and P of a Go 1.22+ event are not known (the runtime writes them as state changes that only ordering follows): a goroutine or P filter matches CPU samples only");
		return 1;
	}
	return 0;
}

static bool id_in(const struct idlist *l, int64_t v)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return true;
	return false;
}

static bool re_any(const struct relist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (regexec(&l->re[i], s, 0, NULL, 0) == 0)
			return true;
	return false;
}

static int64_t thread_of(const rtd_gotrace_filter *f, int64_t p)
{
	for (size_t i = 0; i < f->npm; i++)
		if (f->pm[i].p == p)
			return f->pm[i].m;
	return -1;
}

/* Follow what the events in order tell: the old format's thread per P,
 * the trace's first time in ordered mode. */
static void note(rtd_gotrace_filter *f, bool raw, const struct rtd_gotrace_event *ev)
{
	if (!raw && !f->have_start && !filter_meta(ev)) {
		f->have_start = true;
		f->start = ev->ts;
	}
	if (ev->gen || ev->type != RTD_GO_EV_PROC_START)
		return;
	for (size_t i = 0; i < f->npm; i++)
		if (f->pm[i].p == ev->p) {
			f->pm[i].m = (int64_t)ev->args[0];
			return;
		}
	void *p = f->pm;
	size_t cap = f->npm;
	if (grow(&p, &cap, f->npm, sizeof(*f->pm)) < 0)
		return; /* no memory: this P's thread stays unknown */
	f->pm = p;
	f->pm[f->npm++] = (struct pthread){ev->p, (int64_t)ev->args[0]};
}

static bool stack_matches(const struct relist *l, const rtd_gotrace_dec *d, uint64_t id)
{
	const struct rtd_gotrace_frame *fr;
	size_t n = rtd_gotrace_dec_stack(d, id, &fr);
	char buf[4096];
	for (size_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%s %s:%" PRIu64, fr[i].fn, fr[i].file, fr[i].line);
		if (re_any(l, buf))
			return true;
		snprintf(buf, sizeof(buf), "0x%" PRIx64, fr[i].pc);
		if (re_any(l, buf))
			return true;
	}
	return false;
}

/* A time bound in the event's units. */
static int64_t bound(const rtd_gotrace_filter *f, bool raw, int64_t t, bool rel)
{
	if (!rel)
		return t;
	if (!raw) /* ordered: ns */
		return f->start + t;
	return f->start + (int64_t)((double)t * ((double)f->freq / 1e9));
}

static bool time_ok(const rtd_gotrace_filter *f, bool raw, int64_t ts)
{
	if (f->has_since && ts < bound(f, raw, f->since, f->since_rel))
		return false;
	return !(f->has_until && ts > bound(f, raw, f->until, f->until_rel));
}

static bool event_matches(const rtd_gotrace_filter *f, const rtd_gotrace_dec *d, bool raw,
			  const struct rtd_gotrace_event *ev)
{
	const struct idlist *id = f->id;
	/* the new format's raw mode knows G and P of CPU samples only */
	bool gp = !raw || !ev->gen || ev->type == RTD_GO2_EV_CPU_SAMPLE;
	if (id[RTD_GOTRACE_FILTER_G].n && (!gp || !id_in(&id[RTD_GOTRACE_FILTER_G], (int64_t)ev->g)))
		return false;
	if (id[RTD_GOTRACE_FILTER_P].n && (!gp || !id_in(&id[RTD_GOTRACE_FILTER_P], ev->p)))
		return false;
	if (id[RTD_GOTRACE_FILTER_M].n &&
	    !id_in(&id[RTD_GOTRACE_FILTER_M], ev->gen ? ev->m : thread_of(f, ev->p)))
		return false;
	if ((f->has_since || f->has_until) && !time_ok(f, raw, ev->ts))
		return false;
	const struct relist *st = &f->re[RTD_GOTRACE_FILTER_STACK];
	if (st->n && !(ev->stack && stack_matches(st, d, ev->stack)))
		return false;
	const struct relist *sr = &f->re[RTD_GOTRACE_FILTER_STRING];
	if (sr->n) {
		bool any = false;
		for (unsigned i = 0; i < ev->nsargs && !any; i++)
			any = re_any(sr, ev->sargs[i]);
		return any;
	}
	return true;
}

int rtd_gotrace_filter_match(rtd_gotrace_filter *f, const rtd_gotrace_dec *d,
			     const struct rtd_gotrace_event *ev)
{
	bool raw = filter_dec_mode(d) == RTD_GOTRACE_RAW;
	note(f, raw, ev);
	if (f->keep)
		return rtd_map_get(&f->kept, ev->off, NULL);
	const struct relist *ty = &f->re[RTD_GOTRACE_FILTER_TYPE];
	bool m = !ty->n || re_any(ty, ev->name);
	if (filter_meta(ev)) {
		/* Dictionary and batch events carry no G, P or time: they
		 * match only a type filter, or no filter at all. */
		if (ty->n)
			return m;
		return !has_event_criteria(f) && !f->invert;
	}
	if (m)
		m = event_matches(f, d, raw, ev);
	return f->invert ? !m : m;
}

#define MAX_KEPT (1u << 28) /* matching events remembered */

struct keep_pass {
	rtd_gotrace_filter *f;
	rtd_gotrace_dec *d;
};

/* An ordered event: its offset is kept when it matches. */
static int keep_event(void *arg, const struct rtd_gotrace_event *ev)
{
	struct keep_pass *kp = arg;
	rtd_gotrace_filter *f = kp->f;
	int ver = rtd_gotrace_dec_version(kp->d);
	if (ver < 1022) {
		snprintf(f->err, sizeof(f->err),
			 "keeping the events that match in Go's order is for Go 1.22+ traces; in this Go 1.%d trace the G and P of an event are known without ordering",
			 ver % 1000);
		return -RTD_E_UNSUPPORTED;
	}
	/* Go's synthetic events (a GoSwitch's GoBlock and GoStart) count
	 * for the wire event they come from */
	if (ev->type == RTD_GO2_EV_READER_SYNC || !rtd_gotrace_filter_match(f, kp->d, ev) ||
	    rtd_map_get(&f->kept, ev->off, NULL))
		return 0;
	if (rtd_map_put(&f->kept, ev->off, (void *)1, NULL) < 0) {
		snprintf(f->err, sizeof(f->err), "more than %u matching events to keep", MAX_KEPT);
		return -RTD_E_CAP;
	}
	return 0;
}

int rtd_gotrace_filter_keep_ordered(rtd_gotrace_filter *f, rtd_gotrace_read_at_fn read_at,
				    void *ctx)
{
	if (!read_at)
		return -RTD_E_INVAL;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	int rc = d ? rtd_gotrace_dec_set_source(d, read_at, ctx) : -ENOMEM;
	struct keep_pass kp = {f, d};
	rtd_map_init(&f->kept, MAX_KEPT);
	if (rc == 0)
		rc = dec_run_source(d, read_at, ctx, keep_event, &kp);
	if (rc < 0 && !f->err[0] && d)
		snprintf(f->err, sizeof(f->err), "%s",
			 *rtd_gotrace_dec_error(d, NULL) ? rtd_gotrace_dec_error(d, NULL)
							: rtd_strerror(rc));
	rtd_gotrace_dec_free(d);
	/* what the ordered pass followed does not apply to the next */
	f->npm = 0;
	f->have_start = false;
	if (rc < 0)
		return rc;
	f->keep = true;
	return 0;
}
