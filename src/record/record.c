/* SPDX-License-Identifier: MIT */
/*
 * record.c - the parts of the record stream every source shares: the one
 * options check (libbpf's shape), clock-domain conversions, and names.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/stats.h"
#include "rtdiag/source.h"

int rtd_opts_check(const void *opts, size_t known)
{
	if (!opts)
		return 0;
	size_t sz;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return -RTD_E_INVAL;
	/* a newer caller's fields past what this version knows must be
	 * zero: an option asked for and not understood is refused. The
	 * struct's trailing padding (up to the next multiple of sz's size)
	 * is not read: a designated initializer may leave it unset (clang
	 * at -O0 does) */
	const unsigned char *p = opts;
	size_t from = (known + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);
	for (size_t i = from; i < sz; i++)
		if (p[i])
			return -RTD_E_INVAL;
	return 0;
}

int rtd_opts_copy(void *dst, size_t dst_size, const void *src, size_t known)
{
	memset(dst, 0, dst_size);
	int rc = rtd_opts_check(src, known);
	if (rc < 0)
		return rc;
	if (src) {
		size_t sz;
		memcpy(&sz, src, sizeof(sz));
		memcpy(dst, src, sz < dst_size ? sz : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}

int rtd_stats_copy(void *dst, const void *src, size_t src_size)
{
	size_t sz;
	if (!dst)
		return -RTD_E_INVAL;
	memcpy(&sz, dst, sizeof(sz));
	if (sz < sizeof(size_t))
		return -RTD_E_INVAL;
	memcpy((char *)dst + sizeof(sz), (const char *)src + sizeof(sz),
	       (sz < src_size ? sz : src_size) - sizeof(sz));
	return 0;
}

int64_t rtd_clock_ticks_to_ns(int64_t ticks, uint64_t freq)
{
	if (freq == 0 || freq > RTD_CLOCK_MAX_FREQ)
		return ticks;
	if (freq == 1000000000u)
		return ticks;
	/* |ticks| split as q * freq + r: q * 10^9 checked for overflow, and
	 * r * 10^9 < 9e18 fits because freq <= RTD_CLOCK_MAX_FREQ */
	uint64_t mag = ticks < 0 ? (uint64_t)0 - (uint64_t)ticks : (uint64_t)ticks;
	uint64_t q = mag / freq, r = mag % freq;
	if (q > (uint64_t)INT64_MAX / 1000000000u)
		return ticks < 0 ? INT64_MIN : INT64_MAX;
	uint64_t ns = q * 1000000000u + r * 1000000000u / freq;
	if (ns > (uint64_t)INT64_MAX)
		return ticks < 0 ? INT64_MIN : INT64_MAX;
	return ticks < 0 ? -(int64_t)ns : (int64_t)ns;
}

/* a + b saturated */
static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* @ts - @ref in ticks, saturated, as nanoseconds */
static int64_t since_ref(const struct rtd_clock *c, int64_t ts)
{
	int64_t d;
	if (c->ref_ts < 0 && ts > INT64_MAX + c->ref_ts)
		d = INT64_MAX;
	else if (c->ref_ts > 0 && ts < INT64_MIN + c->ref_ts)
		d = INT64_MIN;
	else
		d = ts - c->ref_ts;
	return rtd_clock_ticks_to_ns(d, c->freq);
}

int64_t rtd_clock_to_mono(const struct rtd_clock *c, int64_t ts)
{
	int64_t ns = since_ref(c, ts);
	return (c->flags & RTD_CLOCK_HAS_MONO) ? sat_add(c->ref_mono, ns) : ns;
}

int rtd_clock_to_wall(const struct rtd_clock *c, int64_t ts, int64_t *wall)
{
	if (!(c->flags & RTD_CLOCK_HAS_WALL))
		return -RTD_E_NOTFOUND;
	*wall = sat_add(c->ref_wall, since_ref(c, ts));
	return 0;
}

const char *rtd_clock_domain_name(unsigned domain)
{
	static const char *const names[] = {
		[RTD_CLOCK_NONE] = "none",
		[RTD_CLOCK_MONOTONIC] = "monotonic",
		[RTD_CLOCK_QPC] = "qpc",
		[RTD_CLOCK_GO] = "go",
	};
	return domain < sizeof(names) / sizeof(names[0]) ? names[domain] : "unknown";
}

const char *rtd_record_kind_name(unsigned kind)
{
	static const char *const names[RTD_REC_KINDS] = {
		[RTD_REC_NONE] = "none",
		[RTD_REC_PROCESS] = "process",
		[RTD_REC_THREAD] = "thread",
		[RTD_REC_SAMPLE] = "sample",
		[RTD_REC_SLICE_BEGIN] = "slice_begin",
		[RTD_REC_SLICE_END] = "slice_end",
		[RTD_REC_INSTANT] = "instant",
		[RTD_REC_COUNTER] = "counter",
		[RTD_REC_FLOW] = "flow",
		[RTD_REC_ERROR] = "error",
		[RTD_REC_SLICE] = "slice",
	};
	return kind < RTD_REC_KINDS ? names[kind] : "unknown";
}
