/* SPDX-License-Identifier: MIT */
/*
 * test_gotrace_run.c - a Go trace drawn as a timeline with its decoder on a
 * thread of its own (rtd_gotrace_run, as `rtdiag convert` does) gives the
 * same bytes as one thread: Perfetto and Chrome JSON, for every shared
 * vector (old ones take the one-thread path whatever the flags: Perfetto
 * only; golang/exp's Go 1.22+ .test vectors the threaded one) and every
 * gotrace/goanalysis fuzz corpus
 * trace, damaged ones included (the same bytes before the damage and the
 * same error), with chunks of 3 events (the hand-over and the generation
 * barrier run many times) and of 64 KiB (with RTD_GOTRACE_RUN_DEC_NEXT,
 * as the CLI runs it: events built on the consumer's thread).
 */
#include "test_gotrace.h"

#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/timeline.h"

struct sink {
	rtd_tl_gotrace *a;
	const rtd_gotrace_dec *d;
	uint64_t events;
};

static int take(void *ctx, const struct rtd_gotrace_event *ev)
{
	struct sink *k = ctx;
	k->events++;
	return rtd_tl_gotrace_event(k->a, k->d, ev);
}

/* The timeline of a trace, then a line with the run's answers and the
 * decoder's error; *len gets the whole length. */
static char *draw(const uint8_t *b, size_t n, enum rtd_timeline_format fmt, unsigned flags,
		  size_t *len)
{
	char *out = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&out, &sz);
	assert_non_null(f);
	struct rtd_timeline_opts o = {.sz = sizeof(o), .format = fmt, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	assert_non_null(tl);
	struct rtd_gotrace_opts dopt = {.sz = sizeof(dopt), .mode = RTD_GOTRACE_ORDERED};
	struct rtd_test_gosrc s = {.d = rtd_gotrace_dec_new(&dopt), .b = b, .n = n, .step = 4096};
	assert_non_null(s.d);
	struct sink k = {.a = rtd_tl_gotrace_new(tl, "t"), .d = s.d};
	assert_non_null(k.a);
	struct rtd_gotrace_event ev;
	int drc = rtd_test_gosrc_next(&s, &ev), arc = 0;
	if (drc > 0)
		arc = take(&k, &ev);
	if (drc > 0 && arc == 0)
		arc = rtd_gotrace_run(s.d, rtd_test_gosrc_next, &s, take, &k, flags, &drc);
	int frc = rtd_timeline_finish(tl);
	rtd_tl_gotrace_free(k.a);
	rtd_timeline_free(tl);
	fprintf(f, "\n-- run %d dec %d finish %d events %llu error '%s'\n", arc, drc, frc,
		(unsigned long long)k.events, drc < 0 ? rtd_gotrace_dec_error(s.d, NULL) : "");
	rtd_gotrace_dec_free(s.d);
	assert_int_equal(fclose(f), 0);
	*len = sz;
	return out;
}

static size_t threaded; /* Go 1.22+ traces (the threaded path) */
static size_t drawn;    /* bytes of timelines compared */

static void same_bytes(const uint8_t *b, size_t n, const char *name)
{
	const unsigned thr = RTD_GOTRACE_RUN_THREAD | RTD_GOTRACE_RUN_ANY_CPUS;
	/* an old trace takes one thread whatever the flags: Perfetto only,
	 * one thread against the flags (the time under ASan) */
	bool v2 = n > 6 && memcmp(b, "go 1.2", 6) == 0;
	for (int fmt = RTD_TIMELINE_FMT_PERFETTO; fmt <= RTD_TIMELINE_FMT_CHROME_JSON; fmt++) {
		if (!v2 && fmt != RTD_TIMELINE_FMT_PERFETTO)
			break;
		size_t n1, n2, n3 = 0;
		char *one = draw(b, n, fmt, 0, &n1);
		char *small = draw(b, n, fmt, thr | (v2 ? RTD_GOTRACE_RUN_SMALL_CHUNKS : 0), &n2);
		/* the CLI's way: the decoder's events passed through, built
		 * on the consumer's thread from the ordering's own entries */
		char *big = v2 ? draw(b, n, fmt, thr | RTD_GOTRACE_RUN_DEC_NEXT, &n3) : NULL;
		if (!big) {
			big = one;
			n3 = n1;
		}
		if (n1 != n2 || memcmp(one, small, n1) || n1 != n3 || memcmp(one, big, n1))
			print_message("%s (%s): one thread %zu bytes, two %zu and %zu\n", name,
				      rtd_timeline_format_name(fmt), n1, n2, n3);
		assert_int_equal(n1, n2);
		assert_memory_equal(one, small, n1);
		assert_int_equal(n1, n3);
		assert_memory_equal(one, big, n1);
		drawn += n1;
		if (big != one)
			free(big);
		free(one);
		free(small);
	}
	if (v2)
		threaded++;
}

static void old_vectors(void **state)
{
	(void)state;
	size_t before = drawn;
	rtd_test_go_old_traces(same_bytes);
	assert_true(drawn - before > (1u << 20));
}

/* golang/exp's Go 1.22+ vectors (text, made binary), the failing ones too */
static void v2_vectors(void **state)
{
	(void)state;
	size_t before = threaded, bytes = drawn;
	rtd_test_go_v2_traces(same_bytes);
	assert_true(threaded - before >= 20);
	assert_true(drawn - bytes > (64u << 10));
}

/* the fuzz corpora: real Go 1.19-1.23 traces, truncated and damaged ones */
static void corpora(void **state)
{
	(void)state;
	size_t before = threaded, bytes = drawn;
	rtd_test_go_corpora(same_bytes);
	assert_true(threaded - before >= 20);
	assert_true(drawn - bytes > (1u << 20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_vectors),
		cmocka_unit_test(v2_vectors),
		cmocka_unit_test(corpora),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
