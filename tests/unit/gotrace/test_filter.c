/* SPDX-License-Identifier: MIT */
/*
 * test_filter.c - raw mode resolving names ahead (RTD_GOTRACE_RESOLVE)
 * and the event filter (rtd_gotrace_filter), on small Go 1.22 traces made
 * from Go's text form.
 */
#include "test_util.h"

#include <errno.h>

#include "rtdiag/gotrace.h"
#include "unit/gotrace/memio.h"


/*
 * Two generations, as the runtime writes them: each generation's events,
 * then its stacks, then the strings those name. Generation 1: goroutine 1
 * blocks with stack 1 (main.a in a.go), goroutine 2 logs; generation 2
 * reuses id 1 for another stack (main.b in b.go) and string ids for other
 * strings.
 */
static const char two_gens[] =
	"Trace Go1.22\n"
	"EventBatch gen=1 m=1 time=100 size=42\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"GoStatus dt=1 g=1 m=1 gstatus=2\n"
	"GoStatus dt=1 g=2 m=18446744073709551615 gstatus=4\n"
	"GoBlock dt=5 reason_string=3 stack=1\n"
	"GoUnblock dt=1 g=2 g_seq=1 stack=0\n"
	"GoStart dt=1 g=2 g_seq=2\n"
	"UserLog dt=2 task=0 key_string=4 value_string=3 stack=0\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=9\n"
	"Stacks\n"
	"Stack id=1 nframes=1\n"
	"\tpc=4096 func=1 file=2 line=7\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=29\n"
	"Strings\n"
	"String id=1\n"
	"\tdata=\"main.a\"\n"
	"String id=2\n"
	"\tdata=\"a.go\"\n"
	"String id=3\n"
	"\tdata=\"sleep\"\n"
	"String id=4\n"
	"\tdata=\"k\"\n"
	"EventBatch gen=2 m=1 time=200 size=13\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"GoStatus dt=1 g=2 m=1 gstatus=2\n"
	"GoStop dt=3 reason_string=1 stack=1\n"
	"EventBatch gen=2 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n"
	"EventBatch gen=2 m=18446744073709551615 time=0 size=9\n"
	"Stacks\n"
	"Stack id=1 nframes=1\n"
	"\tpc=8192 func=2 file=3 line=9\n"
	"EventBatch gen=2 m=18446744073709551615 time=0 size=25\n"
	"Strings\n"
	"String id=1\n"
	"\tdata=\"yield\"\n"
	"String id=2\n"
	"\tdata=\"main.b\"\n"
	"String id=3\n"
	"\tdata=\"b.go\"\n";

static void make(const char *text, struct mem *m)
{
	char err[256];
	m->n = 0;
	int rc = rtd_gotrace_text2bin(text, strlen(text), to_mem, m, err, sizeof(err));
	if (rc)
		fail_msg("text2bin: %s", err);
}

static rtd_gotrace_dec *open_dec(enum rtd_gotrace_mode mode, unsigned flags, struct mem *src)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode, .flags = flags};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	if (src)
		assert_int_equal(rtd_gotrace_dec_set_source(d, mem_read, src), 0);
	return d;
}

/* Raw mode: the GoBlock's reason and its stack's frames resolve,
 * generation by generation, with and without a source, fed whole or a
 * byte at a time; without the flag they do not. */
