/* SPDX-License-Identifier: MIT */
/*
 * The timeline model and its writers. Perfetto output is decoded by
 * protoc --decode=perfetto.protos.Trace against Perfetto's proto (from
 * ../shared/reference), Chrome JSON by Python's json; both are then read
 * by tests/integration/pictures/tlcheck.py, which checks that every track
 * and slice is there and that slices nest on each track.
 */
#include "test_util.h"

#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/timeline.h"
#include "rtdiag/source.h"

static int64_t track(rtd_timeline *tl, enum rtd_track_kind k, int64_t pid,
		     int64_t tid, const char *name, uint64_t parent,
		     const char *unit)
{
	struct rtd_track t = {.sz = sizeof(t), .kind = k, .pid = pid, .tid = tid,
			      .name = name, .parent = parent, .unit = unit};
	int64_t id = rtd_timeline_add_track(tl, &t);
	assert_true(id > 0);
	return id;
}

static struct rtd_tl_event ev(uint64_t track, int64_t ts, const char *name)
{
	return (struct rtd_tl_event){.sz = sizeof(struct rtd_tl_event),
				     .track = track, .ts = ts, .name = name};
}

/* A Chrome JSON timeline writing to @f. */
static rtd_timeline *json_timeline(FILE *f)
{
	struct rtd_timeline_opts o = {.sz = sizeof(o),
				      .format = RTD_TIMELINE_FMT_CHROME_JSON, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	assert_non_null(tl);
	return tl;
}

/* The same story in any format. */
static void story(rtd_timeline *tl, int rounds)
{
	int64_t proc = track(tl, RTD_TRACK_PROCESS, 42, 0, "app", 0, NULL);
	int64_t th = track(tl, RTD_TRACK_THREAD, 42, 43, "main \"thread\"", proc,
			   NULL);
	int64_t gc = track(tl, RTD_TRACK_NAMED, 0, 0, "GC", proc, NULL);
	int64_t heap = track(tl, RTD_TRACK_COUNTER, 0, 0, "heap", proc, "bytes");
	for (int r = 0; r < rounds; r++) {
		int64_t t0 = 1000000 + r * 10000;
		struct rtd_tl_arg args[] = {
			{.key = "gen", .type = RTD_TL_INT, .i = 2},
			{.key = "reason", .type = RTD_TL_STR, .s = "alloc \"small\""},
			{.key = "ratio", .type = RTD_TL_DOUBLE, .d = 0.5},
			{.key = "big", .type = RTD_TL_UINT, .u = UINT64_MAX},
			{.key = "ok", .type = RTD_TL_BOOL, .i = 1},
		};
		struct rtd_tl_event e = ev((uint64_t)th, t0, "request");
		e.category = "work";
		e.flow_out = 0;
		assert_int_equal(rtd_timeline_begin(tl, &e), 0);
		e = ev((uint64_t)th, t0 + 100, "parse");
		assert_int_equal(rtd_timeline_begin(tl, &e), 0);
		assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, t0 + 200), 0);
		e = ev((uint64_t)th, t0 + 300, "hash");
		e.dur = 50;
		assert_int_equal(rtd_timeline_slice(tl, &e), 0);
		e = ev((uint64_t)gc, t0 + 400, "GC 2");
		e.args = args;
		e.nargs = 5;
		e.flow_out = 100 + (uint64_t)r;
		assert_int_equal(rtd_timeline_begin(tl, &e), 0);
		assert_int_equal(rtd_timeline_counter(tl, (uint64_t)heap, t0 + 450,
						      1e6 + r),
				 0);
		assert_int_equal(rtd_timeline_end(tl, (uint64_t)gc, t0 + 500), 0);
		e = ev((uint64_t)th, t0 + 600, "resumed");
		e.flow_in = 100 + (uint64_t)r;
		assert_int_equal(rtd_timeline_instant(tl, &e), 0);
		struct rtd_frame st[] = {{.name = "leaf"}, {.addr = 0x1234},
					 {.name = "main"}};
		assert_int_equal(rtd_timeline_sample(tl, (uint64_t)th, t0 + 700,
						     st, 3),
				 0);
		assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, t0 + 900), 0);
	}
	/* left open: closed by finish */
	struct rtd_tl_event e = ev((uint64_t)th, 5000000000LL, "open at the end");
	assert_int_equal(rtd_timeline_begin(tl, &e), 0);
	/* refused */
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)gc, 1), -RTD_E_STATE);
	assert_int_equal(rtd_timeline_counter(tl, (uint64_t)th, 1, 1), -RTD_E_INVAL);
	e = ev((uint64_t)heap, 1, "x");
	assert_int_equal(rtd_timeline_begin(tl, &e), -RTD_E_INVAL);
	e = ev(999, 1, "x");
	assert_int_equal(rtd_timeline_instant(tl, &e), -RTD_E_INVAL);
	struct rtd_track bad = {.sz = sizeof(bad), .kind = RTD_TRACK_NAMED,
				.name = "x", .parent = 999};
	assert_int_equal(rtd_timeline_add_track(tl, &bad), -RTD_E_INVAL);
}

