/* SPDX-License-Identifier: MIT */
/*
 * The profile as a record consumer (rtdiag/profile_records.h), as the
 * agent's perf sources use it: a fixed period for records that carry
 * none (cpu-clock's), whole slices of a category with their stacks as a
 * block profile (count and length, the state as a label), a cut into a
 * new profile that keeps the threads' names, and each module's mapping
 * asked once per profile.
 */
#include "test_util.h"

#include "rtdiag/profile_records.h"

static const struct rtd_rec_frame frames[2] = {
	{.ip = 0x1010, .name = "leaf", .module = "/bin/prog"},
	{.ip = 0x1020, .name = "main", .module = "/bin/prog"},
};
static const struct rtd_stack stack = {.id = 1, .n = 2, .frames = frames};

static rtd_profile *two_types(const char *a, const char *b)
{
	struct rtd_profile_type t[2] = {{a, "count"}, {b, "nanoseconds"}};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = t, .ntypes = 2, .default_type = 1};
	rtd_profile *p = rtd_profile_new2(&o);
	assert_non_null(p);
	return p;
}

static char *folded_roots(const rtd_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .type = "samples",
					   .thread_roots = true};
	assert_int_equal(rtd_profile_write(p, RTD_PROFILE_FMT_FOLDED, f, &o), 0);
	fclose(f);
	return buf;
}

static struct rtd_record sample(int64_t mono)
{
	return (struct rtd_record){.kind = RTD_REC_SAMPLE, .mono = mono, .pid = 7, .tid = 8,
				   .name = "cpu", .value = 1, .stack = &stack};
}

/* Records without a "period" field weigh the option's; one with the
 * field weighs it. */
static void test_period(void **state)
{
	(void)state;
	rtd_profile *p = two_types("samples", "cpu");
	RTD_OPTS(rtd_profile_records_opts, o, .name = "cpu", .period = 10101010);
	rtd_profile_records *c = rtd_profile_records_new(p, &o, NULL);
	assert_non_null(c);
	for (int i = 0; i < 3; i++) {
		struct rtd_record r = sample(i);
		assert_int_equal(rtd_profile_records_add(c, &r), 0);
	}
	struct rtd_field f = {.name = "period", .type = RTD_FIELD_U64, .u = 5};
	struct rtd_record r = sample(4);
	r.fields = &f;
	r.nfields = 1;
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(rtd_profile_total_of(p, 0), 4);
	assert_int_equal(rtd_profile_total_of(p, 1), 3 * 10101010 + 5);
	rtd_profile_records_free(c);
	rtd_profile_free(p);
}

/* Slices of the category with a stack: 1 and their length each, their
 * state a label (a context per state); other slices are not taken. */
