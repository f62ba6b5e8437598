/* SPDX-License-Identifier: MIT */
/*
 * test_writer.c - the library's filter writer (rtd_gotrace_filter_writer)
 * and decoding pipe (rtd_gotrace_pipe), on a Go 1.19 test vector and a
 * small Go 1.22 trace made from Go's text form.
 */
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>

#include "rtdiag/gotrace.h"

/* A growable output. */
struct out {
	uint8_t *b;
	size_t n, cap;
};

static int to_out(const void *p, size_t n, void *ctx)
{
	struct out *o = ctx;
	if (o->n + n > o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 1 << 16;
		while (nc < o->n + n)
			nc *= 2;
		uint8_t *b = realloc(o->b, nc);
		if (!b)
			return -ENOMEM;
		o->b = b;
		o->cap = nc;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
	return 0;
}

/* Names of the events of a trace in @mode ("" when it fails to decode):
 * the non-dictionary ones, space-separated, into a malloc'd string. */
static char *event_names(const uint8_t *b, size_t n, enum rtd_gotrace_mode mode, int *rc_out)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	s[0] = 0;
	struct rtd_gotrace_event ev;
	int rc;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (ev.gen ? ev.type <= RTD_GO2_EV_FREQUENCY && ev.type != RTD_GO2_EV_CPU_SAMPLE
			   : ev.type == RTD_GO_EV_BATCH || ev.type == RTD_GO_EV_STRING ||
				     ev.type == RTD_GO_EV_STACK || ev.type == RTD_GO_EV_FREQUENCY)
			continue;
		size_t k = strlen(ev.name) + 2;
		if (len + k >= cap)
			s = realloc(s, cap *= 2);
		len += (size_t)sprintf(s + len, "%s%s", len ? " " : "", ev.name);
	}
	*rc_out = rc;
	rtd_gotrace_dec_free(d);
	return s;
}

/*
 * Rewrite @b keeping the events @keep says (by name; NULL: unfiltered),
 * through a raw decoder; the output in @o.
 */
static void rewrite(const uint8_t *b, size_t n, const char *keep, struct out *o)
{
	struct rtd_gotrace_opts opts = {.sz = sizeof(opts), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&opts);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	rtd_gotrace_filter_writer *w = NULL;
	struct rtd_gotrace_event ev;
	int rc;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (!w) {
			w = rtd_gotrace_filter_writer_new(rtd_gotrace_dec_version(d), keep != NULL,
							  to_out, o);
			assert_non_null(w);
		}
		bool k = !keep || strcmp(ev.name, keep) == 0;
		assert_int_equal(rtd_gotrace_filter_writer_event(w, d, &ev, k), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_gotrace_filter_writer_finish(w), 0);
	rtd_gotrace_filter_writer_free(w);
	rtd_gotrace_dec_free(d);
}

static void test_writer_old_format(void **state)
{
	(void)state;
	const char *path = rtd_test_vector("testdata/gotrace/v1/user_task_region_1_19_good");
	if (!path)
		skip();
	size_t n = 0;
	uint8_t *b = rtd_test_slurp(path, &n);
	assert_non_null(b);
	/* unfiltered: byte for byte */
	struct out o = {0};
	rewrite(b, n, NULL, &o);
	assert_int_equal(o.n, n);
	assert_memory_equal(o.b, b, n);
	/* the UserLog events only: they read back, ordered, with their
	 * strings (the logs' keys and messages) */
	o.n = 0;
	rewrite(b, n, "UserLog", &o);
	assert_true(o.n < n);
	int rc;
	char *names = event_names(o.b, o.n, RTD_GOTRACE_RAW, &rc);
	assert_int_equal(rc, 0);
	char *want = event_names(b, n, RTD_GOTRACE_RAW, &rc);
	size_t nlog = 0;
	for (char *p = want; (p = strstr(p, "UserLog")); p++)
		nlog++;
	assert_true(nlog > 0);
	/* every kept UserLog, and GoStartLocals naming their goroutines */
	size_t got = 0;
	for (char *p = names; (p = strstr(p, "UserLog")); p++)
		got++;
	assert_int_equal(got, nlog);
	for (char *p = strtok(names, " "); p; p = strtok(NULL, " "))
		assert_true(strcmp(p, "UserLog") == 0 || strcmp(p, "GoStartLocal") == 0);
	free(names);
	free(want);
	free(o.b);
	free(b);
}

static const char v2[] =
	"Trace Go1.22\n"
	"EventBatch gen=1 m=1 time=100 size=21\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"GoStatus dt=1 g=1 m=1 gstatus=2\n"
	"UserLog dt=2 task=0 key_string=2 value_string=3 stack=1\n"
	"GoBlock dt=5 reason_string=4 stack=0\n"
	"ProcStop dt=1\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=9\n"
	"Stacks\n"
	"Stack id=1 nframes=1\n"
	"\tpc=4096 func=1 file=5 line=7\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=29\n"
	"Strings\n"
	"String id=1\n"
	"\tdata=\"main.f\"\n"
	"String id=2\n"
	"\tdata=\"k\"\n"
	"String id=3\n"
	"\tdata=\"v\"\n"
	"String id=4\n"
	"\tdata=\"x\"\n"
	"String id=5\n"
	"\tdata=\"f.go\"\n";

