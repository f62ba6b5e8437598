/* SPDX-License-Identifier: MIT */
/*
 * test_pstat.c - rtd_pstat_parse/rtd_pstat_read, rtdiag's one reader of
 * /proc/PID/stat: a command with blanks and parentheses, a short or broken
 * line, this process and one of its threads, a zombie, a missing pid.
 */
#include "test_util.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/common.h"

static void parse_fields(void **state)
{
	(void)state;
	struct rtd_pstat st;
	/* comm "a) (b c" holds ") (" and blanks: fields count from the last ')' */
	const char *t = "4242 (a) (b c) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
			"7 3 0 0 20 0 5 0 123456 1048576 250 18446744073709551615\n";
	assert_int_equal(rtd_pstat_parse(t, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 17);
	assert_int_equal(st.utime_ticks, 7);
	assert_int_equal(st.stime_ticks, 3);
	assert_int_equal(st.threads, 5);
	assert_int_equal(st.start_ticks, 123456);
	assert_int_equal(st.vsize_bytes, 1048576);
	assert_int_equal(st.rss_pages, 250);
	assert_int_equal(rtd_pstat_parse("4242 (x) S 1 2 3", &st), -RTD_E_FORMAT);
	assert_int_equal(rtd_pstat_parse("no paren", &st), -RTD_E_FORMAT);
	assert_int_equal(rtd_pstat_parse("1 (x) S 1 2 z 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21",
					 &st), -RTD_E_FORMAT);
	assert_int_equal(rtd_pstat_parse(NULL, &st), -RTD_E_INVAL);
}

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static void read_live(void **state)
{
	(void)state;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, idle, NULL), 0);
	struct rtd_pstat st, ts;
	assert_int_equal(rtd_pstat_read(NULL, getpid(), 0, &st), 0);
	assert_int_equal(st.state, 'R'); /* this thread reads it */
	assert_int_equal(st.ppid, getppid());
	assert_true(st.threads >= 2);
	assert_true(st.start_ticks > 0 && st.rss_pages > 0 && st.vsize_bytes > 0);
	/* the main thread's own file names the same process start */
	assert_int_equal(rtd_pstat_read("/proc", getpid(), (int)syscall(SYS_gettid), &ts), 0);
	assert_int_equal(ts.start_ticks, st.start_ticks);
	assert_int_equal(rtd_pstat_read(NULL, getpid(), 999999999, &ts), -ENOENT);
	assert_int_equal(rtd_pstat_read(NULL, 0, 0, &ts), -RTD_E_INVAL);
	pthread_cancel(th);
	pthread_join(th, NULL);
}

struct tids {
	int v[8];
	int n, stop_at;
};

static int take_tid(int tid, void *ctx)
{
	struct tids *t = ctx;
	if (t->n < 8)
		t->v[t->n] = tid;
	t->n++;
	return t->stop_at && t->n == t->stop_at ? 5 : 0;
}

/* rtd_proc_tasks: this process's threads (two made here), a stop, gone */
static void tasks(void **state)
{
	(void)state;
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, idle, NULL), 0);
	struct tids t = {0};
	assert_int_equal(rtd_proc_tasks(getpid(), take_tid, &t), 3);
	assert_int_equal(t.n, 3);
	bool main_seen = false;
	for (int i = 0; i < 3; i++)
		main_seen |= t.v[i] == getpid();
	assert_true(main_seen);
	t = (struct tids){.stop_at = 2};
	assert_int_equal(rtd_proc_tasks(getpid(), take_tid, &t), 5);
	assert_int_equal(t.n, 2);
	assert_int_equal(rtd_proc_tasks(999999999, take_tid, &t), -ENOENT);
	for (int i = 0; i < 2; i++) {
		pthread_cancel(th[i]);
		pthread_join(th[i], NULL);
	}
}

static void read_zombie_and_gone(void **state)
{
	(void)state;
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	siginfo_t si;
	/* exited, not reaped: a zombie */
	assert_int_equal(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT), 0);
	struct rtd_pstat st;
	assert_int_equal(rtd_pstat_read(NULL, c, 0, &st), 0);
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.ppid, getpid());
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(rtd_pstat_read(NULL, c, 0, &st), -ENOENT);
}

/* rtd_proc_ns_pid(): this process is itself in its innermost namespace;
 * a child in a new pid namespace is 1 there (as root: where unshare()
 * is refused, that half says so and checks nothing); no such process is
 * its own pid. */
