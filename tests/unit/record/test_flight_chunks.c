/* SPDX-License-Identifier: MIT */
/*
 * test_flight_chunks.c - the flight ring's chunks come in a few sizes
 * (powers of two), whatever the record rate (issue #31: a ring's RSS
 * flat over 10 minutes).
 *
 * The ring's arena is a list of chunks, each a sixteenth of what the ring
 * holds; the old ring malloc'd each at exactly that size, so as the rate
 * changed every chunk had a size of its own and each one dropped left a
 * hole no later chunk fitted: glibc's free space grew for minutes. Here
 * 60 s of records (a record every 1 to 8 ms, the rate changing every
 * second) pass through an 8 s ring, trimmed as they come; malloc is
 * wrapped at link time (this test only) to note the sizes of blocks of
 * 4 KiB or more:
 *  - the ring kept its window;
 *  - the chunks came in at most 8 sizes (the old ring: one per chunk,
 *    hundreds).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "test_util.h"
#include "rtdiag/flight.h"

#define MAX_SIZES 1024
#define SEC 1000000000ll

void *__real_malloc(size_t n);
static size_t sizes[MAX_SIZES];
static size_t nsizes;
static bool noting;

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	if (noting && n >= 4096) {
		size_t i = 0;
		while (i < nsizes && sizes[i] != n)
			i++;
		if (i == nsizes && nsizes < MAX_SIZES)
			sizes[nsizes++] = n;
	}
	return __real_malloc(n);
}

static void chunk_sizes(void **st)
{
	(void)st;
	RTD_OPTS(rtd_flight_opts, o, .window_ns = 8 * SEC);
	int err = 0;
	rtd_flight *f = rtd_flight_new(&o, &err);
	assert_non_null(f);
	struct rtd_field fl = {.name = "n", .type = RTD_FIELD_I64};
	struct rtd_record r = {.kind = RTD_REC_INSTANT, .name = "tick", .pid = 1, .tid = 1,
			       .fields = &fl, .nfields = 1};
	noting = true;
	int64_t t = SEC;
	uint64_t n = 0;
	while (t < 61 * SEC) {
		/* the gap between records changes every second: 1..8 ms */
		int64_t gap = (1 + (t / SEC * 5) % 8) * 1000000;
		r.ts = r.mono = t;
		fl.i = (int64_t)n++;
		assert_int_equal(rtd_flight_add(f, &r), 0);
		rtd_flight_trim(f, t);
		t += gap;
	}
	noting = false;
	struct rtd_flight_stats s;
	rtd_flight_stats(f, &s);
	printf("# %" PRIu64 " records added, %" PRIu64 " kept in %" PRIu64 " chunks (%" PRIu64
	       " bytes); %zu sizes of block of 4 KiB or more\n",
	       n, s.records, s.chunks, s.chunk_bytes, nsizes);
	for (size_t i = 0; i < nsizes && i < 20; i++)
		printf("#   %zu\n", sizes[i]);
	assert_true(s.records > 1000); /* 8 s at 1-8 ms */
	if (nsizes > 8)
		fail_msg("the ring's blocks came in %zu sizes", nsizes);
	rtd_flight_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunk_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
