/* SPDX-License-Identifier: MIT */
/*
 * test_gotrace_records.c - a Go trace drawn as a timeline through the Go
 * source's records (rtd_gotrace_source_opts.go_events into
 * rtd_tl_gotrace_record) gives the bytes of a golden list (each
 * timeline's length and hash, made when the test also drew the decoder's
 * events and found them the same), and the same bytes
 * whether the source reads the trace where it lies (a file or memory:
 * read again where the ordering asks) or once from a stream in small
 * pieces (a pipe, rtd_gotrace_source_reader()): Perfetto and Chrome JSON,
 * for every shared vector (golang/exp's Go 1.22+ .test vectors made
 * binary) and every gotrace/goanalysis fuzz corpus trace, damaged ones
 * included (the same bytes before the damage and the same error record).
 */
#include "test_gotrace.h"

#include "rtdiag/gotrace_source.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/timeline.h"

struct stream {
	const uint8_t *b;
	size_t n, at, step;
};

static int64_t stream_read(void *ctx, void *buf, size_t len)
{
	struct stream *st = ctx;
	size_t k = st->n - st->at;
	if (k > len)
		k = len;
	if (k > st->step)
		k = st->step;
	memcpy(buf, st->b + st->at, k);
	st->at += k;
	return (int64_t)k;
}

/* The timeline of a trace, then a line with the source's answer, the
 * records drawn and the error record; *len gets the whole length. */
static char *draw(const uint8_t *b, size_t n, enum rtd_timeline_format fmt, bool piecewise,
		  size_t *len)
{
	char *out = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&out, &sz);
	assert_non_null(f);
	struct rtd_timeline_opts o = {.sz = sizeof(o), .format = fmt, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	assert_non_null(tl);
	/* the stream's records carry only the fields the timeline reads:
	 * the same bytes */
	RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true,
		 .field_want = piecewise ? rtd_tl_gotrace_fields : NULL);
	struct stream st = {.b = b, .n = n, .step = 4093};
	rtd_source *src = piecewise ? rtd_gotrace_source_reader(stream_read, &st, &so, NULL)
				    : rtd_gotrace_source_mem(b, n, &so, NULL);
	assert_non_null(src);
	rtd_tl_gotrace *a = rtd_tl_gotrace_new(tl, "t");
	assert_non_null(a);
	const struct rtd_record *r = NULL;
	unsigned long long records = 0;
	int rc, arc = 0;
	while ((rc = rtd_source_next(src, &r)) == 1 && (arc = rtd_tl_gotrace_record(a, r)) == 0)
		records++;
	int frc = rtd_timeline_finish(tl);
	rtd_tl_gotrace_free(a);
	rtd_timeline_free(tl);
	fprintf(f, "\n-- draw %d source %d finish %d records %llu error '%s'\n", arc, rc, frc,
		records, rc < 0 ? r->message : "");
	rtd_source_free(src);
	assert_int_equal(fclose(f), 0);
	*len = sz;
	return out;
}

/* Every timeline drawn, as a line "GROUP NAME FORMAT BYTES FNV-1a", kept
 * per test case and compared with tests/unit/timeline/data/gotrace.golden
 * (its lines of that group; UPDATE_GOLDEN=1 rewrites the group's): the
 * bytes the CLI's timeline of each trace had when the decoder's events
 * drew it */
static char **lines;
static size_t nlines;
static const char *group;

static void note_drawn(const char *name, int fmt, const char *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)b[i]) * 0x100000001b3ull;
	char **l = realloc(lines, (nlines + 1) * sizeof(*l));
	assert_non_null(l);
	lines = l;
	const char *base = strrchr(name, '/');
	char line[512];
	snprintf(line, sizeof(line), "%s %s %s %zu %016llx\n", group, base ? base + 1 : name,
		 rtd_timeline_format_name(fmt), n, (unsigned long long)h);
	lines[nlines] = strdup(line);
	assert_non_null(lines[nlines++]);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The group's lines, sorted, against the golden file's lines of it */
static void golden_check(void)
{
	const char *rel = "tests/unit/timeline/data/gotrace.golden";
	const char *path = rtd_test_path("RTD_SOURCE_DIR", rel);
	assert_non_null(path);
	qsort(lines, nlines, sizeof(*lines), by_text);
	size_t gl = strlen(group), n = 0;
	uint8_t *old = rtd_test_slurp(path, &n);
	char *others = NULL, *want = NULL, *got = NULL;
	size_t nothers = 0, nwant = 0, ngot = 0;
	FILE *o = open_memstream(&others, &nothers), *w = open_memstream(&want, &nwant),
	     *g = open_memstream(&got, &ngot);
	assert_true(o && w && g);
	for (size_t i = 0; i < n;) {
		const char *l = (const char *)old + i, *e = memchr(l, '\n', n - i);
		size_t k = e ? (size_t)(e - l) + 1 : n - i;
		bool mine = k > gl && !memcmp(l, group, gl) && l[gl] == ' ';
		fwrite(l, 1, k, mine ? w : o);
		i += k;
	}
	for (size_t i = 0; i < nlines; i++) {
		fputs(lines[i], g);
		fputs(lines[i], o);
		free(lines[i]);
	}
	free(lines);
	lines = NULL;
	nlines = 0;
	fclose(o);
	fclose(w);
	fclose(g);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(others, 1, nothers, f), nothers);
		fclose(f);
	} else if (nwant != ngot || memcmp(want, got, ngot)) {
		fprintf(stderr, "%s: group %s differs (UPDATE_GOLDEN=1 to refresh):\n%s", rel,
			group, got);
		fail();
	}
	free(old);
	free(others);
	free(want);
	free(got);
}

