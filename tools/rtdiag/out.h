/* SPDX-License-Identifier: MIT */
/*
 * out.h - output files that are never lost.
 *
 * A command that writes FILE checks it first (cli_out_check, before it
 * attaches to a process or reads its input), then writes to a temporary
 * file beside FILE (cli_out_open) and renames it into place only when it
 * has something to keep (cli_out_commit). A failure before that removes
 * the temporary file (cli_out_abort) and leaves an existing FILE exactly
 * as it was: a failed command never truncates, and never leaves a 0-byte
 * file behind. A partial result worth keeping (a trace from a target that
 * died) is committed like a whole one.
 *
 * "-" means standard output. A FILE that exists and is not a regular
 * file (/dev/null, a FIFO, a terminal) is written in place: it has no
 * contents to lose and cannot be replaced by a rename. A symbolic link is
 * followed, so the file it names is replaced and the link stays.
 *
 * A temporary file is removed at exit() and on SIGINT/SIGTERM/SIGHUP/
 * SIGPIPE when the command has not installed a handler of its own (a
 * command that has, stops, and commits or aborts itself).
 */
#ifndef RTD_CLI_OUT_H
#define RTD_CLI_OUT_H

#include <stdbool.h>
#include <stdio.h>

/**
 * struct cli_out - one output being written
 * @f: where to write, valid between cli_out_open() and commit/abort
 * @path: the destination as the user gave it ("-" for stdout)
 */
struct cli_out {
	FILE *f;
	const char *path;
	/* private */
	char *final;   /* resolved destination, or NULL for stdout/in place */
	char *tmp;     /* temporary file beside it, or NULL */
	int slot;      /* index in the cleanup table, or -1 */
};

/*
 * Can PATH be written? Its folder exists and is writable, and PATH is not
 * a folder. Nothing is created. On failure prints "rtdiag: PATH: why" and
 * returns -1; returns 0 when it can ("-" always can).
 */
int cli_out_check(const char *path);

/*
 * Open PATH for writing through a temporary file beside it (or stdout for
 * "-"; in place for a device or FIFO). On failure prints the error and
 * returns -1; returns 0 with o->f ready.
 */
int cli_out_open(struct cli_out *o, const char *path);

/*
 * Flush and close what was written and rename it into place. A write
 * error (disk full, EIO) found here is reported against PATH, the
 * temporary file is removed and any old PATH is left as it was.
 * Returns 0, or -1 after printing the error.
 */
int cli_out_commit(struct cli_out *o);

/* Close and remove the temporary file; an existing PATH stays as it was.
 * Does nothing when nothing is open. */
void cli_out_abort(struct cli_out *o);

/* Is PATH standard output ("-" or NULL)? */
bool cli_out_is_stdout(const char *path);

#endif /* RTD_CLI_OUT_H */
