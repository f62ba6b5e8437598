/* SPDX-License-Identifier: MIT */
/*
 * test_live.c - the live half of the record stream's contract
 * (rtdiag/source.h, "Live sources"): RTD_SOURCE_IDLE with a watermark,
 * the merge's watermark rule, its wake-up descriptor, the clamp of a
 * record that breaks its source's promise, and rtd_source_thread().
 *
 * The live sources here are scripted with rtd_source_new() (the public
 * way to make a source): what a running process gives and when is
 * exactly what a unit test must control. The real ones (perf, EventPipe)
 * are tested through rtdiag record (tests/integration/record/).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "rtdiag/source.h"
#include "rtdiag/timeline_records.h"

/* ---- a scripted live source ---------------------------------------------------- */

/* One step: a record at @t (@wm == 0), or a new watermark @wm; each
 * comes once the test's phase reaches @phase. */
struct step {
	int phase;
	int64_t t;
	int64_t wm;
};

struct live {
	const struct step *steps;
	size_t n, at;
	const int *phase;
	int64_t wm;
	int efd;
	bool end_when_done;
	unsigned outstanding; /* records given and not yet followed by a pull */
	unsigned max_outstanding;
};

static int live_next(void *impl, struct rtd_record *rec)
{
	struct live *l = impl;
	l->outstanding = 0;
	uint64_t v;
	ssize_t rd = read(l->efd, &v, sizeof(v)); /* clear the wake-up */
	(void)rd;
	while (l->at < l->n && l->steps[l->at].phase <= *l->phase) {
		const struct step *s = &l->steps[l->at++];
		if (s->wm) {
			l->wm = s->wm;
			continue;
		}
		rec->kind = RTD_REC_INSTANT;
		rec->ts = rec->mono = s->t;
		rec->name = "x";
		l->outstanding++;
		if (l->outstanding > l->max_outstanding)
			l->max_outstanding = l->outstanding;
		return 1;
	}
	if (l->at == l->n && l->end_when_done)
		return 0;
	rec->mono = l->wm;
	return RTD_SOURCE_IDLE;
}

static int live_clock(void *impl, struct rtd_clock *out)
{
	(void)impl;
	out->domain = RTD_CLOCK_MONOTONIC;
	out->flags = RTD_CLOCK_HAS_MONO;
	out->freq = 1000000000u;
	return 0;
}

static int live_fd(void *impl)
{
	return ((struct live *)impl)->efd;
}

static const struct rtd_source_ops live_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "live",
	.next = live_next,
	.clock = live_clock,
	.fd = live_fd,
};

static void live_init(struct live *l, const struct step *steps, size_t n, const int *phase)
{
	memset(l, 0, sizeof(*l));
	l->steps = steps;
	l->n = n;
	l->phase = phase;
	l->wm = INT64_MIN;
	l->end_when_done = true;
	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(l->efd >= 0);
}

