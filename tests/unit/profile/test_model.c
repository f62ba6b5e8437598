/* SPDX-License-Identifier: MIT */
/*
 * The extended profile model: several sample types, structured frames with
 * mappings and inlines, threads and labels, metadata, merge and reset, the
 * write dispatch. pprof output is read back by a real consumer,
 * `go tool pprof -raw` from Debian's Go, when it is installed.
 */
#include "test_util.h"

#include <errno.h>
#include <sys/resource.h>

#include "rtdiag/profile.h"
#include "rtdiag/source.h"

static const struct rtd_profile_type two_types[] = {
	{"samples", "count"},
	{"cpu", "nanoseconds"},
};

static rtd_profile *new_two(void)
{
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = two_types,
				     .ntypes = 2, .default_type = 1,
				     .period_type = {"cpu", "nanoseconds"},
				     .period = 10000000};
	rtd_profile *p = rtd_profile_new2(&o);
	assert_non_null(p);
	return p;
}

static char *write_str(const rtd_profile *p, enum rtd_profile_format fmt,
		       const struct rtd_profile_write_opts *o, int want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write(p, fmt, f, o), want);
	fclose(f);
	return buf;
}

static void add(rtd_profile *p, const struct rtd_frame *fr, size_t n,
		int64_t count, int64_t ns, int64_t tid, const char *thread)
{
	int64_t v[2] = {count, ns};
	struct rtd_sample s = {.sz = sizeof(s), .frames = fr, .nframes = n,
			       .leaf_first = true, .values = v, .nvalues = 2,
			       .pid = tid ? 42 : 0, .tid = tid, .thread = thread};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
}

static void types_and_opts(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	assert_int_equal(rtd_profile_ntypes(p), 2);
	assert_string_equal(rtd_profile_get_type(p, 1)->unit, "nanoseconds");
	assert_null(rtd_profile_get_type(p, 2));
	assert_int_equal(rtd_profile_find_type(p, "samples"), 0);
	assert_int_equal(rtd_profile_find_type(p, NULL), 1);
	assert_int_equal(rtd_profile_find_type(p, "alloc"), -RTD_E_NOTFOUND);
	assert_int_equal(rtd_profile_default_type(p), 1);
	rtd_profile_free(p);

	struct rtd_profile_opts bad = {.sz = sizeof(bad), .types = two_types,
				       .ntypes = 2, .default_type = 2};
	assert_null(rtd_profile_new2(&bad));
	bad.default_type = 0;
	bad.ntypes = 0;
	assert_null(rtd_profile_new2(&bad));
	bad.ntypes = RTD_PROFILE_MAX_TYPES + 1;
	assert_null(rtd_profile_new2(&bad));
	assert_null(rtd_profile_new2(NULL));
}

static void values_per_type(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	struct rtd_frame a[] = {{.name = "leaf"}, {.name = "main"}};
	add(p, a, 2, 1, 100, 0, NULL);
	add(p, a, 2, 2, 250, 0, NULL);
	add(p, a + 1, 1, 1, 7, 0, NULL);
	assert_int_equal(rtd_profile_total(p), 357);
	assert_int_equal(rtd_profile_total_of(p, 0), 4);
	assert_int_equal(rtd_profile_total_of(p, 9), 0);
	char *t = write_str(p, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(t, "main 7\nmain;leaf 350\n");
	free(t);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .type = "samples"};
	t = write_str(p, RTD_PROFILE_FMT_FOLDED, &o, 0);
	assert_string_equal(t, "main 1\nmain;leaf 3\n");
	free(t);
	o.type = "nope";
	t = write_str(p, RTD_PROFILE_FMT_FOLDED, &o, -RTD_E_NOTFOUND);
	free(t);
	/* fewer values than types: the rest are 0; more is an error */
	int64_t one = 5, three[3] = {1, 2, 3};
	struct rtd_sample s = {.sz = sizeof(s), .frames = a, .nframes = 1,
			       .values = &one, .nvalues = 1};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	assert_int_equal(rtd_profile_total_of(p, 0), 9);
	assert_int_equal(rtd_profile_total_of(p, 1), 357);
	s.values = three;
	s.nvalues = 3;
	assert_int_equal(rtd_profile_add_sample(p, &s), -RTD_E_INVAL);
	s.nvalues = 1;
	s.nframes = 2;
	s.frames = NULL;
	assert_int_equal(rtd_profile_add_sample(p, &s), -RTD_E_INVAL);
	struct rtd_frame badmap = {.name = "x", .mapping = 3};
	s.frames = &badmap;
	s.nframes = 1;
	assert_int_equal(rtd_profile_add_sample(p, &s), -RTD_E_INVAL);
	struct rtd_profile_stats st;
	rtd_profile_get_stats(p, &st);
	assert_int_equal(st.samples, 4);
	rtd_profile_free(p);
}

