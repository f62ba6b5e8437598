/* SPDX-License-Identifier: MIT */
/* Buffers with caps, UTF-16LE to UTF-8, JSON strings, errors, logging. */
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/file.h"
#include "common/log.h"

static void cap_is_enforced(void **state)
{
	(void)state;
	rtd_buf b;
	rtd_buf_init(&b, 8);
	assert_int_equal(rtd_buf_append(&b, "12345678", 8), 0);
	assert_int_equal(rtd_buf_putc(&b, 'x'), -RTD_E_CAP);
	assert_int_equal(b.len, 8); /* unchanged, not truncated */
	assert_string_equal(rtd_buf_cstr(&b), "12345678");
	rtd_buf_reset(&b);
	assert_int_equal(rtd_buf_printf(&b, "%d-%s", 42, "ab"), 0);
	assert_string_equal(rtd_buf_cstr(&b), "42-ab");
	assert_int_equal(rtd_buf_printf(&b, "%s", "toolong"), -RTD_E_CAP);
	rtd_buf_free(&b);
	rtd_buf_free(&b); /* twice is harmless */
}

static void printf_long(void **state)
{
	(void)state;
	rtd_buf b;
	rtd_buf_init(&b, 0);
	char big[1000];
	memset(big, 'z', sizeof(big) - 1);
	big[999] = 0;
	assert_int_equal(rtd_buf_printf(&b, "<%s>", big), 0);
	assert_int_equal(b.len, 1001);
	assert_int_equal(b.data[1000], '>');
	rtd_buf_free(&b);
	rtd_buf_init(&b, 0);
	assert_string_equal(rtd_buf_cstr(&b), "");
}

static const char *u16(const uint8_t *s, size_t n, int nul, int *err)
{
	static rtd_buf b;
	rtd_buf_free(&b);
	rtd_buf_init(&b, 64);
	*err = rtd_utf16le_to_utf8(s, n, nul, &b);
	if (*err == 0 && !nul) {
		/* measured and written in place: the same bytes */
		size_t len = rtd_utf16le_utf8_len(s, n / 2);
		char out[256] = {0};
		assert_int_equal(len, b.len);
		rtd_utf16le_utf8_put(out, s, n / 2);
		assert_memory_equal(out, rtd_buf_cstr(&b), len + 1);
	}
	return rtd_buf_cstr(&b);
}

static void utf16(void **state)
{
	(void)state;
	int err;
	const uint8_t ascii[] = {'H', 0, 'i', 0, 0, 0, 'x', 0};
	assert_string_equal(u16(ascii, sizeof(ascii), 1, &err), "Hi");
	assert_int_equal(err, 0);
	const uint8_t bmp[] = {0xe9, 0x00, 0xac, 0x20}; /* é € */
	assert_string_equal(u16(bmp, 4, 0, &err), "\xc3\xa9\xe2\x82\xac");
	const uint8_t pair[] = {0x3d, 0xd8, 0x00, 0xde}; /* U+1F600 */
	assert_string_equal(u16(pair, 4, 0, &err), "\xf0\x9f\x98\x80");
	/* a lone high surrogate at the end, then a lone low one */
	const uint8_t lone_hi[] = {'a', 0, 0x3d, 0xd8};
	assert_string_equal(u16(lone_hi, 4, 0, &err), "a\xef\xbf\xbd");
	const uint8_t lone_lo[] = {0x00, 0xde, 'b', 0};
	assert_string_equal(u16(lone_lo, 4, 0, &err), "\xef\xbf\xbd" "b");
	/* high followed by a non-surrogate keeps the second unit */
	const uint8_t hi_then_a[] = {0x3d, 0xd8, 'a', 0};
	assert_string_equal(u16(hi_then_a, 4, 0, &err), "\xef\xbf\xbd" "a");
	/* odd byte counts are rejected */
	u16(ascii, 3, 0, &err);
	assert_int_equal(err, -RTD_E_UTF16);
	/* the cap holds */
	uint8_t many[200];
	for (size_t i = 0; i < sizeof(many); i += 2) {
		many[i] = 'q';
		many[i + 1] = 0;
	}
	const char *kept = u16(many, sizeof(many), 0, &err);
	assert_int_equal(err, -RTD_E_CAP);
	assert_int_equal(strlen(kept), 64); /* what fits, as ever */
}

