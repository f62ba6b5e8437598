/* SPDX-License-Identifier: MIT */
/* nt_prof.h - a nettrace profile builder fed a decoder's events, as the
 * CLI fed it before the record source: the decoder's hooks. */
#ifndef NT_PROF_H
#define NT_PROF_H

#include <stdint.h>

#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

/* The hooks' context (rtd_nettrace_opts.ctx): the decoder and the builder. */
struct pc {
	rtd_nettrace *dec;
	rtd_nettrace_profiler *prof;
};

/* rtd_nettrace_opts.on_event: each event into the builder. */
static inline int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct pc *p = ctx;
	return rtd_nettrace_profiler_event(p->prof, p->dec, ev);
}

/* rtd_nettrace_opts.on_seqpoint: a sequence point ends what it holds. */
static inline int on_sp(void *ctx, uint64_t ts)
{
	(void)ts;
	return rtd_nettrace_profiler_seqpoint(((struct pc *)ctx)->prof);
}

#endif /* NT_PROF_H */