/* Display names of unsymbolized frames; same-name frames merge in the
 * function-level views while pprof keeps them apart. */
static void frames_and_names(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	int m = rtd_profile_add_mapping(p, 0x400000, 0x500000, 0x1000,
					"/usr/lib/libfoo.so", "abcdef01");
	assert_int_equal(m, 1);
	assert_int_equal(rtd_profile_add_mapping(p, 0x400000, 0x500000, 0x1000,
						 "/usr/lib/libfoo.so",
						 "abcdef01"),
			 1);
	assert_int_equal(rtd_profile_add_mapping(p, 0x600000, 0x700000, 0,
						 NULL, NULL),
			 2);
	struct rtd_frame f1[] = {
		{.addr = 0x401234, .mapping = 1, .kind = RTD_FRAME_NATIVE},
		{.name = "main", .addr = 0x400100, .mapping = 1},
	};
	struct rtd_frame f2[] = {
		{.addr = 0x77, .module = "[kernel]", .kind = RTD_FRAME_KERNEL},
		{.name = "main", .addr = 0x400200, .mapping = 1},
	};
	struct rtd_frame f3[] = {{.addr = 0xdead}, {.module = "libbar.so"},
				 {.name = ""}};
	struct rtd_frame f4[] = {{.addr = 0x600010, .mapping = 2}};
	int64_t v = 10;
	struct rtd_sample s = {.sz = sizeof(s), .frames = f1, .nframes = 2,
			       .leaf_first = true, .values = &v, .nvalues = 1};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	s.frames = f2;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	s.frames = f3;
	s.nframes = 3;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	s.frames = f4;
	s.nframes = 1;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	char *t = write_str(p, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(t, "0x600010 10\n"
			       "[unknown];libbar.so;0xdead 10\n"
			       "main;[kernel]+0x77 10\n"
			       "main;libfoo.so+0x2234 10\n");
	free(t);
	struct rtd_profile_entry e[8];
	int n = rtd_profile_top(p, e, 8);
	assert_int_equal(n, 7);
	bool saw_main = false;
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, "main")) {
			/* two frames (two addresses), one function */
			assert_int_equal(e[i].total, 20);
			assert_int_equal(e[i].self, 0);
			saw_main = true;
		}
	assert_true(saw_main);
	struct rtd_profile_stats st;
	rtd_profile_get_stats(p, &st);
	assert_int_equal(st.frames, 8);
	assert_int_equal(st.mappings, 2);
	assert_int_equal(st.stacks, 4);
	assert_string_equal(rtd_frame_kind_name(RTD_FRAME_MANAGED), "managed");
	assert_string_equal(rtd_frame_kind_name(99), "unknown");
	rtd_profile_free(p);
}

static void threads_labels_roots(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	struct rtd_frame a[] = {{.name = "work"}, {.name = "main"}};
	add(p, a, 2, 1, 10, 101, "worker");
	add(p, a, 2, 1, 10, 101, "worker");
	add(p, a, 2, 1, 5, 102, NULL);
	add(p, a, 2, 1, 1, 0, NULL);
	struct rtd_label lab[] = {{.key = "span", .str = "abc"},
				  {.key = "bytes", .num = 64, .unit = "bytes"}};
	int64_t v[2] = {1, 3};
	struct rtd_sample s = {.sz = sizeof(s), .frames = a, .nframes = 2,
			       .leaf_first = true, .values = v, .nvalues = 2,
			       .labels = lab, .nlabels = 2};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	/* the same labels in another order are the same context */
	struct rtd_label lab2[] = {lab[1], lab[0]};
	s.labels = lab2;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	struct rtd_profile_stats st;
	rtd_profile_get_stats(p, &st);
	assert_int_equal(st.contexts, 4);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.stacks, 4);
	/* merged by function in folded */
	char *t = write_str(p, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(t, "main;work 32\n");
	free(t);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .thread_roots = true};
	t = write_str(p, RTD_PROFILE_FMT_FOLDED, &o, 0);
	assert_string_equal(t, "main;work 7\n"
			       "thread 102;main;work 5\n"
			       "worker (tid 101);main;work 20\n");
	free(t);
	struct rtd_label toomany[RTD_PROFILE_MAX_LABELS + 1];
	for (size_t i = 0; i < RTD_PROFILE_MAX_LABELS + 1; i++)
		toomany[i] = (struct rtd_label){.key = "k", .num = (int64_t)i};
	s.labels = toomany;
	s.nlabels = RTD_PROFILE_MAX_LABELS + 1;
	assert_int_equal(rtd_profile_add_sample(p, &s), -RTD_E_CAP);
	rtd_profile_free(p);
}

