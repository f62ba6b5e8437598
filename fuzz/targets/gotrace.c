/* SPDX-License-Identifier: MIT */
/*
 * gotrace - fuzz the Go trace decoder in both modes.
 *
 * Invariants for any input: no crash, no hang; raw mode fed in two pieces
 * gives the same number of events as fed whole; an error leaves a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/gotrace.h"

static size_t run(const uint8_t *data, size_t size, size_t split,
		  enum rtd_gotrace_mode mode, int *status)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = mode,
				     .max_input = 1 << 24};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	if (!d)
		return 0;
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
	int s1, s2, s3;
	size_t a = run(data, size, size, RTD_GOTRACE_RAW, &s1);
	size_t b = run(data, size, size / 2, RTD_GOTRACE_RAW, &s2);
	if (a != b || s1 != s2)
		abort(); /* chunking must not change the result */
	run(data, size, size / 3, RTD_GOTRACE_ORDERED, &s3);
	return 0;
}
