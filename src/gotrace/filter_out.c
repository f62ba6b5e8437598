/* SPDX-License-Identifier: MIT */
/*
 * filter_out.c - a trace of the events a filter keeps
 * (rtd_gotrace_filter_writer), for the old format here; the new format's
 * is in filter_out2.c.
 *
 * Old format: the kept events are written through the encoder (which
 * recomputes time deltas) with what they need: their batch's Batch event
 * (written before its first kept event), the String events they name
 * (written before them when known, else when they come), the Stack
 * events of their stacks and the strings of those, the Frequency and
 * TimerGoroutine events, and a GoStartLocal where an event's goroutine
 * would otherwise be lost (the old format names a goroutine only when it
 * starts, Go's parser.go lastG rules).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "gotrace/filter.h"

#define FW_MAX_IDS (1u << 24) /* strings or stacks the output names */

/* The goroutine a reader of the output will infer, per P. */
struct outg {
	int64_t p;
	uint64_t g;
};

struct rtd_gotrace_filter_writer {
	int ver;
	bool filtered;
	struct g2w *g2;       /* new format, filtered */
	rtd_gotrace_enc *enc; /* old format, or a plain rewrite */
	rtd_map strs_done, stacks_done, strs_wanted, stacks_wanted;
	struct rtd_gotrace_event batch; /* the last Batch seen, written lazily */
	uint64_t batch_raw[3];
	bool have_batch, batch_written;
	uint64_t out_g;
	struct outg *outg;
	size_t noutg;
};

rtd_gotrace_filter_writer *rtd_gotrace_filter_writer_new(int version, bool filtered,
							 rtd_gotrace_write_fn write, void *ctx)
{
	rtd_gotrace_filter_writer *w = calloc(1, sizeof(*w));
	if (!w || !write)
		goto fail;
	w->ver = version;
	w->filtered = filtered;
	if (version >= 1022 && filtered)
		w->g2 = g2w_new(write, ctx, version);
	else
		w->enc = rtd_gotrace_enc_new(version, write, ctx);
	if (!w->g2 && !w->enc)
		goto fail;
	rtd_map_init(&w->strs_done, FW_MAX_IDS);
	rtd_map_init(&w->stacks_done, FW_MAX_IDS);
	rtd_map_init(&w->strs_wanted, FW_MAX_IDS);
	rtd_map_init(&w->stacks_wanted, FW_MAX_IDS);
	return w;
fail:
	free(w);
	return NULL;
}

void rtd_gotrace_filter_writer_free(rtd_gotrace_filter_writer *w)
{
	if (!w)
		return;
	g2w_free(w->g2);
	rtd_gotrace_enc_free(w->enc);
	rtd_map_free(&w->strs_done);
	rtd_map_free(&w->stacks_done);
	rtd_map_free(&w->strs_wanted);
	rtd_map_free(&w->stacks_wanted);
	free(w->outg);
	free(w);
}

static bool has(const rtd_map *m, uint64_t id)
{
	return rtd_map_get(m, id, NULL);
}

/* Add @id to @m: 0, or <0 (-RTD_E_CAP, -ENOMEM). */
static int add(rtd_map *m, uint64_t id)
{
	return has(m, id) ? 0 : rtd_map_put(m, id, (void *)1, NULL);
}

static uint64_t *outg_slot(rtd_gotrace_filter_writer *w, int64_t p)
{
	for (size_t i = 0; i < w->noutg; i++)
		if (w->outg[i].p == p)
			return &w->outg[i].g;
	struct outg *n = realloc(w->outg, (w->noutg + 1) * sizeof(*n));
	if (!n)
		return NULL;
	w->outg = n;
	w->outg[w->noutg] = (struct outg){p, 0};
	return &w->outg[w->noutg++].g;
}

/* Does the event tell a reader of the old format its own goroutine? */
static bool sets_own_g(unsigned t)
{
	switch (t) {
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LOCAL:
	case RTD_GO_EV_GO_START_LABEL:
	case RTD_GO_EV_GO_SYS_EXIT:
	case RTD_GO_EV_GO_WAITING:
	case RTD_GO_EV_GO_IN_SYSCALL:
	case RTD_GO_EV_GC_START:
	case RTD_GO_EV_GC_DONE:
	case RTD_GO_EV_GC_STW_START:
	case RTD_GO_EV_GC_STW_DONE:
	case RTD_GO_EV_CPU_SAMPLE:
		return true;
	}
	return false;
}

static void track_out_g(rtd_gotrace_filter_writer *w, const struct rtd_gotrace_event *ev)
{
	switch (ev->type) {
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LOCAL:
	case RTD_GO_EV_GO_START_LABEL:
		w->out_g = ev->args[0];
		break;
	default:
		if (go1_ends_running_g(ev->type))
			w->out_g = 0;
	}
}