static void ns_pid(void **state)
{
	(void)state;
	assert_int_equal(rtd_proc_ns_pid(getpid()), getpid());
	assert_int_equal(rtd_proc_ns_pid(999999999), 999999999);
	/* up: the grandchild's pid, to this process; go: its release (two
	 * pipes: a reader of one could take the other's bytes) */
	int up[2], go[2];
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(go), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		/* the parent's ends: its end (a failed check) ends the wait */
		close(up[0]);
		close(go[1]);
		/* the new namespace takes this process's next child */
		if (unshare(CLONE_NEWPID) != 0)
			_exit(77);
		pid_t g = fork();
		if (g == 0) {
			/* 1,000 groups: a Groups line of ~7 KB, NSpid after it
			 * (a 4 KB read of the file missed it) */
			gid_t groups[1000];
			for (int i = 0; i < 1000; i++)
				groups[i] = (gid_t)(1000000 + i);
			bool grouped = setgroups(1000, groups) == 0;
			pid_t me = 1;
			if (write(up[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
				_exit(1);
			char b;
			(void)!read(go[0], &b, 1); /* until the parent looked */
			_exit(grouped ? 0 : 78);
		}
		if (g < 0)
			_exit(1);
		int st;
		waitpid(g, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	/* the child's ends closed here: a child that could not go on
	 * (unshare refused) ends the read */
	close(up[1]);
	close(go[0]);
	pid_t g = 0;
	int st;
	if (read(up[0], &g, sizeof(g)) == (ssize_t)sizeof(g) && g == 1) {
		/* the grandchild as this namespace sees it */
		char path[64];
		pid_t outer = 0;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)c, (int)c);
		FILE *f = fopen(path, "r");
		if (f) {
			int v;
			if (fscanf(f, "%d", &v) == 1)
				outer = v;
			fclose(f);
		}
		if (outer > 0) {
			assert_int_equal(rtd_proc_ns_pid(outer), 1);
			/* the file's last line, past the groups */
			assert_true(rtd_proc_status_num(outer, "nonvoluntary_ctxt_switches") >= 0);
		} else {
			printf("note: %s unreadable: the new namespace's pid not checked\n", path);
		}
		assert_int_equal(write(go[1], "x", 1), 1);
	}
	assert_int_equal(waitpid(c, &st, 0), c);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		printf("note: unshare(CLONE_NEWPID) refused: the new namespace's pid not checked\n");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 78)
		printf("note: setgroups() refused: the pid read with the groups it had\n");
	else
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(up[0]);
	close(go[1]);
}

/* rtd_proc_comm(): this thread's name as set, the process's, newline
 * gone; a process that is not there leaves the buffer as it was. */
static void comm(void **state)
{
	(void)state;
	char want[16], got[64], pname[64];
	int tid = (int)syscall(SYS_gettid);
	assert_int_equal(pthread_getname_np(pthread_self(), want, sizeof(want)), 0);
	assert_int_equal(pthread_setname_np(pthread_self(), "rtd comm(x)"), 0);
	assert_true(rtd_proc_comm(getpid(), tid, got, sizeof(got)) > 0);
	assert_string_equal(got, "rtd comm(x)");
	assert_int_equal(rtd_proc_comm(getpid(), tid, got, 4), 3); /* cut to fit */
	assert_string_equal(got, "rtd");
	assert_true(rtd_proc_comm(getpid(), 0, pname, sizeof(pname)) > 0);
	assert_null(strchr(pname, '\n'));
	assert_string_equal(pname, "rtd comm(x)"); /* the main thread's is the process's */
	assert_int_equal(pthread_setname_np(pthread_self(), want), 0);
	strcpy(got, "kept");
	assert_true(rtd_proc_comm(999999999, 0, got, sizeof(got)) < 0);
	assert_string_equal(got, "kept");
}

static void put(const char *root, const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* rtd_proc_comm_at(): the names under a made-up procfs root (the agent's
 * configured proc_dir), NULL for /proc, a root too long refused */
static void comm_at(void **state)
{
	(void)state;
	char root[] = "/tmp/rtdiag-procfs-XXXXXX", d[256], got[64], self[64];
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/4242", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/4242/task", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/4242/task/7", root);
	assert_int_equal(mkdir(d, 0700), 0);
	put(root, "4242/comm", "made up\n");
	put(root, "4242/task/7/comm", "worker\n");
	assert_int_equal(rtd_proc_comm_at(root, 4242, 0, got, sizeof(got)), 8);
	assert_string_equal(got, "made up");
	assert_int_equal(rtd_proc_comm_at(root, 4242, 7, got, sizeof(got)), 7);
	assert_string_equal(got, "worker");
	assert_int_equal(rtd_proc_comm_at(root, 4243, 0, got, sizeof(got)), -ENOENT);
	assert_true(rtd_proc_comm_at(NULL, getpid(), 0, got, sizeof(got)) > 0);
	assert_true(rtd_proc_comm(getpid(), 0, self, sizeof(self)) > 0);
	assert_string_equal(got, self);
	char *deep = malloc(PATH_MAX + 2);
	assert_non_null(deep);
	memset(deep, 'a', PATH_MAX + 1);
	deep[0] = '/';
	deep[PATH_MAX + 1] = 0;
	assert_int_equal(rtd_proc_comm_at(deep, 1, 0, got, sizeof(got)), -ENAMETOOLONG);
	free(deep);
	snprintf(d, sizeof(d), "rm -rf '%s'", root);
	assert_int_equal(system(d), 0);
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void cgroup_pick(void **state)
{
	(void)state;
	char out[256];
	rtd_proc_cgroup_pick("0::/system.slice/ssh.service\n", out, sizeof(out));
	assert_string_equal(out, "/system.slice/ssh.service");
	/* hybrid: the v2 line wins wherever it is */
	rtd_proc_cgroup_pick("12:cpu,cpuacct:/docker/" ID64 "\n"
				 "1:name=systemd:/docker/" ID64 "\n"
				 "0::/\n", out, sizeof(out));
	assert_string_equal(out, "/");
	/* v1 only: the first hierarchy */
	rtd_proc_cgroup_pick("12:cpu,cpuacct:/docker/" ID64 "\n"
				 "11:memory:/docker/" ID64 "\n", out, sizeof(out));
	assert_string_equal(out, "/docker/" ID64);
	rtd_proc_cgroup_pick("", out, sizeof(out));
	assert_string_equal(out, "");
	rtd_proc_cgroup_pick("garbage\n", out, sizeof(out));
	assert_string_equal(out, "");
	/* cut to the room there is */
	char small[8];
	rtd_proc_cgroup_pick("0::/abcdefghijk\n", small, sizeof(small));
	assert_string_equal(small, "/abcdef");
}

/* rtd_proc_cgroup(): a made-up root's file, this process's own (it has
 * one, "/" at least), a process that is not there */
static void cgroup_read(void **state)
{
	(void)state;
	char root[] = "/tmp/rtdiag-procfs-XXXXXX", d[256], got[256];
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/4242", root);
	assert_int_equal(mkdir(d, 0700), 0);
	put(root, "4242/cgroup", "12:cpu,cpuacct:/docker/" ID64 "\n0::/kubepods/x\n");
	assert_int_equal(rtd_proc_cgroup(root, 4242, got, sizeof(got)), 0);
	assert_string_equal(got, "/kubepods/x");
	/* a hybrid layout past 4 KB: its v2 line, the last, still found
	 * (the file was read into 4 KB: the first v1 path came back) */
	char *big = malloc(16384);
	assert_non_null(big);
	size_t bl = 0;
	for (int i = 12; i > 0; i--)
		bl += (size_t)snprintf(big + bl, 16384 - bl,
				       "%d:ctl%d:/kubepods.slice/kubepods-burstable.slice/"
				       "kubepods-burstable-pod" ID64 ".slice/cri-containerd-" ID64
				       ".scope/%0200d\n", i, i, i);
	bl += (size_t)snprintf(big + bl, 16384 - bl, "0::/kubepods/v2\n");
	assert_true(bl > 4096 && bl < 16384);
	put(root, "4242/cgroup", big);
	free(big);
	assert_int_equal(rtd_proc_cgroup(root, 4242, got, sizeof(got)), 0);
	assert_string_equal(got, "/kubepods/v2");
	strcpy(got, "kept");
	assert_int_equal(rtd_proc_cgroup(root, 4243, got, sizeof(got)), -ENOENT);
	assert_string_equal(got, "");
	assert_int_equal(rtd_proc_cgroup(NULL, getpid(), got, sizeof(got)), 0);
	assert_int_equal(got[0], '/');
	snprintf(d, sizeof(d), "rm -rf '%s'", root);
	assert_int_equal(system(d), 0);
}

/* rtd_proc_root_path(), rtd_proc_open_in_root(), rtd_proc_map_file_open():
 * a file through this process's root, our own view when there is no
 * process, a path too long refused (never cut into another name), and a
 * deleted file still mapped opened through map_files */
static void root_and_map_files(void **state)
{
	(void)state;
	char p[64], dir[] = "/tmp/rtdiag-root-XXXXXX", f[64];
	assert_int_equal(rtd_proc_root_path(p, sizeof(p), 4242, "%s/perf-%d.map", "/tmp", 7), 0);
	assert_string_equal(p, "/proc/4242/root/tmp/perf-7.map");
	assert_int_equal(rtd_proc_root_path(p, 22, 4242, "/tmp/x"), 0);
	assert_string_equal(p, "/proc/4242/root/tmp/x");
	assert_int_equal(rtd_proc_root_path(p, 21, 4242, "/tmp/x"), -ENAMETOOLONG);
	assert_string_equal(p, "");
	assert_int_equal(rtd_proc_root_path(p, 8, 4242, "/x"), -ENAMETOOLONG);
	assert_string_equal(p, "");

	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/lib.so", dir);
	int fd = open(f, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	struct stat want, got;
	assert_int_equal(fstat(fd, &want), 0);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	pid_t none[] = {getpid(), -1, 0};
	for (size_t i = 0; i < 3; i++) {
		fd = rtd_proc_open_in_root(none[i], f);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &got), 0);
		assert_true(got.st_ino == want.st_ino && got.st_dev == want.st_dev);
		close(fd);
	}
	assert_int_equal(unlink(f), 0);
	assert_int_equal(rtd_proc_open_in_root(getpid(), f), -1);
	fd = rtd_proc_map_file_open(getpid(), (uintptr_t)m, (uintptr_t)m + 4096);
	if (fd < 0 && (errno == EPERM || errno == EACCES)) {
		printf("note: /proc/self/map_files refused (no CAP_SYS_ADMIN): not checked\n");
	} else {
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &got), 0);
		assert_true(got.st_ino == want.st_ino && got.st_dev == want.st_dev);
		close(fd);
	}
	assert_int_equal(rtd_proc_map_file_open(getpid(), (uintptr_t)m, (uintptr_t)m + 8192), -1);
	munmap(m, 4096);
	rmdir(dir);
}

