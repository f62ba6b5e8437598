/* SPDX-License-Identifier: MIT */
/*
 * test_goan_run.c - rtd_goan_run: the analyses fed from a decoder on a
 * thread of its own give the same answers as one thread, on every shared
 * vector and fuzz corpus trace (old ones take the one-thread path; Go
 * 1.22+ ones the threaded one, with chunks of a few events so that the
 * hand-over and the generation barrier run many times), and the decoder's
 * error after the same events.
 */
#include "test_gotrace.h"

#include <stdarg.h>

#include "rtdiag/goanalysis.h"

/* ---- everything the analyses answer, as text -------------------------------- */

struct text {
	char *s;
	size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	if (!t->s) {
		t->cap = 4096;
		assert_non_null(t->s = malloc(t->cap));
	}
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
		assert_true(k >= 0);
		if ((size_t)k < t->cap - t->n) {
			t->n += (size_t)k;
			return;
		}
		t->cap = t->cap * 2 + (size_t)k + 256;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
}

static void put_stats(struct text *t, const struct rtd_goan_stat *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(t, " %s=%lld%s", st[i].name, (long long)st[i].ns, st[i].overlaps ? "+" : "");
	put(t, "\n");
}

static void on_g(const struct rtd_goan_goroutine *g, void *ctx)
{
	struct text *t = ctx;
	put(t, "g %llu %s %llx %lld %lld %lld %lld %lld", (unsigned long long)g->id, g->name,
	    (unsigned long long)g->pc, (long long)g->creation, (long long)g->start,
	    (long long)g->end, (long long)g->total, (long long)g->exec);
	put_stats(t, g->stats, g->nstats);
}

static void on_r(const struct rtd_goan_region *r, void *ctx)
{
	struct text *t = ctx;
	put(t, "r %llu %llu %s %lld %lld %s %llx", (unsigned long long)r->g,
	    (unsigned long long)r->task, r->name, (long long)r->start, (long long)r->end,
	    r->frame_fn, (unsigned long long)r->frame_pc);
	put_stats(t, r->stats, r->nstats);
}

static void on_t(const struct rtd_goan_task *k, void *ctx)
{
	struct text *t = ctx;
	put(t, "t %llu %s %llu %lld %lld %llu %llu %llu", (unsigned long long)k->id, k->name,
	    (unsigned long long)k->parent, (long long)k->start, (long long)k->end,
	    (unsigned long long)k->goroutines, (unsigned long long)k->regions,
	    (unsigned long long)k->logs);
	put_stats(t, k->stats, k->nstats);
}

static void on_gc(const struct rtd_goan_gc *gc, void *ctx)
{
	struct text *t = ctx;
	put(t, "gc %d %llu %lld %lld %s %d\n", gc->stw, (unsigned long long)gc->seq,
	    (long long)gc->start, (long long)gc->end, gc->reason, gc->gc);
}

static int on_rec(const struct rtd_goframe *f, size_t n, uint64_t count, int64_t ns, void *ctx)
{
	struct text *t = ctx;
	put(t, "rec %llu %lld", (unsigned long long)count, (long long)ns);
	for (size_t i = 0; i < n; i++)
		put(t, " %llx:%s:%s:%llu", (unsigned long long)f[i].pc, f[i].fn, f[i].file,
		    (unsigned long long)f[i].line);
	put(t, "\n");
	return 0;
}

