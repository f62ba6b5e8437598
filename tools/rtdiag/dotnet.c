/* SPDX-License-Identifier: MIT */
/* dotnet.c - the 'rtdiag dotnet' command group (placeholder until it lands). */
#include "cli.h"

static const char *const subs[] = {"ps", "info", "env", "setenv", "resume", "perfmap", "startup-hook", "attach-profiler", "dump", "stop", "listen", "collect", "profile", NULL};

static int run(int argc, char **argv)
{
	return cli_unbuilt_run("dotnet", subs, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_unbuilt_help(f, "dotnet", subs, sub);
}

const struct cli_group cli_group_dotnet = {"dotnet", ".NET diagnostics IPC: ps, info, collect, profile, dump, ...", run, help};
