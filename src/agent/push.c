/* SPDX-License-Identifier: MIT */
/*
 * push.c - windows to Grafana Pyroscope's ingest API, through libcurl, on
 * a thread of its own:
 *
 *   POST URL/ingest?name=SERVICE{k=v,...}&from=UNIX&until=UNIX&format=pprof
 *   Content-Type: multipart/form-data
 *     profile             the window, gzip pprof ("profile.pprof")
 *     sample_type_config  JSON: how Pyroscope shows each sample type
 *
 * (the server API reference, "pprof format" and "Sample Type
 * Configuration"; the name is the prefix the server adds each profile
 * type's display name to.)
 *
 * The queue holds at most push-queue windows: a new window when it is full
 * drops the oldest (counted). An attempt that fails for want of the
 * server (no connection, a timeout, 408, 429, 5xx) is retried with a
 * backoff from 1 s doubling to 30 s; a window the server refuses (other
 * 4xx) is dropped and counted, as it would be refused again. The backend
 * going away is logged once, and its return once, with what was lost.
 * A window is removed from the queue only when the server accepted it,
 * so nothing is sent twice unless an answer is lost after the server took
 * the whole request (a timeout while reading the answer).
 *
 * The same queue, backoff and counting serve a second backend, OTLP
 * (--otlp URL), with a pusher of its own (its own queue and counters):
 *
 *   POST URL/v1development/profiles
 *   Content-Type: application/x-protobuf, Content-Encoding: gzip
 *     an ExportProfilesServiceRequest of opentelemetry-proto v1.11.0
 *     (profiles v1development, alpha): one resource (the target's
 *     attributes), its window's profile (rtd_profile_write_otlp)
 *
 * as the OTLP/HTTP specification has it ("OTLP/HTTP Request", "Failures",
 * "Throttling"): 429, 502, 503 and 504 are retried (after Retry-After
 * when the server gives one, within the backoff's bounds), any other
 * answer but 2xx refuses the window; a 2xx answer's partial_success
 * (profiles the server rejected) is logged once and counted as dropped.
 */
#include <zlib.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/optlib_curl.h"
#include "common/rd.h"

#define BACKOFF_MIN_NS 1000000000ull
#define BACKOFF_MAX_NS 30000000000ull
#define RESPONSE_KEEP 512

struct pusher {
	bool otlp;              /* the OTLP backend, else Pyroscope */
	const char *what;       /* "push", "otlp": log lines */
	uint64_t *n_uploads, *n_errors, *n_dropped; /* in a->st */
	bool logged_partial;
	uint64_t retry_after_ns; /* the server's Retry-After, 0 none */
	struct agent *a;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct upload *head, *tail;
	size_t n;
	bool stop;
	uint64_t stop_deadline; /* monotonic; 0: none yet */
	uint64_t retry_at;      /* monotonic: backoff until */
	uint64_t backoff;
	bool down;              /* an outage is being logged */
	uint64_t lost_in_outage;
	CURL *curl;
	struct curl_slist *headers;
	char *url;              /* ".../ingest", ".../v1development/profiles" */
	char resp[RESPONSE_KEEP];
	size_t resp_len;
};

void upload_free(struct upload *u)
{
	if (!u)
		return;
	rtd_profile_free(u->p);
	free(u->body);
	free(u->name);
	free(u->res);
	free(u);
}

int profile_to_pprof(const rtd_profile *p, uint8_t **out, size_t *len)
{
	return profile_encode(p, 0, out, len);
}

int profile_encode(const rtd_profile *p, int go_text_form, uint8_t **out,
		   size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return -errno;
	int rc = go_text_form ? rtd_profile_write_go_text(
					p, (enum rtd_profile_go_text)go_text_form, f)
			      : rtd_profile_write_pprof(p, f);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		free(buf);
		return rc;
	}
	*out = (uint8_t *)buf;
	*len = n;
	return 0;
}

/* ---- the name ------------------------------------------------------------------ */

