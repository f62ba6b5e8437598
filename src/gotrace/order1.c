/* SPDX-License-Identifier: MIT */
/*
 * order1.c - ordered mode for the old format, streamed: Go 1.19's
 * order1007 (the frontier merge of per-P batches by goroutine sequence
 * numbers), the GoSysExit time fix-up and stable re-sort, parseEvents'
 * time conversion, removeFutile and postProcessTrace's validation, with
 * Go's results and messages (src/internal/trace/order.go, parser.go).
 *
 * Go materialises every event and runs each step over the whole list.
 * Here each step is a stage events flow through as they are asked for:
 * the per-P streams are read again from the kept input (an index pass
 * only noted where each P's batches start), so the memory beyond the
 * input is the P cursors, the goroutine tables and two windows:
 *  - the re-sort window: a GoSysExit goes back to its real exit time, at
 *    most D ticks (the index pass measured D), so an event may go out once
 *    the merge is D ticks past it; a heap on (time, merged position) gives
 *    sort.Stable's order;
 *  - the futile-wakeup window, only for goroutines with FutileWakeup
 *    events (the runtime stopped writing them in Go 1.10): their wakeup
 *    sequences are held until the block that decides their fate.
 * Go 1.5/1.6 traces are ordered by a global sequence number (order1005):
 * those keep one small ref per event and are sorted in memory.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/*
 * How an event moves its goroutine's sequence (Go 1.19's transition()),
 * one named rule per type: whose goroutine it is, and its (sequence,
 * status) before and after. The sequences are read from the event's
 * arguments; NOSEQ matches any, SEQINC is "one more than now".
 */
enum { TG_NONE, TG_EVG, TG_A0, TG_GC };  /* the goroutine: none, the event's, a[0], GC's */
enum { SQ_0, SQ_1, SQ_2, SQ_A0, SQ_A0_1, SQ_A1, SQ_A1_1, SQ_ANY, SQ_INC }; /* a[i]_1: a[i] + 1 */
struct transition {
	uint8_t g;
	uint8_t init_seq, init_status;
	uint8_t next_seq, next_status;
};
#define T(type, ...) [RTD_GO_EV_##type] = {__VA_ARGS__}
static const struct transition transitions[RTD_GO_EV_COUNT] = {
	T(GO_CREATE, TG_A0, SQ_0, G_DEAD, SQ_1, G_RUNNABLE),
	T(GO_WAITING, TG_EVG, SQ_1, G_RUNNABLE, SQ_2, G_WAITING),
	T(GO_IN_SYSCALL, TG_EVG, SQ_1, G_RUNNABLE, SQ_2, G_WAITING),
	T(GO_START, TG_EVG, SQ_A1, G_RUNNABLE, SQ_A1_1, G_RUNNING),
	T(GO_START_LABEL, TG_EVG, SQ_A1, G_RUNNABLE, SQ_A1_1, G_RUNNING),
	T(GO_START_LOCAL, TG_EVG, SQ_ANY, G_RUNNABLE, SQ_INC, G_RUNNING),
	T(GO_SCHED, TG_EVG, SQ_ANY, G_RUNNING, SQ_ANY, G_RUNNABLE),
	T(GO_PREEMPT, TG_EVG, SQ_ANY, G_RUNNING, SQ_ANY, G_RUNNABLE),
	T(GO_UNBLOCK, TG_A0, SQ_A1, G_WAITING, SQ_A1_1, G_RUNNABLE),
	T(GO_SYS_EXIT, TG_A0, SQ_A1, G_WAITING, SQ_A1_1, G_RUNNABLE),
	T(GO_UNBLOCK_LOCAL, TG_A0, SQ_ANY, G_WAITING, SQ_INC, G_RUNNABLE),
	T(GO_SYS_EXIT_LOCAL, TG_A0, SQ_ANY, G_WAITING, SQ_INC, G_RUNNABLE),
	T(GC_START, TG_GC, SQ_A0, G_DEAD, SQ_A0_1, G_DEAD),
};
#undef T
/* every type that parks its goroutine (V1K_PARK: GoBlock*, GoSleep,
 * GoSysBlock) has this one */
static const struct transition park = {TG_EVG, SQ_ANY, G_RUNNING, SQ_ANY, G_WAITING};

static inline __attribute__((always_inline)) uint64_t seq_of(uint8_t rule, const uint64_t *a)
{
	switch (rule) {
	case SQ_0: return 0;
	case SQ_1: return 1;
	case SQ_2: return 2;
	case SQ_A0: return a[0];
	case SQ_A0_1: return a[0] + 1;
	case SQ_A1: return a[1];
	case SQ_A1_1: return a[1] + 1;
	case SQ_INC: return SEQINC;
	default: return NOSEQ;
	}
}

static inline __attribute__((always_inline)) void transition_of(unsigned type, uint64_t evg, const uint64_t *a,
			  uint64_t *g, struct gstate *init, struct gstate *next)
{
	const struct transition *t = v1_class(type) & V1K_PARK ? &park
				     : type < RTD_GO_EV_COUNT ? &transitions[type] : NULL;
	if (!t || t->g == TG_NONE) {
		*g = UNORDERED;
		*init = *next = (struct gstate){0, 0};
		return;
	}
	*g = t->g == TG_EVG ? evg : t->g == TG_A0 ? a[0] : GARBAGE;
	*init = (struct gstate){seq_of(t->init_seq, a), t->init_status};
	*next = (struct gstate){seq_of(t->next_seq, a), t->next_status};
}

static bool ready(uint64_t g, const struct gstate *curr,
		  const struct gstate *init)
{
	return g == UNORDERED ||
	       ((init->seq == NOSEQ || init->seq == curr->seq) &&
		init->status == curr->status);
}

/*
 * A goroutine table: ids are small in practice, so those under GT_DENSE
 * live in an array indexed by id (grown as ids come), the rest in a hash
 * table. Nothing is deleted. A get that creates may move every entry.
 */
#define GT_DENSE (1u << 16)
struct gtab {
	uint8_t *v, *used;
	size_t cap, vsz;
	struct rtd_vmap big;
};

static void gtab_init(struct gtab *t, size_t vsz)
{
	memset(t, 0, sizeof(*t));
	t->vsz = vsz;
	rtd_vmap_init(&t->big, vsz, 0);
}

static void gtab_free(struct gtab *t)
{
	free(t->v);
	free(t->used);
	rtd_vmap_free(&t->big);
}

static void *gtab_slow(struct gtab *t, uint64_t key, bool create, bool *created)
{
	if (key >= GT_DENSE)
		return rtd_vmap_get(&t->big, key, create, created, NULL);
	if (key >= t->cap) {
		if (!create)
			return NULL;
		size_t nc = t->cap ? t->cap : 64;
		while (nc <= key)
			nc *= 2;
		uint8_t *nv = realloc(t->v, nc * t->vsz);
		if (!nv)
			return NULL;
		t->v = nv;
		uint8_t *nu = realloc(t->used, nc);
		if (!nu)
			return NULL;
		t->used = nu;
		memset(t->used + t->cap, 0, nc - t->cap);
		t->cap = nc;
	}
	if (created)
		*created = !t->used[key];
	if (!t->used[key]) {
		if (!create)
			return NULL;
		t->used[key] = 1;
		memset(t->v + key * t->vsz, 0, t->vsz);
	}
	return t->v + key * t->vsz;
}

