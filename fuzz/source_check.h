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

/* Pull @s to its end, checking the contract; abort() on a breach.
 * Returns the records pulled. */
static size_t rtd_fuzz_drain(rtd_source *s)
{
	const struct rtd_record *r;
	int rc;
	size_t n = 0;
	int64_t last = INT64_MIN;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		if (r->kind == RTD_REC_NONE || r->kind >= RTD_REC_KINDS || r->kind == RTD_REC_ERROR)
			abort();
		if (r->mono < last)
			abort();
		last = r->mono;
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
		n++;
	}
	if (rc == 0) {
		if (rtd_source_next(s, &r) != 0)
			abort();
		return n;
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
	return n;
}

#endif /* RTD_FUZZ_SOURCE_CHECK_H */
