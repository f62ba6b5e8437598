/* SPDX-License-Identifier: MIT */
/*
 * Readers: folded text and pprof (gzip and plain) back into the model.
 * Round trips: what the writers write, the readers read to equal folded
 * text; damage is reported with where it is, and what came before stays.
 */
#include "test_util.h"

#include <zlib.h>

#include "rtdiag/profile.h"

static char *folded_of(const rtd_profile *p, const char *type, bool roots)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .type = type,
					   .thread_roots = roots};
	assert_int_equal(rtd_profile_write(p, RTD_PROFILE_FMT_FOLDED, f, &o), 0);
	fclose(f);
	return buf;
}

static rtd_profile *read_text(const char *text, int want,
			      struct rtd_profile_read_err *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(f);
	rtd_profile *p = NULL;
	assert_int_equal(rtd_profile_read(&p, f, e), want);
	fclose(f);
	assert_non_null(p);
	return p;
}

static void folded_text(void **state)
{
	(void)state;
	struct rtd_profile_read_err e = {0};
	rtd_profile *p = read_text("main;work;hash 150\n"
				   "main;work 30\r\n"
				   "\n"
				   "main;sys_read_[k] 4\n"
				   "main;idle 7",
				   0, &e);
	char *t = folded_of(p, NULL, false);
	assert_string_equal(t, "main;idle 7\nmain;sys_read 4\nmain;work 30\n"
			       "main;work;hash 150\n");
	free(t);
	assert_int_equal(rtd_profile_total(p), 191);
	rtd_profile_free(p);

	p = read_text("a;b 1\na;c 2\nbroken line\na;d 3\n", -RTD_E_FORMAT, &e);
	assert_int_equal(e.line, 3);
	assert_int_equal(e.offset, 12);
	assert_non_null(strstr(e.msg, "line 3"));
	t = folded_of(p, NULL, false);
	assert_string_equal(t, "a;b 1\na;c 2\n"); /* what came before */
	free(t);
	rtd_profile_free(p);

	FILE *f = fmemopen((void *)"", 0, "r");
	rtd_profile *q = (rtd_profile *)1;
	assert_int_equal(rtd_profile_read(&q, f, &e), -RTD_E_TRUNCATED);
	assert_null(q);
	fclose(f);
}

static void write_pprof(const rtd_profile *p, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	assert_int_equal(rtd_profile_write(p, RTD_PROFILE_FMT_PPROF, f, NULL), 0);
	fclose(f);
}

static rtd_profile *rich(void)
{
	static const struct rtd_profile_type t[] = {{"samples", "count"},
						    {"cpu", "nanoseconds"}};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = t, .ntypes = 2,
				     .default_type = 1, .period = 1000};
	rtd_profile *p = rtd_profile_new2(&o);
	int m = rtd_profile_add_mapping(p, 0x1000, 0x9000, 0, "/bin/app", "beef");
	struct rtd_frame f[] = {
		{.name = "inner", .addr = 0x1100, .mapping = (uint32_t)m,
		 .inlined = true, .line = 3, .file = "x.c"},
		{.name = "outer", .addr = 0x1100, .mapping = (uint32_t)m, .line = 9,
		 .file = "x.c"},
		{.addr = 0x2000, .mapping = (uint32_t)m},
		{.name = "main", .addr = 0x3000, .mapping = (uint32_t)m},
	};
	int64_t v[2] = {2, 2000};
	struct rtd_label l = {.key = "span", .str = "s"};
	struct rtd_sample s = {.sz = sizeof(s), .frames = f, .nframes = 4,
			       .leaf_first = true, .values = v, .nvalues = 2,
			       .pid = 9, .tid = 10, .thread = "th"};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	s.frames = f + 2;
	s.nframes = 2;
	s.tid = 11;
	s.thread = NULL;
	s.labels = &l;
	s.nlabels = 1;
	v[1] = 500;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	return p;
}

