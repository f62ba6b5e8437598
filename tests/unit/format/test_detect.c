/* SPDX-License-Identifier: MIT */
/* Input format detection and the extension table (rtdiag/format.h):
 * real recordings are named; text that is not folded stacks, junk, a cut
 * header, an unsupported Go version are unknown with a reason. */
#include "test_util.h"

#include <zlib.h>

#include "rtdiag/format.h"

static enum rtd_input_format detect_str(const char *s, bool whole,
					struct rtd_input_info *in)
{
	return rtd_format_detect(s, strlen(s), whole, in);
}

static void text_inputs(void **state)
{
	(void)state;
	struct rtd_input_info in;
	assert_int_equal(detect_str("main;work;spin 12\nmain;idle 3\n", true, &in),
			 RTD_INPUT_FOLDED);
	/* CRLF, blank lines and a last line without its newline */
	assert_int_equal(detect_str("a;b 1\r\n\n  \na 2", true, &in),
			 RTD_INPUT_FOLDED);
	/* /etc/passwd is text, and no folded stacks */
	assert_int_equal(detect_str("root:x:0:0:root:/root:/bin/bash\n"
				    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
				    true, &in),
			 RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "line 1"));
	/* one bad line among good ones */
	assert_int_equal(detect_str("a;b 1\nhello world\n", true, &in),
			 RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "line 2"));
	/* the 8 bytes of junk from the issue */
	assert_int_equal(detect_str("junkjunk", true, &in), RTD_INPUT_UNKNOWN);
	/* counts alone are no stacks */
	assert_int_equal(detect_str("12\n13\n", true, &in), RTD_INPUT_UNKNOWN);
	assert_int_equal(rtd_format_detect("", 0, true, &in), RTD_INPUT_UNKNOWN);
	assert_string_equal(in.why, "empty");
	/* a prefix: the cut last line is not judged */
	assert_int_equal(detect_str("a;b 1\na;c 2\na;this line goes o", false, &in),
			 RTD_INPUT_FOLDED);
	assert_int_equal(detect_str("a;b 1\na;this line goes o", true, &in),
			 RTD_INPUT_UNKNOWN);
}

static void binary_junk(void **state)
{
	(void)state;
	struct rtd_input_info in;
	const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03};
	assert_int_equal(rtd_format_detect(junk, sizeof(junk), true, &in),
			 RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "binary"));
	/* gzip of text is not pprof */
	uint8_t gz[256];
	z_stream z = {0};
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	static const char txt[] = "hello, world: not a profile at all\n";
	z.next_in = (Bytef *)txt;
	z.avail_in = sizeof(txt) - 1;
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t ngz = sizeof(gz) - z.avail_out;
	deflateEnd(&z);
	assert_int_equal(rtd_format_detect(gz, ngz, true, &in), RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "gzip"));
	/* perf.data's magic */
	assert_int_equal(rtd_format_detect("PERFILE2\x68\0\0\0", 12, true, &in),
			 RTD_INPUT_PERF_DATA);
}

static void go_headers(void **state)
{
	(void)state;
	struct rtd_input_info in;
	assert_int_equal(rtd_format_detect("go 1.22 trace\0\0\0\x01", 17, true, &in),
			 RTD_INPUT_GOTRACE);
	assert_int_equal(in.go_version, 1022);
	assert_int_equal(rtd_format_detect("go 1.5 trace\0\0\0\0", 16, true, &in),
			 RTD_INPUT_GOTRACE);
	assert_int_equal(in.go_version, 1005);
	assert_int_equal(rtd_format_detect("go 1.24 trace\0\0\0", 16, true, &in),
			 RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "version"));
	assert_int_equal(rtd_format_detect("go 1.22 tr", 10, true, &in),
			 RTD_INPUT_UNKNOWN);
	assert_non_null(strstr(in.why, "cut"));
}

/* A real profile written by the library: gzip, and the same inflated. */
static void pprof_inputs(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	struct rtd_frame fr[2] = {{.name = "main"}, {.name = "work"}};
	int64_t v = 10;
	struct rtd_sample s = {.sz = sizeof(s), .frames = fr, .nframes = 2,
			       .values = &v, .nvalues = 1};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(rtd_profile_write(p, RTD_PROFILE_FMT_PPROF, f, NULL), 0);
	fclose(f);
	rtd_profile_free(p);
	struct rtd_input_info in;
	assert_int_equal(rtd_format_detect(buf, len, true, &in), RTD_INPUT_PPROF);
	assert_true(in.gzip);
	/* inflated: a plain protobuf */
	uint8_t raw[1 << 16];
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t nraw = sizeof(raw) - z.avail_out;
	inflateEnd(&z);
	assert_int_equal(rtd_format_detect(raw, nraw, true, &in), RTD_INPUT_PPROF);
	assert_false(in.gzip);
	/* its first half is a pprof that goes on, or a cut one */
	assert_int_equal(rtd_format_detect(raw, nraw / 2, false, &in), RTD_INPUT_PPROF);
	assert_int_equal(rtd_format_detect(raw, nraw / 2, true, &in), RTD_INPUT_UNKNOWN);
	free(buf);
}

