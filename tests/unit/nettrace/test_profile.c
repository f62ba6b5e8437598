/* SPDX-License-Identifier: MIT */
/*
 * test_profile - the SampleProfiler profile builder reproduces
 * pyroscope-io/dotnetdiag's folded outputs for its golden trace exactly
 * (same lines, same nanoseconds), with and without --managed-only.
 */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>

#include "rtdiag/ipc_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

#include "nt_prof.h"

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split text into sorted lines (in place). */
static size_t lines(char *text, char **out, size_t max)
{
	size_t n = 0;
	for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
		out[n++] = s;
	qsort(out, n, sizeof(*out), cmp_line);
	return n;
}

/* A builder with those options fed a whole test vector in chunks of that
 * size (skips the test when the vector is not there); *buf keeps the
 * bytes until the caller frees them. */
static void feed(struct pc *p, const char *vector,
		 const struct rtd_nettrace_profiler_opts *po, size_t chunk,
		 uint8_t **buf)
{
	const char *tp = rtd_test_vector(vector);
	if (!tp)
		skip();
	size_t len = 0;
	*buf = rtd_test_slurp(tp, &len);
	assert_non_null(*buf);
	p->prof = rtd_nettrace_profiler_new(po);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = p,
				      .on_event = on_event,
				      .on_seqpoint = on_sp};
	p->dec = rtd_nettrace_new(&o);
	assert_non_null(p->prof);
	assert_non_null(p->dec);
	int rc = 0;
	for (size_t off = 0; off < len && rc == 0; off += chunk)
		rc = rtd_nettrace_feed(p->dec, *buf + off,
				       len - off < chunk ? len - off : chunk);
	assert_int_equal(rc, 1);
	assert_int_equal(rtd_nettrace_finish(p->dec), 0);
}

static void pc_free(struct pc *p, uint8_t *buf)
{
	rtd_nettrace_profiler_free(p->prof);
	rtd_nettrace_free(p->dec);
	free(buf);
}

/* The CPU profile of a test vector, fed in chunks of that size; *samples
 * gets the samples read. */
static rtd_profile *profile_of(const char *vector, bool managed_only,
			       size_t chunk, uint64_t *samples)
{
	struct pc p;
	uint8_t *buf;
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.managed_only = managed_only};
	feed(&p, vector, &po, chunk, &buf);
	*samples = rtd_nettrace_profiler_samples(p.prof);
	rtd_profile *prof = rtd_profile_new("cpu", "nanoseconds");
	assert_non_null(prof);
	assert_int_equal(rtd_nettrace_profiler_finish(p.prof, prof), 0);
	assert_int_equal(rtd_nettrace_profiler_finish(p.prof, prof),
			 -RTD_E_STATE);
	pc_free(&p, buf);
	return prof;
}

static void check(const char *trace, const char *expect, bool managed_only,
		  size_t chunk)
{
	const char *ep = rtd_test_vector(expect);
	if (!ep)
		skip();
	size_t elen = 0;
	uint8_t *exp = rtd_test_slurp(ep, &elen);
	assert_non_null(exp);
	uint64_t samples = 0;
	rtd_profile *prof = profile_of(trace, managed_only, chunk, &samples);
	assert_true(samples > 1000);
	char *got = NULL;
	size_t glen = 0;
	FILE *f = open_memstream(&got, &glen);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_folded(prof, f), 0);
	fclose(f);

	char *want_text = calloc(1, elen + 1);
	memcpy(want_text, exp, elen);
	char *gl[256], *wl[256];
	size_t ng = lines(got, gl, 256), nw = lines(want_text, wl, 256);
	for (size_t i = 0; i < ng || i < nw; i++) {
		if (i >= ng || i >= nw || strcmp(gl[i], wl[i]))
			fail_msg("line %zu: got '%s', dotnetdiag '%s'", i,
				 i < ng ? gl[i] : "(none)",
				 i < nw ? wl[i] : "(none)");
	}
	assert_int_equal(ng, nw);
	assert_true(ng > 0);
	printf("ok: %s%s: %zu folded lines equal dotnetdiag's\n", trace,
	       managed_only ? " --managed-only" : "", ng);
	free(want_text);
	free(got);
	rtd_profile_free(prof);
	free(exp);
}

#define GOLDEN "testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread"

