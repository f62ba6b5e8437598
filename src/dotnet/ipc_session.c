/* SPDX-License-Identifier: MIT */
/*
 * ipc_session.c - EventPipe sessions: start (CollectTracing 1-6 with
 * fallback), read, stop from a second connection, pump into a sink with
 * a bounded rundown wait, and replay of recorded sessions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/file.h"
#include "common/log.h"
#include "common/rd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/ipc_session.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/ipc_user_events.h"
#include "rtdiag/source.h"

#define PUMP_CHUNK (64u << 10)

struct rtd_ipc_session {
	rtd_ipc_client *c;
	struct ipc_conn conn;
	uint64_t id;
	int version;
	bool stopped;
	struct ipc_conn stop_conn; /* StopTracing in flight */
	size_t stop_got;
	uint8_t stop_reply[IPC_HEADER_SIZE + 8];
	/* replay */
	FILE *replay;
	uint32_t replay_conn;
	uint32_t replay_left; /* bytes left in the current frame */
	bool replay_end;
	struct ipc_pump pump; /* rtd_ipc_session_pump_source()'s reads */
	struct ipc_live live; /* rtd_ipc_session_source_live()'s reads */
	struct spool_ent *spool; /* read by a spool's thread (ipc_spool.c) */
	struct ipc_pending *pend; /* rtd_ipc_session_begin()'s reply to come */
};

/* A CollectTracing request sent whose reply is still to be read: the
 * requests to try in turn (a runtime that does not know one gets the
 * next), and the reply as it arrives. A reply is short (an id, or an
 * HRESULT); the stream follows it on the same connection, so no byte past
 * the reply's own size is read here. */
#define PEND_REPLY_MAX 256
struct ipc_pending {
	rtd_buf msg[3];
	int v[3];
	int n, at, need;
	uint8_t reply[PEND_REPLY_MAX];
	size_t got, want;
};

/* The CollectTracing<v> request of o, into b (initialised here). */
static int collect_msg(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
		       int v, rtd_buf *b)
{
	uint8_t *pl = NULL;
	size_t pl_len = 0;
	rtd_buf_init(b, IPC_MAX_MESSAGE);
	int rc = rtd_ipc_collect_payload(v, o, &pl, &pl_len);
	if (!rc)
		rc = ipc_msg_begin(b, RTD_IPC_SET_EVENTPIPE, (uint8_t)(EP_COLLECT + v - 1));
	if (!rc)
		rc = rtd_buf_append(b, pl, pl_len);
	free(pl);
	if (!rc)
		rc = ipc_msg_finish(b);
	if (rc) {
		rtd_buf_free(b);
		ipc_seterr(c, "CollectTracing%d request: %s", v,
			   rtd_strerror(rc));
	}
	return rc;
}

/* The session id of an OK reply to CollectTracing<v>. */
static int collect_id(rtd_ipc_session *s, const struct rtd_ipc_reply *r, int v)
{
	rtd_rd rd;
	rd_init(&rd, r->payload, r->len);
	s->id = rd_u64le(&rd);
	if (!rd_ok(&rd)) {
		ipc_seterr(s->c, "CollectTracing%d: reply payload of %zu "
				 "bytes has no 8-byte session id",
			   v, r->len);
		ipc_conn_close(&s->conn);
		return -RTD_E_IPC_PROTOCOL;
	}
	s->version = v;
	return 0;
}

static int start_version(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
			 int v, rtd_ipc_session *s)
{
	rtd_buf b;
	int rc = collect_msg(c, o, v, &b);
	if (rc)
		return rc;
	struct rtd_ipc_reply r;
	rc = ipc_transact(c, &b, &r, &s->conn);
	rtd_buf_free(&b);
	if (!rc)
		rc = collect_id(s, &r, v);
	rtd_ipc_reply_clear(&r);
	return rc;
}

/* What a runtime that knows none of the versions tried lacks. */
static void say_unknown(rtd_ipc_client *c, int need)
{
	ipc_seterr(c, "the runtime does not know CollectTracing%d, "
		      "which this request needs (%s)",
		   need,
		   need == 6   ? "buffer block mode: .NET 11+"
		   : need == 5 ? "event id filters: .NET 10+"
		   : need == 4 ? "rundown keywords: .NET 9+"
			       : "an older .NET");
}

