/* SPDX-License-Identifier: MIT */
/*
 * test_text - rtd_gotrace_text_*, the event lines of 'gotrace cat':
 * - numbers and quoted strings, against a reference made here with
 *   printf and a byte-at-a-time quoter (events made here, a fake: the
 *   values a line can hold, 0 to UINT64_MAX and negative times, times
 *   going back and forth across multiples of 1e8, strings of every length
 *   around the 8-byte steps with each byte class at each place);
 * - each stack's first frame in the line (kept formatted between lines)
 *   equals what rtd_gotrace_dec_stack() says at that event (the old
 *   format's event stack; the new format's stack arguments), on every
 *   shared recording in ordered and raw mode (Go 1.22+ vectors reuse
 *   stack ids from one generation to the next);
 * - rtd_gotrace_text_decoded() (events taken and written in batches, the
 *   plain ordered lines straight from the ordering's copies) writes the
 *   text rtd_gotrace_dec_next() and rtd_gotrace_text_event() write, in
 *   every format, on every shared recording (plain text also cut short);
 * - a failed write is returned, then kept; options are checked.
 */
#include "test_gotrace.h"

#include <inttypes.h>
#include <stdio.h>

#include "rtdiag/gotrace_events.h"
#include "rtdiag/gotrace_text.h"

/* A reference JSON string literal (the documented rules, one byte at a
 * time): '"' '\\' '\n' '\t' escaped, printable ASCII as is, well-formed
 * UTF-8 sequences as they are, any other byte \u00XX. */
static void ref_quote(struct rtd_test_wbuf *w, const unsigned char *p, size_t n)
{
	char piece[8];
	rtd_test_wput("\"", 1, w);
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t k = 1, len = 0;
		if (c == '"' || c == '\\' || c == '\n' || c == '\t') {
			piece[0] = '\\';
			piece[1] = c == '\n' ? 'n' : c == '\t' ? 't' : (char)c;
			len = 2;
		} else if (c >= 0x20 && c < 0x7f) {
			piece[0] = (char)c;
			len = 1;
		} else {
			size_t u = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3
				 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			bool ok = u && i + u <= n;
			for (size_t j = 1; ok && j < u; j++)
				ok = (p[i + j] & 0xc0) == 0x80;
			if (ok) {
				memcpy(piece, p + i, u);
				len = k = u;
			} else {
				len = (size_t)snprintf(piece, sizeof(piece), "\\u00%02x", c);
			}
		}
		rtd_test_wput(piece, len, w);
		i += k;
	}
	rtd_test_wput("\"", 1, w);
}

static void ref_printf(struct rtd_test_wbuf *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ref_printf(struct rtd_test_wbuf *w, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(b));
	rtd_test_wput(b, (size_t)n, w);
}

static const char *const argn2[] = {"g", "task", "stack"};
static const char *const sargn2[] = {"key", "message"};
static const char *const argn1[] = {"id", "keyid"};

/* A Go 1.22+ ordered line of a made-up event, and its reference. */
static void line2(rtd_gotrace_text *t, struct rtd_test_wbuf *ref, int64_t ts, int64_t m,
		  int64_t p, uint64_t g, uint64_t off, const uint64_t a[3], const char *s0,
		  size_t n0, const char *s1, size_t n1)
{
	struct rtd_gotrace_event ev = {.off = off, .type = RTD_GO2_EV_USER_LOG,
				       .name = "UserLog", .ts = ts, .p = p, .g = g,
				       .nargs = 3, .argnames = argn2, .nsargs = 2,
				       .sargs = {s0, s1}, .sarg_lens = {n0, n1},
				       .sargnames = sargn2, .gen = 1, .m = m};
	memcpy(ev.args, a, 3 * sizeof(a[0]));
	assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
	/* g is a goroutine argument: signed, as m and p */
	ref_printf(ref, "%" PRId64 " UserLog M=%" PRId64 " P=%" PRId64 " G=%" PRIu64
		   " off=%" PRIu64 " g=%" PRId64 " task=%" PRIu64 " stack=%" PRIu64 " key=",
		   ts, m, p, g, off, (int64_t)a[0], a[1], a[2]);
	ref_quote(ref, (const unsigned char *)s0, n0);
	rtd_test_wput(" message=", 9, ref);
	ref_quote(ref, (const unsigned char *)s1, n1);
	rtd_test_wput("\n", 1, ref);
}

