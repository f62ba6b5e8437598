/* SPDX-License-Identifier: MIT */
/*
 * sysstr_bpf.c - the user side of bpf/sysstr.bpf.c (see sysstr_bpf.h).
 *
 * The kernel sends a record per call with string arguments, at the same
 * tracepoint where perf takes the call's raw_syscalls record: sys_enter,
 * or sys_exit when a string was read again there; so the strings are
 * taken when the call's exit record is handled: the ring buffer holds
 * them by then.
 * Records wait per thread, in order, until their perf record comes: the
 * first with the same number and arguments is the call's (older ones,
 * whose perf record was lost, go with it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "perf/sysstr_bpf.h"
#include "rtdiag/common.h"

#ifdef RTD_HAVE_BPF
#include <linux/types.h>

#include "perf/bpf/sysstr_maps.h"
#include "perf/bpf_lib.h"
#include "sysstr.bpf.inc"

#define SYSSTR_QUEUE 64          /* records waiting per thread */
#define SYSSTR_THREADS 65536     /* threads with records waiting */

struct queue {
	struct sysstr_rec *r[SYSSTR_QUEUE];
	unsigned head, n;
};

struct sysstr_bpf {
	const struct bpf_lib *l;
	struct bpf_object *obj;
	struct bpf_link *links[4];
	struct ring_buffer *rb;
	rtd_map q; /* tid -> struct queue */
};

static const char *const progs[] = {"sysstr_exit", "sysstr_enter",
				    "sysstr_fork", "sysstr_exec"};

static int on_rec(void *ctx, void *data, size_t len)
{
	struct sysstr_bpf *b = ctx;
	if (len < sizeof(struct sysstr_rec))
		return 0;
	struct sysstr_rec *r = malloc(sizeof(*r));
	if (!r)
		return 0;
	memcpy(r, data, sizeof(*r));
	void *v = NULL;
	struct queue *q;
	if (rtd_map_get(&b->q, r->tid, &v)) {
		q = v;
	} else {
		q = calloc(1, sizeof(*q));
		if (!q || rtd_map_put(&b->q, r->tid, q, NULL)) {
			free(q);
			free(r);
			return 0;
		}
	}
	if (q->n == SYSSTR_QUEUE) { /* the oldest goes */
		free(q->r[q->head]);
		q->head = (q->head + 1) % SYSSTR_QUEUE;
		q->n--;
	}
	q->r[(q->head + q->n++) % SYSSTR_QUEUE] = r;
	return 0;
}

int sysstr_bpf_new(const pid_t *pids, size_t npids, bool on_exec,
		   const uint32_t *masks, size_t nmasks,
		   struct sysstr_bpf **out, char *why, size_t whylen)
{
	*out = NULL;
	const struct bpf_lib *l = bpf_lib_get(why, whylen);
	if (!l)
		return -RTD_E_UNSUPPORTED;
	if (npids > SYSSTR_MAX_PIDS) {
		snprintf(why, whylen, "more than %d processes", SYSSTR_MAX_PIDS);
		return -RTD_E_UNSUPPORTED;
	}
	struct sysstr_bpf *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->l = l;
	rtd_map_init(&b->q, SYSSTR_THREADS);
	b->obj = bpf_lib_load(l, "sysstr", sysstr_bpf_obj,
			      (size_t)sysstr_bpf_obj_len, why, whylen);
	if (!b->obj)
		goto fail;
	int conf_fd = bpf_lib_map_fd(l, b->obj, "sconf");
	int args_fd = bpf_lib_map_fd(l, b->obj, "strargs");
	struct sysstr_conf c = {npids ? 0 : SYSSTR_ALL, 0};
	__u32 zero = 0;
	int e = l->update(conf_fd, &zero, &c, BPF_ANY) ? errno : 0;
	for (__u32 nr = 0; !e && nr < nmasks && nr < SYSSTR_MAX_NR; nr++)
		if (masks[nr] && l->update(args_fd, &nr, &masks[nr], BPF_ANY))
			e = errno;
	if (e) {
		snprintf(why, whylen, "BPF maps of sysstr: %s", strerror(e));
		goto fail;
	}
	b->rb = l->rb_new(bpf_lib_map_fd(l, b->obj, "recs"), on_rec, b, NULL);
	if (!b->rb) {
		snprintf(why, whylen, "BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (bpf_lib_set_pids(l, b->obj, "spids", pids, npids, on_exec, why,
			     whylen) ||
	    bpf_lib_attach_all(l, b->obj, progs, b->links, 4, why, whylen))
		goto fail;
	*out = b;
	return 0;
fail:
	sysstr_bpf_free(b);
	return -RTD_E_UNSUPPORTED;
}

