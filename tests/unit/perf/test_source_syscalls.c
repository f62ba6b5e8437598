/* SPDX-License-Identifier: MIT */
/*
 * The system-call recorder and its record source (src/perf/
 * source_syscalls.c) on the running kernel: a forked child, blocked in a
 * read of a pipe when the recording starts, then makes known calls
 * (getppid three times, close(-1)) and exits. The source gives the
 * child's THREAD record (when its comm was read) before its first slice, one slice per call named
 * by the call with its result (close: ret -9, errno EBADF), begins and
 * ends paired in time order, nothing for the read entered before the
 * recording; and the options are checked. The live source (test_live)
 * gives the same calls as whole slices as they end. Skipped where
 * perf_event may not read tracepoints.
 */
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtdiag/perf_source.h"

static void test_opts(void **st)
{
	(void)st;
	rtd_perf_syscall_recorder *r = (void *)1;
	assert_int_equal(rtd_perf_syscall_recorder_new(NULL, &r), -RTD_E_INVAL);
	assert_null(r);
	RTD_OPTS(rtd_perf_syscall_recorder_opts, o, .npids = 0);
	assert_int_equal(rtd_perf_syscall_recorder_new(&o, &r), -RTD_E_INVAL);
	assert_true(strlen(rtd_perf_syscall_recorder_errmsg(NULL)) > 0);
	int err = 0;
	assert_null(rtd_perf_source_syscalls(NULL, NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_perf_syscall_recorder_free(NULL);
	assert_int_equal(rtd_perf_syscall_recorder_stop(NULL), 0);
}

/* Has @pid blocked (state S: its read of the pipe, its only sleep)?
 * Polled, bounded by count, not by a time the machine may miss. */
static bool blocked_in_read(pid_t pid)
{
	char sp[64], stat[512];
	snprintf(sp, sizeof(sp), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 6000; i++) {
		FILE *f = fopen(sp, "r");
		size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
		if (f)
			fclose(f);
		stat[n] = 0;
		const char *paren = strrchr(stat, ')');
		if (paren && paren[1] == ' ' && paren[2] == 'S')
			return true;
		usleep(10000);
	}
	return false;
}

/* The child: blocked in a read of a pipe (*@go its write end) until a
 * byte comes, then getppid three times, close(-1) (EBADF), exit 0. */
static pid_t known_child(int *go)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 3; i++)
			(void)getppid();
		(void)close(-1);
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void test_child(void **st)
{
	(void)st;
	int go;
	pid_t pid = known_child(&go);
	/* the child blocked in its read (its only sleep) before the
	 * recording starts */
	assert_true(blocked_in_read(pid));
	rtd_perf_syscall_recorder *r = NULL;
	RTD_OPTS(rtd_perf_syscall_recorder_opts, o, .pids = &pid, .npids = 1);
	int rc = rtd_perf_syscall_recorder_new(&o, &r);
	if (rc) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		print_message("SKIP: %s\n", rtd_perf_syscall_recorder_errmsg(NULL));
		skip();
	}
	assert_int_equal(rtd_perf_syscall_recorder_start(r), 0);
	assert_int_equal(rtd_perf_syscall_recorder_start(r), -RTD_E_STATE);
	int err = 0;
	assert_null(rtd_perf_source_syscalls(r, NULL, &err)); /* still running */
	assert_int_equal(err, -RTD_E_INVAL);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the child is gone: its events hang up and the run ends by itself
	 * (polled with a generous bound, not slept) */
	for (int i = 0; i < 6000 && !rtd_perf_syscall_recorder_done(r); i++)
		usleep(10000);
	assert_true(rtd_perf_syscall_recorder_done(r));
	assert_int_equal(rtd_perf_syscall_recorder_stop(r), 0);

	rtd_source *s = rtd_perf_source_syscalls(r, NULL, &err);
	assert_non_null(s);
	const struct rtd_record *rec;
	int open = 0, getppids = 0, closes = 0, reads = 0, begins = 0, named = 0;
	int64_t last = 0;
	while ((rc = rtd_source_next(s, &rec)) == 1) {
		assert_true(rec->mono >= last);
		last = rec->mono;
		assert_int_equal(rec->pid, (uint32_t)pid);
		assert_int_equal(rec->tid, (uint64_t)pid);
		if (rec->kind == RTD_REC_THREAD) {
			/* named before its first slice (when its comm was
			 * read: /proc at delivery, and the child may be gone) */
			assert_int_equal(begins, 0);
			assert_non_null(rec->name);
			named++;
			continue;
		}
		if (rec->kind == RTD_REC_SLICE_END) {
			assert_int_equal(open, 1);
			open--;
			continue;
		}
		assert_int_equal(rec->kind, RTD_REC_SLICE_BEGIN);
		assert_int_equal(open, 0); /* a thread is in one call at a time */
		open++;
		begins++;
		assert_string_equal(rec->category, "syscall");
		assert_string_equal(rec->fields[0].name, "ret");
		if (!strcmp(rec->name, "getppid")) {
			getppids++;
			assert_int_equal(rec->fields[0].i, getpid());
			assert_int_equal(rec->nfields, 1);
		} else if (!strcmp(rec->name, "close")) {
			closes++;
			assert_int_equal(rec->fields[0].i, -EBADF);
			assert_int_equal(rec->nfields, 2);
			assert_string_equal(rec->fields[1].name, "errno");
			assert_string_equal(rec->fields[1].s, "EBADF");
		} else if (!strcmp(rec->name, "read")) {
			reads++;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(open, 0);
	assert_true(named <= 1);
	assert_int_equal(getppids, 3);
	assert_int_equal(closes, 1);
	assert_int_equal(reads, 0); /* entered before the recording began */
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_int_equal(c.domain, RTD_CLOCK_MONOTONIC);
	rtd_source_free(s);
	rtd_perf_syscall_recorder_free(r);
}

/* The live source over a recorder it runs itself: the same child's calls
 * as whole slices (RTD_REC_SLICE at the call's exit, @dur its length) in
 * the order they ended, the child's THREAD record before its first; the
 * stream ends by itself once the child is gone; the recorder cannot be
 * started or given to a second source meanwhile. */
static void test_live(void **st)
{
	(void)st;
	int go;
	pid_t pid = known_child(&go);
	assert_true(blocked_in_read(pid)); /* its close of the pipe's write end is done */
	rtd_perf_syscall_recorder *r = NULL;
	RTD_OPTS(rtd_perf_syscall_recorder_opts, o, .pids = &pid, .npids = 1);
	int rc = rtd_perf_syscall_recorder_new(&o, &r);
	if (rc) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		print_message("SKIP: %s\n", rtd_perf_syscall_recorder_errmsg(NULL));
		skip();
	}
	int err = 0;
	RTD_OPTS(rtd_perf_source_opts, so, .window_ms = 20);
	rtd_source *s = rtd_perf_source_syscalls_live(r, &so, &err);
	assert_non_null(s);
	assert_null(rtd_perf_source_syscalls_live(r, &so, &err)); /* taken */
	assert_int_equal(err, -RTD_E_STATE);
	assert_int_equal(rtd_perf_syscall_recorder_start(r), -RTD_E_STATE);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	const struct rtd_record *rec;
	int getppids = 0, closes = 0, slices = 0, named = 0, idle = 0;
	int64_t last = INT64_MIN;
	/* the child is gone: its events hang up and the stream ends (an idle
	 * source is waited on through its descriptor, bounded by count) */
	while ((rc = rtd_source_next(s, &rec)) == 1 || (rc == RTD_SOURCE_IDLE && idle++ < 60000)) {
		if (rc == RTD_SOURCE_IDLE) {
			rtd_source_wait(s, 10);
			continue;
		}
		assert_true(rec->mono >= last);
		last = rec->mono;
		if (rec->pid != (uint32_t)pid)
			continue;
		if (rec->kind == RTD_REC_THREAD) {
			assert_int_equal(slices, 0);
			named++;
			continue;
		}
		assert_int_equal(rec->kind, RTD_REC_SLICE);
		assert_true(rec->dur >= 0);
		slices++;
		assert_string_equal(rec->category, "syscall");
		if (!strcmp(rec->name, "getppid")) {
			getppids++;
			assert_int_equal(rec->fields[0].i, getpid());
		} else if (!strcmp(rec->name, "close")) {
			closes++;
			assert_int_equal(rec->nfields, 2);
			assert_string_equal(rec->fields[1].s, "EBADF");
		}
	}
	assert_int_equal(rc, 0);
	assert_true(named <= 1);
	assert_int_equal(getppids, 3);
	assert_int_equal(closes, 1);
	rtd_source_free(s);
	rtd_perf_syscall_recorder_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_child),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
