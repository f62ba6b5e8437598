/* SPDX-License-Identifier: MIT */
/*
 * test_queue_pages.c - a live source's queue writes the pages its depth
 * needs, not a new slot for every record that passes (issue #31: RSS
 * flat over a 10-minute ring).
 *
 * rtd_source_thread() queues copied records in a ring of 4,096 slots.
 * The old ring went on to the next slot after each record, so a source
 * read as fast as it comes (the queue never deeper than one) wrote every
 * slot in turn: its ~1 MB of pages came into RSS one by one, over the
 * minutes a slow source (a few records a second) took to pass 4,096
 * records; the perf source's queue did the same. Here 20,000 records pass
 * one at a time (each consumed before the next is written) and the
 * process's anonymous RSS may grow by at most a quarter of the queue;
 * the old ring grew by the whole queue. A process of its own: RSS is the
 * process's. Skipped under ASan (its quarantine keeps what is freed).
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "rtdiag/source.h"

#define RECORDS 20000
#define SLOTS 4096 /* rtd_source_thread()'s default queue */

struct piped {
	int rfd;
	int64_t t;
};

static int piped_next(void *impl, struct rtd_record *rec)
{
	struct piped *p = impl;
	unsigned char c;
	ssize_t n = read(p->rfd, &c, 1);
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	rec->kind = RTD_REC_INSTANT;
	rec->ts = rec->mono = ++p->t;
	rec->name = "tick";
	return 1;
}

static int piped_clock(void *impl, struct rtd_clock *out)
{
	(void)impl;
	*out = (struct rtd_clock){.domain = RTD_CLOCK_MONOTONIC};
	return 0;
}

static const struct rtd_source_ops piped_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "piped",
	.next = piped_next,
	.clock = piped_clock,
};

static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTD_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RTD_ASAN 1
#endif

static void queue_pages(void **st)
{
	(void)st;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* times an hour ahead: never behind the watermark on a slow box */
	struct piped p = {.rfd = pfd[0],
			  .t = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + 3600000000000ll};
	rtd_source *in = rtd_source_new(&piped_ops, &p);
	assert_non_null(in);
	int err = 0;
	rtd_source *s = rtd_source_thread(in, NULL, &err);
	assert_non_null(s);
	const struct rtd_record *r;
	long before = -1;
	for (int i = 0; i < RECORDS; i++) {
		assert_int_equal(write(pfd[1], "x", 1), 1);
		int rc;
		while ((rc = rtd_source_next(s, &r)) == RTD_SOURCE_IDLE)
			assert_true(rtd_source_wait(s, 10000) >= 0);
		assert_int_equal(rc, 1);
		if (i == 10) /* the queue and the first records' blocks made */
			before = rss_anon_kb();
	}
	long after = rss_anon_kb();
	long queue_kb = (long)(SLOTS * (sizeof(struct rtd_record) + 2 * sizeof(void *)) / 1024);
	printf("# %d records one at a time: anonymous RSS %ld -> %ld KB (the queue: ~%ld KB)\n",
	       RECORDS, before, after, queue_kb);
	assert_true(before > 0);
	assert_true(after - before <= queue_kb / 4);
	close(pfd[1]);
	int rc;
	while ((rc = rtd_source_next(s, &r)) == RTD_SOURCE_IDLE)
		assert_true(rtd_source_wait(s, 10000) >= 0);
	assert_int_equal(rc, 0);
	rtd_source_free(s);
	close(pfd[0]);
}

int main(void)
{
#ifdef RTD_ASAN
	/* ASan's allocator holds freed blocks in quarantine: RSS grows
	 * with every record's freed copy, whatever the queue does */
	printf("SKIP: RSS under AddressSanitizer says nothing of the queue\n");
	return 77;
#endif
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(queue_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