static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 20, len = 0, n;
	char *out = malloc(cap);
	while ((n = fread(out + len, 1, cap - 1 - len, p)) > 0)
		len += n;
	out[len] = 0;
	int rc = pclose(p);
	if (rc)
		printf("%s: exit %d\n%s\n", cmd, rc, out);
	assert_int_equal(rc, 0);
	return out;
}

static const char *checker(void)
{
	const char *c = rtd_test_path("RTD_SOURCE_DIR",
				      "tests/integration/pictures/tlcheck.py");
	return c ? c : "tests/integration/pictures/tlcheck.py";
}

static void write_file(enum rtd_timeline_format fmt, const char *path,
		       int rounds)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	struct rtd_timeline_opts o = {.sz = sizeof(o), .format = fmt, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	assert_non_null(tl);
	story(tl, rounds);
	struct rtd_timeline_stats st;
	rtd_timeline_get_stats(tl, &st);
	assert_int_equal(st.tracks, 4);
	assert_int_equal(st.open, 1);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	assert_int_equal(rtd_timeline_finish(tl), -RTD_E_STATE);
	rtd_timeline_get_stats(tl, &st);
	assert_int_equal(st.open, 0);
	rtd_timeline_free(tl);
	fclose(f);
}

static void perfetto(void **state)
{
	(void)state;
	const char *proto = rtd_test_vector("reference/perfetto/perfetto_trace.proto");
	if (!proto || access("/usr/bin/protoc", X_OK) != 0) {
		printf("SKIP: protoc (Debian protobuf-compiler) or the Perfetto "
		       "proto is missing\n");
		skip();
	}
	char path[] = "/tmp/rtd-tl-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	write_file(RTD_TIMELINE_FMT_PERFETTO, path, 3);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", proto);
	*strrchr(dir, '/') = 0;
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path=%s --decode=perfetto.protos.Trace "
		 "perfetto_trace.proto < %s > %s.txt && python3 %s perfetto %s.txt",
		 dir, path, path, checker(), path);
	char *out = run(cmd);
	printf("%s", out);
	assert_non_null(strstr(out, "\"slices\": {\"GC\": 3, \"main \\\"thread\\\"\": 10}"));
	assert_non_null(strstr(out, "\"counters\": {\"heap\": 3}"));
	assert_non_null(strstr(out, "\"instants\": {\"resumed\": 3}"));
	assert_non_null(strstr(out, "\"samples\": 3"));
	assert_non_null(strstr(out, "\"flows\": 3"));
	assert_non_null(strstr(out, "\"app\""));
	free(out);
	/* a short string argument is interned once, then referred to */
	snprintf(cmd, sizeof(cmd), "grep -c 'str: \"alloc \\\\\"small\\\\\"\"' %s.txt", path);
	out = run(cmd);
	assert_int_equal(atoi(out), 1);
	free(out);
	snprintf(cmd, sizeof(cmd), "grep -c 'string_value_iid' %s.txt", path);
	out = run(cmd);
	assert_int_equal(atoi(out), 3);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s.txt", path);
	unlink(cmd);
	unlink(path);
}

