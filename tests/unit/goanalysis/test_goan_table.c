/* SPDX-License-Identifier: MIT */
/*
 * test_goan_table - rtd_goan_table (go tool trace's goroutine page, what
 * `rtdiag gotrace goroutines` prints) over the shared Go traces, old and
 * new format, against the analyses' own callbacks kept beside it: the
 * groups (start function, and PC under Go 1.19 semantics; region type and
 * top frame), their counts and times, their order, the rows kept per group
 * (the first by the sort, to the limit) and the columns; then its options,
 * its cap on groups, and a goroutine fed to a region table.
 */
#include "test_util.h"

#include <errno.h>

#include "rtdiag/goan_table.h"
#include "rtdiag/goanalysis.h"
#include "rtdiag/gotrace.h"
#include "test_gotrace.h"

/* One goroutine or region as the callback gave it. */
struct item {
	const char *name, *frame;
	uint64_t pc, id;
	int64_t exec, total, key;
	struct rtd_goan_stat *st;
	size_t nst;
};

struct run {
	const rtd_goan *a;
	rtd_goan_table *t[3]; /* goroutines limit 3; goroutines by exec, all; regions limit 2 */
	struct item *it[2];   /* goroutines, regions */
	size_t n[2], cap[2];
};

static int64_t stat_ns(const struct rtd_goan_stat *st, size_t n, const char *a, const char *b)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(st[i].name, a) || (b && !strcmp(st[i].name, b)))
			return st[i].ns;
	return 0;
}

static void keep(struct run *r, int k, struct item x, const struct rtd_goan_stat *st, size_t n)
{
	if (r->n[k] == r->cap[k]) {
		r->cap[k] = r->cap[k] ? 2 * r->cap[k] : 64;
		r->it[k] = realloc(r->it[k], r->cap[k] * sizeof(x));
		assert_non_null(r->it[k]);
	}
	x.st = malloc((n ? n : 1) * sizeof(*st));
	assert_non_null(x.st);
	memcpy(x.st, st, n * sizeof(*st));
	x.nst = n;
	r->it[k][r->n[k]++] = x;
}

static void on_go(const struct rtd_goan_goroutine *go, void *ctx)
{
	struct run *r = ctx;
	assert_int_equal(rtd_goan_table_add_goroutine(r->t[0], r->a, go), 0);
	assert_int_equal(rtd_goan_table_add_goroutine(r->t[1], r->a, go), 0);
	bool v1 = rtd_goan_semantics(r->a) == RTD_GOAN_GO119;
	keep(r, 0, (struct item){.name = go->name, .pc = v1 ? go->pc : 0, .id = go->id,
				 .exec = go->exec, .total = go->total},
	     go->stats, go->nstats);
}

static void on_region(const struct rtd_goan_region *rg, void *ctx)
{
	struct run *r = ctx;
	assert_int_equal(rtd_goan_table_add_region(r->t[2], r->a, rg), 0);
	int64_t first, last;
	rtd_goan_trace_bounds(r->a, &first, &last);
	int64_t s = rg->start >= 0 ? rg->start : first, e = rg->end >= 0 ? rg->end : last;
	keep(r, 1, (struct item){.name = rg->name, .frame = rg->frame_fn, .pc = rg->frame_pc,
				 .id = rg->g, .total = e - s,
				 .exec = stat_ns(rg->stats, rg->nstats, "Execution time", "Execution")},
	     rg->stats, rg->nstats);
}

static bool same_group(const struct item *x, const struct rtd_goan_table_group *g)
{
	return !strcmp(x->name, g->name) && x->pc == g->pc &&
	       (!g->frame || !strcmp(x->frame, g->frame));
}

