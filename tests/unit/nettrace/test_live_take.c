/* SPDX-License-Identifier: MIT */
/*
 * test_live_take - the agent's per-window take from records: a shared
 * trace handed to a live source (rtd_nettrace_source_live(), as a live
 * session's socket gives it: a piece, then "no bytes now" (-EAGAIN), so
 * rtd_nettrace_profiler_pull() comes back RTD_SOURCE_IDLE) with the
 * CLI's pull options (address frames, stream order, the builder's
 * filters), and a rtd_nettrace_profiler_take() after every piece or
 * every third, gives at every cut the very profiles of the events path
 * (a decoder's events and sequence points into
 * rtd_nettrace_profiler_event(), a take after the same pieces): every
 * kind's folded text and pprof bytes (sample for sample, name for name)
 * and the take's count of unnamed samples, for four piece sizes, thread
 * time, --managed-only and running mode. Records carry no sequence
 * points, so the pull accounts the pending samples at each idle: with
 * the builder's max_pending at the most samples one pull took, three
 * pulls a take go through (without the accounting at the idle the
 * samples of three pieces are pending and the pull fails with
 * -RTD_E_CAP: seen).
 */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "nettrace/nt.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"

#include "nt_prof.h"

/* A socket's bytes as they come: up to @cut, then "nothing now" */
struct live {
	const uint8_t *p;
	size_t len, pos, cut;
};

static int64_t live_read(void *ctx, void *buf, size_t len)
{
	struct live *l = ctx;
	if (l->pos == l->len)
		return 0;
	if (l->pos >= l->cut)
		return -EAGAIN;
	size_t n = l->cut - l->pos;
	if (n > len)
		n = len;
	memcpy(buf, l->p + l->pos, n);
	l->pos += n;
	return (int64_t)n;
}

/* A take's outputs: its count of unnamed samples, then each kind's
 * folded text and pprof bytes, in one string. */
static char *take_text(rtd_nettrace_profiler *p, size_t *len)
{
	rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
	int u = rtd_nettrace_profiler_take(p, out);
	assert_true(u >= 0);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	assert_non_null(f);
	fprintf(f, "unnamed %d\n", u);
	for (int k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++) {
		fprintf(f, "kind %d %s\n", k, out[k] ? "" : "none");
		if (!out[k])
			continue;
		assert_int_equal(rtd_profile_write_folded(out[k], f), 0);
		assert_int_equal(rtd_profile_write_pprof(out[k], f), 0);
		rtd_profile_free(out[k]);
	}
	fclose(f);
	*len = n;
	return text;
}

struct run {
	const uint8_t *buf;
	size_t len, step;
	size_t every; /* a take after every that many pieces, and at the end */
	const struct rtd_nettrace_profiler_opts *po;
	size_t cap; /* the records' builder's max_pending (0: the default) */
	uint64_t most; /* out: the most samples one pull took */
};

static bool take_now(const struct run *r, size_t off)
{
	size_t piece = off / r->step;
	return off + r->step >= r->len || piece % r->every == r->every - 1;
}

/* The takes of the events path, one after each piece, in one string */
static char *by_events(const struct run *r, size_t *n)
{
	struct pc p = {.prof = rtd_nettrace_profiler_new(r->po)};
	RTD_OPTS(rtd_nettrace_opts, o, .ctx = &p, .on_event = on_event, .on_seqpoint = on_sp);
	p.dec = rtd_nettrace_new(&o);
	assert_non_null(p.prof);
	assert_non_null(p.dec);
	char *all = NULL;
	FILE *f = open_memstream(&all, n);
	assert_non_null(f);
	for (size_t off = 0; off < r->len; off += r->step) {
		size_t k = r->len - off < r->step ? r->len - off : r->step;
		int rc = rtd_nettrace_feed(p.dec, r->buf + off, k);
		assert_true(rc == 0 || rc == 1);
		if (!take_now(r, off))
			continue;
		size_t tl;
		char *t = take_text(p.prof, &tl);
		fwrite(t, 1, tl, f);
		free(t);
	}
	fclose(f);
	rtd_nettrace_profiler_free(p.prof);
	rtd_nettrace_free(p.dec);
	return all;
}

