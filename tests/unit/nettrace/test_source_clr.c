/* SPDX-License-Identifier: MIT */
/*
 * test_source_clr.c - rtd_nettrace_source_clr() over a real EventPipe
 * recording with GCs and lock contention (.NET Core 3.0, Windows):
 *  - every record of the nettrace source comes out unchanged, in order;
 *  - one "GC" slice per GC/Start, one "EE suspended" slice per
 *    GC/SuspendEEStart, one "contention" slice per Contention/Start, each
 *    closed by its stop (stops with nothing open are left as instants);
 *    written to a timeline no end is unmatched and nothing stays open;
 *  - GC/HeapStats gives generation-size counters;
 *  - the lanes are named "GC" and "EE suspended" in Chrome JSON;
 *  - other providers' Start/Stop pairs become slices on their thread,
 *    matched per thread, innermost first (on a synthetic stream);
 *  - pairs written in an activity (an ActivityID) are matched by it:
 *    whole slices on their thread, or on the process's async lanes when
 *    they end on another thread or not innermost (a synthetic stream).
 */
#include <inttypes.h>

#include "test_util.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/timeline_records.h"

#define NT "testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"

static bool is(const struct rtd_record *r, const char *ev)
{
	static const char p[] = "Microsoft-Windows-DotNETRuntime/";
	return r->kind == RTD_REC_INSTANT && r->name && !strncmp(r->name, p, sizeof(p) - 1) &&
	       !strcmp(r->name + sizeof(p) - 1, ev);
}