static int cmp_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Table @t (rows to @limit, by exec when @by_exec) against @items. */
static void check_table(const rtd_goan_table *t, struct item *items, size_t n, size_t limit,
			bool by_exec, bool v2)
{
	size_t ng = rtd_goan_table_count(t);
	uint64_t count = 0;
	for (size_t i = 0; i < n; i++)
		items[i].key = by_exec ? stat_ns(items[i].st, items[i].nst, "Execution time", "Execution")
				       : items[i].total;
	for (size_t gi = 0; gi < ng; gi++) {
		const struct rtd_goan_table_group *g = rtd_goan_table_get(t, gi);
		assert_non_null(g);
		if (gi) { /* by execution time, then name and PC */
			const struct rtd_goan_table_group *p = rtd_goan_table_get(t, gi - 1);
			assert_true(p->exec > g->exec ||
				    (p->exec == g->exec && (strcmp(p->name, g->name) < 0 ||
							    (!strcmp(p->name, g->name) && p->pc <= g->pc))));
		}
		/* its members, in the sort's order */
		struct item *m = calloc(n ? n : 1, sizeof(*m));
		assert_non_null(m);
		size_t nm = 0;
		int64_t exec = 0, total = 0;
		for (size_t i = 0; i < n; i++)
			if (same_group(&items[i], g)) {
				m[nm++] = items[i];
				exec += items[i].exec;
				total += items[i].total;
			}
		assert_int_equal(g->count, nm);
		assert_true(nm > 0);
		assert_int_equal(g->exec, exec);
		assert_int_equal(g->total, total);
		count += nm;
		qsort(m, nm, sizeof(*m), cmp_key);
		size_t want = limit && nm > limit ? limit : nm;
		assert_int_equal(g->nrows, want);
		for (size_t k = 0; k < g->nrows; k++) {
			const struct rtd_goan_table_row *row = &g->rows[k];
			assert_int_equal(row->key, m[k].key);
			assert_int_equal(row->id, m[k].id);
			/* each stat the row shows is a column, with its time */
			for (size_t s = 0; s < row->nstats && g->ncolumns < RTD_GOAN_TABLE_MAX_COLUMNS; s++) {
				size_t c = 0;
				while (c < g->ncolumns && g->columns[c] != row->stats[s].name)
					c++;
				assert_true(c < g->ncolumns);
				bool have;
				assert_int_equal(rtd_goan_table_row_stat(row, g->columns[c], &have),
						 row->stats[s].ns);
				assert_true(have);
			}
		}
		for (size_t c = 0; c < g->ncolumns; c++)
			for (size_t d = c + 1; d < g->ncolumns; d++)
				assert_ptr_not_equal(g->columns[c], g->columns[d]);
		if (v2)
			for (size_t c = 1; c < g->ncolumns; c++)
				assert_string_not_equal(g->columns[c], "Execution time");
		free(m);
	}
	assert_int_equal(count, n);
	assert_null(rtd_goan_table_get(t, ng));
}

static size_t traces, rows_seen, regions_seen;

static void check_trace(const uint8_t *b, size_t len, const char *name)
{
	if (strstr(name, "_1_5_"))
		return; /* Go 1.5 traces order by a global sequence only */
	struct rtd_gotrace_opts dopts = {.sz = sizeof(dopts), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&dopts);
	assert_non_null(d);
	struct run r = {0};
	struct rtd_goan_table_opts to[3] = {
		{.sz = sizeof(to[0]), .limit = 3},
		{.sz = sizeof(to[0]), .sort = "EXEC"},
		{.sz = sizeof(to[0]), .flags = RTD_GOAN_TABLE_REGIONS, .limit = 2, .sort = "total"},
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(rtd_goan_table_new(&to[i], &r.t[i]), 0);
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GOROUTINES, .ctx = &r,
				  .on_goroutine = on_go, .on_region = on_region};
	struct rtd_test_gosrc src = {.d = d, .b = b, .n = len, .step = 1 << 16};
	struct rtd_gotrace_event e;
	rtd_goan *a = NULL;
	int rc;
	while ((rc = rtd_test_gosrc_next(&src, &e)) > 0) {
		if (!a)
			assert_non_null(r.a = a = rtd_goan_new(d, &o));
		assert_int_equal(rtd_goan_feed(a, &e), 0);
	}
	assert_int_equal(rc, 0);
	assert_non_null(a);
	assert_int_equal(rtd_goan_finish(a), 0);
	bool v2 = rtd_goan_semantics(a) != RTD_GOAN_GO119;
	for (int i = 0; i < 3; i++)
		assert_int_equal(rtd_goan_table_finish(r.t[i], a), 0);
	check_table(r.t[0], r.it[0], r.n[0], 3, false, v2);
	check_table(r.t[1], r.it[0], r.n[0], 0, true, v2);
	check_table(r.t[2], r.it[1], r.n[1], 2, false, v2);
	traces++;
	rows_seen += r.n[0];
	regions_seen += r.n[1];
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < r.n[k]; i++)
			free(r.it[k][i].st);
		free(r.it[k]);
	}
	for (int i = 0; i < 3; i++)
		rtd_goan_table_free(r.t[i]);
	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
}