static void pprof_round_trip(void **state)
{
	(void)state;
	rtd_profile *p = rich();
	char *buf;
	size_t len;
	write_pprof(p, &buf, &len);
	struct rtd_profile_read_err e = {0};
	rtd_profile *q = NULL;
	assert_int_equal(rtd_profile_read_pprof(&q, buf, len, &e), 0);
	/* same types, same stacks per type and per thread */
	assert_int_equal(rtd_profile_ntypes(q), 2);
	assert_int_equal(rtd_profile_default_type(q), 1);
	for (int roots = 0; roots < 2; roots++)
		for (int t = 0; t < 2; t++) {
			const char *ty = t ? "cpu" : "samples";
			char *a = folded_of(p, ty, roots), *b = folded_of(q, ty, roots);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	struct rtd_profile_stats sp, sq;
	rtd_profile_get_stats(p, &sp);
	rtd_profile_get_stats(q, &sq);
	assert_int_equal(sq.frames, sp.frames);
	assert_int_equal(sq.mappings, 1);
	assert_int_equal(sq.contexts, sp.contexts);
	/* written again and read again, the pprof is byte for byte the same
	 * (the first round may order strings differently) */
	char *buf2, *buf3;
	size_t len2, len3;
	write_pprof(q, &buf2, &len2);
	rtd_profile *r = NULL;
	assert_int_equal(rtd_profile_read_pprof(&r, buf2, len2, &e), 0);
	write_pprof(r, &buf3, &len3);
	assert_int_equal(len2, len3);
	assert_memory_equal(buf2, buf3, len2);
	free(buf2);
	free(buf3);
	rtd_profile_free(r);
	rtd_profile_free(q);

	/* plain (uncompressed) protobuf too, through rtd_profile_read */
	uint8_t *raw = malloc(1 << 20);
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, 15 + 32), Z_OK);
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = 1 << 20;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t rlen = z.total_out;
	inflateEnd(&z);
	FILE *f = fmemopen(raw, rlen, "r");
	assert_int_equal(rtd_profile_read(&q, f, &e), 0);
	fclose(f);
	char *a = folded_of(p, NULL, true), *b = folded_of(q, NULL, true);
	assert_string_equal(a, b);
	free(a);
	free(b);
	rtd_profile_free(q);

	/* damage: cut short inside the gzip stream, and inside the message */
	assert_int_equal(rtd_profile_read_pprof(&q, buf, len / 2, &e),
			 -RTD_E_TRUNCATED);
	assert_non_null(strstr(e.msg, "cut short"));
	rtd_profile_free(q);
	int err = rtd_profile_read_pprof(&q, raw, rlen - 3, &e);
	assert_true(err == -RTD_E_TRUNCATED || err == -RTD_E_FORMAT);
	assert_true(e.offset <= rlen);
	rtd_profile_free(q);
	free(raw);
	free(buf);
	rtd_profile_free(p);
}

/* A pprof written by Go's runtime/pprof, when Go is installed. */
static void pprof_from_go(void **state)
{
	(void)state;
	const char *go = "/usr/lib/go-1.23/bin/go";
	if (access(go, X_OK) != 0) {
		printf("SKIP part: %s not installed\n", go);
		return;
	}
	char dir[] = "/tmp/rtd-goprof-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], cmd[1024];
	snprintf(path, sizeof(path), "%s/main.go", dir);
	FILE *f = fopen(path, "w");
	/* runtime.GC() first: the allocs profile is as of the last completed
	 * GC, so without one the allocations after it are missing (flaky). */
	fputs("package main\nimport (\"os\";\"runtime\";\"runtime/pprof\")\n"
	      "var sink [][]byte\n"
	      "func alloc() { for i := 0; i < 2000; i++ { sink = append(sink, make([]byte, 4096)) } }\n"
	      "func main() { alloc(); runtime.GC(); f, _ := os.Create(os.Args[1]); "
	      "pprof.Lookup(\"allocs\").WriteTo(f, 0); f.Close() }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && HOME=/tmp GOCACHE=/tmp/rtd-gocache GO111MODULE=off "
		 "%s run main.go %s/heap.pb.gz >/dev/null 2>&1",
		 dir, go, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/heap.pb.gz", dir);
	f = fopen(path, "rb");
	assert_non_null(f);
	rtd_profile *p = NULL;
	struct rtd_profile_read_err e = {0};
	int err = rtd_profile_read(&p, f, &e);
	if (err)
		printf("read: %s\n", e.msg);
	assert_int_equal(err, 0);
	fclose(f);
	assert_int_equal(rtd_profile_ntypes(p), 4);
	assert_int_equal(rtd_profile_find_type(p, "alloc_space"), 1);
	char *t = folded_of(p, "alloc_space", false);
	assert_non_null(strstr(t, "main.alloc"));
	/* sampled every 512 KiB and scaled: about 8 MB */
	assert_true(rtd_profile_total_of(p, 1) >= 2000 * 4096 / 4);
	printf("ok: Go heap profile, %lld bytes allocated\n",
	       (long long)rtd_profile_total_of(p, 1));
	free(t);
	rtd_profile_free(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_text),
		cmocka_unit_test(pprof_round_trip),
		cmocka_unit_test(pprof_from_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
