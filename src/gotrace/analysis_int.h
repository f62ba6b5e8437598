/* SPDX-License-Identifier: MIT */
/*
 * analysis_int.h - what the Go trace analyses share inside the library:
 * a table of u64 keys to fixed-size values, an interner for names and
 * one for stacks (shared by the state tracker and the analyses).
 */
#ifndef RTD_GOTRACE_ANALYSIS_INT_H
#define RTD_GOTRACE_ANALYSIS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "rtdiag/goanalysis.h"

/* ---- names ---------------------------------------------------------------- */

/* Interned strings: one copy each, valid while the interner lives. */
struct ga_strs {
	rtd_strmap m;
};
void ga_strs_init(struct ga_strs *s);
void ga_strs_free(struct ga_strs *s);
/* NULL when out of memory or past RTD_GOAN_MAX_STRINGS. */
const char *ga_intern(struct ga_strs *s, const char *str, size_t len);

/* ---- stacks --------------------------------------------------------------- */

struct ga_frame {
	uint64_t pc, line;
	const char *fn, *file;
};

struct ga_stacks {
	struct ga_strs *strs;
	/* frames, deduplicated by PC (the first symbol seen wins, as in Go's
	 * pprof builder) */
	struct rtd_vmap frame_of_pc; /* pc -> uint32 index + 1 */
	struct ga_frame *frames;
	size_t nframes, capframes;
	/* stacks: frame indices in one arena, leaf first */
	uint32_t *arena;
	size_t narena, caparena;
	struct ga_stk {
		uint64_t hash;
		size_t off;
		uint32_t n;
	} *stk; /* [0] unused: id 0 is "no stack" */
	size_t nstk, capstk;
	uint32_t *slots; /* open addressing over stack ids by hash */
	size_t nslots;
	/* the trace's stack ids of the current generation -> ours: by index
	 * below GA_SMALL_IDS (ours + 1, 0: not yet), else hashed */
#define GA_SMALL_IDS (1u << 16)
	uint32_t *small;
	size_t nsmall;
	struct rtd_vmap cache;
	uint64_t cache_gen;
	/* rtd_gostate_stack()'s view */
	struct rtd_goframe *view;
	size_t capview;
	char err[160];
};

void ga_stacks_init(struct ga_stacks *s, struct ga_strs *strs);
void ga_stacks_free(struct ga_stacks *s);
/* Our id for the decoder's stack @id of generation @gen (0 for none or
 * an empty stack); <0 on an error (message in s->err). */
int64_t ga_stacks_intern(struct ga_stacks *s, rtd_gotrace_dec *d, uint64_t gen,
			 uint64_t id);
/* Intern frames given by the caller. */
int64_t ga_stacks_add(struct ga_stacks *s, const struct rtd_gotrace_frame *f, size_t n);
static inline uint32_t ga_stack_len(const struct ga_stacks *s, uint32_t id)
{
	return id && id < s->nstk ? s->stk[id].n : 0;
}
static inline const struct ga_frame *ga_stack_frame(const struct ga_stacks *s,
						    uint32_t id, uint32_t i)
{
	return &s->frames[s->arena[s->stk[id].off + i]];
}
/* The frames of a stack as rtd_goframe, in s->view (valid until the next
 * call). */
size_t ga_stacks_view(struct ga_stacks *s, uint32_t id, const struct rtd_goframe **out);

/* ---- the tracker, as the analyses use it ------------------------------ */

struct rtd_gostate;
/* The tracker over a shared name and stack interner (the analyses own
 * them). */
struct rtd_gostate *ga_state_new(rtd_gotrace_dec *d, struct ga_strs *strs,
				 struct ga_stacks *stacks);
/* rtd_gostate_next() without the copy: the next event in the tracker's
 * queue, valid until the next feed or finish, or NULL. */
const struct rtd_goev *ga_state_take(struct rtd_gostate *s);

/*
 * The profiles alone (Go 1.22+): the tracker hands each goroutine
 * transition straight to them (no queued event), with what they keep for
 * the goroutine inside its tracker entry (one look-up per event instead
 * of the tracker's, the Summarizer's and each profile's).
 */
struct ga_gprof {
	int64_t start; /* the Summarizer's StartTime (0: has not run) */
	bool known;    /* the Summarizer has the goroutine */
	uint8_t on;    /* the profiles tracking it (bit 1 << RTD_GOAN_PROF_*) */
	struct ga_trk {
		int64_t ts;
		uint32_t stack;
	} trk[RTD_GOAN_PROF_COUNT];
};
/* A goroutine transition, as the queued event would have said it. */
struct ga_gtr {
	uint64_t id;
	int64_t ts;
	const char *reason; /* interned */
	uint32_t stack;     /* the event's stack, interned (0: none) */
	uint8_t from, to;
	bool fresh; /* the goroutine's ga_gprof was zeroed for this event */
	bool gone;  /* and is dropped after it */
};
/* Turn the direct hand-over on (Go 1.22+ traces, before the first feed):
 * goroutine transitions are no longer queued. */
