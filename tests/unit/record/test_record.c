/* SPDX-License-Identifier: MIT */
/*
 * test_record.c - the record stream's shared parts: the options check
 * (libbpf's shape), clock-domain conversion, the interner, the pull
 * contract's sticky error record, and rtd_source_merge (order, stability,
 * N = 0, 1, many, an erroring source).
 *
 * The merge is tested over array sources made with rtd_source_new(): the
 * public way to make a source; the adapters over real recordings have
 * their own tests (test_nettrace_source.c, test_gotrace_source.c).
 */
#include <errno.h>
#include <string.h>

#include "test_util.h"
#include "rtdiag/source.h"
#include "common/stats.h"

/* ---- options ---------------------------------------------------------------- */

/* this version's options, and an older and a newer caller's */
struct v2_opts {
	size_t sz;
	int a;
	long b;
};
struct v1_opts {
	size_t sz;
	int a;
};
struct v3_opts {
	size_t sz;
	int a;
	long b;
	long c;
};

static void test_opts_check(void **st)
{
	(void)st;
	const size_t known = RTD_OPTS_END(v2_opts, b);
	assert_int_equal(rtd_opts_check(NULL, known), 0);
	RTD_OPTS(v2_opts, cur, .a = 1, .b = 2);
	assert_int_equal(rtd_opts_check(&cur, known), 0);
	assert_int_equal(RTD_OPTS_VALID(&cur, v2_opts, b), 0);
	/* an older caller's shorter struct works; what it lacks reads 0 */
	RTD_OPTS(v1_opts, old, .a = 7);
	assert_int_equal(rtd_opts_check(&old, known), 0);
	struct v2_opts got;
	memset(&got, 0xff, sizeof(got));
	assert_int_equal(rtd_opts_copy(&got, sizeof(got), &old, known), 0);
	assert_int_equal(got.sz, sizeof(got));
	assert_int_equal(got.a, 7);
	assert_int_equal(got.b, 0);
	/* a newer caller asking nothing new: accepted */
	RTD_OPTS(v3_opts, nw, .a = 3, .b = 4);
	assert_int_equal(rtd_opts_check(&nw, known), 0);
	assert_int_equal(rtd_opts_copy(&got, sizeof(got), &nw, known), 0);
	assert_int_equal(got.a, 3);
	assert_int_equal(got.b, 4);
	/* ...asking for an option this version lacks: refused */
	nw.c = 1;
	assert_int_equal(rtd_opts_check(&nw, known), -RTD_E_INVAL);
	assert_int_equal(rtd_opts_copy(&got, sizeof(got), &nw, known), -RTD_E_INVAL);
	assert_int_equal(got.a, 0); /* zeroed on refusal */
	/* a non-zero byte anywhere past the known end, one byte at a time */
	for (size_t i = known; i < sizeof(nw); i++) {
		unsigned char raw[sizeof(struct v3_opts)] = {0};
		size_t sz = sizeof(raw);
		memcpy(raw, &sz, sizeof(sz));
		raw[i] = 0x80;
		assert_int_equal(rtd_opts_check(raw, known), -RTD_E_INVAL);
	}
	/* sz smaller than sz itself */
	struct v2_opts bad = {.sz = 3};
	assert_int_equal(rtd_opts_check(&bad, known), -RTD_E_INVAL);
	/* a struct whose last field leaves padding: the padding may hold
	 * anything (an initializer may not set it), a byte past it may not */
	struct padded {
		size_t sz;
		int a;
		bool last;
	};
	const size_t pk = RTD_OPTS_END(padded, last);
	assert_true(pk < sizeof(struct padded));
	unsigned char raw[sizeof(struct padded) + 8] = {0};
	size_t psz = sizeof(struct padded);
	memcpy(raw, &psz, sizeof(psz));
	memset(raw + pk, 0xa5, sizeof(struct padded) - pk);
	assert_int_equal(rtd_opts_check(raw, pk), 0);
	psz = sizeof(raw); /* a newer caller: a field past the padding */
	memcpy(raw, &psz, sizeof(psz));
	raw[sizeof(struct padded)] = 1;
	assert_int_equal(rtd_opts_check(raw, pk), -RTD_E_INVAL);
}

/* A stats struct handed back (rtd_stats_copy()) to an older and a newer
 * caller: as far as both reach, the caller's sz kept, nothing written past
 * its end, a field this version lacks left as the caller set it. */
