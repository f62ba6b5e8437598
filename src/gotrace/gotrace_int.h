/* SPDX-License-Identifier: MIT */
/* gotrace_int.h - what the gotrace module's files share. */
#ifndef RTD_GOTRACE_INT_H
#define RTD_GOTRACE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/map.h"
#include "common/rd.h"
#include "rtdiag/gotrace.h"

/* Per-type facts of the old format (Go 1.19 internal/trace/parser.go
 * EventDescriptions, plus the 1.21 additions documented in golang/exp
 * trace/internal/oldtrace). */
struct v1_desc {
	const char *name;
	int minver;
	bool stack;
	unsigned nargs;
	const char *const *args;
	unsigned nsargs;
	const char *const *sargs;
};
extern const struct v1_desc v1_descs[RTD_GO_EV_COUNT];

/* One event as read from the wire, before any meaning is given to it. */
struct v1_raw {
	uint64_t off;
	unsigned typ;
	unsigned nargs;
	uint64_t *args; /* scratch owned by the reader */
	const uint8_t *s; /* String payload or UserLog message (borrowed) */
	size_t slen;
};

/* Wire arguments a type must have in a version (Go's argNum), or -1 for
 * EvStack (any). */
int v1_argnum(unsigned typ, int ver);

/* Parse the 16-byte header; returns the version (1005...) or -1. */
int v1_parse_header(const uint8_t *b);

/* A trace header's version (1000 * major + minor of the Go that wrote
 * it) the decoder and the encoder know: up to 1021 the old format,
 * from 1022 the new. */
static inline bool gtd_version_known(int ver)
{
	static const int known[] = {1005, 1007, 1008, 1009, 1010, 1011, 1019, 1021,
				    1022, 1023, 1025, 1026};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i] == ver)
			return true;
	return false;
}

/* Wrapping int64 addition (Go's), and a float to int64 conversion that
 * saturates instead of being undefined. */
static inline int64_t wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t f2i(double x)
{
	if (!(x < 9.2233720368547758e18 && x >= -9.2233720368547758e18))
		return INT64_MIN; /* what amd64 gives Go for out-of-range values */
	return (int64_t)x;
}

/* A P's parse state in Go's parseEvents: its last time, Go 1.5 sequence
 * number and running goroutine. */
struct v1_pstate {
	int64_t ts, seq;
	uint64_t g;
};

/* What v1_pstep does for each type (v1_kind[], indexed by the 6-bit wire
 * type): the kind of goroutine change, whether the P's goroutine stops
 * running (go1_ends_running_g) and whether the type is outside the per-P
 * streams (v1_meta_type). */
enum {
	V1K_START = 1, /* GoStart*: the event's and the P's goroutine is a[0] */
	V1K_G0 = 2,    /* GC: goroutine 0 */
	V1K_GA0 = 3,   /* GoSysExit, GoWaiting, GoInSyscall: goroutine a[0] */
	V1K_CPU = 4,   /* CPUSample: its own time and goroutine */
	V1K_GMASK = 7,
	V1K_ENDS = 8,  /* go1_ends_running_g */
	V1K_META = 16, /* v1_meta_type */
	V1K_PARK = 32, /* the goroutine goes waiting: GoBlock*, GoSleep,
			* GoSysBlock (a subset of V1K_ENDS) */
	V1K_SYNC = 64, /* a synchronization block: GoBlockSend, Recv, Select,
			* Sync, Cond, GC (a subset of V1K_PARK; Go's
			* pprof "sync" profile) */
};
extern const uint8_t v1_kind[64];

/* The classes (V1K_ENDS, V1K_PARK, V1K_SYNC...) of an old-format type:
 * the one list of them, read by the orderer and the analyses. */
static inline unsigned v1_class(unsigned type)
{
	return type < 64 ? v1_kind[type] : 0;
}

/*
 * go1_ends_running_g - does this old-format event take its P's running
 * goroutine off the P? (Go 1.5-1.21 batches name a goroutine only when it
 * starts: the decoder and grep -o both track "the goroutine now on this P".)
 */
static inline bool go1_ends_running_g(unsigned type)
{
	return v1_class(type) & V1K_ENDS;
}