static void meta(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new(NULL, NULL);
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf",
				     .pid = 7, .time_nanos = 1000};
	assert_int_equal(rtd_profile_set_meta(p, &m), 0);
	struct rtd_profile_meta m2 = {.sz = sizeof(m2), .process = "app",
				      .duration_nanos = 500};
	assert_int_equal(rtd_profile_set_meta(p, &m2), 0);
	struct rtd_profile_meta g = {.sz = sizeof(g)};
	rtd_profile_get_meta(p, &g);
	assert_string_equal(g.source, "perf");
	assert_string_equal(g.process, "app");
	assert_null(g.comment);
	assert_int_equal(g.pid, 7);
	assert_int_equal(g.time_nanos, 1000);
	assert_int_equal(g.duration_nanos, 500);
	assert_int_equal(rtd_profile_set_meta(p, NULL), -RTD_E_INVAL);
	rtd_profile_free(p);
}

/* rtd_sample and rtd_profile_meta are checked as every struct of libbpf's
 * shape (rtd_opts_check()): an older caller's shorter struct (the first
 * version's fields) is read with the rest as zero, a newer caller's
 * longer one only when its bytes past this version's fields are zero. */
static void struct_versions(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	struct rtd_frame a[] = {{.name = "work"}, {.name = "main"}};
	int64_t v[2] = {1, 3};
	struct {
		struct rtd_sample s;
		uint64_t newer[2];
	} big = {.s = {.sz = sizeof(big), .frames = a, .nframes = 2, .leaf_first = true,
		       .values = v, .nvalues = 2}};
	assert_int_equal(rtd_profile_add_sample(p, &big.s), 0); /* zero tail */
	big.newer[1] = 1;
	assert_int_equal(rtd_profile_add_sample(p, &big.s), -RTD_E_INVAL);
	/* the first version's struct: no thread, no labels */
	struct rtd_sample old = {.sz = RTD_OPTS_END(rtd_sample, nvalues), .frames = a,
				 .nframes = 2, .leaf_first = true, .values = v, .nvalues = 2};
	assert_int_equal(rtd_profile_add_sample(p, &old), 0);
	old.sz = RTD_OPTS_END(rtd_sample, values);
	assert_int_equal(rtd_profile_add_sample(p, &old), -RTD_E_INVAL);
	char *t = write_str(p, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(t, "main;work 6\n");
	free(t);
	struct {
		struct rtd_profile_meta m;
		uint64_t newer;
	} mb = {.m = {.sz = sizeof(mb), .source = "perf", .comment = "hi"}};
	assert_int_equal(rtd_profile_set_meta(p, &mb.m), 0);
	mb.newer = 7;
	mb.m.source = "other";
	assert_int_equal(rtd_profile_set_meta(p, &mb.m), -RTD_E_INVAL);
	struct rtd_profile_meta om = {.sz = RTD_OPTS_END(rtd_profile_meta, duration_nanos),
				      .source = "old", .comment = "not read"};
	assert_int_equal(rtd_profile_set_meta(p, &om), 0);
	struct rtd_profile_meta g = {.sz = sizeof(g)};
	rtd_profile_get_meta(p, &g);
	assert_string_equal(g.source, "old");
	assert_string_equal(g.comment, "hi");
	rtd_profile_free(p);
}

static void merge_and_reset(void **state)
{
	(void)state;
	rtd_profile *all = new_two(), *a = new_two(), *b = new_two();
	int ma = rtd_profile_add_mapping(a, 0x1000, 0x2000, 0, "/bin/x", NULL);
	int mb = rtd_profile_add_mapping(b, 0x1000, 0x2000, 0, "/bin/x", NULL);
	int mall = rtd_profile_add_mapping(all, 0x1000, 0x2000, 0, "/bin/x",
					   NULL);
	struct rtd_frame f[] = {{.name = "leaf", .addr = 0x1010, .mapping = 1},
				{.name = "main", .addr = 0x1100, .mapping = 1}};
	struct rtd_frame g[] = {{.addr = 0x1200, .mapping = 1},
				{.name = "main", .addr = 0x1100, .mapping = 1}};
	(void)ma, (void)mb, (void)mall;
	add(a, f, 2, 1, 10, 5, "t5");
	add(all, f, 2, 1, 10, 5, "t5");
	add(b, f, 2, 1, 20, 5, "t5");
	add(all, f, 2, 1, 20, 5, "t5");
	add(b, g, 2, 3, 30, 6, "t6");
	add(all, g, 2, 3, 30, 6, "t6");
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf",
				     .time_nanos = 100, .duration_nanos = 50};
	rtd_profile_set_meta(a, &m);
	m.source = "other";
	m.process = "proc";
	m.time_nanos = 120;
	m.duration_nanos = 100;
	rtd_profile_set_meta(b, &m);
	assert_int_equal(rtd_profile_merge(a, b), 0);
	assert_int_equal(rtd_profile_total(a), 60);
	assert_int_equal(rtd_profile_total_of(a, 0), 5);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .thread_roots = true};
	char *x = write_str(a, RTD_PROFILE_FMT_FOLDED, &o, 0);
	char *y = write_str(all, RTD_PROFILE_FMT_FOLDED, &o, 0);
	assert_string_equal(x, y);
	free(x);
	free(y);
	struct rtd_profile_stats sa, sall;
	rtd_profile_get_stats(a, &sa);
	rtd_profile_get_stats(all, &sall);
	assert_int_equal(sa.nodes, sall.nodes);
	assert_int_equal(sa.frames, sall.frames);
	assert_int_equal(sa.mappings, 1);
	assert_int_equal(sa.samples, 3);
	struct rtd_profile_meta got = {.sz = sizeof(got)};
	rtd_profile_get_meta(a, &got);
	assert_string_equal(got.source, "perf");
	assert_string_equal(got.process, "proc");
	assert_int_equal(got.time_nanos, 100);
	assert_int_equal(got.duration_nanos, 120);
	assert_int_equal(rtd_profile_merge(a, a), -RTD_E_INVAL);

	/* a type missing in dst: nothing added */
	rtd_profile *c = rtd_profile_new("alloc_space", "bytes");
	const char *one[] = {"x"};
	rtd_profile_add(c, one, 1, 5);
	assert_int_equal(rtd_profile_merge(a, c), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_total(a), 60);
	/* dst may have more types than src */
	rtd_profile *d = rtd_profile_new("cpu", "nanoseconds");
	rtd_profile_add(d, one, 1, 5);
	assert_int_equal(rtd_profile_merge(a, d), 0);
	assert_int_equal(rtd_profile_total(a), 65);
	assert_int_equal(rtd_profile_total_of(a, 0), 5);

	assert_int_equal(rtd_profile_reset(a), 0);
	assert_int_equal(rtd_profile_total(a), 0);
	x = write_str(a, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(x, "");
	free(x);
	rtd_profile_get_meta(a, &got);
	assert_string_equal(got.source, "perf");
	assert_int_equal(got.time_nanos, 0);
	assert_int_equal(rtd_profile_ntypes(a), 2);
	/* mappings are gone with the samples */
	int64_t nine[2] = {1, 9};
	struct rtd_sample again = {.sz = sizeof(again), .frames = f + 1,
				   .nframes = 1, .values = nine, .nvalues = 2};
	assert_int_equal(rtd_profile_add_sample(a, &again), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_add_mapping(a, 0x1000, 0x2000, 0,
						 "/bin/x", NULL),
			 1);
	assert_int_equal(rtd_profile_add_sample(a, &again), 0);
	x = write_str(a, RTD_PROFILE_FMT_FOLDED, NULL, 0);
	assert_string_equal(x, "main 9\n");
	free(x);
	rtd_profile_free(a);
	rtd_profile_free(b);
	rtd_profile_free(c);
	rtd_profile_free(d);
	rtd_profile_free(all);
}

