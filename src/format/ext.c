/* SPDX-License-Identifier: MIT */
/*
 * ext.c - the one table of output file extensions (see rtdiag/format.h;
 * docs/pictures.md prints it). rtd_profile_format_from_path() and
 * rtd_timeline_format_from_path() read it too, so no other list exists.
 */
#include <string.h>
#include <strings.h>

#include "rtdiag/format.h"

#define PROF(e, n, w, f) {e, n, w, RTD_FORMAT_PROFILE, RTD_PROFILE_FMT_##f, RTD_TIMELINE_FMT_NONE}
#define TL(e, n, w, f) {e, n, w, RTD_FORMAT_TIMELINE, RTD_PROFILE_FMT_NONE, RTD_TIMELINE_FMT_##f}
#define DATA(e, n, w) {e, n, w, RTD_FORMAT_DATA, RTD_PROFILE_FMT_NONE, RTD_TIMELINE_FMT_NONE}
#define FOREIGN(e, w) {e, NULL, w, RTD_FORMAT_FOREIGN, RTD_PROFILE_FMT_NONE, RTD_TIMELINE_FMT_NONE}

/* Longer extensions that end in a shorter one (.speedscope.json, .json)
 * come first: the first match wins. */
static const struct rtd_format_ext table[] = {
	PROF(".folded", "folded", "folded stacks", FOLDED),
	PROF(".collapsed", "folded", "folded stacks", FOLDED),
	PROF(".stacks", "folded", "folded stacks", FOLDED),
	PROF(".pb.gz", "pprof", "a pprof profile (gzip)", PPROF),
	PROF(".pb", "pprof", "a pprof profile (gzip)", PPROF),
	PROF(".pprof", "pprof", "a pprof profile (gzip)", PPROF),
	PROF(".prof", "pprof", "a pprof profile (gzip)", PPROF),
	PROF(".svg", "svg", "an SVG flame graph", SVG),
	PROF(".speedscope.json", "speedscope", "a speedscope profile", SPEEDSCOPE),
	{".txt", "top", "text (a profile's top table)", RTD_FORMAT_TEXT,
	 RTD_PROFILE_FMT_TOP, RTD_TIMELINE_FMT_NONE},
	TL(".perfetto-trace", "perfetto", "a Perfetto timeline", PERFETTO),
	TL(".pftrace", "perfetto", "a Perfetto timeline", PERFETTO),
	TL(".perfetto", "perfetto", "a Perfetto timeline", PERFETTO),
	TL(".json", "chrome-json", "a Chrome JSON timeline", CHROME_JSON),
	DATA(".nettrace", "nettrace", "an EventPipe trace (nettrace)"),
	DATA(".data", "perf.data", "a perf.data recording"),
	DATA(".csv", "csv", "CSV counter readings"),
	/* pictures people ask for that rtdiag does not draw: refused, not
	 * filled with another format */
	FOREIGN(".png", "a PNG image"),
	FOREIGN(".jpg", "a JPEG image"),
	FOREIGN(".jpeg", "a JPEG image"),
	FOREIGN(".gif", "a GIF image"),
	FOREIGN(".webp", "a WebP image"),
	FOREIGN(".bmp", "a BMP image"),
	FOREIGN(".pdf", "a PDF document"),
	FOREIGN(".html", "an HTML page"),
	FOREIGN(".htm", "an HTML page"),
	FOREIGN(".ps", "a PostScript document"),
	FOREIGN(".svgz", "a gzip'd SVG"),
};

const struct rtd_format_ext *rtd_format_ext_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

bool rtd_format_has_ext(const char *path)
{
	if (!path)
		return false;
	const char *b = base_of(path);
	const char *dot = strrchr(b, '.');
	return dot && dot > b && dot[1];
}

const struct rtd_format_ext *rtd_format_ext_of(const char *path)
{
	if (!rtd_format_has_ext(path))
		return NULL;
	const char *b = base_of(path);
	size_t n = strlen(b);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t k = strlen(table[i].ext);
		/* the extension, after at least one character of name */
		if (n > k && !strcasecmp(b + n - k, table[i].ext))
			return &table[i];
	}
	return NULL;
}
