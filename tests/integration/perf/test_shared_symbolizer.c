/* SPDX-License-Identifier: MIT */
/*
 * test_shared_symbolizer.c - a CPU and an off-CPU profiler of one process
 * sharing one symbolizer that the caller owns (rtd_perf_profiler_opts.
 * symbolizer), as a flight ring's two profilers do (issue #31: each
 * symbolizer read every file's symbols, ~6.7 MB on a .NET process, and the
 * ring had two).
 *
 * A forked child runs a loop of ~10 ms in a 64 KiB nop sled (nearly every
 * CPU sample a new address, so the symbolizer's locations pass the trim
 * bound again and again) and a 1 ms nanosleep made by a raw syscall from
 * its own function sleep_here (the wait's first user frame). Both
 * profilers feed live sources (the recorder's wiring: each runs and
 * drains on threads of its own) read until 2,000 CPU samples and 40
 * waits of the child came (mostly spinning: at load 36 a loop with a
 * sleep every 2 ms spent its CPU in the kernel's switches, 920 samples
 * in 20 s of it):
 *  - both profilers give the caller's symbolizer as theirs, and the
 *    second, asking for every file's symbols as the first did, read none
 *    again (one table: objects loaded and symbols unchanged by it);
 *  - the CPU samples are led by nop_sled and the waits are in
 *    sleep_here across the trims (each profiler's trim renumbers the
 *    other's location ids: a wrong renumbering names frames after other
 *    code), and trims happened;
 *  - the shared table holds at most the trim bound after the last drain.
 * The old library fails at once: it refuses the options ("bad profiler
 * options": the field is unknown to it, and not zero).
 * No time is asserted: the run ends on the counts, bounded by 20 s of the
 * child's CPU.
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define PT_WANT_SLED
#include "perf_test.h"
#include "rtdiag/perf_source.h"

#define WANT_SAMPLES 2000u
#define WANT_WAITS 40u
#define TRIM_BOUND 512u /* profiler.c's PROF_TRIM_LOCATIONS */
#define MAX_CHILD_CPU 20.0

/* a wait whose first user frame is this function: the syscall is made
 * here, not in libc (whose frames may hide their caller) */
__attribute__((noinline, used)) static void sleep_here(void)
{
	struct timespec ts = {0, 1000000};
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
	(void)ret;
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static pid_t fork_child(void)
{
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		for (;;) {
			int64_t end = now_ns() + 10000000;
			while (now_ns() < end)
				pt_nop_sled();
			sleep_here();
		}
	}
	return child;
}

static struct rtd_perf_profiler *profiler(pid_t *child, rtd_symbolizer *sym, bool off)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = off ? 0 : 9999,
					   .exclude_kernel = !off};
	struct rtd_perf_profiler_opts o = {
		.sz = sizeof(o),
		.pids = child,
		.npids = 1,
		.flags = RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_NO_DOTNET |
			 RTD_PERF_PROF_WINDOWS | RTD_PERF_PROF_ALL_SYMBOLS |
			 (off ? RTD_PERF_PROF_OFF_CPU : 0),
		.sampler = &so,
		.symbolizer = sym};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(*child, SIGKILL);
		FAIL("profiler_new (%s): %s", off ? "off-CPU" : "CPU",
		     rtd_perf_profiler_errmsg(NULL));
	}
	return p;
}

static const char *field_str(const struct rtd_record *r, const char *name)
{
	for (size_t i = 0; i < r->nfields; i++)
		if (!strcmp(r->fields[i].name, name) && r->fields[i].type == RTD_FIELD_STR)
			return r->fields[i].s;
	return NULL;
}

