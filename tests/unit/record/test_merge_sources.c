/* SPDX-License-Identifier: MIT */
/*
 * test_merge_sources.c - rtd_source_merge over real sources: two EventPipe
 * recordings made on Linux (their clock is CLOCK_MONOTONIC) and a Go 1.22
 * trace from Go's own tests (at nanotime()'s frequency: CLOCK_MONOTONIC to
 * 64 ns), merged into one stream. Every record of every source comes out
 * once, with its source's index, in order of converted time, each
 * source's own records in their own order; the merged clock's error is
 * the Go trace's 64 ns, 0 for the two EventPipe recordings alone, and
 * unknown when the Go trace is read without its nanotime anchor.
 */
#include <inttypes.h>

#include "test_gotrace.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/nettrace_source.h"

enum { NSRC = 3 };

/* each source's records as it gives them, alone: (mono, kind) pairs */
struct seq {
	int64_t *mono;
	unsigned *kind;
	size_t n, cap;
};

static void seq_add(struct seq *q, const struct rtd_record *r)
{
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 1024;
		q->mono = realloc(q->mono, q->cap * sizeof(*q->mono));
		q->kind = realloc(q->kind, q->cap * sizeof(*q->kind));
		assert_non_null(q->mono);
		assert_non_null(q->kind);
	}
	q->mono[q->n] = r->mono;
	q->kind[q->n] = r->kind;
	q->n++;
}

static rtd_source *open_src(int i, const uint8_t *go, size_t golen)
{
	static const char *const nt[] = {
		"testdata/nettrace/only_managed_samples.nettrace",
		"testdata/nettrace/mixed_managed_external_samples.nettrace",
	};
	if (i == 2)
		return rtd_gotrace_source_mem(go, golen, NULL, NULL);
	return rtd_nettrace_source_open(rtd_test_vector(nt[i]), NULL, NULL);
}

static void test_merge_real(void **st)
{
	(void)st;
	const char *gov = rtd_test_vector("testdata/gotrace/v2/go122-gc-stress.test");
	if (!gov || !rtd_test_vector("testdata/nettrace/only_managed_samples.nettrace"))
		skip();
	size_t golen = 0;
	uint8_t *go = rtd_test_go_vector(gov, &golen, true);

	struct seq alone[NSRC] = {{0}};
	for (int i = 0; i < NSRC; i++) {
		rtd_source *s = open_src(i, go, golen);
		assert_non_null(s);
		const struct rtd_record *r;
		while (rtd_source_next(s, &r) == 1)
			seq_add(&alone[i], r);
		rtd_source_free(s);
		assert_true(alone[i].n > 0);
	}

	rtd_source *srcs[NSRC];
	for (int i = 0; i < NSRC; i++)
		srcs[i] = open_src(i, go, golen);
	rtd_source *m = rtd_source_merge(srcs, NSRC, NULL);
	assert_non_null(m);
	const struct rtd_record *r;
	size_t at[NSRC] = {0};
	int64_t last = INT64_MIN;
	uint32_t last_src = 0;
	size_t total = 0;
	int rc;
	while ((rc = rtd_source_next(m, &r)) == 1) {
		assert_true(r->source < NSRC);
		assert_true(r->mono > last || (r->mono == last && r->source >= last_src));
		last = r->mono;
		last_src = r->source;
		struct seq *q = &alone[r->source];
		size_t k = at[r->source]++;
		assert_true(k < q->n);
		assert_int_equal(r->mono, q->mono[k]);
		assert_int_equal(r->kind, q->kind[k]);
		total++;
	}
	assert_int_equal(rc, 0);
	for (int i = 0; i < NSRC; i++)
		assert_int_equal(at[i], alone[i].n);
	printf("merged %zu records: %zu + %zu EventPipe, %zu Go\n", total, alone[0].n, alone[1].n,
	       alone[2].n);
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(m, &c), 0);
	assert_int_equal(c.domain, RTD_CLOCK_MONOTONIC);
	assert_int_equal(c.mono_error_ns, 64);
	rtd_source_free(m);
	for (int i = 0; i < NSRC; i++)
		rtd_source_free(srcs[i]);

	/* the same Go trace taken as not CLOCK_MONOTONIC: unknown error */
	RTD_OPTS(rtd_gotrace_source_opts, go_o, .not_monotonic = true);
	for (int i = 0; i < 2; i++)
		srcs[i] = open_src(i, go, golen);
	srcs[2] = rtd_gotrace_source_mem(go, golen, &go_o, NULL);
	m = rtd_source_merge(srcs, NSRC, NULL);
	assert_int_equal(rtd_source_next(m, &r), 1);
	assert_int_equal(rtd_source_clock(m, &c), 0);
	assert_int_equal(c.mono_error_ns, RTD_CLOCK_ERROR_UNKNOWN);
	rtd_source_free(m);
	for (int i = 0; i < NSRC; i++)
		rtd_source_free(srcs[i]);

	/* the two Linux EventPipe recordings alone: an exact common clock */
	for (int i = 0; i < 2; i++)
		srcs[i] = open_src(i, go, golen);
	m = rtd_source_merge(srcs, 2, NULL);
	assert_int_equal(rtd_source_clock(m, &c), 0);
	/* before the headers are read, nothing is known */
	assert_int_equal(c.mono_error_ns, RTD_CLOCK_ERROR_UNKNOWN);
	assert_int_equal(rtd_source_next(m, &r), 1); /* the merge reads every head */
	assert_int_equal(rtd_source_clock(m, &c), 0);
	assert_int_equal(c.mono_error_ns, 0);
	assert_true(c.flags & RTD_CLOCK_HAS_WALL);
	assert_int_equal(c.wall_error_ns, 1000000);
	rtd_source_free(m);
	for (int i = 0; i < 2; i++)
		rtd_source_free(srcs[i]);
	for (int i = 0; i < NSRC; i++) {
		free(alone[i].mono);
		free(alone[i].kind);
	}
	free(go);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
