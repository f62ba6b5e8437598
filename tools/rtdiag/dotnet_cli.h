/* SPDX-License-Identifier: MIT */
/* dotnet_cli.h - what the files of 'rtdiag dotnet' share. */
#ifndef RTD_DOTNET_CLI_H
#define RTD_DOTNET_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/ipc.h"

extern volatile int dn_stop_flag;
/* SIGINT/SIGTERM set dn_stop_flag (and interrupt poll()). */
void dn_catch_signals(void);
int dn_parse_pid(const char *cmd, const char *s, pid_t *pid);
/* A client for -p PID or --socket PATH; prints the error and returns NULL. */
rtd_ipc_client *dn_client(pid_t pid, const char *socket, int timeout_ms);
/* Print the client's last error; returns CLI_FAIL. */
int dn_fail(rtd_ipc_client *c, int rc);
bool dn_help(FILE *f, const char *sub);
void dn_collect_help(FILE *f, const char *sub);
int dn_cmd_collect(int argc, char **argv);
int dn_cmd_profile(int argc, char **argv);
int dn_cmd_replay(int argc, char **argv);

#endif