static void test_stats_copy(void **st)
{
	(void)st;
	const struct v2_opts mine = {.sz = sizeof(mine), .a = 5, .b = 6};
	struct {
		struct v1_opts s;
		int guard;
	} old = {{.sz = sizeof(struct v1_opts)}, 0x5a5a};
	assert_int_equal(rtd_stats_copy(&old.s, &mine, sizeof(mine)), 0);
	assert_int_equal(old.s.sz, sizeof(struct v1_opts));
	assert_int_equal(old.s.a, 5);
	assert_int_equal(old.guard, 0x5a5a);
	struct v3_opts nw = {.sz = sizeof(nw), .c = 9};
	assert_int_equal(rtd_stats_copy(&nw, &mine, sizeof(mine)), 0);
	assert_int_equal(nw.sz, sizeof(nw));
	assert_int_equal(nw.a, 5);
	assert_int_equal(nw.b, 6);
	assert_int_equal(nw.c, 9);
	struct v2_opts bad = {.sz = 3};
	assert_int_equal(rtd_stats_copy(&bad, &mine, sizeof(mine)), -RTD_E_INVAL);
	assert_int_equal(bad.a, 0);
	assert_int_equal(rtd_stats_copy(NULL, &mine, sizeof(mine)), -RTD_E_INVAL);
}

/* ---- clocks ------------------------------------------------------------------ */

static void test_clock(void **st)
{
	(void)st;
	assert_int_equal(rtd_clock_ticks_to_ns(10000000, 10000000), 1000000000);
	assert_int_equal(rtd_clock_ticks_to_ns(-5, 10000000), -500);
	assert_int_equal(rtd_clock_ticks_to_ns(123, 1000000000), 123);
	/* no overflow in the product: 2^62 ticks at 3 GHz */
	int64_t big = (int64_t)1 << 62;
	assert_int_equal(rtd_clock_ticks_to_ns(big, 3000000000u),
			 (big / 3000000000) * 1000000000 + (big % 3000000000) * 1000000000 / 3000000000);
	/* saturation at 1 Hz */
	assert_int_equal(rtd_clock_ticks_to_ns(INT64_MAX, 1), INT64_MAX);
	assert_int_equal(rtd_clock_ticks_to_ns(INT64_MIN + 1, 1), INT64_MIN);

	/* a 10 MHz QPC anchored at tick 1000 = mono 5 s, wall 1.7e9 s */
	struct rtd_clock c = {.domain = RTD_CLOCK_QPC,
			      .flags = RTD_CLOCK_HAS_MONO | RTD_CLOCK_HAS_WALL,
			      .freq = 10000000,
			      .ref_ts = 1000,
			      .ref_mono = 5000000000,
			      .ref_wall = 1700000000000000000};
	assert_int_equal(rtd_clock_to_mono(&c, 1000), 5000000000);
	assert_int_equal(rtd_clock_to_mono(&c, 1010), 5000001000);
	assert_int_equal(rtd_clock_to_mono(&c, 990), 4999999000);
	int64_t w = 0;
	assert_int_equal(rtd_clock_to_wall(&c, 11000, &w), 0);
	assert_int_equal(w, 1700000000001000000);
	/* unanchored: its own time line, in ns from the reference */
	c.flags = 0;
	assert_int_equal(rtd_clock_to_mono(&c, 1010), 1000);
	assert_int_equal(rtd_clock_to_wall(&c, 1010, &w), -RTD_E_NOTFOUND);
	assert_string_equal(rtd_clock_domain_name(RTD_CLOCK_QPC), "qpc");
	assert_string_equal(rtd_clock_domain_name(99), "unknown");
}

/* ---- interning ------------------------------------------------------------ */

static void test_intern(void **st)
{
	(void)st;
	rtd_intern *in = rtd_intern_new();
	assert_non_null(in);
	const char *a, *b, *c;
	assert_int_equal(rtd_intern_string(in, "main.work", 9, &a), 0);
	char tmp[] = "main.workXX";
	assert_int_equal(rtd_intern_string(in, tmp, 9, &b), 0);
	assert_ptr_equal(a, b);
	assert_string_equal(b, "main.work");
	assert_int_equal(rtd_intern_string(in, "main.idle", 9, &c), 0);
	assert_ptr_not_equal(a, c);

	char n1[] = "f", n2[] = "g";
	struct rtd_rec_frame f1[] = {{.ip = 0x10, .name = n1}, {.ip = 0x20, .name = n2}, {.ip = 0x30, .name = NULL}};
	struct rtd_rec_frame f2[] = {{.ip = 0x10, .name = "f"}, {.ip = 0x20, .name = "g"}, {.ip = 0x30, .name = NULL}};
	const struct rtd_stack *s1, *s2, *s3;
	assert_int_equal(rtd_intern_stack(in, f1, 3, &s1), 0);
	n1[0] = 'x'; /* the interner keeps its own copy of names */
	assert_int_equal(rtd_intern_stack(in, f2, 3, &s2), 0);
	assert_ptr_equal(s1, s2);
	assert_int_equal(s1->id, 1);
	assert_int_equal(s1->n, 3);
	assert_string_equal(s1->frames[0].name, "f");
	assert_null(s1->frames[2].name);
	assert_int_equal(rtd_intern_stack(in, f2, 2, &s3), 0); /* a prefix is another stack */
	assert_ptr_not_equal(s1, s3);
	assert_int_equal(s3->id, 2);
	/* the empty stack is a stack */
	const struct rtd_stack *s0;
	assert_int_equal(rtd_intern_stack(in, NULL, 0, &s0), 0);
	assert_int_equal(s0->n, 0);
	/* one stack deeper than its cap */
	struct rtd_rec_frame *deep = calloc(RTD_INTERN_MAX_DEPTH + 1, sizeof(*deep));
	assert_non_null(deep);
	assert_int_equal(rtd_intern_stack(in, deep, RTD_INTERN_MAX_DEPTH + 1, &s0), -RTD_E_CAP);
	free(deep);
	size_t ns = 0, nk = 0;
	rtd_intern_counts(in, &ns, &nk);
	assert_int_equal(ns, 4); /* main.work, main.idle, f, g */
	assert_int_equal(nk, 3);
	rtd_intern_free(in);
	rtd_intern_free(NULL);
}