static void chrome_json(void **state)
{
	(void)state;
	if (access("/usr/bin/python3", X_OK) != 0) {
		printf("SKIP: python3 missing\n");
		skip();
	}
	char path[] = "/tmp/rtd-tl-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	write_file(RTD_TIMELINE_FMT_CHROME_JSON, path, 3);
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "python3 %s json %s", checker(), path);
	char *out = run(cmd);
	printf("%s", out);
	assert_non_null(strstr(out, "\"slices\": {\"GC\": 3, \"main \\\"thread\\\"\": 10}"));
	assert_non_null(strstr(out, "\"counters\": {\"heap (bytes)\": 3}"));
	assert_non_null(strstr(out, "\"samples\": 3"));
	assert_non_null(strstr(out, "\"flows\": 3"));
	assert_non_null(strstr(out, "\"processes\": {\"42\": \"app\"}"));
	free(out);
	unlink(path);
}

/* Interning tables are capped: past the cap a new generation starts and
 * every name still resolves. Memory stays flat over many events. */
static void interning_generations(void **state)
{
	(void)state;
	const char *proto = rtd_test_vector("reference/perfetto/perfetto_trace.proto");
	if (!proto || access("/usr/bin/protoc", X_OK) != 0) {
		printf("SKIP: protoc or the Perfetto proto is missing\n");
		skip();
	}
	char path[] = "/tmp/rtd-tl-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	FILE *f = fopen(path, "wb");
	struct rtd_timeline_opts o = {.sz = sizeof(o),
				      .format = RTD_TIMELINE_FMT_PERFETTO,
				      .out = f, .max_interned = 1000};
	rtd_timeline *tl = rtd_timeline_new(&o);
	int64_t th = track(tl, RTD_TRACK_THREAD, 1, 1, "t", 0, NULL);
	/* more distinct names than one generation holds */
	char name[32];
	size_t n = 1500;
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%zu", i);
		struct rtd_tl_event e = ev((uint64_t)th, (int64_t)i, name);
		assert_int_equal(rtd_timeline_instant(tl, &e), 0);
	}
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	char dir[4096], cmd[8192];
	snprintf(dir, sizeof(dir), "%s", proto);
	*strrchr(dir, '/') = 0;
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path=%s --decode=perfetto.protos.Trace "
		 "perfetto_trace.proto < %s | grep -c 'sequence_flags: 3'",
		 dir, path);
	char *out = run(cmd);
	assert_int_equal(atoi(out), 2); /* the first packet, and one reset */
	free(out);
	/* each generation re-states the default clock and its snapshot */
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path=%s --decode=perfetto.protos.Trace "
		 "perfetto_trace.proto < %s | grep -c 'is_incremental: true'",
		 dir, path);
	out = run(cmd);
	assert_int_equal(atoi(out), 2);
	free(out);
	unlink(path);
}

/* Timestamps are deltas on an incremental clock; an event earlier than
 * the one before (a slice written whole at its end) is given in full on
 * BOOTTIME; tlcheck reads them back as trace processor does and finds the
 * slices nested at their times. Categories are interned. */
