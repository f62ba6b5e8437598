/* SPDX-License-Identifier: MIT */
/*
 * blockq.h - a bounded queue of fixed-size entries between one producer
 * thread, which waits while the queue is full, and one consumer, which
 * never waits: an empty queue answers at once, and an eventfd (@efd)
 * becomes readable when an entry comes to an empty queue (or the owner
 * rings it), so the consumer can poll it beside other sources.
 *
 * A live record source's queue (perf/source_live.c; record/thread.c's
 * bounded in bytes too is to move onto it).
 * The queue's mutex is its owner's too: the owner keeps the state that
 * goes with the queue (how the input ended, a watermark) under @mu, and
 * may wait on @space for its own conditions (it is broadcast by
 * rtd_blockq_stop(), signalled at each pop).
 *
 * The slots are written whole at init (rtd_alloc_touched()), and an
 * emptied queue starts again at its first slot: the pages it writes
 * follow its depth, not how many entries passed (issue #31).
 */
#ifndef RTD_COMMON_BLOCKQ_H
#define RTD_COMMON_BLOCKQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rtd_blockq {
	pthread_mutex_t mu;   /* the queue's, and its owner's state beside it */
	pthread_cond_t space; /* room in the queue, or stopped */
	unsigned char *slots; /* cap entries of esize bytes */
	size_t *sizes;        /* each slot's bytes (with max_bytes only) */
	size_t esize, cap, head, n;
	size_t bytes, max_bytes; /* what the queued entries hold (0: no bound) */
	uint64_t pushed, taken;  /* entries queued and popped, ever */
	int efd;                 /* readable: an entry came, closed, or rung */
	bool stopped;            /* rtd_blockq_stop(): the producer gives up */
	bool closed;             /* nothing more comes: set by the owner under mu
				    (with how its input ended), then rung */
} rtd_blockq;

/**
 * rtd_blockq_init - an empty queue of @cap entries of @esize bytes
 * @q: the queue
 * @esize: one entry's size
 * @cap: how many entries it holds at most (>= 1)
 * @max_bytes: at most this many bytes held by the queued entries, as
 *	their producer counts them (rtd_blockq_push()'s @bytes); 0: no bound
 *
 * Returns 0, -ENOMEM, or a negative errno from eventfd(). On failure
 * rtd_blockq_free() is still to be called.
 */
int rtd_blockq_init(rtd_blockq *q, size_t esize, size_t cap, size_t max_bytes);

/**
 * rtd_blockq_free - the queue's slots, eventfd, mutex and condition
 * @q: the queue, its producer joined
 * @drop: called on each entry still queued (NULL: nothing to drop)
 */
void rtd_blockq_free(rtd_blockq *q, void (*drop)(void *entry));

/**
 * rtd_blockq_push - queue a copy of @e, waiting while the queue is full
 * @q: the queue
 * @e: the entry (esize bytes)
 * @bytes: what it holds beyond its slot, counted against max_bytes (an
 *	entry larger than max_bytes alone still goes into an empty queue)
 *
 * Rings @efd when the queue was empty. Returns 0, or -RTD_E_STOPPED once
 * rtd_blockq_stop() was called (@e not queued).
 */
int rtd_blockq_push(rtd_blockq *q, const void *e, size_t bytes);

/**
 * rtd_blockq_pop_locked - take the first entry, without waiting
 * @q: the queue, its mutex held by the caller (held again at the return)
 * @out: the entry copied here (esize bytes)
 *
 * An empty queue not @closed clears @efd first and looks again (the lock
 * is let go for that), so that an entry pushed after the look rings it
 * again. Signals @space when an entry is taken.
 *
 * Returns true with an entry, false when the queue is empty.
 */
bool rtd_blockq_pop_locked(rtd_blockq *q, void *out);

/**
 * rtd_blockq_stop - the consumer is leaving: a producer waiting for
 * room, or one that pushes later, gets -RTD_E_STOPPED; @space is
 * broadcast and @efd rung
 * @q: the queue, its mutex not held
 */
void rtd_blockq_stop(rtd_blockq *q);

/* rtd_blockq_ring - make @efd readable (a newer watermark, an end). */
void rtd_blockq_ring(rtd_blockq *q);

#endif /* RTD_COMMON_BLOCKQ_H */
