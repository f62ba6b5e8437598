/* SPDX-License-Identifier: MIT */
/*
 * test_queue_blocks.c - rtd_source_thread() copies each record into a
 * block cut from chunks it reuses, not into a malloc of its own (issue
 * #31: a flight ring's RSS flat over 10 minutes).
 *
 * The old queue malloc'd each record's copy on its thread and the
 * consumer freed it on another: blocks of every size freed into an arena
 * not the freeing thread's, the free space of glibc's heaps growing for
 * minutes in a ring. Here a source (a generator: the queue is what is
 * tested) gives 50,000 records, each with a string field of 1 to 700
 * bytes, read on the main thread while the queue's thread copies them.
 * malloc is wrapped at link time (-Wl,--wrap=malloc, this test only) to
 * count the calls made on threads other than the main one:
 *  - every record comes out whole (its field's bytes are its own);
 *  - the queue's thread made fewer than one malloc per 100 records (the
 *    old queue made one per record: it fails with "50000 mallocs").
 */

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "rtdiag/source.h"

#define RECORDS 50000
#define MAX_LEN 700

void *__real_malloc(size_t n);
static atomic_ulong other_mallocs;
static pid_t main_tid;

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	if (main_tid && (pid_t)syscall(SYS_gettid) != main_tid)
		atomic_fetch_add(&other_mallocs, 1);
	return __real_malloc(n);
}

struct gen {
	int i;
	int64_t t;
	char text[MAX_LEN + 1];
	struct rtd_field f;
};

static size_t len_of(int i)
{
	return 1 + (size_t)(i * 7919 % MAX_LEN);
}

static int gen_next(void *impl, struct rtd_record *rec)
{
	struct gen *g = impl;
	if (g->i == RECORDS)
		return 0;
	size_t n = len_of(g->i);
	memset(g->text, 'a' + g->i % 26, n);
	g->text[n] = 0;
	g->f = (struct rtd_field){.name = "text", .type = RTD_FIELD_STR, .s = g->text};
	rec->kind = RTD_REC_INSTANT;
	rec->ts = rec->mono = ++g->t;
	rec->name = "gen";
	rec->fields = &g->f;
	rec->nfields = 1;
	g->i++;
	return 1;
}

static int gen_clock(void *impl, struct rtd_clock *out)
{
	(void)impl;
	*out = (struct rtd_clock){.domain = RTD_CLOCK_MONOTONIC};
	return 0;
}

static const struct rtd_source_ops gen_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "gen",
	.next = gen_next,
	.clock = gen_clock,
};

static void queue_blocks(void **st)
{
	(void)st;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* times an hour ahead: never behind the watermark on a slow box */
	static struct gen g;
	g.t = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + 3600000000000ll;
	rtd_source *in = rtd_source_new(&gen_ops, &g);
	assert_non_null(in);
	main_tid = (pid_t)syscall(SYS_gettid);
	int err = 0;
	rtd_source *s = rtd_source_thread(in, NULL, &err);
	assert_non_null(s);
	const struct rtd_record *r;
	int got = 0, bad = 0, rc;
	for (;;) {
		while ((rc = rtd_source_next(s, &r)) == RTD_SOURCE_IDLE)
			assert_true(rtd_source_wait(s, 10000) >= 0);
		if (rc != 1)
			break;
		size_t n = len_of(got);
		const char *t = r->nfields == 1 ? r->fields[0].s : NULL;
		bool ok = t && strlen(t) == n && t[0] == 'a' + got % 26 && t[n - 1] == t[0] &&
			  !strcmp(r->name, "gen") && !strcmp(r->fields[0].name, "text");
		bad += !ok;
		got++;
	}
	assert_int_equal(rc, 0);
	rtd_source_free(s);
	unsigned long m = atomic_load(&other_mallocs);
	printf("# %d records through the queue, %d not whole; %lu mallocs on its thread\n", got,
	       bad, m);
	assert_int_equal(got, RECORDS);
	assert_int_equal(bad, 0);
	if (m * 100 >= RECORDS)
		fail_msg("%lu mallocs on the queue's thread for %d records", m, RECORDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(queue_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
