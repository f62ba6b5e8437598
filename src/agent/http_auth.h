/* SPDX-License-Identifier: MIT */
/*
 * http_auth.h - the agent's bearer token and TLS credentials
 * (http_auth.c), loaded at the start and again on SIGHUP.
 */
#ifndef RTD_AGENT_HTTP_AUTH_H
#define RTD_AGENT_HTTP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/config.h"

struct http_auth;

/* Load what config c names (token file, certificate and key, client CA).
 * 0, or a negative code with err naming the file and the reason. */
int http_auth_new(const rtd_agent_config *c, struct http_auth **out,
		  char *err, size_t errlen);
/* Load them again (SIGHUP), the client CA too: all or nothing, the old
 * stay on failure. */
int http_auth_reload(struct http_auth *h, const rtd_agent_config *c,
		     char *err, size_t errlen);
void http_auth_free(struct http_auth *h);

/* Whether the server speaks TLS / requires a token. */
bool http_auth_tls(const struct http_auth *h);
bool http_auth_has_token(const struct http_auth *h);
/* Whether client certificates are required (mutual TLS). */
bool http_auth_client_ca(const struct http_auth *h);
/* GnuTLS' certificate retrieval function, for
 * MHD_OPTION_HTTPS_CERT_CALLBACK. */
void *http_auth_retrieve_fn(void);
/* Whether an Authorization header value (NULL: none) carries the token;
 * true when no token is required. */
bool http_auth_check(struct http_auth *h, const char *authorization);

#endif