/* groups come in no set order: one line each, sorted after */
static int on_group(const struct rtd_goan_group *g, void *ctx)
{
	struct text *t = ctx;
	put(t, "group %s %llx %llu %lld %lld", g->name, (unsigned long long)g->pc,
	    (unsigned long long)g->count, (long long)g->exec, (long long)g->total);
	put_stats(t, g->stats, g->nstats);
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put_sorted(struct text *t, char *lines)
{
	char *v[4096];
	size_t n = 0;
	for (char *p = strtok(lines, "\n"); p && n < 4096; p = strtok(NULL, "\n"))
		v[n++] = p;
	qsort(v, n, sizeof(*v), cmp_line);
	for (size_t i = 0; i < n; i++)
		put(t, "%s\n", v[i]);
}

/* ---- one run ------------------------------------------------------------------ */

/* Everything the analyses say about a trace, with rtd_goan_run's @flags
 * (0: one thread); @ran_threaded: whether the version takes the thread. */
static char *analyse(const uint8_t *b, size_t n, unsigned sem, unsigned flags,
		     bool *ran_threaded)
{
	struct rtd_gotrace_opts dopt = {.sz = sizeof(dopt), .mode = RTD_GOTRACE_ORDERED};
	struct rtd_test_gosrc s = {.d = rtd_gotrace_dec_new(&dopt), .b = b, .n = n, .step = 4096};
	assert_non_null(s.d);
	struct text t = {0};
	put(&t, "start\n");
	struct rtd_gotrace_event ev;
	int rc = rtd_test_gosrc_next(&s, &ev);
	if (rc <= 0) {
		put(&t, "no events: %d %s\n", rc, rc < 0 ? rtd_gotrace_dec_error(s.d, NULL) : "");
		rtd_gotrace_dec_free(s.d);
		return t.s;
	}
	const int64_t windows[] = {1, 1000, 1000000, 10000000, 1000000000};
	struct rtd_goan_opts o = {
		.sz = sizeof(o),
		.what = RTD_GOAN_PPROF | RTD_GOAN_GOROUTINES | RTD_GOAN_GC | RTD_GOAN_TASKS,
		.profiles = (1u << RTD_GOAN_PROF_COUNT) - 1,
		.semantics = sem,
		.mmu_windows = windows,
		.n_mmu_windows = 5,
		.on_goroutine = on_g, .on_region = on_r, .on_task = on_t, .on_gc = on_gc,
		.ctx = &t,
	};
	rtd_goan *a = rtd_goan_new(s.d, &o);
	if (!a) {
		put(&t, "new: %s\n", rtd_goan_new_error());
		rtd_gotrace_dec_free(s.d);
		return t.s;
	}
	*ran_threaded = rtd_gotrace_dec_version(s.d) >= 1022;
	int arc = rtd_goan_feed(a, &ev), drc = 0;
	if (arc == 0)
		arc = rtd_goan_run(a, rtd_test_gosrc_next, &s, flags, &drc);
	put(&t, "run %d %d %s\n", arc, drc, arc < 0 ? rtd_goan_error(a) : "");
	if (drc < 0) {
		uint64_t off;
		const char *m = rtd_gotrace_dec_error(s.d, &off);
		put(&t, "decoder: %s at %llu\n", m, (unsigned long long)off);
	}
	if (arc == 0) {
		rc = rtd_goan_finish(a);
		put(&t, "finish %d %s\n", rc, rc < 0 ? rtd_goan_error(a) : "");
		for (unsigned p = 0; p < RTD_GOAN_PROF_COUNT && rc == 0; p++) {
			uint64_t cnt = 0;
			int64_t ns = 0;
			put(&t, "profile %u %d", p, rtd_goan_profile_total(a, p, &cnt, &ns));
			put(&t, " %llu %lld\n", (unsigned long long)cnt, (long long)ns);
			rtd_goan_profile_foreach(a, p, on_rec, &t);
		}
		for (size_t i = 0; i < 5 && rc == 0; i++)
			put(&t, "mmu %zu %.17g\n", i, rtd_goan_mmu(a, i, NULL));
		struct text g = {0};
		put(&g, "%s", "");
		rtd_goan_groups_foreach(a, on_group, &g);
		put_sorted(&t, g.s);
		free(g.s);
		int64_t first = 0, last = 0;
		uint64_t nev = rtd_goan_trace_bounds(a, &first, &last);
		put(&t, "bounds %llu %lld %lld\n", (unsigned long long)nev, (long long)first,
		    (long long)last);
	}
	rtd_goan_free(a);
	rtd_gotrace_dec_free(s.d);
	return t.s;
}

static size_t threaded; /* traces that ran on two threads */

static void same_answers(const uint8_t *b, size_t n, const char *name)
{
	/* Go 1.23's semantics on old traces: the small ones (time under ASan) */
	bool v2 = n > 6 && memcmp(b, "go 1.2", 6) == 0;
	for (int k = 0; k < (v2 || n < 65536 ? 2 : 1); k++) {
		unsigned sem = k ? RTD_GOAN_GO123 : RTD_GOAN_AUTO;
		bool thr = false;
		char *one = analyse(b, n, sem, 0, &thr);
		char *two = analyse(b, n, sem,
				    RTD_GOAN_RUN_THREAD | RTD_GOAN_RUN_ANY_CPUS | RTD_GOAN_RUN_SMALL_CHUNKS,
				    &thr);
		/* the CLI's way: the decoder's events passed through untouched */
		char *big = analyse(b, n, sem,
				    RTD_GOAN_RUN_THREAD | RTD_GOAN_RUN_ANY_CPUS | RTD_GOAN_RUN_DEC_NEXT,
				    &thr);
		if (strcmp(one, two) != 0 || strcmp(one, big) != 0)
			print_message("%s (semantics %u):\n--- one thread:\n%s\n--- two:\n%s\n", name,
				      sem, one, strcmp(one, two) ? two : big);
		assert_string_equal(one, two);
		assert_string_equal(one, big);
		assert_true(strlen(one) > 6);
		if (thr && k == 0)
			threaded++;
		free(one);
		free(two);
		free(big);
	}
}

static void test_old_vectors(void **state)
{
	(void)state;
	rtd_test_go_old_traces(same_answers);
}

/* golang/exp's Go 1.22+ vectors (text), the failing ones too */
static void test_v2_vectors(void **state)
{
	(void)state;
	size_t before = threaded;
	rtd_test_go_v2_traces(same_answers);
	assert_true(threaded - before >= 20);
}

/* the fuzz corpora: real Go 1.19-1.23 traces (several of the test
 * programs'), truncated and damaged ones */
static void test_corpora(void **state)
{
	(void)state;
	size_t before = threaded;
	rtd_test_go_corpora(same_answers);
	assert_true(threaded - before >= 20);
}

/* ---- the events themselves (rtd_gotrace_run) ------------------------------------ */

/* Every field of each event rtd_gotrace_run hands over (not raw: it is not
 * passed on), the strings by content, the stack it names by its frames. */
struct evdump {
	struct text t;
	const rtd_gotrace_dec *d;
};

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

static int dump_event(void *ctx, const struct rtd_gotrace_event *ev)
{
	struct evdump *e = ctx;
	struct text *t = &e->t;
	put(t, "%llu %u %s ts=%lld tk=%lld sq=%lld p=%lld g=%llu m=%lld gen=%llu st=%llu",
	    (unsigned long long)ev->off, ev->type, nz(ev->name), (long long)ev->ts,
	    (long long)ev->ticks, (long long)ev->seq, (long long)ev->p, (unsigned long long)ev->g,
	    (long long)ev->m, (unsigned long long)ev->gen, (unsigned long long)ev->stack);
	put(t, " a%u", ev->nargs);
	for (unsigned i = 0; i < ev->nargs && i < RTD_GOTRACE_MAX_ARGS; i++)
		put(t, " %s=%llu", ev->argnames ? nz(ev->argnames[i]) : "-",
		    (unsigned long long)ev->args[i]);
	put(t, " s%u", ev->nsargs);
	for (unsigned i = 0; i < ev->nsargs && i < 2; i++)
		put(t, " %s=%.*s/%zu", ev->sargnames ? nz(ev->sargnames[i]) : "-",
		    (int)ev->sarg_lens[i], ev->sargs[i] ? ev->sargs[i] : "", ev->sarg_lens[i]);
	put(t, " str=%llu:%.*s f=%zu", (unsigned long long)ev->str_id, (int)ev->str_len,
	    ev->str ? ev->str : "", ev->nframes);
	const struct rtd_gotrace_frame *fr = NULL;
	size_t nf = ev->stack ? rtd_gotrace_dec_stack(e->d, ev->stack, &fr) : 0;
	put(t, " stack%zu", nf);
	for (size_t i = 0; i < nf; i++)
		put(t, " %llx:%s:%s:%llu", (unsigned long long)fr[i].pc, nz(fr[i].fn),
		    nz(fr[i].file), (unsigned long long)fr[i].line);
	put(t, "\n");
	return 0;
}

static char *events_of(const uint8_t *b, size_t n, unsigned flags)
{
	struct rtd_gotrace_opts dopt = {.sz = sizeof(dopt), .mode = RTD_GOTRACE_ORDERED};
	struct rtd_test_gosrc s = {.d = rtd_gotrace_dec_new(&dopt), .b = b, .n = n, .step = 4096};
	assert_non_null(s.d);
	struct evdump e = {.d = s.d};
	put(&e.t, "start\n");
	struct rtd_gotrace_event ev;
	int drc = rtd_test_gosrc_next(&s, &ev), arc = 0;
	if (drc > 0)
		arc = dump_event(&e, &ev);
	if (drc > 0 && arc == 0)
		arc = rtd_gotrace_run(s.d, rtd_test_gosrc_next, &s, dump_event, &e, flags, &drc);
	put(&e.t, "run %d dec %d '%s'\n", arc, drc, drc < 0 ? rtd_gotrace_dec_error(s.d, NULL) : "");
	rtd_gotrace_dec_free(s.d);
	return e.t.s;
}

static size_t compared; /* Go 1.22+ traces whose events were compared */

static void same_events(const uint8_t *b, size_t n, const char *name)
{
	if (!(n > 6 && memcmp(b, "go 1.2", 6) == 0))
		return; /* old traces take one thread */
	const unsigned thr = RTD_GOTRACE_RUN_THREAD | RTD_GOTRACE_RUN_ANY_CPUS |
			     RTD_GOTRACE_RUN_DEC_NEXT;
	char *one = events_of(b, n, 0);
	char *small = events_of(b, n, thr | RTD_GOTRACE_RUN_SMALL_CHUNKS);
	char *big = events_of(b, n, thr);
	if (strcmp(one, small) != 0 || strcmp(one, big) != 0)
		print_message("%s: events differ with the compact hand-over\n", name);
	assert_string_equal(one, small);
	assert_string_equal(one, big);
	assert_true(strlen(one) > 40);
	compared++;
	free(one);
	free(small);
	free(big);
}

/* RTD_GOTRACE_RUN_DEC_NEXT: the events built on the consumer's thread from
 * the ordering's entries are the decoder's own, field by field */
static void test_compact_events(void **state)
{
	(void)state;
	const char *dir = rtd_test_vector("testdata/gotrace/v2");
	const char *g = rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/gotrace");
	const char *a = rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/goanalysis");
	if (!dir || !g || !a)
		skip();
	assert_true(rtd_test_each_go_vector(dir, false, same_events) >= 20);
	rtd_test_each_file(g, same_events);
	rtd_test_each_file(a, same_events);
	assert_true(compared >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_vectors),
		cmocka_unit_test(test_v2_vectors),
		cmocka_unit_test(test_corpora),
		cmocka_unit_test(test_compact_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