/* ---- sources: an array of (time, tag) records, failing at @fail_at ---- */

struct arr {
	const int64_t *t;
	size_t n, i;
	long fail_at; /* index at which next() fails, or -1 */
	int freed;
};

static const char *arr_message = "bad byte"; /* what a failing next() says */

static int arr_next(void *impl, struct rtd_record *r)
{
	struct arr *a = impl;
	if (a->fail_at >= 0 && a->i == (size_t)a->fail_at)
		return rtd_source_error(r, -RTD_E_FORMAT, 4242, arr_message);
	if (a->i >= a->n)
		return 0;
	r->kind = RTD_REC_INSTANT;
	r->ts = a->t[a->i];
	r->mono = a->t[a->i];
	r->value = (double)a->i; /* its place in its source */
	a->i++;
	return 1;
}

static int arr_clock(void *impl, struct rtd_clock *c)
{
	(void)impl;
	c->domain = RTD_CLOCK_MONOTONIC;
	c->flags = RTD_CLOCK_HAS_MONO;
	c->freq = 1000000000u;
	return 0;
}

static void arr_free(void *impl)
{
	((struct arr *)impl)->freed++;
}

static const struct rtd_source_ops arr_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "array",
	.next = arr_next,
	.clock = arr_clock,
	.free = arr_free,
};

static const struct rtd_source_ops own_ops;

static void test_pull_contract(void **st)
{
	(void)st;
	static const int64_t t[] = {5, 7, 6}; /* 6 after 7: raised to 7 */
	struct arr a = {t, 3, 0, 2, 0};
	rtd_source *s = rtd_source_new(&arr_ops, &a);
	assert_non_null(s);
	assert_string_equal(rtd_source_name(s), "array");
	/* its impl back by its ops; another kind's ops, or none, give NULL */
	assert_ptr_equal(rtd_source_impl_of(s, &arr_ops), &a);
	assert_null(rtd_source_impl_of(s, &own_ops));
	assert_null(rtd_source_impl_of(NULL, &arr_ops));
	const struct rtd_record *r;
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 5);
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 7);
	/* the error record, and the same again on every later call */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(rtd_source_next(s, &r), -RTD_E_FORMAT);
		assert_int_equal(r->kind, RTD_REC_ERROR);
		assert_int_equal(r->code, -RTD_E_FORMAT);
		assert_int_equal(r->offset, 4242);
		assert_string_equal(r->message, "bad byte");
	}
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.records[RTD_REC_INSTANT], 2);
	assert_int_equal(ss.records[RTD_REC_ERROR], 1);
	rtd_source_free(s);
	assert_int_equal(a.freed, 1);

	/* a decoder's message is kept whole: a Go trace's ordering error
	 * runs to 500 bytes (the record kept 255 of them) */
	char longmsg[512];
	for (size_t k = 0; k < sizeof(longmsg) - 1; k++)
		longmsg[k] = (char)('a' + k % 26);
	longmsg[sizeof(longmsg) - 1] = 0;
	arr_message = longmsg;
	struct arr c = {t, 3, 0, 0, 0};
	s = rtd_source_new(&arr_ops, &c);
	assert_int_equal(rtd_source_next(s, &r), -RTD_E_FORMAT);
	assert_string_equal(r->message, longmsg);
	rtd_source_free(s);
	arr_message = "bad byte";

	/* a clock going back is clamped and counted */
	struct arr b = {t, 3, 0, -1, 0};
	s = rtd_source_new(&arr_ops, &b);
	int64_t last = INT64_MIN;
	while (rtd_source_next(s, &r) == 1) {
		assert_true(r->mono >= last);
		last = r->mono;
	}
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.clamped, 1);
	assert_int_equal(rtd_source_next(s, &r), 0); /* the end, again */
	rtd_source_free(s);

	/* ops without next or clock, or with a newer struct's unknown bytes */
	struct rtd_source_ops bad = arr_ops;
	bad.next = NULL;
	assert_null(rtd_source_new(&bad, &b));
	struct {
		struct rtd_source_ops ops;
		long newer;
	} newer = {arr_ops, 1};
	newer.ops.sz = sizeof(newer);
	assert_null(rtd_source_new(&newer.ops, &b));
	newer.newer = 0;
	s = rtd_source_new(&newer.ops, &b);
	assert_non_null(s);
	rtd_source_free(s);
}

