/* SPDX-License-Identifier: MIT */
/* The CLI's option layer: value forms, the parser's rules and messages. */
#include "test_util.h"

#include <math.h>

#include "cli.h"
#include "opt.h"

static void durations(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		double sec;
	} ok[] = {
		{"1.5", 1.5},        {"1.5s", 1.5},     {"200ms", 0.2},
		{"10us", 1e-5},      {"250ns", 2.5e-7}, {"2m", 120},
		{"3min", 180},       {"1h", 3600},      {"0", 0},
		{"00:00:01.5", 1.5}, {"1:02:03", 3723}, {"01:30", 90},
		{"1:00:00:00", 86400}, {".5", 0.5},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double d = -1;
		int64_t ns = -1;
		assert_int_equal(cli_parse_duration(ok[i].s, &d, &ns), 0);
		assert_true(fabs(d - ok[i].sec) < 1e-12);
		assert_true(llabs(ns - (int64_t)llround(ok[i].sec * 1e9)) == 0);
	}
	static const char *const bad[] = {"", "abc", "1.5x", "-1", "1:2.5:3",
					  "1:2:3:4:5", "1:", ":5", "1e9", "1e999",
					  "5 s", "nan", "inf", "99999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double d;
		assert_int_equal(cli_parse_duration(bad[i], &d, NULL), -1);
	}
}

static void sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{"4096", 4096},          {"64k", 65536},        {"64K", 65536},
		{"8M", 8u << 20},        {"1G", 1u << 30},      {"1KiB", 1024},
		{"2MB", 2u << 20},       {"1.5k", 1536},        {"100B", 100},
		{"1T", 1ull << 40},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 0;
		assert_int_equal(cli_parse_size(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
	static const char *const bad[] = {"", "k", "1.5", "12q", "-4", "1kk",
					  "0x10"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v;
		assert_int_equal(cli_parse_size(bad[i], &v), -1);
	}
}

enum { O_OUT = 1, O_DUR, O_VERB, O_COUNT, O_EV, O_PID, O_FMT, O_MEM, O_NUM };
static const struct cli_opt opts[] = {
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE", "write to FILE", 0, 0},
	{O_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME", 0, 0},
	{O_VERB, "verbose", 'v', CLI_ARG_NONE, CLI_OPT_REPEAT, NULL, "more", 0, 0},
	{O_COUNT, "count", 'c', CLI_ARG_NONE, 0, NULL, "count only", 0, 0},
	{O_EV, "event", 'e', CLI_ARG_STR, CLI_OPT_REPEAT, "NAME", "an event", 0, 0},
	{O_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID", "processes", 0, 0},
	{O_FMT, "format", 'f', CLI_ARG_CHOICE, 0, "text|json|go-debug", "format", 0, 0},
	{O_MEM, "mmap-pages", 'm', CLI_ARG_SIZE, 0, "N", "ring size", 0, 0},
	{O_NUM, "freq", 'F', CLI_ARG_INT, 0, "HZ", "frequency", 1, 10000},
	{0, NULL, 0, CLI_ARG_NONE, 0, NULL, NULL, 0, 0},
};
static const struct cli_cmd cmd = {"test cmd", "FILE", "A test command.",
				   opts, 1, 1, 0, NULL, NULL};
static const struct cli_cmd cmd_run = {"test run", NULL, "Starts things.",
				       opts, 0, 0, CLI_CMD_COMMAND, NULL, NULL};

struct result {
	int rc; /* last cli_opt_next result */
	int ids[16];
	struct cli_val vals[16];
	int n;
	struct cli_parser p;
};

static void parse(struct result *r, const struct cli_cmd *c, int argc,
		  char **argv)
{
	memset(r, 0, sizeof(*r));
	cli_opt_init(&r->p, c, argc, argv);
	while ((r->rc = cli_opt_next(&r->p, &r->vals[r->n])) > 0) {
		r->ids[r->n] = r->rc;
		r->n++;
		assert_true(r->n < 16);
	}
}

#define ARGV(...) ((char *[]){"cmd", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"cmd", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(r, c, ...) parse(r, c, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void long_short_attached(void **state)
{
	(void)state;
	struct result r;
	PARSE(&r, &cmd, "--output", "a.txt", "FILE", "-d", "1.5s", "--format=json",
	      "-ob.txt", "-vvc", "--mmap-pages=64k", "-F99");
	/* -o twice is refused: run without the second */
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "--output", "a.txt", "FILE", "-d", "1.5s", "--format=json",
	      "-vvc", "--mmap-pages=64k", "-F99", "-e", "x", "--event=y");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.n, 10);
	assert_int_equal(r.ids[0], O_OUT);
	assert_string_equal(r.vals[0].str, "a.txt");
	assert_int_equal(r.ids[1], O_DUR);
	assert_true(fabs(r.vals[1].d - 1.5) < 1e-12);
	assert_int_equal(r.ids[2], O_FMT);
	assert_int_equal(r.vals[2].i, 1);
	assert_int_equal(r.ids[3], O_VERB);
	assert_int_equal(r.ids[4], O_VERB);
	assert_int_equal(r.ids[5], O_COUNT);
	assert_int_equal(r.ids[6], O_MEM);
	assert_true(r.vals[6].u == 65536);
	assert_int_equal(r.ids[7], O_NUM);
	assert_int_equal(r.vals[7].i, 99);
	assert_int_equal(r.ids[8], O_EV);
	assert_string_equal(r.vals[8].str, "x");
	assert_string_equal(r.vals[9].str, "y");
	assert_int_equal(r.p.npos, 1);
	assert_string_equal(r.p.pos[0], "FILE");
}

static void errors(void **state)
{
	(void)state;
	struct result r;
	PARSE(&r, &cmd, "FILE", "--nope");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "--formt", "json"); /* suggestion printed */
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-o");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "--duration", "0");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "--duration", "soon");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "--format", "xml");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-F", "0");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-F", "20000");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "--count=1");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-x");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-p", "12,x");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "FILE", "-p", "0");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	/* positional counts */
	PARSE(&r, &cmd, "-c");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd, "A", "B");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd_run, "stray");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
	PARSE(&r, &cmd_run, "--");
	assert_int_equal(r.rc, CLI_OPT_USAGE);
}

