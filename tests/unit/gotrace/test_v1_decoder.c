/* SPDX-License-Identifier: MIT */
/* test_v1_decoder.c - the old-format decoder: streaming, errors, caps. */
#include "test_util.h"

#include <errno.h>

#include "gotrace/gotrace_int.h"
#include "rtdiag/gotrace.h"

/* A source for ordered mode: the same bytes, read again at any offset;
 * from read number fail_at on it fails with fail_rc (0: never), or, with
 * shrink set, the input looks shorter than it was fed. */
static struct src {
	bool on;
	const uint8_t *b;
	size_t len;
	int reads, fail_at, fail_rc;
	bool shrink;
} g_src;

static int64_t src_read(void *buf, size_t len, uint64_t off, void *ctx)
{
	struct src *s = ctx;
	s->reads++;
	if (s->fail_at && s->reads >= s->fail_at) {
		if (s->shrink)
			len = len / 2;
		else
			return s->fail_rc;
	}
	if (off >= s->len)
		return 0;
	if (len > s->len - off)
		len = s->len - (size_t)off;
	memcpy(buf, s->b + off, len);
	return (int64_t)len;
}

/* Decode all of buf, fed in chunks of `chunk` bytes; returns the event
 * count and the final status in *status. Also hashes what it saw. */
static size_t decode(const uint8_t *buf, size_t len, size_t chunk,
		     enum rtd_gotrace_mode mode, int *status, uint64_t *hash,
		     uint64_t *last_off)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	if (g_src.on) {
		g_src.b = buf;
		g_src.len = len;
		g_src.reads = 0;
		assert_int_equal(rtd_gotrace_dec_set_source(d, src_read, &g_src), 0);
	}
	struct rtd_gotrace_event ev;
	size_t n = 0, pos = 0;
	uint64_t h = 1469598103934665603ull;
	int rc = 0;
	for (;;) {
		while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
			n++;
			*last_off = ev.off;
			h = (h ^ ev.off ^ (uint64_t)ev.ts * 31 ^ ev.g * 7 ^
			     (uint64_t)ev.p * 13 ^ ev.type) * 1099511628211ull;
		}
		if (rc < 0)
			break;
		if (pos >= len) {
			if (rtd_gotrace_dec_version(d) == 0 && len >= 16) {
				/* header must be known by now */
			}
			rc = rtd_gotrace_dec_finish(d);
			if (rc < 0)
				break;
			while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
				n++;
				*last_off = ev.off;
				h = (h ^ ev.off ^ (uint64_t)ev.ts * 31 ^ ev.g * 7 ^
				     (uint64_t)ev.p * 13 ^ ev.type) * 1099511628211ull;
			}
			break;
		}
		size_t k = len - pos < chunk ? len - pos : chunk;
		assert_int_equal(rtd_gotrace_dec_feed(d, buf + pos, k), 0);
		pos += k;
	}
	*status = rc;
	*hash = h;
	rtd_gotrace_dec_free(d);
	return n;
}

static uint8_t *load(const char *rel, size_t *len)
{
	const char *p = rtd_test_vector(rel);
	if (!p)
		return NULL;
	uint8_t *b = rtd_test_slurp(p, len);
	assert_non_null(b);
	return b;
}

static void test_chunking_does_not_matter(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load("testdata/gotrace/v1/stress_start_stop_1_11_good", &len);
	if (!b)
		skip();
	int st1, st2, st3;
	uint64_t h1, h2, h3, lo;
	size_t n1 = decode(b, len, len, RTD_GOTRACE_RAW, &st1, &h1, &lo);
	size_t n2 = decode(b, len, 1, RTD_GOTRACE_RAW, &st2, &h2, &lo);
	size_t n3 = decode(b, len, 7, RTD_GOTRACE_RAW, &st3, &h3, &lo);
	assert_int_equal(st1, 0);
	assert_int_equal(st2, 0);
	assert_int_equal(st3, 0);
	assert_true(n1 > 500);
	assert_int_equal(n1, n2);
	assert_int_equal(n1, n3);
	assert_true(h1 == h2 && h1 == h3);
	/* ordered mode too: same events whatever the chunking */
	n1 = decode(b, len, len, RTD_GOTRACE_ORDERED, &st1, &h1, &lo);
	n2 = decode(b, len, 3, RTD_GOTRACE_ORDERED, &st2, &h2, &lo);
	assert_int_equal(st1, 0);
	assert_int_equal(n1, n2);
	assert_true(h1 == h2);
	free(b);
}

