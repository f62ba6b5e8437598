/* SPDX-License-Identifier: MIT */
/*
 * test_wait - the profile builder's wait profile (RTD_NETTRACE_PROFILE_WAIT,
 * what the agent serves as /debug/pprof/block): WaitHandleWait/Start and
 * Stop paired per thread, the Start's stack, the delay between the two,
 * Go's block profile types; a Stop without its Start counts nothing; a
 * contention inside a wait is its own span; a Start replaces a span whose
 * Stop was lost; a wait open across a take is
 * counted, with its Start's stack, by the take after its Stop; a builder
 * not asked for waits ignores them. Events are made here (the runtime's
 * payload layouts, ClrEtwAll.man), delivered as a decoder would.
 */
#include "test_util.h"

#include <stdio.h>

#include "common/buf.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

#include "nt_encode.h"

#define RT "Microsoft-Windows-DotNETRuntime"

static const struct rtd_nettrace_metadata m_method = {
	.provider = RT, .event_id = 143, .name = "Method/LoadVerbose"};
static const struct rtd_nettrace_metadata m_module = {
	.provider = RT, .event_id = 152, .name = "Loader/ModuleLoad"};
static const struct rtd_nettrace_metadata m_wstart = {
	.provider = RT, .event_id = 301, .name = "WaitHandleWait/Start"};
static const struct rtd_nettrace_metadata m_wstop = {
	.provider = RT, .event_id = 302, .name = "WaitHandleWait/Stop"};
static const struct rtd_nettrace_metadata m_cstart = {
	.provider = RT, .event_id = 81, .name = "Contention/Start"};
static const struct rtd_nettrace_metadata m_cstop = {
	.provider = RT, .event_id = 91, .name = "Contention/Stop"};

/* a decoder that has seen no header: timestamps count as nanoseconds */
static rtd_nettrace *dec;

static void feed(rtd_nettrace_profiler *p, const struct rtd_nettrace_metadata *m,
		 uint64_t tid, uint64_t ts, const uint64_t *stack, size_t n,
		 const rtd_buf *payload)
{
	struct rtd_nettrace_event ev = {
		.meta = m, .timestamp = ts, .thread_id = tid,
		.capture_thread_id = tid, .payload = payload ? payload->data : NULL,
		.payload_len = payload ? payload->len : 0, .stack = stack,
		.nframes = n};
	assert_int_equal(rtd_nettrace_profiler_event(p, dec, &ev), 0);
}

static void module(rtd_nettrace_profiler *p, uint64_t id, const char *path)
{
	rtd_buf b;
	rtd_buf_init(&b, 0);
	e_u64(&b, id);
	e_u64(&b, 1); /* AssemblyID */
	e_u32(&b, 0);
	e_u32(&b, 0);
	e_utf16z(&b, path);
	feed(p, &m_module, 1, 1, NULL, 0, &b);
	rtd_buf_free(&b);
}

static void method(rtd_nettrace_profiler *p, uint64_t start, const char *ns,
		   const char *name)
{
	rtd_buf b;
	rtd_buf_init(&b, 0);
	e_method_load(&b, start, ns, name);
	feed(p, &m_method, 1, 1, NULL, 0, &b);
	rtd_buf_free(&b);
}

/* leaf first, as the runtime walks them */
static const uint64_t st_event[] = {0x1010, 0x2010, 0x4010};
static const uint64_t st_join[] = {0x1020, 0x3010, 0x4020};
static const uint64_t st_lock[] = {0x5010, 0x2020, 0x4010};

static rtd_nettrace_profiler *builder(unsigned kinds)
{
	struct rtd_nettrace_profiler_opts o = {.sz = sizeof(o), .kinds = kinds};
	rtd_nettrace_profiler *p = rtd_nettrace_profiler_new(&o);
	assert_non_null(p);
	module(p, 7, "/app/dotnet-wait.dll");
	method(p, 0x1000, "System.Threading.WaitHandle", "WaitOneNoCheck");
	method(p, 0x2000, "Waiter", "OnEvent");
	method(p, 0x3000, "Waiter", "OnJoin");
	method(p, 0x4000, "Program", "Main");
	method(p, 0x5000, "System.Threading.Monitor", "Enter");
	return p;
}