static void test_writer_new_format(void **state)
{
	(void)state;
	struct out t = {0}, o = {0};
	char err[256];
	if (rtd_gotrace_text2bin(v2, strlen(v2), to_out, &t, err, sizeof(err)))
		fail_msg("text2bin: %s", err);
	/* keep the UserLog: its strings and its stack (and the stack's
	 * strings) go with it, the GoBlock's reason does not */
	rewrite(t.b, t.n, "UserLog", &o);
	struct rtd_gotrace_opts opts = {.sz = sizeof(opts), .mode = RTD_GOTRACE_RAW,
					.flags = RTD_GOTRACE_RESOLVE};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&opts);
	assert_int_equal(rtd_gotrace_dec_feed(d, o.b, o.n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	int rc, logs = 0, strings = 0, stacks = 0, others = 0;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (ev.type == RTD_GO2_EV_USER_LOG) {
			logs++;
			assert_string_equal(ev.sargs[0], "k");
			assert_string_equal(ev.sargs[1], "v");
			const struct rtd_gotrace_frame *f;
			assert_int_equal(rtd_gotrace_dec_stack(d, ev.stack, &f), 1);
			assert_string_equal(f[0].fn, "main.f");
			assert_string_equal(f[0].file, "f.go");
		} else if (ev.type == RTD_GO2_EV_STRING) {
			strings++;
			assert_true(ev.str_len != 1 || ev.str[0] != 'x');
		} else if (ev.type == RTD_GO2_EV_STACK) {
			stacks++;
		} else if (ev.type > RTD_GO2_EV_FREQUENCY) {
			others++;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(logs, 1);
	assert_int_equal(strings, 4); /* k, v, main.f, f.go */
	assert_int_equal(stacks, 1);
	assert_int_equal(others, 0);
	rtd_gotrace_dec_free(d);
	free(t.b);
	free(o.b);
}

/* The pipe's source: a decoder over a buffer. */
struct src {
	rtd_gotrace_dec *d;
	int fail_after; /* return an error after this many events (-1: no) */
	int n;
};

static int src_next(void *ctx, struct rtd_gotrace_event *ev)
{
	struct src *s = ctx;
	if (s->fail_after >= 0 && s->n == s->fail_after)
		return -EIO;
	int rc = rtd_gotrace_dec_next(s->d, ev);
	s->n += rc > 0;
	return rc;
}

static rtd_gotrace_dec *ordered(const uint8_t *b, size_t n)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	return d;
}

/* Through the pipe, the events are the decoder's, field for field (a
 * stress test trace: 85k events, many chunks). */
static void test_pipe(void **state)
{
	(void)state;
	const char *path = rtd_test_vector("testdata/gotrace/v1/stress_1_19_good");
	if (!path)
		skip();
	size_t n = 0;
	uint8_t *b = rtd_test_slurp(path, &n);
	rtd_gotrace_dec *direct = ordered(b, n);
	struct src s = {ordered(b, n), -1, 0};
	rtd_gotrace_pipe *p = rtd_gotrace_pipe_new(src_next, &s);
	assert_non_null(p);
	const struct rtd_gotrace_event *pe;
	struct rtd_gotrace_event de;
	int rc, count = 0;
	while ((rc = rtd_gotrace_pipe_next(p, &pe)) > 0) {
		assert_int_equal(rtd_gotrace_dec_next(direct, &de), 1);
		assert_int_equal(pe->type, de.type);
		assert_string_equal(pe->name, de.name);
		assert_int_equal(pe->ts, de.ts);
		assert_int_equal(pe->p, de.p);
		assert_int_equal(pe->g, de.g);
		assert_int_equal(pe->off, de.off);
		assert_int_equal(pe->stack, de.stack);
		assert_int_equal(pe->nargs, de.nargs);
		for (unsigned i = 0; i < de.nargs; i++)
			assert_int_equal(pe->args[i], de.args[i]);
		assert_int_equal(pe->nsargs, de.nsargs);
		for (unsigned i = 0; i < de.nsargs; i++) {
			assert_int_equal(pe->sarg_lens[i], de.sarg_lens[i]);
			assert_memory_equal(pe->sargs[i], de.sargs[i], de.sarg_lens[i]);
		}
		count++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_gotrace_dec_next(direct, &de), 0);
	assert_true(count > 10000); /* many chunks */
	assert_int_equal(rtd_gotrace_pipe_next(p, &pe), 0); /* the end stays */
	rtd_gotrace_pipe_free(p);
	rtd_gotrace_dec_free(s.d);

	/* an error comes after the events before it; freeing early stops */
	s = (struct src){ordered(b, n), 500, 0};
	p = rtd_gotrace_pipe_new(src_next, &s);
	count = 0;
	while ((rc = rtd_gotrace_pipe_next(p, &pe)) > 0)
		count++;
	assert_int_equal(rc, -EIO);
	assert_int_equal(count, 500);
	rtd_gotrace_pipe_free(p);
	rtd_gotrace_dec_free(s.d);
	s = (struct src){ordered(b, n), -1, 0};
	p = rtd_gotrace_pipe_new(src_next, &s);
	assert_int_equal(rtd_gotrace_pipe_next(p, &pe), 1);
	rtd_gotrace_pipe_free(p);
	rtd_gotrace_dec_free(s.d);
	rtd_gotrace_pipe_free(NULL);
	assert_null(rtd_gotrace_pipe_new(NULL, NULL));
	rtd_gotrace_dec_free(direct);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_old_format),
		cmocka_unit_test(test_writer_new_format),
		cmocka_unit_test(test_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
