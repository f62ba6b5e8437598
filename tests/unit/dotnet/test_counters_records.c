/* SPDX-License-Identifier: MIT */
/*
 * test_counters_records - the counters from a nettrace source's records
 * (rtd_counters_record()) equal the counters from the decoder's events
 * (rtd_counters_event()), value for value, over real recordings:
 * tests/unit/dotnet/data/counters-meters.nettrace (tests/targets/dotnet-
 * kinds "meters" under `rtdiag dotnet collect` with EventCounters of
 * Rtdiag-Counters and System.Runtime and a Metrics session "rtdiag-
 * golden" of the meter Rtdiag.Test: means, increments, a counter, an
 * up-down counter, a histogram, an observable gauge, tags) and the fuzz
 * corpus's counters.nettrace; the start of a recording with the sampler
 * and dotnet-common beside (counters-samples-cut.nettrace, cut mid-way).
 * Each in stream order and sorted, with the
 * hold of rtd_counters_prefer_meters() on, with and without the source
 * filtered by rtd_counters_want()/_fields(), and cut mid-way (the series
 * of what came before the damage). The events' series is also the golden
 * file beside the recording (UPDATE_GOLDEN=1 rewrites it).
 *
 * On the old code rtd_counters_record() does not exist (no link); with
 * the records read by the source's top_fields (the Payload not lifted)
 * every EventCounters value is missing; with a record's name compared
 * whole ("Provider/EventCounters"), all are.
 *
 * test_tee: one pass of a source into a profile builder and a counters
 * reader at once (rtd_nettrace_profiler_pull_tee(), the agent's EventPipe
 * source), filtered by the OR of both: the series of the events, and the
 * profiles of the builder pulled alone. Fails on the old code (no
 * rtd_nettrace_profiler_pull_tee()); with the builder's field_want alone
 * every EventCounters value is missing.
 *
 * test_hold_earlier: the hold of rtd_counters_prefer_meters() against an
 * event stamped before the provider's first EventCounters value. In
 * stream order a Metrics event from the meters' own thread can come after
 * the EventCounters value it precedes in time (blocks of two threads'
 * buffers); the old reader subtracted the times unsigned, took the
 * difference for a huge one and gave the held value out at once, so a
 * meter of the provider's name publishing the same counter (the value
 * dotnet-counters shows) came with the EventCounters one beside it. The
 * records are built here (labelled fake: no runtime here writes that
 * order on demand); fails on the old code with 2 records where 1 is due.
 */
#include "test_util.h"

#include <ctype.h>
#include <stdio.h>

#include "rtdiag/counters.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_profiler.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"

#define SPEC "Rtdiag.Test,Rtdiag-Counters,System.Runtime,Rtdiag-Missing"

struct series {
	char *text;
	size_t len, cap;
	size_t n;
};

static void put(struct series *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct series *s, const char *fmt, ...)
{
	va_list ap;
	if (!s->text) {
		s->cap = 4096;
		s->text = malloc(s->cap);
		assert_non_null(s->text);
	}
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(s->text + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < s->cap - s->len) {
			s->len += (size_t)n;
			return;
		}
		s->cap = s->cap * 2 + (size_t)n + 256;
		s->text = realloc(s->text, s->cap);
		assert_non_null(s->text);
	}
}

/* One record as a line: every field, numbers exact */
static int on_counter(void *ctx, const struct rtd_counter_record *r)
{
	struct series *s = ctx;
	put(s, "%llu %u %s|%s|%s|%s|%s|%s|%s v=%.17g t=%.17g min=%.17g max=%.17g "
	    "n=%.17g sum=%.17g i=%.17g hv=%d ht=%d q=",
	    (unsigned long long)r->timestamp, r->kind, r->provider, r->name, r->display_name,
	    r->unit, r->tags, r->meter_tags, r->instrument_tags, r->value, r->total, r->min,
	    r->max, r->count, r->sum, r->interval_sec, r->has_value, r->has_total);
	for (size_t i = 0; i < r->nquantiles; i++)
		put(s, "%.17g=%.17g;", r->quantile[i], r->qvalue[i]);
	put(s, "\n");
	s->n++;
	return 0;
}

static rtd_counters *reader(struct series *s, const char *session)
{
	char err[128];
	rtd_counters *c = rtd_counters_new(SPEC, on_counter, s, err, sizeof(err));
	assert_non_null(c);
	/* the session id the recording's Metrics session had */
	struct rtd_ipc_providers pv = {0};
	assert_int_equal(rtd_counters_request(c, 1, session, &pv), 0);
	rtd_ipc_providers_clear(&pv);
	rtd_counters_prefer_meters(c, 1.5);
	return c;
}

