/* SPDX-License-Identifier: MIT */
/*
 * heap.h - min-heap of ring indices keyed by each ring's next timestamp,
 * for the k-way merge across many CPUs (private to src/perf).
 *
 * Ties break on the ring index, so the heap picks exactly the ring a
 * linear scan for the first smallest next_ts would: the delivered order
 * does not depend on which of the two merges runs. The caller keeps only
 * rings whose next record may be delivered this round in the heap.
 */
#ifndef RTD_PERF_HEAP_H
#define RTD_PERF_HEAP_H

#include <stdbool.h>
#include <stdint.h>

/* Is ring a's next record before ring b's (ties: the lower index first)? */
static inline bool perf_heap_less(const uint64_t *ts, unsigned a, unsigned b)
{
	return ts[a] < ts[b] || (ts[a] == ts[b] && a < b);
}

/* Restore the heap below slot i (its key grew or it was replaced). */
static inline void perf_heap_down(unsigned *h, unsigned n, const uint64_t *ts,
				  unsigned i)
{
	unsigned v = h[i];
	for (;;) {
		unsigned c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && perf_heap_less(ts, h[c + 1], h[c]))
			c++;
		if (!perf_heap_less(ts, h[c], v))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

/* Build a heap from the n ring indices in h. */
static inline void perf_heap_build(unsigned *h, unsigned n, const uint64_t *ts)
{
	for (unsigned i = n / 2; i-- > 0;)
		perf_heap_down(h, n, ts, i);
}

/* Remove the top; returns the new size. */
static inline unsigned perf_heap_pop(unsigned *h, unsigned n,
				     const uint64_t *ts)
{
	if (!n)
		return 0;
	h[0] = h[--n];
	if (n)
		perf_heap_down(h, n, ts, 0);
	return n;
}

#endif
