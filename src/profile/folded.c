/* SPDX-License-Identifier: MIT */
/*
 * folded.c - Brendan Gregg's folded-stack format, as flamegraph.pl,
 * speedscope, inferno and dotnetdiag read and write it:
 *   root;caller;leaf VALUE
 * Lines are sorted by stack text so the output is stable across runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "profile/profile_impl.h"

struct fold_ctx {
	rtd_buf text;     /* every line, NUL-separated */
	size_t *starts;   /* line offsets into text */
	size_t nlines, cap;
};

static int fold_visit(const rtd_profile *p, uint32_t node, size_t depth,
		      const uint32_t *path, void *vctx)
{
	struct fold_ctx *c = vctx;
	if (p->nodes[node].self == 0)
		return 0;
	if (c->nlines == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		size_t *ns = realloc(c->starts, ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->starts = ns;
		c->cap = ncap;
	}
	c->starts[c->nlines++] = c->text.len;
	int err = 0;
	for (size_t i = 0; i < depth && !err; i++) {
		if (i)
			err = rtd_buf_putc(&c->text, ';');
		if (!err)
			err = rtd_buf_puts(&c->text, p->names[p->nodes[path[i]].name]);
	}
	if (!err)
		err = rtd_buf_printf(&c->text, " %lld", (long long)p->nodes[node].self);
	if (!err)
		err = rtd_buf_append(&c->text, "", 1); /* keep the NUL */
	return err;
}

static int line_cmp(const void *a, const void *b, void *base)
{
	const char *t = base;
	return strcmp(t + *(const size_t *)a, t + *(const size_t *)b);
}

int rtd_profile_write_folded(const rtd_profile *p, FILE *f)
{
	struct fold_ctx c = {0};
	rtd_buf_init(&c.text, 0);
	int err = prof_walk(p, fold_visit, &c);
	if (!err && c.nlines) {
		qsort_r(c.starts, c.nlines, sizeof(*c.starts), line_cmp,
			c.text.data);
		for (size_t i = 0; i < c.nlines; i++) {
			fputs((const char *)c.text.data + c.starts[i], f);
			fputc('\n', f);
		}
		if (ferror(f))
			err = -EIO;
	}
	rtd_buf_free(&c.text);
	free(c.starts);
	return err;
}
