/* SPDX-License-Identifier: MIT */
/*
 * recq.h - the records a push decoder completes in one step, queued for a
 * record source to hand out one at a time (rtdiag/source.h), with an
 * arena for what they point at. Emptying the queue resets both, so what a
 * handed-out record borrows stays valid until the source's next pull.
 */
#ifndef RTD_COMMON_RECQ_H
#define RTD_COMMON_RECQ_H

#include <stdbool.h>

#include "common/arena.h"
#include "rtdiag/source.h"

#define RTD_RECQ_MAX_RECORDS (1u << 24) /* records queued at once */

typedef struct rtd_recq {
	struct rtd_record *r;
	size_t n, cap, head;
	rtd_arena arena; /* strings and fields of the queued records */
} rtd_recq;

/* An empty queue whose arena holds at most @max_bytes (0: 64 MiB). */
void rtd_recq_init(rtd_recq *q, size_t max_bytes);
void rtd_recq_free(rtd_recq *q);
/* rtd_recq_push() when the queue is full: grown, or NULL with *@err */
struct rtd_record *rtd_recq_grow(rtd_recq *q, int *err);

/* A zeroed record of @kind at @ts (@mono converted) at the queue's end,
 * or NULL with *@err = -ENOMEM or -RTD_E_CAP. Inline: a record a decoded
 * event, its cost is the stream's. */
static inline struct rtd_record *rtd_recq_push(rtd_recq *q, unsigned kind, int64_t ts,
					       int64_t mono, int *err)
{
	struct rtd_record *r = q->n < q->cap ? &q->r[q->n++] : rtd_recq_grow(q, err);
	if (r)
		*r = (struct rtd_record){.kind = kind, .ts = ts, .mono = mono};
	return r;
}
/* The first queued record into *@out, true; false when the queue is
 * empty (then it and its arena are reset). */
bool rtd_recq_pop(rtd_recq *q, struct rtd_record *out);
/* The first queued record where it is (valid until the next take or
 * push); NULL when the queue is empty (then it and its arena are reset). */
struct rtd_record *rtd_recq_take(rtd_recq *q);
/* A copy of @n fields in the arena (NULL with *@err when it is full). */
struct rtd_field *rtd_recq_fields(rtd_recq *q, const struct rtd_field *f, size_t n, int *err);

#endif /* RTD_COMMON_RECQ_H */