static void tail(struct series *s, rtd_counters *c)
{
	assert_int_equal(rtd_counters_flush(c), 0);
	const char *e = rtd_counters_errors(c);
	put(s, "errors: %s\n", e ? e : "-");
	const char *q;
	for (size_t i = 0; (q = rtd_counters_silent(c, i)); i++)
		put(s, "silent: %s\n", q);
	rtd_counters_free(c);
}

struct evs {
	rtd_nettrace *dec;
	rtd_counters *c;
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct evs *x = ctx;
	return rtd_counters_event(x->c, x->dec, ev);
}

/* The events' series; returns the decoder's end (0 or its error) */
static int by_events(const uint8_t *buf, size_t len, bool sort, const char *session,
		     struct series *out)
{
	struct evs x = {.c = reader(out, session)};
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &x, .on_event = on_event,
				      .sort = sort};
	x.dec = rtd_nettrace_new(&o);
	assert_non_null(x.dec);
	int rc = rtd_nettrace_feed(x.dec, buf, len);
	int end = rtd_nettrace_finish(x.dec);
	tail(out, x.c);
	rtd_nettrace_free(x.dec);
	return rc < 0 ? rc : end;
}

struct recs {
	rtd_source *src;
	rtd_counters *c;
	int rc;
};

static int on_rec(void *ctx, const struct rtd_record *rec)
{
	struct recs *x = ctx;
	struct rtd_clock clock;
	assert_int_equal(rtd_source_clock(x->src, &clock), 0);
	x->rc = rtd_counters_record(x->c, &clock, rec);
	return x->rc;
}

/* The records' series; returns the source's end (0 or its error) */
static int by_records(const uint8_t *buf, size_t len, bool stream_order, bool filtered,
		      const char *session, struct series *out)
{
	struct recs x = {.c = reader(out, session)};
	struct rtd_nettrace_source_opts o = {.sz = sizeof(o), .stream_order = stream_order};
	if (filtered) {
		o.want = rtd_counters_want;
		o.want_ctx = x.c;
		o.fields = rtd_counters_fields;
		o.fields_ctx = x.c;
	}
	int err = 0;
	x.src = rtd_nettrace_source_mem(buf, len, &o, &err);
	assert_non_null(x.src);
	int rc;
	if (stream_order) {
		rc = rtd_source_each(x.src, on_rec, &x);
	} else {
		/* pulled one by one, as a merge would */
		const struct rtd_record *rec;
		while ((rc = rtd_source_next(x.src, &rec)) == 1 && on_rec(&x, rec) == 0)
			;
	}
	assert_int_equal(x.rc, 0);
	tail(out, x.c);
	rtd_source_free(x.src);
	return rc;
}

static void same(const struct series *a, const struct series *b, const char *what)
{
	if (a->len != b->len || memcmp(a->text, b->text, a->len)) {
		fprintf(stderr, "%s: events and records differ\n--- events\n%.*s--- records\n%.*s",
			what, (int)a->len, a->text, (int)b->len, b->text);
		fail();
	}
}

static void golden(const struct series *s, const char *rel)
{
	const char *path = rtd_test_path("RTD_SOURCE_DIR", rel);
	assert_non_null(path);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(s->text, 1, s->len, f), s->len);
		fclose(f);
		return;
	}
	size_t n = 0;
	uint8_t *want = rtd_test_slurp(path, &n);
	assert_non_null(want);
	if (n != s->len || memcmp(want, s->text, n)) {
		fprintf(stderr, "%s differs (UPDATE_GOLDEN=1 to refresh):\n%.*s", rel,
			(int)s->len, s->text);
		fail();
	}
	free(want);
}

static void reset(struct series *s)
{
	free(s->text);
	memset(s, 0, sizeof(*s));
}

/* One recording (bytes [0, len)): events and records, both orders,
 * filtered or not; the events' series of the whole in *whole */
static size_t compare(const uint8_t *buf, size_t len, const char *session, const char *what,
		      bool cut, struct series *whole)
{
	struct series ev = {0}, rec = {0};
	size_t n = 0;
	for (int sort = 0; sort <= 1; sort++) {
		int erc = by_events(buf, len, sort, session, &ev);
		for (int filt = 0; filt <= 1; filt++) {
			int rrc = by_records(buf, len, !sort, filt, session, &rec);
			char w[160];
			snprintf(w, sizeof(w), "%s %s%s", what, sort ? "sorted" : "stream order",
				 filt ? " filtered" : "");
			same(&ev, &rec, w);
			/* a cut recording: both end in an error, after the
			 * same series; a whole one in none */
			if (cut) {
				assert_true(erc < 0);
				assert_true(rrc < 0);
			} else {
				assert_int_equal(erc, 0);
				assert_int_equal(rrc, 0);
			}
			reset(&rec);
		}
		n = ev.n;
		if (whole && !sort) {
			*whole = ev;
			memset(&ev, 0, sizeof(ev));
		}
		reset(&ev);
	}
	return n;
}

