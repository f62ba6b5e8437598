/* SPDX-License-Identifier: MIT */
/*
 * analysis_common.c - names and stacks shared by the goroutine
 * state tracker and the Go trace analyses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/analysis_int.h"

/* ---- names ---------------------------------------------------------------- */

void ga_strs_init(struct ga_strs *s)
{
	rtd_strmap_init(&s->m, RTD_GOAN_MAX_STRINGS);
}

void ga_strs_free(struct ga_strs *s)
{
	rtd_strmap_free(&s->m);
}

const char *ga_intern(struct ga_strs *s, const char *str, size_t len)
{
	rtd_strmap_entry *e = rtd_strmap_find(&s->m, str, len);
	if (e)
		return e->key;
	if (rtd_strmap_put(&s->m, str, len, NULL) < 0)
		return NULL;
	e = rtd_strmap_find(&s->m, str, len);
	return e ? e->key : NULL;
}

/* ---- stacks --------------------------------------------------------------- */

void ga_stacks_init(struct ga_stacks *s, struct ga_strs *strs)
{
	memset(s, 0, sizeof(*s));
	s->strs = strs;
	rtd_vmap_init(&s->frame_of_pc, sizeof(uint32_t), RTD_GOAN_MAX_FRAMES);
	rtd_vmap_init(&s->cache, sizeof(uint32_t), 0);
	s->cache_gen = UINT64_MAX;
}

void ga_stacks_free(struct ga_stacks *s)
{
	rtd_vmap_free(&s->frame_of_pc);
	rtd_vmap_free(&s->cache);
	free(s->small);
	free(s->frames);
	free(s->arena);
	free(s->stk);
	free(s->slots);
	free(s->view);
	memset(s, 0, sizeof(*s));
}

