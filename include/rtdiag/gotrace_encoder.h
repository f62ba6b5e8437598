/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace_encoder.h - Go execution traces written: an encoder of
 * events, and Go's text form of a trace converted to binary and back.
 */
#ifndef RTDIAG_GOTRACE_ENCODER_H
#define RTDIAG_GOTRACE_ENCODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_gotrace_event;

/**
 * typedef rtd_gotrace_write_fn - where the encoder's bytes go
 * @buf: bytes
 * @len: count
 * @ctx: the pointer given to rtd_gotrace_enc_new()
 *
 * Returns: 0, or a negative error that the encoder passes back.
 */
typedef int (*rtd_gotrace_write_fn)(const void *buf, size_t len, void *ctx);

/**
 * rtd_gotrace_text2bin - convert Go's text form of a trace to binary
 * @text: the text ("Trace Go1.22" then one event per line; golang/exp
 *        trace/internal/raw/doc.go)
 * @len: its length
 * @write: where the binary trace goes
 * @ctx: passed to @write
 * @err: gets a message naming the line on failure (may be NULL)
 * @errlen: size of @err
 *
 * Returns: 0, or -RTD_E_GO_TEXT, -RTD_E_GO_VERSION, -RTD_E_CAP or the
 * callback's error.
 */
RTD_API int rtd_gotrace_text2bin(const char *text, size_t len,
				 rtd_gotrace_write_fn write, void *ctx,
				 char *err, size_t errlen);

/**
 * rtd_gotrace_text2bin_as - convert Go's text form, of a known version
 * @text: the text, with or without its "Trace Go1.NN" line (Go's own
 *        `go tool trace -d=2` prints none)
 * @len: its length
 * @version: 1022, 1023, 1025 or 1026: the version of a text without the
 *           line (one with it must say the same); 0 as rtd_gotrace_text2bin()
 * @write: where the binary trace goes
 * @ctx: passed to @write
 * @err: gets a message naming the line on failure (may be NULL)
 * @errlen: size of @err
 *
 * Go 1.22's text names a CPUSample's arguments "time p g m stack" where
 * Go 1.23's (and rtdiag's) say "time m p g stack" for the same wire
 * order; a Go 1.22 text may use either.
 *
 * Returns: as rtd_gotrace_text2bin().
 */
RTD_API int rtd_gotrace_text2bin_as(const char *text, size_t len, int version,
				    rtd_gotrace_write_fn write, void *ctx,
				    char *err, size_t errlen);

/**
 * rtd_gotrace_bin2text_header - the first line of Go's text form
 * @f: where to
 * @version: the trace's Go version (1022 for Go 1.22; rtd_gotrace_dec_version())
 *
 * Writes "Trace Go1.NN", the line rtd_gotrace_text2bin() reads first.
 *
 * Returns: 0, -RTD_E_INVAL (no @f, or a version before Go 1.22: the old
 * format has no text form), or -EIO.
 */
RTD_API int rtd_gotrace_bin2text_header(FILE *f, int version);

/**
 * rtd_gotrace_bin2text_event - one event of a Go 1.22+ trace in Go's text form
 * @f: where to
 * @ev: the event, from a decoder in raw mode (RTD_GOTRACE_RAW: the wire's
 *      arguments in @ev->raw)
 *
 * Writes what golang/exp's trace/internal/raw prints (and go tool trace
 * -d=2): the event's name and its arguments as name=value; a Stack's
 * frames each on a line of its own ("\tpc= func= file= line="); a String's
 * or an experimental batch's bytes on a "\tdata=" line, quoted as Go's
 * strconv.Quote does. rtd_gotrace_text2bin() reads it back to the same
 * bytes.
 *
 * Returns: 0, -RTD_E_INVAL (no @f or @ev), or -EIO.
 */
RTD_API int rtd_gotrace_bin2text_event(FILE *f, const struct rtd_gotrace_event *ev);

typedef struct rtd_gotrace_enc rtd_gotrace_enc;

/**
 * rtd_gotrace_enc_new - create an encoder for a trace version
 * @version: 1005, 1007, 1008, 1009, 1010, 1011, 1019, 1021 (old format)
 *           or 1022, 1023, 1025, 1026 (new format: events are written
 *           as given, from @raw and @str, like Go's raw writer)
 * @write: output callback
 * @ctx: passed to @write
 *
 * Returns: the encoder, or NULL for an unsupported version or no memory.
 */
RTD_API rtd_gotrace_enc *rtd_gotrace_enc_new(int version, rtd_gotrace_write_fn write, void *ctx);

/**
 * rtd_gotrace_enc_free - flush and free an encoder
 * @e: the encoder, or NULL (no-op)
 */
RTD_API void rtd_gotrace_enc_free(rtd_gotrace_enc *e);

/**
 * rtd_gotrace_enc_event - write one event as decoded in raw mode
 * @e: the encoder
 * @ev: the event; Batch, Frequency, String, Stack and TimerGoroutine
 *      events are written as given; others get their timestamp (and for
 *      Go 1.5 sequence) delta recomputed from @ev->ticks and @ev->seq
 *      against the last event written in the current batch, so events can
 *      be dropped between them
 *
 * Returns: 0 or a negative error.
 */
RTD_API int rtd_gotrace_enc_event(rtd_gotrace_enc *e, const struct rtd_gotrace_event *ev);

/**
 * rtd_gotrace_enc_flush - push buffered bytes to the write callback
 * @e: the encoder
 *
 * Returns: 0 or the callback's error.
 */
RTD_API int rtd_gotrace_enc_flush(rtd_gotrace_enc *e);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOTRACE_ENCODER_H */
