/* SPDX-License-Identifier: MIT */
/*
 * What the agent reads from procfs and cgroup paths: /proc/PID/stat with
 * a name holding ") (" and blanks (the cgroup line picked from v1, v2 and
 * hybrid layouts: tests/unit/common/test_pstat.c), container ids and Kubernetes pod uids from the paths
 * Docker, containerd, CRI-O and Podman make under both cgroup drivers,
 * name= and cgroup= matching, service names; and this test's own process
 * read for real.
 */
#include "test_util.h"

#include <errno.h>

#include "agent/proc.h"
#include "rtdiag/agent.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void stat_parse(void **state)
{
	(void)state;
	struct proc_stat st;
	/* comm "a) (b c" as the kernel writes it */
	const char *text =
		"4242 (a) (b c) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
		"250 50 0 0 20 0 7 0 123456 10485760 300 18446744073709551615 "
		"1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	assert_int_equal(proc_stat_parse(text, &st), 0);
	assert_int_equal(st.utime_ticks, 250);
	assert_int_equal(st.stime_ticks, 50);
	assert_int_equal(st.threads, 7);
	assert_int_equal(st.start_ticks, 123456);
	assert_int_equal(st.vsize_bytes, 10485760);
	assert_int_equal(st.rss_bytes, 300ull * (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(proc_stat_parse("4242 (x) S 1 2 3", &st),
			 -RTD_E_FORMAT);
	assert_int_equal(proc_stat_parse("no paren", &st), -RTD_E_FORMAT);
}

static void container_ids(void **state)
{
	(void)state;
	static const struct {
		const char *path, *cid, *pod;
	} cases[] = {
		/* Docker, cgroupfs driver */
		{"/docker/" ID64, ID64, ""},
		/* Docker, systemd driver */
		{"/system.slice/docker-" ID64 ".scope", ID64, ""},
		/* Kubernetes, systemd driver, containerd: pod uid with '_' */
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
		 "pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/cri-containerd-"
		 ID64 ".scope",
		 ID64, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
		/* Kubernetes, cgroupfs driver */
		{"/kubepods/besteffort/pod0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d/"
		 ID64, ID64, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
		/* CRI-O */
		{"/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d"
		 ".slice/crio-" ID64 ".scope",
		 ID64, "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
		/* Podman, rootless */
		{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"
		 ID64 ".scope/container", ID64, ""},
		/* the pod alone (the pause container's parent) */
		{"/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d"
		 ".slice", "", "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
		/* no container */
		{"/user.slice/user-0.slice/session-3.scope", "", ""},
		{"/", "", ""},
		/* 63 or 65 hex digits are not an id; upper case is not either */
		{"/docker/" ID64 "0", "", ""},
		{"/docker/123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		 "" , "", ""},
		{"/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		 "", ""},
		/* a uid that does not have its shape */
		{"/kubepods/pod0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5/x", "", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rtd_agent_cgroup_ids ids;
		rtd_agent_cgroup_parse(cases[i].path, &ids);
		if (strcmp(ids.container_id, cases[i].cid) ||
		    strcmp(ids.pod_uid, cases[i].pod))
			fail_msg("%s: got '%s' '%s'", cases[i].path,
				 ids.container_id, ids.pod_uid);
	}
	struct rtd_agent_cgroup_ids ids;
	rtd_agent_cgroup_parse(NULL, &ids);
	assert_string_equal(ids.container_id, "");
}

static void matching(void **state)
{
	(void)state;
	char err[128];
	struct agent_spec sp;
	assert_int_equal(spec_parse("name=^api$", &sp, err, sizeof(err)), 0);
	struct proc_info pi = {.comm = "api", .exe = "/usr/bin/api"};
	assert_true(proc_name_match(&sp, &pi));
	/* by the executable's name when comm differs (a thread renamed) */
	snprintf(pi.comm, sizeof(pi.comm), "worker-1");
	assert_true(proc_name_match(&sp, &pi));
	/* "dotnet api.dll": the app */
	struct proc_info dn = {.comm = "dotnet",
			       .exe = "/usr/share/dotnet/dotnet",
			       .arg0 = "dotnet",
			       .arg1 = "/srv/api.dll"};
	assert_true(proc_name_match(&sp, &dn));
	char svc[64];
	proc_service_name(&dn, svc, sizeof(svc));
	assert_string_equal(svc, "api");
	struct proc_info other = {.comm = "apid", .exe = "/bin/apid"};
	assert_false(proc_name_match(&sp, &other));
	spec_clear(&sp);

	/* "dotnet run" is not an app */
	struct proc_info run = {.comm = "dotnet", .exe = "/usr/bin/dotnet",
				.arg0 = "dotnet", .arg1 = "run"};
	proc_service_name(&run, svc, sizeof(svc));
	assert_string_equal(svc, "dotnet");
	/* characters a label cannot hold become '_' */
	struct proc_info odd = {.comm = "my app:1"};
	proc_service_name(&odd, svc, sizeof(svc));
	assert_string_equal(svc, "my_app_1");
	struct proc_info none;
	memset(&none, 0, sizeof(none));
	proc_service_name(&none, svc, sizeof(svc));
	assert_string_equal(svc, "unknown");

	assert_true(proc_cgroup_match("/a/b", "/a/b"));
	assert_true(proc_cgroup_match("/a/b", "/a/b/c"));
	assert_false(proc_cgroup_match("/a/b", "/a/bc"));
	assert_false(proc_cgroup_match("/a/b", "/a"));
	assert_true(proc_cgroup_match("/", "/x"));
}

static void self(void **state)
{
	(void)state;
	struct proc_stat st;
	struct proc_info pi;
	assert_int_equal(proc_stat_read("/proc", getpid(), &st), 0);
	assert_true(st.threads >= 1);
	assert_true(st.rss_bytes > 0);
	assert_true(st.start_ticks > 0);
	assert_int_equal(proc_info_read("/proc", getpid(), &pi), 0);
	assert_non_null(strstr(pi.exe, "unit_agent_test_proc"));
	assert_string_equal(pi.arg0, "unit_agent_test_proc");
	assert_true(pi.cgroup[0] == '/');
	/* a pid that is not there */
	assert_int_equal(proc_stat_read("/proc", 0x3ffffff0, &st), -ENOENT);
	assert_int_equal(proc_info_read("/proc", 0x3ffffff0, &pi), -ENOENT);
	assert_true(proc_boot_time("/proc") > 1000000000ull);
	assert_true(proc_clk_tck() > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat_parse),
		cmocka_unit_test(container_ids),
		cmocka_unit_test(matching),
		cmocka_unit_test(self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
