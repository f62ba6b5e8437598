/* SPDX-License-Identifier: MIT */
/* convert_perfdata.h - convert's reading of perf.data (convert_perfdata.c). */
#ifndef RTD_CLI_CONVERT_PERFDATA_H
#define RTD_CLI_CONVERT_PERFDATA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_format.h"
#include "rtdiag/profile.h"
#include "rtdiag/source.h"

/*
 * Convert the perf.data file PATH to OUTP in format F: a timeline of every
 * record, or a profile of one EVENT (NULL: the file's first; WO->type
 * picks its sample type, "samples" or the period's); FIREFOX: the Firefox
 * Profiler's Gecko profile instead (rtdiag/firefox.h); NO_INLINE: no frames of inlined functions. Returns an exit code: CLI_OK, CLI_FAIL, or CLI_PARTIAL when
 * the file was damaged after what was converted. PATH "-": standard input
 * (IN), of which the first NFIRST bytes were read into FIRST already: a
 * pipe-mode perf.data (perf record -o - | rtdiag convert -).
 */
int cli_convert_perfdata(const char *path, const struct cli_format *f, const char *outp,
			 const struct rtd_profile_write_opts *wo, const char *event,
			 bool no_inline, bool firefox, FILE *in, const uint8_t *first,
			 size_t nfirst);

/*
 * The Firefox Profiler's Gecko profile of every record of SRC (rtdiag/
 * firefox.h) to OUTP: exit code as cli_convert_perfdata(); nothing is
 * written when SRC gave no sample.
 */
int cli_convert_firefox(rtd_source *src, const char *path, const char *outp);

#endif
