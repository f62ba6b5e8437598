/* SPDX-License-Identifier: MIT */
/*
 * test_windows_symbols.c - a profiler drained window by window and asked
 * for every file's symbols (RTD_PERF_PROF_WINDOWS | _ALL_SYMBOLS, as a
 * flight recorder's is) reads the symbols of every file its target maps
 * at the start, so a library the target enters
 * only after minutes costs no memory then (issue #31: RSS flat over a
 * 10-minute ring; each such first sample was a step of 0.5-2.4 MB, at
 * whatever minute it came).
 *
 * A forked child spins in its own code (the warm-up) until SIGUSR1, then
 * in libm's cos(), which it had never run. On the real kernel, through a
 * live source (the recorder's wiring), until 200 samples of each phase
 * came (samples follow the child's CPU: bounded by 10 s of it):
 *  - when the profiler is made (before any sample), the symbolizer has
 *    read symbols (the old profiler had read none: it fails here with
 *    "0 symbols read at the start");
 *  - the second phase's samples are named in libm (cos, not
 *    libm.so.6+0x...), and no symbol or DWARF was read after the start.
 * User space only (exclude_kernel): the kernel's table is read when a
 * kernel frame first comes, which is no file of the target.
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>

#define PT_WANT_WINDOWS
#include "perf_test.h"

#define WANT_SAMPLES 200u
#define MAX_CHILD_CPU 10.0

static volatile sig_atomic_t phase2;
static void on_usr1(int sig)
{
	(void)sig;
	phase2 = 1;
}

/* libm, through a pointer the compiler cannot fold away */
static double (*volatile cosine)(double) = cos;

static volatile double sink; /* the results, kept */

__attribute__((noinline)) static void child_main(void)
{
	volatile uint64_t x = 0;
	while (!phase2)
		x++;
	for (;;)
		sink += cosine((double)(x++ & 1023));
}

static bool in_libm(const struct rtd_rec_frame *f)
{
	return f->module && strstr(f->module, "libm");
}

struct phases {
	pid_t child;
	bool told; /* SIGUSR1 sent: the libm phase */
	uint64_t warm, libm, libm_named;
};

static bool enough(void *ctx)
{
	struct phases *ph = ctx;
	if (!ph->told && ph->warm >= WANT_SAMPLES) {
		kill(ph->child, SIGUSR1);
		ph->told = true;
	}
	return ph->libm >= WANT_SAMPLES;
}

static void on_sample(const struct rtd_record *rec, void *ctx)
{
	struct phases *ph = ctx;
	if (!rec->stack->n)
		return;
	const struct rtd_rec_frame *leaf = &rec->stack->frames[0];
	if (!ph->told) {
		ph->warm++;
	} else if (in_libm(leaf)) {
		ph->libm++;
		if (leaf->name && !strstr(leaf->name, "+0x"))
			ph->libm_named++;
	}
}

int main(void)
{
	pt_require();
	signal(SIGUSR1, on_usr1);
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		child_main();
		_exit(0);
	}
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = 999, .exclude_kernel = true};
	struct rtd_perf_profiler *p = pt_window_profiler(child, RTD_PERF_PROF_ALL_SYMBOLS, &so);
	/* before any sample (this waits for the background loading) */
	rtd_symbolizer *sym = rtd_perf_profiler_symbolizer(p);
	struct rtd_sym_stats s0 = {.sz = sizeof(s0)};
	rtd_sym_stats(sym, &s0);
	struct phases ph = {.child = child};
	double child_cpu = pt_read_windows(p, child, MAX_CHILD_CPU, enough, on_sample, &ph);
	uint64_t warm = ph.warm, libm = ph.libm, libm_named = ph.libm_named;
	struct rtd_sym_stats s1 = {.sz = sizeof(s1)};
	rtd_sym_stats(sym, &s1);
	printf("# at the start: %" PRIu64 " objects loaded, %" PRIu64 " symbols, %" PRIu64
	       " bytes of DWARF; at the end: %" PRIu64 " objects loaded, %" PRIu64
	       " symbols, %" PRIu64 " bytes of DWARF; %" PRIu64 " warm-up samples, %" PRIu64
	       " in libm (%" PRIu64 " named)\n",
	       s0.objects_loaded, s0.symbols, s0.dwarf_bytes, s1.objects_loaded, s1.symbols,
	       s1.dwarf_bytes, warm, libm, libm_named);
	if (libm < WANT_SAMPLES)
		FAIL("only %" PRIu64 " warm-up and %" PRIu64 " libm samples of the child in %.1f s "
		     "of its CPU",
		     warm, libm, child_cpu);
	if (!s0.symbols)
		FAIL("0 symbols read at the start (%" PRIu64 " objects loaded)",
		     s0.objects_loaded);
	if (libm_named * 2 < libm)
		FAIL("only %" PRIu64 " of %" PRIu64 " libm samples named", libm_named, libm);
	if (s1.symbols != s0.symbols || s1.dwarf_bytes != s0.dwarf_bytes)
		FAIL("symbols were read after the start: %" PRIu64 " symbols and %" PRIu64
		     " bytes of DWARF at the start, %" PRIu64 " and %" PRIu64 " after the "
		     "libm samples",
		     s0.symbols, s0.dwarf_bytes, s1.symbols, s1.dwarf_bytes);
	OK("%" PRIu64 " symbols read at the start, none after; %" PRIu64 " of %" PRIu64
	   " libm samples named",
	   s0.symbols, libm_named, libm);
	rtd_perf_profiler_free(p);
	return 0;
}
