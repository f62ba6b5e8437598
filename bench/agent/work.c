/* SPDX-License-Identifier: MIT */
/*
 * work - a native CPU-bound workload for bench/agent: runs SECONDS of wall
 * time through a three-deep call chain (so profiles have stacks to show)
 * and writes "ITERATIONS SECONDS SINK CPU-SECONDS" to OUT (CPU-seconds: the
 * process's own CPU time, so work per CPU-second shows what a profiler costs
 * inside the process, apart from what it takes from the cores). Built with
 * frame pointers.
 *
 *   work OUT SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t mix(uint64_t x)
{
	for (int i = 0; i < 200; i++)
		x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull + (uint64_t)i;
	return x;
}

__attribute__((noinline)) static uint64_t step(uint64_t x)
{
	return mix(x) + mix(x + 1);
}

__attribute__((noinline)) static uint64_t batch(uint64_t x)
{
	for (int i = 0; i < 100; i++)
		x = step(x);
	return x;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: work OUT SECONDS\n");
		return 2;
	}
	double secs = atof(argv[2]);
	double t0 = now(), t;
	uint64_t iters = 0, x = 1;
	do {
		x = batch(x);
		iters++;
	} while ((t = now()) - t0 < secs);
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(f, "%llu %.3f %llu %.3f\n", (unsigned long long)iters, t - t0,
		(unsigned long long)(x & 1),
		(double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	return fclose(f) ? 1 : 0;
}
