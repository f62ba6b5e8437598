/* SPDX-License-Identifier: MIT */
/*
 * rtdiag - read what running programs say about themselves.
 *
 * main.c only dispatches: the command groups are registered in one table
 * and each lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opt.h"
#include "rtdiag/common.h"

static const struct cli_group *const groups[] = {
	&cli_group_dotnet,
	&cli_group_nettrace,
	&cli_group_perf,
	&cli_group_gotrace,
	&cli_group_agent,
	&cli_group_convert,
	&cli_group_record,
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static const struct cli_group *find_group(const char *name)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if (strcmp(groups[i]->name, name) == 0)
			return groups[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rtdiag [--version] [--help] COMMAND [ARGS]\n\n"
		   "rtdiag reads what running programs say about themselves:\n"
		   ".NET diagnostics and EventPipe, Linux perf_event, Go "
		   "execution traces.\n\ncommands:\n");
	for (size_t i = 0; i < NGROUPS; i++)
		fprintf(f, "  %-10s %s\n", groups[i]->name, groups[i]->summary);
	fprintf(f, "\n'rtdiag help COMMAND [SUBCOMMAND]' tells more about one.\n");
}

/* "no command 'X'" with the commands there are, and where to read on. */
static int no_command(const char *name)
{
	fprintf(stderr, "rtdiag: no command '%s' (commands:", name);
	for (size_t i = 0; i < NGROUPS; i++)
		fprintf(stderr, "%s %s", i ? "," : "", groups[i]->name);
	fprintf(stderr, ")\nTry 'rtdiag --help'.\n");
	return CLI_USAGE;
}

static int do_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--options") == 0) {
		/* every command's option table, as data (docs/options.md) */
		for (size_t i = 0; i < NGROUPS; i++)
			for (const struct cli_cmd *const *c = groups[i]->cmds();
			     *c; c++)
				cli_cmd_dump_opts(stdout, *c);
		return CLI_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		printf("usage: rtdiag help [COMMAND [SUBCOMMAND]]\n\n"
		       "Tells what a command does and which options it takes; "
		       "without a COMMAND,\nlists the commands. "
		       "'rtdiag COMMAND SUBCOMMAND --help' tells the same.\n");
		return CLI_OK;
	}
	const struct cli_group *g = find_group(argv[1]);
	if (!g)
		return no_command(argv[1]);
	if (!g->help(stdout, argc > 2 ? argv[2] : NULL)) {
		fprintf(stderr, "rtdiag: '%s' has no subcommand '%s'\n"
				"Try 'rtdiag help %s'.\n", argv[1], argv[2], argv[1]);
		return CLI_USAGE;
	}
	return CLI_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	const char *cmd = argv[1];
	if (cli_is_help(cmd)) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("rtdiag %s\n", rtd_version());
		return CLI_OK;
	}
	if (strcmp(cmd, "help") == 0)
		return do_help(argc - 1, argv + 1);
	const struct cli_group *g = find_group(cmd);
	if (!g)
		return no_command(cmd);
	if (argc > 2 && cli_is_help(argv[2])) {
		g->help(stdout, NULL);
		return CLI_OK;
	}
	return g->run(argc - 1, argv + 1);
}