/* String @id goes in the output before an event that uses it. */
static int need_string(rtd_gotrace_filter_writer *w, const rtd_gotrace_dec *d, uint64_t id)
{
	if (id == 0 || has(&w->strs_done, id))
		return 0;
	size_t len;
	const char *s = rtd_gotrace_dec_string(d, id, &len);
	if (!s) /* not seen yet: write it when it comes */
		return add(&w->strs_wanted, id);
	struct rtd_gotrace_event sev = {.type = RTD_GO_EV_STRING, .str_id = id,
					.str = s, .str_len = len};
	int rc = add(&w->strs_done, id);
	return rc < 0 ? rc : rtd_gotrace_enc_event(w->enc, &sev);
}

/* The string argument of a kept event's type, or 0. */
static uint64_t string_arg(const struct rtd_gotrace_event *ev)
{
	switch (ev->type) {
	case RTD_GO_EV_GO_START_LABEL:
	case RTD_GO_EV_USER_TASK_CREATE:
	case RTD_GO_EV_USER_REGION:
		return ev->args[2];
	case RTD_GO_EV_USER_LOG:
		return ev->args[1];
	}
	return 0;
}

/* A kept event: its batch, string and goroutine first. */
static int write_kept(rtd_gotrace_filter_writer *w, const rtd_gotrace_dec *d,
		      const struct rtd_gotrace_event *ev)
{
	int rc = need_string(w, d, string_arg(ev));
	if (rc == 0 && ev->stack)
		rc = add(&w->stacks_wanted, ev->stack);
	if (rc == 0 && !w->batch_written) {
		if (!w->have_batch)
			return -RTD_E_GO_EVENT;
		uint64_t *slot = outg_slot(w, w->batch.p);
		if (!slot)
			return -ENOMEM;
		rc = rtd_gotrace_enc_event(w->enc, &w->batch);
		w->batch_written = true;
		w->out_g = *slot;
	}
	/* The old format names a goroutine only when it starts: if the
	 * starting event was filtered out, say it again with a GoStartLocal
	 * (Go 1.7+) so the event reads back with its own G. */
	if (rc == 0 && ev->g && ev->g != w->out_g && !sets_own_g(ev->type) && w->ver >= 1007) {
		uint64_t raw[2] = {0, ev->g};
		struct rtd_gotrace_event st = {.type = RTD_GO_EV_GO_START_LOCAL,
					       .ticks = ev->ticks, .nraw = 2, .raw = raw};
		rc = rtd_gotrace_enc_event(w->enc, &st);
		w->out_g = ev->g;
	}
	if (rc == 0)
		rc = rtd_gotrace_enc_event(w->enc, ev);
	if (rc == 0) {
		track_out_g(w, ev);
		uint64_t *slot = outg_slot(w, w->batch.p);
		if (!slot)
			return -ENOMEM;
		*slot = w->out_g;
	}
	return rc;
}

/* A Stack event: written when a kept event used it, after its strings. */
static int write_stack(rtd_gotrace_filter_writer *w, const rtd_gotrace_dec *d,
		       const struct rtd_gotrace_event *ev)
{
	if (!has(&w->stacks_wanted, ev->args[0]) || has(&w->stacks_done, ev->args[0]))
		return 0;
	int rc = 0;
	for (size_t i = 0; i < ev->nframes && rc == 0; i++) {
		rc = need_string(w, d, ev->frames[i].fn_id);
		if (rc == 0)
			rc = need_string(w, d, ev->frames[i].file_id);
	}
	if (rc == 0)
		rc = add(&w->stacks_done, ev->args[0]);
	return rc < 0 ? rc : rtd_gotrace_enc_event(w->enc, ev);
}

int rtd_gotrace_filter_writer_event(rtd_gotrace_filter_writer *w, const rtd_gotrace_dec *d,
				    const struct rtd_gotrace_event *ev, bool keep)
{
	if (w->g2)
		return g2w_event(w->g2, ev, keep);
	if (!w->filtered) /* a plain rewrite: every event as it came */
		return rtd_gotrace_enc_event(w->enc, ev);
	switch (ev->type) {
	case RTD_GO_EV_BATCH:
		w->batch = *ev;
		memcpy(w->batch_raw, ev->raw, ev->nraw * sizeof(uint64_t));
		w->batch.raw = w->batch_raw;
		w->have_batch = true;
		w->batch_written = false;
		return 0;
	case RTD_GO_EV_FREQUENCY:
	case RTD_GO_EV_TIMER_GOROUTINE:
		return rtd_gotrace_enc_event(w->enc, ev);
	case RTD_GO_EV_STRING:
		if (has(&w->strs_wanted, ev->str_id) && !has(&w->strs_done, ev->str_id)) {
			int rc = add(&w->strs_done, ev->str_id);
			return rc < 0 ? rc : rtd_gotrace_enc_event(w->enc, ev);
		}
		return 0;
	case RTD_GO_EV_STACK:
		return write_stack(w, d, ev);
	}
	return keep ? write_kept(w, d, ev) : 0;
}

int rtd_gotrace_filter_writer_finish(rtd_gotrace_filter_writer *w)
{
	if (w->g2)
		return g2w_finish(w->g2);
	return rtd_gotrace_enc_flush(w->enc);
}
