/* SPDX-License-Identifier: MIT */
/*
 * test_source.c - Go execution traces as a record source
 * (rtd_gotrace_source_*), over the shared recordings of every format:
 *  - as many SAMPLE records as CPUSample events and UserLog instants as
 *    UserLog events (the counts `rtdiag gotrace stats` prints);
 *  - converted times never go back; every slice that ends was begun on
 *    its (thread, lane), and every slice begun is ended;
 *  - Go 1.22+ goroutine states sit on the M's thread (THREAD records for
 *    the Ms), Go 1.5-1.21 ones on the goroutine's lane;
 *  - a Go 1.25 trace's clock snapshots anchor the conversion: each
 *    snapshot's trace time converts to its CLOCK_MONOTONIC and wall
 *    values, and the drift between two is measured into the error;
 *  - a cut trace gives its records, then an error record.
 */
#include <errno.h>
#include <inttypes.h>

#include "test_gotrace.h"
#include "common/map.h"
#include "rtdiag/gotrace_source.h"

struct counts {
	uint64_t kinds[RTD_REC_KINDS];
	uint64_t logs, thread_states, lane_states;
};

/* raw events of type @t (new format) or @t1 (old) in @b: what `rtdiag
 * gotrace stats` counts per type */
static uint64_t raw_count(const uint8_t *b, size_t n, unsigned t2, unsigned t1)
{
	RTD_OPTS(rtd_gotrace_opts, o, .mode = RTD_GOTRACE_RAW);
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	rtd_gotrace_dec_finish(d);
	struct rtd_gotrace_event ev;
	uint64_t c = 0;
	while (rtd_gotrace_dec_next(d, &ev) == 1)
		c += ev.type == (rtd_gotrace_dec_version(d) >= 1022 ? t2 : t1);
	rtd_gotrace_dec_free(d);
	return c;
}

/* Pull every record; check order and slice nesting. Returns the source's
 * last answer. */
static int pull_all(rtd_source *s, struct counts *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	rtd_map depth; /* hash(tid, lane) -> open slices + 1 */
	rtd_map_init(&depth, 0);
	const struct rtd_record *r;
	int rc;
	int64_t last = INT64_MIN;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		c->kinds[r->kind]++;
		if (r->mono < last)
			fail_msg("%s: time goes back: %" PRId64 " after %" PRId64, name, r->mono, last);
		last = r->mono;
		uint64_t key = rtd_hash_u64(r->tid) ^ r->lane * 31;
		void *v = NULL;
		rtd_map_get(&depth, key, &v);
		uintptr_t d = (uintptr_t)v;
		if (r->kind == RTD_REC_SLICE_BEGIN) {
			rtd_map_put(&depth, key, (void *)(d + 1), NULL);
			if (r->category && !strcmp(r->category, "goroutine")) {
				if (r->tid && !r->lane)
					c->thread_states++;
				if (r->lane >= RTD_GOTRACE_LANE_G)
					c->lane_states++;
			}
		} else if (r->kind == RTD_REC_SLICE_END) {
			if (d == 0)
				fail_msg("%s: a slice ends on (%" PRIu64 ", %#" PRIx64 ") with none open",
					 name, r->tid, r->lane);
			rtd_map_put(&depth, key, (void *)(d - 1), NULL);
		} else if (r->kind == RTD_REC_INSTANT && !strcmp(r->name, "UserLog"))
			c->logs++;
		if (r->kind == RTD_REC_SAMPLE)
			assert_non_null(r->stack);
	}
	if (rc == 0) {
		size_t it = 0;
		uint64_t k;
		void *v;
		while (rtd_map_next(&depth, &it, &k, &v))
			if ((uintptr_t)v != 0)
				fail_msg("%s: a slice left open at the end", name);
	}
	rtd_map_free(&depth);
	return rc;
}

static uint64_t nvectors;

