/* SPDX-License-Identifier: MIT */
/*
 * The picture writers: SVG flame graph and speedscope JSON, read as text
 * here (frames, widths, colours, threads); tests/integration/pictures opens
 * them in real viewers.
 */
#include "test_util.h"

#include "rtdiag/profile.h"

static rtd_profile *mixed(void)
{
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	struct rtd_frame a[] = {{.name = "hash", .kind = RTD_FRAME_NATIVE},
				{.name = "Work<T>", .kind = RTD_FRAME_MANAGED},
				{.name = "main", .kind = RTD_FRAME_GO}};
	struct rtd_frame b[] = {{.name = "do_syscall_64", .kind = RTD_FRAME_KERNEL},
				{.name = "Work<T>", .kind = RTD_FRAME_MANAGED},
				{.name = "main", .kind = RTD_FRAME_GO}};
	struct rtd_frame c[] = {{.name = "runtime.mallocgc",
				 .kind = RTD_FRAME_GO_RUNTIME},
				{.name = "main", .kind = RTD_FRAME_GO}};
	int64_t v = 600;
	struct rtd_sample s = {.sz = sizeof(s), .frames = a, .nframes = 3,
			       .leaf_first = true, .values = &v, .nvalues = 1,
			       .pid = 1, .tid = 5, .thread = "worker"};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	v = 300;
	s.frames = b;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	v = 99;
	s.frames = c;
	s.nframes = 2;
	s.tid = 6;
	s.thread = NULL;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	v = 1; /* one tiny frame */
	struct rtd_frame tiny[] = {{.name = "tiny"}, {.name = "main"}};
	s.frames = tiny;
	s.tid = 0;
	s.pid = 0;
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf",
				     .process = "app", .pid = 1,
				     .duration_nanos = 2000000000};
	assert_int_equal(rtd_profile_set_meta(p, &m), 0);
	return p;
}

static char *write_str(const rtd_profile *p, enum rtd_profile_format fmt,
		       const struct rtd_profile_write_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(rtd_profile_write(p, fmt, f, o), 0);
	fclose(f);
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *x = s; (x = strstr(x, what)); x++)
		n++;
	return n;
}

/* The <g> of the frame named name: its data-w and fill. */
static bool frame_of(const char *svg, const char *name, long long *w,
		     char fill[32], double *y)
{
	char key[128];
	snprintf(key, sizeof(key), "<title>%s\n", name);
	const char *t = strstr(svg, key);
	if (!t)
		return false;
	const char *g = t;
	while (g > svg && strncmp(g, "<g class=\"f\"", 12))
		g--;
	const char *dw = strstr(g, "data-w=\"");
	*w = atoll(dw + 8);
	const char *yy = strstr(t, " y=\"");
	*y = atof(yy + 4);
	const char *fl = strstr(t, "fill=\"");
	size_t k = strcspn(fl + 6, "\"");
	snprintf(fill, 32, "%.*s", (int)k, fl + 6);
	return true;
}

