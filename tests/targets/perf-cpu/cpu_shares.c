/* SPDX-License-Identifier: MIT */
/*
 * cpu_shares - a program whose CPU time splits 1:2:3 between three
 * functions, for the profiler tests: each round calls alpha (1 unit of
 * work), beta (2) and gamma (3) through run_round; a unit is a fixed loop
 * of integer work in the function itself, so the time is its own (self).
 *
 * usage: cpu_shares SECONDS [threads]   (runs for about SECONDS)
 *        cpu_shares rounds=N [threads]   (N rounds per thread: fixed work)
 *        cpu_shares --pid-file FILE SECONDS   (writes its pid, then runs)
 *        cpu_shares unit=K ...   (each unit K times longer: a round of ~1.3
 *                                 ms aliases with a sampler's period, so a
 *                                 profile ranking the functions wants rounds
 *                                 much longer than the period)
 *        cpu_shares depth=D ...  (the rounds run below D nested calls of
 *                                 rec, for the unwinders' recursion tests)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT 200000

static long unit = UNIT; /* iterations per unit of work */

static volatile unsigned long sink;

#define WORK(n)                                                                \
	do {                                                                   \
		unsigned long x = sink;                                        \
		for (long i = 0; i < (long)(n) * unit; i++)                    \
			x = x * 6364136223846793005ul + 1442695040888963407ul; \
		sink = x;                                                      \
	} while (0)

__attribute__((noinline)) void alpha(void) { WORK(1); }
__attribute__((noinline)) void beta(void) { WORK(2); }
__attribute__((noinline)) void gamma_fn(void) { WORK(3); }

__attribute__((noinline)) void run_round(void)
{
	alpha();
	beta();
	gamma_fn();
	__asm__ volatile("" ::: "memory");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds = 1;
static long rounds;
static int depth;

/* the rounds, a macro: an inlined function would be a frame of its own
 * in the profiles that read DWARF's inline records */
#define ROUNDS_LOOP()                                                          \
	do {                                                                   \
		if (rounds) {                                                  \
			for (long i_ = 0; i_ < rounds; i_++)                   \
				run_round();                                   \
		} else {                                                       \
			double end_ = now() + seconds;                         \
			while (now() < end_)                                   \
				run_round();                                   \
		}                                                              \
	} while (0)

/* n frames of rec, then the rounds; not a tail call (the frame stays) */
__attribute__((noinline)) void rec(int n)
{
	if (n > 1)
		rec(n - 1);
	else
		ROUNDS_LOOP();
	sink += (unsigned long)n;
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	if (depth > 0)
		rec(depth);
	else
		ROUNDS_LOOP();
	return NULL;
}

int main(int argc, char **argv)
{
	int a = 1;
	if (argc > 2 && !strcmp(argv[1], "--pid-file")) {
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 1;
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		a = 3;
	}
	if (argc > a && !strncmp(argv[a], "unit=", 5))
		unit = UNIT * atol(argv[a++] + 5);
	if (argc > a && !strncmp(argv[a], "depth=", 6))
		depth = atoi(argv[a++] + 6);
	if (argc > a && !strncmp(argv[a], "rounds=", 7))
		rounds = atol(argv[a] + 7);
	else if (argc > a)
		seconds = atof(argv[a]);
	int threads = argc > a + 1 ? atoi(argv[a + 1]) : 1;
	pthread_t t[64];
	for (int i = 1; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	worker(NULL);
	for (int i = 1; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