static void formats(void **state)
{
	(void)state;
	assert_int_equal(rtd_profile_format_from_path("out.svg"),
			 RTD_PROFILE_FMT_SVG);
	assert_int_equal(rtd_profile_format_from_path("/a/b.speedscope.json"),
			 RTD_PROFILE_FMT_SPEEDSCOPE);
	/* .json is a Chrome JSON timeline (rtdiag/format.h's one table) */
	assert_int_equal(rtd_profile_format_from_path("x.json"),
			 RTD_PROFILE_FMT_NONE);
	assert_int_equal(rtd_profile_format_from_path("x.pb.gz"),
			 RTD_PROFILE_FMT_PPROF);
	assert_int_equal(rtd_profile_format_from_path("cpu.pprof"),
			 RTD_PROFILE_FMT_PPROF);
	assert_int_equal(rtd_profile_format_from_path("x.FOLDED"),
			 RTD_PROFILE_FMT_FOLDED);
	assert_int_equal(rtd_profile_format_from_path("x.txt"),
			 RTD_PROFILE_FMT_TOP);
	assert_int_equal(rtd_profile_format_from_path("svg"),
			 RTD_PROFILE_FMT_NONE);
	assert_int_equal(rtd_profile_format_from_path(NULL),
			 RTD_PROFILE_FMT_NONE);
	for (int i = 1; i < RTD_PROFILE_FMT_COUNT; i++)
		assert_int_equal(rtd_profile_format_from_name(
					 rtd_profile_format_name(i)),
				 i);
	assert_int_equal(rtd_profile_format_from_name("collapsed"),
			 RTD_PROFILE_FMT_FOLDED);
	assert_int_equal(rtd_profile_format_from_name("html"),
			 RTD_PROFILE_FMT_NONE);
	assert_string_equal(rtd_profile_format_name(99), "none");

	rtd_profile *p = new_two();
	struct rtd_frame a[] = {{.name = "hot"}, {.name = "main"}};
	add(p, a, 2, 3, 3000000000LL, 0, NULL);
	add(p, a + 1, 1, 1, 1000000000LL, 0, NULL);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .top = 1};
	char *t = write_str(p, RTD_PROFILE_FMT_TOP, &o, 0);
	/* 3 + 1 samples in 2 stacks: "samples" counts samples (#28) */
	assert_int_equal(rtd_profile_samples(p), 4);
	assert_non_null(strstr(t, "cpu: 4.00s in 4 samples"));
	assert_non_null(strstr(t, "3.00s  75.0%      3.00s  75.0%  hot"));
	assert_null(strstr(t, "main")); /* one row */
	free(t);
	o.type = "samples";
	o.top = 0;
	t = write_str(p, RTD_PROFILE_FMT_TOP, &o, 0);
	assert_non_null(strstr(t, "samples: 4 in 4 samples"));
	assert_non_null(strstr(t, "main"));
	free(t);
	/* the flame graph's subtitle says the same number */
	t = write_str(p, RTD_PROFILE_FMT_SVG, NULL, 0);
	assert_non_null(strstr(t, ">cpu: 4.00s in 4 samples</text>"));
	free(t);
	/* nanoseconds alone: no count of samples, so the stacks are named
	 * as what they are */
	rtd_profile *ns = rtd_profile_new("cpu", "nanoseconds");
	assert_non_null(ns);
	int64_t v = 5000000;
	struct rtd_sample one = {.sz = sizeof(one), .frames = a, .nframes = 2,
				 .leaf_first = true, .values = &v, .nvalues = 1};
	assert_int_equal(rtd_profile_add_sample(ns, &one), 0);
	assert_int_equal(rtd_profile_add_sample(ns, &one), 0);
	assert_int_equal(rtd_profile_samples(ns), -1);
	t = write_str(ns, RTD_PROFILE_FMT_TOP, NULL, 0);
	assert_non_null(strstr(t, "cpu: 10.00ms in 1 stack\n"));
	free(t);
	rtd_profile_free(ns);
	t = write_str(p, RTD_PROFILE_FMT_NONE, NULL, -RTD_E_INVAL);
	free(t);
	struct rtd_profile_write_opts tiny = {.sz = 1};
	t = write_str(p, RTD_PROFILE_FMT_FOLDED, &tiny, -RTD_E_INVAL);
	free(t);
	rtd_profile_free(p);
}

