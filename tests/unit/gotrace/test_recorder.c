/* SPDX-License-Identifier: MIT */
/*
 * The live Go trace recorder (src/gotrace/source_capture.c): options are
 * checked; a capture from a port where nothing listens (a real loopback
 * socket bound and closed) ends by itself with -ECONNREFUSED and a
 * message, and gives no source. A real capture, merged with perf, is
 * tests/integration/record/test_gotrace.sh.
 */
#include "test_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rtdiag/gotrace_source.h"

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
	rtd_gotrace_recorder_free(NULL);
	int err = 0;
	assert_null(rtd_gotrace_recorder_source(NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
}

static void test_refused(void **st)
{
	(void)st;
	/* a loopback port nobody listens on: bound, then closed */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	close(s);
	char host[64];
	snprintf(host, sizeof(host), "http://127.0.0.1:%u", ntohs(a.sin_port));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
