/* SPDX-License-Identifier: MIT */
/*
 * stats.h - handing a stats struct of libbpf's shape (`size_t sz` first,
 * set by the caller) back to a caller built against another version: the
 * other half of rtd_opts_copy() (rtdiag/source.h).
 */
#ifndef RTD_COMMON_STATS_H
#define RTD_COMMON_STATS_H

#include <stddef.h>

/* Copy @src (this version's struct, @src_size bytes) into the caller's
 * @dst as far as both reach, @dst's sz kept: a field the caller does not
 * know is not written, one this version lacks stays as the caller set it.
 * Returns 0, or -RTD_E_INVAL when @dst is NULL or its sz is too small to
 * be one. */
int rtd_stats_copy(void *dst, const void *src, size_t src_size);

#endif /* RTD_COMMON_STATS_H */
