/* SPDX-License-Identifier: MIT */
/*
 * http.c - the pull endpoints, served by libmicrohttpd (a thread per
 * connection, capped; a pprof request with ?seconds=N waits N seconds in
 * its thread while the loop collects):
 *
 *   /                        what is served here
 *   /metrics                 Prometheus text format (metrics.c)
 *   /targets                 JSON: one object per live target
 *   PREFIX/debug/pprof/      a target's profiles (Go's net/http/pprof
 *                            paths: profile, allocs, mutex, block; and
 *                            exceptions); /debug/pprof/ alone serves the
 *                            target when there is exactly one
 *
 * The listening socket is made here (so a bind failure names its errno)
 * and handed to libmicrohttpd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/http_admit.h"
#include "agent/http_auth.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/optlib_mhd.h"
#include "rtdiag/flight_recorder.h"

#define HTTP_STACK (256u << 10)
#define HTTP_MAX_BODY (64u << 20) /* one response */
#define CPU_DEFAULT_NS 30000000000ull /* Go's default ?seconds */

struct http_server {
	struct MHD_Daemon *d;
	struct http_admit *admit; /* owns the listening socket's accepts */
	struct http_auth *auth;   /* token and TLS credentials */
	bool full_targets;        /* /targets may show paths and cgroups */
	int fd;
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (!rtd_log_enabled(RTD_LOG_DEBUG))
		return;
	char m[512];
	vsnprintf(m, sizeof(m), fmt, ap);
	m[strcspn(m, "\n")] = 0;
	rtd_debug("http: %s", m);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, void *body, size_t len,
			     bool go_error)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (go_error) /* go tool pprof prints the body of such an answer */
		MHD_add_response_header(r, "X-Go-Pprof", "1");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  bool go_error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  bool go_error, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(c, status, "text/plain; charset=utf-8", s, (size_t)n,
		     go_error);
}

static enum MHD_Result reply_buf(struct MHD_Connection *c, const char *type,
				 rtd_buf *b, int rc)
{
	if (rc) {
		rtd_buf_free(b);
		return reply_text(c, 500, false, "%s\n", rtd_strerror(rc));
	}
	/* the buffer's bytes become the response's */
	void *body = b->data;
	size_t len = b->len;
	if (!body) {
		body = strdup("");
		len = 0;
	}
	return reply(c, 200, type, body, len, false);
}

/* ---- /targets ---------------------------------------------------------------- */

int targets_json(struct agent *a, rtd_buf *b, bool full)
{
	int rc = rtd_buf_putc(b, '[');
	pthread_mutex_lock(&a->lock);
	bool first = true;
	for (struct target *t = a->targets; t && !rc; t = t->next) {
		if (!target_listed(t))
			continue;
		char pprof[600];
		snprintf(pprof, sizeof(pprof), "%s/debug/pprof", t->prefix);
		rc |= rtd_buf_printf(b, "%s\n{\"pid\":%d,\"service\":",
				     first ? "" : ",", (int)t->pid);
		rc |= rtd_buf_json_str(b, t->service, strlen(t->service));
		rc |= rtd_buf_puts(b, ",\"runtime\":");
		rc |= rtd_buf_json_str(b, t->runtime, strlen(t->runtime));
		rc |= rtd_buf_puts(b, ",\"pprof\":");
		rc |= rtd_buf_json_str(b, pprof, strlen(pprof));
		rc |= rtd_buf_puts(b, ",\"profiles\":[");
		bool f2 = true;
		for (int k = 0; k < PK_COUNT; k++)
			if (t->kinds & (1u << k)) {
				rc |= rtd_buf_printf(b, "%s\"%s\"", f2 ? "" : ",",
						     prof_kind_path(k));
				f2 = false;
			}
		rc |= rtd_buf_putc(b, ']');
		if (full) {
			rc |= rtd_buf_puts(b, ",\"exe\":");
			rc |= rtd_buf_json_str(b, t->exe, strlen(t->exe));
		}
		rc |= rtd_buf_printf(b, ",\"start_time\":%lld",
				     (long long)t->start_unix);
		if (full && t->ids.container_id[0]) {
			rc |= rtd_buf_puts(b, ",\"container_id\":");
			rc |= rtd_buf_json_str(b, t->ids.container_id,
					       strlen(t->ids.container_id));
		}
		if (full && t->ids.pod_uid[0]) {
			rc |= rtd_buf_puts(b, ",\"pod_uid\":");
			rc |= rtd_buf_json_str(b, t->ids.pod_uid,
					       strlen(t->ids.pod_uid));
		}
		if (full && t->cgroup[0]) {
			rc |= rtd_buf_puts(b, ",\"cgroup\":");
			rc |= rtd_buf_json_str(b, t->cgroup, strlen(t->cgroup));
		}
		if (t->errmsg[0]) {
			rc |= rtd_buf_puts(b, ",\"error\":");
			rc |= rtd_buf_json_str(b, t->errmsg, strlen(t->errmsg));
		}
		rc |= rtd_buf_putc(b, '}');
		first = false;
	}
	pthread_mutex_unlock(&a->lock);
	rc |= rtd_buf_puts(b, "\n]\n");
	return rc ? -ENOMEM : 0;
}