static void incremental_time(void **state)
{
	(void)state;
	const char *proto = rtd_test_vector("reference/perfetto/perfetto_trace.proto");
	if (!proto || access("/usr/bin/protoc", X_OK) != 0) {
		printf("SKIP: protoc or the Perfetto proto is missing\n");
		skip();
	}
	char path[] = "/tmp/rtd-tl-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	FILE *f = fopen(path, "wb");
	struct rtd_timeline_opts o = {.sz = sizeof(o),
				      .format = RTD_TIMELINE_FMT_PERFETTO, .out = f};
	rtd_timeline *tl = rtd_timeline_new(&o);
	int64_t th = track(tl, RTD_TRACK_THREAD, 1, 1, "t", 0, NULL);
	int64_t gc = track(tl, RTD_TRACK_NAMED, 0, 0, "GC", 0, NULL);
	struct rtd_tl_event e = ev((uint64_t)th, 5000000000, "outer");
	e.category = "cat";
	assert_int_equal(rtd_timeline_begin(tl, &e), 0);
	e = ev((uint64_t)th, 5000000100, "inner");
	e.category = "cat";
	assert_int_equal(rtd_timeline_begin(tl, &e), 0);
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 5000000200), 0);
	/* written at its end, begun before the last event: BOOTTIME, in full */
	e = ev((uint64_t)gc, 5000000050, "GC");
	e.dur = 100;
	assert_int_equal(rtd_timeline_slice(tl, &e), 0);
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 5000000300), 0);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	char dir[4096], cmd[8192];
	snprintf(dir, sizeof(dir), "%s", proto);
	*strrchr(dir, '/') = 0;
	snprintf(cmd, sizeof(cmd),
		 "protoc --proto_path=%s --decode=perfetto.protos.Trace "
		 "perfetto_trace.proto < %s > %s.txt && "
		 "grep -c 'timestamp_clock_id: 6$' %s.txt && "
		 "grep -c 'timestamp: 5000000050$' %s.txt && "
		 "grep -c 'name: \"cat\"' %s.txt && "
		 "grep -c '^  timestamp: 100$' %s.txt && "
		 "python3 %s perfetto %s.txt",
		 dir, path, path, path, path, path, path, checker(), path);
	char *out = run(cmd);
	printf("%s", out);
	/* the GC slice's begin and end in full, the category once, deltas
	 * of 100 ns */
	assert_int_equal(strncmp(out, "2\n1\n1\n", 6), 0);
	assert_true(atoi(out + 6) >= 2);
	assert_non_null(strstr(out, "\"slices\": {\"GC\": 1, \"t\": 2}"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s.txt", path);
	unlink(cmd);
	unlink(path);
}

static void formats(void **state)
{
	(void)state;
	assert_int_equal(rtd_timeline_format_from_path("a.perfetto-trace"),
			 RTD_TIMELINE_FMT_PERFETTO);
	assert_int_equal(rtd_timeline_format_from_path("a.pftrace"),
			 RTD_TIMELINE_FMT_PERFETTO);
	assert_int_equal(rtd_timeline_format_from_path("a.json"),
			 RTD_TIMELINE_FMT_CHROME_JSON);
	assert_int_equal(rtd_timeline_format_from_path("a.svg"),
			 RTD_TIMELINE_FMT_NONE);
	assert_int_equal(rtd_timeline_format_from_name("chrome-json"),
			 RTD_TIMELINE_FMT_CHROME_JSON);
	assert_int_equal(rtd_timeline_format_from_name("perfetto"),
			 RTD_TIMELINE_FMT_PERFETTO);
	assert_int_equal(rtd_timeline_format_from_name("svg"),
			 RTD_TIMELINE_FMT_NONE);
	assert_string_equal(rtd_timeline_format_name(RTD_TIMELINE_FMT_PERFETTO),
			    "perfetto");
	struct rtd_timeline_opts o = {.sz = sizeof(o)};
	assert_null(rtd_timeline_new(&o));
	rtd_timeline_free(NULL);
}

/* EventPipe samples named from the stream's method events: the table is
 * taught by a first pass (the rundown is at the end), then the adapter
 * names every sampled frame of the golden .NET 5 vector. */
struct nt_pass {
	rtd_nettrace *dec;
	rtd_tl_nettrace *a;
	rtd_nettrace_methods *m;
};

static int nt_learn(void *ctx, const struct rtd_nettrace_event *ev)
{
	return rtd_nettrace_methods_event(((struct nt_pass *)ctx)->m, ev);
}

static int nt_draw(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct nt_pass *p = ctx;
	return rtd_tl_nettrace_event(p->a, p->dec, ev);
}

/* A shared nettrace vector, read whole; skips the test without it. */
static uint8_t *nettrace_vector(const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof(path), "testdata/nettrace/%s", name);
	const char *v = rtd_test_vector(path);
	if (!v) {
		printf("SKIP: ../shared/testdata missing\n");
		skip();
	}
	uint8_t *b = rtd_test_slurp(v, len);
	assert_non_null(b);
	return b;
}

