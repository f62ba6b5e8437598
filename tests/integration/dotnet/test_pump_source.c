/* SPDX-License-Identifier: MIT */
/*
 * test_pump_source.c - a live EventPipe session as a record source read
 * under a pump's rules (rtd_ipc_session_pump_source, _pump_drain: what
 * 'rtdiag dotnet profile' and 'dotnet stack' read), against a real .NET
 * 10 program (tests/targets/dotnet-record: an EventSource event
 * Rtd-Record-Test/Mark with its round number every ~50 ms):
 *  - duration: the session is stopped @duration_ms after the first pull
 *    (not after the source was made: the caller may take a rundown of its
 *    own first), its Marks come in consecutive rounds, the source ends
 *    with no error, and after the drain (to the runtime's close) the
 *    result says stopped and ended; the sink saw every byte; the tick
 *    ran, the last time with the final count;
 *  - the stop flag: set after 5 Marks, the source ends soon after, cleanly;
 *  - drain: a consumer that stops pulling after 3 Marks; the rest is read
 *    under the same rules: the session still ends at its duration;
 *  - the target killed mid-session: the Marks before, then the source's
 *    error -RTD_E_TRUNCATED, the result says the target went.
 */
#include <inttypes.h>

#include "record_target.h"
#include "rtdiag/ipc_source.h"

struct seen {
	uint64_t sink_bytes;
	unsigned ticks;
	uint64_t last_tick;
};

static int count_sink(const void *data, size_t len, void *ctx)
{
	(void)data;
	((struct seen *)ctx)->sink_bytes += len;
	return 0;
}

static void count_tick(uint64_t bytes, void *ctx)
{
	struct seen *s = ctx;
	s->ticks++;
	s->last_tick = bytes;
}

/* A session of Rtd-Record-Test and its pump source. */
struct live {
	rtd_ipc_client *c;
	rtd_ipc_session *s;
	rtd_source *src;
	struct rtd_ipc_pump_result res;
	struct seen seen;
	int64_t made; /* when the source was made */
};

static void live_open(struct live *l, const struct rtd_ipc_pump_opts *po)
{
	memset(l, 0, sizeof(*l));
	int err = 0;
	l->c = rtd_ipc_client_new(child, NULL, &err);
	assert_non_null(l->c);
	struct rtd_ipc_provider prov = {.name = "Rtd-Record-Test", .keywords = ~0ull, .level = 5};
	RTD_OPTS(rtd_ipc_session_opts, so, .providers = &prov, .n_providers = 1,
		 .no_rundown = true, .no_stackwalk = true);
	l->s = rtd_ipc_session_start(l->c, &so, &err);
	assert_non_null(l->s);
	struct rtd_ipc_pump_opts o = *po;
	o.ctx = &l->seen;
	l->made = mono_now();
	l->src = rtd_ipc_session_pump_source(l->s, &o, &l->res, NULL, &err);
	assert_non_null(l->src);
}

static void live_close(struct live *l)
{
	rtd_source_free(l->src);
	rtd_ipc_session_free(l->s);
	rtd_ipc_client_free(l->c);
}

/* Pull up to @max Marks (0: to the end); their rounds must follow each
 * other. Returns the last rtd_source_next() result; *@n gets the count. */
static int pull_marks(struct live *l, size_t max, size_t *n, const struct rtd_record **last)
{
	const struct rtd_record *r = NULL;
	int rc;
	int64_t prev = -1;
	*n = 0;
	while ((rc = rtd_source_next(l->src, &r)) == 1) {
		if (r->kind != RTD_REC_INSTANT || strcmp(r->name, "Rtd-Record-Test/Mark"))
			continue;
		if (prev >= 0)
			assert_int_equal(r->fields[0].i, prev + 1);
		prev = r->fields[0].i;
		if (++*n == max)
			break;
	}
	*last = r;
	return rc;
}

