/* SPDX-License-Identifier: MIT */
/*
 * test_wait_request - what a wait profile asks the runtime for
 * (rtd_ipc_profile_request with RTD_IPC_PROFILE_WAIT: the WaitHandle
 * keyword at Verbose, WaitHandleWait/Start and Stop let through the event
 * filter, stacks walked), and which runtimes send those events
 * (rtd_ipc_profile_supported: .NET 9 and later, an unknown version
 * taken as able).
 */
#include "test_util.h"

#include <stdbool.h>

#include "rtdiag/ipc.h"

static void test_request(void **state)
{
	(void)state;
	struct rtd_ipc_providers pv = {0};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so)};
	assert_int_equal(rtd_ipc_profile_request(RTD_IPC_PROFILE_WAIT, &pv, &so),
			 0);
	assert_int_equal(pv.n, 1); /* no sampler: the runtime provider only */
	assert_string_equal(pv.v[0].name, "Microsoft-Windows-DotNETRuntime");
	assert_int_equal(pv.v[0].keywords, 0x40000000000ull | 0x2000000018ull);
	assert_int_equal(pv.v[0].level, 5); /* the events are Verbose */
	assert_true(pv.v[0].filter_enable);
	bool start = false, stop = false;
	for (uint32_t i = 0; i < pv.v[0].n_filter_ids; i++) {
		start |= pv.v[0].filter_ids[i] == 301;
		stop |= pv.v[0].filter_ids[i] == 302;
	}
	assert_true(start && stop);
	assert_int_equal(pv.v[0].n_filter_ids, 4 + 2);
	assert_false(so.no_stackwalk); /* the Start's stack is the sample's */
	rtd_ipc_providers_clear(&pv);

	/* with every other kind: the filter still has room for all */
	struct rtd_ipc_session_opts so2 = {.sz = sizeof(so2)};
	assert_int_equal(rtd_ipc_profile_request(0x1f, &pv, &so2), 0);
	assert_int_equal(pv.v[1].n_filter_ids, 4 + 3 + 3 + 1 + 2);
	rtd_ipc_providers_clear(&pv);
	assert_int_equal(rtd_ipc_profile_request(1u << 5, &pv, &so2),
			 -RTD_E_INVAL);
}

static void test_supported(void **state)
{
	(void)state;
	char why[200] = "";
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT,
					      "10.0.12+5a2b8c1d", why,
					      sizeof(why)));
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, "9.0.0-rc.1",
					      why, sizeof(why)));
	assert_string_equal(why, "");
	/* unknown: asked for anyway */
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, "", why,
					      sizeof(why)));
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, NULL, why,
					      sizeof(why)));
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, "abc", why,
					      sizeof(why)));
	/* other kinds do not depend on the version */
	assert_true(rtd_ipc_profile_supported(RTD_IPC_PROFILE_LOCK, "6.0.36",
					      why, sizeof(why)));
	assert_false(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT,
					       "8.0.33+0123abcd", why,
					       sizeof(why)));
	assert_string_equal(why, "the .NET 8.0.33 runtime sends no wait events "
				 "(WaitHandleWait/Start and Stop came with "
				 ".NET 9)");
	assert_false(rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, "6.0.0",
					       NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_supported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
