/* SPDX-License-Identifier: MIT */
/*
 * test_flight.c - the flight recorder's ring (rtdiag/flight.h): deep
 * copies (the caller's strings and stacks may die at once), eviction of
 * whole chunks by time, the hard byte cap, a snapshot's order and its
 * independence from what the ring does afterwards, and the records that
 * span the cut: slices begun before the window, thread names given
 * before it.
 */
#include <errno.h>
#include <stdio.h>

#include "test_util.h"
#include "rtdiag/flight.h"

#define MS 1000000ll
#define SEC 1000000000ll

static rtd_flight *ring(int64_t window, size_t cap)
{
	RTD_OPTS(rtd_flight_opts, o, .window_ns = window, .max_bytes = cap);
	int err = 1;
	rtd_flight *f = rtd_flight_new(&o, &err);
	assert_non_null(f);
	assert_int_equal(err, 0);
	return f;
}

/* An instant at @mono on thread @tid whose name and field live in a
 * buffer the caller overwrites right after the add. */
static void add_instant(rtd_flight *f, int64_t mono, uint64_t tid, uint64_t seq)
{
	char name[32], val[32];
	snprintf(name, sizeof(name), "Bars/Tick");
	snprintf(val, sizeof(val), "v%llu", (unsigned long long)seq);
	struct rtd_field fl[2] = {
		{.name = "seq", .type = RTD_FIELD_U64, .u = seq},
		{.name = "text", .type = RTD_FIELD_STR, .s = val},
	};
	struct rtd_record r = {.kind = RTD_REC_INSTANT, .ts = mono, .mono = mono, .pid = 7,
			       .tid = tid, .name = name, .nfields = 2, .fields = fl};
	assert_int_equal(rtd_flight_add(f, &r), 0);
	memset(name, 'x', sizeof(name) - 1);
	memset(val, 'y', sizeof(val) - 1);
}

static void add_kind(rtd_flight *f, unsigned kind, int64_t mono, uint64_t tid, const char *name)
{
	struct rtd_record r = {.kind = kind, .ts = mono, .mono = mono, .pid = 7, .tid = tid,
			       .name = name, .category = "test"};
	assert_int_equal(rtd_flight_add(f, &r), 0);
}

/* Every record of a snapshot; checks mono never decreases. */
static size_t drain(rtd_source *s, unsigned kind, uint64_t *seqs, size_t max)
{
	const struct rtd_record *r;
	int64_t last = INT64_MIN;
	size_t n = 0;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		assert_true(r->mono >= last);
		last = r->mono;
		if (r->kind != kind)
			continue;
		if (seqs && n < max) {
			assert_int_equal(r->nfields, 2);
			seqs[n] = r->fields[0].u;
			char want[32];
			snprintf(want, sizeof(want), "v%llu", (unsigned long long)seqs[n]);
			assert_string_equal(r->fields[1].s, want);
			assert_string_equal(r->name, "Bars/Tick");
		}
		n++;
	}
	assert_int_equal(rc, 0);
	return n;
}

