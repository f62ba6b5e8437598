/* SPDX-License-Identifier: MIT */
/* Every edge of the byte reader: exact end, one past, sticky errors,
 * varint widths and overflow, sub-readers, alignment. */
#include "test_util.h"

#include "common/rd.h"

static void exact_end(void **state)
{
	(void)state;
	const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7, 8};
	rtd_rd r;
	rd_init(&r, b, sizeof(b));
	assert_int_equal(rd_u32le(&r), 0x04030201);
	assert_int_equal(rd_u32le(&r), 0x08070605);
	assert_true(rd_ok(&r));
	assert_int_equal(rd_left(&r), 0);
	assert_int_equal(rd_off(&r), 8);
}

static void one_past_end_is_sticky(void **state)
{
	(void)state;
	const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7};
	rtd_rd r;
	rd_init(&r, b, sizeof(b));
	assert_int_equal(rd_u32le(&r), 0x04030201);
	assert_int_equal(rd_u32le(&r), 0); /* needs 4, has 3 */
	assert_int_equal(r.err, -RTD_E_TRUNCATED);
	assert_int_equal(rd_off(&r), 4); /* did not move */
	/* later reads fail too, even ones that would fit */
	assert_int_equal(rd_u8(&r), 0);
	assert_int_equal(rd_off(&r), 4);
	assert_int_equal(r.err, -RTD_E_TRUNCATED);
}

static void integers(void **state)
{
	(void)state;
	const uint8_t b[] = {0xfe, 0xff, 0x01, 0x02, 0x88, 0x77, 0x66, 0x55,
			     0x44, 0x33, 0x22, 0x11, 0x00, 0x00, 0x80, 0x3f};
	rtd_rd r;
	rd_init(&r, b, sizeof(b));
	assert_int_equal(rd_i16le(&r), -2);
	assert_int_equal(rd_u16be(&r), 0x0102);
	assert_true(rd_u64le(&r) == 0x1122334455667788ULL);
	assert_true(rd_f32le(&r) == 1.0f);
	assert_true(rd_ok(&r));
	rd_init(&r, b + 2, 2);
	assert_int_equal(rd_u16le(&r), 0x0201);
}

static void varuint_widths(void **state)
{
	(void)state;
	rtd_rd r;
	const uint8_t one[] = {0x7f};
	rd_init(&r, one, 1);
	assert_int_equal(rd_varuint(&r), 127);
	const uint8_t two[] = {0xe5, 0x8e, 0x26}; /* 624485 */
	rd_init(&r, two, 3);
	assert_int_equal(rd_varuint32(&r), 624485);
	assert_true(rd_ok(&r));
	/* UINT64_MAX: ten bytes, the last one 0x01 */
	const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff,
			       0xff, 0xff, 0xff, 0xff, 0x01};
	rd_init(&r, max, sizeof(max));
	assert_true(rd_varuint(&r) == UINT64_MAX);
	assert_true(rd_ok(&r));
}

static void varuint_overflow(void **state)
{
	(void)state;
	rtd_rd r;
	/* an 11th byte is never allowed */
	const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				  0x80, 0x80, 0x80, 0x80, 0x01};
	rd_init(&r, eleven, sizeof(eleven));
	(void)rd_varuint(&r);
	assert_int_equal(r.err, -RTD_E_VARINT);
	/* a 10th byte with bits beyond 64 */
	const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0xff,
			       0xff, 0xff, 0xff, 0xff, 0x02};
	rd_init(&r, big, sizeof(big));
	(void)rd_varuint(&r);
	assert_int_equal(r.err, -RTD_E_VARINT);
	/* 32-bit: six bytes are too many; five bytes above UINT32_MAX too */
	const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	rd_init(&r, six, sizeof(six));
	(void)rd_varuint32(&r);
	assert_int_equal(r.err, -RTD_E_VARINT);
	const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
	rd_init(&r, over, sizeof(over));
	(void)rd_varuint32(&r);
	assert_int_equal(r.err, -RTD_E_VARINT);
	const uint8_t u32max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
	rd_init(&r, u32max, sizeof(u32max));
	assert_true(rd_varuint32(&r) == UINT32_MAX);
	assert_true(rd_ok(&r));
}

static void varuint_truncated(void **state)
{
	(void)state;
	rtd_rd r;
	const uint8_t cut[] = {0x80, 0x80};
	rd_init(&r, cut, sizeof(cut));
	(void)rd_varuint(&r);
	assert_int_equal(r.err, -RTD_E_TRUNCATED);
}

static void signed_varint(void **state)
{
	(void)state;
	rtd_rd r;
	const uint8_t m1[] = {0x7f};
	rd_init(&r, m1, 1);
	assert_int_equal(rd_varint(&r), -1);
	const uint8_t m128[] = {0x80, 0x7f};
	rd_init(&r, m128, 2);
	assert_int_equal(rd_varint(&r), -128);
	const uint8_t p63[] = {0x3f};
	rd_init(&r, p63, 1);
	assert_int_equal(rd_varint(&r), 63);
}

static void bytes_and_sub(void **state)
{
	(void)state;
	const uint8_t b[] = {3, 'a', 'b', 'c', 9, 9};
	rtd_rd r, sub;
	rd_init(&r, b, sizeof(b));
	const uint8_t *p;
	assert_true(rd_sub(&r, rd_u8(&r), &sub));
	assert_true(rd_bytes(&sub, 3, &p));
	assert_memory_equal(p, "abc", 3);
	assert_false(rd_bytes(&sub, 1, &p)); /* sub ends at its slice */
	assert_null(p);
	assert_int_equal(sub.err, -RTD_E_TRUNCATED);
	assert_true(rd_ok(&r)); /* the parent is untouched */
	assert_int_equal(rd_off(&r), 4);
	/* a sub-reader's offsets count from the parent's start */
	rd_init(&r, b, sizeof(b));
	rd_skip(&r, 1);
	assert_true(rd_sub(&r, 3, &sub));
	rd_u8(&sub);
	assert_int_equal(rd_off(&sub), 2);
	/* a slice longer than what is left fails without moving */
	rd_init(&r, b, sizeof(b));
	assert_false(rd_sub(&r, 7, &sub));
	assert_int_equal(r.err, -RTD_E_TRUNCATED);
	assert_int_equal(rd_left(&sub), 0);
	/* huge n must not wrap the pointer */
	rd_init(&r, b, sizeof(b));
	assert_false(rd_skip(&r, SIZE_MAX));
	assert_int_equal(rd_off(&r), 0);
}

static void align(void **state)
{
	(void)state;
	const uint8_t b[8] = {0};
	rtd_rd r;
	rd_init(&r, b, sizeof(b));
	rd_u8(&r);
	assert_true(rd_align(&r, 4));
	assert_int_equal(rd_off(&r), 4);
	assert_true(rd_align(&r, 4)); /* already aligned: no move */
	assert_int_equal(rd_off(&r), 4);
	rd_skip(&r, 3);
	assert_true(rd_align(&r, 4));
	assert_int_equal(rd_off(&r), 8);
	rd_init(&r, b, 6);
	rd_skip(&r, 5);
	assert_false(rd_align(&r, 4)); /* padding runs past the end */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_end),
		cmocka_unit_test(one_past_end_is_sticky),
		cmocka_unit_test(integers),
		cmocka_unit_test(varuint_widths),
		cmocka_unit_test(varuint_overflow),
		cmocka_unit_test(varuint_truncated),
		cmocka_unit_test(signed_varint),
		cmocka_unit_test(bytes_and_sub),
		cmocka_unit_test(align),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
