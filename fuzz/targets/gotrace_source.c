/* SPDX-License-Identifier: MIT */
/*
 * gotrace_source - fuzz the Go trace record source: the ordered decoder
 * read again through the source's input, the goroutine state tracker,
 * the records made of its events (states on threads or lanes, ranges,
 * regions, tasks, logs, samples, metrics), the clock snapshots and the
 * error record. Invariants: source_check.h's contract, pulled and handed
 * out by rtd_source_each() (the source's own loop), the same count both
 * ways, also as Go's own events (go_events, with and without the
 * timeline's field filter); and, for an input
 * read to its end without an error, every slice begun is ended on its
 * (thread, lane) and none ends there unopened.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../source_check.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/gotrace_timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct open_slice {
	uint64_t tid, lane;
	size_t depth;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rtd_source *s = rtd_gotrace_source_mem(data, size, NULL, NULL);
	if (!s)
		return 0;
	size_t pulled = rtd_fuzz_drain(s);
	rtd_source_free(s);
	s = rtd_gotrace_source_mem(data, size, NULL, NULL);
	if (!s)
		return 0;
	if (rtd_fuzz_drain_each(s) != pulled)
		abort();
	rtd_source_free(s);

	/* Go's own events (go_events: the source's own loop, gts_each(),
	 * which the default source above does not have), each field or
	 * only the timeline's (field_want), pulled and handed out the same */
	RTD_OPTS(rtd_gotrace_source_opts, go, .go_events = true,
		 .field_want = size & 1 ? rtd_tl_gotrace_fields : NULL);
	s = rtd_gotrace_source_mem(data, size, &go, NULL);
	if (!s)
		return 0;
	pulled = rtd_fuzz_drain(s);
	rtd_source_free(s);
	s = rtd_gotrace_source_mem(data, size, &go, NULL);
	if (!s)
		return 0;
	if (rtd_fuzz_drain_each(s) != pulled)
		abort();
	rtd_source_free(s);

	/* nesting, with a small table of (thread, lane) depths */
	s = rtd_gotrace_source_mem(data, size, NULL, NULL);
	if (!s)
		return 0;
	enum { MAXT = 4096 };
	static struct open_slice t[MAXT];
	size_t nt = 0;
	const struct rtd_record *r;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		if (r->kind != RTD_REC_SLICE_BEGIN && r->kind != RTD_REC_SLICE_END)
			continue;
		size_t i = 0;
		while (i < nt && (t[i].tid != r->tid || t[i].lane != r->lane))
			i++;
		if (i == nt) {
			if (nt == MAXT)
				break; /* too many tracks for this check */
			t[nt++] = (struct open_slice){r->tid, r->lane, 0};
		}
		if (r->kind == RTD_REC_SLICE_BEGIN)
			t[i].depth++;
		else if (t[i].depth-- == 0)
			abort();
	}
	if (rc == 0)
		for (size_t i = 0; i < nt; i++)
			if (t[i].depth)
				abort();
	rtd_source_free(s);
	return 0;
}
