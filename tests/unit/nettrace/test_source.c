/* SPDX-License-Identifier: MIT */
/*
 * test_source.c - an EventPipe stream as a record source
 * (rtd_nettrace_source_*), over every shared recording:
 *  - SAMPLE + INSTANT records equal the events `rtdiag nettrace stats`
 *    counts, and the header's clock (frequency, sync tick, start time as
 *    the CLI prints them) is the source's clock;
 *  - times never go back and lie after the header's start;
 *  - the frames of dotnetdiag's profile of the SampleProfiler trace are
 *    named in the samples' stacks (from the rundown at the file's end,
 *    read ahead), and fewer are without the read-ahead;
 *  - a cut recording gives its records, then an error record with the
 *    offset of the cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "nt_test.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"

struct header {
	long long events;
	uint64_t freq, tick;
	int64_t start_wall; /* ns */
};

/* What `rtdiag nettrace stats FILE` says; false when the CLI is not there. */
static bool cli_stats(const char *path, struct header *h)
{
	const char *cli = getenv("RTDIAG");
	if (!cli)
		return false;
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' nettrace stats '%s'", cli, path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512];
	memset(h, 0, sizeof(*h));
	h->events = -1;
	while (fgets(line, sizeof(line), p)) {
		int y, mo, d, hh, mi, ss, ms;
		unsigned long long f, t;
		if (sscanf(line, "events: %lld", &h->events) == 1)
			continue;
		if (sscanf(line, "clock: %llu ticks/s, start at tick %llu", &f, &t) == 2) {
			h->freq = f;
			h->tick = t;
		}
		if (sscanf(line, "start: %d-%d-%dT%d:%d:%d.%dZ", &y, &mo, &d, &hh, &mi, &ss, &ms) == 7) {
			struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
					.tm_hour = hh, .tm_min = mi, .tm_sec = ss};
			h->start_wall = (int64_t)timegm(&tm) * 1000000000 + (int64_t)ms * 1000000;
		}
	}
	assert_int_equal(pclose(p), 0);
	return h->events >= 0;
}

static void test_vectors(void **st)
{
	(void)st;
	for (const char *const *v = nt_vectors; *v; v++) {
		const char *path = rtd_test_vector(*v);
		if (!path)
			skip();
		int err = 0;
		rtd_source *s = rtd_nettrace_source_open(path, NULL, &err);
		assert_non_null(s);
		const struct rtd_record *r;
		int rc;
		uint64_t n[RTD_REC_KINDS] = {0};
		int64_t last = INT64_MIN, first_ev = 0;
		bool any_ev = false;
		while ((rc = rtd_source_next(s, &r)) == 1) {
			n[r->kind]++;
			assert_true(r->mono >= last);
			last = r->mono;
			if (r->kind == RTD_REC_SAMPLE || r->kind == RTD_REC_INSTANT) {
				if (!any_ev)
					first_ev = r->ts;
				any_ev = true;
				assert_non_null(r->name);
				assert_non_null(strchr(r->name, '/'));
			}
			if (r->kind == RTD_REC_SAMPLE) {
				assert_non_null(r->stack);
				assert_true(r->value == 1);
			}
		}
		if (rc < 0)
			fail_msg("%s: %s at %" PRIu64, *v, r->message, r->offset);
		struct rtd_clock c;
		assert_int_equal(rtd_source_clock(s, &c), 0);
		assert_int_equal(c.domain, RTD_CLOCK_QPC);
		assert_true(c.flags & RTD_CLOCK_HAS_WALL);
		/* a 10^9 Hz trace (Linux) is CLOCK_MONOTONIC: mono is ts */
		if (c.freq == 1000000000u) {
			assert_true(c.flags & RTD_CLOCK_HAS_MONO);
			assert_int_equal(rtd_clock_to_mono(&c, first_ev), first_ev);
		} else
			assert_false(c.flags & RTD_CLOCK_HAS_MONO);
		int64_t wall_first = 0, wall_last = 0, wall_sync = 0;
		assert_int_equal(rtd_clock_to_wall(&c, c.ref_ts, &wall_sync), 0);
		assert_int_equal(rtd_clock_to_wall(&c, first_ev, &wall_first), 0);
		struct header h;
		if (cli_stats(path, &h)) {
			assert_int_equal(n[RTD_REC_SAMPLE] + n[RTD_REC_INSTANT], (uint64_t)h.events);
			assert_int_equal(c.freq, h.freq);
			assert_int_equal((uint64_t)c.ref_ts, h.tick);
			assert_int_equal(wall_sync, h.start_wall);
		} else
			printf("note: RTDIAG not set, counts checked against the decoder only\n");
		/* the events come after the session's start (the sync time,
		 * to its millisecond) and within a day of it */
		assert_true(wall_first >= wall_sync - 1000000);
		assert_true(wall_first - wall_sync < 86400LL * 1000000000);
		(void)wall_last;
		struct rtd_source_stats ss;
		rtd_source_stats(s, &ss);
		assert_int_equal(ss.records[RTD_REC_SAMPLE], n[RTD_REC_SAMPLE]);
		assert_true(n[RTD_REC_THREAD] > 0);
		printf("%s: %" PRIu64 " samples, %" PRIu64 " instants, %" PRIu64 " threads\n", *v,
		       n[RTD_REC_SAMPLE], n[RTD_REC_INSTANT], n[RTD_REC_THREAD]);
		rtd_source_free(s);
	}
}

