/* SPDX-License-Identifier: MIT */
/*
 * test_opts_callers.c - every public constructor that takes an options
 * struct checks it with rtd_opts_check() (libbpf's shape): a caller built
 * against an older, shorter struct works and nothing past its sz is read
 * (those bytes are garbage here), and a newer caller's non-zero bytes past
 * the fields this version knows are refused (zero ones are fine).
 */
#include <errno.h>
#include <string.h>

#include "test_util.h"
#include "rtdiag/gocapture.h"
#include "rtdiag/goanalysis.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/perf.h"
#include "rtdiag/source.h"

/* A caller built against a newer rtdiag: this version's struct, then a
 * field this version does not know. */
#define NEWER(type)                                                            \
	struct {                                                               \
		struct type o;                                                 \
		uint64_t more;                                                 \
	}

/* An older caller's struct ends at @known: what lies past it is not its
 * own (garbage here, so a read of it shows). */
static void older(void *opts, size_t size, size_t known)
{
	memset((char *)opts + known, 0xa5, size - known);
	memcpy(opts, &known, sizeof(known));
}

static void perf_monitor(void **st)
{
	(void)st;
	struct rtd_perf_monitor *m = NULL;
	/* rtdiag 0.x's first rtd_perf_opts: pids only */
	struct rtd_perf_opts o = {.sz = sizeof(o)};
	older(&o, sizeof(o), RTD_OPTS_END(rtd_perf_opts, npids));
	assert_int_equal(rtd_perf_monitor_new(&o, &m), 0);
	rtd_perf_monitor_free(m);
	NEWER(rtd_perf_opts) nw = {.o = {.sz = sizeof(nw)}};
	assert_int_equal(rtd_perf_monitor_new(&nw.o, &m), 0);
	rtd_perf_monitor_free(m);
	nw.more = 1;
	assert_int_equal(rtd_perf_monitor_new(&nw.o, &m), -RTD_E_INVAL);
	assert_null(m);
}

static void gotrace_dec(void **st)
{
	(void)st;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	older(&o, sizeof(o), RTD_OPTS_END(rtd_gotrace_opts, mode));
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	rtd_gotrace_dec_free(d);
	NEWER(rtd_gotrace_opts) nw = {.o = {.sz = sizeof(nw)}};
	assert_non_null(d = rtd_gotrace_dec_new(&nw.o));
	nw.more = 1;
	assert_null(rtd_gotrace_dec_new(&nw.o));

	/* the analysis refuses only after its options pass */
	struct rtd_goan_opts g = {.sz = sizeof(g)};
	older(&g, sizeof(g), RTD_OPTS_END(rtd_goan_opts, what));
	assert_null(rtd_goan_new(d, &g));
	assert_string_equal(rtd_goan_new_error(), "the trace's header has not been read");
	NEWER(rtd_goan_opts) gn = {.o = {.sz = sizeof(gn)}, .more = 1};
	assert_null(rtd_goan_new(d, &gn.o));
	assert_string_equal(rtd_goan_new_error(), "bad options");
	rtd_gotrace_dec_free(d);
}

static void gocapture(void **st)
{
	(void)st;
	char err[256];
	NEWER(rtd_gocapture_opts) nw = {.o = {.sz = sizeof(nw), .host = "127.0.0.1:1",
					      .seconds = 0.1}, .more = 1};
	assert_int_equal(rtd_gocapture_run(&nw.o, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad options");
}

static void ipc(void **st)
{
	(void)st;
	int err = 0;
	/* a path with no socket: a session fails to connect, after its
	 * options were taken */
	const char *path = "/nonexistent/rtdiag-test-opts-callers";
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .timeout_ms = 500};
	older(&co, sizeof(co), RTD_OPTS_END(rtd_ipc_client_opts, timeout_ms));
	rtd_ipc_client *c = rtd_ipc_client_new_path(path, &co, &err);
	assert_non_null(c);
	NEWER(rtd_ipc_client_opts) cn = {.o = {.sz = sizeof(cn)}, .more = 1};
	assert_null(rtd_ipc_client_new_path(path, &cn.o, &err));
	assert_int_equal(err, -RTD_E_INVAL);

	struct rtd_ipc_provider p = {.name = "Microsoft-DotNETCore-SampleProfiler",
				     .level = 4};
	/* the first rtd_ipc_session_opts: providers only */
	struct rtd_ipc_session_opts so = {.sz = sizeof(so), .providers = &p,
					  .n_providers = 1};
	older(&so, sizeof(so), RTD_OPTS_END(rtd_ipc_session_opts, n_providers));
	assert_int_equal(rtd_ipc_collect_min_version(&so), 1);
	uint8_t *b1, *b2;
	size_t n1, n2;
	assert_int_equal(rtd_ipc_collect_payload(1, &so, &b1, &n1), 0);
	struct rtd_ipc_session_opts cur = {.sz = sizeof(cur), .providers = &p,
					   .n_providers = 1};
	assert_int_equal(rtd_ipc_collect_payload(1, &cur, &b2, &n2), 0);
	assert_true(n1 == n2 && memcmp(b1, b2, n1) == 0);
	free(b1);
	free(b2);
	err = 0;
	assert_null(rtd_ipc_session_start(c, &so, &err));
	assert_true(err < 0 && err != -RTD_E_INVAL);

	NEWER(rtd_ipc_session_opts) sn = {.o = {.sz = sizeof(sn), .providers = &p,
						.n_providers = 1}, .more = 1};
	assert_int_equal(rtd_ipc_collect_min_version(&sn.o), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_collect_payload(1, &sn.o, &b1, &n1), -RTD_E_INVAL);
	assert_null(rtd_ipc_session_start(c, &sn.o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_ipc_client_free(c);
}

/* a stats struct goes the other way: an older caller's shorter one gets
 * the fields it knows and nothing is written past it */
static void nettrace_cpu_stats(void **st)
{
	(void)st;
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(NULL);
	assert_non_null(p);
	struct rtd_nettrace_cpu_stats s;
	const size_t known = RTD_OPTS_END(rtd_nettrace_cpu_stats, placed_ns);
	older(&s, sizeof(s), known);
	assert_int_equal(rtd_nettrace_profiler_cpu_stats(p, &s), 0);
	assert_int_equal(s.sz, known);
	assert_int_equal(s.thread_ns, 0);
	const unsigned char *raw = (const unsigned char *)&s;
	for (size_t i = known; i < sizeof(s); i++)
		assert_int_equal(raw[i], 0xa5);
	rtd_nettrace_profiler_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_monitor),
		cmocka_unit_test(gotrace_dec),
		cmocka_unit_test(gocapture),
		cmocka_unit_test(ipc),
		cmocka_unit_test(nettrace_cpu_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