static void check_trace(const uint8_t *b, size_t n, const char *name)
{
	rtd_source *s = rtd_gotrace_source_mem(b, n, NULL, NULL);
	assert_non_null(s);
	struct counts c;
	int rc = pull_all(s, &c, name);
	if (rc < 0) {
		/* a trace Go's own reader refuses: the records up to it */
		const struct rtd_record *r;
		assert_int_equal(rtd_source_next(s, &r), rc);
		assert_int_equal(r->kind, RTD_REC_ERROR);
		assert_true(r->message[0]);
		rtd_source_free(s);
		return;
	}
	nvectors++;
	assert_int_equal(c.kinds[RTD_REC_SAMPLE],
			 raw_count(b, n, RTD_GO2_EV_CPU_SAMPLE, RTD_GO_EV_CPU_SAMPLE));
	assert_int_equal(c.logs, raw_count(b, n, RTD_GO2_EV_USER_LOG, RTD_GO_EV_USER_LOG));
	RTD_OPTS(rtd_gotrace_opts, o, .mode = RTD_GOTRACE_RAW);
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_dec_feed(d, b, n < 64 ? n : 64);
	struct rtd_gotrace_event ev;
	rtd_gotrace_dec_next(d, &ev);
	int ver = rtd_gotrace_dec_version(d);
	rtd_gotrace_dec_free(d);
	if (ver >= 1022) {
		/* states on the Ms' threads, each M named once */
		assert_int_equal(c.lane_states, 0);
		if (c.thread_states)
			assert_true(c.kinds[RTD_REC_THREAD] > 0);
	} else {
		assert_int_equal(c.thread_states, 0);
		assert_int_equal(c.kinds[RTD_REC_THREAD], 0);
	}
	struct rtd_source_stats ss;
	rtd_source_stats(s, &ss);
	printf("%s (go %d.%d): %" PRIu64 " slices, %" PRIu64 " instants, %" PRIu64
	       " samples, %" PRIu64 " threads, %" PRIu64 " times raised\n",
	       name, ver / 1000, ver % 1000, c.kinds[RTD_REC_SLICE_BEGIN], c.kinds[RTD_REC_INSTANT],
	       c.kinds[RTD_REC_SAMPLE], c.kinds[RTD_REC_THREAD], ss.clamped);
	if (ver >= 1022)
		assert_int_equal(ss.clamped, 0); /* Go's order is time order */
	rtd_source_free(s);
}

static void test_v2_vectors(void **st)
{
	(void)st;
	const char *dir = rtd_test_vector("testdata/gotrace/v2");
	if (!dir)
		skip();
	nvectors = 0;
	assert_true(rtd_test_each_go_vector(dir, true, check_trace) >= 20);
	assert_true(nvectors >= 20);
}

static void test_v1_files(void **st)
{
	(void)st;
	const char *dir = rtd_test_vector("testdata/gotrace/v1");
	if (!dir)
		skip();
	nvectors = 0;
	assert_true(rtd_test_each_file(dir, check_trace) > 10);
	assert_true(nvectors > 10);
}

/* The counts against the CLI itself, on the trace with tasks and logs. */
static void test_cli_counts(void **st)
{
	(void)st;
	const char *vec = rtd_test_vector("testdata/gotrace/v2/go122-annotations-stress.test");
	const char *cli = getenv("RTDIAG");
	if (!vec || !cli)
		skip();
	size_t n = 0;
	uint8_t *b = rtd_test_go_vector(vec, &n, true);
	char path[] = "/tmp/rtd-gosrc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "'%s' gotrace stats '%s'", cli, path);
	FILE *p = popen(cmd, "r");
	char line[256];
	long long logs = -1;
	while (fgets(line, sizeof(line), p))
		sscanf(line, "UserLog %lld", &logs);
	assert_int_equal(pclose(p), 0);
	rtd_source *s = rtd_gotrace_source_open(path, NULL, NULL);
	assert_non_null(s);
	struct counts c;
	assert_int_equal(pull_all(s, &c, "annotations"), 0);
	assert_int_equal(c.logs, (uint64_t)logs);
	assert_true(logs > 0);
	rtd_source_free(s);
	unlink(path);
	free(b);
}

/* Go 1.25's clock snapshots (go125-sync.test, golang/exp):
 *   gen 1: Frequency 1e9,   batch time 9,  ClockSnapshot dt=1 mono=99  sec=1740755049 nsec=123
 *   gen 2: Frequency 5e8,   batch time 19, ClockSnapshot dt=1 mono=199 sec=1740755050 nsec=123
 *   gen 3: Frequency 5e8,   batch time 29, ClockSnapshot dt=1 mono=299 sec=1740755051 nsec=123
 * Go's reader gives the snapshots trace times 10 ns (tick 10 at 1 ns),
 * 40 ns (tick 20 at 2 ns) and 60 ns (tick 30 at 2 ns). Gen 1's anchor
 * puts 40 ns at mono 99 + 30 = 129, not 199: drift 70 ns; gen 2's puts
 * 60 ns at 199 + 20 = 219, not 299: drift 80 ns. The error is the largest
 * drift plus the 1 us of the three clock reads: 1080 ns.
 */
