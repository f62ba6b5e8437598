/* SPDX-License-Identifier: MIT */
/* arena.c - chunked bump allocator with a cap (arena.h). */
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "rtdiag/common.h"

#define ARENA_CHUNK (64u << 10)
#define ARENA_DEFAULT_MAX (64u << 20)

struct rtd_arena_chunk {
	struct rtd_arena_chunk *next;
	size_t size, off;
	alignas(max_align_t) unsigned char data[];
};

void rtd_arena_init(rtd_arena *a, size_t max)
{
	a->head = NULL;
	a->used = 0;
	a->max = max ? max : ARENA_DEFAULT_MAX;
}

void rtd_arena_free(rtd_arena *a)
{
	struct rtd_arena_chunk *c = a->head;
	while (c) {
		struct rtd_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
	a->used = 0;
}

void rtd_arena_reset(rtd_arena *a)
{
	struct rtd_arena_chunk *keep = a->head;
	if (!keep)
		return;
	/* keep the newest chunk only if it has the usual size */
	struct rtd_arena_chunk *c = keep->next;
	while (c) {
		struct rtd_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	if (keep->size != ARENA_CHUNK) {
		free(keep);
		keep = NULL;
	} else {
		keep->next = NULL;
		keep->off = 0;
	}
	a->head = keep;
	a->used = 0;
}

void *rtd_arena_alloc(rtd_arena *a, size_t n, int *err)
{
	const size_t al = alignof(max_align_t);
	size_t need = (n + al - 1) & ~(al - 1);
	if (need < n || need > a->max - a->used || a->used > a->max) {
		if (err)
			*err = -RTD_E_CAP;
		return NULL;
	}
	struct rtd_arena_chunk *c = a->head;
	if (!c || c->size - c->off < need) {
		size_t size = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c) {
			if (err)
				*err = -ENOMEM;
			return NULL;
		}
		c->size = size;
		c->off = 0;
		/* a big one-off chunk goes behind the current one, so the
		 * current chunk's free room stays in use */
		if (size > ARENA_CHUNK && a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->off;
	c->off += need;
	a->used += need;
	return p;
}

char *rtd_arena_strndup(rtd_arena *a, const char *s, size_t n, int *err)
{
	char *p = rtd_arena_alloc(a, n + 1, err);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	return p;
}
