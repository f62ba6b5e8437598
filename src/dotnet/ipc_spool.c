/* SPDX-License-Identifier: MIT */
/*
 * ipc_spool.c - session streams that never hold their writer
 * (rtdiag/ipc_spool.h): the session's reader reads the socket itself
 * while it keeps up; a thread watches, takes the socket over into a
 * capped buffer when the reader falls behind, and hands it back once
 * the reader has taken all it held.
 *
 * Why not the thread always: it costs a wake-up, an eventfd and a copy
 * per batch the runtime writes (~10% of the agent's CPU, note13); a
 * sweep every SPOOL_SWEEP_NS costs 20 wake-ups a second for all
 * sessions (every 20 ms, the thread's CPU was 2.5x and the takeovers
 * ~2.5x as many at load 8).
 *
 * One lock guards everything: the sessions' states, buffers, the list,
 * and every read of a session's socket, whoever reads it. So bytes come
 * in order across handovers: the thread takes a socket over (state
 * `spooled`) under the lock, between two of the reader's reads; the
 * reader hands it back under the lock, only with nothing held, and its
 * next read is the socket's. The thread finds a ready session by its id
 * (epoll's data is the id, never a pointer: a session may leave between
 * epoll_wait() and the lookup), so a session that has left is never read
 * again and its socket may be closed at once.
 *
 * Each session's descriptor is an epoll of its own (`mux`) over its
 * eventfd and, while the reader reads the socket, the socket: it polls
 * readable whoever holds the bytes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/stats.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/source.h"

#define SPOOL_CHUNK (64u << 10)
/* bytes one session is read a wake-up, so a busy one leaves the lock to
 * its reader and the thread to the others */
#define SPOOL_TURN (256u << 10)
#define SPOOL_KICK_ID 0 /* epoll data of the kick eventfd */
/* The watch: every SPOOL_SWEEP_NS the thread looks at each session its
 * reader reads, and takes it over when bytes have waited unread
 * SPOOL_LATE_NS (no read of the reader meanwhile) or SPOOL_FULL bytes
 * wait (a reader too slow: the socket holds ~212 KB, its writer waits
 * beyond). So a writer waits at most about SPOOL_SWEEP_NS+SPOOL_LATE_NS
 * (and the thread's own scheduling) for a stalled reader. */
#define SPOOL_SWEEP_NS 50000000ull
#define SPOOL_LATE_NS 50000000ull
#define SPOOL_FULL (64u << 10)

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
	int mux;           /* what the reader polls: efd, and fd unless spooled */
	struct chunk *first, *last;
	size_t held;
	uint64_t dropped;
	bool eof, damaged, signalled, watched;
	bool spooled;      /* the thread reads the socket (else the reader) */
	int err;           /* a failed read's -errno */
	uint64_t reads;    /* the reader's reads of the socket */
	uint64_t mark;     /* reads when the watch first saw bytes waiting */
	uint64_t wait_ns;  /* since then (0: nothing waiting) */
};

struct rtd_ipc_spool {
	pthread_mutex_t lock;
	pthread_t th;
	bool running, stop;
	int ep, kick_fd;
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

/* Nothing to take any more: not readable until more comes. */
static void unsignal_ent(struct spool_ent *e)
{
	uint64_t v;
	if (e->signalled && !e->held && !e->eof && !e->err && !e->damaged &&
	    read(e->efd, &v, sizeof(v)) == sizeof(v))
		e->signalled = false;
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

/* Read what the socket has, up to a turn (the thread, under the lock). */
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

/* The reader fell behind: the thread reads the socket from now on
 * (under the lock, so between two of the reader's reads). */
static void take_over(rtd_ipc_spool *sp, struct spool_ent *e)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = e->id};
	if (epoll_ctl(sp->ep, EPOLL_CTL_ADD, e->fd, &ev) < 0)
		return; /* looked at again at the next sweep */
	(void)epoll_ctl(e->mux, EPOLL_CTL_DEL, e->fd, NULL);
	e->watched = e->spooled = true;
	e->wait_ns = 0;
	sp->st.taken++;
	fill(sp, e);
}

