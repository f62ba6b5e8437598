/* SPDX-License-Identifier: MIT */
/*
 * test_source_real.c - the Go trace record source over a trace a real Go
 * program (tests/targets/gotrace-threads, built with Debian's Go 1.23 or
 * 1.22) records of itself: three goroutines locked to their OS threads
 * log their thread id with runtime/trace, reading CLOCK_MONOTONIC just
 * before and after each log, and burn CPU under the CPU profiler.
 *  - a Go 1.22+ trace's M is the OS thread: each log's INSTANT is on the
 *    thread it names, a THREAD record names it, and the goroutine's
 *    Running slices are on it;
 *  - the trace's clock is CLOCK_MONOTONIC to 64 ns (nanotime() / 64): each
 *    log's converted time lies between the two CLOCK_MONOTONIC reads
 *    around it, less 64 ns; the distances are printed;
 *  - SAMPLE records: as many as the trace's CPUSample events, on those
 *    threads, with named Go frames, their files and lines, and field m
 *    (the thread); a source asked for samples only (@kinds, the tracker
 *    not fed) gives the very same SAMPLE records and nothing else, and the
 *    Go profile adapter (rtd_profile_gotrace_pull) takes each of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <sys/wait.h>

#include "test_util.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_profile.h"
#include "rtdiag/gotrace_source.h"

struct log_line {
	uint64_t tid;
	int64_t before, after;
	bool found;
};

static const char *find_go(void)
{
	static const char *const gos[] = {"/usr/lib/go-1.23/bin/go", "/usr/lib/go-1.22/bin/go"};
	for (size_t i = 0; i < 2; i++)
		if (access(gos[i], X_OK) == 0)
			return gos[i];
	return NULL;
}

static uint64_t raw_samples(const char *path)
{
	size_t n = 0;
	uint8_t *b = rtd_test_slurp(path, &n);
	assert_non_null(b);
	RTD_OPTS(rtd_gotrace_opts, o, .mode = RTD_GOTRACE_RAW);
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	rtd_gotrace_dec_finish(d);
	struct rtd_gotrace_event ev;
	uint64_t c = 0;
	while (rtd_gotrace_dec_next(d, &ev) == 1)
		c += ev.type == RTD_GO2_EV_CPU_SAMPLE;
	rtd_gotrace_dec_free(d);
	free(b);
	return c;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = mix(h, (uint8_t)*s);
	return mix(h, 0xff);
}

/* A SAMPLE record's whole content, mixed into @h. */
static uint64_t mix_sample(uint64_t h, const struct rtd_record *r)
{
	h = mix(mix(mix(h, r->tid), r->lane), (uint64_t)r->mono);
	for (size_t i = 0; i < r->nfields; i++)
		h = mix(mix_str(h, r->fields[i].name), r->fields[i].u ^ (uint64_t)r->fields[i].i);
	for (uint32_t i = 0; i < r->stack->n; i++) {
		const struct rtd_rec_frame *f = &r->stack->frames[i];
		h = mix(mix_str(mix_str(mix(h, f->ip), f->name), f->file), f->line);
	}
	return h;
}

/* The trace's samples through a source asked for nothing else: the same
 * records (@want: their mix) and the profile adapter's totals. */
static void check_samples_only(const char *trace, uint64_t samples, uint64_t want)
{
	RTD_OPTS(rtd_gotrace_source_opts, o, .kinds = 1u << RTD_REC_SAMPLE);
	rtd_source *s = rtd_gotrace_source_open(trace, &o, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	uint64_t h = 0, n = 0;
	int rc;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		assert_int_equal(r->kind, RTD_REC_SAMPLE);
		h = mix_sample(h, r);
		n++;
	}
	assert_int_equal(rc, 0);
	rtd_source_free(s);
	assert_int_equal(n, samples);
	assert_true(h == want);

	static const struct rtd_profile_type types[] = {{"samples", "count"},
							{"cpu", "nanoseconds"}};
	RTD_OPTS(rtd_profile_opts, po, .types = types, .ntypes = 2, .default_type = 1);
	rtd_profile *p = rtd_profile_new2(&po);
	s = rtd_gotrace_source_open(trace, &o, NULL);
	assert_non_null(p);
	assert_non_null(s);
	assert_int_equal(rtd_profile_gotrace_pull(p, s), 0);
	assert_int_equal(rtd_profile_total_of(p, 0), samples);
	assert_int_equal(rtd_profile_total_of(p, 1), samples * 10000000);
	rtd_source_free(s);
	rtd_profile_free(p);
}

