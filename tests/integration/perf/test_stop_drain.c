/* SPDX-License-Identifier: MIT */
/*
 * A stop asked while rtd_perf_monitor_run() is in its final drain is not
 * lost: the next run() of the monitor returns at once.
 *
 * The monitor is scoped to this process (it never hangs up). We make N
 * getppid() calls, ask a stop, then run(): a stop asked before run()
 * ends its loop at its first look, before a record is delivered, so every
 * record comes from the drain that follows the loop. The callback asks a
 * second stop at the first record: that one is in the final drain. A
 * second run() must then return by itself; it used to block until the
 * next stop (the first run cleared the stop at its end). A watchdog
 * thread turns such a hang into a failure: it stops the monitor after
 * WATCHDOG_S seconds, a time the fixed run() (a look at the stop and a
 * drain of a few records) never takes. Both ways of reading: the
 * single-thread run() and RTD_PERF_READER_THREAD.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "perf_test.h"

#define N 100
#define WATCHDOG_S 120

struct seen {
	struct rtd_perf_monitor *m;
	unsigned samples;
	bool stop_in_cb; /* ask a stop at the first record */
};

static int on_rec(const struct rtd_perf_sample *s, void *ctx)
{
	struct seen *w = ctx;
	if (s->type != 9 /* SAMPLE */ || (pid_t)s->pid != getpid())
		return 0;
	if (!w->samples++ && w->stop_in_cb)
		rtd_perf_monitor_stop(w->m, false);
	return 0;
}

struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, fired;
	struct rtd_perf_monitor *m;
};

static void *watch(void *arg)
{
	struct watchdog *wd = arg;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += WATCHDOG_S;
	pthread_mutex_lock(&wd->mu);
	while (!wd->done) {
		if (pthread_cond_timedwait(&wd->cv, &wd->mu, &t) == ETIMEDOUT && !wd->done) {
			wd->fired = true;
			rtd_perf_monitor_stop(wd->m, false);
			break;
		}
	}
	pthread_mutex_unlock(&wd->mu);
	return NULL;
}

static void check(unsigned flags, const char *what)
{
	pid_t self = getpid();
	struct rtd_perf_opts o = {.sz = sizeof(o), .flags = flags};
	o.pids = &self;
	o.npids = 1;
	struct rtd_perf_monitor *m = pt_monitor_tp(&o, "syscalls:sys_enter_getppid");
	for (int i = 0; i < N; i++)
		if (getppid() < 0)
			FAIL("getppid");
	struct seen w = {.m = m, .stop_in_cb = true};
	rtd_perf_monitor_stop(m, false); /* the loop ends at its first look */
	int r = rtd_perf_monitor_run(m, on_rec, &w);
	if (r)
		FAIL("%s: run: %s", what, rtd_perf_monitor_errmsg(m));
	if (w.samples < N)
		FAIL("%s: %u of %d calls delivered by the drain", what, w.samples, N);

	struct watchdog wd = {.mu = PTHREAD_MUTEX_INITIALIZER,
			      .cv = PTHREAD_COND_INITIALIZER, .m = m};
	pthread_t th;
	if (pthread_create(&th, NULL, watch, &wd))
		FAIL("pthread_create");
	struct seen w2 = {.m = m};
	r = rtd_perf_monitor_run(m, on_rec, &w2);
	pthread_mutex_lock(&wd.mu);
	wd.done = true;
	pthread_cond_signal(&wd.cv);
	pthread_mutex_unlock(&wd.mu);
	pthread_join(th, NULL);
	if (r)
		FAIL("%s: second run: %s", what, rtd_perf_monitor_errmsg(m));
	if (wd.fired)
		FAIL("%s: the stop asked in the first run's final drain was lost: "
		     "the second run() blocked until the watchdog's stop (%d s)",
		     what, WATCHDOG_S);
	OK("%s: %u records from the drain; the stop asked there ended the next run",
	   what, w.samples);
	rtd_perf_monitor_free(m);
}

int main(void)
{
	pt_require();
	check(0, "single thread");
	check(RTD_PERF_READER_THREAD, "reader thread");
	return 0;
}