static inline void *gtab_get_sz(struct gtab *t, uint64_t key, bool create,
				bool *created, size_t vsz)
{
	if (key < t->cap && t->used[key]) {
		if (created)
			*created = false;
		return t->v + key * vsz;
	}
	return gtab_slow(t, key, create, created);
}
/* the entry of @key in @t, whose values are @type (its size known at the
 * call: the address is a shift, not a multiplication) */
#define gtab_get(t, key, create, created, type)                                \
	((type *)gtab_get_sz(t, key, create, created, sizeof(type)))

/* A source of the frontier merge: a P's batches, read again from the kept
 * input, or the CPU samples (their own list, sorted by time). */
/*
 * A window on the input read again through the source: [off, off + len).
 * It holds at least 64 KiB past the event read (or up to the end of what
 * is read), more when an event is larger (a log message may be 1 MB).
 */
struct rbuf {
	uint8_t *p;
	size_t cap, len;
	uint64_t off;
};

struct cursor {
	const struct v1_span *span; /* the P's batches */
	size_t nb, bi;
	uint64_t pos, end; /* in the batch bi - 1 (pos >= end: between) */
	bool at_start;
	struct rbuf rb;
	/* pos's byte in what can be read (the kept input or rb) and the end
	 * of that, or NULL when pos lies outside it */
	const uint8_t *fp, *fend;
	struct v1_pstate st;
	int32_t p;
	bool samples, done, has_head, selected;
	size_t si;
	struct v1_ev head;
	uint64_t tg; /* the head's transition */
	struct gstate init, next;
	/* tg's state as frontier_add found it (NULL: none yet), valid while
	 * no state was made since (gs_made == the ord's) */
	struct gstate *gst;
	uint64_t gs_made;
};

/* removeFutile's per-goroutine state: the wakeup sequence (positions in
 * the window) that a futile wakeup condemns. */
struct futile_g {
	bool futile;
	uint64_t *pos;
	size_t n, cap;
};

/* postProcessTrace's state. */
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
	uint64_t name_id; /* its string */
};
/* a goroutine's open regions: the entry and its room stay, empty, until
 * its GoEnd (no allocation per region) */
struct pp_regions {
	struct region *r;
	size_t n, cap;
};
struct pp_state {
	struct gtab gs, ps;
	struct rtd_vmap tasks, regions;
	bool gc_active, stw_active;
};

/* A FIFO of events (grows; positions count from the start). */
struct ring {
	struct v1_ev *a;
	size_t cap;
	uint64_t head, tail;
};

static struct v1_ev *ring_at(struct ring *q, uint64_t pos)
{
	return &q->a[pos & (q->cap - 1)];
}

/* The ring is full: double it (out of line: the common path stays small). */
static __attribute__((noinline)) struct v1_ev *ring_grow(struct ring *q)
{
	size_t nc = q->cap ? q->cap * 2 : 256;
	struct v1_ev *na = malloc(nc * sizeof(*na));
	if (!na)
		return NULL;
	for (uint64_t k = q->head; k < q->tail; k++)
		na[k & (nc - 1)] = *ring_at(q, k);
	free(q->a);
	q->a = na;
	q->cap = nc;
	return ring_at(q, q->tail);
}

/* Room for one more at the tail (not counted until tail++). */
static inline struct v1_ev *ring_slot(struct ring *q)
{
	if (q->tail - q->head == q->cap)
		return ring_grow(q);
	return ring_at(q, q->tail);
}

static int ring_push(struct ring *q, const struct v1_ev *e)
{
	struct v1_ev *slot = ring_slot(q);
	if (!slot)
		return -ENOMEM;
	*slot = *e;
	q->tail++;
	return 0;
}

struct v1_ord {
	bool by_seq; /* Go 1.5/1.6: from the sorted refs */
	struct cursor *cur;
	size_t ncur;
	/* Go's frontier, with each entry's time at hand for the sort */
	struct fent {
		int64_t ts;
		size_t i;
	} *frontier;
	size_t nf;
	uint64_t moved; /* the goroutine whose state the last step moved */
	/* what the next step must look at: the cursor it took (SIZE_MAX
	 * before the first step: all), and those whose head was not ready
	 * (pend), of which only the ones waiting on 'moved' can be now */
	size_t taken;
	uint32_t *pend, *cand;
	size_t npend;
	struct gtab gs;      /* merge: goroutine -> struct gstate */
	uint64_t gs_made;    /* states made in gs (each may move them all) */
	struct rtd_vmap block; /* goroutine -> time of its last syscall block */
	int64_t last_ts;     /* of the last merged event */
	uint64_t mpos;
	bool merge_done;
	struct v1_ev scratch;
	struct rbuf erb; /* for CPU samples and events read again to go out */
	/* the re-sort window: events in merged order (so sorted), and a heap
	 * on (ts, mpos) of the GoSysExit events that moved back */
	struct ring win;
	struct v1_ev *heap;
	size_t nh, caph;
	/* time conversion */
	bool have_min;
	int64_t min;
	double ns_per_tick;
	/* the futile-wakeup window: a FIFO, events leave from its front */
	bool gate;
	struct rtd_vmap fg; /* goroutine -> struct futile_g */
	struct ring q;
	bool sorted_done;
	struct pp_state pp;
	/* Go runs each step over the whole trace before the next one: of
	 * two errors it reports the earlier step's. cls: the step of the last
	 * error (0 merge, 1 its time check, 2 GoSysExit fix-up, 3 postProcess);
	 * upto: the last step merge_next runs. */
	int cls, upto;
};

static int oom(rtd_gotrace_dec *d)
{
	return gtd_fail(d, -ENOMEM, 0, "out of memory");
}

static int time_order(rtd_gotrace_dec *d)
{
	return gtd_fail(d, -RTD_E_GO_ORDER, 0, "time stamps out of order");
}

#define RBUF_MIN (64u << 10)

/*
 * The event at @off (which lies before @end) read again: from the kept
 * input, or through the source into @b. @adv: its size. 1, or <0.
 */
