/* SPDX-License-Identifier: MIT */
/*
 * test_trigger.c - the flight recorder's triggers (rtdiag/trigger.h):
 * each form of expression the issue names parsed and evaluated, `for`
 * held and restarted, the errors naming the bad part, and the process
 * usage read from this test's own /proc entry.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "test_util.h"
#include "rtdiag/trigger.h"

#define SEC 1000000000ll
#define MS 1000000ll

static rtd_trigger *parse_ok(const char *e)
{
	rtd_trigger *t = NULL;
	char err[256] = "";
	int rc = rtd_trigger_parse(e, &t, err, sizeof(err));
	if (rc)
		fail_msg("%s: %s", e, err);
	assert_non_null(t);
	return t;
}

static void bad(const char *e, const char *names)
{
	rtd_trigger *t = (rtd_trigger *)1;
	char err[256] = "";
	assert_int_equal(rtd_trigger_parse(e, &t, err, sizeof(err)), -RTD_E_FORMAT);
	assert_null(t);
	if (!strstr(err, names))
		fail_msg("%s: the message \"%s\" does not name \"%s\"", e, err, names);
}

static void test_errors(void **st)
{
	(void)st;
	bad("cpu", "no comparison");
	bad("cpux>90", "\"cpux\": not something a trigger watches");
	bad("/cpu-usage>80", "\"/cpu-usage\"");
	bad("System.Runtime/>80", "\"System.Runtime/\"");
	bad("cpu>>90%", "\">90%\": not a percentage");
	bad("rss>2XB", "\"2XB\": not a size");
	bad("gc-pause>100", "\"100\": not a duration");
	bad("gc-pause>100ms for 10s", "\"for 10s\": only a threshold");
	bad("cpu>90% for ever", "\"for ever\": not a duration");
	bad("cpu=90", "\"cpu=\": a threshold needs");
	bad("exception>3", "\"exception>\"");
	bad("exception=", "\"\": not an exception type");
	bad("exception=System Timeout", "\"System Timeout\"");
	bad("System.Runtime/cpu-usage>eighty", "\"eighty\": not a number");
	char big[RTD_TRIGGER_MAX_EXPR + 8];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	rtd_trigger *t = NULL;
	assert_int_equal(rtd_trigger_parse(big, &t, NULL, 0), -RTD_E_CAP);
	rtd_trigger_free(NULL);
}

static struct rtd_record counter(const char *name, int64_t mono, double v)
{
	return (struct rtd_record){.kind = RTD_REC_COUNTER, .mono = mono, .name = name, .value = v};
}

/* System.Runtime/cpu-usage>80: fires at once on a value above, from a
 * COUNTER record or a direct value; another counter never. */
static void test_counter(void **st)
{
	(void)st;
	rtd_trigger *t = parse_ok("System.Runtime/cpu-usage>80");
	assert_int_equal(rtd_trigger_kind(t), RTD_TRIGGER_COUNTER);
	const char *p, *n;
	assert_int_equal(rtd_trigger_counter_name(t, &p, &n), 0);
	assert_string_equal(p, "System.Runtime");
	assert_string_equal(n, "cpu-usage");
	assert_string_equal(rtd_trigger_cause(t), "cpu-usage");
	struct rtd_trigger_hit h;
	struct rtd_record r = counter("System.Runtime/cpu-usage", SEC, 80);
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0); /* not above */
	r = counter("System.Runtime/gc-heap-size", 2 * SEC, 500);
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	r = counter("Other/cpu-usage", 2 * SEC, 95);
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	r = counter("System.Runtime/cpu-usage", 3 * SEC, 81.5);
	assert_int_equal(rtd_trigger_record(t, &r, &h), 1);
	assert_int_equal(h.mono, 3 * SEC);
	assert_true(h.value == 81.5);
	assert_non_null(strstr(h.text, "System.Runtime/cpu-usage 81.5 > 80"));
	assert_int_equal(rtd_trigger_counter(t, 4 * SEC, "System.Runtime", "cpu-usage", 99, &h), 1);
	/* the live stream's EventCounters instants: the Payload's fields */
	struct rtd_field ec[2] = {
		{.name = "Name", .type = RTD_FIELD_STR, .s = "cpu-usage"},
		{.name = "Mean", .type = RTD_FIELD_F64, .f = 90},
	};
	struct rtd_record i = {.kind = RTD_REC_INSTANT, .mono = 4 * SEC, .nfields = 2,
			       .fields = ec, .name = "System.Runtime/EventCounters"};
	assert_int_equal(rtd_trigger_record(t, &i, &h), 1);
	ec[1].f = 12;
	assert_int_equal(rtd_trigger_record(t, &i, &h), 0);
	ec[1] = (struct rtd_field){.name = "Increment", .type = RTD_FIELD_F64, .f = 85};
	assert_int_equal(rtd_trigger_record(t, &i, &h), 1);
	i.name = "Other/EventCounters";
	assert_int_equal(rtd_trigger_record(t, &i, &h), 0);
	assert_int_equal(rtd_trigger_counter(t, 5 * SEC, "System.Runtime", "cpu-usage", 10, &h), 0);
	struct rtd_proc_usage a = {0}, b = {.mono = SEC, .cpu_ns = SEC};
	assert_int_equal(rtd_trigger_proc(t, &a, &b, &h), 0); /* not its kind */
	rtd_trigger_free(t);
}

