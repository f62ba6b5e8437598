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

/* ---- perf report --sort ---------------------------------------------------- */

enum { SK_COMM = 1u, SK_PID = 2u, SK_DSO = 4u, SK_SYM = 8u };

struct sort_key { /* compared as bytes */
	int64_t pid;
	uint32_t comm, dso, sym, pad;
};

struct sort_row {
	struct sort_key k;
	int64_t self;
	const char *comm, *dso, *sym; /* the keys' strings, to order ties */
	uint8_t order[4];             /* the keys, as asked */
};

static int parse_keys(const char *keys, uint8_t order[4])
{
	static const struct {
		const char *name;
		unsigned bit;
	} known[] = {{"comm", SK_COMM}, {"pid", SK_PID}, {"dso", SK_DSO},
		     {"sym", SK_SYM}};
	unsigned have = 0, n = 0;
	memset(order, 0, 4);
	for (const char *s = keys; s && *s;) {
		size_t len = strcspn(s, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == len &&
			    !strncmp(s, known[i].name, len))
				bit = known[i].bit;
		if (!bit || (have & bit) || n == 4)
			return -RTD_E_INVAL;
		have |= bit;
		order[n++] = (uint8_t)bit;
		s += len;
		if (*s == ',')
			s++;
	}
	return have ? (int)have : -RTD_E_INVAL;
}

/* The module a frame is in: its own, else its mapping's file name. */
static uint32_t frame_dso(const rtd_profile *p, const struct prof_frame *f)
{
	if (f->k.module)
		return f->k.module;
	if (f->k.mapping && f->k.mapping <= p->nmaps)
		return p->maps[f->k.mapping - 1].file;
	return 0;
}

static const char *base_of(const char *s)
{
	const char *b = strrchr(s, '/');
	return b && b[1] ? b + 1 : s;
}

static int sort_cmp(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	for (int i = 0; i < 4 && x->order[i]; i++) {
		int c = 0;
		switch (x->order[i]) {
		case SK_COMM:
			c = strcmp(x->comm, y->comm);
			break;
		case SK_PID:
			c = (x->k.pid > y->k.pid) - (x->k.pid < y->k.pid);
			break;
		case SK_DSO:
			c = strcmp(x->dso, y->dso);
			break;
		case SK_SYM:
			c = strcmp(x->sym, y->sym);
			break;
		}
		if (c)
			return c;
	}
	return 0;
}

int rtd_profile_top_sorted(const rtd_profile *p, size_t type,
			   const char *keys, struct rtd_profile_sort_entry *out,
			   size_t max)
{
	uint8_t order[4];
	int have = parse_keys(keys, order);
	if (!p || have < 0 || type >= p->ntypes || (max && !out))
		return -RTD_E_INVAL;
	/* each node's context: node ids grow from parent to child, so a
	 * node's root is known before its children's */
	uint32_t *ctx_of = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*ctx_of));
	struct sort_row *rows = NULL;
	size_t nrows = 0, cap = 0;
	rtd_strmap index, dsos; /* rows by key; a module's file name -> its id */
	rtd_strmap_init(&index, 0);
	rtd_strmap_init(&dsos, 0);
	int err = -ENOMEM;
	if (!ctx_of)
		goto out;
	for (size_t i = 0; i < p->nnodes; i++)
		ctx_of[i] = PROF_NONE;
	for (size_t c = 0; c < p->nctxs; c++)
		if (p->ctxs[c].root < p->nnodes)
			ctx_of[p->ctxs[c].root] = (uint32_t)c;
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct prof_node *n = &p->nodes[i];
		if (n->parent != PROF_NONE && n->parent < i)
			ctx_of[i] = ctx_of[n->parent];
		int64_t w = prof_vals(p, (uint32_t)i)[type];
		if (!w || n->frame == PROF_NONE || n->frame >= p->nframes)
			continue;
		const struct prof_frame *f = &p->frames[n->frame];
		const struct prof_ctx *c =
			ctx_of[i] != PROF_NONE ? &p->ctxs[ctx_of[i]] : NULL;
		struct sort_key k = {0};
		if ((have & SK_COMM) && c)
			k.comm = c->thread;
		if ((have & SK_PID) && c)
			k.pid = c->pid;
		if (have & SK_DSO) {
			/* "/usr/lib/libx.so" and "libx.so" are one dso */
			uint32_t d = frame_dso(p, f);
			const char *b = base_of(p->strs[d]);
			void *dv;
			if (rtd_strmap_get(&dsos, b, strlen(b), &dv))
				d = (uint32_t)(uintptr_t)dv;
			else if (rtd_strmap_put(&dsos, b, strlen(b),
						(void *)(uintptr_t)d))
				goto out;
			k.dso = d;
		}
		if (have & SK_SYM)
			k.sym = f->disp;
		void *v;
		if (rtd_strmap_get(&index, &k, sizeof(k), &v)) {
			rows[(uintptr_t)v].self += w;
			continue;
		}
		if (nrows == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct sort_row *nr = realloc(rows, nc * sizeof(*nr));
			if (!nr)
				goto out;
			rows = nr;
			cap = nc;
		}
		rows[nrows] = (struct sort_row){.k = k, .self = w};
		memcpy(rows[nrows].order, order, 4);
		if (rtd_strmap_put(&index, &k, sizeof(k), (void *)(uintptr_t)nrows))
			goto out;
		nrows++;
	}
	for (size_t i = 0; i < nrows; i++) {
		rows[i].comm = p->strs[rows[i].k.comm];
		rows[i].dso = base_of(p->strs[rows[i].k.dso]);
		rows[i].sym = p->strs[rows[i].k.sym];
	}
	if (nrows) /* none: rows is NULL, which qsort may not be given */
		qsort(rows, nrows, sizeof(*rows), sort_cmp);
	size_t k = nrows < max ? nrows : max;
	for (size_t i = 0; i < k; i++)
		out[i] = (struct rtd_profile_sort_entry){
			.comm = rows[i].comm,
			.pid = rows[i].k.pid,
			.dso = rows[i].dso,
			.sym = rows[i].sym,
			.self = rows[i].self};
	err = (int)k;
out:
	rtd_strmap_free(&index);
	rtd_strmap_free(&dsos);
	free(rows);
	free(ctx_of);
	return err;
}
