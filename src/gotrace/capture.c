/* SPDX-License-Identifier: MIT */
/*
 * capture.c - a Go execution trace from net/http/pprof, over libcurl,
 * given to the caller as it arrives; and a local process's pprof port.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtdiag/gocapture.h"
#include "common/errmsg.h"
#include "common/optlib_curl.h"
#include "rtdiag/source.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* libcurl opened, and its global set-up, once per process */
static int curl_ready(char *err, size_t errlen)
{
	static int rc = -1;
	int lrc = rtd_optlib_open_curl(err, errlen);
	if (lrc < 0)
		return lrc;
	if (rc < 0)
		rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : 1;
	if (rc)
		rtd_errf(err, errlen, 0, "libcurl failed to start");
	return rc ? -ENOMEM : 0;
}

struct xfer {
	CURL *c;
	const struct rtd_gocapture_opts *o;
	long status;
	bool checked;      /* the reply was seen to be a Go trace */
	uint8_t head[16];  /* the first bytes, until checked */
	size_t nhead;
	char body[256];    /* an error reply's text */
	size_t nbody;
	uint64_t bytes;
	int rc;            /* why the write callback stopped the transfer */
	char why[256];
};

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	if (!x->status)
		curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status != 200) { /* keep the start of the server's message */
		size_t k = len < sizeof(x->body) - 1 - x->nbody ? len : sizeof(x->body) - 1 - x->nbody;
		memcpy(x->body + x->nbody, p, k);
		x->nbody += k;
		x->body[x->nbody] = 0;
		return len;
	}
	size_t used = 0;
	if (!x->checked) {
		size_t k = len < sizeof(x->head) - x->nhead ? len : sizeof(x->head) - x->nhead;
		memcpy(x->head + x->nhead, p, k);
		x->nhead += k;
		used = k;
		if (x->nhead < 5 && used == len)
			return len; /* wait for more */
		if (memcmp(x->head, "go 1.", 5) != 0) {
			char show[17];
			size_t m = x->nhead;
			for (size_t i = 0; i < m; i++)
				show[i] = x->head[i] >= 0x20 && x->head[i] < 0x7f ? (char)x->head[i] : '.';
			show[m] = 0;
			x->rc = -EPROTO;
			snprintf(x->why, sizeof(x->why), "the reply is not a Go execution trace (it begins \"%s\")",
				 show);
			return 0;
		}
		x->checked = true;
		int rc = x->o->on_data ? x->o->on_data(x->head, x->nhead, x->o->ctx) : 0;
		if (rc < 0) {
			x->rc = rc;
			return 0;
		}
		x->bytes += x->nhead;
	}
	if (len > used) {
		int rc = x->o->on_data ? x->o->on_data(p + used, len - used, x->o->ctx) : 0;
		if (rc < 0) {
			x->rc = rc;
			return 0;
		}
		x->bytes += len - used;
	}
	return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = ud;
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return x->o->stop && *x->o->stop ? 1 : 0;
}

/* host is "HOST:PORT" or a URL; builds the request's URL */
static int make_url(const struct rtd_gocapture_opts *o, char *url, size_t len, char *err,
		    size_t errlen)
{
	const char *h = o->host;
	if (!h || !*h) {
		return rtd_errf(err, errlen, -EINVAL, "no host given");
	}
	const char *scheme = "http://";
	if (strncmp(h, "http://", 7) == 0) {
		h += 7;
	} else if (strncmp(h, "https://", 8) == 0) {
		h += 8;
		scheme = "https://";
	} else if (strstr(h, "://")) {
		return rtd_errf(err, errlen, -EINVAL, "%s: only http:// and https:// are fetched", o->host);
	}
	size_t hl = strcspn(h, "/?#");
	const char *path = h[hl] == '/' ? h + hl : o->path ? o->path : "/debug/pprof/trace";
	size_t pl = strcspn(path, "?#");
	if (hl == 0 || hl > 255 || pl > 200) {
		return rtd_errf(err, errlen, -EINVAL, "%s: not a HOST:PORT", o->host);
	}
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)h[i] <= ' ' || h[i] == '@') { /* no user info, no spaces */
			return rtd_errf(err, errlen, -EINVAL, "%s: not a HOST:PORT", o->host);
		}
	double s = o->seconds > 0 ? o->seconds : 1;
	/* net/http/pprof reads seconds as a float (Go 1.x: ParseFloat) */
	snprintf(url, len, "%s%.*s%.*s?seconds=%.6g", scheme, (int)hl, h, (int)pl, path, s);
	return 0;
}