static void test_opts(void **st)
{
	(void)st;
	int err = 0;
	assert_null(rtd_flight_new(NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	RTD_OPTS(rtd_flight_opts, o, .window_ns = 0);
	assert_null(rtd_flight_new(&o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	o.window_ns = SEC;
	o.max_bytes = 1000; /* below RTD_FLIGHT_MIN_MAX_BYTES */
	assert_null(rtd_flight_new(&o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_flight_free(NULL);
	rtd_flight *f = ring(SEC, 0);
	struct rtd_record bad = {.kind = RTD_REC_ERROR, .code = -EIO};
	assert_int_equal(rtd_flight_add(f, &bad), -RTD_E_INVAL);
	rtd_flight_free(f);
}

/* 30 s of 1 kHz instants into a 5 s ring, trimmed as it goes: what stays
 * is the last 5 s (and at most one chunk more), in order, intact. */
static void test_eviction(void **st)
{
	(void)st;
	rtd_flight *f = ring(5 * SEC, 0);
	const uint64_t n = 30000;
	for (uint64_t i = 0; i < n; i++) {
		int64_t t = 1000 * SEC + (int64_t)i * MS;
		add_instant(f, t, 100 + i % 3, i);
		rtd_flight_trim(f, t);
	}
	struct rtd_flight_stats s;
	rtd_flight_stats(f, &s);
	assert_int_equal(s.added, n);
	/* all of them instants: their kind's count and bytes are the whole */
	assert_int_equal(s.kind_added[RTD_REC_INSTANT], n);
	assert_int_equal(s.kind_bytes[RTD_REC_INSTANT], s.record_bytes);
	assert_int_equal(s.kind_added[RTD_REC_SAMPLE], 0);
	assert_int_equal(s.records + s.evicted_records, n);
	assert_true(s.evicted_chunks > 0);
	assert_int_equal(s.capped_chunks, 0);
	int64_t end = 1000 * SEC + (int64_t)(n - 1) * MS;
	/* the oldest record is inside the window or in the chunk that
	 * crosses its start: never a whole chunk older */
	assert_true(s.first_mono <= end - 5 * SEC);
	/* chunks are a sixteenth of the ring: it holds about a sixteenth
	 * more than its window */
	assert_true(s.records <= 5000 + 5000 / 8);
	assert_true(s.first_mono >= end - 5 * SEC - 5 * SEC / 8);
	assert_int_equal(s.last_mono, end);
	printf("# %llu records in %llu chunks, %.1f bytes a record, ring %llu bytes\n",
	       (unsigned long long)s.records, (unsigned long long)s.chunks,
	       (double)s.record_bytes / (double)s.added, (unsigned long long)s.bytes);

	rtd_source *snap;
	assert_int_equal(rtd_flight_snapshot(f, &snap), 0);
	uint64_t *seqs = calloc(n, sizeof(*seqs));
	size_t got = drain(snap, RTD_REC_INSTANT, seqs, n);
	assert_int_equal(got, s.records);
	for (size_t i = 0; i < got; i++)
		assert_int_equal(seqs[i], n - got + i); /* the last ones, in order */
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(snap, &c), 0);
	assert_int_equal(c.domain, RTD_CLOCK_MONOTONIC);
	rtd_source_free(snap);
	free(seqs);
	rtd_flight_free(f);
}

/* A cap far smaller than the window needs: the ring stays under it,
 * dropping the oldest chunks early (counted), and keeps the newest. */
static void test_cap(void **st)
{
	(void)st;
	const size_t cap = 2u << 20;
	rtd_flight *f = ring(3600 * SEC, cap);
	struct rtd_flight_stats s;
	const uint64_t n = 100000;
	for (uint64_t i = 0; i < n; i++) {
		add_instant(f, (int64_t)i * MS, 1, i);
		rtd_flight_stats(f, &s);
		assert_true(s.bytes <= cap);
	}
	assert_true(s.capped_chunks > 0);
	assert_int_equal(s.evicted_chunks, 0);
	assert_int_equal(s.last_mono, (int64_t)(n - 1) * MS);
	rtd_source *snap;
	assert_int_equal(rtd_flight_snapshot(f, &snap), 0);
	uint64_t last = 0;
	size_t got = drain(snap, RTD_REC_INSTANT, &last, 1);
	assert_int_equal(got, s.records);
	assert_int_equal(last, n - got); /* the oldest kept follows the dropped */
	rtd_source_free(snap);
	/* a record alone larger than the cap allows is refused, ring intact */
	size_t big = cap;
	char *s1 = malloc(big);
	memset(s1, 'a', big - 1);
	s1[big - 1] = 0;
	struct rtd_field fl = {.name = "big", .type = RTD_FIELD_STR, .s = s1};
	struct rtd_record r = {.kind = RTD_REC_INSTANT, .mono = (int64_t)n * MS, .pid = 7,
			       .tid = 1, .name = "Big", .nfields = 1, .fields = &fl};
	assert_int_equal(rtd_flight_add(f, &r), -RTD_E_CAP);
	struct rtd_flight_stats s2;
	rtd_flight_stats(f, &s2);
	assert_int_equal(s2.records, s.records);
	free(s1);
	rtd_flight_free(f);
}

/* A snapshot holds what the ring had when it was taken, while the ring
 * goes on, evicts everything, and is freed. */
static void test_snapshot_independent(void **st)
{
	(void)st;
	rtd_flight *f = ring(SEC, 0);
	for (uint64_t i = 0; i < 500; i++)
		add_instant(f, (int64_t)i * MS, 1, i);
	rtd_source *snap;
	assert_int_equal(rtd_flight_snapshot(f, &snap), 0);
	for (uint64_t i = 500; i < 5000; i++) {
		add_instant(f, (int64_t)i * MS, 1, i);
		rtd_flight_trim(f, (int64_t)i * MS);
	}
	struct rtd_flight_stats s;
	rtd_flight_stats(f, &s);
	assert_true(s.evicted_records >= 500); /* the snapshot's are gone from the ring */
	rtd_flight_free(f);
	uint64_t seqs[600];
	assert_int_equal(drain(snap, RTD_REC_INSTANT, seqs, 600), 500);
	for (size_t i = 0; i < 500; i++)
		assert_int_equal(seqs[i], i);
	rtd_source_free(snap);
}

/* Records across the cut: a slice begun before the window and still open,
 * one begun and ended before it (gone), one begun before and ended
 * inside (opened at the snapshot's start, then ended), and a thread
 * named only before the window: its name is still in the snapshot. */
static void test_span_cut(void **st)
{
	(void)st;
	rtd_flight *f = ring(2 * SEC, 0);
	add_kind(f, RTD_REC_PROCESS, 0, 0, "bars");
	add_kind(f, RTD_REC_THREAD, 0, 11, "worker");
	add_kind(f, RTD_REC_SLICE_BEGIN, 1 * MS, 11, "outer"); /* open to the end */
	add_kind(f, RTD_REC_SLICE_BEGIN, 2 * MS, 11, "middle"); /* ends inside */
	add_kind(f, RTD_REC_SLICE_BEGIN, 3 * MS, 11, "gone");
	add_kind(f, RTD_REC_SLICE_END, 4 * MS, 11, NULL);
	/* fill past the window so the chunks above leave */
	uint64_t i = 0;
	int64_t t = 5 * MS;
	struct rtd_flight_stats s;
	do {
		add_instant(f, t, 12, i++);
		rtd_flight_trim(f, t);
		rtd_flight_stats(f, &s);
		t += MS;
	} while (s.evicted_records < 6);
	int64_t cut = s.first_mono;
	add_kind(f, RTD_REC_SLICE_END, t, 11, NULL); /* ends "middle" */

	rtd_source *snap;
	assert_int_equal(rtd_flight_snapshot(f, &snap), 0);
	const struct rtd_record *r;
	bool proc = false, thread = false;
	int begins = 0, ends = 0, depth = 0;
	const char *opened[4] = {0};
	while (rtd_source_next(snap, &r) == 1) {
		if (r->kind == RTD_REC_PROCESS && !strcmp(r->name, "bars"))
			proc = true;
		if (r->kind == RTD_REC_THREAD && r->tid == 11 && !strcmp(r->name, "worker")) {
			assert_false(begins); /* names before the slices */
			thread = true;
		}
		if (r->kind == RTD_REC_SLICE_BEGIN) {
			assert_int_equal(r->tid, 11);
			assert_int_equal(r->mono, cut);
			assert_int_equal(r->nfields, 1);
			assert_string_equal(r->fields[0].name, "begun_before_ns");
			opened[begins++] = r->name;
			assert_int_equal(r->fields[0].u,
					 (uint64_t)(cut - (begins == 1 ? 1 : 2) * MS));
			depth++;
		}
		if (r->kind == RTD_REC_SLICE_END) {
			assert_true(depth > 0); /* never an end with nothing open */
			depth--;
			ends++;
		}
	}
	assert_true(proc);
	assert_true(thread);
	assert_int_equal(begins, 2);
	assert_string_equal(opened[0], "outer");
	assert_string_equal(opened[1], "middle");
	assert_int_equal(ends, 1);
	rtd_source_free(snap);
	rtd_flight_free(f);
}

/* Stacks and their frames' names are copied: the caller's die at once. */
static void test_stacks_copied(void **st)
{
	(void)st;
	rtd_flight *f = ring(SEC, 0);
	for (int i = 0; i < 100; i++) {
		char fn[2][32];
		snprintf(fn[0], sizeof(fn[0]), "leaf%d", i % 4);
		snprintf(fn[1], sizeof(fn[1]), "main");
		struct rtd_rec_frame fr[2] = {{.ip = 0x1000u + (unsigned)(i % 4), .name = fn[0]},
					      {.ip = 0x2000, .name = fn[1]}};
		struct rtd_stack stk = {.id = 99, .n = 2, .frames = fr};
		struct rtd_record r = {.kind = RTD_REC_SAMPLE, .mono = i * MS, .pid = 7, .tid = 1,
				       .stack = &stk, .value = 1e6, .unit = "ns"};
		assert_int_equal(rtd_flight_add(f, &r), 0);
		memset(fn, 0, sizeof(fn));
	}
	rtd_source *snap;
	assert_int_equal(rtd_flight_snapshot(f, &snap), 0);
	const struct rtd_record *r;
	int n = 0;
	uint32_t ids[4] = {0};
	while (rtd_source_next(snap, &r) == 1) {
		assert_int_equal(r->stack->n, 2);
		char want[32];
		snprintf(want, sizeof(want), "leaf%d", n % 4);
		assert_string_equal(r->stack->frames[0].name, want);
		assert_string_equal(r->stack->frames[1].name, "main");
		assert_string_equal(r->unit, "ns");
		/* equal stacks share one id in the ring */
		if (ids[n % 4])
			assert_int_equal(r->stack->id, ids[n % 4]);
		ids[n % 4] = r->stack->id;
		n++;
	}
	assert_int_equal(n, 100);
	rtd_source_free(snap);
	rtd_flight_free(f);
}

static void add_unique_sample(rtd_flight *f, int i)
{
	char fn[32];
	snprintf(fn, sizeof(fn), "leaf_%d", i);
	struct rtd_rec_frame fr[2] = {{.ip = 0x1000u + (unsigned)i, .name = fn},
				      {.ip = 0x2000, .name = "main"}};
	struct rtd_stack stk = {.id = 1, .n = 2, .frames = fr};
	struct rtd_record r = {.kind = RTD_REC_SAMPLE, .mono = i * MS, .pid = 7, .tid = 1,
			       .stack = &stk, .value = 1, .name = "cpu"};
	assert_int_equal(rtd_flight_add(f, &r), 0);
	rtd_flight_trim(f, i * MS);
}

/* Samples whose stacks are all distinct (a hot loop's many leaf
 * addresses): the interner would grow past the cap and every add fail;
 * compaction keeps only what the ring's records use, and snapshots taken
 * before and after read their own names. */
static void test_compaction(void **st)
{
	(void)st;
	const size_t cap = 2u << 20;
	rtd_flight *f = ring(SEC, cap);
	rtd_source *early = NULL;
	const int n = 60000;
	struct rtd_flight_stats s;
	uint64_t early_n = 0;
	for (int i = 0; i < n; i++) {
		add_unique_sample(f, i);
		if (i == 2000) {
			assert_int_equal(rtd_flight_snapshot(f, &early), 0);
			rtd_flight_stats(f, &s);
			early_n = s.records;
		}
		rtd_flight_stats(f, &s);
		assert_true(s.bytes <= cap + cap / 2); /* a compaction's copy aside */
	}
	assert_true(s.compactions > 0);
	assert_int_equal(s.added, n);
	printf("# %llu compactions; ring %llu bytes, %llu of them interned, %llu records\n",
	       (unsigned long long)s.compactions, (unsigned long long)s.bytes,
	       (unsigned long long)s.intern_bytes, (unsigned long long)s.records);
	const struct rtd_record *r;
	int got = 0;
	while (rtd_source_next(early, &r) == 1) {
		char want[32];
		snprintf(want, sizeof(want), "leaf_%d", (int)(r->mono / MS));
		assert_string_equal(r->stack->frames[0].name, want);
		got++;
	}
	assert_int_equal((uint64_t)got, early_n);
	rtd_source_free(early);
	rtd_source *late;
	assert_int_equal(rtd_flight_snapshot(f, &late), 0);
	got = 0;
	while (rtd_source_next(late, &r) == 1) {
		char want[32];
		snprintf(want, sizeof(want), "leaf_%d", (int)(r->mono / MS));
		assert_string_equal(r->stack->frames[0].name, want);
		assert_string_equal(r->stack->frames[1].name, "main");
		got++;
	}
	assert_int_equal((uint64_t)got, s.records);
	assert_true(got > 900); /* about the last second */
	rtd_source_free(late);
	rtd_flight_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_snapshot_independent),
		cmocka_unit_test(test_span_cut),
		cmocka_unit_test(test_stacks_copied),
		cmocka_unit_test(test_compaction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