static void test_slices(void **state)
{
	(void)state;
	rtd_profile *p = two_types("contentions", "delay");
	RTD_OPTS(rtd_profile_records_opts, o, .category = "off-cpu", .label = "state");
	rtd_profile_records *c = rtd_profile_records_new(p, &o, NULL);
	assert_non_null(c);
	const char *states[3] = {"S", "D", "S"};
	for (int i = 0; i < 3; i++) {
		struct rtd_field f[2] = {{.name = "state", .type = RTD_FIELD_STR, .s = states[i]},
					 {.name = "in", .type = RTD_FIELD_STR, .s = "leaf"}};
		struct rtd_record r = {.kind = RTD_REC_SLICE, .mono = 100 + i, .pid = 7, .tid = 8,
				       .name = i == 1 ? "disk" : "sleep", .category = "off-cpu",
				       .dur = 1000 * (i + 1), .stack = &stack, .fields = f,
				       .nfields = 2};
		assert_int_equal(rtd_profile_records_add(c, &r), 0);
	}
	/* not taken: another category; no stack; a slice's begin */
	struct rtd_record other = {.kind = RTD_REC_SLICE, .mono = 200, .tid = 8, .name = "read",
				   .category = "syscall", .dur = 7, .stack = &stack};
	struct rtd_record bare = {.kind = RTD_REC_SLICE, .mono = 201, .tid = 8, .name = "sleep",
				  .category = "off-cpu", .dur = 7};
	struct rtd_record begin = {.kind = RTD_REC_SLICE_BEGIN, .mono = 202, .tid = 8,
				   .name = "sleep", .category = "off-cpu", .stack = &stack};
	assert_int_equal(rtd_profile_records_add(c, &other), 0);
	assert_int_equal(rtd_profile_records_add(c, &bare), 0);
	assert_int_equal(rtd_profile_records_add(c, &begin), 0);
	assert_int_equal(rtd_profile_total_of(p, 0), 3);
	assert_int_equal(rtd_profile_total_of(p, 1), 6000);
	/* thread 8 with S, with D: a context more than thread 8 alone */
	struct rtd_profile_stats st, st1;
	rtd_profile_get_stats(p, &st);
	rtd_profile *one = two_types("contentions", "delay");
	RTD_OPTS(rtd_profile_records_opts, o1, .category = "off-cpu");
	rtd_profile_records *c1 = rtd_profile_records_new(one, &o1, NULL);
	struct rtd_record r1 = {.kind = RTD_REC_SLICE, .mono = 1, .pid = 7, .tid = 8,
				.name = "sleep", .category = "off-cpu", .dur = 1, .stack = &stack};
	assert_int_equal(rtd_profile_records_add(c1, &r1), 0);
	rtd_profile_get_stats(one, &st1);
	assert_int_equal(st.contexts, st1.contexts + 1);
	rtd_profile_records_free(c1);
	rtd_profile_free(one);
	uint64_t n = 0;
	rtd_profile_records_stats(c, &n, NULL, NULL);
	assert_int_equal(n, 3);
	rtd_profile_records_free(c);
	rtd_profile_free(p);
}

/* A cut: the next records go to another profile, the thread named once
 * before still named there. */
static void test_retarget(void **state)
{
	(void)state;
	rtd_profile *p1 = two_types("samples", "cpu"), *p2 = two_types("samples", "cpu");
	rtd_profile_records *c = rtd_profile_records_new(p1, NULL, NULL);
	assert_non_null(c);
	struct rtd_record th = {.kind = RTD_REC_THREAD, .pid = 7, .tid = 8, .name = "worker-8"};
	struct rtd_record r = sample(1);
	assert_int_equal(rtd_profile_records_add(c, &th), 0);
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(rtd_profile_records_retarget(c, NULL), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_records_retarget(c, p2), 0);
	r.mono = 2;
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(rtd_profile_total_of(p1, 0), 1);
	assert_int_equal(rtd_profile_total_of(p2, 0), 2);
	char *f1 = folded_roots(p1), *f2 = folded_roots(p2);
	assert_non_null(strstr(f1, "worker-8"));
	assert_non_null(strstr(f2, "worker-8"));
	assert_non_null(strstr(f2, "main;leaf 2"));
	free(f1);
	free(f2);
	rtd_profile_records_free(c);
	rtd_profile_free(p1);
	rtd_profile_free(p2);
}

static int calls;

static int map_prog(void *ctx, rtd_profile *p, const char *module)
{
	(void)ctx;
	calls++;
	return rtd_profile_add_mapping(p, 0x1000, 0x2000, 0, module, "abcd");
}

/* Each module's mapping is asked once per profile, and given to its
 * frames. */
static void test_mapping(void **state)
{
	(void)state;
	rtd_profile *p1 = two_types("samples", "cpu"), *p2 = two_types("samples", "cpu");
	RTD_OPTS(rtd_profile_records_opts, o, .mapping = map_prog);
	rtd_profile_records *c = rtd_profile_records_new(p1, &o, NULL);
	assert_non_null(c);
	struct rtd_record r = sample(1);
	calls = 0;
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(calls, 1);
	assert_int_equal(rtd_profile_records_retarget(c, p2), 0);
	assert_int_equal(rtd_profile_records_add(c, &r), 0);
	assert_int_equal(calls, 2);
	struct rtd_profile_stats st;
	rtd_profile_get_stats(p2, &st);
	assert_int_equal(st.mappings, 1);
	rtd_profile_records_free(c);
	rtd_profile_free(p1);
	rtd_profile_free(p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_retarget),
		cmocka_unit_test(test_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
