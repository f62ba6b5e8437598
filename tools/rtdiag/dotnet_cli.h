/* SPDX-License-Identifier: MIT */
/* dotnet_cli.h - what the files of 'rtdiag dotnet' share. */
#ifndef RTD_DOTNET_CLI_H
#define RTD_DOTNET_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "opt.h"
#include "rtdiag/ipc.h"

extern volatile int dn_stop_flag;
/* SIGINT/SIGTERM set dn_stop_flag (and interrupt poll()). */
void dn_catch_signals(void);

/*
 * The target of a command: -p PID, -n NAME or --socket PATH. Every
 * command's option table lists them with DN_TARGET_OPTS; its option loop
 * hands the ids to dn_target_opt(), then dn_target_resolve() turns a name
 * into a pid and checks that one target was given.
 */
enum { DN_OPT_PID = 1000, DN_OPT_NAME, DN_OPT_SOCKET };
#define DN_TARGET_OPTS                                                         \
	{DN_OPT_PID, "process-id", 'p', CLI_ARG_INT, 0, "PID",                 \
	 "the .NET process", 1, 2147483647},                                   \
	{DN_OPT_PID, "pid", 0, CLI_ARG_INT, CLI_OPT_HIDDEN, "PID",             \
	 "perf's name for --process-id", 1, 2147483647},                       \
	{DN_OPT_NAME, "name", 'n', CLI_ARG_STR, 0, "NAME",                     \
	 "the .NET process of that name (its comm, executable or main "        \
	 "assembly; one must match)", 0, 0},                                   \
	{DN_OPT_SOCKET, "socket", 0, CLI_ARG_STR, 0, "PATH",                   \
	 "its diagnostic socket, instead of -p/-n", 0, 0}

struct dn_target {
	pid_t pid;
	const char *name;
	const char *socket;
};

/* Take -p/-n/--socket; false for any other option id. */
bool dn_target_opt(int id, const struct cli_val *v, struct dn_target *t);
/* Resolve -n to a pid; with @required, refuse no target. Prints the
 * error; returns -1 to go on, or an exit code. */
int dn_target_resolve(const struct cli_cmd *cmd, struct dn_target *t,
		      bool required);
/* A client for the target; prints the error and returns NULL. */
rtd_ipc_client *dn_connect(const struct dn_target *t, int timeout_ms,
			   FILE *record);
/* Print the client's last error; returns CLI_FAIL. */
int dn_fail(rtd_ipc_client *c, int rc);
/* The name rtdiag shows for a process (its main assembly for 'dotnet
 * X.dll', else its comm), into buf. */
const char *dn_proc_name(pid_t pid, char *buf, size_t len);

extern const struct cli_cmd dn_cmd_collect, dn_cmd_profile, dn_cmd_replay,
	dn_cmd_stack, dn_cmd_counters, dn_cmd_gcdump;

#endif
