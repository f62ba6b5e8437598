/* SPDX-License-Identifier: MIT */
/*
 * test_tally - rtd_gotrace_dec_tally() (what 'gotrace stats' prints, with
 * a lean path for the common events) gives what a loop of
 * rtd_gotrace_dec_next() gives, counted here from the events as
 * rtd_gotrace_counts documents: the same events, types, bytes, time span,
 * goroutines, Ps and generations, and the same error with its message and
 * offset. Every shared recording of both formats, whole, cut at several
 * places and with bytes changed (a fake: damage nothing real produces),
 * fed a few KiB at a time.
 */
#include "test_gotrace.h"

#include <stdio.h>

/* distinct ids, a plain set */
struct set {
	uint64_t *k;
	size_t n, cap;
};

static void set_add(struct set *s, uint64_t v)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct set o = *s;
		s->cap = s->cap ? 2 * s->cap : 64;
		s->k = malloc(s->cap * sizeof(*s->k));
		assert_non_null(s->k);
		memset(s->k, 0xff, s->cap * sizeof(*s->k));
		s->n = 0;
		for (size_t i = 0; i < o.cap; i++)
			if (o.k[i] != UINT64_MAX)
				set_add(s, o.k[i]);
		free(o.k);
	}
	if (v == UINT64_MAX)
		return;
	size_t j = (size_t)(v * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	while (s->k[j] != UINT64_MAX) {
		if (s->k[j] == v)
			return;
		j = (j + 1) & (s->cap - 1);
	}
	s->k[j] = v;
	s->n++;
}

struct want {
	uint64_t events, count[256], bytes[256], gens;
	int64_t tmin, tmax;
	struct set gs, ps;
};

static bool is_meta(const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (ev->gen)
		return (t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
		       t >= RTD_GO2_EV_EXPERIMENTAL_BATCH;
	return t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY || t == RTD_GO_EV_STRING ||
	       t == RTD_GO_EV_STACK || t == RTD_GO_EV_TIMER_GOROUTINE;
}

static size_t g_files, g_runs, g_errors, g_events;
/* cuts and damaged copies of each file: the old format's recordings are
 * large (2 keep the test under 30 s in the ASan build on a loaded box),
 * the new format's vectors small */
static int g_forms;

static void compare(const uint8_t *b, size_t len, const char *name)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	/* the events, one by one */
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	struct rtd_test_gosrc s = {.d = d, .b = b, .n = len, .step = 4096};
	struct rtd_gotrace_event ev;
	struct want w = {.tmin = INT64_MAX, .tmax = INT64_MIN};
	uint64_t prev_off = 0;
	int prev = -1, rc;
	while ((rc = rtd_test_gosrc_next(&s, &ev)) > 0) {
		assert_true(ev.type < 256);
		if (prev >= 0)
			w.bytes[prev] += ev.off - prev_off;
		prev = (int)ev.type;
		prev_off = ev.off;
		w.count[ev.type]++;
		w.events++;
		if (!is_meta(&ev) &&
		    ev.type != (ev.gen ? RTD_GO2_EV_CPU_SAMPLE : RTD_GO_EV_CPU_SAMPLE)) {
			w.tmin = ev.ticks < w.tmin ? ev.ticks : w.tmin;
			w.tmax = ev.ticks > w.tmax ? ev.ticks : w.tmax;
		}
		if (ev.gen) {
			for (unsigned i = 0; i < ev.nargs; i++) {
				const char *a = ev.argnames[i];
				if (!strcmp(a, "g") || !strcmp(a, "new_g"))
					set_add(&w.gs, ev.args[i]);
				if (!strcmp(a, "p") && ev.type != RTD_GO2_EV_CPU_SAMPLE)
					set_add(&w.ps, ev.args[i]);
			}
			if (ev.type == RTD_GO2_EV_EVENT_BATCH && ev.args[0] > w.gens)
				w.gens = ev.args[0];
		} else {
			if (ev.g)
				set_add(&w.gs, ev.g);
			if (ev.type == RTD_GO_EV_GO_CREATE)
				set_add(&w.gs, ev.args[0]);
			if (ev.type == RTD_GO_EV_BATCH && ev.p >= 0)
				set_add(&w.ps, (uint64_t)ev.p);
		}
	}
	if (prev >= 0)
		w.bytes[prev] += s.at - prev_off;
	uint64_t erroff, erroff2;
	char msg[600];
	snprintf(msg, sizeof(msg), "%s", rtd_gotrace_dec_error(d, &erroff));
	rtd_gotrace_dec_free(d);

	/* the tally, fed the same way */
	d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_tally *t = rtd_gotrace_tally_new();
	assert_non_null(d);
	assert_non_null(t);
	size_t at = 0;
	int rc2;
	bool fin = false;
	while ((rc2 = rtd_gotrace_dec_tally(d, t)) == 0 && !fin) {
		size_t k = len - at < 4096 ? len - at : 4096;
		if (!k) {
			fin = true;
			rc2 = rtd_gotrace_dec_finish(d);
		} else {
			rc2 = rtd_gotrace_dec_feed(d, b + at, k);
			at += k;
		}
		if (rc2 < 0)
			break;
	}
	struct rtd_gotrace_counts c;
	rtd_gotrace_tally_counts(t, at, &c);
	if (rc2 != rc || c.events != w.events || strcmp(msg, rtd_gotrace_dec_error(d, &erroff2)) ||
	    erroff != erroff2)
		fail_msg("%s: rc %d/%d events %llu/%llu: '%s' / '%s'", name, rc, rc2,
			 (unsigned long long)w.events, (unsigned long long)c.events, msg,
			 rtd_gotrace_dec_error(d, NULL));
	for (unsigned i = 0; i < 256; i++)
		if (c.count[i] != w.count[i] || c.bytes[i] != w.bytes[i])
			fail_msg("%s: type %u: %llu events %llu bytes, want %llu and %llu", name, i,
				 (unsigned long long)c.count[i], (unsigned long long)c.bytes[i],
				 (unsigned long long)w.count[i], (unsigned long long)w.bytes[i]);
	assert_int_equal(c.tmin, w.tmin);
	assert_int_equal(c.tmax, w.tmax);
	assert_int_equal(c.generations, w.gens);
	assert_int_equal(c.goroutines, w.gs.n);
	assert_int_equal(c.procs, w.ps.n);
	assert_false(c.goroutines_over);
	g_runs++;
	g_errors += rc < 0;
	g_events += w.events;
	free(w.gs.k);
	free(w.ps.k);
	rtd_gotrace_tally_free(t);
	rtd_gotrace_dec_free(d);
}

