/* SPDX-License-Identifier: MIT */
/* Counter names and raw PMU terms to attrs. */
#include "test_util.h"

#include <sys/stat.h>

#include "perf/internal.h"
#include "rtdiag/perf_counter.h"

static void test_names(void **state)
{
	(void)state;
	struct perf_event_attr a;
	assert_int_equal(perf_counter_attr("/nonexistent", "task-clock", &a), 0);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED |
						 PERF_FORMAT_TOTAL_TIME_RUNNING |
						 PERF_FORMAT_ID);
	assert_int_equal(perf_counter_attr("/nonexistent", "cs", &a), 0);
	assert_int_equal(a.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_int_equal(perf_counter_attr("/nonexistent", "instructions", &a), 0);
	assert_int_equal(a.type, PERF_TYPE_HARDWARE);
	assert_int_equal(a.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_int_equal(perf_counter_attr("/nonexistent", "no-such-counter", &a),
			 -RTD_E_PERF_NOEVENT);
	int n = 0;
	for (const char *const *p = rtd_perf_counter_names(); *p; p++)
		n++;
	assert_true(n >= 20);
}

static void test_raw(void **state)
{
	(void)state;
	char dir[] = "/tmp/rtdiag-pmu-XXXXXX", p[256];
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/mypmu", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/mypmu/type", dir);
	FILE *f = fopen(p, "w");
	fputs("42\n", f);
	fclose(f);
	struct perf_event_attr a;
	assert_int_equal(perf_counter_attr(dir, "mypmu/config=0x1c2,config1=7/", &a), 0);
	assert_int_equal(a.type, 42);
	assert_int_equal(a.config, 0x1c2);
	assert_int_equal(a.config1, 7);
	assert_int_equal(perf_counter_attr(dir, "mypmu/umask=1/", &a), -RTD_E_INVAL);
	assert_int_equal(perf_counter_attr(dir, "mypmu/config=zz/", &a), -RTD_E_INVAL);
	assert_int_equal(perf_counter_attr(dir, "otherpmu/config=1/", &a), -RTD_E_PERF_NOTSUPP);
	assert_int_equal(perf_counter_attr(dir, "mypmu/config=1", &a), -RTD_E_PERF_NOEVENT);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_raw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