RTD_API rtd_ipc_session *
rtd_ipc_session_start(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
		      int *err)
{
	int rc;
	rtd_ipc_session *s = NULL;
	struct rtd_ipc_session_opts oc;
	if (!c || !o || rtd_opts_copy(&oc, sizeof(oc), o,
				      RTD_OPTS_END(rtd_ipc_session_opts, filters_optional)) ||
	    !oc.providers || !oc.n_providers) {
		rc = -RTD_E_INVAL;
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = -ENOMEM;
		goto fail;
	}
	s->c = c;
	s->conn.fd = -1;
	s->stop_conn.fd = -1;
	o = &oc; /* at this version's size, what it does not know zero */
	int need = rtd_ipc_collect_min_version(o);
	int first = o->version > 0 ? o->version : 5;
	if (first < need)
		first = need;
	if (first > 6)
		first = 6;
	rc = start_version(c, o, first, s);
	/* An older runtime: the lowest version that covers the request is
	 * the one most runtimes know. */
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND && need < first) {
		char prev[sizeof(c->errmsg)];
		snprintf(prev, sizeof(prev), "%s", c->errmsg);
		rtd_debug("%s; retrying with CollectTracing%d", prev, need);
		rc = start_version(c, o, need, s);
	}
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND && o->filters_optional &&
	    need == 5) {
		/* before .NET 10: the same request without event filters */
		struct rtd_ipc_session_opts o2 = *o;
		struct rtd_ipc_provider *pv = calloc(o->n_providers, sizeof(*pv));
		if (!pv) {
			rc = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < o->n_providers; i++) {
			pv[i] = o->providers[i];
			pv[i].filter_ids = NULL;
			pv[i].n_filter_ids = 0;
		}
		o2.providers = pv;
		need = rtd_ipc_collect_min_version(&o2);
		rtd_debug("no CollectTracing5: retrying with CollectTracing%d "
			  "without event filters", need);
		rc = start_version(c, &o2, need, s);
		free(pv);
	}
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND)
		say_unknown(c, need);
	if (rc)
		goto fail;
	return s;
fail:
	free(s);
	if (err)
		*err = rc;
	return NULL;
}

static void pend_free(rtd_ipc_session *s)
{
	if (!s->pend)
		return;
	for (int i = 0; i < s->pend->n; i++)
		rtd_buf_free(&s->pend->msg[i]);
	free(s->pend);
	s->pend = NULL;
}

/* Send the pending request's current version on a new connection. */
static int pend_send(rtd_ipc_session *s)
{
	struct ipc_pending *p = s->pend;
	const rtd_buf *b = &p->msg[p->at];
	p->got = 0;
	p->want = IPC_HEADER_SIZE;
	return ipc_conn_send(s->c, &s->conn, b, ipc_cmd_name(b->data[16], b->data[17]));
}

RTD_API rtd_ipc_session *
rtd_ipc_session_begin(rtd_ipc_client *c, const struct rtd_ipc_session_opts *o,
		      int *err)
{
	int rc = -RTD_E_INVAL;
	rtd_ipc_session *s = NULL;
	struct rtd_ipc_session_opts oc;
	struct rtd_ipc_provider *pv = NULL;
	if (!c || !o || c->mode == IPC_MODE_LISTENER ||
	    rtd_opts_copy(&oc, sizeof(oc), o,
			  RTD_OPTS_END(rtd_ipc_session_opts, filters_optional)) ||
	    !oc.providers || !oc.n_providers)
		goto fail;
	rc = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->pend = calloc(1, sizeof(*s->pend))))
		goto fail;
	s->c = c;
	s->conn.fd = -1;
	s->stop_conn.fd = -1;
	/* the versions rtd_ipc_session_start() would try, in its order */
	struct ipc_pending *p = s->pend;
	int need = rtd_ipc_collect_min_version(&oc);
	int first = oc.version > 0 ? oc.version : 5;
	if (first < need)
		first = need;
	if (first > 6)
		first = 6;
	p->need = need;
	p->v[p->n++] = first;
	if (need < first)
		p->v[p->n++] = need;
	struct rtd_ipc_session_opts o2 = oc;
	if (oc.filters_optional && need == 5) {
		pv = calloc(oc.n_providers, sizeof(*pv));
		if (!pv)
			goto fail;
		for (size_t i = 0; i < oc.n_providers; i++) {
			pv[i] = oc.providers[i];
			pv[i].filter_ids = NULL;
			pv[i].n_filter_ids = 0;
		}
		o2.providers = pv;
		p->v[p->n++] = rtd_ipc_collect_min_version(&o2);
	}
	for (int i = 0; i < p->n; i++) {
		/* the last of three is the one without filters */
		rc = collect_msg(c, i == 2 ? &o2 : &oc, p->v[i], &p->msg[i]);
		if (rc) {
			p->n = i;
			goto fail;
		}
	}
	free(pv);
	pv = NULL;
	rc = pend_send(s);
	if (rc)
		goto fail;
	return s;
