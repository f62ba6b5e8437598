/* SPDX-License-Identifier: MIT */
/* optlib.c - the optional shared libraries and their loader (optlib.h). */
#define RTD_OPTLIB_DEFINING
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/optlib.h"
#include "common/optlib_curl.h"
#include "common/optlib_debuginfod.h"
#include "common/optlib_dw.h"
#include "common/optlib_gnutls.h"
#include "common/optlib_lzma.h"
#include "common/optlib_mhd.h"
#include "common/optlib_seccomp.h"
#include "common/optlib_yaml.h"
#include "common/log.h"
#include "rtdiag/common.h"

static pthread_mutex_t optlib_mu = PTHREAD_MUTEX_INITIALIZER;

int rtd_optlib_open(struct rtd_optlib *lib, char *err, size_t errlen)
{
	int st = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);
	if (st == 0) {
		pthread_mutex_lock(&optlib_mu);
		st = lib->state;
		if (st == 0) {
			const char *missing = NULL;
			/* RTLD_LOCAL: the library's names stay out of the
			 * global scope; never closed (its functions may be
			 * in any thread's table at any time) */
			void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				const char *e = dlerror();
				snprintf(lib->why, sizeof(lib->why),
					 "%s (%s) is not installed or cannot be loaded (install %s): %s",
					 lib->name, lib->soname, lib->package,
					 e ? e : "dlopen failed");
				st = -RTD_E_NOLIB;
			} else if (lib->resolve(h, &missing)) {
				snprintf(lib->why, sizeof(lib->why),
					 "%s (%s) has no function %s (too old? install a newer %s)",
					 lib->name, lib->soname, missing, lib->package);
				dlclose(h);
				st = -RTD_E_NOLIB;
			} else {
				st = 1;
			}
			__atomic_store_n(&lib->state, st, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&optlib_mu);
	}
	if (st < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", lib->why);
		return st;
	}
	return 0;
}

bool rtd_optlib_want(struct rtd_optlib *lib)
{
	char why[256];
	if (rtd_optlib_open(lib, why, sizeof(why)) == 0)
		return true;
	if (!__atomic_exchange_n(&lib->warned, 1, __ATOMIC_RELAXED))
		rtd_warn("%s: %s", lib->without, why);
	return false;
}

/* One slot of the table api points at: dlsym'd, stored through memcpy
 * (POSIX: an object pointer from dlsym converts to the function's). */
#define OPTLIB_RESOLVE(f)                                                      \
	{                                                                      \
		void *p = dlsym(h, #f);                                        \
		if (!p) {                                                      \
			*missing = #f;                                         \
			return -1;                                             \
		}                                                              \
		memcpy(&api->f, &p, sizeof(p));                                \
	}

#define RTD_OPTLIB_DEFINE(id, FUNCS, lname, soname_, package_, without_)       \
	struct rtd_optlib_##id rtd__##id;                                      \
	static int resolve_##id(void *h, const char **missing)                 \
	{                                                                      \
		struct rtd_optlib_##id *api = &rtd__##id;                      \
		FUNCS(OPTLIB_RESOLVE)                                          \
		return 0;                                                      \
	}                                                                      \
	static struct rtd_optlib optlib_##id = {                               \
		.name = lname,                                                 \
		.soname = soname_,                                             \
		.package = package_,                                           \
		.without = without_,                                           \
		.resolve = resolve_##id,                                       \
	};                                                                     \
	int rtd_optlib_open_##id(char *err, size_t errlen)                     \
	{                                                                      \
		return rtd_optlib_open(&optlib_##id, err, errlen);             \
	}                                                                      \
	bool rtd_optlib_want_##id(void)                                        \
	{                                                                      \
		return rtd_optlib_want(&optlib_##id);                          \
	}

/* The sonames are those of the ABI the headers describe (Debian 12); the
 * last text is what is lost without a library whose absence only loses
 * detail (rtd_optlib_want_ID), NULL for the others. */
RTD_OPTLIB_DEFINE(curl, RTD_CURL_FUNCS, "libcurl", "libcurl.so.4", "libcurl4",
		  NULL)
RTD_OPTLIB_DEFINE(mhd, RTD_MHD_FUNCS, "libmicrohttpd", "libmicrohttpd.so.12",
		  "libmicrohttpd12", NULL)
RTD_OPTLIB_DEFINE(gnutls, RTD_GNUTLS_FUNCS, "GnuTLS", "libgnutls.so.30",
		  "libgnutls30", NULL)
RTD_OPTLIB_DEFINE(yaml, RTD_YAML_FUNCS, "libyaml", "libyaml-0.so.2",
		  "libyaml-0-2", NULL)
RTD_OPTLIB_DEFINE(seccomp, RTD_SECCOMP_FUNCS, "libseccomp", "libseccomp.so.2",
		  "libseccomp2", "system calls by number")
RTD_OPTLIB_DEFINE(lzma, RTD_LZMA_FUNCS, "liblzma", "liblzma.so.5", "liblzma5",
		  "no MiniDebugInfo")
RTD_OPTLIB_DEFINE(dw, RTD_DW_FUNCS, "libdw", "libdw.so.1", "libdw1",
		  "no source lines, inlined frames or unwinding of user stacks")
RTD_OPTLIB_DEFINE(debuginfod, RTD_DEBUGINFOD_FUNCS, "libdebuginfod",
		  "libdebuginfod.so.1", "libdebuginfod1",
		  "debug files from local files only, not from DEBUGINFOD_URLS")