/* a thread's own tid as its Tgid's reader sees it: */
static void *report_tid(void *arg)
{
	int *fd = arg, tid = (int)syscall(SYS_gettid);
	if (write(fd[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	char c;
	while (read(fd[0], &c, 1) < 0) /* until the test closes the pipe */
		;
	return NULL;
}

/* rtd_proc_status_num: a thread's Tgid, PPid, a text field, none, gone */
static void status_num(void **state)
{
	(void)state;
	int up[2], down[2], tid = 0;
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	int fds[2] = {down[0], up[1]};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, report_tid, fds), 0);
	assert_int_equal(read(up[0], &tid, sizeof(tid)), (int)sizeof(tid));
	assert_int_not_equal(tid, getpid());
	assert_int_equal(rtd_proc_status_num(tid, "Tgid"), getpid());
	close(down[1]);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rtd_proc_status_num(getpid(), "PPid"), getppid());
	assert_int_equal(rtd_proc_status_num(getpid(), "Name"), -RTD_E_FORMAT);
	assert_int_equal(rtd_proc_status_num(getpid(), "Tgi"), -ENOENT);
	assert_int_equal(rtd_proc_status_num(getpid(), "NoSuchField"), -ENOENT);
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(rtd_proc_status_num(c, "Tgid"), -ENOENT);
	close(up[0]);
	close(up[1]);
	close(down[0]);
}

