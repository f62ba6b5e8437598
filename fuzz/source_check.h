/* SPDX-License-Identifier: MIT */
/*
 * source_check.h - what every record source must keep, for any input
 * (rtdiag/source.h): records of known kinds with times that never go
 * back; every string, field and frame a record points at readable (ASan
 * checks the reads); a sample with a stack; at the end 0 again, or an
 * error record {code, offset, message} that comes back unchanged on every
 * later call. Used by the fuzz targets of the sources.
 */
#ifndef RTD_FUZZ_SOURCE_CHECK_H
#define RTD_FUZZ_SOURCE_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "rtdiag/source.h"

static volatile size_t rtd_fuzz_sink;

static void rtd_fuzz_touch(const char *s)
{
	if (s)
		rtd_fuzz_sink += strlen(s);
}

/* One record as the contract wants it, its time not before @last's
 * (updated); abort() on a breach. */
static void rtd_fuzz_check(const struct rtd_record *r, int64_t *last)
{
	if (r->kind == RTD_REC_NONE || r->kind >= RTD_REC_KINDS || r->kind == RTD_REC_ERROR)
		abort();
	if (r->mono < *last)
		abort();
	*last = r->mono;
	rtd_fuzz_touch(r->name);
	rtd_fuzz_touch(r->category);
	rtd_fuzz_touch(r->unit);
	for (size_t i = 0; i < r->nfields; i++) {
		if (!r->fields[i].name)
			abort();
		rtd_fuzz_touch(r->fields[i].name);
		if (r->fields[i].type == RTD_FIELD_STR)
			rtd_fuzz_touch(r->fields[i].s);
	}
	if (r->kind == RTD_REC_SAMPLE && !r->stack)
		abort();
	if (r->stack)
		for (uint32_t i = 0; i < r->stack->n; i++)
			rtd_fuzz_touch(r->stack->frames[i].name);
}

/* The end of @s after its records: 0 again, or an error record that
 * comes back unchanged; abort() on a breach. */
static void rtd_fuzz_check_end(rtd_source *s, int rc, const struct rtd_record *r)
{
	if (rc == 0) {
		if (rtd_source_next(s, &r) != 0)
			abort();
		return;
	}
	if (r->kind != RTD_REC_ERROR || r->code != rc || !r->message)
		abort();
	rtd_fuzz_touch(r->message);
	uint64_t off = r->offset;
	const struct rtd_record *again;
	if (rtd_source_next(s, &again) != rc || again->code != rc || again->offset != off)
		abort();
	struct rtd_clock c;
	if (rtd_source_clock(s, &c) < 0)
		abort();
}

/* Pull @s to its end, checking the contract; abort() on a breach.
 * Returns the records pulled. */
static size_t rtd_fuzz_drain(rtd_source *s)
{
	const struct rtd_record *r;
	int rc;
	size_t n = 0;
	int64_t last = INT64_MIN;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		rtd_fuzz_check(r, &last);
		n++;
	}
	rtd_fuzz_check_end(s, rc, r);
	return n;
}

struct rtd_fuzz_each {
	int64_t last;
	size_t n;
};

static inline int rtd_fuzz_take(void *ctx, const struct rtd_record *r)
{
	struct rtd_fuzz_each *e = ctx;
	rtd_fuzz_check(r, &e->last);
	e->n++;
	return 0;
}

/* rtd_fuzz_drain() through rtd_source_each(): the records a source hands
 * out from its own loop. Returns the records handed. */
static inline size_t rtd_fuzz_drain_each(rtd_source *s)
{
	struct rtd_fuzz_each e = {INT64_MIN, 0};
	int rc = rtd_source_each(s, rtd_fuzz_take, &e);
	const struct rtd_record *r = NULL;
	if (rc < 0 && rtd_source_next(s, &r) != rc)
		abort(); /* the error record comes with the next pull */
	if (rc > 0)
		abort(); /* the callback never stops it */
	rtd_fuzz_check_end(s, rc, r);
	return e.n;
}

#endif /* RTD_FUZZ_SOURCE_CHECK_H */
