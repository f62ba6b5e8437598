/* SPDX-License-Identifier: MIT */
/* memio.h - a trace in memory for the gotrace unit tests: written by the
 * encoder or text2bin (to_mem), read again as a source (mem_read). */
#ifndef RTD_TEST_GOTRACE_MEMIO_H
#define RTD_TEST_GOTRACE_MEMIO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

struct mem {
	uint8_t b[8192];
	size_t n;
};

static inline int to_mem(const void *p, size_t n, void *ctx)
{
	struct mem *m = ctx;
	if (m->n + n > sizeof(m->b))
		return -ENOSPC;
	memcpy(m->b + m->n, p, n);
	m->n += n;
	return 0;
}

static inline int64_t mem_read(void *buf, size_t len, uint64_t off, void *ctx)
{
	const struct mem *m = ctx;
	if (off >= m->n)
		return 0;
	if (len > m->n - off)
		len = m->n - (size_t)off;
	memcpy(buf, m->b + off, len);
	return (int64_t)len;
}
#endif
