/* SPDX-License-Identifier: MIT */
/*
 * Tracepoint formats parsed by libtraceevent, fields decoded with bounds
 * checks: integers of each size and sign, char arrays, __data_loc and
 * __rel_loc strings and arrays, and raw data too short for them.
 */
#include "test_util.h"

#include <traceevent/event-parse.h>

#include "perf/internal.h"

static const char format[] =
	"name: rtd_test\n"
	"ID: 4242\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rel;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:char comm[8];\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:s16 neg;\toffset:24;\tsize:2;\tsigned:1;\n"
	"\tfield:u8 small;\toffset:26;\tsize:1;\tsigned:0;\n"
	"\tfield:u64 big;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * ptr;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc u32[] ids;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:int arr[2];\toffset:52;\tsize:8;\tsigned:1;\n"
	"\n"
	"print fmt: \"name=%s\", __get_str(name)\n";

static uint8_t raw[96];

static void build_raw(void)
{
	memset(raw, 0, sizeof(raw));
	uint16_t type = 4242;
	memcpy(raw, &type, 2);
	int32_t pid = 77;
	memcpy(raw + 4, &pid, 4);
	/* name: at 60, 6 bytes "hello\0" */
	uint32_t loc = 60 | 6u << 16;
	memcpy(raw + 8, &loc, 4);
	memcpy(raw + 60, "hello", 6);
	/* rel: offset relative to the field's end (12 + 4 = 16): 66 - 16 = 50 */
	uint32_t rel = 50 | 4u << 16;
	memcpy(raw + 12, &rel, 4);
	memcpy(raw + 66, "rel", 4);
	memcpy(raw + 16, "bash\0\0\0\0", 8);
	int16_t neg = -5;
	memcpy(raw + 24, &neg, 2);
	raw[26] = 200;
	uint64_t big = 0xfedcba9876543210ull;
	memcpy(raw + 32, &big, 8);
	uint64_t ptr = 0x7ffc0000beefull;
	memcpy(raw + 40, &ptr, 8);
	/* ids: 3 u32 at 72 */
	uint32_t idl = 72 | 12u << 16;
	memcpy(raw + 48, &idl, 4);
	uint32_t ids[3] = {1, 2, 3};
	memcpy(raw + 72, ids, 12);
	int32_t arr[2] = {-1, 9};
	memcpy(raw + 52, arr, 8);
}

static const struct rtd_perf_field *field(struct rtd_perf_field *f, unsigned n,
					  const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return &f[i];
	fail_msg("no field %s", name);
	return NULL;
}

static void test_decode(void **state)
{
	(void)state;
	struct tep_handle *tep = tep_alloc();
	struct rtd_perf_field *f;
	unsigned n, nc;
	int id;
	assert_int_equal(perf_fields_from_format(tep, "rtd", format, strlen(format),
						 &id, &f, &n, &nc), 0);
	assert_int_equal(id, 4242);
	assert_int_equal(nc, 4);
	assert_int_equal(n, 13);
	build_raw();
	struct rtd_perf_value v;

	assert_int_equal(perf_field_decode(field(f, n, "common_pid"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_INT);
	assert_int_equal(v.i, 77);

	const struct rtd_perf_field *nm = field(f, n, "name");
	assert_true(nm->is_dynamic);
	assert_false(nm->is_relative);
	assert_int_equal(perf_field_decode(nm, raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_STRING);
	assert_int_equal(v.len, 5);
	assert_memory_equal(v.str, "hello", 5);

	const struct rtd_perf_field *rl = field(f, n, "rel");
	assert_true(rl->is_dynamic);
	assert_true(rl->is_relative);
	assert_int_equal(perf_field_decode(rl, raw, sizeof(raw), &v), 0);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.str, "rel", 3);

	assert_int_equal(perf_field_decode(field(f, n, "comm"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_STRING);
	assert_int_equal(v.len, 4);
	assert_memory_equal(v.str, "bash", 4);

	assert_int_equal(perf_field_decode(field(f, n, "neg"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_INT);
	assert_int_equal(v.i, -5);
	assert_int_equal(perf_field_decode(field(f, n, "small"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_UINT);
	assert_int_equal(v.u, 200);
	assert_int_equal(perf_field_decode(field(f, n, "big"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.u, 0xfedcba9876543210ull);
	assert_int_equal(perf_field_decode(field(f, n, "ptr"), raw, sizeof(raw), &v), 0);
	assert_true(v.is_pointer);
	assert_int_equal(v.kind, RTD_PERF_FIELD_UINT);
	assert_int_equal(v.u, 0x7ffc0000beefull);

	assert_int_equal(perf_field_decode(field(f, n, "ids"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_ARRAY);
	assert_int_equal(v.len, 12);
	assert_int_equal(v.elem_size, 4);
	assert_int_equal(v.data[8], 3);
	assert_int_equal(perf_field_decode(field(f, n, "arr"), raw, sizeof(raw), &v), 0);
	assert_int_equal(v.kind, RTD_PERF_FIELD_ARRAY);
	assert_int_equal(v.elem_size, 4);
	assert_int_equal(v.len, 8);

	/* too short for the field itself, and for what a __data_loc points at */
	assert_int_equal(perf_field_decode(field(f, n, "big"), raw, 36, &v), -RTD_E_TRUNCATED);
	assert_int_equal(perf_field_decode(nm, raw, 64, &v), -RTD_E_TRUNCATED);
	uint32_t far = 0xfff0 | 0xffffu << 16;
	memcpy(raw + 12, &far, 4);
	assert_int_equal(perf_field_decode(rl, raw, sizeof(raw), &v), -RTD_E_TRUNCATED);

	perf_fields_free(f, n);
	tep_free(tep);
}

static void test_bad_format(void **state)
{
	(void)state;
	struct tep_handle *tep = tep_alloc();
	struct rtd_perf_field *f;
	unsigned n, nc;
	int id;
	assert_int_equal(perf_fields_from_format(tep, "x", "garbage", 7, &id, &f, &n, &nc),
			 -RTD_E_FORMAT);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_bad_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
