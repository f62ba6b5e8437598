/* SPDX-License-Identifier: MIT */
/*
 * nettrace - fuzz the EventPipe stream decoder end to end: framing, blocks,
 * metadata, stacks, payload walking, text and JSON rendering, and the
 * profile builder.
 *
 * The input is fed in two parts split at a point taken from its last byte,
 * so the decoder's buffering of incomplete units is exercised too.
 * Invariants: an error always comes with a message and an offset inside
 * the input; bytes consumed never exceed the input. A second decoder
 * delivers the same input in time order (opts.sort) and renders it with
 * frames named by a method table learnt from the same events; it must
 * deliver exactly as many events as the stream-order one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

struct ctx {
	rtd_nettrace *dec;
	rtd_nettrace_profiler *prof;
};

struct sctx {
	rtd_nettrace *dec;
	rtd_nettrace_methods *m;
	char *buf;
	size_t len, cap;
	uint64_t n;
};

static const char *frame(void *c, uint64_t ip)
{
	return rtd_nettrace_methods_name(c, ip);
}

static int on_sorted(void *c, const struct rtd_nettrace_event *ev)
{
	struct sctx *x = c;
	x->n++;
	rtd_nettrace_methods_event(x->m, ev);
	x->len = 0;
	rtd_nettrace_format_append(x->dec, ev, RTD_NT_FMT_JSON | RTD_NT_FMT_STACK,
				   frame, x->m, &x->buf, &x->len, &x->cap);
	x->len = 0;
	rtd_nettrace_format_append(x->dec, ev, RTD_NT_FMT_STACK, frame, x->m,
				   &x->buf, &x->len, &x->cap);
	return 0;
}

static int on_value(void *c, const struct rtd_nettrace_value *v)
{
	(void)c;
	(void)v;
	return 0;
}

static int on_event(void *c, const struct rtd_nettrace_event *ev)
{
	struct ctx *x = c;
	rtd_nettrace_walk(x->dec, ev, on_value, NULL);
	rtd_nettrace_format(x->dec, ev, RTD_NT_FMT_TEXT | RTD_NT_FMT_STACK, NULL);
	rtd_nettrace_format(x->dec, ev, RTD_NT_FMT_JSON | RTD_NT_FMT_STACK, NULL);
	struct rtd_nettrace_value v;
	rtd_nettrace_get(x->dec, ev, "Count", &v);
	return rtd_nettrace_profiler_event(x->prof, x->dec, ev) == -RTD_E_CAP
		       ? -RTD_E_CAP
		       : 0;
}

static int on_sp(void *c, uint64_t ts)
{
	(void)ts;
	return rtd_nettrace_profiler_seqpoint(((struct ctx *)c)->prof);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx x;
	struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po),
						.max_stacks = 4096,
						.max_pending = 65536};
	x.prof = rtd_nettrace_profiler_new(&po);
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &x,
				      .on_event = on_event,
				      .on_seqpoint = on_sp,
				      .max_block = 1 << 20,
				      .max_metadata = 4096,
				      .max_stack_bytes = 1 << 20};
	x.dec = rtd_nettrace_new(&o);
	if (!x.dec || !x.prof)
		abort();
	size_t split = size ? (size_t)data[size - 1] * size / 256 : 0;
	int rc = rtd_nettrace_feed(x.dec, data, split);
	if (rc >= 0 && rc != 1)
		rc = rtd_nettrace_feed(x.dec, data + split, size - split);
	if (rc >= 0)
		rc = rtd_nettrace_finish(x.dec);
	uint64_t off = 0;
	const char *msg = rtd_nettrace_error(x.dec, &off);
	if (rc < 0 && rc != -RTD_E_CAP && (!msg[0] || off > size))
		abort();
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(x.dec, &st);
	if (st.bytes > size)
		abort();
	/* the same bytes in time order: every event once */
	struct sctx sx = {0};
	sx.m = rtd_nettrace_methods_new();
	struct rtd_nettrace_opts so = {.sz = sizeof(so), .ctx = &sx,
				       .on_event = on_sorted, .sort = true,
				       .max_block = 1 << 20, .max_metadata = 4096,
				       .max_stack_bytes = 1 << 20,
				       .max_sort_bytes = 8 << 20};
	sx.dec = rtd_nettrace_new(&so);
	if (!sx.dec || !sx.m)
		abort();
	int src = rtd_nettrace_feed(sx.dec, data, size);
	int frc = rtd_nettrace_finish(sx.dec);
	(void)src;
	struct rtd_nettrace_stats st2;
	rtd_nettrace_stats(sx.dec, &st2);
	if (frc != -RTD_E_CAP && st2.events != sx.n)
		abort(); /* a held event was lost */
	free(sx.buf);
	rtd_nettrace_methods_free(sx.m);
	rtd_nettrace_free(sx.dec);

	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	if (p)
		rtd_nettrace_profiler_finish(x.prof, p);
	rtd_profile_free(p);
	rtd_nettrace_profiler_free(x.prof);
	rtd_nettrace_free(x.dec);
	return 0;
}