static void test_duration(void **state)
{
	(void)state;
	struct live l;
	RTD_OPTS(rtd_ipc_pump_opts, po, .sink = count_sink, .tick = count_tick,
		 .duration_ms = 1000);
	live_open(&l, &po);
	/* a caller's own work before the first pull is not in the duration */
	usleep(700000);
	int64_t first = mono_now();
	size_t n;
	const struct rtd_record *r;
	int rc = pull_marks(&l, 0, &n, &r);
	if (rc < 0)
		fail_msg("the source's end: %s", r->message);
	/* the source stops at the end marker; the runtime's close after it */
	assert_int_equal(rtd_ipc_session_pump_drain(l.s), 0);
	int64_t end = mono_now();
	printf("ok: --duration 1 s: %zu Marks, ended %.2f s after the first pull (%.2f s after "
	       "the source was made), %llu bytes, %u ticks\n",
	       n, (double)(end - first) / 1e9, (double)(end - l.made) / 1e9,
	       (unsigned long long)l.res.bytes, l.seen.ticks);
	assert_true(end - first >= 1000000000);
	assert_true(n >= 10); /* a Mark about every 50 ms for 1 s */
	assert_true(l.res.stopped && l.res.ended);
	assert_false(l.res.target_gone || l.res.rundown_timeout);
	assert_true(l.res.bytes > 0);
	assert_int_equal(l.seen.sink_bytes, l.res.bytes);
	assert_true(l.seen.ticks >= 1);
	assert_int_equal(l.seen.last_tick, l.res.bytes);
	/* over: the end again, and the drain reads nothing more */
	assert_int_equal(rtd_source_next(l.src, &r), 0);
	assert_int_equal(rtd_ipc_session_pump_drain(l.s), 0);
	assert_int_equal(l.seen.sink_bytes, l.res.bytes);
	live_close(&l);
}

static void test_stop_flag(void **state)
{
	(void)state;
	static volatile int stop;
	struct live l;
	RTD_OPTS(rtd_ipc_pump_opts, po, .stop = &stop);
	stop = 0;
	live_open(&l, &po);
	size_t n;
	const struct rtd_record *r;
	int rc = pull_marks(&l, 5, &n, &r);
	assert_int_equal(rc, 1);
	assert_int_equal(n, 5);
	stop = 1; /* as SIGINT's handler does */
	size_t more;
	rc = pull_marks(&l, 0, &more, &r);
	if (rc < 0)
		fail_msg("after the stop: %s", r->message);
	assert_int_equal(rtd_ipc_session_pump_drain(l.s), 0);
	assert_true(l.res.stopped && l.res.ended);
	assert_false(l.res.target_gone);
	printf("ok: the stop flag after 5 Marks: %zu more, then the end\n", more);
	live_close(&l);
}

static void test_drain(void **state)
{
	(void)state;
	struct live l;
	RTD_OPTS(rtd_ipc_pump_opts, po, .duration_ms = 800);
	live_open(&l, &po);
	int64_t first = mono_now();
	size_t n;
	const struct rtd_record *r;
	assert_int_equal(pull_marks(&l, 3, &n, &r), 1);
	assert_false(l.res.stopped);
	uint64_t at = l.res.bytes;
	assert_int_equal(rtd_ipc_session_pump_drain(l.s), 0);
	int64_t end = mono_now();
	printf("ok: drained after 3 Marks: %llu more bytes, ended %.2f s after the first pull\n",
	       (unsigned long long)(l.res.bytes - at), (double)(end - first) / 1e9);
	assert_true(end - first >= 800000000);
	assert_true(l.res.stopped && l.res.ended);
	assert_true(l.res.bytes > at);
	live_close(&l);
}

static void test_killed(void **state)
{
	(void)state;
	struct live l;
	RTD_OPTS(rtd_ipc_pump_opts, po, .duration_ms = 60000);
	live_open(&l, &po);
	size_t n;
	const struct rtd_record *r;
	assert_int_equal(pull_marks(&l, 3, &n, &r), 1);
	kill(child, SIGKILL);
	size_t more;
	int rc = pull_marks(&l, 0, &more, &r);
	assert_int_equal(rc, -RTD_E_TRUNCATED);
	assert_int_equal(r->code, -RTD_E_TRUNCATED);
	assert_int_equal(rtd_ipc_session_pump_drain(l.s), 0);
	assert_true(l.res.target_gone && l.res.ended);
	assert_false(l.res.stopped);
	printf("ok: the target killed after 3 Marks: %zu more, then '%s'\n", more, r->message);
	live_close(&l);
}

int main(void)
{
	if (system("command -v dotnet >/dev/null 2>&1") != 0) {
		printf("SKIP: no dotnet SDK on PATH\n");
		return RTD_TEST_SKIP;
	}
	atexit(record_target_cleanup);
	record_target_start();
	/* in this order: the last one kills the target */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_stop_flag),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_killed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
