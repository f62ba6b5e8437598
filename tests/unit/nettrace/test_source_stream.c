/* SPDX-License-Identifier: MIT */
/*
 * test_source_stream.c - rtd_nettrace_source_stream(): an EventPipe
 * stream read through a function, as a live session's socket gives it
 * (in pieces of any size), gives the very records of the same bytes read
 * as a file with no prepass: same kinds, times, threads, names and
 * fields, in the same order - for every piece size from 1 byte to a
 * whole 64 KiB read. A read error ends the stream with that error after
 * the records before it. rtd_source_each() (the source hands each record
 * from its decoder's callback in stream order) gives the records
 * rtd_source_next() gives, every field alike, stopped at every 1000th
 * and resumed, mixed with rtd_source_next(), in stream and in time order.
 * rtd_nettrace_source_live(): a read that says "no bytes now" (-EAGAIN)
 * makes the source idle (RTD_SOURCE_IDLE, its fd the given one), and the
 * records are the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "test_util.h"
#include "rtdiag/nettrace_source.h"

#define NT "testdata/nettrace/mixed_managed_external_samples.nettrace"

struct feed {
	const uint8_t *p;
	size_t len, pos, piece, fail_at;
	unsigned again; /* every other read says -EAGAIN ("no bytes now") */
	unsigned reads;
};

static int64_t feed_read(void *ctx, void *buf, size_t len)
{
	struct feed *f = ctx;
	if (f->fail_at && f->pos >= f->fail_at)
		return -ECONNRESET;
	if (f->again && f->reads++ % 2 == 0)
		return -EAGAIN;
	size_t n = f->len - f->pos;
	if (n > f->piece)
		n = f->piece;
	if (n > len)
		n = len;
	memcpy(buf, f->p + f->pos, n);
	f->pos += n;
	return (int64_t)n;
}

/* a record's identity: kind, times, ids, name, first field */
static uint64_t digest(const struct rtd_record *r)
{
	uint64_t h = 1469598103934665603ull;
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ull)
	MIX(r->kind);
	MIX(r->ts);
	MIX(r->mono);
	MIX(r->pid);
	MIX(r->tid);
	for (const char *c = r->name ? r->name : ""; *c; c++)
		MIX(*c);
	MIX(r->nfields);
	if (r->nfields)
		MIX(r->fields[0].u ^ (uint64_t)r->fields[0].i);
	MIX(r->stack ? r->stack->n : 0);
	return h;
#undef MIX
}

/* every record of @f (freed) by @dg, *@n of them */
static uint64_t *digests(rtd_source *f, uint64_t (*dg)(const struct rtd_record *), size_t *n)
{
	uint64_t *want = NULL;
	size_t cap = 0;
	const struct rtd_record *r;
	*n = 0;
	while (rtd_source_next(f, &r) == 1) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 4096;
			want = realloc(want, cap * sizeof(*want));
			assert_non_null(want);
		}
		want[(*n)++] = dg(r);
	}
	rtd_source_free(f);
	return want;
}

/* NT's bytes (*@len of them, freed by the caller; the test skipped
 * without the test data) and the digests of its records read as a file
 * with no prepass (*@want, *@n of them) */
static uint8_t *with_wants(size_t *len, uint64_t **want, size_t *n)
{
	const char *path = rtd_test_vector(NT);
	if (!path)
		skip();
	uint8_t *bytes = rtd_test_slurp(path, len);
	assert_non_null(bytes);
	RTD_OPTS(rtd_nettrace_source_opts, o, .no_prepass = true);
	rtd_source *f = rtd_nettrace_source_open(path, &o, NULL);
	assert_non_null(f);
	*want = digests(f, digest, n);
	return bytes;
}

static void test_pieces(void **state)
{
	(void)state;
	size_t len = 0, n = 0;
	uint64_t *want;
	uint8_t *bytes = with_wants(&len, &want, &n);
	const struct rtd_record *r;
	assert_true(n > 1000);

	static const size_t pieces[] = {1, 7, 4093, 65536};
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		struct feed fd = {.p = bytes, .len = len, .piece = pieces[k]};
		rtd_source *s = rtd_nettrace_source_stream(feed_read, &fd, NULL, NULL);
		assert_non_null(s);
		size_t i = 0;
		int rc;
		while ((rc = rtd_source_next(s, &r)) == 1) {
			assert_true(i < n);
			if (digest(r) != want[i])
				fail_msg("piece %zu: record %zu differs", pieces[k], i);
			i++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(i, n);
		rtd_source_free(s);
	}

	/* the connection breaks halfway: the records before, then its error */
	struct feed fd = {.p = bytes, .len = len, .piece = 4096, .fail_at = len / 2};
	rtd_source *s = rtd_nettrace_source_stream(feed_read, &fd, NULL, NULL);
	size_t i = 0;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1)
		assert_true(digest(r) == want[i++]);
	assert_int_equal(rc, -ECONNRESET);
	assert_true(i > 0 && i < n);
	rtd_source_free(s);

	int err = 0;
	assert_null(rtd_nettrace_source_stream(NULL, NULL, NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	free(want);
	free(bytes);
}

/* all of a record: digest() and every field whole */
static uint64_t digest_all(const struct rtd_record *r)
{
	uint64_t h = digest(r);
#define MIX(x) (h = (h ^ (uint64_t)(x)) * 1099511628211ull)
	MIX(r->phase);
	MIX(r->value);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct rtd_field *f = &r->fields[i];
		for (const char *c = f->name; *c; c++)
			MIX(*c);
		MIX(f->type);
		MIX(f->i);
		MIX(f->u);
		uint64_t d;
		memcpy(&d, &f->f, sizeof(d));
		MIX(d);
		for (const char *c = f->s ? f->s : ""; *c; c++)
			MIX(*c);
	}
	for (uint32_t i = 0; r->stack && i < r->stack->n; i++)
		MIX(r->stack->frames[i].ip);
	return h;
#undef MIX
}