int rtd_gocapture_run(const struct rtd_gocapture_opts *opts, struct rtd_gocapture_result *res,
		      char *err, size_t errlen)
{
	struct rtd_gocapture_opts oc;
	const struct rtd_gocapture_opts *o = &oc;
	struct rtd_gocapture_result r0;
	if (!res)
		res = &r0;
	memset(res, 0, sizeof(*res));
	rtd_errf(err, errlen, 0, "%s", "");
	if (!opts || rtd_opts_copy(&oc, sizeof(oc), opts, RTD_OPTS_END(rtd_gocapture_opts, stop))) {
		return rtd_errf(err, errlen, -EINVAL, "bad options");
	}
	int rc = make_url(o, res->url, sizeof(res->url), err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = curl_ready(err, errlen)) < 0)
		return rc;
	struct xfer x = {0};
	x.o = o;
	x.c = curl_easy_init();
	if (!x.c) {
		return rtd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	double seconds = o->seconds > 0 ? o->seconds : 1;
	double grace = o->grace > 0 ? o->grace : 10;
	double ct = o->connect_timeout > 0 ? o->connect_timeout : 5;
	CURL *c = x.c;
	curl_easy_setopt(c, CURLOPT_URL, res->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(ct * 1000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((seconds + grace) * 1000));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rtdiag/" RTD_VERSION_STRING);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 65536L);
	double t0 = now();
	CURLcode cc = curl_easy_perform(c);
	res->seconds = now() - t0;
	if (!x.status)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x.status);
	curl_off_t connected = 0; /* microseconds to connect, 0: never */
	curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected);
	res->status = x.status;
	res->bytes = x.bytes;
	curl_easy_cleanup(c);
	if (x.rc) {
		rtd_errf(err, errlen, 0, "%s", x.why[0] ? x.why : "stopped by the trace's reader");
		return x.rc;
	}
	if (cc == CURLE_OK && x.status != 200) {
		/* the first line of what the server said */
		char *nl = strchr(x.body, '\n');
		if (nl)
			*nl = 0;
		rtd_errf(err, errlen, 0, "the server answered HTTP %ld%s%s%s", x.status,
		    x.body[0] ? " \"" : "", x.body, x.body[0] ? "\"" : "");
		if (x.status == 404)
			rtd_errf(err + strlen(err), errlen - strlen(err), 0,
			    ": no /debug/pprof/trace there (is it a Go program importing net/http/pprof?)");
		return -EPROTO;
	}
	if (cc == CURLE_OK && !x.checked) {
		return rtd_errf(err, errlen, -EPROTO, "the server sent no trace (an empty reply)");
	}
	switch (cc) {
	case CURLE_OK:
		return 0;
	case CURLE_COULDNT_CONNECT:
		return rtd_errf(err, errlen, -ECONNREFUSED, "connection refused: nothing listens there");
	case CURLE_COULDNT_RESOLVE_HOST:
		return rtd_errf(err, errlen, -EINVAL, "unknown host");
	case CURLE_OPERATION_TIMEDOUT:
		if (connected == 0)
			rtd_errf(err, errlen, 0, "no connection within %.3g s", ct);
		else if (x.status == 0)
			rtd_errf(err, errlen, 0, "connected, but no reply within %.3g s (%.3g s asked for, %.3g s of grace): is it an HTTP server?",
			    seconds + grace, seconds, grace);
		else
			rtd_errf(err, errlen, 0, "the trace did not end within %.3g s (%.3g s asked for, %.3g s of grace; %llu bytes received)",
			    seconds + grace, seconds, grace, (unsigned long long)x.bytes);
		return -ETIMEDOUT;
	case CURLE_ABORTED_BY_CALLBACK:
		return rtd_errf(err, errlen, -ECANCELED, "stopped");
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		if (x.checked) {
			return rtd_errf(err, errlen, -ECONNRESET, "the connection ended after %.3g s and %llu bytes, before the trace did (did the program stop?)",
			    res->seconds, (unsigned long long)x.bytes);
		}
		return rtd_errf(err, errlen, -EPROTO, "the server closed the connection without a reply (%s)",
		    curl_easy_strerror(cc));
	default:
		rtd_errf(err, errlen, 0, "%s", curl_easy_strerror(cc));
		return x.checked ? -ECONNRESET : -EPROTO;
	}
}

