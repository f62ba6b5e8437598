/* SPDX-License-Identifier: MIT */
/* optlib_lzma.h - liblzma, opened on first use (see optlib.h): an ELF
 * file's MiniDebugInfo (.gnu_debugdata). */
#ifndef RTD_COMMON_OPTLIB_LZMA_H
#define RTD_COMMON_OPTLIB_LZMA_H

#include <lzma.h>

#include "common/optlib.h"

#define RTD_LZMA_FUNCS(X) X(lzma_stream_decoder) X(lzma_code) X(lzma_end)
RTD_OPTLIB_DECLARE(lzma, RTD_LZMA_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define lzma_stream_decoder (*rtd__lzma.lzma_stream_decoder)
#define lzma_code (*rtd__lzma.lzma_code)
#define lzma_end (*rtd__lzma.lzma_end)
#endif

#endif /* RTD_COMMON_OPTLIB_LZMA_H */
