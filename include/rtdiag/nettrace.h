/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace.h - .NET EventPipe streams: the decoder, the names of
 * managed code, profiles.
 *
 * An umbrella: one header per object, each usable alone.
 *   rtdiag/nettrace_decoder.h   the streaming decoder (rtd_nettrace)
 *   rtdiag/nettrace_methods.h   method names by address (rtd_nettrace_methods)
 *   rtdiag/nettrace_profiler.h  profiles (rtd_nettrace_profiler)
 * docs/api.md lists which header holds what.
 */
#ifndef RTDIAG_NETTRACE_H
#define RTDIAG_NETTRACE_H

#include "rtdiag/nettrace_decoder.h"
#include "rtdiag/nettrace_methods.h"
#include "rtdiag/nettrace_profiler.h"

#endif /* RTDIAG_NETTRACE_H */
