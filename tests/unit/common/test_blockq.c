/* SPDX-License-Identifier: MIT */
/*
 * The bounded queue of a live record source (common/blockq.h): entries in
 * order, none lost or overwritten while a producer thread outruns the
 * consumer (a full queue, in entries or in bytes, makes it wait), the
 * eventfd rung for an entry to an empty queue and cleared by an empty
 * look, and a stop that wakes a producer waiting for room and a consumer
 * polling the eventfd.
 */
#include "test_util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "common/blockq.h"
#include "rtdiag/common.h"

struct ent {
	uint64_t seq;
	char pad[40]; /* an entry larger than a word: copied whole */
};

static bool readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void pause_ms(long ms)
{
	struct timespec t = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	nanosleep(&t, NULL);
}

/* Polls @cond (under the queue's mutex) until true or the test's bound. */
#define WAIT_FOR(q, cond)                                                      \
	do {                                                                   \
		bool ok_ = false;                                              \
		for (unsigned ms_ = 0; ms_ < rtd_test_wait_ms() && !ok_; ms_++) { \
			pthread_mutex_lock(&(q)->mu);                          \
			ok_ = (cond);                                          \
			pthread_mutex_unlock(&(q)->mu);                        \
			if (!ok_)                                              \
				pause_ms(1);                                   \
		}                                                              \
		assert_true(ok_);                                              \
	} while (0)

static void in_order_and_bell(void **state)
{
	(void)state;
	rtd_blockq q;
	assert_int_equal(rtd_blockq_init(&q, sizeof(struct ent), 4, 0), 0);
	struct ent e = {0}, out;
	pthread_mutex_lock(&q.mu);
	assert_false(rtd_blockq_pop_locked(&q, &out)); /* empty */
	pthread_mutex_unlock(&q.mu);
	assert_false(readable(q.efd, 0));
	for (e.seq = 0; e.seq < 4; e.seq++) {
		snprintf(e.pad, sizeof(e.pad), "entry %llu", (unsigned long long)e.seq);
		assert_int_equal(rtd_blockq_push(&q, &e, 0), 0);
	}
	assert_true(readable(q.efd, 0)); /* rung by the first */
	pthread_mutex_lock(&q.mu);
	for (uint64_t i = 0; i < 4; i++) {
		assert_true(rtd_blockq_pop_locked(&q, &out));
		assert_int_equal(out.seq, i);
		char want[40];
		snprintf(want, sizeof(want), "entry %llu", (unsigned long long)i);
		assert_string_equal(out.pad, want);
	}
	/* the empty look clears the bell: a poller waits for the next */
	assert_false(rtd_blockq_pop_locked(&q, &out));
	pthread_mutex_unlock(&q.mu);
	assert_false(readable(q.efd, 0));
	assert_int_equal(q.pushed, 4);
	assert_int_equal(q.taken, 4);
	assert_int_equal(q.head, 0); /* emptied: back to the first slot */
	/* closed: an empty look leaves the bell as it is */
	pthread_mutex_lock(&q.mu);
	q.closed = true;
	pthread_mutex_unlock(&q.mu);
	rtd_blockq_ring(&q);
	pthread_mutex_lock(&q.mu);
	assert_false(rtd_blockq_pop_locked(&q, &out));
	pthread_mutex_unlock(&q.mu);
	assert_true(readable(q.efd, 0));
	rtd_blockq_free(&q, NULL);
}

struct prod {
	rtd_blockq *q;
	uint64_t count; /* entries to push */
	size_t bytes;   /* each entry's bytes */
	atomic_ulong done; /* pushes returned 0 */
	atomic_int rc;  /* the last push's answer */
	atomic_bool over; /* the queue held more than it may */
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	for (uint64_t i = 0; i < p->count; i++) {
		struct ent e = {.seq = i};
		int rc = rtd_blockq_push(p->q, &e, p->bytes);
		atomic_store(&p->rc, rc);
		if (rc)
			break;
		pthread_mutex_lock(&p->q->mu);
		if (p->q->n > p->q->cap || (p->q->max_bytes && p->q->n > 1 &&
					    p->q->bytes > p->q->max_bytes))
			atomic_store(&p->over, true);
		pthread_mutex_unlock(&p->q->mu);
		atomic_fetch_add(&p->done, 1);
	}
	return NULL;
}

/* A consumer that takes each entry when the bell rings, as a merge does,
 * from a producer that is faster: the queue fills and the producer
 * waits; nothing is lost, nothing overwritten. */