static void test_shared_traces(void **state)
{
	(void)state;
	const char *v1 = rtd_test_vector("testdata/gotrace/v1");
	const char *v2 = rtd_test_vector("testdata/gotrace/v2");
	if (!v1 || !v2)
		skip();
	rtd_test_each_file(v1, check_trace);
	rtd_test_each_go_vector(v2, true, check_trace);
	printf("%zu traces, %zu goroutines, %zu regions\n", traces, rows_seen, regions_seen);
	assert_true(traces >= 20);
	assert_true(rows_seen >= 500);
	assert_true(regions_seen >= 50);
}

/* Two goroutines of different start functions into a table capped at
 * one group; options; a region into a goroutine table. */
static void test_cap_and_args(void **state)
{
	(void)state;
	const char *v1 = rtd_test_vector("testdata/gotrace/v1/stress_1_19_good");
	if (!v1)
		skip();
	size_t len = 0;
	uint8_t *b = rtd_test_slurp(v1, &len);
	assert_non_null(b);
	struct rtd_gotrace_opts dopts = {.sz = sizeof(dopts), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&dopts);
	assert_non_null(d);
	struct rtd_test_gosrc src = {.d = d, .b = b, .n = len, .step = 1 << 16};
	struct rtd_gotrace_event e;
	assert_int_equal(rtd_test_gosrc_next(&src, &e), 1);
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GOROUTINES};
	rtd_goan *a = rtd_goan_new(d, &o);
	assert_non_null(a);

	struct rtd_goan_table_opts to = {.sz = sizeof(to), .max_groups = 1};
	rtd_goan_table *t;
	assert_int_equal(rtd_goan_table_new(&to, &t), 0);
	struct rtd_goan_goroutine g1 = {.id = 1, .name = "main.a"}, g2 = {.id = 2, .name = "main.b"};
	assert_int_equal(rtd_goan_table_add_goroutine(t, a, &g1), 0);
	assert_int_equal(rtd_goan_table_add_goroutine(t, a, &g1), 0); /* same group */
	assert_int_equal(rtd_goan_table_add_goroutine(t, a, &g2), -RTD_E_CAP);
	assert_int_equal(rtd_goan_table_add_goroutine(t, a, &g1), -RTD_E_CAP); /* sticky */
	assert_int_equal(rtd_goan_table_finish(t, a), -RTD_E_CAP);
	assert_null(rtd_goan_table_get(t, 0));
	rtd_goan_table_free(t);

	to.max_groups = 0;
	assert_int_equal(rtd_goan_table_new(&to, &t), 0);
	struct rtd_goan_region rg = {.name = "r", .frame_fn = ""};
	assert_int_equal(rtd_goan_table_add_region(t, a, &rg), -RTD_E_INVAL);
	rtd_goan_table_free(t);

	/* a caller's option this version does not know is refused */
	struct {
		struct rtd_goan_table_opts o;
		uint64_t more;
	} big = {.o = {.sz = sizeof(big)}, .more = 1};
	assert_int_equal(rtd_goan_table_new(&big.o, &t), -RTD_E_INVAL);
	big.more = 0;
	assert_int_equal(rtd_goan_table_new(&big.o, &t), 0);
	rtd_goan_table_free(t);
	to.flags = 1u << 7;
	assert_int_equal(rtd_goan_table_new(&to, &t), -RTD_E_INVAL);
	assert_int_equal(rtd_goan_table_new(NULL, &t), -RTD_E_INVAL);
	rtd_goan_table_free(NULL);

	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_traces),
		cmocka_unit_test(test_cap_and_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
