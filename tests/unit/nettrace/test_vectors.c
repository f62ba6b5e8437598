/* SPDX-License-Identifier: MIT */
/*
 * test_vectors - every shared nettrace/netperf vector decodes to its end
 * without error; the per-type event counts equal TraceEvent's baselines
 * (differences TraceLog itself makes are listed below with the reason);
 * feeding one byte at a time delivers exactly the same events.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"

/* Event types TraceLog does not list as events, and why. */
static const struct {
	const char *name;
	const char *why;
} tracelog_drops[] = {
	{"Microsoft-Windows-DotNETRuntimeRundown/Method/DCStopVerbose",
	 "TraceLog folds rundown method records into its code-address tables"},
	{"Microsoft-Windows-DotNETRuntimeRundown/Method/ILToNativeMapDCStop",
	 "TraceLog folds IL-to-native maps into its source-line tables"},
	{"Microsoft-Windows-DotNETRuntime/Method/ILToNativeMap",
	 "TraceLog folds IL-to-native maps into its source-line tables"},
	{NULL, NULL},
};

/* Baseline names TraceLog gives several of our types, and why. */
static const struct {
	const char *baseline;
	const char *ours[3];
	const char *why;
} tracelog_merges[] = {
	{"Microsoft-Windows-DotNETRuntime/GC",
	 {"Microsoft-Windows-DotNETRuntime/GC/IncreaseMemoryPressure",
	  "Microsoft-Windows-DotNETRuntime/GC/DecreaseMemoryPressure", NULL},
	 "TraceEvent has no template for GC events 200/201 and names both by "
	 "their task, 'GC'"},
	{NULL, {NULL}, NULL},
};

struct counts {
	rtd_strmap m;
	char key[1024];
};

static int count_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct counts *c = ctx;
	snprintf(c->key, sizeof(c->key), "%s/%s", m->provider, m->name);
	void *v;
	if (!rtd_strmap_get(&c->m, c->key, strlen(c->key), &v)) {
		uint64_t *n = calloc(1, sizeof(*n));
		assert_non_null(n);
		assert_int_equal(rtd_strmap_put(&c->m, c->key, strlen(c->key), n), 0);
		v = n;
	}
	m->user = v;
	return 0;
}

struct walk_count {
	uint64_t values;
};

static int count_value(void *ctx, const struct rtd_nettrace_value *v)
{
	((struct walk_count *)ctx)->values++;
	(void)v;
	return 0;
}

static rtd_nettrace *g_dec;
static uint64_t g_values;

/* Count the event, and walk its payload: every event of every vector
 * must match its layout (from the stream or the built-in schemas). */
static int count_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	(void)ctx;
	(*(uint64_t *)ev->meta->user)++;
	struct walk_count w = {0};
	int rc = rtd_nettrace_walk(g_dec, ev, count_value, &w);
	if (rc)
		fail_msg("event at offset %llu (%s/%s): payload of %zu bytes "
			 "does not match its layout: %s",
			 (unsigned long long)ev->offset, ev->meta->provider,
			 ev->meta->name, ev->payload_len, rtd_strerror(rc));
	g_values += w.values;
	return 0;
}

static uint64_t count_of(struct counts *c, const char *name)
{
	void *v;
	return rtd_strmap_get(&c->m, name, strlen(name), &v) ? *(uint64_t *)v : 0;
}

static bool is_dropped(const char *name)
{
	for (int i = 0; tracelog_drops[i].name; i++)
		if (!strcmp(tracelog_drops[i].name, name))
			return true;
	return false;
}

