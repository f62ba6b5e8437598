/* SPDX-License-Identifier: MIT */
/*
 * test_profile_records - the nettrace profile builder fed a nettrace
 * source's records (rtd_nettrace_profiler_pull()) makes the very profiles
 * it makes from a decoder's events and sequence points: for every shared
 * trace with SampleProfiler samples, thread time, --managed-only and
 * running mode, the folded text of rtd_nettrace_profiler_finish() and
 * the pprof bytes of rtd_nettrace_profiler_profile() are equal, for a
 * source of samples alone with address frames (what the CLI reads) and
 * for a source of every record with named frames. Then the allocation,
 * lock, wait and exception profiles from records whose fields say what
 * the runtime's payloads say (made here: no shared trace has these
 * events) equal the profiles of those events.
 */
#include "test_util.h"

#include <stdio.h>

#include "common/buf.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"

#include "nt_encode.h"
#include "nt_prof.h"

/* The two outputs of a builder: finish()'s folded text, then the CPU
 * profile's pprof bytes, one after the other in one string. */
static char *outputs(rtd_nettrace_profiler *p, size_t *len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	assert_non_null(f);
	rtd_profile *one = rtd_profile_new("cpu", "nanoseconds");
	assert_int_equal(rtd_nettrace_profiler_finish(p, one), 0);
	assert_int_equal(rtd_profile_write_folded(one, f), 0);
	rtd_profile_free(one);
	int err = 0;
	rtd_profile *cpu = rtd_nettrace_profiler_profile(p, RTD_NETTRACE_PROFILE_CPU, &err);
	assert_non_null(cpu);
	assert_int_equal(rtd_profile_write_pprof(cpu, f), 0);
	rtd_profile_free(cpu);
	fclose(f);
	*len = n;
	return text;
}

/* The builder fed a decoder's events, in stream order (as the CLI did) */
static char *by_events(const uint8_t *buf, size_t len,
		       const struct rtd_nettrace_profiler_opts *po, size_t *n)
{
	struct pc p = {.prof = rtd_nettrace_profiler_new(po)};
	RTD_OPTS(rtd_nettrace_opts, o, .ctx = &p, .on_event = on_event, .on_seqpoint = on_sp);
	p.dec = rtd_nettrace_new(&o);
	assert_non_null(p.prof);
	assert_non_null(p.dec);
	assert_int_equal(rtd_nettrace_feed(p.dec, buf, len), 1);
	assert_int_equal(rtd_nettrace_finish(p.dec), 0);
	assert_true(rtd_nettrace_profiler_samples(p.prof) > 0);
	char *out = outputs(p.prof, n);
	rtd_nettrace_profiler_free(p.prof);
	rtd_nettrace_free(p.dec);
	return out;
}

/* The builder fed a source's records */
static char *by_records(const char *path, const struct rtd_nettrace_profiler_opts *po,
			const struct rtd_nettrace_source_opts *so, size_t *n,
			uint64_t samples)
{
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(po);
	int err = 0;
	rtd_source *src = rtd_nettrace_source_open(path, so, &err);
	assert_non_null(p);
	assert_non_null(src);
	assert_non_null(rtd_nettrace_source_methods(src));
	assert_int_equal(rtd_nettrace_profiler_pull(p, src), 0);
	assert_int_equal(rtd_nettrace_profiler_samples(p), samples);
	char *out = outputs(p, n); /* the source names the frames: still there */
	rtd_nettrace_profiler_free(p);
	rtd_source_free(src);
	return out;
}

static void test_samples(void **state)
{
	(void)state;
	int done = 0;
	for (size_t t = 0; t < NT_SAMPLE_TRACES; t++) {
		size_t len = 0;
		uint8_t *buf = nt_sample_trace(t, &len);
		if (!buf)
			continue;
		const char *path = rtd_test_vector(nt_sample_traces[t]);
		for (int mode = 0; mode < 3; mode++) {
			RTD_OPTS(rtd_nettrace_profiler_opts, po, .managed_only = mode == 1,
				 .running_only = mode == 2);
			size_t ne = 0, nr = 0, na = 0;
			char *ev = by_events(buf, len, &po, &ne);
			/* the count the event path saw */
			rtd_nettrace_profiler *q = rtd_nettrace_profiler_new(&po);
			struct pc p = {.prof = q};
			RTD_OPTS(rtd_nettrace_opts, o, .ctx = &p, .on_event = on_event);
			p.dec = rtd_nettrace_new(&o);
			rtd_nettrace_feed(p.dec, buf, len);
			rtd_nettrace_finish(p.dec);
			uint64_t samples = rtd_nettrace_profiler_samples(q);
			rtd_nettrace_profiler_free(q);
			rtd_nettrace_free(p.dec);

			RTD_OPTS(rtd_nettrace_source_opts, cli, .kinds = 1u << RTD_REC_SAMPLE,
				 .address_frames = true, .no_prepass = true);
			char *rec = by_records(path, &po, &cli, &nr, samples);
			char *all = by_records(path, &po, NULL, &na, samples);
			if (ne != nr || memcmp(ev, rec, ne))
				fail_msg("%s mode %d: the records' profile differs (%zu vs %zu bytes)",
					 nt_sample_traces[t], mode, nr, ne);
			if (ne != na || memcmp(ev, all, ne))
				fail_msg("%s mode %d: every record's profile differs (%zu vs %zu)",
					 nt_sample_traces[t], mode, na, ne);
			free(ev);
			free(rec);
			free(all);
		}
		free(buf);
		done++;
	}
	if (!done)
		skip();
}