/* The reader took all the thread held: it reads the socket again (under
 * the lock; its next read is the socket's). */
static void give_back(rtd_ipc_spool *sp, struct spool_ent *e)
{
	struct epoll_event ev = {.events = EPOLLIN};
	if (epoll_ctl(e->mux, EPOLL_CTL_ADD, e->fd, &ev) < 0)
		return; /* the thread reads on */
	unwatch(sp, e);
	e->spooled = false;
	unsignal_ent(e);
	sp->st.given++;
}

/* Each session its reader reads: bytes waiting unread too long, or too
 * many of them, and the thread takes it over. */
static void sweep(rtd_ipc_spool *sp, uint64_t now)
{
	for (struct spool_ent *e = sp->ents; e; e = e->next) {
		int q = 0;
		if (e->spooled || e->eof || e->err ||
		    ioctl(e->fd, FIONREAD, &q) < 0 || q <= 0) {
			e->wait_ns = 0;
			continue;
		}
		if ((size_t)q >= SPOOL_FULL) {
			take_over(sp, e);
		} else if (!e->wait_ns || e->reads != e->mark) {
			e->wait_ns = now; /* waiting since (about) now */
			e->mark = e->reads;
		} else if (now - e->wait_ns >= SPOOL_LATE_NS) {
			take_over(sp, e);
		}
	}
}

static void *spool_main(void *arg)
{
	rtd_ipc_spool *sp = arg;
	struct epoll_event ev[16];
	uint64_t swept = rtd_now_ns();
	for (;;) {
		pthread_mutex_lock(&sp->lock);
		bool stop = sp->stop;
		/* the watch runs while there are sessions to watch */
		int timeout = sp->ents ? (int)(SPOOL_SWEEP_NS / 1000000u) : -1;
		pthread_mutex_unlock(&sp->lock);
		if (stop)
			return NULL;
		int n = epoll_wait(sp->ep, ev, 16, timeout);
		if (n < 0 && errno != EINTR)
			return NULL;
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == SPOOL_KICK_ID) {
				uint64_t v;
				(void)!read(sp->kick_fd, &v, sizeof(v));
				continue;
			}
			pthread_mutex_lock(&sp->lock);
			struct spool_ent *e = find(sp, ev[i].data.u64);
			if (e && e->spooled)
				fill(sp, e);
			pthread_mutex_unlock(&sp->lock);
		}
		uint64_t now = rtd_now_ns();
		if (now - swept >= SPOOL_SWEEP_NS) {
			swept = now;
			pthread_mutex_lock(&sp->lock);
			sweep(sp, now);
			pthread_mutex_unlock(&sp->lock);
		}
	}
}