/* A first pass: the stream's method table. */
static rtd_nettrace_methods *learn_methods(const uint8_t *b, size_t len)
{
	struct nt_pass learn = {.m = rtd_nettrace_methods_new()};
	struct rtd_nettrace_opts no = {.sz = sizeof(no), .ctx = &learn,
				       .on_event = nt_learn};
	rtd_nettrace *d = rtd_nettrace_new(&no);
	assert_true(rtd_nettrace_feed(d, b, len) >= 0);
	assert_int_equal(rtd_nettrace_finish(d), 0);
	rtd_nettrace_free(d);
	return learn.m;
}

static char *nettrace_json(const uint8_t *b, size_t len, rtd_nettrace_methods *m)
{
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	rtd_timeline *tl = json_timeline(f);
	struct nt_pass p = {.a = rtd_tl_nettrace_new(tl, "golden")};
	rtd_tl_nettrace_set_methods(p.a, m);
	struct rtd_nettrace_opts no = {.sz = sizeof(no), .ctx = &p,
				       .on_event = nt_draw};
	p.dec = rtd_nettrace_new(&no);
	assert_true(rtd_nettrace_feed(p.dec, b, len) >= 0);
	assert_int_equal(rtd_nettrace_finish(p.dec), 0);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_nettrace_free(p.dec);
	rtd_tl_nettrace_free(p.a);
	rtd_timeline_free(tl);
	fclose(f);
	return out;
}

static void nettrace_named_samples(void **state)
{
	(void)state;
	size_t len = 0;
	uint8_t *b = nettrace_vector("dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", &len);
	struct nt_pass learn = {.m = learn_methods(b, len)};
	assert_true(rtd_nettrace_methods_count(learn.m) > 0);

	char *named = nettrace_json(b, len, learn.m);
	char *bare = nettrace_json(b, len, NULL);
	const char *work = "mvc-hello-world!Example.Program.Work(int32)";
	assert_non_null(strstr(named, work));
	assert_null(strstr(bare, work));
	/* every frame of every sample is named: no address in a stack */
	size_t samples = 0;
	for (const char *s = named; (s = strstr(s, "\"stack\":[")) != NULL; s++) {
		const char *end = strchr(s, ']');
		assert_non_null(end);
		const char *hex = strstr(s, "\"0x");
		assert_true(!hex || hex > end);
		samples++;
	}
	assert_true(samples > 100);
	printf("ok: %zu samples, every frame named (%zu methods learnt)\n",
	       samples, rtd_nettrace_methods_count(learn.m));
	free(named);
	free(bare);
	rtd_nettrace_methods_free(learn.m);
	free(b);
}


/* A set of frame names, each without its module ("module!" before any
 * '('), sorted and unique. */
struct nameset {
	char **v;
	size_t n, cap;
};

static void ns_add(struct nameset *s, const char *name, size_t len)
{
	const char *bang = memchr(name, '!', len);
	const char *paren = memchr(name, '(', len);
	if (bang && (!paren || bang < paren)) {
		len -= (size_t)(bang + 1 - name);
		name = bang + 1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n] = strndup(name, len);
	assert_non_null(s->v[s->n]);
	s->n++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void ns_done(struct nameset *s)
{
	qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	size_t w = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (w && !strcmp(s->v[w - 1], s->v[i])) {
			free(s->v[i]);
			continue;
		}
		s->v[w++] = s->v[i];
	}
	s->n = w;
}

