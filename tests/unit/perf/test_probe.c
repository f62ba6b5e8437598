/* SPDX-License-Identifier: MIT */
/* Probe specs, tracefs names/locations, PMU attrs, ELF symbol offsets. */
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file.h"

#include "perf/internal.h"

static void test_parse_uprobe(void **state)
{
	(void)state;
	struct rtd_perf_probe p;
	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_UPROBE, "/bin/ls:main", &p), 0);
	assert_string_equal(p.target, "/bin/ls");
	assert_string_equal(p.symbol, "main");
	assert_false(p.retprobe);
	assert_null(p.fetchargs);
	rtd_perf_probe_clear(&p);

	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_UPROBE,
		"/usr/lib/libc.so.6:open+0x10%return  ret=$retval:s32 x=%di", &p), 0);
	assert_string_equal(p.symbol, "open");
	assert_int_equal(p.offset, 0x10);
	assert_true(p.retprobe);
	assert_string_equal(p.fetchargs, "ret=$retval:s32 x=%di");
	rtd_perf_probe_clear(&p);

	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_UPROBE, "./a.out:0x401126", &p), 0);
	assert_null(p.symbol);
	assert_int_equal(p.addr, 0x401126);
	rtd_perf_probe_clear(&p);

	const char *bad[] = {"nocolon", "/bin/ls:", ":main", "/bin/ls:ma-in",
			     "/bin/ls:main+zz", "/bin/ls:0x12g", "", NULL};
	for (int i = 0; bad[i]; i++) {
		assert_int_equal(rtd_perf_probe_parse(RTD_PERF_UPROBE, bad[i], &p),
				 -RTD_E_INVAL);
		assert_null(p.target);
	}
}

static void test_parse_kprobe(void **state)
{
	(void)state;
	struct rtd_perf_probe p;
	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_KPROBE,
		"do_sys_openat2+4 path=+0(%si):string", &p), 0);
	assert_null(p.target);
	assert_string_equal(p.symbol, "do_sys_openat2");
	assert_int_equal(p.offset, 4);
	assert_string_equal(p.fetchargs, "path=+0(%si):string");
	struct perf_probe_plan plan;
	assert_int_equal(perf_probe_plan(&p, 0, &plan), 0);
	assert_false(plan.use_pmu);
	assert_string_equal(plan.event, "do_sys_openat2");
	assert_string_equal(plan.location, "do_sys_openat2+4");
	assert_string_equal(plan.display, "do_sys_openat2+0x4");
	rtd_perf_probe_clear(&p);

	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_KPROBE,
		"0xffffffff81000000%return", &p), 0);
	assert_true(p.retprobe);
	assert_int_equal(perf_probe_plan(&p, 3, &plan), 0);
	assert_true(plan.use_pmu);
	assert_string_equal(plan.event, "addr_ffffffff81000000_ret_3");
	assert_string_equal(plan.location, "0xffffffff81000000");
	assert_string_equal(plan.display, "0xffffffff81000000%return");
	rtd_perf_probe_clear(&p);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The kprobe/uprobe PMU attr, against a PMU directory laid out like sysfs. */
static void test_pmu_attr(void **state)
{
	(void)state;
	char dir[] = "/tmp/rtdiag-pmu-XXXXXX", p[256];
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/kprobe", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/kprobe/format", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/kprobe/type", dir);
	write_file(p, "6\n");
	snprintf(p, sizeof(p), "%s/kprobe/format/retprobe", dir);
	write_file(p, "config:0\n");

	struct rtd_perf_probe pr;
	struct perf_probe_plan plan;
	struct perf_event_attr a;
	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_KPROBE, "vfs_read+8%return", &pr), 0);
	assert_int_equal(perf_probe_plan(&pr, 0, &plan), 0);
	assert_int_equal(perf_probe_pmu_attr(dir, &pr, &plan, &a), 0);
	assert_int_equal(a.type, 6);
	assert_int_equal(a.config, 1);
	assert_ptr_equal((const char *)(uintptr_t)a.config1, pr.symbol);
	assert_int_equal(a.config2, 8);
	rtd_perf_probe_clear(&pr);

	assert_int_equal(rtd_perf_probe_parse(RTD_PERF_KPROBE, "0xffffffff81000010", &pr), 0);
	assert_int_equal(perf_probe_plan(&pr, 0, &plan), 0);
	assert_int_equal(perf_probe_pmu_attr(dir, &pr, &plan, &a), 0);
	assert_int_equal(a.config, 0);
	assert_int_equal(a.config1, 0);
	assert_int_equal(a.config2, 0xffffffff81000010ull);
	rtd_perf_probe_clear(&pr);

	/* no uprobe PMU in this directory */
	pr = (struct rtd_perf_probe){.kind = RTD_PERF_UPROBE};
	plan.file_offset = 0;
	assert_int_equal(perf_probe_pmu_attr(dir, &pr, &plan, &a), -RTD_E_PERF_NOTSUPP);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