/* The hold of rtd_counters_prefer_meters() kept: the records of
 * @provider (an EventSource's counters, held in case a meter of its name
 * comes) within 1.5 s (the hold) of its first are given out together,
 * and only once an event past the hold was read: the record after them
 * is that late (or there is none: the flush at the end gave them). In
 * stream order other threads' events come with later times than the
 * counters' next ones; the old reader let any event's time end the hold
 * and gave them out early (a second here). */
static void hold_kept(const struct series *s, const char *provider)
{
	char key[128];
	snprintf(key, sizeof(key), " %s|", provider);
	const char *l = strstr(s->text, key);
	assert_non_null(l);
	while (l > s->text && l[-1] != '\n')
		l--;
	unsigned long long t = strtoull(l, NULL, 10), end = t + 1500000000ull;
	size_t batch = 0;
	for (; isdigit((unsigned char)*l); l = strchr(l, '\n') + 1, batch++) {
		const char *nl = strchr(l, '\n');
		const char *k = strstr(l, key);
		if (!k || k > nl || strtoull(l, NULL, 10) > end)
			break;
	}
	unsigned long long next = isdigit((unsigned char)*l) ? strtoull(l, NULL, 10) : 0;
	if (isdigit((unsigned char)*l) && next <= end) {
		fprintf(stderr, "%s's %zu held from %llu given out before %llu (the hold ends %llu)\n",
			provider, batch, t, next, end);
		fail();
	}
}

static void recording(const char *rel, const char *golden_rel, const char *session,
		      size_t min_records, bool damaged)
{
	const char *path = rtd_test_path("RTD_SOURCE_DIR", rel);
	assert_non_null(path);
	size_t len = 0;
	uint8_t *buf = rtd_test_slurp(path, &len);
	assert_non_null(buf);
	struct series whole = {0};
	size_t n = compare(buf, len, session, rel, damaged, &whole);
	printf("%s: %zu counter records\n", rel, n);
	assert_true(n >= min_records);
	if (min_records)
		hold_kept(&whole, "Rtdiag-Counters");
	if (golden_rel)
		golden(&whole, golden_rel);
	/* cut mid-way, and at odd places: what came before the damage */
	size_t kept_half = 0;
	for (unsigned k = 1; k < 8; k++) {
		size_t at = len * k / 8 + k * 7;
		if (at >= len)
			continue;
		char w[64];
		snprintf(w, sizeof(w), "cut at %zu of %zu", at, len);
		size_t m = compare(buf, at, session, w, true, NULL);
		assert_true(m <= n);
		if (k == 4)
			kept_half = m;
	}
	/* half a recording keeps the counters of its first half */
	if (min_records)
		assert_true(kept_half > 0);
	reset(&whole);
	free(buf);
}

static void test_meters(void **state)
{
	(void)state;
	recording("tests/unit/dotnet/data/counters-meters.nettrace",
		  "tests/unit/dotnet/data/counters-meters.txt", "rtdiag-golden", 100, false);
}

/* The first 160,000 bytes of a 40 s recording of the same program with
 * the sampler and dotnet-common beside the counters (so the counters'
 * events come among many others, and in stream order other threads'
 * events come with earlier times): a recording cut mid-way */
static void test_samples_cut(void **state)
{
	(void)state;
	recording("tests/unit/dotnet/data/counters-samples-cut.nettrace",
		  "tests/unit/dotnet/data/counters-samples-cut.txt", "ep2", 50, true);
}

static void test_fuzz_corpus(void **state)
{
	(void)state;
	recording("fuzz/corpus/dotnet_events/counters.nettrace", NULL, "", 0, false);
}

/* The filter: EventCounters of the providers asked for, the Metrics
 * EventSource's events the reader reads, all their fields; nothing else */