static void test_all_time(void **state)
{
	(void)state;
	check(GOLDEN ".golden.nettrace", GOLDEN ".txt", false, 1 << 20);
}

static void test_managed_only(void **state)
{
	(void)state;
	check(GOLDEN ".golden.nettrace", GOLDEN "-managed-only.txt", true,
	      4093);
}

/* The other sampling vectors build a profile without error, and every
 * sample's weight lands on some stack. */
static void test_speedscope_vectors(void **state)
{
	(void)state;
	static const char *const v[] = {
		"testdata/nettrace/mixed_managed_external_samples.nettrace",
		"testdata/nettrace/only_managed_samples.nettrace"};
	for (int i = 0; i < 2; i++) {
		uint64_t samples = 0;
		rtd_profile *prof = profile_of(v[i], false, 1 << 20, &samples);
		assert_true(rtd_profile_total(prof) > 0);
		struct rtd_profile_entry top[3];
		int n = rtd_profile_top(prof, top, 3);
		assert_true(n > 0);
		printf("ok: %s: total %lld ns, top frame %s\n", v[i],
		       (long long)rtd_profile_total(prof), top[0].name);
		rtd_profile_free(prof);
	}
}

/* A trace recorded on Windows names its modules by paths with
 * backslashes: the profile's frames carry the module's short name, as
 * the method table (cat, timelines) names them, not the whole path. */
static void test_windows_module_names(void **state)
{
	(void)state;
	uint64_t samples = 0;
	rtd_profile *prof = profile_of(
		"testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
		false, 1 << 20, &samples);
	char *got = NULL;
	size_t glen = 0;
	FILE *f = open_memstream(&got, &glen);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_folded(prof, f), 0);
	fclose(f);
	assert_non_null(strstr(got, ";System.Private.Xml!System.Xml.NameTable.Add("));
	const char *bs = strchr(got, '\\');
	if (bs)
		fail_msg("a frame names its module by a path: ...%.80s",
			 bs - 40 > got ? bs - 40 : got);
	printf("ok: win-x64 modules by short name (%zu bytes of folded)\n", glen);
	free(got);
	rtd_profile_free(prof);
}

/* The kinds' words: every bit has one, and a list reads back to its bits;
 * a word that is no kind is pointed at and leaves the bits alone. */
/* A running-only (--cpu) builder fed the whole of a test vector. */
static void running_of(const char *vector, struct pc *p, uint8_t **buf)
{
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.running_only = true};
	feed(p, vector, &po, 1 << 20, buf);
}

struct tids {
	struct rtd_thread_cpu v[64];
	size_t n;
};

static int add_tid(void *ctx, uint64_t tid, const char *const *frames,
		   size_t n)
{
	(void)frames;
	(void)n;
	struct tids *t = ctx;
	if (t->n < 64)
		t->v[t->n++] = (struct rtd_thread_cpu){.tid = (int64_t)tid};
	return 0;
}

/*
 * --cpu (#28 item 6): the sampler's Managed samples weigh thread time, not
 * CPU; given the kernel's CPU time of each thread, the profile holds that
 * CPU time spread over the thread's samples, never more than the threads
 * used. The vector's threads get 300 ms of CPU each; then none is known
 * (they "ended in the session").
 */
