/* SPDX-License-Identifier: MIT */
/* Online CPU lists with gaps, and mount points from mountinfo. */
#include "test_util.h"

#include "perf/internal.h"

static void test_cpulist(void **state)
{
	(void)state;
	int c[16];
	unsigned n;
	assert_int_equal(perf_parse_cpulist("0-3,6,8-9\n", c, 16, &n), 0);
	assert_int_equal(n, 7);
	int want[] = {0, 1, 2, 3, 6, 8, 9};
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(c[i], want[i]);
	assert_int_equal(perf_parse_cpulist("5", c, 16, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0], 5);
	assert_int_equal(perf_parse_cpulist("0-15", c, 8, &n), -RTD_E_CAP);
	const char *bad[] = {"", "\n", "a", "3-1", "0,,1", "0-", "1,0", "0 1", NULL};
	for (int i = 0; bad[i]; i++)
		assert_int_equal(perf_parse_cpulist(bad[i], c, 16, &n), -RTD_E_FORMAT);
}

static const char mountinfo[] =
	"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
	"30 25 0:26 / /sys/fs/cgroup ro shared:9 - tmpfs tmpfs ro,mode=755\n"
	"31 30 0:27 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw\n"
	"35 30 0:31 / /sys/fs/cgroup/cpu rw shared:14 - cgroup cgroup rw,cpu\n"
	"36 30 0:32 / /sys/fs/cgroup/perf\\040event rw shared:15 - cgroup cgroup rw,perf_event\n"
	"40 22 0:12 / /sys/kernel/tracing rw master:3 extra:4 - tracefs nodev rw\n";

static void test_mounts(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(perf_find_mount(mountinfo, "cgroup2", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified");
	assert_int_equal(perf_find_mount(mountinfo, "tracefs", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/kernel/tracing");
	assert_int_equal(perf_find_mount(mountinfo, "cgroup", "perf_event", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/perf event");
	assert_int_equal(perf_find_mount(mountinfo, "cgroup", "cpu", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/cpu");
	assert_int_equal(perf_find_mount(mountinfo, "debugfs", NULL, out, sizeof(out)),
			 -RTD_E_NOTFOUND);
	assert_int_equal(perf_find_mount(mountinfo, "cgroup2", NULL, out, 4), -RTD_E_CAP);
	assert_int_equal(perf_find_mount("garbage\n\n- -\n", "cgroup2", NULL, out, sizeof(out)),
			 -RTD_E_NOTFOUND);
}

static void test_online(void **state)
{
	(void)state;
	int *c;
	unsigned n;
	assert_int_equal(perf_online_cpus(&c, &n), 0);
	assert_true(n >= 1);
	assert_int_equal((long)n <= sysconf(_SC_NPROCESSORS_CONF), 1);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_online),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