static int read_at(rtd_gotrace_dec *d, struct rbuf *b, uint64_t off,
		   uint64_t end, struct v1_raw *raw, size_t *adv)
{
	rtd_rd r;
	int rc;
	if (!d->src) {
		rd_init(&r, d->in.data + (off - d->base), d->in.len - (size_t)(off - d->base));
		rc = v1_read_raw(d, &r, off, raw);
		*adv = rd_off(&r);
		return rc > 0 ? 1 : rc < 0 ? rc
			: gtd_fail(d, -RTD_E_TRUNCATED, off, "event at offset %llu is cut short",
				   (unsigned long long)off);
	}
	size_t need = RBUF_MIN;
	for (;;) {
		uint64_t wend = b->off + b->len;
		if (off < b->off || off >= wend || (wend < end && wend - off < need)) {
			/* slide the window: 4 times what is needed, up to @end */
			uint64_t n = end - off < 4 * (uint64_t)need ? end - off : 4 * (uint64_t)need;
			if (n > b->cap) {
				uint8_t *np = realloc(b->p, (size_t)n);
				if (!np)
					return gtd_fail(d, -ENOMEM, off, "out of memory");
				b->p = np;
				b->cap = (size_t)n;
			}
			int64_t got = d->src(b->p, (size_t)n, off, d->src_ctx);
			if (got < 0)
				return gtd_fail(d, (int)got, off, "reading the input again at offset %llu: %s",
						(unsigned long long)off, rtd_strerror((int)got));
			if ((uint64_t)got < n)
				return gtd_fail(d, -RTD_E_TRUNCATED, off,
						"reading the input again at offset %llu: %lld bytes, not %llu (did it change?)",
						(unsigned long long)off, (long long)got,
						(unsigned long long)n);
			b->off = off;
			b->len = (size_t)n;
			wend = off + n;
		}
		rd_init(&r, b->p + (off - b->off), (size_t)(wend - off));
		d->peek = wend < end;
		rc = v1_read_raw(d, &r, off, raw);
		d->peek = false;
		if (rc != 0) {
			*adv = rd_off(&r);
			return rc;
		}
		if (wend >= end)
			return gtd_fail(d, -RTD_E_TRUNCATED, off, "event at offset %llu is cut short",
					(unsigned long long)off);
		need = (size_t)(wend - off) * 2; /* a larger event: a larger window */
	}
}

int v1_reread(rtd_gotrace_dec *d, uint64_t off, struct v1_raw *raw)
{
	size_t adv;
	return read_at(d, &d->ord->erb, off, d->total, raw, &adv);
}

/* Where the cursor's position can be read fast (c->fp, c->fend). */
static void cur_map(const rtd_gotrace_dec *d, struct cursor *c)
{
	uint64_t off = c->pos;
	if (!d->src) {
		c->fp = d->in.data + (off - d->base);
		c->fend = d->in.data + d->in.len;
	} else if (off >= c->rb.off && off - c->rb.off < c->rb.len) {
		c->fp = c->rb.p + (off - c->rb.off);
		c->fend = c->rb.p + c->rb.len;
	} else {
		c->fp = c->fend = NULL;
	}
}

/* Read a P's next in-stream event into its head: 1, 0 when the P has no
 * more, <0 on error. */
static int cur_fill(rtd_gotrace_dec *d, struct v1_ord *o, struct cursor *c)
{
	struct v1_ev *e = &c->head;
	struct v1_raw raw;
	size_t adv;
	int rc;
	if (c->samples) {
		if (c->si >= d->nsamples)
			return 0;
		const struct v1_sample *s = &d->samples[c->si++];
		if ((rc = read_at(d, &o->erb, s->off, d->total, &raw, &adv)) < 0)
			return rc;
		*e = (struct v1_ev){.ts = s->ts, .off = s->off,
				    .type = RTD_GO_EV_CPU_SAMPLE};
		v1_ev_wire(d, &raw, e);
		e->p = (int32_t)v1_ev_args(e)[1];
		e->g = v1_ev_args(e)[2];
		return 1;
	}
	for (;;) {
		if (c->pos >= c->end) {
			if (c->bi >= c->nb)
				return 0;
			c->pos = c->span[c->bi].off;
			c->end = c->span[c->bi++].end;
			c->at_start = true;
			cur_map(d, c);
			continue;
		}
		uint64_t off = c->pos;
		bool start = c->at_start;
		c->at_start = false;
		/* the common event straight into the head, else the checked read */
		unsigned typ = 0, narg = 0;
		size_t n = 0;
		if (c->fp && c->fend - c->fp >= 40)
			n = v1_fast_event(d, c->fp, 40, &typ, &narg, e->w, V1F_ZERO);
		const uint64_t *wire = e->w;
		if (n) {
			c->pos += n;
			c->fp += n;
		} else {
			if ((rc = read_at(d, &c->rb, off, c->end, &raw, &adv)) < 0)
				return rc;
			c->pos += adv;
			cur_map(d, c);
			typ = raw.typ;
			wire = raw.args;
		}
		if (typ == RTD_GO_EV_BATCH) {
			if (start)
				c->st.ts = (int64_t)wire[1];
			continue;
		}
		if (v1_meta_type(typ))
			continue;
		int64_t seq;
		v1_pstep(d->ver, &c->st, typ, wire, &e->ts, &seq, &e->g);
		if (typ == RTD_GO_EV_CPU_SAMPLE)
			continue; /* merged from the sample list */
		e->type = (uint8_t)typ;
		e->off = off;
		e->p = c->p;
		e->seq = 0;
		e->drop = e->held = 0;
		if (n) { /* the fast read cleared past the event's own */
			e->nw = (uint8_t)narg;
			e->argoff = 1;
		} else {
			v1_ev_wire(d, &raw, e);
		}
		return 1;
	}
}

/* One step of Go's order1007 loop: the next event of the merged order. */
/*
 * Go sorts the frontier with sort.Sort, an insertion sort at this size
 * (stable), takes [0] and moves the last entry to [0]. Equal timestamps
 * are common, so keep exactly that array discipline: it decides which of
 * two tied events comes first. What the insertion sort makes of it, in
 * fewer steps: f[1..kept) is still sorted from the last step and f[0]
 * (the entry moved there, usually the latest) goes before the first
 * entry not earlier than it; each entry appended since (f[kept..n)) goes
 * after every entry not later than it. A frontier has an entry per P.
 */
static void frontier_sort(struct fent *f, size_t kept, size_t n)
{
	if (n <= 4) { /* up to four Ps: the plain insertion sort is cheapest */
		for (size_t k = 1; k < n; k++) {
			struct fent key = f[k];
			size_t j = k;
			for (; j > 0 && key.ts < f[j - 1].ts; j--)
				f[j] = f[j - 1];
			f[j] = key;
		}
		return;
	}
	if (kept > 1) {
		struct fent x = f[0];
		size_t q = kept;
		while (q > 1 && f[q - 1].ts >= x.ts)
			q--;
		memmove(f, f + 1, (q - 1) * sizeof(*f));
		f[q - 1] = x;
	}
	for (size_t k = kept ? kept : 1; k < n; k++) {
		struct fent key = f[k];
		size_t lo = 0, hi = k; /* the first entry later than key */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (f[mid].ts <= key.ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(f + lo + 1, f + lo, (k - lo) * sizeof(*f));
		f[lo] = key;
	}
}

/*
 * The cursors Go's loop over the batches would find ready this step, in
 * the order of that loop (it appends them to the frontier in that order,
 * which decides ties): the one the last step took, with its next event,
 * and those of the pending ones whose goroutine the last step moved.
 * Whatever is not ready is pending.
 */
static int frontier_add(rtd_gotrace_dec *d, struct v1_ord *o)
{
	static const struct gstate zero = {0, 0};
	size_t nc = 0;
	if (o->taken == SIZE_MAX) { /* the first step: every cursor */
		for (size_t i = 0; i < o->ncur; i++)
			o->cand[nc++] = (uint32_t)i;
	} else {
		o->cand[nc++] = (uint32_t)o->taken;
		for (size_t k = 0; k < o->npend;) {
			uint32_t i = o->pend[k];
			if (o->cur[i].tg != o->moved) {
				k++;
				continue;
			}
			o->pend[k] = o->pend[--o->npend];
			size_t j = nc++; /* in cursor order */
			for (; j > 0 && o->cand[j - 1] > i; j--)
				o->cand[j] = o->cand[j - 1];
			o->cand[j] = i;
		}
	}
	for (size_t k = 0; k < nc; k++) {
		size_t i = o->cand[k];
		struct cursor *c = &o->cur[i];
		if (!c->has_head) {
			int rc = cur_fill(d, o, c);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				c->done = true;
				continue;
			}
			c->has_head = true;
			transition_of(c->head.type, c->head.g, v1_ev_args(&c->head),
				      &c->tg, &c->init, &c->next);
		}
		const struct gstate *cur = &zero;
		if (c->tg != UNORDERED) {
			struct gstate *st = gtab_get(&o->gs, c->tg, false, NULL, struct gstate);
			c->gst = st;
			c->gs_made = o->gs_made;
			if (st)
				cur = st;
		}
		if (!ready(c->tg, cur, &c->init)) {
			o->pend[o->npend++] = (uint32_t)i;
			continue;
		}
		o->frontier[o->nf++] = (struct fent){c->head.ts, i};
		c->selected = true;
	}
	return 0;
}