bool sysstr_bpf_take(struct sysstr_bpf *b, uint32_t tid, long nr,
		     const uint64_t args[6], char strs[6][SYSSTR_BPF_LEN],
		     unsigned *got)
{
	*got = 0;
	b->l->rb_consume(b->rb);
	void *v = NULL;
	if (!rtd_map_get(&b->q, tid, &v))
		return false;
	struct queue *q = v;
	for (unsigned i = 0; i < q->n; i++) {
		struct sysstr_rec *r = q->r[(q->head + i) % SYSSTR_QUEUE];
		if (r->nr != (uint32_t)nr || memcmp(r->args, args, sizeof(r->args)))
			continue;
		for (unsigned k = 0; k < 6; k++) {
			if (!(r->mask & (1u << k)) || (r->failed & (1u << k)))
				continue;
			memcpy(strs[k], r->strs[k], SYSSTR_BPF_LEN);
			strs[k][SYSSTR_BPF_LEN - 1] = 0;
			*got |= 1u << k;
		}
		/* this one and the older ones (their perf records lost) go */
		for (unsigned j = 0; j <= i; j++)
			free(q->r[(q->head + j) % SYSSTR_QUEUE]);
		q->head = (q->head + i + 1) % SYSSTR_QUEUE;
		q->n -= i + 1;
		return true;
	}
	return false;
}

static void queue_free(struct queue *q)
{
	for (unsigned i = 0; q && i < q->n; i++)
		free(q->r[(q->head + i) % SYSSTR_QUEUE]);
	free(q);
}

void sysstr_bpf_exit(struct sysstr_bpf *b, uint32_t tid)
{
	if (b)
		queue_free(rtd_map_del(&b->q, tid));
}

void sysstr_bpf_free(struct sysstr_bpf *b)
{
	if (!b)
		return;
	if (b->rb)
		b->l->rb_free(b->rb);
	bpf_lib_close(b->l, b->obj, b->links, 4);
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&b->q, &it, &k, &v))
		queue_free(v);
	rtd_map_free(&b->q);
	free(b);
}

#else /* a build without BPF */

int sysstr_bpf_new(const pid_t *pids, size_t npids, bool on_exec,
		   const uint32_t *masks, size_t nmasks,
		   struct sysstr_bpf **out, char *why, size_t whylen)
{
	(void)pids, (void)npids, (void)on_exec, (void)masks, (void)nmasks;
	*out = NULL;
	snprintf(why, whylen, "this rtdiag was built without BPF (RTD_BPF=OFF)");
	return -RTD_E_UNSUPPORTED;
}

bool sysstr_bpf_take(struct sysstr_bpf *b, uint32_t tid, long nr,
		     const uint64_t args[6], char strs[6][SYSSTR_BPF_LEN],
		     unsigned *got)
{
	(void)b, (void)tid, (void)nr, (void)args, (void)strs;
	*got = 0;
	return false;
}

void sysstr_bpf_exit(struct sysstr_bpf *b, uint32_t tid)
{
	(void)b, (void)tid;
}

void sysstr_bpf_free(struct sysstr_bpf *b)
{
	(void)b;
}
#endif
