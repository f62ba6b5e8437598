/* SPDX-License-Identifier: MIT */
/*
 * test_live_source.c - a live EventPipe session as a record source that
 * never blocks (rtd_ipc_session_source_live: what a poll loop such as the
 * agent's reads), against a real .NET 10 program
 * (tests/targets/dotnet-record: an EventSource event Rtd-Record-Test/Mark
 * with its round number every ~50 ms):
 *  - its wake-up descriptor is the session's (rtd_source_fd());
 *  - between the runtime's flushes rtd_source_next() says RTD_SOURCE_IDLE
 *    (a record of kind NONE whose watermark never goes back and is never
 *    behind a record already given), and rtd_source_wait() wakes when
 *    bytes come: 5 Marks with consecutive rounds come that way, with at
 *    least one idle between them;
 *  - rtd_nettrace_profiler_pull() of it comes back RTD_SOURCE_IDLE when
 *    the socket is drained, not at the stream's end;
 *  - after rtd_ipc_session_stop() the source ends (0), idle meanwhile,
 *    with no error;
 *  - with a byte budget of 16 bytes a round (rtd_ipc_live_opts), the
 *    Marks still all come in order (10 of consecutive rounds), and rounds
 *    end with bytes left in the socket (FIONREAD at the idle): at least
 *    10 such idles (none without the budget: the runs above).
 */
#include <inttypes.h>
#include <sys/ioctl.h>

#include "record_target.h"
#include "rtdiag/ipc_source.h"

/* What pull_live() saw: idles, and those with bytes left in the socket */
struct idles {
	size_t n, left;
};

/* Pull until @marks Marks came (0: to the end), waiting on the source's
 * descriptor when it is idle. Returns the last rtd_source_next() result;
 * @idles counts the idles. */
static int pull_live(rtd_source *src, size_t marks, int64_t *prev_round, struct idles *idles)
{
	const struct rtd_record *r;
	int rc;
	int64_t last = INT64_MIN;
	size_t n = 0;
	while ((rc = rtd_source_next(src, &r)) > 0) {
		assert_true(r->mono >= last);
		last = r->mono;
		if (rc == RTD_SOURCE_IDLE) {
			assert_int_equal(r->kind, RTD_REC_NONE);
			idles->n++;
			int left = 0;
			assert_int_equal(ioctl(rtd_source_fd(src), FIONREAD, &left), 0);
			idles->left += left > 0;
			/* a Mark every ~50 ms: bytes come well within 10 s */
			assert_int_equal(rtd_source_wait(src, 10000), 1);
			continue;
		}
		assert_true(r->mono <= mono_now()); /* CLOCK_MONOTONIC: no future */
		if (r->kind != RTD_REC_INSTANT || strcmp(r->name, "Rtd-Record-Test/Mark"))
			continue;
		if (*prev_round >= 0)
			assert_int_equal(r->fields[0].i, *prev_round + 1);
		*prev_round = r->fields[0].i;
		if (++n == marks)
			break;
	}
	if (rc < 0)
		fail_msg("the live source failed: %s", r->message);
	return rc;
}

/* A session of the target (started once for both tests) */
static rtd_ipc_session *live_session(rtd_ipc_client **c)
{
	if (child <= 0)
		record_target_start();
	return record_session_start(c);
}

/* Stop the session, pull the source to its end (0, no error), free all;
 * returns the idles meanwhile. */
static size_t live_end(rtd_source *src, rtd_ipc_session *s, rtd_ipc_client *c)
{
	assert_int_equal(rtd_ipc_session_stop(s), 0);
	int64_t round = -1;
	struct idles after = {0};
	assert_int_equal(pull_live(src, 0, &round, &after), 0);
	rtd_source_free(src);
	rtd_ipc_session_free(s);
	rtd_ipc_client_free(c);
	return after.n;
}

static void test_live_idle(void **state)
{
	(void)state;
	rtd_ipc_client *c;
	rtd_ipc_session *s = live_session(&c);
	int err = 0;
	rtd_source *src = rtd_ipc_session_source_live(s, NULL, NULL, &err);
	assert_non_null(src);
	assert_int_equal(rtd_source_fd(src), rtd_ipc_session_fd(s));

	int64_t round = -1;
	struct idles idles = {0};
	assert_int_equal(pull_live(src, 5, &round, &idles), 1);
	assert_true(idles.n >= 1);
	printf("ok: 5 Marks (rounds %" PRId64 "..%" PRId64 ") with %zu idles between them "
	       "(%zu with bytes left)\n",
	       round - 4, round, idles.n, idles.left);

	/* a consumer that pulls every record comes back when it is idle */
	RTD_OPTS(rtd_nettrace_profiler_opts, po, .kinds = RTD_NETTRACE_PROFILE_CPU);
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(&po);
	assert_non_null(p);
	assert_int_equal(rtd_nettrace_profiler_pull(p, src), RTD_SOURCE_IDLE);
	rtd_nettrace_profiler_free(p);
	printf("ok: rtd_nettrace_profiler_pull() came back idle\n");
	printf("ok: stopped: the end after %zu more idles\n", live_end(src, s, c));
}

/* A round ends at its byte budget with bytes left: the records are the
 * same, in order, in more rounds */
static void test_live_budget(void **state)
{
	(void)state;
	rtd_ipc_client *c;
	rtd_ipc_session *s = live_session(&c);
	int err = 0;
	/* an option this version does not know is refused */
	struct {
		struct rtd_ipc_live_opts o;
		uint64_t unknown;
	} newer = {.o = {.sz = sizeof(newer)}, .unknown = 1};
	assert_null(rtd_ipc_session_source_live(s, &newer.o, NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	RTD_OPTS(rtd_ipc_live_opts, lo, .round_bytes = 16);
	rtd_source *src = rtd_ipc_session_source_live(s, &lo, NULL, &err);
	assert_non_null(src);

	int64_t round = -1;
	struct idles idles = {0};
	assert_int_equal(pull_live(src, 10, &round, &idles), 1);
	printf("ok: budget 16 B: 10 Marks (rounds %" PRId64 "..%" PRId64 ") with %zu idles, "
	       "%zu of them with bytes left\n",
	       round - 9, round, idles.n, idles.left);
	assert_true(idles.left >= 10);
	live_end(src, s, c);
}

static void test_bad_args(void **state)
{
	(void)state;
	int err = 0;
	assert_null(rtd_ipc_session_source_live(NULL, NULL, NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
}

int main(void)
{
	if (system("command -v dotnet >/dev/null 2>&1") != 0) {
		printf("SKIP: no dotnet SDK on PATH\n");
		return RTD_TEST_SKIP;
	}
	atexit(record_target_cleanup);
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_args),
					   cmocka_unit_test(test_live_idle),
					   cmocka_unit_test(test_live_budget)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
