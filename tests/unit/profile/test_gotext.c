/* SPDX-License-Identifier: MIT */
/*
 * rtd_profile_write_go_text(): Go's legacy text forms as runtime/pprof
 * 1.23 writes them for debug=1 (writeProfileInternal for block/mutex,
 * writeHeapInternal for allocs): header lines, one record per stack
 * (largest first) with its addresses leaf first, a "#" line per frame.
 * pprof's own reading of rtdiag's text is checked against Go's server in
 * tests/integration/agent/test_pull_params.sh.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "rtdiag/profile.h"

static char *write_form(const rtd_profile *p, enum rtd_profile_go_text form)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_go_text(p, form, f), 0);
	fclose(f);
	return buf;
}

static void contention_and_mutex(void **state)
{
	(void)state;
	static const struct rtd_profile_type lock[] = {
		{"contentions", "count"}, {"delay", "nanoseconds"}};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = lock, .ntypes = 2,
				     .default_type = 1, .period = 1};
	rtd_profile *p = rtd_profile_new2(&o);
	assert_non_null(p);
	struct rtd_frame a[] = {{.name = "wait_sleep", .file = "w.c", .line = 12, .addr = 0x401000},
				{.name = "main", .file = "m.c", .line = 3, .addr = 0x402000}};
	struct rtd_frame b[] = {{.name = "Lock"}, {.name = "main", .file = "m.c", .line = 3, .addr = 0x402000}};
	int64_t va[] = {3, 5000}, vb[] = {1, 9000};
	struct rtd_sample s = {.sz = sizeof(s), .frames = a, .nframes = 2,
			       .leaf_first = true, .values = va, .nvalues = 2};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	s.frames = b, s.values = vb;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);

	char *t = write_form(p, RTD_PROFILE_GO_CONTENTION);
	/* the larger delay first; Lock has no address: a made-up one */
	const char *want1 = "--- contention:\ncycles/second=1000000000\n9000 1 @ 0x";
	assert_memory_equal(t, want1, strlen(want1));
	const char *rest = strstr(t, "5000 3 @ 0x401000 0x402000\n"
				     "#\t0x401000\twait_sleep+0x0\tw.c:12\n"
				     "#\t0x402000\tmain+0x0\tm.c:3\n\n");
	assert_non_null(rest);
	assert_non_null(strstr(t, "\tLock+0x0\t?:0\n"));
	free(t);
	t = write_form(p, RTD_PROFILE_GO_MUTEX);
	const char *want2 = "--- mutex:\ncycles/second=1000000000\nsampling period=1\n9000 1 @";
	assert_memory_equal(t, want2, strlen(want2));
	free(t);
	/* no heap values in a lock profile */
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(rtd_profile_write_go_text(p, RTD_PROFILE_GO_HEAP, f), -RTD_E_INVAL);
	fclose(f);
	rtd_profile_free(p);
}

static void heap(void **state)
{
	(void)state;
	static const struct rtd_profile_type alloc[] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"}};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = alloc, .ntypes = 2,
				     .default_type = 1};
	rtd_profile *p = rtd_profile_new2(&o);
	assert_non_null(p);
	struct rtd_frame a[] = {{.name = "Alloc", .file = "a.cs", .line = 7, .addr = 0x7000}};
	int64_t va[] = {4, 4096};
	struct rtd_sample s = {.sz = sizeof(s), .frames = a, .nframes = 1,
			       .leaf_first = true, .values = va, .nvalues = 2};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	char *t = write_form(p, RTD_PROFILE_GO_HEAP);
	assert_string_equal(t, "heap profile: 0: 0 [4: 4096] @ heap/2\n"
			       "0: 0 [4: 4096] @ 0x7000\n"
			       "#\t0x7000\tAlloc+0x0\ta.cs:7\n\n");
	free(t);
	/* the lock forms need contentions and delay */
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(rtd_profile_write_go_text(p, RTD_PROFILE_GO_CONTENTION, f), -RTD_E_INVAL);
	fclose(f);
	rtd_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(contention_and_mutex),
		cmocka_unit_test(heap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