/* The next merged event (1, 0 at the end, <0): *outp is the taken
 * cursor's head, valid until the next call (no copy of the event). */
static int merge_next(rtd_gotrace_dec *d, struct v1_ord *o, struct v1_ev **outp)
{
	size_t kept = o->nf; /* f[1..kept) sorted: see frontier_sort */
	o->cls = 0;
	int rc = frontier_add(d, o);
	if (rc < 0)
		return rc;
	if (o->nf == 0) {
		for (size_t i = 0; i < o->ncur; i++)
			if (!o->cur[i].done)
				return gtd_fail(d, -RTD_E_GO_ORDER, 0,
						"no consistent ordering of events possible");
		return 0;
	}
	struct fent *f = o->frontier;
	frontier_sort(f, kept, o->nf);
	size_t ci = f[0].i;
	struct cursor *c = &o->cur[ci];
	o->taken = ci;
	f[0] = f[--o->nf];
	c->has_head = c->selected = false;
	struct v1_ev *out = *outp = &c->head;
	/* Local events only served the ordering. */
	if (out->type == RTD_GO_EV_GO_START_LOCAL)
		out->type = RTD_GO_EV_GO_START;
	else if (out->type == RTD_GO_EV_GO_UNBLOCK_LOCAL)
		out->type = RTD_GO_EV_GO_UNBLOCK;
	else if (out->type == RTD_GO_EV_GO_SYS_EXIT_LOCAL)
		out->type = RTD_GO_EV_GO_SYS_EXIT;
	if (c->tg != UNORDERED) {
		/* the state frontier_add looked up, unless one was made since */
		struct gstate *cur = c->gst;
		if (!cur || c->gs_made != o->gs_made) {
			bool made;
			cur = gtab_get(&o->gs, c->tg, true, &made, struct gstate);
			if (!cur)
				return oom(d);
			o->gs_made += made;
		}
		if (!ready(c->tg, cur, &c->init))
			return gtd_fail(d, -RTD_E_GO_ORDER, out->off,
					"event sequences are broken (offset %llu)",
					(unsigned long long)out->off);
		struct gstate next = c->next;
		if (next.seq == NOSEQ)
			next.seq = cur->seq;
		else if (next.seq == SEQINC)
			next.seq = cur->seq + 1;
		*cur = next;
	}
	o->moved = c->tg;
	if (o->upto < 1)
		return 1; /* finding an earlier step's error only */
	/* Go checks the whole merged order afterwards */
	if (o->mpos > 0 && out->ts < o->last_ts) {
		o->cls = 1;
		return time_order(d);
	}
	o->last_ts = out->ts;
	out->mpos = o->mpos++;
	if (o->upto < 2)
		return 1;
	/* GoSysExit gets the real exit time (then everything is re-sorted). */
	o->cls = 2;
	if (out->type == RTD_GO_EV_GO_SYS_BLOCK ||
	    out->type == RTD_GO_EV_GO_IN_SYSCALL) {
		int64_t *t = rtd_vmap_get(&o->block, out->g, true, NULL, NULL);
		if (!t)
			return oom(d);
		*t = out->ts;
	} else if (out->type == RTD_GO_EV_GO_SYS_EXIT && v1_ev_args(out)[2] != 0) {
		int64_t ts = (int64_t)v1_ev_args(out)[2];
		const int64_t *t = rtd_vmap_get(&o->block, out->g, false, NULL, NULL);
		int64_t block = t ? *t : 0;
		if (block == 0)
			return gtd_fail(d, -RTD_E_GO_ORDER, out->off, "stray syscall exit");
		if (ts < block)
			return time_order(d);
		out->ts = ts;
	}
	return 1;
}

static bool ev_before(const struct v1_ev *a, const struct v1_ev *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->mpos < b->mpos);
}

static int heap_push(struct v1_ord *o, const struct v1_ev *e)
{
	if (gtd_push((void **)&o->heap, &o->nh, &o->caph, sizeof(*e), e) < 0)
		return -ENOMEM;
	size_t i = o->nh - 1;
	while (i > 0 && ev_before(e, &o->heap[(i - 1) / 2])) {
		o->heap[i] = o->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->heap[i] = *e;
	return 0;
}

static void heap_pop(struct v1_ord *o, struct v1_ev *out)
{
	*out = o->heap[0];
	struct v1_ev last = o->heap[--o->nh];
	size_t i = 0, n = o->nh;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= n)
			break;
		if (k + 1 < n && ev_before(&o->heap[k + 1], &o->heap[k]))
			k++;
		if (!ev_before(&o->heap[k], &last))
			break;
		o->heap[i] = o->heap[k];
		i = k;
	}
	if (n)
		o->heap[i] = last;
}

/* Merge the next event into the window's next slot (not counted yet):
 * as merge_next. */
static inline int merge_slot(rtd_gotrace_dec *d, struct v1_ord *o,
			     struct v1_ev **slot)
{
	struct v1_ev *e;
	int rc = merge_next(d, o, &e);
	if (rc <= 0)
		return rc;
	if (!(*slot = ring_slot(&o->win)))
		return oom(d);
	**slot = *e;
	return rc;
}

/* Where the merged event in the window's next slot goes (@rc: what
 * merge_next returned, 0 at its end): 0 or -ENOMEM. */
static int merged(rtd_gotrace_dec *d, struct v1_ord *o, struct v1_ev *slot, int rc)
{
	if (rc == 0)
		o->merge_done = true;
	else if (slot->ts != o->last_ts) /* a GoSysExit that moved */
		return heap_push(o, slot) < 0 ? oom(d) : 0;
	else
		o->win.tail++;
	return 0;
}

/*
 * The next event in sort.Stable order of the merged, fixed-up events. An
 * event may leave the window once every later one is known to sort after
 * it: later merged events are no earlier than the last merged time, and a
 * GoSysExit moves back at most sysexit_shift ticks.
 */
