/* SPDX-License-Identifier: MIT */
/*
 * test_flight_recorder.c - the flight recorder wired whole
 * (rtdiag/flight_recorder.h): its options refused with a message; then,
 * where perf_event lets this user sample its own process, a real
 * recording of this test program: a snapshot asked from another thread
 * (rtd_flight_recorder_take()) comes back with its file, which holds the
 * program's CPU samples, and the actions' files beside it; a signal's
 * snapshot; the size cap keeps the newest only and removes the older
 * files; the stop ends the run with no snapshot when none is asked for.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "test_util.h"
#include "rtdiag/flight_recorder.h"

static void refused(const struct rtd_flight_recorder_opts *o, int want, const char *msg)
{
	rtd_flight_recorder *fr = (rtd_flight_recorder *)1;
	char err[256] = "x";
	assert_int_equal(rtd_flight_recorder_new(o, &fr, err, sizeof(err)), want);
	assert_null(fr);
	if (msg)
		assert_non_null(strstr(err, msg));
}

static void test_opts(void **state)
{
	(void)state;
	RTD_OPTS(rtd_recorder_opts, ro, .pid = getpid());
	RTD_OPTS(rtd_flight_recorder_opts, o, .recorder = &ro, .ring_ns = 1000000000,
		 .dir = "/tmp");
	struct rtd_flight_recorder_opts b = o;
	b.recorder = NULL;
	refused(&b, -RTD_E_INVAL, "a ring, a folder and a recording");
	b = o;
	b.ring_ns = 0;
	refused(&b, -RTD_E_INVAL, NULL);
	b = o;
	b.dir = NULL;
	refused(&b, -RTD_E_INVAL, NULL);
	b = o;
	b.actions = 1u << RTD_FLIGHT_ACT_COUNT;
	refused(&b, -RTD_E_INVAL, NULL);
	const char *bad[] = {"cpu>>90%"};
	b = o;
	b.triggers = bad;
	b.ntriggers = 1;
	refused(&b, -RTD_E_FORMAT, "trigger 'cpu>>90%'");
	const char *many[RTD_FLIGHT_MAX_TRIGGERS + 1];
	for (size_t i = 0; i < RTD_FLIGHT_MAX_TRIGGERS + 1; i++)
		many[i] = "cpu>90%";
	b = o;
	b.triggers = many;
	b.ntriggers = RTD_FLIGHT_MAX_TRIGGERS + 1;
	refused(&b, -RTD_E_CAP, "at most");
	refused(NULL, -RTD_E_INVAL, NULL);
}

static void test_actions(void **state)
{
	(void)state;
	for (unsigned i = 0; i < RTD_FLIGHT_ACT_COUNT; i++) {
		const char *n = rtd_flight_action_name(1u << i);
		assert_non_null(n);
		assert_int_equal(rtd_flight_action_from_name(n), 1u << i);
	}
	assert_int_equal(rtd_flight_action_from_name("gcdump"), RTD_FLIGHT_ACT_GCDUMP);
	assert_int_equal(rtd_flight_action_from_name("heapdump"), 0);
	assert_int_equal(rtd_flight_action_from_name(NULL), 0);
	assert_null(rtd_flight_action_name(3));
}

static volatile unsigned g_spin;

static void *run(void *arg)
{
	static int rc;
	rc = rtd_flight_recorder_run(arg);
	return &rc;
}

/* CPU for about @ms of this thread (the samples the ring gets) */
__attribute__((noinline)) static void burn(int ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			g_spin += (unsigned)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static size_t files_in(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* whether the file at @path holds @needle (false when it cannot be read) */
static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char *text = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&text, &cap, 0, f);
	bool has = n > 0 && strstr(text, needle);
	free(text);
	fclose(f);
	return has;
}

