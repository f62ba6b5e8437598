/* SPDX-License-Identifier: MIT */
/*
 * test_go_events.c - the Go source's records in Go's own words
 * (rtd_gotrace_source_opts.go_events), each checked against the ordered
 * decoder's event at the same place, over every shared recording (old
 * format and golang/exp's Go 1.22+ vectors) and the gotrace fuzz corpus:
 *  - a PROCESS record with the trace's Go version first, then one INSTANT
 *    (category "go") per event, in the decoder's order: its name, time,
 *    context (ev.g, ev.p, ev.m), its named arguments with their values,
 *    after each stack argument "NAME.fn" (its stack's top function, NULL
 *    for stack 0), then its named string arguments, and its stack with
 *    the decoder's frames;
 *  - the shape rtd_tl_gotrace counts on: every record of one event type
 *    and argument count has the same fields array, at the same address,
 *    and the same non-zero @shape, for the whole trace;
 *  - a damaged trace ends with the same error in both;
 *  - with a decoding thread (opts.threads = 2: Go 1.22+ traces), the same
 *    records, in the same order, as the decoder's events on one thread;
 *  - pulled in batches (rtd_source_next_batch(): of 64, and of 7 over a
 *    decoding thread), the same records, each checked after its
 *    whole batch was filled (its shape's next records, a new
 *    generation's strings), and many records a batch;
 *  - handed to a callback from the source's own loop (rtd_source_each(),
 *    on one thread and over a decoding thread), each record checked
 *    inside the callback, the walk stopped and resumed every 1,000th.
 */
#include <inttypes.h>

#include "test_gotrace.h"
#include "common/map.h"
#include "rtdiag/gotrace_source.h"

static size_t events_checked, shapes_seen, traces_v2;
static size_t threads = 1; /* opts.threads of the sources checked */
static size_t batch;       /* pulled by rtd_source_next_batch(), this many a call */
static bool each;          /* handed to a callback by rtd_source_each() */

/* The source's records pulled @batch at a time (rtd_source_next_batch()),
 * each checked only after the whole batch was filled: a record must stay
 * as it was given until the next pull, whatever came after it in the
 * batch (a record of the same shape, a new generation's strings). */
struct pull {
	rtd_source *src;
	const struct rtd_record *recs[64];
	int n, at, rc;
	size_t batches, records;
};

static int pull_next(struct pull *p, const struct rtd_record **r)
{
	if (!batch)
		return rtd_source_next(p->src, r);
	if (p->at >= p->n) {
		p->rc = rtd_source_next_batch(p->src, p->recs, batch);
		p->at = 0;
		p->n = p->rc > 0 ? p->rc : 0;
		p->batches += p->rc > 0;
		p->records += p->n;
		if (p->rc <= 0) {
			*r = p->recs[0];
			return p->rc;
		}
	}
	*r = p->recs[p->at++];
	return 1;
}

/* "" and NULL are both "no name" (the source says NULL) */
static bool same_name(const char *rec, const char *dec)
{
	if (!dec || !*dec)
		return rec == NULL;
	return rec && !strcmp(rec, dec);
}

static const char *top_of(const rtd_gotrace_dec *d, uint64_t id)
{
	const struct rtd_gotrace_frame *fr;
	size_t n = id ? rtd_gotrace_dec_stack(d, id, &fr) : 0;
	return n && fr[0].fn && *fr[0].fn ? fr[0].fn : NULL;
}