/* A cut trace gives every event before the cut, then TRUNCATED. */
static void test_truncation_keeps_events(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load("testdata/gotrace/v1/http_1_19_good", &len);
	if (!b)
		skip();
	int st;
	uint64_t h, full_last = 0;
	size_t full = decode(b, len, 4096, RTD_GOTRACE_RAW, &st, &h, &full_last);
	assert_int_equal(st, 0);
	size_t prev = 0;
	for (size_t cut = 16; cut < len; cut += len / 97 + 1) {
		uint64_t last = 0;
		size_t n = decode(b, cut, 1000, RTD_GOTRACE_RAW, &st, &h, &last);
		assert_true(st == 0 || st == -RTD_E_TRUNCATED);
		assert_true(n >= prev);
		assert_true(n <= full);
		prev = n;
	}
	free(b);
}

static void test_errors(void **state)
{
	(void)state;
	int st;
	uint64_t h, lo;
	/* not a trace */
	static const uint8_t junk[32] = "hello, this is not a trace....";
	decode(junk, sizeof(junk), 32, RTD_GOTRACE_RAW, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_GO_VERSION);
	/* unsupported version */
	uint8_t hdr[17] = "go 1.6 trace\0\0\0\0";
	decode(hdr, 16, 16, RTD_GOTRACE_RAW, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_GO_VERSION);
	/* a string longer than Go's limit */
	uint8_t big[32] = "go 1.19 trace\0\0\0";
	size_t n = 16;
	big[n++] = RTD_GO_EV_STRING;
	big[n++] = 1;                     /* id */
	big[n++] = 0x80, big[n++] = 0x89, big[n++] = 0x7a; /* 2000000 */
	struct rtd_gotrace_opts o = {.sz = sizeof(o)};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_int_equal(rtd_gotrace_dec_feed(d, big, n), 0);
	struct rtd_gotrace_event ev;
	assert_int_equal(rtd_gotrace_dec_next(d, &ev), -RTD_E_CAP);
	uint64_t off = 0;
	const char *msg = rtd_gotrace_dec_error(d, &off);
	assert_int_equal(off, 16);
	assert_non_null(strstr(msg, "too large"));
	/* sticky */
	assert_int_equal(rtd_gotrace_dec_next(d, &ev), -RTD_E_CAP);
	rtd_gotrace_dec_free(d);
	/* unknown event type */
	uint8_t unk[20] = "go 1.19 trace\0\0\0";
	unk[16] = 63;
	decode(unk, 17, 17, RTD_GOTRACE_RAW, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_GO_EVENT);
	/* ordered mode: no frequency */
	uint8_t nofreq[32] = "go 1.19 trace\0\0\0";
	n = 16;
	nofreq[n++] = RTD_GO_EV_BATCH | 1 << 6;
	nofreq[n++] = 0; /* p */
	nofreq[n++] = 5; /* ticks */
	nofreq[n++] = RTD_GO_EV_PROC_START | 1 << 6;
	nofreq[n++] = 1; /* dt */
	nofreq[n++] = 3; /* thread */
	/* the runtime writes the Frequency event at the end: a trace
	 * without one was cut short (issue 27 item 4: raw mode says so
	 * after its events; ordered mode cannot convert its times) */
	decode(nofreq, n, n, RTD_GOTRACE_RAW, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_TRUNCATED);
	decode(nofreq, n, n, RTD_GOTRACE_ORDERED, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_TRUNCATED);
	rtd_gotrace_dec_free(NULL);
	/* bad options */
	struct rtd_gotrace_opts bad = {.sz = sizeof(bad), .mode = 7};
	assert_null(rtd_gotrace_dec_new(&bad));
}

/* Ordered mode reading the input again through a source gives what it
 * gives keeping the input, whatever the chunking. */
static void test_source_same_as_kept(void **state)
{
	(void)state;
	const char *vec[] = {"testdata/gotrace/v1/stress_1_19_good",
			     "testdata/gotrace/v1/stress_start_stop_1_11_good",
			     "testdata/gotrace/v1/http_1_9_good",
			     "testdata/gotrace/v1/stress_1_5_good"};
	for (size_t v = 0; v < sizeof(vec) / sizeof(vec[0]); v++) {
		size_t len;
		uint8_t *b = load(vec[v], &len);
		if (!b)
			skip();
		int st1, st2, st3;
		uint64_t h1, h2, h3, lo;
		size_t n1 = decode(b, len, len, RTD_GOTRACE_ORDERED, &st1, &h1, &lo);
		g_src = (struct src){.on = true};
		size_t n2 = decode(b, len, 1, RTD_GOTRACE_ORDERED, &st2, &h2, &lo);
		size_t n3 = decode(b, len, 4093, RTD_GOTRACE_ORDERED, &st3, &h3, &lo);
		if (strstr(vec[v], "1_5"))
			assert_int_equal(g_src.reads, 0); /* Go 1.5 keeps its input */
		else
			assert_true(g_src.reads > 0);
		g_src.on = false;
		assert_int_equal(st1, 0);
		assert_int_equal(st2, 0);
		assert_int_equal(st3, 0);
		assert_true(n1 > 30);
		assert_int_equal(n1, n2);
		assert_int_equal(n1, n3);
		assert_true(h1 == h2 && h1 == h3);
		free(b);
	}
}

