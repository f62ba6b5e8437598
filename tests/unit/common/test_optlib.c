/* SPDX-License-Identifier: MIT */
/* Optional libraries opened on first use (common/optlib.h): a missing
 * library or function is -RTD_E_NOLIB with a message naming the file, the
 * function and the package; a present one fills its table; the first
 * answer is kept. The real libraries installed here are opened too. */
#include "test_util.h"

#include <dlfcn.h>

#include "common/optlib.h"
#include "common/optlib_curl.h"
#include "common/optlib_yaml.h"
#include "rtdiag/common.h"

static int resolve_calls;
static size_t (*test_strlen)(const char *);

static int resolve_strlen(void *h, const char **missing)
{
	resolve_calls++;
	void *p = dlsym(h, "strlen");
	if (!p) {
		*missing = "strlen";
		return -1;
	}
	memcpy(&test_strlen, &p, sizeof(p));
	return 0;
}

static int resolve_none(void *h, const char **missing)
{
	resolve_calls++;
	if (!dlsym(h, "rtd_no_such_function_here")) {
		*missing = "rtd_no_such_function_here";
		return -1;
	}
	return 0;
}

static void missing_library(void **state)
{
	(void)state;
	struct rtd_optlib lib = {.name = "libnothing",
				 .soname = "librtdiag-test-no-such-lib.so.7",
				 .package = "libnothing7",
				 .resolve = resolve_strlen};
	char err[512] = "";
	resolve_calls = 0;
	assert_int_equal(rtd_optlib_open(&lib, err, sizeof(err)), -RTD_E_NOLIB);
	assert_non_null(strstr(err, "librtdiag-test-no-such-lib.so.7"));
	assert_non_null(strstr(err, "install libnothing7"));
	assert_int_equal(resolve_calls, 0);
	/* the answer is kept: no second dlopen, the same message */
	err[0] = 0;
	assert_int_equal(rtd_optlib_open(&lib, err, sizeof(err)), -RTD_E_NOLIB);
	assert_non_null(strstr(err, "libnothing"));
	assert_int_equal(rtd_optlib_open(&lib, NULL, 0), -RTD_E_NOLIB);
}

static void missing_function(void **state)
{
	(void)state;
	struct rtd_optlib lib = {.name = "libc", .soname = "libc.so.6",
				 .package = "libc6", .resolve = resolve_none};
	char err[512] = "";
	assert_int_equal(rtd_optlib_open(&lib, err, sizeof(err)), -RTD_E_NOLIB);
	assert_non_null(strstr(err, "rtd_no_such_function_here"));
	assert_non_null(strstr(err, "libc6"));
}

static void present(void **state)
{
	(void)state;
	struct rtd_optlib lib = {.name = "libc", .soname = "libc.so.6",
				 .package = "libc6", .resolve = resolve_strlen};
	resolve_calls = 0;
	assert_int_equal(rtd_optlib_open(&lib, NULL, 0), 0);
	assert_int_equal(rtd_optlib_open(&lib, NULL, 0), 0);
	assert_int_equal(resolve_calls, 1);
	assert_non_null(test_strlen);
	assert_int_equal(test_strlen("optlib"), 6);
}

static int nwarn;
static char lastwarn[512];
static void on_log(enum rtd_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RTD_LOG_WARN) {
		nwarn++;
		snprintf(lastwarn, sizeof(lastwarn), "%s", msg);
	}
}

/* A library that only adds detail: false, and one warning that says what
 * is lost, however often it is asked for. */
static void wanted(void **state)
{
	(void)state;
	struct rtd_optlib lib = {.name = "libnothing",
				 .soname = "librtdiag-test-no-such-lib.so.7",
				 .package = "libnothing7",
				 .without = "no frobnication",
				 .resolve = resolve_strlen};
	rtd_set_log(on_log, NULL, RTD_LOG_WARN);
	nwarn = 0;
	for (int i = 0; i < 3; i++)
		assert_false(rtd_optlib_want(&lib));
	rtd_set_log(NULL, NULL, RTD_LOG_ERROR);
	assert_int_equal(nwarn, 1);
	assert_non_null(strstr(lastwarn, "no frobnication"));
	assert_non_null(strstr(lastwarn, "install libnothing7"));
	struct rtd_optlib libc = {.name = "libc", .soname = "libc.so.6",
				  .package = "libc6", .without = "nothing",
				  .resolve = resolve_strlen};
	assert_true(rtd_optlib_want(&libc));
}

/* The tables of the real libraries (installed by scripts/install-deps.sh):
 * every function listed resolves, and a call goes through. */
static void real_tables(void **state)
{
	(void)state;
	char err[512] = "";
	int rc = rtd_optlib_open_curl(err, sizeof(err));
	if (rc)
		fail_msg("libcurl: %s", err);
	assert_string_equal(curl_easy_strerror(CURLE_OK), "No error");
	rc = rtd_optlib_open_yaml(err, sizeof(err));
	if (rc)
		fail_msg("libyaml: %s", err);
	yaml_parser_t p;
	assert_int_equal(yaml_parser_initialize(&p), 1);
	yaml_parser_delete(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_library),
		cmocka_unit_test(missing_function),
		cmocka_unit_test(present),
		cmocka_unit_test(wanted),
		cmocka_unit_test(real_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
