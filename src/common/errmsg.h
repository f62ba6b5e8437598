/* SPDX-License-Identifier: MIT */
/*
 * errmsg.h - the one error helper of the library: an error's code and,
 * where the input has one, its offset, with a message formatted into the
 * fixed buffer of the object (or caller) that keeps it. The modules' own
 * helpers (nt_fail, perf_set_err, ipc_seterr, ...) only say where their
 * record lives.
 */
#ifndef RTD_COMMON_ERRMSG_H
#define RTD_COMMON_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Format @fmt into @msg (@len bytes; cut, always terminated; nothing when
 * @msg is NULL or @len is 0). Returns @code, so that one call reports and
 * returns. */
int rtd_verrf(char *msg, size_t len, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
int rtd_errf(char *msg, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same after "@where @off: " ("offset 42: ..."): a decoder's message
 * names the byte it failed at. */
int rtd_verrf_at(char *msg, size_t len, int code, const char *where,
		 uint64_t off, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

#endif /* RTD_COMMON_ERRMSG_H */
