/* SPDX-License-Identifier: MIT */
/*
 * order1.c - ordered mode for the old format: Go 1.19's order1007 (the
 * frontier merge of per-P batches by goroutine sequence numbers),
 * order1005 (sort by global sequence), then parseEvents' time conversion,
 * removeFutile and postProcessTrace's validation, with the same results
 * and messages (src/internal/trace/order.go and parser.go).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/gotrace_int.h"

enum { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING };
#define UNORDERED UINT64_MAX
#define GARBAGE (UINT64_MAX - 1)
#define NOSEQ UINT64_MAX
#define SEQINC (UINT64_MAX - 1)

struct gstate {
	uint64_t seq;
	int status;
};

static void transition_of(const struct v1_ref *ev, uint64_t evg, const uint64_t *a,
			  uint64_t *g, struct gstate *init, struct gstate *next)
{
	switch (ev->type) {
	case RTD_GO_EV_GO_CREATE:
		*g = a[0];
		*init = (struct gstate){0, G_DEAD};
		*next = (struct gstate){1, G_RUNNABLE};
		break;
	case RTD_GO_EV_GO_WAITING:
	case RTD_GO_EV_GO_IN_SYSCALL:
		*g = evg;
		*init = (struct gstate){1, G_RUNNABLE};
		*next = (struct gstate){2, G_WAITING};
		break;
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LABEL:
		*g = evg;
		*init = (struct gstate){a[1], G_RUNNABLE};
		*next = (struct gstate){a[1] + 1, G_RUNNING};
		break;
	case RTD_GO_EV_GO_START_LOCAL:
		*g = evg;
		*init = (struct gstate){NOSEQ, G_RUNNABLE};
		*next = (struct gstate){SEQINC, G_RUNNING};
		break;
	case RTD_GO_EV_GO_BLOCK:
	case RTD_GO_EV_GO_BLOCK_SEND:
	case RTD_GO_EV_GO_BLOCK_RECV:
	case RTD_GO_EV_GO_BLOCK_SELECT:
	case RTD_GO_EV_GO_BLOCK_SYNC:
	case RTD_GO_EV_GO_BLOCK_COND:
	case RTD_GO_EV_GO_BLOCK_NET:
	case RTD_GO_EV_GO_SLEEP:
	case RTD_GO_EV_GO_SYS_BLOCK:
	case RTD_GO_EV_GO_BLOCK_GC:
		*g = evg;
		*init = (struct gstate){NOSEQ, G_RUNNING};
		*next = (struct gstate){NOSEQ, G_WAITING};
		break;
	case RTD_GO_EV_GO_SCHED:
	case RTD_GO_EV_GO_PREEMPT:
		*g = evg;
		*init = (struct gstate){NOSEQ, G_RUNNING};
		*next = (struct gstate){NOSEQ, G_RUNNABLE};
		break;
	case RTD_GO_EV_GO_UNBLOCK:
	case RTD_GO_EV_GO_SYS_EXIT:
		*g = a[0];
		*init = (struct gstate){a[1], G_WAITING};
		*next = (struct gstate){a[1] + 1, G_RUNNABLE};
		break;
	case RTD_GO_EV_GO_UNBLOCK_LOCAL:
	case RTD_GO_EV_GO_SYS_EXIT_LOCAL:
		*g = a[0];
		*init = (struct gstate){NOSEQ, G_WAITING};
		*next = (struct gstate){SEQINC, G_RUNNABLE};
		break;
	case RTD_GO_EV_GC_START:
		*g = GARBAGE;
		*init = (struct gstate){a[0], G_DEAD};
		*next = (struct gstate){a[0] + 1, G_DEAD};
		break;
	default:
		*g = UNORDERED;
		*init = *next = (struct gstate){0, 0};
	}
}

static bool ready(uint64_t g, const struct gstate *curr,
		  const struct gstate *init)
{
	return g == UNORDERED ||
	       ((init->seq == NOSEQ || init->seq == curr->seq) &&
		init->status == curr->status);
}

/* Does this event type take part in goroutine ordering (needs its args)? */
static bool needs_args(unsigned t)
{
	switch (t) {
	case RTD_GO_EV_GO_CREATE:
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LABEL:
	case RTD_GO_EV_GO_UNBLOCK:
	case RTD_GO_EV_GO_SYS_EXIT:
	case RTD_GO_EV_GO_UNBLOCK_LOCAL:
	case RTD_GO_EV_GO_SYS_EXIT_LOCAL:
	case RTD_GO_EV_GC_START:
		return true;
	}
	return false;
}