/*
 * v1_pstep - Go's parseEvents for one event inside a P's batch (any type
 * but Batch, Frequency, TimerGoroutine, String and Stack): its time in
 * ticks, Go 1.5 sequence number and goroutine, from the P's state @s,
 * which it moves on. @wire: the event's wire arguments (time and sequence
 * deltas first); the type's argument count was checked when it was read.
 * The one copy of this logic: raw mode, the ordered index pass and the
 * ordered merge's per-P cursors all use it.
 */
static inline void v1_pstep(int ver, struct v1_pstate *s, unsigned typ,
			    const uint64_t *wire, int64_t *ts, int64_t *seq,
			    uint64_t *g)
{
	const uint64_t *a;
	if (ver < 1007) {
		s->seq = wrap_add(s->seq, (int64_t)wire[0]);
		s->ts = wrap_add(s->ts, (int64_t)wire[1]);
		a = wire + 2;
	} else {
		s->ts = wrap_add(s->ts, (int64_t)wire[0]);
		a = wire + 1;
	}
	*ts = s->ts;
	*seq = s->seq;
	*g = s->g;
	unsigned k = v1_kind[typ & 63];
	if (k == 0)
		return;
	switch (k & V1K_GMASK) {
	case V1K_START:
		s->g = *g = a[0];
		break;
	case V1K_G0:
		*g = 0;
		break;
	case V1K_GA0:
		*g = a[0];
		break;
	case V1K_CPU:
		*ts = (int64_t)a[0];
		*g = a[2];
		break;
	}
	if (k & V1K_ENDS)
		s->g = 0;
}

/* Is this old-format type outside the per-P event streams? */
static inline bool v1_meta_type(unsigned typ)
{
	return v1_kind[typ & 63] & V1K_META;
}

/*
 * An event on its way from the ordered merge to the output: its time
 * (ticks, then ns), goroutine, P, Go's Args[0..2] and where it is in the
 * input (everything else is read again from there when it goes out).
 */
#define V1_EV_WIRE 8
struct v1_ev {
	int64_t ts;
	uint64_t g;
	uint64_t off;
	uint64_t mpos; /* position in the merged order: the re-sort's tie-break */
	int64_t seq;   /* Go 1.5's sequence number */
	/* the wire arguments (zero past nw); Go's Args start at argoff. An
	 * event with more than V1_EV_WIRE is read again when it goes out. */
	uint64_t w[V1_EV_WIRE];
	int32_t p;
	uint8_t type;
	uint8_t nw, argoff;
	uint8_t drop, held;
	uint8_t spare[15]; /* 128 bytes: a window slot's address is a shift */
};
_Static_assert(sizeof(struct v1_ev) == 128, "struct v1_ev is 128 bytes");

/* Go's Args of an event on its way out (the wire args after time and
 * sequence; a type's own arguments never reach its stack argument). */
static inline const uint64_t *v1_ev_args(const struct v1_ev *e)
{
	return e->w + e->argoff;
}

/* A CPU sample, kept from the index pass to the merge. */
struct v1_sample {
	int64_t ts;
	uint64_t off;
};

/*
 * Event in ordered mode for Go 1.5/1.6 traces (sorted by sequence number
 * in memory): what cannot be read again from the kept input
 * without its batch's context (time, sequence, P, G). Arguments are read
 * again from the input at @off when needed (v1_ref_args).
 */
struct v1_ref {
	int64_t ts;
	uint32_t off_lo;
	uint16_t off_hi;
	uint8_t type;
	uint8_t drop;
	uint32_t g;  /* V1_BIG_G: see d->bigg */
	int32_t p;
};
#define V1_BIG_G UINT32_MAX
#define V1_MAX_OFF ((1ull << 48) - 1)
static inline uint64_t roff(const struct v1_ref *r)
{
	return (uint64_t)r->off_lo | (uint64_t)r->off_hi << 32;
}


/* A P's events in file order, as runs of consecutive ref indices (a
 * batch's events are consecutive in the file). */
struct v1_run {
	uint32_t start, n;
};
struct v1_runs {
	struct v1_run *r;
	size_t n, cap;
	uint64_t nev;
};

/* A batch in the input: from its Batch event to the next batch's. */
struct v1_span {
	uint64_t off, end;
};

struct v1_proc {
	int64_t p;
	uint64_t lastg;
	struct v1_runs idx; /* Go 1.5: this P's events, in file order */
	struct v1_span *bspan; /* Go 1.7+: where this P's batches are */
	size_t nbspan, capbspan;
};

