/* SPDX-License-Identifier: MIT */
/*
 * test_maps.c - rtdiag's one reader of /proc/PID/maps (common/maps.c):
 * the line parser on good and bad lines, the streaming reader on a file
 * whose lines straddle its reads (line numbers counted on, a last line
 * without '\n', a bad line far in, a line over RTD_MAPS_LINE_MAX), and
 * this process's own maps.
 */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/common.h"

static int count_lines(const struct rtd_maps_entry *e, void *ctx)
{
	size_t *n = ctx;
	if (e->exec)
		n[0]++;
	n[1]++;
	return 0;
}

static void maps_text(void **state)
{
	(void)state;
	const char ok[] =
		"55d0c7a00000-55d0c7a02000 r--p 00000000 fd:01 1234 /usr/bin/x\n"
		"55d0c7a02000-55d0c7a08000 r-xp 00002000 fd:01 1234 /usr/bin/x\n"
		"7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n"
		"7f0000000000-7f0000001000 r-xp 00000000 00:01 77 /memfd:doublemapper (deleted)\n"
		"7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n";
	size_t n[2] = {0}, bad;
	assert_int_equal(rtd_maps_parse(ok, sizeof(ok) - 1, count_lines, n, &bad), 0);
	assert_int_equal(n[0], 3);
	assert_int_equal(n[1], 5);
	const char *bad_in[] = {
		"55d0c7a00000 r--p 00000000 fd:01 1234 /x\n", /* no end */
		"1000-2000 r-xp zz fd:01 1 /x\n",               /* offset */
		"1000-2000 r-xp 0 fd 1 /x\n",                   /* device */
		"2000-1000 r-xp 0 fd:01 1 /x\n",                /* end < start */
		"1000-2000 r-x\n",                              /* cut short */
		"11111111111111111-2000 r-xp 0 fd:01 1 /x\n",   /* 17 digits */
	};
	for (size_t i = 0; i < sizeof(bad_in) / sizeof(bad_in[0]); i++) {
		n[0] = n[1] = 0;
		assert_int_equal(rtd_maps_parse(bad_in[i], strlen(bad_in[i]),
						count_lines, n, &bad),
				 -RTD_E_FORMAT);
		assert_int_equal(bad, 1);
	}
}

/* A memfd holding @n lines of the maps format, line @bad (1-based, 0 for
 * none) broken, the last one without its '\n' when @cut. */
static int maps_file(size_t n, size_t bad, bool cut)
{
	int fd = memfd_create("maps", MFD_CLOEXEC);
	assert_true(fd >= 0);
	FILE *f = fdopen(dup(fd), "w");
	assert_non_null(f);
	for (size_t i = 1; i <= n; i++)
		fprintf(f, "%zx-%zx r-xp %s fd:01 %zu /usr/lib/lib%zu.so%s",
			i << 12, (i + 1) << 12, i == bad ? "zz" : "00000000", i, i,
			i == n && cut ? "" : "\n");
	fclose(f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

struct seen {
	size_t n;
	uint64_t last_ino;
	bool in_order;
};

static int on_seen(const struct rtd_maps_entry *e, void *ctx)
{
	struct seen *s = ctx;
	char want[64];
	int l = snprintf(want, sizeof(want), "/usr/lib/lib%zu.so", (size_t)e->ino);
	s->in_order &= e->ino == s->last_ino + 1 && e->start == e->ino << 12 &&
		       e->path_len == (size_t)l && !memcmp(e->path, want, (size_t)l) &&
		       !memcmp(e->perms, "r-xp", 4) && e->exec;
	s->last_ino = e->ino;
	s->n++;
	return 0;
}

static void stream_lines(void **state)
{
	(void)state;
	/* 20,000 lines (~1 MB): many reads, lines cut between them */
	struct seen s = {0, 0, true};
	size_t bad;
	int fd = maps_file(20000, 0, true);
	assert_int_equal(rtd_maps_read_fd(fd, on_seen, &s, &bad), 0);
	close(fd);
	assert_int_equal(s.n, 20000);
	assert_true(s.in_order);
	assert_int_equal(bad, 0);

	/* a bad line far in is named by its number in the whole file */
	s = (struct seen){0, 0, true};
	fd = maps_file(20000, 12345, false);
	assert_int_equal(rtd_maps_read_fd(fd, on_seen, &s, &bad), -RTD_E_FORMAT);
	close(fd);
	assert_int_equal(bad, 12345);
	assert_int_equal(s.n, 12344);
	assert_true(s.in_order);
}

static int stop_at_3(const struct rtd_maps_entry *e, void *ctx)
{
	(void)e;
	return ++*(size_t *)ctx == 3 ? 7 : 0;
}

static void stream_stop_and_cap(void **state)
{
	(void)state;
	size_t n = 0, bad;
	int fd = maps_file(100, 0, false);
	assert_int_equal(rtd_maps_read_fd(fd, stop_at_3, &n, &bad), 7);
	close(fd);
	assert_int_equal(n, 3);

	/* a line longer than the buffer: an error naming it, never a cut */
	fd = memfd_create("maps", MFD_CLOEXEC);
	assert_true(fd >= 0);
	const char *l1 = "1000-2000 r-xp 00000000 fd:01 1 /a\n1000-2000 r-xp 00000000 fd:01 1 /";
	assert_int_equal(write(fd, l1, strlen(l1)), (ssize_t)strlen(l1));
	char pad[1024];
	memset(pad, 'x', sizeof(pad));
	for (size_t i = 0; i < RTD_MAPS_LINE_MAX / sizeof(pad) + 1; i++)
		assert_int_equal(write(fd, pad, sizeof(pad)), (ssize_t)sizeof(pad));
	lseek(fd, 0, SEEK_SET);
	struct seen s = {0, 0, true};
	assert_int_equal(rtd_maps_read_fd(fd, on_seen, &s, &bad), -RTD_E_CAP);
	close(fd);
	assert_int_equal(s.n, 1);
	assert_int_equal(bad, 2);
}

struct own {
	uintptr_t code;
	bool code_exec, vdso;
};

static int on_own(const struct rtd_maps_entry *e, void *ctx)
{
	struct own *o = ctx;
	if (o->code >= e->start && o->code < e->end)
		o->code_exec = e->exec && e->path_len && e->path[0] == '/';
	if (e->path_len == 6 && !memcmp(e->path, "[vdso]", 6))
		o->vdso = true;
	return 0;
}

static void own_maps(void **state)
{
	(void)state;
	struct own o = {(uintptr_t)&own_maps, false, false};
	size_t bad;
	assert_int_equal(rtd_proc_maps(0, on_own, &o, &bad), 0);
	assert_true(o.code_exec);
	assert_true(o.vdso);
	o = (struct own){(uintptr_t)&own_maps, false, false};
	assert_int_equal(rtd_proc_maps(getpid(), on_own, &o, &bad), 0);
	assert_true(o.code_exec);
	assert_int_equal(rtd_proc_maps(-1, on_own, &o, &bad), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_text),
		cmocka_unit_test(stream_lines),
		cmocka_unit_test(stream_stop_and_cap),
		cmocka_unit_test(own_maps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
