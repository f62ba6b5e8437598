/* SPDX-License-Identifier: MIT */
/*
 * The agent's admission check of a connection's first bytes
 * (http_admit_first_bytes): an HTTP request line's method token and its
 * space pass, a partial one waits for more, anything else (binary
 * garbage, a TLS hello on the plain port, lower case, a token too long)
 * is refused; on a TLS port only a TLS handshake record passes.
 */
#include "test_util.h"

#include <string.h>

#include "agent/http_admit.h"

static int fb(const char *s, bool tls)
{
	return http_admit_first_bytes((const uint8_t *)s, strlen(s), tls);
}

static void plain(void **state)
{
	(void)state;
	assert_int_equal(fb("GET / HTTP/1.1\r\n", false), 0);
	assert_int_equal(fb("HEAD ", false), 0);
	assert_int_equal(fb("\r\nGET /metrics", false), 0); /* RFC 9112 2.2 */
	assert_int_equal(fb("", false), 1);
	assert_int_equal(fb("G", false), 1);
	assert_int_equal(fb("GE", false), 1);
	assert_int_equal(fb("get / HTTP/1.1", false), -1);
	assert_int_equal(fb(" GET", false), -1);
	assert_int_equal(fb("GARBAGE\r\n", false), -1);
	assert_int_equal(fb("ABCDEFGHIJKLMNOP", false), -1); /* no space */
	static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};
	assert_int_equal(http_admit_first_bytes(hello, sizeof(hello), false), -1);
	static const uint8_t nul[] = {0x00, 'G', 'E', 'T', ' '};
	assert_int_equal(http_admit_first_bytes(nul, sizeof(nul), false), -1);
}

static void tls(void **state)
{
	(void)state;
	static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};
	assert_int_equal(http_admit_first_bytes(hello, sizeof(hello), true), 0);
	assert_int_equal(http_admit_first_bytes(hello, 1, true), 1);
	assert_int_equal(http_admit_first_bytes(hello, 0, true), 1);
	assert_int_equal(fb("GET / HTTP/1.1\r\n", true), -1);
	static const uint8_t v2[] = {0x16, 0x02};
	assert_int_equal(http_admit_first_bytes(v2, sizeof(v2), true), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain),
		cmocka_unit_test(tls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
