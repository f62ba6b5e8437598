/* SPDX-License-Identifier: MIT */
/* v2state.h - decoder state for the new format. */
#ifndef RTD_GOTRACE_V2STATE_H
#define RTD_GOTRACE_V2STATE_H

#include "gotrace/v2.h"

#define V2_OUT_ARGS 6u
/* An event in Go's order, ready to hand out. */
struct v2_out {
	uint64_t off;
	int64_t time;
	uint64_t args[V2_OUT_ARGS]; /* with dt first, as on the wire */
	uint64_t m, g;
	int64_t p;
	uint8_t type;
	uint8_t nargs;
	/* UserTaskEnd in ordered mode: its task's parent and name (the begin
	 * may be in an earlier generation; "" and 0 when it is not known),
	 * as Go's reader smuggles them. The name lives until the next step. */
	uint64_t task_parent;
	const char *task_name;
};

/* The trace clock of Go 1.22+ on every OS but Windows: nanotime()/64
 * (runtime traceClockUnitsPerSecond); what a generation cut before its
 * Frequency batch, with none before it, is ordered with. */
#define V2_NANOTIME_FREQ 15625000

struct v2_batch {
	uint64_t off, gen, m;
	int64_t time;
	size_t data, len; /* position of the events in d->in */
};

struct v2_gen;

struct v2_state {
	/* raw mode */
	uint64_t raw_gen, batch_off, batch_end, batch_m;
	uint64_t raw_freq_gen; /* the generation of the last Frequency */
	int64_t ticks;
	/* raw mode with RTD_GOTRACE_RESOLVE: the generation read ahead */
	uint64_t la_end;       /* where the generation being handed out ends */
	uint64_t la_scan;      /* the next batch header to read ahead */
	uint64_t la_gen;
	bool la_active, la_ok;
	uint8_t *la_buf;       /* a batch read again from the source */

	/* ordered mode */
	uint64_t gen;          /* generation being assembled */
	struct v2_batch *b;
	size_t nb, capb;
	struct v2_out *q;      /* the events of the last merge step */
	size_t nq, capq, iq;
	int deferred;          /* error met after a complete generation */
	char deferred_msg[512];
	uint64_t deferred_off;
	int64_t last_time;
	bool done;
	struct v2_order *ord;
	struct v2_gen *g;      /* the generation being merged, or NULL */
	bool spill_err;        /* an error follows the generation (collect) */
	size_t scan;           /* end of the batches collected so far */
	uint64_t qgen;         /* generation of the queued events */
	bool deferred_set;
	/* Go's synthetic Sync events (reader.go): see v2_next_ordered */
	bool sync_before;      /* due before the queued events (Go 1.25+) */
	bool sync_after;       /* due after them */
	int64_t sync_time;     /* of sync_before */
	bool gen_parsed;       /* the generation's tables were read */
	uint64_t sync_off;     /* where the generation ends */
	uint64_t sync_off_before; /* where it starts */
	unsigned map_start;    /* Go 1.22/1.23 map walk emulation (0-7) */
	bool snap;             /* the generation's clock snapshot (Go 1.25+) */
	uint64_t snap_ticks;
	uint64_t snap_args[4]; /* time (ns), mono, sec, nsec */
	/* ordered mode: the generation's strings and stacks by id, for ids
	 * below ndense (Go numbers them from 1), once its tables are read;
	 * larger ids are looked up in d->strings/d->stacks */
	bool dense;
	const struct gtd_str **dstr;
	const struct gtd_stack **dstk;
	size_t ndstr, ndstk, capdstr, capdstk;
	/* compact mode (v2_set_compact): the queued event handed out last,
	 * until v2_compact_take() */
	bool compact;
	const struct v2_out *cout;
	/* how the last steps of the merge ended, once their events are out
	 * (pend_rc: 0, or an error, stashed here meanwhile) */
	bool pend;
	int pend_rc;
	uint64_t pend_off;
	char pend_msg[512];
	/* the input ended inside the generation being ordered (at_end: it
	 * reaches the end of the input; cut: and it is not whole, see
	 * v2_gen_begin): what of it can be ordered goes out, then
	 * "truncated at byte N" */
	bool at_end, cut;
	bool cut_here;         /* collect: the batch cut is this generation's */
	bool freq_assumed;     /* cut before any frequency: V2_NANOTIME_FREQ */
	uint64_t gen_out;      /* events the generation's merge queued */
};

