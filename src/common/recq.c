/* SPDX-License-Identifier: MIT */
/* recq.c - a record source's queue of completed records (recq.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/recq.h"

void rtd_recq_init(rtd_recq *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	rtd_arena_init(&q->arena, max_bytes);
}

void rtd_recq_free(rtd_recq *q)
{
	free(q->r);
	rtd_arena_free(&q->arena);
	memset(q, 0, sizeof(*q));
}

struct rtd_record *rtd_recq_grow(rtd_recq *q, int *err)
{
	if (q->n >= RTD_RECQ_MAX_RECORDS) {
		*err = -RTD_E_CAP;
		return NULL;
	}
	if (q->n == q->cap) {
		struct rtd_record *r = rtd_grow(q->r, &q->cap, q->n + 1, sizeof(*r), 64);
		if (!r) {
			*err = -ENOMEM;
			return NULL;
		}
		q->r = r;
	}
	return &q->r[q->n++];
}

struct rtd_record *rtd_recq_take(rtd_recq *q)
{
	if (q->head < q->n)
		return &q->r[q->head++];
	q->head = q->n = 0;
	rtd_arena_reset(&q->arena);
	return NULL;
}

bool rtd_recq_pop(rtd_recq *q, struct rtd_record *out)
{
	const struct rtd_record *r = rtd_recq_take(q);
	if (r)
		*out = *r;
	return r != NULL;
}

struct rtd_field *rtd_recq_fields(rtd_recq *q, const struct rtd_field *f, size_t n, int *err)
{
	struct rtd_field *c = rtd_arena_alloc(&q->arena, n * sizeof(*c), err);
	if (c)
		memcpy(c, f, n * sizeof(*c));
	return c;
}