static void poke(struct live *l)
{
	uint64_t one = 1;
	assert_int_equal(write(l->efd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

/* Pull @m until it is idle or ends: the times that came out, appended to
 * @out. Returns the last return value. */
static int drain(rtd_source *m, int64_t *out, size_t *n, int64_t *wm)
{
	const struct rtd_record *r;
	int rc;
	while ((rc = rtd_source_next(m, &r)) == 1) {
		if (*n)
			assert_true(r->mono >= out[*n - 1]); /* in time order */
		out[(*n)++] = r->mono;
	}
	if (rc == RTD_SOURCE_IDLE && wm)
		*wm = r->mono;
	return rc;
}

/* The watermark rule: nothing goes out that an idle source may precede;
 * a merge idle says the smallest watermark; all comes out in order. */
static void test_watermark_rule(void **st)
{
	(void)st;
	int phase = 0;
	/* A: records at 10, 20, 30 at once, idle until 25, later 40 */
	static const struct step a[] = {
		{0, 10, 0}, {0, 20, 0}, {0, 30, 0}, {0, 0, 25}, {2, 40, 0},
	};
	/* B: idle with nothing known, then "nothing before 15", then 35 and
	 * its end */
	static const struct step b[] = {{1, 0, 15}, {2, 35, 0}};
	struct live la, lb;
	live_init(&la, a, 5, &phase);
	live_init(&lb, b, 2, &phase);
	rtd_source *ss[2] = {rtd_source_new(&live_ops, &la), rtd_source_new(&live_ops, &lb)};
	rtd_source *m = rtd_source_merge(ss, 2, NULL);
	assert_non_null(m);
	assert_true(rtd_source_fd(m) >= 0);
	int64_t out[16], wm = 0;
	size_t n = 0;

	/* B can promise nothing: nothing goes out, the merge is idle */
	assert_int_equal(drain(m, out, &n, &wm), RTD_SOURCE_IDLE);
	assert_int_equal(n, 0);
	assert_true(wm == INT64_MIN);

	/* B: nothing before 15: A's 10 goes, not its 20 */
	phase = 1;
	poke(&lb);
	assert_int_equal(rtd_source_wait(m, 10000), 1);
	assert_int_equal(drain(m, out, &n, &wm), RTD_SOURCE_IDLE);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 10);
	assert_int_equal(wm, 15);
	/* nothing new: the wake-up was taken, the wait times out (no busy loop) */
	assert_int_equal(rtd_source_wait(m, 0), 0);

	/* B gives 35 and ends: everything up to A's watermark, then A's 40 */
	phase = 2;
	poke(&lb);
	poke(&la);
	assert_int_equal(rtd_source_wait(m, 10000), 1);
	assert_int_equal(drain(m, out, &n, NULL), 0);
	int64_t want[] = {10, 20, 30, 35, 40};
	assert_int_equal(n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(out[i], want[i]);
	/* one record per source held, never more */
	assert_true(la.max_outstanding <= 1 && lb.max_outstanding <= 1);

	rtd_source_free(m);
	rtd_source_free(ss[0]);
	rtd_source_free(ss[1]);
	close(la.efd);
	close(lb.efd);
}

/* A record older than its source's own watermark breaks the promise: it
 * is clamped to the watermark and counted, so the merge's order holds. */
static void test_promise_clamped(void **st)
{
	(void)st;
	int phase = 0;
	static const struct step a[] = {{0, 0, 100}, {1, 50, 0}, {1, 150, 0}};
	struct live la;
	live_init(&la, a, 3, &phase);
	rtd_source *s = rtd_source_new(&live_ops, &la);
	const struct rtd_record *r;
	assert_int_equal(rtd_source_next(s, &r), RTD_SOURCE_IDLE);
	assert_int_equal(r->kind, RTD_REC_NONE);
	assert_int_equal(r->mono, 100);
	phase = 1;
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 100);
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 150);
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	assert_int_equal(ss.clamped, 1);
	assert_int_equal(rtd_source_next(s, &r), 0);
	rtd_source_free(s);
	close(la.efd);
}

/* Nested merges: an inner merge's idleness and descriptor pass through. */
static void test_nested(void **st)
{
	(void)st;
	int phase = 0;
	static const struct step a[] = {{0, 10, 0}, {1, 0, 50}};
	static const struct step b[] = {{0, 20, 0}};
	struct live la, lb;
	live_init(&la, a, 2, &phase);
	live_init(&lb, b, 1, &phase);
	rtd_source *sa = rtd_source_new(&live_ops, &la), *sb = rtd_source_new(&live_ops, &lb);
	rtd_source *inner = rtd_source_merge(&sa, 1, NULL);
	rtd_source *outer_in[2] = {inner, sb};
	rtd_source *outer = rtd_source_merge(outer_in, 2, NULL);
	assert_non_null(outer);
	int64_t out[8], wm = 0;
	size_t n = 0;
	/* A's 10 is out before A says anything more: A's next is idle, no
	 * watermark: B's 20 waits */
	assert_int_equal(drain(outer, out, &n, &wm), RTD_SOURCE_IDLE);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 10);
	phase = 1;
	poke(&la);
	assert_int_equal(rtd_source_wait(outer, 10000), 1);
	assert_int_equal(drain(outer, out, &n, &wm), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], 20);
	rtd_source_free(outer);
	rtd_source_free(inner);
	rtd_source_free(sa);
	rtd_source_free(sb);
	close(la.efd);
	close(lb.efd);
}

/* ---- rtd_source_thread over a blocking source ------------------------------------- */

/* A blocking source reading "records" from a pipe: a byte per record
 * (its time is the byte), 'E' an error, EOF the end. */
struct piped {
	int rfd;
	int64_t t;
	struct rtd_field f;
	char str[16];
};

static int piped_next(void *impl, struct rtd_record *rec)
{
	struct piped *p = impl;
	unsigned char c;
	ssize_t n = read(p->rfd, &c, 1);
	if (n == 0)
		return 0;
	if (n < 0)
		return -errno;
	if (c == 'E')
		return rtd_source_error(rec, -RTD_E_FORMAT, 7, "scripted failure");
	p->t += c;
	rec->kind = RTD_REC_INSTANT;
	rec->ts = rec->mono = p->t;
	/* borrowed strings, rewritten at the next call: the queue copies them */
	snprintf(p->str, sizeof(p->str), "v%d", c);
	p->f = (struct rtd_field){.name = p->str, .type = RTD_FIELD_STR, .s = p->str};
	rec->name = p->str;
	rec->fields = &p->f;
	rec->nfields = 1;
	return 1;
}

