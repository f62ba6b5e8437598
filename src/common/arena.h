/* SPDX-License-Identifier: MIT */
/*
 * arena.h - a bump allocator in chunks that never move, with a cap: what
 * a source copies for the records it queues (field strings, field arrays)
 * lives here until the queue is drained, then the arena is reset.
 */
#ifndef RTD_COMMON_ARENA_H
#define RTD_COMMON_ARENA_H

#include <stddef.h>

struct rtd_arena_chunk;

typedef struct rtd_arena {
	struct rtd_arena_chunk *head; /* the chunk allocated from; older ones after it */
	size_t used;                  /* bytes handed out since the last reset */
	size_t max;                   /* cap on them */
} rtd_arena;

/* An empty arena; @max bytes at most between resets (0: 64 MiB). */
void rtd_arena_init(rtd_arena *a, size_t max);
/* Free every chunk. */
void rtd_arena_free(rtd_arena *a);
/* Forget what was handed out; keep one chunk for the next round. */
void rtd_arena_reset(rtd_arena *a);
/* @n bytes aligned for any type, or NULL (out of memory, or past the cap:
 * *@err gets -ENOMEM or -RTD_E_CAP when @err is not NULL). */
void *rtd_arena_alloc(rtd_arena *a, size_t n, int *err);
/* A NUL-terminated copy of @n bytes of @s, or NULL as rtd_arena_alloc(). */
char *rtd_arena_strndup(rtd_arena *a, const char *s, size_t n, int *err);

#endif /* RTD_COMMON_ARENA_H */