static void check_file(const char *rel, enum rtd_input_format want)
{
	const char *path = rtd_test_vector(rel);
	if (!path)
		return;
	size_t len = 0;
	uint8_t *b = rtd_test_slurp(path, &len);
	assert_non_null(b);
	struct rtd_input_info in;
	assert_int_equal(rtd_format_detect(b, len, true, &in), want);
	/* the first 100 bytes are still that stream's start (folded text:
	 * the first 1000, its first line being longer than 100) */
	size_t head = want == RTD_INPUT_FOLDED ? 1000 : 100;
	if (len > head)
		assert_int_equal(rtd_format_detect(b, head, false, &in), want);
	/* a cut inside the header is no input at all */
	assert_int_equal(rtd_format_detect(b, 10, true, &in), RTD_INPUT_UNKNOWN);
	free(b);
}

static void recordings(void **state)
{
	(void)state;
	check_file("testdata/nettrace/only_managed_samples.nettrace", RTD_INPUT_NETTRACE);
	check_file("testdata/nettrace/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf",
		   RTD_INPUT_NETPERF);
	check_file("testdata/gotrace/v1/http_1_19_good", RTD_INPUT_GOTRACE);
	check_file("testdata/gotrace/v1/stress_1_5_good", RTD_INPUT_GOTRACE);
	check_file("testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.txt",
		   RTD_INPUT_FOLDED);
}

static void extensions(void **state)
{
	(void)state;
	const struct rtd_format_ext *x;
	assert_non_null(x = rtd_format_ext_of("out/t.json"));
	assert_string_equal(x->format, "chrome-json");
	assert_int_equal(x->kind, RTD_FORMAT_TIMELINE);
	assert_non_null(x = rtd_format_ext_of("a.speedscope.json"));
	assert_string_equal(x->format, "speedscope");
	assert_non_null(x = rtd_format_ext_of("CPU.PB.GZ"));
	assert_int_equal(x->profile, RTD_PROFILE_FMT_PPROF);
	assert_non_null(x = rtd_format_ext_of("t.pftrace"));
	assert_int_equal(x->timeline, RTD_TIMELINE_FMT_PERFETTO);
	/* a picture rtdiag does not draw is in the table, to be refused */
	assert_non_null(x = rtd_format_ext_of("x.png"));
	assert_int_equal(x->kind, RTD_FORMAT_FOREIGN);
	/* an extension the table does not know: the command's default */
	assert_null(rtd_format_ext_of("trace.out"));
	assert_true(rtd_format_has_ext("trace.out"));
	assert_null(rtd_format_ext_of("out"));
	assert_false(rtd_format_has_ext("out"));
	assert_false(rtd_format_has_ext("dir.d/out"));
	assert_false(rtd_format_has_ext(".hidden"));
	assert_false(rtd_format_has_ext(NULL));
	/* the writers' own lookups read the same table */
	assert_int_equal(rtd_profile_format_from_path("t.json"), RTD_PROFILE_FMT_NONE);
	assert_int_equal(rtd_timeline_format_from_path("t.json"),
			 RTD_TIMELINE_FMT_CHROME_JSON);
	assert_int_equal(rtd_timeline_format_from_path("t.speedscope.json"),
			 RTD_TIMELINE_FMT_NONE);
	assert_int_equal(rtd_profile_format_from_path("t.txt"), RTD_PROFILE_FMT_TOP);
	size_t n;
	const struct rtd_format_ext *t = rtd_format_ext_table(&n);
	/* every row is reachable: no shorter extension hides a longer one */
	for (size_t i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "f%s", t[i].ext);
		assert_ptr_equal(rtd_format_ext_of(name), &t[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_inputs),   cmocka_unit_test(binary_junk),
		cmocka_unit_test(go_headers),    cmocka_unit_test(pprof_inputs),
		cmocka_unit_test(recordings),    cmocka_unit_test(extensions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