static void check_resolved(struct mem *m, bool source, size_t chunk)
{
	rtd_gotrace_dec *d = open_dec(RTD_GOTRACE_RAW, RTD_GOTRACE_RESOLVE, source ? m : NULL);
	struct rtd_gotrace_event ev;
	int rc, seen = 0;
	for (size_t off = 0;; off += chunk) {
		if (off < m->n)
			assert_int_equal(rtd_gotrace_dec_feed(d, m->b + off,
							      off + chunk <= m->n ? chunk : m->n - off), 0);
		else
			assert_int_equal(rtd_gotrace_dec_finish(d), 0);
		while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
			const struct rtd_gotrace_frame *fr;
			if (ev.type == 20 || ev.type == 19) { /* GoBlock, GoStop */
				bool g2 = ev.gen == 2;
				assert_int_equal(ev.nsargs, 1);
				assert_string_equal(ev.sargnames[0], "reason");
				assert_string_equal(ev.sargs[0], g2 ? "yield" : "sleep");
				assert_int_equal(rtd_gotrace_dec_stack(d, ev.stack, &fr), 1);
				assert_string_equal(fr[0].fn, g2 ? "main.b" : "main.a");
				assert_string_equal(fr[0].file, g2 ? "b.go" : "a.go");
				seen++;
			}
			if (ev.type == RTD_GO2_EV_STACK) { /* before its strings */
				assert_int_equal(ev.nframes, 1);
				assert_string_equal(ev.frames[0].fn, ev.gen == 2 ? "main.b" : "main.a");
			}
		}
		assert_int_equal(rc, 0);
		if (off >= m->n)
			break;
	}
	assert_int_equal(seen, 2);
	rtd_gotrace_dec_free(d);
}

