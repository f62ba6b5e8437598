/* SPDX-License-Identifier: MIT */
/*
 * dotnet_events - fuzz what reads .NET events beyond the stream decoder:
 * the heap graph (GC bulk node/edge/root/type payloads, dominators,
 * retained sizes), the counters reader (EventCounters structs, Metrics
 * events with numbers as text, quantile strings) and the profile builder
 * for every kind (AllocationTick, Contention, Exception, R2RGetEntryPoint
 * payloads), on any input fed through the nettrace decoder.
 * Invariant: nothing crashes or leaks; results are read back in full.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/counters.h"
#include "rtdiag/gcheap.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

struct ctx {
	rtd_nettrace *dec;
	rtd_gcheap *heap;
	rtd_counters *counters;
	rtd_nettrace_profiler *prof;
	uint64_t records;
};

static int on_record(void *c, const struct rtd_counter_record *r)
{
	struct ctx *x = c;
	x->records += strlen(r->provider) + strlen(r->name) + r->nquantiles;
	return 0;
}

static int on_event(void *c, const struct rtd_nettrace_event *ev)
{
	struct ctx *x = c;
	rtd_gcheap_event(x->heap, x->dec, ev);
	rtd_counters_event(x->counters, x->dec, ev);
	return rtd_nettrace_profiler_event(x->prof, x->dec, ev) == -ENOMEM;
}

static int on_sp(void *c, uint64_t ts)
{
	(void)ts;
	rtd_nettrace_profiler_seqpoint(((struct ctx *)c)->prof);
	return 0;
}

static int on_stack(void *c, uint64_t tid, const char *const *f, size_t n)
{
	(void)c;
	(void)tid;
	for (size_t i = 0; i < n; i++)
		if (!f[i])
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx x = {0};
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &x,
				      .on_event = on_event, .on_seqpoint = on_sp};
	struct rtd_gcheap_opts ho = {.sz = sizeof(ho), .max_objects = 1u << 16,
				     .max_refs = 1u << 18};
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po), .kinds = 0xF,
						.max_stacks = 1u << 14,
						.max_entries = 1u << 14};
	x.dec = rtd_nettrace_new(&o);
	x.heap = rtd_gcheap_new(&ho);
	x.counters = rtd_counters_new("System.Runtime,Rtdiag.Test,Rtdiag-Counters",
				      on_record, &x, NULL, 0);
	x.prof = rtd_nettrace_profiler_new(&po);
	if (!x.dec || !x.heap || !x.counters || !x.prof)
		abort();
	rtd_nettrace_feed(x.dec, data, size);
	rtd_nettrace_finish(x.dec);
	if (rtd_gcheap_finish(x.heap) == 0) {
		struct rtd_gcheap_type *t;
		size_t n;
		struct rtd_gcheap_stats s;
		rtd_gcheap_stats(x.heap, &s);
		for (uint64_t i = 0; i < s.objects; i++) {
			struct rtd_gcheap_object ob;
			if (rtd_gcheap_object(x.heap, i, &ob) || !ob.type)
				abort();
			for (uint64_t k = 0; k < ob.nrefs; k++)
				if (rtd_gcheap_ref(x.heap, i, k) >= (int64_t)s.objects)
					abort();
		}
		if (rtd_gcheap_types(x.heap, &t, &n) == 0)
			free(t);
	}
	for (unsigned k = 1; k <= 8; k <<= 1) {
		int err;
		rtd_profile *p = rtd_nettrace_profiler_profile(x.prof, k, &err);
		rtd_profile_free(p);
	}
	rtd_nettrace_profiler_thread_stacks(x.prof, on_stack, NULL);
	rtd_nettrace_profiler_free(x.prof);
	rtd_counters_free(x.counters);
	rtd_gcheap_free(x.heap);
	rtd_nettrace_free(x.dec);
	return 0;
}