static void test_go125_clock(void **st)
{
	(void)st;
	const char *vec = rtd_test_vector("testdata/gotrace/v2/go125-sync.test");
	if (!vec)
		skip();
	size_t n = 0;
	uint8_t *b = rtd_test_go_vector(vec, &n, true);
	rtd_source *s = rtd_gotrace_source_mem(b, n, NULL, NULL);
	assert_non_null(s);
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_int_equal(c.domain, RTD_CLOCK_GO);
	assert_false(c.flags & RTD_CLOCK_HAS_MONO); /* nothing read yet */
	struct counts k;
	assert_int_equal(pull_all(s, &k, "go125-sync"), 0);
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_true(c.flags & RTD_CLOCK_HAS_MONO);
	assert_true(c.flags & RTD_CLOCK_HAS_WALL);
	/* the last snapshot: its trace time converts to its own values */
	assert_int_equal(rtd_clock_to_mono(&c, c.ref_ts), 299);
	int64_t wall;
	assert_int_equal(rtd_clock_to_wall(&c, c.ref_ts, &wall), 0);
	assert_int_equal(wall, 1740755051LL * 1000000000 + 123);
	printf("go125-sync: last anchor at trace %" PRId64 " ns, error %" PRIu64 " ns\n", c.ref_ts,
	       c.mono_error_ns);
	assert_int_equal(c.ref_ts, 60);
	assert_int_equal(c.mono_error_ns, 1080);
	rtd_source_free(s);
	free(b);

	/* a Go 1.23 trace has no snapshot: no anchor unless one is given */
	vec = rtd_test_vector("testdata/gotrace/v2/go123-sync.test");
	b = rtd_test_go_vector(vec, &n, true);
	s = rtd_gotrace_source_mem(b, n, NULL, NULL);
	assert_int_equal(pull_all(s, &k, "go123-sync"), 0);
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_false(c.flags & RTD_CLOCK_HAS_MONO);
	assert_int_equal(c.mono_error_ns, RTD_CLOCK_ERROR_UNKNOWN);
	rtd_source_free(s);
	RTD_OPTS(rtd_gotrace_source_opts, o, .anchor_ts = 10, .anchor_mono = 5000,
		 .anchor_error_ns = 200000);
	s = rtd_gotrace_source_mem(b, n, &o, NULL);
	const struct rtd_record *r;
	assert_int_equal(rtd_source_next(s, &r), 1);
	assert_int_equal(r->mono, 5000 + r->ts - 10);
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_int_equal(c.mono_error_ns, 200000);
	rtd_source_free(s);
	free(b);
}

static void test_truncated(void **st)
{
	(void)st;
	const char *vec = rtd_test_vector("testdata/gotrace/v2/go122-gc-stress.test");
	if (!vec)
		skip();
	size_t n = 0;
	uint8_t *b = rtd_test_go_vector(vec, &n, true);
	rtd_source *s = rtd_gotrace_source_mem(b, n * 2 / 3, NULL, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	int rc;
	uint64_t recs = 0;
	while ((rc = rtd_source_next(s, &r)) == 1)
		recs++;
	assert_true(rc < 0);
	assert_int_equal(r->kind, RTD_REC_ERROR);
	assert_int_equal(r->code, rc);
	assert_true(r->offset <= n);
	assert_true(r->message[0]);
	printf("cut at %zu of %zu: %" PRIu64 " records, then %s (%s at %" PRIu64 ")\n", n * 2 / 3,
	       n, recs, rtd_errname(rc), r->message, r->offset);
	assert_int_equal(rtd_source_next(s, &r), rc); /* sticky */
	rtd_source_free(s);
	int err = 0;
	struct {
		struct rtd_gotrace_source_opts o;
		int newer;
	} o = {{.sz = sizeof(o)}, 1};
	assert_null(rtd_gotrace_source_mem(b, n, &o.o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	assert_null(rtd_gotrace_source_open("/nonexistent/trace.out", NULL, &err));
	assert_int_equal(err, -ENOENT);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_vectors),
		cmocka_unit_test(test_v1_files),
		cmocka_unit_test(test_cli_counts),
		cmocka_unit_test(test_go125_clock),
		cmocka_unit_test(test_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