/* A label value as Pyroscope's name syntax takes it: no braces, commas,
 * equals signs or blanks. */
static int name_value(rtd_buf *b, const char *v)
{
	int rc = 0;
	for (; *v && !rc; v++) {
		unsigned char ch = (unsigned char)*v;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
			  ch == '-' || ch == '/' || ch == ':';
		rc = rtd_buf_putc(b, ok ? (char)ch : '_');
	}
	return rc;
}

static int name_label(rtd_buf *b, bool *first, const char *k, const char *v)
{
	if (!v || !*v)
		return 0;
	int rc = rtd_buf_printf(b, "%s%s=", *first ? "" : ",", k);
	*first = false;
	return rc | name_value(b, v);
}

int push_app_name(struct agent *a, const struct target *t,
		  enum prof_kind kind, rtd_buf *b)
{
	(void)kind;
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	const char *exe = strrchr(t->exe, '/');
	exe = exe ? exe + 1 : t->exe;
	bool first = true;
	int rc = rtd_buf_puts(b, t->service);
	rc |= rtd_buf_putc(b, '{');
	rc |= name_label(b, &first, "pid", pid);
	rc |= name_label(b, &first, "executable", exe);
	rc |= name_label(b, &first, "runtime", t->runtime);
	rc |= name_label(b, &first, "container_id", t->ids.container_id);
	rc |= name_label(b, &first, "pod_uid", t->ids.pod_uid);
	rc |= name_label(b, &first, "host", a->host);
	for (size_t i = 0; i < a->c->nlabels; i++)
		rc |= name_label(b, &first, a->c->labels[i].key,
				 a->c->labels[i].val);
	rc |= rtd_buf_putc(b, '}');
	return rc;
}

/* How Pyroscope shows each sample type rtdiag writes; the first entry of
 * the type for the upload's kind (PK_COUNT: any kind) counts. Go's block
 * and mutex profiles share their types; Pyroscope's Go client tells them
 * apart by these display names. */
static const struct {
	enum prof_kind kind;
	const char *type, *units, *aggregation, *display;
	bool sampled;
} stc[] = {
	{PK_BLOCK, "contentions", "lock_samples", "sum", "block_count", false},
	{PK_BLOCK, "delay", "lock_nanoseconds", "sum", "block_duration", false},
#define ANY PK_COUNT
	{ANY, "cpu", "samples", "sum", "cpu", true},
	{ANY, "samples", "samples", "sum", "cpu_samples", false},
	{ANY, "alloc_objects", "objects", "sum", "alloc_objects", false},
	{ANY, "alloc_space", "bytes", "sum", "alloc_space", false},
	{ANY, "inuse_objects", "objects", "average", "inuse_objects", false},
	{ANY, "inuse_space", "bytes", "average", "inuse_space", false},
	{ANY, "contentions", "lock_samples", "sum", "mutex_count", false},
	{ANY, "delay", "lock_nanoseconds", "sum", "mutex_duration", false},
	{ANY, "exceptions", "exceptions", "sum", "exceptions", false},
};

#undef ANY

/* The sample_type_config JSON for a profile's types. */
int push_sample_type_config(const rtd_profile *p, enum prof_kind kind,
			    rtd_buf *b);

int push_sample_type_config(const rtd_profile *p, enum prof_kind kind,
			    rtd_buf *b)
{
	int rc = rtd_buf_putc(b, '{');
	bool first = true;
	for (size_t i = 0; i < rtd_profile_ntypes(p); i++) {
		const struct rtd_profile_type *ty = rtd_profile_get_type(p, i);
		for (size_t j = 0; j < sizeof(stc) / sizeof(stc[0]); j++) {
			if (strcmp(ty->type, stc[j].type) ||
			    (stc[j].kind != kind && stc[j].kind != PK_COUNT))
				continue;
			rc |= rtd_buf_printf(
				b,
				"%s\"%s\":{\"units\":\"%s\",\"aggregation\":"
				"\"%s\",\"display-name\":\"%s\",\"sampled\":%s}",
				first ? "" : ",", stc[j].type, stc[j].units,
				stc[j].aggregation, stc[j].display,
				stc[j].sampled ? "true" : "false");
			first = false;
			break;
		}
	}
	return rc | rtd_buf_putc(b, '}');
}

