/* SPDX-License-Identifier: MIT */
/* blockq.c - a bounded queue between a producer thread and a consumer
 * that never waits (blockq.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/blockq.h"
#include "common/buf.h"

int rtd_blockq_init(rtd_blockq *q, size_t esize, size_t cap, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->esize = esize;
	q->cap = cap ? cap : 1;
	q->max_bytes = max_bytes;
	q->efd = -1;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->space, NULL);
	q->slots = q->cap <= SIZE_MAX / esize ? rtd_alloc_touched(q->cap * esize) : NULL;
	/* each entry's bytes, to give back at its pop: only with a bound */
	if (q->slots && max_bytes)
		q->sizes = rtd_alloc_touched(q->cap * sizeof(*q->sizes));
	if (!q->slots || (max_bytes && !q->sizes))
		return -ENOMEM;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return q->efd < 0 ? -errno : 0;
}

static size_t at(const rtd_blockq *q, size_t i)
{
	return (q->head + i) % q->cap;
}

void rtd_blockq_free(rtd_blockq *q, void (*drop)(void *entry))
{
	for (size_t i = 0; drop && q->slots && i < q->n; i++)
		drop(q->slots + at(q, i) * q->esize);
	free(q->slots);
	free(q->sizes);
	q->slots = NULL;
	q->sizes = NULL;
	q->n = 0;
	if (q->efd >= 0)
		close(q->efd);
	q->efd = -1;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->space);
}

void rtd_blockq_ring(rtd_blockq *q)
{
	uint64_t one = 1;
	ssize_t w = write(q->efd, &one, sizeof(one));
	(void)w;
}

int rtd_blockq_push(rtd_blockq *q, const void *e, size_t bytes)
{
	pthread_mutex_lock(&q->mu);
	while (!q->stopped &&
	       (q->n == q->cap || (q->max_bytes && q->n && q->bytes + bytes > q->max_bytes)))
		pthread_cond_wait(&q->space, &q->mu);
	if (q->stopped) {
		pthread_mutex_unlock(&q->mu);
		return -RTD_E_STOPPED;
	}
	bool was_empty = q->n == 0;
	size_t i = at(q, q->n);
	memcpy(q->slots + i * q->esize, e, q->esize);
	if (q->sizes) {
		q->sizes[i] = bytes;
		q->bytes += bytes;
	}
	q->n++;
	q->pushed++;
	pthread_mutex_unlock(&q->mu);
	if (was_empty)
		rtd_blockq_ring(q);
	return 0;
}

bool rtd_blockq_pop_locked(rtd_blockq *q, void *out)
{
	if (q->n == 0 && !q->closed) {
		/* clear the wake-up, then look again: an entry queued after
		 * the look rings it again */
		pthread_mutex_unlock(&q->mu);
		uint64_t v;
		ssize_t rd = read(q->efd, &v, sizeof(v));
		(void)rd;
		pthread_mutex_lock(&q->mu);
	}
	if (!q->n)
		return false;
	memcpy(out, q->slots + q->head * q->esize, q->esize);
	if (q->sizes)
		q->bytes -= q->sizes[q->head];
	q->head = (q->head + 1) % q->cap;
	/* empty: the next entry goes to the first slot, so the pages
	 * written follow the queue's depth, not how many entries passed
	 * (a ring of 1.2 MB went on adding to RSS for 10+ minutes at a few
	 * records a second, issue #31) */
	if (!--q->n)
		q->head = 0;
	q->taken++;
	pthread_cond_signal(&q->space);
	return true;
}

void rtd_blockq_stop(rtd_blockq *q)
{
	pthread_mutex_lock(&q->mu);
	q->stopped = true;
	pthread_cond_broadcast(&q->space);
	pthread_mutex_unlock(&q->mu);
	rtd_blockq_ring(q);
}