static void check_same(const struct rtd_test_wbuf *got, const struct rtd_test_wbuf *ref)
{
	size_t i = 0;
	while (i < got->n && i < ref->n && got->b[i] == ref->b[i])
		i++;
	if (i < got->n || i < ref->n) {
		size_t from = i > 60 ? i - 60 : 0;
		fprintf(stderr, "differs at byte %zu of %zu/%zu:\ngot: %.120s\nref: %.120s\n", i,
			got->n, ref->n, (const char *)got->b + from, (const char *)ref->b + from);
		fail();
	}
}

static void test_numbers_strings(void **state)
{
	(void)state;
	static const uint64_t vals[] = {
		0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 9999, 10000, 10001,
		99999, 100000, 1234567, 9999999, 10000000, 99999999, 100000000,
		100000001, 999999999, 1000000000, 123456789012ull, 9999999999999999ull,
		10000000000000000ull, 10000000000000001ull, 99999999999999999ull,
		1844674407370955161ull, 9223372036854775807ull, 9223372036854775808ull,
		18446744073709551614ull, 18446744073709551615ull};
	size_t nv = sizeof(vals) / sizeof(vals[0]);
	struct rtd_test_wbuf got = {0}, ref = {0};
	struct rtd_gotrace_text_opts o = {.sz = sizeof(o), .ordered = true,
					  .write = rtd_test_wput, .ctx = &got};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&o);
	assert_non_null(t);
	/* every value in every numeric field, times included */
	for (size_t i = 0; i < nv; i++) {
		uint64_t v = vals[i], a[3] = {v, v, v};
		line2(t, &ref, (int64_t)v, (int64_t)v, (int64_t)v, v, v, a, "", 0, "x", 1);
	}
	/* times back and forth across multiples of 1e8 (the kept digits
	 * above the last 8), negative ones, and the extremes */
	static const int64_t ts[] = {
		49334191058624, 49334191058625, 49334199999999, 49334200000000,
		49334199999999, 49334100000000, 49334099999999, 100000000, 99999999,
		100000000, 199999999, 200000000, -1, -99999999, -100000000,
		-9223372036854775807 - 1, 9223372036854775807, 49334191058624};
	uint64_t a[3] = {1, 2, 3};
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		line2(t, &ref, ts[i], -1, -1, 0, 36, a, "k", 1, "", 0);
	/* strings of 0..40 bytes; each byte class at each place */
	static const unsigned char cls[] = {'a', '"', '\\', '\n', '\t', 0, 0x1f, 0x7f,
					    0x80, 0xc3, 0xff, '~', ' '};
	unsigned char s[41];
	for (size_t n = 0; n <= 40; n++) {
		for (size_t at = 0; at <= n; at++) {
			for (size_t c = 0; c < sizeof(cls); c++) {
				for (size_t k = 0; k < n; k++)
					s[k] = (unsigned char)('A' + (k * 7 + n) % 26);
				if (at < n)
					s[at] = cls[c];
				line2(t, &ref, 5, 0, 0, 0, n, a, (const char *)s, n,
				      "h\xc3\xa9llo, w\xe2\x82\xacrld: \xf0\x9f\x98\x80!", 22);
				if (at == n)
					break; /* no byte changed: one line is enough */
			}
		}
	}
	assert_int_equal(rtd_gotrace_text_flush(t), 0);
	check_same(&got, &ref);
	printf("ok: %zu bytes of lines equal the printf reference\n", got.n);
	rtd_gotrace_text_free(t);
	free(got.b);
	free(ref.b);
}

/*
 * The names of string arguments: a type's " NAME=" is kept from its first
 * line, so lines of one type whose names change (another table, a name
 * too long to keep, one string or two) must each show their own.
 */
static void test_string_names(void **state)
{
	(void)state;
	static const char *const sa[] = {"key", "message"};
	static const char *const sb[] = {"category", "a_string_name_longer_than_32_bytes_x"};
	static const char *const sc[] = {"a_string_name_longer_than_32_bytes_y", "m"};
	const char *const *tabs[] = {sa, sb, sc, sa, sc, sb, sa};
	struct rtd_test_wbuf got = {0}, ref = {0};
	struct rtd_gotrace_text_opts o = {.sz = sizeof(o), .ordered = true,
					  .write = rtd_test_wput, .ctx = &got};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&o);
	assert_non_null(t);
	for (unsigned round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
			unsigned ns = 1 + (unsigned)(i + round) % 2;
			struct rtd_gotrace_event ev = {.off = i, .type = RTD_GO2_EV_USER_LOG,
						       .name = "UserLog", .ts = 7, .p = 1, .g = 2,
						       .nargs = 3, .argnames = argn2, .nsargs = ns,
						       .sargs = {"v0", "v1"}, .sarg_lens = {2, 2},
						       .sargnames = tabs[i], .gen = 1, .m = 3};
			assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
			ref_printf(&ref, "7 UserLog M=3 P=1 G=2 off=%zu g=0 task=0 stack=0", i);
			for (unsigned k = 0; k < ns; k++)
				ref_printf(&ref, " %s=\"v%u\"", tabs[i][k], k);
			rtd_test_wput("\n", 1, &ref);
		}
	}
	assert_int_equal(rtd_gotrace_text_flush(t), 0);
	check_same(&got, &ref);
	rtd_gotrace_text_free(t);
	free(got.b);
	free(ref.b);
}

