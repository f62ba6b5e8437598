/* SPDX-License-Identifier: MIT */
/*
 * A process that ends between the monitor's making and its events'
 * opening: the error names the process and says it ended (perf_event_open
 * answers ESRCH; the message was "cpu 1: perf_event_open (ring): No such
 * process"), with -RTD_E_NOTFOUND, the code the CLI reads as "no such
 * process". The child ends when its pipe closes and is reaped before the
 * events are added: no timing is involved.
 */
#include "perf_test.h"

static pid_t child_blocked(int *wfd)
{
	int p[2];
	if (pipe(p))
		FAIL("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[1]);
		char c;
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

static void end_child(pid_t pid, int wfd)
{
	close(wfd);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		FAIL("waitpid: %s", strerror(errno));
}

static void check(struct rtd_perf_monitor *m, int r, pid_t pid,
		  const char *what)
{
	const char *msg = rtd_perf_monitor_errmsg(m);
	char want[64];
	snprintf(want, sizeof(want), "pid %d: the process ended", (int)pid);
	if (r != -RTD_E_NOTFOUND)
		FAIL("%s: %d (%s), want -RTD_E_NOTFOUND: %s", what, r,
		     rtd_strerror(r), msg ? msg : "");
	if (!msg || !strstr(msg, want))
		FAIL("%s: message \"%s\", want \"%s...\"", what,
		     msg ? msg : "(none)", want);
	OK("%s: %s", what, msg);
}

int main(void)
{
	/* a sampler: its ring is opened first */
	int wfd;
	pid_t pid = child_blocked(&wfd);
	struct rtd_perf_opts o = {.sz = sizeof(o), .pids = &pid, .npids = 1};
	struct rtd_perf_monitor *m;
	int r = rtd_perf_monitor_new(&o, &m);
	if (r)
		FAIL("monitor_new: %s", rtd_strerror(r));
	end_child(pid, wfd);
	r = rtd_perf_monitor_add_sampler(m, NULL, NULL);
	check(m, r, pid, "sampler");
	rtd_perf_monitor_free(m);

	/* a counter: no ring, the event's own open */
	pid = child_blocked(&wfd);
	if ((r = rtd_perf_monitor_new(&o, &m)))
		FAIL("monitor_new: %s", rtd_strerror(r));
	end_child(pid, wfd);
	r = rtd_perf_monitor_add_counter(m, "task-clock", NULL, NULL);
	check(m, r, pid, "counter");
	rtd_perf_monitor_free(m);
	return 0;
}
