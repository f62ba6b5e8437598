/* SPDX-License-Identifier: MIT */
/*
 * test_pause - on_event's RTD_NT_PAUSE: rtd_nettrace_feed() stops after
 * that event with RTD_NT_PAUSED and rtd_nettrace_resume() goes on from
 * the next, so a caller takes a block's events a few at a time (the
 * nettrace source's stream order: a queue of a few dozen records, not a
 * read's thousands). Over every shared vector, fed whole and in pieces,
 * pausing after every event and every 32nd: the same events, metadata
 * and sequence points in the same order as without pausing, never more
 * than N events per call, the same end; a feed while paused is refused;
 * rtd_nettrace_finish() while paused delivers the rest; with the sort on
 * a NetTrace V4+ stream the pause means go on.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"

struct pausing {
	struct nt_digest d;
	unsigned every;     /* pause after every this many events (0: never) */
	unsigned since;     /* events since the last pause */
	unsigned this_call; /* events delivered in this feed/resume call */
	unsigned most;      /* the most in one call */
};

static int pause_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct pausing *p = ctx;
	nt_digest_event(&p->d, ev);
	p->this_call++;
	if (p->this_call > p->most)
		p->most = p->this_call;
	if (p->every && ++p->since == p->every) {
		p->since = 0;
		return RTD_NT_PAUSE;
	}
	return 0;
}

static int pause_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	return nt_digest_meta(&((struct pausing *)ctx)->d, m);
}

static int pause_sp(void *ctx, uint64_t ts)
{
	return nt_digest_sp(&((struct pausing *)ctx)->d, ts);
}

/*
 * Decode @buf in pieces of @chunk bytes (0: whole), pausing after every
 * @every events; with @finish_at, rtd_nettrace_finish() is called at the
 * first pause at or past that many events. Returns finish()'s result;
 * *@pauses gets the count of RTD_NT_PAUSED answers.
 */
static int run(const uint8_t *buf, size_t len, size_t chunk, unsigned every, bool sort,
	       uint64_t finish_at, struct pausing *p, size_t *pauses)
{
	memset(p, 0, sizeof(*p));
	p->every = every;
	*pauses = 0;
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = p, .on_event = pause_event,
				      .on_metadata = pause_meta, .on_seqpoint = pause_sp,
				      .sort = sort};
	rtd_nettrace *dec = rtd_nettrace_new(&o);
	assert_non_null(dec);
	if (!chunk)
		chunk = len ? len : 1;
	int rc = 0;
	for (size_t off = 0; off < len && rc >= 0 && rc != 1; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		p->this_call = 0;
		rc = rtd_nettrace_feed(dec, buf + off, n);
		while (rc == RTD_NT_PAUSED) {
			(*pauses)++;
			assert_true(rtd_nettrace_paused(dec));
			/* the bytes are the caller's until the feed is done */
			assert_int_equal(rtd_nettrace_feed(dec, buf, 1), -RTD_E_STATE);
			if (finish_at && p->d.events >= finish_at)
				goto done;
			p->this_call = 0;
			rc = rtd_nettrace_resume(dec);
		}
		assert_false(rtd_nettrace_paused(dec));
	}
done:
	p->this_call = 0;
	if (rc >= 0)
		rc = rtd_nettrace_finish(dec);
	assert_false(rtd_nettrace_paused(dec));
	assert_int_equal(rtd_nettrace_resume(dec), rc < 0 ? rc : 0);
	rtd_nettrace_free(dec);
	return rc;
}

static void same(const char *what, const struct pausing *want, const struct pausing *got)
{
	if (got->d.hash != want->d.hash || got->d.events != want->d.events ||
	    got->d.metas != want->d.metas || got->d.seqpoints != want->d.seqpoints)
		fail_msg("%s: %llu events, %llu metadata, %llu sequence points (want "
			 "%llu, %llu, %llu), digest %s", what,
			 (unsigned long long)got->d.events, (unsigned long long)got->d.metas,
			 (unsigned long long)got->d.seqpoints, (unsigned long long)want->d.events,
			 (unsigned long long)want->d.metas, (unsigned long long)want->d.seqpoints,
			 got->d.hash == want->d.hash ? "equal" : "differs");
}

static void test_pause_every(void **state)
{
	(void)state;
	static const unsigned every[] = {1, 32};
	static const size_t chunks[] = {0, 64u << 10, 4093};
	int files = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		size_t len = 0;
		uint8_t *buf = nt_vector_read(nt_vectors[i], &len);
		if (!buf)
			continue;
		struct pausing whole, p;
		size_t pauses;
		int want_rc = run(buf, len, 0, 0, false, 0, &whole, &pauses);
		assert_int_equal(pauses, 0);
		assert_true(whole.d.events > 0);
		size_t total_pauses = 0;
		for (size_t e = 0; e < sizeof(every) / sizeof(every[0]); e++) {
			for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
				/* fewer runs (ASan on a busy box): the megabytes
				 * ones paused every event in 64 KiB pieces and every
				 * 32nd whole, the others whole and in 4093 bytes */
				bool big = len > (1u << 20);
				if (big ? !((every[e] == 1 && chunks[c] == 64u << 10) ||
					    (every[e] == 32 && chunks[c] == 0))
					: chunks[c] == 64u << 10)
					continue;
				char what[256];
				snprintf(what, sizeof(what), "%s, pieces of %zu, pause every %u",
					 nt_vectors[i], chunks[c], every[e]);
				assert_int_equal(run(buf, len, chunks[c], every[e], false, 0, &p,
						     &pauses),
						 want_rc);
				same(what, &whole, &p);
				/* never more than N events between two pauses */
				if (p.most > every[e])
					fail_msg("%s: %u events in one call", what, p.most);
				/* a pause after every Nth event but the last */
				assert_true(pauses >= (whole.d.events - 1) / every[e]);
				total_pauses += pauses;
			}
		}
		/* finish() while paused: the rest is delivered, no pause */
		assert_int_equal(run(buf, len, 0, 7, false, whole.d.events / 2, &p, &pauses),
				 want_rc);
		same("finish while paused", &whole, &p);
		assert_true(p.most > 7 || whole.d.events <= 14);
		printf("ok: %s: %llu events, %zu pauses, the same with each\n", nt_vectors[i],
		       (unsigned long long)whole.d.events, total_pauses);
		free(buf);
		files++;
	}
	if (!files)
		skip();
}

/* Sorting (NetTrace V4+) releases events at sequence points: there the
 * pause is ignored and the sorted events come as without it. */
static void test_pause_sorted(void **state)
{
	(void)state;
	int files = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		if (!strstr(nt_vectors[i], ".nettrace"))
			continue; /* NetPerf (V1-V3): no sort */
		size_t len = 0;
		uint8_t *buf = nt_vector_read(nt_vectors[i], &len);
		if (!buf)
			continue;
		struct pausing whole, p;
		size_t pauses;
		int want_rc = run(buf, len, 0, 0, true, 0, &whole, &pauses);
		assert_int_equal(run(buf, len, 64u << 10, 1, true, 0, &p, &pauses), want_rc);
		assert_int_equal(pauses, 0);
		same(nt_vectors[i], &whole, &p);
		free(buf);
		files++;
	}
	if (!files)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pause_every),
		cmocka_unit_test(test_pause_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