/* ---- the queue ------------------------------------------------------------------ */

size_t push_queue_len(struct pusher *ps)
{
	if (!ps)
		return 0;
	pthread_mutex_lock(&ps->mu);
	size_t n = ps->n;
	pthread_mutex_unlock(&ps->mu);
	return n;
}

static void count(struct agent *a, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&a->lock);
	*field += n;
	pthread_mutex_unlock(&a->lock);
}

/* Drop the oldest queued window; caller holds ps->mu. */
static void drop_oldest(struct agent *a, struct pusher *ps)
{
	struct upload *u = ps->head;
	if (!u)
		return;
	ps->head = u->next;
	if (!ps->head)
		ps->tail = NULL;
	ps->n--;
	ps->lost_in_outage++;
	rtd_debug("%s: queue full: window %lld-%lld of %s dropped", ps->what,
		  (long long)u->from_unix, (long long)u->until_unix,
		  u->name ? u->name : "a target");
	upload_free(u);
	count(a, ps->n_dropped, 1);
}

void push_enqueue(struct agent *a, struct pusher *ps, struct upload *u)
{
	pthread_mutex_lock(&ps->mu);
	while (ps->n >= a->c->push_queue)
		drop_oldest(a, ps);
	u->next = NULL;
	if (ps->tail)
		ps->tail->next = u;
	else
		ps->head = u;
	ps->tail = u;
	ps->n++;
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->mu);
}

void push_shed(struct agent *a)
{
	struct pusher *all[2] = {a->push, a->otlp};
	for (int i = 0; i < 2; i++) {
		struct pusher *ps = all[i];
		if (!ps)
			continue;
		pthread_mutex_lock(&ps->mu);
		size_t drop = (ps->n + 1) / 2;
		while (drop--)
			drop_oldest(a, ps);
		pthread_mutex_unlock(&ps->mu);
	}
}

/* ---- one upload ----------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct pusher *ps = ctx;
	size_t n = size * nmemb;
	size_t room = sizeof(ps->resp) - 1 - ps->resp_len;
	size_t k = n < room ? n : room;
	memcpy(ps->resp + ps->resp_len, data, k);
	ps->resp_len += k;
	ps->resp[ps->resp_len] = 0;
	return n;
}

/* The options every upload shares; the answer goes to ps->resp. */
static void curl_common(struct agent *a, struct pusher *ps, CURL *c,
			const char *url)
{
	long tmo = (long)(a->c->push_timeout_ns / 1000000);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, ps->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rtdiag-agent/" RTD_VERSION_STRING);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, tmo);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, tmo < 5000 ? tmo : 5000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, ps);
	ps->resp_len = 0;
	ps->resp[0] = 0;
}

enum send_result { SENT, RETRY, REFUSED };

