/* SPDX-License-Identifier: MIT */
/*
 * test_lend - rtd_nettrace_opts.lend_strings: every text a walk gives
 * (rtd_nettrace_value.str) stays as it was until the caller's next
 * rtd_nettrace_feed(), _resume() or _finish(), not only until the walk's
 * next step (the nettrace source keeps a record's field texts so, without
 * a copy). Over every shared vector, whole and cut at two thirds, fed
 * whole and in pieces of 4093 bytes, pausing after every 7th event, in
 * stream and in time order: each text lent in a call is checked, at the
 * call's end, against the text the decoder gives without lending; and
 * the texts are those of a decoder without lending, in the same order.
 * Without lending (the scratch buffer rewritten at each string) the
 * check fails at the first event with two strings. The cap
 * (max_lent_bytes) fails a walk, not the stream, and holds per call.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"

struct lent {
	const char *str; /* as the walk gave it */
	size_t len;
	size_t at;       /* its index among all the texts */
};

struct texts {
	rtd_nettrace *dec;
	bool keep;      /* the reference run: each text copied */
	char **copies;  /* the reference texts, in walk order */
	size_t n, cap;  /* texts seen so far */
	struct lent *calls; /* the lending run: this call's texts */
	size_t ncalls, calls_cap;
	unsigned every, since; /* pause after every this many events */
	size_t checked, most;  /* texts checked; the most lent in one call */
	size_t max_lent;       /* opts.max_lent_bytes */
	size_t capped;         /* walks that failed with -RTD_E_CAP */
};

static int text_value(void *ctx, const struct rtd_nettrace_value *v)
{
	struct texts *t = ctx;
	if (!v->str || t->capped)
		return 0; /* past a cap: the texts no longer line up */
	assert_int_equal(strlen(v->str), v->str_len);
	if (t->keep) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1024;
			t->copies = realloc(t->copies, t->cap * sizeof(*t->copies));
			assert_non_null(t->copies);
		}
		t->copies[t->n] = strdup(v->str);
		assert_non_null(t->copies[t->n]);
	} else {
		if (t->ncalls == t->calls_cap) {
			t->calls_cap = t->calls_cap ? 2 * t->calls_cap : 1024;
			t->calls = realloc(t->calls, t->calls_cap * sizeof(*t->calls));
			assert_non_null(t->calls);
		}
		t->calls[t->ncalls++] = (struct lent){v->str, v->str_len, t->n};
	}
	t->n++;
	return 0;
}

static int text_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct texts *t = ctx;
	/* damage inside a payload ends its walk, as for every reader */
	if (rtd_nettrace_walk(t->dec, ev, text_value, t) == -RTD_E_CAP)
		t->capped++;
	if (t->every && ++t->since == t->every) {
		t->since = 0;
		return RTD_NT_PAUSE;
	}
	return 0;
}

/* A call has returned: what it lent is still there, as the reference */
static void check_call(struct texts *t, const struct texts *ref, const char *what)
{
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct lent *l = &t->calls[i];
		if (l->at >= ref->n)
			fail_msg("%s: text %zu past the reference's %zu", what, l->at, ref->n);
		const char *want = ref->copies[l->at];
		if (l->len != strlen(want) || memcmp(l->str, want, l->len + 1))
			fail_msg("%s: text %zu (%zu of the call's %zu) is \"%.40s\" (%zu "
				 "bytes) at the call's end, want \"%.40s\" (%zu)",
				 what, l->at, i, t->ncalls, l->str, strlen(l->str), want,
				 strlen(want));
	}
	t->checked += t->ncalls;
	if (t->ncalls > t->most)
		t->most = t->ncalls;
	t->ncalls = 0;
}

/* Decode @buf in pieces of @chunk bytes (0: whole); with @ref, lending,
 * each call's texts checked against it. Returns finish()'s result. */
