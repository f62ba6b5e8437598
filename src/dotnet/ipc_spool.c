/* SPDX-License-Identifier: MIT */
/*
 * ipc_spool.c - session streams read on a thread of their own into a
 * capped buffer each (rtdiag/ipc_spool.h): the thread only moves bytes;
 * the sessions' readers take them from the buffers.
 *
 * One lock guards the sessions' buffers and the list. The thread finds a
 * ready session by its id under the lock (epoll's data is the id, never a
 * pointer: a session may leave between epoll_wait() and the lookup), and
 * reads its socket under the lock too, so a session that has left is
 * never read again and its socket may be closed at once.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/stats.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/source.h"

#define SPOOL_CHUNK (64u << 10)
/* bytes one session is read a wake-up, so a busy one leaves the lock to
 * its reader and the thread to the others */
#define SPOOL_TURN (256u << 10)
#define SPOOL_STOP_ID 0 /* epoll data of the stop eventfd */

struct chunk {
	struct chunk *next;
	size_t head, tail;
	uint8_t b[SPOOL_CHUNK];
};

struct spool_ent {
	struct spool_ent *next;
	rtd_ipc_spool *sp; /* NULL once the spool is freed */
	uint64_t id;
	int fd;            /* the session's socket (the session's own) */
	int efd;           /* readable while bytes or the end wait */
	struct chunk *first, *last;
	size_t held;
	uint64_t dropped;
	bool eof, damaged, signalled, watched;
	int err;           /* a failed read's -errno */
};

struct rtd_ipc_spool {
	pthread_mutex_t lock;
	pthread_t th;
	bool running;
	int ep, stop_fd;
	size_t cap;
	uint64_t next_id;
	struct spool_ent *ents;
	struct rtd_ipc_spool_stats st;
	uint8_t scratch[SPOOL_CHUNK]; /* dropped bytes land here (thread) */
};