__attribute__((noinline)) int rtd_unit_probe_me(int x);
__attribute__((noinline)) int rtd_unit_probe_me(int x)
{
	return x * 3 + 1;
}

/* The file offset of a symbol equals the one the kernel mapped it from. */
static void test_elf_offset(void **state)
{
	(void)state;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	uintptr_t addr = (uintptr_t)&rtd_unit_probe_me;
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[4096];
	uint64_t want = 0;
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    addr >= lo && addr < hi) {
			want = addr - lo + off;
			found = 1;
		}
	}
	fclose(f);
	assert_true(found);
	uint64_t got = 0;
	assert_int_equal(perf_elf_sym_offset(self, "rtd_unit_probe_me", 0, &got), 0);
	assert_int_equal(got, want);
	assert_int_equal(perf_elf_sym_offset(self, "no_such_symbol_here", 0, &got),
			 -RTD_E_NOTFOUND);
	assert_int_equal(perf_elf_sym_offset("/nonexistent", "x", 0, &got), -ENOENT);
	assert_int_equal(perf_elf_sym_offset("/proc/self/status", "x", 0, &got),
			 -RTD_E_FORMAT);
	assert_int_equal(rtd_unit_probe_me(1), 4);
}

/* Which rtdiag probe groups belong to a process that is gone. */
static void test_group_stale(void **state)
{
	(void)state;
	char g[64];
	unsigned long long st;
	assert_int_equal(perf_proc_starttime(getpid(), &st), 0);
	snprintf(g, sizeof(g), "rtdiag_%d_%llu", (int)getpid(), st);
	assert_false(perf_probe_group_stale(g)); /* our own */
	pid_t pp = getppid();
	unsigned long long pst;
	assert_int_equal(perf_proc_starttime(pp, &pst), 0);
	snprintf(g, sizeof(g), "rtdiag_%d_%llu", (int)pp, pst);
	assert_false(perf_probe_group_stale(g)); /* alive, same start */
	snprintf(g, sizeof(g), "rtdiag_%d_%llu", (int)pp, pst + 1);
	assert_true(perf_probe_group_stale(g)); /* its pid reused */
	snprintf(g, sizeof(g), "rtdiag_%d", (int)pp);
	assert_false(perf_probe_group_stale(g)); /* old form, alive */
	assert_true(perf_probe_group_stale("rtdiag_4194303_1")); /* no such pid */
	assert_true(perf_probe_group_stale("rtdiag_4194303"));
	assert_false(perf_probe_group_stale("probe_libc"));
	assert_false(perf_probe_group_stale("rtdiag_12x"));
	assert_false(perf_probe_group_stale("rtdiag_1_2_3"));
}

/* A SIGKILLed rtdiag not yet reaped is a zombie: kill(pid, 0) still
 * succeeds and its start time still matches, but its group is stale. */
static void test_group_stale_zombie(void **state)
{
	(void)state;
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	char g[64], st = 0;
	unsigned long long start = 0;
	/* until the child has exited (not reaped: a zombie) */
	for (int i = 0; i < 100000 && st != 'Z'; i++) {
		assert_int_equal(rtd_proc_stat(c, &st, &start), 0);
		if (st != 'Z')
			usleep(1000);
	}
	assert_int_equal(st, 'Z');
	assert_int_equal(kill(c, 0), 0); /* what the old test relied on */
	snprintf(g, sizeof(g), "rtdiag_%d_%llu", (int)c, start);
	assert_true(perf_probe_group_stale(g));
	snprintf(g, sizeof(g), "rtdiag_%d", (int)c);
	assert_true(perf_probe_group_stale(g));
	assert_false(rtd_proc_alive(c, start));
	assert_true(rtd_proc_alive(getpid(), 0));
	waitpid(c, NULL, 0);
	assert_int_equal(rtd_proc_stat(c, NULL, NULL), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uprobe),
		cmocka_unit_test(test_group_stale),
		cmocka_unit_test(test_group_stale_zombie),
		cmocka_unit_test(test_parse_kprobe),
		cmocka_unit_test(test_pmu_attr),
		cmocka_unit_test(test_elf_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
