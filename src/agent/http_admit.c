/* SPDX-License-Identifier: MIT */
/*
 * http_admit.c - who gets a connection to the pull endpoints, and for how
 * long before its request is read.
 *
 * libmicrohttpd serves requests; this thread owns the listening socket and
 * decides what reaches it (the shape of Go's http.Server with
 * ReadHeaderTimeout, and of nginx's limit_conn per client address):
 *
 * - a client address holds at most HTTP_CONNS_PER_CLIENT connections;
 *   past that a new one is closed at once;
 * - the server holds at most HTTP_CONNS connections; when full, the
 *   connection that has waited longest for its request headers is closed
 *   to make room (one that is being answered never is), so a crowd of
 *   slow clients cannot shut out one that sends its request at once;
 * - the first bytes of a connection must begin an HTTP request line (a
 *   method token and a space) or, on a TLS port, a TLS record: anything
 *   else (binary garbage, a TLS hello on the plain port) is closed as
 *   soon as it arrives, before libmicrohttpd sees it;
 * - the request's headers must be complete HTTP_HEADER_DEADLINE_S after
 *   its first byte was awaited: each further byte does not restart the
 *   clock (libmicrohttpd's idle timeout alone would);
 * - every refusal is counted by reason for /metrics.
 *
 * A connection is handed to libmicrohttpd with MHD_add_connection() once its
 * first bytes are checked (peeked, not read). Its record stays here until
 * libmicrohttpd says it closed, so that a connection still reading its
 * headers can be shut down (shutdown(2) from this thread wakes the
 * connection's own thread, which then closes it).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/http_admit.h"
#include "common/log.h"
#include "common/optlib_mhd.h"

#define FIRST_BYTES 16 /* enough to tell a request line or a TLS record */
#define RECHECK_NS 20000000ull /* a partial first line is looked at again */

enum conn_state {
	C_FIRST,   /* accepted here, first bytes not yet seen */
	C_HEADERS, /* with libmicrohttpd, reading its request headers */
	C_ANSWER,  /* headers read: being answered */
	C_IDLE,    /* answered, kept alive for the next request */
};

struct conn {
	struct conn *next;
	int fd;
	enum conn_state state;
	bool killed; /* shut down by us; gone when libmicrohttpd says so */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	uint64_t since_ns; /* when its current request began to be awaited */
	uint64_t recheck_ns; /* C_FIRST with a partial line: look again then */
	size_t seen; /* C_FIRST: bytes peeked the last time */
	bool mhd;    /* libmicrohttpd notified its start */
	unsigned pulls; /* profile requests waiting on it (0 or 1) */
};