fail:
	free(pv);
	rtd_ipc_session_free(s);
	if (err)
		*err = rc;
	return NULL;
}

/* A whole reply came: the session runs, the next version is asked, or
 * the request failed. */
static int pend_done(rtd_ipc_session *s)
{
	struct ipc_pending *p = s->pend;
	int v = p->v[p->at];
	char what[24];
	snprintf(what, sizeof(what), "CollectTracing%d", v);
	struct rtd_ipc_reply r = {0};
	uint16_t size;
	(void)ipc_header_parse(p->reply, &r.cmdset, &r.cmdid, &size);
	r.payload = p->reply + IPC_HEADER_SIZE;
	r.len = p->got - IPC_HEADER_SIZE;
	int rc = ipc_reply_status(s->c, &r, what);
	if (!rc) {
		rc = collect_id(s, &r, v);
		if (!rc) {
			pend_free(s);
			return 0;
		}
	}
	ipc_conn_close(&s->conn);
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND && p->at + 1 < p->n) {
		rtd_debug("%s; retrying with CollectTracing%d",
			  rtd_ipc_client_errmsg(s->c), p->v[p->at + 1]);
		p->at++;
		rc = pend_send(s);
		return rc ? rc : 1;
	}
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND)
		say_unknown(s->c, p->need);
	return rc;
}

RTD_API int rtd_ipc_session_answer(rtd_ipc_session *s)
{
	if (!s)
		return -RTD_E_INVAL;
	struct ipc_pending *p = s->pend;
	if (!p)
		return s->conn.fd >= 0 || s->replay ? 0 : -RTD_E_STATE;
	if (s->conn.fd < 0)
		return -RTD_E_STATE; /* failed before */
	for (;;) {
		ssize_t n = ipc_read_some(s->conn.fd, p->reply + p->got,
					  p->want - p->got, 0);
		if (n == -RTD_E_IPC_TIMEOUT || n == -EINTR)
			return 1;
		if (n <= 0) {
			if (n == 0 && !p->got)
				ipc_seterr(s->c, "CollectTracing%d: the runtime "
						 "closed the connection without "
						 "a reply (did the process exit?)",
					   p->v[p->at]);
			else
				ipc_seterr(s->c, "CollectTracing%d: reading the "
						 "reply: %s",
					   p->v[p->at],
					   rtd_strerror(n ? (int)n : -RTD_E_TRUNCATED));
			ipc_conn_close(&s->conn);
			return n == 0 && !p->got ? -RTD_E_IPC_CLOSED
						 : n ? (int)n : -RTD_E_IPC_PROTOCOL;
		}
		ipc_record(s->c, s->conn.id, REC_RECV, p->reply + p->got,
			   (size_t)n);
		p->got += (size_t)n;
		if (p->got < p->want)
			continue;
		if (p->want > IPC_HEADER_SIZE)
			return pend_done(s);
		uint8_t set, id;
		uint16_t size;
		int rc = ipc_header_parse(p->reply, &set, &id, &size);
		if (!rc && size > PEND_REPLY_MAX)
			rc = -RTD_E_CAP;
		if (rc) {
			ipc_seterr(s->c, "CollectTracing%d: reply header: %s "
					 "(size %u)",
				   p->v[p->at], rtd_strerror(rc), (unsigned)size);
			ipc_conn_close(&s->conn);
			return rc == -RTD_E_CAP ? -RTD_E_IPC_PROTOCOL : rc;
		}
		p->want = size;
		if (p->want == IPC_HEADER_SIZE)
			return pend_done(s);
	}
}

RTD_API uint64_t rtd_ipc_session_id(const rtd_ipc_session *s)
{
	return s->id;
}