static void ns_free(struct nameset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

struct prof_pass {
	rtd_nettrace *dec;
	rtd_nettrace_profiler *p;
};

static int prof_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct prof_pass *p = ctx;
	return rtd_nettrace_profiler_event(p->p, p->dec, ev);
}

static int prof_seq(void *ctx, uint64_t ts)
{
	(void)ts;
	return rtd_nettrace_profiler_seqpoint(((struct prof_pass *)ctx)->p);
}

/* ReadyToRun frames: the objver4 vector's framework code (CoreLib's
 * precompiled methods) is named only by R2RGetEntryPoint events. The
 * timeline names every sampled frame the nettrace profiler's profile of
 * the same stream names, with the same method names (modules aside: the
 * profile prints this Windows trace's module paths whole); the frames the
 * profile cannot name either stay addresses. Before the methods table took
 * R2RGetEntryPoint, 977 of 998 distinct frames stayed addresses. */
static void nettrace_r2r_named(void **state)
{
	(void)state;
	size_t len = 0;
	uint8_t *b = nettrace_vector("eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", &len);
	struct nt_pass learn = {.m = learn_methods(b, len)};
	char *json = nettrace_json(b, len, learn.m);

	/* the timeline's frames: "stack":["name",...] of each sample. A
	 * thread's first sample weighs nothing in the profile (dotnetdiag's
	 * model: a sample weighs the time since the thread's previous one), so
	 * its frames are left out here, where they may be the only ones */
	struct nameset tl = {0}, pr = {0};
	size_t addrs = 0, samples = 0, ntids = 0;
	long tids[1024];
	/* line by line (a sample is one line): searches stay within a line */
	for (char *line = json, *eol; line && *line; line = eol ? eol + 1 : NULL) {
		eol = strchr(line, '\n');
		if (eol)
			*eol = 0;
		const char *s = strstr(line, "\"stack\":[");
		if (!s)
			continue;
		const char *t = strstr(line, "\"tid\":");
		assert_true(t && t < s);
		long tid = strtol(t + 6, NULL, 10);
		bool first = true;
		for (size_t k = 0; k < ntids && first; k++)
			first = tids[k] != tid;
		if (first && ntids < 1024)
			tids[ntids++] = tid;
		s += 9;
		samples++;
		while (*s == '"') {
			char name[4096];
			size_t n = 0;
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\')
					s++;
				if (n < sizeof(name) - 1)
					name[n++] = *s;
			}
			assert_int_equal(*s, '"');
			s++;
			if (n > 2 && name[0] == '0' && name[1] == 'x')
				addrs++;
			else if (!first)
				ns_add(&tl, name, n);
			if (*s == ',')
				s++;
		}
	}
	ns_done(&tl);

	/* the profile's frames, from its folded text */
	struct prof_pass pp = {.p = rtd_nettrace_profiler_new(NULL)};
	assert_non_null(pp.p);
	struct rtd_nettrace_opts po = {.sz = sizeof(po), .ctx = &pp,
				       .on_event = prof_event,
				       .on_seqpoint = prof_seq};
	pp.dec = rtd_nettrace_new(&po);
	assert_true(rtd_nettrace_feed(pp.dec, b, len) >= 0);
	assert_int_equal(rtd_nettrace_finish(pp.dec), 0);
	rtd_profile *prof = rtd_profile_new("cpu", "nanoseconds");
	assert_int_equal(rtd_nettrace_profiler_finish(pp.p, prof), 0);
	char *folded = NULL;
	size_t flen = 0;
	FILE *f = open_memstream(&folded, &flen);
	assert_int_equal(rtd_profile_write(prof, RTD_PROFILE_FMT_FOLDED, f, NULL), 0);
	fclose(f);
	size_t unnamed = 0;
	for (char *line = folded; line && *line;) {
		char *end = strchr(line, '\n');
		char *sp = end ? end : line + strlen(line);
		while (sp > line && sp[-1] != ' ')
			sp--;
		for (char *fr = line; fr < sp - 1;) {
			char *semi = memchr(fr, ';', (size_t)(sp - 1 - fr));
			char *fe = semi ? semi : sp - 1;
			size_t n = (size_t)(fe - fr);
			if ((n == 1 && fr[0] == '?') || (n == 3 && !memcmp(fr, "?!?", 3)))
				unnamed++;
			else
				ns_add(&pr, fr, n);
			fr = fe + 1;
		}
		line = end ? end + 1 : NULL;
	}
	ns_done(&pr);

	size_t i = 0, j = 0, diff = 0;
	while (i < tl.n || j < pr.n) {
		int c = i == tl.n ? 1 : j == pr.n ? -1 : strcmp(tl.v[i], pr.v[j]);
		if (c && diff++ < 10)
			printf("only in the %s: %s\n", c < 0 ? "timeline" : "profile",
			       c < 0 ? tl.v[i] : pr.v[j]);
		i += c <= 0;
		j += c >= 0;
	}
	printf("objver4: %zu samples; %zu distinct names in the timeline, %zu in "
	       "the profile, %zu differ; %zu address frames (profile: %zu "
	       "unnamed frames)\n",
	       samples, tl.n, pr.n, diff, addrs, unnamed);
	assert_true(samples > 30000);
	assert_true(tl.n > 400);
	/* CoreLib code only R2RGetEntryPoint names */
	const char *key = "System.AppContext.GetData(class System.String)";
	assert_non_null(bsearch(&key, tl.v, tl.n, sizeof(*tl.v), cmp_str));
	assert_int_equal(diff, 0);
	assert_true(addrs == 0 || unnamed > 0);

	ns_free(&tl);
	ns_free(&pr);
	free(folded);
	rtd_profile_free(prof);
	rtd_nettrace_free(pp.dec);
	rtd_nettrace_profiler_free(pp.p);
	free(json);
	rtd_nettrace_methods_free(learn.m);
	free(b);
}

