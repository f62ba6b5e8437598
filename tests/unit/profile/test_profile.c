/* SPDX-License-Identifier: MIT */
/* The profile model and its writers. pprof output is checked by a real
 * consumer, `go tool pprof` from Debian's Go, when it is installed. */
#include "test_util.h"

#include <zlib.h>

#include "rtdiag/profile.h"

static rtd_profile *sample_profile(void)
{
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	assert_non_null(p);
	const char *a[] = {"main", "work", "hash"};
	const char *b[] = {"main", "work"};
	const char *c[] = {"main", "idle"};
	const char *r[] = {"main", "rec", "rec", "rec"};
	assert_int_equal(rtd_profile_add(p, a, 3, 100), 0);
	assert_int_equal(rtd_profile_add(p, a, 3, 50), 0); /* merged */
	assert_int_equal(rtd_profile_add(p, b, 2, 30), 0);
	assert_int_equal(rtd_profile_add(p, c, 2, 7), 0);
	assert_int_equal(rtd_profile_add(p, r, 4, 5), 0);
	return p;
}

static char *folded_text(const rtd_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_folded(p, f), 0);
	fclose(f);
	return buf;
}

static void folded(void **state)
{
	(void)state;
	rtd_profile *p = sample_profile();
	char *t = folded_text(p);
	assert_string_equal(t, "main;idle 7\n"
			       "main;rec;rec;rec 5\n"
			       "main;work 30\n"
			       "main;work;hash 150\n");
	assert_int_equal(rtd_profile_total(p), 192);
	free(t);
	rtd_profile_free(p);
	rtd_profile_free(NULL);
}

static void empty_and_rootless(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new(NULL, NULL);
	char *t = folded_text(p);
	assert_string_equal(t, "");
	free(t);
	/* a stack of no frames adds to the total only */
	assert_int_equal(rtd_profile_add(p, NULL, 0, 9), 0);
	assert_int_equal(rtd_profile_total(p), 9);
	struct rtd_profile_entry e[4];
	assert_int_equal(rtd_profile_top(p, e, 4), 0);
	rtd_profile_free(p);
}

static void top(void **state)
{
	(void)state;
	rtd_profile *p = sample_profile();
	struct rtd_profile_entry e[3];
	assert_int_equal(rtd_profile_top(p, e, 3), 3);
	assert_string_equal(e[0].name, "hash");
	assert_int_equal(e[0].self, 150);
	assert_int_equal(e[0].total, 150);
	assert_string_equal(e[1].name, "work");
	assert_int_equal(e[1].self, 30);
	assert_int_equal(e[1].total, 180);
	assert_string_equal(e[2].name, "idle");
	struct rtd_profile_entry all[10];
	int n = rtd_profile_top(p, all, 10);
	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++) {
		if (strcmp(all[i].name, "main") == 0) {
			assert_int_equal(all[i].self, 0);
			assert_int_equal(all[i].total, 192);
		}
		if (strcmp(all[i].name, "rec") == 0) {
			/* recursion counts once per stack */
			assert_int_equal(all[i].total, 5);
			assert_int_equal(all[i].self, 5);
		}
	}
	rtd_profile_free(p);
}

static void deep_and_many(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new("samples", "count");
	const char *frames[3000];
	char names[3000][8];
	for (int i = 0; i < 3000; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i % 97);
		frames[i] = names[i];
	}
	for (int k = 1; k <= 3000; k += 7)
		assert_int_equal(rtd_profile_add(p, frames, (size_t)k, 1), 0);
	char *t = folded_text(p);
	size_t lines = 0;
	for (char *s = t; *s; s++)
		lines += *s == '\n';
	assert_int_equal(lines, (3000 + 6) / 7);
	free(t);
	rtd_profile_free(p);
}

/* Minimal protobuf walk: count top-level fields by number. */
static void pb_count(const uint8_t *b, size_t n, unsigned counts[16])
{
	size_t i = 0;
	while (i < n) {
		uint64_t key = 0;
		unsigned sh = 0;
		while (b[i] & 0x80)
			key |= (uint64_t)(b[i++] & 0x7f) << sh, sh += 7;
		key |= (uint64_t)b[i++] << sh;
		unsigned field = (unsigned)(key >> 3), wt = key & 7;
		if (field < 16)
			counts[field]++;
		uint64_t v = 0;
		sh = 0;
		while (b[i] & 0x80)
			v |= (uint64_t)(b[i++] & 0x7f) << sh, sh += 7;
		v |= (uint64_t)b[i++] << sh;
		if (wt == 2)
			i += v;
		assert_true(wt == 0 || wt == 2);
	}
	assert_int_equal(i, n);
}