RTD_API int rtd_ipc_session_version(const rtd_ipc_session *s)
{
	return s->version;
}

RTD_API int rtd_ipc_session_fd(const rtd_ipc_session *s)
{
	if (s->spool)
		return ipc_spool_fd(s->spool);
	return s->replay ? -1 : s->conn.fd;
}

struct spool_ent **ipc_session_spool(rtd_ipc_session *s)
{
	/* not before its reply is read (rtd_ipc_session_answer()): the
	 * spool's thread would take the reply's bytes as the stream's */
	return s->replay || s->pend || s->conn.fd < 0 ? NULL : &s->spool;
}

RTD_API uint64_t rtd_ipc_session_dropped(const rtd_ipc_session *s)
{
	return s && s->spool ? ipc_spool_dropped(s->spool) : 0;
}

static ssize_t replay_read(rtd_ipc_session *s, void *buf, size_t len)
{
	while (!s->replay_left) {
		if (s->replay_end)
			return 0;
		uint8_t h[16];
		if (fread(h, 1, 16, s->replay) != 16) {
			s->replay_end = true;
			return 0;
		}
		rtd_rd r;
		rd_init(&r, h, 16);
		uint32_t magic = rd_u32le(&r), conn = rd_u32le(&r),
			 kind = rd_u32le(&r), n = rd_u32le(&r);
		if (magic != 0x52445452u) {
			s->replay_end = true;
			return -RTD_E_FORMAT;
		}
		if (conn != s->replay_conn || kind != REC_RECV) {
			if (conn == s->replay_conn && kind == REC_CLOSE)
				s->replay_end = true;
			if (n && fseek(s->replay, n, SEEK_CUR) != 0)
				return -errno;
			continue;
		}
		s->replay_left = n;
	}
	size_t want = len < s->replay_left ? len : s->replay_left;
	size_t got = fread(buf, 1, want, s->replay);
	if (got == 0) {
		s->replay_end = true;
		return 0; /* recording cut short: what we had is delivered */
	}
	s->replay_left -= (uint32_t)got;
	return (ssize_t)got;
}

RTD_API ssize_t rtd_ipc_session_read(rtd_ipc_session *s, void *buf,
				     size_t len, int timeout_ms)
{
	if (s->replay)
		return replay_read(s, buf, len);
	if (s->pend)
		return -RTD_E_STATE; /* the reply comes first: answer() */
	if (s->conn.fd < 0)
		return 0;
	ssize_t n = s->spool ? ipc_spool_read(s->spool, buf, len, timeout_ms)
			     : ipc_read_some(s->conn.fd, buf, len, timeout_ms);
	if (n > 0)
		ipc_record(s->c, s->conn.id, REC_RECV, buf, (size_t)n);
	return n;
}

/*
 * StopTracing is sent but its reply not awaited here: the runtime writes
 * the rundown into the session stream before it answers, and a large
 * rundown fills the socket unless someone reads the stream meanwhile. The
 * reply is collected by the pump (stop_poll) or dropped at free.
 */
RTD_API int rtd_ipc_session_stop(rtd_ipc_session *s)
{
	if (s->stopped || s->replay)
		return 0;
	s->stopped = true;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_EVENTPIPE, EP_STOP);
	if (!rc)
		rc = ipc_put_u64(&b, s->id);
	if (!rc)
		rc = ipc_msg_finish(&b);
	if (!rc)
		rc = ipc_conn_open(s->c, &s->stop_conn);
	if (!rc) {
		ipc_record(s->c, s->stop_conn.id, REC_SEND, b.data, b.len);
		rc = ipc_write_all(s->stop_conn.fd, b.data, b.len,
				   s->c->timeout_ms);
		if (rc) {
			ipc_seterr(s->c, "StopTracing: %s", rtd_strerror(rc));
			ipc_conn_close(&s->stop_conn);
		}
	}
	rtd_buf_free(&b);
	return rc;
}