static void pids_and_positionals(void **state)
{
	(void)state;
	struct result r;
	PARSE(&r, &cmd, "-p", "12,34,56", "-");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.ids[0], O_PID);
	assert_int_equal((int)r.vals[0].npids, 3);
	assert_int_equal(r.vals[0].pids[2], 56);
	assert_string_equal(r.p.pos[0], "-"); /* stdin is an argument */
	/* after "--" without a command: positionals, even "-x" */
	PARSE(&r, &cmd, "--", "-odd-name");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.p.npos, 1);
	assert_string_equal(r.p.pos[0], "-odd-name");
	/* a command to start: everything after "--" is its own */
	PARSE(&r, &cmd_run, "-d", "2", "--", "ls", "-l", "--output", "x");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.p.nrest, 4);
	assert_string_equal(r.p.rest[0], "ls");
	assert_string_equal(r.p.rest[2], "--output");
}

static void help(void **state)
{
	(void)state;
	struct result r;
	PARSE(&r, &cmd, "--help");
	assert_int_equal(r.rc, CLI_OPT_HELP);
	assert_int_equal(cli_opt_exit(r.rc), CLI_OK);
	PARSE(&r, &cmd, "FILE", "-h");
	assert_int_equal(r.rc, CLI_OPT_HELP);
	assert_int_equal(cli_opt_exit(CLI_OPT_USAGE), CLI_USAGE);
	/* the help text comes from the table */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_cmd_help(f, &cmd);
	fclose(f);
	assert_non_null(strstr(buf, "usage: rtdiag test cmd [OPTIONS] FILE"));
	assert_non_null(strstr(buf, "-o, --output FILE"));
	assert_non_null(strstr(buf, "-e, --event NAME"));
	assert_non_null(strstr(buf, "(repeatable)"));
	assert_non_null(strstr(buf, "A test command."));
	free(buf);
}

/* Old spellings (docs/options.md): the id of the option they stand for,
 * hidden from help; a was-flag option alone has no value. */
enum { O_TOP = 1, O_NAME };
static const struct cli_opt old_opts[] = {
	{O_NAME, "name", 'n', CLI_ARG_STR, 0, "NAME", "a process", 0, 0},
	{O_TOP, "top", 0, CLI_ARG_INT, CLI_OPT_WAS_FLAG, "N", "rows", 1, 100},
	CLI_OLD(O_TOP, "limit", 'N', CLI_ARG_INT, 0, "N", "--top N", 1, 100),
	{0, NULL, 0, CLI_ARG_NONE, 0, NULL, NULL, 0, 0},
};
static const struct cli_cmd cmd_old = {"test old", NULL, "Old ones.",
				       old_opts, 0, 1, 0, NULL, NULL};

static void old_spellings(void **state)
{
	(void)state;
	struct result r;
	PARSE(&r, &cmd_old, "-N", "7");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.ids[0], O_TOP);
	assert_int_equal((int)r.vals[0].i, 7);
	PARSE(&r, &cmd_old, "--limit=8");
	assert_int_equal(r.ids[0], O_TOP);
	assert_int_equal((int)r.vals[0].i, 8);
	/* --top N now; --top alone as it was, then the positional */
	PARSE(&r, &cmd_old, "--top", "9");
	assert_int_equal(r.n, 1);
	assert_string_equal(r.vals[0].str, "9");
	PARSE(&r, &cmd_old, "--top", "FILE");
	assert_int_equal(r.rc, CLI_OPT_DONE);
	assert_int_equal(r.ids[0], O_TOP);
	assert_null(r.vals[0].str);
	assert_int_equal(r.p.npos, 1);
	PARSE(&r, &cmd_old, "--top", "-n", "x");
	assert_int_equal(r.n, 2);
	assert_null(r.vals[0].str);
	assert_string_equal(r.vals[1].str, "x");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_cmd_help(f, &cmd_old);
	cli_cmd_dump_opts(f, &cmd_old);
	fclose(f);
	assert_null(strstr(buf, "--limit N")); /* not in the help */
	assert_non_null(strstr(buf, "test old\t-N\t--limit\tint\thidden,old\tN\t--top N\n"));
	assert_non_null(strstr(buf, "test old\t-\t--top\tint\twas-flag\tN\n"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),
		cmocka_unit_test(sizes),
		cmocka_unit_test(long_short_attached),
		cmocka_unit_test(errors),
		cmocka_unit_test(pids_and_positionals),
		cmocka_unit_test(help),
		cmocka_unit_test(old_spellings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
