/* SPDX-License-Identifier: MIT */
/* optlib_debuginfod.h - libdebuginfod (and the libcurl it links), opened
 * on first use (see optlib.h): debug files fetched by build-id. */
#ifndef RTD_COMMON_OPTLIB_DEBUGINFOD_H
#define RTD_COMMON_OPTLIB_DEBUGINFOD_H

#include <elfutils/debuginfod.h>

#include "common/optlib.h"

#define RTD_DEBUGINFOD_FUNCS(X)                                                \
	X(debuginfod_begin) X(debuginfod_find_debuginfo) X(debuginfod_end)
RTD_OPTLIB_DECLARE(debuginfod, RTD_DEBUGINFOD_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define debuginfod_begin (*rtd__debuginfod.debuginfod_begin)
#define debuginfod_find_debuginfo (*rtd__debuginfod.debuginfod_find_debuginfo)
#define debuginfod_end (*rtd__debuginfod.debuginfod_end)
#endif

#endif /* RTD_COMMON_OPTLIB_DEBUGINFOD_H */
