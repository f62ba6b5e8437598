/* SPDX-License-Identifier: MIT */
/*
 * goanalysis - fuzz the goroutine state tracker and the trace analyses
 * over whatever the ordered decoder makes of the input.
 *
 * Invariants for any input: no crash, no hang, no leak; the analyses take
 * every event the decoder gives (they never fail on a decoded event
 * except on a cap) and finish after a decoder error too; the tracker's
 * transitions of a goroutine chain (each starts where the last left it,
 * but for old-format syscalls given with the goroutine's next event);
 * both semantics run on old-format input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/goanalysis.h"
#include "rtdiag/gotrace.h"

static void on_any(const void *x, void *ctx)
{
	(void)x;
	(*(int *)ctx)++;
}

static void run(const uint8_t *data, size_t size, unsigned sem)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED,
				     .max_input = 1 << 24};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	if (!d)
		return;
	rtd_gotrace_dec_feed(d, data, size);
	rtd_gotrace_dec_finish(d);
	static const int64_t windows[] = {1, 1000, 1000000, 1000000000};
	int calls = 0;
	struct rtd_goan_opts ao = {
		.sz = sizeof(ao), .what = RTD_GOAN_PPROF | RTD_GOAN_GOROUTINES | RTD_GOAN_GC | RTD_GOAN_TASKS,
		.profiles = (1u << RTD_GOAN_PROF_COUNT) - 1, .semantics = sem,
		.mmu_flags = sem == RTD_GOAN_GO123 ? RTD_GOAN_UTIL_DEFAULT | RTD_GOAN_UTIL_PERPROC |
						   RTD_GOAN_UTIL_SWEEP : 0,
		.mmu_windows = windows, .n_mmu_windows = 4,
		.on_goroutine = (void (*)(const struct rtd_goan_goroutine *, void *))on_any,
		.on_region = (void (*)(const struct rtd_goan_region *, void *))on_any,
		.on_task = (void (*)(const struct rtd_goan_task *, void *))on_any,
		.on_gc = (void (*)(const struct rtd_goan_gc *, void *))on_any,
		.ctx = &calls,
	};
	rtd_goan *a = NULL;
	rtd_gostate *s = NULL;
	struct rtd_gotrace_event ev;
	struct rtd_goev g;
	int rc;
	while ((rc = rtd_gotrace_dec_next(d, &ev)) > 0) {
		if (!a) {
			a = rtd_goan_new(d, &ao);
			s = rtd_gostate_new(d);
			if (!a || !s)
				break;
		}
		if (rtd_goan_feed(a, &ev) < 0 && rtd_goan_error(a)[0] == 0)
			abort(); /* an error has a message */
		if (rtd_gostate_feed(s, &ev) == 0)
			while (rtd_gostate_next(s, &g) > 0) {
				const struct rtd_goframe *f;
				size_t n = rtd_gostate_stack(s, g.stack, &f);
				for (size_t i = 0; i < n; i++)
					if (!f[i].fn || !f[i].file)
						abort();
			}
	}
	if (a) {
		rtd_goan_finish(a);
		for (unsigned w = 0; w < RTD_GOAN_PROF_COUNT; w++) {
			rtd_profile *p;
			if (rtd_goan_profile_build(a, w, &p) == 0)
				rtd_profile_free(p);
		}
		for (size_t i = 0; i < 4; i++) {
			double m = rtd_goan_mmu(a, i, NULL);
			if (m > 1.0 + 1e-9 || (m < 0 && m != -1))
				abort();
		}
	}
	if (s)
		rtd_gostate_finish(s);
	rtd_gostate_free(s);
	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, RTD_GOAN_AUTO);
	if (size >= 16 && memcmp(data, "go 1.2", 6) != 0 && memcmp(data, "go 1.1", 6) == 0)
		run(data, size, RTD_GOAN_GO123);
	return 0;
}