/* The file whole, cut, and with bytes changed. */
static void check(const uint8_t *b, size_t len, const char *name)
{
	g_files++;
	compare(b, len, name);
	uint8_t *m = malloc(len ? len : 1);
	assert_non_null(m);
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ len;
	for (int k = 0; k < g_forms && len > 16; k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t cut = 16 + (size_t)(x >> 33) % (len - 16);
		compare(b, cut, name);
		memcpy(m, b, len);
		for (int j = 0; j <= k % 3; j++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t i = 16 + (size_t)(x >> 33) % (len - 16);
			m[i] = k & 1 ? (uint8_t)(m[i] | 0x80) : (uint8_t)(x >> 20);
		}
		compare(m, len, name);
	}
	free(m);
}

static void test_v1(void **state)
{
	(void)state;
	const char *dir = rtd_test_path("RTD_SHARED_DIR", "testdata/gotrace/v1");
	if (!dir)
		skip();
	g_files = g_runs = g_errors = g_events = 0;
	g_forms = 2;
	if (!rtd_test_each_file(dir, check))
		skip();
	printf("ok: %zu old-format traces in %zu forms (%zu of them failing), %zu events: "
	       "the tally equals the events'\n", g_files, g_runs, g_errors, g_events);
}

static void test_v2(void **state)
{
	(void)state;
	const char *dir = rtd_test_path("RTD_SHARED_DIR", "testdata/gotrace/v2");
	if (!dir)
		skip();
	g_files = g_runs = g_errors = g_events = 0;
	g_forms = 8;
	if (!rtd_test_each_go_vector(dir, false, check))
		skip();
	printf("ok: %zu Go 1.22+ traces in %zu forms (%zu of them failing), %zu events: "
	       "the tally equals the events'\n", g_files, g_runs, g_errors, g_events);
}

/* Ordered mode has no tally. */
static void test_ordered(void **state)
{
	(void)state;
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_tally *t = rtd_gotrace_tally_new();
	assert_int_equal(rtd_gotrace_dec_tally(d, t), -EINVAL);
	rtd_gotrace_tally_free(t);
	rtd_gotrace_tally_free(NULL);
	rtd_gotrace_dec_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_ordered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
