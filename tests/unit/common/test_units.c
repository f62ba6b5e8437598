/* SPDX-License-Identifier: MIT */
/*
 * test_units.c - rtd_parse_number/duration/size, the one grammar of
 * numbers, durations and sizes the CLI's options and the agent's config share:
 * every unit, the clock form, overflow, a sign, empty input, and junk
 * quoted in the reason given.
 */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "rtdiag/common.h"

static void numbers(void **state)
{
	(void)state;
	double v = -1;
	assert_int_equal(rtd_parse_number("1.5", &v, NULL, 0), 0);
	assert_true(v == 1.5);
	assert_int_equal(rtd_parse_number(".5", &v, NULL, 0), 0);
	assert_true(v == 0.5);
	assert_int_equal(rtd_parse_number("10", &v, NULL, 0), 0);
	assert_true(v == 10);
	static const struct {
		const char *s;
		int rc;
		const char *why;
	} bad[] = {
		{"", -RTD_E_INVAL, "empty"},
		{"-1", -RTD_E_INVAL, "'-1' is not a number"},
		{"1e3", -RTD_E_INVAL, "'e3' after the number"},
		{"1.5x", -RTD_E_INVAL, "'x' after the number"},
		{"12345678901234567890123456789012345678901", -RTD_E_OVERFLOW,
		 "more than 40 characters"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";
		v = 7;
		int rc = rtd_parse_number(bad[i].s, &v, why, sizeof(why));
		if (rc != bad[i].rc || !strstr(why, bad[i].why) || v != 7)
			fail_msg("'%s': %d '%s'", bad[i].s, rc, why);
	}
}

static void durations(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{"1.5", 1500000000},    {"1.5s", 1500000000}, {"200ms", 200000000},
		{"10us", 10000},        {"250ns", 250},       {"2m", 120000000000},
		{"3min", 180000000000}, {"1h", 3600000000000}, {"0", 0},
		{".5", 500000000},      {"00:00:01.5", 1500000000},
		{"01:30", 90000000000}, {"1:02:03", 3723000000000},
		{"1:00:00:00", 86400000000000},
		{"9200000000", 9200000000000000000},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ns = -1;
		double sec = -1;
		if (rtd_parse_duration(ok[i].s, &ns, &sec, NULL, 0) != 0 ||
		    ns != ok[i].ns)
			fail_msg("%s: %lld", ok[i].s, (long long)ns);
		assert_true(fabs(sec * 1e9 - (double)ok[i].ns) <= 1e-6 * (double)ok[i].ns);
	}
	static const struct {
		const char *s;
		int rc;
		const char *why;
	} bad[] = {
		{"", -RTD_E_INVAL, "empty"},
		{"-1s", -RTD_E_INVAL, "'-1s' is not a number"},
		{"+1", -RTD_E_INVAL, "'+1' is not a number"},
		{"abc", -RTD_E_INVAL, "'abc' is not a number"},
		{"8x", -RTD_E_INVAL, "unknown unit 'x'"},
		{"5 s", -RTD_E_INVAL, "unknown unit ' s'"},
		{"1e9", -RTD_E_INVAL, "unknown unit 'e9'"},
		{"0x10", -RTD_E_INVAL, "unknown unit 'x10'"},
		{"1:2.5:3", -RTD_E_INVAL, "only the seconds"},
		{"1:2:3:4:5", -RTD_E_INVAL, "more than 4 fields"},
		{"1:", -RTD_E_INVAL, "empty"},
		{"1:2x", -RTD_E_INVAL, "'x' after '1:2'"},
		{"9200000001", -RTD_E_OVERFLOW, "more than 9200000000 seconds"},
		{"2562048h", -RTD_E_OVERFLOW, "more than"},
		{"123456789012345678901234567890123456789012", -RTD_E_OVERFLOW,
		 "more than 40 characters"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";
		int64_t ns = 7;
		int rc = rtd_parse_duration(bad[i].s, &ns, NULL, why, sizeof(why));
		if (rc != bad[i].rc || !strstr(why, bad[i].why) || ns != 7)
			fail_msg("'%s': %d '%s'", bad[i].s, rc, why);
	}
	/* a short buffer is cut, never overrun; no buffer is fine */
	char tiny[4] = "zzz";
	assert_int_equal(rtd_parse_duration("8x", NULL, NULL, tiny, 3), -RTD_E_INVAL);
	assert_string_equal(tiny, "un");
	assert_int_equal(rtd_parse_duration(NULL, NULL, NULL, NULL, 0), -RTD_E_INVAL);
}

static void sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{"4096", 4096},   {"100B", 100},      {"100b", 100},
		{"64k", 65536},   {"64K", 65536},     {"8m", 8u << 20},
		{"8M", 8u << 20}, {"1G", 1u << 30},   {"1KiB", 1024},
		{"2MB", 2u << 20}, {"1.5k", 1536},    {"1T", 1ull << 40},
		{"16000000T", 16000000ull << 40},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 0;
		if (rtd_parse_size(ok[i].s, &v, NULL, 0) != 0 || v != ok[i].v)
			fail_msg("%s: %llu", ok[i].s, (unsigned long long)v);
	}
	static const struct {
		const char *s;
		int rc;
		const char *why;
	} bad[] = {
		{"", -RTD_E_INVAL, "empty"},
		{"k", -RTD_E_INVAL, "'k' is not a number"},
		{"-4", -RTD_E_INVAL, "'-4' is not a number"},
		{"1.5", -RTD_E_INVAL, "not a whole number of bytes"},
		{"12q", -RTD_E_INVAL, "unknown unit 'q'"},
		{"1kk", -RTD_E_INVAL, "unknown unit 'kk'"},
		{"1Mb", -RTD_E_INVAL, "unknown unit 'Mb'"},
		{"0x10", -RTD_E_INVAL, "unknown unit 'x10'"},
		{"17000000T", -RTD_E_OVERFLOW, "1.8e19 bytes or more"},
		{"99999999999999999999", -RTD_E_OVERFLOW, "1.8e19 bytes"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";
		uint64_t v = 7;
		int rc = rtd_parse_size(bad[i].s, &v, why, sizeof(why));
		if (rc != bad[i].rc || !strstr(why, bad[i].why) || v != 7)
			fail_msg("'%s': %d '%s'", bad[i].s, rc, why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers),
		cmocka_unit_test(durations),
		cmocka_unit_test(sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