/* ---- pprof ---------------------------------------------------------------------- */

/* Which target serves prefix: its id, or 0. With prefix "" and exactly one
 * target, that one. */
static uint64_t find_prefix(struct agent *a, const char *prefix, size_t len,
			    char *service, size_t slen)
{
	uint64_t id = 0;
	pthread_mutex_lock(&a->lock);
	for (struct target *t = a->targets; t; t = t->next)
		if (target_listed(t) && strlen(t->prefix) == len &&
		    !strncmp(t->prefix, prefix, len)) {
			id = t->id;
			snprintf(service, slen, "%s", t->service);
			break;
		}
	if (!id && len == 0 && a->ntargets == 1 && target_listed(a->targets)) {
		id = a->targets->id;
		snprintf(service, slen, "%s", a->targets->service);
	}
	pthread_mutex_unlock(&a->lock);
	return id;
}

int go_parse_int(const char *s, int64_t *v)
{
	*v = 0;
	bool neg = *s == '-';
	if (*s == '+' || *s == '-')
		s++;
	if (!*s)
		return -EINVAL;
	uint64_t u = 0;
	bool range = false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (u > (UINT64_MAX - d) / 10)
			range = true;
		else
			u = u * 10 + d;
	}
	uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (range || u > lim) {
		*v = neg ? INT64_MIN : INT64_MAX;
		return -ERANGE;
	}
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* strconv.Atoi with its error dropped, as net/http/pprof reads debug= */
static int64_t go_atoi(const char *s)
{
	int64_t v = 0;
	if (s)
		go_parse_int(s, &v);
	return v;
}

int pull_params_parse(enum prof_kind k, const char *seconds,
		      const char *debug, struct pull_params *out,
		      const char **msg)
{
	out->ns = 0;
	out->text_form = 0;
	*msg = NULL;
	int64_t sec = 0;
	if (k == PK_CPU) {
		/* pprof.Profile: anything but a positive integer is 30 s;
		 * debug= means nothing to it */
		if (!seconds || go_parse_int(seconds, &sec) || sec <= 0)
			out->ns = CPU_DEFAULT_NS;
		else if (sec > INT64_MAX / 1000000000)
			out->ns = (uint64_t)INT64_MAX;
		else
			out->ns = (uint64_t)sec * 1000000000ull;
		return 0;
	}
	/* handler.ServeHTTP: ?seconds= (not empty) asks for a delta */
	if (seconds && *seconds) {
		if (go_parse_int(seconds, &sec) || sec <= 0) {
			*msg = "invalid value for \"seconds\" - must be a "
			       "positive integer\n";
			return 400;
		}
		if (go_atoi(debug)) {
			*msg = "seconds and debug params are incompatible\n";
			return 400;
		}
		out->ns = sec > INT64_MAX / 1000000000
				  ? (uint64_t)INT64_MAX
				  : (uint64_t)sec * 1000000000ull;
		return 0;
	}
	if (go_atoi(debug)) {
		static const int forms[PK_COUNT] = {
			[PK_ALLOC] = RTD_PROFILE_GO_HEAP,
			[PK_MUTEX] = RTD_PROFILE_GO_MUTEX,
			[PK_BLOCK] = RTD_PROFILE_GO_CONTENTION,
		};
		/* exceptions has no Go form: its protobuf, as before */
		out->text_form = forms[k];
	}
	return 0;
}