/* ---- a source that gives out its own record (next_own) ---------------------
 * The same array, but the record is the source's: its kind and shape
 * written once, only the time and value per record; an error goes in
 * the scratch record, cleared first. (A stand-in for the Go source's
 * go_events: the contract of rtd_source_next() is what is tested.) */

struct own {
	struct arr a;
	struct rtd_record rec;
	int copied; /* calls of the copying next() */
};

static int own_next(void *impl, struct rtd_record *r)
{
	((struct own *)impl)->copied++;
	return arr_next(impl, r);
}

static int own_next_own(void *impl, struct rtd_record *scratch, struct rtd_record **out)
{
	struct own *o = impl;
	struct arr *a = &o->a;
	if (a->fail_at >= 0 && a->i == (size_t)a->fail_at) {
		memset(scratch, 0, sizeof(*scratch));
		return rtd_source_error(scratch, -RTD_E_FORMAT, 4242, arr_message);
	}
	if (a->i >= a->n)
		return 0;
	o->rec.ts = o->rec.mono = a->t[a->i];
	o->rec.value = (double)a->i++;
	*out = &o->rec;
	return 1;
}

static const struct rtd_source_ops own_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "own",
	.next = own_next,
	.clock = arr_clock,
	.next_own = own_next_own,
};

static void test_pull_own(void **st)
{
	(void)st;
	static const int64_t t[] = {5, 7, 6}; /* 6 after 7: raised to 7 */
	struct own o = {{t, 3, 0, -1, 0}, {.kind = RTD_REC_INSTANT, .shape = 1, .name = "x"}, 0};
	rtd_source *s = rtd_source_new(&own_ops, &o);
	assert_non_null(s);
	const struct rtd_record *r;
	int64_t want[] = {5, 7, 7};
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(rtd_source_next(s, &r), 1);
		assert_ptr_equal(r, &o.rec); /* the source's own, not a copy */
		assert_int_equal(r->mono, want[k]);
		assert_int_equal(r->shape, 1);
		assert_string_equal(r->name, "x");
		assert_int_equal((int)r->value, (int)k);
	}
	assert_int_equal(rtd_source_next(s, &r), 0);
	assert_int_equal(rtd_source_next(s, &r), 0);
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.records[RTD_REC_INSTANT], 3);
	assert_int_equal(ss.clamped, 1);
	assert_int_equal(o.copied, 0);
	rtd_source_free(s);

	/* an error through the scratch record: whole, and again */
	struct own e = {{t, 3, 0, 1, 0}, {.kind = RTD_REC_INSTANT}, 0};
	s = rtd_source_new(&own_ops, &e);
	assert_int_equal(rtd_source_next(s, &r), 1);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rtd_source_next(s, &r), -RTD_E_FORMAT);
		assert_int_equal(r->kind, RTD_REC_ERROR);
		assert_int_equal(r->offset, 4242);
		assert_int_equal(r->mono, 5);
		assert_string_equal(r->message, "bad byte");
	}
	rtd_source_free(s);

	/* a record of no kind is the source's bug, said as an error */
	struct own n = {{t, 3, 0, -1, 0}, {.kind = RTD_REC_NONE}, 0};
	s = rtd_source_new(&own_ops, &n);
	assert_int_equal(rtd_source_next(s, &r), -RTD_E_STATE);
	assert_int_equal(r->kind, RTD_REC_ERROR);
	rtd_source_free(s);

	/* merged with a copying source: in time order, copied out */
	static const int64_t u[] = {6, 8};
	struct own m1 = {{t, 2, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0};
	struct arr m2 = {u, 2, 0, -1, 0};
	rtd_source *ss2[2] = {rtd_source_new(&own_ops, &m1), rtd_source_new(&arr_ops, &m2)};
	rtd_source *m = rtd_source_merge(ss2, 2, NULL);
	int64_t got[4];
	uint32_t from[4];
	size_t k = 0;
	while (k < 4 && rtd_source_next(m, &r) == 1) {
		got[k] = r->mono;
		from[k++] = r->source;
	}
	assert_int_equal(k, 4);
	assert_int_equal(got[0], 5);
	assert_int_equal(from[0], 0);
	assert_int_equal(got[1], 6);
	assert_int_equal(from[1], 1);
	assert_int_equal(got[2], 7);
	assert_int_equal(from[2], 0);
	assert_int_equal(got[3], 8);
	assert_int_equal(rtd_source_next(m, &r), 0);
	rtd_source_free(m);
	rtd_source_free(ss2[0]);
	rtd_source_free(ss2[1]);
}

