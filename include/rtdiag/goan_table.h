/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/goan_table.h - go tool trace's goroutine page as a table: the
 * goroutines the analyses report (rtd_goan's on_goroutine) grouped by
 * start function, or the user regions (on_region) grouped by type, each
 * group with its count, execution and total time, and its rows (one
 * goroutine or region each, with its times by stat) sorted by a stat and
 * kept to a limit, the page's columns in its order. (The analyses' own
 * rtd_goan_groups_foreach() gives the groups' sums only, no rows.)
 *
 * Memory: one entry per group (at most @max_groups) and, per group, at
 * most twice @limit rows (@limit once rtd_goan_table_finish() has run;
 * every row with @limit 0); with a limit, never the length of the trace. Names (groups', frames', stats') are
 * borrowed from the analyses: valid while the rtd_goan they came from is.
 */
#ifndef RTDIAG_GOAN_TABLE_H
#define RTDIAG_GOAN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/goanalysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rtd_goan_table_opts.flags: group user regions by type (fed with
 * rtd_goan_table_add_region()), not goroutines by start function. */
#define RTD_GOAN_TABLE_REGIONS (1u << 0)

/* The default cap on distinct groups (rtd_goan_table_opts.max_groups). */
#define RTD_GOAN_TABLE_MAX_GROUPS 1000000

/**
 * struct rtd_goan_table_opts - how to group (zero-filled, sz first)
 * @sz: sizeof(struct rtd_goan_table_opts)
 * @flags: RTD_GOAN_TABLE_REGIONS or 0
 * @sort: the rows' order, largest first: NULL or "total" (the row's
 *        total), a stat's name ("Execution time") or its short form
 *        (exec, sched, syscall, unknown, net, network, sync, gc, sweep),
 *        any case; a stat a row lacks counts 0; ties by id
 * @limit: the rows kept per group (0: all)
 * @max_groups: the cap on distinct groups (0: RTD_GOAN_TABLE_MAX_GROUPS); one
 *        more is -RTD_E_CAP
 */
struct rtd_goan_table_opts {
	size_t sz;
	unsigned flags;
	const char *sort;
	size_t limit;
	size_t max_groups;
};

/**
 * struct rtd_goan_table_row - one goroutine, or one region, of a group
 * @id: the goroutine (of a region: the goroutine it ran on)
 * @task: a region's task (0: none, and for goroutines)
 * @start, @end: its times (a region open at an end of the trace: that end)
 * @total: @end - @start for a region; a goroutine's total time
 * @key: what the rows are sorted by: @total, or the sort's stat
 * @stats, @nstats: where its time went, by stat, as the analyses gave it
 */
struct rtd_goan_table_row {
	uint64_t id, task;
	int64_t start, end, total, key;
	const struct rtd_goan_stat *stats;
	size_t nstats;
};

/* The most columns of a group (rtd_goan_group.columns). */
#define RTD_GOAN_TABLE_MAX_COLUMNS 64

/**
 * struct rtd_goan_table_group - one start function (or region type)
 * @name: the start function ("" when no stack showed it), or the region
 *        type ("" for the task a goroutine inherited from its creator)
 * @pc: the start function's PC under Go 1.19 semantics (0 otherwise); a
 *      region's top frame's PC
 * @frame: a region's top frame ("" when none); NULL for goroutines
 * @count: goroutines (regions) of the group, kept as rows or not
 * @exec: their execution time
 * @total: their total time
 * @rows, @nrows: the rows kept, in the sort's order, at most the limit
 * @columns, @ncolumns: the stat names the group's rows have, in the order
 *        of Go's page (Go 1.22+ semantics: "Execution time" first, then by
 *        name, the overlapping ranges last; Go 1.19: first seen first);
 *        taken over every row held when grouping ended, shown or not
 */
struct rtd_goan_table_group {
	const char *name;
	uint64_t pc;
	const char *frame;
	uint64_t count;
	int64_t exec, total;
	const struct rtd_goan_table_row *rows;
	size_t nrows;
	const char *columns[RTD_GOAN_TABLE_MAX_COLUMNS];
	size_t ncolumns;
};

typedef struct rtd_goan_table rtd_goan_table;

/**
 * rtd_goan_table_new - an empty grouping
 * @o: the options (rtd_opts_copy() rules: an older, shorter struct works;
 *     non-zero bytes past the fields this version knows are refused)
 * @out: the grouping
 *
 * Returns: 0, -RTD_E_INVAL (bad options) or -ENOMEM.
 */
RTD_API int rtd_goan_table_new(const struct rtd_goan_table_opts *o,
				rtd_goan_table **out);

/**
 * rtd_goan_table_free - free a grouping; NULL does nothing
 * @g: the grouping
 */
RTD_API void rtd_goan_table_free(rtd_goan_table *g);

/**
 * rtd_goan_table_add_goroutine - one goroutine into its group
 * @g: the grouping (without RTD_GOAN_TABLE_REGIONS)
 * @a: the analyses that reported it (their semantics decide whether the
 *     start function's PC splits groups: Go 1.19's does)
 * @go: the goroutine, as on_goroutine gives it
 *
 * Call it from rtd_goan_opts.on_goroutine. After an error every later add
 * does nothing and returns it again.
 *
 * Returns: 0, -RTD_E_INVAL (a region grouping), -RTD_E_CAP (over
 * @max_groups) or -ENOMEM.
 */
RTD_API int rtd_goan_table_add_goroutine(rtd_goan_table *g, const rtd_goan *a,
					  const struct rtd_goan_goroutine *go);

/**
 * rtd_goan_table_add_region - one user region into the group of its type
 * and top frame
 * @g: the grouping (with RTD_GOAN_TABLE_REGIONS)
 * @a: the analyses that reported it (a region open at an end of the trace
 *     is taken to that end: rtd_goan_trace_bounds() so far)
 * @rg: the region, as on_region gives it
 *
 * Call it from rtd_goan_opts.on_region. Errors are sticky as for
 * rtd_goan_table_add_goroutine().
 *
 * Returns: 0, -RTD_E_INVAL (a goroutine grouping), -RTD_E_CAP or -ENOMEM.
 */
RTD_API int rtd_goan_table_add_region(rtd_goan_table *g, const rtd_goan *a,
				       const struct rtd_goan_region *rg);

/**
 * rtd_goan_table_finish - sort the groups and their rows, once fed
 * @g: the grouping
 * @a: the analyses, finished (their semantics order the columns)
 *
 * Groups come by execution time (largest first), then name, PC and frame;
 * each group's rows by the sort, kept to the limit.
 *
 * Returns: 0, or the first error an add met (nothing is sorted then).
 */
RTD_API int rtd_goan_table_finish(rtd_goan_table *g, const rtd_goan *a);

/**
 * rtd_goan_table_count - the number of groups
 * @g: the grouping
 *
 * Returns: the groups so far.
 */
RTD_API size_t rtd_goan_table_count(const rtd_goan_table *g);

/**
 * rtd_goan_table_get - one group, after rtd_goan_table_finish()
 * @g: the grouping
 * @i: its index, 0 to rtd_goan_table_count() - 1, in the finished order
 *
 * Returns: the group (valid until rtd_goan_table_free()), or NULL when
 * @i is out of range or the grouping is not finished.
 */
RTD_API const struct rtd_goan_table_group *rtd_goan_table_get(const rtd_goan_table *g,
							 size_t i);

/**
 * rtd_goan_table_row_stat - a row's time in one stat
 * @r: the row
 * @name: a column of its group (rtd_goan_group.columns: the same pointer)
 * @have: set to whether the row has that stat
 *
 * Returns: the nanoseconds (0 when the row lacks it).
 */
RTD_API int64_t rtd_goan_table_row_stat(const struct rtd_goan_table_row *r,
					const char *name, bool *have);

#ifdef __cplusplus
}
#endif

#endif