static void check_baseline(const char *vec, struct counts *c)
{
	char rel[512];
	snprintf(rel, sizeof(rel), "%s.baseline.txt", vec);
	const char *path = rtd_test_path("RTD_SHARED_DIR", rel);
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return; /* the speedscope and golden vectors have none */
	char line[65536];
	rtd_strmap seen;
	rtd_strmap_init(&seen, 0);
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *s = line;
		if (!strncmp(s, "\xef\xbb\xbf", 3))
			s += 3; /* UTF-8 BOM */
		char *comma = strstr(s, ", ");
		if (!comma)
			continue;
		*comma = 0;
		unsigned long long want = strtoull(comma + 2, NULL, 10);
		rtd_strmap_put(&seen, s, strlen(s), NULL);
		uint64_t got = count_of(c, s);
		for (int i = 0; tracelog_merges[i].baseline; i++) {
			if (strcmp(tracelog_merges[i].baseline, s))
				continue;
			got = 0;
			for (int j = 0; tracelog_merges[i].ours[j]; j++) {
				got += count_of(c, tracelog_merges[i].ours[j]);
				rtd_strmap_put(&seen, tracelog_merges[i].ours[j],
					       strlen(tracelog_merges[i].ours[j]),
					       NULL);
			}
			printf("  %s: %llu = merged (%s)\n", s, want,
			       tracelog_merges[i].why);
		}
		if (got != want)
			fail_msg("%s: %s: decoded %llu events, baseline %llu",
				 vec, s, (unsigned long long)got, want);
		n++;
	}
	fclose(f);
	assert_true(n > 0);
	/* every type we decoded is in the baseline, or TraceLog drops it */
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(&c->m, &b, e))) {
		if (*(uint64_t *)e->val == 0)
			continue;
		void *v;
		if (rtd_strmap_get(&seen, e->key, e->klen, &v))
			continue;
		if (is_dropped(e->key)) {
			printf("  %s: %llu not in the baseline (TraceLog drops "
			       "it)\n", e->key,
			       (unsigned long long)*(uint64_t *)e->val);
			continue;
		}
		fail_msg("%s: %s (%llu events) is not in the baseline", vec,
			 e->key, (unsigned long long)*(uint64_t *)e->val);
	}
	rtd_strmap_free(&seen);
	printf("ok: %s: %d baseline counts match\n", vec, n);
}

static void test_counts_match_baselines(void **state)
{
	(void)state;
	int done = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		const char *path = rtd_test_vector(nt_vectors[i]);
		if (!path)
			continue;
		size_t len = 0;
		uint8_t *buf = rtd_test_slurp(path, &len);
		assert_non_null(buf);
		struct counts c;
		rtd_strmap_init(&c.m, 0);
		struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &c,
					      .on_event = count_event,
					      .on_metadata = count_meta};
		rtd_nettrace *dec = rtd_nettrace_new(&o);
		assert_non_null(dec);
		g_dec = dec;
		int rc = rtd_nettrace_feed(dec, buf, len);
		if (rc < 0)
			fail_msg("%s: %s", nt_vectors[i],
				 rtd_nettrace_error(dec, NULL));
		assert_int_equal(rc, 1); /* the end marker was seen */
		assert_int_equal(rtd_nettrace_finish(dec), 0);
		struct rtd_nettrace_stats st;
		rtd_nettrace_stats(dec, &st);
		assert_int_equal(st.bytes, len);
		assert_true(st.events > 0);
		check_baseline(nt_vectors[i], &c);
		size_t b = 0;
		rtd_strmap_entry *e = NULL;
		while ((e = rtd_strmap_next(&c.m, &b, e)))
			free(e->val);
		rtd_strmap_free(&c.m);
		rtd_nettrace_free(dec);
		free(buf);
		done++;
	}
	if (!done)
		skip();
}

/* One byte at a time, and odd chunk sizes, give the very same events. */
static void test_byte_at_a_time(void **state)
{
	(void)state;
	int done = 0;
	static const size_t chunks[] = {1, 7, 4093, 65536};
	for (int i = 0; nt_vectors[i]; i++) {
		const char *path = rtd_test_vector(nt_vectors[i]);
		if (!path)
			continue;
		size_t len = 0;
		uint8_t *buf = rtd_test_slurp(path, &len);
		assert_non_null(buf);
		struct nt_digest whole, part;
		assert_int_equal(nt_digest_run(buf, len, 0, &whole), 0);
		rtd_nettrace_free(whole.dec);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			/* a byte at a time only for the smaller vectors, to
			 * keep the test fast; 7 bytes for every one */
			if (chunks[c] == 1 && len > (2u << 20))
				continue;
			assert_int_equal(nt_digest_run(buf, len, chunks[c], &part),
					 0);
			rtd_nettrace_free(part.dec);
			assert_int_equal(part.events, whole.events);
			assert_int_equal(part.metas, whole.metas);
			assert_int_equal(part.seqpoints, whole.seqpoints);
			assert_true(part.hash == whole.hash);
		}
		printf("ok: %s: %llu events identical in every split\n",
		       nt_vectors[i], (unsigned long long)whole.events);
		free(buf);
		done++;
	}
	if (!done)
		skip();
}

