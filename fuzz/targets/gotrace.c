/* SPDX-License-Identifier: MIT */
/*
 * gotrace - fuzz the Go trace decoder in both modes.
 *
 * Invariants for any input: no crash, no hang; raw mode fed in two pieces
 * gives the same number of events as fed whole; raw mode resolving names
 * ahead (RTD_GOTRACE_RESOLVE, with or without a source) gives the same
 * events and result as without; ordered mode reading the input again
 * through a source gives what it gives keeping the input; an error leaves
 * a message; rtd_gotrace_dec_tally() counts the events raw mode gives,
 * with its result. A filter with every kind of criterion sees the events of the
 * resolving runs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/gotrace.h"

struct src {
	const uint8_t *b;
	size_t len;
};

static int64_t src_read(void *buf, size_t len, uint64_t off, void *ctx)
{
	const struct src *s = ctx;
	if (off >= s->len)
		return 0;
	if (len > s->len - off)
		len = s->len - (size_t)off;
	memcpy(buf, s->b + off, len);
	return (int64_t)len;
}

static rtd_gotrace_filter *filter(void)
{
	rtd_gotrace_filter *f = rtd_gotrace_filter_new();
	if (!f || rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STACK, "main|0x1") < 0 ||
	    rtd_gotrace_filter_add_regex(f, RTD_GOTRACE_FILTER_STRING, "a") < 0 ||
	    rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_M, 1) < 0 ||
	    rtd_gotrace_filter_add_id(f, RTD_GOTRACE_FILTER_G, 1) < 0 ||
	    rtd_gotrace_filter_set_time(f, false, 1000, true) < 0)
		abort();
	rtd_gotrace_filter_set_invert(f, true);
	return f;
}

/* Events (counted), fed in two pieces at @split; the hash of their
 * types and offsets in *hash. */
static size_t run(const uint8_t *data, size_t size, size_t split,
		  enum rtd_gotrace_mode mode, unsigned flags, bool source, int *status,
		  uint64_t *hash)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode,
				     .max_input = 1 << 24, .flags = flags};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	if (!d)
		return 0;
	rtd_gotrace_filter *f = flags ? filter() : NULL;
	uint64_t h = 0;
#define SEEN(ev) (h = h * 31 + (ev).type * 7 + (ev).off, \
		  f ? (void)rtd_gotrace_filter_match(f, d, &(ev)) : (void)0)
	struct src s = {data, size};
	if (source && rtd_gotrace_dec_set_source(d, src_read, &s) < 0)
		abort();
	struct rtd_gotrace_event ev;
	size_t n = 0;
	int rc;
	rtd_gotrace_dec_feed(d, data, split);
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0)
		n++, SEEN(ev);
	if (rc == 0) {
		rtd_gotrace_dec_feed(d, data + split, size - split);
		while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			n++, SEEN(ev);
	}
	if (rc == 0) {
		rc = rtd_gotrace_dec_finish(d);
		while (rc >= 0 && (rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			n++, SEEN(ev);
	}
#undef SEEN
	*hash = h;
	rtd_gotrace_filter_free(f);
	if (rc < 0) {
		const char *msg = rtd_gotrace_dec_error(d, NULL);
		if (!msg || !*msg)
			abort(); /* every error comes with a message */
	}
	*status = rc;
	rtd_gotrace_dec_free(d);
	return n;
}

/* Events counted by rtd_gotrace_dec_tally(), fed in two pieces at @split. */
static uint64_t tally(const uint8_t *data, size_t size, size_t split, int *status)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	rtd_gotrace_tally *t = rtd_gotrace_tally_new();
	if (!d || !t)
		abort();
	int rc = rtd_gotrace_dec_feed(d, data, split);
	if (rc == 0)
		rc = rtd_gotrace_dec_tally(d, t);
	if (rc == 0)
		rc = rtd_gotrace_dec_feed(d, data + split, size - split);
	if (rc == 0)
		rc = rtd_gotrace_dec_tally(d, t);
	if (rc == 0)
		rc = rtd_gotrace_dec_finish(d);
	if (rc == 0)
		rc = rtd_gotrace_dec_tally(d, t);
	struct rtd_gotrace_counts c;
	rtd_gotrace_tally_counts(t, size, &c);
	uint64_t sum = 0;
	for (unsigned i = 0; i < 256; i++)
		sum += c.count[i];
	if (sum != c.events)
		abort();
	*status = rc;
	rtd_gotrace_tally_free(t);
	rtd_gotrace_dec_free(d);
	return c.events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int s1, s2, s3, s4;
	uint64_t h1, h2, h3, h4;
	size_t a = run(data, size, size, RTD_GOTRACE_RAW, 0, false, &s1, &h1);
	size_t b = run(data, size, size / 2, RTD_GOTRACE_RAW, 0, false, &s2, &h2);
	if (a != b || s1 != s2 || h1 != h2)
		abort(); /* chunking must not change the result */
	if (tally(data, size, size / 2, &s2) != a || s1 != s2)
		abort(); /* the tally counts what raw mode gives */
	b = run(data, size, size / 2, RTD_GOTRACE_RAW, RTD_GOTRACE_RESOLVE, false, &s2, &h2);
	if (a != b || s1 != s2 || h1 != h2)
		abort(); /* resolving names ahead changes no event */
	b = run(data, size, size / 3, RTD_GOTRACE_RAW, RTD_GOTRACE_RESOLVE, true, &s2, &h2);
	if (a != b || s1 != s2 || h1 != h2)
		abort(); /* ... with a source either */
	a = run(data, size, size / 3, RTD_GOTRACE_ORDERED, 0, false, &s3, &h3);
	b = run(data, size, size / 2, RTD_GOTRACE_ORDERED, 0, true, &s4, &h4);
	if (a != b || s3 != s4 || h3 != h4)
		abort(); /* reading the input again = keeping it */
	return 0;
}
