/* SPDX-License-Identifier: MIT */
/*
 * http_auth.c - who may read the agent: a bearer token and TLS
 * credentials, loaded at the start and again on SIGHUP.
 *
 * The token is compared in time independent of where it differs (as
 * Prometheus' and Alloy's `authorization: {type: Bearer}` scrape configs
 * send it, and as `go tool pprof https://user:TOKEN@host/...` sends it in
 * Basic authentication, which takes the password for the token).
 *
 * TLS is libmicrohttpd's (GnuTLS): the certificate and key are handed over
 * through GnuTLS' certificate retrieval callback at each handshake, so a
 * reload takes effect for the next connection without restarting the
 * server; the credentials a reload replaces stay alive until the server
 * stops (a handshake in flight may still be using them). With a client CA
 * the handshake requires a client certificate that verifies against it,
 * for a TLS client's purpose; the CA is reloaded with the rest (it is
 * this file's trust list, not libmicrohttpd's, so the request for a
 * certificate names no CA and a client sends the one it has).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "agent/http_auth.h"
#include "common/log.h"
#include "common/optlib_gnutls.h"

#define TOKEN_MAX 4096        /* a token file's bytes */
#define PEM_MAX (1u << 20)    /* a certificate, key or CA file */
#define CHAIN_MAX 16          /* certificates in a chain */

struct tls_gen {
	struct tls_gen *older;
	gnutls_pcert_st pcert[CHAIN_MAX];
	unsigned npcert;
	gnutls_privkey_t key;
	gnutls_x509_trust_list_t client_ca; /* NULL: no client certificate */
};

struct http_auth {
	pthread_mutex_t lock;
	char *token; /* NULL: no token required */
	size_t token_len;
	struct tls_gen *tls; /* newest first; NULL without TLS */
};

/* GnuTLS' retrieval callback has no argument of its own: the one server
 * with TLS in this process. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http_auth *g_tls_auth;

/* The whole of a small file, NUL-terminated; NULL with err set. */
static char *read_small(const char *path, size_t max, size_t *len, char *err,
			size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	char *b = malloc(max + 1);
	size_t n = b ? fread(b, 1, max + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!b || bad || n > max) {
		snprintf(err, errlen, "%s: %s", path,
			 !b ? strerror(ENOMEM)
			 : bad ? "read error"
			       : "too large for a token or PEM file");
		free(b);
		return NULL;
	}
	b[n] = 0;
	*len = n;
	return b;
}

static int load_token(const char *path, char **tok, size_t *tlen, char *err,
		      size_t errlen)
{
	size_t n;
	char *t = read_small(path, TOKEN_MAX, &n, err, errlen);
	if (!t)
		return -RTD_E_INVAL;
	while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
		t[--n] = 0;
	if (n == 0 || strpbrk(t, "\r\n")) {
		snprintf(err, errlen, "%s: want one line holding the token",
			 path);
		free(t);
		return -RTD_E_INVAL;
	}
	struct stat st;
	if (stat(path, &st) == 0 && (st.st_mode & 0077))
		rtd_warn("%s: readable by others than its owner (chmod 600)",
			 path);
	*tok = t;
	*tlen = n;
	return 0;
}

static void tls_gen_free(struct tls_gen *g)
{
	while (g) {
		struct tls_gen *o = g->older;
		for (unsigned i = 0; i < g->npcert; i++)
			gnutls_pcert_deinit(&g->pcert[i]);
		gnutls_privkey_deinit(g->key);
		if (g->client_ca)
			gnutls_x509_trust_list_deinit(g->client_ca, 1);
		free(g);
		g = o;
	}
}

