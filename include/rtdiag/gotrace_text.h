/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_text.h - the events of a Go execution trace as lines of
 * text or JSON ('rtdiag gotrace cat' and 'grep' print with it).
 */
#ifndef RTDIAG_GOTRACE_TEXT_H
#define RTDIAG_GOTRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "rtdiag/gotrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum rtd_gotrace_text_format - how events are written
 * @RTD_GOTRACE_TEXT_PLAIN: a line per event: "TIME Name p= g= off= args"
 *	(Go 1.5-1.21), "TIME Name M= P= G= off= args strings" (Go 1.22+,
 *	ordered) or "TIME Name off= args strings" (Go 1.22+, raw); each
 *	stack named by its first frame ("stack=ID:FUNC@FILE:LINE"); String
 *	and Stack events as their own lines
 * @RTD_GOTRACE_TEXT_JSON: JSON Lines, an object per event
 * @RTD_GOTRACE_TEXT_GODEBUG: what Go 1.19's 'go tool trace -d' prints
 *	(Go 1.5-1.21 traces; the caller leaves out the dictionary events)
 */
enum rtd_gotrace_text_format {
	RTD_GOTRACE_TEXT_PLAIN,
	RTD_GOTRACE_TEXT_JSON,
	RTD_GOTRACE_TEXT_GODEBUG,
};

/**
 * struct rtd_gotrace_text_opts - options of rtd_gotrace_text_new()
 * @sz: sizeof(struct rtd_gotrace_text_opts)
 * @format: enum rtd_gotrace_text_format
 * @ordered: the events come from an ordered-mode decoder (a Go 1.22+
 *	event's M, P and G are known only then)
 * @stacks: under each event, every frame of each stack it names
 * @dec: the decoder whose tables name the stacks, or NULL (ids only);
 *	read at each event, so it must outlive the writer
 * @write: where the bytes go; a negative return is kept and returned by
 *	every later call
 * @ctx: passed to @write
 */
struct rtd_gotrace_text_opts {
	size_t sz;
	int format;
	bool ordered;
	bool stacks;
	rtd_gotrace_dec *dec;
	rtd_gotrace_write_fn write;
	void *ctx;
};

typedef struct rtd_gotrace_text rtd_gotrace_text;

/**
 * rtd_gotrace_text_new - a writer of events as text
 * @opts: options (@opts->write is needed)
 *
 * Lines are built in a buffer of its own and handed to @opts->write in
 * pieces of up to 64 KiB (call rtd_gotrace_text_flush() before writing
 * anything else to the same place).
 *
 * Returns: the writer, or NULL when out of memory or @opts is invalid.
 */
RTD_API rtd_gotrace_text *rtd_gotrace_text_new(const struct rtd_gotrace_text_opts *opts);

/**
 * rtd_gotrace_text_event - write one event
 * @t: the writer
 * @ev: an event of @opts->dec (or of a decoder whose tables are as its)
 *
 * Returns: 0, or the negative error @write returned (now or before).
 */
RTD_API int rtd_gotrace_text_event(rtd_gotrace_text *t, const struct rtd_gotrace_event *ev);

/**
 * rtd_gotrace_text_decoded - write the events a decoder has ready
 * @t: the writer
 * @d: the decoder (fed by the caller; for the fast path, @opts->dec)
 * @max: write at most this many events
 * @n: incremented by the count written
 *
 * Each event rtd_gotrace_dec_next() would hand out now, written as
 * rtd_gotrace_text_event() writes it (go-debug: the meta events left
 * out, as rtd_gotrace_event_is_meta() says, and not counted), but
 * without a call per event: an ordered decoder's events are taken and
 * formatted in one loop.
 *
 * Returns: 1 when @max events were written, 0 when the decoder has no
 * event now (feed it, or finish it; 0 after the finish: the end), or the
 * decoder's negative error (rtd_gotrace_dec_error()) or @write's;
 * -RTD_E_INVAL without @d or @n.
 */
RTD_API int rtd_gotrace_text_decoded(rtd_gotrace_text *t, rtd_gotrace_dec *d, uint64_t max,
				     uint64_t *n);

/**
 * rtd_gotrace_text_flush - hand what is buffered to @write
 * @t: the writer
 *
 * Returns: 0, or the negative error @write returned (now or before).
 */
RTD_API int rtd_gotrace_text_flush(rtd_gotrace_text *t);

/**
 * rtd_gotrace_text_free - free the writer (what is buffered is dropped:
 * flush first)
 * @t: the writer; NULL does nothing
 */
RTD_API void rtd_gotrace_text_free(rtd_gotrace_text *t);

/**
 * rtd_gotrace_event_is_meta - is an event about the trace rather than
 * the program (batches, string and stack tables, frequency, sync)?
 * @ev: an event
 *
 * Returns: true for the events 'go tool trace -d' does not list.
 */
RTD_API bool rtd_gotrace_event_is_meta(const struct rtd_gotrace_event *ev);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_TEXT_H */