/* Old format: "TS Name p= g= off= args", unsigned arguments, the stack
 * id; go-debug without it. */
static void test_old_format(void **state)
{
	(void)state;
	for (int fmt = RTD_GOTRACE_TEXT_PLAIN; fmt <= RTD_GOTRACE_TEXT_GODEBUG; fmt += 2) {
		struct rtd_test_wbuf got = {0}, ref = {0};
		struct rtd_gotrace_text_opts o = {.sz = sizeof(o), .format = fmt,
						  .write = rtd_test_wput, .ctx = &got};
		rtd_gotrace_text *t = rtd_gotrace_text_new(&o);
		assert_non_null(t);
		for (uint64_t v = 1; v < UINT64_MAX / 9; v = v * 9 + 1) {
			struct rtd_gotrace_event ev = {
				.off = v, .type = RTD_GO_EV_USER_LOG, .name = "UserLog",
				.ts = (int64_t)v, .p = -(int64_t)(v % 7), .g = v, .stack = v,
				.nargs = 2, .args = {v, v + 1}, .argnames = argn1};
			assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
			ref_printf(&ref, "%" PRIu64 " UserLog p=%" PRId64 " g=%" PRIu64
				   " off=%" PRIu64 " id=%" PRIu64 " keyid=%" PRIu64,
				   v, -(int64_t)(v % 7), v, v, v, v + 1);
			if (fmt == RTD_GOTRACE_TEXT_PLAIN)
				ref_printf(&ref, " stack=%" PRIu64, v);
			rtd_test_wput("\n", 1, &ref);
		}
		assert_int_equal(rtd_gotrace_text_flush(t), 0);
		check_same(&got, &ref);
		rtd_gotrace_text_free(t);
		free(got.b);
		free(ref.b);
	}
}

/* ---- first frames on real recordings ---- */

static size_t g_traces, g_checked, g_events;

/* The line of @ev (in @line) names each of its stacks with the first
 * frame rtd_gotrace_dec_stack() gives now, or by its id alone. */
static void check_frames(rtd_gotrace_dec *d, const struct rtd_gotrace_event *ev,
			 const char *line, const char *name)
{
	uint64_t ids[RTD_GOTRACE_MAX_ARGS + 1];
	size_t n = 0;
	bool stack_arg = false; /* old format: an argument named stack is
				   printed as it is, instead of the event's */
	for (unsigned i = 0; !ev->gen && i < ev->nargs; i++)
		stack_arg |= strcmp(ev->argnames[i], "stack") == 0;
	if (!ev->gen && ev->stack && !stack_arg)
		ids[n++] = ev->stack;
	for (unsigned i = 0; ev->gen && i < ev->nargs; i++) {
		size_t k = strlen(ev->argnames[i]);
		if (ev->args[i] && k >= 5 && strcmp(ev->argnames[i] + k - 5, "stack") == 0)
			ids[n++] = ev->args[i];
	}
	for (size_t i = 0; i < n; i++) {
		const struct rtd_gotrace_frame *fr;
		char want[1024];
		if (rtd_gotrace_dec_stack(d, ids[i], &fr))
			snprintf(want, sizeof(want), "stack=%" PRIu64 ":%s@%s:%" PRIu64 "", ids[i],
				 fr[0].fn, fr[0].file, fr[0].line);
		else
			snprintf(want, sizeof(want), "stack=%" PRIu64 "", ids[i]);
		const char *at = strstr(line, want);
		/* the id alone is followed by a space or the end */
		bool ok = at && (fr || at[strlen(want)] == ' ' || at[strlen(want)] == '\n');
		if (!ok) {
			fprintf(stderr, "%s: offset %" PRIu64 ": want '%s' in '%s'\n", name, ev->off,
				want, line);
			fail();
		}
		g_checked++;
	}
}

