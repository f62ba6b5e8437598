/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/format.h - what a file is, and what a file name asks for.
 *
 * Input: rtd_format_detect() names the format of an input from its first
 * bytes, checked by structure, not guessed: an EventPipe stream (NetTrace
 * or NetPerf), a Go execution trace of a version the decoder reads, a
 * pprof profile (gzip, or a plain protobuf whose fields are pprof's), folded
 * stacks (text whose lines really are "frame;frame;... count"), or
 * perf.data. Anything else is RTD_INPUT_UNKNOWN with the reason, so a
 * command refuses it by name before it writes anything.
 *
 * Output: one table maps a file name's extension to a format, for every
 * command that writes (rtd_format_ext_of()). Each extension means one
 * format everywhere: ".json" is a Chrome JSON timeline, speedscope is
 * ".speedscope.json"; ".png" and other pictures rtdiag does not draw are
 * in it too (RTD_FORMAT_FOREIGN). A command that cannot write the format
 * an extension names refuses it, before it writes anything; a name
 * without an extension, or with one the table does not know (".out"),
 * gets the command's default. The table is printed in docs/pictures.md.
 */
#ifndef RTDIAG_FORMAT_H
#define RTDIAG_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "rtdiag/common.h"
#include "rtdiag/profile.h"
#include "rtdiag/timeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many leading bytes rtd_format_detect() looks at, at most. */
#define RTD_FORMAT_SNIFF_BYTES (64u << 10)

enum rtd_input_format {
	RTD_INPUT_UNKNOWN = 0,
	RTD_INPUT_NETTRACE,  /* EventPipe NetTrace V4 to V6 */
	RTD_INPUT_NETPERF,   /* EventPipe NetPerf V3 (.NET Core 2.x) */
	RTD_INPUT_GOTRACE,   /* a Go execution trace, Go 1.5 to 1.26 */
	RTD_INPUT_PPROF,     /* a pprof profile, gzip or plain */
	RTD_INPUT_FOLDED,    /* folded stacks, "a;b;c 12" per line */
	RTD_INPUT_PERF_DATA, /* perf.data as Linux perf writes it */
	RTD_INPUT_COUNT
};

/**
 * struct rtd_input_info - what rtd_format_detect() found
 * @format: the format, RTD_INPUT_UNKNOWN when none fits
 * @go_version: RTD_INPUT_GOTRACE: 1005 ... 1026 (Go 1.5 ... 1.26)
 * @gzip: RTD_INPUT_PPROF: the profile is gzip-compressed
 * @why: RTD_INPUT_UNKNOWN: what the bytes looked like and why no format
 *       fits ("text, but line 1 has no sample count at its end")
 */
struct rtd_input_info {
	enum rtd_input_format format;
	int go_version;
	bool gzip;
	char why[160];
};

/**
 * rtd_format_detect - name the format of an input from its first bytes
 * @buf: the input's first bytes (RTD_FORMAT_SNIFF_BYTES are enough)
 * @len: how many
 * @whole: @buf is the whole input (a file shorter than the sniff size):
 *         then a record cut at its end means a damaged or foreign input,
 *         not one that goes on
 * @info: filled in; may be NULL
 *
 * Checks each format's magic and structure: a Go trace's header must name
 * a version the decoder reads; a plain pprof's fields must have pprof's
 * numbers and wire types, its lengths inside the input; a gzip one must
 * inflate to such fields; folded text must be text whose every complete
 * line is "frames count" (blank lines allowed), at least one with frames.
 *
 * Returns: the format (also in @info->format), RTD_INPUT_UNKNOWN when none
 * fits.
 */
RTD_API enum rtd_input_format rtd_format_detect(const void *buf, size_t len,
						bool whole,
						struct rtd_input_info *info);

/**
 * rtd_input_format_name - a format's name for people
 * @f: the format
 *
 * Returns: "nettrace", "netperf", "Go trace", "pprof", "folded stacks",
 * "perf.data", or "unknown"; never NULL.
 */
RTD_API const char *rtd_input_format_name(enum rtd_input_format f);

/**
 * rtd_format_tried - the formats rtd_format_detect() knows, for messages
 *
 * Returns: "nettrace, netperf, Go trace (1.5 to 1.26), pprof, folded
 * stacks, perf.data", a static string.
 */
RTD_API const char *rtd_format_tried(void);

/* What an output format holds (rtd_format_ext.kind). */
enum rtd_format_kind {
	RTD_FORMAT_PROFILE = 1u << 0,  /* a profile: rtd_profile_write() */
	RTD_FORMAT_TIMELINE = 1u << 1, /* a timeline: rtd_timeline_new() */
	RTD_FORMAT_TEXT = 1u << 2,     /* a command's text (a top table) */
	RTD_FORMAT_DATA = 1u << 3,     /* a recording in its own format */
	RTD_FORMAT_FOREIGN = 1u << 4,  /* one rtdiag does not write (.png) */
};

/**
 * struct rtd_format_ext - one row of the extension table
 * @ext: the extension, with its dot (".pb.gz"); matched case-insensitively
 *       at the end of the name, the longest first
 * @format: the name --format takes for it ("pprof"); NULL for a format
 *          rtdiag does not write (RTD_FORMAT_FOREIGN)
 * @what: what the file is, for messages ("a pprof profile (gzip)")
 * @kind: RTD_FORMAT_PROFILE, _TIMELINE, _TEXT, _DATA or _FOREIGN
 * @profile: for a profile or text, the profile writer's format
 * @timeline: for a timeline, the timeline writer's format
 */
struct rtd_format_ext {
	const char *ext;
	const char *format;
	const char *what;
	unsigned kind;
	enum rtd_profile_format profile;
	enum rtd_timeline_format timeline;
};

/**
 * rtd_format_ext_of - the format a file name's extension names
 * @path: the file name (a folder part is ignored); may be NULL
 *
 * Returns: its row of the table, or NULL when @path has no extension or
 * one the table does not know (".out", ".bin": the command's default
 * format then).
 */
RTD_API const struct rtd_format_ext *rtd_format_ext_of(const char *path);

/**
 * rtd_format_has_ext - does a file name have an extension?
 * @path: the file name; may be NULL
 *
 * Returns: true when its last component has a dot after its first
 * character ("cpu.png", not "out" or ".hidden").
 */
RTD_API bool rtd_format_has_ext(const char *path);

/**
 * rtd_format_ext_table - the whole table, for help and documentation
 * @n: receives the number of rows
 *
 * Returns: the rows, in the order they are documented.
 */
RTD_API const struct rtd_format_ext *rtd_format_ext_table(size_t *n);

/**
 * rtd_format_json_str - write a string as a JSON string
 * @f: where to
 * @s: the string (NUL-terminated; its bytes as they are, UTF-8 or not)
 *
 * Quoted, with '"', '\\', newline, carriage return and tab escaped by
 * their short forms and every other byte below 0x20 as \u00XX, as the
 * library's own JSON writers do.
 *
 * Returns: 0, or -ENOMEM (nothing is written then).
 */
RTD_API int rtd_format_json_str(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_FORMAT_H */