static enum send_result send_one(struct agent *a, struct pusher *ps,
				 struct upload *u, char *why, size_t wlen)
{
	if (u->p) {
		/* encode once; the profile goes, the bytes stay queued */
		rtd_buf cfg;
		rtd_buf_init(&cfg, 8192);
		int rc = push_sample_type_config(u->p, u->kind, &cfg);
		uint8_t *pp = NULL;
		size_t plen = 0;
		if (!rc)
			rc = profile_to_pprof(u->p, &pp, &plen);
		if (rc) {
			rtd_buf_free(&cfg);
			snprintf(why, wlen, "encoding: %s", rtd_strerror(rc));
			return REFUSED;
		}
		/* body: pprof bytes, then the config after a NUL */
		u->body = malloc(plen + cfg.len + 1);
		if (!u->body) {
			free(pp);
			rtd_buf_free(&cfg);
			snprintf(why, wlen, "out of memory");
			return REFUSED;
		}
		memcpy(u->body, pp, plen);
		memcpy(u->body + plen, rtd_buf_cstr(&cfg), cfg.len + 1);
		u->body_len = plen;
		free(pp);
		rtd_buf_free(&cfg);
		rtd_profile_free(u->p);
		u->p = NULL;
	}
	CURL *c = ps->curl;
	curl_easy_reset(c);
	char *name = curl_easy_escape(c, u->name, 0);
	if (!name) {
		snprintf(why, wlen, "out of memory");
		return RETRY;
	}
	char *url = NULL;
	int n = asprintf(&url, "%s?name=%s&from=%lld&until=%lld&format=pprof"
			       "&spyName=rtdiag",
			 ps->url, name, (long long)u->from_unix,
			 (long long)u->until_unix);
	curl_free(name);
	if (n < 0) {
		snprintf(why, wlen, "out of memory");
		return RETRY;
	}
	curl_mime *mime = curl_mime_init(c);
	curl_mimepart *part = curl_mime_addpart(mime);
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, (const char *)u->body, u->body_len);
	part = curl_mime_addpart(mime);
	curl_mime_name(part, "sample_type_config");
	curl_mime_filename(part, "sample_type_config.json");
	curl_mime_type(part, "application/json");
	curl_mime_data(part, (const char *)u->body + u->body_len,
		       CURL_ZERO_TERMINATED);
	curl_common(a, ps, c, url);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	CURLcode cc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_mime_free(mime);
	free(url);
	if (cc != CURLE_OK) {
		snprintf(why, wlen, "%s", curl_easy_strerror(cc));
		return RETRY;
	}
	if (status >= 200 && status < 300)
		return SENT;
	ps->resp[strcspn(ps->resp, "\r\n")] = 0;
	snprintf(why, wlen, "HTTP %ld%s%s", status, ps->resp[0] ? ": " : "",
		 ps->resp);
	if (status == 408 || status == 429 || status >= 500)
		return RETRY;
	return REFUSED;
}

/* ---- OTLP --------------------------------------------------------------------- */

/* The resource attributes of an upload, kept as "Tkey\0value\0" records
 * (T: 's' string, 'i' integer in decimal) until the uploader encodes it:
 * the target may be gone by then. */
static int res_add(rtd_buf *b, char type, const char *k, const char *v)
{
	if (!v || !*v)
		return 0;
	int rc = rtd_buf_putc(b, type);
	rc |= rtd_buf_append(b, k, strlen(k) + 1);
	rc |= rtd_buf_append(b, v, strlen(v) + 1);
	return rc;
}

int otlp_resource(struct agent *a, const struct target *t, char **out)
{
	rtd_buf b;
	rtd_buf_init(&b, 1u << 20);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	const char *exe = strrchr(t->exe, '/');
	int rc = res_add(&b, 's', "service.name", t->service);
	rc |= res_add(&b, 'i', "process.pid", pid);
	rc |= res_add(&b, 's', "process.executable.name", exe ? exe + 1 : t->exe);
	if (t->exe[0] == '/')
		rc |= res_add(&b, 's', "process.executable.path", t->exe);
	if (!strcmp(t->runtime, "dotnet"))
		rc |= res_add(&b, 's', "process.runtime.name", "dotnet");
	rc |= res_add(&b, 's', "container.id", t->ids.container_id);
	rc |= res_add(&b, 's', "k8s.pod.uid", t->ids.pod_uid);
	rc |= res_add(&b, 's', "host.name", a->host);
	for (size_t i = 0; i < a->c->nlabels; i++)
		rc |= res_add(&b, 's', a->c->labels[i].key, a->c->labels[i].val);
	rc |= rtd_buf_putc(&b, 0);
	if (rc) {
		rtd_buf_free(&b);
		return -ENOMEM;
	}
	*out = (char *)b.data; /* the buffer's allocation, handed over */
	return 0;
}

