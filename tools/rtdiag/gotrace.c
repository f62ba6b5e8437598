/* SPDX-License-Identifier: MIT */
/* gotrace.c - the 'rtdiag gotrace' command group (placeholder until it lands). */
#include "cli.h"

static const char *const subs[] = {"cat", "grep", "stats", "text2bin", "bin2text", NULL};

static int run(int argc, char **argv)
{
	return cli_unbuilt_run("gotrace", subs, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_unbuilt_help(f, "gotrace", subs, sub);
}

const struct cli_group cli_group_gotrace = {"gotrace", "Go execution traces: cat, grep, stats, text2bin, bin2text", run, help};