/* The takes of the records path: a pull to the idle after each piece */
static char *by_records(struct run *r, size_t *n)
{
	struct rtd_nettrace_profiler_opts po = *r->po;
	po.max_pending = r->cap;
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(&po);
	assert_non_null(p);
	RTD_OPTS(rtd_nettrace_source_opts, cli, .address_frames = true, .stream_order = true,
		 .kinds = 1u << RTD_REC_SAMPLE, .want = rtd_nettrace_profiler_want,
		 .want_ctx = p, .fields = rtd_nettrace_profiler_fields, .fields_ctx = p,
		 .field_want = rtd_nettrace_profiler_field_want);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0); /* a descriptor to say; never read */
	struct live l = {.p = r->buf, .len = r->len};
	int err = 0;
	rtd_source *src = rtd_nettrace_source_live(live_read, &l, pfd[0],
						   &cli, &err);
	assert_non_null(src);
	assert_int_equal(rtd_source_fd(src), pfd[0]);
	char *all = NULL;
	FILE *f = open_memstream(&all, n);
	assert_non_null(f);
	int rc = RTD_SOURCE_IDLE;
	for (size_t off = 0; off < r->len; off += r->step) {
		l.cut = r->len - off < r->step ? r->len : off + r->step;
		uint64_t before = rtd_nettrace_profiler_samples(p);
		rc = rtd_nettrace_profiler_pull(p, src);
		if (rc < 0)
			fail_msg("pull at %zu of %zu: %s", l.cut, r->len, rtd_strerror(rc));
		assert_true(rc == RTD_SOURCE_IDLE || (rc == 0 && l.cut == r->len));
		assert_int_equal(l.pos, l.cut);
		if (rtd_nettrace_profiler_samples(p) - before > r->most)
			r->most = rtd_nettrace_profiler_samples(p) - before;
		if (!take_now(r, off))
			continue;
		size_t tl;
		char *t = take_text(p, &tl);
		fwrite(t, 1, tl, f);
		free(t);
	}
	/* the end marker came with the last piece: the pull says the end */
	if (rc != 0)
		assert_int_equal(rtd_nettrace_profiler_pull(p, src), 0);
	fclose(f);
	rtd_source_free(src);
	rtd_nettrace_profiler_free(p);
	close(pfd[0]);
	close(pfd[1]);
	return all;
}

/* The records' takes equal the events' takes, byte for byte */
static void compare(struct run *r, const char *name)
{
	size_t ne = 0, nr = 0;
	char *ev = by_events(r, &ne);
	char *rec = by_records(r, &nr);
	if (ne != nr || memcmp(ev, rec, ne)) {
		size_t d = 0;
		while (d < ne && d < nr && ev[d] == rec[d])
			d++;
		fail_msg("%s step %zu every %zu cap %zu: the takes differ at byte %zu "
			 "(%zu vs %zu bytes)",
			 name, r->step, r->every, r->cap, d, nr, ne);
	}
	free(ev);
	free(rec);
}

static void test_takes(void **state)
{
	(void)state;
	int done = 0;
	for (size_t t = 0; t < NT_SAMPLE_TRACES; t++) {
		size_t len = 0;
		uint8_t *buf = nt_sample_trace(t, &len);
		if (!buf)
			continue;
		const size_t steps[] = {len / 3 + 1, len / 8 + 1, 65536, 4093};
		for (size_t si = 0; si < sizeof(steps) / sizeof(steps[0]); si++) {
			for (int mode = 0; mode < 3; mode++) {
				RTD_OPTS(rtd_nettrace_profiler_opts, po, .managed_only = mode == 1,
					 .running_only = mode == 2);
				struct run r = {.buf = buf, .len = len, .step = steps[si], .every = 1,
						.po = &po};
				compare(&r, nt_sample_traces[t]);
				/* three pieces a take, the pending samples capped at
				 * the most one pull took: each idle accounts them */
				r.every = 3;
				r.cap = r.most > 0 ? r.most : 1;
				compare(&r, nt_sample_traces[t]);
			}
		}
		free(buf);
		done++;
	}
	if (!done)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_takes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