/* Read what has arrived of the StopTracing reply, without waiting. */
static void stop_poll(rtd_ipc_session *s)
{
	if (s->stop_conn.fd < 0)
		return;
	ssize_t n = ipc_read_some(s->stop_conn.fd, s->stop_reply + s->stop_got,
				  sizeof(s->stop_reply) - s->stop_got, 0);
	if (n > 0)
		s->stop_got += (size_t)n;
	if (n == 0 || (n < 0 && n != -RTD_E_IPC_TIMEOUT) ||
	    s->stop_got == sizeof(s->stop_reply)) {
		if (s->stop_got)
			ipc_record(s->c, s->stop_conn.id, REC_RECV,
				   s->stop_reply, s->stop_got);
		ipc_conn_close(&s->stop_conn);
		/* An error reply (a 4-byte HRESULT payload) is kept in the
		 * client's message; the stream end is what ends the pump. */
		uint8_t set, id;
		uint16_t size;
		if (s->stop_got >= IPC_HEADER_SIZE + 4 &&
		    ipc_header_parse(s->stop_reply, &set, &id, &size) == 0 &&
		    set == RTD_IPC_SET_SERVER && id == SERVER_ERROR) {
			struct rtd_ipc_reply r = {
				.cmdset = set, .cmdid = id,
				.payload = s->stop_reply + IPC_HEADER_SIZE,
				.len = s->stop_got - IPC_HEADER_SIZE};
			int rc = ipc_reply_error(s->c, &r, "StopTracing");
			rtd_debug("%s", rtd_ipc_client_errmsg(s->c));
			(void)rc;
		}
	}
}

int ipc_pump_begin(rtd_ipc_session *s, const struct rtd_ipc_pump_opts *o,
		   struct rtd_ipc_pump_result *res)
{
	struct ipc_pump *p = &s->pump;
	memset(p, 0, sizeof(*p));
	if (!o || rtd_opts_copy(&p->o, sizeof(p->o), o,
				RTD_OPTS_END(rtd_ipc_pump_opts, tick)))
		return -RTD_E_INVAL;
	p->res = res ? res : &p->own;
	memset(p->res, 0, sizeof(*p->res));
	p->rundown_ns = (p->o.rundown_wait_ms ? p->o.rundown_wait_ms : 30000) * 1000000ull;
	p->begun = true;
	return 0;
}

/* The pump is over: its last tick, once; later reads give 0 again. */
static int64_t pump_end(struct ipc_pump *p, int rc)
{
	p->done = true;
	p->rc = rc;
	if (p->o.tick)
		p->o.tick(p->res->bytes, p->o.ctx);
	return 0;
}

/*
 * The pump's loop, one delivery a call: stop the session when asked (the
 * stop flag, the duration), end when the rundown has not come within its
 * wait, collect StopTracing's reply, and read with a 100 ms timeout so
 * each of those is looked at while the stream is quiet.
 */
int64_t ipc_pump_read(rtd_ipc_session *s, void *buf, size_t len)
{
	struct ipc_pump *p = &s->pump;
	struct rtd_ipc_pump_result *res = p->res;
	if (p->done || !p->begun)
		return 0;
	if (!p->reading) {
		/* a source's pump starts when its consumer first pulls */
		p->reading = true;
		p->start = p->last_tick = rtd_now_ns();
	}
	for (;;) {
		uint64_t now = rtd_now_ns();
		bool want_stop = (p->o.stop && *p->o.stop) ||
				 (p->o.duration_ms &&
				  now - p->start >= p->o.duration_ms * 1000000ull);
		if (want_stop && !res->stopped) {
			res->stopped = true;
			p->stop_at = now;
			int src = rtd_ipc_session_stop(s);
			if (src)
				rtd_debug("StopTracing: %s", rtd_strerror(src));
		}
		if (res->stopped && now - p->stop_at >= p->rundown_ns) {
			res->rundown_timeout = true;
			return pump_end(p, 0);
		}
		stop_poll(s);
		ssize_t n = rtd_ipc_session_read(s, buf, len, 100);
		if (n == -RTD_E_IPC_TIMEOUT || n == -EINTR) {
			n = 0;
		} else if (n == 0) {
			res->ended = true;
			if (!res->stopped && !s->replay)
				res->target_gone = true;
			return pump_end(p, 0);
		} else if (n < 0) {
			return pump_end(p, (int)n);
		}
		if (n > 0) {
			res->bytes += (uint64_t)n;
			int rc = p->o.sink ? p->o.sink(buf, (size_t)n, p->o.ctx) : 0;
			if (rc)
				return pump_end(p, rc);
		}
		if (p->o.tick && rtd_now_ns() - p->last_tick >= 100000000ull) {
			p->last_tick = rtd_now_ns();
			p->o.tick(res->bytes, p->o.ctx);
		}
		if (n > 0)
			return n;
	}
}