#define OTLP_MAX_ATTRS 128

/* The export request of one upload: its profile, gzip-compressed. */
static int otlp_body(const struct upload *u, uint8_t **out, size_t *len)
{
	struct rtd_otlp_attr at[OTLP_MAX_ATTRS];
	size_t n = 0;
	for (const char *r = u->res; r && *r && n < OTLP_MAX_ATTRS;) {
		char type = *r++;
		const char *k = r;
		const char *v = k + strlen(k) + 1;
		r = v + strlen(v) + 1;
		at[n].key = k;
		at[n].str = type == 's' ? v : NULL;
		at[n].num = type == 's' ? 0 : strtoll(v, NULL, 10);
		n++;
	}
	const rtd_profile *ps[1] = {u->p};
	struct rtd_otlp_resource res = {at, n, ps, 1};
	char *raw = NULL;
	size_t rlen = 0;
	FILE *f = open_memstream(&raw, &rlen);
	if (!f)
		return -errno;
	struct rtd_otlp_opts o = {.sz = sizeof(o), .scope_name = "rtdiag agent"};
	int rc = rtd_profile_write_otlp(&res, 1, &o, f);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		free(raw);
		return rc;
	}
	/* gzip (windowBits 15 + 16), as Content-Encoding: gzip says */
	z_stream z = {0};
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(raw);
		return -ENOMEM;
	}
	uLong cap = deflateBound(&z, (uLong)rlen);
	uint8_t *gz = malloc(cap);
	if (!gz) {
		deflateEnd(&z);
		free(raw);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)raw;
	z.avail_in = (uInt)rlen;
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	int zr = deflate(&z, Z_FINISH);
	*len = cap - z.avail_out;
	deflateEnd(&z);
	free(raw);
	if (zr != Z_STREAM_END) {
		free(gz);
		return -RTD_E_STATE;
	}
	*out = gz;
	return 0;
}

int otlp_parse_response(const uint8_t *p, size_t n, int64_t *rejected,
			char *msg, size_t msglen)
{
	/* ExportProfilesServiceResponse { partial_success = 1 {
	 *   rejected_profiles = 1 (int64), error_message = 2 (string) } } */
	*rejected = 0;
	if (msglen)
		msg[0] = 0;
	if (!n)
		return 0; /* every field at its default: all accepted */
	rtd_rd r;
	rd_init(&r, p, n);
	while (rd_left(&r) && rd_ok(&r)) {
		uint64_t key = rd_varuint(&r);
		unsigned wt = (unsigned)(key & 7);
		if (!rd_ok(&r))
			break;
		if (wt == 0) {
			rd_varuint(&r);
		} else if (wt == 1) {
			rd_skip(&r, 8);
		} else if (wt == 5) {
			rd_skip(&r, 4);
		} else if (wt == 2) {
			uint64_t len = rd_varuint(&r);
			rtd_rd sub;
			if (!rd_ok(&r) || len > rd_left(&r) ||
			    !rd_sub(&r, (size_t)len, &sub))
				return -RTD_E_TRUNCATED;
			if (key >> 3 != 1)
				continue;
			while (rd_left(&sub) && rd_ok(&sub)) {
				uint64_t k2 = rd_varuint(&sub);
				unsigned w2 = (unsigned)(k2 & 7);
				if (!rd_ok(&sub))
					break;
				if (k2 >> 3 == 1 && w2 == 0) {
					*rejected = (int64_t)rd_varuint(&sub);
				} else if (w2 == 0) {
					rd_varuint(&sub);
				} else if (w2 == 1) {
					rd_skip(&sub, 8);
				} else if (w2 == 5) {
					rd_skip(&sub, 4);
				} else if (w2 == 2) {
					uint64_t l2 = rd_varuint(&sub);
					const uint8_t *s;
					if (!rd_ok(&sub) || l2 > rd_left(&sub) ||
					    !rd_bytes(&sub, (size_t)l2, &s))
						return -RTD_E_TRUNCATED;
					if (k2 >> 3 == 2 && msglen) {
						size_t k = l2 < msglen - 1
								   ? (size_t)l2
								   : msglen - 1;
						memcpy(msg, s, k);
						msg[k] = 0;
					}
				} else {
					return -RTD_E_FORMAT;
				}
			}
			if (!rd_ok(&sub))
				return -RTD_E_TRUNCATED;
		} else {
			return -RTD_E_FORMAT;
		}
	}
	return rd_ok(&r) ? 0 : -RTD_E_TRUNCATED;
}

