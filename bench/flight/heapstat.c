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
 * (hblkhd), and the number of arenas (malloc_info()'s <heap> elements).
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

static unsigned arenas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return 0;
	malloc_info(0, m);
	fclose(m);
	unsigned n = 0;
	for (const char *p = buf; p && (p = strstr(p, "<heap nr=")); p++)
		n++;
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
		unsigned na = arenas();
		FILE *f = fopen(out_path, "a");
		if (f) {
			fprintf(f, "%.0f in_use=%zu free=%zu heaps=%zu mmapped=%zu arenas=%u\n",
				(double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9,
				mi.uordblks, mi.fordblks, mi.arena, mi.hblkhd, na);
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
