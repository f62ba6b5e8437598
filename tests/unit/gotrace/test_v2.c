/* SPDX-License-Identifier: MIT */
/* test_v2.c - the new format: text form, raw and ordered decoding, encoder. */
#include "test_util.h"

#include <errno.h>

#include "rtdiag/gotrace.h"
#include "unit/gotrace/memio.h"


/* A valid Go 1.22 trace: one P, one goroutine that runs, logs and stops. */
static const char good[] =
	"Trace Go1.22\n"
	"EventBatch gen=1 m=0 time=100 size=21\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"GoStatus dt=1 g=1 m=0 gstatus=2\n"
	"UserLog dt=5 task=0 key_string=1 value_string=2 stack=0\n"
	"GoStop dt=1 reason_string=1 stack=0\n"
	"ProcStop dt=2\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=1\n"
	"Stacks\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=16\n"
	"Strings\n"
	"String id=1\n"
	"\tdata=\"key\"\n"
	"String id=2\n"
	"\tdata=\"va\\x00l\\u00fc\"\n";

static int decode(const struct mem *m, enum rtd_gotrace_mode mode,
		  struct rtd_gotrace_event *evs, int max, int *status)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	assert_int_equal(rtd_gotrace_dec_feed(d, m->b, m->n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	int n = 0, rc;
	struct rtd_gotrace_event ev;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (n < max) {
			evs[n] = ev;
			evs[n].raw = NULL;
			evs[n].sargs[0] = evs[n].sargs[1] = NULL;
			evs[n].frames = NULL;
			evs[n].str = NULL;
			evs[n].argnames = NULL;
			evs[n].sargnames = NULL;
			evs[n].name = NULL;
		}
		if (ev.type == 44 && mode == RTD_GOTRACE_ORDERED) {
			/* UserLog: both strings resolved, the value has a NUL */
			assert_int_equal(ev.nsargs, 2);
			assert_string_equal(ev.sargs[0], "key");
			assert_int_equal(ev.sarg_lens[1], 6);
			assert_memory_equal(ev.sargs[1], "va\0l\xc3\xbc", 6);
			assert_int_equal(ev.g, 1);
			assert_int_equal(ev.p, 0);
			assert_int_equal(ev.m, 0);
		}
		n++;
	}
	*status = rc;
	assert_true(rtd_gotrace_dec_version(d) >= 1022);
	rtd_gotrace_dec_free(d);
	return n;
}

/* Go's text form -> binary -> ordered events; the decode must succeed. */
static int order_text(const char *txt, size_t len, struct rtd_gotrace_event *evs, int max)
{
	struct mem m = {.n = 0};
	assert_int_equal(rtd_gotrace_text2bin(txt, len, to_mem, &m, NULL, 0), 0);
	int st;
	int n = decode(&m, RTD_GOTRACE_ORDERED, evs, max, &st);
	assert_int_equal(st, 0);
	return n;
}

static void test_text_raw_ordered(void **state)
{
	(void)state;
	struct mem m = {.n = 0};
	char err[256];
	int rc = rtd_gotrace_text2bin(good, sizeof(good) - 1, to_mem, &m, err, sizeof(err));
	if (rc)
		printf("text2bin: %s\n", err);
	assert_int_equal(rc, 0);
	assert_memory_equal(m.b, "go 1.22 trace\0\0\0", 16);
	struct rtd_gotrace_event evs[32];
	int st;
	int n = decode(&m, RTD_GOTRACE_RAW, evs, 32, &st);
	assert_int_equal(st, 0);
	assert_int_equal(n, 14); /* every wire event, dictionary ones too */
	assert_int_equal(evs[1].type, 13); /* ProcStatus */
	assert_int_equal(evs[1].ts, 101);  /* batch time + dt */
	assert_int_equal(evs[3].ts, 107);
	n = decode(&m, RTD_GOTRACE_ORDERED, evs, 32, &st);
	assert_int_equal(st, 0);
	assert_int_equal(n, 6); /* ProcStatus GoStatus UserLog GoStop ProcStop Sync */
	for (int i = 1; i < n; i++)
		assert_true(evs[i].ts > evs[i - 1].ts);
	assert_int_equal(evs[5].type, RTD_GO2_EV_READER_SYNC);
	assert_int_equal(evs[5].ts, evs[4].ts + 1);
	assert_int_equal(evs[5].m, -1);
	assert_int_equal(evs[5].p, -1);
	/* re-encoding what raw mode read gives the same bytes */
	struct mem m2 = {.n = 0};
	rtd_gotrace_enc *e = rtd_gotrace_enc_new(1022, to_mem, &m2);
	assert_non_null(e);
	struct rtd_gotrace_opts o = {.sz = sizeof(o)};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_dec_feed(d, m.b, m.n);
	rtd_gotrace_dec_finish(d);
	struct rtd_gotrace_event ev;
	while (rtd_gotrace_dec_next(d, &ev) > 0)
		assert_int_equal(rtd_gotrace_enc_event(e, &ev), 0);
	rtd_gotrace_enc_free(e);
	rtd_gotrace_dec_free(d);
	assert_int_equal(m2.n, m.n);
	assert_memory_equal(m2.b, m.b, m.n);
}