static enum send_result send_otlp(struct agent *a, struct pusher *ps,
				  struct upload *u, char *why, size_t wlen)
{
	if (u->p) {
		/* encode once; the profile goes, the bytes stay queued */
		int rc = otlp_body(u, &u->body, &u->body_len);
		if (rc) {
			snprintf(why, wlen, "encoding: %s", rtd_strerror(rc));
			return REFUSED;
		}
		rtd_profile_free(u->p);
		u->p = NULL;
	}
	CURL *c = ps->curl;
	curl_easy_reset(c);
	curl_common(a, ps, c, ps->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)u->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)u->body_len);
	CURLcode cc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_off_t after = 0;
	curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &after);
	if (cc != CURLE_OK) {
		snprintf(why, wlen, "%s", curl_easy_strerror(cc));
		return RETRY;
	}
	if (status >= 200 && status < 300) {
		int64_t rejected = 0;
		char msg[200];
		if (otlp_parse_response((const uint8_t *)ps->resp, ps->resp_len,
					&rejected, msg, sizeof(msg)) == 0 &&
		    rejected > 0) {
			/* accepted, but not all of it: said once, counted */
			if (!ps->logged_partial)
				rtd_warn("otlp: %s rejected %lld profiles of a "
					 "window of %s: %s (said once; counted "
					 "in rtdiag_agent_otlp_rejected_"
					 "profiles_total)", ps->url,
					 (long long)rejected,
					 u->name ? u->name : "a target",
					 msg[0] ? msg : "(no message)");
			ps->logged_partial = true;
			count(a, &a->st.otlp_rejected_profiles,
			      (uint64_t)rejected);
		}
		return SENT;
	}
	/* the error body is a google.rpc.Status; its message (field 2) is
	 * text, shown as far as it is printable */
	char text[161];
	size_t k = 0;
	for (size_t i = 0; i < ps->resp_len && k < sizeof(text) - 1; i++) {
		unsigned char ch = (unsigned char)ps->resp[i];
		if (ch >= 0x20 && ch < 0x7f)
			text[k++] = (char)ch;
	}
	text[k] = 0;
	snprintf(why, wlen, "HTTP %ld%s%s", status, k ? ": " : "", text);
	if (status == 429 || status == 502 || status == 503 || status == 504) {
		if (after > 0)
			ps->retry_after_ns = (uint64_t)after * 1000000000ull;
		return RETRY;
	}
	return REFUSED;
}