static void check_event(const struct rtd_record *r, const struct rtd_gotrace_event *ev,
			const rtd_gotrace_dec *d, const char *name)
{
	if (r->kind != RTD_REC_INSTANT || strcmp(r->name, ev->name) || r->ts != ev->ts)
		fail_msg("%s: event at %" PRIu64 " (%s, %" PRId64 "): record %s %s %" PRId64,
			 name, ev->off, ev->name, ev->ts, rtd_record_kind_name(r->kind),
			 r->name ? r->name : "-", r->ts);
	assert_string_equal(r->category, "go");
	const struct rtd_field *f = r->fields;
	assert_true(r->nfields >= 3);
	assert_string_equal(f[0].name, "ev.g");
	assert_int_equal(f[0].type, RTD_FIELD_U64);
	assert_int_equal(f[0].u, ev->g);
	assert_string_equal(f[1].name, "ev.p");
	assert_int_equal(f[1].i, ev->p);
	assert_string_equal(f[2].name, "ev.m");
	assert_int_equal(f[2].i, ev->m);
	size_t k = 3;
	for (unsigned i = 0; i < ev->nargs && ev->argnames; i++) {
		if (!ev->argnames[i])
			continue;
		assert_true(k < r->nfields);
		assert_string_equal(f[k].name, ev->argnames[i]);
		assert_int_equal(f[k].type, RTD_FIELD_U64);
		assert_int_equal(f[k].u, ev->args[i]);
		size_t len = strlen(ev->argnames[i]);
		k++;
		if (len >= 5 && !strcmp(ev->argnames[i] + len - 5, "stack")) {
			assert_true(k < r->nfields);
			char key[80];
			snprintf(key, sizeof(key), "%s.fn", ev->argnames[i]);
			assert_string_equal(f[k].name, key);
			assert_int_equal(f[k].type, RTD_FIELD_STR);
			if (!same_name(f[k].s, top_of(d, ev->args[i])))
				fail_msg("%s: %s at %" PRIu64 ": %s is %s, the stack's top %s", name,
					 ev->name, ev->off, key, f[k].s ? f[k].s : "NULL",
					 top_of(d, ev->args[i]) ? top_of(d, ev->args[i]) : "NULL");
			k++;
		}
	}
	for (unsigned i = 0; i < ev->nsargs && ev->sargnames; i++) {
		if (!ev->sargnames[i])
			continue;
		assert_true(k < r->nfields);
		assert_string_equal(f[k].name, ev->sargnames[i]);
		assert_int_equal(f[k].type, RTD_FIELD_STR);
		assert_true(f[k].s == ev->sargs[i] || (f[k].s && ev->sargs[i] &&
							 !strcmp(f[k].s, ev->sargs[i])));
		k++;
	}
	assert_int_equal(k, r->nfields);
	/* the event's stack, frame by frame */
	const struct rtd_gotrace_frame *fr;
	size_t n = ev->stack ? rtd_gotrace_dec_stack(d, ev->stack, &fr) : 0;
	if (!ev->stack) {
		assert_null(r->stack);
		return;
	}
	assert_non_null(r->stack);
	assert_int_equal(r->stack->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r->stack->frames[i].ip, fr[i].pc);
		assert_true(same_name(r->stack->frames[i].name, fr[i].fn));
		assert_true(same_name(r->stack->frames[i].file, fr[i].file));
	}
}

/* The shapes met so far: type << 8 | nargs -> fields array, shape */
struct shapes {
	rtd_map *fields, *ids;
};

/* @r against the decoder's event @ev, and its shape against the shapes
 * before */
static void check_one(struct shapes *sh, const struct rtd_record *r,
		      const struct rtd_gotrace_event *ev, const rtd_gotrace_dec *d, const char *name)
{
	check_event(r, ev, d, name);
	uint64_t key = (uint64_t)ev->type << 8 | ev->nargs;
	void *v;
	assert_int_not_equal(r->shape, 0);
	if (rtd_map_get(sh->fields, key, &v)) {
		/* (in a batch, a shape's second record is in a copy) */
		if (!batch && v != (void *)r->fields)
			fail_msg("%s: %s (%u arguments) at %" PRIu64 ": fields at %p, before at %p",
				 name, ev->name, ev->nargs, ev->off, (const void *)r->fields, v);
		assert_true(rtd_map_get(sh->ids, key, &v));
		assert_int_equal((uintptr_t)v, r->shape);
	} else {
		assert_int_equal(rtd_map_put(sh->fields, key, (void *)r->fields, NULL), 0);
		assert_int_equal(rtd_map_put(sh->ids, key, (void *)(uintptr_t)r->shape, NULL), 0);
		shapes_seen++;
	}
	events_checked++;
}

/* rtd_source_each()'s callback: each record checked against the
 * decoder's next event while the source's loop waits; the walk stopped
 * every 1,000th record, to go on at the next call */
#define EACH_STOP 5
struct each_check {
	rtd_gotrace_dec *d;
	struct shapes *sh;
	const char *name;
	int drc;  /* the decoder's end or error, met before the source's */
	size_t n;
};

static int each_one(void *ctx, const struct rtd_record *r)
{
	struct each_check *c = ctx;
	struct rtd_gotrace_event ev;
	int drc = rtd_gotrace_dec_next(c->d, &ev);
	if (drc != 1) {
		c->drc = drc ? drc : -1;
		fail_msg("%s: the decoder ended (%d), the source gave %s", c->name, drc,
			 rtd_record_kind_name(r->kind));
	}
	check_one(c->sh, r, &ev, c->d, c->name);
	return ++c->n % 1000 == 0 ? EACH_STOP : 0;
}

