/* SPDX-License-Identifier: MIT */
/*
 * test_gotrace_run.c - a Go trace drawn as a timeline from a Go source
 * that decodes on a thread of its own (rtd_gotrace_source_opts.threads =
 * 2, as `rtdiag convert` asks when a core is free; rtd_gotrace_run's
 * mechanism) gives the same bytes as one thread: Perfetto and Chrome JSON,
 * handed out by rtd_source_each() into rtd_tl_gotrace_take() as the CLI
 * does, for every shared vector (old ones take the one-thread path
 * whatever is asked: Perfetto only; golang/exp's Go 1.22+ .test vectors
 * the threaded one) and every gotrace/goanalysis fuzz corpus trace,
 * damaged ones included (the same bytes before the damage and the same
 * error), from memory and from a stream in small pieces.
 */
#include "test_gotrace.h"

#include "rtdiag/gotrace_source.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/timeline.h"

struct stream {
	const uint8_t *b;
	size_t n, at;
};

static int64_t stream_read(void *ctx, void *buf, size_t len)
{
	struct stream *st = ctx;
	size_t k = st->n - st->at;
	if (k > len)
		k = len;
	if (k > 4093)
		k = 4093;
	memcpy(buf, st->b + st->at, k);
	st->at += k;
	return (int64_t)k;
}

/* The timeline of a trace, then a line with the walk's answer, the
 * source's records and its error record; *len gets the whole length. */
static char *draw(const uint8_t *b, size_t n, enum rtd_timeline_format fmt, size_t threads,
		  bool piecewise, size_t *len)
{
	char *out = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&out, &sz);
	assert_non_null(f);
	struct rtd_timeline_opts o = {.sz = sizeof(o), .format = fmt, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	assert_non_null(tl);
	RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true, .threads = threads,
		 .field_want = rtd_tl_gotrace_fields);
	struct stream st = {.b = b, .n = n};
	rtd_source *src = piecewise ? rtd_gotrace_source_reader(stream_read, &st, &so, NULL)
				    : rtd_gotrace_source_mem(b, n, &so, NULL);
	assert_non_null(src);
	rtd_tl_gotrace *a = rtd_tl_gotrace_new(tl, "t");
	assert_non_null(a);
	int rc = rtd_source_each(src, rtd_tl_gotrace_take, a);
	struct rtd_source_stats ss;
	rtd_source_stats(src, &ss);
	const struct rtd_record *r = NULL;
	if (rc < 0 && ss.records[RTD_REC_ERROR])
		(void)rtd_source_next(src, &r);
	int frc = rtd_timeline_finish(tl);
	rtd_tl_gotrace_free(a);
	rtd_timeline_free(tl);
	fprintf(f, "\n-- each %d finish %d events %llu error '%s'\n", rc, frc,
		(unsigned long long)ss.records[RTD_REC_INSTANT],
		r && r->kind == RTD_REC_ERROR ? r->message : "");
	rtd_source_free(src);
	assert_int_equal(fclose(f), 0);
	*len = sz;
	return out;
}

static size_t threaded; /* Go 1.22+ traces (the threaded path) */
static size_t drawn;    /* bytes of timelines compared */

static void same_bytes(const uint8_t *b, size_t n, const char *name)
{
	/* an old trace takes one thread whatever is asked: Perfetto only
	 * (the time under ASan) */
	bool v2 = n > 6 && memcmp(b, "go 1.2", 6) == 0;
	for (int fmt = RTD_TIMELINE_FMT_PERFETTO; fmt <= RTD_TIMELINE_FMT_CHROME_JSON; fmt++) {
		if (!v2 && fmt != RTD_TIMELINE_FMT_PERFETTO)
			break;
		size_t n1, n2, n3;
		char *one = draw(b, n, fmt, 1, false, &n1);
		char *two = draw(b, n, fmt, 2, false, &n2);
		char *pipe = draw(b, n, fmt, 2, true, &n3);
		if (n1 != n2 || memcmp(one, two, n1) || n1 != n3 || memcmp(one, pipe, n1))
			print_message("%s (%s): one thread %zu bytes, two %zu, two from a stream %zu\n",
				      name, rtd_timeline_format_name(fmt), n1, n2, n3);
		assert_int_equal(n1, n2);
		assert_memory_equal(one, two, n1);
		assert_int_equal(n1, n3);
		assert_memory_equal(one, pipe, n1);
		drawn += n1;
		free(one);
		free(two);
		free(pipe);
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
