/* SPDX-License-Identifier: MIT */
/*
 * test_windows_held.c - what a profiler drained window by window
 * (RTD_PERF_PROF_WINDOWS, as a flight recorder's and a plain recording's
 * are) holds of the addresses it met, on the real kernel (issue #31: a
 * ring's memory stays flat however long it runs).
 *
 * A forked child runs one function for ever: a loop over 64 Ki one-byte
 * instructions, so nearly every sample has a leaf address of its own, as
 * a runtime's unnamed native code and the kernel's paths give new
 * addresses for as long as a program runs. Each new address is a
 * location of the symbolizer (and its names, and call tree nodes). The
 * profiler feeds a live source (the recorder's wiring) read until 3,000
 * samples of the child came; then the source is stopped and read to
 * its end (its last window drained whole: the bound holds after each
 * drain; a source freed in the middle of one may hold that window's
 * addresses past it, 533 in one loaded ASan run):
 *  - the symbolizer had handed out more than twice the profiler's trim
 *    bound (512) of locations, and holds at most that bound, with its
 *    copied names under 1 MiB; the call tree holds at most the bound
 *    too (the old profiler held every location and every node: it fails
 *    here with "holds 2,9xx locations of 2,9xx handed out");
 *  - the samples given after the trims are still named right: nop_sled
 *    leads most of the child's samples (a wrong renumbering would name
 *    them after other code).
 * No time is asserted: the run ends on the count, bounded by 10 s of the
 * child's CPU (the samples follow its CPU, not the wall clock: 3,000 at
 * 9999 Hz are 0.3 s of it).
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>

#include "perf_test.h"
#include "rtdiag/perf_source.h"

#define WANT_SAMPLES 3000u
#define TRIM_BOUND 512u /* profiler.c's PROF_TRIM_LOCATIONS */
#define MAX_NAME_BYTES (1u << 20)
/* 3,000 samples at 9999 Hz are 0.3 s of the child's CPU: at 10 s (a
 * kernel that lowered perf_event_max_sample_rate) the test gives up */
#define MAX_CHILD_CPU 10.0

__attribute__((noinline, used)) static void nop_sled(void)
{
	__asm__ volatile(".rept 65536\n\tnop\n\t.endr" ::: "memory");
}

static void sled_forever(void)
{
	for (;;)
		nop_sled();
}

int main(void)
{
	pt_require();
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		sled_forever();
		_exit(0);
	}
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 9999};
	struct rtd_perf_profiler_opts o = {
		.sz = sizeof(o),
		.pids = &child,
		.npids = 1,
		.flags = RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET | RTD_PERF_PROF_WINDOWS,
		.sampler = &so};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(child, SIGKILL);
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	}
	static volatile int stop;
	RTD_OPTS(rtd_perf_source_opts, po, .window_ms = 20, .flags = RTD_PERF_SOURCE_COPIED,
		 .stop = &stop);
	int err = 0;
	rtd_source *s = rtd_perf_source_live(p, &po, &err);
	if (!s) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	uint64_t samples = 0, in_sled = 0;
	const struct rtd_record *rec;
	int r = 0;
	double child_cpu = 0;
	for (;;) {
		/* enough: the source is stopped and read to its end, so the
		 * window in flight is drained whole (a trim follows each
		 * drain; a source freed in the middle of one holds what that
		 * window met, up to a window's addresses past the bound) */
		if (samples >= WANT_SAMPLES || child_cpu >= MAX_CHILD_CPU)
			stop = 1;
		r = rtd_source_next(s, &rec);
		if (r == RTD_SOURCE_IDLE) {
			child_cpu = pt_cpu_seconds(child);
			rtd_source_wait(s, 100);
		} else if (r != 1) {
			break;
		} else if (rec->kind == RTD_REC_SAMPLE && rec->tid == (uint32_t)child && !stop) {
			samples++;
			const char *leaf = rec->stack->n ? rec->stack->frames[0].name : NULL;
			if (leaf && strstr(leaf, "nop_sled"))
				in_sled++;
		}
	}
	if (r < 0)
		FAIL("source: %s", rec->message);
	/* the runner is joined: its profiler and symbolizer are ours again */
	rtd_source_free(s);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rtd_symbolizer *sym = rtd_perf_profiler_symbolizer(p);
	struct rtd_sym_stats ss = {.sz = sizeof(ss)};
	rtd_sym_stats(sym, &ss);
	struct rtd_perf_profiler_stats ps = {.sz = sizeof(ps)};
	rtd_perf_profiler_stats(p, &ps);
	size_t held = rtd_sym_nlocations(sym);
	printf("# %" PRIu64 " samples of the child (%" PRIu64 " led by nop_sled): %" PRIu64
	       " locations handed out, %zu held, %" PRIu64 " bytes of names, %" PRIu64
	       " call tree nodes, %" PRIu64 " trims\n",
	       samples, in_sled, ss.locations, held, ss.name_bytes, ps.nodes, ps.location_trims);
	if (samples < WANT_SAMPLES)
		FAIL("only %" PRIu64 " samples of the child in %.1f s of its CPU", samples,
		     child_cpu);
	if (ss.locations <= 2 * TRIM_BOUND)
		FAIL("only %" PRIu64 " locations handed out: the sled gave too few new addresses "
		     "to pass the trim bound twice",
		     ss.locations);
	if (held > TRIM_BOUND)
		FAIL("holds %zu locations of %" PRIu64 " handed out (at most %u)", held,
		     ss.locations, TRIM_BOUND);
	if (ps.nodes > TRIM_BOUND)
		FAIL("the call tree holds %" PRIu64 " nodes after its windows were drained "
		     "(at most %u)",
		     ps.nodes, TRIM_BOUND);
	if (ss.name_bytes > MAX_NAME_BYTES)
		FAIL("the symbolizer holds %" PRIu64 " bytes of copied names (at most %u)",
		     ss.name_bytes, MAX_NAME_BYTES);
	OK("held %zu locations of %" PRIu64 " handed out (%" PRIu64 " trims), %" PRIu64
	   " nodes, %" PRIu64 " bytes of names",
	   held, ss.locations, ps.location_trims, ps.nodes, ss.name_bytes);
	if (in_sled * 2 < samples)
		FAIL("only %" PRIu64 " of %" PRIu64 " samples are led by nop_sled", in_sled,
		     samples);
	OK("%" PRIu64 " of %" PRIu64 " samples led by nop_sled across the trims", in_sled,
	   samples);
	rtd_perf_profiler_free(p);
	return 0;
}
