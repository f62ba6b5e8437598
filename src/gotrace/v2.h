/* SPDX-License-Identifier: MIT */
/* v2.h - the new Go trace format (Go 1.22+): table and shared helpers. */
#ifndef RTD_GOTRACE_V2_H
#define RTD_GOTRACE_V2_H

#include "gotrace/gotrace_int.h"

#define V2_MAX_TYPE RTD_GO2_EV_GOROUTINE_STACK_FREE
#define V2_TIMED 1
#define V2_STACK 2
#define V2_DATA 4
#define V2_EXP 8

#define V2_MAX_BATCH (64u << 10)  /* tracev2.MaxBatchSize */
#define V2_MAX_FRAMES 128u        /* tracev2.MaxFramesPerStack */
#define V2_MAX_DATA (1u << 20)    /* trailing data of one event */
#define V2_NO_THREAD UINT64_MAX

/* A type of the table (rtdiag/gotrace_events.h), as the decoder uses it. */
struct v2_spec {
	const char *name;
	unsigned nargs;
	const char *const *args;
	unsigned flags;
	uint8_t start_ev;    /* the Begin event an End/Active closes (0: none) */
	int8_t stack_arg[2]; /* indices into args (dt included), -1 none */
	int8_t str_arg[2];
	unsigned nsargs;
	const char *const *sargs; /* the string arguments' names, resolved */
};
extern const struct v2_spec v2_specs[V2_MAX_TYPE + 1];

const struct v2_spec *v2_spec_for(unsigned type, int ver);
bool v2_version(int ver);
int v2_type_by_name(const char *name, size_t len, int ver);

/* One event read off the wire (new format). */
struct v2_raw {
	uint64_t off;
	unsigned typ;
	unsigned nargs;
	uint64_t *args; /* decoder scratch */
	const uint8_t *data;
	size_t dlen;
};

/* Read one event at r (1 done, 0 incomplete, <0 error set on d). */
int v2_read_raw(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, struct v2_raw *raw);
/* Raw mode: next event in file order. */
int v2_next_raw(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev);
/* Ordered mode: next event in Go's order, generation by generation. */
int v2_next_ordered(rtd_gotrace_dec *d, struct rtd_gotrace_event *ev);
void v2_free(rtd_gotrace_dec *d);
/* A malformed Strings/Stacks entry, described for the caller to report. */
struct v2_bad {
	bool set;
	uint64_t off;
	char msg[160];
};
/*
 * v2_parse_dict - a Strings or Stacks batch's entries into the tables.
 * @data, @len: the batch's data (its first byte is the batch's kind);
 * @base: the data's absolute offset. Returns 1 when the batch is one of
 * those and every entry went in, 0 when it is another kind, or <0: a
 * table error (set on d), or -RTD_E_GO_EVENT with @bad set (not on d).
 */
int v2_parse_dict(rtd_gotrace_dec *d, const uint8_t *data, size_t len, uint64_t base,
		  struct v2_bad *bad);
/* Write v as a uvarint (at most 10 bytes) at o; returns the length. */
size_t v2_put_uvarint(uint8_t *o, uint64_t v);
#endif
