/* SPDX-License-Identifier: MIT */
/*
 * The pull endpoints' parameters as Go 1.23's net/http/pprof reads them
 * (src/net/http/pprof/pprof.go): Profile takes ?seconds= through
 * strconv.ParseInt(s, 10, 64) and uses 30 s for anything else;
 * handler.ServeHTTP refuses a ?seconds= that is not a positive integer
 * and one given with ?debug=N (strconv.Atoi, errors as 0), and writes
 * the text form for debug != 0. The same cases against Go's own server:
 * tests/integration/agent/test_pull_params.sh.
 */
#include "test_util.h"

#include <errno.h>
#include <stdint.h>

#include "agent/agent_int.h"

static void parse_int_as_go(void **state)
{
	(void)state;
	int64_t v;
	assert_int_equal(go_parse_int("16", &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(go_parse_int("+7", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(go_parse_int("-3", &v), 0);
	assert_int_equal(v, -3);
	const char *bad[] = {"0x10", "1.5", "", "+", " 1", "1 ", "1e3", "abc", "1_000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(go_parse_int(bad[i], &v), -EINVAL);
		assert_int_equal(v, 0);
	}
	assert_int_equal(go_parse_int("9223372036854775807", &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(go_parse_int("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	/* out of range: Go returns the nearest value with ErrRange */
	assert_int_equal(go_parse_int("9223372036854775808", &v), -ERANGE);
	assert_true(v == INT64_MAX);
	assert_int_equal(go_parse_int("-99999999999999999999", &v), -ERANGE);
	assert_true(v == INT64_MIN);
}

static void cpu_defaults_to_30s(void **state)
{
	(void)state;
	struct pull_params pp;
	const char *msg;
	const char *to30[] = {NULL, "", "0x10", "1.5", "0", "-4", "abc"};
	for (size_t i = 0; i < sizeof(to30) / sizeof(*to30); i++) {
		assert_int_equal(pull_params_parse(PK_CPU, to30[i], "1", &pp, &msg), 0);
		assert_true(pp.ns == 30000000000ull);
		assert_int_equal(pp.text_form, 0); /* debug= means nothing here */
	}
	assert_int_equal(pull_params_parse(PK_CPU, "16", NULL, &pp, &msg), 0);
	assert_true(pp.ns == 16000000000ull);
}

static void delta_errors(void **state)
{
	(void)state;
	struct pull_params pp;
	const char *msg;
	const char *bad[] = {"0x10", "1.5", "0", "-1", "abc", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(pull_params_parse(PK_ALLOC, bad[i], NULL, &pp, &msg), 400);
		assert_string_equal(msg, "invalid value for \"seconds\" - must be a positive integer\n");
	}
	assert_int_equal(pull_params_parse(PK_BLOCK, "2", "1", &pp, &msg), 400);
	assert_string_equal(msg, "seconds and debug params are incompatible\n");
	assert_int_equal(pull_params_parse(PK_MUTEX, "2", "-1", &pp, &msg), 400);
	/* debug=x is 0 to Atoi: a plain delta */
	assert_int_equal(pull_params_parse(PK_MUTEX, "2", "x", &pp, &msg), 0);
	assert_true(pp.ns == 2000000000ull);
	/* an empty seconds= is no delta */
	assert_int_equal(pull_params_parse(PK_BLOCK, "", NULL, &pp, &msg), 0);
	assert_true(pp.ns == 0);
}

static void debug_text_forms(void **state)
{
	(void)state;
	struct pull_params pp;
	const char *msg;
	assert_int_equal(pull_params_parse(PK_ALLOC, NULL, "1", &pp, &msg), 0);
	assert_int_equal(pp.text_form, RTD_PROFILE_GO_HEAP);
	assert_int_equal(pull_params_parse(PK_MUTEX, NULL, "2", &pp, &msg), 0);
	assert_int_equal(pp.text_form, RTD_PROFILE_GO_MUTEX);
	assert_int_equal(pull_params_parse(PK_BLOCK, NULL, "1", &pp, &msg), 0);
	assert_int_equal(pp.text_form, RTD_PROFILE_GO_CONTENTION);
	assert_int_equal(pull_params_parse(PK_BLOCK, NULL, "0", &pp, &msg), 0);
	assert_int_equal(pp.text_form, 0);
	assert_int_equal(pull_params_parse(PK_BLOCK, NULL, "abc", &pp, &msg), 0);
	assert_int_equal(pp.text_form, 0);
	/* exceptions is not Go's: no text form, its protobuf */
	assert_int_equal(pull_params_parse(PK_EXCEPTIONS, NULL, "1", &pp, &msg), 0);
	assert_int_equal(pp.text_form, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_int_as_go),
		cmocka_unit_test(cpu_defaults_to_30s),
		cmocka_unit_test(delta_errors),
		cmocka_unit_test(debug_text_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