static struct spool_ent *find(rtd_ipc_spool *sp, uint64_t id)
{
	for (struct spool_ent *e = sp->ents; e; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

static void unwatch(rtd_ipc_spool *sp, struct spool_ent *e)
{
	if (e->watched)
		(void)epoll_ctl(sp->ep, EPOLL_CTL_DEL, e->fd, NULL);
	e->watched = false;
}

/* Keep the eventfd readable while the reader has something to take. */
static void signal_ent(struct spool_ent *e)
{
	if (e->signalled || !(e->held || e->eof || e->err || e->damaged))
		return;
	uint64_t one = 1;
	if (write(e->efd, &one, sizeof(one)) == sizeof(one))
		e->signalled = true;
}

/* Where the next bytes go: the buffer's tail, or the scratch once the
 * cap is reached (or memory is out: dropped the same way). */
static uint8_t *room(rtd_ipc_spool *sp, struct spool_ent *e, size_t *len)
{
	if (!e->damaged && e->held < sp->cap) {
		struct chunk *c = e->last;
		if (!c || c->tail == SPOOL_CHUNK) {
			c = malloc(sizeof(*c));
			if (c) {
				c->next = NULL;
				c->head = c->tail = 0;
				if (e->last)
					e->last->next = c;
				else
					e->first = c;
				e->last = c;
			}
		}
		if (c) {
			*len = SPOOL_CHUNK - c->tail;
			if (*len > sp->cap - e->held)
				*len = sp->cap - e->held;
			return c->b + c->tail;
		}
	}
	*len = sizeof(sp->scratch);
	return sp->scratch;
}

/* Read what the socket has, up to a turn (under the lock). */
static void fill(rtd_ipc_spool *sp, struct spool_ent *e)
{
	size_t turn = 0;
	while (turn < SPOOL_TURN && !e->eof && !e->err) {
		size_t len;
		uint8_t *dst = room(sp, e, &len);
		ssize_t n = recv(e->fd, dst, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				e->err = -errno;
			break;
		}
		if (n == 0) {
			e->eof = true;
			break;
		}
		turn += (size_t)n;
		sp->st.bytes += (uint64_t)n;
		if (dst == sp->scratch) {
			/* the damage: what the reader gets ends here */
			if (!e->damaged)
				sp->st.damaged++;
			e->damaged = true;
			e->dropped += (uint64_t)n;
			sp->st.dropped += (uint64_t)n;
			continue;
		}
		e->last->tail += (size_t)n;
		e->held += (size_t)n;
		if (e->held > sp->st.held_peak)
			sp->st.held_peak = e->held;
	}
	if (e->eof || e->err)
		unwatch(sp, e);
	signal_ent(e);
}

static void *spool_main(void *arg)
{
	rtd_ipc_spool *sp = arg;
	struct epoll_event ev[16];
	for (;;) {
		int n = epoll_wait(sp->ep, ev, 16, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == SPOOL_STOP_ID)
				return NULL;
			pthread_mutex_lock(&sp->lock);
			struct spool_ent *e = find(sp, ev[i].data.u64);
			if (e)
				fill(sp, e);
			pthread_mutex_unlock(&sp->lock);
		}
	}
}

RTD_API rtd_ipc_spool *rtd_ipc_spool_new(const struct rtd_ipc_spool_opts *o,
					 int *err)
{
	struct rtd_ipc_spool_opts oc;
	int rc = rtd_opts_copy(&oc, sizeof(oc), o,
			       RTD_OPTS_END(rtd_ipc_spool_opts, cap));
	if (!rc && oc.cap && oc.cap < RTD_IPC_SPOOL_CAP_MIN)
		rc = -RTD_E_INVAL;
	rtd_ipc_spool *sp = rc ? NULL : calloc(1, sizeof(*sp));
	if (!rc && !sp)
		rc = -ENOMEM;
	if (rc)
		goto fail;
	sp->ep = sp->stop_fd = -1;
	sp->cap = oc.cap ? oc.cap : RTD_IPC_SPOOL_CAP_DEFAULT;
	sp->next_id = SPOOL_STOP_ID + 1;
	sp->st.sz = sizeof(sp->st);
	pthread_mutex_init(&sp->lock, NULL);
	sp->ep = epoll_create1(EPOLL_CLOEXEC);
	sp->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = SPOOL_STOP_ID};
	if (sp->ep < 0 || sp->stop_fd < 0 ||
	    epoll_ctl(sp->ep, EPOLL_CTL_ADD, sp->stop_fd, &ev) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = -pthread_create(&sp->th, NULL, spool_main, sp);
	if (rc)
		goto fail;
	sp->running = true;
	return sp;
fail:
	rtd_ipc_spool_free(sp);
	if (err)
		*err = rc;
	return NULL;
}

RTD_API int rtd_ipc_spool_add(rtd_ipc_spool *sp, rtd_ipc_session *s)
{
	struct spool_ent **slot = s ? ipc_session_spool(s) : NULL;
	int fd = s ? rtd_ipc_session_fd(s) : -1;
	if (!sp || !slot || *slot || fd < 0)
		return -RTD_E_INVAL;
	struct spool_ent *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = fd;
	e->sp = sp;
	e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->efd < 0) {
		int rc = -errno;
		free(e);
		return rc;
	}
	pthread_mutex_lock(&sp->lock);
	e->id = sp->next_id++;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = e->id};
	int rc = epoll_ctl(sp->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
	if (!rc) {
		e->watched = true;
		e->next = sp->ents;
		sp->ents = e;
		*slot = e;
	}
	pthread_mutex_unlock(&sp->lock);
	if (rc) {
		close(e->efd);
		free(e);
	}
	return rc;
}

/* Copy held bytes out (under the lock, or after the spool is gone). */
static size_t take(struct spool_ent *e, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len && e->first) {
		struct chunk *c = e->first;
		size_t n = c->tail - c->head;
		if (n > len - got)
			n = len - got;
		memcpy(buf + got, c->b + c->head, n);
		c->head += n;
		got += n;
		if (c->head == c->tail && (c->next || c->tail == SPOOL_CHUNK)) {
			e->first = c->next;
			if (!e->first)
				e->last = NULL;
			free(c);
		} else if (c->head == c->tail) {
			break;
		}
	}
	e->held -= got;
	return got;
}

