/* SPDX-License-Identifier: MIT */
/* offcpu_floor_pp: the ping-pong of pingpong.c, its timed part started by a
 * byte on stdin (once the profiler is attached); usage: N [CPU]. Prints the
 * timed part's wall seconds and the process's CPU seconds (user + sys). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static int ab[2], ba[2]; static long n;
static void *pong(void *a) { (void)a; char c;
	for (long i = 0; i < n; i++) if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1) abort();
	return NULL; }
static double cpu(void) { struct rusage r; getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6; }
int main(int argc, char **argv) {
	if (argc < 2 || pipe(ab) || pipe(ba)) return 2;
	n = atol(argv[1]);
	if (argc > 2) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(atoi(argv[2]), &s); sched_setaffinity(0, sizeof s, &s); }
	pthread_t th; pthread_create(&th, NULL, pong, NULL);
	char c; if (read(0, &c, 1) != 1) return 3;
	struct timespec t0, t1; double c0 = cpu();
	clock_gettime(CLOCK_MONOTONIC, &t0); c = 'x';
	for (long i = 0; i < n; i++) if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) abort();
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f %.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, cpu() - c0);
	return 0; }
