/* SPDX-License-Identifier: MIT */
/* perf.c - the 'rtdiag perf' command group (placeholder until it lands). */
#include "cli.h"

static const char *const subs[] = {"trace", "stat", "list", NULL};

static int run(int argc, char **argv)
{
	return cli_unbuilt_run("perf", subs, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_unbuilt_help(f, "perf", subs, sub);
}

const struct cli_group cli_group_perf = {"perf", "Linux perf_event: trace, stat, list", run, help};