static void json(void **state)
{
	(void)state;
	rtd_buf b;
	rtd_buf_init(&b, 0);
	assert_int_equal(rtd_buf_json_str(&b, "a\"b\\\n\x01", 6), 0);
	assert_string_equal(rtd_buf_cstr(&b), "\"a\\\"b\\\\\\n\\u0001\"");
	rtd_buf_free(&b);
}

static void errors(void **state)
{
	(void)state;
	assert_string_equal(rtd_strerror(0), "success");
	assert_string_equal(rtd_strerror(-RTD_E_TRUNCATED),
			    "input ends before the item is complete");
	assert_string_equal(rtd_strerror(RTD_E_CAP), rtd_strerror(-RTD_E_CAP));
	assert_string_equal(rtd_errname(-RTD_E_VARINT), "RTD_E_VARINT");
	assert_string_equal(rtd_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(rtd_errname(-ENOENT), "errno");
	assert_string_equal(rtd_strerror(-99999), "unknown error");
	assert_string_equal(rtd_version(), RTD_VERSION_STRING);
}

static int nlogged;
static char last[128];
static void logcb(enum rtd_log_level lvl, const char *msg, void *ctx)
{
	(void)lvl;
	*(int *)ctx += 1;
	snprintf(last, sizeof(last), "%s", msg);
}

static void logging(void **state)
{
	(void)state;
	rtd_warn("dropped: no callback yet");
	rtd_set_log(logcb, &nlogged, RTD_LOG_INFO);
	rtd_warn("w %d", 1);
	rtd_debug("filtered %d", 2);
	assert_int_equal(nlogged, 1);
	assert_string_equal(last, "w 1");
	rtd_set_log(NULL, NULL, RTD_LOG_DEBUG);
	rtd_err("silenced");
	assert_int_equal(nlogged, 1);
}

/* Arrays grow by doubling from the first size, and a failed grow (the
 * byte count overflows) leaves array and capacity as they were. */
static void grow(void **state)
{
	(void)state;
	size_t cap = 0;
	uint32_t *a = rtd_grow(NULL, &cap, 1, sizeof(*a), 4);
	assert_non_null(a);
	assert_int_equal(cap, 4);
	a[3] = 7;
	assert_ptr_equal(rtd_grow(a, &cap, 4, sizeof(*a), 4), a); /* fits */
	uint32_t *b = rtd_grow(a, &cap, 5, sizeof(*a), 4);
	assert_non_null(b);
	assert_int_equal(cap, 8);
	assert_int_equal(b[3], 7);
	b = rtd_grow(b, &cap, 100, sizeof(*b), 4);
	assert_non_null(b);
	assert_int_equal(cap, 128);
	assert_null(rtd_grow(b, &cap, SIZE_MAX / 2, sizeof(*b), 4));
	assert_int_equal(cap, 128);
	assert_int_equal(b[3], 7);
	free(b);
}

/* Small files are read whole and NUL-terminated, cut at the buffer, and a
 * missing one is -ENOENT. */
static void read_small(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-test-small-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello\n", 6), 6);
	close(fd);
	char buf[16];
	assert_int_equal(rtd_read_small(path, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "hello\n");
	char tiny[4];
	assert_int_equal(rtd_read_small(path, tiny, sizeof(tiny)), 3);
	assert_string_equal(tiny, "hel");
	unlink(path);
	assert_int_equal(rtd_read_small(path, buf, sizeof(buf)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cap_is_enforced), cmocka_unit_test(printf_long),
		cmocka_unit_test(utf16),           cmocka_unit_test(json),
		cmocka_unit_test(errors),          cmocka_unit_test(logging),
		cmocka_unit_test(grow),            cmocka_unit_test(read_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