int main(void)
{
	pt_require();
	pid_t child = fork_child();
	rtd_symbolizer *sym;
	if (rtd_symbolizer_new(NULL, &sym)) {
		kill(child, SIGKILL);
		FAIL("symbolizer_new");
	}
	struct rtd_perf_profiler *cpu = profiler(&child, sym, false);
	/* every file's symbols read once (this waits for the loading) */
	struct rtd_sym_stats s1 = {.sz = sizeof(s1)};
	rtd_sym_stats(sym, &s1);
	struct rtd_perf_profiler *off = profiler(&child, sym, true);
	struct rtd_sym_stats s2 = {.sz = sizeof(s2)};
	rtd_sym_stats(sym, &s2);
	if (rtd_perf_profiler_symbolizer(cpu) != sym || rtd_perf_profiler_symbolizer(off) != sym)
		FAIL("the profilers' symbolizers are not the caller's");
	if (!s1.symbols)
		FAIL("the first profiler read no symbols at its start");
	if (s2.objects_loaded != s1.objects_loaded || s2.symbols != s1.symbols ||
	    s2.dwarf_bytes != s1.dwarf_bytes)
		FAIL("the second profiler read symbols again: %" PRIu64 " objects, %" PRIu64
		     " symbols before it, %" PRIu64 " and %" PRIu64 " after",
		     s1.objects_loaded, s1.symbols, s2.objects_loaded, s2.symbols);
	OK("one table: %" PRIu64 " objects and %" PRIu64 " symbols read for the first "
	   "profiler, none again for the second",
	   s1.objects_loaded, s1.symbols);

	static volatile int stop;
	RTD_OPTS(rtd_perf_source_opts, po, .window_ms = 20, .flags = RTD_PERF_SOURCE_COPIED,
		 .stop = &stop);
	int err = 0;
	rtd_source *src[2] = {rtd_perf_source_live(cpu, &po, &err), NULL};
	if (src[0])
		src[1] = rtd_perf_source_live(off, &po, &err);
	if (!src[0] || !src[1]) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	uint64_t samples = 0, in_sled = 0, waits = 0, in_sleep = 0;
	double child_cpu = 0;
	bool ended[2] = {false, false};
	while (!ended[0] || !ended[1]) {
		if ((samples >= WANT_SAMPLES && waits >= WANT_WAITS) || child_cpu >= MAX_CHILD_CPU)
			stop = 1;
		bool idle = true;
		for (int i = 0; i < 2; i++) {
			const struct rtd_record *rec;
			int r = ended[i] ? 0 : rtd_source_next(src[i], &rec);
			if (ended[i] || r == RTD_SOURCE_IDLE)
				continue;
			idle = false;
			if (r < 0)
				FAIL("source %d: %s", i, rec->message);
			if (r != 1) {
				ended[i] = true;
				continue;
			}
			if (rec->tid != (uint32_t)child || stop)
				continue;
			if (i == 0 && rec->kind == RTD_REC_SAMPLE && rec->stack->n) {
				samples++;
				const char *leaf = rec->stack->frames[0].name;
				in_sled += leaf && strstr(leaf, "nop_sled");
			} else if (i == 1 && rec->kind == RTD_REC_SLICE) {
				const char *in = field_str(rec, "in");
				waits++;
				in_sleep += in && !strcmp(in, "sleep_here");
			}
		}
		if (idle) {
			child_cpu = pt_cpu_seconds(child);
			rtd_source_wait(src[0], 20);
		}
	}
	/* the runners are joined: the profilers and the symbolizer are ours */
	rtd_source_free(src[0]);
	rtd_source_free(src[1]);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	struct rtd_sym_stats ss = {.sz = sizeof(ss)};
	rtd_sym_stats(sym, &ss);
	struct rtd_perf_profiler_stats pc = {.sz = sizeof(pc)}, pf = {.sz = sizeof(pf)};
	rtd_perf_profiler_stats(cpu, &pc);
	rtd_perf_profiler_stats(off, &pf);
	size_t held = rtd_sym_nlocations(sym);
	printf("# %" PRIu64 " CPU samples of the child (%" PRIu64 " led by nop_sled), %" PRIu64
	       " waits (%" PRIu64 " in sleep_here); %" PRIu64 " locations handed out, %zu "
	       "held; trims seen by the CPU profiler %" PRIu64 ", by the off-CPU one %" PRIu64
	       "\n",
	       samples, in_sled, waits, in_sleep, ss.locations, held, pc.location_trims,
	       pf.location_trims);
	if (samples < WANT_SAMPLES || waits < WANT_WAITS)
		FAIL("only %" PRIu64 " samples and %" PRIu64 " waits of the child in %.1f s of "
		     "its CPU",
		     samples, waits, child_cpu);
	if (!pc.location_trims || !pf.location_trims)
		FAIL("no trim of the shared locations reached both profilers (%" PRIu64
		     " and %" PRIu64 ")",
		     pc.location_trims, pf.location_trims);
	if (held > TRIM_BOUND)
		FAIL("the shared table holds %zu locations of %" PRIu64 " handed out (at most %u)",
		     held, ss.locations, TRIM_BOUND);
	if (in_sled * 10 < samples * 9)
		FAIL("only %" PRIu64 " of %" PRIu64 " CPU samples are led by nop_sled", in_sled,
		     samples);
	if (in_sleep * 10 < waits * 9)
		FAIL("only %" PRIu64 " of %" PRIu64 " waits are in sleep_here", in_sleep, waits);
	OK("%" PRIu64 " of %" PRIu64 " samples in nop_sled and %" PRIu64 " of %" PRIu64
	   " waits in sleep_here, named from one table across %" PRIu64 " trims",
	   in_sled, samples, in_sleep, waits, pc.location_trims);
	rtd_perf_profiler_free(cpu);
	rtd_perf_profiler_free(off);
	rtd_symbolizer_free(sym);
	return 0;
}
