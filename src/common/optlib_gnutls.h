/* SPDX-License-Identifier: MIT */
/* optlib_gnutls.h - GnuTLS, opened on first use (see optlib.h): the
 * agent's client certificates (libmicrohttpd's TLS is GnuTLS). */
#ifndef RTD_COMMON_OPTLIB_GNUTLS_H
#define RTD_COMMON_OPTLIB_GNUTLS_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "common/optlib.h"

#define RTD_GNUTLS_FUNCS(X)                                                    \
	X(gnutls_strerror) X(gnutls_x509_trust_list_init)                      \
	X(gnutls_x509_trust_list_deinit) X(gnutls_x509_trust_list_add_trust_mem) \
	X(gnutls_x509_trust_list_verify_crt2) X(gnutls_x509_crt_init)          \
	X(gnutls_x509_crt_import) X(gnutls_x509_crt_deinit)                    \
	X(gnutls_session_set_verify_function) X(gnutls_privkey_init)           \
	X(gnutls_privkey_import_x509_raw) X(gnutls_privkey_deinit)             \
	X(gnutls_pcert_list_import_x509_raw) X(gnutls_pcert_deinit)            \
	X(gnutls_certificate_server_set_request) X(gnutls_certificate_get_peers)
RTD_OPTLIB_DECLARE(gnutls, RTD_GNUTLS_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define gnutls_strerror (*rtd__gnutls.gnutls_strerror)
#define gnutls_x509_trust_list_init (*rtd__gnutls.gnutls_x509_trust_list_init)
#define gnutls_x509_trust_list_deinit (*rtd__gnutls.gnutls_x509_trust_list_deinit)
#define gnutls_x509_trust_list_add_trust_mem (*rtd__gnutls.gnutls_x509_trust_list_add_trust_mem)
#define gnutls_x509_trust_list_verify_crt2 (*rtd__gnutls.gnutls_x509_trust_list_verify_crt2)
#define gnutls_x509_crt_init (*rtd__gnutls.gnutls_x509_crt_init)
#define gnutls_x509_crt_import (*rtd__gnutls.gnutls_x509_crt_import)
#define gnutls_x509_crt_deinit (*rtd__gnutls.gnutls_x509_crt_deinit)
#define gnutls_session_set_verify_function (*rtd__gnutls.gnutls_session_set_verify_function)
#define gnutls_privkey_init (*rtd__gnutls.gnutls_privkey_init)
#define gnutls_privkey_import_x509_raw (*rtd__gnutls.gnutls_privkey_import_x509_raw)
#define gnutls_privkey_deinit (*rtd__gnutls.gnutls_privkey_deinit)
#define gnutls_pcert_list_import_x509_raw (*rtd__gnutls.gnutls_pcert_list_import_x509_raw)
#define gnutls_pcert_deinit (*rtd__gnutls.gnutls_pcert_deinit)
#define gnutls_certificate_server_set_request (*rtd__gnutls.gnutls_certificate_server_set_request)
#define gnutls_certificate_get_peers (*rtd__gnutls.gnutls_certificate_get_peers)
#endif

#endif /* RTD_COMMON_OPTLIB_GNUTLS_H */