/* The generation's string @id (ordered mode), NULL when it has none. */
static inline const struct gtd_str *v2_str(const rtd_gotrace_dec *d, uint64_t id)
{
	const struct v2_state *st = d->v2;
	if (st->dense && id < st->ndstr)
		return st->dstr[id];
	void *v;
	return rtd_map_get(&d->strings, id, &v) ? v : NULL;
}

/* Whether the generation has stack @id (ordered mode). */
static inline bool v2_has_stack(const rtd_gotrace_dec *d, uint64_t id)
{
	const struct v2_state *st = d->v2;
	if (st->dense && id < st->ndstk)
		return st->dstk[id] != NULL;
	return rtd_map_get(&d->stacks, id, NULL);
}

/*
 * Compact mode, for a consumer on another thread (rtd_gotrace_run()): the
 * ordering's own queue entries instead of built events. With it on,
 * rtd_gotrace_dec_next() sets only off, type, name, ts and gen of an
 * ordered event of a generation, and v2_compact_take() then gives its
 * queue entry (valid until the next call of rtd_gotrace_dec_next());
 * v2_fill_out() with that ts and gen builds the event the decoder would
 * have given, on any thread while the generation's tables live. Other
 * events (Go's Sync) come whole, v2_compact_take() gives NULL for them.
 * v2_set_compact() says whether the mode is on (ordered Go 1.22+ only).
 */
bool v2_set_compact(rtd_gotrace_dec *d, bool on);
const struct v2_out *v2_compact_take(rtd_gotrace_dec *d);
/* Of the event v2_fill_out() would build from @o, only the string
 * arguments (nsargs, sargnames, sargs, sarg_lens), on the decoding thread. */
void v2_out_sargs(rtd_gotrace_dec *d, const struct v2_out *o, struct rtd_gotrace_event *ev);
/* The generation's strings by id as v2_fill_out() on another thread reads
 * them (not through d->v2, which the decoding thread keeps writing): take
 * them again when the generation changes. */
struct v2_strs {
	bool dense;
	const struct gtd_str *const *s;
	size_t n;
};
void v2_strs_get(const rtd_gotrace_dec *d, struct v2_strs *t);
/* The event of @o at time @ts (Go's, strictly rising) of generation @gen,
 * with @o's arguments at @args (o->args, or a copy of its first nargs: the
 * time delta args[0] of a timed event is not read, only ev->raw points
 * there); @strs: NULL for the decoder's own tables. */
void v2_fill_out(rtd_gotrace_dec *d, const struct v2_strs *strs, const struct v2_out *o,
		 const uint64_t *args, int64_t ts, uint64_t gen, struct rtd_gotrace_event *ev);
void v2_fill_raw(rtd_gotrace_dec *d, const struct v2_raw *raw,
		 struct rtd_gotrace_event *ev);
/* Ordering one generation: begin (tables, frontier: st->g), then steps
 * that each put the next events in Go's order into st->q (empty before):
 * 1 when it has some, 0 when the generation is done, <0 an error, with
 * the events before it in st->q. */
#define V2_STEP_EVENTS 64
int v2_gen_begin(rtd_gotrace_dec *d);
int v2_gen_step(rtd_gotrace_dec *d);
void v2_gen_free(struct v2_gen *g);
void v2_order_free(struct v2_order *o);
/* Index the generation's tables by id (st->dense); 0 or -ENOMEM. */
int v2_dense_build(rtd_gotrace_dec *d);
#endif
