/* SPDX-License-Identifier: MIT */
/* perfnative - the C side of the .NET mixed-mode profiler test. */
#include <stdint.h>

__attribute__((noinline)) static uint64_t mix(uint64_t x)
{
	return x ^ (x >> 31) ^ (x << 7);
}

__attribute__((visibility("default"), noinline)) uint64_t native_work(uint64_t seed, int n)
{
	uint64_t x = seed;
	for (int i = 0; i < n; i++)
		x = mix(x) + (uint64_t)i;
	return x;
}
