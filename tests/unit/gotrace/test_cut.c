/* SPDX-License-Identifier: MIT */
/*
 * test_cut - a Go trace cut anywhere (the program killed while tracing, a
 * copy interrupted) delivers what is complete before the cut and says
 * "truncated at byte N" (issue 27 item 4). Every shared recording, both
 * formats (Go 1.5-1.19 traces, golang/exp's Go 1.22-1.25 vectors made
 * binary), each cut at many offsets:
 * - raw mode: the events are a prefix of the whole file's, every event
 *   that ends before the cut is there, then -RTD_E_TRUNCATED naming the
 *   byte (a cut on a boundary the format cannot tell from an end: none);
 * - ordered mode, Go 1.22+: every event of the generations before the
 *   cut's, and of the cut generation only events the whole file has too
 *   (what could be ordered), then -RTD_E_TRUNCATED naming the byte;
 * - ordered mode, old format: -RTD_E_TRUNCATED naming the byte (its
 *   frequency and stacks come at the end: nothing can be ordered).
 */
#include "test_gotrace.h"

#include <stdio.h>

struct evs {
	uint64_t *off; /* (offset << 8 | type), in delivery order */
	uint64_t *gen;
	size_t n, cap;
	int rc;
	uint64_t erroff;
	char msg[600];
};

static void evs_free(struct evs *e)
{
	free(e->off);
	free(e->gen);
}

static void run(const uint8_t *b, size_t len, enum rtd_gotrace_mode mode, struct evs *e)
{
	memset(e, 0, sizeof(*e));
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	/* fed a few KiB at a time, as a file is read */
	struct rtd_test_gosrc s = {.d = d, .b = b, .n = len, .step = 4096};
	struct rtd_gotrace_event ev;
	int rc;
	while ((rc = rtd_test_gosrc_next(&s, &ev)) > 0) {
		if (e->n == e->cap) {
			e->cap = e->cap ? 2 * e->cap : 1024;
			e->off = realloc(e->off, e->cap * sizeof(*e->off));
			e->gen = realloc(e->gen, e->cap * sizeof(*e->gen));
			assert_non_null(e->off);
			assert_non_null(e->gen);
		}
		/* Go's Sync is at the generation's end: where a cut on a
		 * batch boundary the format cannot tell from an end puts it */
		e->off[e->n] = (ev.type == RTD_GO2_EV_READER_SYNC ? 0 : ev.off << 9) | ev.type;
		e->gen[e->n++] = ev.gen;
	}
	e->rc = rc;
	snprintf(e->msg, sizeof(e->msg), "%s", rtd_gotrace_dec_error(d, &e->erroff));
	rtd_gotrace_dec_free(d);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Is the sorted multiset @a (n) inside the sorted multiset @b (m)? */
static bool sub_multiset(const uint64_t *a, size_t n, const uint64_t *b, size_t m)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < m && b[j] < a[i])
			j++;
		if (j == m || b[j] != a[i])
			return false;
		j++;
	}
	return true;
}

static void truncated_at(const struct evs *e, size_t cut, const char *name, const char *mode)
{
	char want[64];
	snprintf(want, sizeof(want), "truncated at byte %zu", cut);
	if (e->rc != -RTD_E_TRUNCATED || !strstr(e->msg, want))
		fail_msg("%s cut at %zu, %s: rc %d '%s' (want '%s')", name, cut, mode, e->rc,
			 e->msg, want);
}

static size_t g_cuts, g_raw_events, g_ord_cut_gen, g_ord_partial;