struct handed {
	const uint64_t *want;
	size_t n, i;
};

static int hand(void *ctx, const struct rtd_record *r)
{
	struct handed *h = ctx;
	assert_true(h->i < h->n);
	if (digest_all(r) != h->want[h->i])
		fail_msg("record %zu (%s) differs handed", h->i, r->name ? r->name : "");
	return ++h->i % 1000 == 0 ? 7 : 0;
}

static void each_alike(const uint8_t *bytes, size_t len, bool stream_order)
{
	RTD_OPTS(rtd_nettrace_source_opts, o, .no_prepass = true, .stream_order = stream_order);
	rtd_source *f = rtd_nettrace_source_mem(bytes, len, &o, NULL);
	assert_non_null(f);
	size_t n = 0;
	uint64_t *want = digests(f, digest_all, &n);
	const struct rtd_record *r;
	struct feed fd = {.p = bytes, .len = len, .piece = 4093};
	rtd_source *s = rtd_nettrace_source_stream(feed_read, &fd, &o, NULL);
	assert_non_null(s);
	struct handed h = {.want = want, .n = n};
	int rc, stops = 0;
	while ((rc = rtd_source_each(s, hand, &h)) == 7) {
		/* every other stop, the next record by the other way */
		if (++stops % 2 && rtd_source_next(s, &r) == 1) {
			assert_true(h.i < n && digest_all(r) == want[h.i]);
			h.i++;
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(h.i, n);
	assert_true(stops > 0);
	printf("# %s order: %zu records handed alike, %d stops\n",
	       stream_order ? "stream" : "time", n, stops);
	rtd_source_free(s);
	free(want);
}

static void test_each(void **state)
{
	(void)state;
	static const char *const vecs[] = {
		NT, "testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"};
	int seen = 0;
	for (size_t v = 0; v < sizeof(vecs) / sizeof(vecs[0]); v++) {
		const char *path = rtd_test_vector(vecs[v]);
		if (!path)
			continue;
		size_t len = 0;
		uint8_t *bytes = rtd_test_slurp(path, &len);
		assert_non_null(bytes);
		each_alike(bytes, len, true);
		each_alike(bytes, len, false);
		free(bytes);
		seen++;
	}
	if (!seen)
		skip();
}

static void test_live(void **state)
{
	(void)state;
	size_t len = 0, n = 0;
	uint64_t *want;
	uint8_t *bytes = with_wants(&len, &want, &n);
	assert_true(n > 1000);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	struct feed fd = {.p = bytes, .len = len, .piece = 4093, .again = 1};
	rtd_source *s = rtd_nettrace_source_live(feed_read, &fd, pfd[0], NULL, NULL);
	assert_non_null(s);
	assert_int_equal(rtd_source_fd(s), pfd[0]);
	const struct rtd_record *r;
	size_t i = 0, idle = 0;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1 || rc == RTD_SOURCE_IDLE) {
		if (rc == RTD_SOURCE_IDLE) {
			idle++;
			continue;
		}
		assert_true(i < n);
		if (digest(r) != want[i])
			fail_msg("live: record %zu differs", i);
		i++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(i, n);
	assert_true(idle > 0);
	printf("# live: %zu records alike, idle %zu times\n", n, idle);
	rtd_source_free(s);
	/* a blocking read without an fd is the stream source: no fd */
	struct feed fb = {.p = bytes, .len = len, .piece = 65536};
	s = rtd_nettrace_source_live(feed_read, &fb, -1, NULL, NULL);
	assert_non_null(s);
	assert_int_equal(rtd_source_fd(s), -1);
	assert_int_equal(rtd_source_next(s, &r), 1);
	rtd_source_free(s);
	int err = 0;
	assert_null(rtd_nettrace_source_live(NULL, NULL, pfd[0], NULL, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	close(pfd[0]);
	close(pfd[1]);
	free(want);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_pieces),
					   cmocka_unit_test(test_each),
					   cmocka_unit_test(test_live)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