/* ---- a source that gives out its own records in batches (next_batch) -------
 * The same array again: each record in a slot of the source's, up to
 * @max a call; an error after some records comes at the next call. */

struct batchsrc {
	struct own o;
	struct rtd_record slot[4];
	int calls;   /* of next_batch */
	unsigned kind;
};

static int batch_next(void *impl, struct rtd_record *scratch, struct rtd_record **out,
		      size_t max)
{
	struct batchsrc *b = impl;
	struct arr *a = &b->o.a;
	b->calls++;
	size_t n = 0;
	if (max > 4)
		max = 4;
	while (n < max && a->i < a->n && (a->fail_at < 0 || a->i != (size_t)a->fail_at)) {
		struct rtd_record *r = &b->slot[n];
		*r = (struct rtd_record){.kind = b->kind, .shape = 1, .name = "x"};
		r->ts = r->mono = a->t[a->i];
		r->value = (double)a->i++;
		out[n++] = r;
	}
	if (n)
		return (int)n;
	if (a->i >= a->n)
		return 0;
	memset(scratch, 0, sizeof(*scratch));
	return rtd_source_error(scratch, -RTD_E_FORMAT, 4242, arr_message);
}

static const struct rtd_source_ops batch_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "batch",
	.next = own_next,
	.clock = arr_clock,
	.next_own = own_next_own,
	.next_batch = batch_next,
};

static void test_pull_batch(void **st)
{
	(void)st;
	static const int64_t t[] = {5, 7, 6, 9, 10, 11}; /* 6 after 7: raised to 7 */
	struct batchsrc b = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			     .kind = RTD_REC_INSTANT};
	rtd_source *s = rtd_source_new(&batch_ops, &b);
	assert_non_null(s);
	const struct rtd_record *recs[8];
	assert_int_equal(rtd_source_next_batch(s, recs, 0), -RTD_E_INVAL);
	/* four records in the first call, each in its own slot, all valid
	 * together; two in the second */
	int64_t want[] = {5, 7, 7, 9, 10, 11};
	assert_int_equal(rtd_source_next_batch(s, recs, 8), 4);
	for (size_t k = 0; k < 4; k++) {
		assert_ptr_equal(recs[k], &b.slot[k]);
		assert_int_equal(recs[k]->mono, want[k]);
		assert_int_equal((int)recs[k]->value, (int)k);
	}
	assert_int_equal(rtd_source_next_batch(s, recs, 8), 2);
	assert_int_equal(recs[0]->mono, 10);
	assert_int_equal(recs[1]->mono, 11);
	assert_int_equal(rtd_source_next_batch(s, recs, 8), 0);
	assert_int_equal(rtd_source_next_batch(s, recs, 8), 0);
	assert_int_equal(b.calls, 3);
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.records[RTD_REC_INSTANT], 6);
	assert_int_equal(ss.clamped, 1);
	assert_int_equal(b.o.copied, 0);
	rtd_source_free(s);

	/* a batch of one goes through next_own; mixed with single pulls the
	 * records stay in order and the clamp holds across both */
	struct batchsrc m = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			     .kind = RTD_REC_INSTANT};
	s = rtd_source_new(&batch_ops, &m);
	const struct rtd_record *r;
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(rtd_source_next_batch(s, recs, 1), 1);
	assert_int_equal(recs[0]->mono, 7); /* 6 raised to 7 */
	assert_int_equal(m.calls, 0);
	assert_int_equal(rtd_source_next_batch(s, recs, 2), 2);
	assert_int_equal(recs[1]->mono, 10);
	rtd_source_free(s);

	/* the records before an error first, then the error record, again */
	struct batchsrc e = {.o = {{t, 6, 0, 3, 0}, {.kind = RTD_REC_INSTANT}, 0},
			     .kind = RTD_REC_INSTANT};
	s = rtd_source_new(&batch_ops, &e);
	assert_int_equal(rtd_source_next_batch(s, recs, 8), 3);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rtd_source_next_batch(s, recs, 8), -RTD_E_FORMAT);
		assert_int_equal(recs[0]->kind, RTD_REC_ERROR);
		assert_int_equal(recs[0]->offset, 4242);
		assert_int_equal(recs[0]->mono, 7);
		assert_string_equal(recs[0]->message, "bad byte");
	}
	assert_int_equal(rtd_source_next(s, &r), -RTD_E_FORMAT);
	rtd_source_free(s);

	/* a record of no kind in a batch is the source's bug */
	struct batchsrc n = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			     .kind = RTD_REC_NONE};
	s = rtd_source_new(&batch_ops, &n);
	assert_int_equal(rtd_source_next_batch(s, recs, 8), -RTD_E_STATE);
	assert_int_equal(recs[0]->kind, RTD_REC_ERROR);
	rtd_source_free(s);

	/* a source without next_batch: one record a call, copied as ever */
	struct arr c = {t, 6, 0, -1, 0};
	s = rtd_source_new(&arr_ops, &c);
	size_t got = 0;
	int rc;
	while ((rc = rtd_source_next_batch(s, recs, 8)) > 0) {
		assert_int_equal(rc, 1);
		assert_int_equal(recs[0]->mono, want[got++]);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(got, 6);
	rtd_source_free(s);
}

