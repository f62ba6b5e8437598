/* SPDX-License-Identifier: MIT */
/*
 * test_line.c - rtd_perf_line, perf events as the lines `rtdiag perf
 * trace` prints: every kind of field value in text and JSON (integers,
 * pointers, escaped strings, arrays cut at 256, IPv4/IPv6/MAC addresses)
 * and a system call's line. The whole sample line is checked against
 * perf's own output by tests/integration/perf.
 */
#include "test_util.h"

#include <string.h>

#include "rtdiag/perf_line.h"

static void is(rtd_perf_line *l, const struct rtd_perf_value *v, unsigned print,
	       const char *want)
{
	size_t n;
	const char *t = rtd_perf_line_value(l, v, print, &n);
	if (n != strlen(want) || memcmp(t, want, n))
		fail_msg("got '%.*s', want '%s'", (int)n, t, want);
}

static void values(void **state)
{
	(void)state;
	rtd_perf_line *tx = rtd_perf_line_new(0);
	rtd_perf_line *js = rtd_perf_line_new(RTD_PERF_LINE_JSON);
	assert_non_null(tx);
	assert_non_null(js);
	struct rtd_perf_value v = {.kind = RTD_PERF_FIELD_INT, .i = -9223372036854775807 - 1};
	is(tx, &v, 0, "-9223372036854775808");
	is(js, &v, 0, "-9223372036854775808");
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_UINT, .u = 18446744073709551615ull};
	is(tx, &v, 0, "18446744073709551615");
	v.u = 0;
	is(tx, &v, 0, "0");
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_UINT, .is_pointer = true,
				    .u = 0x7ffc0000beefull};
	is(tx, &v, 0, "0x7ffc0000beef");
	is(js, &v, 0, "\"0x7ffc0000beef\"");
	const char s[] = "a\"b\\c\nd\te\x01\x7f";
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_STRING, .str = s,
				    .len = sizeof(s) - 1};
	is(tx, &v, 0, "\"a\\\"b\\\\c\\nd\\te\\x01\\x7f\"");
	is(js, &v, 0, "\"a\\\"b\\\\c\\nd\\te\\u0001\x7f\"");

	const uint8_t u32s[] = {1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_ARRAY, .data = u32s,
				    .len = sizeof(u32s), .elem_size = 4};
	is(tx, &v, 0, "[1,2,4294967295]");
	is(js, &v, 0, "[1,2,4294967295]");
	uint8_t many[300] = {0};
	many[255] = 7;
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_ARRAY, .data = many,
				    .len = sizeof(many), .elem_size = 1};
	size_t n;
	const char *t = rtd_perf_line_value(tx, &v, 0, &n);
	assert_int_equal(n, 1 + 255 * 2 + 1 + 4 + 1); /* "[0,...,7,...]" */
	assert_memory_equal(t + n - 7, ",7,...]", 7);
	t = rtd_perf_line_value(js, &v, 0, &n);
	assert_memory_equal(t + n - 3, ",7]", 3);

	const uint8_t ip4[] = {127, 0, 0, 1};
	v = (struct rtd_perf_value){.kind = RTD_PERF_FIELD_ARRAY, .data = ip4,
				    .len = 4, .elem_size = 1};
	is(tx, &v, RTD_PERF_PRINT_IPV4, "127.0.0.1");
	is(js, &v, RTD_PERF_PRINT_IPV4, "\"127.0.0.1\"");
	is(tx, &v, RTD_PERF_PRINT_IPV6, "[127,0,0,1]"); /* not 16 bytes */
	const uint8_t ip6[16] = {[15] = 1};
	v.data = ip6;
	v.len = 16;
	is(tx, &v, RTD_PERF_PRINT_IPV6, "::1");
	const uint8_t mac[6] = {0, 0x11, 0x22, 0x33, 0x44, 0xab};
	v.data = mac;
	v.len = 6;
	is(tx, &v, RTD_PERF_PRINT_MAC, "00:11:22:33:44:ab");
	rtd_perf_line_free(tx);
	rtd_perf_line_free(js);
	rtd_perf_line_free(NULL);
}

static void syscalls(void **state)
{
	(void)state;
	rtd_perf_line *tx = rtd_perf_line_new(0);
	rtd_perf_line *js = rtd_perf_line_new(RTD_PERF_LINE_JSON);
	struct rtd_perf_syscall c = {.pid = 41, .tid = 42, .nr = 257, .name = "openat",
				     .ret = -2, .enter_ns = 5000000000ull,
				     .exit_ns = 5001500000ull, .has_enter = true,
				     .comm = "cat"};
	size_t n;
	/* times count from the first call given */
	const char *t = rtd_perf_line_syscall(tx, NULL, &c, &n);
	assert_string_equal(t, "     0.000 (  1.500 ms): cat/42 openat() = -1 ENOENT "
			       "(No such file or directory)\n");
	assert_int_equal(n, strlen(t));
	c.enter_ns += 2500000;
	c.exit_ns += 2500000;
	c.ret = 3;
	t = rtd_perf_line_syscall(tx, NULL, &c, &n);
	assert_string_equal(t, "     2.500 (  1.500 ms): cat/42 openat() = 3\n");
	/* only the exit seen: the line is at the exit */
	c.has_enter = false;
	c.name = NULL;
	c.nr = 999;
	t = rtd_perf_line_syscall(tx, NULL, &c, &n);
	assert_string_equal(t, "     4.000 (        ?   ): cat/42 ... [continued]: "
			       "syscall_999() = 3\n");
	c = (struct rtd_perf_syscall){.pid = 41, .tid = 42, .name = "read", .ret = -11,
				      .enter_ns = 10, .exit_ns = 25, .has_enter = true,
				      .comm = "a\"b"};
	t = rtd_perf_line_syscall(js, NULL, &c, &n);
	assert_string_equal(t, "{\"time_ns\":10,\"pid\":41,\"tid\":42,\"comm\":\"a\\\"b\","
			       "\"syscall\":\"read\",\"args\":\"\",\"ret\":-11,"
			       "\"errno\":\"EAGAIN\",\"duration_ns\":15}\n");
	/* a sample with no event has no line */
	struct rtd_perf_sample s = {0};
	assert_null(rtd_perf_line_sample(tx, &s, &n));
	assert_int_equal(n, 0);
	rtd_perf_line_free(tx);
	rtd_perf_line_free(js);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values),
		cmocka_unit_test(syscalls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
