/* SPDX-License-Identifier: MIT */
/*
 * flight_cli.h - 'rtdiag record --ring': the flight recorder's command
 * (flight.c), reached from 'rtdiag record' when --ring is given.
 */
#ifndef RTD_FLIGHT_CLI_H
#define RTD_FLIGHT_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Does ARGV ask for the flight recorder (a --ring option)? */
bool flight_wanted(int argc, char **argv);

/* Print the flight recorder's help (after record's own). */
void flight_help(FILE *f);

/* Run 'rtdiag record --ring ...'; returns the exit code. */
int flight_main(int argc, char **argv);

#endif /* RTD_FLIGHT_CLI_H */