/* ---- --pid: the process's listening ports ---------------------------------- */

/* the socket inodes the process has open */
static int socket_inodes(int pid, uint64_t **out, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char link[320], target[64];
		snprintf(link, sizeof(link), "/proc/%d/fd/%.255s", pid, e->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		unsigned long long ino;
		if (sscanf(target, "socket:[%llu]", &ino) != 1)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			uint64_t *p = realloc(*out, cap * sizeof(*p));
			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			*out = p;
		}
		(*out)[(*n)++] = ino;
	}
	closedir(d);
	return 0;
}

struct cand {
	char host[80];
	int loopback;
};

/* listening sockets of /proc/PID/net/tcp{,6} that are the process's */
static size_t listeners(int pid, bool v6, const uint64_t *ino, size_t nino, struct cand *out,
			size_t max, size_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/net/tcp%s", pid, v6 ? "6" : "");
	FILE *f = fopen(path, "r");
	if (!f)
		return n;
	char line[512];
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return n;
	}
	while (fgets(line, sizeof(line), f) && n < max) {
		char local[64], rem[64];
		unsigned st;
		unsigned long long inode;
		if (sscanf(line, "%*d: %63s %63s %x %*s %*s %*s %*d %*d %llu", local, rem, &st, &inode) != 4)
			continue;
		if (st != 0x0A) /* TCP_LISTEN */
			continue;
		bool mine = false;
		for (size_t i = 0; i < nino && !mine; i++)
			mine = ino[i] == inode;
		if (!mine)
			continue;
		char *colon = strchr(local, ':');
		if (!colon)
			continue;
		unsigned port = (unsigned)strtoul(colon + 1, NULL, 16);
		*colon = 0;
		struct cand *c = &out[n];
		if (!v6) {
			unsigned long a = strtoul(local, NULL, 16); /* little-endian words */
			unsigned b0 = a & 255, b1 = (a >> 8) & 255, b2 = (a >> 16) & 255, b3 = (a >> 24) & 255;
			if (a == 0) /* any address: its loopback */
				snprintf(c->host, sizeof(c->host), "127.0.0.1:%u", port);
			else
				snprintf(c->host, sizeof(c->host), "%u.%u.%u.%u:%u", b0, b1, b2, b3, port);
			c->loopback = a == 0 || b0 == 127;
		} else {
			uint8_t b[16];
			for (int w = 0; w < 4; w++) {
				char word[9];
				memcpy(word, local + 8 * w, 8);
				word[8] = 0;
				unsigned long v = strtoul(word, NULL, 16);
				for (int k = 0; k < 4; k++)
					b[4 * w + k] = (uint8_t)(v >> (8 * k));
			}
			static const uint8_t any[16], lo[16] = {[15] = 1};
			static const uint8_t v4map[12] = {[10] = 0xff, [11] = 0xff};
			if (memcmp(b, any, 16) == 0) {
				snprintf(c->host, sizeof(c->host), "[::1]:%u", port);
				c->loopback = 1;
			} else if (memcmp(b, v4map, 12) == 0) {
				snprintf(c->host, sizeof(c->host), "%u.%u.%u.%u:%u", b[12], b[13], b[14], b[15], port);
				c->loopback = b[12] == 127;
			} else {
				char s[64] = "[";
				for (int k = 0; k < 16; k += 2)
					snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%x", k ? ":" : "",
						 (unsigned)(b[k] << 8 | b[k + 1]));
				snprintf(c->host, sizeof(c->host), "%s]:%u", s, port);
				c->loopback = memcmp(b, lo, 16) == 0;
			}
		}
		/* "any address" in both tables is one port: keep one */
		bool dup = false;
		for (size_t i = 0; i < n && !dup; i++)
			dup = strcmp(out[i].host, c->host) == 0;
		if (!dup)
			n++;
	}
	fclose(f);
	return n;
}

