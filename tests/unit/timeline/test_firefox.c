/* SPDX-License-Identifier: MIT */
/*
 * test_firefox.c - the Gecko profile writer (rtdiag/firefox.h) on records
 * made here: a thread's samples share their stacks' prefixes, an off-CPU
 * slice is an OffCPU interval marker, an instant an instant marker, an
 * empty profile writes no thread, an error record ends the pull.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rtdiag/firefox.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static char *write_all(rtd_firefox *ff, size_t *samples)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	assert_non_null(m);
	assert_int_equal(rtd_firefox_write(ff, m, samples), 0);
	fclose(m);
	return text;
}

static void samples_and_markers(void **state)
{
	(void)state;
	rtd_intern *in = rtd_intern_new();
	const struct rtd_stack *a, *b;
	struct rtd_rec_frame fa[3] = {{.ip = 0x10, .name = "leaf_a", .module = "app"}, {.ip = 0x20, .name = "mid", .module = "app"},
				      {.ip = 0x30, .name = "main", .module = "app"}};
	struct rtd_rec_frame fb[3] = {{.ip = 0xffffffff81000000ull, .name = "schedule", .module = "[kernel.kallsyms]"},
				      {.ip = 0x20, .name = "mid", .module = "app"}, {.ip = 0x30, .name = "main", .module = "app"}};
	assert_int_equal(rtd_intern_stack(in, fa, 3, &a), 0);
	assert_int_equal(rtd_intern_stack(in, fb, 3, &b), 0);
	rtd_firefox *ff = rtd_firefox_new(NULL, NULL);
	assert_non_null(ff);
	struct rtd_record r = {.kind = RTD_REC_THREAD, .pid = 7, .tid = 8, .name = "worker \"1\""};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	r = (struct rtd_record){.kind = RTD_REC_SAMPLE, .pid = 7, .tid = 8, .mono = 1000000,
			       .stack = a, .name = "cpu-clock", .value = 1};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	r.mono = 2000000;
	r.stack = b;
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	r = (struct rtd_record){.kind = RTD_REC_SLICE_BEGIN, .pid = 7, .tid = 8, .mono = 3000000,
			       .name = "waiting", .category = "off-cpu"};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	r = (struct rtd_record){.kind = RTD_REC_SLICE_END, .pid = 7, .tid = 8, .mono = 5500000};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	r = (struct rtd_record){.kind = RTD_REC_INSTANT, .pid = 7, .tid = 8, .mono = 6000000,
			       .name = "lost", .category = "perf"};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	/* a thread with nothing to show is not written */
	r = (struct rtd_record){.kind = RTD_REC_THREAD, .pid = 7, .tid = 9, .name = "idle"};
	assert_int_equal(rtd_firefox_add(ff, &r), 0);
	size_t n;
	char *text = write_all(ff, &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(text, "\"version\":24"));
	assert_non_null(strstr(text, "\"startTime\":1.000000"));
	assert_non_null(strstr(text, "\"name\":\"worker \\\"1\\\"\""));
	assert_null(strstr(text, "\"idle\""));
	/* main and mid shared: 4 stacks, 4 frames, kernel category for one */
	assert_non_null(strstr(text, "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},"
				     "\"data\":[[null,0],[0,1],[1,2],[1,3]]}"));
	assert_non_null(strstr(text, "\"schedule (in [kernel.kallsyms])\""));
	assert_int_equal(count(text, ",false,0,null,null,null,null,1,null]"), 1);
	assert_non_null(strstr(text, "\"data\":[[2,1.000000,0],[3,2.000000,0]]"));
	assert_non_null(strstr(text, "3.000000,5.500000,1,0,{\"type\":\"OffCPU\",\"state\":\"waiting\"}]"));
	assert_non_null(strstr(text, "6.000000,null,0,0,null]"));
	free(text);
	rtd_firefox_free(ff);
	rtd_intern_free(in);
}

static void empty_and_errors(void **state)
{
	(void)state;
	rtd_firefox *ff = rtd_firefox_new(NULL, NULL);
	size_t n = 1;
	char *text = write_all(ff, &n);
	assert_int_equal(n, 0);
	assert_non_null(strstr(text, "\"threads\":[]"));
	free(text);
	struct rtd_record e = {.kind = RTD_REC_ERROR, .code = -RTD_E_TRUNCATED};
	assert_int_equal(rtd_firefox_add(ff, &e), -RTD_E_TRUNCATED);
	rtd_firefox_free(ff);
	rtd_firefox_free(NULL);
	struct rtd_firefox_opts bad = {.sz = 1};
	int err = 0;
	assert_null(rtd_firefox_new(&bad, &err));
	assert_int_equal(err, -RTD_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_and_markers),
		cmocka_unit_test(empty_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
