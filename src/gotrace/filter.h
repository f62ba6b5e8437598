/* SPDX-License-Identifier: MIT */
/* filter.h - what the filter and the trace writer share inside the module. */
#ifndef RTD_GOTRACE_FILTER_H
#define RTD_GOTRACE_FILTER_H

#include "gotrace/gotrace_int.h"

/* Is this a dictionary, batch or clock event (no G, P or time of its own)? */
static inline bool filter_meta(const struct rtd_gotrace_event *ev)
{
	unsigned t = ev->type;
	if (ev->gen) /* new format: batches, tables, frequency, sync */
		return (t <= RTD_GO2_EV_FREQUENCY && t != RTD_GO2_EV_CPU_SAMPLE) ||
		       t >= RTD_GO2_EV_EXPERIMENTAL_BATCH;
	return t == RTD_GO_EV_BATCH || t == RTD_GO_EV_FREQUENCY || t == RTD_GO_EV_STRING ||
	       t == RTD_GO_EV_STACK || t == RTD_GO_EV_TIMER_GOROUTINE;
}

static inline enum rtd_gotrace_mode filter_dec_mode(const rtd_gotrace_dec *d)
{
	return d->mode;
}

/* Does raw mode resolve every id (RTD_GOTRACE_RESOLVE with a source for
 * the old format)? */
static inline bool filter_dec_resolves(const rtd_gotrace_dec *d)
{
	return d->resolve && (d->v2 || d->src);
}
/* The new format's filtered writer (filter_out2.c). */
struct g2w;
struct g2w *g2w_new(rtd_gotrace_write_fn write, void *ctx, int ver);
int g2w_event(struct g2w *w, const struct rtd_gotrace_event *ev, bool keep);
int g2w_finish(struct g2w *w);
void g2w_free(struct g2w *w);
#endif
