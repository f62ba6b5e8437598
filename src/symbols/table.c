/* SPDX-License-Identifier: MIT */
/*
 * table.c - sorted symbol tables and their string pools.
 *
 * Names either point into data that outlives the table (an ELF image kept
 * open) or are copied into pools of 64 KiB blocks, so a table of a million
 * symbols costs a million small allocations never.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "symbols/internal.h"

#define POOL_BLOCK (64u << 10)

void sym_table_free(struct sym_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->npools; i++)
		free(t->pools[i]);
	free(t->pools);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const char *sym_table_strdup(struct sym_table *t, const char *s, size_t n)
{
	if (n + 1 > t->pool_left) {
		size_t sz = n + 1 > POOL_BLOCK ? n + 1 : POOL_BLOCK;
		char **np = realloc(t->pools, sizeof(*np) * (t->npools + 1));
		if (!np)
			return NULL;
		t->pools = np;
		char *b = malloc(sz);
		if (!b)
			return NULL;
		t->pools[t->npools++] = b;
		t->pool_cur = b;
		t->pool_left = sz;
		t->pool_bytes += sz;
	}
	char *d = t->pool_cur;
	memcpy(d, s, n);
	d[n] = 0;
	t->pool_cur += n + 1;
	t->pool_left -= n + 1;
	return d;
}

int sym_table_add(struct sym_table *t, uint64_t addr, uint64_t size,
		  const char *name, size_t nlen, bool copy)
{
	return sym_table_add_ranked(t, addr, size, name, nlen, copy, 0);
}

int sym_table_add_ranked(struct sym_table *t, uint64_t addr, uint64_t size,
			 const char *name, size_t nlen, bool copy, uint32_t rank)
{
	if (t->n >= SYM_MAX_SYMBOLS)
		return -RTD_E_CAP;
	if (t->n == t->cap) {
		struct sym_symbol *nv = rtd_grow(t->v, &t->cap, t->n + 1,
					sizeof(*nv), 256);
		if (!nv)
			return -ENOMEM;
		t->v = nv;
	}
	if (copy) {
		name = sym_table_strdup(t, name, nlen);
		if (!name)
			return -ENOMEM;
	}
	t->v[t->n++] = (struct sym_symbol){addr, size, name, rank};
	return 0;
}

uint32_t sym_alias_rank(unsigned bind, const char *name, size_t len)
{
	size_t u = 0;
	while (u < len && u < 255 && name[u] == '_')
		u++;
	if (len > 0xffff)
		len = 0xffff;
	return (uint32_t)bind << 24 | (uint32_t)u << 16 | (uint32_t)(0xffff - len);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address the sized symbol first (a function over a label) */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return 0;
}

/* Stable (merge) sort: among equal addresses the earlier added stays first. */
static void sort_stable(struct sym_symbol *v, size_t n)
{
	struct sym_symbol *tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_sym); /* order among equals lost */
		return;
	}
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;
			while (a < mid && b < hi)
				tmp[k++] = cmp_sym(&v[b], &v[a]) < 0 ? v[b++] : v[a++];
			while (a < mid)
				tmp[k++] = v[a++];
			while (b < hi)
				tmp[k++] = v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
}

void sym_table_finish(struct sym_table *t)
{
	if (!t->n)
		return;
	sort_stable(t->v, t->n);
	size_t w = 0;
	uint64_t covered = 0; /* the end of the last sized symbol */
	for (size_t i = 0; i < t->n; i++) {
		if (w && t->v[w - 1].addr == t->v[i].addr)
			continue; /* an alias: the first is kept */
		if (!t->v[i].size && t->v[i].addr < covered)
			continue; /* a label inside a function: the function names it */
		if (t->v[i].size && t->v[i].addr + t->v[i].size > covered)
			covered = t->v[i].addr + t->v[i].size;
		t->v[w++] = t->v[i];
	}
	t->n = w;
	for (size_t i = 0; i + 1 < t->n; i++)
		if (!t->v[i].size)
			t->v[i].size = t->v[i + 1].addr - t->v[i].addr;
}

const char *sym_table_best_at(const struct sym_table *t, uint64_t addr)
{
	const struct sym_symbol *best = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].addr == addr && (!best || cmp_sym(&t->v[i], best) < 0))
			best = &t->v[i];
	return best ? best->name : NULL;
}

const struct sym_symbol *sym_table_find(const struct sym_table *t,
					uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym_symbol *s = &t->v[lo - 1];
	/* the last symbol without a size covers what follows it, up to a
	 * page: perf does the same for a table's last entry */
	uint64_t size = s->size ? s->size : 4096;
	if (addr - s->addr >= size)
		return NULL;
	return s;
}