struct ipc_live *ipc_session_live(rtd_ipc_session *s)
{
	return &s->live;
}

int ipc_pump_rc(const rtd_ipc_session *s)
{
	return s->pump.begun ? s->pump.rc : -RTD_E_STATE;
}

RTD_API int rtd_ipc_session_pump(rtd_ipc_session *s,
				 const struct rtd_ipc_pump_opts *o,
				 struct rtd_ipc_pump_result *res)
{
	struct rtd_ipc_pump_result tmp;
	if (!res)
		res = &tmp;
	memset(res, 0, sizeof(*res));
	int rc = ipc_pump_begin(s, o, res);
	if (rc)
		return rc;
	if (!s->pump.o.sink)
		return -RTD_E_INVAL;
	uint8_t *buf = malloc(PUMP_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (ipc_pump_read(s, buf, PUMP_CHUNK) > 0)
		;
	free(buf);
	return s->pump.rc;
}


RTD_API int rtd_ipc_rundown_snapshot(rtd_ipc_client *c, uint64_t rundown_keyword,
				     rtd_ipc_sink_fn sink, void *ctx,
				     int wait_ms)
{
	if (!c || !sink)
		return -RTD_E_INVAL;
	/* keywords 0 at LogAlways: the runtime provider's events all have
	 * keywords and a higher level, so nothing is enabled */
	const struct rtd_ipc_provider none = {
		.name = "Microsoft-Windows-DotNETRuntime"};
	struct rtd_ipc_session_opts so = {
		.sz = sizeof(so), .providers = &none, .n_providers = 1,
		.buffer_mb = 16, .rundown_keyword = rundown_keyword,
		.no_stackwalk = true};
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_session_start(c, &so, &err);
	if (!s)
		return err;
	volatile int stop = 1; /* stop at once */
	struct rtd_ipc_pump_opts po = {
		.sz = sizeof(po), .sink = sink, .ctx = ctx, .stop = &stop,
		.rundown_wait_ms = (uint64_t)(wait_ms > 0 ? wait_ms : 30000)};
	struct rtd_ipc_pump_result res;
	int rc = rtd_ipc_session_pump(s, &po, &res);
	if (!rc && res.rundown_timeout) {
		ipc_seterr(c, "the rundown did not end within %d ms",
			   wait_ms > 0 ? wait_ms : 30000);
		rc = -RTD_E_IPC_TIMEOUT;
	}
	rtd_ipc_session_free(s);
	return rc;
}

RTD_API void rtd_ipc_session_close(rtd_ipc_session *s)
{
	if (!s || s->replay)
		return;
	/* off the spool's thread before the socket closes */
	ipc_spool_leave(s->spool);
	s->spool = NULL;
	ipc_conn_close(&s->stop_conn);
	ipc_conn_close(&s->conn);
}

RTD_API void rtd_ipc_session_free(rtd_ipc_session *s)
{
	if (!s)
		return;
	if (s->replay) {
		fclose(s->replay);
	} else {
		rtd_ipc_session_close(s);
	}
	pend_free(s);
	free(s);
}

RTD_API rtd_ipc_session *rtd_ipc_replay_open(const char *path, int *err)
{
	int rc = 0;
	FILE *f = fopen(path, "rb");
	rtd_ipc_session *s = NULL;
	if (!f) {
		rc = -errno;
		goto fail;
	}
	/* Find the first connection whose request is a CollectTracing and
	 * skip its reply (20-byte header + 8-byte session id). */
	uint32_t conn = 0, skip = 0;
	bool found = false;
	for (;;) {
		uint8_t h[16], msg[IPC_HEADER_SIZE];
		if (fread(h, 1, 16, f) != 16)
			break;
		rtd_rd r;
		rd_init(&r, h, 16);
		uint32_t magic = rd_u32le(&r), cn = rd_u32le(&r),
			 kind = rd_u32le(&r), n = rd_u32le(&r);
		if (magic != 0x52445452u) {
			rc = -RTD_E_FORMAT;
			goto fail;
		}
		if (kind == REC_SEND && n >= IPC_HEADER_SIZE) {
			if (fread(msg, 1, sizeof(msg), f) != sizeof(msg))
				break;
			if (fseek(f, n - IPC_HEADER_SIZE, SEEK_CUR) != 0)
				break;
			if (msg[16] == RTD_IPC_SET_EVENTPIPE &&
			    msg[17] >= EP_COLLECT && msg[17] <= EP_COLLECT + 5) {
				conn = cn;
				found = true;
				break;
			}
			continue;
		}
		if (n && fseek(f, n, SEEK_CUR) != 0)
			break;
	}
	if (!found) {
		rc = -RTD_E_FORMAT;
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = -ENOMEM;
		goto fail;
	}
	s->replay = f;
	s->replay_conn = conn;
	s->conn.fd = -1;
	s->stop_conn.fd = -1;
	/* Skip the reply: header and session id. */
	uint8_t hdr[IPC_HEADER_SIZE + 8];
	skip = sizeof(hdr);
	size_t got = 0;
	while (got < skip) {
		ssize_t n = replay_read(s, hdr + got, skip - got);
		if (n <= 0) {
			rc = -RTD_E_FORMAT;
			goto fail;
		}
		got += (size_t)n;
	}
	uint8_t set, id;
	uint16_t size;
	if (ipc_header_parse(hdr, &set, &id, &size) || set != RTD_IPC_SET_SERVER ||
	    id != SERVER_OK) {
		rc = -RTD_E_FORMAT; /* the recorded session was refused */
		goto fail;
	}
	rtd_rd r;
	rd_init(&r, hdr + IPC_HEADER_SIZE, 8);
	s->id = rd_u64le(&r);
	return s;
fail:
	if (s)
		free(s);
	if (f)
		fclose(f);
	if (err)
		*err = rc;
	return NULL;
}

static int on_id_line(const struct rtd_maps_entry *e, void *ctx)
{
	uint64_t id = *(const uint64_t *)ctx;
	return id >= e->start && id < e->end && e->perms[0] == 'r' &&
	       e->perms[1] == 'w';
}

RTD_API int rtd_ipc_session_id_mapped(pid_t pid, uint64_t id)
{
	size_t bad;
	if (pid <= 0)
		return -ENOENT; /* not this process's own maps (pid 0) */
	int rc = rtd_proc_maps(pid, on_id_line, &id, &bad);
	return rc < 0 ? rc : rc == 1;
}

/* ---- user_events sessions (CollectTracing5, session_type 1) ------------- */

RTD_API int rtd_ipc_user_events_payload(
	const struct rtd_ipc_user_events_provider *v, size_t n,
	uint64_t rundown_keyword, uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	if (!v || !n)
		return -RTD_E_INVAL;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE - IPC_HEADER_SIZE);
	int rc = ipc_put_u32(&b, 1); /* session_type: user_events */
	if (!rc)
		rc = ipc_put_u64(&b, rundown_keyword);
	if (!rc)
		rc = ipc_put_u32(&b, (uint32_t)n);
	for (size_t i = 0; !rc && i < n; i++) {
		const struct rtd_ipc_provider *p = &v[i].p;
		bool has_default = v[i].default_tracepoint && *v[i].default_tracepoint;
		if (!p->name || !*p->name || p->level > 5 ||
		    (!has_default && !v[i].n_sets)) {
			rc = -RTD_E_INVAL;
			break;
		}
		bool f = p->filter_ids && p->n_filter_ids;
		if (!rc)
			rc = ipc_put_u64(&b, p->keywords);
		if (!rc)
			rc = ipc_put_u32(&b, p->level);
		if (!rc)
			rc = ipc_put_string(&b, p->name);
		if (!rc)
			rc = ipc_put_string(&b, p->args && *p->args ? p->args : NULL);
		if (!rc)
			rc = ipc_put_u8(&b, f && p->filter_enable ? 1 : 0);
		if (!rc)
			rc = ipc_put_u32(&b, f ? p->n_filter_ids : 0);
		for (uint32_t k = 0; !rc && f && k < p->n_filter_ids; k++)
			rc = ipc_put_u32(&b, p->filter_ids[k]);
		if (!rc)
			rc = ipc_put_string(&b, has_default ? v[i].default_tracepoint
							    : NULL);
		if (!rc)
			rc = ipc_put_u32(&b, v[i].n_sets);
		for (uint32_t k = 0; !rc && k < v[i].n_sets; k++) {
			const struct rtd_ipc_tracepoint_set *t = &v[i].sets[k];
			if (!t->name || !*t->name || !t->n_event_ids ||
			    !t->event_ids) {
				rc = -RTD_E_INVAL;
				break;
			}
			rc = ipc_put_string(&b, t->name);
			if (!rc)
				rc = ipc_put_u32(&b, t->n_event_ids);
			for (uint32_t j = 0; !rc && j < t->n_event_ids; j++)
				rc = ipc_put_u32(&b, t->event_ids[j]);
		}
	}
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	*out = b.data;
	*outlen = b.len;
	return 0;
}

