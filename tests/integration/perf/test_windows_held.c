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

#define PT_WANT_SLED
#define PT_WANT_WINDOWS
#include "perf_test.h"

#define WANT_SAMPLES 3000u
#define TRIM_BOUND 512u /* profiler.c's PROF_TRIM_LOCATIONS */
#define MAX_NAME_BYTES (1u << 20)
/* 3,000 samples at 9999 Hz are 0.3 s of the child's CPU: at 10 s (a
 * kernel that lowered perf_event_max_sample_rate) the test gives up */
#define MAX_CHILD_CPU 10.0

struct counts {
	uint64_t samples, in_sled;
};

static bool enough(void *ctx)
{
	return ((struct counts *)ctx)->samples >= WANT_SAMPLES;
}

static void on_sample(const struct rtd_record *rec, void *ctx)
{
	struct counts *c = ctx;
	c->samples++;
	const char *leaf = rec->stack->n ? rec->stack->frames[0].name : NULL;
	if (leaf && strstr(leaf, "nop_sled"))
		c->in_sled++;
}

int main(void)
{
	pt_require();
	pid_t child = pt_fork_sled();
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 9999};
	struct rtd_perf_profiler *p = pt_window_profiler(child, 0, &so);
	struct counts c = {0};
	double child_cpu = pt_read_windows(p, child, MAX_CHILD_CPU, enough, on_sample, &c);
	uint64_t samples = c.samples, in_sled = c.in_sled;
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
