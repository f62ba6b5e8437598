/* SPDX-License-Identifier: MIT */
/* perf's default ring size (perf_event_mlock_kb_in_pages in perf's
 * tools/perf/util/evlist.c) for given limits and page sizes. */
#include "test_util.h"

#include "perf/internal.h"

static void default_pages(void **state)
{
	(void)state;
	/* the kernel's default limit: 516 KiB less a page, 128 pages (what
	 * Debian's perf 6.1 mapped here: 528384 bytes a CPU) */
	assert_int_equal(perf_ring_pages_for(516, 4096), 128);
	assert_int_equal(perf_ring_pages_for(1028, 4096), 256);
	assert_int_equal(perf_ring_pages_for(2000, 4096), 256); /* rounded down */
	assert_int_equal(perf_ring_pages_for(-1, 4096), 128);   /* unreadable */
	assert_int_equal(perf_ring_pages_for(516, 65536), 4);   /* 64 KiB pages */
	assert_int_equal(perf_ring_pages_for(0, 4096), 1);
	assert_int_equal(perf_ring_pages_for(1L << 40, 4096), 1u << 16); /* cap */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