static int run(const uint8_t *buf, size_t len, size_t chunk, bool sort, struct texts *t,
	       const struct texts *ref, const char *what)
{
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = t, .on_event = text_event,
				      .sort = sort, .lend_strings = ref != NULL,
				      .max_lent_bytes = t->max_lent};
	t->dec = rtd_nettrace_new(&o);
	assert_non_null(t->dec);
	if (!chunk)
		chunk = len ? len : 1;
	int rc = 0;
	for (size_t off = 0; off < len && rc >= 0 && rc != 1; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		rc = rtd_nettrace_feed(t->dec, buf + off, n);
		if (ref)
			check_call(t, ref, what);
		while (rc == RTD_NT_PAUSED) {
			rc = rtd_nettrace_resume(t->dec);
			if (ref)
				check_call(t, ref, what);
		}
	}
	if (rc >= 0)
		rc = rtd_nettrace_finish(t->dec);
	if (ref)
		check_call(t, ref, what);
	rtd_nettrace_free(t->dec);
	return rc;
}

static void texts_free(struct texts *t)
{
	for (size_t i = 0; t->keep && i < t->n; i++)
		free(t->copies[i]);
	free(t->copies);
	free(t->calls);
	memset(t, 0, sizeof(*t));
}

static void test_lend_vectors(void **state)
{
	(void)state;
	int files = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		size_t len = 0;
		uint8_t *buf = nt_vector_read(nt_vectors[i], &len);
		if (!buf)
			continue;
		for (int cut = 0; cut < 2; cut++) {
			size_t n = cut ? len / 3 * 2 : len;
			for (int sort = 0; sort < 2; sort++) {
				struct texts ref = {.keep = true};
				int want_rc = run(buf, n, 0, sort, &ref, NULL, NULL);
				static const size_t chunks[] = {0, 4093};
				for (size_t c = 0; c < 2; c++) {
					char what[256];
					snprintf(what, sizeof(what), "%s%s, %s, pieces of %zu",
						 nt_vectors[i], cut ? " cut at 2/3" : "",
						 sort ? "sorted" : "stream order", chunks[c]);
					struct texts t = {.every = 7};
					assert_int_equal(run(buf, n, chunks[c], sort, &t, &ref, what),
							 want_rc);
					if (t.n != ref.n || t.checked != ref.n)
						fail_msg("%s: %zu texts, %zu checked, want %zu", what,
							 t.n, t.checked, ref.n);
					if (c == 1 && !cut)
						printf("ok: %s: %zu texts, up to %zu lent in one "
						       "call\n", what, t.n, t.most);
					texts_free(&t);
				}
				texts_free(&ref);
			}
		}
		free(buf);
		files++;
	}
	if (!files)
		skip();
}

/* The cap on what one call lends: past it a walk fails with -RTD_E_CAP
 * (what came before still lent), and the next call starts afresh. */
static void test_lend_cap(void **state)
{
	(void)state;
	size_t len = 0;
	uint8_t *buf = nt_vector_read(nt_vectors[3], &len); /* objver4 */
	if (!buf)
		skip();
	struct texts ref = {.keep = true}, t = {.max_lent = 4096};
	int want_rc = run(buf, len, 0, false, &ref, NULL, NULL);
	assert_int_equal(ref.capped, 0);
	/* whole: one call lends everything, so most walks fail */
	assert_int_equal(run(buf, len, 0, false, &t, &ref, "capped, whole"), want_rc);
	assert_true(t.capped > 0);
	assert_true(t.n < ref.n);
	printf("ok: one call, 4 KiB: %zu walks capped, %zu of %zu texts lent\n", t.capped, t.n,
	       ref.n);
	texts_free(&t);
	/* an event a call: each call's texts fit */
	t = (struct texts){.max_lent = 4096, .every = 1};
	assert_int_equal(run(buf, len, 4093, false, &t, &ref, "capped, an event a call"),
			 want_rc);
	assert_int_equal(t.capped, 0);
	assert_int_equal(t.n, ref.n);
	texts_free(&t);
	texts_free(&ref);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lend_vectors),
		cmocka_unit_test(test_lend_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