struct rtd_gotrace_dec {
	enum rtd_gotrace_mode mode;
	/* RTD_GOTRACE_RESOLVE (raw mode): the tables read ahead, apart from
	 * those the events in order build (so that those fail exactly as
	 * without the flag); a look-up that misses falls back on them, and an
	 * entry moves over when the event that defines it comes */
	bool resolve;
	bool preloaded;    /* old format: the input was read ahead */
	bool adding_ahead; /* table_add_* fill the tables read ahead */
	rtd_map ahead_strings, ahead_stacks;
	size_t ahead_strbytes;
	uint64_t max_input;
	rtd_buf in;
	size_t pos;
	uint64_t base; /* absolute offset of in.data[0] */
	uint64_t fed;  /* bytes fed in all: where a cut input ends */
	bool finished, header;
	int ver;
	int err;
	char errmsg[512];
	uint64_t erroff;

	/* raw-parse state (Go's parseEvents) */
	struct v1_pstate ps;
	int64_t last_p;
	bool seen_batch;
	struct v1_span *open_span; /* index pass: the batch not yet closed */
	size_t open_proc;          /* ... its P's index in procs */
	int64_t freq;
	struct rtd_vmap pidx; /* P -> index into procs + 1 */
	struct v1_proc *procs;
	size_t nprocs;
	size_t cur_proc; /* index + 1 of last_p's entry in procs, or 0 */
	rtd_map strings; /* id -> struct gtd_str * */
	rtd_map stacks;  /* id -> struct gtd_stack * */
	/* counts every change of stacks and ahead_stacks: what a look-up
	 * found stays true while it is unchanged (the text writer's cache) */
	uint64_t stack_epoch;
	size_t strbytes;
	rtd_map timer_gs; /* timer goroutines (value unused) */

	uint64_t *args;
	size_t args_cap;
	int8_t argn[RTD_GO_EV_COUNT]; /* v1_argnum() for argn_ver */
	int8_t fastn[64], fastlong[64]; /* v1_fast_event's tables */
	int argn_ver;
	unsigned narg_base, inline_max;
	rtd_buf sbuf; /* NUL-terminated copy of an inline string */
	struct rtd_gotrace_frame *frames;
	size_t frames_cap;

	/* ordered mode with a source: the input is read again, not kept */
	rtd_gotrace_read_at_fn src;
	void *src_ctx;
	bool stream_idx; /* indexing as bytes are fed (Go 1.7+ with a source) */
	bool peek;       /* a short read is "incomplete", not an error */
	uint64_t total;  /* input size, known at finish */
	uint32_t max_window; /* RTD_GOTRACE_MAX_WINDOW (lowered by a test) */
	/* ordered mode: the index pass over the kept input */
	int64_t sysexit_shift; /* the most a GoSysExit moves back (ticks) */
	rtd_map futile_gs;     /* goroutines with FutileWakeup events */
	struct v1_sample *samples;
	size_t nsamples, capsamples;
	struct v1_ord *ord;    /* the streaming merge (order1.c) */
	/* Go 1.5/1.6 ordered mode keeps one ref per event */
	struct v1_ref *refs; /* every event, in file order */
	size_t nrefs, caprefs;
	int64_t *seqs;       /* Go 1.5: each event's sequence number */
	struct rtd_vmap bigg;  /* goroutine ids >= 2^32-1, by ref index */
	bool any_events;
	uint32_t *out;       /* the order: indices into refs */
	size_t nout, iout;

	/* new format (Go 1.22+) */
	struct v2_state *v2;
	/* Go 1.22/1.23 map walk emulation per generation (test aid) */
	uint8_t go_map[RTD_GOTRACE_MAX_MAP_STARTS];
	unsigned ngo_map, go_map_gen;
	rtd_gotrace_tables_fn tables_fn; /* before a generation's tables go */
	void *tables_ctx;
};

struct gtd_str {
	uint64_t off; /* of the event that defines it */
	size_t len;
	char s[];
};
/* rtd_gotrace_dec_stack(), and *@named: the frames' names are final
 * (they do not change while d->stack_epoch does not). */
size_t dec_stack_named(const rtd_gotrace_dec *d, uint64_t id,
		       const struct rtd_gotrace_frame **frames, bool *named);