/* `for 10s`: fires when held 10 s, not before; a dip restarts the count;
 * held on, it fires again 10 s later. */
static void test_for(void **st)
{
	(void)st;
	rtd_trigger *t = parse_ok("Bars.Meter/bars.queue.length>=40 for 10s");
	assert_string_equal(rtd_trigger_cause(t), "bars.queue.length");
	struct rtd_trigger_hit h;
	int fired = 0;
	int64_t at[4];
	/* one value a second: 40 from 0..8 s, 39 at 9 s, then 40 again */
	for (int s = 0; s <= 40; s++) {
		double v = s == 9 ? 39 : 40;
		if (rtd_trigger_counter(t, s * SEC, "Bars.Meter", "bars.queue.length", v, &h)) {
			assert_true(fired < 4);
			at[fired++] = h.mono;
		}
	}
	/* held from 10 s: fires at 20 s, 30 s, 40 s */
	assert_int_equal(fired, 3);
	assert_int_equal(at[0], 20 * SEC);
	assert_int_equal(at[1], 30 * SEC);
	assert_int_equal(at[2], 40 * SEC);
	assert_non_null(strstr(h.text, "for 10s"));
	rtd_trigger_free(t);
}

/* A meter's values as the record stream gives them: instants of the
 * System.Diagnostics.Metrics EventSource, the numbers as text. */
static void test_meter_instants(void **st)
{
	(void)st;
	rtd_trigger *t = parse_ok("Bars.Meter/bars.queue.length>=40");
	struct rtd_trigger_hit h;
	struct rtd_field fl[3] = {
		{.name = "meterName", .type = RTD_FIELD_STR, .s = "Bars.Meter"},
		{.name = "instrumentName", .type = RTD_FIELD_STR, .s = "bars.queue.length"},
		{.name = "value", .type = RTD_FIELD_STR, .s = "39"},
	};
	struct rtd_record r = {
		.kind = RTD_REC_INSTANT, .mono = SEC, .nfields = 3, .fields = fl,
		.name = "System.Diagnostics.Metrics/UpDownCounterRateValuePublished"};
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	fl[2].s = "41";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 1);
	assert_true(h.value == 41);
	/* a gauge's value is its lastValue; another instrument never fires */
	r.name = "System.Diagnostics.Metrics/GaugeValuePublished";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0); /* no lastValue */
	fl[2].name = "lastValue";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 1);
	fl[1].s = "bars.queue.other";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	fl[1].s = "bars.queue.length";
	fl[2].s = "41x"; /* not a number */
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	rtd_trigger_free(t);
}

