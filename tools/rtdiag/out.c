/* SPDX-License-Identifier: MIT */
/* out.c - output files written through a temporary file (see out.h). */
#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Temporary files to remove if the process ends before commit or abort. */
#define MAX_PENDING 16
static char *pending[MAX_PENDING];
static bool cleanup_installed;

static void remove_pending(void)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i])
			unlink(pending[i]); /* async-signal-safe */
}

static void on_signal(int sig)
{
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_cleanup(void)
{
	if (cleanup_installed)
		return;
	cleanup_installed = true;
	atexit(remove_pending);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* a command with its own handler cleans up itself */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_signal;
			sigemptyset(&sa.sa_mask);
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

static int pending_add(char *tmp)
{
	install_cleanup();
	for (int i = 0; i < MAX_PENDING; i++)
		if (!pending[i]) {
			pending[i] = tmp;
			return i;
		}
	return -1; /* not tracked: still removed by commit/abort */
}

static void pending_drop(int slot)
{
	if (slot >= 0 && slot < MAX_PENDING)
		pending[slot] = NULL;
}

bool cli_out_is_stdout(const char *path)
{
	return !path || strcmp(path, "-") == 0;
}

/* The folder of path ("." when it has none), malloc'd. */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Where the data really goes: a symbolic link is followed to the file it
 * names (which may not exist yet). malloc'd. */
static char *resolve(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *real = realpath(path, NULL);
		if (real)
			return real;
		/* a dangling link: write the file it points to */
		char buf[PATH_MAX];
		ssize_t n = readlink(path, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			if (buf[0] == '/')
				return strdup(buf);
			char *dir = folder_of(path);
			char *out = NULL;
			if (dir && asprintf(&out, "%s/%s", dir, buf) < 0)
				out = NULL;
			free(dir);
			return out;
		}
	}
	return strdup(path);
}

int cli_out_check(const char *path)
{
	if (cli_out_is_stdout(path))
		return 0;
	if (!*path)
		return cli_fail("empty output file name"), -1;
	char *real = resolve(path);
	if (!real)
		return cli_fail("%s: out of memory", path), -1;
	struct stat st;
	int rc = 0;
	if (stat(real, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			rc = -1, cli_fail("%s: is a folder; give a file name",
					  path);
		else if (!S_ISREG(st.st_mode) && access(real, W_OK) != 0)
			rc = -1, cli_fail("%s: %s", path, strerror(errno));
	}
	if (rc == 0 && (stat(real, &st) != 0 || S_ISREG(st.st_mode))) {
		char *dir = folder_of(real);
		struct stat ds;
		if (!dir)
			rc = -1, cli_fail("%s: out of memory", path);
		else if (stat(dir, &ds) != 0)
			rc = -1, cli_fail("%s: folder %s: %s", path, dir,
					  strerror(errno));
		else if (!S_ISDIR(ds.st_mode))
			rc = -1, cli_fail("%s: %s is not a folder", path, dir);
		else if (access(dir, W_OK | X_OK) != 0)
			rc = -1, cli_fail("%s: cannot create files in %s: %s",
					  path, dir, strerror(errno));
		free(dir);
	}
	free(real);
	return rc;
}

int cli_out_open(struct cli_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->slot = -1;
	o->path = path ? path : "-";
	if (cli_out_is_stdout(path)) {
		o->f = stdout;
		return 0;
	}
	if (cli_out_check(path) < 0)
		return -1;
	char *real = resolve(path);
	if (!real)
		return cli_fail("%s: out of memory", path), -1;
	struct stat st;
	bool exists = stat(real, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device or FIFO: nothing to lose, nothing to rename */
		o->f = fopen(real, "w");
		free(real);
		if (!o->f)
			return cli_fail("%s: %s", path, strerror(errno)), -1;
		return 0;
	}
	char *dir = folder_of(real);
	const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	char *tmp = NULL;
	if (!dir || asprintf(&tmp, "%s/.%s.rtdiag-XXXXXX", dir, base) < 0) {
		free(dir);
		free(real);
		return cli_fail("%s: out of memory", path), -1;
	}
	free(dir);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		free(real);
		return cli_fail("%s: cannot create a file beside it: %s", path,
				strerror(e)), -1;
	}
	/* the mode the file would have got from open(): the old file's, or
	 * 0666 less the umask */
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		mode_t um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	if (fchmod(fd, mode) != 0) {
		/* not fatal: the data matters more than its mode */
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		free(real);
		return cli_fail("%s: %s", path, strerror(e)), -1;
	}
	o->tmp = tmp;
	o->final = real;
	o->slot = pending_add(tmp);
	return 0;
}

/* Flush and close o->f; returns 0 or the first errno seen. */
static int close_checked(struct cli_out *o)
{
	int e = 0;
	if (fflush(o->f) != 0)
		e = errno ? errno : EIO;
	if (ferror(o->f) && !e)
		e = EIO;
	if (o->f == stdout) {
		o->f = NULL;
		return e;
	}
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	return e;
}

static void forget(struct cli_out *o)
{
	pending_drop(o->slot);
	o->slot = -1;
	free(o->tmp);
	free(o->final);
	o->tmp = o->final = NULL;
}

int cli_out_commit(struct cli_out *o)
{
	if (!o->f)
		return 0;
	bool is_stdout = o->f == stdout;
	errno = 0;
	int e = close_checked(o);
	if (e) {
		bool had_tmp = o->tmp != NULL;
		if (had_tmp)
			unlink(o->tmp);
		forget(o);
		if (is_stdout)
			return cli_fail("stdout: %s", strerror(e)), -1;
		return cli_fail("%s: %s%s", o->path, strerror(e),
				had_tmp ? " (nothing written; an existing file "
					  "is unchanged)" : ""), -1;
	}
	if (o->tmp && rename(o->tmp, o->final) != 0) {
		e = errno;
		unlink(o->tmp);
		forget(o);
		return cli_fail("%s: %s", o->path, strerror(e)), -1;
	}
	forget(o);
	return 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o->f)
		return;
	if (o->f == stdout)
		fflush(stdout);
	else
		fclose(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	forget(o);
}
