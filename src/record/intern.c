/* SPDX-License-Identifier: MIT */
/*
 * intern.c - one copy of each string and stack a source hands out, at an
 * address that stays until the source is freed, so that records can point
 * at them and consumers can key tables by them. Every table is capped
 * (RTD_INTERN_MAX_* in rtdiag/source.h).
 *
 * Strings and stacks are cut from an arena of 64 KiB chunks, freed only
 * with the interner: a flight ring makes a new interner at each
 * compaction and a live source at each generation, and a malloc of its
 * own size for each string and stack, freed together minutes later, left
 * holes of every size in the heap that the chunks between them did not
 * fit (issue #31: RSS flat over a 10-minute ring).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/buf.h"
#include "common/map.h"
#include "rtdiag/source.h"

struct istack {
	struct rtd_stack st;
	struct istack *next;      /* same hash */
	struct rtd_rec_frame frames[]; /* st.frames points here */
};

struct istring {
	struct istring *next; /* same hash */
	size_t len;
	char s[];
};

struct rtd_intern {
	rtd_arena mem;        /* every istring and istack */
	rtd_map strings;      /* hash -> struct istring * (chained) */
	size_t nstrings, string_bytes;
	rtd_map stacks;       /* hash -> struct istack * (chained) */
	size_t nstacks, nframes;
};

/* The arena's cap: what the interner's own caps let it hold. */
#define INTERN_ARENA_MAX                                                               \
	((size_t)RTD_INTERN_MAX_STRING_BYTES +                                         \
	 (size_t)RTD_INTERN_MAX_STRINGS * (sizeof(struct istring) + 16) +              \
	 (size_t)RTD_INTERN_MAX_STACKS * (sizeof(struct istack) + 16) +                \
	 (size_t)RTD_INTERN_MAX_FRAMES * sizeof(struct rtd_rec_frame))

rtd_intern *rtd_intern_new(void)
{
	rtd_intern *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	rtd_arena_init(&in->mem, INTERN_ARENA_MAX);
	rtd_map_init(&in->strings, RTD_INTERN_MAX_STRINGS);
	rtd_map_init(&in->stacks, RTD_INTERN_MAX_STACKS);
	return in;
}

void rtd_intern_free(rtd_intern *in)
{
	if (!in)
		return;
	rtd_map_free(&in->stacks);
	rtd_map_free(&in->strings);
	rtd_arena_free(&in->mem);
	free(in);
}

int rtd_intern_string(rtd_intern *in, const char *s, size_t len, const char **out)
{
	uint64_t h = rtd_hash_bytes(s, len);
	void *v = NULL;
	rtd_map_get(&in->strings, h, &v);
	for (struct istring *e = v; e; e = e->next)
		if (e->len == len && !memcmp(e->s, s, len)) {
			*out = e->s;
			return 0;
		}
	if (len > RTD_CAP_STRING || len + 1 > RTD_INTERN_MAX_STRING_BYTES - in->string_bytes ||
	    in->nstrings >= RTD_INTERN_MAX_STRINGS)
		return -RTD_E_CAP;
	int rc = 0;
	struct istring *e = rtd_arena_alloc(&in->mem, sizeof(*e) + len + 1, &rc);
	if (!e)
		return rc;
	memcpy(e->s, s, len);
	e->s[len] = 0;
	e->len = len;
	e->next = v;
	/* the arena's bytes stay until the interner goes: nothing to undo */
	if ((rc = rtd_map_put(&in->strings, h, e, NULL)) < 0)
		return rc;
	in->nstrings++;
	in->string_bytes += len + 1;
	*out = e->s;
	return 0;
}

static uint64_t stack_hash(const struct rtd_rec_frame *f, size_t n)
{
	uint64_t h = rtd_hash_u64(n);
	for (size_t i = 0; i < n; i++)
		h = rtd_hash_u64(h ^ rtd_hash_u64(f[i].ip) ^
				 (f[i].name ? rtd_hash_bytes(f[i].name, strlen(f[i].name)) : 0) ^
				 (f[i].module ? rtd_hash_bytes(f[i].module, strlen(f[i].module)) : 1) ^
				 (f[i].file ? rtd_hash_bytes(f[i].file, strlen(f[i].file)) : 2) ^
				 rtd_hash_u64(f[i].line));
	return h;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_frames(const struct rtd_stack *st, const struct rtd_rec_frame *f, size_t n)
{
	if (st->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (st->frames[i].ip != f[i].ip || !same_str(st->frames[i].name, f[i].name) ||
		    !same_str(st->frames[i].module, f[i].module) ||
		    !same_str(st->frames[i].file, f[i].file) || st->frames[i].line != f[i].line ||
		    st->frames[i].kind != f[i].kind || st->frames[i].inlined != f[i].inlined)
			return false;
	return true;
}

/* the interned copy of a frame's string (NULL stays NULL) */
static int intern_opt(rtd_intern *in, const char *s, const char **out)
{
	*out = NULL;
	return s ? rtd_intern_string(in, s, strlen(s), out) : 0;
}

int rtd_intern_stack(rtd_intern *in, const struct rtd_rec_frame *frames, size_t n,
		     const struct rtd_stack **out)
{
	if (n > RTD_INTERN_MAX_DEPTH)
		return -RTD_E_CAP;
	uint64_t h = stack_hash(frames, n);
	void *v = NULL;
	rtd_map_get(&in->stacks, h, &v);
	for (struct istack *s = v; s; s = s->next)
		if (same_frames(&s->st, frames, n)) {
			*out = &s->st;
			return 0;
		}
	if (in->nstacks >= RTD_INTERN_MAX_STACKS || n > RTD_INTERN_MAX_FRAMES - in->nframes)
		return -RTD_E_CAP;
	int rc = 0;
	struct istack *s = rtd_arena_alloc(&in->mem, sizeof(*s) + n * sizeof(struct rtd_rec_frame),
					   &rc);
	if (!s)
		return rc;
	for (size_t i = 0; i < n; i++) {
		s->frames[i].ip = frames[i].ip;
		s->frames[i].line = frames[i].line;
		s->frames[i].kind = frames[i].kind;
		s->frames[i].inlined = frames[i].inlined;
		rc = intern_opt(in, frames[i].name, &s->frames[i].name);
		if (rc == 0)
			rc = intern_opt(in, frames[i].module, &s->frames[i].module);
		if (rc == 0)
			rc = intern_opt(in, frames[i].file, &s->frames[i].file);
		if (rc < 0)
			return rc; /* its bytes stay in the arena: a cap was hit */
	}
	s->st.id = (uint32_t)in->nstacks + 1;
	s->st.n = (uint32_t)n;
	s->st.frames = s->frames;
	s->next = v;
	if ((rc = rtd_map_put(&in->stacks, h, s, NULL)) < 0)
		return rc;
	in->nstacks++;
	in->nframes += n;
	*out = &s->st;
	return 0;
}

void rtd_intern_counts(const rtd_intern *in, size_t *strings, size_t *stacks)
{
	if (strings)
		*strings = in->nstrings;
	if (stacks)
		*stacks = in->nstacks;
}