/* Truncation anywhere: every complete block before the cut is delivered,
 * then -RTD_E_TRUNCATED with the offset where the stream stops. */
static void test_truncated_prefixes(void **state)
{
	(void)state;
	const char *path = rtd_test_vector(
		"testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace");
	if (!path)
		skip();
	size_t len = 0;
	uint8_t *buf = rtd_test_slurp(path, &len);
	assert_non_null(buf);
	struct nt_digest whole;
	assert_int_equal(nt_digest_run(buf, len, 0, &whole), 0);
	rtd_nettrace_free(whole.dec);
	uint64_t prev = 0;
	for (size_t cut = 0; cut < len; cut += 997) {
		struct nt_digest d;
		int rc = nt_digest_run(buf, cut, 4096, &d);
		assert_int_equal(rc, -RTD_E_TRUNCATED);
		uint64_t off;
		const char *msg = rtd_nettrace_error(d.dec, &off);
		assert_true(msg[0] != 0);
		assert_true(off <= cut);
		assert_true(d.events <= whole.events);
		assert_true(d.events >= prev); /* longer prefix, more events */
		prev = d.events;
		rtd_nettrace_free(d.dec);
	}
	free(buf);
}

/* Flipped bytes: an error with an offset or a clean decode, never a
 * crash; the sanitizer build checks memory safety. */
static void test_corrupt_bytes(void **state)
{
	(void)state;
	const char *path = rtd_test_vector(
		"testdata/nettrace/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace");
	if (!path)
		skip();
	size_t len = 0;
	uint8_t *buf = rtd_test_slurp(path, &len);
	assert_non_null(buf);
	uint32_t seed = 12345;
	int errors = 0;
	for (int i = 0; i < 300; i++) {
		uint8_t *copy = malloc(len);
		memcpy(copy, buf, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			copy[at] ^= (uint8_t)(1u << (seed & 7));
		}
		struct nt_digest d;
		int rc = nt_digest_run(copy, len, 0, &d);
		if (rc < 0) {
			uint64_t off;
			assert_true(rtd_nettrace_error(d.dec, &off)[0] != 0);
			assert_true(off <= len);
			errors++;
		}
		rtd_nettrace_free(d.dec);
		free(copy);
	}
	printf("ok: 300 corrupted copies, %d reported errors\n", errors);
	free(buf);
}

static void test_not_a_trace(void **state)
{
	(void)state;
	rtd_nettrace *dec = rtd_nettrace_new(NULL);
	assert_non_null(dec);
	int rc = rtd_nettrace_feed(dec, "GIF89a\0\0\0\0", 10);
	assert_int_equal(rc, -RTD_E_NT_MAGIC);
	uint64_t off = 99;
	assert_non_null(strstr(rtd_nettrace_error(dec, &off), "not a nettrace"));
	assert_int_equal(off, 0);
	/* the error sticks */
	assert_int_equal(rtd_nettrace_feed(dec, "x", 1), -RTD_E_NT_MAGIC);
	rtd_nettrace_free(dec);
	rtd_nettrace_free(NULL);
	dec = rtd_nettrace_new(NULL);
	assert_int_equal(rtd_nettrace_finish(dec), -RTD_E_TRUNCATED);
	rtd_nettrace_free(dec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_match_baselines),
		cmocka_unit_test(test_byte_at_a_time),
		cmocka_unit_test(test_truncated_prefixes),
		cmocka_unit_test(test_corrupt_bytes),
		cmocka_unit_test(test_not_a_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