/* every distinct frame name of the folded profile at @rel */
static size_t folded_names(const char *rel, char ***out)
{
	const char *path = rtd_test_vector(rel);
	if (!path)
		return 0;
	size_t len = 0;
	char *t = (char *)rtd_test_slurp(path, &len);
	assert_non_null(t);
	t = realloc(t, len + 1);
	t[len] = 0;
	char **names = NULL;
	size_t n = 0;
	for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');
		if (sp)
			*sp = 0;
		char *save = line;
		for (char *f = save; f && *f;) {
			char *semi = strchr(f, ';');
			if (semi)
				*semi = 0;
			bool have = false;
			for (size_t i = 0; i < n; i++)
				have |= !strcmp(names[i], f);
			if (!have) {
				names = realloc(names, (n + 1) * sizeof(*names));
				names[n++] = strdup(f);
			}
			f = semi ? semi + 1 : NULL;
		}
	}
	free(t);
	*out = names;
	return n;
}

/* how many of @names some sample's frame carries; and named frames seen */
static size_t named_in_samples(const char *path, bool prepass, char **names, size_t nnames,
			       uint64_t *named_frames)
{
	RTD_OPTS(rtd_nettrace_source_opts, o, .no_prepass = !prepass);
	rtd_source *s = rtd_nettrace_source_open(path, &o, NULL);
	assert_non_null(s);
	bool *seen = calloc(nnames + 1, 1);
	const struct rtd_record *r;
	*named_frames = 0;
	while (rtd_source_next(s, &r) == 1) {
		if (r->kind != RTD_REC_SAMPLE)
			continue;
		for (uint32_t i = 0; i < r->stack->n; i++) {
			const char *fn = r->stack->frames[i].name;
			if (!fn)
				continue;
			(*named_frames)++;
			for (size_t k = 0; k < nnames; k++)
				if (!seen[k] && !strcmp(fn, names[k]))
					seen[k] = true;
		}
	}
	size_t got = 0;
	for (size_t k = 0; k < nnames; k++)
		got += seen[k];
	free(seen);
	rtd_source_free(s);
	return got;
}

