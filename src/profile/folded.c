/* SPDX-License-Identifier: MIT */
/*
 * folded.c - Brendan Gregg's folded-stack format, as flamegraph.pl,
 * speedscope, inferno and dotnetdiag read and write it:
 *   root;caller;leaf VALUE
 * One line per function-level stack with self weight, sorted by stack
 * text so the output is stable across runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/buf.h"
#include "profile/profile_impl.h"

static int line_cmp(const void *a, const void *b, void *base)
{
	const char *t = base;
	return strcmp(t + *(const size_t *)a, t + *(const size_t *)b);
}

/* A frame name as one folded field: ';' separates frames and a newline
 * ends the line, so both become '_' (flamegraph.pl does the same). */
static int put_name(rtd_buf *b, const char *s)
{
	size_t n = strlen(s);
	if (!strpbrk(s, ";\n\r"))
		return rtd_buf_append(b, s, n);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int err = rtd_buf_putc(b, c == ';' || c == '\n' || c == '\r'
						  ? '_'
						  : c);
		if (err)
			return err;
	}
	return 0;
}

int prof_write_folded(const rtd_profile *p, FILE *f, size_t type,
		      bool thread_roots)
{
	struct ftree t;
	int err = ftree_build(p, type, NULL, NULL, thread_roots, &t);
	if (err)
		return err;
	rtd_buf text;
	rtd_buf_init(&text, 0);
	size_t *starts = NULL, nlines = 0, cap = 0;
	uint32_t *path = NULL;
	size_t pcap = 0;
	/* depth-first, keeping the path from the root's child down */
	for (size_t i = 1; i < t.nn && !err; i++) {
		if (t.n[i].self == 0)
			continue;
		size_t depth = 0;
		for (uint32_t c = (uint32_t)i; c != 0; c = t.n[c].parent) {
			if (depth == pcap) {
				uint32_t *np = rtd_grow(path, &pcap, depth + 1,
							sizeof(*np), 64);
				if (!np) {
					err = -ENOMEM;
					break;
				}
				path = np;
			}
			path[depth++] = c;
		}
		if (err)
			break;
		if (nlines == cap) {
			size_t *ns = rtd_grow(starts, &cap, nlines + 1,
						sizeof(*ns), 256);
			if (!ns) {
				err = -ENOMEM;
				break;
			}
			starts = ns;
		}
		starts[nlines++] = text.len;
		for (size_t d = depth; d-- > 0 && !err;) {
			err = put_name(&text, ftree_name(p, &t, t.n[path[d]].name));
			if (!err && d)
				err = rtd_buf_putc(&text, ';');
		}
		if (!err)
			err = rtd_buf_printf(&text, " %lld",
					     (long long)t.n[i].self);
		if (!err)
			err = rtd_buf_append(&text, "", 1); /* keep the NUL */
	}
	if (!err && nlines) {
		qsort_r(starts, nlines, sizeof(*starts), line_cmp, text.data);
		for (size_t i = 0; i < nlines; i++) {
			fputs((const char *)text.data + starts[i], f);
			fputc('\n', f);
		}
	}
	if (!err && ferror(f))
		err = rtd_write_errno();
	rtd_buf_free(&text);
	free(starts);
	free(path);
	ftree_free(&t);
	return err;
}

int rtd_profile_write_folded(const rtd_profile *p, FILE *f)
{
	return prof_write_folded(p, f, p->default_type, false);
}
