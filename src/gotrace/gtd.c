/* SPDX-License-Identifier: MIT */
/*
 * gtd.c - what both Go trace formats' decoding uses (the gtd_ names of
 * gotrace_int.h): the decoder's sticky failure, its argument room, the
 * string table's look-up, and a small u64 -> value map.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "gotrace/gotrace_int.h"

int gtd_fail(rtd_gotrace_dec *d, int err, uint64_t off, const char *fmt, ...)
{
	if (d->err)
		return d->err;
	va_list ap;
	va_start(ap, fmt);
	/* the input ended: say where, whatever it ended inside */
	if (err == -RTD_E_TRUNCATED)
		rtd_verrf_at(d->errmsg, sizeof(d->errmsg), err, "truncated at byte", d->fed, fmt, ap);
	else
		rtd_verrf(d->errmsg, sizeof(d->errmsg), err, fmt, ap);
	va_end(ap);
	d->err = err;
	d->erroff = off;
	return err;
}

int gtd_fail_read(rtd_gotrace_dec *d, const rtd_rd *r, uint64_t off,
		  const char *what)
{
	if (r->err == -RTD_E_TRUNCATED)
		return gtd_fail(d, -RTD_E_TRUNCATED, off,
				"trace ends inside %s at offset %llu", what,
				(unsigned long long)off);
	return gtd_fail(d, r->err ? r->err : -RTD_E_GO_EVENT, off,
			"bad varint in %s at offset %llu", what,
			(unsigned long long)off);
}

int gtd_args_reserve(rtd_gotrace_dec *d, size_t n)
{
	if (n <= d->args_cap)
		return 0;
	size_t nc = d->args_cap ? d->args_cap * 2 : 64;
	while (nc < n)
		nc *= 2;
	uint64_t *a = realloc(d->args, nc * sizeof(*a));
	if (!a)
		return -ENOMEM;
	d->args = a;
	d->args_cap = nc;
	return 0;
}

const char *gtd_str_get(const rtd_gotrace_dec *d, uint64_t id, size_t *len)
{
	void *v;
	if (!rtd_map_get(&d->strings, id, &v) &&
	    !(d->resolve && (ahead_miss(d, id), rtd_map_get(&d->ahead_strings, id, &v)))) {
		if (len)
			*len = 0;
		return NULL;
	}
	struct gtd_str *s = v;
	if (len)
		*len = s->len;
	return s->s;
}