static void test_frame_names(void **st)
{
	(void)st;
	const char *path =
		rtd_test_vector("testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace");
	char **names = NULL;
	size_t nn = folded_names("testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.txt", &names);
	if (!path || !nn)
		skip();
	uint64_t with = 0, without = 0;
	/* dotnetdiag names each of these frames; so do the records */
	assert_int_equal(named_in_samples(path, true, names, nn, &with), nn);
	/* without reading ahead, the rundown at the end comes too late */
	size_t late = named_in_samples(path, false, names, nn, &without);
	printf("frames named: %" PRIu64 " with the read-ahead, %" PRIu64 " without (%zu of %zu "
	       "of dotnetdiag's names)\n", with, without, late, nn);
	assert_true(without < with);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

static void test_truncated(void **st)
{
	(void)st;
	const char *path =
		rtd_test_vector("testdata/nettrace/only_managed_samples.nettrace");
	if (!path)
		skip();
	size_t len = 0;
	uint8_t *b = rtd_test_slurp(path, &len);
	assert_non_null(b);
	size_t cut = len / 2;
	rtd_source *s = rtd_nettrace_source_mem(b, cut, NULL, NULL);
	assert_non_null(s);
	const struct rtd_record *r;
	int rc;
	uint64_t recs = 0;
	while ((rc = rtd_source_next(s, &r)) == 1)
		recs++;
	assert_int_equal(rc, -RTD_E_TRUNCATED);
	assert_int_equal(r->kind, RTD_REC_ERROR);
	assert_int_equal(r->code, -RTD_E_TRUNCATED);
	assert_true(r->offset <= cut);
	assert_true(r->message[0] != 0);
	assert_true(recs > 0);
	/* sticky */
	assert_int_equal(rtd_source_next(s, &r), -RTD_E_TRUNCATED);
	rtd_source_free(s);
	/* options: an unknown non-zero tail is refused */
	struct {
		struct rtd_nettrace_source_opts o;
		int newer;
	} o = {{.sz = sizeof(o)}, 1};
	int err = 0;
	assert_null(rtd_nettrace_source_mem(b, len, &o.o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	assert_null(rtd_nettrace_source_open("/nonexistent/x.nettrace", NULL, &err));
	assert_int_equal(err, -ENOENT);
	free(b);
}

static int count_method(void *ctx, const struct rtd_nettrace_event *ev)
{
	return rtd_nettrace_methods_event(ctx, ev);
}

/* The methods a decoder's pass over @len bytes of @b teaches a table */
static size_t methods_of(const uint8_t *b, size_t len)
{
	rtd_nettrace_methods *m = rtd_nettrace_methods_new();
	assert_non_null(m);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = m, .on_event = count_method};
	rtd_nettrace *d = rtd_nettrace_new(&o);
	assert_non_null(d);
	(void)rtd_nettrace_feed(d, b, len);
	rtd_nettrace_free(d);
	size_t n = rtd_nettrace_methods_count(m);
	rtd_nettrace_methods_free(m);
	return n;
}

/* rtd_nettrace_methods_learn_fd(): a file's every method (the rundown at
 * its end included), its offset left where it was; a cut file what comes
 * before the cut, quietly; a pipe -ESPIPE; bad arguments refused. */
static void test_learn_fd(void **state)
{
	(void)state;
	/* methods jitted and R2R entry points all through it */
	const char *tp = rtd_test_vector("testdata/nettrace/"
					 "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace");
	if (!tp)
		skip();
	size_t len = 0;
	uint8_t *b = rtd_test_slurp(tp, &len);
	assert_non_null(b);
	size_t whole = methods_of(b, len);
	assert_true(whole > 0);
	int fd = open(tp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 123, SEEK_SET), 123);
	rtd_nettrace_methods *m = rtd_nettrace_methods_new();
	assert_non_null(m);
	assert_int_equal(rtd_nettrace_methods_learn_fd(m, fd), 0);
	assert_int_equal(rtd_nettrace_methods_count(m), whole);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 123);
	close(fd);
	rtd_nettrace_methods_free(m);

	/* cut halfway: fewer, no error */
	char cutp[] = "/tmp/rtd-learn-XXXXXX";
	fd = mkstemp(cutp);
	assert_true(fd >= 0);
	unlink(cutp);
	size_t cut = len / 2;
	assert_int_equal(write(fd, b, cut), (ssize_t)cut);
	size_t part = methods_of(b, cut);
	assert_true(part > 0 && part < whole);
	m = rtd_nettrace_methods_new();
	assert_int_equal(rtd_nettrace_methods_learn_fd(m, fd), 0);
	assert_int_equal(rtd_nettrace_methods_count(m), part);
	close(fd);
	printf("ok: learn_fd %zu methods, cut at %zu of %zu bytes %zu\n", whole, cut, len, part);

	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(rtd_nettrace_methods_learn_fd(m, pfd[0]), -ESPIPE);
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(rtd_nettrace_methods_learn_fd(NULL, 0), -RTD_E_INVAL);
	assert_int_equal(rtd_nettrace_methods_learn_fd(m, -1), -RTD_E_INVAL);
	rtd_nettrace_methods_free(m);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_learn_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