/* An "E" names the slice it ends (speedscope's importer ends a slice only
 * on an "E" of its name), innermost first, also for what finish closes. */
static void chrome_json_end_names(void **state)
{
	(void)state;
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	rtd_timeline *tl = json_timeline(f);
	int64_t th = track(tl, RTD_TRACK_THREAD, 1, 1, "t", 0, NULL);
	const char *names[] = {"a", "b", "c", "d", "e", "f"}; /* deeper than the first array */
	for (size_t i = 0; i < 6; i++) {
		struct rtd_tl_event e = ev((uint64_t)th, 1000 + (int64_t)i, names[i]);
		assert_int_equal(rtd_timeline_begin(tl, &e), 0);
	}
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 2000), 0);
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 2001), 0);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	const char *at = out;
	for (int i = 5; i >= 0; i--) {
		char want[32];
		snprintf(want, sizeof(want), "{\"ph\":\"E\",\"name\":\"%s\"", names[i]);
		at = strstr(at, want);
		assert_non_null(at);
	}
	free(out);
}

/* An "E" repeats its slice's args: speedscope keys a frame by name and
 * args, and of a "B" and an "E" at one time takes the "B" first only when
 * their keys are equal, so a zero-length slice with args (a Go goroutine
 * runnable for 0 ns, "where" its args) stayed open to the end of the
 * profile; a slice without args gets an "E" without them. */
