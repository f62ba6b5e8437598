/* SPDX-License-Identifier: MIT */
/*
 * test_session_source.c - a live EventPipe session as a record source
 * (rtd_ipc_session_source), against a real .NET 10 program
 * (tests/targets/dotnet-record: an EventSource event Rtd-Record-Test/Mark
 * with its round number every ~50 ms, printed on stdout too):
 *  - records come while the session runs: the source gives 5 Mark
 *    instants with consecutive rounds before the session is stopped;
 *  - their time is CLOCK_MONOTONIC (the clock says so, error 0): each
 *    lies between the reads of CLOCK_MONOTONIC before the session started
 *    and after the record came, and times never go back;
 *  - after rtd_ipc_session_stop() the source ends (0) once the runtime
 *    has closed the stream, with no error.
 */
#include <inttypes.h>

#include "record_target.h"
#include "rtdiag/ipc_source.h"

static void test_live(void **state)
{
	(void)state;
	record_target_start();

	rtd_ipc_client *c;
	int64_t t0 = mono_now();
	rtd_ipc_session *s = record_session_start(&c);
	int err = 0;
	rtd_source *src = rtd_ipc_session_source(s, NULL, &err);
	assert_non_null(src);

	const struct rtd_record *r;
	int rc;
	int64_t last = INT64_MIN, prev_round = -1;
	size_t marks = 0;
	while (marks < 5 && (rc = rtd_source_next(src, &r)) == 1) {
		assert_true(r->mono >= last);
		last = r->mono;
		if (r->kind != RTD_REC_INSTANT || strcmp(r->name, "Rtd-Record-Test/Mark"))
			continue;
		int64_t now = mono_now();
		if (r->mono < t0 || r->mono > now)
			fail_msg("Mark at %" PRId64 " outside [%" PRId64 ", %" PRId64 "]", r->mono, t0,
				 now);
		assert_int_equal(r->nfields, 1);
		assert_string_equal(r->fields[0].name, "round");
		if (prev_round >= 0)
			assert_int_equal(r->fields[0].i, prev_round + 1);
		prev_round = r->fields[0].i;
		marks++;
	}
	assert_int_equal(marks, 5);
	struct rtd_clock clk;
	assert_int_equal(rtd_source_clock(src, &clk), 0);
	assert_true(clk.flags & RTD_CLOCK_HAS_MONO);
	assert_int_equal(clk.mono_error_ns, 0);
	printf("ok: 5 Mark events while the session ran, rounds %" PRId64 "..%" PRId64
	       ", CLOCK_MONOTONIC between the reads around them\n",
	       prev_round - 4, prev_round);

	/* stopped: the rest of the stream, then the end */
	assert_int_equal(rtd_ipc_session_stop(s), 0);
	size_t more = 0;
	while ((rc = rtd_source_next(src, &r)) == 1)
		more++;
	if (rc < 0)
		fail_msg("after the stop: %s", r->message);
	printf("ok: stopped: %zu more records, then the end\n", more);
	rtd_source_free(src);
	rtd_ipc_session_free(s);
	rtd_ipc_client_free(c);
}

int main(void)
{
	if (system("command -v dotnet >/dev/null 2>&1") != 0) {
		printf("SKIP: no dotnet SDK on PATH\n");
		return RTD_TEST_SKIP;
	}
	atexit(record_target_cleanup);
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_live)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