void ga_state_direct(struct rtd_gostate *s);
/* rtd_gostate_feed() with the direct hand-over: *t the event's goroutine
 * transition (NULL: none) and *x its goroutine's ga_gprof, valid until the
 * next feed; when (*t)->gone, ga_state_tr_done() drops the goroutine's
 * entry after the profiles read it. Returns whether events are queued
 * (ga_state_take), <0 on an error (rtd_gostate_error). */
int ga_state_feed_direct(struct rtd_gostate *s, const struct rtd_gotrace_event *ev,
			 const struct ga_gtr **t, struct ga_gprof **x);
void ga_state_tr_done(struct rtd_gostate *s);

/* ---- what the analyses share ------------------------------------------ */

/* A small map of names to nanoseconds (a goroutine's block reasons and
 * ranges: a handful each). */
struct ga_kv {
	const char *k;
	int64_t v;
};
struct ga_kvs {
	struct ga_kv *e;
	uint32_t n, cap;
};
int ga_kvs_add(struct ga_kvs *m, const char *k, int64_t v); /* += */
int ga_kvs_set(struct ga_kvs *m, const char *k, int64_t v);
int64_t *ga_kvs_find(const struct ga_kvs *m, const char *k);
void ga_kvs_del(struct ga_kvs *m, const char *k);
int ga_kvs_copy(struct ga_kvs *dst, const struct ga_kvs *src);
void ga_kvs_free(struct ga_kvs *m);

struct ga_ctx {
	rtd_gotrace_dec *d;
	int ver;       /* the trace's version */
	unsigned sem;  /* enum rtd_goan_semantics, resolved */
	struct ga_strs strs;
	struct ga_stacks stacks;
	struct rtd_goan_opts o;
	int64_t first_ts, last_ts;
	uint64_t nev;
	const struct rtd_gotrace_event *ev; /* being fed */
	char err[256];
};

/* the decoder the analyses read (rtd_goan_run) */
rtd_gotrace_dec *ga_goan_dec(const rtd_goan *a);

int ga_fail(struct ga_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* our stack id for the event's stack id @id (0 none), <0 on error */
int64_t ga_stack(struct ga_ctx *c, uint64_t id);

/* goroutine statistics, regions, tasks: Go 1.19's GoroutineStats and
 * annotations, Go 1.22+'s Summarizer (analysis_summary.c) */
struct ga_sum;
struct ga_sum *ga_sum_new(struct ga_ctx *c);
void ga_sum_free(struct ga_sum *s);
int ga_sum_v1(struct ga_sum *s, const struct rtd_gotrace_event *ev);
int ga_sum_v2(struct ga_sum *s, const struct rtd_goev *ev);
int ga_sum_finish(struct ga_sum *s);
/* Go 1.22+: the goroutine's StartTime (0: never ran) and whether it is
 * known */
int64_t ga_sum_start_time(const struct ga_sum *s, uint64_t g, bool *known);
int ga_sum_groups(const struct ga_sum *s,
		  int (*fn)(const struct rtd_goan_group *g, void *ctx), void *ctx);

/* the blocking and CPU profiles (analysis_pprof.c) */
struct ga_prof;
struct ga_prof *ga_prof_new(struct ga_ctx *c, struct ga_sum *sum);
void ga_prof_free(struct ga_prof *p);
int ga_prof_v1(struct ga_prof *p, const struct rtd_gotrace_event *ev);
int ga_prof_v2(struct ga_prof *p, const struct rtd_goev *ev);
/* ga_prof_v2() and the Summarizer's StartTime of a direct transition */
int ga_prof_tr(struct ga_prof *p, const struct ga_gtr *t, struct ga_gprof *x);
int ga_prof_finish(struct ga_prof *p);
int ga_prof_foreach(const struct ga_prof *p, unsigned which, rtd_goan_record_fn fn, void *ctx);
int ga_prof_total(const struct ga_prof *p, unsigned which, uint64_t *count, int64_t *ns);

/* GC cycles, pauses, mutator utilization and MMU (analysis_gc.c) */
struct ga_gc;
struct ga_gc *ga_gc_new(struct ga_ctx *c);
void ga_gc_free(struct ga_gc *g);
int ga_gc_v1(struct ga_gc *g, const struct rtd_gotrace_event *ev);
int ga_gc_v2(struct ga_gc *g, const struct rtd_goev *ev);
int ga_gc_finish(struct ga_gc *g);
double ga_gc_mmu(const struct ga_gc *g, size_t i, int64_t *window);
#endif
