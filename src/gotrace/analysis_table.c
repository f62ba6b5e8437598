/* SPDX-License-Identifier: MIT */
/*
 * analysis_table.c - go tool trace's goroutine page as a table
 * (rtdiag/goan_table.h): goroutines by start function, or regions by
 * type and top frame, with their rows sorted by a stat and kept to a
 * limit. Was the CLI's (gotrace goroutines), with a table of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/map.h"
#include "rtdiag/goan_table.h"
#include "rtdiag/source.h"

struct grp {
	struct rtd_goan_table_group pub;
	struct rtd_goan_table_row *rows;
	size_t nrows, caprows;
};

struct rtd_goan_table {
	struct rtd_goan_table_opts o;
	rtd_strmap tab; /* name \0 has-frame frame \0 pc -> struct grp */
	struct grp **all; /* the groups, in the finished order */
	size_t nall;
	char *key; /* scratch for a table key */
	size_t keycap;
	int err;   /* the first error: every later add returns it */
	bool finished;
};

static void cut_rows(struct grp *gr, size_t keep);

int rtd_goan_table_new(const struct rtd_goan_table_opts *opts, rtd_goan_table **out)
{
	if (!out)
		return -RTD_E_INVAL;
	*out = NULL;
	struct rtd_goan_table_opts o;
	if (!opts || rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_goan_table_opts, max_groups)))
		return -RTD_E_INVAL;
	if (o.flags & ~RTD_GOAN_TABLE_REGIONS)
		return -RTD_E_INVAL;
	rtd_goan_table *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->o = o;
	rtd_strmap_init(&g->tab, o.max_groups ? o.max_groups : RTD_GOAN_TABLE_MAX_GROUPS);
	*out = g;
	return 0;
}

void rtd_goan_table_free(rtd_goan_table *g)
{
	if (!g)
		return;
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(&g->tab, &b, e))) {
		struct grp *x = e->val;
		cut_rows(x, 0);
		free(x->rows);
		free(x);
	}
	rtd_strmap_free(&g->tab);
	free(g->all);
	free(g->key);
	free(g);
}

/* A stat called @want, by its name or a short form. */
static bool stat_is(const char *name, const char *want)
{
	if (strcasecmp(name, want) == 0)
		return true;
	static const struct {
		const char *s, *l;
	} alias[] = {
		{"exec", "Execution time"}, {"exec", "Execution"},
		{"sched", "Sched wait time"}, {"sched", "Scheduler wait"},
		{"syscall", "Syscall execution time"}, {"syscall", "Blocking syscall"},
		{"unknown", "Unknown time"}, {"net", "Network wait"},
		{"network", "Block time (network)"}, {"net", "Block time (network)"},
		{"sync", "Sync block"}, {"gc", "GC pause"}, {"sweep", "GC sweeping"},
	};
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcasecmp(want, alias[i].s) == 0 && strcmp(name, alias[i].l) == 0)
			return true;
	return false;
}

/* A row's sort key: its total, or the sort's stat. */
static int64_t sort_key(const rtd_goan_table *g, int64_t total,
			const struct rtd_goan_stat *st, size_t n)
{
	const char *sort = g->o.sort;
	if (!sort || strcasecmp(sort, "total") == 0)
		return total;
	for (size_t i = 0; i < n; i++)
		if (stat_is(st[i].name, sort))
			return st[i].ns;
	return 0;
}

static struct grp *grp_get(rtd_goan_table *g, const char *name, uint64_t pc,
			   const char *frame)
{
	size_t nl = strlen(name), fl = frame ? strlen(frame) : 0;
	size_t kl = nl + 1 + fl + 1 + 1 + sizeof(pc);
	if (kl > g->keycap) {
		char *k = realloc(g->key, kl);
		if (!k)
			return g->err = -ENOMEM, NULL;
		g->key = k;
		g->keycap = kl;
	}
	/* a frame "" and no frame differ: regions have one, goroutines not */
	char *k = g->key;
	memcpy(k, name, nl + 1);
	k[nl + 1] = frame ? 1 : 0;
	if (frame)
		memcpy(k + nl + 2, frame, fl + 1);
	else
		k[nl + 2] = 0;
	memcpy(k + nl + fl + 3, &pc, sizeof(pc));
	void *v;
	if (rtd_strmap_get(&g->tab, k, kl, &v))
		return v;
	struct grp *x = calloc(1, sizeof(*x));
	if (!x)
		return g->err = -ENOMEM, NULL;
	x->pub.name = name;
	x->pub.pc = pc;
	x->pub.frame = frame;
	int e = rtd_strmap_put(&g->tab, k, kl, x);
	if (e) {
		free(x);
		return g->err = e, NULL;
	}
	return x;
}

