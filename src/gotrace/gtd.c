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

/* ---- a small u64 -> value map ---- */

void gtd_tab_init(struct gtd_tab *t, size_t vsz, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->vsz = vsz;
	t->max = max;
}

void gtd_tab_free(struct gtd_tab *t)
{
	free(t->keys);
	free(t->used);
	free(t->vals);
	t->keys = NULL;
	t->used = NULL;
	t->vals = NULL;
	t->n = t->cap = 0;
}

static size_t tab_slot(const struct gtd_tab *t, uint64_t key, bool *found)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)rtd_hash_u64(key) & mask;
	size_t tomb = SIZE_MAX;
	for (;;) {
		if (t->used[i] == 0) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (t->used[i] == 1 && t->keys[i] == key) {
			*found = true;
			return i;
		}
		if (t->used[i] == 2 && tomb == SIZE_MAX)
			tomb = i;
		i = (i + 1) & mask;
	}
}

static int tab_grow(struct gtd_tab *t)
{
	size_t nc = t->cap ? t->cap : 64;
	if (t->n * 2 >= nc)
		nc *= 2;
	struct gtd_tab nt = *t;
	nt.cap = nc;
	nt.n = 0;
	nt.tomb = 0;
	nt.keys = malloc(nc * sizeof(uint64_t));
	nt.used = calloc(nc, 1);
	nt.vals = malloc(nc * t->vsz);
	if (!nt.keys || !nt.used || !nt.vals) {
		free(nt.keys);
		free(nt.used);
		free(nt.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->used[i] != 1)
			continue;
		bool f;
		size_t j = tab_slot(&nt, t->keys[i], &f);
		nt.keys[j] = t->keys[i];
		nt.used[j] = 1;
		memcpy(nt.vals + j * t->vsz, t->vals + i * t->vsz, t->vsz);
		nt.n++;
	}
	gtd_tab_free(t);
	*t = nt;
	return 0;
}

void *gtd_tab_get_slow(struct gtd_tab *t, uint64_t key, bool create, bool *created)
{
	bool found = false;
	if (created)
		*created = false;
	if (t->cap) {
		size_t i = tab_slot(t, key, &found);
		if (found)
			return t->vals + i * t->vsz;
	}
	if (!create)
		return NULL;
	if (t->max && t->n >= t->max)
		return NULL;
	if ((t->n + t->tomb + 1) * 10 >= t->cap * 7 && tab_grow(t) < 0)
		return NULL;
	size_t i = tab_slot(t, key, &found);
	t->keys[i] = key;
	t->used[i] = 1;
	memset(t->vals + i * t->vsz, 0, t->vsz);
	t->n++;
	if (created)
		*created = true;
	return t->vals + i * t->vsz;
}

void gtd_tab_del(struct gtd_tab *t, uint64_t key)
{
	if (!t->cap)
		return;
	bool found;
	size_t i = tab_slot(t, key, &found);
	if (found) {
		t->used[i] = 2;
		t->n--;
		t->tomb++;
	}
}