/* ---- a source that hands its records to a callback itself (each) ---------
 * The same array again, each record in the source's one record, handed
 * to @take from the source's loop; it stops when @take says so. */

struct eachsrc {
	struct own o;
	int calls;   /* of each */
	unsigned kind;
	bool inline_checks; /* the checks and counts made here, not by
			     * rtd_source_take(): floor and count kept in
			     * locals, written back at the end */
};

static int each_src(void *impl, struct rtd_record *scratch, struct rtd_source_take *t)
{
	struct eachsrc *e = impl;
	struct arr *a = &e->o.a;
	e->calls++;
	int64_t floor = t->floor;
	uint64_t n = 0;
	while (a->i < a->n && (a->fail_at < 0 || a->i != (size_t)a->fail_at)) {
		struct rtd_record *r = &e->o.rec;
		r->kind = e->kind;
		r->ts = r->mono = a->t[a->i];
		r->value = (double)a->i++;
		if (!e->inline_checks) {
			if (rtd_source_take(t, r))
				return 1;
			continue;
		}
		if (r->mono < floor) {
			r->mono = floor;
			t->clamped++;
		}
		floor = r->mono;
		n++;
		if ((t->ret = t->fn(t->ctx, r)) != 0)
			break;
	}
	if (e->inline_checks) {
		t->floor = floor;
		t->records[RTD_REC_INSTANT] += n;
		if (t->ret)
			return 1;
	}
	if (a->i >= a->n)
		return 0;
	memset(scratch, 0, sizeof(*scratch));
	return rtd_source_error(scratch, -RTD_E_FORMAT, 4242, arr_message);
}

static const struct rtd_source_ops each_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "each",
	.next = own_next,
	.clock = arr_clock,
	.next_own = own_next_own,
	.each = each_src,
};

/* what a callback saw: each record's time and place, and when to stop */
struct seen {
	int64_t mono[16];
	int value[16];
	size_t n;
	size_t stop_at; /* stop (returning 7) after this many records, 0 never */
	const struct rtd_record *last;
};

static int see(void *ctx, const struct rtd_record *r)
{
	struct seen *w = ctx;
	assert_true(w->n < 16);
	w->mono[w->n] = r->mono;
	w->value[w->n] = (int)r->value;
	w->last = r;
	return ++w->n == w->stop_at ? 7 : 0;
}

