/* SPDX-License-Identifier: MIT */
/*
 * The live Go trace recorder (src/gotrace/source_capture.c): options are
 * checked; a capture from a port where nothing listens (a real loopback
 * socket bound and closed) ends by itself with -ECONNREFUSED and a
 * message, and gives no source; a rolling one (@piece) the same: its
 * live source ends at once, empty, and it asked for no second piece. The
 * recorder's Go options are checked. Real captures, merged with perf,
 * are tests/integration/record/test_gotrace.sh, test_gotrace_roll.sh and
 * test_flight_go.sh.
 */
#include "test_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rtdiag/gotrace_source.h"
#include "rtdiag/recorder.h"

static void test_opts(void **st)
{
	(void)st;
	rtd_gotrace_recorder *r = (void *)1;
	assert_int_equal(rtd_gotrace_recorder_start(NULL, &r), -RTD_E_INVAL);
	assert_null(r);
	RTD_OPTS(rtd_gotrace_recorder_opts, o, .host = "");
	assert_int_equal(rtd_gotrace_recorder_start(&o, &r), -RTD_E_INVAL);
	o.host = "127.0.0.1:1";
	o.seconds = -1;
	assert_int_equal(rtd_gotrace_recorder_start(&o, &r), -RTD_E_INVAL);
	o.seconds = 0;
	o.piece = -1;
	assert_int_equal(rtd_gotrace_recorder_start(&o, &r), -RTD_E_INVAL);
	/* the recorder's Go options, refused before anything opens */
	rtd_recorder *rec = (void *)1;
	RTD_OPTS(rtd_recorder_opts, ro, .pid = getpid(), .go_trace_url = "");
	assert_int_equal(rtd_recorder_new(&ro, &rec), -RTD_E_INVAL);
	assert_null(rec);
	ro.go_trace_url = "127.0.0.1:1";
	ro.go_trace_piece = -1;
	assert_int_equal(rtd_recorder_new(&ro, &rec), -RTD_E_INVAL);
	/* a capture that is not rolling: the lag of a Go 1.22+ generation */
	assert_int_equal(rtd_gotrace_recorder_lag_ns(NULL), 5000000000ll);
	rtd_gotrace_recorder_free(NULL);
	int err = 0;
	assert_null(rtd_gotrace_recorder_source(NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
}

/* "http://127.0.0.1:PORT" where nothing listens: bound, then closed */
static void refused_host(char *host, size_t len)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	close(s);
	snprintf(host, len, "http://127.0.0.1:%u", ntohs(a.sin_port));
}

static void test_refused(void **st)
{
	(void)st;
	char host[64];
	refused_host(host, sizeof(host));
	RTD_OPTS(rtd_gotrace_recorder_opts, o, .host = host, .pid = 1, .seconds = 1);
	rtd_gotrace_recorder *r = NULL;
	assert_int_equal(rtd_gotrace_recorder_start(&o, &r), 0);
	for (int i = 0; i < 6000 && !rtd_gotrace_recorder_done(r); i++)
		usleep(10000);
	assert_true(rtd_gotrace_recorder_done(r));
	assert_int_equal(rtd_gotrace_recorder_stop(r, 0), -ECONNREFUSED);
	assert_true(strlen(rtd_gotrace_recorder_errmsg(r)) > 0);
	int err = 0;
	assert_null(rtd_gotrace_recorder_source(r, &err)); /* no bytes came */
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_gotrace_recorder_free(r);
}

static void test_roll_refused(void **st)
{
	(void)st;
	char host[64];
	refused_host(host, sizeof(host));
	RTD_OPTS(rtd_gotrace_recorder_opts, o, .host = host, .pid = 1, .piece = 10);
	rtd_gotrace_recorder *r = NULL;
	assert_int_equal(rtd_gotrace_recorder_start(&o, &r), 0);
	/* no header came: its version is not known, a piece may come whole */
	assert_int_equal(rtd_gotrace_recorder_lag_ns(r), 12000000000ll);
	int err = 0;
	rtd_source *s = rtd_gotrace_recorder_live(r, &err);
	assert_non_null(s);
	const struct rtd_record *rec;
	assert_int_equal(rtd_source_next(s, &rec), 0); /* blocks until the capture ends */
	assert_true(rtd_gotrace_recorder_done(r));
	assert_int_equal(rtd_gotrace_recorder_stop(r, 0), -ECONNREFUSED);
	assert_non_null(strstr(rtd_gotrace_recorder_errmsg(r), "refused"));
	struct rtd_gotrace_roll_stats rs = {.sz = sizeof(rs)};
	rtd_gotrace_recorder_roll_stats(r, &rs);
	assert_int_equal(rs.pieces, 1); /* the one asked for, empty: no second */
	assert_int_equal(rs.gaps, 0);
	rtd_source_free(s);
	rtd_gotrace_recorder_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_roll_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
