/* SPDX-License-Identifier: MIT */
/*
 * test_records.c - the timeline as a consumer of records
 * (rtdiag/timeline_records.h), over real sources: an EventPipe recording
 * made on Linux and a Go 1.22 trace with tasks and regions, merged by
 * converted time into one timeline.
 *
 * - every record lands: thread tracks equal the (pid, tid) pairs that
 *   have events, samples / instants / slices equal the source's counts,
 *   every slice end finds its slice, nothing is left open;
 * - the Perfetto output decodes with protoc against Perfetto's proto and
 *   tlcheck.py (tests/integration/pictures) reads it as trace processor
 *   does, with the same number of samples and slices; the Chrome JSON
 *   output has the EventPipe events named Provider/Event on the OS
 *   thread ids;
 * - naming: a thread's track is named by the runtime when a runtime
 *   source names it, by the kernel's comm otherwise, and renamed when a
 *   better name comes after its first event (hand-made records: the rule
 *   is the consumer's, no source has all three cases).
 */
#include <inttypes.h>

#include "test_gotrace.h"
#include "common/map.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/timeline_records.h"

#define NT "testdata/nettrace/mixed_managed_external_samples.nettrace"
#define GO "testdata/gotrace/v2/go122-annotations.test"

struct want {
	struct rtd_source_stats st;
	uint64_t threads; /* distinct (pid, tid != 0) with events */
};

static void count(const uint8_t *go, size_t golen, struct want *w)
{
	rtd_source *s[2] = {rtd_nettrace_source_open(rtd_test_vector(NT), NULL, NULL),
			    rtd_gotrace_source_mem(go, golen, NULL, NULL)};
	rtd_source *m = rtd_source_merge(s, 2, NULL);
	assert_non_null(m);
	rtd_map seen;
	rtd_map_init(&seen, 0);
	const struct rtd_record *r;
	while (rtd_source_next(m, &r) == 1) {
		bool ev = r->kind == RTD_REC_SAMPLE || r->kind == RTD_REC_INSTANT ||
			  r->kind == RTD_REC_SLICE_BEGIN;
		uint64_t key = (uint64_t)r->pid << 32 | r->tid;
		if (ev && r->tid && !r->lane && !rtd_map_get(&seen, key, NULL)) {
			assert_int_equal(rtd_map_put(&seen, key, (void *)1, NULL), 0);
			w->threads++;
		}
	}
	rtd_source_stats(m, &w->st);
	rtd_map_free(&seen);
	rtd_source_free(m);
	rtd_source_free(s[0]);
	rtd_source_free(s[1]);
}

/* The two sources merged into a timeline of @fmt in @path. */
static void write_timeline(const uint8_t *go, size_t golen, enum rtd_timeline_format fmt,
			   const char *path, struct rtd_timeline_records_stats *st)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	RTD_OPTS(rtd_timeline_opts, to, .format = fmt, .out = f);
	rtd_timeline *tl = rtd_timeline_new(&to);
	assert_non_null(tl);
	RTD_OPTS(rtd_timeline_records_opts, ro, .runtime_sources = 1);
	rtd_timeline_records *c = rtd_timeline_records_new(tl, &ro, NULL);
	assert_non_null(c);
	rtd_source *s[2] = {rtd_nettrace_source_open(rtd_test_vector(NT), NULL, NULL),
			    rtd_gotrace_source_mem(go, golen, NULL, NULL)};
	rtd_source *m = rtd_source_merge(s, 2, NULL);
	assert_int_equal(rtd_timeline_records_pull(c, m), 0);
	rtd_timeline_records_stats(c, st);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	struct rtd_timeline_stats ts;
	rtd_timeline_get_stats(tl, &ts);
	assert_int_equal(ts.open, 0);
	rtd_timeline_records_free(c);
	rtd_timeline_free(tl);
	rtd_source_free(m);
	rtd_source_free(s[0]);
	rtd_source_free(s[1]);
	fclose(f);
}