static int sorted_next(rtd_gotrace_dec *d, struct v1_ord *o, struct v1_ev **out)
{
	struct v1_ev *e = &o->scratch;
	*out = e;
	if (o->by_seq) {
		if (d->iout >= d->nout)
			return 0;
		uint32_t idx = d->out[d->iout++];
		const struct v1_ref *r = &d->refs[idx];
		*e = (struct v1_ev){.ts = r->ts, .g = rg(d, r), .off = roff(r),
				    .p = r->p, .type = r->type, .seq = d->seqs[idx]};
		rtd_rd rd;
		struct v1_raw raw;
		rd_init(&rd, d->in.data + e->off, d->in.len - e->off);
		if (v1_read_raw(d, &rd, e->off, &raw) <= 0) /* read once already */
			return d->err ? d->err : gtd_fail(d, -RTD_E_TRUNCATED, e->off, "truncated");
		v1_ev_wire(d, &raw, e);
		return 1;
	}
	struct ring *w = &o->win;
	struct v1_ev *slot;
	int rc;
	/* No GoSysExit moves back (the common trace): an event merged into
	 * an empty window leaves at once, as the loop below would let it. */
	if (d->sysexit_shift == 0 && w->head == w->tail && o->nh == 0 &&
	    !o->merge_done && d->max_window > 0) {
		rc = merge_next(d, o, &slot);
		if (rc > 0 && slot->ts == o->last_ts) {
			*out = slot; /* valid until the next call */
			return 1;
		}
		if (rc > 0) {
			struct v1_ev *e1 = slot;
			if (!(slot = ring_slot(w)))
				return oom(d);
			*slot = *e1;
		}
		if (rc < 0 || (rc = merged(d, o, slot, rc)) < 0)
			return rc;
	}
	for (;;) {
		/* the first of the two sorted sources */
		struct v1_ev *first = NULL;
		if (w->head < w->tail)
			first = ring_at(w, w->head);
		if (o->nh > 0 && (!first || ev_before(&o->heap[0], first)))
			first = &o->heap[0];
		if (first) {
			int64_t bound;
			if (o->merge_done ||
			    (!__builtin_sub_overflow(o->last_ts, d->sysexit_shift, &bound) &&
			     first->ts <= bound)) {
				if (first == o->heap) {
					heap_pop(o, e);
				} else { /* valid until the next call */
					*out = first;
					w->head++;
				}
				return 1;
			}
		} else if (o->merge_done) {
			return 0;
		}
		/* merge straight into the window */
		if (w->tail - w->head + o->nh >= d->max_window)
			return gtd_fail(d, -RTD_E_CAP, first ? first->off : 0,
					"ordered mode holds more than %u events waiting for a GoSysExit that may move %lld ticks back (from offset %llu): use raw mode",
					d->max_window, (long long)d->sysexit_shift,
					(unsigned long long)(first ? first->off : 0));
		rc = merge_slot(d, o, &slot);
		if (rc < 0 || (rc = merged(d, o, slot, rc)) < 0)
			return rc;
	}
}

/* parseEvents' last steps: ticks to ns from the first event, the fake Ps
 * of timer unblocks and syscall exits. */
static void convert(rtd_gotrace_dec *d, struct v1_ord *o, struct v1_ev *e)
{
	if (!o->have_min) {
		o->min = e->ts;
		o->have_min = true;
	}
	e->ts = f2i((double)(int64_t)((uint64_t)e->ts - (uint64_t)o->min) *
		    o->ns_per_tick);
	if (e->type == RTD_GO_EV_GO_UNBLOCK && d->timer_gs.count &&
	    rtd_map_get(&d->timer_gs, e->g, NULL))
		e->p = RTD_GOTRACE_TIMER_P;
	if (e->type == RTD_GO_EV_GO_SYS_EXIT)
		e->p = RTD_GOTRACE_SYSCALL_P;
}

static void fg_release(struct v1_ord *o, struct futile_g *g, bool drop)
{
	for (size_t k = 0; k < g->n; k++) {
		struct v1_ev *e = ring_at(&o->q, g->pos[k]);
		e->held = 0;
		e->drop |= drop;
	}
	g->n = 0;
}

/* Put an event into the window, holding what a later futile verdict may
 * drop. Only a goroutine's own FutileWakeup condemns its wakeups, so only
 * the goroutines the index pass saw with one are followed. */
static int gate_push(rtd_gotrace_dec *d, struct v1_ord *o, struct v1_ev *e)
{
	bool wakeup = false;
	switch (e->type) {
	case RTD_GO_EV_GO_UNBLOCK:
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_PREEMPT:
	case RTD_GO_EV_FUTILE_WAKEUP:
		wakeup = true;
		break;
	case RTD_GO_EV_GO_BLOCK:
	case RTD_GO_EV_GO_BLOCK_SEND:
	case RTD_GO_EV_GO_BLOCK_RECV:
	case RTD_GO_EV_GO_BLOCK_SELECT:
	case RTD_GO_EV_GO_BLOCK_SYNC:
	case RTD_GO_EV_GO_BLOCK_COND:
		break;
	default:
		return ring_push(&o->q, e) < 0 ? oom(d) : 0;
	}
	uint64_t key = e->type == RTD_GO_EV_GO_UNBLOCK ? v1_ev_args(e)[0] : e->g;
	if (!rtd_map_get(&d->futile_gs, key, NULL))
		return ring_push(&o->q, e) < 0 ? oom(d) : 0;
	struct futile_g *g = rtd_vmap_get(&o->fg, key, wakeup, NULL, NULL);
	if (wakeup) {
		if (!g)
			return oom(d);
		if (e->type == RTD_GO_EV_GO_UNBLOCK)
			fg_release(o, g, false); /* a new wakeup sequence */
		if (e->type == RTD_GO_EV_FUTILE_WAKEUP)
			g->futile = true;
		if (gtd_push((void **)&g->pos, &g->n, &g->cap, sizeof(*g->pos), &o->q.tail) < 0)
			return oom(d);
		e->held = 1;
	} else if (g) { /* the block decides */
		e->drop = g->futile;
		fg_release(o, g, g->futile);
		free(g->pos);
		rtd_vmap_del(&o->fg, key);
	}
	return ring_push(&o->q, e) < 0 ? oom(d) : 0;
}

#define ULL(x) ((unsigned long long)(x))
#define LL(x) ((long long)(x))

static const char *region_name(const rtd_gotrace_dec *d, uint64_t id)
{
	const char *s = gtd_str_get(d, id, NULL);
	return s ? s : "";
}

static const char *tname(unsigned t)
{
	return v1_descs[t].name;
}

/*
 * Go's postProcessTrace for one event, the goroutine/P state machine: a
 * handler per event type, on the event, the state of its goroutine and
 * its P. Go works on copies of g and p and stores them back at the end.
 * Here they are changed in place: nothing reads g or p after a table
 * insert could move them (GoCreate's and GoUnblock's), and an unblock of
 * itself fails before it could differ.
 */
struct pp_ctx {
	rtd_gotrace_dec *d;
	struct pp_state *pp;
	struct v1_ev *ev;
	struct pp_g *g;
	struct pp_p *p;
};