static void frames_one(const uint8_t *b, size_t len, const char *name, enum rtd_gotrace_mode mode)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	struct rtd_test_wbuf got = {0};
	struct rtd_gotrace_text_opts to = {.sz = sizeof(to),
					   .ordered = mode == RTD_GOTRACE_ORDERED, .dec = d,
					   .write = rtd_test_wput, .ctx = &got};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&to);
	assert_non_null(t);
	struct rtd_test_gosrc src = {.d = d, .b = b, .n = len, .step = 4096};
	struct rtd_gotrace_event ev;
	while (rtd_test_gosrc_next(&src, &ev) > 0) {
		assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
		assert_int_equal(rtd_gotrace_text_flush(t), 0);
		rtd_test_wput("", 1, &got); /* a C string */
		check_frames(d, &ev, (const char *)got.b, name);
		got.n = 0;
		g_events++;
	}
	g_traces++;
	rtd_gotrace_text_free(t);
	rtd_gotrace_dec_free(d);
	free(got.b);
}

static void frames_both(const uint8_t *b, size_t len, const char *name)
{
	frames_one(b, len, name, RTD_GOTRACE_ORDERED);
	frames_one(b, len, name, RTD_GOTRACE_RAW);
}

static void test_frames_real(void **state)
{
	(void)state;
	const char *v1 = rtd_test_vector("testdata/gotrace/v1");
	const char *v2 = rtd_test_vector("testdata/gotrace/v2");
	if (!v1 || !v2)
		skip();
	g_traces = g_checked = g_events = 0;
	rtd_test_each_file(v1, frames_both);
	rtd_test_each_go_vector(v2, true, frames_both);
	printf("ok: %zu decodes, %zu events, %zu stacks named as the decoder says at each\n",
	       g_traces, g_events, g_checked);
	assert_true(g_checked > 1000);
}

/* ---- rtd_gotrace_text_decoded(): the same text as event by event ---- */

static size_t g_dec_runs, g_dec_events;

/*
 * The text of an ordered decode of @b (fed in 4 KiB pieces, then
 * finished), written event by event (@batch 0: rtd_gotrace_dec_next() and
 * rtd_gotrace_text_event(), go-debug without the meta events, as cat) or
 * by rtd_gotrace_text_decoded() @batch events at a time; then the count
 * written, the last return and the decoder's error message.
 */
static void text_of(const uint8_t *b, size_t len, int format, bool stacks, uint64_t batch,
		    struct rtd_test_wbuf *out)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	struct rtd_gotrace_text_opts to = {.sz = sizeof(to), .format = format, .ordered = true,
					   .stacks = stacks, .dec = d, .write = rtd_test_wput,
					   .ctx = out};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&to);
	assert_non_null(t);
	struct rtd_test_gosrc src = {.d = d, .b = b, .n = len, .step = 4096};
	uint64_t n = 0;
	int rc;
	if (batch == 0) {
		struct rtd_gotrace_event ev;
		while ((rc = rtd_test_gosrc_next(&src, &ev)) > 0) {
			if (format == RTD_GOTRACE_TEXT_GODEBUG && rtd_gotrace_event_is_meta(&ev))
				continue;
			assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
			n++;
		}
	} else {
		for (;;) {
			uint64_t k = 0;
			rc = rtd_gotrace_text_decoded(t, d, batch, &k);
			assert_true(k <= batch);
			assert_true(rc != 1 || k == batch);
			n += k;
			if (rc < 0 || (rc == 0 && src.fin))
				break;
			if (rc == 1)
				continue;
			size_t step = src.n - src.at < src.step ? src.n - src.at : src.step;
			if (step == 0) {
				src.fin = true;
				rc = rtd_gotrace_dec_finish(d);
			} else {
				rc = rtd_gotrace_dec_feed(d, src.b + src.at, step);
				src.at += step;
			}
			if (rc < 0)
				break;
		}
	}
	assert_int_equal(rtd_gotrace_text_flush(t), 0);
	char tail[512];
	int k = snprintf(tail, sizeof(tail), "-- %" PRIu64 " events, rc %d: %s\n", n, rc,
			 rtd_gotrace_dec_error(d, NULL));
	rtd_test_wput(tail, (size_t)k, out);
	rtd_gotrace_text_free(t);
	rtd_gotrace_dec_free(d);
	g_dec_events += n;
}

/* Batches of one, a few and all, for plain lines (their own path); of
 * a few for the other formats. */