static int cmp_row(const void *a, const void *b)
{
	const struct rtd_goan_table_row *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Keep @gr's first @keep rows. */
static void cut_rows(struct grp *gr, size_t keep)
{
	for (size_t i = keep; i < gr->nrows; i++)
		free((void *)gr->rows[i].stats);
	if (keep < gr->nrows)
		gr->nrows = keep;
}

static void sort_rows(struct grp *gr)
{
	qsort(gr->rows, gr->nrows, sizeof(*gr->rows), cmp_row);
}

/* @r, with a copy of its @n stats, into @gr; past twice the limit the rows
 * are sorted and cut to it (amortized). */
static int add_row(rtd_goan_table *g, struct grp *gr, const struct rtd_goan_table_row *r,
		   const struct rtd_goan_stat *st, size_t n)
{
	if (gr->nrows == gr->caprows) {
		size_t nc = gr->caprows ? gr->caprows * 2 : 8;
		struct rtd_goan_table_row *p = realloc(gr->rows, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		gr->rows = p;
		gr->caprows = nc;
	}
	struct rtd_goan_stat *copy = malloc((n ? n : 1) * sizeof(*st));
	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, st, n * sizeof(*st));
	struct rtd_goan_table_row *x = &gr->rows[gr->nrows++];
	*x = *r;
	x->stats = copy;
	x->nstats = n;
	if (g->o.limit && gr->nrows >= 2 * g->o.limit) {
		sort_rows(gr);
		cut_rows(gr, g->o.limit);
	}
	return 0;
}

static int add_checked(rtd_goan_table *g, bool region, const void *what)
{
	if (!g || !what)
		return -RTD_E_INVAL;
	if (g->err)
		return g->err;
	if (g->finished || region != !!(g->o.flags & RTD_GOAN_TABLE_REGIONS))
		return g->err = -RTD_E_INVAL;
	return 0;
}

int rtd_goan_table_add_goroutine(rtd_goan_table *g, const rtd_goan *a,
				  const struct rtd_goan_goroutine *go)
{
	int e = add_checked(g, false, go);
	if (e || !a)
		return e ? e : -RTD_E_INVAL;
	/* Go 1.19's page groups by the start function's PC as well */
	struct grp *gr = grp_get(g, go->name,
				 rtd_goan_semantics(a) == RTD_GOAN_GO119 ? go->pc : 0, NULL);
	if (!gr)
		return g->err;
	gr->pub.count++;
	gr->pub.exec += go->exec;
	gr->pub.total += go->total;
	struct rtd_goan_table_row r = {
		.id = go->id, .start = go->start, .end = go->end, .total = go->total,
		.key = sort_key(g, go->total, go->stats, go->nstats)};
	if (add_row(g, gr, &r, go->stats, go->nstats) < 0)
		g->err = -ENOMEM;
	return g->err;
}

int rtd_goan_table_add_region(rtd_goan_table *g, const rtd_goan *a,
			       const struct rtd_goan_region *rg)
{
	int e = add_checked(g, true, rg);
	if (e || !a)
		return e ? e : -RTD_E_INVAL;
	struct grp *gr = grp_get(g, rg->name, rg->frame_pc, rg->frame_fn ? rg->frame_fn : "");
	if (!gr)
		return g->err;
	int64_t first, last;
	rtd_goan_trace_bounds(a, &first, &last);
	int64_t s = rg->start >= 0 ? rg->start : first, end = rg->end >= 0 ? rg->end : last;
	gr->pub.count++;
	gr->pub.total += end - s;
	for (size_t i = 0; i < rg->nstats; i++)
		if (stat_is(rg->stats[i].name, "exec"))
			gr->pub.exec += rg->stats[i].ns;
	struct rtd_goan_table_row r = {
		.id = rg->g, .task = rg->task, .start = s, .end = end, .total = end - s,
		.key = sort_key(g, end - s, rg->stats, rg->nstats)};
	if (add_row(g, gr, &r, rg->stats, rg->nstats) < 0)
		g->err = -ENOMEM;
	return g->err;
}

static int cmp_grp(const void *a, const void *b)
{
	const struct grp *x = *(struct grp *const *)a, *y = *(struct grp *const *)b;
	if (x->pub.exec != y->pub.exec)
		return x->pub.exec < y->pub.exec ? 1 : -1;
	int c = strcmp(x->pub.name, y->pub.name);
	if (c)
		return c;
	if (x->pub.pc != y->pub.pc)
		return x->pub.pc < y->pub.pc ? -1 : 1;
	return x->pub.frame && y->pub.frame ? strcmp(x->pub.frame, y->pub.frame) : 0;
}

/* Whether stat @name of @gr's rows is an overlapping range. */
static bool col_overlaps(const struct grp *gr, const char *name)
{
	for (size_t i = 0; i < gr->nrows; i++)
		for (size_t k = 0; k < gr->rows[i].nstats; k++)
			if (gr->rows[i].stats[k].name == name)
				return gr->rows[i].stats[k].overlaps;
	return false;
}

/* The group's columns: every stat name its rows have, as Go's page orders
 * them (Go 1.22+: "Execution time" first, then by name, the overlapping
 * ranges last; Go 1.19: its fixed order, which is the order seen). */
static void columns(struct grp *gr, bool v2)
{
	const char **cols = gr->pub.columns;
	size_t n = 0, max = RTD_GOAN_TABLE_MAX_COLUMNS;
	for (size_t i = 0; i < gr->nrows; i++)
		for (size_t k = 0; k < gr->rows[i].nstats; k++) {
			const char *name = gr->rows[i].stats[k].name;
			size_t j = 0;
			while (j < n && cols[j] != name)
				j++;
			if (j == n && n < max)
				cols[n++] = name;
		}
	gr->pub.ncolumns = n;
	if (!v2)
		return;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			const char *a = cols[j - 1], *b = cols[j];
			int ka = strcmp(a, "Execution time") == 0 ? 0 : col_overlaps(gr, a) ? 2 : 1;
			int kb = strcmp(b, "Execution time") == 0 ? 0 : col_overlaps(gr, b) ? 2 : 1;
			if (ka < kb || (ka == kb && strcmp(a, b) <= 0))
				break;
			cols[j - 1] = b;
			cols[j] = a;
		}
}

