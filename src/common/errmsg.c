/* SPDX-License-Identifier: MIT */
/* errmsg.c - the one error helper (errmsg.h). */
#include "common/errmsg.h"

#include <stdio.h>

int rtd_verrf(char *msg, size_t len, int code, const char *fmt, va_list ap)
{
	if (msg && len)
		vsnprintf(msg, len, fmt, ap);
	return code;
}

int rtd_errf(char *msg, size_t len, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(msg, len, code, fmt, ap);
	va_end(ap);
	return code;
}

int rtd_verrf_at(char *msg, size_t len, int code, const char *where,
		 uint64_t off, const char *fmt, va_list ap)
{
	if (!msg || !len)
		return code;
	int n = snprintf(msg, len, "%s %llu: ", where, (unsigned long long)off);
	if (n < 0)
		n = 0;
	if ((size_t)n < len)
		vsnprintf(msg + n, len - (size_t)n, fmt, ap);
	return code;
}
