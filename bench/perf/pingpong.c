/* SPDX-License-Identifier: MIT */
/*
 * pingpong: two threads pass a byte back and forth over two pipes, N
 * round trips: two context switches each way, as fast as the machine
 * allows (the off-CPU bench's worst case). Starts the second thread, then
 * sleeps DELAY seconds, so a profiler can attach (-p) to both threads
 * before the timed part (perf record -p does not follow threads started
 * after it attached: seen, its samples had the main thread's only). Prints the timed
 * part's wall seconds and its context switches.
 *
 * usage: pingpong N DELAY
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long n;

static void *pong(void *arg)
{
	(void)arg;
	char c;
	for (long i = 0; i < n; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			abort();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || pipe(ab) || pipe(ba))
		return 2;
	n = atol(argv[1]);
	double delay = atof(argv[2]);
	struct timespec d = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
	pthread_t th;
	pthread_create(&th, NULL, pong, NULL);
	nanosleep(&d, NULL);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char c = 'x';
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			abort();
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
