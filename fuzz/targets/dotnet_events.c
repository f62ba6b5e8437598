/* SPDX-License-Identifier: MIT */
/*
 * dotnet_events - fuzz what reads .NET events beyond the stream decoder:
 * the heap graph (GC bulk node/edge/root/type payloads, dominators,
 * retained sizes), the counters reader (EventCounters structs, Metrics
 * events with numbers as text, quantile strings) and the profile builder
 * for every kind (AllocationTick, Contention, Exception, R2RGetEntryPoint
 * payloads), on any input fed through the nettrace decoder. The counters
 * also from a nettrace source's records (rtd_counters_record(), the
 * source filtered by rtd_counters_want()/_fields(), in stream order: the
 * decoder's order here).
 * Invariant: nothing crashes or leaks; results are read back in full;
 * when the source reads the input to its end, the records give the
 * events' series of counters, record for record.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/counters.h"
#include "rtdiag/gcheap.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"

#define SPEC "System.Runtime,Rtdiag.Test,Rtdiag-Counters"

/* A series of counter records, as one running hash of their contents */
struct series {
	uint64_t hash, n;
};

static void mix(struct series *s, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		s->hash = (s->hash ^ b[i]) * 1099511628211ull;
}

static void mix_str(struct series *s, const char *str)
{
	mix(s, str, strlen(str) + 1);
}

static void series_add(struct series *s, const struct rtd_counter_record *r)
{
	mix_str(s, r->provider);
	mix_str(s, r->name);
	mix_str(s, r->display_name);
	mix_str(s, r->unit);
	mix_str(s, r->tags);
	mix_str(s, r->meter_tags);
	mix_str(s, r->instrument_tags);
	double v[] = {r->value, r->total, r->min, r->max, r->count, r->sum, r->interval_sec};
	mix(s, v, sizeof(v));
	uint64_t u[] = {r->kind, r->timestamp, r->nquantiles, r->has_value, r->has_total};
	mix(s, u, sizeof(u));
	mix(s, r->quantile, r->nquantiles * sizeof(double));
	mix(s, r->qvalue, r->nquantiles * sizeof(double));
	s->n++;
}

struct ctx {
	rtd_nettrace *dec;
	rtd_gcheap *heap;
	rtd_counters *counters;
	rtd_nettrace_profiler *prof;
	uint64_t records;
	struct series events;
};

static int on_record(void *c, const struct rtd_counter_record *r)
{
	struct ctx *x = c;
	x->records += strlen(r->provider) + strlen(r->name) + r->nquantiles;
	series_add(&x->events, r);
	return 0;
}

struct rctx {
	rtd_source *src;
	rtd_counters *counters;
	struct series records;
};

static int on_rec_counter(void *c, const struct rtd_counter_record *r)
{
	series_add(&((struct rctx *)c)->records, r);
	return 0;
}

static int on_rec(void *c, const struct rtd_record *rec)
{
	struct rctx *x = c;
	struct rtd_clock clock;
	if (rtd_source_clock(x->src, &clock))
		abort();
	return rtd_counters_record(x->counters, &clock, rec) == -ENOMEM;
}

/* The counters from the records of the same bytes: the events' series
 * when the source reads to the end (a source stops at a value it cannot
 * read, where the decoder's reader goes on) */
static void counters_by_records(const uint8_t *data, size_t size, const struct series *events)
{
	struct rctx x = {0};
	x.counters = rtd_counters_new(SPEC, on_rec_counter, &x, NULL, 0);
	if (!x.counters)
		abort();
	rtd_counters_prefer_meters(x.counters, 1.0);
	struct rtd_nettrace_source_opts o = {.sz = sizeof(o), .stream_order = true,
					     .want = rtd_counters_want, .want_ctx = x.counters,
					     .fields = rtd_counters_fields,
					     .fields_ctx = x.counters};
	int err;
	x.src = rtd_nettrace_source_mem(data, size, &o, &err);
	if (!x.src)
		abort();
	int rc = rtd_source_each(x.src, on_rec, &x);
	if (rc == 1)
		rc = -ENOMEM; /* the reader's own failure */
	if (rtd_counters_flush(x.counters))
		abort();
	if (rc == 0 && (x.records.n != events->n || x.records.hash != events->hash))
		abort();
	rtd_source_free(x.src);
	rtd_counters_free(x.counters);
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
	x.counters = rtd_counters_new(SPEC, on_record, &x, NULL, 0);
	x.prof = rtd_nettrace_profiler_new(&po);
	if (!x.dec || !x.heap || !x.counters || !x.prof)
		abort();
	rtd_counters_prefer_meters(x.counters, 1.0);
	rtd_nettrace_feed(x.dec, data, size);
	rtd_nettrace_finish(x.dec);
	if (rtd_counters_flush(x.counters))
		abort();
	counters_by_records(data, size, &x.events);
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