int rtd_goan_table_finish(rtd_goan_table *g, const rtd_goan *a)
{
	if (!g || !a)
		return -RTD_E_INVAL;
	if (g->err)
		return g->err;
	if (g->finished)
		return 0;
	size_t n = g->tab.count;
	g->all = malloc((n ? n : 1) * sizeof(*g->all));
	if (!g->all)
		return g->err = -ENOMEM;
	size_t b = 0, i = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(&g->tab, &b, e)))
		g->all[i++] = e->val;
	g->nall = i;
	qsort(g->all, g->nall, sizeof(*g->all), cmp_grp);
	bool v2 = rtd_goan_semantics(a) != RTD_GOAN_GO119;
	for (i = 0; i < g->nall; i++) {
		struct grp *gr = g->all[i];
		sort_rows(gr);
		/* the columns of every row held, before the cut to the limit */
		columns(gr, v2);
		cut_rows(gr, g->o.limit && gr->nrows > g->o.limit ? g->o.limit : gr->nrows);
		gr->pub.rows = gr->rows;
		gr->pub.nrows = gr->nrows;
	}
	g->finished = true;
	return 0;
}

size_t rtd_goan_table_count(const rtd_goan_table *g)
{
	return g ? g->tab.count : 0;
}

const struct rtd_goan_table_group *rtd_goan_table_get(const rtd_goan_table *g, size_t i)
{
	if (!g || !g->finished || i >= g->nall)
		return NULL;
	return &g->all[i]->pub;
}

int64_t rtd_goan_table_row_stat(const struct rtd_goan_table_row *r, const char *name,
				bool *have)
{
	for (size_t k = 0; r && k < r->nstats; k++)
		if (r->stats[k].name == name) {
			*have = true;
			return r->stats[k].ns;
		}
	*have = false;
	return 0;
}