static enum MHD_Result serve_index(struct MHD_Connection *c, const char *pfx,
				   size_t plen)
{
	return reply_text(c, 200, false,
			  "profiles of this target (Go's net/http/pprof paths):\n"
			  "  %.*s/debug/pprof/profile?seconds=N  CPU, the next "
			  "N seconds (default 30)\n"
			  "  %.*s/debug/pprof/allocs             allocations "
			  "(since the agent attached; ?seconds=N: a delta)\n"
			  "  %.*s/debug/pprof/mutex              lock "
			  "contention (the same)\n"
			  "  %.*s/debug/pprof/block              time spent "
			  "waiting, where the wait began (the same; .NET 9+)\n"
			  "  %.*s/debug/pprof/exceptions         exceptions "
			  "thrown\n"
			  "?debug=1 (without ?seconds=): Go's legacy text form "
			  "of allocs, mutex and block\n", (int)plen, pfx, (int)plen, pfx, (int)plen,
			  pfx, (int)plen, pfx, (int)plen, pfx);
}

/* url (/debug/pprof/...) asked with no prefix while not exactly one
 * target is live: say which paths would answer. */
static enum MHD_Result no_single_target(struct agent *a,
					struct MHD_Connection *c,
					const char *url)
{
	char paths[1024] = "";
	size_t n = 0, len = 0;
	pthread_mutex_lock(&a->lock);
	for (struct target *t = a->targets; t; t = t->next, n++)
		if (n < 4 && len < sizeof(paths))
			len += (size_t)snprintf(paths + len, sizeof(paths) - len,
						"  %s%s\n", t->prefix, url);
	pthread_mutex_unlock(&a->lock);
	if (n == 0)
		return reply_text(c, 404, true,
				  "%s: no target is live yet (the targets are "
				  "listed at /targets)\n", url);
	return reply_text(c, 404, true,
			  "%s: %zu targets are live, each at its own path; "
			  "ask one of:\n%s%s(all of them at /targets)\n", url,
			  n, paths, n > 4 ? "  ...\n" : "");
}

static enum MHD_Result serve_pprof(struct agent *a, struct MHD_Connection *c,
				   const char *url, const char *marker,
				   bool head)
{
	size_t plen = (size_t)(marker - url);
	const char *rest = marker + strlen("/debug/pprof");
	char service[130];
	uint64_t id = find_prefix(a, url, plen, service, sizeof(service));
	if (!id && plen == 0)
		return no_single_target(a, c, url);
	if (!id)
		return reply_text(c, 404, true,
				  "no target at %.*s (the live targets and their "
				  "paths are listed at /targets)\n", (int)plen,
				  url);
	if (!*rest || !strcmp(rest, "/"))
		return serve_index(c, url, plen);
	int kind = prof_kind_from_path(rest + 1);
	if (kind < 0) /* Go's answer, then what there is */
		return reply_text(c, 404, true,
				  "Unknown profile\n(this agent serves profile, "
				  "allocs, mutex, block and exceptions)\n");
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "seconds");
	const char *dbg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "debug");
	struct pull_params pp;
	const char *msg;
	int status = pull_params_parse((enum prof_kind)kind, sec, dbg, &pp, &msg);
	if (status)
		return reply_text(c, (unsigned)status, true, "%s", msg);
	uint64_t ns = pp.ns;
	if (ns > a->c->max_pull_ns)
		return reply_text(c, 400, true,
				  "profile duration %.0f s exceeds the agent's "
				  "max-pull-seconds (%.0f s)\n", ns / 1e9,
				  a->c->max_pull_ns / 1e9);
	if (head)
		return reply(c, 200, "application/octet-stream", NULL, 0, false);
	if (http_admit_pull_begin(a->http->admit, c))
		return reply_text(c, 503, true,
				  "too many profile requests from your address "
				  "at once (%d of the agent's %d)\n",
				  HTTP_PULLS_PER_CLIENT, RTD_AGENT_MAX_PULLS);
	struct pull *q = agent_pull(a, id, (enum prof_kind)kind, ns);
	http_admit_pull_end(a->http->admit, c);
	if (!q)
		return reply_text(c, 500, true, "out of memory\n");
	if (q->status == 503 && !a->stopping)
		http_admit_count(a->http->admit, RTD_HTTP_REFUSE_PULLS);
	if (q->status != 200) {
		enum MHD_Result r = reply_text(c, (unsigned)q->status, true,
					       "%s", q->msg);
		pull_free(q);
		return r;
	}
	if (!q->p)
		q->p = kind_profile_new((enum prof_kind)kind);
	uint8_t *body = NULL;
	size_t len = 0;
	int rc = q->p ? profile_encode(q->p, pp.text_form, &body, &len)
		      : -ENOMEM;
	pull_free(q);
	if (rc)
		return reply_text(c, 500, true, "%s: %s profile: %s\n", service,
				  prof_kind_name(kind), rtd_strerror(rc));
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (pp.text_form) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
	} else {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"application/octet-stream");
		MHD_add_response_header(r, "Content-Disposition",
					"attachment; filename=\"profile\"");
	}
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	enum MHD_Result res = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return res;
}

