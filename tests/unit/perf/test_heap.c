/* SPDX-License-Identifier: MIT */
/*
 * The heap merge picks the same ring at every step as a scan for the first
 * smallest next timestamp, including ties, rings whose next record is
 * past the round's limit, and rings that run dry: random rings of random
 * lengths, both merges run side by side and compared record by record.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "perf/heap.h"

#define RINGS 13
#define MAXLEN 40

struct sim {
	uint64_t rec[RINGS][MAXLEN];
	unsigned len[RINGS], pos[RINGS];
};

static bool has_next(const struct sim *s, unsigned i, uint64_t limit)
{
	return s->pos[i] < s->len[i] && s->rec[i][s->pos[i]] <= limit;
}

/* one round by scan: the delivered (ring, ts) pairs */
static unsigned scan(struct sim *s, uint64_t limit, uint64_t *out)
{
	unsigned n = 0;
	for (;;) {
		int best = -1;
		uint64_t bts = UINT64_MAX;
		for (unsigned i = 0; i < RINGS; i++)
			if (has_next(s, i, limit) &&
			    (best < 0 || s->rec[i][s->pos[i]] < bts)) {
				best = (int)i;
				bts = s->rec[i][s->pos[i]];
			}
		if (best < 0)
			return n;
		out[n++] = (uint64_t)best << 32 | bts;
		s->pos[best]++;
	}
}

/* the same round by heap, as monitor.c's merge_heap does it */
static unsigned heap(struct sim *s, uint64_t limit, uint64_t *out)
{
	unsigned h[RINGS], hn = 0, n = 0;
	uint64_t ts[RINGS];
	for (unsigned i = 0; i < RINGS; i++)
		if (has_next(s, i, limit)) {
			ts[i] = s->rec[i][s->pos[i]];
			h[hn++] = i;
		}
	perf_heap_build(h, hn, ts);
	while (hn) {
		unsigned ri = h[0];
		out[n++] = (uint64_t)ri << 32 | ts[ri];
		s->pos[ri]++;
		if (has_next(s, ri, limit)) {
			ts[ri] = s->rec[ri][s->pos[ri]];
			perf_heap_down(h, hn, ts, 0);
		} else {
			hn = perf_heap_pop(h, hn, ts);
		}
	}
	return n;
}

static void test_heap_matches_scan(void **state)
{
	(void)state;
	srand(12345);
	static uint64_t a[RINGS * MAXLEN], b[RINGS * MAXLEN];
	unsigned total = 0, ties = 0;
	for (int iter = 0; iter < 2000; iter++) {
		struct sim s1 = {0};
		for (unsigned i = 0; i < RINGS; i++) {
			s1.len[i] = (unsigned)rand() % MAXLEN;
			uint64_t t = (uint64_t)(rand() % 50);
			for (unsigned j = 0; j < s1.len[i]; j++) {
				/* mostly rising per ring, with repeats and an
				 * occasional step back (the scan tolerates it) */
				int r = rand() % 10;
				t = r == 0 && t > 5 ? t - 5 : t + (uint64_t)(r % 4);
				s1.rec[i][j] = t;
			}
		}
		struct sim s2 = s1;
		/* rounds with rising limits, then everything */
		uint64_t limits[] = {10, 25, 25, 60, UINT64_MAX};
		for (unsigned k = 0; k < sizeof(limits) / sizeof(limits[0]); k++) {
			unsigned na = scan(&s1, limits[k], a);
			unsigned nb = heap(&s2, limits[k], b);
			assert_int_equal(na, nb);
			for (unsigned x = 0; x < na; x++) {
				assert_int_equal(a[x], b[x]);
				if (x && (uint32_t)a[x] == (uint32_t)a[x - 1])
					ties++;
			}
			total += na;
		}
		for (unsigned i = 0; i < RINGS; i++)
			assert_int_equal(s1.pos[i], s1.len[i]);
	}
	/* the comparison covered many records and many equal timestamps */
	assert_true(total > 100000);
	assert_true(ties > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_matches_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