static void drain_all(rtd_blockq *q, struct prod *p)
{
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, producer, p), 0);
	/* full first: the producer waits with the queue at its bound */
	WAIT_FOR(q, q->n >= q->cap || (q->max_bytes && q->bytes + p->bytes > q->max_bytes));
	uint64_t next = 0;
	while (next < p->count) {
		struct ent out;
		pthread_mutex_lock(&q->mu);
		bool got = rtd_blockq_pop_locked(q, &out);
		pthread_mutex_unlock(&q->mu);
		if (!got) {
			assert_true(readable(q->efd, (int)rtd_test_wait_ms()));
			continue;
		}
		assert_int_equal(out.seq, next);
		next++;
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(atomic_load(&p->done), p->count);
	assert_false(atomic_load(&p->over));
	assert_int_equal(q->n, 0);
	assert_int_equal(q->bytes, 0);
	assert_int_equal(q->pushed, p->count);
	assert_int_equal(q->taken, p->count);
}

static void full_queue_waits(void **state)
{
	(void)state;
	rtd_blockq q;
	assert_int_equal(rtd_blockq_init(&q, sizeof(struct ent), 8, 0), 0);
	struct prod p = {.q = &q, .count = 20000};
	drain_all(&q, &p);
	rtd_blockq_free(&q, NULL);
}

static void byte_bound_waits(void **state)
{
	(void)state;
	rtd_blockq q;
	/* 1,000 bytes: three entries of 300 at once, though 64 slots */
	assert_int_equal(rtd_blockq_init(&q, sizeof(struct ent), 64, 1000), 0);
	struct prod p = {.q = &q, .count = 5000, .bytes = 300};
	drain_all(&q, &p);
	/* one entry larger than the bound still goes into an empty queue */
	struct ent e = {.seq = 7}, out;
	assert_int_equal(rtd_blockq_push(&q, &e, 5000), 0);
	assert_int_equal(q.bytes, 5000);
	pthread_mutex_lock(&q.mu);
	assert_true(rtd_blockq_pop_locked(&q, &out));
	pthread_mutex_unlock(&q.mu);
	assert_int_equal(out.seq, 7);
	assert_int_equal(q.bytes, 0);
	rtd_blockq_free(&q, NULL);
}

struct poller {
	int fd;
	atomic_bool woke;
};

static void *poll_bell(void *arg)
{
	struct poller *w = arg;
	atomic_store(&w->woke, readable(w->fd, (int)rtd_test_wait_ms()));
	return NULL;
}

static int dropped;
static void drop(void *e)
{
	(void)e;
	dropped++;
}

static void stop_wakes_both(void **state)
{
	(void)state;
	rtd_blockq q;
	assert_int_equal(rtd_blockq_init(&q, sizeof(struct ent), 2, 0), 0);
	/* a producer waiting for room: 2 pushed, the third waits */
	struct prod p = {.q = &q, .count = 3};
	pthread_t prod_th;
	assert_int_equal(pthread_create(&prod_th, NULL, producer, &p), 0);
	WAIT_FOR(&q, q.n == 2 && atomic_load(&p.done) == 2);
	/* the consumer's side: the bell cleared, a poller on it */
	uint64_t v;
	assert_int_equal(read(q.efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	struct poller w = {.fd = q.efd};
	pthread_t poll_th;
	assert_int_equal(pthread_create(&poll_th, NULL, poll_bell, &w), 0);
	assert_int_equal(atomic_load(&p.done), 2);
	rtd_blockq_stop(&q);
	assert_int_equal(pthread_join(prod_th, NULL), 0);
	assert_int_equal(pthread_join(poll_th, NULL), 0);
	assert_int_equal(atomic_load(&p.rc), -RTD_E_STOPPED);
	assert_int_equal(atomic_load(&p.done), 2); /* the third not queued */
	assert_true(atomic_load(&w.woke));
	/* stopped: a later push does not wait */
	struct ent e = {0};
	assert_int_equal(rtd_blockq_push(&q, &e, 0), -RTD_E_STOPPED);
	assert_int_equal(q.n, 2);
	/* the entries left are handed to drop at free */
	dropped = 0;
	rtd_blockq_free(&q, drop);
	assert_int_equal(dropped, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_and_bell),
		cmocka_unit_test(full_queue_waits),
		cmocka_unit_test(byte_bound_waits),
		cmocka_unit_test(stop_wakes_both),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
