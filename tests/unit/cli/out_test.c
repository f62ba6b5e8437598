/* SPDX-License-Identifier: MIT */
/* Output files: an existing file is never lost to a failed command. */
#include "test_util.h"

#include <dirent.h>
#include <sys/stat.h>

#include "cli.h"
#include "out.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/rtd-out.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in(const char *name)
{
	static char buf[4][512];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Entries in the folder, . and .. aside: no temporary file is left. */
static int entries(void)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void commit_new_and_replace(void **state)
{
	(void)state;
	const char *p = path_in("new.txt");
	struct cli_out o;
	assert_int_equal(cli_out_open(&o, p), 0);
	fputs("hello\n", o.f);
	/* nothing at PATH until the commit */
	assert_null(get(p));
	assert_int_equal(cli_out_commit(&o), 0);
	assert_string_equal(get(p), "hello\n");
	assert_int_equal(entries(), 1);
	/* replacing keeps the old mode and the old text until the commit */
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(cli_out_open(&o, p), 0);
	fputs("second\n", o.f);
	fflush(o.f);
	assert_string_equal(get(p), "hello\n");
	assert_int_equal(cli_out_commit(&o), 0);
	assert_string_equal(get(p), "second\n");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(entries(), 1);
}

static void abort_keeps_old(void **state)
{
	(void)state;
	const char *p = path_in("keep.txt");
	put(p, "precious\n");
	struct cli_out o;
	assert_int_equal(cli_out_open(&o, p), 0);
	fputs("garbage", o.f);
	cli_out_abort(&o);
	assert_string_equal(get(p), "precious\n");
	/* a new file that is aborted does not appear, not even empty */
	const char *q = path_in("never.txt");
	assert_int_equal(cli_out_open(&o, q), 0);
	cli_out_abort(&o);
	assert_null(get(q));
	cli_out_abort(&o); /* twice: nothing */
	assert_int_equal(entries(), 1);
}

static void checks(void **state)
{
	(void)state;
	assert_int_equal(cli_out_check("-"), 0);
	assert_int_equal(cli_out_check(path_in("fine.txt")), 0);
	assert_int_equal(cli_out_check(dir), -1);                 /* a folder */
	assert_int_equal(cli_out_check(path_in("no/such/x")), -1); /* no folder */
	assert_int_equal(cli_out_check(""), -1);
	struct cli_out o;
	assert_int_equal(cli_out_open(&o, path_in("no/such/x")), -1);
	assert_null(o.f);
	assert_int_equal(entries(), 0);
}

static void device_in_place(void **state)
{
	(void)state;
	struct cli_out o;
	/* /dev/null: written in place, nothing renamed over it */
	assert_int_equal(cli_out_open(&o, "/dev/null"), 0);
	fputs("x", o.f);
	assert_int_equal(cli_out_commit(&o), 0);
	struct stat st;
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* /dev/full: the write error is found and reported at commit */
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(cli_out_open(&o, "/dev/full"), 0);
		for (int i = 0; i < 10000; i++)
			fputs("0123456789", o.f);
		assert_int_equal(cli_out_commit(&o), -1);
	}
}

static void symlink_followed(void **state)
{
	(void)state;
	const char *target = path_in("target.txt");
	const char *link = path_in("link.txt");
	put(target, "old\n");
	assert_int_equal(symlink("target.txt", link), 0);
	struct cli_out o;
	assert_int_equal(cli_out_open(&o, link), 0);
	fputs("new\n", o.f);
	assert_int_equal(cli_out_commit(&o), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* the link is still a link */
	assert_string_equal(get(target), "new\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(commit_new_and_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(abort_keeps_old, setup, teardown),
		cmocka_unit_test_setup_teardown(checks, setup, teardown),
		cmocka_unit_test_setup_teardown(device_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_followed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
