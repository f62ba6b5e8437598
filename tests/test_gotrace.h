/* SPDX-License-Identifier: MIT */
/* test_gotrace.h - helpers for the tests that run Go traces through a
 * decoder: every file of a folder, golang/exp's .test vectors made
 * binary, and a decoder fed a few KiB at a time. */
#ifndef RTD_TEST_GOTRACE_H
#define RTD_TEST_GOTRACE_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>

#include "test_util.h"
#include "rtdiag/gotrace.h"

/* Each file of @dir (not the dot files), read whole, given to @fn.
 * Returns how many. */
static inline size_t rtd_test_each_file(const char *dir,
					void (*fn)(const uint8_t *, size_t, const char *))
{
	DIR *dd = opendir(dir);
	if (!dd)
		return 0;
	struct dirent *de;
	size_t n = 0;
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t len = 0;
		uint8_t *b = rtd_test_slurp(path, &len);
		if (!b)
			continue;
		fn(b, len, de->d_name);
		free(b);
		n++;
	}
	closedir(dd);
	return n;
}

struct rtd_test_wbuf {
	uint8_t *b;
	size_t n, cap;
};

static inline int rtd_test_wput(const void *p, size_t n, void *ctx)
{
	struct rtd_test_wbuf *w = ctx;
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2;
		w->b = realloc(w->b, w->cap);
		if (!w->b)
			return -ENOMEM;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
	return 0;
}

/* The binary trace of a golang/exp .test vector (its text after
 * "-- trace --"), *len its length; asserts it converts. With
 * @success_only, NULL for a vector whose decoding is expected to fail
 * (no "SUCCESS" in it). */
static inline uint8_t *rtd_test_go_vector(const char *path, size_t *len, bool success_only)
{
	size_t n = 0;
	uint8_t *raw = rtd_test_slurp(path, &n);
	assert_non_null(raw);
	char *t = calloc(1, n + 1); /* a C string */
	assert_non_null(t);
	memcpy(t, raw, n);
	free(raw);
	if (success_only && !strstr(t, "SUCCESS")) {
		free(t);
		return NULL;
	}
	const char *tr = strstr(t, "-- trace --\n");
	assert_non_null(tr);
	tr += 12;
	struct rtd_test_wbuf w = {0};
	char err[256];
	assert_int_equal(rtd_gotrace_text2bin(tr, n - (size_t)(tr - t), rtd_test_wput, &w, err,
					      sizeof(err)), 0);
	free(t);
	*len = w.n;
	return w.b;
}

/* Each golang/exp .test vector of @dir (with @success_only, each one
 * expected to decode), made binary, given to @fn. Returns how many. */
static inline size_t rtd_test_each_go_vector(const char *dir, bool success_only,
					     void (*fn)(const uint8_t *, size_t, const char *))
{
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	struct dirent *de;
	size_t n = 0;
	while ((de = readdir(dd))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 5, ".test") != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t len = 0;
		uint8_t *bin = rtd_test_go_vector(path, &len, success_only);
		if (!bin)
			continue;
		fn(bin, len, de->d_name);
		free(bin);
		n++;
	}
	closedir(dd);
	return n;
}

/* The shared Go traces, each set a test of its own, given to @fn: the
 * old format's recordings (at least 20), golang/exp's Go 1.22+ .test
 * vectors made binary, the failing ones too (20), and the fuzz corpora:
 * real Go 1.19-1.23 traces, truncated and damaged ones (50 of gotrace's,
 * 10 of goanalysis'). A set not there skips its test, saying why. Each
 * returns how many traces it gave. */
typedef void (*rtd_test_trace_fn)(const uint8_t *, size_t, const char *);

static inline size_t rtd_test_go_old_traces(rtd_test_trace_fn fn)
{
	const char *dir = rtd_test_vector("testdata/gotrace/v1");
	if (!dir)
		skip();
	size_t n = rtd_test_each_file(dir, fn);
	assert_true(n >= 20);
	return n;
}

static inline size_t rtd_test_go_v2_traces(rtd_test_trace_fn fn)
{
	const char *dir = rtd_test_vector("testdata/gotrace/v2");
	if (!dir)
		skip();
	size_t n = rtd_test_each_go_vector(dir, false, fn);
	assert_true(n >= 20);
	return n;
}

static inline size_t rtd_test_go_corpora(rtd_test_trace_fn fn)
{
	const char *g = rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/gotrace");
	const char *a = rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/goanalysis");
	if (!g || !a)
		skip();
	size_t ng = rtd_test_each_file(g, fn), na = rtd_test_each_file(a, fn);
	assert_true(ng >= 50);
	assert_true(na >= 10);
	return ng + na;
}

/* A decoder fed @step bytes at a time, as a file reader would:
 * rtd_test_gosrc_next() is an rtd_gotrace_next_fn. */
struct rtd_test_gosrc {
	rtd_gotrace_dec *d;
	const uint8_t *b;
	size_t n, at, step;
	bool fin;
};

static inline int rtd_test_gosrc_next(void *ctx, struct rtd_gotrace_event *ev)
{
	struct rtd_test_gosrc *s = ctx;
	for (;;) {
		int rc = rtd_gotrace_dec_next(s->d, ev);
		if (rc != 0 || s->fin)
			return rc;
		if (s->at == s->n) {
			s->fin = true;
			if ((rc = rtd_gotrace_dec_finish(s->d)) < 0)
				return rc;
			continue;
		}
		size_t k = s->n - s->at < s->step ? s->n - s->at : s->step;
		if ((rc = rtd_gotrace_dec_feed(s->d, s->b + s->at, k)) < 0)
			return rc;
		s->at += k;
	}
}

#endif /* RTD_TEST_GOTRACE_H */