static void check(const uint8_t *b, size_t len, const char *name)
{
	struct evs raw, ord;
	run(b, len, RTD_GOTRACE_RAW, &raw);
	run(b, len, RTD_GOTRACE_ORDERED, &ord);
	if (raw.rc != 0)
		fail_msg("%s: the whole file fails: %s", name, raw.msg);
	/* Go refuses to order some (stress_1_5_unordered): raw mode only */
	bool ordered = ord.rc == 0;
	bool v2 = ord.n && ord.gen[0] != 0;
	uint64_t *ord_sorted = malloc((ord.n + 1) * sizeof(*ord_sorted));
	assert_non_null(ord_sorted);
	if (ord.n) {
		memcpy(ord_sorted, ord.off, ord.n * sizeof(*ord_sorted));
		qsort(ord_sorted, ord.n, sizeof(*ord_sorted), cmp_u64);
	}
	uint32_t seed = 977u + (uint32_t)len;
	size_t ncuts = len > 100000 ? 40 : 120;
	for (size_t k = 0; k < ncuts + 16; k++) {
		size_t cut;
		if (k < ncuts) {
			seed = seed * 1103515245u + 12345u;
			cut = 17 + (size_t)((seed >> 4) % (len - 17));
		} else { /* just inside events spread over the file */
			cut = (size_t)(raw.off[(k - ncuts) * raw.n / 16] >> 9) + 1;
		}
		g_cuts++;
		/* raw: a prefix, every event that ends before the cut */
		struct evs c;
		run(b, cut, RTD_GOTRACE_RAW, &c);
		size_t lo = 0;
		while (lo + 1 < raw.n && (raw.off[lo + 1] >> 9) <= cut)
			lo++;
		size_t starts = 0; /* events that start before the cut */
		while (starts < raw.n && (raw.off[starts] >> 9) < cut)
			starts++;
		if (c.n < lo || c.n > starts)
			fail_msg("%s cut at %zu, raw: %zu events, want %zu-%zu (%s)", name, cut, c.n,
				 lo, starts, c.msg);
		for (size_t i = 0; i < c.n; i++)
			if (c.off[i] != raw.off[i])
				fail_msg("%s cut at %zu, raw: event %zu differs", name, cut, i);
		/* a cut the format cannot tell from an end: on an event
		 * boundary, after the generation's (the trace's) frequency */
		bool clean = c.rc == 0 && c.n == starts;
		if (!clean)
			truncated_at(&c, cut, name, "raw");
		g_raw_events += c.n;
		evs_free(&c);
		if (!ordered)
			continue;
		run(b, cut, RTD_GOTRACE_ORDERED, &c);
		if (!v2) {
			if (!clean || c.rc != 0)
				truncated_at(&c, cut, name, "ordered");
			evs_free(&c);
			continue;
		}
		/* the generation the cut is in: that of the last batch that
		 * starts before it */
		uint64_t cgen = 0;
		for (size_t i = 0; i < starts; i++)
			if ((raw.off[i] & 511) == RTD_GO2_EV_EVENT_BATCH)
				cgen = raw.gen[i];
		/* (not Go's Sync: after a generation whose end is in doubt,
		 * a cut in the next batch's header, there is none) */
		size_t before = 0;
		for (size_t i = 0; i < ord.n; i++)
			before += ord.gen[i] && ord.gen[i] < cgen &&
				  ord.off[i] != RTD_GO2_EV_READER_SYNC;
		size_t got_before = 0;
		for (size_t i = 0; i < c.n; i++)
			got_before += c.gen[i] && c.gen[i] < cgen &&
				      c.off[i] != RTD_GO2_EV_READER_SYNC;
		if (got_before != before)
			fail_msg("%s cut at %zu (generation %llu), ordered: %zu events of the "
				 "generations before, the whole file has %zu (%s)", name, cut,
				 (unsigned long long)cgen, got_before, before, c.msg);
		if (c.n)
			qsort(c.off, c.n, sizeof(*c.off), cmp_u64);
		if (!sub_multiset(c.off, c.n, ord_sorted, ord.n))
			fail_msg("%s cut at %zu, ordered: an event the whole file does not have",
				 name, cut);
		/* ordered mode tells a cut wherever raw mode does */
		if (!clean || c.rc != 0)
			truncated_at(&c, cut, name, "ordered");
		g_ord_cut_gen += c.n > got_before;
		g_ord_partial += c.n - got_before;
		evs_free(&c);
	}
	free(ord_sorted);
	evs_free(&raw);
	evs_free(&ord);
}

static void test_v1_cuts(void **state)
{
	(void)state;
	const char *dir = rtd_test_path("RTD_SHARED_DIR", "testdata/gotrace/v1");
	if (!dir)
		skip();
	g_cuts = g_raw_events = 0;
	size_t n = rtd_test_each_file(dir, check);
	if (!n)
		skip();
	printf("ok: %zu old-format traces, %zu cuts: raw mode gave %zu events, each a prefix, "
	       "then the byte; ordered mode the byte\n", n, g_cuts, g_raw_events);
}

static void test_v2_cuts(void **state)
{
	(void)state;
	const char *dir = rtd_test_path("RTD_SHARED_DIR", "testdata/gotrace/v2");
	if (!dir)
		skip();
	g_cuts = g_raw_events = g_ord_cut_gen = g_ord_partial = 0;
	size_t n = rtd_test_each_go_vector(dir, true, check);
	if (!n)
		skip();
	/* the cut generation's events that could be ordered come out */
	assert_true(g_ord_partial > 0);
	printf("ok: %zu Go 1.22+ traces, %zu cuts: raw mode gave %zu events; ordered mode every "
	       "event of the generations before each cut, and %zu events of the cut generation "
	       "in %zu cuts\n", n, g_cuts, g_raw_events, g_ord_partial, g_ord_cut_gen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_cuts),
		cmocka_unit_test(test_v2_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
