/* SPDX-License-Identifier: MIT */
/* nettrace.c - the 'rtdiag nettrace' command group (placeholder until it lands). */
#include "cli.h"

static const char *const subs[] = {"cat", "stats", "profile", NULL};

static int run(int argc, char **argv)
{
	return cli_unbuilt_run("nettrace", subs, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_unbuilt_help(f, "nettrace", subs, sub);
}

const struct cli_group cli_group_nettrace = {"nettrace", "EventPipe streams: cat, stats, profile", run, help};
