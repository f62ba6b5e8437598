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

/* rtd_vmap against a plain array of what should be there: inserts,
 * deletes (backward shift moves later members of a run into the hole:
 * 40,000 steps over 3,000 keys, the table growing from 64 slots, make
 * runs of every kind), lookups of every key every 997 steps, iteration,
 * the cap, clear. */
static void vmap_model(void **state)
{
	(void)state;
	enum { N = 3000 };
	static uint64_t want[N]; /* 0: absent, else the value stored */
	struct rtd_vmap t;
	rtd_vmap_init(&t, sizeof(uint64_t), 0);
	uint64_t seed = 42;
	size_t live = 0;
	for (int step = 0; step < 40000; step++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t k = (seed >> 33) % N;
		uint64_t key = k * 0x100000000ull; /* high bits too */
		if ((seed >> 20) % 3) {
			bool created = false;
			int err = 0;
			uint64_t *v = rtd_vmap_get(&t, key, true, &created, &err);
			assert_non_null(v);
			assert_int_equal(created, want[k] == 0);
			if (created) {
				assert_int_equal(*v, 0); /* inserted zeroed */
				live++;
			}
			*v = want[k] = step + 1;
		} else {
			if (want[k])
				live--;
			rtd_vmap_del(&t, key);
			want[k] = 0;
		}
		if (step % 997)
			continue;
		assert_int_equal(t.n, live);
		for (uint64_t j = 0; j < N; j++) {
			uint64_t *v = rtd_vmap_get(&t, j * 0x100000000ull, false, NULL, NULL);
			if (want[j])
				assert_true(v && *v == want[j]);
			else
				assert_null(v);
		}
	}
	size_t it = 0, seen = 0;
	uint64_t key;
	uint64_t *v;
	while ((v = rtd_vmap_next(&t, &it, &key))) {
		assert_int_equal(key % 0x100000000ull, 0);
		assert_int_equal(*v, want[key / 0x100000000ull]);
		seen++;
	}
	assert_int_equal(seen, live);
	rtd_vmap_clear(&t);
	assert_int_equal(t.n, 0);
	assert_null(rtd_vmap_get(&t, 0, false, NULL, NULL));
	rtd_vmap_free(&t);

	/* a set (no value) with a cap: the entry past it is refused */
	rtd_vmap_init(&t, 0, 2);
	int err = 0;
	assert_non_null(rtd_vmap_get(&t, 7, true, NULL, &err));
	assert_non_null(rtd_vmap_get(&t, 8, true, NULL, &err));
	assert_non_null(rtd_vmap_get(&t, 7, true, NULL, &err)); /* found */
	assert_null(rtd_vmap_get(&t, 9, true, NULL, &err));
	assert_int_equal(err, -RTD_E_CAP);
	rtd_vmap_del(&t, 8);
	assert_non_null(rtd_vmap_get(&t, 9, true, NULL, &err));
	rtd_vmap_free(&t);
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
		cmocka_unit_test(vmap_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
