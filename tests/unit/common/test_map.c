/* SPDX-License-Identifier: MIT */
/* Hash maps: insert, replace, delete with tombstones, growth, caps. */
#include "test_util.h"

#include "common/map.h"

static void u64_map(void **state)
{
	(void)state;
	rtd_map m;
	rtd_map_init(&m, 0);
	void *v = NULL;
	assert_false(rtd_map_get(&m, 1, &v));
	for (uintptr_t i = 0; i < 10000; i++)
		assert_int_equal(rtd_map_put(&m, i * 7919, (void *)(i + 1), NULL), 0);
	assert_int_equal(m.count, 10000);
	for (uintptr_t i = 0; i < 10000; i++) {
		assert_true(rtd_map_get(&m, i * 7919, &v));
		assert_ptr_equal(v, (void *)(i + 1));
	}
	void *old;
	assert_int_equal(rtd_map_put(&m, 0, (void *)5, &old), 0);
	assert_ptr_equal(old, (void *)1);
	for (uintptr_t i = 0; i < 10000; i += 2)
		assert_non_null(rtd_map_del(&m, i * 7919));
	assert_null(rtd_map_del(&m, 0));
	assert_int_equal(m.count, 5000);
	/* deleting and re-adding many times must not fill the table */
	for (int round = 0; round < 50; round++)
		for (uintptr_t i = 0; i < 200; i++) {
			assert_int_equal(rtd_map_put(&m, 1u << 30 | i, (void *)1, NULL), 0);
			assert_non_null(rtd_map_del(&m, 1u << 30 | i));
		}
	size_t it = 0, seen = 0;
	uint64_t k;
	while (rtd_map_next(&m, &it, &k, &v)) {
		assert_int_equal(k % 7919, 0);
		assert_int_equal((k / 7919) % 2, 1);
		seen++;
	}
	assert_int_equal(seen, 5000);
	rtd_map_clear(&m);
	assert_false(rtd_map_get(&m, 7919, NULL));
	rtd_map_free(&m);
}

static void u64_cap(void **state)
{
	(void)state;
	rtd_map m;
	rtd_map_init(&m, 3);
	assert_int_equal(rtd_map_put(&m, 1, NULL, NULL), 0);
	assert_int_equal(rtd_map_put(&m, 2, NULL, NULL), 0);
	assert_int_equal(rtd_map_put(&m, 3, NULL, NULL), 0);
	assert_int_equal(rtd_map_put(&m, 4, NULL, NULL), -RTD_E_CAP);
	assert_int_equal(rtd_map_put(&m, 3, (void *)9, NULL), 0); /* replace ok */
	rtd_map_free(&m);
}

static void str_map(void **state)
{
	(void)state;
	rtd_strmap m;
	rtd_strmap_init(&m, 100);
	char key[32];
	for (uintptr_t i = 0; i < 100; i++) {
		int n = snprintf(key, sizeof(key), "key-%lu", (unsigned long)i);
		assert_int_equal(rtd_strmap_put(&m, key, (size_t)n, (void *)i), 0);
	}
	assert_int_equal(rtd_strmap_put(&m, "x", 1, NULL), -RTD_E_CAP);
	void *v;
	assert_true(rtd_strmap_get(&m, "key-42", 6, &v));
	assert_ptr_equal(v, (void *)42);
	assert_false(rtd_strmap_get(&m, "key-4", 4, &v)); /* prefix differs */
	/* keys with NULs inside are whole keys */
	assert_int_equal(rtd_strmap_put(&m, "key-42", 6, (void *)7), 0);
	rtd_strmap_entry *e = rtd_strmap_find(&m, "key-42", 6);
	assert_non_null(e);
	assert_string_equal(e->key, "key-42");
	assert_ptr_equal(e->val, (void *)7);
	size_t b = 0, n = 0;
	for (e = rtd_strmap_next(&m, &b, NULL); e; e = rtd_strmap_next(&m, &b, e))
		n++;
	assert_int_equal(n, 100);
	rtd_strmap_free(&m);
}

static void hashes_differ(void **state)
{
	(void)state;
	assert_true(rtd_hash_bytes("a", 1) != rtd_hash_bytes("b", 1));
	assert_true(rtd_hash_bytes("", 0) == rtd_hash_bytes("", 0));
	assert_true(rtd_hash_u64(1) != rtd_hash_u64(2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(u64_map),
		cmocka_unit_test(u64_cap),
		cmocka_unit_test(str_map),
		cmocka_unit_test(hashes_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