struct http_admit {
	struct MHD_Daemon *d;
	int lfd, wake;
	bool tls, stop;
	pthread_t thr;
	pthread_mutex_t lock;
	struct conn *conns; /* newest first */
	unsigned n;
	uint64_t refused[RTD_HTTP_REFUSE_COUNT];
	uint64_t header_deadline_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool same_client(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true; /* one unix socket peer is as good as another */
}

/* Whether b[0..n) can begin what this port serves: 0 yes and complete
 * enough to hand over, 1 yes so far (wait for more), -1 no. */
int http_admit_first_bytes(const uint8_t *b, size_t n, bool tls)
{
	if (tls) {
		/* a TLS record: content type handshake (22), version 3.x */
		if (n == 0)
			return 1;
		if (b[0] != 22)
			return -1;
		if (n == 1)
			return 1;
		return b[1] == 3 ? 0 : -1;
	}
	size_t i = 0;
	/* RFC 9112 2.2: empty lines before a request line are ignored */
	while (i < n && (b[i] == '\r' || b[i] == '\n') && i < 4)
		i++;
	size_t start = i;
	for (; i < n; i++) {
		if (b[i] == ' ')
			return i > start ? 0 : -1;
		if (b[i] < 'A' || b[i] > 'Z' || i - start >= 12)
			return -1; /* methods are upper-case tokens */
	}
	return n < FIRST_BYTES ? 1 : -1;
}

/* Shut c's socket down (the lock held); it goes when libmicrohttpd (or,
 * before the hand-over, this thread) closes it. */
static void kill_conn(struct http_admit *h, struct conn *c,
		      enum rtd_http_refusal why)
{
	if (c->killed)
		return;
	c->killed = true;
	if (why < RTD_HTTP_REFUSE_COUNT) /* an idle one's end is no refusal */
		h->refused[why]++;
	shutdown(c->fd, SHUT_RDWR);
}

static void unlink_conn(struct http_admit *h, struct conn *c)
{
	for (struct conn **pp = &h->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			h->n--;
			return;
		}
}

/* A new connection from addr: room for it, or -1 (closed, counted). */
static int admit(struct http_admit *h, const struct sockaddr_storage *addr)
{
	unsigned mine = 0, live = 0;
	struct conn *oldest = NULL;
	for (struct conn *c = h->conns; c; c = c->next) {
		if (c->killed)
			continue;
		live++;
		if (same_client(&c->addr, addr))
			mine++;
		/* waiting for a request: the first or the next one */
		if (c->state != C_ANSWER &&
		    (!oldest || c->since_ns < oldest->since_ns))
			oldest = c;
	}
	if (mine >= HTTP_CONNS_PER_CLIENT) {
		h->refused[RTD_HTTP_REFUSE_CLIENT_CONNS]++;
		return -1;
	}
	if (live >= HTTP_CONNS) {
		if (!oldest) {
			h->refused[RTD_HTTP_REFUSE_FULL]++;
			return -1;
		}
		kill_conn(h, oldest, RTD_HTTP_REFUSE_EVICTED);
	}
	return 0;
}

static void accept_all(struct http_admit *h)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(h->lfd, (struct sockaddr *)&ss, &sl,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				rtd_debug("http: accept: %s", strerror(errno));
			return;
		}
		pthread_mutex_lock(&h->lock);
		struct conn *c = NULL;
		if (admit(h, &ss) == 0)
			c = calloc(1, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&h->lock);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->addr = ss;
		c->addrlen = sl;
		c->state = C_FIRST;
		c->since_ns = now_ns();
		c->next = h->conns;
		h->conns = c;
		h->n++;
		pthread_mutex_unlock(&h->lock);
	}
}