static void test_each(void **st)
{
	(void)st;
	static const int64_t t[] = {5, 7, 6, 9, 10, 11}; /* 6 after 7: raised to 7 */
	const int64_t want[] = {5, 7, 7, 9, 10, 11};
	/* all six in one call, from the source's own loop, in its own
	 * record, clamped and counted as rtd_source_next() would */
	struct eachsrc e = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			    .kind = RTD_REC_INSTANT};
	rtd_source *s = rtd_source_new(&each_ops, &e);
	assert_non_null(s);
	struct seen w = {0};
	assert_int_equal(rtd_source_each(NULL, see, &w), -RTD_E_INVAL);
	assert_int_equal(rtd_source_each(s, NULL, &w), -RTD_E_INVAL);
	assert_int_equal(e.calls, 0); /* nothing read */
	assert_int_equal(rtd_source_each(s, see, &w), 0);
	assert_int_equal(w.n, 6);
	for (size_t k = 0; k < 6; k++) {
		assert_int_equal(w.mono[k], want[k]);
		assert_int_equal(w.value[k], (int)k);
	}
	assert_ptr_equal(w.last, &e.o.rec);
	assert_int_equal(e.calls, 1);
	assert_int_equal(e.o.copied, 0);
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.records[RTD_REC_INSTANT], 6);
	assert_int_equal(ss.clamped, 1);
	assert_int_equal(rtd_source_each(s, see, &w), 0); /* the end again */
	assert_int_equal(w.n, 6);
	rtd_source_free(s);

	/* the callback stops it: its value back, the next records at the
	 * next call; mixed with single pulls, in order, the clamp held */
	struct eachsrc m = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			    .kind = RTD_REC_INSTANT};
	s = rtd_source_new(&each_ops, &m);
	w = (struct seen){.stop_at = 2};
	assert_int_equal(rtd_source_each(s, see, &w), 7);
	assert_int_equal(w.n, 2);
	const struct rtd_record *r;
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 7); /* 6 raised to 7 */
	assert_int_equal((int)r->value, 2);
	w.stop_at = 0;
	assert_int_equal(rtd_source_each(s, see, &w), 0);
	assert_int_equal(w.n, 5);
	assert_int_equal(w.value[2], 3);
	assert_int_equal(w.mono[4], 11);
	rtd_source_free(s);

	/* the same with the checks and counts made in the source's loop
	 * (rtd_source_ops.each without rtd_source_take()): its floor and
	 * counts taken back, so a pull between two walks is clamped too */
	struct eachsrc in = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			     .kind = RTD_REC_INSTANT, .inline_checks = true};
	s = rtd_source_new(&each_ops, &in);
	w = (struct seen){.stop_at = 2};
	assert_int_equal(rtd_source_each(s, see, &w), 7);
	assert_int_equal(w.n, 2);
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 7); /* 6 raised to the walk's floor */
	w.stop_at = 0;
	assert_int_equal(rtd_source_each(s, see, &w), 0);
	assert_int_equal(w.n, 5);
	assert_int_equal(w.mono[2], 9);
	assert_int_equal(w.mono[4], 11);
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.records[RTD_REC_INSTANT], 6);
	assert_int_equal(ss.clamped, 1);
	rtd_source_free(s);

	/* the records before an error first, then the error: returned, and
	 * the error record what rtd_source_next() gives, again */
	struct eachsrc f = {.o = {{t, 6, 0, 3, 0}, {.kind = RTD_REC_INSTANT}, 0},
			    .kind = RTD_REC_INSTANT};
	s = rtd_source_new(&each_ops, &f);
	w = (struct seen){0};
	assert_int_equal(rtd_source_each(s, see, &w), -RTD_E_FORMAT);
	assert_int_equal(w.n, 3);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rtd_source_next(s, &r), -RTD_E_FORMAT);
		assert_int_equal(r->kind, RTD_REC_ERROR);
		assert_int_equal(r->offset, 4242);
		assert_int_equal(r->mono, 7);
		assert_string_equal(r->message, "bad byte");
	}
	assert_int_equal(rtd_source_each(s, see, &w), -RTD_E_FORMAT);
	assert_int_equal(w.n, 3);
	rtd_source_free(s);

	/* a record of no kind is the source's bug, never handed out */
	struct eachsrc n = {.o = {{t, 6, 0, -1, 0}, {.kind = RTD_REC_INSTANT}, 0},
			    .kind = RTD_REC_NONE};
	s = rtd_source_new(&each_ops, &n);
	w = (struct seen){0};
	assert_int_equal(rtd_source_each(s, see, &w), -RTD_E_STATE);
	assert_int_equal(w.n, 0);
	assert_int_equal(rtd_source_next(s, &r), -RTD_E_STATE);
	assert_int_equal(r->kind, RTD_REC_ERROR);
	rtd_source_free(s);

	/* sources without each: pulled one record at a time, the same
	 * records (a copying source and one with its own record) */
	struct arr c = {t, 6, 0, -1, 0};
	s = rtd_source_new(&arr_ops, &c);
	w = (struct seen){.stop_at = 4};
	assert_int_equal(rtd_source_each(s, see, &w), 7);
	w.stop_at = 0;
	assert_int_equal(rtd_source_each(s, see, &w), 0);
	assert_int_equal(w.n, 6);
	for (size_t k = 0; k < 6; k++)
		assert_int_equal(w.mono[k], want[k]);
	rtd_source_free(s);
	struct own o = {{t, 6, 0, 5, 0}, {.kind = RTD_REC_INSTANT}, 0};
	s = rtd_source_new(&own_ops, &o);
	w = (struct seen){0};
	assert_int_equal(rtd_source_each(s, see, &w), -RTD_E_FORMAT);
	assert_int_equal(w.n, 5);
	assert_ptr_equal(w.last, &o.rec);
	rtd_source_free(s);
}