/* ---- the flight recorders ------------------------------------------------------ */

/* The target of "/targets/PID" or of a pprof prefix: its id, or 0. */
static uint64_t find_target(struct agent *a, const char *path, size_t len)
{
	char service[130];
	uint64_t id = len ? find_prefix(a, path, len, service, sizeof(service)) : 0;
	const char *num = path + strlen("/targets/");
	if (id || len <= strlen("/targets/") || strncmp(path, "/targets/", 9) ||
	    strspn(num, "0123456789") != len - 9)
		return id;
	long pid = strtol(num, NULL, 10);
	pthread_mutex_lock(&a->lock);
	for (struct target *t = a->targets; t; t = t->next)
		if (t->pid == pid && target_listed(t))
			id = t->id;
	pthread_mutex_unlock(&a->lock);
	return id;
}

/* A state change (a snapshot written, a dump taken) and the list of files
 * are for a client who proved who it is, or who is on this host: the
 * rule that gives /targets its paths. And never for a web page: a
 * browser sends Origin with a cross-site POST, a client of this API does
 * not. */
static const char *flight_refused(struct agent *a, struct MHD_Connection *c)
{
	if (!a->http->full_targets)
		return "snapshots need a token (auth-token-file) or a client "
		       "certificate (tls-client-ca) on an agent that listens beyond "
		       "loopback\n";
	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))
		return "not from a web page (the request has an Origin header)\n";
	return NULL;
}

static enum MHD_Result serve_snapshot(struct agent *a, struct MHD_Connection *c,
				      const char *url)
{
	size_t n = strlen(url), tail = strlen("/snapshot");
	if (n <= tail || strcmp(url + n - tail, "/snapshot"))
		return reply_text(c, 405, false, "%s: only GET and HEAD (POST is for "
						 "PREFIX/snapshot or /targets/PID/snapshot)\n", url);
	const char *why = flight_refused(a, c);
	if (why)
		return reply_text(c, 403, false, "%s", why);
	uint64_t id = find_target(a, url, n - tail);
	if (!id)
		return reply_text(c, 404, false, "no target at %.*s (the live targets "
						 "are listed at /targets)\n", (int)(n - tail), url);
	if (http_admit_pull_begin(a->http->admit, c))
		return reply_text(c, 503, false, "too many requests from your address "
						 "at once\n");
	struct rtd_flight_snapshot_info info;
	char msg[300], what[64], service[130] = "";
	snprintf(what, sizeof(what), "POST %s", n - tail > 40 ? "snapshot" : url);
	int status = agent_flight_take(a, id, what, &info, msg, sizeof(msg));
	http_admit_pull_end(a->http->admit, c);
	if (status != 200)
		return reply_text(c, (unsigned)status, false, "%s\n", msg);
	pthread_mutex_lock(&a->lock);
	for (struct target *t = a->targets; t; t = t->next)
		if (t->id == id)
			snprintf(service, sizeof(service), "%s", t->service);
	pthread_mutex_unlock(&a->lock);
	rtd_buf b;
	rtd_buf_init(&b, HTTP_MAX_BODY);
	int rc = agent_flight_json(&b, service, &info);
	rc |= rtd_buf_putc(&b, '\n');
	return reply_buf(c, "application/json", &b, rc ? -ENOMEM : 0);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct agent *a = cls;
	(void)version;
	(void)upload;
	if (!*con_cls) {
		*con_cls = (void *)1; /* headers only; the body comes next */
		http_admit_request(a->http->admit, c);
		return MHD_YES;
	}
	if (!http_auth_check(a->http->auth,
			     MHD_lookup_connection_value(
				     c, MHD_HEADER_KIND,
				     MHD_HTTP_HEADER_AUTHORIZATION))) {
		/* nothing about the targets in the answer */
		http_admit_count(a->http->admit, RTD_HTTP_REFUSE_AUTH);
		struct MHD_Response *r = MHD_create_response_from_buffer(
			13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"rtdiag agent\"");
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
		enum MHD_Result res = MHD_queue_response(c, 401, r);
		MHD_destroy_response(r);
		return res;
	}
	if (*upload_size) {
		*upload_size = 0; /* a GET's body is not read */
		return MHD_YES;
	}
	if (!strcmp(method, "POST"))
		return serve_snapshot(a, c, url);
	bool head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head)
		return reply_text(c, 405, false, "only GET, HEAD, and POST .../snapshot\n");
	size_t ul = strlen(url);
	if (ul > 9 && !strcmp(url + ul - 9, "/snapshot"))
		return reply_text(c, 405, false, "POST it to take a snapshot\n");
	if (!strcmp(url, "/snapshots")) {
		const char *why = flight_refused(a, c);
		if (why)
			return reply_text(c, 403, false, "%s", why);
		rtd_buf b;
		rtd_buf_init(&b, HTTP_MAX_BODY);
		int rc = agent_flight_list_json(a, &b);
		return reply_buf(c, "application/json", &b, rc);
	}
	if (!strcmp(url, "/metrics")) {
		rtd_buf b;
		rtd_buf_init(&b, HTTP_MAX_BODY);
		int rc = metrics_write(a, &b);
		return reply_buf(c, "text/plain; version=0.0.4; charset=utf-8",
				 &b, rc);
	}
	if (!strcmp(url, "/targets") || !strcmp(url, "/targets/")) {
		rtd_buf b;
		rtd_buf_init(&b, HTTP_MAX_BODY);
		int rc = targets_json(a, &b, a->http->full_targets);
		return reply_buf(c, "application/json", &b, rc);
	}
	const char *marker = strstr(url, "/debug/pprof");
	if (marker && (marker[12] == 0 || marker[12] == '/'))
		return serve_pprof(a, c, url, marker, head);
	if (!strcmp(url, "/"))
		return reply_text(c, 200, false,
				  "rtdiag agent\n"
				  "  /metrics   Prometheus metrics\n"
				  "  /targets   the targets and their pprof paths "
				  "(JSON)\n"
				  "  /snapshots the flight recorders' snapshots (JSON)\n"
				  "  POST /targets/PID/snapshot  one now\n");
	return reply_text(c, 404, false,
			  "%s: not here (try /targets, /metrics)\n", url);
}

