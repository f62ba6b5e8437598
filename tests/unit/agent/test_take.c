/* SPDX-License-Identifier: MIT */
/*
 * rtd_nettrace_profiler_take(), which the agent cuts its .NET CPU windows
 * with, on the real SampleProfiler trace the nettrace tests use
 * (dotnetdiag's golden trace): one take after the whole stream equals
 * finish() line for line; takes between pieces of the stream add up to
 * the same total, the early ones telling how many stacks they could not
 * name yet (the method names come with the rundown at the end); a take
 * after finish is refused.
 */
#include "test_util.h"

#include <stdio.h>

#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

#define GOLDEN "testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread"

struct pc {
	rtd_nettrace *dec;
	rtd_nettrace_profiler *prof;
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct pc *p = ctx;
	return rtd_nettrace_profiler_event(p->prof, p->dec, ev);
}

static int on_sp(void *ctx, uint64_t ts)
{
	(void)ts;
	return rtd_nettrace_profiler_seqpoint(((struct pc *)ctx)->prof);
}

static void pc_init(struct pc *p)
{
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po)};
	p->prof = rtd_nettrace_profiler_new(&po);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = p,
				      .on_event = on_event,
				      .on_seqpoint = on_sp};
	p->dec = rtd_nettrace_new(&o);
	assert_non_null(p->prof);
	assert_non_null(p->dec);
}

static void pc_free(struct pc *p)
{
	rtd_nettrace_profiler_free(p->prof);
	rtd_nettrace_free(p->dec);
}

static char *folded(const rtd_profile *p)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_folded(p, f), 0);
	fclose(f);
	return s;
}

static uint8_t *golden(size_t *len)
{
	const char *tp = rtd_test_vector(GOLDEN ".golden.nettrace");
	if (!tp)
		return NULL;
	uint8_t *buf = rtd_test_slurp(tp, len);
	assert_non_null(buf);
	return buf;
}

static void take_equals_finish(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = golden(&len);
	if (!buf)
		skip();
	struct pc a, b;
	pc_init(&a);
	pc_init(&b);
	assert_int_equal(rtd_nettrace_feed(a.dec, buf, len), 1);
	assert_int_equal(rtd_nettrace_feed(b.dec, buf, len), 1);
	rtd_profile *pa = rtd_profile_new("cpu", "nanoseconds");
	rtd_profile *pb = rtd_profile_new("cpu", "nanoseconds");
	assert_int_equal(rtd_nettrace_profiler_finish(a.prof, pa), 0);
	int unresolved = rtd_nettrace_profiler_take(b.prof, pb);
	assert_true(unresolved >= 0);
	char *fa = folded(pa), *fb = folded(pb);
	assert_true(strlen(fa) > 100);
	assert_string_equal(fa, fb);
	/* a second take has nothing new */
	rtd_profile *pc = rtd_profile_new("cpu", "nanoseconds");
	assert_int_equal(rtd_nettrace_profiler_take(b.prof, pc), 0);
	assert_int_equal(rtd_profile_total(pc), 0);
	/* after finish, no take */
	assert_int_equal(rtd_nettrace_profiler_take(a.prof, pc), -RTD_E_STATE);
	free(fa);
	free(fb);
	rtd_profile_free(pa);
	rtd_profile_free(pb);
	rtd_profile_free(pc);
	pc_free(&a);
	pc_free(&b);
	free(buf);
}

static void takes_add_up(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = golden(&len);
	if (!buf)
		skip();
	struct pc a, b;
	pc_init(&a);
	pc_init(&b);
	assert_int_equal(rtd_nettrace_feed(a.dec, buf, len), 1);
	rtd_profile *whole = rtd_profile_new("cpu", "nanoseconds");
	assert_int_equal(rtd_nettrace_profiler_finish(a.prof, whole), 0);

	/* eight windows over the stream, then the rest */
	int64_t sum = 0;
	int early_unresolved = 0;
	size_t step = len / 8 + 1;
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;
		int rc = rtd_nettrace_feed(b.dec, buf + off, n);
		assert_true(rc == 0 || rc == 1);
		rtd_profile *w = rtd_profile_new("cpu", "nanoseconds");
		int u = rtd_nettrace_profiler_take(b.prof, w);
		assert_true(u >= 0);
		if (off == 0)
			early_unresolved = u;
		sum += rtd_profile_total(w);
		rtd_profile_free(w);
	}
	/* every sample's weight is in some window, once */
	assert_true(rtd_profile_total(whole) > 0);
	assert_int_equal(sum, rtd_profile_total(whole));
	/* the methods of this trace come with its rundown, at the end: the
	 * first window could not name its stacks, and said so */
	assert_true(early_unresolved > 0);
	rtd_profile_free(whole);
	pc_free(&a);
	pc_free(&b);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_equals_finish),
		cmocka_unit_test(takes_add_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