/* The "continuation": one byte carrying the fd as SCM_RIGHTS
 * (ipc-protocol.md "passing_file_descriptor"). */
static int send_fd(int sock, int fd)
{
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
			   .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	for (;;) {
		ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
		if (n == 1)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : -RTD_E_IPC_CLOSED;
	}
}

RTD_API int rtd_ipc_user_events_start(
	rtd_ipc_client *c, const struct rtd_ipc_user_events_provider *v,
	size_t n, uint64_t rundown_keyword, int user_events_fd,
	uint64_t *session_id)
{
	uint8_t *pl = NULL;
	size_t pl_len = 0;
	if (user_events_fd < 0 || !session_id)
		return -RTD_E_INVAL;
	int rc = rtd_ipc_user_events_payload(v, n, rundown_keyword, &pl, &pl_len);
	if (rc) {
		ipc_seterr(c, "CollectTracing5 (user_events) request: %s",
			   rtd_strerror(rc));
		return rc;
	}
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	rc = ipc_msg_begin(&b, RTD_IPC_SET_EVENTPIPE, EP_COLLECT + 4);
	if (!rc)
		rc = rtd_buf_append(&b, pl, pl_len);
	free(pl);
	if (!rc)
		rc = ipc_msg_finish(&b);
	struct ipc_conn conn = {.fd = -1};
	if (!rc)
		rc = ipc_conn_open(c, &conn);
	if (!rc) {
		ipc_record(c, conn.id, REC_SEND, b.data, b.len);
		rc = ipc_write_all(conn.fd, b.data, b.len, c->timeout_ms);
		if (!rc)
			rc = send_fd(conn.fd, user_events_fd);
		if (rc)
			ipc_seterr(c, "CollectTracing5 (user_events): sending: %s",
				   rtd_strerror(rc));
	}
	rtd_buf_free(&b);
	if (rc) {
		ipc_conn_close(&conn);
		return rc;
	}
	/* The reply on the same connection: OK + session id, or an error. */
	uint8_t h[IPC_HEADER_SIZE];
	rc = ipc_read_full(conn.fd, h, sizeof(h), c->timeout_ms);
	struct rtd_ipc_reply r = {0};
	uint16_t size = 0;
	if (!rc) {
		ipc_record(c, conn.id, REC_RECV, h, sizeof(h));
		rc = ipc_header_parse(h, &r.cmdset, &r.cmdid, &size);
	}
	if (!rc && size > IPC_HEADER_SIZE) {
		r.len = size - IPC_HEADER_SIZE;
		r.payload = malloc(r.len);
		rc = r.payload ? ipc_read_full(conn.fd, r.payload, r.len,
					       c->timeout_ms)
			       : -ENOMEM;
	}
	ipc_conn_close(&conn);
	if (rc) {
		ipc_seterr(c, "CollectTracing5 (user_events): reading the "
			      "reply: %s",
			   rtd_strerror(rc));
	} else if (r.cmdset == RTD_IPC_SET_SERVER && r.cmdid == SERVER_ERROR) {
		rc = ipc_reply_error(c, &r, "CollectTracing5 (user_events)");
	} else if (r.cmdset != RTD_IPC_SET_SERVER || r.cmdid != SERVER_OK ||
		   r.len < 8) {
		ipc_seterr(c, "CollectTracing5 (user_events): unexpected reply "
			      "0x%02x%02x with %zu payload bytes",
			   r.cmdset, r.cmdid, r.len);
		rc = -RTD_E_IPC_PROTOCOL;
	} else {
		rtd_rd rd;
		rd_init(&rd, r.payload, r.len);
		*session_id = rd_u64le(&rd);
	}
	rtd_ipc_reply_clear(&r);
	return rc;
}
