/* SPDX-License-Identifier: MIT */
/*
 * rtd_nettrace_profiler_take(), which the agent cuts its .NET windows
 * with, on the real SampleProfiler trace the nettrace tests use
 * (dotnetdiag's golden trace): one take after the whole stream equals
 * rtd_nettrace_profiler_profile() line for line, in both CPU modes; takes
 * between pieces of the stream add up to the same totals (samples and
 * time), the early ones telling how many samples they could not name yet
 * (the method names come with the rundown at the end); a take after the
 * builder finished is refused.
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

static void pc_init(struct pc *p, bool running)
{
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.running_only = running};
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

static void take_equals_profile(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = golden(&len);
	if (!buf)
		skip();
	for (int running = 0; running < 2; running++) {
		struct pc a, b;
		pc_init(&a, running);
		pc_init(&b, running);
		assert_int_equal(rtd_nettrace_feed(a.dec, buf, len), 1);
		assert_int_equal(rtd_nettrace_feed(b.dec, buf, len), 1);
		int err = 0;
		rtd_profile *pa = rtd_nettrace_profiler_profile(
			a.prof, RTD_NETTRACE_PROFILE_CPU, &err);
		assert_non_null(pa);
		rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
		int unresolved = rtd_nettrace_profiler_take(b.prof, out);
		assert_true(unresolved >= 0);
		assert_non_null(out[0]);
		for (int k = 1; k < RTD_NETTRACE_PROFILE_KINDS; k++)
			assert_null(out[k]); /* CPU only was asked for */
		char *fa = folded(pa), *fb = folded(out[0]);
		assert_true(strlen(fa) > 100);
		assert_string_equal(fa, fb);
		assert_string_equal(rtd_profile_get_type(out[0], 1)->type,
				    running ? "cpu" : "wall");
		free(fa);
		free(fb);
		rtd_profile_free(out[0]);
		/* a second take has nothing new */
		assert_int_equal(rtd_nettrace_profiler_take(b.prof, out), 0);
		assert_null(out[0]);
		/* after the builder finished, no take */
		assert_int_equal(rtd_nettrace_profiler_take(a.prof, out),
				 -RTD_E_STATE);
		rtd_profile_free(pa);
		pc_free(&a);
		pc_free(&b);
	}
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
	pc_init(&a, false);
	pc_init(&b, false);
	assert_int_equal(rtd_nettrace_feed(a.dec, buf, len), 1);
	int err = 0;
	rtd_profile *whole = rtd_nettrace_profiler_profile(
		a.prof, RTD_NETTRACE_PROFILE_CPU, &err);
	assert_non_null(whole);

	/* eight windows over the stream, then the rest */
	int64_t sum[2] = {0, 0};
	int early_unresolved = 0;
	size_t step = len / 8 + 1;
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;
		int rc = rtd_nettrace_feed(b.dec, buf + off, n);
		assert_true(rc == 0 || rc == 1);
		rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
		int u = rtd_nettrace_profiler_take(b.prof, out);
		assert_true(u >= 0);
		if (off == 0)
			early_unresolved = u;
		if (out[0]) {
			sum[0] += rtd_profile_total_of(out[0], 0);
			sum[1] += rtd_profile_total_of(out[0], 1);
		}
		rtd_profile_free(out[0]);
	}
	/* every sample's count and time is in some window, once */
	assert_true(rtd_profile_total_of(whole, 0) > 1000);
	assert_int_equal(sum[0], rtd_profile_total_of(whole, 0));
	assert_int_equal(sum[1], rtd_profile_total_of(whole, 1));
	/* the methods of this trace come with its rundown, at the end: the
	 * first window could not name its samples, and said so */
	assert_true(early_unresolved > 0);
	rtd_profile_free(whole);
	pc_free(&a);
	pc_free(&b);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_equals_profile),
		cmocka_unit_test(takes_add_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