static void test_real_sources(void **state)
{
	(void)state;
	const char *gov = rtd_test_vector(GO);
	if (!gov || !rtd_test_vector(NT))
		skip();
	size_t golen = 0;
	uint8_t *go = rtd_test_go_vector(gov, &golen, true);
	assert_non_null(go);
	struct want w = {0};
	count(go, golen, &w);
	assert_true(w.st.records[RTD_REC_SAMPLE] > 100);
	assert_true(w.st.records[RTD_REC_SLICE_BEGIN] > 10);

	char dir[] = "/tmp/rtd-tlrec-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char pf[128], js[128], cmd[2048];
	snprintf(pf, sizeof(pf), "%s/t.pftrace", dir);
	snprintf(js, sizeof(js), "%s/t.json", dir);
	struct rtd_timeline_records_stats st;
	write_timeline(go, golen, RTD_TIMELINE_FMT_PERFETTO, pf, &st);
	assert_int_equal(st.samples, w.st.records[RTD_REC_SAMPLE]);
	assert_int_equal(st.instants, w.st.records[RTD_REC_INSTANT]);
	assert_int_equal(st.slices, w.st.records[RTD_REC_SLICE_BEGIN]);
	assert_int_equal(st.unmatched_ends, 0);
	assert_int_equal(st.threads, w.threads);
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.values, w.st.records[RTD_REC_COUNTER]);
	assert_true(st.lanes > 0); /* the Go trace's regions and old-style lanes */

	/* Chrome JSON: an EventPipe event by its name, on an OS thread */
	struct rtd_timeline_records_stats st2;
	write_timeline(go, golen, RTD_TIMELINE_FMT_CHROME_JSON, js, &st2);
	assert_memory_equal(&st, &st2, sizeof(st));
	size_t jl = 0;
	char *j = (char *)rtd_test_slurp(js, &jl);
	assert_non_null(j);
	j = realloc(j, jl + 1);
	j[jl] = 0;
	assert_non_null(strstr(j, "\"stack\":["));
	assert_non_null(strstr(j, "\"name\":\"Microsoft-Windows-DotNETRuntime/"));
	assert_non_null(strstr(j, "\"traceEvents\":["));
	free(j);

	/* Perfetto: decoded against Perfetto's own proto, read as trace
	 * processor reads it */
	const char *proto = rtd_test_path("RTD_SHARED_DIR", "reference/perfetto/perfetto_trace.proto");
	const char *tlcheck = rtd_test_path("RTD_SOURCE_DIR", "tests/integration/pictures/tlcheck.py");
	if (proto && access(proto, R_OK) == 0 && tlcheck &&
	    system("command -v protoc >/dev/null && command -v python3 >/dev/null") == 0) {
		snprintf(cmd, sizeof(cmd),
			 "cd \"$(dirname '%s')\" && protoc --proto_path=. --decode=perfetto.protos.Trace "
			 "perfetto_trace.proto <%s >%s/t.txt && python3 '%s' perfetto %s/t.txt >%s/t.sum && "
			 "python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); "
			 "print(s[\"samples\"], sum(s[\"slices\"].values()))' %s/t.sum >%s/n.txt",
			 proto, pf, dir, tlcheck, dir, dir, dir, dir);
		assert_int_equal(system(cmd), 0);
		char np[160];
		snprintf(np, sizeof(np), "%s/n.txt", dir);
		FILE *nf = fopen(np, "r");
		assert_non_null(nf);
		uint64_t samples = 0, slices = 0;
		assert_int_equal(fscanf(nf, "%" SCNu64 " %" SCNu64, &samples, &slices), 2);
		fclose(nf);
		assert_int_equal(samples, st.samples);
		assert_int_equal(slices, st.slices);
	} else {
		printf("SKIP part: protoc, python3 or Perfetto's proto missing\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(go);
}

/* ---- naming: hand-made records, one per rule --------------------------------- */

static char *run_names(size_t *len, struct rtd_timeline_records_stats *st)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	RTD_OPTS(rtd_timeline_opts, to, .format = RTD_TIMELINE_FMT_CHROME_JSON, .out = f);
	rtd_timeline *tl = rtd_timeline_new(&to);
	RTD_OPTS(rtd_timeline_records_opts, ro, .runtime_sources = 1u << 1);
	rtd_timeline_records *c = rtd_timeline_records_new(tl, &ro, NULL);
	assert_non_null(c);
	struct rtd_record r[] = {
		/* thread 11: a kernel name before its first event */
		{.kind = RTD_REC_THREAD, .source = 0, .pid = 10, .tid = 11, .name = "comm-11"},
		{.kind = RTD_REC_INSTANT, .source = 1, .mono = 100, .pid = 10, .tid = 11, .name = "P/E"},
		/* thread 12: an event first, then the kernel's name, then the
		 * runtime's, then the kernel's again (kept out) */
		{.kind = RTD_REC_SLICE_BEGIN, .source = 1, .mono = 200, .pid = 10, .tid = 12,
		 .name = "work", .category = "c"},
		{.kind = RTD_REC_THREAD, .source = 0, .mono = 210, .pid = 10, .tid = 12, .name = "comm-12"},
		{.kind = RTD_REC_THREAD, .source = 1, .mono = 220, .pid = 10, .tid = 12,
		 .name = ".NET Worker"},
		{.kind = RTD_REC_THREAD, .source = 0, .mono = 230, .pid = 10, .tid = 12, .name = "comm-12b"},
		{.kind = RTD_REC_SLICE_END, .source = 1, .mono = 300, .pid = 10, .tid = 12},
		/* an end with nothing open, on a thread with no track */
		{.kind = RTD_REC_SLICE_END, .source = 0, .mono = 310, .pid = 10, .tid = 13},
		{.kind = RTD_REC_COUNTER, .source = 1, .mono = 320, .pid = 10, .name = "heap",
		 .unit = "bytes", .value = 5},
		{.kind = RTD_REC_COUNTER, .source = 1, .mono = 330, .pid = 10, .name = "heap",
		 .unit = "bytes", .value = 6},
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		assert_int_equal(rtd_timeline_records_add(c, &r[i]), 0);
	struct rtd_record e = {.kind = RTD_REC_ERROR, .code = -RTD_E_TRUNCATED};
	assert_int_equal(rtd_timeline_records_add(c, &e), -RTD_E_TRUNCATED);
	rtd_timeline_records_stats(c, st);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_records_free(c);
	rtd_timeline_free(tl);
	fclose(f);
	return out;
}

static void test_names(void **state)
{
	(void)state;
	size_t len = 0;
	struct rtd_timeline_records_stats st;
	char *j = run_names(&len, &st);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.renamed, 2);
	assert_int_equal(st.unmatched_ends, 1);
	assert_int_equal(st.counters, 1);
	assert_int_equal(st.values, 2);
	/* 11 named by its comm from the start; 12 first by its id, then its
	 * comm, then the runtime's name, never the later comm */
	const char *t11 = strstr(j, "\"tid\":11,\"args\":{\"name\":\"comm-11\"}");
	const char *a = strstr(j, "\"tid\":12,\"args\":{\"name\":\"thread 12\"}");
	const char *b = strstr(j, "\"tid\":12,\"args\":{\"name\":\"comm-12\"}");
	const char *c = strstr(j, "\"tid\":12,\"args\":{\"name\":\".NET Worker\"}");
	assert_non_null(t11);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(a < b && b < c);
	assert_null(strstr(j, "comm-12b"));
	assert_non_null(strstr(j, "\"name\":\"process 10\""));
	free(j);
}

static void test_opts(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	RTD_OPTS(rtd_timeline_opts, to, .format = RTD_TIMELINE_FMT_CHROME_JSON, .out = f);
	rtd_timeline *tl = rtd_timeline_new(&to);
	int err = 0;
	assert_null(rtd_timeline_records_new(NULL, NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	struct {
		struct rtd_timeline_records_opts o;
		uint64_t unknown;
	} big = {{.sz = sizeof(big)}, 1};
	assert_null(rtd_timeline_records_new(tl, &big.o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_timeline_records *c = rtd_timeline_records_new(tl, NULL, &err);
	assert_non_null(c);
	rtd_timeline_records_free(c);
	rtd_timeline_records_free(NULL);
	rtd_timeline_free(tl);
	fclose(f);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_sources),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