static size_t threaded; /* Go 1.22+ traces */
static size_t drawn;    /* bytes of timelines compared */

static void same_bytes(const uint8_t *b, size_t n, const char *name)
{
	bool v2 = n > 6 && memcmp(b, "go 1.2", 6) == 0;
	for (int fmt = RTD_TIMELINE_FMT_PERFETTO; fmt <= RTD_TIMELINE_FMT_CHROME_JSON; fmt++) {
		/* the old recordings are the large ones: Perfetto only (the
		 * time under ASan) */
		if (!v2 && fmt != RTD_TIMELINE_FMT_PERFETTO)
			break;
		size_t n1, n2;
		char *whole = draw(b, n, fmt, false, &n1);
		char *pieces = draw(b, n, fmt, true, &n2);
		if (n1 != n2 || memcmp(whole, pieces, n1))
			print_message("%s (%s): whole %zu bytes, a stream %zu\n", name,
				      rtd_timeline_format_name(fmt), n1, n2);
		assert_int_equal(n1, n2);
		assert_memory_equal(whole, pieces, n1);
		note_drawn(name, fmt, whole, n1);
		drawn += n1;
		free(whole);
		free(pieces);
	}
	if (v2)
		threaded++;
}

static void old_vectors(void **state)
{
	(void)state;
	size_t before = drawn;
	group = "old";
	rtd_test_go_old_traces(same_bytes);
	assert_true(drawn - before > (1u << 20));
	golden_check();
}

/* golang/exp's Go 1.22+ vectors (text, made binary), the failing ones too */
static void v2_vectors(void **state)
{
	(void)state;
	size_t before = threaded, bytes = drawn;
	group = "v2";
	rtd_test_go_v2_traces(same_bytes);
	assert_true(threaded - before >= 20);
	assert_true(drawn - bytes > (64u << 10));
	golden_check();
}

/* the fuzz corpora: real Go 1.19-1.23 traces, truncated and damaged ones */
static void corpora(void **state)
{
	(void)state;
	size_t before = threaded, bytes = drawn;
	group = "corpus";
	rtd_test_go_corpora(same_bytes);
	assert_true(threaded - before >= 20);
	assert_true(drawn - bytes > (1u << 20));
	golden_check();
}

static bool no_stacks(void *ctx, const char *event, const char *field)
{
	(void)ctx;
	(void)event;
	return strcmp(field, "stack") != 0;
}

/* A field the consumer refuses is not in the records (a stack argument
 * with its "NAME.fn"), the others are, in the decoder's order: GoStart
 * (g, g_seq) and GoUnblock (g, g_seq, stack) of every Go 1.22+ trace */
static const char *const kept[3][2][8] = {
	{{"ev.g", "ev.p", "ev.m", "g", "g_seq"},
	 {"ev.g", "ev.p", "ev.m", "g", "g_seq", "stack", "stack.fn"}},
	{{"ev.g", "ev.p", "ev.m", "g", "g_seq"}, {"ev.g", "ev.p", "ev.m", "g", "g_seq"}},
	{{"ev.g", "ev.p", "ev.m", "g"}, {"ev.g", "ev.p", "ev.m", "g"}}, /* the timeline's */
};
static size_t checked;

static void check_fields(const uint8_t *b, size_t n, const char *name)
{
	(void)name;
	if (n < 6 || memcmp(b, "go 1.2", 6))
		return;
	for (int pass = 0; pass < 3; pass++) {
		bool (*want)(void *, const char *, const char *) =
			pass == 0 ? NULL : pass == 1 ? no_stacks : rtd_tl_gotrace_fields;
		RTD_OPTS(rtd_gotrace_source_opts, so, .go_events = true, .field_want = want);
		rtd_source *src = rtd_gotrace_source_mem(b, n, &so, NULL);
		assert_non_null(src);
		const struct rtd_record *r;
		while (rtd_source_next(src, &r) == 1) {
			if (r->kind != RTD_REC_INSTANT)
				continue;
			int ix = !strcmp(r->name, "GoStart") ? 0 : !strcmp(r->name, "GoUnblock") ? 1 : -1;
			if (ix < 0)
				continue;
			const char *const *k = kept[pass][ix];
			size_t i = 0;
			for (; k[i]; i++) {
				assert_true(i < r->nfields);
				assert_string_equal(r->fields[i].name, k[i]);
			}
			assert_int_equal(r->nfields, i);
			checked++;
		}
		rtd_source_free(src);
	}
}

static void fields_wanted(void **state)
{
	(void)state;
	rtd_test_go_v2_traces(check_fields);
	assert_true(checked > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_vectors),
		cmocka_unit_test(v2_vectors),
		cmocka_unit_test(corpora),
		cmocka_unit_test(fields_wanted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
