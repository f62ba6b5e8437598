/* SPDX-License-Identifier: MIT */
/*
 * test_proc_env.c - a process's TMPDIR as its .NET runtime reads it, and
 * rtdiag's one reader of /proc/PID/environ. The runtime copies environ in
 * order and takes the FIRST TMPDIR (the PAL's FindEnvVarValue, as glibc's
 * getenv); an empty one means "/tmp/" (GetTempPathA: a value of length 0
 * is no value). The targets are real processes, exec'd with a crafted
 * envp holding TMPDIR twice.
 */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/ipc_discovery.h"
#include "rtdiag/symbols.h"

/*
 * A child that runs cat(1) on a pipe with @envp: it lives until *@in is
 * closed. Returns once it has exec'd (its CLOEXEC pipe reads end of file),
 * so /proc/PID/environ is the crafted one, not ours.
 */
static pid_t spawn_env(char *const envp[], int *in)
{
	int p[2], sync[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		close(sync[0]);
		char *argv[] = {"cat", NULL};
		execve("/bin/cat", argv, envp);
		_exit(127);
	}
	close(p[0]);
	close(sync[1]);
	char c;
	while (read(sync[0], &c, 1) > 0)
		;
	close(sync[0]);
	*in = p[1];
	return pid;
}

static void reap(pid_t pid, int in)
{
	close(in);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/* the perf map is where the runtime writes it: the first TMPDIR */
static void perfmap_first_tmpdir(void **state)
{
	(void)state;
	char *envp[] = {"A=1", "TMPDIR=/first/", "TMPDIR=/second", NULL};
	int in;
	pid_t pid = spawn_env(envp, &in);
	char got[4096], want[128];
	assert_int_equal(rtd_sym_perfmap_path(pid, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "/proc/%d/root/first/perf-%d.map", (int)pid, (int)pid);
	assert_string_equal(got, want);
	reap(pid, in);
}

/* an empty first TMPDIR is /tmp for the runtime, not the next TMPDIR */
static void socket_dir_empty_tmpdir(void **state)
{
	(void)state;
	char *envp[] = {"TMPDIR=", "TMPDIR=/second", NULL};
	int in;
	pid_t pid = spawn_env(envp, &in);
	char path[4096], where[4096], want[64];
	int rc = rtd_ipc_socket_find(pid, path, sizeof(path), where, sizeof(where));
	assert_int_not_equal(rc, 0); /* cat has no socket */
	snprintf(want, sizeof(want), "/proc/%d/root/tmp", (int)pid);
	assert_string_equal(where, want);
	reap(pid, in);
}

/* the reader: the first entry, a name that is only a prefix, a value cut
 * to the buffer, a missing one, an entry longer than one read */
static void env_first(void **state)
{
	(void)state;
	static char big[10000];
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "BIG=", 4);
	char *envp[] = {"TMPDIRX=/no", "TMPDIR", big, "TMPDIR=/first/", "TMPDIR=/second",
			"EMPTY=", NULL};
	int in;
	pid_t pid = spawn_env(envp, &in);
	char v[64];
	assert_int_equal(rtd_proc_env(pid, "TMPDIR", v, sizeof(v)), 7);
	assert_string_equal(v, "/first/");
	assert_int_equal(rtd_proc_env(pid, "TMPDIR", v, 4), 7);
	assert_string_equal(v, "/fi");
	assert_int_equal(rtd_proc_env(pid, "EMPTY", v, sizeof(v)), 0);
	assert_string_equal(v, "");
	assert_int_equal(rtd_proc_env(pid, "BIG", v, sizeof(v)), (int)sizeof(big) - 5);
	assert_int_equal(rtd_proc_env(pid, "NONE", v, sizeof(v)), -ENOENT);
	assert_int_equal(rtd_proc_env(pid, "TMPDI", v, sizeof(v)), -ENOENT);
	assert_int_equal(rtd_proc_tmpdir(pid, v, sizeof(v)), 0);
	assert_string_equal(v, "/first");
	reap(pid, in);
	char *rel[] = {"TMPDIR=rel", NULL}, *root[] = {"TMPDIR=///", NULL};
	pid = spawn_env(rel, &in);
	assert_int_equal(rtd_proc_tmpdir(pid, v, sizeof(v)), 0);
	assert_string_equal(v, "/tmp");
	reap(pid, in);
	pid = spawn_env(root, &in);
	assert_int_equal(rtd_proc_tmpdir(pid, v, sizeof(v)), 0);
	assert_string_equal(v, "/");
	reap(pid, in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfmap_first_tmpdir),
		cmocka_unit_test(socket_dir_empty_tmpdir),
		cmocka_unit_test(env_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