static void test_want(void **state)
{
	(void)state;
	struct series s = {0};
	rtd_counters *c = reader(&s, "x");
	struct rtd_nettrace_metadata m = {.provider = "System.Runtime", .name = "EventCounters"};
	assert_true(rtd_counters_want(c, &m));
	assert_int_equal(rtd_counters_fields(c, &m), SIZE_MAX);
	m.provider = "Other.Source";
	assert_false(rtd_counters_want(c, &m));
	assert_int_equal(rtd_counters_fields(c, &m), 0);
	m.provider = "System.Diagnostics.Metrics";
	m.name = "HistogramValuePublished";
	assert_true(rtd_counters_want(c, &m));
	m.name = "BeginInstrumentReporting";
	assert_true(rtd_counters_want(c, &m));
	m.name = "Collection/Start";
	assert_false(rtd_counters_want(c, &m));
	m.provider = "Microsoft-DotNETCore-SampleProfiler";
	m.name = "ThreadSample";
	assert_false(rtd_counters_want(c, &m));
	assert_false(rtd_counters_want(NULL, &m));
	assert_false(rtd_counters_want(c, NULL));
	assert_int_equal(rtd_counters_record(NULL, NULL, NULL), -RTD_E_INVAL);
	/* a record of another source: nothing */
	struct rtd_record r = {.kind = RTD_REC_INSTANT, .name = "EventCounters",
			       .category = "System.Runtime"};
	assert_int_equal(rtd_counters_record(c, NULL, &r), 0);
	rtd_counters_free(c);
	assert_int_equal(s.n, 0);
	reset(&s);
}

/* ---- one pass into a builder and a reader (the agent's) ---- */

struct both {
	rtd_nettrace_profiler *p;
	rtd_counters *c;
};

static bool both_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	struct both *b = ctx;
	return rtd_nettrace_profiler_want(b->p, m) || rtd_counters_want(b->c, m);
}

static size_t both_fields(void *ctx, const struct rtd_nettrace_metadata *m)
{
	struct both *b = ctx;
	return rtd_counters_want(b->c, m) ? SIZE_MAX : rtd_nettrace_profiler_fields(b->p, m);
}

static bool both_field_want(void *ctx, const struct rtd_nettrace_metadata *m, size_t i)
{
	struct both *b = ctx;
	return rtd_counters_want(b->c, m) || rtd_nettrace_profiler_field_want(b->p, m, i);
}

static int tee_counters(void *ctx, const struct rtd_clock *clock, const struct rtd_record *rec)
{
	return rtd_counters_record(ctx, clock, rec);
}

static rtd_nettrace_profiler *builder(void)
{
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.kinds = RTD_NETTRACE_PROFILE_CPU |
							 RTD_NETTRACE_PROFILE_ALLOC |
							 RTD_NETTRACE_PROFILE_LOCK |
							 RTD_NETTRACE_PROFILE_EXCEPTION |
							 RTD_NETTRACE_PROFILE_WAIT,
						.running_only = true};
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(&po);
	assert_non_null(p);
	return p;
}

/* Every kind's folded profile of @p, one after another */
static char *folded(rtd_nettrace_profiler *p, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	assert_non_null(f);
	for (unsigned k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++) {
		int err = 0;
		struct rtd_profile *pr = rtd_nettrace_profiler_profile(p, 1u << k, &err);
		assert_non_null(pr);
		fprintf(f, "kind %u: %lld samples\n", k, (long long)rtd_profile_samples(pr));
		assert_int_equal(rtd_profile_write_folded(pr, f), 0);
		rtd_profile_free(pr);
	}
	fclose(f);
	return text;
}

/* The builder alone, as the CLI pulls it; returns the source's end */
static int pulled_alone(const uint8_t *buf, size_t len, char **text, size_t *tlen)
{
	rtd_nettrace_profiler *p = builder();
	RTD_OPTS(rtd_nettrace_source_opts, o, .address_frames = true, .stream_order = true,
		 .want = rtd_nettrace_profiler_want, .want_ctx = p,
		 .fields = rtd_nettrace_profiler_fields, .fields_ctx = p,
		 .field_want = rtd_nettrace_profiler_field_want);
	int err = 0;
	rtd_source *src = rtd_nettrace_source_mem(buf, len, &o, &err);
	assert_non_null(src);
	int rc = rtd_nettrace_profiler_pull(p, src);
	*text = folded(p, tlen);
	rtd_nettrace_profiler_free(p);
	rtd_source_free(src);
	return rc;
}