struct gtd_stack {
	uint64_t off;
	size_t n;
	/* every frame's names found in d->strings, which keeps them as long
	 * as the stack lives (both go at tables_reset): not looked up again */
	bool named;
	struct rtd_gotrace_frame f[];
};

int gtd_fail(rtd_gotrace_dec *d, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A read of @what at @off that @r could not finish, as the decoder's
 * error: the input ended inside it, or a varint ran past its width. */
int gtd_fail_read(rtd_gotrace_dec *d, const rtd_rd *r, uint64_t off,
		  const char *what);

/* 8 bytes at @p as a little-endian number (the reader's bytes). */
static inline uint64_t v1_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* The low @n bytes of a word (n <= 8). */
static inline uint64_t v1_low_bytes(unsigned n)
{
	return n >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * n)) - 1;
}

#define V1_HIGH_BITS 0x8080808080808080ull

/* A LEB128 varint of at most 9 bytes at *@q, whose 10 bytes are readable:
 * true with *@v, *@q past it; false for a longer one (the checked reader's
 * to read: its 10th byte has rules of its own). */
static inline bool v1_varint9(const uint8_t **q, uint64_t *v)
{
	const uint8_t *r = *q;
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t c;
	do {
		c = *r++;
		x |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while ((c & 0x80) && shift < 63);
	*q = r;
	*v = x;
	return !(c & 0x80);
}

/*
 * v1_fast_event - the common event, decoded fast: its arguments inline or
 * length-prefixed in under 39 bytes, each varint under 10 bytes, the right
 * count for its type (d->fastn/fastlong). @avail: bytes readable at @p.
 * @args: room for 8 (d->args has it once the tables are made: the checked
 * reader reserves 8 before it makes them); @how: V1F_ZERO clears
 * args[narg..7], else what is past args[narg - 1] is unspecified;
 * V1F_HEAD: only args[0..3] are wanted (the index pass). Returns
 * the event's size, or 0 for the checked path (v1_read_raw), which sees
 * the same bytes again: fewer than 40 bytes left, the version's tables
 * not made yet, or an event of another shape. Arguments of one byte each
 * (most: time deltas are in units of 64 ticks) take no loop.
 */
enum { V1F_ZERO = 1, V1F_HEAD = 2 };
static inline size_t v1_fast_event(const rtd_gotrace_dec *d, const uint8_t *p,
				   size_t avail, unsigned *typ, unsigned *narg,
				   uint64_t *args, unsigned how)
{
	bool zero = how & V1F_ZERO;
	if (avail < 40 || d->argn_ver != d->ver)
		return 0;
	const uint8_t *q = p;
	*typ = *q & 0x3f;
	*narg = (unsigned)(*q++ >> 6) + d->narg_base;
	if (*narg == d->inline_max) {
		/* length-prefixed: a one-byte length, then exactly the
		 * type's count of varints filling it */
		int want = d->fastlong[*typ];
		unsigned len = *q++;
		if (want < 0 || len > 38)
			return 0;
		if (len == (unsigned)want) { /* want <= 8: a byte each? */
			uint64_t x = v1_le64(q) & v1_low_bytes(len);
			if (!(x & V1_HIGH_BITS)) {
				for (unsigned k = 0; k < (how & V1F_HEAD ? 4u : 8u); k++)
					args[k] = (x >> (8 * k)) & 0xff;
				*narg = len;
				return 2 + len;
			}
		}
		if (zero)
			memset(args, 0, 8 * sizeof(*args));
		const uint8_t *end = q + len;
		unsigned n = 0;
		while (q < end) {
			uint64_t v = 0;
			unsigned shift = 0;
			uint8_t c;
			do {
				if (q >= end)
					return 0;
				c = *q++;
				v |= (uint64_t)(c & 0x7f) << shift;
				shift += 7;
			} while ((c & 0x80) && shift < 63);
			if ((c & 0x80) || n >= 8)
				return 0;
			args[n++] = v;
		}
		if (n != (unsigned)want)
			return 0;
		*narg = n;
		return (size_t)(q - p);
	}
	if (d->fastn[*typ] != (int)*narg)
		return 0;
	/* inline: at most 4 */
	uint64_t x = v1_le64(q) & v1_low_bytes(*narg);
	if (!(x & V1_HIGH_BITS)) {
		for (unsigned k = 0; k < 4; k++)
			args[k] = (x >> (8 * k)) & 0xff;
		if (zero)
			for (unsigned k = 4; k < 8; k++)
				args[k] = 0;
		return 1 + *narg;
	}
	if (zero)
		memset(args, 0, 8 * sizeof(*args));
	for (unsigned i = 0; i < *narg; i++)
		if (!v1_varint9(&q, &args[i]))
			return 0;
	return (size_t)(q - p);
}
/* Room for @n wire arguments in d->args (both formats): 0 or -ENOMEM. */
int gtd_args_reserve(rtd_gotrace_dec *d, size_t n);
/* Read one raw event at r; 1 done, 0 incomplete, <0 error (set on d). */
int v1_read_raw(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, struct v1_raw *raw);
/* Give an event its arguments and strings (context-free part). */
int v1_fill(rtd_gotrace_dec *d, unsigned type, const struct v1_raw *raw,
	    struct rtd_gotrace_event *ev);
const char *gtd_str_get(const rtd_gotrace_dec *d, uint64_t id, size_t *len);
/* Start ordered output after the index pass (Go 1.5/1.6: sort the refs). */
int v1_order(rtd_gotrace_dec *d);
/* The next event in Go's order, ordered and validated as it goes out:
 * 1, 0 at the end, or <0 (error set on d). */
int v1_order_next(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev);
/* v1_order_next() without the event built: *e is the ordering's own copy
 * (valid until the next call), for v1_emit() or to be read in place. */
int v1_order_take(rtd_gotrace_dec *d, struct v1_ev **e);
void v1_order_free(rtd_gotrace_dec *d);
/*
 * v1_fill_head - the fields of an old-format event that follow from its
 * type alone (no stack, strings or frames); v1_fill() and the ordered
 * output's fast path start from it and add the arguments.
 */
static inline void v1_fill_head(struct rtd_gotrace_event *ev, unsigned type,
				uint64_t off, unsigned nraw, const uint64_t *raw)
{
	const struct v1_desc *desc = &v1_descs[type];
	ev->type = type;
	ev->name = desc->name;
	ev->off = off;
	ev->stack = 0;
	ev->nsargs = 0;
	ev->sargnames = desc->sargs;
	ev->nraw = nraw;
	ev->raw = raw;
	ev->str_id = 0;
	ev->str = NULL;
	ev->str_len = 0;
	ev->nframes = 0;
	ev->frames = NULL;
	ev->gen = 0;
	ev->m = -1;
	ev->argnames = desc->args;
	ev->nargs = desc->nargs;
}

/* String argument @i of an event: the string of id @id ("" unknown). */
void v1_set_sarg(const rtd_gotrace_dec *d, struct rtd_gotrace_event *ev,
		 unsigned i, uint64_t id);
/* v1_emit for what its inline part leaves: events read again, UserLog,
 * GCSTWStart. */
int v1_emit_slow(rtd_gotrace_dec *d, const struct v1_ev *e,
		 struct rtd_gotrace_event *ev);

/* The ordered fields of an event going out. */
static inline void v1_emit_time(const struct v1_ev *e, struct rtd_gotrace_event *ev)
{
	ev->ts = e->ts;
	ev->ticks = 0;
	ev->seq = e->seq;
	ev->p = e->p;
	ev->g = e->g;
	if (e->type == RTD_GO_EV_CPU_SAMPLE)
		ev->args[0] = 0;
}

/*
 * v1_emit - give an event going out its meaning (1, or <0). The common
 * event gets v1_fill's work here, without its generality: its wire
 * arguments are zero past nw, so Go's Args are the slots from argoff on,
 * but for the stack (the last); the event stays put until the next call,
 * so raw points into it. The rest: v1_emit_slow.
 */
static inline int v1_emit(rtd_gotrace_dec *d, const struct v1_ev *e,
			  struct rtd_gotrace_event *ev)
{
	const struct v1_desc *desc = &v1_descs[e->type];
	if (e->nw > V1_EV_WIRE || desc->nsargs > 1 || e->type == RTD_GO_EV_GC_STW_START)
		return v1_emit_slow(d, e, ev);
	v1_fill_head(ev, e->type, e->off, e->nw, e->w);
	unsigned a0 = e->argoff;
	if (a0 == 1) {
		memcpy(ev->args, e->w + 1, 7 * sizeof(ev->args[0]));
		ev->args[7] = 0;
	} else {
		memcpy(ev->args, e->w + 2, 6 * sizeof(ev->args[0]));
		ev->args[6] = ev->args[7] = 0;
	}
	if (desc->stack && e->nw > a0) {
		ev->stack = e->w[e->nw - 1];
		ev->args[e->nw - 1 - a0] = 0;
	}
	if (desc->nsargs) { /* GoStartLabel, UserTaskCreate, UserRegion */
		ev->nsargs = 1;
		v1_set_sarg(d, ev, 0, ev->args[2]);
	}
	v1_emit_time(e, ev);
	return 1;
}

/* Read the event at @off again (from the kept input or the source); its
 * bytes stay valid until the next call. 1, or <0. */
int v1_reread(rtd_gotrace_dec *d, uint64_t off, struct v1_raw *raw);
/* Append @item (@isz bytes) to a growable array: 0 or -ENOMEM. */
int gtd_push(void **arr, size_t *n, size_t *cap, size_t isz, const void *item);
/* Keep a raw event's wire arguments in @e. */
void v1_ev_wire(rtd_gotrace_dec *d, const struct v1_raw *raw, struct v1_ev *e);
/* The goroutine of a kept event. */
uint64_t rg(const rtd_gotrace_dec *d, const struct v1_ref *r);
/* Go's Args[0..2] of a raw event (the wire args after time and sequence,
 * without the stack). */
void v1_goargs(int ver, const struct v1_raw *raw, uint64_t a[3]);
/* Go's Args of a kept event, read again from the input. */
void v1_ref_args(rtd_gotrace_dec *d, const struct v1_ref *r, uint64_t a[3]);
/*
 * dec_run_source - decode a whole input read from @read_at with @d
 * (before any feed), calling @fn (if not NULL) for each event; @fn's
 * negative answer stops the pass. Returns 0 at the end, or <0.
 */
int dec_run_source(rtd_gotrace_dec *d, rtd_gotrace_read_at_fn read_at, void *ctx,
		   int (*fn)(void *arg, const struct rtd_gotrace_event *ev), void *arg);
/* Clear the string and stack tables (new format: per generation). */
void tables_reset(rtd_gotrace_dec *d);
/* Add to the tables, checking for duplicates and caps (to the tables
 * read ahead while d->adding_ahead). */
int table_add_string(rtd_gotrace_dec *d, uint64_t id, const uint8_t *s,
		     size_t len, uint64_t off);
int table_add_stack(rtd_gotrace_dec *d, uint64_t id,
		    const struct rtd_gotrace_frame *f, size_t n, uint64_t off);
/* The event at @off defines string (stack) @id: the entry read ahead for
 * it is dropped (the event adds its own, as without read-ahead). */
void ahead_reached(rtd_gotrace_dec *d, bool stack, uint64_t id, uint64_t off);
/* Empty the tables read ahead. */
void ahead_reset(rtd_gotrace_dec *d);
/* A look-up of string or stack @id missed: read the old format's tables
 * ahead now, if that is to be done (RTD_GOTRACE_RESOLVE, raw mode). */
void ahead_miss(const rtd_gotrace_dec *d, uint64_t id);

/*
 * A decoder's events from a decoding thread, read by pulls: the
 * consumer's side of rtd_gotrace_run() (analysis_run.c), for a consumer
 * that asks for each event (the Go source's go_events).
 * gt_pull_start(): *@out NULL (and 0) when no thread is worth it (as
 * rtd_gotrace_run() decides from @flags, the version and the CPUs): read
 * the decoder on the caller's thread then. gt_pull_next(): 1 with the
 * next event (valid until the next pull), else the decoder's end (0 or
 * its error, from @next). gt_pull_stop(): stop and join the thread (at
 * any point) and free it all.
 */
struct gt_pull;
int gt_pull_start(struct gt_pull **out, rtd_gotrace_dec *d, rtd_gotrace_next_fn next, void *ctx,
		  unsigned flags);
int gt_pull_next(struct gt_pull *p, const struct rtd_gotrace_event **ev);
void gt_pull_stop(struct gt_pull *p);

#endif