static struct tls_gen *load_tls(const rtd_agent_config *c, char *err,
				size_t errlen)
{
	size_t cl, kl, al = 0;
	if (rtd_optlib_open_gnutls(err, errlen) < 0)
		return NULL;
	char *ct = read_small(c->tls_cert, PEM_MAX, &cl, err, errlen);
	char *kt = ct ? read_small(c->tls_key, PEM_MAX, &kl, err, errlen) : NULL;
	char *at = NULL;
	if (kt && c->tls_client_ca)
		at = read_small(c->tls_client_ca, PEM_MAX, &al, err, errlen);
	struct tls_gen *g = NULL;
	if (!ct || !kt || (c->tls_client_ca && !at))
		goto out;
	g = calloc(1, sizeof(*g));
	int r = g ? 0 : GNUTLS_E_MEMORY_ERROR;
	const char *what = c->tls_cert;
	if (!r) {
		gnutls_datum_t d = {(unsigned char *)ct, (unsigned)cl};
		g->npcert = CHAIN_MAX;
		r = gnutls_pcert_list_import_x509_raw(g->pcert, &g->npcert, &d,
						      GNUTLS_X509_FMT_PEM, 0);
		if (r)
			g->npcert = 0;
	}
	if (!r) {
		what = c->tls_key;
		gnutls_datum_t d = {(unsigned char *)kt, (unsigned)kl};
		r = gnutls_privkey_init(&g->key);
		if (!r)
			r = gnutls_privkey_import_x509_raw(
				g->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
	}
	if (!r && at) {
		what = c->tls_client_ca;
		gnutls_datum_t d = {(unsigned char *)at, (unsigned)al};
		r = gnutls_x509_trust_list_init(&g->client_ca, 0);
		if (!r) {
			int n = gnutls_x509_trust_list_add_trust_mem(
				g->client_ca, &d, NULL, GNUTLS_X509_FMT_PEM, 0,
				0);
			r = n > 0 ? 0 : n < 0 ? n : GNUTLS_E_NO_CERTIFICATE_FOUND;
		}
	}
	if (r) {
		snprintf(err, errlen, "%s: %s", what, gnutls_strerror(r));
		tls_gen_free(g);
		g = NULL;
	}
out:
	free(ct);
	if (kt)
		explicit_bzero(kt, kl);
	free(kt);
	free(at);
	return g;
}

/* Mutual TLS: the client's chain must verify against the client CA of
 * the credentials in force, for a TLS client; else the handshake fails. */
static int verify_client(gnutls_session_t s)
{
	unsigned n = 0;
	const gnutls_datum_t *raw = gnutls_certificate_get_peers(s, &n);
	if (!raw || n == 0)
		return GNUTLS_E_NO_CERTIFICATE_FOUND;
	if (n > CHAIN_MAX)
		n = CHAIN_MAX;
	gnutls_x509_crt_t chain[CHAIN_MAX];
	unsigned got = 0;
	int r = 0;
	for (; got < n && !r; got++) {
		r = gnutls_x509_crt_init(&chain[got]);
		if (r)
			break;
		r = gnutls_x509_crt_import(chain[got], &raw[got],
					   GNUTLS_X509_FMT_DER);
	}
	unsigned status = 1;
	if (!r) {
		gnutls_typed_vdata_st purpose = {
			.type = GNUTLS_DT_KEY_PURPOSE_OID,
			.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
		pthread_mutex_lock(&g_lock);
		struct http_auth *h = g_tls_auth;
		if (h) {
			pthread_mutex_lock(&h->lock);
			if (h->tls && h->tls->client_ca)
				r = gnutls_x509_trust_list_verify_crt2(
					h->tls->client_ca, chain, n, &purpose,
					1, 0, &status, NULL);
			pthread_mutex_unlock(&h->lock);
		}
		pthread_mutex_unlock(&g_lock);
	}
	for (unsigned i = 0; i < got; i++)
		gnutls_x509_crt_deinit(chain[i]);
	return !r && status == 0 ? 0 : GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
}

/* GnuTLS asks for the server's certificate at each handshake. */
static int retrieve(gnutls_session_t s, const gnutls_datum_t *req_ca_rdn,
		    int nreqs, const gnutls_pk_algorithm_t *algos, int nalgos,
		    gnutls_pcert_st **pcert, unsigned int *npcert,
		    gnutls_privkey_t *key)
{
	(void)req_ca_rdn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	pthread_mutex_lock(&g_lock);
	struct http_auth *h = g_tls_auth;
	int rc = -1;
	if (h) {
		pthread_mutex_lock(&h->lock);
		if (h->tls) {
			*pcert = h->tls->pcert;
			*npcert = h->tls->npcert;
			*key = h->tls->key;
			rc = 0;
		}
		if (h->tls && h->tls->client_ca) {
			/* mutual TLS: no certificate, or one that does not
			 * verify against the client CA, fails the handshake */
			gnutls_certificate_server_set_request(
				s, GNUTLS_CERT_REQUIRE);
			gnutls_session_set_verify_function(s, verify_client);
		}
		pthread_mutex_unlock(&h->lock);
	}
	pthread_mutex_unlock(&g_lock);
	return rc;
}

int http_auth_new(const rtd_agent_config *c, struct http_auth **out,
		  char *err, size_t errlen)
{
	*out = NULL;
	struct http_auth *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	int rc = 0;
	if (c->auth_token_file)
		rc = load_token(c->auth_token_file, &h->token, &h->token_len,
				err, errlen);
	if (!rc && c->tls_cert) {
		h->tls = load_tls(c, err, errlen);
		rc = h->tls ? 0 : -RTD_E_INVAL;
	}
	if (!rc && h->tls) {
		pthread_mutex_lock(&g_lock);
		if (g_tls_auth) {
			snprintf(err, errlen, "one agent with TLS per process");
			rc = -RTD_E_STATE;
		} else {
			g_tls_auth = h;
		}
		pthread_mutex_unlock(&g_lock);
	}
	if (rc) {
		struct tls_gen *g = h->tls;
		h->tls = NULL;
		tls_gen_free(g);
		http_auth_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

int http_auth_reload(struct http_auth *h, const rtd_agent_config *c,
		     char *err, size_t errlen)
{
	char *tok = NULL;
	size_t tlen = 0;
	struct tls_gen *g = NULL;
	if (c->auth_token_file &&
	    load_token(c->auth_token_file, &tok, &tlen, err, errlen))
		return -RTD_E_INVAL;
	if (c->tls_cert && !(g = load_tls(c, err, errlen))) {
		free(tok);
		return -RTD_E_INVAL;
	}
	/* all or nothing: what failed to load keeps the old in force */
	pthread_mutex_lock(&h->lock);
	if (tok) {
		if (h->token)
			explicit_bzero(h->token, h->token_len);
		free(h->token);
		h->token = tok;
		h->token_len = tlen;
	}
	if (g) {
		g->older = h->tls;
		h->tls = g;
	}
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void http_auth_free(struct http_auth *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&g_lock);
	if (g_tls_auth == h)
		g_tls_auth = NULL;
	pthread_mutex_unlock(&g_lock);
	if (h->token)
		explicit_bzero(h->token, h->token_len);
	free(h->token);
	tls_gen_free(h->tls);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

bool http_auth_tls(const struct http_auth *h)
{
	return h && h->tls;
}

bool http_auth_has_token(const struct http_auth *h)
{
	return h && h->token;
}

bool http_auth_client_ca(const struct http_auth *h)
{
	return h && h->tls && h->tls->client_ca;
}

void *http_auth_retrieve_fn(void)
{
	/* libmicrohttpd takes it as an option's pointer value */
	gnutls_certificate_retrieve_function2 *f = retrieve;
	void *p;
	_Static_assert(sizeof(p) == sizeof(f), "a function pointer fits");
	memcpy(&p, &f, sizeof(p));
	return p;
}

/* Equal in time independent of the bytes: every byte of the longer is
 * looked at whatever differs first. */
static bool same_secret(const char *a, size_t al, const char *b, size_t bl)
{
	size_t n = al > bl ? al : bl;
	unsigned char d = al != bl;
	for (size_t i = 0; i < n; i++) {
		unsigned char x = i < al ? (unsigned char)a[i] : 0;
		unsigned char y = i < bl ? (unsigned char)b[i] : 0;
		d |= x ^ y;
	}
	return d == 0;
}

static int b64v(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Standard base64 (padding optional) into out (max bytes): the length, or
 * -1 when it is not base64 or too long. */
static long b64_decode(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;
	for (; *s && *s != '='; s++) {
		int v = b64v(*s);
		if (v < 0)
			return -1;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n >= max)
				return -1;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	return (long)n;
}

bool http_auth_check(struct http_auth *h, const char *authorization)
{
	if (!h || !h->token)
		return true;
	if (!authorization)
		return false;
	const char *given = NULL;
	size_t glen = 0;
	unsigned char basic[TOKEN_MAX + 256];
	if (!strncasecmp(authorization, "Bearer ", 7)) {
		given = authorization + 7;
		while (*given == ' ')
			given++;
		glen = strlen(given);
	} else if (!strncasecmp(authorization, "Basic ", 6)) {
		const char *p = authorization + 6;
		while (*p == ' ')
			p++;
		long n = b64_decode(p, basic, sizeof(basic) - 1);
		if (n < 0)
			return false;
		basic[n] = 0;
		char *colon = memchr(basic, ':', (size_t)n);
		if (!colon)
			return false;
		given = colon + 1;
		glen = (size_t)n - (size_t)(colon + 1 - (char *)basic);
	} else {
		return false;
	}
	pthread_mutex_lock(&h->lock);
	bool ok = same_secret(h->token, h->token_len, given, glen);
	pthread_mutex_unlock(&h->lock);
	explicit_bzero(basic, sizeof(basic));
	return ok;
}
