/* SPDX-License-Identifier: MIT */
/*
 * http_admit.h - admission to the agent's HTTP server (http_admit.c): the
 * listening socket's own thread, per-client limits, the request-header
 * deadline, refusals counted by reason.
 */
#ifndef RTD_AGENT_HTTP_ADMIT_H
#define RTD_AGENT_HTTP_ADMIT_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_CONNS 128            /* connections served at once */
#define HTTP_CONNS_PER_CLIENT 32  /* of them, from one client address */
#define HTTP_PULLS_PER_CLIENT 16  /* profile requests waiting, one address */
#define HTTP_HEADER_DEADLINE_S 10 /* first byte awaited -> headers read */
#define HTTP_IDLE_TIMEOUT_S 30    /* libmicrohttpd: no byte for that long */

/* Why a connection or a request was refused (rtdiag_agent_http_refused_total
 * {reason="..."}). */
enum rtd_http_refusal {
	RTD_HTTP_REFUSE_CLIENT_CONNS,    /* the address has its share */
	RTD_HTTP_REFUSE_FULL,            /* every connection is answering */
	RTD_HTTP_REFUSE_EVICTED,         /* waited longest, closed for room */
	RTD_HTTP_REFUSE_NOT_HTTP,        /* garbage, a TLS hello on plain */
	RTD_HTTP_REFUSE_HEADER_DEADLINE, /* headers not read in time */
	RTD_HTTP_REFUSE_CLIENT_PULLS,    /* the address has its pulls' share */
	RTD_HTTP_REFUSE_PULLS,           /* every pull slot is taken */
	RTD_HTTP_REFUSE_AUTH,            /* no or a wrong token */
	RTD_HTTP_REFUSE_COUNT
};

struct http_admit;

/* Admission for the listening socket lfd (non-blocking); tls: the port
 * speaks TLS. NULL when out of memory. */
struct http_admit *http_admit_new(int lfd, bool tls);
/* Start accepting for daemon d (started with MHD_USE_NO_LISTEN_SOCKET and
 * http_admit_notify / http_admit_completed). 0 or a negative errno. */
int http_admit_start(struct http_admit *h, struct MHD_Daemon *d);
/* Stop accepting (before the daemon is stopped). */
void http_admit_stop(struct http_admit *h);
/* After the daemon is stopped. */
void http_admit_free(struct http_admit *h);

/* libmicrohttpd's callbacks (cls = the http_admit). */
void http_admit_notify(void *cls, struct MHD_Connection *mc, void **ctx,
		       enum MHD_ConnectionNotificationCode toe);
void http_admit_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			  enum MHD_RequestTerminationCode toe);
/* A request's headers are read: it is being answered. */
void http_admit_request(struct http_admit *h, struct MHD_Connection *mc);
/* A profile request begins (0) or is refused (-1: the address has its
 * share, counted); each 0 is paired with an _end. */
int http_admit_pull_begin(struct http_admit *h, struct MHD_Connection *mc);
void http_admit_pull_end(struct http_admit *h, struct MHD_Connection *mc);
void http_admit_count(struct http_admit *h, enum rtd_http_refusal why);
void http_admit_refusals(struct http_admit *h,
			 uint64_t out[RTD_HTTP_REFUSE_COUNT]);
const char *http_admit_refusal_name(enum rtd_http_refusal why);

/* Whether b[0..n) can begin what the port serves (an HTTP request line,
 * or a TLS record when tls): 0 yes, 1 so far (more bytes needed), -1 no.
 * Exposed for the unit test. */
int http_admit_first_bytes(const uint8_t *b, size_t n, bool tls);

#endif
