/* SPDX-License-Identifier: MIT */
/*
 * gotrace - fuzz the Go trace decoder in both modes.
 *
 * Invariants for any input: no crash, no hang; raw mode fed in two pieces
 * gives the same number of events as fed whole; ordered mode reading the
 * input again through a source gives what it gives keeping the input; an
 * error leaves a message.
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

static size_t run(const uint8_t *data, size_t size, size_t split,
		  enum rtd_gotrace_mode mode, bool source, int *status)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode,
				     .max_input = 1 << 24};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	if (!d)
		return 0;
	struct src s = {data, size};
	if (source && rtd_gotrace_dec_set_source(d, src_read, &s) < 0)
		abort();
	struct rtd_gotrace_event ev;
	size_t n = 0;
	int rc;
	rtd_gotrace_dec_feed(d, data, split);
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0)
		n++;
	if (rc == 0) {
		rtd_gotrace_dec_feed(d, data + split, size - split);
		while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			n++;
	}
	if (rc == 0) {
		rc = rtd_gotrace_dec_finish(d);
		while (rc == 0 && (rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			n++;
	}
	if (rc < 0) {
		const char *msg = rtd_gotrace_dec_error(d, NULL);
		if (!msg || !*msg)
			abort(); /* every error comes with a message */
	}
	*status = rc;
	rtd_gotrace_dec_free(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int s1, s2, s3, s4;
	size_t a = run(data, size, size, RTD_GOTRACE_RAW, false, &s1);
	size_t b = run(data, size, size / 2, RTD_GOTRACE_RAW, false, &s2);
	if (a != b || s1 != s2)
		abort(); /* chunking must not change the result */
	a = run(data, size, size / 3, RTD_GOTRACE_ORDERED, false, &s3);
	b = run(data, size, size / 2, RTD_GOTRACE_ORDERED, true, &s4);
	if (a != b || s3 != s4)
		abort(); /* reading the input again = keeping it */
	return 0;
}
