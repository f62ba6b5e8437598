/* SPDX-License-Identifier: MIT */
/*
 * record_target.h - for the tests that read a live session of
 * tests/targets/dotnet-record (an EventSource event Rtd-Record-Test/Mark
 * with its round number every ~50 ms): start it, end it and its socket
 * at exit; a session of its provider; CLOCK_MONOTONIC now.
 */
#ifndef RTD_TEST_RECORD_TARGET_H
#define RTD_TEST_RECORD_TARGET_H

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "rtdiag/ipc_source.h"
#include "test_util.h"

static int64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static pid_t child;
static char work[] = "/tmp/rtd-record-target-XXXXXX";

/* atexit(): the program killed if still there, its socket and work dir removed */
static void record_target_cleanup(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -f /tmp/dotnet-diagnostic-%d-*-socket", (int)child);
		if (system(cmd)) {
		}
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	if (system(cmd)) {
	}
}

/* Build (once) and start dotnet-record into @child; returns once its
 * Main has run. */
static void record_target_start(void)
{
	char bin[4096] = "", ready[128];
	const char *script = rtd_test_path("RTD_SOURCE_DIR", "tests/integration/dotnet/build.sh");
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "bash %s dotnet-record tests/targets", script);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(bin, sizeof(bin), p));
	assert_int_equal(pclose(p), 0);
	bin[strcspn(bin, "\n")] = 0;
	strcat(bin, "/dotnet-record");
	assert_non_null(mkdtemp(work));
	snprintf(ready, sizeof(ready), "%s/ready", work);
	child = fork();
	if (child == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, bin, ready, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1200 && access(ready, F_OK); i++)
		usleep(100000);
	assert_int_equal(access(ready, F_OK), 0);
}

/* A client of the started target in *@c and a session of
 * Rtd-Record-Test (every keyword, verbose; no rundown, no stacks). */
static inline rtd_ipc_session *record_session_start(rtd_ipc_client **c)
{
	*c = rtd_ipc_client_new(child, NULL, NULL);
	assert_non_null(*c);
	struct rtd_ipc_provider prov = {.name = "Rtd-Record-Test", .keywords = ~0ull, .level = 5};
	RTD_OPTS(rtd_ipc_session_opts, so, .providers = &prov, .n_providers = 1,
		 .no_rundown = true, .no_stackwalk = true);
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_session_start(*c, &so, &err);
	assert_non_null(s);
	return s;
}

#endif