static void test_validation_error(void **state)
{
	(void)state;
	/* GoStart without a P: Go says "expected a proc but didn't have one" */
	static const char bad[] =
		"Trace Go1.22\n"
		"EventBatch gen=1 m=0 time=0 size=5\n"
		"GoCreate dt=1 new_g=5 new_stack=0 stack=0\n"
		"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
		"Frequency freq=1000000000\n";
	struct mem m = {.n = 0};
	assert_int_equal(rtd_gotrace_text2bin(bad, sizeof(bad) - 1, to_mem, &m, NULL, 0), 0);
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_dec_feed(d, m.b, m.n);
	rtd_gotrace_dec_finish(d);
	struct rtd_gotrace_event ev;
	assert_int_equal(rtd_gotrace_dec_next(d, &ev), -RTD_E_GO_ORDER);
	assert_non_null(strstr(rtd_gotrace_dec_error(d, NULL), "expected a proc but didn't have one"));
	rtd_gotrace_dec_free(d);
}

/* Go 1.22/1.23's reader emits a synthetic Sync at lastTs+1 after each
 * generation (go tool trace -d=1 of Go 1.22/1.23: 101, Sync 102, 103,
 * Sync 104), none before the first. */
static const char twogen[] =
	"Trace Go1.22\n"
	"EventBatch gen=1 m=0 time=100 size=4\n"
	"ProcStatus dt=1 p=0 pstatus=2\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n"
	"EventBatch gen=2 m=0 time=100 size=4\n"
	"ProcStatus dt=1 p=0 pstatus=2\n"
	"EventBatch gen=2 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n";

/*
 * Equal times on three threads: Go's heap of batch cursors decides, not
 * the order the threads appear. Heap after inserting M1@1, M2@5, M3@3:
 * [M1 M2 M3]; M1 moves to 5: [M3 M2 M1]; M3 moves to 9: the first child
 * with the least time is M2, so M2's event at 5 goes before M1's (which
 * then gets 6: Go keeps time strictly rising). go tool trace -d=1 of
 * golang/exp, Go 1.24+ and (in most runs) Go 1.22/1.23 give this order.
 */
static const char ties[] =
	"Trace Go1.22\n"
	"EventBatch gen=1 m=1 time=0 size=8\n"
	"ProcStatus dt=1 p=0 pstatus=2\n"
	"ProcStatus dt=4 p=0 pstatus=2\n"
	"EventBatch gen=1 m=2 time=0 size=4\n"
	"ProcStatus dt=5 p=1 pstatus=2\n"
	"EventBatch gen=1 m=3 time=0 size=8\n"
	"ProcStatus dt=3 p=2 pstatus=2\n"
	"ProcStatus dt=6 p=2 pstatus=2\n"
	"EventBatch gen=1 m=18446744073709551615 time=0 size=6\n"
	"Frequency freq=1000000000\n";

/* golang/exp's go125-sync.test: a go 1.25 trace's reader (Go 1.25+)
 * puts a Sync at the start of each generation at its first batch time
 * and one at the end; Go's TestTraceGenSync wants them at 9, 38, 58, 83. */
static const char sync125[] =
	"Trace Go1.25\n"
	"EventBatch gen=1 m=18446744073709551615 time=9 size=16\n"
	"Sync\n"
	"Frequency freq=1000000000\n"
	"ClockSnapshot dt=1 mono=99 sec=1740755049 nsec=123\n"
	"EventBatch gen=1 m=1 time=15 size=4\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"EventBatch gen=1 m=18446744073709551615 time=11 size=1\n"
	"Stacks\n"
	"EventBatch gen=1 m=18446744073709551615 time=12 size=1\n"
	"Strings\n"
	"EventBatch gen=2 m=18446744073709551615 time=19 size=17\n"
	"Sync\n"
	"Frequency freq=500000000\n"
	"ClockSnapshot dt=1 mono=199 sec=1740755050 nsec=123\n"
	"EventBatch gen=2 m=18446744073709551615 time=21 size=1\n"
	"Stacks\n"
	"EventBatch gen=2 m=18446744073709551615 time=22 size=1\n"
	"Strings\n"
	"EventBatch gen=3 m=18446744073709551615 time=29 size=17\n"
	"Sync\n"
	"Frequency freq=500000000\n"
	"ClockSnapshot dt=1 mono=299 sec=1740755051 nsec=123\n"
	"EventBatch gen=3 m=1 time=40 size=4\n"
	"ProcStatus dt=1 p=0 pstatus=1\n"
	"EventBatch gen=3 m=18446744073709551615 time=31 size=1\n"
	"Stacks\n"
	"EventBatch gen=3 m=18446744073709551615 time=32 size=1\n"
	"Strings\n";