static void kick(rtd_ipc_spool *sp)
{
	uint64_t one = 1;
	(void)!write(sp->kick_fd, &one, sizeof(one));
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
	sp->ep = sp->kick_fd = -1;
	sp->cap = oc.cap ? oc.cap : RTD_IPC_SPOOL_CAP_DEFAULT;
	sp->next_id = SPOOL_KICK_ID + 1;
	sp->st.sz = sizeof(sp->st);
	pthread_mutex_init(&sp->lock, NULL);
	sp->ep = epoll_create1(EPOLL_CLOEXEC);
	sp->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = SPOOL_KICK_ID};
	if (sp->ep < 0 || sp->kick_fd < 0 ||
	    epoll_ctl(sp->ep, EPOLL_CTL_ADD, sp->kick_fd, &ev) < 0) {
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

static void ent_free(struct spool_ent *e)
{
	while (e->first) {
		struct chunk *c = e->first;
		e->first = c->next;
		free(c);
	}
	if (e->efd >= 0)
		close(e->efd);
	if (e->mux >= 0)
		close(e->mux);
	free(e);
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
	e->mux = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN};
	if (e->efd < 0 || e->mux < 0 ||
	    epoll_ctl(e->mux, EPOLL_CTL_ADD, e->efd, &ev) < 0 ||
	    epoll_ctl(e->mux, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int rc = -errno;
		ent_free(e);
		return rc;
	}
	pthread_mutex_lock(&sp->lock);
	e->id = sp->next_id++;
	bool first = !sp->ents;
	e->next = sp->ents;
	sp->ents = e;
	*slot = e;
	pthread_mutex_unlock(&sp->lock);
	if (first)
		kick(sp); /* its wait had no timeout: the watch begins */
	return 0;
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

/* The reader's own read of the socket (under the lock). */
static ssize_t read_direct(rtd_ipc_spool *sp, struct spool_ent *e,
			   void *buf, size_t len)
{
	if (e->eof || e->err)
		return held_end(e);
	for (;;) {
		ssize_t n = recv(e->fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			e->reads++;
			sp->st.bytes += (uint64_t)n;
			sp->st.direct += (uint64_t)n;
			return n;
		}
		if (n == 0 || errno == ECONNRESET) {
			e->eof = true;
			return 0;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -RTD_E_IPC_TIMEOUT;
		e->err = -errno;
		return e->err;
	}
}

/* A read once the spool is gone: what it held, then the socket alone. */
static ssize_t read_orphan(struct spool_ent *e, void *buf, size_t len,
			   int timeout_ms)
{
	size_t got = take(e, buf, len);
	if (got)
		return (ssize_t)got;
	unsignal_ent(e);
	ssize_t end = held_end(e);
	return end == -RTD_E_IPC_TIMEOUT
		       ? ipc_read_some(e->fd, buf, len, timeout_ms)
		       : end;
}

ssize_t ipc_spool_read(struct spool_ent *e, void *buf, size_t len,
		       int timeout_ms)
{
	if (!e->sp)
		return read_orphan(e, buf, len, timeout_ms);
	rtd_ipc_spool *sp = e->sp;
	for (;;) {
		pthread_mutex_lock(&sp->lock);
		ssize_t n = -RTD_E_IPC_TIMEOUT;
		if (e->spooled) {
			size_t got = take(e, buf, len);
			n = got ? (ssize_t)got : held_end(e);
			unsignal_ent(e);
			/* all it held is read: the socket is the reader's */
			if (n == -RTD_E_IPC_TIMEOUT)
				give_back(sp, e);
		}
		if (!e->spooled)
			n = read_direct(sp, e, buf, len);
		pthread_mutex_unlock(&sp->lock);
		if (n != -RTD_E_IPC_TIMEOUT || timeout_ms == 0)
			return n;
		struct pollfd p = {.fd = e->mux, .events = POLLIN};
		int r = poll(&p, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? -EINTR : -errno;
		if (r == 0)
			return -RTD_E_IPC_TIMEOUT;
	}
}

int ipc_spool_fd(const struct spool_ent *e)
{
	return e->mux;
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
	ent_free(e);
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
		pthread_mutex_lock(&sp->lock);
		sp->stop = true;
		pthread_mutex_unlock(&sp->lock);
		kick(sp);
		pthread_join(sp->th, NULL);
	}
	/* the thread is gone: its counters read without the lock */
	rtd_debug("spool: %llu bytes read, %llu by the readers; %llu "
		  "takeovers, %llu handed back",
		  (unsigned long long)sp->st.bytes,
		  (unsigned long long)sp->st.direct,
		  (unsigned long long)sp->st.taken,
		  (unsigned long long)sp->st.given);
	/* the sessions left on it keep their bytes and read on alone: the
	 * socket polled again after what was held */
	for (struct spool_ent *e = sp->ents; e; e = e->next) {
		struct epoll_event ev = {.events = EPOLLIN};
		if (e->spooled && !e->eof && !e->err && !e->damaged)
			(void)epoll_ctl(e->mux, EPOLL_CTL_ADD, e->fd, &ev);
		unwatch(sp, e);
		e->sp = NULL;
	}
	if (sp->ep >= 0)
		close(sp->ep);
	if (sp->kick_fd >= 0)
		close(sp->kick_fd);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}