static void test_live(void **state)
{
	(void)state;
	char dir[] = "/tmp/rtd-flight-unit-XXXXXX";
	assert_non_null(mkdtemp(dir));
	RTD_OPTS(rtd_recorder_opts, ro, .pid = getpid(), .freq = 999,
		 .flags = RTD_RECORDER_NO_DOTNET | RTD_RECORDER_NO_OFF_CPU);
	RTD_OPTS(rtd_flight_recorder_opts, o, .recorder = &ro, .ring_ns = 5000000000,
		 .dir = dir, .format = RTD_TIMELINE_FMT_CHROME_JSON, .keep_bytes = 1,
		 .actions = RTD_FLIGHT_ACT_FOLDED | RTD_FLIGHT_ACT_PPROF);
	rtd_flight_recorder *fr;
	char err[512];
	int rc = rtd_flight_recorder_new(&o, &fr, err, sizeof(err));
	if (rc == 0 && (rc = rtd_flight_recorder_start(fr)) != 0)
		snprintf(err, sizeof(err), "%s",
			 rtd_recorder_errmsg(rtd_flight_recorder_recorder(fr)));
	if (rc) {
		printf("SKIP: this user cannot sample its own process here: %s\n", err);
		rtd_flight_recorder_free(fr);
		rmdir(dir);
		skip();
	}
	struct rtd_flight_snapshot_info s;
	/* not running yet: refused */
	assert_int_equal(rtd_flight_recorder_take(fr, "bad cause", "x", 10, &s), -RTD_E_INVAL);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run, fr), 0);
	/* samples come once a perf window passed: take until one holds this
	 * thread's (its folded action file names burn; a first window may hold
	 * the recorder's own threads only) */
	struct rtd_flight_snapshot_info first = {0};
	bool sampled = false;
	for (int i = 0; i < 200 && !sampled; i++) {
		burn(50);
		rc = rtd_flight_recorder_take(fr, "request", "the unit test", 0, &s);
		assert_int_equal(rc, 0);
		if (!first.path[0])
			first = s;
		char folded[RTD_FLIGHT_PATH_MAX + 16];
		snprintf(folded, sizeof(folded), "%.*s.folded", (int)(strlen(s.path) - 5), s.path);
		sampled = file_has(folded, "burn");
	}
	assert_true(sampled);
	assert_string_equal(s.cause, "request");
	assert_int_equal(s.pid, getpid());
	assert_false(s.incomplete);
	assert_int_equal(s.actions, RTD_FLIGHT_ACT_FOLDED | RTD_FLIGHT_ACT_PPROF);
	assert_non_null(strstr(s.path, "-request.json"));
	/* the whole file: its snapshot instant comes after the ring's records,
	 * past 64 KiB when a slow (sanitized) run took many rounds */
	FILE *f = fopen(s.path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	char *buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (size_t)len, f);
	buf[n] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "\"rtdiag/snapshot\""));
	assert_non_null(strstr(buf, "the unit test"));
	assert_non_null(strstr(buf, "burn"));
	free(buf);
	/* the cap (1 byte): the newest only, with its 2 action files */
	if (strcmp(first.path, s.path))
		assert_int_not_equal(access(first.path, F_OK), 0);
	assert_int_equal(files_in(dir), 3);
	struct rtd_flight_snapshot_info list[4];
	assert_int_equal(rtd_flight_recorder_snapshots(fr, list, 4), 1);
	assert_string_equal(list[0].path, s.path);
	/* a signal's snapshot replaces it */
	rtd_flight_recorder_signal(fr);
	struct rtd_flight_recorder_stats st;
	for (int i = 0; i < 2000; i++) {
		rtd_flight_recorder_snapshots(fr, list, 4);
		if (strstr(list[0].path, "-signal.json"))
			break;
		usleep(10000);
	}
	assert_non_null(strstr(list[0].path, "-signal.json"));
	assert_string_equal(list[0].why, "SIGUSR1");
	assert_int_not_equal(access(s.path, F_OK), 0);
	rtd_flight_recorder_stats(fr, &st);
	assert_true(st.removed >= 1);
	assert_int_equal(st.taken, st.removed + 1);
	/* the stop, with no last snapshot asked for */
	rtd_flight_recorder_stop(fr, false);
	void *ret;
	pthread_join(th, &ret);
	assert_int_equal(*(int *)ret, 0);
	rtd_flight_recorder_stats(fr, &st);
	assert_int_equal(st.taken, st.removed + 1);
	assert_int_equal(rtd_flight_recorder_take(fr, "request", "late", 10, &s), -RTD_E_STATE);
	rtd_flight_recorder_free(fr);
	rtd_flight_recorder_free(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
