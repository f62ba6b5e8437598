/* SPDX-License-Identifier: MIT */
/*
 * opts.h - a struct of libbpf's shape (`size_t sz` first) that a caller
 * hands in on a hot path (a timeline event, a profile sample), read at
 * this version's size through the one options check (rtd_opts_copy(),
 * rtdiag/source.h) without its cost for the callers built against this
 * version's header.
 */
#ifndef RTD_COMMON_OPTS_H
#define RTD_COMMON_OPTS_H

#include <stddef.h>
#include <string.h>

#include "rtdiag/source.h"

/*
 * @s itself when its sz is @size (this version's: one compare); else a
 * checked copy in @copy (@size bytes): an older, shorter struct's missing
 * fields read as zero, a newer one's non-zero bytes past @known are
 * refused. NULL when @s is NULL, refused, or shorter than @min (the end
 * of the fields every caller must give).
 */
static inline const void *rtd_opts_at_size(const void *s, void *copy, size_t size,
					   size_t min, size_t known)
{
	size_t sz;
	if (!s)
		return NULL;
	memcpy(&sz, s, sizeof(sz));
	if (sz == size)
		return s;
	if (sz < min || rtd_opts_copy(copy, size, s, known) < 0)
		return NULL;
	return copy;
}

#endif /* RTD_COMMON_OPTS_H */