static int grow(void **p, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * esz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

static int64_t frame_index(struct ga_stacks *s, const struct rtd_gotrace_frame *f)
{
	int err = -ENOMEM;
	bool created;
	uint32_t *ix = rtd_vmap_get(&s->frame_of_pc, f->pc, true, &created, &err);
	if (!ix) {
		snprintf(s->err, sizeof(s->err), err == -RTD_E_CAP
			 ? "more than %u distinct frame PCs" : "out of memory",
			 RTD_GOAN_MAX_FRAMES);
		return err;
	}
	if (!created)
		return *ix - 1;
	if (grow((void **)&s->frames, &s->capframes, s->nframes + 1, sizeof(*s->frames)) < 0) {
		rtd_vmap_del(&s->frame_of_pc, f->pc);
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -ENOMEM;
	}
	struct ga_frame *g = &s->frames[s->nframes];
	g->pc = f->pc;
	g->line = f->line;
	g->fn = ga_intern(s->strs, f->fn ? f->fn : "", f->fn ? strlen(f->fn) : 0);
	g->file = ga_intern(s->strs, f->file ? f->file : "", f->file ? strlen(f->file) : 0);
	if (!g->fn || !g->file) {
		rtd_vmap_del(&s->frame_of_pc, f->pc);
		snprintf(s->err, sizeof(s->err), "out of memory or more than %u names",
			 RTD_GOAN_MAX_STRINGS);
		return -ENOMEM;
	}
	*ix = (uint32_t)++s->nframes;
	return (int64_t)s->nframes - 1;
}

static uint64_t pcs_hash(const struct rtd_gotrace_frame *f, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	for (size_t i = 0; i < n; i++)
		h = rtd_hash_u64(h ^ f[i].pc) + i;
	return h;
}

static bool same_pcs(const struct ga_stacks *s, uint32_t id,
		     const struct rtd_gotrace_frame *f, size_t n)
{
	if (s->stk[id].n != n)
		return false;
	const uint32_t *a = s->arena + s->stk[id].off;
	for (size_t i = 0; i < n; i++)
		if (s->frames[a[i]].pc != f[i].pc)
			return false;
	return true;
}

static int rehash(struct ga_stacks *s)
{
	size_t nn = s->nslots ? s->nslots * 2 : 1024;
	uint32_t *sl = calloc(nn, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	for (size_t id = 1; id < s->nstk; id++) {
		size_t j = (size_t)s->stk[id].hash & (nn - 1);
		while (sl[j])
			j = (j + 1) & (nn - 1);
		sl[j] = (uint32_t)id;
	}
	free(s->slots);
	s->slots = sl;
	s->nslots = nn;
	return 0;
}

int64_t ga_stacks_add(struct ga_stacks *s, const struct rtd_gotrace_frame *f, size_t n)
{
	if (n == 0)
		return 0;
	if (s->nstk == 0)
		s->nstk = 1; /* id 0: no stack */
	uint64_t h = pcs_hash(f, n);
	if (s->nslots) {
		for (size_t j = (size_t)h & (s->nslots - 1); s->slots[j]; j = (j + 1) & (s->nslots - 1)) {
			uint32_t id = s->slots[j];
			if (s->stk[id].hash == h && same_pcs(s, id, f, n))
				return id;
		}
	}
	if (s->nstk >= RTD_GOAN_MAX_STACKS) {
		snprintf(s->err, sizeof(s->err), "more than %u distinct stacks", RTD_GOAN_MAX_STACKS);
		return -RTD_E_CAP;
	}
	if ((s->nstk + 1) * 2 > s->nslots && rehash(s) < 0)
		goto oom;
	if (grow((void **)&s->stk, &s->capstk, s->nstk + 1, sizeof(*s->stk)) < 0 ||
	    grow((void **)&s->arena, &s->caparena, s->narena + n, sizeof(*s->arena)) < 0)
		goto oom;
	size_t off = s->narena;
	for (size_t i = 0; i < n; i++) {
		int64_t ix = frame_index(s, &f[i]);
		if (ix < 0)
			return ix;
		s->arena[off + i] = (uint32_t)ix;
	}
	s->narena += n;
	uint32_t id = (uint32_t)s->nstk++;
	s->stk[id] = (struct ga_stk){h, off, (uint32_t)n};
	size_t j = (size_t)h & (s->nslots - 1);
	while (s->slots[j])
		j = (j + 1) & (s->nslots - 1);
	s->slots[j] = id;
	return id;
oom:
	snprintf(s->err, sizeof(s->err), "out of memory");
	return -ENOMEM;
}

int64_t ga_stacks_intern(struct ga_stacks *s, rtd_gotrace_dec *d, uint64_t gen, uint64_t id)
{
	if (id == 0)
		return 0;
	/* new-format stack ids are per generation */
	if (gen != s->cache_gen) {
		rtd_vmap_clear(&s->cache);
		if (s->small)
			memset(s->small, 0, s->nsmall * sizeof(*s->small));
		s->cache_gen = gen;
	}
	/* the ids a generation numbers from 1: ours + 1 by index */
	if (id < s->nsmall && s->small[id])
		return s->small[id] - 1;
	uint32_t *c = NULL;
	if (id >= GA_SMALL_IDS) {
		bool created;
		int err = -ENOMEM;
		c = rtd_vmap_get(&s->cache, id, true, &created, &err);
		if (!c) {
			snprintf(s->err, sizeof(s->err), "out of memory");
			return err;
		}
		if (!created)
			return *c;
	} else if (id >= s->nsmall) {
		size_t n = s->nsmall ? s->nsmall : 256;
		while (n <= id)
			n *= 2;
		uint32_t *a = realloc(s->small, n * sizeof(*a));
		if (!a) {
			snprintf(s->err, sizeof(s->err), "out of memory");
			return -ENOMEM;
		}
		memset(a + s->nsmall, 0, (n - s->nsmall) * sizeof(*a));
		s->small = a;
		s->nsmall = n;
	}
	const struct rtd_gotrace_frame *f;
	size_t n = rtd_gotrace_dec_stack(d, id, &f);
	int64_t r = ga_stacks_add(s, f, n);
	if (r < 0) {
		if (c)
			rtd_vmap_del(&s->cache, id);
		return r;
	}
	if (c)
		*c = (uint32_t)r;
	else
		s->small[id] = (uint32_t)r + 1;
	return r;
}

size_t ga_stacks_view(struct ga_stacks *s, uint32_t id, const struct rtd_goframe **out)
{
	uint32_t n = ga_stack_len(s, id);
	*out = NULL;
	if (!n)
		return 0;
	if (grow((void **)&s->view, &s->capview, n, sizeof(*s->view)) < 0)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct ga_frame *f = ga_stack_frame(s, id, i);
		s->view[i] = (struct rtd_goframe){f->pc, f->fn, f->file, f->line};
	}
	*out = s->view;
	return n;
}

/* ---- Go's durations ------------------------------------------------------ */

/* @v's decimal digits written leftwards ending before b[w]; returns the
 * new left end */
static size_t dec_left(char *b, size_t w, uint64_t v)
{
	do {
		b[--w] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return w;
}

/* Go's time.Duration.String(): digits from the right into a buffer that
 * holds the longest ("-2562047h47m16.854775808s"), then copied out. */
int rtd_goan_duration_str(int64_t ns, char *buf, size_t len)
{
	char b[40];
	size_t w = sizeof(b);
	bool neg = ns < 0;
	uint64_t u = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	b[--w] = 0;
	if (u == 0)
		return snprintf(buf, len, "0s");
	int prec;
	if (u < 1000000000ull) {
		b[--w] = 's';
		if (u < 1000) {
			prec = 0;
			b[--w] = 'n';
		} else if (u < 1000000) {
			prec = 3;
			b[--w] = (char)0xb5; /* "µ" in UTF-8 */
			b[--w] = (char)0xc2;
		} else {
			prec = 6;
			b[--w] = 'm';
		}
	} else {
		b[--w] = 's';
		prec = 9;
	}
	/* the fraction, without trailing zeros */
	bool print = false;
	for (int i = 0; i < prec; i++) {
		unsigned digit = (unsigned)(u % 10);
		print = print || digit != 0;
		if (print)
			b[--w] = (char)('0' + digit);
		u /= 10;
	}
	if (print)
		b[--w] = '.';
	if (prec == 9) { /* seconds, minutes, hours */
		w = dec_left(b, w, u % 60);
		u /= 60;
		if (u) {
			b[--w] = 'm';
			w = dec_left(b, w, u % 60);
			u /= 60;
			if (u) {
				b[--w] = 'h';
				w = dec_left(b, w, u);
			}
		}
	} else {
		w = dec_left(b, w, u);
	}
	if (neg)
		b[--w] = '-';
	return snprintf(buf, len, "%s", b + w);
}