static void test_proc(void **st)
{
	(void)st;
	rtd_trigger *cpu = parse_ok("cpu>90%");
	rtd_trigger *rss = parse_ok("rss>2GB");
	struct rtd_trigger_hit h;
	struct rtd_proc_usage a = {.mono = 0, .cpu_ns = 0, .rss = 1u << 30};
	struct rtd_proc_usage b = {.mono = SEC, .cpu_ns = 950 * MS, .rss = 3ull << 30};
	assert_int_equal(rtd_trigger_proc(cpu, &a, &b, &h), 1);
	assert_true(h.value > 94.9 && h.value < 95.1);
	assert_non_null(strstr(h.text, "cpu 95.0% > 90%"));
	b.cpu_ns = 500 * MS;
	assert_int_equal(rtd_trigger_proc(cpu, &a, &b, &h), 0);
	assert_int_equal(rtd_trigger_proc(rss, NULL, &a, &h), 0);
	assert_int_equal(rtd_trigger_proc(rss, &a, &b, &h), 1);
	assert_true(h.value == (double)(3ull << 30));
	rtd_trigger_free(cpu);
	rtd_trigger_free(rss);
	/* units: 1024-based sizes, a bare byte count, a bare percentage */
	rtd_trigger *k = parse_ok("rss >= 512 MiB");
	struct rtd_proc_usage m = {.mono = 1, .rss = 512u << 20};
	assert_int_equal(rtd_trigger_proc(k, NULL, &m, &h), 1);
	m.rss--;
	assert_int_equal(rtd_trigger_proc(k, NULL, &m, &h), 0);
	rtd_trigger_free(k);

	/* this process: it exists, has memory, and used some CPU */
	struct rtd_proc_usage me;
	assert_int_equal(rtd_proc_usage_read(0, &me), 0);
	assert_true(me.rss > 0);
	assert_true(me.mono > 0);
	assert_int_equal(rtd_proc_usage_read(0x7ffffff0, &me), -ESRCH);
}

/* gc-pause>100ms: the runtime's "EE suspended" slices timed from begin to
 * end, a nested slice on the same track not mistaken for its end. */
static void test_gc_pause(void **st)
{
	(void)st;
	rtd_trigger *t = parse_ok("gc-pause>100ms");
	struct rtd_trigger_hit h;
	struct rtd_record b = {.kind = RTD_REC_SLICE_BEGIN, .pid = 5, .lane = 2,
			       .name = "EE suspended", .mono = SEC};
	struct rtd_record e = {.kind = RTD_REC_SLICE_END, .pid = 5, .lane = 2};
	struct rtd_record other = {.kind = RTD_REC_SLICE_BEGIN, .pid = 5, .lane = 2,
				   .name = "inner", .mono = SEC + 10 * MS};
	assert_int_equal(rtd_trigger_record(t, &b, &h), 0);
	e.mono = SEC + 50 * MS;
	assert_int_equal(rtd_trigger_record(t, &other, &h), 0);
	assert_int_equal(rtd_trigger_record(t, &e, &h), 0); /* ends "inner" */
	e.mono = SEC + 150 * MS;
	assert_int_equal(rtd_trigger_record(t, &e, &h), 1);
	assert_true(h.value == 150e6);
	assert_non_null(strstr(h.text, "gc-pause 150ms > 100ms"));
	/* a short one does not */
	b.mono = 2 * SEC;
	e.mono = 2 * SEC + 20 * MS;
	assert_int_equal(rtd_trigger_record(t, &b, &h), 0);
	assert_int_equal(rtd_trigger_record(t, &e, &h), 0);
	/* a GC slice (not a suspension) is not timed */
	struct rtd_record gc = {.kind = RTD_REC_SLICE_BEGIN, .pid = 5, .lane = 1, .name = "GC",
				.mono = 3 * SEC};
	struct rtd_record gce = {.kind = RTD_REC_SLICE_END, .pid = 5, .lane = 1, .mono = 9 * SEC};
	assert_int_equal(rtd_trigger_record(t, &gc, &h), 0);
	assert_int_equal(rtd_trigger_record(t, &gce, &h), 0);
	rtd_trigger_free(t);
}

static void test_exception(void **st)
{
	(void)st;
	rtd_trigger *t = parse_ok("exception=System.TimeoutException");
	assert_string_equal(rtd_trigger_cause(t), "exception");
	struct rtd_trigger_hit h;
	struct rtd_field f = {.name = "ExceptionType", .type = RTD_FIELD_STR,
			      .s = "System.InvalidOperationException"};
	struct rtd_record r = {.kind = RTD_REC_INSTANT, .mono = SEC, .tid = 42,
			       .name = "Microsoft-Windows-DotNETRuntime/Exception/Start",
			       .nfields = 1, .fields = &f};
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	f.s = "System.TimeoutException";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 1);
	assert_non_null(strstr(h.text, "System.TimeoutException on thread 42"));
	r.name = "Microsoft-Windows-DotNETRuntime/GC/Start";
	assert_int_equal(rtd_trigger_record(t, &r, &h), 0);
	rtd_trigger_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),  cmocka_unit_test(test_counter),
		cmocka_unit_test(test_for), cmocka_unit_test(test_meter_instants),     cmocka_unit_test(test_proc),
		cmocka_unit_test(test_gc_pause), cmocka_unit_test(test_exception),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