/* `go tool pprof -top` of the pprof file at path into out, and the file
 * removed; false (a skip said) without Go. */
static bool go_top(const char *path, char *out, size_t max)
{
	const char *go = "/usr/lib/go-1.19/bin/go";
	if (access(go, X_OK) != 0) {
		printf("SKIP part: %s not installed, pprof not read by a real "
		       "consumer\n", go);
		unlink(path);
		return false;
	}
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOCACHE=/tmp/rtd-gocache %s tool pprof -top "
		 "-nodecount=20 %s 2>&1", go, path);
	FILE *pp = popen(cmd, "r");
	assert_non_null(pp);
	size_t len = fread(out, 1, max - 1, pp);
	out[len] = 0;
	int rc = pclose(pp);
	unlink(path);
	if (rc != 0)
		printf("go tool pprof said:\n%s\n", out);
	assert_int_equal(rc, 0);
	return true;
}

/* pprof takes its first mapping for the main binary: a library mapped
 * first (the first sample's leaf in libc) must not be named the program */
static void main_binary(void **state)
{
	(void)state;
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	assert_non_null(p);
	int libc = rtd_profile_add_mapping(p, 0x7f0000001000, 0x7f0000100000, 0x1000,
					   "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	int vdso = rtd_profile_add_mapping(p, 0x7fff00000000, 0x7fff00002000, 0,
					   "[vdso]", NULL);
	int app = rtd_profile_add_mapping(p, 0x400000, 0x500000, 0, "/opt/bin/app", NULL);
	assert_true(libc == 1 && vdso == 2 && app == 3);
	struct rtd_frame fr[] = {
		{.name = "write", .module = "libc.so.6", .addr = 0x7f0000002000, .mapping = 1},
		{.name = "main", .module = "app", .addr = 0x401000, .mapping = 3},
	};
	int64_t v = 100;
	struct rtd_sample smp = {.sz = sizeof(smp), .frames = fr, .nframes = 2,
				 .leaf_first = true, .values = &v, .nvalues = 1};
	assert_int_equal(rtd_profile_add_sample(p, &smp), 0);
	char path[] = "/tmp/rtd-pprof-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_int_equal(rtd_profile_write_pprof(p, f), 0);
	fclose(f);
	rtd_profile_free(p);
	char out[8192];
	if (go_top(path, out, sizeof(out)))
		assert_non_null(strstr(out, "File: app\n"));
}

static void pprof(void **state)
{
	(void)state;
	rtd_profile *p = sample_profile();
	char path[] = "/tmp/rtd-pprof-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_int_equal(rtd_profile_write_pprof(p, f), 0);
	fclose(f);
	/* gunzip and check the message's shape */
	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	static uint8_t raw[1 << 16];
	int n = gzread(gz, raw, sizeof(raw));
	gzclose(gz);
	assert_true(n > 0);
	unsigned counts[16] = {0};
	pb_count(raw, (size_t)n, counts);
	assert_int_equal(counts[1], 1); /* sample_type */
	assert_int_equal(counts[2], 4); /* one sample per distinct stack */
	assert_int_equal(counts[4], 5); /* a location per frame name */
	assert_int_equal(counts[5], 5); /* a function per frame name */
	assert_int_equal(counts[6], 3 + 5); /* "", type, unit, names */
	rtd_profile_free(p);

	char out[8192];
	if (!go_top(path, out, sizeof(out)))
		return;
	/* `go tool pprof -top` prints "flat flat% sum% cum cum%" rows */
	assert_non_null(strstr(out, "Type: cpu"));
	assert_non_null(strstr(out, "150ns"));
	assert_non_null(strstr(out, " hash"));
	assert_non_null(strstr(out, "192ns"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded),
		cmocka_unit_test(empty_and_rootless),
		cmocka_unit_test(top),
		cmocka_unit_test(deep_and_many),
		cmocka_unit_test(pprof),
		cmocka_unit_test(main_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
