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

/* The shared traces with SampleProfiler samples */
static const char *const nt_sample_traces[] = {
	"testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
	"testdata/nettrace/mixed_managed_external_samples.nettrace",
	"testdata/nettrace/only_managed_samples.nettrace",
	"testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
};
#define NT_SAMPLE_TRACES (sizeof(nt_sample_traces) / sizeof(nt_sample_traces[0]))

/* The bytes of nt_sample_traces[@t] (free them), or NULL when the shared
 * test data lacks it (rtd_test_vector() said why). Include test_util.h
 * first. */
static inline uint8_t *nt_sample_trace(size_t t, size_t *len)
{
	const char *path = rtd_test_vector(nt_sample_traces[t]);
	if (!path)
		return NULL;
	uint8_t *buf = rtd_test_slurp(path, len);
	assert_non_null(buf);
	return buf;
}

#endif /* NT_PROF_H */