static void merge_sort_ts(const struct v1_ref *r, uint32_t *a, uint32_t *tmp,
			  size_t n)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t x = lo, y = mid, k = lo;
			while (x < mid && y < hi)
				tmp[k++] = r[a[y]].ts < r[a[x]].ts ? a[y++] : a[x++];
			while (x < mid)
				tmp[k++] = a[x++];
			while (y < hi)
				tmp[k++] = a[y++];
		}
		memcpy(a, tmp, n * sizeof(*a));
	}
}

/*
 * Stable sort of indices by their event's ts (sort.Stable). The input is
 * nearly sorted (only GoSysExit events moved back to their real time), so
 * split it into the greedy non-decreasing run A (kept in place) and the
 * rest B, sort B alone and merge. Ties go to A: an element lands in B only
 * because an earlier A element has a larger ts, so every A element with
 * an equal ts came before it in the input.
 */
static int sort_stable_ts(const struct v1_ref *r, uint32_t *a, size_t n)
{
	size_t i;
	for (i = 1; i < n && r[a[i - 1]].ts <= r[a[i]].ts; i++)
		;
	if (i >= n)
		return 0;
	size_t nb = 0;
	int64_t last = r[a[i - 1]].ts;
	for (size_t j = i; j < n; j++) {
		int64_t t = r[a[j]].ts;
		if (t < last)
			nb++;
		else
			last = t;
	}
	if (nb <= n / 4) {
		uint32_t *b = malloc(2 * nb * sizeof(*b));
		if (!b)
			return -ENOMEM;
		size_t na = i, k = 0;
		last = r[a[i - 1]].ts;
		for (size_t j = i; j < n; j++) {
			int64_t t = r[a[j]].ts;
			if (t < last)
				b[k++] = a[j];
			else {
				last = t;
				a[na++] = a[j];
			}
		}
		merge_sort_ts(r, b, b + nb, nb);
		/* merge from the back: on ties B's element goes last */
		size_t x = na, y = nb, w = n;
		while (y > 0) {
			if (x > 0 && r[a[x - 1]].ts > r[b[y - 1]].ts)
				a[--w] = a[--x];
			else
				a[--w] = b[--y];
		}
		free(b);
		return 0;
	}
	uint32_t *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	merge_sort_ts(r, a, tmp, n);
	free(tmp);
	return 0;
}

static int cmp_seq(const void *x, const void *y, void *ctx)
{
	const int64_t *seq = ctx;
	int64_t a = seq[*(const uint32_t *)x], b = seq[*(const uint32_t *)y];
	return a < b ? -1 : a > b;
}

static bool sorted_ts(const struct v1_ref *r, const uint32_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[a[i]].ts < r[a[i - 1]].ts)
			return false;
	return true;
}

static int time_order(rtd_gotrace_dec *d)
{
	return v1_fail(d, -RTD_E_GO_ORDER, 0, "time stamps out of order");
}

/* A frontier source: a P's runs of ref indices, or the CPU samples'
 * index list. */
struct batch {
	const struct v1_run *runs;
	size_t nr, ri;
	uint32_t k;
	const uint32_t *ev;
	size_t n, i;
	bool selected, cached;
	int64_t ts; /* the head's, cached with its transition */
	uint64_t g;
	struct gstate init, next;
};

static inline bool batch_done(const struct batch *b)
{
	return b->runs ? b->ri >= b->nr : b->i >= b->n;
}

static inline uint32_t batch_head(const struct batch *b)
{
	return b->runs ? b->runs[b->ri].start + b->k : b->ev[b->i];
}

static inline void batch_advance(struct batch *b)
{
	if (!b->runs)
		b->i++;
	else if (++b->k == b->runs[b->ri].n) {
		b->ri++;
		b->k = 0;
	}
}