/* What a read gives when nothing is held: the damage first (sticky),
 * then a failed read, the end, or "nothing now". */
static ssize_t held_end(const struct spool_ent *e)
{
	if (e->damaged)
		return -RTD_E_IPC_DROPPED;
	if (e->err)
		return e->err;
	return e->eof ? 0 : -RTD_E_IPC_TIMEOUT;
}

ssize_t ipc_spool_read(struct spool_ent *e, void *buf, size_t len,
		       int timeout_ms)
{
	if (!e->sp) {
		/* the spool is gone: what it held, then the socket again */
		size_t got = take(e, buf, len);
		if (got)
			return (ssize_t)got;
		ssize_t end = held_end(e);
		return end == -RTD_E_IPC_TIMEOUT
			       ? ipc_read_some(e->fd, buf, len, timeout_ms)
			       : end;
	}
	for (;;) {
		pthread_mutex_lock(&e->sp->lock);
		size_t got = take(e, buf, len);
		ssize_t n = got ? (ssize_t)got : held_end(e);
		if (!e->held && !e->eof && !e->err && !e->damaged &&
		    e->signalled) {
			/* drained: not readable until the thread adds more
			 * (it signals again under this lock) */
			uint64_t v;
			if (read(e->efd, &v, sizeof(v)) == sizeof(v))
				e->signalled = false;
		}
		pthread_mutex_unlock(&e->sp->lock);
		if (n != -RTD_E_IPC_TIMEOUT || timeout_ms == 0)
			return n;
		struct pollfd p = {.fd = e->efd, .events = POLLIN};
		int r = poll(&p, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? -EINTR : -errno;
		if (r == 0)
			return -RTD_E_IPC_TIMEOUT;
	}
}

int ipc_spool_fd(const struct spool_ent *e)
{
	/* after the spool: its socket again, once what it held is read */
	return e->sp || e->held || e->damaged ? e->efd : e->fd;
}

uint64_t ipc_spool_dropped(const struct spool_ent *e)
{
	if (!e->sp)
		return e->dropped;
	pthread_mutex_lock(&e->sp->lock);
	uint64_t d = e->dropped;
	pthread_mutex_unlock(&e->sp->lock);
	return d;
}

void ipc_spool_leave(struct spool_ent *e)
{
	if (!e)
		return;
	rtd_ipc_spool *sp = e->sp;
	if (sp) {
		pthread_mutex_lock(&sp->lock);
		unwatch(sp, e);
		for (struct spool_ent **pp = &sp->ents; *pp; pp = &(*pp)->next)
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		pthread_mutex_unlock(&sp->lock);
	}
	while (e->first) {
		struct chunk *c = e->first;
		e->first = c->next;
		free(c);
	}
	close(e->efd);
	free(e);
}

RTD_API void rtd_ipc_spool_get_stats(rtd_ipc_spool *sp,
				     struct rtd_ipc_spool_stats *st)
{
	if (!sp || !st)
		return;
	pthread_mutex_lock(&sp->lock);
	struct rtd_ipc_spool_stats s = sp->st;
	pthread_mutex_unlock(&sp->lock);
	rtd_stats_copy(st, &s, sizeof(s));
}

RTD_API void rtd_ipc_spool_free(rtd_ipc_spool *sp)
{
	if (!sp)
		return;
	if (sp->running) {
		uint64_t one = 1;
		if (write(sp->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(sp->th);
		pthread_join(sp->th, NULL);
	}
	/* the sessions left on it keep their bytes and read on alone */
	for (struct spool_ent *e = sp->ents; e; e = e->next) {
		unwatch(sp, e);
		e->sp = NULL;
	}
	if (sp->ep >= 0)
		close(sp->ep);
	if (sp->stop_fd >= 0)
		close(sp->stop_fd);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}
