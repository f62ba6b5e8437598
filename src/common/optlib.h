/* SPDX-License-Identifier: MIT */
/*
 * optlib.h - optional shared libraries, opened when first needed.
 *
 * librtdiag and rtdiag link only what every command needs (libelf, libdw,
 * libtraceevent, libtracefs, libseccomp, zlib, liblzma). The libraries a
 * few commands need - and the network stack they bring, 30-odd shared
 * objects whose loading and constructors cost ~7 ms of CPU at every start
 * (libcurl, libmicrohttpd, GnuTLS, libyaml, libdebuginfod) - are opened
 * with dlopen() by the module that needs them, the first time it does.
 * A program linking librtdiag for the nettrace or Go decoder maps none.
 *
 * One optional library is:
 *   - a header src/common/optlib_ID.h that includes the library's own
 *     header, lists the functions used as an X-macro, declares the table
 *     with RTD_OPTLIB_DECLARE and redirects each name to its slot
 *     (#define curl_easy_init (*rtd__curl.curl_easy_init)), so the
 *     callers' code reads as a direct call;
 *   - one RTD_OPTLIB_DEFINE line in optlib.c (soname, Debian package);
 *   - a call of rtd_optlib_open_ID() before the first use, where the
 *     module starts (a missing library is then an error with a message
 *     that names the file and the package to install).
 * A function left out of the list is an undefined symbol at link time
 * (librtdiag.so is linked with --no-undefined), so the list is checked.
 */
#ifndef RTD_COMMON_OPTLIB_H
#define RTD_COMMON_OPTLIB_H

#include <stdbool.h>
#include <stddef.h>

/* One slot per function: a pointer of the function's own type. */
#define RTD_OPTLIB_SLOT(f) __typeof__(f) *f;

/*
 * RTD_OPTLIB_DECLARE - the function table of library ID (struct
 * rtd_optlib_ID, the instance rtd__ID) and its opener:
 *
 * int rtd_optlib_open_ID(char *err, size_t errlen) - opens the library
 * and resolves every function the first time, under a lock; later calls
 * return the first result at once. Thread-safe.
 * Returns: 0, or -RTD_E_NOLIB with err set to "LIB (SONAME): why (install
 * PACKAGE)" when the library or one of its functions is missing.
 *
 * bool rtd_optlib_want_ID(void) - the same for a library whose absence
 * only loses detail: false when it is missing, after a warning through the
 * log callback the first time ("LIB ...: WITHOUT").
 */
#define RTD_OPTLIB_DECLARE(id, FUNCS)                                          \
	struct rtd_optlib_##id {                                               \
		FUNCS(RTD_OPTLIB_SLOT)                                         \
	};                                                                     \
	extern struct rtd_optlib_##id rtd__##id;                               \
	int rtd_optlib_open_##id(char *err, size_t errlen);                    \
	bool rtd_optlib_want_##id(void);

/* A library's loader state; the tables in optlib.c. */
struct rtd_optlib {
	const char *name;    /* "libcurl" */
	const char *soname;  /* "libcurl.so.4" */
	const char *package; /* the Debian package that installs it */
	const char *without; /* what is lost without it (for _want) */
	/* dlsym every function of the table; the name of a missing one */
	int (*resolve)(void *handle, const char **missing);
	int state; /* 0 not tried, 1 open, <0 the error (atomic) */
	int warned; /* _want has said it is missing (atomic) */
	char why[256];
};

/*
 * rtd_optlib_open - open @lib (see RTD_OPTLIB_DECLARE). Exposed for the
 * unit tests, which open tables of their own.
 * Returns: 0 or -RTD_E_NOLIB, with the message in @err.
 */
int rtd_optlib_open(struct rtd_optlib *lib, char *err, size_t errlen);

/*
 * rtd_optlib_want - rtd_optlib_open() for a library that only adds detail:
 * on failure, one warning per library through the log callback.
 * Returns: true when @lib is open.
 */
bool rtd_optlib_want(struct rtd_optlib *lib);

#endif /* RTD_COMMON_OPTLIB_H */