static void decoded_same(const uint8_t *b, size_t len, const char *name, int format,
			 bool stacks)
{
	static const uint64_t batches[] = {7, 1, UINT64_MAX};
	bool plain = format == RTD_GOTRACE_TEXT_PLAIN && !stacks;
	struct rtd_test_wbuf ref = {0};
	text_of(b, len, format, stacks, 0, &ref);
	for (size_t i = 0; i < (plain ? sizeof(batches) / sizeof(batches[0]) : 1); i++) {
		struct rtd_test_wbuf got = {0};
		text_of(b, len, format, stacks, batches[i], &got);
		if (got.n != ref.n || memcmp(got.b, ref.b, ref.n) != 0) {
			size_t at = 0;
			while (at < got.n && at < ref.n && got.b[at] == ref.b[at])
				at++;
			fprintf(stderr, "%s: format %d%s, batches of %" PRIu64 ": differs at byte %zu of %zu\n",
				name, format, stacks ? " --stacks" : "", batches[i], at, ref.n);
			fail();
		}
		free(got.b);
		g_dec_runs++;
	}
	free(ref.b);
}

/* Each format; plain lines also cut at two thirds (an error after
 * events). */
static void decoded_one(const uint8_t *b, size_t len, const char *name)
{
	decoded_same(b, len, name, RTD_GOTRACE_TEXT_PLAIN, false);
	decoded_same(b, len * 2 / 3, name, RTD_GOTRACE_TEXT_PLAIN, false);
	decoded_same(b, len, name, RTD_GOTRACE_TEXT_PLAIN, true);
	decoded_same(b, len, name, RTD_GOTRACE_TEXT_JSON, false);
	decoded_same(b, len, name, RTD_GOTRACE_TEXT_GODEBUG, false);
}

static void test_decoded_real(void **state)
{
	(void)state;
	const char *v1 = rtd_test_vector("testdata/gotrace/v1");
	const char *v2 = rtd_test_vector("testdata/gotrace/v2");
	if (!v1 || !v2)
		skip();
	g_dec_runs = g_dec_events = 0;
	rtd_test_each_file(v1, decoded_one);
	rtd_test_each_go_vector(v2, false, decoded_one);
	printf("ok: %zu decodes in batches, %zu events, each text equal to event by event\n",
	       g_dec_runs, g_dec_events);
	assert_true(g_dec_runs > 100);
}

/* ---- errors and options ---- */

static int fail_write(const void *p, size_t n, void *ctx)
{
	(void)p;
	(void)n;
	++*(int *)ctx;
	return -EPIPE;
}

static void test_errors_opts(void **state)
{
	(void)state;
	int calls = 0;
	struct rtd_gotrace_text_opts o = {.sz = sizeof(o), .write = fail_write, .ctx = &calls};
	rtd_gotrace_text *t = rtd_gotrace_text_new(&o);
	assert_non_null(t);
	struct rtd_gotrace_event ev = {.type = RTD_GO_EV_USER_LOG, .name = "UserLog",
				       .nargs = 2, .argnames = argn1};
	/* lines are buffered: the write comes at the flush, its error stays */
	for (int i = 0; i < 10; i++)
		assert_int_equal(rtd_gotrace_text_event(t, &ev), 0);
	assert_int_equal(calls, 0);
	assert_int_equal(rtd_gotrace_text_flush(t), -EPIPE);
	assert_int_equal(rtd_gotrace_text_event(t, &ev), -EPIPE);
	assert_int_equal(rtd_gotrace_text_flush(t), -EPIPE);
	assert_int_equal(calls, 1);
	rtd_gotrace_text_free(t);
	rtd_gotrace_text_free(NULL);

	struct {
		struct rtd_gotrace_text_opts o;
		uint64_t more;
	} big = {.o = {.sz = sizeof(big), .write = fail_write}, .more = 1};
	assert_null(rtd_gotrace_text_new(&big.o)); /* unknown bytes set */
	big.more = 0;
	t = rtd_gotrace_text_new(&big.o); /* a newer caller's zeros: fine */
	assert_non_null(t);
	rtd_gotrace_text_free(t);
	struct rtd_gotrace_text_opts bad = {.sz = sizeof(bad)};
	assert_null(rtd_gotrace_text_new(&bad)); /* no write */
	bad = (struct rtd_gotrace_text_opts){.sz = sizeof(bad), .format = 3, .write = fail_write};
	assert_null(rtd_gotrace_text_new(&bad));
	assert_null(rtd_gotrace_text_new(NULL));
	struct rtd_gotrace_event sync = {.type = RTD_GO2_EV_SYNC, .gen = 1};
	assert_true(rtd_gotrace_event_is_meta(&sync));
	assert_false(rtd_gotrace_event_is_meta(&ev));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_strings),
		cmocka_unit_test(test_string_names),
		cmocka_unit_test(test_old_format),
		cmocka_unit_test(test_frames_real),
		cmocka_unit_test(test_decoded_real),
		cmocka_unit_test(test_errors_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
