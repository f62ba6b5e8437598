/* SPDX-License-Identifier: MIT */
/*
 * perf_data - fuzz the perf.data decoder (rtdiag/perf_data.h).
 *
 * Input: a whole perf.data file. Every record is pulled and what it points
 * at is touched (call chains, raw data, user stacks, strings), and each
 * tracepoint field is decoded, so a read past the input is caught. The
 * corpus holds files Debian's perf wrote (-g, -z, --call-graph dwarf,
 * -e sched:sched_switch, two events, --switch-events) and cut ones.
 * The tracing data's format texts are not parsed (RTD_PERF_DATA_NO_FORMATS:
 * libtraceevent's to parse, see perf_tpfield); the tracepoint fields are
 * decoded in tests/unit/perf/test_perf_data.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/perf_data.h"

static volatile uint64_t sink;

static void touch(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; p && i < n; i++)
		sink += p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rtd_perf_data *d;
	/* format texts are libtraceevent's to parse, and 1.7.1 crashes and
	 * leaks on malformed ones (as perf_tpfield says): not fuzzed */
	RTD_OPTS(rtd_perf_data_opts, o, .flags = RTD_PERF_DATA_NO_FORMATS);
	int rc = rtd_perf_data_open_mem(data, size, &o, &d);
	if (d) {
		const char *msg = rtd_perf_data_error(d, NULL);
		sink += strlen(msg);
	}
	if (rc) {
		rtd_perf_data_free(d);
		return 0;
	}
	size_t nb;
	const struct rtd_perf_data_build_id *b = rtd_perf_data_build_ids(d, &nb);
	for (size_t i = 0; i < nb; i++)
		sink += strlen(b[i].path) + b[i].len;
	for (size_t i = 0; i < rtd_perf_data_nevents(d); i++)
		sink += strlen(rtd_perf_data_event(d, i)->name);
	struct rtd_perf_data_rec r;
	while (rtd_perf_data_next(d, &r) == 1) {
		const struct rtd_perf_sample *s = r.s;
		touch(s->callchain, s->callchain_nr * 8);
		touch(s->raw, s->raw_size);
		touch(s->stack_user, s->stack_user_size);
		touch(s->regs_user, (uint64_t)s->regs_user_nr * 8);
		if ((s->type == 1 || s->type == 10) && s->rec.mmap.filename)
			sink += strlen(s->rec.mmap.filename);
		if (s->type == 3 && s->rec.comm.comm)
			sink += strlen(s->rec.comm.comm);
		const struct rtd_perf_data_event *e =
			r.event >= 0 ? rtd_perf_data_event(d, (size_t)r.event) : NULL;
		for (unsigned i = 0; e && s->type == 9 && i < e->nfields; i++) {
			struct rtd_perf_value v;
			if (rtd_perf_data_field(e, s, i, &v) == 0) {
				touch((const uint8_t *)v.str, v.str ? v.len : 0);
				touch(v.data, v.data ? v.len : 0);
			}
		}
	}
	sink += strlen(rtd_perf_data_error(d, NULL));
	rtd_perf_data_free(d);
	return 0;
}