static int order1007(rtd_gotrace_dec *d, size_t total)
{
	size_t nb = d->nprocs + 1;
	struct batch *b = calloc(nb, sizeof(*b));
	size_t *frontier = malloc(nb * sizeof(size_t));
	struct v1_tab gs;
	v1_tab_init(&gs, sizeof(struct gstate), 0);
	int rc = 0;
	const struct v1_ref *R = d->refs;
	if (!b || !frontier) {
		rc = v1_fail(d, -ENOMEM, 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d->nprocs; i++) {
		b[i].runs = d->procs[i].idx.r;
		b[i].nr = d->procs[i].idx.n;
	}
	b[nb - 1].ev = d->prof.i;
	b[nb - 1].n = d->prof.n;
	size_t nf = 0;
	bool unsorted = false;
	int64_t last_ts = 0;
	for (size_t pending = total; pending; pending--) {
		for (size_t i = 0; i < nb; i++) {
			if (b[i].selected || batch_done(&b[i]))
				continue;
			if (!b[i].cached) {
				/* the head's transition, computed once */
				const struct v1_ref *ev = &R[batch_head(&b[i])];
				uint64_t a[3] = {0, 0, 0};
				if (needs_args(ev->type))
					v1_ref_args(d, ev, a);
				transition_of(ev, rg(d, ev), a, &b[i].g, &b[i].init, &b[i].next);
				b[i].ts = ev->ts;
				b[i].cached = true;
			}
			struct gstate zero = {0, 0};
			const struct gstate *cur = &zero;
			if (b[i].g != UNORDERED) {
				const struct gstate *st = v1_tab_get(&gs, b[i].g, false, NULL);
				if (st)
					cur = st;
			}
			if (!ready(b[i].g, cur, &b[i].init))
				continue;
			frontier[nf++] = i;
			b[i].selected = true;
		}
		if (nf == 0) {
			rc = v1_fail(d, -RTD_E_GO_ORDER, 0,
				     "no consistent ordering of events possible");
			goto out;
		}
		/*
		 * Go sorts the frontier with sort.Sort, an insertion sort at
		 * this size (stable), takes [0] and moves the last entry to
		 * [0]. Equal timestamps are common, so keep exactly that
		 * array discipline: it decides which of two tied events
		 * comes first.
		 */
		for (size_t k = 1; k < nf; k++) {
			for (size_t j = k; j > 0; j--) {
				if (!(b[frontier[j]].ts < b[frontier[j - 1]].ts))
					break;
				size_t t = frontier[j];
				frontier[j] = frontier[j - 1];
				frontier[j - 1] = t;
			}
		}
		size_t bi = frontier[0];
		frontier[0] = frontier[--nf];
		uint32_t idx = batch_head(&b[bi]);
		batch_advance(&b[bi]);
		struct v1_ref *ev = &d->refs[idx];
		b[bi].selected = false;
		b[bi].cached = false;
		uint64_t g = b[bi].g;
		struct gstate init = b[bi].init, next = b[bi].next;
		/* Local events only served the ordering. */
		if (ev->type == RTD_GO_EV_GO_START_LOCAL)
			ev->type = RTD_GO_EV_GO_START;
		else if (ev->type == RTD_GO_EV_GO_UNBLOCK_LOCAL)
			ev->type = RTD_GO_EV_GO_UNBLOCK;
		else if (ev->type == RTD_GO_EV_GO_SYS_EXIT_LOCAL)
			ev->type = RTD_GO_EV_GO_SYS_EXIT;
		d->out[d->nout++] = idx;
		/* Go checks the merged order afterwards; same result, one
		 * walk over the records less */
		unsorted |= d->nout > 1 && ev->ts < last_ts;
		last_ts = ev->ts;
		if (g != UNORDERED) {
			bool created;
			struct gstate *cur = v1_tab_get(&gs, g, true, &created);
			if (!cur) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
			if (!ready(g, cur, &init)) {
				rc = v1_fail(d, -RTD_E_GO_ORDER, roff(ev),
					     "event sequences are broken (offset %llu)",
					     (unsigned long long)roff(ev));
				goto out;
			}
			if (next.seq == NOSEQ)
				next.seq = cur->seq;
			else if (next.seq == SEQINC)
				next.seq = cur->seq + 1;
			*cur = next;
		}
	}
	/* The per-P lists were taken over into out: release them early. */
	for (size_t i = 0; i < d->nprocs; i++) {
		free(d->procs[i].idx.r);
		memset(&d->procs[i].idx, 0, sizeof(d->procs[i].idx));
	}
	free(d->prof.i);
	memset(&d->prof, 0, sizeof(d->prof));
	if (unsorted) {
		rc = time_order(d);
		goto out;
	}
	/* GoSysExit gets the real exit time, then everything is re-sorted. */
	v1_tab_free(&gs);
	v1_tab_init(&gs, sizeof(int64_t), 0);
	for (size_t i = 0; i < d->nout; i++) {
		struct v1_ref *ev = &d->refs[d->out[i]];
		if (ev->type == RTD_GO_EV_GO_SYS_BLOCK ||
		    ev->type == RTD_GO_EV_GO_IN_SYSCALL) {
			int64_t *t = v1_tab_get(&gs, rg(d, ev), true, NULL);
			if (!t) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
			*t = ev->ts;
		} else if (ev->type == RTD_GO_EV_GO_SYS_EXIT) {
			uint64_t a[3];
			v1_ref_args(d, ev, a);
			int64_t ts = (int64_t)a[2];
			if (ts == 0)
				continue;
			int64_t *t = v1_tab_get(&gs, rg(d, ev), false, NULL);
			int64_t block = t ? *t : 0;
			if (block == 0) {
				rc = v1_fail(d, -RTD_E_GO_ORDER, roff(ev),
					     "stray syscall exit");
				goto out;
			}
			if (ts < block) {
				rc = time_order(d);
				goto out;
			}
			ev->ts = ts;
		}
	}
	if (sort_stable_ts(d->refs, d->out, d->nout) < 0)
		rc = v1_fail(d, -ENOMEM, 0, "out of memory");
out:
	v1_tab_free(&gs);
	free(b);
	free(frontier);
	return rc;
}

static int order1005(rtd_gotrace_dec *d)
{
	for (size_t i = 0; i < d->nprocs; i++) {
		for (size_t j = 0; j < d->procs[i].idx.n; j++) {
			const struct v1_run *run = &d->procs[i].idx.r[j];
			for (uint32_t k = 0; k < run->n; k++)
				d->out[d->nout++] = run->start + k;
		}
		free(d->procs[i].idx.r);
		memset(&d->procs[i].idx, 0, sizeof(d->procs[i].idx));
	}
	for (size_t i = 0; i < d->nout; i++) {
		struct v1_ref *ev = &d->refs[d->out[i]];
		if (ev->type == RTD_GO_EV_GO_SYS_EXIT) {
			uint64_t a[3];
			v1_ref_args(d, ev, a);
			d->seqs[d->out[i]] = (int64_t)a[1];
			if (a[2] != 0)
				ev->ts = (int64_t)a[2];
		}
	}
	qsort_r(d->out, d->nout, sizeof(uint32_t), cmp_seq, d->seqs);
	if (!sorted_ts(d->refs, d->out, d->nout))
		return time_order(d);
	return 0;
}

/* Go's removeFutile: drop futile wakeup sequences (unblock, start, block). */
struct futile_g {
	bool futile;
	size_t *idx;
	size_t n, cap;
};

static int remove_futile(rtd_gotrace_dec *d)
{
	struct v1_tab gs;
	int rc = 0;
	v1_tab_init(&gs, sizeof(struct futile_g), 0);
	for (size_t i = 0; i < d->nout; i++) {
		struct v1_ref *ev = &d->refs[d->out[i]];
		struct futile_g *g;
		uint64_t a[3];
		switch (ev->type) {
		case RTD_GO_EV_GO_UNBLOCK:
			v1_ref_args(d, ev, a);
			g = v1_tab_get(&gs, a[0], true, NULL);
			if (!g)
				goto nomem;
			g->n = 0;
			break;
		case RTD_GO_EV_GO_START:
		case RTD_GO_EV_GO_PREEMPT:
		case RTD_GO_EV_FUTILE_WAKEUP:
			g = v1_tab_get(&gs, rg(d, ev), true, NULL);
			if (!g)
				goto nomem;
			if (ev->type == RTD_GO_EV_FUTILE_WAKEUP)
				g->futile = true;
			break;
		case RTD_GO_EV_GO_BLOCK:
		case RTD_GO_EV_GO_BLOCK_SEND:
		case RTD_GO_EV_GO_BLOCK_RECV:
		case RTD_GO_EV_GO_BLOCK_SELECT:
		case RTD_GO_EV_GO_BLOCK_SYNC:
		case RTD_GO_EV_GO_BLOCK_COND:
			g = v1_tab_get(&gs, rg(d, ev), false, NULL);
			if (g) {
				if (g->futile) {
					ev->drop = 1;
					for (size_t k = 0; k < g->n; k++)
						d->refs[d->out[g->idx[k]]].drop = 1;
				}
				free(g->idx);
				v1_tab_del(&gs, rg(d, ev));
			}
			continue;
		default:
			continue;
		}
		if (g->n == g->cap) {
			size_t nc = g->cap ? g->cap * 2 : 4;
			size_t *ni = realloc(g->idx, nc * sizeof(*ni));
			if (!ni)
				goto nomem;
			g->idx = ni;
			g->cap = nc;
		}
		g->idx[g->n++] = i;
	}
	goto out;
nomem:
	rc = v1_fail(d, -ENOMEM, 0, "out of memory");
out:
	for (size_t i = 0; i < gs.cap; i++)
		if (gs.used[i] == 1)
			free(((struct futile_g *)(gs.vals + i * gs.vsz))->idx);
	v1_tab_free(&gs);
	return rc;
}

/* Go's postProcessTrace: the goroutine/P state machine. */
struct pp_g {
	int state;
	uint8_t ev_type; /* type of g.ev, 0 when nil */
	bool has_create, has_assist;
};
struct pp_p {
	bool running, has_stw, has_sweep;
	uint64_t g;
};
struct region {
	uint64_t task;
	const char *name;
};
struct pp_regions {
	struct region *r;
	size_t n, cap;
};

static const char *tname(unsigned t)
{
	return v1_descs[t].name;
}

#define PPFAIL(...)                                                            \
	do {                                                                   \
		rc = v1_fail(d, -RTD_E_GO_ORDER, roff(ev), __VA_ARGS__);        \
		goto out;                                                      \
	} while (0)
#define ULL(x) ((unsigned long long)(x))
#define LL(x) ((long long)(x))

static int post_process(rtd_gotrace_dec *d)
{
	struct v1_tab gs, ps, tasks, regions;
	int rc = 0;
	bool gc_active = false, stw_active = false;
	v1_tab_init(&gs, sizeof(struct pp_g), 0);
	v1_tab_init(&ps, sizeof(struct pp_p), 0);
	v1_tab_init(&tasks, 1, 0);
	v1_tab_init(&regions, sizeof(struct pp_regions), 0);
	struct pp_g *g0 = v1_tab_get(&gs, 0, true, NULL);
	if (!g0)
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	g0->state = G_RUNNING;
	for (size_t i = 0; i < d->nout; i++) {
		struct v1_ref *ev = &d->refs[d->out[i]];
		if (ev->drop)
			continue;
		uint64_t args[3] = {0, 0, 0};
		switch (ev->type) {
		case RTD_GO_EV_GO_CREATE:
		case RTD_GO_EV_GO_UNBLOCK:
		case RTD_GO_EV_USER_TASK_CREATE:
		case RTD_GO_EV_USER_TASK_END:
		case RTD_GO_EV_USER_REGION:
			v1_ref_args(d, ev, args);
			break;
		}

		struct pp_g *g = v1_tab_get(&gs, rg(d, ev), true, NULL);
		struct pp_p *p = v1_tab_get(&ps, (uint64_t)ev->p, true, NULL);
		if (!g || !p) {
			rc = v1_fail(d, -ENOMEM, 0, "out of memory");
			goto out;
		}
		/* Go copies g and p, works on the copies and stores them back
		 * at the end: a table insert below could move them, so do the
		 * same. */
		struct pp_g gc = *g;
		struct pp_p pc = *p;
		const uint8_t *gvals = gs.vals, *pvals = ps.vals;
		uint64_t pkey = (uint64_t)ev->p;
		unsigned t = ev->type;
#define CHECK_RUNNING(allow0)                                                  \
	do {                                                                   \
		if (gc.state != G_RUNNING)                                     \
			PPFAIL("g %llu is not running while %s (offset %llu, time %lld)", \
			       ULL(rg(d, ev)), tname(t), ULL(roff(ev)), LL(ev->ts)); \
		if (pc.g != rg(d, ev))                                             \
			PPFAIL("p %lld is not running g %llu while %s (offset %llu, time %lld)", \
			       LL(ev->p), ULL(rg(d, ev)), tname(t), ULL(roff(ev)), LL(ev->ts)); \
		if (!(allow0) && rg(d, ev) == 0)                                   \
			PPFAIL("g 0 did %s (offset %llu, time %lld)", tname(t), \
			       ULL(roff(ev)), LL(ev->ts));                      \
	} while (0)
		switch (t) {
		case RTD_GO_EV_PROC_START:
			if (pc.running)
				PPFAIL("p %lld is running before start (offset %llu, time %lld)",
				       LL(ev->p), ULL(roff(ev)), LL(ev->ts));
			pc.running = true;
			break;
		case RTD_GO_EV_PROC_STOP:
			if (!pc.running)
				PPFAIL("p %lld is not running before stop (offset %llu, time %lld)",
				       LL(ev->p), ULL(roff(ev)), LL(ev->ts));
			if (pc.g != 0)
				PPFAIL("p %lld is running a goroutine %llu during stop (offset %llu, time %lld)",
				       LL(ev->p), ULL(pc.g), ULL(roff(ev)), LL(ev->ts));
			pc.running = false;
			break;
		case RTD_GO_EV_GC_START:
			if (gc_active)
				PPFAIL("previous GC is not ended before a new one (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			gc_active = true;
			ev->p = RTD_GOTRACE_GC_P;
			break;
		case RTD_GO_EV_GC_DONE:
			if (!gc_active)
				PPFAIL("bogus GC end (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			gc_active = false;
			break;
		case RTD_GO_EV_GC_STW_START: {
			bool *stw = d->ver < 1010 ? &pc.has_stw : &stw_active;
			if (*stw)
				PPFAIL("previous STW is not ended before a new one (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			*stw = true;
			break;
		}
		case RTD_GO_EV_GC_STW_DONE: {
			bool *stw = d->ver < 1010 ? &pc.has_stw : &stw_active;
			if (!*stw)
				PPFAIL("bogus STW end (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			*stw = false;
			break;
		}
		case RTD_GO_EV_GC_SWEEP_START:
			if (pc.has_sweep)
				PPFAIL("previous sweeping is not ended before a new one (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			pc.has_sweep = true;
			break;
		case RTD_GO_EV_GC_MARK_ASSIST_START:
			if (gc.has_assist)
				PPFAIL("previous mark assist is not ended before a new one (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			gc.has_assist = true;
			break;
		case RTD_GO_EV_GC_MARK_ASSIST_DONE:
			gc.has_assist = false;
			break;
		case RTD_GO_EV_GC_SWEEP_DONE:
			if (!pc.has_sweep)
				PPFAIL("bogus sweeping end (offset %llu, time %lld)",
				       ULL(roff(ev)), LL(ev->ts));
			pc.has_sweep = false;
			break;
		case RTD_GO_EV_GO_WAITING:
		case RTD_GO_EV_GO_IN_SYSCALL:
			if (gc.state != G_RUNNABLE)
				PPFAIL("g %llu is not runnable before %s (offset %llu, time %lld)",
				       ULL(rg(d, ev)),
				       t == RTD_GO_EV_GO_WAITING ? "EvGoWaiting" : "EvGoInSyscall",
				       ULL(roff(ev)), LL(ev->ts));
			gc.state = G_WAITING;
			gc.ev_type = (uint8_t)t;
			break;
		case RTD_GO_EV_GO_CREATE: {
			CHECK_RUNNING(true);
			bool created;
			struct pp_g *ng = v1_tab_get(&gs, args[0], true, &created);
			if (!ng) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
			if (!created)
				PPFAIL("g %llu already exists (offset %llu, time %lld)",
				       ULL(args[0]), ULL(roff(ev)), LL(ev->ts));
			ng->state = G_RUNNABLE;
			ng->ev_type = (uint8_t)t;
			ng->has_create = true;
			break;
		}
		case RTD_GO_EV_GO_START:
		case RTD_GO_EV_GO_START_LABEL:
			if (gc.state != G_RUNNABLE)
				PPFAIL("g %llu is not runnable before start (offset %llu, time %lld)",
				       ULL(rg(d, ev)), ULL(roff(ev)), LL(ev->ts));
			if (pc.g != 0)
				PPFAIL("p %lld is already running g %llu while start g %llu (offset %llu, time %lld)",
				       LL(ev->p), ULL(pc.g), ULL(rg(d, ev)), ULL(roff(ev)), LL(ev->ts));
			gc.state = G_RUNNING;
			pc.g = rg(d, ev);
			gc.has_create = false;
			gc.ev_type = 0;
			break;
		case RTD_GO_EV_GO_END:
		case RTD_GO_EV_GO_STOP:
			CHECK_RUNNING(false);
			gc.state = G_DEAD;
			pc.g = 0;
			if (t == RTD_GO_EV_GO_END) {
				struct pp_regions *rgn = v1_tab_get(&regions, rg(d, ev), false, NULL);
				if (rgn) {
					free(rgn->r);
					v1_tab_del(&regions, rg(d, ev));
				}
			}
			break;
		case RTD_GO_EV_GO_SCHED:
		case RTD_GO_EV_GO_PREEMPT:
			CHECK_RUNNING(false);
			gc.state = G_RUNNABLE;
			pc.g = 0;
			gc.ev_type = (uint8_t)t;
			break;
		case RTD_GO_EV_GO_UNBLOCK: {
			if (gc.state != G_RUNNING)
				PPFAIL("g %llu is not running while unpark (offset %llu, time %lld)",
				       ULL(rg(d, ev)), ULL(roff(ev)), LL(ev->ts));
			if (ev->p != RTD_GOTRACE_TIMER_P && pc.g != rg(d, ev))
				PPFAIL("p %lld is not running g %llu while unpark (offset %llu, time %lld)",
				       LL(ev->p), ULL(rg(d, ev)), ULL(roff(ev)), LL(ev->ts));
			struct pp_g *g1 = args[0] == rg(d, ev) ? &gc
					  : v1_tab_get(&gs, args[0], true, NULL);
			if (!g1) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
			if (g1->state != G_WAITING)
				PPFAIL("g %llu is not waiting before unpark (offset %llu, time %lld)",
				       ULL(args[0]), ULL(roff(ev)), LL(ev->ts));
			if (g1->ev_type == RTD_GO_EV_GO_BLOCK_NET &&
			    ev->p != RTD_GOTRACE_TIMER_P)
				ev->p = RTD_GOTRACE_NETPOLL_P;
			g1->state = G_RUNNABLE;
			g1->ev_type = (uint8_t)t;
			/* The table may have moved: refresh our copies' homes. */
			break;
		}
		case RTD_GO_EV_GO_SYSCALL:
			CHECK_RUNNING(false);
			gc.ev_type = (uint8_t)t;
			break;
		case RTD_GO_EV_GO_SYS_BLOCK:
			CHECK_RUNNING(false);
			gc.state = G_WAITING;
			pc.g = 0;
			break;
		case RTD_GO_EV_GO_SYS_EXIT:
			if (gc.state != G_WAITING)
				PPFAIL("g %llu is not waiting during syscall exit (offset %llu, time %lld)",
				       ULL(rg(d, ev)), ULL(roff(ev)), LL(ev->ts));
			gc.state = G_RUNNABLE;
			gc.ev_type = (uint8_t)t;
			break;
		case RTD_GO_EV_GO_SLEEP:
		case RTD_GO_EV_GO_BLOCK:
		case RTD_GO_EV_GO_BLOCK_SEND:
		case RTD_GO_EV_GO_BLOCK_RECV:
		case RTD_GO_EV_GO_BLOCK_SELECT:
		case RTD_GO_EV_GO_BLOCK_SYNC:
		case RTD_GO_EV_GO_BLOCK_COND:
		case RTD_GO_EV_GO_BLOCK_NET:
		case RTD_GO_EV_GO_BLOCK_GC:
			CHECK_RUNNING(false);
			gc.state = G_WAITING;
			gc.ev_type = (uint8_t)t;
			pc.g = 0;
			break;
		case RTD_GO_EV_USER_TASK_CREATE: {
			bool created;
			if (!v1_tab_get(&tasks, args[0], true, &created)) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
			if (!created)
				PPFAIL("task id conflicts (id:%llu) at offset %llu",
				       ULL(args[0]), ULL(roff(ev)));
			break;
		}
		case RTD_GO_EV_USER_TASK_END:
			v1_tab_del(&tasks, args[0]);
			break;
		case RTD_GO_EV_USER_REGION: {
			uint64_t mode = args[1];
			const char *name = v1_str_get(d, args[2], NULL);
			if (!name)
				name = "";
			struct pp_regions *rgn = v1_tab_get(&regions, rg(d, ev), mode == 0, NULL);
			if (mode == 0) {
				if (!rgn) {
					rc = v1_fail(d, -ENOMEM, 0, "out of memory");
					goto out;
				}
				if (rgn->n == rgn->cap) {
					size_t nc = rgn->cap ? rgn->cap * 2 : 4;
					struct region *nr = realloc(rgn->r, nc * sizeof(*nr));
					if (!nr) {
						rc = v1_fail(d, -ENOMEM, 0, "out of memory");
						goto out;
					}
					rgn->r = nr;
					rgn->cap = nc;
				}
				rgn->r[rgn->n++] = (struct region){args[0], name};
			} else if (mode == 1) {
				if (rgn && rgn->n > 0) {
					struct region *s = &rgn->r[rgn->n - 1];
					if (s->task != args[0] || strcmp(s->name, name) != 0)
						PPFAIL("misuse of region in goroutine %llu: span end at offset %llu (task %llu, %s) when the inner-most active span start event is task %llu, %s",
						       ULL(rg(d, ev)), ULL(roff(ev)), ULL(args[0]), name,
						       ULL(s->task), s->name);
					if (--rgn->n == 0) {
						free(rgn->r);
						v1_tab_del(&regions, rg(d, ev));
					}
				}
			} else {
				PPFAIL("invalid user region mode %llu at offset %llu",
				       ULL(mode), ULL(roff(ev)));
			}
			break;
		}
		}
		/* Store the copies back; look them up again only when an
		 * insert above moved the tables (or a fake P was set). */
		if (gs.vals != gvals || ps.vals != pvals || (uint64_t)ev->p != pkey) {
			g = v1_tab_get(&gs, rg(d, ev), true, NULL);
			p = v1_tab_get(&ps, (uint64_t)ev->p, true, NULL);
			if (!g || !p) {
				rc = v1_fail(d, -ENOMEM, 0, "out of memory");
				goto out;
			}
		}
		*g = gc;
		*p = pc;
	}
out:
	for (size_t i = 0; i < regions.cap; i++)
		if (regions.used[i] == 1)
			free(((struct pp_regions *)(regions.vals + i * regions.vsz))->r);
	v1_tab_free(&gs);
	v1_tab_free(&ps);
	v1_tab_free(&tasks);
	v1_tab_free(&regions);
	return rc;
}

int v1_order(rtd_gotrace_dec *d)
{
	size_t total = d->nrefs;
	if (!d->any_events)
		return v1_fail(d, -RTD_E_GO_ORDER, 0, "trace is empty");
	if (d->freq == 0)
		return v1_fail(d, -RTD_E_GO_ORDER, 0, "no EvFrequency event");
	d->out = malloc((total ? total : 1) * sizeof(*d->out));
	if (!d->out)
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	d->nout = 0;
	/* CPU samples are re-sorted by the time the signal handler took. */
	if (sort_stable_ts(d->refs, d->prof.i, d->prof.n) < 0)
		return v1_fail(d, -ENOMEM, 0, "out of memory");
	int rc = d->ver < 1007 ? order1005(d) : order1007(d, total);
	if (rc < 0)
		return rc;
	if (d->nout) {
		int64_t min = d->refs[d->out[0]].ts;
		double freq = 1e9 / (double)d->freq;
		for (size_t i = 0; i < d->nout; i++) {
			struct v1_ref *ev = &d->refs[d->out[i]];
			ev->ts = f2i((double)(int64_t)((uint64_t)ev->ts - (uint64_t)min) * freq);
			if (ev->type == RTD_GO_EV_GO_UNBLOCK &&
			    rtd_map_get(&d->timer_gs, rg(d, ev), NULL))
				ev->p = RTD_GOTRACE_TIMER_P;
			if (ev->type == RTD_GO_EV_GO_SYS_EXIT)
				ev->p = RTD_GOTRACE_SYSCALL_P;
		}
	}
	if ((rc = remove_futile(d)) < 0)
		return rc;
	if ((rc = post_process(d)) < 0)
		return rc;
	d->ordered_ready = true;
	return 0;
}
