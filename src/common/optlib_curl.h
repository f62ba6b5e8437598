/* SPDX-License-Identifier: MIT */
/* optlib_curl.h - libcurl, opened on first use (see optlib.h): the agent's
 * push exporters and Go trace capture over HTTP. */
#ifndef RTD_COMMON_OPTLIB_CURL_H
#define RTD_COMMON_OPTLIB_CURL_H

#include <curl/curl.h>

#include "common/optlib.h"

#define RTD_CURL_FUNCS(X)                                                      \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt)              \
	X(curl_easy_getinfo) X(curl_easy_perform) X(curl_easy_reset)           \
	X(curl_easy_cleanup) X(curl_easy_strerror) X(curl_easy_escape)         \
	X(curl_free) X(curl_slist_append) X(curl_slist_free_all)               \
	X(curl_mime_init) X(curl_mime_addpart) X(curl_mime_name)               \
	X(curl_mime_filename) X(curl_mime_type) X(curl_mime_data)              \
	X(curl_mime_free)
RTD_OPTLIB_DECLARE(curl, RTD_CURL_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
/* curl.h's type-checking wrappers (typecheck-gcc.h) call the real name */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (*rtd__curl.curl_global_init)
#define curl_easy_init (*rtd__curl.curl_easy_init)
#define curl_easy_setopt (*rtd__curl.curl_easy_setopt)
#define curl_easy_getinfo (*rtd__curl.curl_easy_getinfo)
#define curl_easy_perform (*rtd__curl.curl_easy_perform)
#define curl_easy_reset (*rtd__curl.curl_easy_reset)
#define curl_easy_cleanup (*rtd__curl.curl_easy_cleanup)
#define curl_easy_strerror (*rtd__curl.curl_easy_strerror)
#define curl_easy_escape (*rtd__curl.curl_easy_escape)
#define curl_free (*rtd__curl.curl_free)
#define curl_slist_append (*rtd__curl.curl_slist_append)
#define curl_slist_free_all (*rtd__curl.curl_slist_free_all)
#define curl_mime_init (*rtd__curl.curl_mime_init)
#define curl_mime_addpart (*rtd__curl.curl_mime_addpart)
#define curl_mime_name (*rtd__curl.curl_mime_name)
#define curl_mime_filename (*rtd__curl.curl_mime_filename)
#define curl_mime_type (*rtd__curl.curl_mime_type)
#define curl_mime_data (*rtd__curl.curl_mime_data)
#define curl_mime_free (*rtd__curl.curl_mime_free)
#endif

#endif /* RTD_COMMON_OPTLIB_CURL_H */