static void *pusher_main(void *arg)
{
	struct pusher *ps = arg;
	struct agent *a = ps->a;
	pthread_mutex_lock(&ps->mu);
	for (;;) {
		uint64_t now = mono_ns();
		if (ps->stop && (!ps->head || now >= ps->stop_deadline ||
				 (ps->retry_at && ps->retry_at >= ps->stop_deadline)))
			break;
		if (!ps->head || (ps->retry_at && now < ps->retry_at)) {
			uint64_t until = ps->head ? ps->retry_at : 0;
			if (ps->stop && (!until || until > ps->stop_deadline))
				until = ps->stop_deadline;
			if (!until) {
				pthread_cond_wait(&ps->cond, &ps->mu);
			} else {
				struct timespec ts;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				uint64_t d = until > now ? until - now : 0;
				ts.tv_sec += (time_t)(d / 1000000000u);
				ts.tv_nsec += (long)(d % 1000000000u);
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&ps->cond, &ps->mu, &ts);
			}
			continue;
		}
		/* the head leaves the queue while it is sent */
		struct upload *u = ps->head;
		ps->head = u->next;
		if (!ps->head)
			ps->tail = NULL;
		ps->n--;
		pthread_mutex_unlock(&ps->mu);

		char why[RESPONSE_KEEP + 64] = "";
		enum send_result r = ps->otlp
					     ? send_otlp(a, ps, u, why, sizeof(why))
					     : send_one(a, ps, u, why, sizeof(why));

		pthread_mutex_lock(&ps->mu);
		if (r == SENT) {
			count(a, ps->n_uploads, 1);
			if (ps->down)
				rtd_warn("%s: %s answers again; %llu windows "
					 "were dropped while it was away",
					 ps->what, ps->url,
					 (unsigned long long)ps->lost_in_outage);
			ps->down = false;
			ps->backoff = 0;
			ps->retry_at = 0;
			upload_free(u);
			continue;
		}
		count(a, ps->n_errors, 1);
		if (r == REFUSED) {
			rtd_warn("%s: %s refused a window of %s (%lld-%lld): "
				 "%s; dropped", ps->what, ps->url,
				 u->name ? u->name : "a target",
				 (long long)u->from_unix,
				 (long long)u->until_unix, why);
			count(a, ps->n_dropped, 1);
			upload_free(u);
			continue;
		}
		if (!ps->down) {
			rtd_warn("%s: %s: %s; retrying with backoff (up to %u "
				 "windows are kept, the oldest dropped beyond)",
				 ps->what, ps->url, why, a->c->push_queue);
			ps->down = true;
			ps->lost_in_outage = 0;
		}
		ps->backoff = ps->backoff ? ps->backoff * 2 : BACKOFF_MIN_NS;
		if (ps->backoff > BACKOFF_MAX_NS)
			ps->backoff = BACKOFF_MAX_NS;
		uint64_t wait = ps->backoff;
		if (ps->retry_after_ns > wait)
			wait = ps->retry_after_ns < BACKOFF_MAX_NS
				       ? ps->retry_after_ns
				       : BACKOFF_MAX_NS;
		ps->retry_after_ns = 0;
		ps->retry_at = mono_ns() + wait;
		/* back at the head, unless the queue filled up meanwhile:
		 * then it is the oldest, and goes */
		if (ps->n >= a->c->push_queue) {
			ps->lost_in_outage++;
			count(a, ps->n_dropped, 1);
			upload_free(u);
		} else {
			u->next = ps->head;
			ps->head = u;
			if (!ps->tail)
				ps->tail = u;
			ps->n++;
		}
	}
	pthread_mutex_unlock(&ps->mu);
	return NULL;
}

/* curl_global_init is not thread-safe: once per process */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_global;