/* merge @k array sources, check order and stability; returns the count */
static size_t merged(struct arr *arrs, size_t k, int64_t *times, uint32_t *srcs, int *rc_out)
{
	rtd_source **ss = calloc(k ? k : 1, sizeof(*ss));
	for (size_t i = 0; i < k; i++)
		ss[i] = rtd_source_new(&arr_ops, &arrs[i]);
	rtd_source *m = rtd_source_merge(ss, k, NULL);
	assert_non_null(m);
	const struct rtd_record *r;
	size_t n = 0;
	int rc;
	while ((rc = rtd_source_next(m, &r)) == 1) {
		times[n] = r->mono;
		srcs[n] = r->source;
		n++;
	}
	*rc_out = rc;
	if (rc < 0) {
		assert_int_equal(r->kind, RTD_REC_ERROR);
		times[n] = (int64_t)r->offset;
		srcs[n] = r->source;
	}
	rtd_source_free(m);
	for (size_t i = 0; i < k; i++)
		rtd_source_free(ss[i]);
	free(ss);
	return n;
}

static void test_merge(void **st)
{
	(void)st;
	int64_t times[64];
	uint32_t srcs[64];
	int rc;

	/* N = 0: an empty stream */
	assert_int_equal(merged(NULL, 0, times, srcs, &rc), 0);
	assert_int_equal(rc, 0);

	/* N = 1: passes through */
	static const int64_t a1[] = {1, 2, 2, 9};
	struct arr one[] = {{a1, 4, 0, -1, 0}};
	assert_int_equal(merged(one, 1, times, srcs, &rc), 4);
	assert_int_equal(rc, 0);
	assert_int_equal(times[3], 9);

	/* many, with equal times across sources: lowest index first, each
	 * source in its own order */
	static const int64_t x[] = {1, 4, 4, 10};
	static const int64_t y[] = {0, 4, 11};
	static const int64_t z[] = {4, 4};
	struct arr many[] = {{x, 4, 0, -1, 0}, {y, 3, 0, -1, 0}, {z, 2, 0, -1, 0}, {NULL, 0, 0, -1, 0}};
	size_t n = merged(many, 4, times, srcs, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 9);
	static const int64_t want_t[] = {0, 1, 4, 4, 4, 4, 4, 10, 11};
	static const uint32_t want_s[] = {1, 0, 0, 0, 1, 2, 2, 0, 1};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(times[i], want_t[i]);
		assert_int_equal(srcs[i], want_s[i]);
	}

	/* a source that errors stops the merge with its error record */
	static const int64_t e[] = {3, 5, 6};
	struct arr err[] = {{x, 4, 0, -1, 0}, {e, 3, 0, 2, 0}};
	n = merged(err, 2, times, srcs, &rc);
	assert_int_equal(rc, -RTD_E_FORMAT);
	assert_int_equal(times[n], 4242); /* the error record's offset */
	assert_int_equal(srcs[n], 1);     /* ...and its source */
	/* what came before it is in order: 1 3 4 4 5, then source 1 fails */
	assert_int_equal(n, 5);
	for (size_t i = 1; i < n; i++)
		assert_true(times[i] >= times[i - 1]);

	/* many sources at once, interleaved: the merged line is sorted and
	 * complete */
	enum { K = 17, L = 40 };
	static int64_t big[K][L];
	struct arr bigs[K];
	for (int i = 0; i < K; i++) {
		for (int j = 0; j < L; j++)
			big[i][j] = (j * 7 + i * 3) % 50 + j * 10;
		bigs[i] = (struct arr){big[i], L, 0, -1, 0};
	}
	int64_t *bt = calloc(K * L, sizeof(*bt));
	uint32_t *bs = calloc(K * L, sizeof(*bs));
	n = merged(bigs, K, bt, bs, &rc);
	assert_int_equal(n, K * L);
	for (size_t i = 1; i < n; i++)
		assert_true(bt[i] > bt[i - 1] || (bt[i] == bt[i - 1] && bs[i] >= bs[i - 1]));
	free(bt);
	free(bs);
}

static void test_merge_clock(void **st)
{
	(void)st;
	static const int64_t t[] = {1};
	struct arr a = {t, 1, 0, -1, 0};
	rtd_source *s = rtd_source_new(&arr_ops, &a);
	rtd_source *m = rtd_source_merge(&s, 1, NULL);
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(m, &c), 0);
	assert_int_equal(c.domain, RTD_CLOCK_MONOTONIC);
	assert_int_equal(c.mono_error_ns, 0);
	/* merge options: a newer caller's unknown option is refused */
	struct {
		struct rtd_merge_opts o;
		int x;
	} o = {{.sz = sizeof(o)}, 1};
	assert_null(rtd_source_merge(&s, 1, &o.o));
	rtd_source_free(m);
	rtd_source_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_check),
		cmocka_unit_test(test_stats_copy),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_pull_contract),
		cmocka_unit_test(test_pull_own),
		cmocka_unit_test(test_pull_batch),
		cmocka_unit_test(test_each),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
