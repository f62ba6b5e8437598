/* SPDX-License-Identifier: MIT */
/*
 * The kernel's process events as the agent's discovery reads them
 * (src/agent/procev.c), from the running kernel: a child forked here, its
 * rename (prctl PR_SET_NAME), its exec of /bin/true and its exit each
 * reach the callback with the child's pid, and a thread started here is
 * not a process birth. Skipped, saying why, where the connector cannot
 * be listened to (no CAP_NET_ADMIN, no CONFIG_PROC_EVENTS).
 */
#include "test_util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/procev.h"

struct seen {
	pid_t child;
	pid_t thread;
	int fork, exec, comm, exit;
	int thread_fork;
};

static void on_ev(void *ctx, enum procev_kind k, pid_t pid)
{
	struct seen *s = ctx;
	if (pid == s->thread)
		s->thread_fork++;
	if (pid != s->child)
		return;
	switch (k) {
	case PROCEV_FORK: s->fork++; break;
	case PROCEV_EXEC: s->exec++; break;
	case PROCEV_COMM: s->comm++; break;
	case PROCEV_EXIT: s->exit++; break;
	}
}

static void *thread_main(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static void events(void **state)
{
	(void)state;
	int fd = procev_open();
	if (fd < 0) {
		printf("SKIP: the netlink proc connector: %s\n", strerror(-fd));
		skip();
	}
	struct seen s = {0};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, thread_main, &s.thread), 0);
	pthread_join(th, NULL);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		prctl(PR_SET_NAME, "rtd-procev", 0, 0, 0);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	s.child = c;
	int status = 0;
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the events are queued by the time the child is reaped; read them
	 * until its exit is seen, with a bound no loaded machine reaches */
	for (int i = 0; i < 600 && !s.exit; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		poll(&p, 1, 100);
		assert_true(procev_read(fd, on_ev, &s) >= 0);
	}
	procev_close(fd);
	printf("child %d: fork %d, comm %d, exec %d, exit %d; thread %d: %d\n",
	       (int)c, s.fork, s.comm, s.exec, s.exit, (int)s.thread,
	       s.thread_fork);
	assert_int_equal(s.fork, 1);
	assert_true(s.comm >= 1);
	assert_int_equal(s.exec, 1);
	assert_int_equal(s.exit, 1);
	assert_int_equal(s.thread_fork, 0);
}

static void closed(void **state)
{
	(void)state;
	procev_close(-1); /* nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events),
		cmocka_unit_test(closed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