/* Whether a bound socket address is loopback: 127.0.0.0/8, ::1, or
 * 127.0.0.0/8 mapped into IPv6. */
static bool bound_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)ss)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

/* The listening socket for "host:port"; refused after the bind when the
 * address bound is not loopback and remote clients are not allowed. */
static int make_socket(const char *listen_addr, bool allow_remote, bool tls,
		       bool *loopback, char *url, size_t ulen, char *err,
		       size_t errlen)
{
	char host[256];
	unsigned port;
	if (agent_split_hostport(listen_addr, host, sizeof(host), &port)) {
		snprintf(err, errlen, "listen %s: want ADDR:PORT", listen_addr);
		return -RTD_E_INVAL;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	int g = getaddrinfo(host, ps, &hints, &ai);
	if (g || !ai) {
		snprintf(err, errlen, "listen %s: %s", listen_addr,
			 gai_strerror(g));
		return -RTD_E_INVAL;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		freeaddrinfo(ai);
		snprintf(err, errlen, "listen %s: socket: %s", listen_addr,
			 strerror(e));
		return -e;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		int e = errno;
		freeaddrinfo(ai);
		close(fd);
		snprintf(err, errlen, "listen %s: %s%s", listen_addr,
			 strerror(e),
			 e == EADDRINUSE ? " (another agent? pick another "
					   "port with --listen)"
					 : "");
		return -e;
	}
	freeaddrinfo(ai);
	/* accepted in a loop until EAGAIN (http_admit.c) */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct sockaddr_storage ss = {0};
	socklen_t sl = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "";
	unsigned bound = port;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof(addr));
			bound = ntohs(s4->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof(addr));
			bound = ntohs(s6->sin6_port);
		}
	}
	/* The text of the address decides nothing: /etc/hosts may map any
	 * name ("localhost", "127.internal") to 0.0.0.0 or a public address.
	 * What was bound is checked, before a connection can be accepted. */
	*loopback = bound_is_loopback(&ss);
	if (!allow_remote && !*loopback) {
		close(fd);
		snprintf(err, errlen,
			 "listen %s: bound to %s, which is not a loopback "
			 "address; anyone who can reach it reads your "
			 "profiles: add --allow-remote to mean it",
			 listen_addr, addr[0] ? addr : "an unknown address");
		return -RTD_E_INVAL;
	}
	bool v6 = strchr(addr, ':') != NULL;
	snprintf(url, ulen, "%s://%s%s%s:%u", tls ? "https" : "http",
		 v6 ? "[" : "", addr,
		 v6 ? "]" : "", bound);
	return fd;
}

