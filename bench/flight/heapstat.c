/* SPDX-License-Identifier: MIT */
/*
 * heapstat.c - a preloaded library that tells live heap bytes from what
 * malloc holds (issue #31: is a step of RSS live data or fragmentation?).
 *
 *   cc -shared -fPIC -O2 -o heapstat.so heapstat.c -lpthread
 *   RTD_HEAPSTAT=/tmp/x.txt LD_PRELOAD=./heapstat.so rtdiag record ...
 *
 * Every RTD_HEAPSTAT_SEC seconds (default 10) a thread of its own appends
 * one line to $RTD_HEAPSTAT: seconds since start, then from glibc's
 * mallinfo2() (summed over every arena) the bytes in use (uordblks), free
 * inside the heaps (fordblks), the heaps' size (arena), mmapped chunks
 * (hblkhd), the number of arenas (malloc_info()'s <heap> elements), and
 * each arena's size and free bytes in KB ("a0=SIZE/FREE a1=...": which
 * thread's heap grows).
 * A growth of "in use" is live data; of "free" with "in use" flat,
 * fragmentation (malloc_trim() may give it back). bench/flight/rss.sh
 * builds and uses it with HEAPSTAT=1.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *out_path;
static unsigned every = 10;

/* The number of arenas, and in *per each one's heap size and free bytes
 * ("a0=SIZE/FREE a1=..." in KB, from malloc_info()'s <heap> elements):
 * which arena's free space grows. */
static unsigned arenas(char *per, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	per[0] = 0;
	if (!m)
		return 0;
	malloc_info(0, m);
	fclose(m);
	unsigned n = 0;
	size_t off = 0;
	for (const char *p = buf; p && (p = strstr(p, "<heap nr=")); p++) {
		const char *end = strstr(p, "</heap>");
		const char *fast = strstr(p, "<total type=\"fast\"");
		const char *rest = strstr(p, "<total type=\"rest\"");
		const char *cur = strstr(p, "<system type=\"current\"");
		unsigned long fs = 0, rs = 0, cs = 0, c;
		if (end && fast && fast < end)
			sscanf(fast, "<total type=\"fast\" count=\"%lu\" size=\"%lu\"", &c, &fs);
		if (end && rest && rest < end)
			sscanf(rest, "<total type=\"rest\" count=\"%lu\" size=\"%lu\"", &c, &rs);
		if (end && cur && cur < end)
			sscanf(cur, "<system type=\"current\" size=\"%lu\"", &cs);
		if (off < cap)
			off += (size_t)snprintf(per + off, cap - off, " a%u=%lu/%lu", n, cs >> 10,
						(fs + rs) >> 10);
		n++;
	}
	free(buf);
	return n;
}

static void *run(void *arg)
{
	(void)arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		struct mallinfo2 mi = mallinfo2();
		char per[512];
		unsigned na = arenas(per, sizeof per);
		FILE *f = fopen(out_path, "a");
		if (f) {
			fprintf(f, "%.0f in_use=%zu free=%zu heaps=%zu mmapped=%zu arenas=%u%s\n",
				(double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9,
				mi.uordblks, mi.fordblks, mi.arena, mi.hblkhd, na, per);
			fclose(f);
		}
		sleep(every);
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	out_path = getenv("RTD_HEAPSTAT");
	const char *e = getenv("RTD_HEAPSTAT_SEC");
	if (e && atoi(e) > 0)
		every = (unsigned)atoi(e);
	if (!out_path)
		return;
	unsetenv("LD_PRELOAD"); /* not into what rtdiag starts */
	pthread_t th;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_create(&th, &a, run, NULL);
	pthread_attr_destroy(&a);
}
