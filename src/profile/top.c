/* SPDX-License-Identifier: MIT */
/*
 * top.c - the frames with most self weight, by display name: a frame's
 * self weight is where it is the leaf, its total the weight of stacks that
 * contain it, counted once per stack however often it recurses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "profile/profile_impl.h"

struct top_row {
	uint32_t name;
	int64_t self, total;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Rows for every name with weight, sorted; returns the count or -ENOMEM. */
static int64_t top_rows(const rtd_profile *p, size_t type,
			struct top_row **out)
{
	struct ftree t;
	int err = ftree_build(p, type, NULL, NULL, false, &t);
	if (err)
		return err;
	size_t nn = p->nstrs ? p->nstrs : 1;
	int64_t *self = calloc(nn, sizeof(*self));
	int64_t *total = calloc(nn, sizeof(*total));
	uint32_t *on_path = calloc(nn, sizeof(*on_path));
	struct top_row *rows = malloc(nn * sizeof(*rows));
	int64_t ret = -ENOMEM;
	if (!self || !total || !on_path || !rows)
		goto out;
	/* Node ids grow from parent to child, but a node's path is only known
	 * walking down: a depth-first walk with an explicit stack. */
	uint32_t *stack = malloc(t.nn * sizeof(*stack));
	if (!stack)
		goto out;
	size_t sp = 0;
	for (uint32_t c = t.n[0].first_child; c != PROF_NONE;
	     c = t.n[c].next_sibling)
		stack[sp++] = c;
	/* a node is pushed once; when popped it is entered, and its name is
	 * released when the walk returns above it: track the current path */
	uint32_t *path = malloc(t.nn * sizeof(*path));
	size_t plen = 0;
	if (!path) {
		free(stack);
		goto out;
	}
	while (sp) {
		uint32_t c = stack[--sp];
		/* pop the path to c's parent */
		while (plen && path[plen - 1] != t.n[c].parent) {
			on_path[t.n[path[plen - 1]].name]--;
			plen--;
		}
		uint32_t name = t.n[c].name;
		self[name] += t.n[c].self;
		if (on_path[name] == 0)
			total[name] += t.n[c].total;
		on_path[name]++;
		path[plen++] = c;
		for (uint32_t k = t.n[c].first_child; k != PROF_NONE;
		     k = t.n[k].next_sibling)
			stack[sp++] = k;
	}
	free(stack);
	free(path);
	size_t n = 0;
	for (size_t i = 0; i < p->nstrs; i++)
		if (self[i] || total[i])
			rows[n++] = (struct top_row){(uint32_t)i, self[i],
						     total[i]};
	qsort(rows, n, sizeof(*rows), top_cmp);
	*out = rows;
	rows = NULL;
	ret = (int64_t)n;
out:
	free(self);
	free(total);
	free(on_path);
	free(rows);
	ftree_free(&t);
	return ret;
}

int rtd_profile_top_of(const rtd_profile *p, size_t type,
		       struct rtd_profile_entry *out, size_t max)
{
	if (type >= p->ntypes)
		return -RTD_E_INVAL;
	struct top_row *rows = NULL;
	int64_t n = top_rows(p, type, &rows);
	if (n < 0)
		return (int)n;
	size_t k = (size_t)n < max ? (size_t)n : max;
	for (size_t i = 0; i < k; i++)
		out[i] = (struct rtd_profile_entry){p->strs[rows[i].name],
						    rows[i].self,
						    rows[i].total};
	free(rows);
	return (int)k;
}

int rtd_profile_top(const rtd_profile *p, struct rtd_profile_entry *out,
		    size_t max)
{
	return rtd_profile_top_of(p, p->default_type, out, max);
}

static double pct(int64_t v, int64_t tot)
{
	return tot ? 100.0 * (double)v / (double)tot : 0.0;
}

int prof_write_top(const rtd_profile *p, FILE *f, size_t type, size_t nrows)
{
	struct top_row *rows = NULL;
	int64_t n = top_rows(p, type, &rows);
	if (n < 0)
		return (int)n;
	int64_t tot = p->total[type];
	char a[32], b[32], c[32], ns[48];
	const char *unit = p->types[type].unit;
	fprintf(f, "%s: %s in %s\n", p->types[type].type,
		prof_fmt_value(tot, unit, c, sizeof(c)),
		prof_samples_text(p, ns, sizeof(ns)));
	fprintf(f, "%10s %6s %10s %6s  %s\n", "self", "self%", "total",
		"total%", "function");
	size_t k = (size_t)n < nrows ? (size_t)n : nrows;
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%10s %5.1f%% %10s %5.1f%%  %s\n",
			prof_fmt_value(rows[i].self, unit, a, sizeof(a)),
			pct(rows[i].self, tot),
			prof_fmt_value(rows[i].total, unit, b, sizeof(b)),
			pct(rows[i].total, tot), p->strs[rows[i].name]);
	free(rows);
	return ferror(f) ? rtd_write_errno() : 0;
}