static void test_clr(void **state)
{
	(void)state;
	const char *path = rtd_test_vector(NT);
	if (!path)
		skip();
	/* what the nettrace source alone gives */
	rtd_source *plain = rtd_nettrace_source_open(path, NULL, NULL);
	assert_non_null(plain);
	size_t n = 0, gcs = 0, susp = 0, cont = 0, heaps = 0;
	const struct rtd_record *r;
	while (rtd_source_next(plain, &r) == 1) {
		n++;
		gcs += is(r, "GC/Start");
		susp += is(r, "GC/SuspendEEStart");
		cont += is(r, "Contention/Start");
		heaps += is(r, "GC/HeapStats");
	}
	assert_true(gcs > 100 && susp > 1000 && cont > 0 && heaps > 100);

	rtd_source *in = rtd_nettrace_source_open(path, NULL, NULL);
	rtd_source *again = rtd_nettrace_source_open(path, NULL, NULL);
	rtd_source *s = rtd_nettrace_source_clr(in, NULL);
	assert_non_null(s);
	char *json = NULL;
	size_t jlen = 0;
	FILE *f = open_memstream(&json, &jlen);
	RTD_OPTS(rtd_timeline_opts, to, .format = RTD_TIMELINE_FMT_CHROME_JSON, .out = f);
	rtd_timeline *tl = rtd_timeline_new(&to);
	rtd_timeline_records *c = rtd_timeline_records_new(tl, NULL, NULL);
	size_t passed = 0, gc_sl = 0, susp_sl = 0, cont_sl = 0, counters = 0;
	const struct rtd_record *a;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		assert_int_equal(rtd_timeline_records_add(c, r), 0);
		if (r->kind == RTD_REC_SLICE_BEGIN) {
			gc_sl += !strcmp(r->name, "GC") && r->lane == 1 && r->tid == 0;
			susp_sl += !strcmp(r->name, "EE suspended") && r->lane == 2;
			cont_sl += !strcmp(r->name, "contention") && r->tid != 0 && r->lane == 0;
			continue;
		}
		if (r->kind == RTD_REC_SLICE_END || (r->kind == RTD_REC_THREAD && r->lane))
			continue;
		if (r->kind == RTD_REC_COUNTER) {
			counters++;
			assert_string_equal(r->unit, "bytes");
			continue;
		}
		/* the nettrace source's own record, unchanged */
		assert_int_equal(rtd_source_next(again, &a), 1);
		assert_int_equal(r->kind, a->kind);
		assert_true(r->ts == a->ts && r->tid == a->tid);
		assert_true((!r->name && !a->name) || !strcmp(r->name, a->name));
		passed++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(passed, n);
	assert_int_equal(gc_sl, gcs);
	assert_int_equal(susp_sl, susp);
	assert_int_equal(cont_sl, cont);
	assert_true(counters >= 4 * heaps);
	struct rtd_timeline_records_stats st;
	rtd_timeline_records_stats(c, &st);
	assert_int_equal(st.unmatched_ends, 0);
	assert_int_equal(st.slices, gcs + susp + cont);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	struct rtd_timeline_stats ts;
	rtd_timeline_get_stats(tl, &ts);
	assert_int_equal(ts.open, 0);
	fclose(f);
	assert_non_null(strstr(json, "{\"name\":\"GC\"}"));
	assert_non_null(strstr(json, "{\"name\":\"EE suspended\"}"));
	printf("ok: %zu records passed on; %zu GC, %zu EE suspended, %zu contention slices; "
	       "%zu counter values\n", passed, gc_sl, susp_sl, cont_sl, counters);
	free(json);
	rtd_timeline_records_free(c);
	rtd_timeline_free(tl);
	rtd_source_free(s);
	rtd_source_free(in);
	rtd_source_free(again);
	rtd_source_free(plain);
	int err = 0;
	assert_null(rtd_nettrace_source_clr(NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
}

/* EventSource Start/Stop pairs as slices, on records built here (a
 * synthetic stream, labelled so: a real runtime cannot be made to write
 * pairs that do not nest, or a stop on another thread, on demand; the
 * real one is tests/integration/record/test_clrevents.sh). */
struct fake {
	const struct rtd_record *v;
	size_t n, at;
	char str[16];           /* a string field's value, borrowed per pull */
	struct rtd_field field; /* the field of a record that has one */
};

static int fake_next(void *impl, struct rtd_record *rec)
{
	struct fake *f = impl;
	if (f->at == f->n)
		return 0;
	*rec = f->v[f->at++];
	/* a record's fields are borrowed until the next pull: the value is
	 * overwritten at each one */
	snprintf(f->str, sizeof(f->str), "v%" PRId64, rec->ts);
	if (rec->nfields) {
		f->field = (struct rtd_field){.name = "url", .type = RTD_FIELD_STR, .s = f->str};
		rec->fields = &f->field;
		rec->nfields = 1;
	}
	return 1;
}

static int fake_clock(void *impl, struct rtd_clock *out)
{
	(void)impl;
	*out = (struct rtd_clock){.domain = RTD_CLOCK_MONOTONIC, .freq = 1000000000};
	return 0;
}

static const struct rtd_source_ops fake_ops = {
	.sz = sizeof(struct rtd_source_ops), .name = "fake", .next = fake_next, .clock = fake_clock};

#define EV(t, tid_, n) {.kind = RTD_REC_INSTANT, .ts = t, .mono = t, .pid = 9, .tid = tid_, \
			.name = n, .category = "P"}

static void test_eventsource_pairs(void **state)
{
	(void)state;
	static const struct rtd_record in[] = {
		EV(10, 1, "P/Req/Start"),   /* slice P/Req on thread 1 */
		EV(11, 2, "P/Req/Stop"),    /* another thread: nothing open there */
		EV(12, 1, "P/Db/Start"),    /* nested inside P/Req */
		EV(13, 1, "P/Req/Stop"),    /* not the innermost: instant only */
		EV(14, 1, "P/Db/Stop"),     /* closes P/Db */
		EV(15, 1, "P/Req/Stop"),    /* now closes P/Req */
		EV(16, 1, "P/Mark"),        /* no opcode suffix: instant */
		EV(17, 1, "Microsoft-Windows-DotNETRuntimeRundown/Runtime/Start"),
		EV(18, 1, "Start/Stop"),    /* no task: instant */
	};
	struct fake f = {in, sizeof(in) / sizeof(in[0]), 0, "", {0}};
	rtd_source *src = rtd_source_new(&fake_ops, &f);
	rtd_source *s = rtd_nettrace_source_clr(src, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	char got[512] = "";
	size_t instants = 0;
	while (rtd_source_next(s, &r) == 1) {
		char one[64];
		if (r->kind == RTD_REC_INSTANT) {
			instants++;
			continue;
		}
		snprintf(one, sizeof(one), "%s%" PRId64 ":%" PRIu64 ":%s ",
			 r->kind == RTD_REC_SLICE_BEGIN ? "B" : "E", r->ts, r->tid,
			 r->kind == RTD_REC_SLICE_BEGIN ? r->name : "");
		strcat(got, one);
		if (r->kind == RTD_REC_SLICE_BEGIN)
			assert_string_equal(r->category, "P");
	}
	assert_int_equal(instants, 9); /* every event passed on */
	assert_string_equal(got, "B10:1:P/Req B12:1:P/Db E14:1: E15:1: ");
	rtd_source_free(s);
	rtd_source_free(src);
}

#define ACT(t, tid_, n, a) {.kind = RTD_REC_INSTANT, .ts = t, .mono = t, .pid = 9, \
			     .tid = tid_, .name = n, .category = "P", .nfields = 1, \
			     .activity = {0, 0, 0, a}}

static void test_activity_pairs(void **state)
{
	(void)state;
	static const struct rtd_record in[] = {
		ACT(10, 1, "P/Req/Start", 1), /* begins and ends on thread 1 */
		ACT(20, 1, "P/Req/Stop", 1),  /* -> a whole slice there */
		ACT(30, 1, "P/Req/Start", 2),
		ACT(31, 2, "P/Req/Start", 3),
		ACT(40, 3, "P/Req/Stop", 2),  /* ends on thread 3: async lane 1 */
		ACT(45, 4, "P/Req/Stop", 3),  /* overlaps the one above: lane 2 */
		ACT(50, 1, "P/Req/Start", 4),
		ACT(60, 2, "P/Req/Stop", 4),  /* lane 1 free since 40 */
		ACT(70, 1, "P/Req/Start", 5),
		ACT(71, 1, "P/Db/Start", 6),
		ACT(72, 1, "P/Req/Stop", 5),  /* P/Db still open inside: async */
		ACT(73, 1, "P/Db/Stop", 6),   /* innermost on its thread */
		ACT(80, 1, "P/Req/Stop", 9),  /* no such activity: instant only */
		ACT(81, 1, "P/Db/Stop", 1),   /* another task's activity: instant */
		ACT(90, 5, "P/Req/Start", 7), /* open at the end: instant only */
	};
	struct fake f = {in, sizeof(in) / sizeof(in[0]), 0, "", {0}};
	rtd_source *src = rtd_source_new(&fake_ops, &f);
	rtd_source *s = rtd_nettrace_source_clr(src, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	char got[1024] = "", lanes[256] = "";
	size_t instants = 0;
	while (rtd_source_next(s, &r) == 1) {
		char one[96];
		if (r->kind == RTD_REC_INSTANT) {
			instants++;
			continue;
		}
		if (r->kind == RTD_REC_THREAD) {
			snprintf(one, sizeof(one), "%" PRIu64 ":%" PRIu64 "=%s ", r->tid, r->lane, r->name);
			strcat(lanes, one);
			continue;
		}
		assert_int_equal(r->kind, RTD_REC_SLICE);
		assert_int_equal(r->nfields, 1);
		/* the Start's field, kept while its own record's value changed */
		snprintf(one, sizeof(one), "%s@%" PRId64 "+%" PRId64 ":%" PRIu64 "/%" PRIu64 ":%s=%s ",
			 r->name, r->mono - r->dur, r->dur, r->tid, r->lane, r->fields[0].name,
			 r->fields[0].s);
		strcat(got, one);
		assert_string_equal(r->category, "P");
	}
	assert_int_equal(instants, 15); /* every event passed on */
	assert_string_equal(got, "P/Req@10+10:1/0:url=v10 "
				 "P/Req@30+10:0/16:url=v30 "
				 "P/Req@31+14:0/17:url=v31 "
				 "P/Req@50+10:0/16:url=v50 "
				 "P/Req@70+2:0/16:url=v70 "
				 "P/Db@71+2:1/0:url=v71 ");
	assert_string_equal(lanes, "0:16=P/Req (async 1) 0:17=P/Req (async 2) ");
	rtd_source_free(s);
	rtd_source_free(src);
}

/* Async lanes are counted per name: a new lane of a name is numbered
 * after that name's lanes, whatever other names' lanes lie between; a
 * name's lane free again is drawn on, the second when the first is busy. */
static void test_async_lanes(void **state)
{
	(void)state;
	static const struct rtd_record in[] = {
		ACT(10, 1, "P/Req/Start", 1),
		ACT(11, 2, "P/Db/Start", 2),
		ACT(12, 3, "P/Req/Start", 3),
		ACT(20, 4, "P/Req/Stop", 1), /* P/Req (async 1) */
		ACT(21, 4, "P/Db/Stop", 2),  /* P/Db (async 1), after it */
		ACT(22, 4, "P/Req/Stop", 3), /* began at 12, lane 1 busy to 20: P/Req (async 2) */
		ACT(25, 5, "P/Req/Start", 5),
		ACT(26, 6, "P/Req/Start", 6),
		ACT(40, 4, "P/Req/Stop", 5), /* lane 1 free since 20 */
		ACT(41, 4, "P/Req/Stop", 6), /* lane 1 busy to 40, lane 2 free since 22 */
	};
	struct fake f = {in, sizeof(in) / sizeof(in[0]), 0, "", {0}};
	rtd_source *src = rtd_source_new(&fake_ops, &f);
	rtd_source *s = rtd_nettrace_source_clr(src, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	char got[1024] = "", lanes[256] = "";
	while (rtd_source_next(s, &r) == 1) {
		char one[96];
		if (r->kind == RTD_REC_THREAD)
			snprintf(one, sizeof(one), "%" PRIu64 "=%s ", r->lane, r->name);
		else if (r->kind == RTD_REC_SLICE)
			snprintf(one, sizeof(one), "%s@%" PRId64 "+%" PRId64 ":%" PRIu64 " ", r->name,
				 r->mono - r->dur, r->dur, r->lane);
		else
			continue;
		strcat(r->kind == RTD_REC_THREAD ? lanes : got, one);
	}
	assert_string_equal(lanes, "16=P/Req (async 1) 17=P/Db (async 1) 18=P/Req (async 2) ");
	assert_string_equal(got, "P/Req@10+10:16 P/Db@11+10:17 P/Req@12+10:18 "
				 "P/Req@25+15:16 P/Req@26+15:18 ");
	rtd_source_free(s);
	rtd_source_free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_clr),
					   cmocka_unit_test(test_eventsource_pairs),
					   cmocka_unit_test(test_activity_pairs),
					   cmocka_unit_test(test_async_lanes)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