static const struct rtd_source_ops piped_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "piped",
	.next = piped_next,
	.clock = live_clock,
};

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void run_thread(bool fail)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	/* times an hour after now: the queue's watermark (now - lag) stays
	 * older however late a loaded machine runs the reads (with times of
	 * now, a read more than the 1 s lag later found them late and moved
	 * them to the watermark: 1 run in 4 at load ~30) */
	struct piped p = {.rfd = pfd[0], .t = now_ns() + 3600 * 1000000000ll};
	rtd_source *in = rtd_source_new(&piped_ops, &p);
	RTD_OPTS(rtd_source_thread_opts, o, .lag_ns = 1000000000, .max_records = 2);
	int err = 0;
	rtd_source *s = rtd_source_thread(in, &o, &err);
	assert_non_null(s);
	const struct rtd_record *r;
	/* nothing yet: idle at now - lag, without blocking */
	int64_t before = now_ns();
	assert_int_equal(rtd_source_next(s, &r), RTD_SOURCE_IDLE);
	assert_true(r->mono >= before - 1000000000 && r->mono <= now_ns() - 1000000000 + 1);
	/* more records than the queue holds: the thread waits, none is lost */
	unsigned char bytes[] = {1, 2, 3, 4, 5};
	/* the start, read before the source's thread can advance it (read
	 * after the write, a thread that had taken three records already made
	 * every expected time 1+2+3 = 6 ns early: 1 run in 5 at load 13) */
	int64_t t = p.t;
	assert_int_equal(write(pfd[1], bytes, 5), 5);
	for (int i = 0; i < 5; i++) {
		int rc;
		while ((rc = rtd_source_next(s, &r)) == RTD_SOURCE_IDLE)
			assert_true(rtd_source_wait(s, 10000) >= 0);
		assert_int_equal(rc, 1);
		t += bytes[i];
		assert_int_equal(r->mono, t);
		char want[16];
		snprintf(want, sizeof(want), "v%d", bytes[i]);
		assert_string_equal(r->name, want);
		assert_int_equal(r->nfields, 1);
		assert_string_equal(r->fields[0].s, want);
	}
	if (fail)
		assert_int_equal(write(pfd[1], "E", 1), 1);
	close(pfd[1]);
	int rc;
	while ((rc = rtd_source_next(s, &r)) == RTD_SOURCE_IDLE)
		assert_true(rtd_source_wait(s, 10000) >= 0);
	if (fail) {
		assert_int_equal(rc, -RTD_E_FORMAT);
		assert_int_equal(r->kind, RTD_REC_ERROR);
		assert_int_equal(r->offset, 7);
		assert_string_equal(r->message, "scripted failure");
	} else {
		assert_int_equal(rc, 0);
	}
	rtd_source_free(s);
	close(pfd[0]);
}

static void test_thread(void **st)
{
	(void)st;
	run_thread(false);
	run_thread(true);
}

/* A slice given at its end (RTD_REC_SLICE) is written whole, from
 * @mono - @dur, even after a later begin on another thread. */
static void test_slice_written(void **st)
{
	(void)st;
	assert_string_equal(rtd_record_kind_name(RTD_REC_SLICE), "slice");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	RTD_OPTS(rtd_timeline_opts, to, .format = RTD_TIMELINE_FMT_CHROME_JSON, .out = f);
	rtd_timeline *tl = rtd_timeline_new(&to);
	rtd_timeline_records *c = rtd_timeline_records_new(tl, NULL, NULL);
	assert_non_null(c);
	struct rtd_record a = {.kind = RTD_REC_INSTANT, .mono = 5000000, .pid = 1, .tid = 2,
			       .name = "later"};
	struct rtd_record w = {.kind = RTD_REC_SLICE, .mono = 7000000, .dur = 4000000,
			       .pid = 1, .tid = 3, .name = "sleep", .category = "off-cpu"};
	assert_int_equal(rtd_timeline_records_add(c, &a), 0);
	assert_int_equal(rtd_timeline_records_add(c, &w), 0);
	rtd_timeline_records_free(c);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	const char *x = strstr(buf, "\"name\":\"sleep\"");
	assert_non_null(x);
	const char *end = strchr(x, '}');
	while (x > buf && *x != '{')
		x--;
	char ev[256];
	snprintf(ev, sizeof(ev), "%.*s", (int)(end - x), x);
	assert_non_null(strstr(ev, "\"ph\":\"X\""));
	assert_non_null(strstr(ev, "\"ts\":3000"));
	assert_non_null(strstr(ev, "\"dur\":4000"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watermark_rule),
		cmocka_unit_test(test_promise_clamped),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_slice_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
