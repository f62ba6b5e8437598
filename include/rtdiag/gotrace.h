/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gotrace.h - Go execution traces: a streaming decoder (raw and
 * ordered mode) and an encoder, for the old format (Go 1.5-1.21).
 *
 * An umbrella: one header per object, each usable alone.
 *   rtdiag/gotrace_decoder.h  the decoder (rtd_gotrace_dec), event types, tallies
 *   rtdiag/gotrace_encoder.h  the encoder (rtd_gotrace_enc), text to binary
 *   rtdiag/gotrace_filter.h   filters (rtd_gotrace_filter) and filter writers
 *   rtdiag/gotrace_pipe.h     a decoder on a thread of its own: pipe, run
 * docs/api.md lists which header holds what.
 */
#ifndef RTDIAG_GOTRACE_H
#define RTDIAG_GOTRACE_H

#include "rtdiag/gotrace_decoder.h"
#include "rtdiag/gotrace_encoder.h"
#include "rtdiag/gotrace_filter.h"
#include "rtdiag/gotrace_pipe.h"

#endif /* RTDIAG_GOTRACE_H */