/* Memory follows distinct stacks: 200,000 samples over 100 stacks. */
static void memory_follows_stacks(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	char names[100][16];
	for (int i = 0; i < 100; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	for (int i = 0; i < 200000; i++) {
		struct rtd_frame fr[3] = {{.name = names[i % 100]},
					  {.name = names[i % 100 % 7]},
					  {.name = "main"}};
		add(p, fr, 3, 1, 1, 1 + i % 2, NULL);
	}
	struct rtd_profile_stats st;
	rtd_profile_get_stats(p, &st);
	assert_int_equal(st.samples, 200000);
	assert_true(st.stacks <= 200);
	assert_true(st.nodes < 2 * 100 * 3 + 10);
	assert_int_equal(rtd_profile_total(p), 200000);
	rtd_profile_free(p);
}

/* ---- pprof through `go tool pprof -raw` ---------------------------------- */

static const char *find_go(void)
{
	static const char *gos[] = {"/usr/lib/go-1.23/bin/go",
				    "/usr/lib/go-1.22/bin/go",
				    "/usr/lib/go-1.19/bin/go"};
	for (size_t i = 0; i < 3; i++)
		if (access(gos[i], X_OK) == 0)
			return gos[i];
	return NULL;
}

static char *pprof_raw(const rtd_profile *p, const char *args)
{
	const char *go = find_go();
	if (!go) {
		printf("SKIP part: no Go installed, pprof not read by a real "
		       "consumer\n");
		return NULL;
	}
	char path[] = "/tmp/rtd-pprof-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_int_equal(rtd_profile_write(p, RTD_PROFILE_FMT_PPROF, f, NULL), 0);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOCACHE=/tmp/rtd-gocache GOFLAGS=-mod=mod "
		 "PPROF_TMPDIR=/tmp %s tool pprof %s %s 2>&1",
		 go, args, path);
	FILE *pp = popen(cmd, "r");
	assert_non_null(pp);
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	size_t n;
	while ((n = fread(out + len, 1, cap - 1 - len, pp)) > 0)
		len += n;
	out[len] = 0;
	int rc = pclose(pp);
	unlink(path);
	if (rc != 0)
		printf("go tool pprof said:\n%s\n", out);
	assert_int_equal(rc, 0);
	return out;
}