/* A source that fails or shrinks: an error naming the offset, no crash. */
static void test_source_errors(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load("testdata/gotrace/v1/stress_1_19_good", &len);
	if (!b)
		skip();
	int st;
	uint64_t h, lo;
	g_src = (struct src){.on = true, .fail_at = 3, .fail_rc = -EIO};
	decode(b, len, 65536, RTD_GOTRACE_ORDERED, &st, &h, &lo);
	assert_int_equal(st, -EIO);
	g_src = (struct src){.on = true, .fail_at = 2, .shrink = true};
	decode(b, len, 65536, RTD_GOTRACE_ORDERED, &st, &h, &lo);
	assert_int_equal(st, -RTD_E_TRUNCATED);
	g_src.on = false;
	/* the message says what and where */
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	g_src = (struct src){.b = b, .len = len, .fail_at = 1, .fail_rc = -EIO};
	assert_int_equal(rtd_gotrace_dec_set_source(d, src_read, &g_src), 0);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, len), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	assert_int_equal(rtd_gotrace_dec_next(d, &ev), -EIO);
	uint64_t off;
	const char *msg = rtd_gotrace_dec_error(d, &off);
	assert_non_null(strstr(msg, "reading the input again at offset"));
	assert_true(off >= 16 && off < len);
	/* only before the first feed, and with a function; raw mode takes
	 * one too (RTD_GOTRACE_RESOLVE reads the tables ahead from it) */
	assert_int_equal(rtd_gotrace_dec_set_source(d, src_read, &g_src), -RTD_E_STATE);
	rtd_gotrace_dec_free(d);
	d = rtd_gotrace_dec_new(NULL);
	assert_int_equal(rtd_gotrace_dec_set_source(d, NULL, &g_src), -EINVAL);
	assert_int_equal(rtd_gotrace_dec_set_source(d, src_read, &g_src), 0);
	rtd_gotrace_dec_free(d);
	g_src = (struct src){0};
	free(b);
}

/* The re-sort window is capped: a GoSysExit that moves far back holds
 * the events after its real time; past the cap, a clear error. Uses the
 * hand-made trace whose GoSysExit goes back 25 ticks over 11 events. */
static void test_window_cap(void **state)
{
	(void)state;
	const char *path = rtd_test_path("RTD_SOURCE_DIR",
					 "tests/integration/gotrace/data/crafted_1_9.trace");
	size_t len = 0;
	uint8_t *b = path ? rtd_test_slurp(path, &len) : NULL;
	if (!b)
		skip();
	for (int lowered = 0; lowered < 2; lowered++) {
		struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
		rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
		assert_int_equal(d->max_window, RTD_GOTRACE_MAX_WINDOW);
		if (lowered)
			d->max_window = 4;
		assert_int_equal(rtd_gotrace_dec_feed(d, b, len), 0);
		assert_int_equal(rtd_gotrace_dec_finish(d), 0);
		struct rtd_gotrace_event ev;
		int rc, n = 0;
		while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			n++;
		if (!lowered) {
			assert_int_equal(rc, 0);
			assert_int_equal(n, 24);
		} else {
			assert_int_equal(rc, -RTD_E_CAP);
			assert_true(n < 24);
			assert_non_null(strstr(rtd_gotrace_dec_error(d, NULL),
					       "GoSysExit that may move 25 ticks back"));
		}
		rtd_gotrace_dec_free(d);
	}
	free(b);
}