/* ---- the other kinds, from records made here ------------------------- */

#define RT "Microsoft-Windows-DotNETRuntime"

struct fact {
	const struct rtd_nettrace_metadata *m;
	uint64_t tid, ts;
	const uint64_t *ips;
	size_t n;
	/* the payload's values, written as the runtime does and as fields */
	uint64_t amount, objsize;
	const char *type;
	double dur; /* Contention/Stop's DurationNs; < 0: none */
};

static const struct rtd_nettrace_metadata m_alloc = {.provider = RT, .event_id = 10,
						     .name = "GC/AllocationTick"};
static const struct rtd_nettrace_metadata m_cstart = {.provider = RT, .event_id = 81,
						      .name = "Contention/Start"};
static const struct rtd_nettrace_metadata m_cstop = {.provider = RT, .event_id = 91,
						     .name = "Contention/Stop"};
static const struct rtd_nettrace_metadata m_exc = {.provider = RT, .event_id = 80,
						   .name = "Exception/Start"};
static const struct rtd_nettrace_metadata m_wstart = {.provider = RT, .event_id = 301,
						      .name = "WaitHandleWait/Start"};
static const struct rtd_nettrace_metadata m_wstop = {.provider = RT, .event_id = 302,
						     .name = "WaitHandleWait/Stop"};

static void payload(const struct fact *f, rtd_buf *b)
{
	if (f->m == &m_alloc) { /* GC/AllocationTick V4 */
		e_u32(b, (uint32_t)f->amount);
		e_u32(b, 0);
		e_u16(b, 0);
		e_u64(b, f->amount);
		e_u64(b, 0x77);
		e_utf16z(b, f->type);
		e_u32(b, 0);
		e_u64(b, 0x1000);
		e_u64(b, f->objsize);
	} else if (f->m == &m_cstop && f->dur >= 0) { /* V1 */
		rtd_buf_append(b, "\0\0\0", 3);
		uint64_t bits;
		memcpy(&bits, &f->dur, 8);
		e_u64(b, bits);
	} else if (f->m == &m_exc) {
		e_utf16z(b, f->type);
		e_utf16z(b, "message");
	}
}

static size_t fields_of(const struct fact *f, struct rtd_field *out)
{
	size_t n = 0;
	if (f->m == &m_alloc) {
		out[n++] = (struct rtd_field){.name = "AllocationAmount", .type = RTD_FIELD_U64,
					      .u = (uint32_t)f->amount};
		out[n++] = (struct rtd_field){.name = "AllocationAmount64",
					      .type = RTD_FIELD_U64, .u = f->amount};
		out[n++] = (struct rtd_field){.name = "TypeName", .type = RTD_FIELD_STR,
					      .s = f->type};
		out[n++] = (struct rtd_field){.name = "ObjectSize", .type = RTD_FIELD_U64,
					      .u = f->objsize};
	} else if (f->m == &m_cstop && f->dur >= 0) {
		out[n++] = (struct rtd_field){.name = "DurationNs", .type = RTD_FIELD_F64,
					      .f = f->dur};
	} else if (f->m == &m_exc) {
		out[n++] = (struct rtd_field){.name = "ExceptionType", .type = RTD_FIELD_STR,
					      .s = f->type};
	}
	return n;
}

static const uint64_t st_a[] = {0x1010, 0x2010, 0x4010};
static const uint64_t st_b[] = {0x1020, 0x3010};

static const struct fact facts[] = {
	{&m_alloc, 5, 100, st_a, 3, 102400, 24, "System.String", -1},
	{&m_alloc, 5, 110, st_a, 3, 204800, 0, "System.Byte[]", -1},
	{&m_alloc, 6, 120, st_b, 2, 100000, 1000, "System.String", -1},
	{&m_cstart, 5, 130, st_b, 2, 0, 0, NULL, -1},
	{&m_cstop, 5, 180, NULL, 0, 0, 0, NULL, 42.0},
	{&m_cstart, 6, 190, st_a, 3, 0, 0, NULL, -1},
	{&m_cstop, 6, 250, NULL, 0, 0, 0, NULL, -1},
	{&m_cstop, 7, 260, NULL, 0, 0, 0, NULL, 9.0}, /* no Start */
	{&m_exc, 6, 300, st_a, 3, 0, 0, "System.InvalidOperationException", -1},
	{&m_wstart, 5, 310, st_a, 3, 0, 0, NULL, -1},
	{&m_wstop, 5, 390, NULL, 0, 0, 0, NULL, -1},
};

