/* SPDX-License-Identifier: MIT */
/*
 * test_pstat.c - rtd_pstat_parse/rtd_pstat_read, rtdiag's one reader of
 * /proc/PID/stat: a command with blanks and parentheses, a short or broken
 * line, this process and one of its threads, a zombie, a missing pid.
 */
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_fields),
		cmocka_unit_test(read_live),
		cmocka_unit_test(read_zombie_and_gone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