static void curl_init_once(void)
{
	curl_global = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* URL with its path ending in suffix (added unless it is there). */
static char *url_with(const char *base, const char *suffix)
{
	size_t bl = strlen(base), sl = strlen(suffix);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	bool has = bl >= sl && !strncmp(base + bl - sl, suffix, sl);
	char *url;
	if (asprintf(&url, "%.*s%s", (int)bl, base, has ? "" : suffix) < 0)
		return NULL;
	return url;
}

static int pusher_start(struct agent *a, bool otlp, struct pusher **out,
			char *err, size_t errlen)
{
	struct pusher *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	*out = ps;
	ps->a = a;
	ps->otlp = otlp;
	ps->what = otlp ? "otlp" : "push";
	ps->n_uploads = otlp ? &a->st.otlp_uploads : &a->st.uploads;
	ps->n_errors = otlp ? &a->st.otlp_upload_errors : &a->st.upload_errors;
	ps->n_dropped = otlp ? &a->st.otlp_dropped_windows
			     : &a->st.dropped_windows;
	pthread_mutex_init(&ps->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->cond, &ca);
	pthread_condattr_destroy(&ca);
	int rc = rtd_optlib_open_curl(err, errlen);
	if (rc < 0)
		return rc;
	pthread_once(&curl_once, curl_init_once);
	if (curl_global != CURLE_OK) {
		snprintf(err, errlen, "libcurl: %s",
			 curl_easy_strerror(curl_global));
		return -RTD_E_STATE;
	}
	ps->curl = curl_easy_init();
	if (!ps->curl) {
		snprintf(err, errlen, "libcurl: no handle");
		return -ENOMEM;
	}
	/* OTLP/HTTP: the signal's path is added to a base URL, as the
	 * SDKs do with OTEL_EXPORTER_OTLP_ENDPOINT */
	ps->url = otlp ? url_with(a->c->otlp, "/v1development/profiles")
		       : url_with(a->c->push, "/ingest");
	if (!ps->url)
		return -ENOMEM;
	for (size_t i = 0; i < a->c->npush_headers; i++)
		ps->headers = curl_slist_append(ps->headers,
						a->c->push_headers[i]);
	if (a->c->push_tenant) {
		char h[600];
		snprintf(h, sizeof(h), "X-Scope-OrgID: %s", a->c->push_tenant);
		ps->headers = curl_slist_append(ps->headers, h);
	}
	if (otlp) {
		ps->headers = curl_slist_append(
			ps->headers, "Content-Type: application/x-protobuf");
		ps->headers =
			curl_slist_append(ps->headers, "Content-Encoding: gzip");
	}
	/* no "Expect: 100-continue" round trip before each body */
	ps->headers = curl_slist_append(ps->headers, "Expect:");
	rc = pthread_create(&ps->th, NULL, pusher_main, ps);
	if (rc) {
		snprintf(err, errlen, "%s thread: %s", ps->what, strerror(rc));
		return -rc;
	}
	ps->started = true;
	return 0;
}

int push_start(struct agent *a, char *err, size_t errlen)
{
	int rc = 0;
	if (a->c->push)
		rc = pusher_start(a, false, &a->push, err, errlen);
	if (!rc && a->c->otlp)
		rc = pusher_start(a, true, &a->otlp, err, errlen);
	return rc;
}

static void pusher_free(struct pusher *ps)
{
	while (ps->head) {
		struct upload *u = ps->head;
		ps->head = u->next;
		upload_free(u);
	}
	ps->n = 0;
	curl_slist_free_all(ps->headers);
	if (ps->curl)
		curl_easy_cleanup(ps->curl);
	free(ps->url);
	pthread_mutex_destroy(&ps->mu);
	pthread_cond_destroy(&ps->cond);
	free(ps);
}

void push_stop(struct agent *a, uint64_t wait_ns)
{
	struct pusher *all[2] = {a->push, a->otlp};
	uint64_t dl = mono_ns() + wait_ns;
	/* both backends get the same few seconds, side by side */
	for (int i = 0; i < 2; i++) {
		struct pusher *ps = all[i];
		if (!ps || !ps->started)
			continue;
		pthread_mutex_lock(&ps->mu);
		if (!ps->stop || dl < ps->stop_deadline)
			ps->stop_deadline = dl;
		ps->stop = true;
		if (ps->retry_at && wait_ns)
			ps->retry_at = mono_ns(); /* one last try now */
		pthread_cond_signal(&ps->cond);
		pthread_mutex_unlock(&ps->mu);
	}
	for (int i = 0; i < 2; i++) {
		struct pusher *ps = all[i];
		if (!ps)
			continue;
		if (ps->started) {
			pthread_join(ps->th, NULL);
			ps->started = false;
			if (ps->n)
				rtd_warn("%s: %zu windows not delivered at exit",
					 ps->what, ps->n);
			count(a, ps->n_dropped, ps->n);
			if (wait_ns)
				continue; /* rtd_agent_free() frees the rest */
		}
		pusher_free(ps);
		if (i == 0)
			a->push = NULL;
		else
			a->otlp = NULL;
	}
}
