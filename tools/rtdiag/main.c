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
#include "rtdiag/common.h"

static const struct cli_group *const groups[] = {
	&cli_group_dotnet,
	&cli_group_nettrace,
	&cli_group_perf,
	&cli_group_gotrace,
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

static int do_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return CLI_OK;
	}
	const struct cli_group *g = find_group(argv[1]);
	if (!g)
		return cli_usage("help", "no command '%s'", argv[1]);
	if (!g->help(stdout, argc > 2 ? argv[2] : NULL))
		return cli_usage("help", "no command '%s %s'", argv[1], argv[2]);
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
	if (!g) {
		fprintf(stderr, "rtdiag: '%s' is not a command\n"
				"Try 'rtdiag --help'.\n", cmd);
		return CLI_USAGE;
	}
	if (argc > 2 && cli_is_help(argv[2])) {
		g->help(stdout, NULL);
		return CLI_OK;
	}
	return g->run(argc - 1, argv + 1);
}