static void pprof_full(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	int m = rtd_profile_add_mapping(p, 0x400000, 0x500000, 0x1000,
					"/usr/bin/app", "0123abcd");
	assert_int_equal(m, 1);
	/* leaf "inner" inlined into "outer" at one address, then main */
	struct rtd_frame f[] = {
		{.name = "inner", .file = "a.c", .line = 10, .addr = 0x401000,
		 .mapping = 1, .inlined = true, .kind = RTD_FRAME_NATIVE},
		{.name = "outer", .file = "a.c", .line = 20, .addr = 0x401000,
		 .mapping = 1, .kind = RTD_FRAME_NATIVE},
		{.name = "main", .file = "m.c", .line = 5, .addr = 0x402000,
		 .mapping = 1, .kind = RTD_FRAME_NATIVE},
	};
	struct rtd_frame u[] = {
		{.addr = 0x403000, .mapping = 1},
		{.name = "System.Foo", .module = "System.Private.CoreLib",
		 .kind = RTD_FRAME_MANAGED},
	};
	add(p, f, 3, 2, 20000000, 77, "worker");
	add(p, u, 2, 1, 10000000, 0, NULL);
	struct rtd_label lab = {.key = "span", .str = "s1"};
	int64_t v[2] = {1, 10000000};
	struct rtd_sample s = {.sz = sizeof(s), .frames = f + 2, .nframes = 1,
			       .values = v, .nvalues = 2, .labels = &lab,
			       .nlabels = 1};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	struct rtd_profile_meta meta = {.sz = sizeof(meta), .source = "perf",
					.process = "app", .pid = 42,
					.time_nanos = 1700000000000000000LL,
					.duration_nanos = 2000000000};
	assert_int_equal(rtd_profile_set_meta(p, &meta), 0);
	char *out = pprof_raw(p, "-raw");
	if (!out) {
		rtd_profile_free(p);
		return;
	}
	/* the shape go tool pprof -raw prints */
	assert_non_null(strstr(out, "PeriodType: cpu nanoseconds"));
	assert_non_null(strstr(out, "Period: 10000000"));
	assert_non_null(strstr(out, "Duration: 2s"));
	assert_non_null(strstr(out, "samples/count cpu/nanoseconds"));
	assert_non_null(strstr(out, "thread:[worker]"));
	assert_non_null(strstr(out, "pid:[42]"));
	assert_non_null(strstr(out, "tid:[77]"));
	assert_non_null(strstr(out, "span:[s1]"));
	/* the inline chain is one location: inner then outer */
	char *loc = strstr(out, "0x401000 M=1 inner a.c:10");
	if (!loc)
		printf("%s\n", out);
	assert_non_null(loc);
	assert_non_null(strstr(loc, "outer a.c:20"));
	assert_non_null(strstr(out, "0x402000 M=1 main m.c:5"));
	assert_non_null(strstr(out, "0x403000 M=1 app+0x4000"));
	assert_non_null(strstr(out, "System.Foo"));
	assert_non_null(strstr(out, "/usr/bin/app 0123abcd"));
	assert_non_null(strstr(out, "System.Private.CoreLib"));
	assert_non_null(strstr(out, "source: perf"));
	assert_non_null(strstr(out, "process: app (pid 42)"));
	free(out);

	/* -top by the other type, and addresses kept */
	out = pprof_raw(p, "-top -sample_index=samples");
	assert_non_null(strstr(out, "Type: samples"));
	assert_non_null(strstr(out, "inner"));
	free(out);
	out = pprof_raw(p, "-top -addresses");
	assert_non_null(strstr(out, "0000000000401000"));
	free(out);
	rtd_profile_free(p);
}