/* Every kind's pprof bytes, one after the other */
static char *kinds_out(rtd_nettrace_profiler *p, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	assert_non_null(f);
	for (unsigned k = RTD_NETTRACE_PROFILE_ALLOC; k <= RTD_NETTRACE_PROFILE_WAIT; k <<= 1) {
		int err = 0;
		rtd_profile *prof = rtd_nettrace_profiler_profile(p, k, &err);
		assert_non_null(prof);
		assert_true(rtd_profile_total(prof) > 0);
		assert_int_equal(rtd_profile_write_pprof(prof, f), 0);
		rtd_profile_write_folded(prof, f);
		rtd_profile_free(prof);
	}
	fclose(f);
	return text;
}

static void test_other_kinds(void **state)
{
	(void)state;
	unsigned kinds = RTD_NETTRACE_PROFILE_ALLOC | RTD_NETTRACE_PROFILE_LOCK |
			 RTD_NETTRACE_PROFILE_EXCEPTION | RTD_NETTRACE_PROFILE_WAIT;
	RTD_OPTS(rtd_nettrace_profiler_opts, po, .kinds = kinds);
	rtd_nettrace_profiler *ev = rtd_nettrace_profiler_new(&po);
	rtd_nettrace_profiler *rec = rtd_nettrace_profiler_new(&po);
	rtd_intern *in = rtd_intern_new();
	assert_non_null(ev);
	assert_non_null(rec);
	assert_non_null(in);
	/* no header: ticks are nanoseconds on both sides */
	RTD_OPTS(rtd_nettrace_opts, o, .on_event = NULL);
	rtd_nettrace *dec = rtd_nettrace_new(&o);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		const struct fact *f = &facts[i];
		rtd_buf b;
		rtd_buf_init(&b, 0);
		payload(f, &b);
		struct rtd_nettrace_event e = {
			.meta = f->m, .timestamp = f->ts, .thread_id = f->tid,
			.capture_thread_id = f->tid, .payload = b.data, .payload_len = b.len,
			.stack = f->ips, .nframes = f->n};
		assert_int_equal(rtd_nettrace_profiler_event(ev, dec, &e), 0);
		rtd_buf_free(&b);

		struct rtd_rec_frame fr[4] = {{0}};
		for (size_t k = 0; k < f->n; k++)
			fr[k].ip = f->ips[k];
		const struct rtd_stack *st = NULL;
		assert_int_equal(rtd_intern_stack(in, fr, f->n, &st), 0);
		char name[128];
		snprintf(name, sizeof(name), "%s/%s", f->m->provider, f->m->name);
		const char *iname = NULL;
		assert_int_equal(rtd_intern_string(in, name, strlen(name), &iname), 0);
		struct rtd_field fields[4];
		struct rtd_record r = {.kind = RTD_REC_INSTANT, .ts = (int64_t)f->ts,
				       .tid = f->tid, .name = iname, .category = f->m->provider,
				       .stack = f->n ? st : NULL, .fields = fields};
		r.nfields = fields_of(f, fields);
		assert_int_equal(rtd_nettrace_profiler_record(rec, NULL, &r), 0);
	}
	for (unsigned k = RTD_NETTRACE_PROFILE_ALLOC; k <= RTD_NETTRACE_PROFILE_WAIT; k <<= 1)
		assert_int_equal(rtd_nettrace_profiler_count(rec, k),
				 rtd_nettrace_profiler_count(ev, k));
	assert_int_equal(rtd_nettrace_profiler_count(rec, RTD_NETTRACE_PROFILE_ALLOC), 3);
	assert_int_equal(rtd_nettrace_profiler_count(rec, RTD_NETTRACE_PROFILE_LOCK), 2);
	/* an error record is the builder's error */
	struct rtd_record er = {.kind = RTD_REC_ERROR, .code = -RTD_E_TRUNCATED};
	assert_int_equal(rtd_nettrace_profiler_record(rec, NULL, &er), -RTD_E_TRUNCATED);
	size_t ne = 0, nr = 0;
	char *a = kinds_out(ev, &ne), *b = kinds_out(rec, &nr);
	assert_int_equal(nr, ne);
	assert_memory_equal(a, b, ne);
	free(a);
	free(b);
	rtd_nettrace_profiler_free(ev);
	rtd_nettrace_profiler_free(rec);
	rtd_intern_free(in);
	rtd_nettrace_free(dec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_other_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
