/* SPDX-License-Identifier: MIT */
/* perf.c - the 'rtdiag perf' command group: trace, stat, list. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "perf_cli.h"

static const struct cli_cmd *const perf_cmds[] = {
	&perf_cmd_record, &perf_cmd_trace, &perf_cmd_stat, &perf_cmd_list, NULL,
};

static const char perf_summary[] =
	"Linux perf_event and tracefs, live: CPU profiles of any process,\n"
	"system calls and tracepoints, counters.";

static int run(int argc, char **argv)
{
	return cli_group_run("perf", perf_cmds, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_group_help(f, "perf", perf_summary, perf_cmds, sub);
}

static const struct cli_cmd *const *list_cmds(void)
{
	return perf_cmds;
}

const struct cli_group cli_group_perf = {"perf", "Linux perf_event: record (CPU profiles), trace, stat, list", run, help, list_cmds};

/* ---- shared helpers ---------------------------------------------------------- */

pid_t gone_pid(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) && errno == ESRCH)
			return pids[i];
	return pids[0];
}

int perf_cli_start(struct perf_child *c, char **cmd, pid_t *pids,
		   size_t *npids)
{
	int r = perf_child_start(c, cmd);
	if (r) {
		cli_fail("%s: cannot start: %s", cmd[0], strerror(-r));
		return -1;
	}
	pids[(*npids)++] = c->pid;
	return 0;
}

int perf_child_start(struct perf_child *c, char **argv)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char b;
		close(go[1]);
		close(err[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* the parent gave up */
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(err[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

int perf_child_go(struct perf_child *c)
{
	char b = 1;
	ssize_t w = write(c->go_fd, &b, 1);
	(void)w;
	close(c->go_fd);
	int e = 0;
	ssize_t n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

int perf_child_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return CLI_FAIL;
}

void perf_child_abort(struct perf_child *c)
{
	close(c->go_fd);
	close(c->err_fd);
	waitpid(c->pid, NULL, 0);
}

static struct rtd_perf_monitor *volatile sig_monitor;
static volatile sig_atomic_t child_exited;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	struct rtd_perf_monitor *m = sig_monitor;
	if (m)
		rtd_perf_monitor_stop(m, false);
}

void perf_cli_signals(struct rtd_perf_monitor *m, double duration_s)
{
	sig_monitor = m;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (duration_s > 0) {
		struct itimerval it = {{0, 0}, {0, 0}};
		it.it_value.tv_sec = (time_t)duration_s;
		it.it_value.tv_usec =
			(suseconds_t)((duration_s - (double)it.it_value.tv_sec) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
}

bool perf_cli_child_exited(void)
{
	return child_exited;
}

int perf_cli_fail(struct rtd_perf_monitor *m, const char *what, int err)
{
	const char *msg = rtd_perf_monitor_errmsg(m);
	if (msg && *msg)
		return cli_fail("%s", msg);
	return cli_fail("%s: %s", what, rtd_strerror(err));
}