static void test_resolve(void **state)
{
	(void)state;
	struct mem m;
	make(two_gens, &m);
	check_resolved(&m, false, m.n);
	check_resolved(&m, false, 1);
	check_resolved(&m, true, 7);
	/* without the flag the names are not known yet */
	rtd_gotrace_dec *d = open_dec(RTD_GOTRACE_RAW, 0, NULL);
	assert_int_equal(rtd_gotrace_dec_feed(d, m.b, m.n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	while (rtd_gotrace_dec_next(d, &ev) > 0)
		if (ev.type == 20)
			assert_string_equal(ev.sargs[0], "");
	rtd_gotrace_dec_free(d);
}

/* The events a filter matches: a bit per event, in decoder order. */
static uint64_t run_filter(struct mem *m, enum rtd_gotrace_mode mode, rtd_gotrace_filter *f,
			   int *warn)
{
	rtd_gotrace_dec *d = open_dec(mode, RTD_GOTRACE_RESOLVE, m);
	assert_int_equal(rtd_gotrace_filter_prepare(f, mode, mem_read, m), 0);
	assert_int_equal(rtd_gotrace_dec_feed(d, m->b, m->n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	uint64_t bits = 0;
	int i = 0, rc;
	char why[400];
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (i == 0 && warn)
			*warn = rtd_gotrace_filter_check(f, d, why, sizeof(why));
		if (rtd_gotrace_filter_match(f, d, &ev))
			bits |= 1ull << i;
		i++;
	}
	assert_int_equal(rc, 0);
	rtd_gotrace_dec_free(d);
	return bits;
}

/* Names of the events whose bit is set, space-separated. */
static void names(struct mem *m, enum rtd_gotrace_mode mode, uint64_t bits, char *out,
		  size_t len)
{
	rtd_gotrace_dec *d = open_dec(mode, 0, NULL);
	assert_int_equal(rtd_gotrace_dec_feed(d, m->b, m->n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; rtd_gotrace_dec_next(d, &ev) > 0; i++)
		if (bits >> i & 1)
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", ev.name);
	rtd_gotrace_dec_free(d);
}

static void expect(struct mem *m, enum rtd_gotrace_mode mode, rtd_gotrace_filter *f,
		   const char *want)
{
	char got[512];
	names(m, mode, run_filter(m, mode, f, NULL), got, sizeof(got));
	assert_string_equal(got, want);
	rtd_gotrace_filter_free(f);
}

static rtd_gotrace_filter *fnew(void)
{
	rtd_gotrace_filter *f = rtd_gotrace_filter_new();
	assert_non_null(f);
	return f;
}

static void test_filter(void **state)
{
	(void)state;
	struct mem m;
	make(two_gens, &m);
	const enum rtd_gotrace_mode R = RTD_GOTRACE_RAW, O = RTD_GOTRACE_ORDERED;

	/* no criterion: every event; inactive */
	rtd_gotrace_filter *f = fnew();
	assert_false(rtd_gotrace_filter_active(f));
	assert_int_equal(run_filter(&m, O, f, NULL), (1ull << 12) - 1);
	rtd_gotrace_filter_free(f);

	/* a name given twice: either */
	f = fnew();
	assert_int_equal(rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_TYPE, "^GoStop$"), 0);
	assert_int_equal(rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_TYPE, "^UserLog$"), 0);
	assert_true(rtd_gotrace_filter_active(f));
	expect(&m, R, f, "UserLog GoStop");

	/* a bad expression says why */
	f = fnew();
	assert_int_equal(rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_TYPE, "("), -RTD_E_INVAL);
	assert_non_null(strstr(rtd_gotrace_filter_error(f), "bad regexp '('"));
	rtd_gotrace_filter_free(f);

	/* stacks resolve with each generation's own table: main.a is
	 * gen 1's stack 1 only, main.b gen 2's */
	f = fnew();
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STACK, "^main\\.a a\\.go:7$");
	expect(&m, R, f, "GoBlock");
	f = fnew();
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STACK, "main\\.b");
	expect(&m, O, f, "GoStop");
	f = fnew();
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STACK, "^0x2000$");
	expect(&m, R, f, "GoStop");

	/* strings, raw mode included (the strings come after the events) */
	f = fnew();
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STRING, "^(sleep|yield)$");
	expect(&m, R, f, "GoBlock UserLog GoStop");

	/* goroutines: ordered mode knows them (thread 1 runs goroutine 2
	 * from generation 1 on); two are either */
	f = fnew();
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 2);
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 7);
	expect(&m, O, f, "UserLog ProcStatus GoStatus GoStop");
	f = fnew();
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 1);
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 2);
	expect(&m, O, f, "GoStatus GoBlock UserLog ProcStatus GoStatus GoStop");
	/* ... raw mode does not: a warning, and no event matches */
	f = fnew();
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 2);
	int warn = 0;
	assert_int_equal(run_filter(&m, R, f, &warn), 0);
	assert_int_equal(warn, 1);
	rtd_gotrace_filter_free(f);
	/* the thread is known in both */
	f = fnew();
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_M, 1);
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_TYPE, "^Go(Start|Stop)$");
	expect(&m, R, f, "GoStart GoStop");

	/* times: absolute (ordered: ns) and from the first event; raw
	 * mode converts with the frequency (1 GHz: a tick is a ns) */
	f = fnew();
	rtd_gotrace_filter_set_time(f, false, 108, false);
	rtd_gotrace_filter_set_time(f, true, 110, false);
	expect(&m, O, f, "GoBlock GoUnblock GoStart");
	f = fnew();
	rtd_gotrace_filter_set_time(f, false, 7, true);
	rtd_gotrace_filter_set_time(f, true, 9, true);
	expect(&m, O, f, "GoBlock GoUnblock GoStart");
	f = fnew();
	rtd_gotrace_filter_set_time(f, false, 7, true);
	rtd_gotrace_filter_set_time(f, true, 9, true);
	expect(&m, R, f, "GoBlock GoUnblock GoStart");
	/* from the start in raw mode needs the first pass */
	f = fnew();
	rtd_gotrace_filter_set_time(f, false, 7, true);
	assert_int_equal(rtd_gotrace_filter_prepare(f, R, NULL, NULL), -RTD_E_STATE);
	assert_non_null(strstr(rtd_gotrace_filter_error(f), "first pass"));
	rtd_gotrace_filter_free(f);

	/* inverted: what does not match, but not the dictionary and
	 * batch events, which match a name only */
	f = fnew();
	rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_TYPE, "^(Go|Proc)");
	rtd_gotrace_filter_set_invert(f, true);
	expect(&m, O, f, "UserLog");

	/* matched in Go's order, kept by offset: the raw events of
	 * goroutine 2, which raw mode cannot see */
	f = fnew();
	rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 2);
	assert_int_equal(rtd_gotrace_filter_keep_ordered(f, mem_read, &m), 0);
	expect(&m, R, f, "UserLog ProcStatus GoStatus GoStop");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
