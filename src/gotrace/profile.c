/* SPDX-License-Identifier: MIT */
/*
 * profile.c - a CPU profile from a Go execution trace's CPU samples
 * (CPUSample events, Go 1.19+ with CPU profiling on while tracing), as a
 * consumer of the Go source's records (rtdiag/gotrace_source.h): each
 * SAMPLE record adds its stack, leaf first, with weight 1 sample and the
 * profiling period in nanoseconds, on the thread (M) that was running.
 * Frames in package runtime (and its internal kin) are Go-runtime frames,
 * the rest Go frames, for the flame graph's colours.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/gotrace_profile.h"
#include "rtdiag/source.h"

#define GO_SAMPLE_NS 10000000 /* runtime/pprof's 100 Hz */

static bool runtime_frame(const char *fn)
{
	return !strncmp(fn, "runtime.", 8) || !strncmp(fn, "runtime/", 8) ||
	       !strncmp(fn, "internal/runtime", 16);
}

/* The sample's M (the source's field "m"), -1 when it has none. */
static int64_t sample_m(const struct rtd_record *rec)
{
	for (size_t i = 0; i < rec->nfields; i++)
		if (rec->fields[i].type == RTD_FIELD_I64 && !strcmp(rec->fields[i].name, "m"))
			return rec->fields[i].i;
	return -1;
}

int rtd_profile_gotrace_record(rtd_profile *p, const struct rtd_record *rec)
{
	if (rec->kind == RTD_REC_ERROR)
		return rec->code < 0 ? rec->code : -RTD_E_INVAL;
	if (rec->kind != RTD_REC_SAMPLE || !rec->name || strcmp(rec->name, "CPUSample"))
		return 0;
	size_t n = rec->stack ? rec->stack->n : 0;
	const struct rtd_rec_frame *fr = n ? rec->stack->frames : NULL;
	struct rtd_frame small[64], *f = small;
	if (n > 64 && !(f = calloc(n, sizeof(*f))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].name = fr[i].name;
		f[i].file = fr[i].file;
		f[i].line = (uint32_t)fr[i].line;
		f[i].addr = fr[i].ip;
		f[i].kind = f[i].name && runtime_frame(f[i].name) ? RTD_FRAME_GO_RUNTIME
								   : RTD_FRAME_GO;
	}
	int64_t m = sample_m(rec);
	char thread[32];
	snprintf(thread, sizeof(thread), "M%" PRId64, m);
	int64_t vals[2] = {1, GO_SAMPLE_NS};
	int t = rtd_profile_find_type(p, "cpu");
	int64_t one[RTD_PROFILE_MAX_TYPES] = {0};
	const int64_t *v = vals;
	size_t nv = 2;
	if (rtd_profile_ntypes(p) != 2 || t != 1) {
		/* a profile of other types: the period goes to "cpu" if it
		 * has one, else a count to the default type */
		one[t >= 0 ? t : (int)rtd_profile_default_type(p)] = t >= 0 ? GO_SAMPLE_NS : 1;
		v = one;
		nv = rtd_profile_ntypes(p);
	}
	struct rtd_sample s = {.sz = sizeof(s), .frames = f, .nframes = n,
			       .leaf_first = true, .values = v, .nvalues = nv,
			       .tid = m >= 0 ? m : 0, .thread = m >= 0 ? thread : NULL};
	int err = rtd_profile_add_sample(p, &s);
	if (f != small)
		free(f);
	return err;
}

int rtd_profile_gotrace_pull(rtd_profile *p, rtd_source *src)
{
	const struct rtd_record *rec;
	int rc;
	while ((rc = rtd_source_next(src, &rec)) == 1)
		if ((rc = rtd_profile_gotrace_record(p, rec)) < 0)
			return rc;
	return rc;
}
