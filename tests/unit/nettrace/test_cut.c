/* SPDX-License-Identifier: MIT */
/*
 * test_cut - a stream cut anywhere (a target killed, a disk filled, a
 * copy interrupted) delivers every event that is complete before the
 * cut, the complete events of a cut block included, in the same order
 * and with the same contents as the whole stream's; then
 * -RTD_E_TRUNCATED, "truncated at byte N" naming the cut and the error
 * offset N. Every shared vector, each cut at many offsets, in stream
 * order and in time order (opts.sort: the same events).
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"

/* Each delivered event's digest and stream offset. */
struct seen {
	uint64_t *h;
	uint64_t *off;
	size_t n, cap;
};

static int seen_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct seen *s = ctx;
	struct nt_digest d = {0};
	nt_digest_event(&d, ev);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->h = realloc(s->h, s->cap * sizeof(*s->h));
		s->off = realloc(s->off, s->cap * sizeof(*s->off));
		assert_non_null(s->h);
		assert_non_null(s->off);
	}
	s->h[s->n] = d.hash;
	s->off[s->n++] = ev->offset;
	return 0;
}

static int run(const uint8_t *buf, size_t len, bool sort, struct seen *s,
	       rtd_nettrace **decp)
{
	memset(s, 0, sizeof(*s));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = s,
				      .on_event = seen_event, .sort = sort};
	rtd_nettrace *dec = rtd_nettrace_new(&o);
	assert_non_null(dec);
	int rc = rtd_nettrace_feed(dec, buf, len);
	if (rc >= 0)
		rc = rtd_nettrace_finish(dec);
	*decp = dec;
	return rc;
}

static void seen_free(struct seen *s)
{
	free(s->h);
	free(s->off);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_cuts(void **state)
{
	(void)state;
	int files = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		size_t len = 0;
		uint8_t *buf = nt_vector_read(nt_vectors[i], &len);
		if (!buf)
			continue;
		struct seen whole;
		rtd_nettrace *dec;
		assert_int_equal(run(buf, len, false, &whole, &dec), 0);
		rtd_nettrace_free(dec);
		assert_true(whole.n > 0);
		/* the cuts: many offsets spread over the file (fewer in
		 * the 10 MB one), and around each of the first events */
		size_t ncuts = len > (4u << 20) ? 40 : 300;
		uint32_t seed = 4242u + (uint32_t)i;
		size_t inside = 0, partial_blocks = 0;
		for (size_t k = 0; k < ncuts + 20; k++) {
			size_t cut;
			if (k < ncuts) {
				seed = seed * 1103515245u + 12345u;
				cut = (size_t)(((uint64_t)seed << 16 ^ k) % len);
			} else {
				size_t e = (k - ncuts) * whole.n / 20;
				cut = (size_t)whole.off[e] + 3;
				if (cut >= len)
					continue;
			}
			struct seen s;
			int rc = run(buf, cut, false, &s, &dec);
			uint64_t off = 0;
			const char *msg = rtd_nettrace_error(dec, &off);
			char want[64];
			snprintf(want, sizeof(want), "truncated at byte %zu", cut);
			if (rc != -RTD_E_TRUNCATED || !strstr(msg, want) || off != cut)
				fail_msg("%s cut at %zu: rc %d, offset %llu, '%s'",
					 nt_vectors[i], cut, rc,
					 (unsigned long long)off, msg);
			/* a prefix of the whole stream's events, in order */
			assert_true(s.n <= whole.n);
			for (size_t e = 0; e < s.n; e++)
				if (s.h[e] != whole.h[e])
					fail_msg("%s cut at %zu: event %zu (offset "
						 "%llu) differs", nt_vectors[i], cut,
						 e, (unsigned long long)s.off[e]);
			/* every event that ends before the cut (the next
			 * one starts at or before it) is there; none that
			 * starts after it */
			size_t lo = 0;
			while (lo + 1 < whole.n && whole.off[lo + 1] <= cut)
				lo++;
			if (s.n < lo)
				fail_msg("%s cut at %zu: %zu events delivered, "
					 "%zu end before the cut ('%s')",
					 nt_vectors[i], cut, s.n, lo, msg);
			assert_true(s.n == 0 || s.off[s.n - 1] < cut);
			if (strstr(msg, "complete events in it delivered"))
				inside++;
			if (strstr(msg, "complete events in it") &&
			    !strstr(msg, "the 0 complete"))
				partial_blocks++;
			/* time order: the same events */
			struct seen t;
			rtd_nettrace *tdec;
			assert_int_equal(run(buf, cut, true, &t, &tdec),
					 -RTD_E_TRUNCATED);
			assert_int_equal(t.n, s.n);
			if (s.n) {
				qsort(t.h, t.n, sizeof(*t.h), cmp_u64);
				qsort(s.h, s.n, sizeof(*s.h), cmp_u64);
				assert_memory_equal(t.h, s.h, s.n * sizeof(*s.h));
			}
			seen_free(&t);
			rtd_nettrace_free(tdec);
			seen_free(&s);
			rtd_nettrace_free(dec);
		}
		printf("ok: %s: %zu cuts, %zu inside a block (%zu of them "
		       "delivering events of that block), all prefixes of "
		       "its %zu events\n", nt_vectors[i], ncuts + 20, inside,
		       partial_blocks, whole.n);
		seen_free(&whole);
		free(buf);
		files++;
	}
	if (!files)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