static void tee_one(const char *rel, const char *session, bool damaged)
{
	const char *path = rtd_test_path("RTD_SOURCE_DIR", rel);
	assert_non_null(path);
	size_t len = 0;
	uint8_t *buf = rtd_test_slurp(path, &len);
	assert_non_null(buf);
	struct series ev = {0}, rec = {0};
	int erc = by_events(buf, len, false, session, &ev);

	struct both b = {.p = builder(), .c = reader(&rec, session)};
	RTD_OPTS(rtd_nettrace_source_opts, o, .address_frames = true, .stream_order = true,
		 .want = both_want, .want_ctx = &b, .fields = both_fields, .fields_ctx = &b,
		 .field_want = both_field_want);
	int err = 0;
	rtd_source *src = rtd_nettrace_source_mem(buf, len, &o, &err);
	assert_non_null(src);
	int rc = rtd_nettrace_profiler_pull_tee(b.p, src, tee_counters, b.c);
	tail(&rec, b.c);
	same(&ev, &rec, rel);
	size_t tl = 0, al = 0;
	char *tt = folded(b.p, &tl), *at = NULL;
	int arc = pulled_alone(buf, len, &at, &al);
	if (tl != al || memcmp(tt, at, tl)) {
		fprintf(stderr, "%s: profiles differ\n--- alone\n%s--- tee\n%s", rel, at, tt);
		fail();
	}
	assert_int_equal(rc, arc);
	if (damaged) {
		assert_true(erc < 0);
		assert_true(rc < 0);
	} else {
		assert_int_equal(erc, 0);
		assert_int_equal(rc, 0);
	}
	printf("%s: tee: %zu counter records, %zu bytes of profiles\n", rel, rec.n, tl);
	free(tt);
	free(at);
	rtd_nettrace_profiler_free(b.p);
	rtd_source_free(src);
	reset(&ev);
	reset(&rec);
	free(buf);
}

static void test_tee(void **state)
{
	(void)state;
	tee_one("tests/unit/dotnet/data/counters-meters.nettrace", "rtdiag-golden", false);
	tee_one("tests/unit/dotnet/data/counters-samples-cut.nettrace", "ep2", true);
	/* bad arguments: nothing read */
	assert_int_equal(rtd_nettrace_profiler_pull_tee(NULL, NULL, NULL, NULL), -RTD_E_INVAL);
}

static struct rtd_field str_field(const char *name, const char *v)
{
	return (struct rtd_field){.name = name, .type = RTD_FIELD_STR, .s = v};
}

static void test_hold_earlier(void **state)
{
	(void)state;
	struct series s = {0};
	rtd_counters *c = reader(&s, "sess-hold");
	const struct rtd_clock clock = {.freq = 1000000000u};
	/* an EventSource's EventCounters value at 10 s (held: a meter of
	 * the name may come within 1.5 s) */
	const struct rtd_field ec[] = {
		str_field("Name", "cpu-usage"),
		str_field("DisplayName", "CPU Usage"),
		str_field("CounterType", "Mean"),
		{.name = "Mean", .type = RTD_FIELD_F64, .f = 5.0},
		{.name = "IntervalSec", .type = RTD_FIELD_F64, .f = 1.0},
	};
	struct rtd_record r1 = {
		.kind = RTD_REC_INSTANT, .ts = 10000000000ll, .category = "Rtdiag-Counters",
		.name = "Rtdiag-Counters/EventCounters", .nfields = 5, .fields = ec,
	};
	assert_int_equal(rtd_counters_record(c, &clock, &r1), 0);
	assert_int_equal(s.n, 0);
	/* then, in stream order, the meter's value 1 ms earlier */
	const struct rtd_field mv[] = {
		str_field("sessionId", "sess-hold"),
		str_field("meterName", "Rtdiag-Counters"),
		str_field("meterVersion", ""),
		str_field("instrumentName", "cpu-usage"),
		str_field("unit", ""),
		str_field("tags", ""),
		str_field("lastValue", "5"),
	};
	struct rtd_record r2 = {
		.kind = RTD_REC_INSTANT, .ts = 9999000000ll,
		.category = "System.Diagnostics.Metrics",
		.name = "System.Diagnostics.Metrics/GaugeValuePublished", .nfields = 7,
		.fields = mv,
	};
	assert_int_equal(rtd_counters_record(c, &clock, &r2), 0);
	tail(&s, c);
	/* the meter's value only: the EventCounters one was dropped */
	printf("%s", s.text);
	assert_int_equal(s.n, 1);
	char want[64];
	snprintf(want, sizeof(want), "9999000000 %u Rtdiag-Counters|cpu-usage|",
		 (unsigned)RTD_COUNTER_GAUGE);
	assert_true(!strncmp(s.text, want, strlen(want)));
	reset(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meters),
		cmocka_unit_test(test_samples_cut),
		cmocka_unit_test(test_fuzz_corpus),
		cmocka_unit_test(test_want),
		cmocka_unit_test(test_tee),
		cmocka_unit_test(test_hold_earlier),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