/* perf report --sort comm,dso,sym --no-children: leaves by thread,
 * module and name (#32 item 5). */
static void top_sorted(void **state)
{
	(void)state;
	rtd_profile *p = new_two();
	struct rtd_frame a[] = {{.name = "hot", .module = "/usr/lib/libx.so"},
				{.name = "main", .module = "app"}};
	struct rtd_frame b[] = {{.name = "hot", .module = "libx.so"},
				{.name = "other", .module = "app"}};
	struct rtd_frame c[] = {{.name = "cold", .module = "app"},
				{.name = "main", .module = "app"}};
	add(p, a, 2, 3, 300, 7, "worker");
	add(p, b, 2, 2, 200, 7, "worker"); /* same leaf, other caller */
	add(p, a, 2, 1, 100, 8, "main");
	add(p, c, 2, 1, 50, 8, "main");
	struct rtd_profile_sort_entry e[8];
	size_t ns = (size_t)rtd_profile_find_type(p, "cpu");
	int n = rtd_profile_top_sorted(p, ns, "comm,dso,sym", e, 8);
	assert_int_equal(n, 3);
	assert_string_equal(e[0].comm, "worker");
	assert_string_equal(e[0].dso, "libx.so"); /* a path's file name */
	assert_string_equal(e[0].sym, "hot");
	assert_int_equal(e[0].self, 500);
	assert_string_equal(e[1].comm, "main");
	assert_string_equal(e[1].sym, "hot");
	assert_int_equal(e[1].self, 100);
	assert_string_equal(e[2].sym, "cold");
	assert_int_equal(e[2].pid, 0); /* not a key */
	/* by thread alone; by symbol alone merges the threads */
	n = rtd_profile_top_sorted(p, ns, "comm", e, 8);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].self, 500);
	assert_int_equal(e[1].self, 150);
	assert_string_equal(e[1].sym, "");
	n = rtd_profile_top_sorted(p, ns, "sym,pid", e, 1);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].sym, "hot");
	assert_int_equal(e[0].self, 600);
	assert_int_equal(e[0].pid, 42);
	assert_int_equal(rtd_profile_top_sorted(p, ns, "comm,size", e, 8), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_top_sorted(p, ns, "sym,sym", e, 8), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_top_sorted(p, ns, "", e, 8), -RTD_E_INVAL);
	assert_int_equal(rtd_profile_top_sorted(p, 9, "sym", e, 8), -RTD_E_INVAL);
	rtd_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(types_and_opts),
		cmocka_unit_test(values_per_type),
		cmocka_unit_test(frames_and_names),
		cmocka_unit_test(threads_labels_roots),
		cmocka_unit_test(meta),
		cmocka_unit_test(struct_versions),
		cmocka_unit_test(merge_and_reset),
		cmocka_unit_test(formats),
		cmocka_unit_test(memory_follows_stacks),
		cmocka_unit_test(pprof_full),
		cmocka_unit_test(top_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
