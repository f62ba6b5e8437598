/* SPDX-License-Identifier: MIT */
/* test_util.h - helpers for rtdiag's cmocka tests. */
#ifndef RTD_TEST_UTIL_H
#define RTD_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Exit code that ctest reports as "skipped" (SKIP_RETURN_CODE). */
#define RTD_TEST_SKIP 77

/*
 * rtd_test_path - a path under one of the directories the harness names
 * @var: "RTD_SHARED_DIR", "RTD_SOURCE_DIR" or "RTD_BINARY_DIR"
 * @rel: path relative to it
 *
 * Returns a static buffer, or NULL when the variable is unset.
 */
static inline const char *rtd_test_path(const char *var, const char *rel)
{
	static char buf[8][4096];
	static unsigned slot;
	const char *dir = getenv(var);
	if (!dir)
		return NULL;
	char *b = buf[slot++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", dir, rel);
	return b;
}

/* The path of a shared test vector, or NULL (with a printed reason) when
 * ../shared/testdata is not beside the project. */
static inline const char *rtd_test_vector(const char *rel)
{
	const char *p = rtd_test_path("RTD_SHARED_DIR", rel);
	if (!p || access(p, R_OK) != 0) {
		printf("SKIP: test vector %s not found (../shared/testdata "
		       "missing?)\n", rel);
		return NULL;
	}
	return p;
}

/* Read a whole (test-sized) file; returns malloc'd bytes or NULL. */
static inline uint8_t *rtd_test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = n > 0 ? (size_t)n : 0;
	return b;
}

/*
 * rtd_test_wait_ms - how long a test waits for a condition before it gives up
 *
 * RTD_TEST_WAIT seconds (default 300). The bound only keeps a broken test
 * from hanging: on a 2-core machine at load 30 a runtime takes tens of
 * seconds to start, so a test polls for its condition (a file, an event)
 * and never waits longer than that takes.
 */
static inline unsigned rtd_test_wait_ms(void)
{
	const char *e = getenv("RTD_TEST_WAIT");
	long s = e ? atol(e) : 0;
	return (unsigned)(s > 0 ? s : 300) * 1000u;
}

#endif /* RTD_TEST_UTIL_H */