/* v1_kind (v1_pstep's table) says what the switches it replaced said. */
static void test_kind_table(void **state)
{
	(void)state;
	for (unsigned t = 0; t < 64; t++) {
		unsigned k = v1_kind[t];
		assert_int_equal(!!(k & V1K_ENDS), go1_ends_running_g(t));
		bool meta = t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY ||
			    t == RTD_GO_EV_TIMER_GOROUTINE || t == RTD_GO_EV_STRING ||
			    t == RTD_GO_EV_STACK;
		assert_int_equal(!!(k & V1K_META), meta);
		unsigned want = 0;
		switch (t) {
		case RTD_GO_EV_GO_START:
		case RTD_GO_EV_GO_START_LOCAL:
		case RTD_GO_EV_GO_START_LABEL:
			want = V1K_START;
			break;
		case RTD_GO_EV_GC_STW_START:
		case RTD_GO_EV_GC_START:
		case RTD_GO_EV_GC_DONE:
		case RTD_GO_EV_GC_STW_DONE:
			want = V1K_G0;
			break;
		case RTD_GO_EV_GO_SYS_EXIT:
		case RTD_GO_EV_GO_WAITING:
		case RTD_GO_EV_GO_IN_SYSCALL:
			want = V1K_GA0;
			break;
		case RTD_GO_EV_CPU_SAMPLE:
			want = V1K_CPU;
			break;
		}
		assert_int_equal(k & V1K_GMASK, want);
	}
}

static size_t put_varint(uint8_t *p, uint64_t v, unsigned minlen)
{
	size_t n = 0;
	while (v >= 0x80 || n + 1 < minlen) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static uint32_t rnd(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* The fast decoder agrees with the checked reader on every event it takes
 * (random types, counts, forms and varint lengths, padded varints too). */
static void test_fast_event_agrees(void **state)
{
	(void)state;
	static const int vers[] = {1005, 1007, 1011, 1019, 1021};
	uint32_t seed = 12345;
#define RND() rnd(&seed)
	for (size_t vi = 0; vi < sizeof(vers) / sizeof(vers[0]); vi++) {
		rtd_gotrace_dec *d = rtd_gotrace_dec_new(NULL);
		assert_non_null(d);
		d->ver = vers[vi];
		d->finished = true;
		uint8_t b[64] = {0};
		rtd_rd r;
		struct v1_raw raw;
		b[0] = RTD_GO_EV_GO_END | 0x40; /* makes the tables */
		rd_init(&r, b, 8);
		v1_read_raw(d, &r, 0, &raw);
		d->err = 0;
		assert_int_equal(d->argn_ver, d->ver);
		unsigned took = 0, onebyte = 0;
		for (int it = 0; it < 200000; it++) {
			memset(b, 0, sizeof(b));
			unsigned typ = 1 + RND() % (RTD_GO_EV_COUNT - 1);
			unsigned nin = RND() % 4, nargs = RND() % 9;
			bool one = RND() % 2;
			uint8_t body[48];
			size_t bl = 0;
			unsigned count = nin + 1 + (d->ver < 1007) < d->inline_max ? nin + 1 + (d->ver < 1007) : nargs;
			for (unsigned i = 0; i < count && bl < 36; i++) {
				uint64_t hi = RND(), lo = RND(), sh = RND() % 64;
				uint64_t v = one ? lo % 128 : (hi << 32 | lo) >> sh;
				bl += put_varint(body + bl, v, one ? 1 : 1 + RND() % 3);
			}
			size_t n = 0;
			b[n++] = (uint8_t)(typ | nin << 6);
			if (nin + d->narg_base == d->inline_max)
				b[n++] = (uint8_t)bl;
			memcpy(b + n, body, bl);
			n += bl;
			unsigned ft, fn;
			uint64_t fa[8];
			memset(fa, 0xee, sizeof(fa));
			size_t got = v1_fast_event(d, b, sizeof(b), &ft, &fn, fa, V1F_ZERO);
			if (!got)
				continue;
			took++;
			onebyte += one;
			rd_init(&r, b, n < 39 ? n : 39); /* under 40: the checked path */
			d->err = 0;
			int rc = v1_read_raw(d, &r, 0, &raw);
			assert_int_equal(rc, 1);
			assert_int_equal(rd_off(&r), got);
			assert_int_equal(raw.typ, ft);
			assert_int_equal(raw.nargs, fn);
			for (unsigned i = 0; i < 8; i++)
				assert_true(fa[i] == (i < fn ? raw.args[i] : 0));
		}
		assert_true(took > 1000 && onebyte > 100);
		rtd_gotrace_dec_free(d);
	}
#undef RND
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(rtd_gotrace_type_name(RTD_GO_EV_GO_CREATE), "GoCreate");
	assert_int_equal(rtd_gotrace_type_lookup("UserLog"), RTD_GO_EV_USER_LOG);
	assert_int_equal(rtd_gotrace_type_lookup("Nope"), -1);
	assert_null(rtd_gotrace_type_name(RTD_GO_EV_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunking_does_not_matter),
		cmocka_unit_test(test_truncation_keeps_events),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_source_same_as_kept),
		cmocka_unit_test(test_source_errors),
		cmocka_unit_test(test_window_cap),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_kind_table),
		cmocka_unit_test(test_fast_event_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
