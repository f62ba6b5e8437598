/* SPDX-License-Identifier: MIT */
/*
 * test_source_held.c - what a live perf source (rtd_perf_source_live())
 * holds of the names and stacks it gave out, on the real kernel (issue
 * #31: a flight ring's memory stays flat however long it runs).
 *
 * A forked child runs one function for ever: a loop over 64 Ki one-byte
 * instructions. Its code never changes, but nearly every sample has a
 * leaf address of its own, so a new stack: as a runtime's unnamed native
 * frames and the kernel's paths make new stacks for as long as a program
 * runs. The source, told that its consumer copies what it keeps
 * (RTD_PERF_SOURCE_COPIED, generations of 64 stacks), is read until it
 * has interned 1,600 distinct stacks:
 *  - the stacks it holds never pass two generations (128): the current
 *    one and the one before, freed once the consumer has taken its
 *    records (the old source held all 1,600: it fails here with "held
 *    1600 stacks of 1600 interned");
 *  - every record given out is whole when given: each sample's frames and
 *    names are read (the sanitized build sees a freed one), the sled's
 *    function leads most samples of the child, and its thread is named
 *    again in each new generation.
 * No time is asserted: the run ends on the count, bounded by 300 waits of
 * 0.1 s in which the source gave nothing (where 1,600 samples at 2999 Hz
 * take under a second of the child's CPU, and a window is 20 ms).
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>

#include "perf_test.h"
#include "rtdiag/perf_source.h"

#define GEN_STACKS 64u
#define WANT_STACKS 1600u
#define MAX_HELD (2u * GEN_STACKS)

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
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 2999};
	struct rtd_perf_profiler_opts o = {.sz = sizeof(o),
					   .pids = &child,
					   .npids = 1,
					   .flags = RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET,
					   .sampler = &so};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(child, SIGKILL);
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	}
	RTD_OPTS(rtd_perf_source_opts, po, .window_ms = 20, .flags = RTD_PERF_SOURCE_COPIED,
		 .gen_stacks = GEN_STACKS);
	int err = 0;
	rtd_source *s = rtd_perf_source_live(p, &po, &err);
	if (!s) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	struct rtd_perf_source_stats st = {.sz = sizeof(st)};
	uint64_t max_held = 0, samples = 0, in_sled = 0, thread_names = 0;
	const struct rtd_record *rec;
	int r = 0;
	for (unsigned idle = 0; idle < 300;) {
		r = rtd_source_next(s, &rec);
		if (r == RTD_SOURCE_IDLE) {
			/* only a wait that saw nothing counts: while a window is
			 * queued the source is idle between its records */
			if (rtd_source_wait(s, 100) == 0)
				idle++;
		} else if (r != 1) {
			break;
		} else if (rec->kind == RTD_REC_THREAD && rec->tid == (uint32_t)child) {
			if (!rec->name || !rec->name[0])
				FAIL("the child's thread without a name");
			thread_names++;
		} else if (rec->kind == RTD_REC_SAMPLE && rec->tid == (uint32_t)child) {
			samples++;
			size_t chars = 0;
			for (uint32_t i = 0; i < rec->stack->n; i++) {
				const struct rtd_rec_frame *f = &rec->stack->frames[i];
				chars += (f->name ? strlen(f->name) : 0) +
					 (f->module ? strlen(f->module) : 0);
			}
			const char *leaf = rec->stack->n ? rec->stack->frames[0].name : NULL;
			if (leaf && strstr(leaf, "nop_sled"))
				in_sled++;
			if (rec->stack->n && !chars)
				FAIL("a sample's frames have no names nor modules");
		}
		if (rtd_perf_source_live_stats(s, &st))
			FAIL("rtd_perf_source_live_stats refuses the live source");
		if (st.stacks > max_held)
			max_held = st.stacks;
		if (st.stacks_interned >= WANT_STACKS)
			break;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (r < 0)
		FAIL("source: %s", rec->message);
	printf("# %" PRIu64 " samples of the child (%" PRIu64 " led by nop_sled), %" PRIu64
	       " stacks interned, %" PRIu64 " generations, held at most %" PRIu64
	       " stacks (%" PRIu64 " now, %" PRIu64 " strings), the thread named %" PRIu64
	       " times\n",
	       samples, in_sled, st.stacks_interned, st.generations, max_held, st.stacks,
	       st.strings, thread_names);
	if (st.stacks_interned < WANT_STACKS)
		FAIL("only %" PRIu64 " stacks interned before 300 waits of the source saw nothing "
		     "(%" PRIu64 " samples)",
		     st.stacks_interned, samples);
	if (max_held > MAX_HELD)
		FAIL("held %" PRIu64 " stacks of %" PRIu64 " interned (at most %u, "
		     "generations of %u)",
		     max_held, st.stacks_interned, MAX_HELD, GEN_STACKS);
	OK("held at most %" PRIu64 " stacks while %" PRIu64 " were interned, in %" PRIu64
	   " generations", max_held, st.stacks_interned, st.generations);
	if (in_sled * 2 < samples)
		FAIL("only %" PRIu64 " of %" PRIu64 " samples are led by nop_sled", in_sled,
		     samples);
	if (thread_names < 2 || thread_names > st.generations + 1)
		FAIL("the child's thread named %" PRIu64 " times in %" PRIu64 " generations",
		     thread_names, st.generations);
	OK("%" PRIu64 " of %" PRIu64 " samples led by nop_sled, their stacks whole; the thread "
	   "named again in each generation",
	   in_sled, samples);
	rtd_source_free(s);
	rtd_perf_profiler_free(p);
	return 0;
}