static void test_kernel_cpu(void **state)
{
	(void)state;
	const char *v = GOLDEN ".golden.nettrace";
	struct pc p;
	uint8_t *buf;
	struct tids t = {.n = 0};
	running_of(v, &p, &buf);
	assert_int_equal(rtd_nettrace_profiler_thread_stacks(p.prof, add_tid, &t), 0);
	pc_free(&p, buf);
	assert_true(t.n >= 1);

	/* the sampler alone: thread time, and it says so */
	running_of(v, &p, &buf);
	struct rtd_nettrace_cpu_stats cs = {.sz = sizeof(cs)};
	assert_int_equal(rtd_nettrace_profiler_cpu_stats(p.prof, &cs), 0);
	assert_false(cs.kernel_known);
	assert_true(cs.thread_ns > 0 && cs.placed_ns == cs.thread_ns);
	uint64_t thread_ns = cs.thread_ns;
	pc_free(&p, buf);

	/* with the kernel's figures: before 1 s each, after +300 ms */
	struct rtd_thread_cpu before[64], after[64];
	for (size_t i = 0; i < t.n; i++) {
		before[i] = (struct rtd_thread_cpu){t.v[i].tid, 1000000000};
		after[i] = (struct rtd_thread_cpu){t.v[i].tid, 1300000000};
	}
	running_of(v, &p, &buf);
	assert_int_equal(rtd_nettrace_profiler_thread_cpu(p.prof, before, t.n,
							  after, t.n), 0);
	memset(&cs, 0, sizeof(cs));
	cs.sz = sizeof(cs);
	assert_int_equal(rtd_nettrace_profiler_cpu_stats(p.prof, &cs), 0);
	assert_true(cs.kernel_known);
	assert_int_equal(cs.thread_ns, thread_ns);
	assert_int_equal(cs.process_ns, 300000000ull * t.n);
	assert_int_equal(cs.sampled_ns, 300000000ull * t.n);
	assert_int_equal(cs.threads_unknown, 0);
	/* never above what the threads used; and something placed */
	assert_true(cs.placed_ns > 0 && cs.placed_ns <= cs.sampled_ns);
	int err = 0;
	rtd_profile *prof = rtd_nettrace_profiler_profile(
		p.prof, RTD_NETTRACE_PROFILE_CPU, &err);
	assert_non_null(prof);
	assert_string_equal(rtd_profile_get_type(prof, 1)->type, "cpu");
	assert_int_equal(rtd_profile_total_of(prof, 1), (int64_t)cs.placed_ns);
	rtd_profile_free(prof);
	pc_free(&p, buf);

	/* every thread ended before the end: nothing known, nothing placed */
	running_of(v, &p, &buf);
	assert_int_equal(rtd_nettrace_profiler_thread_cpu(p.prof, before, t.n,
							  NULL, 0), 0);
	memset(&cs, 0, sizeof(cs));
	cs.sz = sizeof(cs);
	assert_int_equal(rtd_nettrace_profiler_cpu_stats(p.prof, &cs), 0);
	assert_int_equal(cs.placed_ns, 0);
	assert_int_equal(cs.threads_unknown, t.n);
	pc_free(&p, buf);

	/* only for --cpu: the wall profile is thread time by design */
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po)};
	rtd_nettrace_profiler *w = rtd_nettrace_profiler_new(&po);
	assert_int_equal(rtd_nettrace_profiler_thread_cpu(w, before, 1, after, 1),
			 -RTD_E_INVAL);
	rtd_nettrace_profiler_free(w);
}

static void test_kind_words(void **state)
{
	(void)state;
	char list[64] = "";
	unsigned all = 0;
	for (unsigned b = 1; b <= RTD_NETTRACE_PROFILE_WAIT; b <<= 1) {
		const char *w = rtd_nettrace_profile_kind_name(b);
		assert_non_null(w);
		unsigned one = 0;
		assert_int_equal(rtd_nettrace_profile_kinds(w, &one, NULL, NULL), 0);
		assert_int_equal(one, b);
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s,", w);
		all |= b;
	}
	assert_null(rtd_nettrace_profile_kind_name(0));
	assert_null(rtd_nettrace_profile_kind_name(RTD_NETTRACE_PROFILE_WAIT << 1));
	unsigned k = 0;
	assert_int_equal(rtd_nettrace_profile_kinds(list, &k, NULL, NULL), 0);
	assert_int_equal(k, all);
	assert_int_equal(rtd_nettrace_profile_kinds("lock,cpu", &k, NULL, NULL), 0);
	assert_int_equal(k, RTD_NETTRACE_PROFILE_LOCK | RTD_NETTRACE_PROFILE_CPU);
	const char *bad = NULL;
	size_t n = 0;
	const char *in = "alloc,heap,cpu";
	assert_int_equal(rtd_nettrace_profile_kinds(in, &k, &bad, &n), -RTD_E_INVAL);
	assert_ptr_equal(bad, in + 6);
	assert_int_equal(n, 4);
	assert_int_equal(k, RTD_NETTRACE_PROFILE_LOCK | RTD_NETTRACE_PROFILE_CPU);
	assert_int_equal(rtd_nettrace_profile_kinds("cpu,,lock", &k, &bad, &n), -RTD_E_INVAL);
	assert_int_equal(n, 0);
	assert_int_equal(rtd_nettrace_profile_kinds("cpus", &k, &bad, &n), -RTD_E_INVAL);
}

