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
	/* a meter Counter: its rate, "Rate" as dotnet-counters collect says */
	assert_string_equal(rtd_counter_kind_name(RTD_COUNTER_RATE), "Rate");
	assert_string_equal(rtd_counter_kind_name(RTD_COUNTER_HISTOGRAM), "Metric");
}

/* One value of r in view: its name, tags, type and value. */
static void one(const struct rtd_counter_record *r, enum rtd_counter_view view,
		const char *name, const char *tags, const char *type, double value)
{
	struct rtd_counter_value v[RTD_COUNTER_MAX_QUANTILES];
	assert_int_equal(rtd_counter_values(r, view, 1, v, 8), 1);
	assert_string_equal(v[0].name, name);
	assert_string_equal(v[0].tags, tags);
	assert_string_equal(v[0].type, type);
	assert_true(v[0].value == value);
}

/*
 * Each kind as dotnet-counters 10.0.750501 writes it (collect's CSV/JSON,
 * monitor's table), as seen side by side on tests/targets/dotnet-kinds
 * rates (tests/integration/dotnet/test_counters_vs.sh).
 */
static void test_values(void **state)
{
	(void)state;
	/* Counter<long> "{request}", Add(7) ten times a second: 70 in the
	 * interval, 140 since listening began */
	struct rtd_counter_record r = {
		.kind = RTD_COUNTER_RATE, .provider = "Bars", .name = "requests",
		.display_name = "", .unit = "{request}", .tags = "",
		.value = 70, .total = 140, .has_value = true, .has_total = true};
	one(&r, RTD_COUNTER_VIEW_COLLECT, "requests ({request} / 1 sec)", "",
	    "Rate", 70);
	one(&r, RTD_COUNTER_VIEW_MONITOR, "requests ({request})", "", "Metric",
	    140);
	/* no unit: "Count"; tags kept */
	r.unit = "";
	r.tags = "route=/a";
	one(&r, RTD_COUNTER_VIEW_COLLECT, "requests (Count / 1 sec)", "route=/a",
	    "Rate", 70);
	/* the meter's and the instrument's own tags: apart (JSON), and
	 * before the value's in one list (CSV) */
	struct rtd_counter_value v[RTD_COUNTER_MAX_QUANTILES];
	r.meter_tags = "region=eu";
	r.instrument_tags = "queue=q1";
	assert_int_equal(rtd_counter_values(&r, RTD_COUNTER_VIEW_COLLECT, 1, v, 8), 1);
	assert_string_equal(v[0].tags, "route=/a");
	assert_string_equal(v[0].meter_tags, "region=eu");
	assert_string_equal(v[0].instrument_tags, "queue=q1");
	assert_string_equal(v[0].all_tags, "region=eu,queue=q1,route=/a");
	r.tags = "";
	r.meter_tags = NULL;
	assert_int_equal(rtd_counter_values(&r, RTD_COUNTER_VIEW_COLLECT, 1, v, 8), 1);
	assert_string_equal(v[0].all_tags, "queue=q1");
	r.instrument_tags = NULL;
	r.tags = "route=/a";
	one(&r, RTD_COUNTER_VIEW_MONITOR, "requests (Count)", "route=/a",
	    "Metric", 140);
	/* an ObservableCounter's first interval: no rate, nothing shown */
	r.has_value = false;
	assert_int_equal(rtd_counter_values(&r, RTD_COUNTER_VIEW_COLLECT, 1, v, 8), 0);
	assert_int_equal(rtd_counter_values(&r, RTD_COUNTER_VIEW_MONITOR, 1, v, 8), 0);
	/* up-down counters and gauges: their value, "name (unit)" or "name" */
	struct rtd_counter_record u = {
		.kind = RTD_COUNTER_UPDOWN, .provider = "Bars", .name = "queue",
		.display_name = "", .unit = "{item}", .tags = "", .value = 30,
		.total = 10, .has_value = true, .has_total = true};
	one(&u, RTD_COUNTER_VIEW_COLLECT, "queue ({item})", "", "Metric", 30);
	one(&u, RTD_COUNTER_VIEW_MONITOR, "queue ({item})", "", "Metric", 30);
	u.kind = RTD_COUNTER_GAUGE;
	u.unit = "";
	one(&u, RTD_COUNTER_VIEW_COLLECT, "queue", "", "Metric", 30);
	/* a histogram: one value per percentile, tags ending Percentile=N */
	struct rtd_counter_record h = {
		.kind = RTD_COUNTER_HISTOGRAM, .provider = "Bars",
		.name = "latency", .display_name = "", .unit = "ms",
		.tags = "route=/a", .has_value = true, .nquantiles = 3,
		.quantile = {0.5, 0.95, 0.99}, .qvalue = {5, 50, 51}};
	assert_int_equal(rtd_counter_values(&h, RTD_COUNTER_VIEW_COLLECT, 1, v, 8), 3);
	assert_string_equal(v[0].name, "latency (ms)");
	assert_string_equal(v[0].tags, "route=/a,Percentile=50");
	assert_string_equal(v[1].tags, "route=/a,Percentile=95");
	assert_string_equal(v[2].tags, "route=/a,Percentile=99");
	assert_string_equal(v[2].type, "Metric");
	assert_true(v[1].value == 50 && v[2].value == 51);
	assert_int_equal(rtd_counter_values(&h, RTD_COUNTER_VIEW_COLLECT, 1, v, 2),
			 -RTD_E_CAP);
	/* EventCounters: the mean by its display name and unit, increments
	 * by their "(unit / N sec)" */
	struct rtd_counter_record e = {
		.kind = RTD_COUNTER_MEAN, .provider = "Src", .name = "polled",
		.display_name = "Polled value", .unit = "MB", .tags = "",
		.value = 7.25, .has_value = true};
	one(&e, RTD_COUNTER_VIEW_COLLECT, "Polled value (MB)", "", "Metric", 7.25);
	e.kind = RTD_COUNTER_SUM;
	e.unit = "count";
	e.display_name = "Ticks";
	e.value = 30;
	one(&e, RTD_COUNTER_VIEW_MONITOR, "Ticks (Count / 1 sec)", "", "Rate", 30);
	assert_int_equal(rtd_counter_values(&e, RTD_COUNTER_VIEW_COLLECT, 2, v, 1), 1);
	assert_string_equal(v[0].name, "Ticks (Count / 2 sec)");
	assert_int_equal(rtd_counter_values(NULL, RTD_COUNTER_VIEW_COLLECT, 1, v, 1),
			 -RTD_E_INVAL);
}

/* #32 item 5: a terminal shows bytes in units, counts in full. */
static void test_format(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(rtd_counter_format(2.2154e9, "By", b, sizeof(b)), "2.22 GB");
	assert_string_equal(rtd_counter_format(2.2154e9, "By / 1 sec", b, sizeof(b)), "2.22 GB");
	assert_string_equal(rtd_counter_format(512, "bytes", b, sizeof(b)), "512 B");
	assert_string_equal(rtd_counter_format(1536, "B", b, sizeof(b)), "1.54 kB");
	/* not bytes: a count in full, a fraction as it is */
	assert_string_equal(rtd_counter_format(2.2154e9, "", b, sizeof(b)), "2215400000");
	assert_string_equal(rtd_counter_format(1234567, NULL, b, sizeof(b)), "1234567");
	assert_string_equal(rtd_counter_format(12.5, "MB", b, sizeof(b)), "12.5");
	assert_string_equal(rtd_counter_format(3.25, "%", b, sizeof(b)), "3.25");
	/* "Byte" or "Bytes/sec" spelled otherwise are not guessed at */
	assert_string_equal(rtd_counter_format(2e9, "{Byte}", b, sizeof(b)), "2000000000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