/* Start/Stop payloads: WaitSource u8, AssociatedObjectID ptr, ClrInstanceID
 * u16; ClrInstanceID u16. */
static void wait_start(rtd_nettrace_profiler *p, uint64_t tid, uint64_t ts,
		       const uint64_t *st, size_t n)
{
	rtd_buf b;
	rtd_buf_init(&b, 0);
	uint8_t src = 0;
	rtd_buf_append(&b, &src, 1);
	e_u64(&b, 0xdead0);
	e_u16(&b, 9);
	feed(p, &m_wstart, tid, ts, st, n, &b);
	rtd_buf_free(&b);
}

static void wait_stop(rtd_nettrace_profiler *p, uint64_t tid, uint64_t ts)
{
	rtd_buf b;
	rtd_buf_init(&b, 0);
	e_u16(&b, 9);
	feed(p, &m_wstop, tid, ts, NULL, 0, &b);
	rtd_buf_free(&b);
}

/* The default type (delay) as folded lines, in a malloc'd string. */
static char *folded(const rtd_profile *prof)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_folded(prof, f), 0);
	fclose(f);
	return text;
}

#define ROOT_EVENT                                                             \
	"dotnet-wait!Program.Main();dotnet-wait!Waiter.OnEvent();"              \
	"dotnet-wait!System.Threading.WaitHandle.WaitOneNoCheck()"
#define ROOT_JOIN                                                              \
	"dotnet-wait!Program.Main();dotnet-wait!Waiter.OnJoin();"               \
	"dotnet-wait!System.Threading.WaitHandle.WaitOneNoCheck()"

static void check_types(const rtd_profile *w)
{
	assert_int_equal(rtd_profile_ntypes(w), 2);
	assert_string_equal(rtd_profile_get_type(w, 0)->type, "contentions");
	assert_string_equal(rtd_profile_get_type(w, 0)->unit, "count");
	assert_string_equal(rtd_profile_get_type(w, 1)->type, "delay");
	assert_string_equal(rtd_profile_get_type(w, 1)->unit, "nanoseconds");
	assert_int_equal(rtd_profile_default_type(w), 1);
}