/* Each case: the ordered events' times, threads, generations, Syncs. */
static const struct order_case {
	const char *txt;
	size_t len;
	int n;
	int64_t ts[8], m[8];
	uint64_t gen[8];
	unsigned sync; /* bit i: event i is Go's synthetic Sync */
	uint64_t clock[4]; /* the first event's clock snapshot (Go 1.25+ Sync) */
} order_cases[] = {
	{twogen, sizeof(twogen) - 1, 4, {101, 102, 103, 104}, {0, -1, 0, -1}, {1, 1, 2, 2}, 0xa, {0, 0, 0, 0}},
	{ties, sizeof(ties) - 1, 6, {1, 3, 5, 6, 9, 10}, {1, 3, 2, 1, 3, -1}, {1, 1, 1, 1, 1, 1}, 0x20, {0, 0, 0, 0}},
	{sync125, sizeof(sync125) - 1, 6, {9, 16, 38, 58, 82, 83}, {-1, 1, -1, -1, 1, -1},
	 {1, 1, 2, 3, 3, 3}, 0x2d, {10, 99, 1740755049, 123}},
};

static void test_order_sync_ties(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(order_cases) / sizeof(order_cases[0]); c++) {
		const struct order_case *oc = &order_cases[c];
		struct rtd_gotrace_event evs[8];
		assert_int_equal(order_text(oc->txt, oc->len, evs, 8), oc->n);
		for (int i = 0; i < oc->n; i++) {
			assert_int_equal(evs[i].ts, oc->ts[i]);
			assert_int_equal(evs[i].m, oc->m[i]);
			assert_int_equal(evs[i].gen, oc->gen[i]);
			assert_int_equal(evs[i].type == RTD_GO2_EV_READER_SYNC, (oc->sync >> i) & 1);
		}
		/* Go's TestTraceGenSync: ClockSnapshot{Trace: 10, Mono: 99,
		 * Wall: 2025-02-28 15:04:09.000000123 UTC} */
		if (evs[0].type == RTD_GO2_EV_READER_SYNC) {
			assert_int_equal(evs[0].nargs, 4);
			for (unsigned i = 0; i < 4; i++)
				assert_int_equal(evs[0].args[i], oc->clock[i]);
		}
		assert_int_equal(evs[oc->n - 1].nargs, 0); /* Syncs without a snapshot */
	}
}

static void test_text_errors(void **state)
{
	(void)state;
	struct mem m = {.n = 0};
	char err[256];
	static const char *const cases[] = {
		"Nope Go1.22\n",
		"Trace Go1.99\n",
		"Trace Go1.22\nNoSuchEvent x=1\n",
		"Trace Go1.22\nFrequency frq=1\n",
		"Trace Go1.22\nFrequency freq=abc\n",
		"Trace Go1.22\nString id=1\n\tdata=\"unterminated\n",
		"Trace Go1.22\nStack id=1 nframes=2\n\tpc=1 func=2 file=3 line=4\n",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m.n = 0;
		int rc = rtd_gotrace_text2bin(cases[i], strlen(cases[i]), to_mem, &m, err, sizeof(err));
		assert_true(rc == -RTD_E_GO_TEXT || rc == -RTD_E_GO_VERSION);
		assert_true(strncmp(err, "line ", 5) == 0);
	}
}

/* Binary -> Go's text form (rtd_gotrace_bin2text_*) -> binary: the same
 * bytes; a String's bytes quoted as Go's strconv.Quote (a NUL as \x00,
 * a printable code point as itself). */
static void test_bin2text(void **state)
{
	(void)state;
	struct mem m = {.n = 0}, back = {.n = 0};
	assert_int_equal(rtd_gotrace_text2bin(good, sizeof(good) - 1, to_mem, &m, NULL, 0), 0);
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_int_equal(rtd_gotrace_dec_feed(d, m.b, m.n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	struct rtd_gotrace_event ev;
	int n = 0, rc;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (!n++)
			assert_int_equal(rtd_gotrace_bin2text_header(f, rtd_gotrace_dec_version(d)), 0);
		assert_int_equal(rtd_gotrace_bin2text_event(f, &ev), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_gotrace_bin2text_event(f, NULL), -RTD_E_INVAL);
	assert_int_equal(rtd_gotrace_bin2text_header(f, 1021), -RTD_E_INVAL);
	rtd_gotrace_dec_free(d);
	fclose(f);
	assert_int_equal(n, 14);
	const char *want_head = "Trace Go1.22\nEventBatch gen=1 m=0 time=100 size=21\n"
				"ProcStatus dt=1 p=0 pstatus=1\n";
	assert_memory_equal(text, want_head, strlen(want_head));
	assert_non_null(strstr(text, "String id=2\n\tdata=\"va\\x00l\xc3\xbc\"\n"));
	assert_int_equal(rtd_gotrace_text2bin(text, tlen, to_mem, &back, NULL, 0), 0);
	assert_int_equal(back.n, m.n);
	assert_memory_equal(back.b, m.b, m.n);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_raw_ordered),
		cmocka_unit_test(test_bin2text),
		cmocka_unit_test(test_validation_error),
		cmocka_unit_test(test_text_errors),
		cmocka_unit_test(test_order_sync_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