static void svg(void **state)
{
	(void)state;
	rtd_profile *p = mixed();
	char *s = write_str(p, RTD_PROFILE_FMT_SVG, NULL);
	assert_non_null(strstr(s, "<?xml version=\"1.0\""));
	assert_non_null(strstr(s, ">perf: app (pid 1), 2.00s, weight: cpu (nanoseconds)</text>"));
	assert_non_null(strstr(s, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_null(strstr(s, "http://www.w3.org/1999/xlink")); /* nothing external */
	assert_null(strstr(s, "href"));
	/* every frame, merged by name; the tiny one is not drawn */
	long long w;
	char fill[32];
	double y_main, y_work, y;
	assert_true(frame_of(s, "all", &w, fill, &y));
	assert_int_equal(w, 1000);
	assert_true(frame_of(s, "main", &w, fill, &y_main));
	assert_int_equal(w, 1000);
	assert_true(frame_of(s, "Work&lt;T&gt;", &w, fill, &y_work));
	assert_int_equal(w, 900);
	assert_true(y_work < y_main); /* flames grow up */
	/* colours by kind: managed blue, kernel orange, Go runtime teal */
	int r, g, b;
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(b > r && b > g);
	assert_true(frame_of(s, "do_syscall_64", &w, fill, &y));
	assert_int_equal(w, 300);
	assert_int_equal(sscanf(fill, "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 230 && g >= 130 && b <= 60);
	assert_true(frame_of(s, "hash", &w, fill, &y));
	assert_true(frame_of(s, "runtime.mallocgc", &w, fill, &y));
	assert_int_equal(w, 99);
	assert_true(frame_of(s, "tiny", &w, fill, &y)); /* 1.2 px: drawn */
	assert_int_equal(count(s, "<g class=\"f\""), 7);
	assert_non_null(strstr(s, ">managed</text>")); /* legend */
	free(s);

	/* inverted: roots on top; a wide minimum width merges narrow runs */
	struct rtd_profile_write_opts o = {.sz = sizeof(o), .inverted = true,
					   .min_width = 117.5, .title = "T & <x>"};
	s = write_str(p, RTD_PROFILE_FMT_SVG, &o);
	assert_non_null(strstr(s, ">T &amp; &lt;x&gt;</text>"));
	assert_true(frame_of(s, "main", &w, fill, &y_main));
	assert_true(frame_of(s, "Work&lt;T&gt;", &w, fill, &y_work));
	assert_true(y_work > y_main);
	/* runtime.mallocgc (99 of 1000: 116.8 px) and tiny (1.2 px) are
	 * narrower than 117.5 px; together (118 px) they are one grey box */
	assert_false(frame_of(s, "runtime.mallocgc", &w, fill, &y));
	assert_true(frame_of(s, "2 narrow frames", &w, fill, &y));
	assert_int_equal(w, 100);
	assert_string_equal(fill, "rgb(200,200,200)");
	free(s);

	/* thread roots */
	o = (struct rtd_profile_write_opts){.sz = sizeof(o), .thread_roots = true};
	s = write_str(p, RTD_PROFILE_FMT_SVG, &o);
	assert_true(frame_of(s, "worker (tid 5)", &w, fill, &y));
	assert_int_equal(w, 900);
	free(s);
	rtd_profile_free(p);

	/* names that are not valid UTF-8 or XML still make well-formed XML */
	p = rtd_profile_new(NULL, NULL);
	const char *bad[] = {"ok\xff\xfe", "ctl\x01\x7f", "a]]>b"};
	assert_int_equal(rtd_profile_add(p, bad, 3, 10), 0);
	s = write_str(p, RTD_PROFILE_FMT_SVG, NULL);
	assert_non_null(strstr(s, "ok\xef\xbf\xbd\xef\xbf\xbd"));
	assert_non_null(strstr(s, "ctl  "));
	assert_non_null(strstr(s, "a]]&gt;b"));
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char path[] = "/tmp/rtd-svg-XXXXXX";
		int fd = mkstemp(path);
		assert_true(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
		close(fd);
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
		assert_int_equal(system(cmd), 0);
		unlink(path);
	} else {
		printf("SKIP part: xmllint not installed\n");
	}
	free(s);
	rtd_profile_free(p);
}

static void speedscope(void **state)
{
	(void)state;
	rtd_profile *p = mixed();
	char *s = write_str(p, RTD_PROFILE_FMT_SPEEDSCOPE, NULL);
	assert_non_null(strstr(s, "\"$schema\":\"https://www.speedscope.app/"
				  "file-format-schema.json\""));
	/* a profile per thread, and one for samples without a thread */
	assert_int_equal(count(s, "\"type\":\"sampled\""), 3);
	assert_non_null(strstr(s, "\"name\":\"worker (tid 5)\",\"unit\":"
				  "\"nanoseconds\",\"startValue\":0,"
				  "\"endValue\":900"));
	assert_non_null(strstr(s, "\"name\":\"thread 6\""));
	assert_non_null(strstr(s, "\"name\":\"(no thread)\""));
	assert_non_null(strstr(s, "\"weights\":[300,600]"));
	assert_non_null(strstr(s, "{\"name\":\"Work<T>\"}"));
	assert_int_equal(count(s, "{\"name\":\"main\"}"), 1); /* shared */
	if (access("/usr/bin/python3", X_OK) == 0) {
		char path[] = "/tmp/rtd-ss-XXXXXX";
		int fd = mkstemp(path);
		assert_true(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
		close(fd);
		char cmd[256];
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json,sys; d=json.load(open(\"%s\"));"
			 " sys.exit(0 if sum(sum(p[\"weights\"]) for p in "
			 "d[\"profiles\"]) == 1000 else 1)'",
			 path);
		assert_int_equal(system(cmd), 0);
		unlink(path);
	}
	free(s);
	/* other units map to speedscope's; unknown ones to "none" */
	rtd_profile *q = rtd_profile_new("alloc", "objects");
	const char *f[] = {"x"};
	rtd_profile_add(q, f, 1, 3);
	s = write_str(q, RTD_PROFILE_FMT_SPEEDSCOPE, NULL);
	assert_non_null(strstr(s, "\"unit\":\"none\""));
	free(s);
	rtd_profile_free(q);
	rtd_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg),
		cmocka_unit_test(speedscope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