static void test_pairs(void **state)
{
	(void)state;
	rtd_nettrace_profiler *p = builder(RTD_NETTRACE_PROFILE_WAIT |
					   RTD_NETTRACE_PROFILE_LOCK);
	wait_stop(p, 3, 500);                 /* its Start was before us */
	wait_start(p, 1, 1000, st_event, 3);
	wait_start(p, 2, 1500, st_join, 3);
	/* a contention inside thread 1's wait: a span of its own */
	feed(p, &m_cstart, 1, 2000, st_lock, 3, NULL);
	rtd_buf c;
	rtd_buf_init(&c, 0);
	uint8_t flags = 0;
	rtd_buf_append(&c, &flags, 1);
	e_u16(&c, 9);
	double dur = 700.0;
	uint64_t bits;
	memcpy(&bits, &dur, 8);
	e_u64(&c, bits);
	feed(p, &m_cstop, 1, 3000, NULL, 0, &c);
	rtd_buf_free(&c);
	wait_stop(p, 1, 151000);              /* 150 us */
	wait_stop(p, 1, 160000);              /* a second Stop: nothing */
	wait_stop(p, 2, 201500);              /* 200 us */
	assert_int_equal(rtd_nettrace_profiler_count(p, RTD_NETTRACE_PROFILE_WAIT), 2);
	assert_int_equal(rtd_nettrace_profiler_count(p, RTD_NETTRACE_PROFILE_LOCK), 1);

	rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
	assert_int_equal(rtd_nettrace_profiler_take(p, out), 0);
	assert_null(out[0]);
	assert_null(out[1]);
	assert_null(out[3]);
	assert_non_null(out[2]);
	assert_non_null(out[4]);
	rtd_profile *w = out[4];
	check_types(w);
	assert_int_equal(rtd_profile_total_of(w, 0), 2);
	assert_int_equal(rtd_profile_total_of(w, 1), 350000);
	char *text = folded(w);
	assert_non_null(strstr(text, ROOT_EVENT " 150000\n"));
	assert_non_null(strstr(text, ROOT_JOIN " 200000\n"));
	free(text);
	/* the lock profile has the contention alone, its own duration */
	assert_int_equal(rtd_profile_total_of(out[2], 0), 1);
	assert_int_equal(rtd_profile_total_of(out[2], 1), 700);
	for (int k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++)
		rtd_profile_free(out[k]);

	/* a wait open across a take: counted by the take after its Stop,
	 * on the stack its Start had */
	wait_start(p, 1, 300000, st_event, 3);
	assert_int_equal(rtd_nettrace_profiler_take(p, out), 0);
	assert_null(out[4]);
	wait_stop(p, 1, 350000);
	assert_int_equal(rtd_nettrace_profiler_take(p, out), 0);
	assert_non_null(out[4]);
	assert_int_equal(rtd_profile_total_of(out[4], 0), 1);
	text = folded(out[4]);
	assert_string_equal(text, ROOT_EVENT " 50000\n");
	free(text);
	for (int k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++)
		rtd_profile_free(out[k]);

	/* the whole-session view has the same types */
	int err = 0;
	rtd_profile *all = rtd_nettrace_profiler_profile(
		p, RTD_NETTRACE_PROFILE_WAIT, &err);
	assert_non_null(all);
	check_types(all);
	rtd_profile_free(all);
	rtd_nettrace_profiler_free(p);
}

static void test_lost_stop(void **state)
{
	(void)state;
	rtd_nettrace_profiler *p = builder(RTD_NETTRACE_PROFILE_WAIT);
	wait_start(p, 2, 200000, st_event, 3);
	wait_start(p, 2, 300000, st_join, 3); /* the first's Stop was lost */
	wait_stop(p, 2, 330000);
	assert_int_equal(rtd_nettrace_profiler_count(p, RTD_NETTRACE_PROFILE_WAIT), 1);
	rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
	assert_int_equal(rtd_nettrace_profiler_take(p, out), 0);
	assert_non_null(out[4]);
	char *text = folded(out[4]);
	assert_string_equal(text, ROOT_JOIN " 30000\n");
	free(text);
	for (int k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++)
		rtd_profile_free(out[k]);
	rtd_nettrace_profiler_free(p);
}

static void test_not_asked(void **state)
{
	(void)state;
	rtd_nettrace_profiler *p = builder(RTD_NETTRACE_PROFILE_LOCK);
	wait_start(p, 1, 1000, st_event, 3);
	wait_stop(p, 1, 5000);
	assert_int_equal(rtd_nettrace_profiler_count(p, RTD_NETTRACE_PROFILE_WAIT), 0);
	rtd_profile *out[RTD_NETTRACE_PROFILE_KINDS];
	assert_int_equal(rtd_nettrace_profiler_take(p, out), 0);
	for (int k = 0; k < RTD_NETTRACE_PROFILE_KINDS; k++)
		assert_null(out[k]);
	int err = 0;
	assert_null(rtd_nettrace_profiler_profile(p, RTD_NETTRACE_PROFILE_WAIT,
						  &err));
	assert_int_equal(err, -RTD_E_INVAL);
	rtd_nettrace_profiler_free(p);
}

static int setup(void **state)
{
	(void)state;
	struct rtd_nettrace_opts o = {.sz = sizeof(o)};
	dec = rtd_nettrace_new(&o);
	return dec ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rtd_nettrace_free(dec);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_lost_stop),
		cmocka_unit_test(test_not_asked),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