static void check_trace(const uint8_t *b, size_t n, const char *name)
{
	RTD_OPTS(rtd_gotrace_opts, o, .mode = RTD_GOTRACE_ORDERED);
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	int drc = rtd_gotrace_dec_feed(d, b, n);
	if (drc == 0)
		drc = rtd_gotrace_dec_finish(d);
	RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true, .threads = threads);
	int err = 0;
	rtd_source *src = rtd_gotrace_source_mem(b, n, &so, &err);
	if (!src)
		fail_msg("%s: no source with go_events: %s", name, rtd_strerror(err));
	rtd_map shapes, ids; /* type << 8 | nargs -> fields array, shape */
	rtd_map_init(&shapes, 0);
	rtd_map_init(&ids, 0);
	const struct rtd_record *r;
	struct pull p = {.src = src};
	int rc = pull_next(&p, &r);
	struct rtd_gotrace_event ev;
	if (drc == 0)
		drc = rtd_gotrace_dec_next(d, &ev);
	if (drc == 1) {
		assert_int_equal(rc, 1);
		assert_int_equal(r->kind, RTD_REC_PROCESS);
		assert_int_equal(r->nfields, 1);
		assert_string_equal(r->fields[0].name, "go_version");
		assert_int_equal(r->fields[0].i, rtd_gotrace_dec_version(d));
		rc = pull_next(&p, &r);
		if (rtd_gotrace_dec_version(d) >= 1022)
			traces_v2++;
	}
	struct shapes sh = {&shapes, &ids};
	if (each && drc == 1) {
		/* the rest handed to a callback by the source's own loop, each
		 * checked there against the decoder's next event */
		if (rc != 1)
			fail_msg("%s: no record for the first event (%d)", name, rc);
		check_one(&sh, r, &ev, d, name); /* (pulled with the PROCESS record) */
		struct each_check c = {.d = d, .sh = &sh, .name = name};
		size_t calls = 1;
		while ((rc = rtd_source_each(src, each_one, &c)) == EACH_STOP)
			calls++;
		if (rc < 0)
			(void)rtd_source_next(src, &r);
		/* stopped at every 1,000th record, gone on at the next call */
		assert_int_equal(calls, c.n / 1000 + 1);
		drc = c.drc ? c.drc : rtd_gotrace_dec_next(d, &ev);
		assert_true(drc != 1);
	}
	for (; drc == 1; drc = rtd_gotrace_dec_next(d, &ev), rc = pull_next(&p, &r)) {
		if (rc != 1)
			fail_msg("%s: the source ended (%d: %s) before the event at %" PRIu64 " (%s)",
				 name, rc, rc < 0 ? r->message : "", ev.off, ev.name);
		check_one(&sh, r, &ev, d, name);
	}
	/* both end, or both fail with the same code */
	if (drc < 0)
		assert_int_equal(rc, drc);
	else if (rc != 0)
		fail_msg("%s: the decoder ended, the source gave %d (%s)", name, rc,
			 rc == 1 ? rtd_record_kind_name(r->kind) : r->message);
	/* a trace of many events came in batches of many (on one thread:
	 * a decoding thread's string arguments end a batch) */
	if (batch == 64 && threads == 1 && p.records > 10000 && p.batches * 4 > p.records)
		fail_msg("%s: %zu records in %zu batches", name, p.records, p.batches);
	rtd_map_free(&shapes);
	rtd_map_free(&ids);
	rtd_source_free(src);
	rtd_gotrace_dec_free(d);
}

static void old_format(void **state)
{
	(void)state;
	const char *dir = rtd_test_vector("testdata/gotrace/v1");
	if (!dir)
		skip();
	size_t before = events_checked;
	assert_true(rtd_test_each_file(dir, check_trace) >= 20);
	print_message("old format: %zu events\n", events_checked - before);
	assert_true(events_checked - before > 100000);
}

static void new_format(void **state)
{
	(void)state;
	const char *dir = rtd_test_vector("testdata/gotrace/v2");
	if (!dir)
		skip();
	size_t before = events_checked, v2 = traces_v2;
	assert_true(rtd_test_each_go_vector(dir, false, check_trace) >= 20);
	assert_true(traces_v2 - v2 >= 20);
	print_message("new format: %zu events\n", events_checked - before);
	assert_true(events_checked - before > 1000);
}

/* real Go 1.19-1.23 traces, truncated and damaged ones */
static void corpus(void **state)
{
	(void)state;
	const char *g = rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/gotrace");
	if (!g)
		skip();
	size_t shapes = shapes_seen;
	assert_true(rtd_test_each_file(g, check_trace) >= 50);
	assert_true(shapes_seen > shapes);
}

/* the same over a decoding thread (Go 1.22+ vectors and corpus; the old
 * format stays on the caller's thread) */
static void thread(void **state)
{
	threads = 2;
	new_format(state);
	corpus(state);
	threads = 1;
}

/* the same in batches (rtd_source_next_batch()): of 64 (as many as the
 * source gives), and of 7 over a decoding thread (a batch ends inside
 * runs of a shape) */
static void batches(void **state)
{
	batch = 64;
	old_format(state);
	new_format(state);
	corpus(state);
	threads = 2;
	batch = 7;
	new_format(state);
	corpus(state);
	threads = 1;
	batch = 0;
}

/* the same handed to a callback (rtd_source_each()), on one thread and
 * over a decoding thread */
static void handed(void **state)
{
	each = true;
	old_format(state);
	new_format(state);
	corpus(state);
	threads = 2;
	new_format(state);
	corpus(state);
	threads = 1;
	each = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_format),
		cmocka_unit_test(new_format),
		cmocka_unit_test(corpus),
		cmocka_unit_test(thread),
		cmocka_unit_test(batches),
		cmocka_unit_test(handed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
