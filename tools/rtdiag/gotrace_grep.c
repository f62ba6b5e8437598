/* SPDX-License-Identifier: MIT */
/* gotrace_grep.c - 'rtdiag gotrace grep', 'text2bin', 'bin2text'. */
#include "cli.h"
#include "gotrace_cli.h"

int gt_cmd_grep(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail("gotrace grep: not built yet in this version");
}

int gt_cmd_text2bin(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail("gotrace text2bin: not built yet in this version");
}

int gt_cmd_bin2text(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail("gotrace bin2text: not built yet in this version");
}