static int pp_fail(const struct pp_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int pp_fail(const struct pp_ctx *x, const char *fmt, ...)
{
	char msg[sizeof(x->d->errmsg)]; /* truncated where gtd_fail would */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gtd_fail(x->d, -RTD_E_GO_ORDER, x->ev->off, "%s", msg);
}

/* The event's goroutine runs on its P (and is not g 0 unless @allow0). */
static inline __attribute__((always_inline)) int pp_running(const struct pp_ctx *x, bool allow0)
{
	const struct v1_ev *ev = x->ev;
	const char *t = tname(ev->type);
	if (x->g->state != G_RUNNING)
		return pp_fail(x, "g %llu is not running while %s (offset %llu, time %lld)",
			       ULL(ev->g), t, ULL(ev->off), LL(ev->ts));
	if (x->p->g != ev->g)
		return pp_fail(x, "p %lld is not running g %llu while %s (offset %llu, time %lld)",
			       LL(ev->p), ULL(ev->g), t, ULL(ev->off), LL(ev->ts));
	if (!allow0 && ev->g == 0)
		return pp_fail(x, "g 0 did %s (offset %llu, time %lld)", t, ULL(ev->off),
			       LL(ev->ts));
	return 0;
}

/* A flag that a start sets and an end clears: "previous X is not ended
 * before a new one", "bogus X end". */
static int pp_range(const struct pp_ctx *x, bool *on, bool start, const char *what)
{
	if (*on == start)
		return start ? pp_fail(x, "previous %s is not ended before a new one (offset %llu, time %lld)",
				       what, ULL(x->ev->off), LL(x->ev->ts))
			     : pp_fail(x, "bogus %s end (offset %llu, time %lld)", what,
				       ULL(x->ev->off), LL(x->ev->ts));
	*on = start;
	return 0;
}

static int pp_proc_start(struct pp_ctx *x)
{
	if (x->p->running)
		return pp_fail(x, "p %lld is running before start (offset %llu, time %lld)",
			       LL(x->ev->p), ULL(x->ev->off), LL(x->ev->ts));
	x->p->running = true;
	return 0;
}

static int pp_proc_stop(struct pp_ctx *x)
{
	if (!x->p->running)
		return pp_fail(x, "p %lld is not running before stop (offset %llu, time %lld)",
			       LL(x->ev->p), ULL(x->ev->off), LL(x->ev->ts));
	if (x->p->g != 0)
		return pp_fail(x, "p %lld is running a goroutine %llu during stop (offset %llu, time %lld)",
			       LL(x->ev->p), ULL(x->p->g), ULL(x->ev->off), LL(x->ev->ts));
	x->p->running = false;
	return 0;
}

static int pp_gc_start(struct pp_ctx *x)
{
	int rc = pp_range(x, &x->pp->gc_active, true, "GC");
	if (rc == 0)
		x->ev->p = RTD_GOTRACE_GC_P;
	return rc;
}

/* Before Go 1.10 a stop-the-world is per P. */
static bool *pp_stw(struct pp_ctx *x)
{
	return x->d->ver < 1010 ? &x->p->has_stw : &x->pp->stw_active;
}

/* GoWaiting, GoInSyscall: a goroutine already blocked when tracing began. */
static int pp_go_waiting(struct pp_ctx *x)
{
	if (x->g->state != G_RUNNABLE)
		return pp_fail(x, "g %llu is not runnable before %s (offset %llu, time %lld)",
			       ULL(x->ev->g),
			       x->ev->type == RTD_GO_EV_GO_WAITING ? "EvGoWaiting" : "EvGoInSyscall",
			       ULL(x->ev->off), LL(x->ev->ts));
	x->g->state = G_WAITING;
	x->g->ev_type = x->ev->type;
	return 0;
}

static int pp_go_create(struct pp_ctx *x)
{
	int rc = pp_running(x, true);
	if (rc < 0)
		return rc;
	bool created;
	uint64_t id = v1_ev_args(x->ev)[0];
	struct pp_g *ng = gtab_get(&x->pp->gs, id, true, &created, struct pp_g);
	if (!ng)
		return gtd_fail(x->d, -ENOMEM, 0, "out of memory");
	if (!created)
		return pp_fail(x, "g %llu already exists (offset %llu, time %lld)", ULL(id),
			       ULL(x->ev->off), LL(x->ev->ts));
	ng->state = G_RUNNABLE;
	ng->ev_type = x->ev->type;
	ng->has_create = true;
	return 0;
}

static inline __attribute__((always_inline)) int pp_go_start(struct pp_ctx *x)
{
	const struct v1_ev *ev = x->ev;
	if (x->g->state != G_RUNNABLE)
		return pp_fail(x, "g %llu is not runnable before start (offset %llu, time %lld)",
			       ULL(ev->g), ULL(ev->off), LL(ev->ts));
	if (x->p->g != 0)
		return pp_fail(x, "p %lld is already running g %llu while start g %llu (offset %llu, time %lld)",
			       LL(ev->p), ULL(x->p->g), ULL(ev->g), ULL(ev->off), LL(ev->ts));
	x->g->state = G_RUNNING;
	x->p->g = ev->g;
	x->g->has_create = false;
	x->g->ev_type = 0;
	return 0;
}

/* The running goroutine leaves its P as @state (GoEnd, GoStop: dead;
 * GoSched, GoPreempt: runnable; the blocks and sleeps, GoSysBlock:
 * waiting), noting the event that took it off when @note. */
static inline __attribute__((always_inline)) int pp_go_off(struct pp_ctx *x, int state, bool note)
{
	int rc = pp_running(x, false);
	if (rc < 0)
		return rc;
	x->g->state = state;
	x->p->g = 0;
	if (note)
		x->g->ev_type = x->ev->type;
	return 0;
}

static int pp_go_end(struct pp_ctx *x)
{
	int rc = pp_go_off(x, G_DEAD, false);
	if (rc < 0 || x->ev->type != RTD_GO_EV_GO_END)
		return rc;
	struct pp_regions *rgn = rtd_vmap_get(&x->pp->regions, x->ev->g, false, NULL, NULL);
	if (rgn) {
		free(rgn->r);
		rtd_vmap_del(&x->pp->regions, x->ev->g);
	}
	return 0;
}

static inline __attribute__((always_inline)) int pp_go_unblock(struct pp_ctx *x)
{
	struct v1_ev *ev = x->ev;
	if (x->g->state != G_RUNNING)
		return pp_fail(x, "g %llu is not running while unpark (offset %llu, time %lld)",
			       ULL(ev->g), ULL(ev->off), LL(ev->ts));
	if (ev->p != RTD_GOTRACE_TIMER_P && x->p->g != ev->g)
		return pp_fail(x, "p %lld is not running g %llu while unpark (offset %llu, time %lld)",
			       LL(ev->p), ULL(ev->g), ULL(ev->off), LL(ev->ts));
	uint64_t id = v1_ev_args(ev)[0];
	struct pp_g *g1 = id == ev->g ? x->g : gtab_get(&x->pp->gs, id, true, NULL, struct pp_g);
	if (!g1)
		return gtd_fail(x->d, -ENOMEM, 0, "out of memory");
	if (g1->state != G_WAITING)
		return pp_fail(x, "g %llu is not waiting before unpark (offset %llu, time %lld)",
			       ULL(id), ULL(ev->off), LL(ev->ts));
	if (g1->ev_type == RTD_GO_EV_GO_BLOCK_NET && ev->p != RTD_GOTRACE_TIMER_P)
		ev->p = RTD_GOTRACE_NETPOLL_P;
	g1->state = G_RUNNABLE;
	g1->ev_type = ev->type;
	return 0;
}

static int pp_go_sys_exit(struct pp_ctx *x)
{
	if (x->g->state != G_WAITING)
		return pp_fail(x, "g %llu is not waiting during syscall exit (offset %llu, time %lld)",
			       ULL(x->ev->g), ULL(x->ev->off), LL(x->ev->ts));
	x->g->state = G_RUNNABLE;
	x->g->ev_type = x->ev->type;
	return 0;
}

static int pp_task_create(struct pp_ctx *x)
{
	bool created;
	uint64_t id = v1_ev_args(x->ev)[0];
	if (!rtd_vmap_get(&x->pp->tasks, id, true, &created, NULL))
		return oom(x->d);
	if (!created)
		return pp_fail(x, "task id conflicts (id:%llu) at offset %llu", ULL(id),
			       ULL(x->ev->off));
	return 0;
}

/* UserRegion: a goroutine's stack of regions (mode 0 starts one, 1 ends). */
static int pp_region(struct pp_ctx *x)
{
	/* Go compares the names; equal ids have equal names */
	const struct v1_ev *ev = x->ev;
	const uint64_t *a = v1_ev_args(ev);
	uint64_t mode = a[1], id = a[2];
	struct pp_regions *rgn = rtd_vmap_get(&x->pp->regions, ev->g, mode == 0, NULL, NULL);
	if (mode == 0) {
		if (!rgn)
			return gtd_fail(x->d, -ENOMEM, 0, "out of memory");
		struct region r = {a[0], id};
		return gtd_push((void **)&rgn->r, &rgn->n, &rgn->cap, sizeof(r), &r) < 0
		       ? oom(x->d) : 0;
	}
	if (mode != 1)
		return pp_fail(x, "invalid user region mode %llu at offset %llu", ULL(mode),
			       ULL(ev->off));
	if (!rgn || rgn->n == 0)
		return 0;
	const struct region *s = &rgn->r[rgn->n - 1];
	if (s->task != a[0] || (s->name_id != id && strcmp(region_name(x->d, s->name_id),
							   region_name(x->d, id)) != 0))
		return pp_fail(x, "misuse of region in goroutine %llu: span end at offset %llu (task %llu, %s) when the inner-most active span start event is task %llu, %s",
			       ULL(ev->g), ULL(ev->off), ULL(a[0]), region_name(x->d, id),
			       ULL(s->task), region_name(x->d, s->name_id));
	rgn->n--; /* the entry keeps its room until GoEnd */
	return 0;
}

/* The small handlers of pp_handlers[]. */
static int pp_gc_done(struct pp_ctx *x)
{
	return pp_range(x, &x->pp->gc_active, false, "GC");
}
static int pp_stw_start(struct pp_ctx *x)
{
	return pp_range(x, pp_stw(x), true, "STW");
}
static int pp_stw_done(struct pp_ctx *x)
{
	return pp_range(x, pp_stw(x), false, "STW");
}
static int pp_sweep_start(struct pp_ctx *x)
{
	return pp_range(x, &x->p->has_sweep, true, "sweeping");
}
static int pp_sweep_done(struct pp_ctx *x)
{
	return pp_range(x, &x->p->has_sweep, false, "sweeping");
}
static int pp_assist_start(struct pp_ctx *x)
{
	return pp_range(x, &x->g->has_assist, true, "mark assist");
}
static int pp_assist_done(struct pp_ctx *x)
{
	x->g->has_assist = false;
	return 0;
}
static inline __attribute__((always_inline)) int pp_go_sched(struct pp_ctx *x)
{
	return pp_go_off(x, G_RUNNABLE, true);
}
static int pp_go_syscall(struct pp_ctx *x)
{
	int rc = pp_running(x, false);
	if (rc == 0)
		x->g->ev_type = x->ev->type;
	return rc;
}
static int pp_go_sys_block(struct pp_ctx *x)
{
	return pp_go_off(x, G_WAITING, false);
}
static inline __attribute__((always_inline)) int pp_go_park(struct pp_ctx *x)
{
	return pp_go_off(x, G_WAITING, true);
}
static int pp_task_end(struct pp_ctx *x)
{
	rtd_vmap_del(&x->pp->tasks, v1_ev_args(x->ev)[0]);
	return 0;
}

/* The handler of each type that changes state (the others change none);
 * the types that park their goroutine (V1K_PARK) all go to pp_go_park,
 * but GoSysBlock, whose goroutine waits without a stack to check. */
#define H(type, fn) [RTD_GO_EV_##type] = fn
static int (*const pp_handlers[RTD_GO_EV_COUNT])(struct pp_ctx *) = {
	H(PROC_START, pp_proc_start),
	H(PROC_STOP, pp_proc_stop),
	H(GC_START, pp_gc_start),
	H(GC_DONE, pp_gc_done),
	H(GC_STW_START, pp_stw_start),
	H(GC_STW_DONE, pp_stw_done),
	H(GC_SWEEP_START, pp_sweep_start),
	H(GC_SWEEP_DONE, pp_sweep_done),
	H(GC_MARK_ASSIST_START, pp_assist_start),
	H(GC_MARK_ASSIST_DONE, pp_assist_done),
	H(GO_WAITING, pp_go_waiting),
	H(GO_IN_SYSCALL, pp_go_waiting),
	H(GO_CREATE, pp_go_create),
	H(GO_START, pp_go_start),
	H(GO_START_LABEL, pp_go_start),
	H(GO_END, pp_go_end),
	H(GO_STOP, pp_go_end),
	H(GO_SCHED, pp_go_sched),
	H(GO_PREEMPT, pp_go_sched),
	H(GO_UNBLOCK, pp_go_unblock),
	H(GO_SYSCALL, pp_go_syscall),
	H(GO_SYS_BLOCK, pp_go_sys_block),
	H(GO_SYS_EXIT, pp_go_sys_exit),
	H(USER_TASK_CREATE, pp_task_create),
	H(USER_TASK_END, pp_task_end),
	H(USER_REGION, pp_region),
};
#undef H

static int pp_dispatch(struct pp_ctx *x)
{
	unsigned t = x->ev->type;
	/* the most frequent handlers inline (a call each through the table
	 * was ~1.5% of 'cat --ordered'), the others through it */
	switch (t) {
	case RTD_GO_EV_GO_START:
		return pp_go_start(x);
	case RTD_GO_EV_GO_SCHED:
		return pp_go_sched(x);
	case RTD_GO_EV_GO_BLOCK_RECV:
		return pp_go_park(x);
	case RTD_GO_EV_GO_UNBLOCK:
		return pp_go_unblock(x);
	}
	if (t == RTD_GO_EV_GO_SYS_BLOCK || !(v1_class(t) & V1K_PARK))
		return t < RTD_GO_EV_COUNT && pp_handlers[t] ? pp_handlers[t](x) : 0;
	return pp_go_park(x);
}

/* Go's postProcessTrace for one event. */
static int pp_event(rtd_gotrace_dec *d, struct pp_state *pp, struct v1_ev *ev)
{
	struct pp_ctx x = {d, pp, ev, gtab_get(&pp->gs, ev->g, true, NULL, struct pp_g),
			   gtab_get(&pp->ps, (uint64_t)(int64_t)ev->p, true, NULL, struct pp_p)};
	if (!x.g || !x.p)
		return oom(d);
	int32_t pkey = ev->p;
	int rc = pp_dispatch(&x);
	if (rc < 0)
		return rc;
	if (ev->p != pkey) { /* a fake P: Go stores p there */
		struct pp_p pv = *x.p;
		struct pp_p *np = gtab_get(&pp->ps, (uint64_t)(int64_t)ev->p, true, NULL, struct pp_p);
		if (!np)
			return oom(d);
		*np = pv;
	}
	return 0;
}

/*
 * An error of step @cls: before it is reported, run the earlier steps over
 * the rest of the trace, as Go would have; an error of theirs wins.
 */
static int verdict(rtd_gotrace_dec *d, struct v1_ord *o, int rc, int cls)
{
	while (cls > 0 && !o->by_seq && rc != -ENOMEM) {
		char msg[sizeof(d->errmsg)];
		uint64_t off = d->erroff;
		memcpy(msg, d->errmsg, sizeof(msg));
		d->err = 0;
		struct v1_ev *e;
		int r;
		o->upto = cls - 1;
		while ((r = merge_next(d, o, &e)) > 0)
			;
		if (r >= 0 || r == -ENOMEM) { /* the first error stands */
			memcpy(d->errmsg, msg, sizeof(msg));
			d->err = rc;
			d->erroff = off;
			break;
		}
		rc = r;
		cls = o->cls;
	}
	return rc;
}

int v1_order_take(rtd_gotrace_dec *d, struct v1_ev **ep)
{
	struct v1_ord *o = d->ord;
	struct v1_ev *e;
	int rc;
	for (;;) {
		if (o->gate) {
			if (o->q.head < o->q.tail &&
			    (!ring_at(&o->q, o->q.head)->held || o->sorted_done)) {
				o->scratch = *ring_at(&o->q, o->q.head++);
				e = &o->scratch;
				if (e->drop)
					continue;
				break;
			}
			if (o->sorted_done)
				return 0;
		}
		rc = sorted_next(d, o, &e);
		if (rc < 0)
			return verdict(d, o, rc, o->cls);
		if (rc == 0) {
			if (!o->gate)
				return 0;
			o->sorted_done = true; /* what is still held is kept */
			continue;
		}
		convert(d, o, e);
		if (!o->gate)
			break;
		if ((rc = gate_push(d, o, e)) < 0)
			return rc;
	}
	if ((rc = pp_event(d, &o->pp, e)) < 0)
		return verdict(d, o, rc, 3);
	*ep = e;
	return 1;
}

int v1_order_next(rtd_gotrace_dec *d, struct rtd_gotrace_event *out)
{
	struct v1_ev *e;
	int rc = v1_order_take(d, &e);
	return rc <= 0 ? rc : v1_emit(d, e, out);
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

/* Stable sort of the CPU samples by time (they arrive nearly sorted). */
static int sort_samples(struct v1_sample *a, size_t n)
{
	size_t i;
	for (i = 1; i < n && a[i - 1].ts <= a[i].ts; i++)
		;
	if (i >= n)
		return 0;
	struct v1_sample *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t x = lo, y = mid, k = lo;
			while (x < mid && y < hi)
				tmp[k++] = a[y].ts < a[x].ts ? a[y++] : a[x++];
			while (x < mid)
				tmp[k++] = a[x++];
			while (y < hi)
				tmp[k++] = a[y++];
		}
		memcpy(a, tmp, n * sizeof(*a));
	}
	free(tmp);
	return 0;
}

