/* SPDX-License-Identifier: MIT */
/*
 * The guardian (rtdiag/guard.h): a real process registers a probe, is
 * SIGKILLed, and its guardian undoes the registration. The "tracefs"
 * here is a temporary folder whose uprobe_events is a plain file (a fake,
 * labelled as such: the undo's "-:GROUP/EVENT" line lands in it for the
 * test to read); tests/integration/perf/test_guard.sh does the same
 * against the real kernel and a real .NET runtime.
 */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/guard.h"

struct fake_tracefs {
	char dir[64];
	char events[96];
};

static void fake_new(struct fake_tracefs *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/rtd-guard-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->events, sizeof(f->events), "%s/uprobe_events", f->dir);
	int fd = open(f->events, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void fake_free(struct fake_tracefs *f)
{
	unlink(f->events);
	rmdir(f->dir);
}

static bool has_line(const char *path, const char *line)
{
	char buf[4096];
	int n = rtd_read_small(path, buf, sizeof(buf));
	return n > 0 && strstr(buf, line) != NULL;
}

/* until @path has @line, polled; false when it has not within a generous
 * bound (the guardian acts at once: this is not a wait) */
static bool line_within(const char *path, const char *line)
{
	for (int i = 0; i < 60000; i++) {
		if (has_line(path, line))
			return true;
		usleep(1000);
	}
	return false;
}

/* A child registers G/E (and G/F, forgotten again), tells us through
 * @ready, and waits to be killed. It holds the write end of @held open
 * when its guardian is forked: the guardian must not keep it. */
static pid_t child_registers(const struct fake_tracefs *f, int held[2])
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(held), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		close(ready[0]);
		close(held[0]);
		unsigned id, id2;
		int r = rtd_guard_probe(f->dir, false, "g", "e", &id);
		if (!r)
			r = rtd_guard_probe(f->dir, false, "g", "f", &id2);
		if (!r)
			rtd_guard_forget(id2);
		char ok = r == 0 && rtd_guard_pid() > 0 ? 'y' : 'n';
		close(held[1]);
		if (write(ready[1], &ok, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(held[1]);
	char ok = 0;
	assert_int_equal(read(ready[0], &ok, 1), 1);
	close(ready[0]);
	assert_int_equal(ok, 'y');
	return c;
}

static void guardian_undoes_after_sigkill(void **state)
{
	(void)state;
	struct fake_tracefs f;
	fake_new(&f);
	int held[2];
	pid_t c = child_registers(&f, held);
	/* the child has closed its copy: end of file at once unless its
	 * guardian kept one */
	struct pollfd pf = {held[0], POLLIN, 0};
	assert_int_equal(poll(&pf, 1, 60000), 1);
	char b;
	assert_int_equal(read(held[0], &b, 1), 0);
	close(held[0]);
	assert_false(has_line(f.events, "-:g/e"));
	kill(c, SIGKILL);
	/* not reaped yet: a zombie, which the guardian sees as gone */
	assert_true(line_within(f.events, "-:g/e\n"));
	assert_false(has_line(f.events, "-:g/f")); /* forgotten */
	waitpid(c, NULL, 0);
	fake_free(&f);
}

static void undo_here_unregisters(void **state)
{
	(void)state;
	struct fake_tracefs f;
	fake_new(&f);
	unsigned id;
	assert_int_equal(rtd_guard_probe(f.dir, false, "h", "e", &id), 0);
	assert_true(rtd_guard_pid() > 0);
	assert_int_equal(rtd_guard_undo(id), 0);
	assert_true(has_line(f.events, "-:h/e\n"));
	assert_int_equal(rtd_guard_undo(id), -RTD_E_NOTFOUND);
	rtd_guard_forget(id); /* unknown: nothing */
	rtd_guard_forget(0);
	fake_free(&f);
}

/* a killed process is "gone" once it has exited, zombie or not; a live one
 * is waited for no longer than asked; another start time is another
 * process */
static void proc_wait_gone(void **state)
{
	(void)state;
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		for (;;)
			pause();
	}
	char st;
	unsigned long long start = 0;
	assert_int_equal(rtd_proc_stat(c, &st, &start), 0);
	assert_false(rtd_proc_wait_gone(c, start, 30));
	assert_true(rtd_proc_wait_gone(c, start + 1, 60000));
	assert_int_equal(kill(c, SIGKILL), 0);
	assert_true(rtd_proc_wait_gone(c, start, 60000)); /* a zombie: not reaped */
	assert_int_equal(rtd_proc_stat(c, &st, NULL), 0);
	assert_int_equal(st, 'Z');
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_true(rtd_proc_wait_gone(c, start, 60000));
}

static void bad_arguments(void **state)
{
	(void)state;
	unsigned id = 7;
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(rtd_guard_probe("/t", false, "g", longname, &id),
			 -RTD_E_INVAL);
	assert_int_equal(id, 0u);
	assert_int_equal(rtd_guard_probe("/t", true, "", "e", &id), -RTD_E_INVAL);
	assert_int_equal(rtd_guard_perfmap(getpid(), "nomap", &id), -RTD_E_INVAL);
	assert_int_equal(rtd_guard_perfmap(getpid(), "/tmp/other.map", &id),
			 -RTD_E_INVAL);
	/* a process that is gone */
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	char map[64];
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)c);
	assert_int_equal(rtd_guard_perfmap(c, map, &id), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(proc_wait_gone),
		cmocka_unit_test(guardian_undoes_after_sigkill),
		cmocka_unit_test(undo_here_unregisters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