struct probe {
	char buf[1024];
	size_t n;
};

static size_t probe_write(char *p, size_t size, size_t nm, void *ud)
{
	struct probe *pr = ud;
	size_t len = size * nm, k = len < sizeof(pr->buf) - 1 - pr->n ? len : sizeof(pr->buf) - 1 - pr->n;
	memcpy(pr->buf + pr->n, p, k);
	pr->n += k;
	pr->buf[pr->n] = 0;
	return len;
}

/* does HOST answer /debug/pprof/ as net/http/pprof? */
static bool is_pprof(const char *host)
{
	char url[160];
	snprintf(url, sizeof(url), "http://%.80s/debug/pprof/", host);
	CURL *c = curl_easy_init();
	if (!c)
		return false;
	struct probe pr = {0};
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 1000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, probe_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &pr);
	long status = 0;
	bool ok = curl_easy_perform(c) == CURLE_OK &&
		  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200 &&
		  (strstr(pr.buf, "/debug/pprof/") || strstr(pr.buf, "Types of profiles available") ||
		   strstr(pr.buf, "profile?debug=1") || strstr(pr.buf, "goroutine?debug"));
	curl_easy_cleanup(c);
	return ok;
}

int rtd_gocapture_find(int pid, char *host, size_t hostlen, char *err, size_t errlen)
{
	rtd_errf(err, errlen, 0, "%s", "");
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", pid);
	struct stat st;
	if (pid <= 0 || stat(path, &st) != 0) {
		return rtd_errf(err, errlen, -ESRCH, "pid %d: no such process", pid);
	}
	struct stat a, b;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat("/proc/self/ns/net", &a) == 0 && stat(path, &b) == 0 && a.st_ino != b.st_ino) {
		return rtd_errf(err, errlen, -EXDEV, "process %d is in another network namespace (a container?): its ports are not this namespace's; give --http with an address that reaches it",
		    pid);
	}
	uint64_t *ino = NULL;
	size_t nino = 0;
	int rc = socket_inodes(pid, &ino, &nino);
	if (rc < 0) {
		rtd_errf(err, errlen, 0, "process %d: its sockets are not readable (%s)", pid, strerror(-rc));
		return rc == -ENOENT ? -ESRCH : -EACCES;
	}
	struct cand c[64];
	size_t n = listeners(pid, false, ino, nino, c, 64, 0);
	n = listeners(pid, true, ino, nino, c, 64, n);
	free(ino);
	if (n == 0) {
		return rtd_errf(err, errlen, -ENOENT, "process %d listens on no TCP port (serve net/http/pprof, or give --http)", pid);
	}
	if ((rc = curl_ready(err, errlen)) < 0)
		return rc;
	for (int pass = 1; pass >= 0; pass--) /* loopback first */
		for (size_t i = 0; i < n; i++)
			if (c[i].loopback == pass && is_pprof(c[i].host)) {
				snprintf(host, hostlen, "%s", c[i].host);
				return 0;
			}
	char list[512] = "";
	for (size_t i = 0; i < n && strlen(list) < sizeof(list) - 90; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%.80s", i ? ", " : "", c[i].host);
	return rtd_errf(err, errlen, -ENOENT, "process %d listens on %s, and none answers /debug/pprof/ as net/http/pprof", pid,
	    list);
}
