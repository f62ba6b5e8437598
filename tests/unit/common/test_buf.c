/* SPDX-License-Identifier: MIT */
/* Buffers with caps, UTF-16LE to UTF-8, UTF-8 code points, JSON strings,
 * errors, logging. */
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/file.h"
#include "common/log.h"
#include "common/rd.h"

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

/* The code point rtd_utf8_next() reads at @s, and how far it moved */
static uint32_t next_of(const char *s, size_t *moved)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c = rtd_utf8_next(&p);
	*moved = (size_t)(p - (const unsigned char *)s);
	return c;
}

/* The one encoder and decoder of UTF-8 code points (the Go trace's text
 * unquoting, gcdump's FastSerialization strings and the IPC's UTF-16
 * strings each had one of their own) */
/* A NUL-terminated UTF-16LE string read off a byte reader: the reader
 * past its NUL, or failed where no NUL comes. */
static void utf16z(void **state)
{
	(void)state;
	/* "h\u00e9" NUL, then a byte that must stay unread */
	const uint8_t in[] = {'h', 0, 0xe9, 0, 0, 0, 0x7f};
	rtd_rd r;
	rd_init(&r, in, sizeof(in));
	size_t n = 9;
	assert_int_equal(rtd_rd_utf16z_units(&r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rd_off(&r), 0); /* counted, not consumed */
	rtd_buf b = {.max = 64};
	assert_int_equal(rtd_buf_append(&b, "old", 3), 0);
	assert_int_equal(rtd_rd_utf16z(&r, &b), 0);
	assert_string_equal(rtd_buf_cstr(&b), "h\xc3\xa9");
	assert_int_equal(rd_off(&r), 6);
	assert_int_equal(rd_u8(&r), 0x7f);
	/* no NUL before the end (an odd byte left over): truncated, failed */
	rd_init(&r, in, 3);
	assert_int_equal(rtd_rd_utf16z(&r, &b), -RTD_E_TRUNCATED);
	assert_false(rd_ok(&r));
	/* an empty string is its NUL alone */
	rd_init(&r, in + 4, 2);
	assert_int_equal(rtd_rd_utf16z(&r, &b), 0);
	assert_string_equal(rtd_buf_cstr(&b), "");
	assert_int_equal(rd_left(&r), 0);
	rtd_buf_free(&b);
}

static void utf8_points(void **state)
{
	(void)state;
	size_t k;
	/* every length, round trip, at both ends of each */
	const uint32_t cps[] = {0, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xe9, 0x20ac,
				0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff};
	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		uint8_t b[5] = {0};
		size_t n = rtd_utf8_put(b, cps[i]);
		assert_int_equal(n, cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 : cps[i] < 0x10000 ? 3 : 4);
		if (!cps[i])
			continue; /* a NUL ends the text rtd_utf8_next reads */
		assert_int_equal(next_of((const char *)b, &k), cps[i]);
		assert_int_equal(k, n);
	}
	uint8_t e[4];
	assert_int_equal(rtd_utf8_put(e, 0x20ac), 3);
	assert_memory_equal(e, "\xe2\x82\xac", 3);
	/* a UTF-16 surrogate unit alone (FastSerialization's way): 3 bytes */
	assert_int_equal(rtd_utf8_put(e, 0xd83d), 3);
	assert_memory_equal(e, "\xed\xa0\xbd", 3);
	/* what is no code point reads as U+FFFD */
	assert_int_equal(next_of("\x80x", &k), 0xfffd); /* a lone continuation */
	assert_int_equal(k, 1);
	assert_int_equal(next_of("\xf8\x88\x80\x80\x80", &k), 0xfffd); /* no such lead */
	assert_int_equal(k, 1);
	assert_int_equal(next_of("\xe2\x82x", &k), 0xfffd); /* cut short: stops at x */
	assert_int_equal(k, 2);
	assert_int_equal(next_of("\xe2", &k), 0xfffd); /* cut by the NUL */
	assert_int_equal(k, 1);
	assert_int_equal(next_of("\xed\xa0\xbd", &k), 0xfffd); /* a surrogate */
	assert_int_equal(k, 3);
	assert_int_equal(next_of("\xf4\x90\x80\x80", &k), 0xfffd); /* past U+10FFFF */
	assert_int_equal(k, 4);
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
		cmocka_unit_test(utf16),           cmocka_unit_test(utf16z),
		cmocka_unit_test(utf8_points),
		cmocka_unit_test(json),
		cmocka_unit_test(errors),          cmocka_unit_test(logging),
		cmocka_unit_test(grow),            cmocka_unit_test(read_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
