/* SPDX-License-Identifier: MIT */
/* perf_test.h - helpers for the perf integration tests written in C. */
#ifndef RTD_PERF_TEST_H
#define RTD_PERF_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtdiag/perf.h"

#define SKIP(...)                                                              \
	do {                                                                   \
		printf("SKIP: " __VA_ARGS__);                                  \
		printf("\n");                                                  \
		exit(77);                                                      \
	} while (0)
#define FAIL(...)                                                              \
	do {                                                                   \
		printf("FAIL: " __VA_ARGS__);                                  \
		printf("\n");                                                  \
		exit(1);                                                       \
	} while (0)
#define OK(...)                                                                \
	do {                                                                   \
		printf("ok: " __VA_ARGS__);                                    \
		printf("\n");                                                  \
	} while (0)

static inline const char *pt_target(void)
{
	static char path[4096];
	const char *b = getenv("RTD_BINARY_DIR");
	if (!b)
		SKIP("RTD_BINARY_DIR not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/tests/targets/perf_target", b);
	if (access(path, X_OK))
		FAIL("perf_target not built at %s", path);
	return path;
}

/* Root, and tracefs mounted (mounted here when missing). */
static inline void pt_require(void)
{
	if (geteuid() != 0)
		SKIP("needs root for perf_event and tracefs");
	if (access("/sys/kernel/tracing/events", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events", F_OK) != 0) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			SKIP("tracefs is not mounted and cannot be: %s",
			     strerror(errno));
	}
}

/* A child that waits for pt_go() before exec'ing argv. */
struct pt_child {
	pid_t pid;
	int go;
};

static inline struct pt_child pt_spawn(char *const argv[])
{
	int p[2];
	if (pipe(p))
		FAIL("pipe: %s", strerror(errno));
	struct pt_child c = {fork(), p[1]};
	if (c.pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (c.pid == 0) {
		char b;
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	return c;
}

static inline void pt_go(struct pt_child *c)
{
	char b = 1;
	if (write(c->go, &b, 1) != 1)
		FAIL("cannot start the child");
	close(c->go);
}

static inline int pt_wait(struct pt_child *c)
{
	int st = 0;
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

#endif