void v1_order_free(rtd_gotrace_dec *d)
{
	struct v1_ord *o = d->ord;
	if (!o)
		return;
	for (size_t i = 0; i < o->ncur; i++)
		free(o->cur[i].rb.p);
	free(o->cur);
	free(o->erb.p);
	free(o->frontier);
	free(o->pend);
	free(o->cand);
	gtab_free(&o->gs);
	rtd_vmap_free(&o->block);
	free(o->heap);
	for (size_t i = 0; i < o->fg.cap; i++)
		if (o->fg.used[i] == 1)
			free(((struct futile_g *)(o->fg.vals + i * o->fg.vsz))->pos);
	rtd_vmap_free(&o->fg);
	free(o->q.a);
	free(o->win.a);
	struct rtd_vmap *rg_ = &o->pp.regions;
	for (size_t i = 0; i < rg_->cap; i++)
		if (rg_->used[i] == 1)
			free(((struct pp_regions *)(rg_->vals + i * rg_->vsz))->r);
	gtab_free(&o->pp.gs);
	gtab_free(&o->pp.ps);
	rtd_vmap_free(&o->pp.tasks);
	rtd_vmap_free(&o->pp.regions);
	free(o);
	d->ord = NULL;
}

int v1_order(rtd_gotrace_dec *d)
{
	if (!d->any_events)
		/* a header and nothing whole after it: cut short */
		return gtd_fail(d, -RTD_E_TRUNCATED, d->fed, "trace is empty");
	if (d->freq == 0)
		/* the runtime writes it at the end, with the stacks: the
		 * trace was cut short (Go's message after ours) */
		return gtd_fail(d, -RTD_E_TRUNCATED, d->fed, "no EvFrequency event");
	struct v1_ord *o = calloc(1, sizeof(*o));
	if (!o)
		return oom(d);
	d->ord = o;
	o->ns_per_tick = 1e9 / (double)d->freq;
	o->upto = 2;
	o->gate = d->futile_gs.count > 0;
	gtab_init(&o->gs, sizeof(struct gstate));
	rtd_vmap_init(&o->block, sizeof(int64_t), 0);
	rtd_vmap_init(&o->fg, sizeof(struct futile_g), 0);
	gtab_init(&o->pp.gs, sizeof(struct pp_g));
	gtab_init(&o->pp.ps, sizeof(struct pp_p));
	rtd_vmap_init(&o->pp.tasks, 1, 0);
	rtd_vmap_init(&o->pp.regions, sizeof(struct pp_regions), 0);
	struct pp_g *g0 = gtab_get(&o->pp.gs, 0, true, NULL, struct pp_g);
	if (!g0)
		return oom(d);
	g0->state = G_RUNNING;
	if (d->ver < 1007) {
		o->by_seq = true;
		d->out = malloc((d->nrefs ? d->nrefs : 1) * sizeof(*d->out));
		if (!d->out)
			return oom(d);
		d->nout = 0;
		return order1005(d);
	}
	if (sort_samples(d->samples, d->nsamples) < 0)
		return oom(d);
	o->cur = calloc(d->nprocs + 1, sizeof(*o->cur));
	o->frontier = malloc((d->nprocs + 1) * sizeof(*o->frontier));
	o->pend = malloc((d->nprocs + 1) * sizeof(*o->pend));
	o->cand = malloc((d->nprocs + 1) * sizeof(*o->cand));
	if (!o->cur || !o->frontier || !o->pend || !o->cand)
		return oom(d);
	o->ncur = d->nprocs + 1;
	o->moved = UNORDERED;
	o->taken = SIZE_MAX;
	for (size_t i = 0; i < d->nprocs; i++) {
		o->cur[i].span = d->procs[i].bspan;
		o->cur[i].nb = d->procs[i].nbspan;
		o->cur[i].p = (int32_t)d->procs[i].p;
	}
	o->cur[d->nprocs].samples = true;
	return 0;
}
