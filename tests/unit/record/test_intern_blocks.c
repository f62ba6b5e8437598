/* SPDX-License-Identifier: MIT */
/*
 * test_intern_blocks.c - an interner cuts its strings and stacks from
 * chunks, not from a malloc of its own size each (issue #31: a flight
 * ring's RSS flat over 10 minutes).
 *
 * A flight ring makes a new interner at each compaction and a live perf
 * source at each generation; each string and stack of the old interner
 * was a block of its own size, all freed together minutes later, beside
 * the ring's chunks: holes of every size in the heap. Here 20,000
 * distinct strings of 1 to 300 bytes and 5,000 distinct stacks of 1 to
 * 40 frames (named from a pool of 500 names, a module each, some with a
 * file) are interned twice each, malloc wrapped at link time (this test
 * only):
 *  - equal strings and stacks get the same pointer (and id), different
 *    ones different, every byte kept, the counts exact;
 *  - fewer than one malloc per 50 strings and stacks (the old interner
 *    made one for each: it fails with "25503 mallocs for 20000 strings
 *    and 5000 stacks").
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"
#include "rtdiag/source.h"

#define STRINGS 20000
#define STACKS 5000
#define NAMES 500
#define MAX_LEN 300
#define MAX_DEPTH 40

void *__real_malloc(size_t n);
static unsigned long mallocs;
static bool counting;

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	mallocs += counting;
	return __real_malloc(n);
}

/* string @i: its length and bytes (distinct for each i) */
static size_t text_of(int i, char *buf)
{
	size_t n = 1 + (size_t)(i * 7919 % MAX_LEN);
	int head = snprintf(buf, MAX_LEN + 1, "%d:", i);
	for (size_t k = (size_t)head; k < n; k++)
		buf[k] = (char)('a' + (i + (int)k) % 26);
	if (n < (size_t)head)
		n = (size_t)head; /* the number alone keeps it distinct */
	buf[n] = 0;
	return n;
}

/* stack @i's frames (distinct for each i: its depth and leaf ip) */
static size_t stack_of(int i, struct rtd_rec_frame *f, char names[][16])
{
	size_t n = 1 + (size_t)(i % MAX_DEPTH);
	for (size_t k = 0; k < n; k++)
		f[k] = (struct rtd_rec_frame){
			.ip = k ? 0x1000 + k : 0x100000 + (uint64_t)i,
			.name = names[(i + (int)k) % NAMES],
			.module = k % 2 ? "libx.so" : "/usr/bin/y",
			.file = k % 3 ? NULL : "y.c",
			.line = k,
		};
	return n;
}

static void intern_blocks(void **st)
{
	(void)st;
	static char names[NAMES][16];
	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "fn_%d", i);
	rtd_intern *in = rtd_intern_new();
	assert_non_null(in);
	static const char *first[STRINGS];
	static const struct rtd_stack *firsts[STACKS];
	char buf[MAX_LEN + 1];
	struct rtd_rec_frame f[MAX_DEPTH];
	counting = true;
	int bad = 0;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < STRINGS; i++) {
			size_t n = text_of(i, buf);
			const char *out = NULL;
			assert_int_equal(rtd_intern_string(in, buf, n, &out), 0);
			bad += !out || strlen(out) != n || memcmp(out, buf, n) ||
			       (round ? out != first[i] : out == buf);
			if (!round)
				first[i] = out;
		}
		for (int i = 0; i < STACKS; i++) {
			size_t n = stack_of(i, f, names);
			const struct rtd_stack *out = NULL;
			assert_int_equal(rtd_intern_stack(in, f, n, &out), 0);
			bad += !out || out->n != n || out->frames[0].ip != f[0].ip ||
			       strcmp(out->frames[n - 1].name, f[n - 1].name) ||
			       (round ? out != firsts[i] : out->id != (uint32_t)i + 1);
			if (!round)
				firsts[i] = out;
		}
	}
	counting = false;
	size_t ns = 0, nk = 0;
	rtd_intern_counts(in, &ns, &nk);
	printf("# %zu strings and %zu stacks interned (each twice), %d wrong; %lu mallocs\n", ns,
	       nk, bad, mallocs);
	assert_int_equal(bad, 0);
	/* the strings, and the frames' names and modules (y.c among them) */
	assert_int_equal(ns, STRINGS + NAMES + 3);
	assert_int_equal(nk, STACKS);
	rtd_intern_free(in);
	if (mallocs * 50 >= STRINGS + STACKS)
		fail_msg("%lu mallocs for %d strings and %d stacks", mallocs, STRINGS, STACKS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
