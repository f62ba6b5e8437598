/* SPDX-License-Identifier: MIT */
/*
 * chrome_json.c - the Chrome Trace Event JSON format ("Trace Event
 * Format", the JSON chrome://tracing, Perfetto's UI and speedscope import):
 * {"displayTimeUnit":"ns","traceEvents":[ ... ]}.
 *
 * Tracks become processes and threads: a thread track is its (pid, tid);
 * a named track (a CPU, a goroutine, "GC") is a thread of its parent's
 * process with a made-up tid above 10^9, named by "thread_name" metadata
 * and kept in creation order by "thread_sort_index"; a counter is "C"
 * events of its name in its parent's process. Slices are "B"/"E", whole
 * slices "X", instants "i" (thread scope), flows "s" and "f" (bound to the
 * enclosing slice); an "E" carries its slice's name and args, as
 * speedscope's importer needs to end it (it keys a frame by both, and of a
 * "B" and an "E" at one time takes the "B" first only when the keys are
 * equal: a zero-length slice with args stayed open to the end). Timestamps are microseconds with nanosecond decimals.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "timeline/timeline_impl.h"

#define NAMED_TID_BASE 1000000000LL

static void cj_sep(rtd_timeline *tl)
{
	tl_put(tl, rtd_buf_puts(&tl->b, tl->json_first ? "\n" : ",\n"));
	tl->json_first = false;
}

static void cj_str(rtd_timeline *tl, const char *s)
{
	tl_put(tl, rtd_buf_json_str(&tl->b, s, strlen(s)));
}

static void cj_ts(rtd_timeline *tl, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	tl_put(tl, rtd_buf_printf(&tl->b, ",\"%s\":%s%" PRIu64 ".%03u", key,
				  ns < 0 ? "-" : "", a / 1000,
				  (unsigned)(a % 1000)));
}

static void cj_where(rtd_timeline *tl, const struct tl_track *k)
{
	tl_put(tl, rtd_buf_printf(&tl->b, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64,
				  k->pid, k->tid));
}

static void cj_double(rtd_timeline *tl, double d)
{
	if (!isfinite(d))
		tl_put(tl, rtd_buf_puts(&tl->b, "null"));
	else
		tl_put(tl, rtd_buf_printf(&tl->b, "%.17g", d));
}

static void cj_meta(rtd_timeline *tl, const char *what, int64_t pid,
		    int64_t tid, const char *name, int64_t sort)
{
	cj_sep(tl);
	tl_put(tl, rtd_buf_printf(&tl->b, "{\"ph\":\"M\",\"name\":\"%s\","
					  "\"pid\":%" PRId64 ",\"tid\":%" PRId64
					  ",\"args\":{",
				  what, pid, tid));
	if (name) {
		tl_put(tl, rtd_buf_puts(&tl->b, "\"name\":"));
		cj_str(tl, name);
	} else {
		tl_put(tl, rtd_buf_printf(&tl->b, "\"sort_index\":%" PRId64, sort));
	}
	tl_put(tl, rtd_buf_puts(&tl->b, "}}"));
}

int cj_start(rtd_timeline *tl)
{
	return rtd_buf_puts(&tl->b, "{\"displayTimeUnit\":\"ns\","
				    "\"otherData\":{\"exporter\":\"rtdiag\"},"
				    "\"traceEvents\":[");
}

int cj_track(rtd_timeline *tl, uint64_t id, const struct rtd_track *t)
{
	struct tl_track *k = tl_track_get(tl, id);
	const char *name = t->name ? t->name : "";
	switch (t->kind) {
	case RTD_TRACK_PROCESS:
		k->tid = 0;
		cj_meta(tl, "process_name", k->pid, 0, name, 0);
		break;
	case RTD_TRACK_THREAD:
		cj_meta(tl, "thread_name", k->pid, k->tid, name, 0);
		break;
	case RTD_TRACK_NAMED:
		k->tid = NAMED_TID_BASE + (int64_t)id;
		cj_meta(tl, "thread_name", k->pid, k->tid, name, 0);
		cj_meta(tl, "thread_sort_index", k->pid, k->tid, NULL,
			(int64_t)id);
		break;
	case RTD_TRACK_COUNTER:
		k->tid = 0;
		break;
	}
	return 0;
}

static void cj_args(rtd_timeline *tl, const struct rtd_tl_event *e)
{
	if (!e->nargs)
		return;
	tl_put(tl, rtd_buf_puts(&tl->b, ",\"args\":{"));
	for (size_t i = 0; i < e->nargs; i++) {
		const struct rtd_tl_arg *a = &e->args[i];
		if (i)
			tl_put(tl, rtd_buf_putc(&tl->b, ','));
		cj_str(tl, a->key);
		tl_put(tl, rtd_buf_putc(&tl->b, ':'));
		switch (a->type) {
		case RTD_TL_STR: cj_str(tl, a->s); break;
		case RTD_TL_INT:
			tl_put(tl, rtd_buf_printf(&tl->b, "%" PRId64, a->i));
			break;
		case RTD_TL_UINT:
			tl_put(tl, rtd_buf_printf(&tl->b, "%" PRIu64, a->u));
			break;
		case RTD_TL_DOUBLE: cj_double(tl, a->d); break;
		case RTD_TL_BOOL:
			tl_put(tl, rtd_buf_puts(&tl->b, a->i ? "true" : "false"));
			break;
		default: tl_put(tl, rtd_buf_puts(&tl->b, "null"));
		}
	}
	tl_put(tl, rtd_buf_putc(&tl->b, '}'));
}

static void cj_flow(rtd_timeline *tl, const struct tl_track *k, bool in,
		    uint64_t id, int64_t ts)
{
	cj_sep(tl);
	tl_put(tl, rtd_buf_printf(&tl->b,
				  "{\"ph\":\"%s\",\"id\":%" PRIu64
				  ",\"name\":\"flow\",\"cat\":\"flow\"",
				  in ? "f\",\"bp\":\"e" : "s", id));
	cj_ts(tl, "ts", ts);
	cj_where(tl, k);
	tl_put(tl, rtd_buf_putc(&tl->b, '}'));
}

int cj_event(rtd_timeline *tl, enum tl_ev type, const struct rtd_tl_event *e)
{
	struct tl_track *k = tl_track_get(tl, e->track);
	static const char ph[] = {[TL_BEGIN] = 'B', [TL_END] = 'E',
				  [TL_COMPLETE] = 'X', [TL_INSTANT] = 'i'};
	cj_sep(tl);
	tl_put(tl, rtd_buf_printf(&tl->b, "{\"ph\":\"%c\",\"name\":", ph[type]));
	cj_str(tl, e->name);
	if (e->category) {
		tl_put(tl, rtd_buf_puts(&tl->b, ",\"cat\":"));
		cj_str(tl, e->category);
	}
	cj_ts(tl, "ts", e->ts);
	if (type == TL_COMPLETE)
		cj_ts(tl, "dur", e->dur);
	if (type == TL_INSTANT)
		tl_put(tl, rtd_buf_puts(&tl->b, ",\"s\":\"t\""));
	cj_where(tl, k);
	size_t at = tl->b.len;
	cj_args(tl, e);
	if (type == TL_BEGIN && !tl->err)
		tl_put(tl, tl_open_args(k, tl->b.data + at, tl->b.len - at));
	tl_put(tl, rtd_buf_putc(&tl->b, '}'));
	if (e->flow_out)
		cj_flow(tl, k, false, e->flow_out, e->ts);
	if (e->flow_in)
		cj_flow(tl, k, true, e->flow_in, e->ts);
	return tl->err;
}

int cj_end(rtd_timeline *tl, uint64_t track, int64_t ts, const char *name, const char *args)
{
	const struct tl_track *k = tl_track_get(tl, track);
	cj_sep(tl);
	tl_put(tl, rtd_buf_puts(&tl->b, "{\"ph\":\"E\""));
	if (name) {
		tl_put(tl, rtd_buf_puts(&tl->b, ",\"name\":"));
		cj_str(tl, name);
	}
	cj_ts(tl, "ts", ts);
	cj_where(tl, k);
	if (args && *args)
		tl_put(tl, rtd_buf_puts(&tl->b, args));
	tl_put(tl, rtd_buf_putc(&tl->b, '}'));
	return tl->err;
}

int cj_counter(rtd_timeline *tl, uint64_t track, int64_t ts, double v)
{
	const struct tl_track *k = tl_track_get(tl, track);
	cj_sep(tl);
	tl_put(tl, rtd_buf_puts(&tl->b, "{\"ph\":\"C\",\"name\":"));
	cj_str(tl, k->name);
	cj_ts(tl, "ts", ts);
	cj_where(tl, k);
	tl_put(tl, rtd_buf_puts(&tl->b, ",\"args\":{\"value\":"));
	cj_double(tl, v);
	tl_put(tl, rtd_buf_puts(&tl->b, "}}"));
	return tl->err;
}

int cj_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
	      const struct rtd_frame *frames, size_t n)
{
	const struct tl_track *k = tl_track_get(tl, track);
	cj_sep(tl);
	tl_put(tl, rtd_buf_puts(&tl->b, "{\"ph\":\"i\",\"name\":\"sample\","
					"\"cat\":\"sample\",\"s\":\"t\""));
	cj_ts(tl, "ts", ts);
	cj_where(tl, k);
	tl_put(tl, rtd_buf_puts(&tl->b, ",\"args\":{\"stack\":["));
	char buf[256];
	for (size_t i = 0; i < n; i++) {
		if (i)
			tl_put(tl, rtd_buf_putc(&tl->b, ','));
		cj_str(tl, tl_frame_name(&frames[i], buf, sizeof(buf)));
	}
	tl_put(tl, rtd_buf_puts(&tl->b, "]}}"));
	return tl->err;
}

int cj_finish(rtd_timeline *tl)
{
	return rtd_buf_puts(&tl->b, "\n]}\n");
}
