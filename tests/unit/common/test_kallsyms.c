/* SPDX-License-Identifier: MIT */
/*
 * test_kallsyms.c - rtdiag's one reader of /proc/kallsyms
 * (common/kallsyms.c): the line parser on good and bad lines (a module's
 * symbol, a hidden address, a stop), the streaming reader on a file whose
 * lines straddle its reads (line numbers counted on, a bad line far in, a
 * line over RTD_KALLSYMS_LINE_MAX), and the kernel's own file.
 */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "rtdiag/common.h"

struct seen {
	size_t n, mods, hidden, last_line;
	char first[64], last_mod[64];
	uint64_t sum;
	size_t stop_at;
};

static int see(const struct rtd_ksym *k, void *ctx)
{
	struct seen *s = ctx;
	if (!s->n)
		snprintf(s->first, sizeof(s->first), "%c %.*s", k->type, (int)k->name_len,
			 k->name);
	s->n++;
	s->sum += k->addr;
	s->hidden += !k->addr;
	if (k->mod) {
		s->mods++;
		snprintf(s->last_mod, sizeof(s->last_mod), "%.*s", (int)k->mod_len, k->mod);
	}
	assert_true(k->line > s->last_line); /* counted on, in order */
	s->last_line = k->line;
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static void kallsyms_text(void **state)
{
	(void)state;
	const char ok[] = "ffffffff81000000 T _text\n"
			  "\n"
			  "0000000000000000 D hidden\n"
			  "ffffffffc0001000 t mod_fn\t[ext4]\n"
			  "ffffffffc0002000 t other\t[nf_tables]";
	struct seen s = {0};
	size_t bad = 9;
	assert_int_equal(rtd_kallsyms_parse(ok, sizeof(ok) - 1, see, &s, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(s.n, 4); /* the empty line skipped */
	assert_string_equal(s.first, "T _text");
	assert_int_equal(s.hidden, 1);
	assert_int_equal(s.mods, 2);
	assert_string_equal(s.last_mod, "nf_tables");
	assert_int_equal(s.last_line, 5);
	/* a stop is returned, the lines after it not given */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(rtd_kallsyms_parse(ok, sizeof(ok) - 1, see, &s, &bad), 7);
	assert_int_equal(s.n, 2);
	const char *bad_in[] = {
		"zz T x\n",                          /* address */
		"ffffffff81000000 T\n",              /* no name */
		"ffffffff81000000 TT x\n",           /* type */
		"ffffffff81000000 t x\t[ext4\n",     /* module not closed */
		"ffffffff81000000 t x\tjunk\n",      /* not a module */
		"11111111111111111 T x\n",           /* 17 digits */
	};
	for (size_t i = 0; i < sizeof(bad_in) / sizeof(bad_in[0]); i++) {
		memset(&s, 0, sizeof(s));
		char in[64];
		int l = snprintf(in, sizeof(in), "ffffffff81000000 T ok\n%s", bad_in[i]);
		assert_int_equal(rtd_kallsyms_parse(in, (size_t)l, see, &s, &bad), -RTD_E_FORMAT);
		assert_int_equal(bad, 2);
		assert_int_equal(s.n, 1); /* the line before it was given */
	}
}

/* A temporary file of @n lines, line @bad (1-based, 0: none) broken and
 * line @longl (0: none) longer than RTD_KALLSYMS_LINE_MAX; its path in @path. */
static void write_file(char *path, size_t n, size_t bad, size_t longl)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	for (size_t i = 1; i <= n; i++) {
		if (i == bad)
			fputs("not a line\n", f);
		else if (i == longl) {
			fputs("ffffffff81000000 T ", f);
			for (unsigned k = 0; k < RTD_KALLSYMS_LINE_MAX; k++)
				fputc('x', f);
			fputc('\n', f);
		} else {
			fprintf(f, "%016zx %c fn_%zu%s\n", 0xffffffff81000000u + 16 * i,
				i % 3 ? 'T' : 't', i, i % 7 ? "" : "\t[mod]");
		}
	}
	assert_int_equal(fclose(f), 0);
}

static void stream(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-test-kallsyms-XXXXXX";
	const size_t n = 50000; /* ~1.5 MB: many reads of the 8 KB buffer */
	write_file(path, n, 0, 0);
	struct seen s = {0};
	size_t bad = 9;
	assert_int_equal(rtd_kallsyms_read(path, see, &s, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(s.n, n);
	assert_int_equal(s.last_line, n);
	assert_int_equal(s.mods, n / 7);
	uint64_t want = 0;
	for (size_t i = 1; i <= n; i++)
		want += 0xffffffff81000000u + 16 * i;
	assert_true(s.sum == want);
	unlink(path);

	/* a bad line far in: named, the lines before it given */
	char p2[] = "/tmp/rtd-test-kallsyms-XXXXXX";
	write_file(p2, n, 31337, 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rtd_kallsyms_read(p2, see, &s, &bad), -RTD_E_FORMAT);
	assert_int_equal(bad, 31337);
	assert_int_equal(s.n, 31336);
	unlink(p2);

	/* a line longer than the buffer: -RTD_E_CAP, named */
	char p3[] = "/tmp/rtd-test-kallsyms-XXXXXX";
	write_file(p3, 100, 0, 42);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rtd_kallsyms_read(p3, see, &s, &bad), -RTD_E_CAP);
	assert_int_equal(bad, 42);
	assert_int_equal(s.n, 41);
	unlink(p3);

	assert_int_equal(rtd_kallsyms_read("/nonexistent/kallsyms", see, &s, &bad), -ENOENT);
}

/* The kernel's own: every line well-formed, _text among the first. */
static void own_kallsyms(void **state)
{
	(void)state;
	struct seen s = {0};
	size_t bad;
	int rc = rtd_kallsyms_read(NULL, see, &s, &bad);
	if (rc == -ENOENT || rc == -EACCES)
		skip();
	assert_int_equal(rc, 0);
	assert_true(s.n > 1000);
	printf("# /proc/kallsyms: %zu lines, %zu of modules, %zu hidden\n", s.n, s.mods,
	       s.hidden);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms_text),
		cmocka_unit_test(stream),
		cmocka_unit_test(own_kallsyms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