/* What a thread's block must read: built here from the builder's stacks,
 * by the rule 'dotnet-stack report' prints them with. */
struct want_report {
	char *text;
	size_t len, cap, natives;
};

static void want_put(struct want_report *w, const char *s)
{
	size_t l = strlen(s);
	if (w->len + l + 1 > w->cap) {
		w->cap = (w->len + l + 1) * 2;
		w->text = realloc(w->text, w->cap);
		assert_non_null(w->text);
	}
	memcpy(w->text + w->len, s, l + 1);
	w->len += l;
}

static int want_thread(void *ctx, uint64_t tid, const char *const *frames,
		       size_t n)
{
	struct want_report *w = ctx;
	char line[64];
	snprintf(line, sizeof(line), "Thread (0x%llX):\n", (unsigned long long)tid);
	want_put(w, line);
	for (size_t i = 0; i < n; i++) {
		bool unnamed = !strcmp(frames[i], "?!?");
		if (unnamed && i > 0 && !strcmp(frames[i - 1], "?!?"))
			continue; /* a run of them is one line */
		w->natives += unnamed;
		want_put(w, "  ");
		want_put(w, unnamed ? "[Native Frames]" : frames[i]);
		want_put(w, "\n");
	}
	want_put(w, "\n");
	return 0;
}

/* rtd_ipc_stack_report: every sampled thread's latest stack as
 * dotnet-stack report prints it (no process: no names), a write error
 * said, bad arguments refused. */
static void stack_report_of(const char *vector, int keep_pct, bool last)
{
	struct pc p;
	uint8_t *buf;
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po)};
	if (keep_pct == 100) {
		feed(&p, vector, &po, 1 << 20, &buf);
	} else { /* the first part only: samples before their rundown */
		const char *tp = rtd_test_vector(vector);
		if (!tp)
			skip();
		size_t len = 0;
		buf = rtd_test_slurp(tp, &len);
		assert_non_null(buf);
		p.prof = rtd_nettrace_profiler_new(&po);
		struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &p,
					      .on_event = on_event, .on_seqpoint = on_sp};
		p.dec = rtd_nettrace_new(&o);
		assert_non_null(p.prof);
		assert_non_null(p.dec);
		assert_int_equal(rtd_nettrace_feed(p.dec, buf, len * keep_pct / 100), 0);
	}
	struct want_report w = {0};
	assert_int_equal(rtd_nettrace_profiler_thread_stacks(p.prof, want_thread, &w), 0);
	assert_true(w.len > 0);
	char *got = NULL;
	size_t glen = 0;
	FILE *f = open_memstream(&got, &glen);
	assert_non_null(f);
	assert_int_equal(rtd_ipc_stack_report(p.prof, 0, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(got, w.text);
	printf("ok: stack report of %s, %zu bytes, %zu native runs\n", vector,
	       glen, w.natives);
	free(got);
	free(w.text);
	if (!last) {
		pc_free(&p, buf);
		return;
	}

	FILE *ro = fopen("/dev/null", "r"); /* every write fails */
	assert_non_null(ro);
	assert_int_equal(rtd_ipc_stack_report(p.prof, 0, ro), -EIO);
	fclose(ro);
	assert_int_equal(rtd_ipc_stack_report(NULL, 0, stdout), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_stack_report(p.prof, 0, NULL), -RTD_E_INVAL);
	pc_free(&p, buf);
}

static void test_stack_report(void **state)
{
	(void)state;
	stack_report_of(GOLDEN ".golden.nettrace", 100, false);
	stack_report_of("testdata/nettrace/mixed_managed_external_samples.nettrace", 100, false);
	/* no rundown yet: every frame unnamed, each stack's run one line */
	stack_report_of(GOLDEN ".golden.nettrace", 70, false);
	stack_report_of("testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 100, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_time),
		cmocka_unit_test(test_managed_only),
		cmocka_unit_test(test_speedscope_vectors),
		cmocka_unit_test(test_windows_module_names),
		cmocka_unit_test(test_kind_words),
		cmocka_unit_test(test_kernel_cpu),
		cmocka_unit_test(test_stack_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