static void chrome_json_end_args(void **state)
{
	(void)state;
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	rtd_timeline *tl = json_timeline(f);
	int64_t th = track(tl, RTD_TRACK_THREAD, 1, 1, "t", 0, NULL);
	struct rtd_tl_arg args[] = {{.key = "where", .type = RTD_TL_STR, .s = "runtime.Gosched"},
				    {.key = "n", .type = RTD_TL_INT, .i = -7}};
	struct rtd_tl_event outer = ev((uint64_t)th, 1000, "outer");
	struct rtd_tl_event e = ev((uint64_t)th, 1500, "runnable: yielded");
	e.args = args;
	e.nargs = 2;
	assert_int_equal(rtd_timeline_begin(tl, &outer), 0);
	assert_int_equal(rtd_timeline_begin(tl, &e), 0);
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 1500), 0); /* zero length */
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 2000), 0);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	const char *a = "\"args\":{\"where\":\"runtime.Gosched\",\"n\":-7}";
	const char *b = strstr(out, "{\"ph\":\"B\",\"name\":\"runnable: yielded\"");
	const char *end = strstr(out, "{\"ph\":\"E\",\"name\":\"runnable: yielded\"");
	const char *oend = strstr(out, "{\"ph\":\"E\",\"name\":\"outer\"");
	assert_non_null(b);
	assert_non_null(end);
	assert_non_null(oend);
	const char *bargs = strstr(b, a), *eargs = strstr(end, a);
	assert_true(bargs && bargs < end); /* the B's own */
	assert_true(eargs && eargs < oend); /* repeated on its E */
	assert_null(strstr(oend, "\"args\"")); /* outer had none */
	free(out);
}

/* rtd_track and rtd_tl_event are checked as every struct of libbpf's
 * shape (rtd_opts_check()): an older caller's shorter struct is read with
 * the rest as zero (the old check refused it), a newer caller's longer one
 * only when its bytes past this version's fields are zero (the old check
 * took any). */
static void struct_versions(void **state)
{
	(void)state;
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	rtd_timeline *tl = json_timeline(f);
	struct rtd_track old = {.sz = RTD_OPTS_END(rtd_track, parent),
				.kind = RTD_TRACK_THREAD, .pid = 1, .tid = 2, .name = "t",
				.unit = "not read"};
	int64_t th = rtd_timeline_add_track(tl, &old);
	assert_true(th > 0);
	struct {
		struct rtd_track t;
		uint64_t newer;
	} tb = {.t = {.sz = sizeof(tb), .kind = RTD_TRACK_THREAD, .pid = 1, .tid = 3,
		      .name = "u"}};
	assert_true(rtd_timeline_add_track(tl, &tb.t) > 0);
	tb.newer = 1;
	assert_int_equal(rtd_timeline_add_track(tl, &tb.t), -RTD_E_INVAL);
	struct {
		struct rtd_tl_event e;
		uint64_t newer;
	} eb = {.e = ev((uint64_t)th, 1000, "newer")};
	eb.e.sz = sizeof(eb);
	assert_int_equal(rtd_timeline_instant(tl, &eb.e), 0);
	eb.newer = 9;
	assert_int_equal(rtd_timeline_instant(tl, &eb.e), -RTD_E_INVAL);
	assert_int_equal(rtd_timeline_begin(tl, &eb.e), -RTD_E_INVAL);
	eb.e.dur = 5;
	assert_int_equal(rtd_timeline_slice(tl, &eb.e), -RTD_E_INVAL);
	struct rtd_tl_event oe = ev((uint64_t)th, 2000, "older");
	oe.sz = RTD_OPTS_END(rtd_tl_event, nargs);
	oe.flow_out = 77; /* past the older struct: not read */
	assert_int_equal(rtd_timeline_begin(tl, &oe), 0);
	assert_int_equal(rtd_timeline_end(tl, (uint64_t)th, 2500), 0);
	assert_int_equal(rtd_timeline_finish(tl), 0);
	rtd_timeline_free(tl);
	fclose(f);
	assert_non_null(strstr(out, "\"name\":\"newer\""));
	assert_non_null(strstr(out, "{\"ph\":\"B\",\"name\":\"older\""));
	assert_null(strstr(out, "\"unit\""));
	assert_null(strstr(out, "77"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats),
		cmocka_unit_test(perfetto),
		cmocka_unit_test(chrome_json),
		cmocka_unit_test(chrome_json_end_names),
		cmocka_unit_test(chrome_json_end_args),
		cmocka_unit_test(struct_versions),
		cmocka_unit_test(interning_generations),
		cmocka_unit_test(incremental_time),
		cmocka_unit_test(nettrace_named_samples),
		cmocka_unit_test(nettrace_r2r_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