static void test_real_go(void **st)
{
	(void)st;
	const char *go = find_go();
	const char *bin = getenv("RTD_BINARY_DIR"), *src = getenv("RTD_SOURCE_DIR");
	if (!go || !bin || !src) {
		printf("SKIP: no Debian Go 1.22/1.23 (golang-1.23-go) or not run by ctest\n");
		exit(RTD_TEST_SKIP);
	}
	char dir[4096], trace[4200], out[4200], *cmd = NULL;
	snprintf(dir, sizeof(dir), "%s/gotrace-targets/threads-%d", bin, (int)getpid());
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	assert_true(asprintf(&cmd,
		 "mkdir -p '%s' && cd '%s/tests/targets/gotrace-threads' && "
		 "GOCACHE='%s/gotrace-targets/gocache' GOPATH='%s/gotrace-targets/gopath' "
		 "GOTOOLCHAIN=local GOPROXY=off GOFLAGS= '%s' build -o '%s/gotrace-threads' main.go && "
		 "'%s/gotrace-threads' '%s' > '%s'",
		 dir, src, bin, bin, go, dir, dir, trace, out) > 0);
	int rc = system(cmd);
	free(cmd);
	assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);

	struct log_line logs[16];
	size_t nlogs = 0;
	FILE *f = fopen(out, "r");
	assert_non_null(f);
	char line[256];
	while (nlogs < 16 && fgets(line, sizeof(line), f)) {
		struct log_line *l = &logs[nlogs];
		if (sscanf(line, "log %" SCNu64 " %" SCNd64 " %" SCNd64, &l->tid, &l->before,
			   &l->after) == 3)
			l->found = false, nlogs++;
	}
	fclose(f);
	assert_int_equal(nlogs, 6);

	int err = 0;
	rtd_source *s = rtd_gotrace_source_open(trace, NULL, &err);
	assert_non_null(s);
	const struct rtd_record *r;
	uint64_t samples = 0, named = 0, threads_seen = 0, running_on = 0, mixed = 0, lined = 0;
	while ((rc = rtd_source_next(s, &r)) == 1) {
		if (r->kind == RTD_REC_THREAD) {
			for (size_t i = 0; i < nlogs; i++)
				if (logs[i].tid == r->tid) {
					threads_seen++;
					break;
				}
		} else if (r->kind == RTD_REC_SAMPLE) {
			samples++;
			mixed = mix_sample(mixed, r);
			/* the sample's M is its thread (field m) */
			assert_int_equal(r->nfields, 2);
			assert_string_equal(r->fields[1].name, "m");
			assert_int_equal(r->fields[1].i, (int64_t)r->tid);
			for (uint32_t i = 0; i < r->stack->n; i++) {
				const struct rtd_rec_frame *fr = &r->stack->frames[i];
				if (!fr->name || strcmp(fr->name, "main.spin"))
					continue;
				named++;
				lined += fr->file && strstr(fr->file, "gotrace-threads/main.go") &&
					 fr->line > 0;
			}
		} else if (r->kind == RTD_REC_SLICE_BEGIN && !strcmp(r->name, "Running")) {
			for (size_t i = 0; i < nlogs; i++)
				running_on += logs[i].tid == r->tid;
		} else if (r->kind == RTD_REC_INSTANT && !strcmp(r->name, "UserLog")) {
			assert_int_equal(r->nfields, 3);
			const char *msg = r->fields[2].s;
			for (size_t i = 0; i < nlogs; i++) {
				struct log_line *l = &logs[i];
				char want[32];
				snprintf(want, sizeof(want), "%" PRIu64, l->tid);
				if (l->found || strcmp(msg, want) || r->mono < l->before - 64 ||
				    r->mono > l->after)
					continue;
				l->found = true;
				/* the log is on the thread it names */
				assert_int_equal(r->tid, l->tid);
				printf("log on tid %" PRIu64 ": trace time %" PRId64 " ns after the "
				       "CLOCK_MONOTONIC read before it, %" PRId64 " ns before the one "
				       "after it\n",
				       l->tid, r->mono - l->before, l->after - r->mono);
				break;
			}
		}
	}
	if (rc < 0)
		fail_msg("%s at %" PRIu64, r->message, r->offset);
	for (size_t i = 0; i < nlogs; i++)
		if (!logs[i].found)
			fail_msg("no UserLog for tid %" PRIu64 " between CLOCK_MONOTONIC %" PRId64
				 " and %" PRId64, logs[i].tid, logs[i].before, logs[i].after);
	struct rtd_clock c;
	assert_int_equal(rtd_source_clock(s, &c), 0);
	assert_true(c.flags & RTD_CLOCK_HAS_MONO);
	assert_int_equal(c.mono_error_ns, 64);
	assert_int_equal(threads_seen, 3); /* a THREAD record for each logging thread */
	assert_true(running_on > 0);
	assert_int_equal(samples, raw_samples(trace));
	printf("%" PRIu64 " CPU samples, %" PRIu64 " frames main.spin, %" PRIu64
	       " Running slices on the logging threads\n", samples, named, running_on);
	if (samples == 0)
		printf("note: the CPU profiler took no sample (a loaded machine?)\n");
	else
		assert_true(named > 0 && lined == named);
	rtd_source_free(s);
	check_samples_only(trace, samples, mixed);
	unlink(trace);
	unlink(out);
	snprintf(out, sizeof(out), "%s/gotrace-threads", dir);
	unlink(out);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
