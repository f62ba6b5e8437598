/* SPDX-License-Identifier: MIT */
/*
 * test_errmsg.c - rtd_errf/rtd_verrf_at, the library's one error helper
 * (src/common/errmsg.h): the code comes back, the message is cut and
 * terminated in its buffer, nothing is written without one, and the
 * decoder form names the byte ("offset 42: ...").
 */
#include "test_util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "common/errmsg.h"
#include "rtdiag/common.h"

static int at(char *msg, size_t len, int code, const char *where, uint64_t off,
	      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = rtd_verrf_at(msg, len, code, where, off, fmt, ap);
	va_end(ap);
	return rc;
}

static void formats(void **state)
{
	(void)state;
	char m[64];
	assert_int_equal(rtd_errf(m, sizeof(m), -RTD_E_FORMAT, "bad %s %d", "tag", 7),
			 -RTD_E_FORMAT);
	assert_string_equal(m, "bad tag 7");
	/* cut to the buffer, terminated, nothing past it */
	char small[8];
	memset(small, 'x', sizeof(small));
	assert_int_equal(rtd_errf(small, 6, -EIO, "%s", "0123456789"), -EIO);
	assert_string_equal(small, "01234");
	assert_int_equal(small[6], 'x');
	/* no buffer: only the code */
	assert_int_equal(rtd_errf(NULL, 0, -ENOMEM, "%s", "x"), -ENOMEM);
	m[0] = 'z';
	assert_int_equal(rtd_errf(m, 0, 0, "%s", "x"), 0);
	assert_int_equal(m[0], 'z');
	/* with the offset in front, as nettrace's decoder says it */
	assert_int_equal(at(m, sizeof(m), -RTD_E_NT_BLOCK, "offset", 297272,
			    "block of %u bytes", 4096u), -RTD_E_NT_BLOCK);
	assert_string_equal(m, "offset 297272: block of 4096 bytes");
	assert_int_equal(at(m, 10, -1, "truncated at byte", 18446744073709551615ull,
			    "%s", "x"), -1);
	assert_string_equal(m, "truncated");
	assert_int_equal(at(NULL, 0, -2, "offset", 1, "%s", "x"), -2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
