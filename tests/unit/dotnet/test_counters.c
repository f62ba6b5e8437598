/* SPDX-License-Identifier: MIT */
/*
 * test_counters - dotnet-counters' --counters syntax and the session it
 * asks for (the records themselves are checked against a real .NET
 * program in tests/integration/dotnet/test_counters.sh).
 */
#include "test_util.h"

#include "rtdiag/counters.h"

static int none(void *ctx, const struct rtd_counter_record *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static void test_spec(void **state)
{
	(void)state;
	char err[128];
	rtd_counters *c = rtd_counters_new("System.Runtime, My.Meter[a, b],X",
					   none, NULL, err, sizeof(err));
	assert_non_null(c);
	struct rtd_ipc_providers pv = {0};
	assert_int_equal(rtd_counters_request(c, 2, "s1", &pv), 0);
	/* each as an EventSource with the interval, then the Metrics source */
	assert_int_equal(pv.n, 4);
	assert_string_equal(pv.v[0].name, "System.Runtime");
	assert_string_equal(pv.v[0].args, "EventCounterIntervalSec=2");
	assert_string_equal(pv.v[1].name, "My.Meter");
	assert_string_equal(pv.v[3].name, "System.Diagnostics.Metrics");
	assert_int_equal(pv.v[3].keywords, 0x3);
	assert_non_null(strstr(pv.v[3].args, "SessionId=s1;"));
	/* System.Runtime is read from its EventCounters only: a Metrics
	 * session can deadlock the runtime's shutdown (counters.c) */
	assert_non_null(strstr(pv.v[3].args,
			       "Metrics=My.Meter\\a,My.Meter\\b,X;"));
	assert_non_null(strstr(pv.v[3].args, "RefreshInterval=2;"));
	/* nothing seen yet: all three are silent */
	assert_string_equal(rtd_counters_silent(c, 0), "System.Runtime");
	assert_string_equal(rtd_counters_silent(c, 2), "X");
	assert_null(rtd_counters_silent(c, 3));
	assert_int_equal(rtd_counters_request(c, 0, "s1", &pv), -RTD_E_INVAL);
	rtd_ipc_providers_clear(&pv);
	rtd_counters_free(c);
	/* default: System.Runtime, as EventCounters and no Metrics session
	 * at all */
	c = rtd_counters_new(NULL, none, NULL, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(rtd_counters_silent(c, 0), "System.Runtime");
	assert_int_equal(rtd_counters_request(c, 5, "s2", &pv), 0);
	assert_int_equal(pv.n, 1);
	assert_string_equal(pv.v[0].name, "System.Runtime");
	assert_string_equal(pv.v[0].args, "EventCounterIntervalSec=5");
	rtd_ipc_providers_clear(&pv);
	rtd_counters_free(c);
	c = rtd_counters_new("System.Runtime[cpu-usage]", none, NULL, err,
			     sizeof(err));
	assert_non_null(c);
	assert_int_equal(rtd_counters_request(c, 1, "s3", &pv), 0);
	assert_int_equal(pv.n, 1);
	rtd_ipc_providers_clear(&pv);
	rtd_counters_free(c);
	/* malformed */
	assert_null(rtd_counters_new("A[x,y", none, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "'[' without ']'"));
	assert_null(rtd_counters_new("A[x] B", none, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "expected ','"));
	assert_null(rtd_counters_new(",,[x]", none, NULL, err, sizeof(err)));
	assert_string_equal(rtd_counter_kind_name(RTD_COUNTER_SUM), "Rate");
	/* a meter Counter: its total, "Metric" as dotnet-counters 9+ says */
	assert_string_equal(rtd_counter_kind_name(RTD_COUNTER_RATE), "Metric");
	assert_string_equal(rtd_counter_kind_name(RTD_COUNTER_HISTOGRAM), "Metric");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