/* rtd_proc_exe, rtd_proc_cmdline: this test program, under either root */
static void exe_cmdline(void **state)
{
	(void)state;
	char want[4096], got[4096], cut[8];
	ssize_t l = readlink("/proc/self/exe", want, sizeof(want) - 1);
	assert_true(l > 0);
	want[l] = 0;
	assert_int_equal(rtd_proc_exe(NULL, getpid(), got, sizeof(got)), (int)l);
	assert_string_equal(got, want);
	assert_int_equal(rtd_proc_exe("/proc", getpid(), cut, sizeof(cut)), 7);
	assert_memory_equal(cut, want, 7);
	assert_int_equal(cut[7], 0);
	int n = rtd_proc_cmdline(NULL, getpid(), got, sizeof(got));
	assert_true(n > 0);
	assert_int_equal(got[n], 0);
	assert_true(strstr(got, "test_pstat") != NULL); /* argv[0] */
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(rtd_proc_exe(NULL, c, got, sizeof(got)), -ENOENT);
	assert_string_equal(got, "");
	assert_int_equal(rtd_proc_cmdline("/proc", c, got, sizeof(got)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_fields),
		cmocka_unit_test(read_live),
		cmocka_unit_test(read_zombie_and_gone),
		cmocka_unit_test(ns_pid),
		cmocka_unit_test(comm),
		cmocka_unit_test(comm_at),
		cmocka_unit_test(cgroup_pick),
		cmocka_unit_test(cgroup_read),
		cmocka_unit_test(root_and_map_files),
		cmocka_unit_test(status_num),
		cmocka_unit_test(exe_cmdline),
		cmocka_unit_test(tasks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
