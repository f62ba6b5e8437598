/* SPDX-License-Identifier: MIT */
/*
 * cli_format.h - the output format of any command that writes a profile or
 * a timeline, picked once for every command: --format NAME, else the -o
 * file's extension by the library's one table (rtdiag/format.h: .svg,
 * .speedscope.json, .pb.gz, .folded, .txt, .perfetto-trace/.pftrace,
 * .json), else the command's default; then
 * written through out.h's safe output files.
 *
 * A command that makes a profile:
 *
 *	struct cli_format f;
 *	if (cli_format_pick("nettrace profile", fmt_opt, out_opt,
 *			    CLI_FMT_PROFILE, "folded", &f))
 *		return CLI_USAGE;
 *	... build the profile ...
 *	return cli_write_profile(prof, &f, out_opt, NULL);
 *
 * A command that makes a timeline opens a sink, feeds the timeline (or a
 * source adapter, rtd_tl_*), and closes it:
 *
 *	struct cli_timeline t;
 *	if (cli_timeline_open(&t, &f, out_opt)) return CLI_FAIL;
 *	... rtd_timeline_begin(t.tl, ...) ...
 *	return cli_timeline_close(&t, ok);
 */
#ifndef RTD_CLI_FORMAT_H
#define RTD_CLI_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "out.h"
#include "rtdiag/profile.h"
#include "rtdiag/timeline.h"

/* What a command can write (a mask for cli_format_pick). */
enum {
	CLI_FMT_PROFILE = 1u << 0,  /* folded, pprof, top, svg, speedscope */
	CLI_FMT_TIMELINE = 1u << 1, /* perfetto, chrome-json */
};

struct cli_format {
	unsigned kind; /* CLI_FMT_PROFILE or CLI_FMT_TIMELINE */
	enum rtd_profile_format prof;
	enum rtd_timeline_format tl;
};

/* The names --format takes for a mask, "folded|pprof|...", for help. */
const char *cli_format_names(unsigned allow);

/*
 * The format PATH's extension names, by the library's one table
 * (rtd_format_ext_of(); ".json" is Chrome JSON, ".speedscope.json"
 * speedscope, ".txt" a top table). Returns 0 with OUT->kind set, or 0
 * with OUT->kind 0 when PATH is NULL, "-" or has no extension the table
 * knows (the default applies); an extension of a format rtdiag does not
 * draw (".png") or whose format is not in ALLOW prints a usage error
 * naming CMD and returns -1.
 */
int cli_format_ext(const char *cmd, const char *path, unsigned allow,
		   struct cli_format *out);

/*
 * A command that writes a recording in its own format (a nettrace, a Go
 * trace) to PATH: refused, with a usage error naming CMD and WHAT it
 * writes, when PATH's extension names a picture or a timeline
 * (rtd_format_ext_of()): a recording under such a name would pass for
 * what it is not. Returns 0, or -1 after the message.
 */
int cli_format_recording(const char *cmd, const char *path, const char *what);

/*
 * Pick the format: NAME (--format, may be NULL), else PATH's extension
 * (cli_format_ext(): refused when it names a format outside ALLOW or
 * none), else DFLT (a name). On a bad or unfitting name prints a usage
 * error naming CMD and returns -1.
 */
int cli_format_pick(const char *cmd, const char *name, const char *path,
		    unsigned allow, const char *dflt, struct cli_format *out);

/* Is the format binary (pprof, perfetto)? Those are refused on a terminal. */
bool cli_format_binary(const struct cli_format *f);

/*
 * Write a profile to PATH (NULL or "-": standard output) in format F,
 * through a temporary file renamed into place. Returns an exit code
 * (CLI_OK, or CLI_FAIL after printing why).
 */
int cli_write_profile(const rtd_profile *p, const struct cli_format *f,
		      const char *path, const struct rtd_profile_write_opts *o);

/* A timeline being written to a file (or standard output). */
struct cli_timeline {
	struct cli_out out;
	rtd_timeline *tl;
};

/* Open PATH and start a timeline in format F. Returns 0, or -1 after
 * printing why. */
int cli_timeline_open(struct cli_timeline *t, const struct cli_format *f,
		      const char *path);

/* Has writing the timeline's file failed (a full disk, EIO)? Then a
 * decoder stopped by it is not to blame: cli_timeline_close() says why,
 * naming the output. */
bool cli_timeline_failed(const struct cli_timeline *t);

/*
 * Finish the timeline and keep the file when KEEP (a partial timeline of
 * a damaged input is worth keeping); else remove it. Returns an exit code:
 * CLI_OK, or CLI_FAIL when writing failed (after printing why).
 */
int cli_timeline_close(struct cli_timeline *t, bool keep);

struct rtd_nettrace_metadata;

/*
 * A Go trace read from IN (PATH; FIRST/NFIRST: bytes already read from
 * it) as a record source (rtd_gotrace_source_*) with OPTS: a regular file
 * is opened again by its descriptor and read where the decoder asks, any
 * other input (a pipe) read once through ST, which must outlive the
 * source. Returns the source, or NULL with *ERR set.
 */
struct rtd_gotrace_source_opts;
struct rtd_source;
struct cli_gostream {
	FILE *in;
	const uint8_t *first;
	size_t nfirst, used;
};
struct rtd_source *cli_gotrace_source(FILE *in, const uint8_t *first, size_t nfirst,
				      const struct rtd_gotrace_source_opts *opts,
				      struct cli_gostream *st, int *err);

/*
 * A Go execution trace (any version) read from IN as a timeline in format
 * F written to OUTP: FIRST/NFIRST are bytes already read from IN (sniffed).
 * A regular file is read again for Go's ordering, not kept in memory.
 * What was drawn before damage is kept. Returns an exit code.
 */
int cli_timeline_gotrace(FILE *in, const char *path, const uint8_t *first,
			 size_t nfirst, const struct cli_format *f,
			 const char *outp);

/*
 * An EventPipe stream from IN as a timeline (as cli_timeline_gotrace()).
 * Sampled frames are named from the stream's method events (a regular
 * file is read twice: its rundown comes at the end). WANT, if not NULL,
 * picks the event types drawn (called once per type). Returns an exit
 * code.
 */
int cli_timeline_nettrace(FILE *in, const char *path, const uint8_t *first,
			  size_t nfirst, const struct cli_format *f,
			  const char *outp,
			  bool (*want)(void *ctx,
				       const struct rtd_nettrace_metadata *m),
			  void *want_ctx);

#endif /* RTD_CLI_FORMAT_H */