int http_start(struct agent *a, char *err, size_t errlen)
{
	int rc = rtd_optlib_open_mhd(err, errlen);
	if (rc < 0)
		return rc;
	struct http_server *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	rc = http_auth_new(a->c, &h->auth, err, errlen);
	if (rc) {
		free(h);
		return rc;
	}
	bool tls = http_auth_tls(h->auth), loopback = false;
	h->fd = make_socket(a->c->listen, a->c->allow_remote, tls, &loopback,
			    a->url, sizeof(a->url), err, errlen);
	if (h->fd < 0) {
		rc = h->fd;
		http_auth_free(h->auth);
		free(h);
		return rc;
	}
	/* paths, cgroups and pod ids are for clients who proved who they
	 * are, or who are on this host */
	h->full_targets = loopback || http_auth_has_token(h->auth) ||
			  http_auth_client_ca(h->auth);
	h->admit = http_admit_new(h->fd, tls);
	if (!h->admit) {
		close(h->fd);
		http_auth_free(h->auth);
		free(h);
		return -ENOMEM;
	}
	/* the admission thread accepts and hands connections over; the
	 * daemon's limit leaves room for the ones it was told to close */
	struct MHD_OptionItem ops[12];
	size_t n = 0;
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER,
					   (intptr_t)mhd_log, NULL};
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION,
					   (intptr_t)http_admit_notify,
					   h->admit};
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED,
					   (intptr_t)http_admit_completed,
					   h->admit};
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
					   HTTP_CONNS + 32, NULL};
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
					   HTTP_IDLE_TIMEOUT_S, NULL};
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_STACK_SIZE,
					   HTTP_STACK, NULL};
	if (tls) {
		ops[n++] = (struct MHD_OptionItem){
			MHD_OPTION_HTTPS_CERT_CALLBACK, 0,
			http_auth_retrieve_fn()};
	}
	ops[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	h->d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_POLL | MHD_USE_ERROR_LOG |
			MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC |
			(tls ? MHD_USE_TLS : 0),
		0, NULL, NULL, handle, a, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	rc = h->d ? http_admit_start(h->admit, h->d) : -RTD_E_STATE;
	if (rc) {
		if (h->d)
			MHD_stop_daemon(h->d);
		http_admit_free(h->admit);
		http_auth_free(h->auth);
		close(h->fd);
		free(h);
		snprintf(err, errlen, "listen %s: the HTTP%s server did not start",
			 a->c->listen, tls ? "S" : "");
		return rc;
	}
	a->http = h;
	return 0;
}

void http_reload(struct agent *a)
{
	struct http_server *h = a->http;
	if (!h || (!a->c->tls_cert && !a->c->auth_token_file))
		return;
	/* the client CA comes with the certificate (its generation) */
	char err[512];
	if (http_auth_reload(h->auth, a->c, err, sizeof(err)))
		rtd_warn("reload: %s (the credentials in force are kept)", err);
	else
		rtd_info("reload: %s%s%s%s read again",
			 a->c->tls_cert ? "TLS certificate and key" : "",
			 a->c->tls_client_ca ? ", client CA" : "",
			 a->c->tls_cert && a->c->auth_token_file ? ", " : "",
			 a->c->auth_token_file ? "token" : "");
}

void http_stop(struct agent *a)
{
	struct http_server *h = a->http;
	if (!h)
		return;
	http_admit_stop(h->admit); /* no new connection from here on */
	MHD_stop_daemon(h->d);
	http_admit_free(h->admit);
	http_auth_free(h->auth);
	close(h->fd);
	free(h);
	a->http = NULL;
}

_Static_assert(HTTP_REFUSALS == RTD_HTTP_REFUSE_COUNT,
	       "agent_int.h's HTTP_REFUSALS is the number of reasons");

void http_refusals(struct agent *a, uint64_t *out, const char **names,
		   size_t max)
{
	uint64_t r[RTD_HTTP_REFUSE_COUNT] = {0};
	if (a->http)
		http_admit_refusals(a->http->admit, r);
	for (size_t i = 0; i < max && i < RTD_HTTP_REFUSE_COUNT; i++) {
		out[i] = r[i];
		names[i] = http_admit_refusal_name((enum rtd_http_refusal)i);
	}
}
