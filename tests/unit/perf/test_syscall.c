/* SPDX-License-Identifier: MIT */
/* System call names (libseccomp) and return values as perf trace shows them. */
#include "test_util.h"

#include <errno.h>

#include "perf/internal.h"
#include "rtdiag/perf_syscalls.h"

static void names(void **state)
{
	(void)state;
	/* x86-64 numbers (the machine's own table) */
	assert_int_equal(rtd_perf_syscall_nr("openat"), 257);
	assert_int_equal(rtd_perf_syscall_nr("read"), 0);
	assert_int_equal(rtd_perf_syscall_nr("getppid"), 110);
	assert_int_equal(rtd_perf_syscall_nr("no_such_call"), -1);
}

static void returns(void **state)
{
	(void)state;
	struct rtd_perf_syscall c;
	char b[128];
	memset(&c, 0, sizeof(c));
	c.name = "openat";
	c.ret = -ENOENT;
	rtd_perf_syscalls_format_ret(&c, b, sizeof(b));
	assert_string_equal(b, "-1 ENOENT (No such file or directory)");
	c.ret = 3;
	rtd_perf_syscalls_format_ret(&c, b, sizeof(b));
	assert_string_equal(b, "3");
	c.ret = -4096; /* not an errno: a value */
	rtd_perf_syscalls_format_ret(&c, b, sizeof(b));
	assert_string_equal(b, "-4096");
	c.name = "mmap";
	c.ret = 0x7f0000001000;
	rtd_perf_syscalls_format_ret(&c, b, sizeof(b));
	assert_string_equal(b, "0x7f0000001000");
	c.ret = -EACCES;
	rtd_perf_syscalls_format_ret(&c, b, sizeof(b));
	assert_string_equal(b, "-1 EACCES (Permission denied)");
	assert_int_equal(rtd_perf_syscalls_format_ret(NULL, b, sizeof(b)), -RTD_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(returns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