/* c (C_FIRST) is readable: hand it over, close it, or wait for more. */
static void first_bytes(struct http_admit *h, struct conn *c, uint64_t now)
{
	uint8_t b[FIRST_BYTES];
	ssize_t n = recv(c->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
	int v;
	if (n > 0)
		v = http_admit_first_bytes(b, (size_t)n, h->tls);
	else if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	else
		v = -2; /* closed by the client, or failed: just drop it */
	if (v == 1) {
		c->seen = (size_t)n;
		c->recheck_ns = now + RECHECK_NS;
		return;
	}
	if (v < 0) {
		if (v == -1)
			h->refused[RTD_HTTP_REFUSE_NOT_HTTP]++;
		unlink_conn(h, c);
		close(c->fd);
		free(c);
		return;
	}
	/* still listed: MHD_add_connection notifies (started) before it
	 * returns, and the notification looks for it by its socket */
	c->state = C_HEADERS;
	int fd = c->fd;
	struct sockaddr_storage addr = c->addr;
	socklen_t al = c->addrlen;
	pthread_mutex_unlock(&h->lock);
	enum MHD_Result r =
		MHD_add_connection(h->d, fd, (struct sockaddr *)&addr, al);
	int e = errno;
	pthread_mutex_lock(&h->lock);
	if (r == MHD_YES)
		return;
	/* libmicrohttpd closed the socket and never saw it as a connection */
	rtd_debug("http: a connection not taken: %s", strerror(e));
	for (struct conn *x = h->conns; x; x = x->next)
		if (x == c && !c->mhd) {
			unlink_conn(h, c);
			free(c);
			break;
		}
}

static void *admit_main(void *arg)
{
	struct http_admit *h = arg;
	struct pollfd *pf = calloc(2 + HTTP_CONNS, sizeof(*pf));
	struct conn **pc = calloc(2 + HTTP_CONNS, sizeof(*pc));
	if (!pf || !pc) {
		free(pf);
		free(pc);
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		uint64_t now = now_ns();
		int64_t wait_ns = -1;
		nfds_t nf = 2;
		for (struct conn *c = h->conns; c; c = c->next) {
			if (c->killed)
				continue;
			if (c->state != C_ANSWER) {
				/* headers in time; an idle keep-alive one
				 * has the idle time for its next request */
				uint64_t dl = c->since_ns +
					      (c->state == C_IDLE
						       ? HTTP_IDLE_TIMEOUT_S *
								 1000000000ull
						       : h->header_deadline_ns);
				if (now >= dl) {
					kill_conn(h, c,
						  c->state == C_IDLE
							  ? RTD_HTTP_REFUSE_COUNT
							  : RTD_HTTP_REFUSE_HEADER_DEADLINE);
					continue;
				}
				if (wait_ns < 0 || (int64_t)(dl - now) < wait_ns)
					wait_ns = (int64_t)(dl - now);
			}
			if (c->state != C_FIRST || nf >= 2 + HTTP_CONNS)
				continue;
			if (c->recheck_ns > now) {
				int64_t w = (int64_t)(c->recheck_ns - now);
				if (wait_ns < 0 || w < wait_ns)
					wait_ns = w;
				continue;
			}
			pf[nf] = (struct pollfd){.fd = c->fd, .events = POLLIN};
			pc[nf++] = c;
		}
		/* the first-bytes connections this thread killed: close */
		for (struct conn *c = h->conns, *next; c; c = next) {
			next = c->next;
			if (c->state == C_FIRST && c->killed) {
				unlink_conn(h, c);
				close(c->fd);
				free(c);
			}
		}
		pf[0] = (struct pollfd){.fd = h->lfd, .events = POLLIN};
		pf[1] = (struct pollfd){.fd = h->wake, .events = POLLIN};
		pthread_mutex_unlock(&h->lock);
		int ms = wait_ns < 0 ? -1 : (int)(wait_ns / 1000000 + 1);
		int r = poll(pf, nf, ms);
		if (r < 0 && errno != EINTR) {
			rtd_warn("http: poll: %s", strerror(errno));
			pthread_mutex_lock(&h->lock);
			break;
		}
		if (r > 0 && (pf[1].revents & POLLIN)) {
			uint64_t v;
			ssize_t k = read(h->wake, &v, sizeof(v));
			(void)k;
		}
		if (r > 0 && (pf[0].revents & POLLIN))
			accept_all(h);
		pthread_mutex_lock(&h->lock);
		now = now_ns();
		for (nfds_t i = 2; r > 0 && i < nf; i++)
			if (pf[i].revents && !pc[i]->killed)
				first_bytes(h, pc[i], now);
	}
	/* what was never handed over is ours to close */
	for (struct conn *c = h->conns, *next; c; c = next) {
		next = c->next;
		if (c->state == C_FIRST) {
			unlink_conn(h, c);
			close(c->fd);
			free(c);
		}
	}
	pthread_mutex_unlock(&h->lock);
	free(pf);
	free(pc);
	return NULL;
}

/* ---- what libmicrohttpd tells ------------------------------------------------ */

void http_admit_notify(void *cls, struct MHD_Connection *mc, void **ctx,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct http_admit *h = cls;
	pthread_mutex_lock(&h->lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (struct conn *c = h->conns; ci && c; c = c->next)
			if (c->fd == ci->connect_fd && c->state == C_HEADERS &&
			    !c->mhd) {
				c->mhd = true;
				*ctx = c;
				break;
			}
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *ctx) {
		struct conn *c = *ctx;
		unlink_conn(h, c);
		free(c);
		*ctx = NULL;
	}
	pthread_mutex_unlock(&h->lock);
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void http_admit_request(struct http_admit *h, struct MHD_Connection *mc)
{
	pthread_mutex_lock(&h->lock);
	struct conn *c = conn_of(mc);
	if (c)
		c->state = C_ANSWER;
	pthread_mutex_unlock(&h->lock);
}

void http_admit_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct http_admit *h = cls;
	(void)con_cls;
	(void)toe;
	pthread_mutex_lock(&h->lock);
	struct conn *c = conn_of(mc);
	if (c && c->state == C_ANSWER) {
		/* kept alive: the next request has the idle time to come */
		c->state = C_IDLE;
		c->since_ns = now_ns();
	}
	pthread_mutex_unlock(&h->lock);
}

int http_admit_pull_begin(struct http_admit *h, struct MHD_Connection *mc)
{
	pthread_mutex_lock(&h->lock);
	struct conn *c = conn_of(mc);
	int rc = 0;
	if (c) {
		unsigned mine = 0;
		for (struct conn *x = h->conns; x; x = x->next)
			if (same_client(&x->addr, &c->addr))
				mine += x->pulls;
		if (mine >= HTTP_PULLS_PER_CLIENT) {
			h->refused[RTD_HTTP_REFUSE_CLIENT_PULLS]++;
			rc = -1;
		} else {
			c->pulls++;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void http_admit_pull_end(struct http_admit *h, struct MHD_Connection *mc)
{
	pthread_mutex_lock(&h->lock);
	struct conn *c = conn_of(mc);
	if (c && c->pulls)
		c->pulls--;
	pthread_mutex_unlock(&h->lock);
}

void http_admit_count(struct http_admit *h, enum rtd_http_refusal why)
{
	pthread_mutex_lock(&h->lock);
	h->refused[why]++;
	pthread_mutex_unlock(&h->lock);
}

void http_admit_refusals(struct http_admit *h,
			 uint64_t out[RTD_HTTP_REFUSE_COUNT])
{
	pthread_mutex_lock(&h->lock);
	memcpy(out, h->refused, sizeof(h->refused));
	pthread_mutex_unlock(&h->lock);
}

const char *http_admit_refusal_name(enum rtd_http_refusal why)
{
	static const char *const names[RTD_HTTP_REFUSE_COUNT] = {
		[RTD_HTTP_REFUSE_CLIENT_CONNS] = "client-connections",
		[RTD_HTTP_REFUSE_FULL] = "server-full",
		[RTD_HTTP_REFUSE_EVICTED] = "evicted-waiting",
		[RTD_HTTP_REFUSE_NOT_HTTP] = "not-http",
		[RTD_HTTP_REFUSE_HEADER_DEADLINE] = "header-deadline",
		[RTD_HTTP_REFUSE_CLIENT_PULLS] = "client-pulls",
		[RTD_HTTP_REFUSE_PULLS] = "pulls-full",
		[RTD_HTTP_REFUSE_AUTH] = "unauthorized",
	};
	return (unsigned)why < RTD_HTTP_REFUSE_COUNT ? names[why] : "?";
}

/* ---- start and stop ----------------------------------------------------------- */

struct http_admit *http_admit_new(int lfd, bool tls)
{
	struct http_admit *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->lfd = lfd;
	h->tls = tls;
	h->header_deadline_ns = HTTP_HEADER_DEADLINE_S * 1000000000ull;
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->wake < 0) {
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

int http_admit_start(struct http_admit *h, struct MHD_Daemon *d)
{
	h->d = d;
	int rc = pthread_create(&h->thr, NULL, admit_main, h);
	if (rc)
		return -rc;
	return 0;
}

void http_admit_stop(struct http_admit *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = true;
	pthread_mutex_unlock(&h->lock);
	uint64_t one = 1;
	ssize_t k = write(h->wake, &one, sizeof(one));
	(void)k;
	pthread_join(h->thr, NULL);
}

void http_admit_free(struct http_admit *h)
{
	if (!h)
		return;
	/* the connections libmicrohttpd had are gone with its daemon */
	for (struct conn *c = h->conns, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	close(h->wake);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
